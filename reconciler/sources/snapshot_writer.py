"""`kai-gitops snapshot -o FILE`: the live state the checks read, saved as a `List` the snapshot reader reads.

Objects are written as the cluster reader reduced them (pods and nodes to the fields the checks use, CRDs
without schemas); Secrets never appear -- only redacted Helm release summaries. Items stream into a temp
file next to FILE, renamed into place only when the whole read succeeded: never a partial snapshot.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import orjson
import yaml
from yaml.nodes import ScalarNode
from yaml.representer import SafeRepresenter

from reconciler.core.errors import UserError
from reconciler.core.files import OWNER_ONLY, AtomicFile, check_output_target
from reconciler.core.jsonvalue import JSONObject

if TYPE_CHECKING:
    from reconciler.sources.cluster import ReadSettings


# Plain YAML scalars that the snapshot reader (YAML 1.2 + Helm's 1.1 booleans) would not read back as this
# same string -- numbers, timestamps, booleans, nulls -- are double-quoted; plain words stay readable.
_PLAIN_SAFE = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*")
_AMBIGUOUS_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"}
_Dumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


# misc: a base picked at run time (libyaml's CSafeDumper where PyYAML has it) is not a static type to mypy
class _SnapshotDumper(_Dumper):  # type: ignore[misc]
    pass


def _represent_str(dumper: SafeRepresenter, value: str) -> ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    if _PLAIN_SAFE.fullmatch(value) and value.lower() not in _AMBIGUOUS_WORDS:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value)
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')


_SnapshotDumper.add_representer(str, _represent_str)


@dataclass
class SnapshotResult:
    path: str
    counts: Counter[str] = field(default_factory=Counter)

    def describe(self) -> str:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.counts.items()))
        return f"{sum(self.counts.values())} objects to {self.path} ({kinds})"


class SnapshotWriter:
    """An ObjectSink that streams a Kubernetes `List` to a temp file; `commit()` renames it to `path`."""

    def __init__(self, path: str, *, comment: str = "") -> None:
        self.path = Path(path)
        self.json = self.path.suffix.lower() == ".json"
        self.comment = comment
        self.counts: Counter[str] = Counter()
        self._file: AtomicFile | None = None

    def __enter__(self) -> SnapshotWriter:
        check_output_target(self.path, "-o")
        self._file = AtomicFile(self.path, OWNER_ONLY, text=True)   # the snapshot describes the cluster
        self._file.write(self._head())
        return self

    def add(self, obj: JSONObject) -> None:
        assert self._file is not None, "use SnapshotWriter as a context manager"
        if self.json:
            self._file.write(("" if not self.counts else ",\n") + orjson.dumps(obj).decode())
        else:
            if not self.counts:
                self._file.write("items:\n")
            self._file.write(yaml.dump([obj], Dumper=_SnapshotDumper, default_flow_style=False, sort_keys=False,
                                       allow_unicode=True, width=120))
        self.counts[str(obj.get("kind", "?"))] += 1

    def commit(self) -> None:
        assert self._file is not None
        self._file.write(self._tail())
        self._file.commit()   # readers see the old file or the whole new one

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._file is not None:   # not committed: the read failed, leave nothing behind
            self._file.discard()
            self._file = None

    def _head(self) -> str:
        if self.json:
            return '{"apiVersion":"v1","kind":"List","metadata":{},"items":[\n'
        lines = [f"# {line}" for line in self.comment.splitlines()]
        return "\n".join([*lines, "apiVersion: v1", "kind: List", "metadata: {}", ""])

    def _tail(self) -> str:
        if self.json:
            return "\n]}\n"
        return "" if self.counts else "items: []\n"


def snapshot_command(output_file: str, kubeconfig: str | None, context: str | None, *,
                     settings: ReadSettings | None = None) -> SnapshotResult:
    """Read the cluster and write the snapshot; raises UserError (and leaves no file) when any read fails."""
    from reconciler.sources.cluster import ClusterClient, ReadProgress, read_live

    client = ClusterClient.connect(kubeconfig, context, settings)
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    comment = (f"kai-gitops snapshot of {client.label}, taken {stamp}.\n"
               "Read it with: kai-gitops diff|doctor --snapshot FILE. Secrets appear only as redacted Helm "
               "release summaries.")
    try:
        with SnapshotWriter(output_file, comment=comment) as writer, ReadProgress(client.label) as progress:
            read_live(client, writer, progress)
            writer.commit()
    except OSError as exc:
        raise UserError(f"cannot write the snapshot: {exc.strerror or exc}", where=output_file) from None
    finally:
        client.close()
    return SnapshotResult(output_file, writer.counts)
