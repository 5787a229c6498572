"""The OPA adapter against the local stand-in server (tests/support/opa_standin.py): parity and faults."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.checks.policy import load_policy_set, make_engine
from reconciler.checks.policy.opa_engine import POLICY_ID_PREFIX
from reconciler.core.errors import UserError
from tests.support.policy_rules import TRIGGERS
from tests.support.policy_shared import EXAMPLES, ZERO, example

TOKEN = "s3cret"


def opa(policy_set, standin, **kwargs):
    return make_engine(policy_set, opa_url=standin.url, opa_token=TOKEN, **kwargs)


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("facts-*.json")))
def test_same_results_as_regorus_on_examples(shipped, standin, name: str) -> None:
    facts = example(name)
    assert opa(shipped, standin).evaluate(facts) == make_engine(shipped).evaluate(facts)


def test_same_results_for_every_rule_trigger_and_user_policies(standin, user_dir: Path) -> None:
    policy_set = load_policy_set([user_dir])
    remote, local = opa(policy_set, standin), make_engine(policy_set)
    for facts in TRIGGERS.values():
        assert remote.evaluate(facts) == local.evaluate(facts)
    facts = example("facts-live.json")
    facts["live"]["queues"].append({"name": "research", "parent": None, "has_resources": True, "resources": ZERO})
    assert any(r.rule.id == "ACME-Q-001" for r in remote.evaluate(facts))


def test_one_query_per_evaluation(shipped, standin) -> None:
    engine = opa(shipped, standin)
    before = len(standin.requests)
    engine.evaluate(example("facts-live.json"))
    assert standin.requests[before:] == [("POST", "/v1/data/kai_gitops/rules")]


def test_upload_uses_policy_api_and_removes_stale_policies(shipped, standin) -> None:
    standin.policies[POLICY_ID_PREFIX + "policies/old.rego"] = "package kai_gitops.rules.old\n"
    standin.policies["someone-else/x.rego"] = "package other\n"
    opa(shipped, standin)
    assert POLICY_ID_PREFIX + "policies/old.rego" not in standin.policies
    assert "someone-else/x.rego" in standin.policies
    assert {POLICY_ID_PREFIX + f.name for f in shipped.files} <= set(standin.policies)
    assert standin.data["nvca"]["feature_gates"]["known"]


def test_every_request_is_answered_without_a_redirect(standin, user_dir: Path) -> None:
    """A redirect drops an --opa-url path prefix; and a policy uploaded under an unclean id (an absolute file
    name gives kai-gitops//tmp/...) lands under another, which the next listing deletes as stale."""
    engine = opa(load_policy_set([user_dir]), standin)
    facts = example("facts-live.json")
    facts["live"]["queues"].append({"name": "research", "parent": None, "has_resources": True, "resources": ZERO})
    assert any(r.rule.id == "ACME-Q-001" for r in engine.evaluate(facts))
    opa(load_policy_set([user_dir]), standin)  # a second run lists what the first uploaded
    assert standin.redirected == []
    assert not [p for m, p in standin.requests if m == "DELETE"]


def test_preloaded_skips_upload(shipped, standin) -> None:
    opa(shipped, standin)
    count = len(standin.requests)
    engine = opa(shipped, standin, opa_preloaded=True)
    assert len(standin.requests) == count
    assert engine.evaluate(example("facts-live.json")) == make_engine(shipped).evaluate(example("facts-live.json"))


def test_preloaded_but_empty_server_is_one_error_not_silence(shipped, standin) -> None:
    engine = opa(shipped, standin, opa_preloaded=True)
    with pytest.raises(UserError) as err:
        engine.evaluate(example("facts-live.json"))
    line = one_line(err)
    assert (
        line.startswith(f"OPA at {standin.url} holds no data.nvca, which the policies read")
        and "kai-gitops policy bundle" in line
    )


def test_preloaded_without_the_pack_data_is_one_error_not_a_flood(shipped, standin) -> None:
    """`opa run -b policies/` loads the Rego but not known_gates.json: NVCA-G-004 would flag every gate."""
    opa(shipped, standin)
    del standin.data["nvca"]
    engine = opa(shipped, standin, opa_preloaded=True)
    with pytest.raises(UserError) as err:
        engine.evaluate(example("facts-live.json"))
    assert "holds no data.nvca" in one_line(err)
    standin.data["nvca"] = {"feature_gates": {"known": []}}
    with pytest.raises(UserError) as err:
        opa(shipped, standin, opa_preloaded=True).evaluate(example("facts-live.json"))
    assert "holds a data.nvca that differs from this run's policy data" in one_line(err)


def test_preloaded_server_missing_rules_is_one_error(standin, user_dir: Path) -> None:
    opa(load_policy_set(), standin)  # the shipped pack only, without the user's rule
    engine = opa(load_policy_set([user_dir]), standin, opa_preloaded=True)
    with pytest.raises(UserError) as err:
        engine.evaluate(example("facts-live.json"))
    assert "does not serve 1 of this run's" in one_line(err) and "(ACME-Q-001)" in one_line(err)


def test_preloaded_checks_once_then_one_query_per_evaluation(shipped, standin) -> None:
    opa(shipped, standin)
    engine = opa(shipped, standin, opa_preloaded=True)
    engine.evaluate(example("facts-live.json"))
    before = len(standin.requests)
    engine.evaluate(example("facts-live.json"))
    assert standin.requests[before:] == [("POST", "/v1/data/kai_gitops/rules")]


def one_line(err: pytest.ExceptionInfo[UserError]) -> str:
    line = err.value.line()
    assert "\n" not in line and "Traceback" not in line
    return line


def test_server_down(shipped, standin) -> None:
    standin.stop()
    with pytest.raises(UserError) as err:
        opa(shipped, standin)
    line = one_line(err)
    assert line.startswith(f"cannot connect to OPA at {standin.url}") and "--opa-url" in line


def test_server_too_slow(shipped, standin) -> None:
    engine = opa(shipped, standin, opa_timeout=0.3)
    standin.fault, standin.slow_seconds = "slow", 1.5
    with pytest.raises(UserError) as err:
        engine.evaluate(example("facts-live.json"))
    assert f"OPA at {standin.url} did not answer within 0.3s" in one_line(err)


def test_garbage_answer(shipped, standin) -> None:
    engine = opa(shipped, standin)
    standin.fault = "garbage"
    with pytest.raises(UserError) as err:
        engine.evaluate(example("facts-live.json"))
    assert "not OPA JSON" in one_line(err)


def test_http_500(shipped, standin) -> None:
    engine = opa(shipped, standin)
    standin.fault = "500"
    with pytest.raises(UserError) as err:
        engine.evaluate(example("facts-live.json"))
    assert f"OPA at {standin.url} answered HTTP 500 while evaluating policies: storage failure" in one_line(err)


def test_http_500_during_upload(shipped, standin) -> None:
    standin.fault = "500"
    with pytest.raises(UserError) as err:
        opa(shipped, standin)
    assert "storage failure" in one_line(err)


def test_bad_token(shipped, standin) -> None:
    with pytest.raises(UserError) as err:
        make_engine(shipped, opa_url=standin.url, opa_token="wrong")
    assert "--opa-token" in one_line(err)


def test_bad_token_on_query(shipped, standin) -> None:
    engine = make_engine(shipped, opa_url=standin.url, opa_token="wrong", opa_preloaded=True)
    with pytest.raises(UserError) as err:
        engine.evaluate(example("facts-live.json"))
    assert "refused the request (401)" in one_line(err)


def test_compile_error_reported_by_server_names_local_file(tmp_path: Path, shipped, standin) -> None:
    bad = tmp_path / "x.rego"
    bad.write_text("package kai_gitops.rules.user.x\n")
    policy_set = load_policy_set([tmp_path])
    bad.write_text("package kai_gitops.rules.user.x\n\nmeta := {\n")
    files = tuple(f if f.path != bad else type(f)(f.name, f.path, bad.read_text(), f.package) for f in policy_set.files)
    with pytest.raises(UserError) as err:
        opa(type(policy_set)(files, policy_set.data, policy_set.rules, policy_set.rule_files), standin)
    assert one_line(err).startswith(f"{tmp_path}/x.rego:")


def test_bad_url(shipped) -> None:
    with pytest.raises(UserError, match="not an http"):
        make_engine(shipped, opa_url="opa:8181")


def test_ca_file_configures_tls_verification(shipped, tmp_path: Path) -> None:
    from reconciler.checks.policy.opa_engine import make_client

    ca = tmp_path / "ca.pem"
    client = make_client("https://opa.internal:9443/prefix", token=TOKEN, ca=ca, timeout=2)
    assert client._session.verify == str(ca)
    assert client.root_url == "https://opa.internal:9443/prefix/v1"
    assert client._session.headers["Authorization"] == f"Bearer {TOKEN}"
    with pytest.raises(UserError, match="not https"):
        make_client("http://opa:8181", token=None, ca=ca, timeout=2)


def test_upload_retries_modules_refused_for_order(shipped, standin) -> None:
    standin.needs_others = {"lib/nvca.rego"}
    standin.expected = len(shipped.files) - 1  # refused until every other file is there
    engine = opa(shipped, standin)
    puts = [p for m, p in standin.requests if m == "PUT" and p.endswith("lib/nvca.rego")]
    assert len(puts) == 2
    assert engine.evaluate(example("facts-live.json")) == make_engine(shipped).evaluate(example("facts-live.json"))


def test_upload_gives_up_when_nothing_moves(shipped, standin) -> None:
    standin.needs_others = {"lib/"}
    standin.expected = 10_000
    with pytest.raises(UserError) as err:
        opa(shipped, standin)
    assert one_line(err).startswith("kai-gitops:policies/kai_gitops/lib/gates.rego:1:1: undefined function (stand-in)")


def test_an_answer_past_the_cap_is_one_error_naming_server_and_cap(
    shipped, standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted decompressed: the stand-in's gzip answer is a few KB on the wire and 4 MB inflated."""
    monkeypatch.setattr("reconciler.checks.policy.opa_engine.ANSWER_MAX_BYTES", 1024 * 1024, raising=False)
    engine = opa(shipped, standin)
    standin.fault = "bomb"
    with pytest.raises(UserError) as err:
        engine.evaluate(example("facts-live.json"))
    assert one_line(err) == (
        f"OPA at {standin.url} sent an answer larger than 1,048,576 bytes (decompressed) "
        "while evaluating policies (is --opa-url an OPA server, and its policies the ones "
        "this run uploads?)"
    )


def test_an_answer_nested_too_deep_is_one_error_naming_server_and_bound(shipped, standin) -> None:
    """Within the byte cap and what the json module parses, past what the rule tree's walk can recurse."""
    from reconciler.core.capped import MAX_JSON_DEPTH

    engine = opa(shipped, standin)
    standin.fault = "deep"
    with pytest.raises(UserError) as err:
        engine.evaluate(example("facts-live.json"))
    assert one_line(err) == (
        f"OPA at {standin.url} sent an answer nested deeper than {MAX_JSON_DEPTH} levels "
        "while evaluating policies (is --opa-url an OPA server, and its policies the ones "
        "this run uploads?)"
    )


def test_an_answer_under_the_cap_arrives_whole_compressed_or_not(
    shipped, standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = opa(shipped, standin)
    standin.fault, standin.bomb_bytes = "bomb", 100_000
    assert engine._query({}, "x", "reading")["result"] == " " * 100_000


def test_the_cap_names_the_url_without_its_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the CLI, with user:password in --opa-url: one line, the URL redacted, the cap named."""
    from tests.support.helpers import load_demo_builder, run_cli
    from tests.support.opa_standin import OpaStandin

    monkeypatch.setattr("reconciler.checks.policy.opa_engine.ANSWER_MAX_BYTES", 1024 * 1024, raising=False)
    server = OpaStandin().start()
    server.fault = "bomb"
    try:
        url = server.url.replace("http://", "http://alice:hunter2hunter2@")
        import tempfile

        repo = Path(tempfile.mkdtemp()) / "repo"
        load_demo_builder().build_repo(repo)
        code, out, err = run_cli(["check", "--repo", repo, "--opa-url", url])
        assert code == 1 and err.count("\n") == 1, err
        assert "sent an answer larger than 1,048,576 bytes (decompressed) while uploading" in err, err
        assert "http://<redacted>@127.0.0.1" in err and "hunter2" not in err + out, err
    finally:
        server.stop()
