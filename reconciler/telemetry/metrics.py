"""Prometheus metrics of one run, in a registry of its own, for a Pushgateway or node-exporter's textfile.

    facts = RunFacts("reconcile", "prod", ...)
    write_textfile(Path("/var/lib/node-exporter/kai-gitops.prom"), facts)   # atomic: temp + rename
    push(url, facts)                                                         # job + cluster grouping

Every value describes the run just finished (gauges, not counters): a CronJob process lives for one run,
so a counter would restart at each and `rate()` over it would be noise. The last *successful* run's
timestamp survives a failed run in both sinks: the textfile carries it over from the previous file, the
Pushgateway push after a failure replaces only the metrics it sends (POST), not that one.
"""

from __future__ import annotations

import base64
import os
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.client import HTTPException
from pathlib import Path
from urllib.parse import urlsplit

from prometheus_client import CollectorRegistry, Gauge, generate_latest
from prometheus_client.exposition import default_handler, push_to_gateway, pushadd_to_gateway

from reconciler.checks.waves import WaveDecision
from reconciler.core.errors import UserError
from reconciler.core.files import WORLD_READABLE, AtomicFile, writes_in_place
from reconciler.core.redact import redact_text
from reconciler.findings.builtin_rules import CONTROLLER_FIGHT
from reconciler.findings.finding import Kind
from reconciler.report.history import oldest_drift_age
from reconciler.report.report import Report

PREFIX = "kai_gitops"
JOB = "kai-gitops"
LAST_SUCCESS = f"{PREFIX}_last_success_timestamp_seconds"
USER_ENV, PASSWORD_ENV = "KAI_GITOPS_PUSHGATEWAY_USERNAME", "KAI_GITOPS_PUSHGATEWAY_PASSWORD"
PUSH_TIMEOUT_S = 10.0


@dataclass
class RunFacts:
    """What the metrics say about one run; `report` is None when the run failed before it had one."""

    command: str
    cluster: str
    started: float  # time.time() at start
    duration_s: float
    ok: bool  # ended without an error (findings are not an error)
    exit_code: int
    report: Report | None = None
    changes_planned: int | None = None  # reconcile only
    changes_applied: int | None = None
    changes_failed: int | None = None
    live_read_retries: int = 0
    rollout: WaveDecision | None = None  # reconcile with rollout waves: whether this cluster may apply

    @property
    def finished(self) -> float:
        return self.started + self.duration_s


def build_registry(
    facts: RunFacts, *, cluster_label: bool = True, carried: Mapping[tuple[str, ...], float] | None = None
) -> CollectorRegistry:
    """The run's metrics. Without `cluster_label` the cluster is left to the Pushgateway's grouping key;
    `carried` gives last-success timestamps from an earlier textfile (label values -> timestamp)."""
    registry = CollectorRegistry(auto_describe=True)
    base = ["cluster"] if cluster_label else []
    own = [facts.cluster] if cluster_label else []

    def gauge(name: str, doc: str, labels: list[str]) -> Gauge:
        return Gauge(f"{PREFIX}_{name}", doc, [*base, *labels], registry=registry)

    _findings(facts, gauge, own)
    _oldest_drift(facts, gauge, own)
    _fights(facts, gauge, own)
    run_labels = [*own, facts.command]
    gauge("run_duration_seconds", "Wall time of the last run.", ["command"]).labels(*run_labels).set(facts.duration_s)
    gauge("last_run_timestamp_seconds", "When the last run finished (Unix time).", ["command"]).labels(*run_labels).set(
        facts.finished
    )
    gauge(
        "last_run_success", "1 if the last run ended without an error (findings are not errors), else 0.", ["command"]
    ).labels(*run_labels).set(1 if facts.ok else 0)
    gauge(
        "last_run_exit_code", "Exit code of the last run: 0 clean, 2 findings or pending changes, 1 error.", ["command"]
    ).labels(*run_labels).set(facts.exit_code)
    last_success = facts.finished if facts.ok else (carried or {}).get((facts.cluster, facts.command))
    if last_success is not None:
        # Not even declared otherwise: an empty family in a Pushgateway POST would replace the group's value.
        Gauge(
            LAST_SUCCESS, "When the last successful run finished (Unix time).", [*base, "command"], registry=registry
        ).labels(*run_labels).set(last_success)
    _set(
        gauge(
            "live_read_retries",
            "Requests to the Kubernetes API retried (429, 5xx, timeouts, resets, "
            "expired continue tokens) during the last run.",
            [],
        ),
        own,
        facts.live_read_retries,
    )
    _changes(facts, gauge, own)
    _rollout(facts, gauge, own)
    return registry


def _findings(facts: RunFacts, gauge: Callable[..., Gauge], own: list[str]) -> None:
    if facts.report is None:
        return
    active: Counter[tuple[str, str, str, str]] = Counter()
    waived: Counter[tuple[str, str]] = Counter()
    drift: Counter[str] = Counter()
    every = [f for c in facts.report.clusters for f in c.findings] + list(facts.report.repository)
    for f in every:
        # without a cluster label (a push: the grouping key holds it) the clusters' counts add up in one series
        cluster = (f.cluster or facts.cluster) if own else ""
        if f.waived_by is not None:
            waived[(cluster, f.rule_id)] += 1
            continue
        active[(cluster, f.rule_id, f.severity.value, f.kind.value)] += 1
        if f.kind is Kind.DRIFT:
            drift[cluster] += 1
    findings = gauge("findings", "Findings of the last run that are not waived.", ["rule", "severity", "kind"])
    waived_gauge = gauge("findings_waived", "Findings of the last run covered by a waiver.", ["rule"])
    drift_gauge = gauge("drift", "Objects whose live state differs from Git in the last run.", [])
    for (cluster, rule, severity, kind), n in active.items():
        findings.labels(*_own(own, cluster), rule, severity, kind).set(n)
    for (cluster, rule), n in waived.items():
        waived_gauge.labels(*_own(own, cluster), rule).set(n)
    clusters = ({c.cluster for c in facts.report.clusters} or {facts.cluster}) if own else {""}
    for cluster in clusters:
        _set(drift_gauge, _own(own, cluster), drift.get(cluster, 0))


def _oldest_drift(facts: RunFacts, gauge: Callable[..., Gauge], own: list[str]) -> None:
    """Per cluster; in a push (one cluster per group) the oldest of the run's clusters."""
    if facts.report is None:
        return
    ages = {c.cluster: oldest_drift_age(c) for c in facts.report.clusters} or {facts.cluster: 0.0}
    if not own:
        ages = {"": max(ages.values())}
    oldest = gauge(
        "oldest_drift_age_seconds",
        "Seconds since the oldest drift of the last run that is not waived "
        "was first reported (its firstSeen); 0 without drift.",
        [],
    )
    for cluster, seconds in ages.items():
        _set(oldest, _own(own, cluster), seconds)


def _fights(facts: RunFacts, gauge: Callable[..., Gauge], own: list[str]) -> None:
    """Fields another manager wrote back after kai-gitops wrote them (KAI-D-009), which the plan left alone:
    0 when none, so an alert on it resolves when the fight is settled."""
    if facts.report is None:
        return
    fields: Counter[str] = Counter()
    for report in facts.report.clusters:
        for f in report.active():
            if f.rule_id == CONTROLLER_FIGHT.id:
                fields[report.cluster if own else ""] += len(f.extra.get("fields") or ())
    fights = gauge(
        "controller_fights",
        "Fields of the last run another field manager wrote back after kai-gitops "
        "wrote them (KAI-D-009): left alone, not written again.",
        [],
    )
    clusters = ({c.cluster for c in facts.report.clusters} or {facts.cluster}) if own else {""}
    for cluster in clusters:
        _set(fights, _own(own, cluster), fields.get(cluster, 0))


def _own(own: list[str], cluster: str) -> list[str]:
    return [cluster] if own else []


def _set(g: Gauge, labels: list[str], value: float) -> None:
    (g.labels(*labels) if labels else g).set(value)


def _changes(facts: RunFacts, gauge: Callable[..., Gauge], own: list[str]) -> None:
    if facts.changes_planned is None:
        return
    _set(
        gauge("changes_planned", "Changes in the last run's plan (what kai-gitops may fix).", []),
        own,
        facts.changes_planned,
    )
    _set(
        gauge("changes_applied", "Changes the last run applied (0 without --apply).", []),
        own,
        facts.changes_applied or 0,
    )
    _set(
        gauge("changes_failed", "Changes the last run tried to apply and could not.", []),
        own,
        facts.changes_failed or 0,
    )


def _rollout(facts: RunFacts, gauge: Callable[..., Gauge], own: list[str]) -> None:
    """1 while a failed cluster of an earlier wave holds this one (`held_by` names it), else 0; and whether
    the run may apply the commit (0 waiting, held or unreadable statuses)."""
    decision = facts.rollout
    if decision is None:
        return
    held = gauge(
        "rollout_held",
        "1 while the rollout holds this cluster: a cluster of wave `wave` failed (`held_by`), else 0.",
        ["wave", "held_by"],
    )
    held.labels(*own, str(decision.wave or ""), decision.held_by or "").set(1 if decision.state == "held" else 0)
    _set(
        gauge(
            "rollout_may_apply",
            "1 if the rollout waves let the last run apply its commit, else 0 (waiting, "
            "held, or the commit statuses could not be read).",
            ["state"],
        ),
        [*own, decision.state],
        1 if decision.apply else 0,
    )


# -- textfile ----------------------------------------------------------------------------------------


def write_textfile(path: Path, facts: RunFacts) -> None:
    """node-exporter's textfile collector format, written atomically (temp file in the same directory, then
    rename), so the collector never reads half a file."""
    carried = _last_success_in(path)
    data = generate_latest(build_registry(facts, carried=carried))
    try:
        out = AtomicFile(path, WORLD_READABLE)  # node-exporter runs as another user
    except OSError as exc:
        raise UserError(
            f"cannot write the metrics file: {exc.strerror}",
            where=str(path),
            hint="--metrics-file takes a file in a writable directory, a FIFO or a character device",
        ) from None
    try:
        with out:
            out.write(data)
            out.commit()
    except OSError as exc:
        raise UserError(f"cannot write the metrics file: {exc.strerror}", where=str(path)) from None


def _last_success_in(path: Path) -> dict[tuple[str, ...], float]:
    from prometheus_client.parser import text_string_to_metric_families

    try:
        if writes_in_place(path):  # a FIFO or a device holds no earlier run (and reading one may never end)
            return {}
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return {}
    carried: dict[tuple[str, ...], float] = {}
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == LAST_SUCCESS and {"cluster", "command"} <= sample.labels.keys():
                    carried[(sample.labels["cluster"], sample.labels["command"])] = sample.value
    except ValueError:
        return {}  # not ours or damaged: start afresh rather than fail the run over an old file
    return carried


# -- Pushgateway -------------------------------------------------------------------------------------


def push(url: str, facts: RunFacts, env: Mapping[str, str] | None = None) -> None:
    """PUT (replace the group) after a good run; POST (replace only what is sent) after a failed one, so the
    group keeps its last-success timestamp. Grouping key: job `kai-gitops`, `cluster`."""
    env = os.environ if env is None else env
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"--metrics-push needs an http(s) URL of a Pushgateway, got '{redact_text(url)}'")
    if "@" in parts.netloc:
        # urllib would take `user:password@host` for a host name and fail on DNS: say what to do instead
        raise UserError(
            f"--metrics-push URL '{redact_text(url)}' carries credentials, which are not sent from there",
            hint=f"drop them from the URL and set ${USER_ENV} and ${PASSWORD_ENV} (deploy/: Secret "
            "kai-gitops-pushgateway)",
        )
    registry = build_registry(facts, cluster_label=False)
    send = push_to_gateway if facts.ok else pushadd_to_gateway
    try:
        send(
            url,
            job=JOB,
            registry=registry,
            grouping_key={"cluster": facts.cluster},
            timeout=PUSH_TIMEOUT_S,
            handler=_auth_handler(env),
        )
    except (OSError, HTTPException, ValueError) as exc:
        # URLError and HTTPError are OSErrors; a port that does not speak HTTP raises BadStatusLine, a malformed
        # host (e.g. an unclosed IPv6 bracket) ValueError: each is the operator's to fix, not a crash
        raise UserError(
            f"pushing metrics to {redact_text(url)} failed: {redact_text(str(exc))}",
            hint="check --metrics-push and the Pushgateway; the run itself is unaffected",
        ) from None


def _auth_handler(env: Mapping[str, str]) -> Callable[..., Callable[[], None]]:
    user, password = env.get(USER_ENV), env.get(PASSWORD_ENV)
    if not user and not password:
        return default_handler
    token = base64.b64encode(f"{user or ''}:{password or ''}".encode()).decode()

    def handler(
        url: str, method: str, timeout: float | None, headers: list[tuple[str, str]], data: bytes
    ) -> Callable[[], None]:
        return default_handler(url, method, timeout, [*headers, ("Authorization", f"Basic {token}")], data)

    return handler
