"""The function charts of `kai-gitops.yaml` `workloads:`, rendered with the real `helm template`.

The chart and its values files are read at the checked ref (not from the working copy, unless --worktree),
written to a private work area (sources/materialize.py: every name checked, nothing written outside it) and
rendered there; a manifest file is read as it is. Helm runs without cluster access (`helm template` never
contacts one), within a time limit and an address-space limit (`resource.setrlimit(RLIMIT_AS)` in the child,
as for the pull request's own Rego), and its output is read within the YAML byte budget.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from reconciler.core.errors import UserError
from reconciler.core.redact import excerpt
from reconciler.model.config import WorkloadConfig
from reconciler.model.workloads import RenderedWorkload, TemplateReader, rendered_objects
from reconciler.sources.git import GitTree
from reconciler.sources.materialize import WorkArea
from reconciler.yamlio.document import MAX_BYTES, decode_text

HELM_TIMEOUT_S = 120.0
# helm's whole address space, not its resident memory: the Go runtime of helm 3.22 reserves about 1.5 GB of
# address space (heap arena index, thread stacks) before it renders anything
HELM_MEMORY_MB = 4096
# How the Go runtime (and a --helm wrapper's shell) says that a mapping was refused
_NO_MEMORY = ("out of memory", "cannot allocate memory", "failed to reserve", "pthread_create failed")
# Where helm says a template failed: `template: fn/templates/x.yaml:4:18:` or `execution error at (fn/…:6:8)`.
_HELM_PLACE = re.compile(r"(?:template: |error at \()[^/\s:()]+/([^\s:()]+):(\d+):(\d+)")
ERROR_EXCERPT = 300


def find_helm(explicit: str | None) -> str:
    """`--helm PATH`, else `helm` on PATH; one clear line when neither is there."""
    if explicit:
        if not Path(explicit).is_file():
            raise UserError(f"--helm {explicit}: no such file", hint="pass the path of the helm binary")
        return explicit
    found = shutil.which("helm")
    if found is None:
        raise UserError(
            "helm not found on PATH: kai-gitops.yaml lists function charts under workloads:, and they "
            "are rendered with `helm template`",
            hint="install Helm 3, or pass --helm PATH",
        )
    return found


def render_workloads(
    tree: GitTree, workloads: tuple[WorkloadConfig, ...], helm: str | None, memory_mb: int = HELM_MEMORY_MB
) -> dict[str, RenderedWorkload]:
    """Each workload rendered once, by name (a workload deployed to several clusters is judged per cluster);
    `helm template` may map at most `memory_mb` of address space."""
    binary = find_helm(helm) if any(w.chart is not None for w in workloads) else None
    rendered = {}
    for workload in workloads:
        if workload.chart is not None and binary is not None:
            text, read = _render_chart(tree, workload, binary, memory_mb)
        else:
            manifest = workload.manifests or ""
            text, read = decode_text(tree.read(manifest), manifest), _no_template
        rendered[workload.name] = rendered_objects(text, workload, read)
    return rendered


def _no_template(_path: str) -> str | None:
    return None


def _render_chart(tree: GitTree, workload: WorkloadConfig, helm: str, memory_mb: int) -> tuple[str, TemplateReader]:
    chart = workload.chart or ""
    files = {path: data for path, data in tree.iter_files(chart)}
    if workload.chart_file("Chart.yaml") not in files:
        raise UserError(
            f"workload '{workload.name}': no Chart.yaml in chart directory {workload.chart_shown}",
            where=workload.chart_shown,
            hint="chart: must name a Helm chart directory of the repository",
        )
    texts = {path: data.decode("utf-8", "replace") for path, data in files.items()}
    with WorkArea("chart") as work:
        for path, data in files.items():
            work.write("chart/" + (path[len(chart) + 1 :] if chart else path), data, shown=path)
        command = [helm, "template", workload.name, str(work.path("chart"))]
        for i, values in enumerate(workload.values):
            command += ["--values", str(work.write(f"values-{i}.yaml", tree.read(values), shown=values))]
        output = _run(command, workload, work.root, memory_mb)
    return decode_text(output, f"{chart} (rendered)"), texts.get


def _run(command: list[str], workload: WorkloadConfig, root: Path, memory_mb: int) -> bytes:
    """helm's output, at most MAX_BYTES of it; a failure is one line naming the chart and helm's first words,
    or the memory budget and the option that raises it."""
    chart = workload.chart_shown
    with (root / "stderr").open("w+b") as errors:
        try:  # its own process group: a --helm wrapper's children are stopped with it
            process = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=errors,
                stdin=subprocess.DEVNULL,
                cwd=root,
                start_new_session=True,
                preexec_fn=_address_space(memory_mb),
            )
        except OSError as exc:
            raise UserError(
                f"cannot run helm ({command[0]}): {exc.strerror}", hint="pass a working helm with --helm"
            ) from None
        with process:
            output, code = _output_within_limit(process, workload)
        errors.seek(0)
        # helm names the private copy; the user knows the chart by its repository path
        said = errors.read(64 * 1024).decode("utf-8", "replace").replace(str(root / "chart"), chart)
        said = excerpt(said, ERROR_EXCERPT)
    if code != 0 and any(words in said.lower() for words in _NO_MEMORY):
        raise UserError(
            f"workload '{workload.name}': helm template of chart {chart} exceeded its memory budget of "
            f"{memory_mb:,} MB",
            where=chart,
            hint="look for a template ranging over a huge list; if the chart is right, raise --helm-memory",
        )
    if code != 0:
        place = _HELM_PLACE.search(said)  # the template's own file and line, as findings name them
        where = f"{workload.chart_file(place.group(1))}:{place.group(2)}:{place.group(3)}" if place else chart
        raise UserError(
            f"workload '{workload.name}': helm template failed for chart {chart}: {said or f'exit {code}'}",
            where=where,
            hint="fix the chart or its values (render it with helm template to see more)",
        )
    return output


def _address_space(memory_mb: int) -> Callable[[], None]:
    """What the child runs between fork and exec (one system call, nothing that could wait on a lock another
    thread held): at most `memory_mb` of address space, for helm and every process it starts."""
    limit = memory_mb * 1024 * 1024

    def limit_child() -> None:
        with contextlib.suppress(OSError, ValueError):  # a system without the limit: the time limit still holds
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return limit_child


def _output_within_limit(process: subprocess.Popen[bytes], workload: WorkloadConfig) -> tuple[bytes, int]:
    """(stdout, exit code) of a helm that finishes within HELM_TIMEOUT_S and MAX_BYTES; else its process group
    is killed and the error says which limit. The read runs in a thread because a read blocks until helm
    closes stdout, and a hanging helm never does."""
    chart = workload.chart_shown
    deadline = time.monotonic() + HELM_TIMEOUT_S
    assert process.stdout is not None  # stdout=PIPE
    read: list[bytes] = []
    reader = threading.Thread(target=_read_capped, args=(process.stdout, read), daemon=True)
    reader.start()
    reader.join(HELM_TIMEOUT_S)
    try:
        if reader.is_alive():
            raise subprocess.TimeoutExpired(process.args, HELM_TIMEOUT_S)
        if len(read[0]) > MAX_BYTES:
            _kill_group(process)
            raise UserError(
                f"workload '{workload.name}': the render of chart {chart} is over {MAX_BYTES} bytes",
                where=chart,
                hint="a function chart renders far less; check its values",
            )
        return read[0], process.wait(timeout=max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise UserError(
            f"workload '{workload.name}': helm template of chart {chart} took over {HELM_TIMEOUT_S:g} s",
            where=chart,
            hint="find why helm hangs (a --helm wrapper, a plugin, a lookup)",
        ) from None


def _read_capped(stream: IO[bytes], into: list[bytes]) -> None:
    into.append(stream.read(MAX_BYTES + 1))


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
