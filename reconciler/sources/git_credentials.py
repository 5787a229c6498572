"""Credentials for fetch and push; a module of its own so pygit2 is imported only when a remote is used."""

from __future__ import annotations

import os

import pygit2
from pygit2.enums import CredentialType

from reconciler.core.errors import UserError
from reconciler.core.redact import redact_text

_AUTH_HINT = {
    "https": "set $KAI_GITOPS_GIT_TOKEN to a token with write access to the repository",
    "ssh": "load the deploy key into ssh-agent or pass --git-ssh-key FILE",
}


class GitCallbacks(pygit2.RemoteCallbacks):
    """HTTPS: the token in $KAI_GITOPS_GIT_TOKEN (user $KAI_GITOPS_GIT_USER, default x-access-token, which
    GitHub and GitLab deploy tokens both accept). SSH: the key file `ssh_key` (passphrase
    $KAI_GITOPS_GIT_SSH_PASSPHRASE), else the SSH agent. A credential the clone URL carried
    (`url_credential`) comes first, as git gives it precedence; the URL itself is used without it. A
    credential the server refused is not offered again: libgit2 would replay it until "too many
    authentication replays" and hide the reason.
    `rejected` collects the references the remote refused on push, with its message."""

    def __init__(self, ssh_key: str | None = None, *, url_credential: tuple[str, str] | None = None) -> None:
        super().__init__()
        self._ssh_key = ssh_key
        self._url_credential = url_credential
        self._token = os.environ.get("KAI_GITOPS_GIT_TOKEN")
        self._user = os.environ.get("KAI_GITOPS_GIT_USER", "x-access-token")
        self.offered: set[str] = set()
        self.rejected: dict[str, str] = {}

    def credentials(
        self, url: str, username_from_url: str | None, allowed_types: CredentialType
    ) -> pygit2.UserPass | pygit2.Keypair:
        kind = "ssh" if allowed_types & CredentialType.SSH_KEY else "https"
        if kind in self.offered:
            raise UserError("the Git server refused the credentials", where=redact_text(url), hint=_AUTH_HINT[kind])
        self.offered.add(kind)
        if kind == "https" and self._url_credential and allowed_types & CredentialType.USERPASS_PLAINTEXT:
            return pygit2.UserPass(*self._url_credential)
        if kind == "https" and self._token and allowed_types & CredentialType.USERPASS_PLAINTEXT:
            return pygit2.UserPass(self._user, self._token)
        if kind == "ssh":
            name = username_from_url or "git"
            if self._ssh_key:
                public = f"{self._ssh_key}.pub" if os.path.exists(f"{self._ssh_key}.pub") else None
                return pygit2.Keypair(name, public, self._ssh_key, os.environ.get("KAI_GITOPS_GIT_SSH_PASSPHRASE", ""))
            return pygit2.KeypairFromAgent(name)
        what = (
            "credentials of a kind kai-gitops cannot offer (HTTPS: username and token only)"
            if self._token or self._url_credential
            else "credentials and none are set"
        )
        raise UserError(f"the Git server asks for {what}", where=redact_text(url), hint=_AUTH_HINT[kind])

    def push_update_reference(self, refname: str, message: str | None) -> None:
        if message:
            self.rejected[refname] = message
