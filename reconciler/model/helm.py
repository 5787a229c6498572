"""Helm release Secrets (type helm.sh/release.v1) decoded into release summaries (docs/policies.md#the-kai-release)."""

from __future__ import annotations

import base64
import binascii
import gzip
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, replace

import orjson

from reconciler.core.jsonvalue import JSONObject, JSONValue, mapping_at
from reconciler.core.redact import redact
from reconciler.core.resources import SECRET
from reconciler.model.managed_fields import rfc3339

RELEASE_SECRET_TYPE = "helm.sh/release.v1"
KAI_CHART = "kai-scheduler"


@dataclass(frozen=True)
class HelmRelease:
    name: str
    namespace: str
    revision: int
    status: str
    chart_name: str
    chart_version: str
    app_version: str
    values: JSONObject  # `config`: user-supplied values, already redacted
    latest_revision: int = 0  # newest revision of this release whatever its status (0: this one)
    latest_status: str = ""
    last_deployed: str = ""  # info.last_deployed (RFC 3339), "" when the Secret does not say

    def to_summary(self) -> JSONObject:
        summary: JSONObject = {
            "apiVersion": "kai-gitops/v1",
            "kind": "HelmReleaseSummary",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "revision": self.revision,
            "status": self.status,
            "chart": {"name": self.chart_name, "version": self.chart_version, "appVersion": self.app_version},
            "config": self.values,
        }
        if self.last_deployed:
            summary["lastDeployed"] = self.last_deployed
        return summary


@dataclass(frozen=True)
class Deploy:
    """One revision of a release, as far as naming it goes (never its values)."""

    revision: int
    status: str
    last_deployed: str  # RFC 3339 with Helm's nanoseconds and zone; "" when the Secret does not say


# Helm's release states (pkg/release/status.go): a status outside them came from a hand-written file.
HELM_STATUSES = frozenset(
    {
        "unknown",
        "deployed",
        "uninstalled",
        "superseded",
        "failed",
        "uninstalling",
        "pending-install",
        "pending-upgrade",
        "pending-rollback",
    }
)


def release_history(releases: list[HelmRelease]) -> dict[tuple[str, str], tuple[Deploy, ...]]:
    """Every revision read, per (namespace, name), oldest first; a status or time of no Helm shape as ""."""
    history: dict[tuple[str, str], list[Deploy]] = {}
    for rel in releases:
        deploy = Deploy(
            rel.revision, rel.status if rel.status in HELM_STATUSES else "", rfc3339(rel.last_deployed) or ""
        )
        history.setdefault((rel.namespace, rel.name), []).append(deploy)
    return {key: tuple(sorted(deploys, key=lambda d: d.revision)) for key, deploys in history.items()}


class ReleaseDecodeError(ValueError):
    pass


def decode_release_secret(secret: Mapping[str, JSONValue]) -> HelmRelease:
    """`data.release` = base64(Secret) of base64(gzip(JSON)); Helm also accepts un-gzipped JSON."""
    encoded = mapping_at(secret, "data").get("release")
    if not isinstance(encoded, str):
        raise ReleaseDecodeError("no data.release")
    try:
        payload = base64.b64decode(base64.b64decode(encoded, validate=False), validate=False)
        if payload[:2] == b"\x1f\x8b":
            payload = gzip.decompress(payload)
        release: JSONValue = orjson.loads(payload)
    except (binascii.Error, OSError, EOFError, zlib.error, orjson.JSONDecodeError) as exc:
        raise ReleaseDecodeError(f"data.release is not a Helm release ({exc.__class__.__name__})") from None
    if not isinstance(release, dict):
        raise ReleaseDecodeError("data.release is not a JSON object")
    try:
        return release_from_json(release, secret)
    except (ValueError, TypeError, AttributeError) as exc:
        raise ReleaseDecodeError(f"data.release has an unexpected shape ({exc.__class__.__name__})") from None


def release_from_json(release: Mapping[str, JSONValue], secret: Mapping[str, JSONValue] | None = None) -> HelmRelease:
    meta = mapping_at(mapping_at(release, "chart"), "metadata")
    secret_meta = mapping_at(secret or {}, "metadata")
    labels = mapping_at(secret_meta, "labels")
    return HelmRelease(
        name=str(release.get("name") or labels.get("name", "")),
        namespace=str(release.get("namespace") or secret_meta.get("namespace", "")),
        revision=_number(release.get("version") or labels.get("version") or 0),
        status=str(mapping_at(release, "info").get("status") or labels.get("status", "")),
        chart_name=str(meta.get("name", "")),
        chart_version=str(meta.get("version", "")),
        app_version=str(meta.get("appVersion", "")),
        values=redact(mapping_at(release, "config")),
        last_deployed=str(mapping_at(release, "info").get("last_deployed") or ""),
    )


def release_from_summary(obj: Mapping[str, JSONValue]) -> HelmRelease:
    meta = mapping_at(obj, "metadata")
    chart = mapping_at(obj, "chart")
    return HelmRelease(
        str(meta.get("name", "")),
        str(meta.get("namespace", "")),
        _number(obj.get("revision") or 0),
        str(obj.get("status", "")),
        str(chart.get("name", "")),
        str(chart.get("version", "")),
        str(chart.get("appVersion", "")),
        redact(mapping_at(obj, "config")),
        last_deployed=str(obj.get("lastDeployed") or ""),
    )


def _number(value: JSONValue) -> int:
    """A revision: a JSON number, or the text of one in a label; anything else is a TypeError, as `int()` says."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"a revision must be a number, not a {type(value).__name__}")


def latest_per_release(releases: list[HelmRelease]) -> list[HelmRelease]:
    """Per release: the highest revision, preferring a deployed one, and the newest (docs/policies.md#the-kai-release).

    A release whose newest revision is `uninstalled` (kept with --keep-history) no longer exists.
    """
    by_release: dict[tuple[str, str], list[HelmRelease]] = {}
    for rel in releases:
        by_release.setdefault((rel.namespace, rel.name), []).append(rel)
    chosen = []
    for revisions in by_release.values():
        newest = max(revisions, key=lambda r: r.revision)
        if newest.status == "uninstalled":
            continue
        best = max(revisions, key=_rank)
        chosen.append(replace(best, latest_revision=newest.revision, latest_status=newest.status))
    return sorted(chosen, key=lambda r: (r.namespace, r.name))


def _rank(rel: HelmRelease) -> tuple[bool, int]:
    return rel.status == "deployed", rel.revision


def encode_release_secret(release: JSONObject, *, secret_name: str | None = None) -> JSONObject:
    """The Secret Helm would write for `release` (used by the demo, tests and benchmarks)."""
    helm_b64 = base64.b64encode(gzip.compress(orjson.dumps(release), mtime=0))  # same release, same bytes
    name, revision = release["name"], _number(release.get("version", 1))
    return {
        "apiVersion": SECRET.api_version,
        "kind": SECRET.kind,
        "type": RELEASE_SECRET_TYPE,
        "metadata": {
            "name": secret_name or f"sh.helm.release.v1.{name}.v{revision}",
            "namespace": release["namespace"],
            "labels": {
                "owner": "helm",
                "name": name,
                "version": str(revision),
                "status": mapping_at(release, "info").get("status", "deployed"),
            },
        },
        "data": {"release": base64.b64encode(helm_b64).decode()},
    }
