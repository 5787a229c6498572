"""Which remote a run read from, so the host and repository can be inferred from its URL."""

from __future__ import annotations

import os
import re

_URL = re.compile(r"^(https?|ssh|git)://|^[\w.-]+@[\w.-]+:")


def remote_url(repo_arg: str | None) -> str | None:
    """`--repo` itself when it is a clone URL, else the `origin` remote of the working copy or bare repo."""
    if repo_arg and _URL.match(repo_arg):
        return repo_arg
    import pygit2

    found = pygit2.discover_repository(os.path.abspath(repo_arg or "."))
    if found is None:
        return None
    from reconciler.sources.git import open_repository

    remotes = list(open_repository(found).remotes)
    origin = next((r for r in remotes if r.name == "origin"), None)
    if origin is not None:
        return origin.url
    return remotes[0].url if len(remotes) == 1 else None
