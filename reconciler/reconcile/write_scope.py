"""Which planned kai-config and SchedulingShard fields a plan may write: intent, not assumption, and only what
the running KAI version serves (docs/reconcile.md#what-a-plan-holds-back).

A field is held back, with its reason, when Git's value is no intent (an operator's in-memory default, or
nothing at all: `model/provenance.py`), when the live KAI may not serve it (the chart of the live version
renders no such field: its Config CRD would prune it, and it would come back as drift on every run), or,
while the live release runs another chart version than Git pins (KAI-R-012), when it depends on the
version: image repositories and tags, and the shard's plugins and actions where the live chart renders
none. The upgrade is Helm's; the run after it writes what still differs. Every held field stays in its
finding and becomes one operator item per object, saying why.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.core.jsonvalue import mapping_at
from reconciler.core.refs import ObjectRef
from reconciler.core.resources import CONFIG, SCHEDULING_SHARD
from reconciler.findings.finding import Finding
from reconciler.model.desired import RELEASE_NAME, RELEASE_NAMESPACE, DesiredCluster
from reconciler.model.kai_config import column_fields
from reconciler.model.live import LiveState
from reconciler.model.values import chart_defaults, defaults_version_for
from reconciler.plans.plan import FieldChange, OperatorAction

_IMAGE_PARTS = frozenset({"repository", "tag"})
_VERSIONED_SHARD_FIELDS = ("plugins", "actions")  # charts before v0.12.14/v0.13.0 render neither


@dataclass(frozen=True)
class HeldField:
    change: FieldChange
    reason: str


class WriteScope:
    """Git's intent and the live KAI version, judged once per plan."""

    def __init__(self, desired: DesiredCluster, live: LiveState) -> None:
        self.desired = desired
        self.pin = desired.config.kai_chart_version
        release = next((r for r in live.releases if (r.namespace, r.name) == (RELEASE_NAMESPACE, RELEASE_NAME)), None)
        running = release.chart_version if release is not None else ""
        self.running = running if not running or running.startswith("v") else f"v{running}"
        self.skewed = bool(self.running) and self.running != self.pin
        self.live_column = defaults_version_for(self.running or self.pin)

    def split(self, ref: ObjectRef, fields: list[FieldChange]) -> tuple[list[FieldChange], list[HeldField]]:
        kept: list[FieldChange] = []
        held: list[HeldField] = []
        for change in fields:
            reason = self.hold_reason(ref, change)
            if reason is None:
                kept.append(change)
            else:
                held.append(HeldField(change, reason))
        return kept, held

    def hold_reason(self, ref: ObjectRef, change: FieldChange) -> str | None:
        if ref.kind == CONFIG.kind:
            return self._config_reason(".".join(change.path[1:]))
        if ref.kind == SCHEDULING_SHARD.kind:
            return self._shard_reason(change.path[1:])
        return None

    def _config_reason(self, dotted: str) -> str | None:
        config = self.desired.kai_config
        if config is not None:
            provenance = config.provenance(dotted)
            if not provenance.writable:
                return f"Git's value is {provenance.origin.value}"
        if dotted not in column_fields(self.live_column):
            if self.skewed:
                return f"KAI {self.running}'s chart renders no such field: {self._waits()}"
            return f"KAI {self.pin}'s chart renders no such field, so its Config may not serve it"
        if self.skewed and _image_version(dotted):
            return f"an image of the chart version: {self._waits()}"
        return None

    def _shard_reason(self, path: tuple[str, ...]) -> str | None:
        if not self.skewed or not path or path[0] not in _VERSIONED_SHARD_FIELDS:
            return None
        if path[0] not in mapping_at(chart_defaults(self.live_column), "scheduler"):
            return f"KAI {self.running}'s chart renders no scheduler.{path[0]}: {self._waits()}"
        return None

    def _waits(self) -> str:
        return f"waits for the upgrade to {self.pin} (KAI-R-012)"

    def operator_item(self, finding: Finding, held: list[HeldField]) -> OperatorAction:
        """One item for the object, its fields grouped by reason. No command: what settles them is the upgrade
        (KAI-R-012's own item) or a decision in Git, not a patch."""
        by_reason: dict[str, list[str]] = {}
        for item in held:
            by_reason.setdefault(item.reason, []).append(item.change.dotted())
        shown = "; ".join(f"{', '.join(fields)} ({reason})" for reason, fields in by_reason.items())
        after = (
            (
                f" — the release runs {self.running}, Git pins {self.pin}: the upgrade is Helm's, and the run "
                "after it writes what still differs"
            )
            if self.skewed
            else ""
        )
        return OperatorAction(finding.rule_id, finding.subject, f"not written by kai-gitops: {shown}{after}", None)


def _image_version(dotted: str) -> bool:
    """An image's repository or tag (`*.image.tag`, `nodeScaleAdjuster.args.scalingPodImage.repository`)."""
    *parents, last = dotted.split(".")
    return last in _IMAGE_PARTS and bool(parents) and parents[-1].lower().endswith("image")
