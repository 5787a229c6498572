"""The scheduler plugins and actions a KAI version knows: its SchedulingShard defaults and optional built-ins.

Read from `data/shard-defaults/<version>.json`, which tools/kai_release.py writes from the KAI source at each
release (`defaultPluginPriorities` / `defaultActionPriorities` in `pkg/apis/kai/v1/schedulingshard_types.go`,
the `RegisterPluginBuilder` calls of `pkg/scheduler/plugins/factory.go`). The operator merges a shard's
`plugins` and `actions` over the defaults, and takes a name outside them for a new one, enabled with priority
0: nothing upstream rejects a misspelt name. A version with no file (before v0.12) has no plugin defaults.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources

from reconciler.model.values import shipped_chart_versions

_FOLDER = "data/shard-defaults"


@dataclass(frozen=True)
class ShardNames:
    """What one KAI version's scheduler knows by name."""

    version: str
    plugins: dict[str, int]  # the default plugins, with their default priorities
    actions: dict[str, int]  # the default actions, with their default priorities
    optional_plugins: tuple[str, ...]  # built into the scheduler, off unless a shard names them
    source: str = ""  # where upstream they were read: "<ref> (<commit>)"

    @property
    def known_plugins(self) -> frozenset[str]:
        return frozenset(self.plugins) | frozenset(self.optional_plugins)

    @property
    def known_actions(self) -> frozenset[str]:
        return frozenset(self.actions)


@functools.cache
def shard_names(version: str) -> ShardNames | None:
    """The names of shipped chart version `version`, or None when that version's shard has no defaults."""
    file = resources.files("reconciler").joinpath(f"{_FOLDER}/{version}.json")
    if not file.is_file():
        return None
    data = json.loads(file.read_text())
    source = data.get("source") or {}
    return ShardNames(
        version,
        {str(k): int(v) for k, v in data["plugins"].items()},
        {str(k): int(v) for k, v in data["actions"].items()},
        tuple(str(name) for name in data["optionalPlugins"]),
        f"{source.get('ref', version)} ({str(source.get('commit', ''))[:8]})",
    )


def versions_knowing(name: str, *, action: bool) -> list[str]:
    """The shipped versions whose scheduler knows plugin (or action) `name`, oldest first."""
    found = []
    for version in shipped_chart_versions():
        names = shard_names(version)
        if names is not None and name in (names.known_actions if action else names.known_plugins):
            found.append(version)
    return found
