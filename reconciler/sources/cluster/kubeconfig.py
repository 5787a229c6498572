"""Which cluster, with which credentials: kubeconfig (+ context) or the pod's in-cluster service account.

Every mistake here is the user's to fix, so each becomes one line naming the file or context.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from reconciler.core.errors import UserError
from reconciler.core.redact import excerpt

# Where the kubelet mounts a pod's service-account token and cluster CA; $KAI_GITOPS_SERVICE_ACCOUNT_DIR
# points elsewhere (a test, or a debug shell with a copied token).
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
SERVICE_ACCOUNT_DIR_ENV = "KAI_GITOPS_SERVICE_ACCOUNT_DIR"
IN_CLUSTER_LABEL = "in-cluster"  # the label of a connection through the pod's service account
_SERVICE_ACCOUNT_USER = re.compile(
    r"system:serviceaccount:[a-z0-9]([-a-z0-9]*[a-z0-9])?:"
    r"[a-z0-9]([-.a-z0-9]*[a-z0-9])?"
)


def service_account_dir() -> Path:
    """The pod's service-account folder: token, ca.crt and namespace."""
    return Path(os.environ.get(SERVICE_ACCOUNT_DIR_ENV) or SERVICE_ACCOUNT_DIR)


if TYPE_CHECKING:
    from reconciler.sources.cluster.kube import KubeConfiguration


def load_configuration(
    kubeconfig: str | None, context: str | None, repo_context: str | None = None
) -> tuple[KubeConfiguration, str]:
    """(kubernetes Configuration, label for messages). `context` (from --context) wins over `repo_context`
    (the cluster's kubeContext in kai-gitops.yaml), which in-cluster runs ignore: a CronJob reads its own
    cluster whatever name the operator's laptop gives it."""
    path = kubeconfig or default_kubeconfig()
    if path is None:
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            if context:
                raise UserError(
                    "--context needs a kubeconfig, but none was given and this run is in-cluster",
                    hint="drop --context, or pass --kubeconfig",
                )
            configuration = _in_cluster()
            _keep_bearer_token_clean(configuration, "the service account token", str(service_account_dir() / "token"))
            return configuration, IN_CLUSTER_LABEL
        raise UserError(
            "no kubeconfig found ($KUBECONFIG unset, ~/.kube/config missing) and not running in a cluster",
            hint="pass --kubeconfig FILE, or --snapshot FILE to work offline",
        )
    _check_files(path, explicit=kubeconfig is not None)
    chosen = _choose_context(path, context or repo_context, from_cli=context is not None)
    configuration = _from_kubeconfig(path, chosen)
    _keep_bearer_token_clean(configuration, f"kubeconfig user {_context_user(path, chosen)!r}", path)
    return configuration, f"context {chosen}"


def service_account_user() -> str | None:
    """The username the API server authenticates the pod's token as (`sub`, system:serviceaccount:NS:NAME), or
    None when the token is not one. Its own token, so its claims are read, not verified: the API server
    verifies it on every request this run makes with it. The token itself is never kept or shown."""
    try:
        token = (service_account_dir() / "token").read_text(encoding="ascii").strip()
        payload = token.split(".")[1]
        claims = orjson.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (OSError, IndexError, ValueError):  # binascii.Error, UnicodeDecodeError, JSONDecodeError
        return None
    subject = claims.get("sub") if isinstance(claims, dict) else None
    return subject if isinstance(subject, str) and _SERVICE_ACCOUNT_USER.fullmatch(subject) else None


def _check_files(path: str, *, explicit: bool) -> None:
    files = [p for p in path.split(os.pathsep) if p]
    if not any(Path(p).expanduser().is_file() for p in files):
        source = "--kubeconfig" if explicit else "$KUBECONFIG" if os.environ.get("KUBECONFIG") else "default"
        raise UserError(
            f"kubeconfig file not found: {path} ({source})",
            hint="pass --kubeconfig FILE, or --snapshot FILE to work offline",
        )


def _choose_context(path: str, wanted: str | None, *, from_cli: bool) -> str:
    names, current = _contexts(path)
    if wanted is None:
        if not current:
            raise UserError(
                "kubeconfig has no current-context",
                where=path,
                hint="pass --context NAME (known: " + (", ".join(names) or "none") + ")",
            )
        return current
    if wanted not in names:
        origin = "--context" if from_cli else "kubeContext in kai-gitops.yaml"
        raise UserError(
            f"kube context {wanted!r} ({origin}) not found in the kubeconfig",
            where=path,
            hint="known contexts: " + (", ".join(names) or "none"),
        )
    return wanted


def _contexts(path: str) -> tuple[list[str], str | None]:
    """Context names and current-context, merged over $KUBECONFIG-style path lists the way the client does."""
    from kubernetes.config.kube_config import KubeConfigMerger

    try:
        merged = KubeConfigMerger(path).config
        data = merged.value if merged is not None else None
        if not isinstance(data, dict):
            raise ValueError("not a kubeconfig (no YAML mapping)")
        names = [str(getattr(c, "value", c).get("name")) for c in data.get("contexts") or []]
    except Exception as exc:  # YAML errors, permission errors, wrong shapes: all the user's file
        raise UserError(f"cannot read kubeconfig: {_one_line(exc)}", where=path) from None
    current = data.get("current-context")
    return names, str(current) if current else None


def _context_user(path: str, context: str) -> str:
    """The kubeconfig user a context names, for messages about its credentials."""
    from kubernetes.config.kube_config import KubeConfigMerger

    merged = KubeConfigMerger(path).config
    data = merged.value if merged is not None else {}
    for entry in data.get("contexts") or []:
        entry = getattr(entry, "value", entry)
        if entry.get("name") == context:
            return str((entry.get("context") or {}).get("user") or "?")
    return "?"


def _keep_bearer_token_clean(configuration: KubeConfiguration, owner: str, where: str) -> None:
    """A token pasted with a trailing newline (`token: |`, a file written by `echo`) is sent without its
    surrounding white space, as client-go's token-file source trims it; http.client would refuse the
    header and quote the whole token in its error. White space or a control character inside the token
    is a broken credential: refused in one line naming its owner, never echoed. Applied again after each
    refresh (exec plugins, a rotated service account token), which sets the token anew."""
    _clean_bearer_token(configuration, owner, where)
    refresh = configuration.refresh_api_key_hook
    if refresh is None:
        return

    def refreshed(conf: KubeConfiguration) -> None:
        refresh(conf)
        _clean_bearer_token(conf, owner, where)
        conf.refresh_api_key_hook = refreshed  # the client's hook installs itself again on each refresh

    configuration.refresh_api_key_hook = refreshed


def _clean_bearer_token(configuration: KubeConfiguration, owner: str, where: str) -> None:
    header = configuration.api_key.get("BearerToken")
    if not isinstance(header, str):
        return
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if not token:
        raise UserError(
            f"the bearer token of {owner} is empty",
            where=where,
            hint="set the token, or use a client certificate or an exec plugin",
        )
    if any(c.isspace() or not c.isprintable() for c in token):
        raise UserError(
            f"the bearer token of {owner} has white space or a control character inside it",
            where=where,
            hint="paste the token again as one line",
        )
    configuration.api_key["BearerToken"] = f"{scheme} {token}"


def _from_kubeconfig(path: str, context: str) -> KubeConfiguration:
    from kubernetes import client, config

    configuration: KubeConfiguration = client.Configuration()
    with _client_errors_logged() as logged:
        try:
            config.load_kube_config(
                config_file=path, context=context, client_configuration=configuration, persist_config=False
            )
        except Exception as exc:  # exec plugin failures, missing cert files, bad server URLs
            raise UserError(f"cannot use kube context {context!r}: {_one_line(exc)}", where=path) from None
    if logged:
        # The client logs a failed exec plugin (exit code, unreadable output, missing command) and goes on
        # without credentials: every request would then be refused as system:anonymous.
        raise UserError(f"cannot use kube context {context!r}: {_one_line(logged[0])}", where=path)
    return configuration


@contextlib.contextmanager
def _client_errors_logged() -> Iterator[list[Exception]]:
    """The errors the kubernetes client logs (through the root logger) instead of raising, kept from stderr."""
    records: list[Exception] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.ERROR:
                records.append(RuntimeError(record.getMessage()))

    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = [Keep()]  # also stops logging.error() from installing a stderr handler (basicConfig)
    try:
        yield records
    finally:
        root.handlers = saved


def _in_cluster() -> KubeConfiguration:
    from kubernetes import client
    from kubernetes.config.incluster_config import InClusterConfigLoader

    folder = service_account_dir()
    configuration: KubeConfiguration = client.Configuration()
    try:
        # what config.load_incluster_config does, with the folder's files (the token is re-read as it rotates)
        InClusterConfigLoader(token_filename=str(folder / "token"), cert_filename=str(folder / "ca.crt")).load_and_set(
            configuration
        )
    except Exception as exc:
        raise UserError(f"cannot use the in-cluster service account ({folder}): {_one_line(exc)}") from None
    return configuration


def _one_line(exc: Exception) -> str:
    # exec plugins and auth providers put their own output in these errors: mask anything token-shaped
    return excerpt(str(exc), 300) or type(exc).__name__


def default_kubeconfig() -> str | None:
    """$KUBECONFIG, else ~/.kube/config if it exists, else None (in-cluster or nothing)."""
    env = os.environ.get("KUBECONFIG")
    if env:
        return env
    default = Path("~/.kube/config").expanduser()
    return str(default) if default.exists() else None
