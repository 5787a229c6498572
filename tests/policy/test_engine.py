"""Loading the pack, engine errors as one-liners, id collisions, scope filtering, facts checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.checks.policy import load_policy_set, make_engine
from reconciler.checks.policy.pack import RULES_PACKAGE
from reconciler.core.errors import UserError
from tests.support.policy_shared import USER_RULE, ZERO, example

ROOT = Path(__file__).resolve().parents[2]


def write(dir_: Path, rel: str, text: str) -> Path:
    path = dir_ / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_shipped_pack_loads_with_metadata(shipped) -> None:
    assert len(shipped.rules) >= 45
    for rule_id, meta in shipped.rules.items():
        assert meta.id == rule_id
        assert meta.severity in ("error", "warning", "info")
        assert meta.scope in ("static", "live")
        assert meta.title and meta.rationale and meta.remediation and meta.source
        assert shipped.file_of(rule_id).startswith("kai-gitops:policies/kai_gitops/rules/")
    assert not any(f.name.endswith("_test.rego") for f in shipped.files)


def test_pack_is_found_through_the_installed_package(shipped) -> None:
    import policies

    pack = Path(policies.__file__).resolve().parent
    assert all(f.path.resolve().is_relative_to(pack) for f in shipped.files)
    assert (pack / "kai_gitops" / "data" / "known_gates.json").is_file()


def test_user_policies_join_the_pack(user_dir: Path) -> None:
    policy_set = load_policy_set([user_dir])
    assert "ACME-Q-001" in policy_set.rules
    assert policy_set.file_of("ACME-Q-001") == f"{user_dir}/queues/names.rego"


SYNTAX_ERROR = 'package kai_gitops.rules.user.broken\n\nmeta := {\n  "id": "X"\n  "title" "t"\n}\n'


def test_syntax_error_is_one_line_with_file_line_col(tmp_path: Path) -> None:
    write(tmp_path, "broken.rego", SYNTAX_ERROR)
    with pytest.raises(UserError) as err:
        load_policy_set([tmp_path])
    line = err.value.line()
    assert line.startswith(f"{tmp_path}/broken.rego:5:")
    assert "\n" not in line and "backtrace" not in line.lower() and "regorus::" not in line


def test_syntax_error_has_no_rust_backtrace_even_with_rust_backtrace_set(tmp_path: Path) -> None:
    write(tmp_path, "broken.rego", SYNTAX_ERROR)
    code = (
        "from pathlib import Path\nfrom reconciler.checks.policy import load_policy_set\n"
        "from reconciler.core.errors import UserError\n"
        f"try:\n    load_policy_set([Path({str(tmp_path)!r})])\nexcept UserError as e:\n    print(e.line())\n"
    )
    env = {**os.environ, "RUST_BACKTRACE": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1, out.stdout
    assert lines[0].startswith(f"{tmp_path}/broken.rego:5:")
    assert "Stack backtrace" not in out.stdout + out.stderr


def test_evaluation_error_names_the_rule_file(tmp_path: Path, shipped) -> None:
    write(
        tmp_path,
        "bad.rego",
        USER_RULE.replace("ACME-Q-001", "ACME-Q-009").replace(
            "some q in input.live.queues", "some q in input.live.queues\n\tcount(q.name, 1) > 0"
        ),
    )
    engine = make_engine(load_policy_set([tmp_path]))
    with pytest.raises(UserError) as err:
        engine.evaluate(example("facts-live.json"))
    assert err.value.line().startswith(f"{tmp_path}/bad.rego:15:")


def test_rule_id_collision_names_both_files(tmp_path: Path, user_dir: Path) -> None:
    write(tmp_path, "other.rego", USER_RULE.replace("acme.queue_names", "acme.other"))
    with pytest.raises(UserError) as err:
        load_policy_set([user_dir, tmp_path])
    line = err.value.line()
    assert "ACME-Q-001" in line and f"{user_dir}/queues/names.rego" in line and f"{tmp_path}/other.rego" in line


def test_user_rule_may_not_reuse_a_shipped_id(tmp_path: Path) -> None:
    write(tmp_path, "copy.rego", USER_RULE.replace("ACME-Q-001", "KAI-Q-001"))
    shipped_file = r"kai-gitops:policies/kai_gitops/rules/queues/kai_q_001"
    with pytest.raises(UserError, match=rf"KAI-Q-001 is defined twice: {shipped_file}"):
        load_policy_set([tmp_path])


def test_same_package_meta_in_two_files_is_a_collision(tmp_path: Path, user_dir: Path) -> None:
    write(tmp_path, "dup.rego", USER_RULE.replace("ACME-Q-001", "ACME-Q-002"))
    with pytest.raises(UserError, match="defines `meta` in two files"):
        load_policy_set([user_dir, tmp_path])


def test_invalid_meta_is_rejected(tmp_path: Path) -> None:
    write(tmp_path, "m.rego", USER_RULE.replace('"severity": "warning"', '"severity": "fatal"'))
    with pytest.raises(UserError, match="severity 'fatal'"):
        load_policy_set([tmp_path])


def test_violations_without_meta_are_rejected(tmp_path: Path) -> None:
    write(tmp_path, "v.rego", f"package {RULES_PACKAGE}.user.x\n\nviolations contains 1 if true\n")
    with pytest.raises(UserError, match="defines `violations` but no `meta`"):
        load_policy_set([tmp_path])


def test_bad_violation_shape_is_a_user_error(tmp_path: Path) -> None:
    write(tmp_path, "s.rego", USER_RULE.replace('"message": sprintf', '"msg": sprintf'))
    engine = make_engine(load_policy_set([tmp_path]))
    facts = example("facts-live.json")
    facts["live"]["queues"].append({"name": "research", "parent": None, "has_resources": True, "resources": ZERO})
    with pytest.raises(UserError, match="ACME-Q-001: a violation must be an object with a string `message`"):
        engine.evaluate(facts)


def test_data_file_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = write(tmp_path, "gates.json", '{"nvca": {\n  "feature_gates": [1,\n}')
    with pytest.raises(UserError) as err:
        load_policy_set(data_files=[bad])
    assert err.value.line().startswith(f"{bad}:3:")


def test_user_data_file_can_extend_known_gates(tmp_path: Path) -> None:
    extra = write(tmp_path, "more.json", '{"acme": {"extra_gates": ["GPUSharing"]}}')
    assert load_policy_set(data_files=[extra]).data["acme"] == {"extra_gates": ["GPUSharing"]}


def test_conflicting_data_files_are_rejected(tmp_path: Path) -> None:
    extra = write(tmp_path, "gates.json", '{"nvca": {"feature_gates": {"known": ["Only"]}}}')
    with pytest.raises(UserError, match="also set by"):
        load_policy_set(data_files=[extra])


def test_missing_policy_dir_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        load_policy_set([tmp_path / "nope"])


def test_static_scope_runs_only_static_rules(shipped, user_dir: Path) -> None:
    engine = make_engine(load_policy_set([user_dir]))
    live = example("facts-live.json")
    live["live"]["queues"].append({"name": "research", "parent": None, "has_resources": True, "resources": ZERO})
    static = example("facts-live.json")
    static["scope"] = "static"  # same facts, live section still present: live rules must stay silent
    live_ids = {r.rule.id for r in engine.evaluate(live)}
    static_results = engine.evaluate(static)
    assert "ACME-Q-001" in live_ids and "NVCA-H-002" in live_ids
    assert static_results == [r for r in static_results if r.rule.scope == "static"]
    assert {r.rule.id for r in static_results}.isdisjoint({"ACME-Q-001", "NVCA-H-002"})


def test_scope_must_be_known(shipped) -> None:
    facts = example("facts-static-addon.json")
    facts["scope"] = "cluster"
    with pytest.raises(UserError, match="scope 'cluster'"):
        make_engine(shipped).evaluate(facts)


def test_facts_shape_breach_is_one_clear_line(shipped) -> None:
    facts = example("facts-live.json")
    facts["live"]["queues"] = None
    with pytest.raises(UserError, match=r"facts document: live.queues must be a list, got NoneType"):
        make_engine(shipped).evaluate(facts)


def test_engine_is_reused_and_results_are_deterministic(shipped) -> None:
    engine = make_engine(shipped)
    first = engine.evaluate(example("facts-live.json"))
    engine.evaluate(example("facts-static-standalone.json"))
    assert engine.evaluate(example("facts-live.json")) == first
    assert first == sorted(first, key=lambda r: r.sort_key())


def test_incomplete_live_queue_numbers_are_a_contract_breach(shipped) -> None:
    facts = example("facts-live.json")
    del facts["live"]["queues"][2]["resources"]["gpu"]["quota"]
    with pytest.raises(UserError, match=r"live.queues\[2\] needs a name and resources"):
        make_engine(shipped).evaluate(facts)


def test_engines_collected_on_another_thread_are_freed_on_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyo3 refuses to drop a regorus Engine on any thread but its maker's ("regoruspy::Engine is unsendable, but
    is being dropped on another thread", an unraisable error `make test` printed). The cyclic garbage collector
    runs on whichever thread allocates -- in the suite an HTTP stand-in's -- so an engine caught in a reference
    cycle (a traceback's frame holding the policy set) must still be freed on the thread that made it."""
    import gc
    import threading

    unraisable: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(f"{u.exc_type.__name__}: {u.exc_value}"))
    gc.collect()
    gc.disable()  # nothing is collected on this thread before the other one runs
    try:
        policy_set = load_policy_set()
        engine = make_engine(policy_set)
        engine.evaluate(example("facts-live.json"))  # a warm clone kept by the engine, beside the compiled pack
        cycle: list[object] = [policy_set, engine]
        cycle.append(cycle)
        del policy_set, engine, cycle
        collector = threading.Thread(target=gc.collect)
        collector.start()
        collector.join()
        assert unraisable == []
        from reconciler.checks.policy import owned

        assert owned.parked() == 2  # the compiled pack and the warm clone, kept for this thread
        load_policy_set()  # making an engine frees this thread's parked ones
        assert owned.parked() == 0 and unraisable == []
    finally:
        gc.enable()
