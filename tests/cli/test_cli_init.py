"""`kai-gitops init`: what it scaffolds passes `check` as committed, and it never overwrites a file."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from reconciler.checks.policy.waivers import load_waivers
from reconciler.sources.repoconfig import parse_repo_config
from tests.support.helpers import DATA, ROOT, assert_one_line_error, run_cli

CI_TEMPLATES = ROOT / "repo-templates" / "ci"
SCHEMA = DATA / "kai-gitops.schema.json"
TWO_CLUSTERS = ("--cluster", "prod=addon", "--cluster", "lab=standalone")


def init(target: Path, *args: str) -> tuple[int, str, str]:
    return run_cli(["init", target, *args])


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}


def commit(root: Path) -> None:
    git = ["git", "-c", "user.name=kai-gitops tests", "-c", "user.email=tests@example.invalid", "-C", str(root)]
    for step in (["init", "--quiet"], ["add", "--all"], ["commit", "--quiet", "-m", "kai-gitops init"]):
        subprocess.run([*git, *step], check=True, timeout=60)


@pytest.mark.parametrize(
    ("args", "ci_file"),
    [
        ((), ".github/workflows/kai-gitops.yml"),
        (("--ci", "gitlab", "--chart-version", "v0.17.0"), ".gitlab-ci.yml"),
        (("--ci", "none", "--chart-version", "v0.14.7"), None),
    ],
)
def test_what_init_writes_passes_check_once_committed(
    tmp_path: Path, args: tuple[str, ...], ci_file: str | None
) -> None:
    target = tmp_path / "gitops"
    code, stdout, stderr = init(target, *TWO_CLUSTERS, *args)
    assert (code, stderr) == (0, ""), stderr
    expected = {
        "kai-gitops.yaml",
        "kai-gitops.schema.json",
        "kai-gitops-waivers.yaml",
        "environments/prod.yaml",
        "clusters/lab/kai-values.yaml",
        "clusters/lab/nvca-operator-values.yaml",
    }
    assert files_under(target) == expected | ({ci_file} if ci_file else set())
    assert all(f"  {path}\n" in stdout for path in expected)
    commit(target)
    code, stdout, stderr = run_cli(["check", "--repo", target, "--fail-on", "info", "-o", "json"])
    report = json.loads(stdout)
    # The one thing left to the user: the shared-cluster intent, a commented choice none of which is acted on
    assert [(c["cluster"], [f["rule"] for f in c["findings"]]) for c in report["clusters"]] == [
        ("prod", ["NVCA-S-003"]),
        ("lab", ["NVCA-S-003"]),
    ], report
    assert code == 2
    code, stdout, stderr = run_cli(["check", "--repo", target, "-o", "json"])
    assert code == 0, stdout
    text = (target / "kai-gitops.yaml").read_text()
    (target / "kai-gitops.yaml").write_text(
        text.replace("    # sharedCluster: {intent: dedicated}", "    sharedCluster: {intent: dedicated}")
    )
    commit(target)
    code, stdout, stderr = run_cli(["check", "--repo", target, "--fail-on", "info", "-o", "json"])
    assert code == 0, [f["message"] for c in json.loads(stdout)["clusters"] for f in c["findings"]]


def test_the_config_validates_against_the_schema_and_names_the_clusters_as_asked(tmp_path: Path) -> None:
    init(tmp_path, *TWO_CLUSTERS, "--chart-version", "v0.17.0")
    text = (tmp_path / "kai-gitops.yaml").read_text()
    config = yaml.safe_load(text)
    assert not list(Draft202012Validator(json.loads(SCHEMA.read_text())).iter_errors(config))
    prod, lab = config["clusters"]
    assert (prod["name"], prod["mode"], prod["kaiChartVersion"]) == ("prod", "addon", "v0.17.0")
    assert prod["stackKaiVersion"] == "v0.17.0"  # an add-on cluster's chart is the one its stack pins
    assert (lab["name"], lab["mode"], lab["kaiChartVersion"]) == ("lab", "standalone", "v0.17.0")
    assert config["waiversFile"] == "kai-gitops-waivers.yaml"
    assert text.startswith("# yaml-language-server: $schema=./kai-gitops.schema.json\n")
    assert (tmp_path / "kai-gitops.schema.json").read_bytes() == SCHEMA.read_bytes()


def test_values_files_are_in_the_canonical_form(tmp_path: Path) -> None:
    init(tmp_path, *TWO_CLUSTERS)
    values = (tmp_path / "clusters/lab/kai-values.yaml").read_text()
    assert yaml.safe_load(values) == yaml.safe_load((DATA / "canonical-kai-values.yaml").read_text())
    assert "--version v0.16.7 -f clusters/lab/kai-values.yaml" in values  # the install command it is for
    env = yaml.safe_load((tmp_path / "environments/prod.yaml").read_text())
    assert env["addons"]["kaiScheduler"]["enabled"] is True
    gates = yaml.safe_load((tmp_path / "clusters/lab/nvca-operator-values.yaml").read_text())
    assert "KAIScheduler" in gates["selfManaged"]["featureGateValues"]


def test_the_waivers_file_is_empty_with_a_commented_example_that_parses(tmp_path: Path) -> None:
    init(tmp_path, *TWO_CLUSTERS)
    text = (tmp_path / "kai-gitops-waivers.yaml").read_text()
    assert load_waivers(text) == []
    example = "\n".join(line.removeprefix("# ") for line in text.splitlines() if re.match(r"# (waivers:|  )", line))
    waivers = load_waivers(example)
    assert len(waivers) == 2 and waivers[1].subject == "*"  # "*" waives findings about a file in the repository
    assert (ROOT / "repo-templates/gitops-repo/kai-gitops-waivers.yaml").read_text() == text


@pytest.mark.parametrize(("ci", "template"), [("github", "github-actions.yml"), ("gitlab", "gitlab-ci.yml")])
def test_the_ci_file_is_the_repository_template_byte_for_byte(tmp_path: Path, ci: str, template: str) -> None:
    init(tmp_path, "--cluster", "lab=standalone", "--ci", ci)
    (written,) = files_under(tmp_path) - {
        "kai-gitops.yaml",
        "kai-gitops.schema.json",
        "kai-gitops-waivers.yaml",
        "clusters/lab/kai-values.yaml",
        "clusters/lab/nvca-operator-values.yaml",
    }
    assert (tmp_path / written).read_bytes() == (CI_TEMPLATES / template).read_bytes()
    assert (DATA / "init" / "ci" / template).read_bytes() == (CI_TEMPLATES / template).read_bytes()


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "clusters/lab").mkdir(parents=True)
    (tmp_path / "kai-gitops-waivers.yaml").write_text("waivers: []  # ours\n")
    (tmp_path / "clusters/lab/kai-values.yaml").write_text("scheduler: {}\n")
    before = {p: (tmp_path / p).read_text() for p in files_under(tmp_path)}
    line = assert_one_line_error(
        *init(tmp_path, *TWO_CLUSTERS), "refusing to overwrite", "kai-gitops-waivers.yaml, clusters/lab/kai-values.yaml"
    )
    assert "kai-gitops.yaml" not in line.replace("kai-gitops.yaml.", "")  # names only what exists
    assert {p: (tmp_path / p).read_text() for p in files_under(tmp_path)} == before


def test_the_help_names_the_default_chart_version() -> None:
    from reconciler.model.config import DEFAULT_STACK_KAI_VERSION

    code, stdout, _ = run_cli(["init", "--help"])
    assert code == 0 and f"stack pins, {DEFAULT_STACK_KAI_VERSION})" in " ".join(stdout.split())


def test_a_file_where_init_needs_a_folder_is_refused_too(tmp_path: Path) -> None:
    (tmp_path / "clusters").write_text("not a folder\n")
    assert_one_line_error(
        *init(tmp_path, "--cluster", "lab=standalone", "--ci", "none"),
        "refusing to overwrite",
        "clusters/lab/kai-values.yaml, clusters/lab/nvca-operator-values.yaml",
    )
    assert files_under(tmp_path) == {"clusters"}


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc, where nothing can be created")
def test_a_directory_that_cannot_be_written_is_a_one_line_error() -> None:
    assert_one_line_error(
        *init(Path("/proc/kai-gitops-init"), "--cluster", "a=addon", "--ci", "none"),
        "cannot write /proc/kai-gitops-init",
    )


def test_init_into_the_default_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, stderr = run_cli(["init", "--cluster", "lab=standalone", "--ci", "none"])
    assert (code, stderr) == (0, "")
    assert (tmp_path / "kai-gitops.yaml").is_file()


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        ((), ("at least one --cluster NAME=MODE",)),
        (("--cluster", "prod"), ("--cluster 'prod': give NAME=MODE", "prod=addon")),
        (("--cluster", "=addon"), ("give NAME=MODE",)),
        (("--cluster", "prod=helm"), ("mode 'helm' is not one of addon, standalone",)),
        (("--cluster", "Prod=addon"), ("cluster name 'Prod' is not allowed", "lowercase")),
        (("--cluster", "a=addon", "--cluster", "a=standalone"), ("cluster 'a' is named twice",)),
        (("--cluster", "a=addon", "--chart-version", "latest"), ("KAI chart version 'latest' is not a version",)),
        (("--cluster", "a=addon", "--ci", "jenkins"), ("'jenkins' is not one of",)),
    ],
)
def test_bad_options_are_one_line_errors_and_write_nothing(
    tmp_path: Path, args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    assert_one_line_error(*init(tmp_path / "new", *args), *needles)
    assert not (tmp_path / "new").exists()


def test_a_file_as_the_directory_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    assert_one_line_error(*init(tmp_path / "notes.txt", "--cluster", "a=addon"), "is a file")


def test_a_fleet_gets_a_commented_rollout_that_parses_once_uncommented(tmp_path: Path) -> None:
    init(tmp_path, *TWO_CLUSTERS)
    text = (tmp_path / "kai-gitops.yaml").read_text()
    assert "# rollout:" in text and "docs/fleet.md" in text
    uncommented = "\n".join(line[2:] if line.startswith(("# rollout:", "#   ")) else line for line in text.splitlines())
    rollout = parse_repo_config(uncommented.encode()).rollout
    assert rollout is not None and rollout.members == (("prod",), ("lab",))
    init(tmp_path / "one", "--cluster", "lab=standalone")
    assert "rollout" not in (tmp_path / "one" / "kai-gitops.yaml").read_text()  # one cluster: nothing to order


def test_the_comments_in_kai_gitops_yaml_line_up(tmp_path: Path) -> None:
    """The first file a new user reads: every trailing comment of a cluster entry starts in the same column."""
    init(tmp_path, *TWO_CLUSTERS)
    lines = (tmp_path / "kai-gitops.yaml").read_text().splitlines()
    trailing = [line for line in lines if line.startswith("    ") and not line.lstrip().startswith("#")]
    columns = {line.index(" # ") for line in trailing if " # " in line}
    assert len(columns) == 1, [line for line in lines if " # " in line]


@pytest.mark.parametrize("linked", ["clusters", ".github", "clusters/lab"])
def test_a_linked_sub_folder_is_refused_and_nothing_is_written_outside(tmp_path: Path, linked: str) -> None:
    outside, target = tmp_path / "outside", tmp_path / "gitops"
    outside.mkdir()
    (target / linked).parent.mkdir(parents=True, exist_ok=True)
    (target / linked).symlink_to(outside, target_is_directory=True)
    line = assert_one_line_error(*init(target, *TWO_CLUSTERS), f"refusing to write through {linked}", "symbolic link")
    assert "Traceback" not in line
    assert list(outside.iterdir()) == []
    assert files_under(target) == set()


def test_a_link_that_appears_after_the_check_is_not_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race the check alone would lose: `clusters/` becomes a link between the check and the write."""
    from reconciler.app import scaffold

    outside, target = tmp_path / "outside", tmp_path / "gitops"
    outside.mkdir()
    target.mkdir()
    check = scaffold._Creation.occupied

    def occupied_then_link(self: scaffold._Creation, path: str) -> bool:
        found = check(self, path)
        if path == ".github/workflows/kai-gitops.yml" and not (target / "clusters").is_symlink():
            (target / "clusters").symlink_to(outside, target_is_directory=True)
        return found

    monkeypatch.setattr(scaffold._Creation, "occupied", occupied_then_link)
    assert_one_line_error(*init(target, *TWO_CLUSTERS), "refusing to write through clusters", "symbolic link")
    assert list(outside.iterdir()) == []
    assert files_under(target) == set()  # and what was written before the link was met is gone


@pytest.mark.parametrize("failing_write", [1, 4, 6])
def test_a_write_failing_half_way_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing_write: int
) -> None:
    """A full disk at the Nth file: the files and folders this run made are removed, what was there stays."""
    import errno
    import os

    from reconciler.app import scaffold

    target = tmp_path / "a" / "gitops"
    real_open, opened = os.open, []

    def open_until_full(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if flags & os.O_CREAT:
            opened.append(path)
            if len(opened) == failing_write:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scaffold.os, "open", open_until_full)
    assert_one_line_error(*init(target, *TWO_CLUSTERS), "cannot write", "No space left on device")
    assert not (tmp_path / "a").exists()  # the directory init created for the repository, too


def test_a_failure_half_way_keeps_what_was_there_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    from reconciler.app import scaffold

    (tmp_path / "clusters").mkdir()
    (tmp_path / "notes.md").write_text("ours\n")
    real_mkdir = os.mkdir

    def mkdir_refused(path: str, *args: object, **kwargs: object) -> None:
        if path == "lab":
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))
        real_mkdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scaffold.os, "mkdir", mkdir_refused)
    assert_one_line_error(*init(tmp_path, *TWO_CLUSTERS), f"cannot write {tmp_path}/clusters/lab")
    assert files_under(tmp_path) == {"notes.md"} and (tmp_path / "clusters").is_dir()


def test_the_directory_is_echoed_escaped_and_the_next_command_quoted(tmp_path: Path) -> None:
    import shlex

    target = tmp_path / "my repo\x1b]0;pwned\x07\nkai"
    code, stdout, stderr = init(target, "--cluster", "lab=standalone", "--ci", "none")
    assert (code, stderr) == (0, "")
    assert "\x1b" not in stdout and "\x07" not in stdout
    assert f"in {tmp_path}/my repo\\x1b]0;pwned\\x07\\nkai:" in stdout
    assert (target / "kai-gitops.yaml").is_file()
    spaced = tmp_path / "my gitops; rm -rf ~"
    code, stdout, _ = init(spaced, "--cluster", "lab=standalone", "--ci", "none")
    command = stdout.rstrip("\n").rsplit("then run: ", 1)[1]
    assert code == 0 and shlex.split(command) == ["kai-gitops", "check", "--repo", str(spaced)]


@pytest.mark.parametrize(
    ("ci", "ci_file"), [("github", ".github/workflows/kai-gitops.yml"), ("gitlab", ".gitlab-ci.yml")]
)
def test_the_placeholder_init_says_to_replace_is_the_one_the_ci_file_has(tmp_path: Path, ci: str, ci_file: str) -> None:
    code, stdout, _ = init(tmp_path, *TWO_CLUSTERS, "--ci", ci)
    [named] = re.findall(r"replace (<[a-z-]+>)", stdout)
    assert code == 0 and named in (tmp_path / ci_file).read_text()
