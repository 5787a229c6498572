"""`kai-gitops snapshot -o FMT[=PATH]`: the live state the checks read, saved as a `List` the snapshot reader reads.

Objects are written as the cluster reader reduced them (pods and nodes to the fields the checks use, CRDs
without schemas); Secrets never appear -- only redacted Helm release summaries. The file is meant to be shared
(a CI artifact, a bug report), so what the reader keeps as the cluster holds it for the differ -- kai-config's
and the SchedulingShards' specs, every label and annotation -- is written redacted (`shareable`). Items stream
into a temp file next to PATH, renamed into place only when the whole read succeeded (on stdout: printed only
then): never a partial snapshot.
"""

from __future__ import annotations

import io
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

import orjson
import yaml
from yaml.nodes import ScalarNode
from yaml.representer import SafeRepresenter

from reconciler.core.errors import UserError
from reconciler.core.files import OWNER_ONLY, AtomicFile, check_output_target, names_stdout
from reconciler.core.jsonvalue import JSONObject
from reconciler.core.redact import redact
from reconciler.core.resources import CONFIG, SCHEDULING_SHARD
from reconciler.sources.snapshot import CLUSTER_UID_ANNOTATION, TAKEN_AT_ANNOTATION, taken_at_stamp

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


SNAPSHOT_FORMATS = ("yaml", "json")


@dataclass(frozen=True)
class SnapshotTarget:
    """Where `-o` sends the snapshot: `yaml`/`json` to stdout, `yaml=PATH`/`json=PATH`, or a bare PATH (the
    option's first form, kept: JSON when the name ends in .json, else YAML)."""

    format: str
    path: str | None  # None: stdout

    @classmethod
    def parse(cls, value: str) -> SnapshotTarget:
        fmt, equals, path = value.partition("=")
        if fmt.strip().lower() in SNAPSHOT_FORMATS:
            fmt = fmt.strip().lower()
            if equals and not path:
                raise UserError(f"'-o {value}' names no file", hint=f"write -o {fmt}=PATH, or -o {fmt} for stdout")
            # `-` and /dev/stdout are stdout, as for every other -o: printed whole once the read succeeded
            return cls(fmt, None if not path or path == "-" or names_stdout(path) else path)
        if not value.strip():
            raise UserError("'-o' names no format or file", hint="write -o yaml, -o json=PATH or -o PATH")
        if value == "-" or names_stdout(value):
            return cls("yaml", None)
        return cls("json" if Path(value).suffix.lower() == ".json" else "yaml", value)

    @property
    def shown(self) -> str:
        return self.path if self.path is not None else "stdout"


@dataclass
class SnapshotResult:
    path: str
    counts: Counter[str] = field(default_factory=Counter)

    def describe(self) -> str:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.counts.items()))
        return f"{sum(self.counts.values())} objects to {self.path} ({kinds})"


class SnapshotWriter:
    """An ObjectSink that streams a Kubernetes `List` to a temp file (or a buffer for stdout); `commit()` renames
    it to the target's path (or prints it). `output` is the value of `-o` (see `SnapshotTarget`)."""

    def __init__(
        self,
        output: str,
        *,
        comment: str = "",
        stdout: TextIO | None = None,
        taken_at: datetime | None = None,
        cluster_uid: str | None = None,
    ) -> None:
        self.target = SnapshotTarget.parse(output)
        self.json = self.target.format == "json"
        self.comment = comment
        self.taken_at = taken_at
        self.cluster_uid = cluster_uid
        self.counts: Counter[str] = Counter()
        self._stdout = stdout
        self._file: AtomicFile | _PrintedWhole | None = None

    def __enter__(self) -> SnapshotWriter:
        if self.target.path is None:
            self._file = _PrintedWhole(self._stdout or sys.stdout)
        else:
            check_output_target(Path(self.target.path), "-o")
            self._file = AtomicFile(self.target.path, OWNER_ONLY, text=True)  # the snapshot describes the cluster
        self._file.write(self._head())
        return self

    def add(self, obj: JSONObject) -> None:
        assert self._file is not None, "use SnapshotWriter as a context manager"
        obj = shareable(obj)
        if self.json:
            self._file.write(("" if not self.counts else ",\n") + orjson.dumps(obj).decode())
        else:
            if not self.counts:
                self._file.write("items:\n")
            self._file.write(
                yaml.dump(
                    [obj],
                    Dumper=_SnapshotDumper,
                    default_flow_style=False,
                    sort_keys=False,
                    allow_unicode=True,
                    width=120,
                )
            )
        self.counts[str(obj.get("kind", "?"))] += 1

    def commit(self) -> None:
        assert self._file is not None
        self._file.write(self._tail())
        self._file.commit()  # readers see the old file or the whole new one

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._file is not None:  # not committed: the read failed, leave nothing behind
            self._file.discard()
            self._file = None

    def _head(self) -> str:
        """The List's metadata says when the read began (TAKEN_AT_ANNOTATION): the audit log is cut off there,
        and `check --live-snapshot` tells a reviewer how old its queues are; and of which cluster
        (CLUSTER_UID_ANNOTATION), which `check --live-snapshot` holds to the cluster's `clusterUID`."""
        annotations = {
            name: value
            for name, value in (
                (TAKEN_AT_ANNOTATION, taken_at_stamp(self.taken_at) if self.taken_at else None),
                (CLUSTER_UID_ANNOTATION, self.cluster_uid),
            )
            if value
        }
        if self.json:
            meta = orjson.dumps({"annotations": annotations} if annotations else {}).decode()
            return f'{{"apiVersion":"v1","kind":"List","metadata":{meta},"items":[\n'
        lines = [f"# {line}" for line in self.comment.splitlines()]
        yaml_meta = (
            "metadata:\n  annotations:"
            + "".join(f"\n    {name}: {orjson.dumps(value).decode()}" for name, value in annotations.items())
            if annotations
            else "metadata: {}"
        )
        return "\n".join([*lines, "apiVersion: v1", "kind: List", yaml_meta, ""])

    def _tail(self) -> str:
        if self.json:
            return "\n]}\n"
        return "" if self.counts else "items: []\n"


# Read whole for the differ, which compares their specs with Git: a URL's password (an external Prometheus),
# a value under `apiKey` or `x-api-key`, stays as the cluster holds it until the file is written.
_SPEC_KEPT_WHOLE = frozenset({CONFIG.type_key, SCHEDULING_SHARD.type_key})


def shareable(obj: JSONObject) -> JSONObject:
    """`obj` as the snapshot file shows it: kai-config's and a SchedulingShard's spec and status redacted, and
    every object's label and annotation values (a node label can hold a token as well as any text can). Names,
    kinds and managedFields (already reduced to their shapes) stay; only credentials change, so a snapshot
    read back finds what the live read found, but for them."""
    kept_whole = (str(obj.get("apiVersion")), str(obj.get("kind"))) in _SPEC_KEPT_WHOLE
    out = {k: (redact(v) if kept_whole and k not in ("apiVersion", "kind", "metadata") else v) for k, v in obj.items()}
    meta = obj.get("metadata")
    if isinstance(meta, dict) and any(isinstance(meta.get(k), dict) for k in ("labels", "annotations")):
        out["metadata"] = {
            k: (redact(v) if k in ("labels", "annotations") and isinstance(v, dict) else v) for k, v in meta.items()
        }
    return out


class _PrintedWhole:
    """Stdout as a snapshot target: kept until `commit()`, so a failed read prints nothing rather than half a List."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._buffer: io.StringIO | None = io.StringIO()

    def write(self, text: str) -> None:
        assert self._buffer is not None
        self._buffer.write(text)

    def commit(self) -> None:
        assert self._buffer is not None
        self._out.write(self._buffer.getvalue())
        self._out.flush()
        self._buffer = None

    def discard(self) -> None:
        self._buffer = None


def snapshot_command(
    output: str, kubeconfig: str | None, context: str | None, *, settings: ReadSettings | None = None
) -> SnapshotResult:
    """Read the cluster and write the snapshot to `output` (the value of `-o`); raises UserError (and leaves no
    file) when any read fails."""
    from reconciler.sources.cluster import ClusterClient, ReadProgress, kube_system_uid, read_live

    client = ClusterClient.connect(kubeconfig, context, settings)
    taken_at = datetime.now(UTC)
    stamp = taken_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    comment = (
        f"kai-gitops snapshot of {client.label}, taken {stamp}.\n"
        "Read it with: kai-gitops diff|doctor --snapshot FILE. Secrets appear only as redacted Helm "
        "release summaries."
    )
    try:
        cluster_uid = kube_system_uid(client, client.label)  # which cluster: check --live-snapshot holds to it
        with (
            SnapshotWriter(output, comment=comment, taken_at=taken_at, cluster_uid=cluster_uid) as writer,
            ReadProgress(client.label) as progress,
        ):
            read_live(client, writer, progress)
            writer.commit()
    except OSError as exc:
        raise UserError(
            f"cannot write the snapshot: {exc.strerror or exc}", where=SnapshotTarget.parse(output).shown
        ) from None
    finally:
        client.close()
    return SnapshotResult(writer.target.shown, writer.counts)
