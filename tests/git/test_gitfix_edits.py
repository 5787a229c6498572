"""Which findings carry Git edits, and that applying them makes the check clean for those rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.app.settings import GitSettings, RunSettings
from reconciler.core.resources import queue_ref
from reconciler.findings.finding import Action, EditOp, Finding, Fix, GitEdit, Kind, Severity
from reconciler.gitfix.plan import fix_branch, plan_fix
from tests.support.helpers import addon_config, desired_for, make_repo, standalone_config

FIXABLE = {"KAI-V-001", "KAI-V-002", "KAI-V-003", "KAI-V-004", "KAI-Q-001", "KAI-Q-002", "NVCA-G-001", "NVCA-G-005"}

PARTIAL_VALUES = """\
# Lab values: only what we changed; the rest comes from the chart.
scheduler:
    placementStrategy: 'spread'   # tried spread for the benchmark
defaultQueue:
    childResources:
        cpu: {quota: 0, limit: -1}
"""
NVCA_VALUES = """\
selfManaged:
  featureGateValues:
    - DynamicGPUDiscovery
    - selfhosted   # lower-case on purpose? no: a typo
"""


def _check(path: Path) -> list[Finding]:
    from reconciler.app import pipeline

    report = pipeline.run_check(RunSettings(GitSettings(str(path))))
    return [f for c in report.clusters for f in c.findings]


def _fix_and_recheck(tmp_path: Path, files: dict[str, str]) -> tuple[dict[str, bytes], list[Finding], list[Finding]]:
    from tests.support.helpers import commit_files

    path, _ = make_repo(tmp_path, files)
    before = _check(path)
    plan = plan_fix(before[0].cluster, before, lambda rel: (path / rel).read_bytes())
    assert not plan.skipped, plan.skipped
    after_files = {c.path: c.after for c in plan.changes}
    commit_files(path, after_files, "apply the fix")
    return after_files, before, _check(path)


def test_partial_standalone_values_are_completed_and_the_check_is_clean(tmp_path: Path) -> None:
    files = {
        "kai-gitops.yaml": standalone_config(nvca="nvca.yaml"),
        "kai-values.yaml": PARTIAL_VALUES,
        "nvca.yaml": NVCA_VALUES,
    }
    after, before, again = _fix_and_recheck(tmp_path, files)
    assert FIXABLE & {f.rule_id for f in before} >= {
        "KAI-V-001",
        "KAI-V-003",
        "KAI-V-004",
        "KAI-Q-001",
        "NVCA-G-001",
        "NVCA-G-005",
    }
    assert not FIXABLE & {f.rule_id for f in again if f.waived_by is None}, [f.rule_id for f in again]
    values = after["kai-values.yaml"].decode()
    # The user's lines stay as written (quote style, comment, 4-space indentation, flow mapping).
    assert values.startswith(
        "# Lab values: only what we changed; the rest comes from the chart.\nscheduler:\n"
        "    placementStrategy: 'binpack'   # tried spread for the benchmark\n"
    )
    assert "        cpu: {quota: -1, limit: -1, overQuotaWeight: 1}\n" in values
    nvca = after["nvca.yaml"].decode()
    assert nvca == (
        "selfManaged:\n  featureGateValues:\n    - DynamicGPUDiscovery\n"
        "    - SelfHosted   # lower-case on purpose? no: a typo\n    - KAIScheduler\n"
    )


def test_env_file_gate_typo_is_respelled_in_place(tmp_path: Path) -> None:
    env = (
        'global:\n  nvcaOperator:\n    selfManaged:\n      featureGateValues: "SelfHosted,logposting"\n'
        "addons:\n  kaiScheduler:\n    enabled: true\n"
    )
    after, before, again = _fix_and_recheck(tmp_path, {"kai-gitops.yaml": addon_config(), "env.yaml": env})
    assert "NVCA-G-005" in {f.rule_id for f in before}
    assert after["env.yaml"].decode() == env.replace("logposting", "LogPosting")
    assert "NVCA-G-005" not in {f.rule_id for f in again}


@pytest.mark.parametrize(
    ("gates", "fixed"),
    [
        ('"SelfHosted,-KaiScheduler"', '"SelfHosted"'),
        ('["SelfHosted", "-KaiScheduler"]', '["SelfHosted"]'),
        ("\n        - -KaiScheduler   # off, we thought\n        - SelfHosted", None),
    ],
)
def test_an_addon_gates_disabling_typo_is_removed_never_respelled_off(
    tmp_path: Path, gates: str, fixed: str | None
) -> None:
    """`-KaiScheduler` in add-on mode: the stack turns KAIScheduler on for the add-on, which needs it, so the fix
    drops the item; `-KAIScheduler` would stop NVCA from using the KAI the stack installs (NVCA-G-002)."""
    env = (
        f"global:\n  nvcaOperator:\n    selfManaged:\n      featureGateValues: {gates}\n"
        "addons:\n  kaiScheduler:\n    enabled: true\n"
    )
    after, before, again = _fix_and_recheck(tmp_path, {"kai-gitops.yaml": addon_config(), "env.yaml": env})
    assert "NVCA-G-005" in {f.rule_id for f in before}
    text = after["env.yaml"].decode()
    assert "KAIScheduler" not in text and "KaiScheduler" not in text, text
    if fixed is not None:
        assert f"featureGateValues: {fixed}\n" in text, text
    assert not {"NVCA-G-002", "NVCA-G-004", "NVCA-G-005"} & {f.rule_id for f in again}


def test_queue_file_queue_used_by_nvcf_is_made_unlimited(tmp_path: Path) -> None:
    unlimited = "{quota: -1, limit: -1, overQuotaWeight: 1}"
    head = (
        "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: {}\nspec:\n"
        "  parentQueue: default-parent-queue\n  resources:\n"
    )
    queues = (
        head.format("team-a") + "    cpu: {quota: 10, limit: 20, overQuotaWeight: 1}\n"
        f"    gpu: {{quota: 1, limit: 2, overQuotaWeight: 1}}\n    memory: {unlimited}\n"
        + head.format("nvcf")
        + "    cpu: {quota: 0, limit: -1, overQuotaWeight: 1}\n"
        f"    gpu: {unlimited}\n    memory: {unlimited}\n"
    )
    from tests.support.helpers import CANONICAL_KAI_VALUES

    files = {
        "kai-gitops.yaml": standalone_config(queue_files=["queues.yaml"]),
        "kai-values.yaml": CANONICAL_KAI_VALUES,
        "queues.yaml": queues,
    }
    desired = desired_for(tmp_path, files)
    from reconciler.checks.git_edits import git_edits_for

    finding = Finding(
        "KAI-Q-011",
        Kind.VIOLATION,
        Severity.ERROR,
        "queue nvcf is limited",
        desired.name,
        subject=queue_ref("nvcf"),
        fix=Fix(Action.NONE, "unlimit it"),
    )
    edits = git_edits_for(finding, desired)
    assert edits == (GitEdit("queues.yaml", ("spec", "resources", "cpu", "quota"), -1, doc=1),)
    plan = plan_fix(
        desired.name,
        [Finding(**{**finding.__dict__, "fix": Fix(Action.NONE, "x", git_edits=edits)})],
        lambda rel: queues.encode(),
    )
    [change] = plan.changes
    assert change.after.decode() == queues.replace("cpu: {quota: 0,", "cpu: {quota: -1,")


def test_choices_get_no_edit(tmp_path: Path) -> None:
    env = "addons:\n  kaiScheduler:\n    enabled: true\n  dynamoOperator:\n    enabled: true\n"
    path, _ = make_repo(tmp_path, {"kai-gitops.yaml": addon_config(), "env.yaml": env})
    findings = _check(path)
    assert "KAI-M-004" in {f.rule_id for f in findings}
    assert all(not f.fix.git_edits for f in findings if f.fix and f.rule_id.startswith("KAI-M-"))


def test_branch_name_depends_only_on_the_fixed_findings() -> None:
    assert fix_branch("lab", ["b", "a"]) == fix_branch("lab", ["a", "b", "a"])
    assert fix_branch("lab", ["a"]) != fix_branch("lab", ["a", "b"])
    assert fix_branch("lab", ["a"]).startswith("kai-gitops/fix/lab-") and len(fix_branch("lab", ["a"])) == 27


def test_append_edit_describes_itself() -> None:
    edit = GitEdit("nvca.yaml", ("selfManaged", "featureGateValues"), "KAIScheduler", EditOp.APPEND)
    assert edit.describe() == "nvca.yaml: append to selfManaged.featureGateValues = 'KAIScheduler'"
    assert edit.to_dict()["op"] == "append"


# -- secrets: nothing planted in the values reaches the commit message, the PR body or the dry-run diff ------

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _secret_values() -> object:
    from hypothesis import strategies as st

    word = st.text(_ALNUM, min_size=10, max_size=24).map(lambda s: "Zq" + s)
    return st.one_of(
        word,
        st.builds(lambda s: f"https://admin:{s}@registry.example.com/v2", word),
        st.builds(lambda s: f"--token={s}", word),
        st.builds(lambda s: "K" + (s * 4)[:38] + "9x", word),
    )


def test_property_planted_credentials_never_reach_commit_message_or_body() -> None:
    from hypothesis import assume, given, settings
    from hypothesis import strategies as st

    from reconciler.core.redact import is_secret_key, redact
    from reconciler.findings.finding import Action, Fix
    from reconciler.gitfix.branch import Author
    from reconciler.gitfix.pull_request import FixContext, commit_message, render_fix_body, safe_diff

    keys = st.sampled_from(["password", "token", "apiKey", "clientSecret", "registryAuth", "url", "args"])

    @settings(max_examples=120, deadline=None, derandomize=True)  # the same examples in every CI run
    @given(secret=_secret_values(), key=keys, in_flow=st.booleans())
    def check(secret: str, key: str, in_flow: bool) -> None:
        # A bare word under a key like `url` is no credential anyone can recognise; shapes are caught anywhere.
        assume(is_secret_key(key) or not secret.startswith("Zq"))
        quoted = f'"{secret}"'
        cpu = f"{{quota: 0, {key}: {quoted}, limit: -1}}" if in_flow else "{quota: 0, limit: -1}"
        raw = (
            f"scheduler:\n  {key}: {quoted}\n  placementStrategy: spread\n  registry: {quoted}\n"
            f"defaultQueue:\n  childResources:\n    cpu: {cpu}\n"
        ).encode()
        edits = (
            GitEdit("v.yaml", ("scheduler", "placementStrategy"), "binpack"),
            GitEdit("v.yaml", ("defaultQueue", "childResources", "cpu", "quota"), -1),
        )
        # Rules see the values through the facts' redaction, so that is what a message can quote.
        message = f"{key} is {redact({key: secret})[key]}"
        finding = Finding(
            "KAI-V-001",
            Kind.VIOLATION,
            Severity.WARNING,
            message,
            "lab",
            fix=Fix(Action.NONE, "x", git_edits=edits),
            title="KAI placement strategy is binpack",
        )
        plan = plan_fix("lab", [finding], lambda _rel: raw)
        assert plan.changes
        ctx = FixContext("main", "0" * 40, Author.parse(None))
        texts = [commit_message(plan), render_fix_body(plan, ctx), safe_diff(plan)]
        for text in texts:
            assert secret not in text and secret.removeprefix("--token=") not in text

    check()


def test_git_edits_survive_a_saved_report() -> None:
    """`report merge` reads findings back from JSON: their Git edits must come back exactly (paths as lists)."""
    edit = GitEdit("v.yaml", ("global", "a.b", 0), "x", EditOp.APPEND, doc=2)
    fix = Fix(Action.NONE, "d", git_edits=(edit,))
    assert Fix.from_dict(fix.to_dict()) == fix
    assert Fix.from_dict({"action": "none", "description": "old report"}).git_edits == ()


def test_fix_body_for_more_findings_than_one_body_holds_lists_what_fits() -> None:
    """Dropping the diff is not enough when the findings table alone is over the limit: list fewer, say so."""
    from reconciler.gitfix.branch import Author
    from reconciler.gitfix.plan import FileChange, FixPlan
    from reconciler.gitfix.pull_request import BODY_LIMIT, FixContext, render_fix_body

    fixed = tuple(
        Finding(
            "KAI-V-001",
            Kind.VIOLATION,
            Severity.WARNING,
            f"value {i} is wrong " * 5,
            "lab",
            fix=Fix(Action.NONE, "x"),
            title="KAI placement strategy is binpack",
        )
        for i in range(2000)
    )
    plan = FixPlan("lab", fixed, (FileChange("v.yaml", b"a: 1\n", b"a: 2\n"),))
    body = render_fix_body(plan, FixContext("main", "0" * 40, Author.parse(None)))
    assert len(body) <= BODY_LIMIT
    assert "more finding(s) not listed here" in body and "value 0 is wrong" in body


def test_a_changed_line_that_starts_like_a_diff_header_is_still_masked() -> None:
    from reconciler.gitfix.pull_request import _mask_line

    secret = "dGhpcyBpcyBhIHNlY3JldCB0b2tlbiB2YWx1ZTEyMzQ="
    assert secret not in _mask_line(f"---token={secret}")  # a removed line `--token=…`
    assert secret not in _mask_line(f"+++ password: {secret}")
    assert _mask_line("--- a/clusters/lab/kai-values.yaml") == "--- a/clusters/lab/kai-values.yaml"
