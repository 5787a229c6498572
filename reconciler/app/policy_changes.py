"""What a pull request changes among the inputs that judge it: policies, policy data, waivers."""

from __future__ import annotations

from reconciler.core.refs import Location
from reconciler.findings.builtin_rules import POLICY_CHANGE
from reconciler.findings.finding import REPOSITORY, Action, Finding, Fix, Kind
from reconciler.model.config import RepoConfig
from reconciler.sources.git import GitTree
from reconciler.sources.repoconfig import CONFIG_FILE

DEFAULT_WAIVERS = "kai-gitops-waivers.yaml"


def changed_policy_inputs(base: GitTree, base_config: RepoConfig, head: GitTree, head_config: RepoConfig) -> list[str]:
    """Repo paths whose content differs between base and head, plus the config's own policy settings."""
    changed = []
    if _settings(base_config) != _settings(head_config):
        changed.append(f"{CONFIG_FILE} (policies / waiversFile)")
    paths = set(_files(base, base_config)) | set(_files(head, head_config))
    for path in sorted(paths):
        if _blob(base, path) != _blob(head, path):
            changed.append(path)
    return changed


def policy_change_finding(changed: list[str], base_ref: str, *, added_config: bool = False) -> Finding:
    what = ", ".join(changed)
    base = base_ref[:12] if len(base_ref) == 40 else base_ref  # a commit id reads better short
    message = (
        f"{CONFIG_FILE} is new in this change: it was checked with the shipped policies only"
        if added_config
        else f"this change edits what judges it ({what}); it was checked with the versions at {base}, "
        "and the edits take effect after merge"
    )
    location = Location(changed[0].split(" ")[0]) if changed else None
    return POLICY_CHANGE.finding(
        Kind.VIOLATION,
        message,
        REPOSITORY,
        location=location,
        extra={"paths": changed},
        fix=Fix(Action.NONE, "have the policy owners review these files"),
    )


def _settings(config: RepoConfig) -> tuple[object, ...]:
    return (config.policy_dirs, config.policy_data, config.waivers_file)


def _files(tree: GitTree, config: RepoConfig) -> list[str]:
    files = [config.waivers_file or DEFAULT_WAIVERS, *config.policy_data]
    for top in config.policy_dirs:
        files.extend(path for path, _ in tree.iter_files(top, suffix=".rego"))
    return files


def _blob(tree: GitTree, path: str) -> bytes | None:
    return tree.read_optional(path)
