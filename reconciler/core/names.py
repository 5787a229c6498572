"""Kubernetes' name rules, for names kai-gitops reads from Git or from a saved report before it uses them.

A name the API server would refuse can never match a live object, and it is printed in reports, CI logs,
commands for a person to run and pull requests: refusing it where it is read (with file:line) keeps a
newline or a shell metacharacter out of every one of those. The rules are Kubernetes' own
(k8s.io/apimachinery/pkg/util/validation): a DNS-1123 label for namespaces and kai-gitops cluster names, a
DNS-1123 subdomain for most object names (Nodes, custom resources such as KAI Queues), qualified names and
label values for labels. Each check returns None for a good name, else what the name must be.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reconciler.core.errors import UserError

_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
SUBDOMAIN_PATTERN = _SUBDOMAIN.pattern  # also what one segment of a write's URL path may be (allowed_writes)
_QUALIFIED = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
# Every kind refuses these in a name (path segment names); the kinds kai-gitops reports also refuse controls.
_CONTROL_OR_SPACE = re.compile("[\x00-\x20\x7f-\x9f\u2028\u2029]")
_NOT_IN_ANY_NAME = re.compile("[/%\x00-\x20\x7f-\x9f\u2028\u2029]")

LABEL_RULE = "a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending alphanumeric"
SUBDOMAIN_RULE = (
    "a DNS-1123 subdomain: at most 253 lower-case letters, digits, '-' and '.', each dot-separated "
    "part starting and ending alphanumeric"
)
LABEL_KEY_RULE = (
    "a label key: an optional DNS-1123 subdomain prefix and '/', then at most 63 letters, digits, "
    "'-', '_' and '.', starting and ending alphanumeric"
)
LABEL_VALUE_RULE = (
    "a label value: empty, or at most 63 letters, digits, '-', '_' and '.', starting and ending alphanumeric"
)
CONTEXT_NAME_RULE = "a kube context name: at most 253 characters, no space or control character"
OBJECT_NAME_RULE = "a Kubernetes object name: at most 253 characters, no '/', '%', space or control character"


def dns_label(name: str) -> str | None:
    return None if len(name) <= 63 and _LABEL.fullmatch(name) else LABEL_RULE


def dns_subdomain(name: str) -> str | None:
    return None if len(name) <= 253 and _SUBDOMAIN.fullmatch(name) else SUBDOMAIN_RULE


def label_key(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if slash and dns_subdomain(prefix) is not None:
        return LABEL_KEY_RULE
    return None if len(name) <= 63 and _QUALIFIED.fullmatch(name) else LABEL_KEY_RULE


def label_value(value: str) -> str | None:
    return None if value == "" or (len(value) <= 63 and _QUALIFIED.fullmatch(value)) else LABEL_VALUE_RULE


def object_name(name: str) -> str | None:
    """What every kind accepts at the least: for a name whose kind is not known (a report's subject)."""
    if 0 < len(name) <= 253 and name not in (".", "..") and not _NOT_IN_ANY_NAME.search(name):
        return None
    return OBJECT_NAME_RULE


def context_name(name: str) -> str | None:
    """A kube context's name (a report of `diff` or `doctor` may carry one as its cluster): kubectl allows
    `/` and `:` (`arn:aws:eks:…:cluster/prod`), never white space or a control character."""
    return None if 0 < len(name) <= 253 and not _CONTROL_OR_SPACE.search(name) else CONTEXT_NAME_RULE


def require(rule: Callable[[str], str | None], name: str, what: str, where: str) -> None:
    """A one-line error at `where` (file:line, or a file) when `rule` refuses `name`; `what` says what it names."""
    problem = rule(name)
    if problem is not None:
        raise UserError(f"{what} {name!r} is not {problem}", where=where, hint="Kubernetes would refuse it")
