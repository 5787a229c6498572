"""Redaction by meaning, not by the word (issue 31): a value is masked because it is a credential -- its name is a
credential's where the value is the secret, or it has a credential's shape -- never because a map has a field
named `key`.

The Kubernetes shapes the tool reads and writes (tolerations, selectors, env `valueFrom`, volumes, probes,
affinity) come through redaction unchanged (a property over generated objects), beside the property that a
credential planted in them never survives; and the toleration `{key: nvidia.com/gpu, operator: Exists, effect:
NoSchedule}` in kai-config stays what it is in every output and in the fix, which stays automatic.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.checks.differ import diff
from reconciler.core.redact import REDACTED, is_secret_key, redact
from reconciler.findings.finding import Action
from reconciler.outputs import FORMATS
from tests.support.helpers import (
    desired_for,
    kai_crds,
    live_state,
    make_repo,
    obj,
    release_secret,
    run_cli,
    snapshot_file,
    standalone_config,
)

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


# -- examples ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape",
    [
        {"tolerations": [GPU_TOLERATION]},
        {
            "tolerations": [
                {
                    "key": "dedicated",
                    "operator": "Equal",
                    "value": "gpu",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {"key": "nvidia.com/gpu"},
            ]
        },
        {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]},
        {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}]},
        {
            "env": [
                {
                    "name": "DB_USER",
                    "valueFrom": {"secretKeyRef": {"name": "db", "key": "password", "optional": False}},
                },
                {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}},
                {"name": "TOKEN_FILE", "value": "/var/run/token"},
            ]
        },
        {
            "volumes": [
                {
                    "name": "certs",
                    "secret": {
                        "secretName": "tls",
                        "defaultMode": 420,
                        "items": [{"key": "tls.key", "path": "tls.key", "mode": 256}],
                    },
                },
                {"name": "settings", "configMap": {"name": "settings", "items": [{"key": "a", "path": "b"}]}},
                {
                    "name": "p",
                    "projected": {
                        "sources": [
                            {"secret": {"name": "s", "items": [{"key": "token", "path": "token"}]}},
                            {"serviceAccountToken": {"audience": "vault", "expirationSeconds": 3600, "path": "token"}},
                        ]
                    },
                },
            ]
        },
        {"imagePullSecrets": [{"name": "registry"}]},
        {"labels": [{"key": "team", "value": "research"}]},
    ],
    ids=[
        "gpu-toleration",
        "tolerations",
        "match-expressions",
        "match-fields",
        "env-value-from",
        "volumes",
        "image-pull-secrets",
        "key-value-pair",
    ],
)
def test_kubernetes_shapes_that_name_a_key_are_left_as_they_are(shape: dict[str, Any]) -> None:
    assert redact(shape) == shape


@pytest.mark.parametrize(
    "name",
    [
        "api-key",
        "x-api-key",
        "apiKey",
        "clientSecret",
        "client-secret",
        "API_KEY",
        "private-key",
        "connection-string",
        "ssh-key",
    ],
)
def test_dashed_and_camel_cased_credential_names_are_secret(name: str) -> None:
    assert is_secret_key(name)
    assert redact({name: "s3cr3t"}) == {name: REDACTED}


@pytest.mark.parametrize(
    "name",
    ["accountingLabelKey", "nodePoolLabelKey", "topologyKey", "keyName", "api-key-ref", "queueLabelKey", "author"],
)
def test_names_that_hold_no_credential_are_not_secret(name: str) -> None:
    assert not is_secret_key(name)


@pytest.mark.parametrize(
    "planted, token",
    [
        (
            {"tolerations": [{"key": "ci", "operator": "Equal", "value": "ghp_" + "a1B2" * 9, "effect": "NoSchedule"}]},
            "a1B2a1B2",
        ),
        (
            {"tolerations": [{"key": "example.com/api-token", "value": "plainword", "effect": "NoSchedule"}]},
            "plainword",
        ),
        ({"matchExpressions": [{"key": "vault-password", "operator": "In", "values": ["hunter2x"]}]}, "hunter2x"),
        ({"env": [{"name": "DB_PASSWORD", "value": "hunter2x"}]}, "hunter2x"),
        (
            {"env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "db", "key": "glpat-" + "Zz9" * 8}}}]},
            "Zz9Zz9",
        ),
        ({"tls": {"key": "hunter2x", "crt": "c"}}, "hunter2x"),
        ({"auth": {"user": "svc", "pass": "hunter2x"}}, "hunter2x"),
        ({"secret": {"secretName": "s", "stringData": {"a": "hunter2x"}}}, "hunter2x"),
        ({"labels": [{"key": "password", "value": "hunter2x"}]}, "hunter2x"),
    ],
    ids=[
        "token-shaped-toleration-value",
        "toleration-keyed-as-credential",
        "requirement-keyed-as-credential",
        "env-password",
        "secret-key-ref-token-shape",
        "tls-key",
        "auth-pass",
        "secret-data",
        "pair-named-password",
    ],
)
def test_a_credential_in_those_shapes_is_still_masked(planted: dict[str, Any], token: str) -> None:
    assert token not in json.dumps(redact(planted))


def test_the_key_of_a_mapping_that_is_no_kubernetes_shape_may_be_the_secret() -> None:
    assert redact({"signing": {"key": "s3cr3t"}}) == {"signing": {"key": REDACTED}}
    assert redact({"secretKeyRef": {"key": "k", "name": "n", "extra": "x"}})["secretKeyRef"]["key"] == REDACTED


# -- the property: generated Kubernetes objects ----------------------------------------------------------------

_words = st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=12).filter(lambda w: w[0].isalpha())
_label_keys = st.one_of(
    st.sampled_from(
        [
            "nvidia.com/gpu",
            "kubernetes.io/hostname",
            "kai.scheduler/queue",
            "node-role.kubernetes.io/control-plane",
            "topology.kubernetes.io/zone",
        ]
    ),
    # a taint or label keyed `x.example.com/dsn` names a credential, and its value is masked by design
    st.builds(lambda a, b: f"{a}.example.com/{b}", _words, _words).filter(lambda k: not is_secret_key(k)),
)
_label_values = st.one_of(_words, st.sampled_from(["", "true", "gpu-a100", "v1.2.3"]))
# A name the cluster gives a variable or header: plain configuration, no credential's name.
_env_names = st.sampled_from(
    ["LOG_LEVEL", "DB_HOST", "NVIDIA_VISIBLE_DEVICES", "PORT", "MODE", "X_TRACE_ID", "WORKERS", "QUEUE"]
)
_operators = st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])


def _toleration() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"key": _label_keys},
        optional={
            "operator": st.sampled_from(["Exists", "Equal"]),
            "value": _label_values,
            "effect": st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"]),
            "tolerationSeconds": st.integers(0, 3600),
        },
    )


def _requirement() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"key": _label_keys, "operator": _operators, "values": st.lists(_label_values, max_size=3)}
    )


def _selector() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "matchLabels": st.dictionaries(_label_keys, _label_values, max_size=3),
            "matchExpressions": st.lists(_requirement(), max_size=3),
        },
    )


def _affinity() -> st.SearchStrategy[dict[str, Any]]:
    node = {
        "requiredDuringSchedulingIgnoredDuringExecution": st.fixed_dictionaries(
            {
                "nodeSelectorTerms": st.lists(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "matchExpressions": st.lists(_requirement(), max_size=2),
                            "matchFields": st.lists(_requirement(), max_size=2),
                        },
                    ),
                    max_size=2,
                )
            }
        )
    }
    pod_term = st.fixed_dictionaries(
        {"labelSelector": _selector(), "topologyKey": _label_keys}, optional={"namespaceSelector": _selector()}
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "nodeAffinity": st.fixed_dictionaries(node),
            "podAntiAffinity": st.fixed_dictionaries(
                {
                    "preferredDuringSchedulingIgnoredDuringExecution": st.lists(
                        st.fixed_dictionaries({"weight": st.integers(1, 100), "podAffinityTerm": pod_term}), max_size=2
                    )
                }
            ),
        },
    )


def _key_ref() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"key": _words}, optional={"name": _words, "optional": st.booleans()})


def _env() -> st.SearchStrategy[dict[str, Any]]:
    value_from = st.one_of(
        st.fixed_dictionaries({"secretKeyRef": _key_ref()}),
        st.fixed_dictionaries({"configMapKeyRef": _key_ref()}),
        st.fixed_dictionaries(
            {
                "fieldRef": st.fixed_dictionaries(
                    {"fieldPath": st.sampled_from(["status.podIP", "metadata.name", "spec.nodeName"])}
                )
            }
        ),
    )
    return st.one_of(
        st.fixed_dictionaries({"name": _env_names, "value": _label_values}),
        st.fixed_dictionaries({"name": _env_names, "valueFrom": value_from}),
    )


def _items() -> st.SearchStrategy[list[dict[str, Any]]]:
    item = st.fixed_dictionaries(
        {"key": st.one_of(_words, st.sampled_from(["tls.key", "tls.crt", "token", "ca.crt"])), "path": _words},
        optional={"mode": st.sampled_from([256, 420, 511])},
    )
    return st.lists(item, max_size=3)


def _volume() -> st.SearchStrategy[dict[str, Any]]:
    source = st.one_of(
        st.fixed_dictionaries(
            {
                "secret": st.fixed_dictionaries(
                    {"secretName": _words},
                    optional={"items": _items(), "defaultMode": st.sampled_from([256, 420]), "optional": st.booleans()},
                )
            }
        ),
        st.fixed_dictionaries({"configMap": st.fixed_dictionaries({"name": _words}, optional={"items": _items()})}),
        st.fixed_dictionaries(
            {
                "projected": st.fixed_dictionaries(
                    {
                        "sources": st.lists(
                            st.one_of(
                                st.fixed_dictionaries(
                                    {"secret": st.fixed_dictionaries({"name": _words}, optional={"items": _items()})}
                                ),
                                st.fixed_dictionaries(
                                    {
                                        "serviceAccountToken": st.fixed_dictionaries(
                                            {"path": _words},
                                            optional={"audience": _words, "expirationSeconds": st.integers(600, 86400)},
                                        )
                                    }
                                ),
                            ),
                            max_size=3,
                        )
                    }
                )
            }
        ),
        st.fixed_dictionaries({"emptyDir": st.fixed_dictionaries({}, optional={"medium": st.just("Memory")})}),
    )
    return st.builds(lambda name, src: {"name": name, **src}, _words, source)


def _probe() -> st.SearchStrategy[dict[str, Any]]:
    handler = st.one_of(
        st.fixed_dictionaries(
            {
                "httpGet": st.fixed_dictionaries(
                    {"path": st.just("/healthz"), "port": st.integers(1, 65535)},
                    optional={
                        "httpHeaders": st.lists(
                            st.fixed_dictionaries({"name": st.sampled_from(["X-Trace", "Accept"]), "value": _words}),
                            max_size=2,
                        )
                    },
                )
            }
        ),
        st.fixed_dictionaries({"exec": st.fixed_dictionaries({"command": st.lists(_words, min_size=1, max_size=3)})}),
        st.fixed_dictionaries({"tcpSocket": st.fixed_dictionaries({"port": st.integers(1, 65535)})}),
    )
    return st.builds(lambda h, delay: {**h, "initialDelaySeconds": delay}, handler, st.integers(0, 60))


def _pod_spec() -> st.SearchStrategy[dict[str, Any]]:
    container = st.fixed_dictionaries(
        {"name": _words},
        optional={
            "env": st.lists(_env(), max_size=3),
            "livenessProbe": _probe(),
            "readinessProbe": _probe(),
            "envFrom": st.lists(
                st.fixed_dictionaries({"secretRef": st.fixed_dictionaries({"name": _words})}), max_size=1
            ),
            "volumeMounts": st.lists(
                st.fixed_dictionaries({"name": _words, "mountPath": st.just("/etc/x")}), max_size=2
            ),
        },
    )
    return st.fixed_dictionaries(
        {"containers": st.lists(container, min_size=1, max_size=2)},
        optional={
            "tolerations": st.lists(_toleration(), max_size=3),
            "affinity": _affinity(),
            "nodeSelector": st.dictionaries(_label_keys, _label_values, max_size=2),
            "volumes": st.lists(_volume(), max_size=3),
            "imagePullSecrets": st.lists(st.fixed_dictionaries({"name": _words}), max_size=2),
        },
    )


# kai-config's `global` section carries the same shapes (the chart copies them into every operand)
kubernetes_objects = st.one_of(
    st.builds(lambda spec: {"apiVersion": "v1", "kind": "Pod", "spec": spec}, _pod_spec()),
    st.builds(
        lambda t, a, n: {"global": {"tolerations": t, "affinity": a, "nodeSelector": n}},
        st.lists(_toleration(), max_size=3),
        _affinity(),
        st.dictionaries(_label_keys, _label_values),
    ),
    st.builds(lambda s: {"selector": s}, _selector()),
)


@settings(max_examples=300, deadline=None)
@given(kubernetes_objects)
def test_redaction_changes_no_value_of_the_kubernetes_shapes(value: dict[str, Any]) -> None:
    assert redact(value) == value


# The other half: a credential put into one of those shapes, where a credential can stand, never survives.
tokens = st.text(string.ascii_letters + string.digits, min_size=14, max_size=20).map(lambda s: f"Zq9{s}")
_PLANTS = {
    "toleration-value-github": lambda t: {
        "tolerations": [{"key": "ci", "operator": "Equal", "value": f"ghp_{t}{t}"[:40], "effect": "NoSchedule"}]
    },
    "toleration-value-aws": lambda t: {"tolerations": [{"key": "ci", "value": "AKIA" + t.upper()[:16].ljust(16, "Q")}]},
    "toleration-keyed-token": lambda t: {"tolerations": [{"key": "example.com/token", "value": t}]},
    "secret-key-ref-gitlab": lambda t: {
        "env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "db", "key": f"glpat-{t}{t}"}}}]
    },
    "env-password": lambda t: {"env": [{"name": "REGISTRY_PASSWORD", "value": t}]},
    "probe-header": lambda t: {
        "httpGet": {"path": "/", "port": 1, "httpHeaders": [{"name": "Authorization", "value": f"Bearer {t}"}]}
    },
    "requirement-url": lambda t: {
        "matchExpressions": [{"key": "mirror", "operator": "In", "values": [f"https://u:{t}@example.com"]}]
    },
    "volume-item-jwt": lambda t: {"items": [{"key": f"eyJhbGciOi.eyJ{t}.sig", "path": "p"}]},
}


@settings(max_examples=60, deadline=None)
@given(tokens, st.sampled_from(sorted(_PLANTS)))
def test_a_credential_planted_in_the_kubernetes_shapes_never_survives(token: str, shape: str) -> None:
    planted = _PLANTS[shape](token)
    assert token[3:] not in json.dumps(redact(planted)), planted


# -- the toleration in kai-config: every output, and the fix stays automatic --------------------------------------

TOLERATING_VALUES = (
    "global:\n  tolerations:\n    - key: nvidia.com/gpu\n      operator: Exists\n      effect: NoSchedule\n"
)


def _kai_config(spec: dict[str, Any]) -> dict[str, Any]:
    return obj("kai.scheduler/v1", "Config", "kai-config", spec=spec)


def _live(*items: dict[str, Any]) -> list[dict[str, Any]]:
    read = {"apiVersion": "kai-gitops/v1", "kind": "KaiConfigRead", "metadata": {"name": "kai-config"}}
    return [*kai_crds(), release_secret(version="v0.17.0"), read, *items]


def test_a_toleration_drift_is_shown_as_it_is_and_patched_automatically(tmp_path: Path) -> None:
    desired = desired_for(
        tmp_path, {"kai-gitops.yaml": standalone_config(version="v0.17.0"), "kai-values.yaml": TOLERATING_VALUES}
    )
    spec = desired.kai_config.spec()
    assert spec["global"]["tolerations"] == [GPU_TOLERATION]
    del spec["global"]["tolerations"]
    [finding] = [f for f in diff(desired, live_state(_live(_kai_config(spec)))) if f.rule_id == "KAI-D-005"]
    shown = finding.redacted()
    assert shown.desired == {"global.tolerations": [GPU_TOLERATION]}
    assert "nvidia.com/gpu" in shown.message and REDACTED not in shown.message
    assert finding.fix is not None and finding.fix.action is Action.UPDATE  # was NONE: "looks like a credential"
    assert finding.fix.patch == {"spec": {"global": {"tolerations": [GPU_TOLERATION]}}}
    assert '"key":"nvidia.com/gpu"' in (shown.fix.command if shown.fix else "")


def test_the_toleration_reads_as_it_is_in_every_output(tmp_path: Path) -> None:
    repo, _ = make_repo(
        tmp_path, {"kai-gitops.yaml": standalone_config(version="v0.17.0"), "kai-values.yaml": TOLERATING_VALUES}
    )
    desired = desired_for(
        tmp_path / "copy",
        {"kai-gitops.yaml": standalone_config(version="v0.17.0"), "kai-values.yaml": TOLERATING_VALUES},
    )
    spec = desired.kai_config.spec()
    del spec["global"]["tolerations"]
    snapshot = snapshot_file(tmp_path, _live(_kai_config(spec)))
    outputs = tmp_path / "out"
    outputs.mkdir()
    code, stdout, stderr = run_cli(
        [
            "diff",
            "--repo",
            repo,
            "--snapshot",
            snapshot,
            "-o",
            "text",
            *(f"--output={fmt}={outputs / fmt}" for fmt in FORMATS if fmt != "text"),
        ]
    )
    assert code == 2, stderr
    texts = {"text": stdout, **{fmt: (outputs / fmt).read_text() for fmt in FORMATS if fmt != "text"}}
    for fmt, text in texts.items():
        assert "nvidia.com/gpu" in text, fmt
        assert not any(
            marker in text
            for marker in ('"key":"<redacted>"', '"key": "<redacted>"', "key: <redacted>", '\\"key\\":\\"<redacted>\\"')
        ), fmt


def test_a_label_whose_key_reads_like_a_credential_is_a_label() -> None:
    """Found by the property above: `a.example.com/auth: a` under matchLabels was masked. A label's key names the
    label; its value is still judged by its shape."""
    for shape in (
        {"selector": {"matchLabels": {"a.example.com/auth": "a"}}},
        {"global": {"nodeSelector": {"example.com/token": "gpu"}}},
        {"metadata": {"labels": {"team.example.com/password-rotation": "weekly"}}},
    ):
        assert redact(shape) == shape
    token = "glpat-" + "AbCdEfGhIjKlMnOpQrSt"
    assert redact({"metadata": {"labels": {"token": token}}}) == {"metadata": {"labels": {"token": "<redacted>"}}}
