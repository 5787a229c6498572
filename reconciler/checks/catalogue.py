"""Every check written in Python, in one table: its rules, what it needs, and how it finds for one cluster.

Each row's `find` takes one `ClusterContext` (the cluster's desired and live state and the few settings a check
reads) and returns that cluster's findings. `app/evaluate.py` runs the rows that apply to a context, and the
rules a report says ran (`ran_rules`) are read from the same rows: a check cannot run without its rules being
listed, nor be listed without running. Adding a check is one module, one row here and its rules' metadata
(docs/architecture.md#adding-a-check).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from reconciler.checks.differ import diff
from reconciler.checks.gangs import gang_findings
from reconciler.checks.kai_operator import kai_operator_findings
from reconciler.checks.krm import krm_findings
from reconciler.checks.manifest_schema import manifest_schema_findings
from reconciler.checks.node_labels import intent_findings
from reconciler.checks.nvca_values import nvca_values_findings
from reconciler.checks.ownership import Controller, OwnWrite, ownership_findings
from reconciler.checks.sensitive import sensitive_findings
from reconciler.checks.shard_names import shard_name_findings
from reconciler.checks.upgrade_plan import pin_change_findings
from reconciler.checks.values_keys import values_key_findings
from reconciler.findings import builtin_rules as rules
from reconciler.findings.finding import Finding
from reconciler.findings.rules import RuleMeta
from reconciler.findings.schema_rules import MANIFEST_SCHEMA_RULES
from reconciler.model.desired import DesiredCluster
from reconciler.model.live import LiveState


class Needs(Enum):
    """What a check reads; it runs only where the command has it."""

    GIT = "Git"  # the desired state alone (every command that reads the repository)
    LIVE = "live"  # the cluster (the desired state too, when the command has it)
    BOTH = "Git and live"  # both sides (diff, reconcile, doctor with --repo)
    CHANGE = "a change under review"  # the desired state and what it changes (check, the pull-request command)


class Order(Enum):
    """Where a check's findings join the cluster's: the plan lists the operator's items in this order."""

    BEFORE_POLICIES = 1
    AFTER_POLICIES = 2
    AFTER_ATTRIBUTION = 3  # reads the drift found before it, each drifted field with who set it


@dataclass(frozen=True)
class ClusterContext:
    """One cluster's inputs, as every check takes them."""

    name: str
    desired: DesiredCluster | None = None
    live: LiveState | None = None
    # `live` is the part a --live-snapshot holds (Queues, KAI Resource Management), not a read of the cluster
    snapshot: bool = False
    reviewing: bool = False  # a change under review: `check`
    base: DesiredCluster | None = None  # the change's base, when the base ref declares this cluster
    controllers: tuple[Controller, ...] = ()  # managers whose fields are theirs (kai-gitops.yaml ownership)
    ours: tuple[OwnWrite, ...] = ()  # the fields earlier runs wrote (reconcile's audit log)
    earlier: tuple[Finding, ...] = ()  # for AFTER_ATTRIBUTION checks: what was found before them

    @property
    def cluster_read(self) -> bool:
        """The whole cluster was read (not a snapshot's part): attribution and last writes can be told."""
        return self.live is not None and not self.snapshot


@dataclass(frozen=True)
class Check:
    name: str
    rules: tuple[RuleMeta, ...]
    needs: Needs
    find: Callable[[ClusterContext], list[Finding]]
    order: Order = Order.BEFORE_POLICIES
    snapshot_ok: bool = False  # runs in `check` against a --live-snapshot's part of the cluster
    # rules it evaluates only with Git: without it, they did not run (doctor must not show them passed)
    rules_needing_git: tuple[RuleMeta, ...] = ()
    # rules it evaluates only with the cluster (or the snapshot's part of it, when `snapshot_ok`)
    rules_needing_live: tuple[RuleMeta, ...] = ()

    def applies(self, context: ClusterContext) -> bool:
        git, live = context.desired is not None, context.live is not None and (self.snapshot_ok or not context.snapshot)
        return {Needs.GIT: git, Needs.LIVE: live, Needs.BOTH: git and live, Needs.CHANGE: git and context.reviewing}[
            self.needs
        ]

    def rules_ran(self, context: ClusterContext) -> tuple[RuleMeta, ...]:
        live = context.live is not None and (self.snapshot_ok or not context.snapshot)
        left_out = (() if context.desired is not None else self.rules_needing_git) + (
            () if live else self.rules_needing_live
        )
        return tuple(r for r in self.rules if r not in left_out)


# Each `find` adapts the context to its check's own signature: the check modules stay free of this table.
def _drift(c: ClusterContext) -> list[Finding]:
    assert c.desired is not None and c.live is not None  # Needs.BOTH
    return diff(c.desired, c.live)


def _kai_operator(c: ClusterContext) -> list[Finding]:
    assert c.live is not None  # Needs.LIVE
    return kai_operator_findings(c.live, c.desired, c.name)


def _gangs(c: ClusterContext) -> list[Finding]:
    assert c.live is not None  # Needs.LIVE
    return gang_findings(c.live, c.desired, c.name)


def _values_keys(c: ClusterContext) -> list[Finding]:
    assert c.desired is not None  # Needs.GIT
    return values_key_findings(c.desired)


def _shard_names(c: ClusterContext) -> list[Finding]:
    assert c.desired is not None  # Needs.GIT
    return shard_name_findings(c.desired)


def _manifest_schema(c: ClusterContext) -> list[Finding]:
    assert c.desired is not None  # Needs.GIT
    return manifest_schema_findings(c.desired)


def _pin_change(c: ClusterContext) -> list[Finding]:
    assert c.desired is not None  # Needs.CHANGE
    return pin_change_findings(c.desired, c.base)


def _intent(c: ClusterContext) -> list[Finding]:
    assert c.desired is not None  # Needs.GIT
    return intent_findings(c.desired)


def _sensitive(c: ClusterContext) -> list[Finding]:
    assert c.desired is not None  # Needs.CHANGE
    return sensitive_findings(c.desired, c.base)


def _ownership(c: ClusterContext) -> list[Finding]:
    assert c.desired is not None and c.live is not None  # Needs.BOTH
    return ownership_findings(list(c.earlier), c.desired, c.live, c.controllers, c.ours)


def _nvca_values(c: ClusterContext) -> list[Finding]:
    assert c.desired is not None  # Needs.GIT
    return nvca_values_findings(c.desired)


def _krm(c: ClusterContext) -> list[Finding]:
    assert c.desired is not None  # Needs.GIT: Git's KAI Resource Management objects suffice for the K rules
    return krm_findings(c.desired, c.live)


CATALOGUE: tuple[Check, ...] = (
    Check(
        "drift",
        (
            rules.QUEUE_MISSING,
            rules.QUEUE_DRIFT,
            rules.SHARD_DRIFT,
            rules.RELEASE_VALUES_DRIFT,
            rules.CONFIG_DRIFT,
            rules.CONFIG_MISSING,
            rules.SHARD_UNDECLARED,
        ),
        Needs.BOTH,
        _drift,
    ),
    Check(
        "kai-operator",
        rules.OPERATOR_RULES,
        Needs.LIVE,
        _kai_operator,
        rules_needing_git=(rules.CONFIG_NOT_HELM_OWNED,),
    ),  # only Git's values say render mode is on
    Check("gangs", rules.GANG_RULES, Needs.LIVE, _gangs),
    Check("values-keys", rules.VALUES_KEY_RULES, Needs.GIT, _values_keys, Order.AFTER_POLICIES),
    Check("shard-names", rules.SHARD_NAME_RULES, Needs.GIT, _shard_names, Order.AFTER_POLICIES),
    Check("nvca-values", rules.NVCA_VALUES_RULES, Needs.GIT, _nvca_values, Order.AFTER_POLICIES),
    Check("shared-cluster-intent", rules.INTENT_RULES, Needs.GIT, _intent, Order.AFTER_POLICIES),
    Check("manifest-schema", MANIFEST_SCHEMA_RULES, Needs.GIT, _manifest_schema, Order.AFTER_POLICIES),
    Check("sensitive", rules.SENSITIVE_RULES, Needs.CHANGE, _sensitive, Order.AFTER_POLICIES),
    Check("pin-change", rules.UPGRADE_RULES, Needs.CHANGE, _pin_change, Order.AFTER_POLICIES),
    Check("ownership", (rules.FIELD_OWNED, rules.CONTROLLER_FIGHT), Needs.BOTH, _ownership, Order.AFTER_ATTRIBUTION),
    Check(
        "krm",
        (*rules.KRM_RULES, rules.KRM_MANAGED),
        Needs.GIT,
        _krm,
        Order.AFTER_ATTRIBUTION,
        snapshot_ok=True,
        rules_needing_live=(rules.KRM_MANAGED,),
    ),  # KAI-D-010 needs KRM's CRDs seen served
)

# The built-in rules no check of one cluster raises: the run judges the waivers and the pull request's policy
# edits once, over every cluster (app/evaluate.py Waiving, app/policy_changes.py).
RUN_RULES: tuple[RuleMeta, ...] = rules.REPOSITORY_RULES


def applying(context: ClusterContext, order: Order) -> list[Check]:
    return [check for check in CATALOGUE if check.order is order and check.applies(context)]


def run_checks(context: ClusterContext, order: Order) -> list[Finding]:
    return [f for check in applying(context, order) for f in check.find(context)]


def ran_rules(context: ClusterContext) -> list[RuleMeta]:
    """The rules of every check that applies to `context`, in the table's order."""
    return [rule for check in CATALOGUE if check.applies(context) for rule in check.rules_ran(context)]
