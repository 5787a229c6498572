"""Security-sensitive fields: what KAI and NVCA run and how (KAI-S-001, docs/policies.md#security-sensitive-changes).

One classifier for every place such a field is written: a KAI values file, an NVCA operator values file, and a
kai-config or SchedulingShard spec (kept in Git, or patched by self-heal). A path is sensitive when a prefix of it
names an image (repository, registry, name or tag, and the NVCA agent's container overrides), a security context
or privilege, host access (host network, PID or IPC, a host path or socket), extra command-line args, or a
service account.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

IMAGE = "image"
SECURITY = "security context"
HOST = "host access"
ARGS = "extra args"
SERVICE_ACCOUNT = "service account"

_SECURITY_KEYS = frozenset({"securityContext", "podSecurityContext", "privileged", "allowPrivilegeEscalation"})
_HOST_KEYS = frozenset({"hostNetwork", "hostPID", "hostIPC", "podResourcesSocket"})
_ACCOUNT_KEYS = frozenset({"serviceAccount", "serviceAccountName", "createServiceAccount"})
_IMAGE_PARTS = frozenset({"repository", "registry", "name", "tag", "repositoryOverride"})
_IMAGE_KEYS = frozenset(
    {
        "imageRepository",
        "imageTag",
        # NVCA: these name the containers of every NVCF workload (INIT_CONTAINER, …)
        "functionEnvOverrides",
        "taskEnvOverrides",
    }
)
# KAI values: the registry and tag every image takes unless its own says otherwise, and the -fips tag suffix
_GLOBAL_IMAGE = frozenset({("global", "registry"), ("global", "tag"), ("global", "fips")})
_TAG_KEYS = frozenset({"tag", "imageTag"})


def category(path: Sequence[str | int]) -> str | None:
    """What a field at `path` decides, if it is security-sensitive (see the module docstring), else None."""
    _, found = sensitive_prefix(path)
    return found


def sensitive_prefix(path: Sequence[str | int]) -> tuple[tuple[str, ...], str | None]:
    """The shortest prefix of `path` that is sensitive, with its category; ((), None) when none is."""
    parts = tuple(str(p) for p in path)
    for end in range(1, len(parts) + 1):
        found = _own_category(parts[:end])
        if found is not None:
            return parts[:end], found
    return (), None


def _own_category(parts: tuple[str, ...]) -> str | None:
    key = parts[-1]
    parent = parts[-2] if len(parts) > 1 else ""
    if key in _SECURITY_KEYS:
        return SECURITY
    if key in _HOST_KEYS or "hostpath" in key.lower():
        return HOST
    if key == "args":
        return ARGS
    if key in _ACCOUNT_KEYS:
        return SERVICE_ACCOUNT
    if key in _IMAGE_KEYS or parts in _GLOBAL_IMAGE:
        return IMAGE
    if key in _IMAGE_PARTS and (parent == "image" or parent.endswith("Image")):
        return IMAGE
    return None


def is_tag(path: Sequence[str | int]) -> bool:
    return bool(path) and str(path[-1]) in _TAG_KEYS


def same_tag(value: object, version: str) -> bool:
    """Whether an image tag is the pinned version's own (`v0.17.0` or `0.17.0`, with or without -fips)."""
    if not isinstance(value, str) or not value:
        return False
    return value.removesuffix("-fips").removeprefix("v") == version.removeprefix("v")


@dataclass(frozen=True)
class SensitiveAllow:
    """One entry of a cluster's `allowSensitiveWrites`: self-heal may write `path` (and what is under it) of
    the object `kind`/`name`."""

    kind: str
    name: str
    path: tuple[str, ...]  # from the object's root: ("spec", "global", "securityContext")

    def allows(self, kind: str, name: str, path: Sequence[str | int]) -> bool:
        parts = tuple(str(p) for p in path)
        return (kind, name) == (self.kind, self.name) and parts[: len(self.path)] == self.path

    @property
    def shown(self) -> str:
        return f"{self.kind}/{self.name} {'.'.join(self.path)}"
