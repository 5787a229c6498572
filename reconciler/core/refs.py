"""Typed references to Kubernetes objects and to places in Git, passed between layers instead of dicts."""

from __future__ import annotations

from dataclasses import dataclass, field

YamlPath = tuple[str | int, ...]


@dataclass(frozen=True, order=True)
class ObjectRef:
    api_version: str
    kind: str
    name: str
    namespace: str | None = None

    def __str__(self) -> str:
        scope = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{scope}{self.name}"

    def to_dict(self) -> dict[str, str | None]:
        return {"apiVersion": self.api_version, "kind": self.kind, "namespace": self.namespace, "name": self.name}


@dataclass(frozen=True)
class Location:
    """Where a desired value lives: file at a Git ref, 1-based line and column, and its YAML path.

    The end (line, and the column just after the value's last character) is where the reader knows it; it
    takes no part in equality, so a location is the same place whoever computed it.
    """

    file: str
    line: int | None = None
    column: int | None = None
    path: YamlPath = ()
    end_line: int | None = field(default=None, compare=False)
    end_column: int | None = field(default=None, compare=False)

    def __str__(self) -> str:
        text = self.file
        if self.line is not None:
            text += f":{self.line}"
            if self.column is not None:
                text += f":{self.column}"
        return text

    def dotted_path(self) -> str:
        return format_path(self.path)

    def to_dict(self) -> dict[str, str | int | None]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": self.dotted_path(),
            "endLine": self.end_line,
            "endColumn": self.end_column,
        }


def format_path(path: YamlPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def release_ref(name: str, namespace: str) -> ObjectRef:
    """Helm releases are not Kubernetes objects; Rego rules and the differ name them the same way."""
    return ObjectRef("helm.sh/v3", "HelmRelease", name, namespace)
