"""How long a finding has been reported: when its fingerprint was first seen, and its age in one run.

    age = Age(first_seen=parse_instant("2026-11-28T14:02:00Z"), as_of=run_start)
    age.phrase()      # "for 3 days"
    age.describe()    # "for 3 days (first seen 2026-11-28 14:02 UTC)"

Times are UTC and whole seconds: `firstSeen` in JSON is RFC 3339 (`2026-11-28T14:02:00Z`), and the same
instant is the PolicyReport result's `timestamp`. Where the first-seen time comes from (the cluster's
PolicyReports, a previous report, this run) is report/history.py's business.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

_UNITS = ((86400, "day"), (3600, "hour"), (60, "minute"))


@dataclass(frozen=True)
class Age:
    first_seen: datetime  # when the fingerprint was first reported
    as_of: datetime  # the start of the run that reports it now: ages are measured to it
    looked_back: bool = True  # an earlier sighting was looked for (PolicyReports, --previous-report)

    @property
    def seconds(self) -> float:
        return max((self.as_of - self.first_seen).total_seconds(), 0.0)

    @property
    def new(self) -> bool:
        """First seen by the run that reports it."""
        return self.first_seen >= self.as_of

    def phrase(self) -> str:
        return "new" if self.new else f"for {duration_text(self.seconds)}"

    def describe(self) -> str:
        """The age and the instant it counts from, which stays true when the text is read days later."""
        return f"{self.phrase()} (first seen {self.first_seen:%Y-%m-%d %H:%M} UTC)"


def duration_text(seconds: float) -> str:
    """ "3 days", "1 hour", "12 minutes", "less than a minute": the largest whole unit, rounded down."""
    for size, unit in _UNITS:
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return "less than a minute"


def instant(moment: datetime) -> datetime:
    """`moment` in UTC, whole seconds (a naive datetime is taken as UTC)."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).replace(microsecond=0)


def format_instant(moment: datetime) -> str:
    """RFC 3339 in UTC: `2026-11-28T14:02:00Z`."""
    return instant(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_instant(text: str) -> datetime:
    """An RFC 3339 time with a zone (`Z` or an offset), in UTC whole seconds; ValueError otherwise."""
    moment = datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
    if moment.tzinfo is None or "T" not in text.upper():
        raise ValueError(f"{text!r} is not an RFC 3339 time with a zone (like 2026-11-28T14:02:00Z)")
    try:
        return instant(moment)
    except OverflowError:  # 9999-12-31T23:59:59-01:00: a valid shape past the last UTC instant
        raise ValueError(f"{text!r} is out of range") from None
