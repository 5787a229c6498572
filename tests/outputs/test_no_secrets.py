"""Secrets planted in release values (live) and in Git values never reach any output format.

Property test: hypothesis plants credential shapes the redaction nets must catch (secret key names, URLs
with a password, `--token=` arguments, a bare secret flag's next item, env entries, PEM blocks, long
base64 blobs) in the KAI release's values in the cluster and in the values file in Git, runs `diff` and
`check` end to end, and renders every format. Each example plants a fresh random token.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from reconciler.app.pipeline import run_check, run_diff
from reconciler.app.settings import GitSettings, RunSettings
from reconciler.outputs import render
from reconciler.outputs.destinations import FORMATS
from reconciler.sources.snapshot import read_snapshot
from tests.support.helpers import load_demo_builder

BUILD = load_demo_builder()
LAB_VALUES = "clusters/lab/kai-values.yaml"

tokens = st.text(string.ascii_letters + string.digits, min_size=14, max_size=20).map(lambda s: f"Qz7{s}")
SECRET_KEYS = ["password", "registryPassword", "apiToken", "clientSecret", "privateKey", "tls.key", "pass"]


# Shapes that are one string: planted also where a rule quotes the value (KAI-V-001 quotes placementStrategy).
QUOTABLE = {
    "url": "https://svc:{t}@registry.example.com/v2",
    "arg": "--token={t}",
    "pem": "-----BEGIN PRIVATE KEY-----\\n{t}\\n-----END PRIVATE KEY-----",
}


@st.composite
def quoted(draw: st.DrawFn) -> tuple[str, str]:
    token = draw(tokens)
    return token, QUOTABLE[draw(st.sampled_from(sorted(QUOTABLE)))].format(t=token)


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    token = draw(tokens)
    shape = draw(st.sampled_from(["key", "nested", "url", "arg", "flag", "env", "pem", "blob"]))
    blob = (token * 4)[:48]
    value: dict[str, Any] = {
        "key": {draw(st.sampled_from(SECRET_KEYS)): token},
        "nested": {"auth": {"user": "svc", "pass": token}},
        "url": {"mirror": f"https://svc:{token}@registry.example.com/v2"},
        "arg": {"extraArgs": [f"--token={token}", "--v=2"]},
        "flag": {"args": ["--password", token]},
        "env": {"env": [{"name": "DB_PASSWORD", "value": token}]},
        "pem": {"bundle": f"-----BEGIN PRIVATE KEY-----\n{token}\n-----END PRIVATE KEY-----\n"},
        "blob": {"note": blob},
    }[shape]
    return (blob if shape == "blob" else token), value


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("demo") / "repo"
    BUILD.build_repo(target)
    return target


def snapshot_with(values: dict[str, Any], folder: Path) -> Path:
    items = BUILD.lab_standalone_snapshot()
    release = BUILD._release(
        "kai-scheduler", "kai-scheduler", 2, "deployed", "v0.14.7", BUILD._canonical_values() | {"global": values}
    )
    items = [release if i.get("kind") == "Secret" and "kai-scheduler.v1" in i["metadata"]["name"] else i for i in items]
    path = folder / "live.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def every_format(report: Any) -> str:
    return "\n".join(render(report, fmt) for fmt in FORMATS)


# No shrinking: each example is a full diff + check; a failure prints its planted values as they are.
@settings(
    max_examples=15,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(live=planted(), git=planted(), strategy=quoted())
def test_planted_secrets_appear_in_no_format(
    demo: Path,
    tmp_path: Path,
    live: tuple[str, dict[str, Any]],
    git: tuple[str, dict[str, Any]],
    strategy: tuple[str, str],
) -> None:
    (live_secret, live_values), (git_secret, git_values), (quoted_secret, quoted_value) = live, git, strategy
    snapshot = snapshot_with(live_values, tmp_path)
    values = demo / LAB_VALUES
    original = values.read_text()
    edited = original.replace("placementStrategy: spread", f'placementStrategy: "{quoted_value}"')
    assert edited != original
    try:
        values.write_text(
            edited + "\nglobal:\n" + "".join(f"  {line}\n" for line in json.dumps(git_values).splitlines())
        )
        settings_ = RunSettings(GitSettings(str(demo), worktree=True), cluster="lab-standalone")
        diff_report = run_diff(settings_, lambda _context: read_snapshot(str(snapshot)))
        check_report = run_check(settings_)
    finally:
        values.write_text(original)
    assert any(f.rule_id == "KAI-D-004" for f in diff_report.clusters[0].findings)  # the values were compared
    quoting = next(f for f in check_report.clusters[0].findings if f.rule_id == "KAI-V-001")
    assert "<redacted>" in quoting.message  # the quoted value reached a message, masked
    for text in (every_format(diff_report), every_format(check_report)):
        for secret in (live_secret, git_secret, quoted_secret):
            assert secret not in text
