"""The field changes of KAI's CRDs between the modelled chart versions, for the upgrade plan.

Read by walking every `openAPIV3Schema` property path of the served versions of
`deployments/kai-scheduler/crds/*.yaml` (github.com/kai-scheduler/KAI-Scheduler) at each pair of adjacent
modelled tags and listing the top-most added or removed path and every changed type, enum or minimum; the
`v0.17` release branch (head df7f1407, 2026-08-07) stands for v0.17.1, the `v0.16` branch (b1640b92) for v0.16.9.
`scheduling.run.ai_queues.yaml` has no field change in that span. A nested path under an added one is not repeated.
A fix backported to two release lines is no span of versions (v0.16.9 has it, v0.17.0 has not): it names the first
release of each line that has it.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.model.values import parse_version

QUEUES = "queues.scheduling.run.ai/v2"
PODGROUPS = "podgroups.scheduling.run.ai/v2alpha2"
CONFIGS = "configs.kai.scheduler/v1"
SHARDS = "schedulingshards.kai.scheduler/v1"
TOPOLOGIES = "topologies.kai.scheduler/v1alpha1"


@dataclass(frozen=True)
class CrdChange:
    crd: str
    field: str
    what: str  # "added", "removed", or what changed ("minimum 1 -> 0")
    before: str  # modelled tag the field is compared from
    after: str  # the tag (or release) that has the change
    source: str
    # A change backported to release lines: the first release of each line that has it (a later line has it, an
    # earlier one has not). Versions are then not a span: v0.16.9 has it and v0.17.0 has not.
    lines: tuple[str, ...] = ()

    def crossed(self, old: str, new: str) -> bool:
        """Whether upgrading from pin `old` to pin `new` may cross this change: it happened in a release after
        `before` up to `after`, and that span overlaps the upgrade's; for a backported change, `new` has it and
        `old` has not."""
        if self.lines:
            return self.has(new) and not self.has(old)
        low, high = parse_version(old), parse_version(new)
        start, end = parse_version(self.before), parse_version(self.after)
        if low is None or high is None or start is None or end is None:
            return False
        return low < end and high > start

    def has(self, version: str) -> bool:
        """Whether release `version` has a backported change (its line's first release with it, or a later line)."""
        wanted = parse_version(version)
        firsts = [n for n in map(parse_version, self.lines) if n is not None]
        if wanted is None or not firsts:
            return False
        same_line = [n for n in firsts if n[:2] == wanted[:2]]
        if same_line:
            return wanted >= same_line[0]
        return wanted[:2] > max(firsts)[:2]

    @property
    def when(self) -> str:
        if self.lines:
            return "from " + " and ".join(self.lines) + ", a fix backported to each line"
        return f"between {self.before} and {self.after}"


def _at(before: str, after: str, source: str = "") -> str:
    return source or f"KAI-Scheduler deployments/kai-scheduler/crds/ at {before} and {after}"


def _changes() -> tuple[CrdChange, ...]:
    table: list[tuple[str, str, str, str, str, str]] = [
        (PODGROUPS, "spec.preemptibility", "added", "v0.9.20", "v0.10.5", ""),
        (PODGROUPS, "spec.subGroups[].parent, spec.subGroups[].topologyConstraint", "added", "v0.9.20", "v0.10.5", ""),
        (PODGROUPS, "spec.minMember, spec.subGroups[].minMember", "minimum none -> 1", "v0.9.20", "v0.10.5", ""),
        (CONFIGS, "spec.global.imagesPullSecret", "removed", "v0.9.20", "v0.10.5", ""),
        (
            CONFIGS,
            "spec.prometheus, spec.scheduler, spec.global.connection, spec.global.requireDefaultPodAntiAffinity"
            "Term, spec.podGroupController.webhooks, the operands' service.affinity",
            "added",
            "v0.9.20",
            "v0.10.5",
            "",
        ),
        (SHARDS, "spec.kValue, spec.usageDBConfig", "added", "v0.9.20", "v0.10.5", ""),
        (
            CONFIGS,
            "spec.binder.cdiEnabled, spec.prometheus.{accountingLabelKey,accountingLabelValue,instanceName}",
            "added",
            "v0.10.5",
            "v0.12.13",
            "",
        ),
        (SHARDS, "spec.plugins, spec.actions", "added", "v0.10.5", "v0.12.13", ""),
        (TOPOLOGIES, "the Topology CRD", "added", "v0.10.5", "v0.12.13", ""),
        (CONFIGS, "spec.global.nodeSelector", "added", "v0.12.13", "v0.13.4", ""),
        (CONFIGS, "spec.global.connection", "removed", "v0.12.13", "v0.13.4", ""),
        (
            CONFIGS,
            "spec.global.imagesPullSecret, spec.global.vpa, each operand's vpa",
            "added",
            "v0.13.4",
            "v0.14.7",
            "",
        ),
        (PODGROUPS, "spec.minSubGroup, spec.subGroups[].minSubGroup", "added", "v0.14.7", "v0.15.3", ""),
        (PODGROUPS, "spec.backoffLimit, spec.completions, spec.parallelism", "removed", "v0.14.7", "v0.15.3", ""),
        (PODGROUPS, "spec.subGroups[].minMember", "minimum 1 -> 0", "v0.14.7", "v0.15.3", ""),
        (
            CONFIGS,
            "spec.binder.plugins, spec.binder.resourceReservation.reservation{Pod,Container}SecurityContext, "
            "spec.global.jsonLog",
            "added",
            "v0.14.7",
            "v0.15.3",
            "",
        ),
        (
            CONFIGS,
            "spec.admission.{blockNvidiaVisibleDevices,gpuFractionRuntimeClassName}, spec.numaPlacementExporter, "
            "each operand's service.podDisruptionBudget",
            "added",
            "v0.15.3",
            "v0.16.8",
            "",
        ),
        (SHARDS, "spec.scenarioSearchBudgets", "added", "v0.15.3", "v0.16.8", ""),
        (PODGROUPS, "spec.preemptionDelay, spec.stalenessGracePeriod", "added", "v0.16.8", "v0.17.0", ""),
        (PODGROUPS, "status.{phase,running,succeeded,failed,pending}", "removed", "v0.16.8", "v0.17.0", ""),
        (
            CONFIGS,
            "spec.global.priorityClassName, spec.podGrouper.args.genericKartaFallback",
            "added",
            "v0.16.8",
            "v0.17.0",
            "",
        ),
        (SHARDS, "spec.goMemLimit, spec.goMemLimitRatio", "added", "v0.16.8", "v0.17.0", ""),
        (TOPOLOGIES, "spec.levels[].alias", "added", "v0.16.8", "v0.17.0", ""),
    ]
    changes = [
        CrdChange(crd, field, what, before, after, _at(before, after, source))
        for crd, field, what, before, after, source in table
    ]
    changes.append(
        CrdChange(
            PODGROUPS,
            "spec.minMember, spec.minSubGroup",
            "minimum 1 -> 0 (0: no gang)",
            "v0.16.8",
            "v0.17.1",
            "KAI-Scheduler #1989 (62c594bf on main), backported as #2017 (7e677370, v0.16 branch) and #2018 (a72e24dc, "
            "v0.17 branch): crds/scheduling.run.ai_podgroups.yaml",
            lines=("v0.16.9", "v0.17.1"),
        )
    )
    return tuple(changes)


CRD_CHANGES = _changes()


def crd_changes_between(old: str, new: str) -> list[CrdChange]:
    return [change for change in CRD_CHANGES if change.crossed(old, new)]
