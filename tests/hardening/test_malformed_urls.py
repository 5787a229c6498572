"""A URL Python cannot split (an unclosed IPv6 bracket, a port that is no number) is a one-line user error
naming where it came from, its credential redacted: never `internal error: ValueError: Invalid IPv6 URL`."""

from __future__ import annotations

import pytest

from reconciler.core.errors import UserError
from reconciler.githost.base import HostFlags, resolve_host_settings
from reconciler.model.config import GitHostConfig
from tests.support.helpers import assert_one_line_error, run_cli

BROKEN = ["http://[::1", "http://tok:s3cret@[::1/x", "https://host:not-a-port/"]


@pytest.mark.parametrize("url", BROKEN)
@pytest.mark.parametrize("option", ["--opa-url", "--metrics-push", "--git-host-url"])
def test_a_malformed_url_option_is_one_line_naming_the_option(option: str, url: str) -> None:
    code, out, err = run_cli(["check", "--repo", "does-not-matter", option, url])
    line = assert_one_line_error(code, out, err, f"'{option}'", "is not a valid URL")
    assert "s3cret" not in line


@pytest.mark.parametrize("url", BROKEN)
def test_a_malformed_git_remote_or_host_url_is_a_user_error(url: str) -> None:
    for remote, config in ((url, None), ("https://github.com/acme/gitops.git", GitHostConfig(url=url))):
        with pytest.raises(UserError, match="is not a valid URL") as caught:
            resolve_host_settings(
                remote, config, HostFlags(repo="acme/gitops", host="github"), {"GITHUB_TOKEN": "t"}
            ).web_url()
        assert "s3cret" not in caught.value.line()


def test_the_cluster_server_url_of_a_message_survives_a_malformed_url() -> None:
    from reconciler.sources.cluster.client import shown_server

    assert shown_server("https://user:s3cret@[::1") == "https://[::1"


def test_a_valid_opa_url_still_passes_the_option_check() -> None:
    code, _out, err = run_cli(["check", "--repo", "does-not-exist", "--opa-url", "http://[::1]:8181"])
    assert code == 1 and "not a valid URL" not in err, err
