"""`kai-gitops init`: scaffold a GitOps repository (kai-gitops.yaml, values files, waivers, schema, CI)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from reconciler.cli.guard import guard
from reconciler.cli.stdout import write_stdout
from reconciler.core.exits import ExitCode

if TYPE_CHECKING:
    from reconciler.app.scaffold import CiHost, ClusterSeed, ScaffoldSettings

_CI_CHOICES = ("github", "gitlab", "none")


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option(
    "--cluster",
    "clusters",
    metavar="NAME=MODE",
    multiple=True,
    help="A cluster and how KAI is installed on it: NAME=addon (the nvcf-compute-plane stack) or "
    "NAME=standalone (helm install with its own values). Repeat for each cluster.",
)
@click.option(
    "--chart-version",
    default=None,
    metavar="VERSION",
    help="KAI chart version pinned for every cluster (default: the version the stack pins, v0.16.7).",
)
@click.option(
    "--ci",
    type=click.Choice(_CI_CHOICES),
    default="github",
    show_default=True,
    help="The CI template to add: GitHub Actions (.github/workflows/kai-gitops.yml), GitLab CI "
    "(.gitlab-ci.yml), or none.",
)
@guard
def init_command(directory: str, clusters: tuple[str, ...], chart_version: str | None, ci: str) -> ExitCode:
    """Scaffold a GitOps repository in DIRECTORY (default: here), refusing to overwrite any file.

    All or nothing: it never writes through a symbolic link below DIRECTORY, and removes what it wrote if a
    write fails half-way.

    Writes kai-gitops.yaml with the clusters given, their values files in the canonical form, a waivers
    file with commented examples, the JSON Schema for editor completion, and the CI template.

    \b
    Example:
      kai-gitops init --cluster prod=addon --cluster lab=standalone
    """
    from reconciler.app.scaffold import write_scaffold
    from reconciler.core.printable import visible

    settings = init_settings(directory, clusters, chart_version, ci)
    written = write_scaffold(settings)
    write_stdout(f"Wrote {len(written)} files in {visible(str(settings.directory))}:")
    for path in written:
        write_stdout(f"  {path}")
    write_stdout(next_steps(settings))
    return ExitCode.CLEAN


def init_settings(directory: str, clusters: tuple[str, ...], chart_version: str | None, ci: str) -> ScaffoldSettings:
    from pathlib import Path

    from reconciler.app.scaffold import ScaffoldSettings
    from reconciler.core.errors import UserError
    from reconciler.model.config import DEFAULT_STACK_KAI_VERSION

    if not clusters:
        raise UserError(
            "init needs at least one --cluster NAME=MODE", hint="e.g. --cluster prod=addon --cluster lab=standalone"
        )
    hosts: dict[str, CiHost | None] = {"github": "github", "gitlab": "gitlab", "none": None}
    return ScaffoldSettings(
        Path(directory),
        tuple(cluster_seed(text) for text in clusters),
        chart_version or DEFAULT_STACK_KAI_VERSION,
        hosts[ci],
    )


def cluster_seed(text: str) -> ClusterSeed:
    """`--cluster NAME=MODE`, the mode spelled out: which way KAI is installed decides every other file."""
    from reconciler.app.scaffold import MODES, ClusterSeed
    from reconciler.core.errors import UserError

    name, sep, mode = text.partition("=")
    if not sep or not name:
        raise UserError(
            f"--cluster {text!r}: give NAME=MODE",
            hint=f"e.g. --cluster {text or 'prod'}=addon, or =standalone when KAI is installed with its own values",
        )
    for known in MODES:
        if mode == known:
            return ClusterSeed(name, known)
    from reconciler.core.redact import redact_text

    # the mode as cut from the argument judged whole: cut first, a secret query parameter's value loses its name
    shown = redact_text(text).partition("=")[2]
    raise UserError(
        f"--cluster {text!r}: mode {shown!r} is not one of {', '.join(MODES)}",
        hint="addon: the nvcf-compute-plane stack installs KAI; standalone: helm install with its own values",
    )


# The placeholder each CI file has (one per file, the line its header comment explains).
CI_STEPS: dict[CiHost, str] = {
    "github": "  - in the CI file, replace <owner> with the GitHub owner of kai-gitops (docs/ci.md#the-github-action)",
    "gitlab": "  - in the CI file, replace <kai-gitops-git-url> with the Git URL of kai-gitops "
    "(docs/ci.md#installing-kai-gitops)",
}


def next_steps(settings: ScaffoldSettings) -> str:
    """What to do next, the command quoted for a POSIX shell; a control character in the directory's name shows
    as its escape (a terminal never receives it raw), so such a command must be retyped, not pasted."""
    import shlex

    from reconciler.core.printable import visible

    steps = ["Next:"]
    if settings.ci is not None:
        steps.append(CI_STEPS[settings.ci])
    steps += [
        "  - complete the environment and values files with your clusters' settings",
        "  - commit the files (git init first in a new directory), then run: "
        f"kai-gitops check --repo {visible(shlex.quote(str(settings.directory)))}",
    ]
    return "\n".join(steps)
