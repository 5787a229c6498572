"""The real server's checks on the objects kai-gitops writes, with its words: object names (422),
``MicroTime`` fields that do not decode (400), Lease specs and events.k8s.io Events (422).

Modelled after apimachinery's ``ValidateObjectMeta`` name rules (IsDNS1123Subdomain, IsDNS1123Label, the
generateName prefix) and ``ValidateQualifiedName``, Kubernetes' ``ValidateLease`` and ``ValidateEventCreate``
(its legacy part, then the strict part for events.k8s.io/v1), and Go's ``time.Parse`` of RFC3339Micro for
``metav1.MicroTime``. Compared with the real server by tests/real/test_kubeserver_differential.py.
"""

from __future__ import annotations

import calendar
import re
from typing import Any

from ._errors import ApiError
from ._store import KindInfo

Obj = dict[str, Any]

SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
MICRO_TIME_LAYOUT = "2006-01-02T15:04:05.000000Z07:00"
# Go's RFC3339Micro layout as (layout element, what it reads) in order.
_MICRO_TIME_ELEMENTS = (
    ("2006", r"\d{4}"),
    ("-", "-"),
    ("01", r"\d{2}"),
    ("-", "-"),
    ("02", r"\d{2}"),
    ("T", "T"),
    ("15", r"\d{2}"),
    (":", ":"),
    ("04", r"\d{2}"),
    (":", ":"),
    ("05", r"\d{2}"),
    (".000000", r"\.\d{6}"),
    ("Z07:00", r"Z|[+-]\d{2}:\d{2}"),
)
_RANGES = ((1, 12, "month"), (1, 31, "day"), (0, 23, "hour"), (0, 59, "minute"), (0, 59, "second"))
GENERATED_BASE = 58  # names.SimpleNameGenerator: 63 characters at most, 5 of them random
LEASE_API = ("coordination.k8s.io", "leases")
EVENTS_API = ("events.k8s.io", "events")
EVENT_TEXT_LIMIT = 128  # reportingInstance, action, reason
NOTE_LIMIT = 1024  # bytes, as Go's len()


class FieldError:
    def __init__(self, field: str, reason: str, body: str) -> None:
        self.field, self.reason, self.body = field, reason, body

    def __str__(self) -> str:
        return f"{self.field}: {self.body}"

    def cause(self) -> Obj:
        return {"reason": self.reason, "message": self.body, "field": self.field}


def invalid(field: str, value: Any, detail: str) -> FieldError:
    shown = f'"{value}"' if isinstance(value, str) else str(value)
    return FieldError(field, "FieldValueInvalid", f"Invalid value: {shown}: {detail}")


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(field, "FieldValueRequired", "Required value" + (f": {detail}" if detail else ""))


def subdomain_errors(value: str) -> list[str]:
    errors = []
    if len(value) > 253:
        errors.append("must be no more than 253 characters")
    if not SUBDOMAIN_RE.match(value):
        errors.append(SUBDOMAIN_MSG)
    return errors


def label_errors(value: str) -> list[str]:
    if "." in value:
        return ["must not contain dots"]
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not LABEL_RE.match(value):
        errors.append(LABEL_MSG)
    return errors


def qualified_name_errors(field: str, value: str) -> list[FieldError]:
    parts = value.split("/")
    if len(parts) > 2:
        return [invalid(field, value, "a qualified name " + QUALIFIED_NAME_MSG.removeprefix("name part "))]
    errors = []
    if len(parts) == 2:
        prefix, name = parts
        errors += (
            [invalid(field, value, "prefix part " + m) for m in subdomain_errors(prefix)]
            if prefix
            else [invalid(field, value, "prefix part must be non-empty")]
        )
    else:
        name = parts[0]
    if not name:
        errors.append(invalid(field, value, "name part must be non-empty"))
    elif len(name) > 63:
        errors.append(invalid(field, value, "name part must be no more than 63 characters"))
    if not QUALIFIED_NAME_RE.match(name):
        errors.append(invalid(field, value, QUALIFIED_NAME_MSG))
    return errors


def name_errors(info: KindInfo, meta: Obj) -> list[FieldError]:
    """metadata.generateName (as a prefix: a trailing '-' is fine) then metadata.name, by the kind's rule."""
    check = label_errors if (info.group, info.plural) in (("", "namespaces"), ("", "services")) else subdomain_errors
    errors = []
    prefix = str(meta.get("generateName") or "")
    if prefix:
        masked = prefix[:-1] + "a" if len(prefix) > 1 and prefix.endswith("-") else prefix
        errors += [invalid("metadata.generateName", prefix, m) for m in check(masked)]
    errors += [invalid("metadata.name", meta["name"], m) for m in check(str(meta["name"]))]
    return errors


def generated_name(prefix: str, suffix: str) -> str:
    return prefix[:GENERATED_BASE] + suffix


def check_micro_times(info: KindInfo, obj: Obj) -> None:
    """The MicroTime fields of the kinds kai-gitops writes; a value that does not decode is a 400."""
    if (info.group, info.plural) == LEASE_API:
        spec = obj.get("spec") or {}
        values = [spec.get("acquireTime"), spec.get("renewTime")]
    elif (info.group, info.plural) == EVENTS_API:
        values = [obj.get("eventTime"), (obj.get("series") or {}).get("lastObservedTime")]
    else:
        return
    for value in values:
        problem = micro_time_problem(value)
        if problem:
            raise ApiError(
                400, f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: {problem}'
            )


def micro_time_problem(value: Any) -> str | None:
    """Go's error for time.Parse(RFC3339Micro, value), for the usual mistakes; None when it parses."""
    if value is None:
        return None
    if not isinstance(value, str):
        return f"json: cannot unmarshal {type(value).__name__} into a MicroTime of type string"
    rest = value
    for element, pattern in _MICRO_TIME_ELEMENTS:
        match = re.match(pattern, rest)
        if not match:
            return f'parsing time "{value}" as "{MICRO_TIME_LAYOUT}": cannot parse "{rest}" as "{element}"'
        rest = rest[match.end() :]
    if rest:
        return f'parsing time "{value}": extra text: "{rest}"'
    year, *fields = (int(n) for n in re.findall(r"\d+", value)[:6])
    for number, (low, high, what) in zip(fields, _RANGES, strict=True):
        if what == "day":
            high = calendar.monthrange(year, fields[0])[1]
        if not low <= number <= high:
            return f'parsing time "{value}": {what} out of range'
    return None


def lease_errors(spec: Obj) -> list[FieldError]:
    errors = []
    duration, transitions = spec.get("leaseDurationSeconds"), spec.get("leaseTransitions")
    if isinstance(duration, int) and duration <= 0:
        errors.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    if isinstance(transitions, int) and transitions < 0:
        errors.append(invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    return errors


def legacy_event_errors(event: Obj, namespace: str | None) -> list[FieldError]:
    """The first part of ValidateEventCreate, which every Event passes (it differs with and without eventTime)."""
    errors = []
    regarding_namespace = (event.get("regarding") or {}).get("namespace") or ""
    text = {k: str(event.get(k) or "") for k in ("reportingController", "reportingInstance", "action", "reason")}
    if not event.get("eventTime"):
        if (regarding_namespace and regarding_namespace != namespace) or (
            not regarding_namespace and namespace not in ("", "default")
        ):
            errors.append(invalid("involvedObject.namespace", regarding_namespace, "does not match event.namespace"))
    else:
        if not regarding_namespace and namespace not in ("default", "kube-system"):
            errors.append(invalid("involvedObject.namespace", regarding_namespace, "does not match event.namespace"))
        if not text["reportingController"]:
            errors.append(required("reportingController"))
        errors += qualified_name_errors("reportingController", text["reportingController"])
        for field in ("reportingInstance", "action", "reason"):
            if not text[field]:
                errors.append(required(field))
            if len(text[field]) > EVENT_TEXT_LIMIT:
                errors.append(invalid(field, "", f"can have at most {EVENT_TEXT_LIMIT} characters"))
        if len(str(event.get("note") or "").encode()) > NOTE_LIMIT:
            errors.append(invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    return errors


def strict_event_errors(event: Obj) -> list[FieldError]:
    """The part of ValidateEventCreate for events.k8s.io/v1 (after the metadata checks)."""
    errors = []
    if not event.get("eventTime"):
        errors.append(required("eventTime"))
    if event.get("type") not in ("Normal", "Warning"):
        errors.append(invalid("type", "", f"has invalid value: {event.get('type') or ''}"))
    return errors


def check_create(info: KindInfo, obj: Obj, namespace: str | None) -> None:
    """Everything a create is validated against, in the real server's order; one 422 naming every problem."""
    meta = obj["metadata"]
    if (info.group, info.plural) == EVENTS_API:
        errors = legacy_event_errors(obj, namespace) + name_errors(info, meta) + strict_event_errors(obj)
    elif (info.group, info.plural) == LEASE_API:
        errors = name_errors(info, meta) + lease_errors(obj.get("spec") or {})
    else:
        errors = name_errors(info, meta)
    raise_invalid(info, meta, errors)


def check_update(info: KindInfo, obj: Obj) -> None:
    raise_invalid(
        info, obj["metadata"], lease_errors(obj.get("spec") or {}) if (info.group, info.plural) == LEASE_API else []
    )


def raise_invalid(info: KindInfo, meta: Obj, errors: list[FieldError]) -> None:
    if not errors:
        return
    name = str(meta.get("name") or "")
    # Events are validated as the internal core Event, whatever group they were sent to.
    group = "" if info.builtin and info.group in ("", "events.k8s.io") else info.group
    qualified = f"{info.kind}.{group}" if group else info.kind
    shown = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(str(e) for e in errors) + "]"
    details: Obj = {"name": name} if name else {}
    if group:
        details["group"] = group
    details.update(kind=info.kind, causes=[e.cause() for e in errors])
    raise ApiError(422, f'{qualified} "{name}" is invalid: {shown}', details=details)
