"""Where a run's report goes besides stdout: `--report-to TARGET` (repeatable) dispatches through `TARGETS`.

A target is a function taking one `PublishRequest`; it raises `UserError` for anything an operator must fix.
A new target adds its name and module to `_TARGET_MODULES`; importing that module calls `register`. So
the CLI imports no host client or cluster writer until a target is actually asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any

from reconciler.core.errors import UserError
from reconciler.githost.base import HostFlags
from reconciler.report.report import Report
from reconciler.sources.settings import GitSettings, LiveSettings

if TYPE_CHECKING:
    from reconciler.sources.cluster.session import ClusterSessions


@dataclass(frozen=True)
class PublishSettings:
    """What the targets need of the run beyond its report: where it read from, and how to publish."""

    git: GitSettings = field(default_factory=GitSettings)     # the GitOps repository the run read
    live: LiveSettings = field(default_factory=LiveSettings)  # a snapshot: there is no cluster to write to
    cluster: ClusterSessions | None = None   # the run's cluster sessions (what it read); None: no live cluster
    max_results: int | None = None        # per PolicyReport object; None: the target's default
    host_flags: HostFlags = field(default_factory=HostFlags)

    @property
    def repo(self) -> str | None:
        return self.git.repo


@dataclass(frozen=True)
class PublishRequest:
    report: Report                        # its `config` is kai-gitops.yaml as the run read it, when it has one
    plan: Any | None = None               # reconciler.plans.plan.Plan when `reconcile` made one
    settings: PublishSettings = field(default_factory=PublishSettings)


Target = Callable[[PublishRequest], None]
TARGETS: dict[str, Target] = {}
# Target name -> module whose import registers it: keeps heavy clients (PyGithub, kubernetes) lazy.
_TARGET_MODULES: dict[str, str] = {
    "github": "reconciler.publish.report_to_host",
    "gitlab": "reconciler.publish.report_to_host",
    "policyreport": "reconciler.publish.policyreport",
}


def register(name: str, target: Target, module: str | None = None) -> None:
    TARGETS[name] = target
    if module:
        _TARGET_MODULES[name] = module


def known_targets() -> tuple[str, ...]:
    return tuple(sorted(set(_TARGET_MODULES) | set(TARGETS)))


def publish(names: tuple[str, ...] | list[str], request: PublishRequest) -> None:
    """Every named target, in order; an unknown name fails before anything is sent. One target failing
    (GitHub down) does not stop the others (the PolicyReport still lands); the failures end the run as
    one error line afterwards."""
    targets = [(name, _target(name)) for name in dict.fromkeys(names)]
    failed: list[tuple[str, UserError]] = []
    for name, target in targets:
        try:
            target(request)
        except UserError as exc:
            failed.append((name, exc))
    if len(failed) == 1:
        raise failed[0][1]
    if failed:
        raise UserError("; ".join(f"--report-to {name}: {exc.line()}" for name, exc in failed))


def check_targets(names: tuple[str, ...] | list[str]) -> None:
    """Refuse an unknown name without importing any target: the CLI calls it before the run starts."""
    for name in names:
        if name not in TARGETS and name not in _TARGET_MODULES:
            raise UserError(f"unknown --report-to target '{name}'", hint="known: " + ", ".join(known_targets()))


def _target(name: str) -> Target:
    check_targets([name])
    if name not in TARGETS:
        import_module(_TARGET_MODULES[name])
    return TARGETS[name]
