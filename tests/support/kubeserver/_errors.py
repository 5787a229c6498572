"""Kubernetes ``Status`` error bodies, shaped like the real API server's (apimachinery/pkg/api/errors)."""

from __future__ import annotations

from typing import Any

# The reason the real server puts next to each HTTP code (metav1.StatusReason).
REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}

CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter, or use the continue token in this response to "
    "retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - "
    "objects that were created, modified, or deleted between the time the first chunk was returned and now may "
    "show up in the list."
)


class ApiError(Exception):
    """An error the server answers with a ``Status`` body; raised anywhere below the HTTP layer."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason if reason is not None else REASONS.get(code, "")
        self.details = details
        self.metadata = metadata

    def status_body(self) -> dict[str, Any]:
        return status_body(self.code, self.message, self.reason, self.details, self.metadata)


def status_body(
    code: int, message: str, reason: str, details: dict[str, Any] | None, metadata: dict[str, Any] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": metadata or {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        body["details"] = details
    return body


def success_status(details: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def resource_details(group: str, plural: str, name: str) -> dict[str, Any]:
    # Core-group details omit "group", as the real server does.
    details: dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = plural
    return details


def qualified_resource(group: str, plural: str) -> str:
    """``pods`` for the core group, ``queues.scheduling.run.ai`` otherwise (GroupResource.String())."""
    return f"{plural}.{group}" if group else plural


def not_found(group: str, plural: str, name: str) -> ApiError:
    return ApiError(
        404,
        f'{qualified_resource(group, plural)} "{name}" not found',
        details=resource_details(group, plural, name),
    )


def already_exists(group: str, plural: str, name: str) -> ApiError:
    return ApiError(
        409,
        f'{qualified_resource(group, plural)} "{name}" already exists',
        reason="AlreadyExists",
        details=resource_details(group, plural, name),
    )


def conflict(group: str, plural: str, name: str, why: str) -> ApiError:
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {qualified_resource(group, plural)} "{name}": {why}',
        details=resource_details(group, plural, name),
    )


MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"


def precondition_failed(group: str, kind: str, name: str, what: str, wanted: str, actual: str) -> ApiError:
    """A delete whose preconditions (uid, resourceVersion) do not hold: the real server names the Kind here."""
    qualified = f"{kind}.{group}" if group else kind
    why = {"UID": "deleted and then recreated", "ResourceVersion": "modified"}[what]
    details: dict[str, Any] = {"name": name, **({"group": group} if group else {}), "kind": kind}
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {qualified} "{name}": the {what} in the precondition ({wanted}) does not '
        f"match the {what} in record ({actual}). The object might have been {why}",
        details=details,
    )


class NoHandler(Exception):
    """No handler serves the path: below /apis, a group or version nobody serves, or a resource a custom resource
    group does not serve. The real server answers those with a plain-text 404, not a Status."""


def page_not_found() -> ApiError:
    # What the real server answers for any path no handler is registered for.
    return ApiError(
        404,
        "the server could not find the requested resource",
        details={"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]},
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def invalid_options(kind: str, field: str, detail: str) -> ApiError:
    """422 for bad query options, e.g. apply without fieldManager (ValidatePatchOptions)."""
    return ApiError(
        422,
        f'{kind}.meta.k8s.io "" is invalid: {field}: {detail}',
        details={"group": "meta.k8s.io", "kind": kind, "causes": [{"message": detail, "field": field}]},
    )


def method_not_allowed() -> ApiError:
    return ApiError(405, "the server does not allow this method on the requested resource")


def expired(inconsistent_continue: str | None = None) -> ApiError:
    """410 for a continue token the store no longer holds; the real server offers a token that continues the
    list from where it was, at the current state (``inconsistent_continue``)."""
    metadata = {"continue": inconsistent_continue} if inconsistent_continue else None
    return ApiError(410, CONTINUE_EXPIRED, reason="Expired", metadata=metadata)
