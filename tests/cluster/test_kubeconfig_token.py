"""A kubeconfig bearer token with surrounding white space (a trailing newline from `token: |` or a pasted
`echo`) is sent trimmed, as client-go's token-file source trims it; white space or a control character
inside it is a one-line error naming the kubeconfig user. Never an internal error, never the token."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.sources.cluster.kubeconfig import _keep_bearer_token_clean, load_configuration
from tests.support.helpers import assert_one_line_error, load_demo_builder, run_cli
from tests.support.kubeserver import KubeTestServer
from tests.support.kubeserver._snapshot import serve_snapshot

TOKEN = "eyJhbGciOiJSUzI1NiJ9.PayloadNeverShown0123456789.Sig"


@pytest.fixture(scope="module")
def server() -> Iterator[KubeTestServer]:
    with KubeTestServer() as srv:
        serve_snapshot(srv, list(load_demo_builder().prod_addon_snapshot()), nvca_from_queues=True)
        yield srv


def kubeconfig(path: Path, url: str, token: str) -> Path:
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "prod",
                "clusters": [{"name": "prod", "cluster": {"server": url}}],
                "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "ci-bot"}}],
                "users": [{"name": "ci-bot", "user": {"token": token}}],
            }
        )
    )
    return path


@pytest.mark.parametrize("token", [f"{TOKEN}\n", f"  {TOKEN}\r\n", f"\t{TOKEN} "], ids=["newline", "crlf", "blanks"])
@pytest.mark.parametrize("log_format", ["text", "json"])
def test_surrounding_white_space_is_trimmed(
    server: KubeTestServer, tmp_path: Path, token: str, log_format: str
) -> None:
    config = kubeconfig(tmp_path / "kubeconfig", server.url, token)
    code, out, err = run_cli(["doctor", "--kubeconfig", config, "--log-format", log_format])
    assert code in (0, 2), err
    assert "internal error" not in err and "NVCA" in out
    assert TOKEN not in out + err


@pytest.mark.parametrize(
    "token",
    [TOKEN.replace(".", "\n", 1), TOKEN.replace(".", " ", 1), "\n", f"{TOKEN}\x00"],
    ids=["inner-newline", "inner-space", "only-white-space", "nul"],
)
@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_broken_token_is_one_line_naming_the_user(
    server: KubeTestServer, tmp_path: Path, token: str, log_format: str
) -> None:
    config = kubeconfig(tmp_path / "kubeconfig", server.url, token)
    code, out, err = run_cli(["doctor", "--kubeconfig", config, "--log-format", log_format])
    if log_format == "text":
        assert_one_line_error(code, out, err, "bearer token of kubeconfig user 'ci-bot'", str(config))
    else:
        assert code == 1 and "kubeconfig user 'ci-bot'" in err and '"internal":false' in err, err
    for piece in TOKEN.split("."):
        assert piece not in out + err


def test_a_refreshed_token_is_trimmed_too(tmp_path: Path) -> None:
    """Exec plugins and a rotated service account token set the token again on each refresh."""
    configuration, _label = load_configuration(str(kubeconfig(tmp_path / "kc", "http://127.0.0.1:9", TOKEN)), None)
    tokens = iter([f"{TOKEN}-2\n", f"{TOKEN}-3\n"])

    def client_refresh(conf: object) -> None:  # what the client's hook does: set the token, install itself
        configuration.api_key["BearerToken"] = f"Bearer {next(tokens)}"
        configuration.refresh_api_key_hook = client_refresh

    configuration.refresh_api_key_hook = client_refresh
    _keep_bearer_token_clean(configuration, "kubeconfig user 'x'", "kc")
    for expected in (f"Bearer {TOKEN}-2", f"Bearer {TOKEN}-3"):
        assert configuration.auth_settings()["BearerToken"]["value"] == expected
