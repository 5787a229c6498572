"""Where a desired value came from, and so whether `reconcile` may write it (docs/reconcile.md#what-a-plan-holds-back).

Only intent is acted on: a value declared in a Git file, or rendered by the pinned chart from Git's values
(the chart's defaults included: Git pins the chart). An operator default that only exists in the operator's
memory, or a value the tool assumed because nothing declares it, informs findings and never a write.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from reconciler.core.refs import YamlPath


class Origin(StrEnum):
    DECLARED = "declared in Git"
    CHART = "rendered by the pinned chart from Git's values"
    OPERATOR_DEFAULT = "an operator default (nothing renders it)"
    ASSUMED = "not declared (the tool would be assuming it)"


WRITABLE = frozenset({Origin.DECLARED, Origin.CHART})


@dataclass(frozen=True)
class Provenance:
    origin: Origin
    doc: str | None = None  # doc id holding the value (DECLARED), or the chart pin (CHART)
    path: YamlPath | None = None  # where in `doc`

    @property
    def writable(self) -> bool:
        return self.origin in WRITABLE


ASSUMED = Provenance(Origin.ASSUMED)
OPERATOR_DEFAULT = Provenance(Origin.OPERATOR_DEFAULT)
