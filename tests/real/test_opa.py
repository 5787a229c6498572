"""The policy pack and the OPA adapter against the real OPA (tools/opa), run as a user runs them.

* ``opa test`` passes the shipped pack with the data mounted where ``kai-gitops policy test`` mounts it
  (the pack's data files merged at the data root), and runs the same tests; ``opa check --strict`` accepts it.
* A bundle from ``kai-gitops policy bundle`` served by ``opa run --server --bundle`` gives ``check`` and ``diff``
  with ``--opa-preloaded`` exactly the embedded engine's JSON report (the report names no engine, so the
  whole report is compared).
* Upload mode against a locked-down server (HTTPS with the run's CA, bearer token, an administrative policy):
  the product's requests (policy PUTs, data PUTs, the policy listing, stale DELETEs, the one data query) are
  each answered directly, without a redirect, and evaluate as the embedded engine does.

tests/policy/test_opa.py keeps the stand-in (tests/support/opa_standin.py) for faults.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from reconciler.checks.policy import load_policy_set, make_engine
from reconciler.checks.policy.opa_engine import POLICY_ID_PREFIX
from reconciler.checks.policy.pack import shipped_data_files, shipped_policy_dir
from reconciler.core.errors import UserError
from tests.support.envtest import Pki
from tests.support.envtest._pki import generate
from tests.support.helpers import timeless
from tests.support.opa_server import OpaServer
from tests.support.policy_bundle import build_policy_repo
from tests.support.policy_rules import TRIGGERS
from tests.support.policy_shared import EXAMPLES, USER_RULE, example
from tests.support.tools import require_tool

TOKEN = "opa-s3cret-token"
KAI_GITOPS = Path(sys.executable).parent / "kai-gitops"
SNAPSHOT = Path(__file__).resolve().parents[2] / "repo-templates" / "demo" / "snapshots" / "prod-addon.yaml"
# A rule regorus compiles (it type-checks nothing) and OPA refuses on upload: count() of a number.
TYPE_ERROR_RULE = """package kai_gitops.rules.user.acme.typed

meta := {
	"id": "ACME-T-001", "title": "t", "severity": "info", "scope": "live",
	"rationale": "r", "remediation": "m", "source": "s",
}

violations contains v if {
	count(7) > 0
	v := {"message": "m", "subject": null, "doc": null, "path": null, "fix": null}
}
"""


def kai_gitops(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed CLI in a process of its own, as a user or a CronJob runs it."""
    return subprocess.run(
        [str(KAI_GITOPS), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "KAI_GITOPS_LOG_FORMAT": "text", **(env or {})},
    )


def report(*args: object, env: dict[str, str] | None = None) -> dict[str, object]:
    """The JSON report of a run, without when it ran (runs are compared with each other)."""
    done = kai_gitops(*args, "-o", "json", env=env)
    assert done.returncode == 2, done.stderr  # the demo has findings
    found: dict[str, object] = timeless(json.loads(done.stdout))
    return found


def pack_rego_files() -> list[Path]:
    return sorted(shipped_policy_dir().rglob("*.rego"))


# -- opa test, opa check ----------------------------------------------------------------------------


def opa_test(*files: Path) -> tuple[int, list[dict[str, object]]]:
    done = subprocess.run(
        [str(require_tool("opa")), "test", "--format=json", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, json.loads(done.stdout)


def test_opa_test_passes_the_pack_with_the_data_mounted_as_policy_test_mounts_it() -> None:
    # kai-gitops policy test merges the pack's data files at the data root (testing.run_policy_tests); a data
    # file named on opa's command line is mounted at the root too.
    code, results = opa_test(*pack_rego_files(), *shipped_data_files())
    failed = [r for r in results if r.get("fail") or r.get("error")]
    assert code == 0 and not failed, failed

    done = kai_gitops("policy", "test", "--verbose")
    assert done.returncode == 0, done.stderr
    ours = {line.split(": ", 1)[1] for line in done.stdout.splitlines() if line.startswith("PASS ")}
    assert {f"{r['package']}.{r['name']}" for r in results} == ours
    assert done.stdout.splitlines()[-1] == f"{len(ours)} passed, 0 failed"

    code, bare = opa_test(*pack_rego_files())  # the mount is what the gate tests read
    assert code != 0 and any(r.get("fail") for r in bare)


def test_opa_check_strict_accepts_the_pack() -> None:
    done = subprocess.run(
        [str(require_tool("opa")), "check", "--strict", *map(str, pack_rego_files())],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# -- a served bundle --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_policy_repo(tmp_path_factory.mktemp("opa") / "gitops")


@pytest.fixture(scope="module")
def embedded(repo: Path) -> dict[str, dict[str, object]]:
    """The embedded engine's reports, the reference every OPA run must match."""
    return {
        "diff": report("diff", "--repo", repo, "--cluster", "prod-addon", "--snapshot", SNAPSHOT),
        "check": report("check", "--repo", repo),
    }


def bundle_of(repo: Path, out: Path) -> Path:
    done = kai_gitops("policy", "bundle", "--repo", repo, "-o", out)
    assert done.returncode == 0, done.stderr
    return out


def test_a_served_bundle_gives_check_and_diff_the_embedded_engines_reports(
    repo: Path, embedded: dict[str, dict[str, object]], tmp_path: Path
) -> None:
    require_tool("opa")
    with OpaServer(bundle=bundle_of(repo, tmp_path / "bundle.tar.gz")) as opa:
        served = {
            "diff": report(
                "diff",
                "--repo",
                repo,
                "--cluster",
                "prod-addon",
                "--snapshot",
                SNAPSHOT,
                "--opa-url",
                opa.url,
                "--opa-preloaded",
            ),
            "check": report("check", "--repo", repo, "--opa-url", opa.url, "--opa-preloaded"),
        }
        requests_sent = opa.requests()
    assert served == embedded
    rules = {f["rule"] for f in embedded["diff"]["findings"]}  # type: ignore[union-attr,index]
    assert {"ACME-B-001", "NVCA-H-002", "KAI-D-002"} <= rules  # a user rule with data, a pack rule, drift
    assert {m for m, _, _ in requests_sent} == {"POST"}  # nothing uploaded, only queries
    assert all(status == 200 for _, _, status in requests_sent), requests_sent


def test_a_served_bundle_without_the_pack_data_is_one_error(repo: Path, tmp_path: Path) -> None:
    """What `opa run --bundle policies/` gives: the Rego but not the data (the real server answers the data
    read with no `result`)."""
    import io
    import tarfile

    source = bundle_of(repo, tmp_path / "full.tar.gz")
    trimmed = tmp_path / "trimmed.tar.gz"
    with tarfile.open(source) as full, tarfile.open(trimmed, "w:gz") as out:
        for member in full:
            if member.name != "nvca/data.json":
                out.addfile(member, io.BytesIO(full.extractfile(member).read()))  # type: ignore[union-attr]
    with OpaServer(bundle=trimmed) as opa:
        done = kai_gitops(
            "diff",
            "--repo",
            repo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            SNAPSHOT,
            "--opa-url",
            opa.url,
            "--opa-preloaded",
        )
    assert done.returncode == 1
    assert done.stderr.startswith(f"kai-gitops: error: OPA at {opa.url} holds no data.nvca"), done.stderr


# -- upload mode, HTTPS and a bearer token ----------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return generate(tmp_path_factory.mktemp("opa-pki"))


@pytest.fixture(scope="module")
def another_ca(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """$REQUESTS_CA_BUNDLE in the tests' runs: many images set it, and requests let it override --opa-ca."""
    return generate(tmp_path_factory.mktemp("other-pki")).ca_cert


@pytest.fixture(scope="module")
def secured(pki: Pki) -> Iterator[OpaServer]:
    """One locked-down server for the module: the first upload of the pack costs OPA several seconds
    (it compiles every module again on each PUT); later uploads of unchanged modules are quick."""
    require_tool("opa")
    with OpaServer(token=TOKEN, tls=pki) as opa:
        yield opa


def opa_api(server: OpaServer, pki: Pki, method: str, path: str, body: str | None = None) -> requests.Response:
    return requests.request(
        method,
        f"{server.url}/v1/{path}",
        data=body,
        verify=str(pki.ca_cert),
        timeout=30,
        headers={"Authorization": f"Bearer {TOKEN}"},
    )


def policy_ids(server: OpaServer, pki: Pki) -> set[str]:
    answer = opa_api(server, pki, "GET", "policies")
    answer.raise_for_status()
    return {p["id"] for p in answer.json()["result"]}


def test_upload_mode_over_https_with_a_token_gives_the_embedded_report(
    repo: Path, embedded: dict[str, dict[str, object]], secured: OpaServer, pki: Pki, another_ca: Path
) -> None:
    mark = len(secured.requests())
    uploaded = report(
        "diff",
        "--repo",
        repo,
        "--cluster",
        "prod-addon",
        "--snapshot",
        SNAPSHOT,
        "--opa-url",
        secured.url,
        "--opa-ca",
        pki.ca_cert,
        env={"KAI_GITOPS_OPA_TOKEN": TOKEN, "REQUESTS_CA_BUNDLE": str(another_ca)},
    )
    assert uploaded == embedded["diff"]
    sent = secured.requests()[mark:]
    shapes = {(method, path.split("/")[2]) for method, path, _ in sent}
    assert {("PUT", "policies"), ("PUT", "data"), ("GET", "policies"), ("POST", "data")} <= shapes
    assert ("PUT", "/v1/data/user", 204) in sent and ("POST", "/v1/data/kai_gitops/rules", 200) in sent
    redirected = [r for r in sent if 300 <= r[2] < 400]
    assert not redirected, f"answered with a redirect (which drops an --opa-url path prefix): {redirected}"
    refused = [r for r in sent if r[2] >= 400 and not (r[0] == "PUT" and r[2] == 400)]  # 400: upload order
    assert not refused, refused


def test_user_policies_from_any_directory_evaluate_as_embedded(secured: OpaServer, pki: Pki, tmp_path: Path) -> None:
    """Policy files named by an absolute path: their ids must be ids OPA keeps as sent."""
    (tmp_path / "acme" / "queues").mkdir(parents=True)
    (tmp_path / "acme" / "queues" / "names.rego").write_text(USER_RULE)
    policy_set = load_policy_set([tmp_path / "acme"])
    mark = len(secured.requests())
    remote = make_engine(policy_set, opa_url=secured.url, opa_token=TOKEN, opa_ca=pki.ca_cert)
    local = make_engine(policy_set)
    for name in sorted(p.name for p in EXAMPLES.glob("facts-*.json")):
        assert remote.evaluate(example(name)) == local.evaluate(example(name)), name
    for rule_id, facts in sorted(TRIGGERS.items()):
        assert remote.evaluate(copy.deepcopy(facts)) == local.evaluate(copy.deepcopy(facts)), rule_id
    facts = example("facts-live.json")
    facts["live"]["queues"].append(
        {
            "name": "research",
            "parent": None,
            "has_resources": True,
            "resources": facts["live"]["queues"][0]["resources"],
        }
    )
    assert any(r.rule.id == "ACME-Q-001" for r in remote.evaluate(facts))
    sent = secured.requests()[mark:]
    uploaded = {path for method, path, _ in sent if method == "PUT" and path.startswith("/v1/policies/")}
    assert uploaded and not uploaded & {path for method, path, _ in sent if method == "DELETE"}  # not "stale"
    assert not [r for r in sent if 300 <= r[2] < 400]


def test_stale_ids_of_ours_are_deleted_and_other_policies_kept(secured: OpaServer, pki: Pki) -> None:
    stale, foreign = POLICY_ID_PREFIX + "policies/old.rego", "someone-else/x.rego"
    for policy_id, package in ((stale, "kai_gitops.rules.old"), (foreign, "other")):
        opa_api(secured, pki, "PUT", f"policies/{policy_id}", f"package {package}\n").raise_for_status()
    shipped = load_policy_set()
    make_engine(shipped, opa_url=secured.url, opa_token=TOKEN, opa_ca=pki.ca_cert)
    ids = policy_ids(secured, pki)
    assert stale not in ids and foreign in ids
    assert {POLICY_ID_PREFIX + f.name for f in shipped.files} <= ids
    opa_api(secured, pki, "DELETE", f"policies/{foreign}").raise_for_status()


def test_a_wrong_or_missing_token_is_refused_in_one_line(repo: Path, secured: OpaServer, pki: Pki) -> None:
    for env in ({"KAI_GITOPS_OPA_TOKEN": "wrong"}, {}):
        done = kai_gitops(
            "diff",
            "--repo",
            repo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            SNAPSHOT,
            "--opa-url",
            secured.url,
            "--opa-ca",
            pki.ca_cert,
            env=env,
        )
        assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
        assert f"OPA at {secured.url} refused the request" in done.stderr and "--opa-token" in done.stderr


def test_an_unknown_certificate_authority_is_one_line_naming_opa_ca(
    repo: Path, secured: OpaServer, another_ca: Path
) -> None:
    done = kai_gitops(
        "diff",
        "--repo",
        repo,
        "--cluster",
        "prod-addon",
        "--snapshot",
        SNAPSHOT,
        "--opa-url",
        secured.url,
        env={"KAI_GITOPS_OPA_TOKEN": TOKEN, "REQUESTS_CA_BUNDLE": str(another_ca)},
    )
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
    assert f"TLS verification of OPA at {secured.url} failed" in done.stderr and "--opa-ca" in done.stderr


def test_a_module_opa_refuses_is_named_by_its_local_file(secured: OpaServer, pki: Pki, tmp_path: Path) -> None:
    """OPA type-checks on upload (regorus does not): the refusal names the user's file and line."""
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "typed.rego").write_text(TYPE_ERROR_RULE)
    policy_set = load_policy_set([(tmp_path / "policy", "policy")])
    with pytest.raises(UserError) as err:
        make_engine(policy_set, opa_url=secured.url, opa_token=TOKEN, opa_ca=pki.ca_cert)
    line = err.value.line()
    assert line.startswith("policy/typed.rego:9:"), line
    assert f"(compiled by OPA at {secured.url})" in line and "count" in line
