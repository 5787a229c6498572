"""Patch algorithms: RFC 7386 merge patch, RFC 6902 JSON patch, and request-body decoding."""

from __future__ import annotations

import io
from typing import Any

import orjson
from ruamel.yaml import YAML, YAMLError

from ._errors import ApiError, bad_request

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
APPLY_CBOR = "application/apply-patch+cbor"


def clone(value: Any) -> Any:
    """Deep copy via orjson: several times faster than copy.deepcopy for JSON-shaped data."""
    return orjson.loads(orjson.dumps(value))


def decode_json(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise bad_request(f"error decoding request body: {exc}") from None


def decode_apply_body(body: bytes) -> Any:
    """Apply bodies may be JSON or YAML; JSON is tried first because it is what most clients send."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    try:
        return YAML(typ="safe", pure=True).load(io.BytesIO(body))
    except YAMLError as exc:
        raise bad_request(f"error decoding YAML: {exc}") from None


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, everything else (lists too) replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# --- RFC 6902 --------------------------------------------------------------------------------------


def _patch_error(message: str) -> ApiError:
    # The real server answers 422 when a well-formed JSON patch cannot be applied.
    return ApiError(422, message)


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise _patch_error(f'invalid JSON pointer "{path}"')
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _index(container: list[Any], token: str, *, for_add: bool) -> int:
    if token == "-" and for_add:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise _patch_error(f"invalid array index: {token}")
    index = int(token)
    limit = len(container) if for_add else len(container) - 1
    if index > limit:
        raise _patch_error(f"array index out of bounds: {index}")
    return index


def _parent(doc: Any, tokens: list[str]) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, for_add=False)]
        else:
            raise _patch_error(f'missing path element "{token}"')
    return node


def _get(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens)
    if isinstance(parent, dict):
        if tokens[-1] not in parent:
            raise _patch_error(f'missing value at "{path}"')
        return parent[tokens[-1]]
    if isinstance(parent, list):
        return parent[_index(parent, tokens[-1], for_add=False)]
    raise _patch_error(f'missing value at "{path}"')


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens)
    if isinstance(parent, dict):
        parent[tokens[-1]] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, tokens[-1], for_add=True), value)
    else:
        raise _patch_error(f'cannot add at "{path}"')
    return doc


def _remove(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        raise _patch_error("cannot remove the document root")
    parent = _parent(doc, tokens)
    if isinstance(parent, dict) and tokens[-1] in parent:
        del parent[tokens[-1]]
    elif isinstance(parent, list):
        del parent[_index(parent, tokens[-1], for_add=False)]
    else:
        raise _patch_error(f'unable to remove nonexistent key "{tokens[-1]}"')
    return doc


def _apply_op(doc: Any, op: dict[str, Any]) -> Any:
    kind = op.get("op")
    path = op.get("path")
    if not isinstance(path, str):
        raise bad_request(f"json patch operation is missing a path: {op}")
    if kind == "add":
        return _add(doc, path, clone(op.get("value")))
    if kind == "remove":
        return _remove(doc, path)
    if kind == "replace":
        _get(doc, path)  # replace requires the target to exist
        return _add(_remove(doc, path), path, clone(op.get("value"))) if path else clone(op.get("value"))
    if kind == "test":
        if _get(doc, path) != op.get("value"):
            raise _patch_error(f"testing value {path} failed: test failed")
        return doc
    if kind in ("move", "copy"):
        value = clone(_get(doc, str(op.get("from", ""))))
        if kind == "move":
            doc = _remove(doc, str(op.get("from", "")))
        return _add(doc, path, value)
    raise bad_request(f"Unexpected kind: {kind}")


def json_patch(doc: Any, ops: Any) -> Any:
    """Apply RFC 6902 operations to a private copy of ``doc``; all-or-nothing like the real server."""
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    result = clone(doc)
    for op in ops:
        result = _apply_op(result, op)
    return result


def field_set(value: Any) -> dict[str, Any]:
    """A FieldsV1-like set of the map keys in ``value``; lists are treated as atomic (not modelled)."""
    if not isinstance(value, dict):
        return {}
    return {f"f:{key}": field_set(child) for key, child in value.items()}
