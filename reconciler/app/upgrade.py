"""`upgrade-plan` end to end: the cluster's desired state read from Git, its plan to a target KAI release."""

from __future__ import annotations

from reconciler.app.pipeline import desired_clusters, open_desired
from reconciler.app.settings import GitSettings
from reconciler.checks.upgrade_plan import NoPlan, UpgradePlan, build_upgrade_plan, target_versions
from reconciler.core.errors import UserError
from reconciler.sources.repoconfig import CONFIG_FILE


def plan_upgrade(settings: GitSettings, cluster: str | None, target: str) -> UpgradePlan:
    """The plan for `cluster` (the only one when None) from its pin to `target`, a modelled chart version."""
    if target not in target_versions():
        raise UserError(
            f"KAI chart {target} is not a modelled version", hint=f"choose one of {', '.join(target_versions())}"
        )
    repo = open_desired(settings)
    chosen = repo.config.select(cluster)
    if len(chosen) != 1:
        raise UserError(
            f"{CONFIG_FILE} declares {len(chosen)} clusters; choose one with --cluster",
            hint="known: " + ", ".join(c.name for c in chosen),
        )
    [desired] = desired_clusters(repo, chosen[0].name)
    try:
        return build_upgrade_plan(desired, target)
    except NoPlan as exc:  # a downgrade, a pin past the models (and a target checked above): one line
        raise UserError(str(exc)) from None
