"""One field a drift finding found changed: where it is in the object, its live and Git values, its shown name.

Every drift of fields (a Queue, kai-config, the SchedulingShard, the KAI release's values) carries these in
`Finding.changes`, so the outputs and attribution read one typed shape whatever the rule. (A plan's
`FieldChange` is the other side: what a write will change.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from reconciler.core.jsonvalue import JSONValue, expect_object
from reconciler.core.redact import redact_at, redact_free_text


@dataclass(frozen=True)
class DriftedField:
    path: tuple[str, ...]  # in the subject: spec.… of an object, a key path of a Helm release's values
    live: JSONValue  # None when the live object lacks it
    want: JSONValue  # None when Git leaves it out (the operator's default)
    shown: str  # the field as the finding names it: `cpu.quota`, `scheduler.replicas`
    where: str | None = None  # where Git sets it (file:line), when known apart from the finding's location
    origin: str | None = None  # which input set Git's value (kai-config: values, chart default …)

    def redacted(self) -> DriftedField:
        """Both values judged where they stand in the object (a value under a secret-looking key is masked);
        the names by shape, as every free text is."""
        return replace(
            self,
            live=redact_at(self.path, self.live),
            want=redact_at(self.path, self.want),
            shown=redact_free_text(self.shown),
        )

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "field": self.shown,
            "path": list(self.path),
            "live": self.live,
            "want": self.want,
            "where": self.where,
            "origin": self.origin,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, JSONValue]) -> DriftedField:
        path, shown = raw["path"], raw["field"]
        if not isinstance(path, list) or not isinstance(shown, str):
            raise TypeError("a field change needs `field` (a string) and `path` (a list)")
        where, origin = raw.get("where"), raw.get("origin")
        return cls(
            tuple(str(step) for step in path),
            raw.get("live"),
            raw.get("want"),
            shown,
            where if isinstance(where, str) else None,
            origin if isinstance(origin, str) else None,
        )


def changes_from_dicts(raw: JSONValue) -> tuple[DriftedField, ...]:
    """A saved report's `changes` list (absent or null: none)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise TypeError("`changes` must be a list")
    return tuple(DriftedField.from_dict(expect_object(item, "a field change")) for item in raw)
