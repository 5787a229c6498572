"""The documentation stays true to the command tree: README.md and docs/*.md name only options that exist,
the command reference covers every command, and every relative link resolves.

The command tree is read through click's own API (`list_commands` / `get_command`, `get_params`), so a lazy
command table works as well as a plain group, and only `reconciler.cli` is imported (its `main`), whichever
module or package provides it.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import click
import markdown
import pygit2
import pytest
import yaml

from reconciler.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
REFERENCE = DOCS / "commands.md"
PAGES = sorted(DOCS.glob("*.md"))
PROG = "kai-gitops"

# Options of other programs the pages quote, told apart by the command a code span or code line starts with.
FOREIGN_COMMANDS = {
    "opa",
    "kubectl",
    "helm",
    "git",
    "python",
    "python3",
    "pip",
    "make",
    "mkdocs",
    "docker",
    "kustomize",
    "pytest",
    "ruff",
    "tar",
    "curl",
    "kube-apiserver",
    "etcd",
    "go",
    "promtool",
    "actionlint",
    "aws",
    "jq",
    "pre-commit",
}
# Strings that look like options but are none of ours, each with the reason.
NOT_OPTIONS = {
    "--token": "a value shape the redaction masks (`--token=…` arguments), not an option",
}

_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9]*(?:-[a-z0-9]+)*)(-?\*)?")
_FENCE = re.compile(r"^(\s*)(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|<a\s+href=\"([^\"]+)\"")


def _walk(command: click.Command, path: tuple[str, ...], parent: click.Context | None):
    ctx = click.Context(command, info_name=path[-1], parent=parent)
    yield path, command, ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, f"{' '.join(path)} lists {name!r} but cannot load it"
            yield from _walk(sub, (*path, name), ctx)


TREE = list(_walk(main, (PROG,), None))
COMMANDS = {" ".join(path): command for path, command, _ in TREE}
OPTIONS = {
    " ".join(path): {
        opt
        for param in command.get_params(ctx)
        if isinstance(param, click.Option)
        for opt in (*param.opts, *param.secondary_opts)
        if opt.startswith("--")
    }
    for path, command, ctx in TREE
}
ALL_OPTIONS = set().union(*OPTIONS.values())


def _doc_files() -> list[Path]:
    return [README, *PAGES]


def _snippets(text: str):
    """(kind, text) for each fenced code line, inline code span and stretch of prose, in order."""
    fence = None
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(2) == fence:
                fence = None
            else:
                yield "code", line
            continue
        if opened:
            fence = opened.group(2)
            continue
        last = 0
        for span in _CODE_SPAN.finditer(line):
            yield "prose", line[last : span.start()]
            yield "code", span.group(2)
            last = span.end()
        yield "prose", line[last:]


_SHELL_SEPARATOR = re.compile(r"&&|\|\||[|;]")


def _command_of(segment: str) -> tuple[str | None, bool]:
    """The kai-gitops command one shell segment runs (longest known path), or whether it runs another program.

    The first program word decides: in `run: helm uninstall kai --namespace x` it is helm, in
    `kai-gitops report merge a.json -o text` it is `kai-gitops report merge`.
    """
    words = segment.split()
    for index, word in enumerate(words):
        if word.startswith("-"):
            return None, False
        if word in FOREIGN_COMMANDS or word.endswith(".py") or word.startswith(("bench/", "tests/", "./")):
            return None, True
        if word in (PROG, ".venv/bin/kai-gitops", "$(BIN)/kai-gitops"):
            path = PROG
            for sub in words[index + 1 :]:
                if f"{path} {sub}" not in COMMANDS:
                    break
                path = f"{path} {sub}"
            return path, False
    return None, False


def _mentions(path: Path):
    """(flag, is_prefix, command path or None, text) for every long option the file mentions as ours."""
    for kind, snippet in _snippets(path.read_text()):
        segments = _SHELL_SEPARATOR.split(snippet) if kind == "code" else [snippet]
        for segment in segments:
            command = None
            if kind == "code":
                command, foreign = _command_of(segment)
                if foreign:
                    continue
            for match in _FLAG.finditer(segment):
                yield match.group(1), bool(match.group(2)), command, segment.strip()


@pytest.mark.parametrize("doc", _doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_option_named_exists(doc: Path) -> None:
    stale = []
    for flag, is_prefix, command, where in _mentions(doc):
        if flag in NOT_OPTIONS:
            continue
        if is_prefix:
            ok = any(opt.startswith(flag) for opt in ALL_OPTIONS)
        elif command is not None and command != PROG:
            # `kai-gitops check … --flag`: the option must be one of that command's own.
            ok = flag in OPTIONS[command]
        else:
            ok = flag in ALL_OPTIONS
        if not ok:
            stale.append(f"{flag} ({command or 'any command'}): {where[:100]}")
    assert not stale, f"{doc.name} names options the command tree does not have:\n" + "\n".join(stale)


def test_the_walk_sees_the_whole_tree() -> None:
    # Guards the walk itself: a lazy command table must still yield every command and its options.
    assert {
        "kai-gitops check",
        "kai-gitops reconcile",
        "kai-gitops report merge",
        "kai-gitops policy bundle",
        "kai-gitops init",
    } <= COMMANDS.keys()
    assert {"--fail-on", "--apply", "--shard", "--report-to", "--chart-version"} <= ALL_OPTIONS


def _render(page: Path) -> str:
    md = markdown.Markdown(extensions=["attr_list", "toc", "tables", "pymdownx.superfences", "mkdocs-click"])
    return md.convert(page.read_text())


def _heading_ids(html: str) -> set[str]:
    return set(re.findall(r"<h[1-6][^>]*\sid=\"([^\"]+)\"", html))


def test_reference_is_generated_from_the_click_tree() -> None:
    text = REFERENCE.read_text()
    block = re.search(r"^::: mkdocs-click\n((?:    :\w+: .*\n)+)", text, re.M)
    assert block, "docs/commands.md must generate the reference with a `::: mkdocs-click` block"
    options = dict(re.findall(r":(\w+): (.*)", block.group(1)))
    assert options.get("module") == "reconciler.cli" and options.get("command") == "main"
    assert options.get("prog_name") == PROG


def test_every_command_is_in_the_reference_or_the_nav() -> None:
    ids = _heading_ids(_render(REFERENCE))
    nav = set(_nav_entries(_config()["nav"]))
    missing = [path for path in COMMANDS if re.sub(r"[^\w]+", "-", path).strip("-") not in ids and path not in nav]
    assert not missing, f"commands missing from docs/commands.md's generated reference and the nav: {missing}"


def test_reference_restates_no_option_table_by_hand() -> None:
    # Only the generated part may list options: a hand-made `| option | meaning |` table goes stale.
    for page in _doc_files():
        for line in page.read_text().splitlines():
            assert not re.match(r"\|\s*(option|flag)s?\s*\|", line, re.I), f"{page.name}: {line}"


def _links(path: Path):
    in_fence = None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        opened = _FENCE.match(line)
        if opened:
            in_fence = None if in_fence == opened.group(2) else (in_fence or opened.group(2))
            continue
        if in_fence:
            continue
        for match in _LINK.finditer(_CODE_SPAN.sub("", line)):
            yield number, match.group(1) or match.group(2)


_IDS: dict[Path, set[str]] = {}


def _github_slug(heading: str) -> str:
    # How GitHub names a heading's anchor where it renders the Markdown (README.md, docs/ in the repo view).
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _ids_of(page: Path) -> set[str]:
    """Anchors a link may name: MkDocs' (the site) and GitHub's (the repository view)."""
    if page not in _IDS:
        text = page.read_text()
        headings = re.findall(r"^#{1,6} +(.+?)\s*$", text, re.M)
        _IDS[page] = (
            _heading_ids(_render(page))
            | set(re.findall(r"\sid=\"([^\"]+)\"", text))
            | {_github_slug(h) for h in headings}
        )
    return _IDS[page]


@pytest.mark.parametrize("doc", _doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for number, target in _links(doc):
        parts = urlsplit(target)
        if parts.scheme or target.startswith(("//", "mailto:")):
            continue
        file = (doc.parent / unquote(parts.path)).resolve() if parts.path else doc
        if not file.exists():
            broken.append(f"{doc.name}:{number}: {target} (no such file)")
        elif parts.fragment and file.suffix == ".md" and parts.fragment not in _ids_of(file):
            broken.append(f"{doc.name}:{number}: {target} (no heading #{parts.fragment})")
    assert not broken, "broken links:\n" + "\n".join(broken)


def _config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def _nav_entries(node, *, titles: bool = True):
    """Every page path in the nav, and (with titles) every section or page title."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from _nav_entries(item, titles=titles)
    elif isinstance(node, dict):
        for title, value in node.items():
            if titles:
                yield title
            yield from _nav_entries(value, titles=titles)


def test_every_page_is_in_the_nav_and_the_build_is_offline_and_strict() -> None:
    config = _config()
    assert sorted(_nav_entries(config["nav"], titles=False)) == sorted(p.name for p in PAGES)
    assert config.get("strict") is True
    # No web fonts (or any plugin fetching assets): `make docs` runs in CI without internet.
    assert config["theme"]["name"] == "material" and config["theme"].get("font") is False
    plugins = {next(iter(p)) if isinstance(p, dict) else p for p in config.get("plugins") or ["search"]}
    assert plugins <= {"search"}, f"a plugin that may fetch at build time, or is not installed by make: {plugins}"


def _section(page: Path, heading: str) -> str:
    text = page.read_text()
    start = text.index(heading)
    return text[start : text.index("\n## ", start + 1)]


@pytest.mark.parametrize("page", [README, DOCS / "index.md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_quick_start_says_how_to_start_on_your_own_repository(page: Path, tmp_path: Path) -> None:
    """The quick start stays two commands; on your own repository it installs from Git (the one placeholder the CI
    docs explain) and starts with `kai-gitops init`, not by copying a template: the commands shown are run here, in
    order, as a new user would (init, commit, check), and every kai-gitops line parses as the CLI would."""
    from tests.support.helpers import commit_files, run_cli

    quick = _section(page, "## Quick start")
    own = _section(page, "### On your own repository")
    fence = re.search(r"^```sh\n(.*?)^```", quick, re.S | re.M)
    assert fence, "the quick start shows its commands in one sh block"
    commands = [line.split("#")[0].strip() for line in fence.group(1).splitlines()]
    assert commands == ["make demo", "make test"], commands
    assert "repo-templates/gitops-repo" not in own, "the start is `kai-gitops init`, not a copied template"
    block = re.search(r"^```sh\n(.*?)^```", own, re.S | re.M)
    assert block, "the start on your own repository shows its commands in one sh block"
    shell = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    assert shell[0] == 'pipx install "git+<kai-gitops-git-url>@<release-tag>"', shell
    assert "`pip install .`" in own and "#installing-kai-gitops)" in own
    assert "`<kai-gitops-git-url>`" in _section(DOCS / "ci.md", "## Installing kai-gitops")
    lines = [line.split() for line in shell if line.startswith("kai-gitops ")]
    assert [words[1] for words in lines] == ["init", "check", "diff"], lines
    for words in lines:
        args = words[1:]
        parent = main.make_context(PROG, list(args))
        command = main.get_command(parent, args[0])
        assert command is not None, words
        command.make_context(args[0], args[1:], parent=parent)  # a usage error raises
    init, check, _ = lines
    code, out, err = run_cli([str(tmp_path / word) if word == "my-gitops" else word for word in init[1:]])
    assert code == 0, err
    assert "cd my-gitops && git init -q && git add -A && git commit" in shell[2]
    pygit2.init_repository(str(tmp_path / "my-gitops"))
    commit_files(tmp_path / "my-gitops", {}, "kai-gitops init")
    code, out, err = run_cli([*check[1:], "--repo", str(tmp_path / "my-gitops")])
    assert code == 0, (out, err)
    # what is left to choose: each cluster's shared-cluster intent (init writes it as a commented choice)
    assert "All clusters: 2 checked, 2 problems (2 findings): 0 error(s), 0 warning(s), 2 info." in out
    assert out.count("NVCA-S-003") == 2, out
