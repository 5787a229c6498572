"""Function charts as the cluster will receive them: the objects of a render, each pointing back at its template.

A chart is rendered by `sources/function_charts.py`; here its output is split into objects, and every object
carries a YamlDoc whose file is the chart's template (from the render's `# Source:` comment) and whose lines
are the template's own where the rendered text matches it line for line (see `_template_lines`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import as_object
from reconciler.model.config import WorkloadConfig
from reconciler.yamlio.document import YamlDoc, load_documents

_SOURCE = re.compile(r"^# Source: (\S.*?)\s*$")
_SEPARATOR = re.compile(r"^---(\s|$)")
_LINES = re.compile(r"\b(lines? )(\d+(?: and \d+)?)\b")  # the render's line numbers in a YAML error
# Beyond this many lines a template is not aligned with its render (difflib is quadratic in the worst case):
# its objects then point at the template's first line, still the right file.
MAX_ALIGNED_LINES = 5_000
HOOK_ANNOTATION = "helm.sh/hook"
TemplateReader = Callable[[str], str | None]  # repo path of a chart file -> its text, or None for no file of it


@dataclass(frozen=True)
class RenderedObject:
    doc_id: str  # "workload:<name>:<n>": the id findings name in the cluster's desired docs
    doc: YamlDoc  # file: the template (chart) or the manifest file; lines in that file
    api_version: str
    kind: str
    name: str
    namespace: str | None


@dataclass(frozen=True)
class RenderedWorkload:
    config: WorkloadConfig
    objects: tuple[RenderedObject, ...]


def rendered_objects(text: str, workload: WorkloadConfig, read_template: TemplateReader) -> RenderedWorkload:
    """The objects of `text` (a `helm template` output, or the workload's manifest file) in order.

    Helm hooks are left out: NVCA does not run them. The whole text is read within the YAML budget of
    `yamlio` (bytes and values), so a chart cannot render its way past it.
    """
    file = f"{workload.chart_shown} (rendered)" if workload.chart is not None else workload.manifests or ""
    lines = text.splitlines()
    try:
        docs = load_documents(text, file)
    except UserError as exc:
        if workload.chart is None:
            raise
        raise _in_template_error(exc, file, lines, workload, read_template) from None
    objects: list[RenderedObject] = []
    for doc in docs:
        if doc.data is None:
            continue
        # the root's position is where the stream's document starts (its `---`); its first key is the object's
        first = min((line for path, (line, _) in doc.positions.items() if path), default=1)
        source = _source_above(lines, first)
        if workload.chart is not None:
            doc = _in_template(doc, lines, first, workload, source, read_template)
        obj = _object(doc, workload, len(objects))
        if obj is not None:
            objects.append(obj)
    return RenderedWorkload(workload, tuple(objects))


def _in_template_error(
    exc: UserError, file: str, lines: list[str], workload: WorkloadConfig, read_template: TemplateReader
) -> UserError:
    """A render that is not valid YAML (a duplicate key in a template), told at the template's own file and line
    (from the `# Source:` comment above it) as findings are, not at a line of the render nobody can open."""
    match = re.fullmatch(rf"{re.escape(file)}:(\d+)(?::\d+)?", exc.where or "")
    source = _source_above(lines, int(match.group(1))) if match else None
    if match is None or source is None:
        return exc
    path = _template_path(workload, source)
    template = read_template(path)
    start, end = _document_bounds(lines, int(match.group(1)))
    mapping = _template_lines(lines[start:end], template.splitlines() if template else [])

    def in_template(rendered: int) -> str:
        return str(mapping.get(rendered - 1 - start, "?"))

    message = _LINES.sub(
        lambda m: m.group(1) + " and ".join(in_template(int(n)) for n in m.group(2).split(" and ")), exc.message
    )
    line = mapping.get(int(match.group(1)) - 1 - start)
    return UserError(message, where=f"{path}:{line}" if line else path, hint=exc.hint)


def _source_above(lines: list[str], first: int) -> str | None:
    for index in range(first - 1, -1, -1):
        match = _SOURCE.match(lines[index])
        if match:
            return match.group(1)
        if index < first - 1 and _SEPARATOR.match(lines[index]):
            return None
    return None


def _template_path(workload: WorkloadConfig, source: str) -> str:
    """`# Source: fn/templates/sts.yaml` names the chart by its own name; the repo path is under `chart`."""
    _, _, inside = source.partition("/")
    return workload.chart_file(inside) if inside else workload.chart_shown


def _in_template(
    doc: YamlDoc,
    lines: list[str],
    first: int,
    workload: WorkloadConfig,
    source: str | None,
    read_template: TemplateReader,
) -> YamlDoc:
    path = _template_path(workload, source) if source is not None else None
    template = read_template(path) if path is not None else None
    if path is None or template is None:  # no `# Source:`, or one naming no file of this chart: a template can
        # write its own `# Source: ../../etc/passwd`, which must not point a result outside the repository
        return YamlDoc(workload.chart_shown, doc.data, {key: (1, 1) for key in doc.positions})
    start, end = _document_bounds(lines, first)
    mapping = _template_lines(lines[start:end], template.splitlines())
    positions = {key: (mapping.get(line - 1 - start, 1), column) for key, (line, column) in doc.positions.items()}
    return YamlDoc(path, doc.data, positions)


def _document_bounds(lines: list[str], first: int) -> tuple[int, int]:
    start = first - 1
    while start > 0 and not _SEPARATOR.match(lines[start - 1]):
        start -= 1
    end = first
    while end < len(lines) and not _SEPARATOR.match(lines[end]):
        end += 1
    return start, end


def _template_lines(rendered: list[str], template: list[str]) -> dict[int, int]:
    """Rendered line index -> 1-based template line: lines Helm copied verbatim align exactly; a line a
    template action produced takes the line of the nearest aligned line above it (its enclosing key)."""
    if not template or len(template) > MAX_ALIGNED_LINES or len(rendered) > MAX_ALIGNED_LINES:
        return {}
    matcher = difflib.SequenceMatcher(
        None, [r.strip() for r in rendered], [t.strip() for t in template], autojunk=False
    )
    exact: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            exact[block.a + offset] = block.b + offset + 1
    mapping, last = {}, 1
    for index, line in enumerate(rendered):
        last = exact.get(index) or _same_key(line, template, last) or last
        mapping[index] = last
    return mapping


def _same_key(line: str, template: list[str], after: int) -> int | None:
    """`key: {{ .Values.x }}` rendered as `key: 3`: the next template line from `after` that writes the same key."""
    key, colon, _ = line.strip().partition(": ")
    if not colon or not key or "{{" in key:
        return None
    for number in range(after, min(len(template), after + 20)):
        if template[number].strip().startswith(f"{key}: "):
            return number + 1
    return None


def _object(doc: YamlDoc, workload: WorkloadConfig, number: int) -> RenderedObject | None:
    data = doc.data
    where = str(doc.locate(()))
    if not isinstance(data, dict):
        raise UserError(
            "a rendered document is not a Kubernetes object (a mapping)",
            where=where,
            hint=f"fix the template of workload '{workload.name}'",
        )
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        raise UserError(
            "a rendered object has no apiVersion or kind",
            where=where,
            hint=f"fix the template of workload '{workload.name}'",
        )
    metadata = as_object(data.get("metadata"))
    if HOOK_ANNOTATION in as_object(metadata.get("annotations")):
        return None
    name, namespace = metadata.get("name"), metadata.get("namespace")
    return RenderedObject(
        f"workload:{workload.name}:{number}",
        doc,
        api_version,
        kind,
        name if isinstance(name, str) else "",
        namespace if isinstance(namespace, str) else None,
    )
