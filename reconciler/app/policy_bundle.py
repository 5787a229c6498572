"""`kai-gitops policy bundle`: the shipped pack plus a repo's policies and data as an OPA bundle.

An OPA bundle loads data only from files named `data.json` at the directory of the path they are
mounted at, so `opa run -b policies/` would leave `data.nvca.feature_gates` undefined and NVCA-G-004
would call every gate unknown. Here every top-level data document goes to `<key>/data.json` (the pack's
`nvca`, the repo's `user`), the Rego files keep their names under `policies/` (shipped) and `repo/`
(policies.dirs), and `.manifest` declares the roots (first segments of every package and data key) and a
revision that changes exactly when the content does. The archive is byte-for-byte reproducible.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reconciler.checks.policy.engine import load_policy_set
from reconciler.checks.policy.pack import SHIPPED_LABEL, PolicySet
from reconciler.core.errors import UserError
from reconciler.core.files import WORLD_READABLE, check_output_target, write_atomically
from reconciler.sources.materialize import WorkArea

if TYPE_CHECKING:
    from reconciler.app.settings import DesiredRepo


@dataclass(frozen=True)
class Bundle:
    files: dict[str, bytes]  # path in the archive -> content, `.manifest` included
    manifest: dict[str, Any]

    @property
    def policies(self) -> int:
        return sum(1 for name in self.files if name.endswith(".rego"))

    def describe(self) -> str:
        return (
            f"{self.policies} policies, data {', '.join(self.data_paths())}, roots "
            f"{', '.join(self.manifest['roots'])}, revision {self.manifest['revision']}"
        )

    def data_paths(self) -> list[str]:
        return ["data." + ".".join(n.split("/")[:-1]) for n in sorted(self.files) if n.endswith("data.json")]


def build_bundle(repo: DesiredRepo | None) -> Bundle:
    """The bundle of the shipped pack plus, with a repo, its policies.dirs and policies.data at its ref.

    Everything is compiled first (load_policy_set), so a bundle that OPA would refuse is never written.
    """
    from reconciler.app.policy_run import materialise, repo_policy_data, repo_policy_files

    files = repo_policy_files(repo) if repo is not None else {}
    data = repo_policy_data(repo) if repo is not None else {}
    with WorkArea("bundle") as work:
        dirs, data_files = materialise(work, files, data)
        policy_set = load_policy_set(dirs, data_files)
    content = _content(policy_set)
    manifest = _manifest(policy_set, content, repo)
    return Bundle({".manifest": _json(manifest), **content}, manifest)


def _content(policy_set: PolicySet) -> dict[str, bytes]:
    content: dict[str, bytes] = {}
    for f in policy_set.files:
        shipped = f.name.startswith(SHIPPED_LABEL + "/")
        name = ("policies/" + f.name.removeprefix(SHIPPED_LABEL + "/")) if shipped else f"repo/{f.name}"
        content[name] = f.text.encode("utf-8")
    scalars = {k: v for k, v in policy_set.data.items() if not isinstance(v, dict)}
    for key, value in policy_set.data.items():
        if isinstance(value, dict):
            content[f"{key}/data.json"] = _json(value)
    if scalars:  # a top-level value that is not an object can only live in the root data.json
        content["data.json"] = _json(scalars)
    return content


def _manifest(policy_set: PolicySet, content: dict[str, bytes], repo: DesiredRepo | None) -> dict[str, Any]:
    roots = sorted({f.package.split(".")[0] for f in policy_set.files} | set(policy_set.data))
    digest = hashlib.sha256(
        b"".join(hashlib.sha256(name.encode() + b"\0" + content[name]).digest() for name in sorted(content))
    ).hexdigest()
    release = version("kai-gitops")
    commit = repo.git.commit if repo is not None else None
    revision = "-".join(p for p in (f"kai-gitops-{release}", (commit or "")[:12], digest[:12]) if p)
    source = {
        "version": release,
        "repo": repo.git.repo if repo else None,
        "ref": repo.git.ref if repo else None,
        "commit": commit,
    }
    return {"revision": revision, "roots": roots, "rego_version": 1, "metadata": {"kai-gitops": source}}


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def archive(bundle: Bundle) -> bytes:
    """A reproducible .tar.gz: sorted names, no timestamps, owner or mode bits from this machine."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(bundle.files):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(bundle.files[name]), 0o644, 0
            tar.addfile(info, io.BytesIO(bundle.files[name]))
    return gzip.compress(raw.getvalue(), mtime=0)


def write_bundle(bundle: Bundle, path: str) -> None:
    """Atomically: the sidecar's ConfigMap is built from this file, never from half of it."""
    target = Path(path)
    if not target.name.endswith((".tar.gz", ".tgz")):
        raise UserError("an OPA bundle is a .tar.gz file", where=path, hint="e.g. -o bundle.tar.gz")
    check_output_target(target, "-o")
    # policies and their data hold no secret; the ConfigMap made from the bundle is world-readable anyway
    write_atomically(target, archive(bundle), WORLD_READABLE)
