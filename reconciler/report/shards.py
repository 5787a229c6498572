"""`check --shard i/n`: which clusters one of n CI jobs checks, by rendezvous hashing of the cluster name.

Each cluster goes to the shard j (1..n) with the highest sha256(j, name): the choice depends on the
cluster's own name and n only, so adding or removing a cluster never moves another one, and going from
n to n+1 shards moves only the ~1/(n+1) of clusters that the new shard wins (plain `hash % n` would
move most of them). Names, not positions, so reordering kai-gitops.yaml moves nothing either.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONValue

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
MAX_SHARDS = 1000


class _HasName(Protocol):
    @property
    def name(self) -> str: ...


Named = TypeVar("Named", bound=_HasName)


@dataclass(frozen=True, order=True)
class Shard:
    index: int  # 1-based, as CI matrices and GitLab's CI_NODE_INDEX count
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, name: str) -> bool:
        return shard_of(name, self.count) == self.index

    def to_dict(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}

    @classmethod
    def from_dict(cls, raw: JSONValue, where: str) -> Shard:
        index, count = (raw.get("index"), raw.get("count")) if isinstance(raw, dict) else (None, None)
        if not isinstance(index, int) or not isinstance(count, int):
            raise UserError("'shard' must be {index, count}", where=where)
        return _checked(index, count, where)


_AUTO = re.compile(r"^\s*auto\s*/\s*(\d+)\s*$")
COMPLETION_INDEX = "JOB_COMPLETION_INDEX"  # what a Kubernetes Indexed Job's controller sets in each pod (0-based)


def parse_shard(text: str, environ: Mapping[str, str] | None = None) -> Shard:
    """`i/n` with 1 ≤ i ≤ n ≤ 1000, else a one-line error. `auto/n` takes i from JOB_COMPLETION_INDEX in `environ`
    (0-based: index 0 checks shard 1/n), so the pods of a Kubernetes Indexed Job share one command."""
    auto = _AUTO.match(text)
    if auto:
        completion_index = (environ or {}).get(COMPLETION_INDEX)
        if completion_index is None or not completion_index.strip().isdigit():
            raise UserError(
                f"--shard {text.strip()} takes the shard from ${COMPLETION_INDEX}, which is "
                f"{'not set' if completion_index is None else repr(completion_index)}",
                hint="run it in a Kubernetes Indexed Job (completionMode: Indexed), or give the shard as INDEX/COUNT",
            )
        return _checked(int(completion_index) + 1, int(auto.group(1)), f"--shard (${COMPLETION_INDEX} + 1)")
    match = _SPEC.match(text)
    if not match:
        raise UserError(
            f"--shard must be INDEX/COUNT, e.g. 1/4, not {text!r}",
            hint="in GitHub Actions: --shard ${{ matrix.shard }}/N; in GitLab: "
            "--shard $CI_NODE_INDEX/$CI_NODE_TOTAL; in a Kubernetes Indexed Job: --shard auto/N",
        )
    return _checked(int(match.group(1)), int(match.group(2)), "--shard")


def _checked(index: int, count: int, where: str) -> Shard:
    if not 1 <= count <= MAX_SHARDS:
        raise UserError(f"shard count must be between 1 and {MAX_SHARDS}, not {count}", where=where)
    if not 1 <= index <= count:
        raise UserError(
            f"shard index must be between 1 and {count}, not {index}", where=where, hint="shards are numbered from 1"
        )
    return Shard(index, count)


def shard_of(name: str, count: int) -> int:
    """The shard (1..count) that owns `name`: highest random weight wins, ties to the lower index."""
    return max(range(1, count + 1), key=lambda j: (_weight(j, name), -j))


def _weight(shard: int, name: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{shard}\x1f{name}".encode()).digest()[:8], "big")


def _name_of(item: _HasName) -> str:
    return item.name


def select(items: Sequence[Named], shard: Shard | None, name: Callable[[Named], str] = _name_of) -> list[Named]:
    """The items this shard owns, in their original order (all of them without a shard)."""
    if shard is None:
        return list(items)
    return [item for item in items if shard.owns(name(item))]


def assignment(names: Iterable[str], count: int) -> dict[str, int]:
    return {n: shard_of(n, count) for n in names}
