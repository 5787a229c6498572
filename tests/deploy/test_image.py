"""The image: the Dockerfile's promises (non-root, entrypoint, OCI labels, everything written under /tmp),
and the program keeping them on a read-only root filesystem.

No docker here, so the Dockerfile is parsed, and the read-only run uses the project's installed package
(the editable install in .venv: building the wheel and installing it with its dependencies into a new
venv took 70 s wall, 25 s CPU, on the shared two-core machine -- more than this whole module may take).
A one-off check of that wheel install ran `policy test` (161 passed) and wrote a bundle byte-identical
to the editable install's. Where the kernel lets us (a private mount namespace via `unshare -m`,
as root), the root filesystem is remounted read-only with two tmpfs mounts for the cache and the temp
directory -- the CronJob pod's layout -- so any write elsewhere fails the command. Otherwise the test
falls back to comparing HOME, the working directory and the source tree before and after.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.support.deploy_manifests import pod_spec, rendered
from tests.support.helpers import ROOT, load_demo_builder, make_bare_remote

DOCKERFILE = ROOT / "Dockerfile"
SNAPSHOT = ROOT / "repo-templates" / "demo" / "snapshots" / "prod-addon.yaml"


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = (pending + stripped).strip()
        pending = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def final_stage() -> list[tuple[str, str]]:
    steps = instructions(DOCKERFILE.read_text())
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def pairs(args: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in shlex.split(args))


def stage_values(word: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for step, args in final_stage():
        if step == word:
            values.update(pairs(args))
    return values


def test_runs_as_a_numeric_non_root_user_that_the_cronjob_expects(tmp_path: Path) -> None:
    users = [args for word, args in final_stage() if word == "USER"]
    assert users, "the final stage sets no USER: the image would run as root"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0 and (not gid or int(gid) != 0)
    for overlay in ("report-only", "self-heal"):
        assert pod_spec(rendered(tmp_path, overlay))["securityContext"]["runAsUser"] == int(uid)


def test_entrypoint_is_the_cli_in_exec_form() -> None:
    (entrypoint,) = [args for word, args in final_stage() if word == "ENTRYPOINT"]
    assert json.loads(entrypoint) == ["kai-gitops"]  # exec form: signals reach the process, no shell


def test_oci_labels() -> None:
    labels = stage_values("LABEL")
    for key in ("title", "description", "version", "revision", "created", "licenses", "source"):
        assert labels.get(f"org.opencontainers.image.{key}"), key
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"


def test_home_and_caches_live_under_tmp_and_the_rego_engine_is_installed() -> None:
    env = stage_values("ENV")
    for key in ("HOME", "XDG_CACHE_HOME", "KAI_GITOPS_CACHE", "TMPDIR"):
        assert env[key] == "/tmp" or env[key].startswith("/tmp/"), key
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"  # nothing tries to write __pycache__ on a read-only root
    runs = " ".join(args for word, args in final_stage() if word == "RUN")
    assert "import regorus" in runs and "--no-index" in runs


def test_the_image_builds_and_checks_the_native_yaml_reader() -> None:
    """The extension is optional for pip (a machine without a compiler still installs): the image must not
    silently go without it, so the build stage has the compiler and headers, and the final stage the library
    and an import that fails the build."""
    steps = instructions(DOCKERFILE.read_text())
    build = " ".join(args for word, args in steps[: len(steps) - len(final_stage())] if word == "RUN")
    assert "libyaml-dev" in build and "gcc" in build
    runs = " ".join(args for word, args in final_stage() if word == "RUN")
    assert "libyaml-0-2" in runs and "reconciler.yamlio._native_reader" in runs


def test_the_built_package_ships_the_pack_and_its_data() -> None:
    """What the Dockerfile copies into the build stage is what setuptools packages (pyproject package-data)."""
    copied = {
        args.split()[0]
        for word, args in instructions(DOCKERFILE.read_text())
        if word == "COPY" and "--from" not in args
    }
    assert {"reconciler", "policies", "pyproject.toml"} <= copied
    config = (ROOT / "pyproject.toml").read_text()
    assert '"**/*.json"' in config and '"**/*.rego"' in config


# -- the program on a read-only root -----------------------------------------------------------------


def _read_only_root_supported() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        return False
    probe = subprocess.run(
        [
            unshare,
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            "mount --bind / / && mount -o remount,bind,ro / && ! touch /.kai-gitops-probe",
        ],
        capture_output=True,
        timeout=30,
    )
    return probe.returncode == 0


_NOT_OURS = {".venv", ".git", ".cache", "__pycache__"}  # the test run's own churn, not the program's


def _tree(path: Path) -> dict[str, tuple[int, float]]:
    tree = {}
    for p in path.rglob("*"):
        if _NOT_OURS.isdisjoint(p.parts):
            with contextlib.suppress(FileNotFoundError):  # another test's temporary file, gone meanwhile
                stat = p.stat()
                tree[str(p)] = (stat.st_size, stat.st_mtime)
    return tree


def test_commands_write_nothing_outside_the_cache_and_tmp(tmp_path: Path) -> None:
    demo = load_demo_builder()
    work = tmp_path / "work"
    demo.build_repo(work)
    remote = make_bare_remote(tmp_path, work)
    home, cwd, cache, tmp = (tmp_path / n for n in ("home", "cwd", "cache", "tmp"))
    for d in (home, cwd, cache, tmp):
        d.mkdir()
    home.chmod(0o555)
    cwd.chmod(0o555)
    exe = str(Path(sys.executable).with_name("kai-gitops"))
    commands = [
        [exe, "check", "--repo", f"file://{remote}"],  # clones into the cache
        [exe, "diff", "--repo", f"file://{remote}", "--cluster", "prod-addon", "--snapshot", str(SNAPSHOT)],
        [exe, "policy", "test"],
        [exe, "policy", "bundle", "-o", str(tmp / "bundle.tar.gz")],
    ]
    script = " ; ".join(f"{shlex.join(c)} >/dev/null 2>>{tmp}/stderr; echo rc=$?" for c in commands)
    script += f" ; find {cache} -maxdepth 2 | sort ; cat {tmp}/stderr"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "KAI_GITOPS_CACHE": str(cache),
        "TMPDIR": str(tmp),
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }
    if _read_only_root_supported():
        script = (
            f"mount --bind / / && mount -o remount,bind,ro / && mount -t tmpfs tmpfs {cache} && "
            f"mount -t tmpfs tmpfs {tmp} && {{ {script} ; }}"
        )
        argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", script]
    else:
        argv = ["sh", "-c", script]
    before = {p: _tree(p) for p in (home, cwd, ROOT)}
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    codes = [line for line in lines if line.startswith("rc=")]
    assert codes == ["rc=2", "rc=2", "rc=0", "rc=0"], result.stdout  # demo findings, findings, tests pass, written
    assert f"{cache}/repos" in lines, result.stdout  # the clone went to the cache
    assert "Read-only file system" not in result.stdout and "Permission denied" not in result.stdout
    assert {p: _tree(p) for p in (home, cwd, ROOT)} == before


def test_an_unwritable_cache_is_one_clear_error(tmp_path: Path) -> None:
    from tests.support.helpers import assert_one_line_error, run_cli

    demo = load_demo_builder()
    demo.build_repo(tmp_path / "work")
    remote = make_bare_remote(tmp_path, tmp_path / "work")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")  # a file where the cache directory should be: mkdir fails, even for root
    assert_one_line_error(
        *run_cli(["check", "--repo", f"file://{remote}"], env={"KAI_GITOPS_CACHE": str(blocker)}),
        "cannot write the clone cache",
        "$KAI_GITOPS_CACHE",
    )


def test_cronjob_mounts_what_the_image_writes(tmp_path: Path) -> None:
    """The image's defaults (/tmp) and the CronJob's overrides must both land on an emptyDir."""
    pod = pod_spec(rendered(tmp_path, "report-only"))
    container = pod["containers"][0]
    mounts = [m["mountPath"] for m in container["volumeMounts"]]
    assert "/tmp" in mounts
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert any(env["KAI_GITOPS_CACHE"] == m or env["KAI_GITOPS_CACHE"].startswith(m + "/") for m in mounts)
    assert yaml.safe_dump(pod)  # rendered cleanly


def test_the_image_is_one_documented_setting_with_a_build_and_push_recipe() -> None:
    """docs/deployment.md#the-image: build and push $IMAGE, then the overlay's `images:` entry for the short name
    the CronJob uses points at it; the Dockerfile names no one's registry or repository."""
    page = (ROOT / "docs" / "deployment.md").read_text()
    section = page.split("## The image\n", 1)[1].split("\n## ", 1)[0]
    shell, kustomize = (block.split("\n", 1)[1] for block in section.split("```")[1::2])
    image = next(line.split("=", 1)[1].strip('"') for line in shell.splitlines() if line.startswith("IMAGE="))
    assert '-t "$IMAGE"' in shell and 'docker push "$IMAGE"' in shell
    (entry,) = yaml.safe_load(kustomize)["images"]
    cronjob_yaml = yaml.safe_load((ROOT / "deploy" / "base" / "cronjob.yaml").read_text())
    (container,) = [
        c
        for c in cronjob_yaml["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
        if c["name"] == "kai-gitops"
    ]
    assert entry["name"] == container["image"] == "kai-gitops"  # a short name `images:` can match
    assert f"{entry['newName']}:{entry['newTag']}" == image
    assert "example-org" not in DOCKERFILE.read_text()


# Registries, hosts and organisations that look real but are no one's: a user who copies them gets a pull or clone
# error far from the line to edit. What the user must fill in is a <placeholder>, explained where it stands.
_FAKE_NAMES = re.compile(r"example-org|example-team|registry\.example|git\.example\.com")


def _copied_files() -> list[Path]:
    trees = [
        ROOT / "deploy",
        ROOT / "repo-templates" / "ci",
        ROOT / "repo-templates" / "gitops-repo",
        ROOT / "reconciler" / "data" / "init",
    ]
    return [
        DOCKERFILE,
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *(f for tree in trees for f in sorted(tree.rglob("*")) if f.is_file()),
    ]


def test_nothing_a_user_copies_names_a_made_up_registry_or_organisation() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _copied_files()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if _FAKE_NAMES.search(line)
    ]
    assert not found, "\n".join(found)
    page = (ROOT / "docs" / "deployment.md").read_text()
    assert "with `<your-registry>` replaced by your registry" in page
    prod = (ROOT / "repo-templates" / "gitops-repo" / "environments" / "prod.yaml").read_text()
    assert "replace <ngc-org>/<ngc-team> with your NGC org and team" in prod
    assert yaml.safe_load(prod)["global"]["image"]["repository"] == "<ngc-org>/<ngc-team>"
