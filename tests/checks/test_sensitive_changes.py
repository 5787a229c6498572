"""KAI-S-001: a Git change to what KAI or NVCA runs, or how, is named in the PR check at its own line, with
before → after; against the base ref when there is one, else against the pinned chart's defaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.checks.sensitive import _sensitive_paths
from reconciler.model.sensitive import ARGS, HOST, IMAGE, SECURITY, SERVICE_ACCOUNT, category, sensitive_prefix
from reconciler.model.values import deep_merge
from reconciler.yamlio.document import YamlDoc, load_documents
from tests.support.helpers import commit_files, make_repo, run_cli, standalone_config

VALUES = "global:\n  registry: ghcr.io/kai-scheduler/kai-scheduler\nscheduler:\n  placementStrategy: binpack\n"
CONFIG = (
    "apiVersion: kai.scheduler/v1\nkind: Config\nmetadata:\n  name: kai-config\nspec:\n  admission:\n"
    "    service:\n      image:\n        name: admission\n"
    "        repository: ghcr.io/kai-scheduler/kai-scheduler\n        tag: v0.17.0\n"
    "  global:\n    replicaCount: 1\n"
)
SHARD = (
    "apiVersion: kai.scheduler/v1\nkind: SchedulingShard\nmetadata:\n  name: team-a\n"
    "spec:\n  partitionLabelValue: team-a\n"
)
NVCA = "selfManaged:\n  featureGateValues: [DynamicGPUDiscovery, KAIScheduler]\n"
MANIFESTS = "    kaiManifestFiles: [kai/config.yaml, kai/shard.yaml]\n    nvcaValuesFile: nvca.yaml\n"


def files(changed: dict[str, str] | None = None) -> dict[str, str | None]:
    base: dict[str, str | None] = {
        "kai-gitops.yaml": standalone_config(version="v0.17.0", extra=MANIFESTS),
        "kai-values.yaml": VALUES,
        "kai/config.yaml": CONFIG,
        "kai/shard.yaml": SHARD,
        "nvca.yaml": NVCA,
    }
    return {**base, **(changed or {})}


def check(repo: Path, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    code, out, err = run_cli(["check", "--repo", str(repo), "-o", "json", *extra])
    assert out, err
    found = [f for c in json.loads(out)["clusters"] for f in c["findings"] if f["rule"] == "KAI-S-001"]
    return code, found, err


def where(finding: dict[str, Any]) -> str:
    location = finding["location"]
    return f"{location['file']}:{location['line']}:{location['column']}"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (("global", "registry"), IMAGE),
        (("admission", "image", "tag"), IMAGE),
        (("binder", "resourceReservationImage", "repository"), IMAGE),
        (("nvcaImage", "repositoryOverride"), IMAGE),
        (("agent", "functionEnvOverrides"), IMAGE),
        (("global", "securityContext", "privileged"), SECURITY),
        (("numaPlacementExporter", "podResourcesHostPath"), HOST),
        (("spec", "hostNetwork"), HOST),
        (("scheduler", "args"), ARGS),
        (("binder", "resourceReservation", "serviceAccountName"), SERVICE_ACCOUNT),
        (("admission", "gpuSharing"), None),
        (("scheduler", "placementStrategy"), None),
        (("admission", "service", "image", "pullPolicy"), None),
        (("global", "replicaCount"), None),
    ],
)
def test_which_fields_are_sensitive(path: tuple[str, ...], expected: str | None) -> None:
    assert category(path) == expected


def test_a_pull_request_changing_an_image_repository_and_privilege_in_git_is_named_with_before_and_after(
    tmp_path: Path,
) -> None:
    privileged = CONFIG.replace("  global:\n", "  global:\n    securityContext:\n      privileged: true\n")
    changed = privileged.replace("repository: ghcr.io/kai-scheduler/kai-scheduler", "repository: evil.example/kai")
    values = VALUES.replace("ghcr.io/kai-scheduler/kai-scheduler", "mirror.example/kai")
    repo, (base, _) = make_repo(tmp_path, files(), [files({"kai/config.yaml": changed, "kai-values.yaml": values})])
    _, found, err = check(repo, "--base", base)
    shown = {(where(f), f["message"]) for f in found}
    assert shown == {
        (
            "kai/config.yaml:10:9",
            "Config kai-config spec.admission.service.image.repository (image): "
            "ghcr.io/kai-scheduler/kai-scheduler → evil.example/kai (against the base ref)",
        ),
        (
            "kai/config.yaml:13:5",
            "Config kai-config spec.global.securityContext (security context): unset → "
            '{"privileged":true} (against the base ref)',
        ),
        (
            "kai-values.yaml:2:3",
            "KAI value global.registry (image): ghcr.io/kai-scheduler/kai-scheduler → "
            "mirror.example/kai (against the base ref)",
        ),
    }, err
    assert all(f["severity"] == "warning" for f in found)
    assert {f["subject"]["name"] for f in found if f["subject"]} == {"kai-config"}


def test_without_a_change_to_a_sensitive_field_the_base_check_is_quiet(tmp_path: Path) -> None:
    quiet = files(
        {
            "kai-values.yaml": VALUES.replace("binpack", "spread"),
            "kai/config.yaml": CONFIG.replace("replicaCount: 1", "replicaCount: 2"),
        }
    )
    repo, (base, _) = make_repo(tmp_path, files(), [quiet])
    _, found, err = check(repo, "--base", base)
    assert found == [], err


def test_a_removed_or_narrowed_security_context_is_a_change_too(tmp_path: Path) -> None:
    hardened = VALUES.replace(
        "global:\n", "global:\n  securityContext:\n    runAsNonRoot: true\n    runAsUser: 10000\n"
    )
    kept_one = hardened.replace("    runAsUser: 10000\n", "")
    repo, (base, narrowed) = make_repo(
        tmp_path, files({"kai-values.yaml": hardened}), [files({"kai-values.yaml": kept_one})]
    )
    [found] = check(repo, "--base", base)[1]
    assert (where(found), found["message"]) == (
        "kai-values.yaml:2:3",
        "KAI value global.securityContext (security context): "
        '{"runAsNonRoot":true,"runAsUser":10000} → {"runAsNonRoot":true} (against the base ref)',
    )
    commit_files(repo, {"kai-values.yaml": VALUES})
    [found] = check(repo, "--base", base)[1]
    assert (where(found), found["message"]) == (
        "kai-values.yaml:1:1",
        "KAI value global.securityContext (security context): "
        '{"runAsNonRoot":true,"runAsUser":10000} → unset (against the base ref)',
    )
    assert check(repo, "--base", narrowed)[1] != [] and check(repo, "--base", "HEAD")[1] == []


def test_a_tag_bumped_to_the_new_pin_is_not_a_change_of_what_runs(tmp_path: Path) -> None:
    old = files(
        {
            "kai/config.yaml": CONFIG.replace("v0.17.0", "v0.16.8"),
            "kai-gitops.yaml": standalone_config(version="v0.16.8", extra=MANIFESTS),
        }
    )
    repo, (base, _) = make_repo(tmp_path, old, [files()])
    assert check(repo, "--base", base)[1] == []
    commit_files(repo, {"kai/config.yaml": CONFIG.replace("tag: v0.17.0", "tag: v0.17.1-debug")})
    [found] = check(repo, "--base", base)[1]
    assert found["message"].startswith(
        "Config kai-config spec.admission.service.image.tag (image): v0.16.8 → v0.17.1-debug"
    )


def test_without_a_base_a_sensitive_field_at_a_non_default_value_is_named(tmp_path: Path) -> None:
    shard = SHARD + '  args:\n    v: "9"\n'
    values = VALUES.replace("global:\n", "global:\n  securityContext:\n    runAsUser: 0\n")
    nvca = NVCA + "nvcaImage:\n  repositoryOverride: evil.example/nvca\n"
    repo, _ = make_repo(tmp_path, files({"kai/shard.yaml": shard, "kai-values.yaml": values, "nvca.yaml": nvca}))
    _, found, err = check(repo)
    shown = {(where(f), f["message"]) for f in found}
    assert shown == {
        (
            "kai/shard.yaml:7:3",
            'SchedulingShard team-a spec.args (extra args): unset → {"v":"9"} (against the pinned chart\'s default)',
        ),
        (
            "kai-values.yaml:2:3",
            'KAI value global.securityContext (security context): {} → {"runAsUser":0} '
            "(against the pinned chart's default)",
        ),
        (
            "nvca.yaml:4:3",
            'NVCA value nvcaImage.repositoryOverride (image): "" → evil.example/nvca (against the '
            "pinned chart's default)",
        ),
    }, err
    # the released registry and the pin's own tag are the chart's own images: not named
    assert not [f for f in found if "kai-config" in f["message"] or "global.registry" in f["message"]]


def test_a_sensitive_value_is_shown_redacted(tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    nvca = NVCA + f"agent:\n  functionEnvOverrides:\n    INIT_CONTAINER: registry.example/init:{token}\n"
    repo, _ = make_repo(tmp_path, files({"nvca.yaml": nvca}))
    _, out, err = run_cli(["check", "--repo", str(repo)])
    assert "agent.functionEnvOverrides" in out and token not in out + err


def _every_written_outermost(doc: YamlDoc, root: tuple[str, ...]) -> list[tuple[str | int, ...]]:
    """The definition, as written before the scan passed over list paths with one C-level test."""
    found = []
    for path in doc.positions:
        if len(path) <= len(root) or path[: len(root)] != root or not all(isinstance(p, str) for p in path):
            continue
        prefix, found_category = sensitive_prefix(path[len(root) :])
        if found_category is not None and len(prefix) == len(path) - len(root):
            found.append(path)
    return found


_SENSITIVE_NAMES = ["image", "repository", "tag", "securityContext", "hostPath", "args", "serviceAccountName", "x"]
_yaml_trees = st.recursive(
    st.sampled_from(["a", 1, True, None]),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from([*_SENSITIVE_NAMES, "spec", "y"]), inner, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([*_SENSITIVE_NAMES, "spec"]), _yaml_trees, max_size=4), _yaml_trees)
def test_the_scan_finds_the_outermost_sensitive_paths_the_file_writes(data: dict[str, Any], base: Any) -> None:
    """In the file's order; a base merged under the file adds data, not paths, and a null it sets stays one."""
    doc = load_documents(json.dumps(data), "values.yaml")[0] if data else YamlDoc("values.yaml", {}, {(): (1, 1)})
    merged = YamlDoc(doc.file, deep_merge(base, doc.data) if isinstance(base, dict) else doc.data, doc.positions)
    for root in ((), ("spec",)):
        assert list(_sensitive_paths(doc, root)) == _every_written_outermost(doc, root)
        assert list(_sensitive_paths(merged, root)) == _every_written_outermost(doc, root)
