"""`kai-gitops policy bundle`: an OPA bundle of the pack plus the repo's policies and data.

Loaded into the OPA stand-in (tests/support/opa_standin.py, which models how `opa run --bundle` mounts
a bundle; it is not OPA), a `--opa-preloaded` run must give exactly the embedded engine's findings; a
bundle without the pack's data must be one error, not a flood of NVCA-G-004 findings.
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from reconciler.checks.policy.pack import shipped_data_files
from tests.support.helpers import assert_one_line_error, commit_files, run_cli, timeless
from tests.support.opa_standin import OpaStandin
from tests.support.policy_bundle import build_policy_repo

DEMO = Path(__file__).resolve().parents[2] / "repo-templates" / "demo"
SNAPSHOT = DEMO / "snapshots" / "prod-addon.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return build_policy_repo(tmp_path / "gitops")


@pytest.fixture
def standin() -> Iterator[OpaStandin]:
    server = OpaStandin().start()
    try:
        yield server
    finally:
        server.stop()


def bundle(repo: Path | None, out: Path) -> bytes:
    code, _, err = run_cli(["policy", "bundle", "-o", out, *(["--repo", repo] if repo else [])])
    assert code == 0, err
    assert err.startswith(f"kai-gitops: wrote {out}: ") and err.count("\n") == 1
    return out.read_bytes()


def members(archive: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar}  # type: ignore[union-attr]


def pack(files: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, body in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return raw.getvalue()


def test_layout_manifest_and_data_where_the_rules_read_it(repo: Path, tmp_path: Path) -> None:
    files = members(bundle(repo, tmp_path / "bundle.tar.gz"))
    manifest = json.loads(files[".manifest"])
    assert manifest["roots"] == ["kai_gitops", "nvca", "user"]
    assert manifest["rego_version"] == 1
    commit = manifest["metadata"]["kai-gitops"]["commit"]
    assert len(commit) == 40 and commit[:12] in manifest["revision"]
    # data.nvca.feature_gates is read by NVCA-G-004 and friends: it must be nvca/data.json, not a file name OPA skips
    shipped = json.loads(shipped_data_files()[0].read_text())
    assert json.loads(files["nvca/data.json"]) == shipped["nvca"]
    assert json.loads(files["user/data.json"]) == {"budget": {"max_queues": 1}}
    rego = sorted(n for n in files if n.endswith(".rego"))
    assert "repo/policy/acme/names.rego" in rego and "policies/kai_gitops/lib/util.rego" in rego
    assert not [n for n in rego if n.endswith("_test.rego")]  # the pack's unit tests stay out
    assert set(files) == {".manifest", "nvca/data.json", "user/data.json", *rego}


def test_bundle_is_reproducible_and_its_revision_follows_the_content(repo: Path, tmp_path: Path) -> None:
    first = bundle(repo, tmp_path / "a.tar.gz")
    assert bundle(repo, tmp_path / "b.tar.gz") == first
    shipped_only = json.loads(members(bundle(None, tmp_path / "c.tar.gz"))[".manifest"])
    assert shipped_only["roots"] == ["kai_gitops", "nvca"]
    assert shipped_only["revision"] != json.loads(members(first)[".manifest"])["revision"]


def diff_findings(repo: Path, *opa: str) -> list[dict[str, object]]:
    code, out, err = run_cli(
        ["diff", "--repo", repo, "--cluster", "prod-addon", "--snapshot", SNAPSHOT, "-o", "json", *opa]
    )
    assert code == 2, err
    return timeless(orjson.loads(out)["findings"])


def test_served_bundle_gives_the_embedded_engines_findings(repo: Path, tmp_path: Path, standin: OpaStandin) -> None:
    standin.load_bundle(bundle(repo, tmp_path / "bundle.tar.gz"))
    served = diff_findings(repo, "--opa-url", standin.url, "--opa-preloaded")
    assert ("PUT", "/v1/policies") not in {(m, p[:12]) for m, p in standin.requests}  # nothing uploaded
    embedded = diff_findings(repo)
    assert served == embedded
    rules = {f["rule"] for f in embedded}
    assert {"ACME-B-001", "NVCA-H-002", "KAI-D-002"} <= rules  # user rule with data, pack rule, drift


def test_bundle_without_the_pack_data_is_one_error(repo: Path, tmp_path: Path, standin: OpaStandin) -> None:
    """What `opa run -b policies/` gives: the Rego but not known_gates.json (a file name OPA does not load)."""
    files = members(bundle(repo, tmp_path / "bundle.tar.gz"))
    del files["nvca/data.json"]
    standin.load_bundle(pack(files))
    code, out, err = run_cli(
        [
            "diff",
            "--repo",
            repo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            SNAPSHOT,
            "--opa-url",
            standin.url,
            "--opa-preloaded",
        ]
    )
    assert_one_line_error(code, out, err, f"OPA at {standin.url} holds no data.nvca", "kai-gitops policy bundle")


def test_stand_in_enforces_the_manifest_roots(repo: Path, tmp_path: Path, standin: OpaStandin) -> None:
    """The roots check is what makes the layout test above meaningful against a real OPA."""
    files = members(bundle(repo, tmp_path / "bundle.tar.gz"))
    manifest = json.loads(files[".manifest"])
    manifest["roots"] = ["kai_gitops"]
    files[".manifest"] = json.dumps(manifest).encode()
    with pytest.raises(ValueError, match="do not permit data"):
        standin.load_bundle(pack(files))


def test_bad_targets_and_broken_user_policy_write_nothing(repo: Path, tmp_path: Path) -> None:
    assert_one_line_error(*run_cli(["policy", "bundle", "-o", tmp_path / "bundle.zip"]), "is a .tar.gz file")
    assert_one_line_error(
        *run_cli(["policy", "bundle", "-o", tmp_path / "nope" / "b.tar.gz"]), "output directory does not exist"
    )
    commit_files(repo, {"policy/acme/broken.rego": "package kai_gitops.rules.user.broken\n\nmeta := {\n"})
    out = tmp_path / "bundle.tar.gz"
    assert_one_line_error(*run_cli(["policy", "bundle", "--repo", repo, "-o", out]), "policy/acme/broken.rego:")
    assert not out.exists() and list(tmp_path.glob(".bundle*")) == []
