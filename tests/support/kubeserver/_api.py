"""Request handling independent of HTTP: routing, discovery, CRUD verbs, list paging, service proxy."""

from __future__ import annotations

import functools
import secrets
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import orjson

from . import _patch as patches
from . import _validate as validate
from ._errors import (
    MODIFIED,
    ApiError,
    NoHandler,
    already_exists,
    bad_request,
    conflict,
    invalid_options,
    method_not_allowed,
    not_found,
    page_not_found,
    precondition_failed,
    resource_details,
    success_status,
)
from ._selectors import Predicate, field_predicate, label_predicate
from ._store import (
    KindInfo,
    Registry,
    decode_continue,
    decode_stored,
    encode_continue,
    encode_stored,
    object_key,
    typed_json,
)

Obj = dict[str, Any]

JSON = "application/json"
VERSION_INFO = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.0-kubeserver",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2024-08-13T00:00:00Z",
    "goVersion": "go1.22.5",
    "compiler": "gc",
    "platform": "linux/amd64",
}
# Subresources the real server advertises for the kinds we serve; only services/proxy is implemented.
_SUBRESOURCES = {
    ("", "services"): {
        "name": "services/proxy",
        "singularName": "",
        "namespaced": True,
        "kind": "ServiceProxyOptions",
        "verbs": ["create", "delete", "get", "patch", "update"],
    },
}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    user_agent: str
    body: bytes


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)


def json_response(status: int, obj: Any) -> Response:
    return Response(status, orjson.dumps(obj))


def error_response(error: ApiError) -> Response:
    return json_response(error.code, error.status_body())


def now_timestamp() -> str:
    return _format_second(int(time.time()))


@functools.lru_cache(maxsize=4)
def _format_second(second: int) -> str:
    # Timestamps have 1 s resolution and strftime is slow enough to matter in 50,000-object bulk loads.
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))


def with_type(info: KindInfo, obj: Obj) -> Obj:
    """Stored objects lack apiVersion/kind; single-object answers carry them first, like the real server."""
    return {"apiVersion": info.api_version, "kind": info.kind, **obj}


def strip_type(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


def _spec_part(obj: Obj) -> Obj:
    # What metadata.generation tracks: everything except metadata and status (the CRD rule).
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


class Api:
    """Server state plus the handlers; every entry point takes ``lock`` around store access."""

    def __init__(self, page_token_ttl_s: float) -> None:
        self.lock = threading.RLock()
        self.registry = Registry()
        self.resource_version = 0
        self.page_token_ttl_s = page_token_ttl_s
        self.server_address = "127.0.0.1:0"
        self.proxies: dict[tuple[str, str], dict[tuple[str, str], Response | Callable[[], Response]]] = {}

    def next_rv(self) -> str:
        self.resource_version += 1
        return str(self.resource_version)

    # --- entry point -------------------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        try:
            return self._route(request, [unquote(s) for s in request.path.split("/") if s])
        except ApiError as error:
            return error_response(error)
        except NoHandler:
            return Response(404, b"404 page not found\n", "text/plain; charset=utf-8")
        except Exception:  # a bug in the test server must surface as a readable 500, not a dead socket
            return error_response(ApiError(500, f"Internal error occurred: {traceback.format_exc()}"))

    def _route(self, request: Request, segs: list[str]) -> Response:
        if not segs:
            return self._discovery(request, lambda: {"paths": ["/api", "/api/v1", "/apis", "/version"]})
        if segs == ["version"]:
            return self._discovery(request, lambda: VERSION_INFO)
        if segs[0] == "api":
            return self._route_core(request, segs[1:])
        if segs[0] == "apis":
            return self._route_groups(request, segs[1:])
        raise page_not_found()

    def _route_core(self, request: Request, segs: list[str]) -> Response:
        if not segs:
            return self._discovery(request, self._api_versions)
        if segs[0] != "v1":
            raise page_not_found()
        if len(segs) == 1:
            return self._discovery(request, lambda: self._resource_list("", "v1"))
        return self._resource(request, "", "v1", segs[1:])

    def _route_groups(self, request: Request, segs: list[str]) -> Response:
        if not segs:
            return self._discovery(request, self._group_list)
        versions = self.registry.group_versions().get(segs[0])
        if not versions:
            raise NoHandler
        if len(segs) > 1 and segs[1] not in versions:
            raise page_not_found() if _builtin_group(segs[0]) else NoHandler
        if len(segs) == 1:
            return self._discovery(
                request,
                lambda: {"kind": "APIGroup", "apiVersion": "v1", **self._group_entry(segs[0], versions)},
            )
        if len(segs) == 2:
            return self._discovery(request, lambda: self._resource_list(segs[0], segs[1]))
        return self._resource(request, segs[0], segs[1], segs[2:])

    # --- discovery ---------------------------------------------------------------------------------

    def _discovery(self, request: Request, build: Callable[[], Any]) -> Response:
        if request.method != "GET":
            raise method_not_allowed()
        with self.lock:
            return json_response(200, build())

    def _api_versions(self) -> Obj:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": self.server_address}],
        }

    @staticmethod
    def _group_entry(group: str, versions: list[str]) -> Obj:
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": entries, "preferredVersion": entries[0]}

    def _group_list(self) -> Obj:
        groups = self.registry.group_versions()
        entries = [self._group_entry(g, groups[g]) for g in sorted(groups) if g]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": entries}

    def _resource_list(self, group: str, version: str) -> Obj:
        resources = []
        for info in sorted(self.registry.kinds_in(group, version), key=lambda i: i.plural):
            resources.append(info.discovery())
            if sub := _SUBRESOURCES.get((group, info.plural)):
                resources.append(sub)
        group_version = f"{group}/{version}" if group else version
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": group_version,
            "resources": resources,
        }

    # --- resource routing --------------------------------------------------------------------------

    def _resource(self, request: Request, group: str, version: str, rest: list[str]) -> Response:
        namespace: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        info = self.registry.resource(group, version, rest[0])
        name = rest[1] if len(rest) > 1 else None
        if (
            info is None
            or (namespace is not None and not info.namespaced)
            or (info.namespaced and namespace is None and name is not None)
        ):
            raise page_not_found() if _builtin_group(group) else NoHandler
        if len(rest) > 2:
            return self._subresource(request, info, namespace, rest[1], rest[2:])
        if name is None:
            return self._collection(request, info, namespace)
        return self._item(request, info, namespace, name)

    def _collection(self, request: Request, info: KindInfo, namespace: str | None) -> Response:
        if request.method == "GET":
            return self._list(request, info, namespace)
        if request.method == "POST" and (namespace is not None or not info.namespaced):
            return self._create(request, info, namespace)
        raise method_not_allowed()

    def _item(self, request: Request, info: KindInfo, namespace: str | None, name: str) -> Response:
        handlers = {"GET": self._get, "PUT": self._replace, "PATCH": self._patch, "DELETE": self._delete}
        handler = handlers.get(request.method)
        if handler is None:
            raise method_not_allowed()
        return handler(request, info, namespace, name)

    def _subresource(
        self, request: Request, info: KindInfo, namespace: str | None, name: str, sub: list[str]
    ) -> Response:
        if (info.group, info.plural) == ("", "services") and sub[0] == "proxy" and namespace is not None:
            return self._proxy(namespace, name, "/".join(sub[1:]))
        raise page_not_found()

    # --- reads -------------------------------------------------------------------------------------

    def _get(self, request: Request, info: KindInfo, namespace: str | None, name: str) -> Response:
        with self.lock:
            stored = self.registry.store(info).objects.get(object_key(namespace, name))
        if stored is None:
            raise not_found(info.group, info.plural, name)
        return Response(200, typed_json(info, stored))

    def _list(self, request: Request, info: KindInfo, namespace: str | None) -> Response:
        query = request.query
        if query.get("watch") in ("true", "1"):
            raise ApiError(405, "watch is not modelled by KubeTestServer", reason="MethodNotAllowed")
        predicate = _combine(
            label_predicate(query.get("labelSelector", "")),
            field_predicate(query.get("fieldSelector", ""), info.group, info.plural, info.builtin),
        )
        limit = _parse_limit(query.get("limit"))
        start, snapshot_rv = None, None
        if query.get("continue"):
            start, snapshot_rv = decode_continue(query["continue"], self.page_token_ttl_s)
        with self.lock:
            # rv -1: the token a 410 offers, continuing at the current state
            snapshot_rv = self.resource_version if snapshot_rv is None or snapshot_rv < 0 else snapshot_rv
            page = self.registry.store(info).page(namespace, start, limit, predicate)
        metadata: Obj = {"resourceVersion": str(snapshot_rv)}
        if page.has_more and page.last_key is not None:
            metadata["continue"] = encode_continue(page.last_key, snapshot_rv)
            if page.remaining is not None:
                metadata["remainingItemCount"] = page.remaining
        body = {
            "kind": f"{info.kind}List",
            "apiVersion": info.api_version,
            "metadata": metadata,
            "items": [orjson.Fragment(item[0] if info.builtin else typed_json(info, item)) for item in page.items],
        }
        # Encoded outside the lock: stored encodings are immutable bytes.
        return json_response(200, body)

    # --- writes ------------------------------------------------------------------------------------

    def _create(self, request: Request, info: KindInfo, namespace: str | None) -> Response:
        dry_run = _dry_run(request.query, "CreateOptions")
        obj = _decode_object(patches.decode_json(request.body), info)
        validate.check_micro_times(info, obj)
        meta = obj["metadata"]
        if meta.get("resourceVersion"):
            raise ApiError(500, "resourceVersion should not be set on objects to be created")
        _check_namespace(info, meta, namespace)
        if not meta.get("name"):
            meta["name"] = _generate_name(info, meta)
        validate.check_create(info, obj, namespace)
        manager = _manager(request)
        with self.lock:
            store = self.registry.store(info)
            key = object_key(namespace, meta["name"])
            if key in store.objects:
                raise already_exists(info.group, info.plural, meta["name"])
            stored = self._fill_new(info, obj, namespace, dry_run, (manager, "Update", obj))
            if not dry_run:
                store.put(key, encode_stored(info, stored))
        return json_response(201, with_type(info, stored))

    def _replace(self, request: Request, info: KindInfo, namespace: str | None, name: str) -> Response:
        dry_run = _dry_run(request.query, "UpdateOptions")
        obj = _decode_object(patches.decode_json(request.body), info)
        validate.check_micro_times(info, obj)
        _check_identity(info, obj["metadata"], namespace, name)
        validate.check_update(info, obj)
        with self.lock:
            store = self.registry.store(info)
            if object_key(namespace, name) not in store.objects and (info.group, info.plural) in _CREATE_ON_UPDATE:
                return self._create_on_update(request, info, namespace, obj, dry_run)
            current = self._current(info, namespace, name)
            self._check_resource_version(info, current, obj, name)
            stored = self._store_update(info, current, obj, dry_run, (_manager(request), "Update", obj))
        return json_response(200, with_type(info, stored))

    def _create_on_update(
        self, request: Request, info: KindInfo, namespace: str | None, obj: Obj, dry_run: bool
    ) -> Response:
        """A PUT to a Lease or Event that does not exist creates it, unless the body names the uid of one that
        did (a holder renewing a deleted Lease): then the storage precondition fails, a 409."""
        meta = obj["metadata"]
        if meta.get("uid"):
            key = "/".join(p for p in ("/registry", info.plural, namespace, meta["name"]) if p)
            raise conflict(
                info.group,
                info.plural,
                meta["name"],
                f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, "
                f"AdditionalErrorMsg: Precondition failed: UID in precondition: {meta['uid']}, "
                "UID in object meta: ",
            )
        meta.pop("resourceVersion", None)
        validate.check_create(info, obj, namespace)
        stored = self._fill_new(info, obj, namespace, dry_run, (_manager(request), "Update", obj))
        if not dry_run:
            self.registry.store(info).put(object_key(namespace, meta["name"]), encode_stored(info, stored))
        return json_response(201, with_type(info, stored))

    def _patch(self, request: Request, info: KindInfo, namespace: str | None, name: str) -> Response:
        content_type = request.content_type
        if content_type == patches.APPLY:
            return self._apply(request, info, namespace, name)
        if "force" in request.query:
            raise invalid_options("PatchOptions", "force", "Forbidden: may not be specified for non-apply patch")
        dry_run = _dry_run(request.query, "PatchOptions")
        body = patches.decode_json(request.body)
        with self.lock:
            current = self._current(info, namespace, name)
            patched = _apply_patch(info, content_type, with_type(info, current), body)
            obj = _decode_object(patched, info)
            validate.check_micro_times(info, obj)
            _check_identity(info, obj["metadata"], namespace, name)
            validate.check_update(info, obj)
            self._check_resource_version(info, current, obj, name)
            fields = body if isinstance(body, dict) else {}
            stored = self._store_update(info, current, obj, dry_run, (_manager(request), "Update", fields))
        return json_response(200, with_type(info, stored))

    def _apply(self, request: Request, info: KindInfo, namespace: str | None, name: str) -> Response:
        """Server-side apply, simplified: create if absent, else merge-patch the applied configuration."""
        manager = request.query.get("fieldManager", "")
        if not manager:
            raise invalid_options("PatchOptions", "fieldManager", "Required value: is required for apply patch")
        dry_run = _dry_run(request.query, "PatchOptions")
        applied = patches.decode_apply_body(request.body)
        if not isinstance(applied, dict) or not applied.get("apiVersion") or not applied.get("kind"):
            raise bad_request("apply patch must be an object with apiVersion and kind")
        config = _decode_object(applied, info)
        _check_identity(info, config["metadata"], namespace, name)
        managed = (manager, "Apply", config)
        with self.lock:
            store = self.registry.store(info)
            existing = store.objects.get(object_key(namespace, name))
            if existing is None:
                validate.check_micro_times(info, config)
                validate.check_create(info, config, namespace)
                stored = self._fill_new(info, config, namespace, dry_run, managed)
                if not dry_run:
                    store.put(object_key(namespace, name), encode_stored(info, stored))
                return json_response(201, with_type(info, stored))
            current = decode_stored(existing)
            merged = _decode_object(patches.merge_patch(with_type(info, current), applied), info)
            validate.check_micro_times(info, merged)
            validate.check_update(info, merged)
            self._check_resource_version(info, current, merged, name)
            stored = self._store_update(info, current, merged, dry_run, managed)
        return json_response(200, with_type(info, stored))

    def _delete(self, request: Request, info: KindInfo, namespace: str | None, name: str) -> Response:
        options = patches.decode_json(request.body) if request.body.strip() else {}
        options = options if isinstance(options, dict) else {}
        dry_run = _dry_run(request.query, "DeleteOptions") or options.get("dryRun") == ["All"]
        with self.lock:
            current = self._current(info, namespace, name)
            _check_preconditions(info, current, options.get("preconditions") or {}, name)
            if not dry_run:
                self.registry.store(info).remove(object_key(namespace, name))
                self.next_rv()
        details = resource_details(info.group, info.plural, name)
        details["uid"] = current["metadata"].get("uid", "")
        return json_response(200, success_status(details))

    # --- write helpers (call with lock held) -------------------------------------------------------

    def _current(self, info: KindInfo, namespace: str | None, name: str) -> Obj:
        stored = self.registry.store(info).objects.get(object_key(namespace, name))
        if stored is None:
            raise not_found(info.group, info.plural, name)
        return decode_stored(stored)

    @staticmethod
    def _check_resource_version(info: KindInfo, current: Obj, new: Obj, name: str) -> None:
        # A resourceVersion in the request is an optimistic-concurrency precondition.
        wanted = new["metadata"].get("resourceVersion")
        if wanted and wanted != current["metadata"].get("resourceVersion"):
            raise conflict(info.group, info.plural, name, MODIFIED)

    def _fill_new(
        self, info: KindInfo, obj: Obj, namespace: str | None, dry_run: bool, managed: tuple[str, str, Obj]
    ) -> Obj:
        meta = obj["metadata"]
        if info.namespaced:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        meta["uid"] = str(uuid.uuid4())
        meta["generation"] = 1
        meta["creationTimestamp"] = now_timestamp()
        # A dry-run create never reaches storage, so the real server leaves resourceVersion empty.
        if not dry_run:
            meta["resourceVersion"] = self.next_rv()
        meta["managedFields"] = _managed_fields([], info, *managed)
        return obj

    def _store_update(
        self, info: KindInfo, current: Obj, obj: Obj, dry_run: bool, managed: tuple[str, str, Obj]
    ) -> Obj:
        meta, old = obj["metadata"], current["metadata"]
        for key in ("name", "namespace", "uid", "creationTimestamp"):
            if key in old:
                meta[key] = old[key]
        generation = int(old.get("generation") or 1)
        meta["generation"] = generation + 1 if _spec_part(obj) != _spec_part(current) else generation
        # Real servers keep the old managedFields when an update leaves them out.
        previous = meta.get("managedFields") or old.get("managedFields") or []
        meta["managedFields"] = _managed_fields(previous, info, *managed)
        meta["resourceVersion"] = old.get("resourceVersion", "") if dry_run else self.next_rv()
        if not dry_run:
            self.registry.store(info).put(object_key(meta.get("namespace"), meta["name"]), encode_stored(info, obj))
        return obj

    # --- service proxy -----------------------------------------------------------------------------

    def set_proxy(
        self, namespace: str, service: str, port: str, path: str, response: Response | Callable[[], Response]
    ) -> None:
        with self.lock:
            self.proxies.setdefault((namespace, service), {})[(port, path.strip("/"))] = response

    def _proxy(self, namespace: str, name_spec: str, path: str) -> Response:
        """``<name>``, ``<name>:<port>`` or ``<scheme>:<name>:<port>``, as the real proxy accepts."""
        parts = name_spec.split(":")
        service = parts[1] if len(parts) == 3 else parts[0]
        port = parts[-1] if len(parts) > 1 else None
        with self.lock:
            routes = self.proxies.get((namespace, service))
            services = self.registry.resource("", "v1", "services")
            exists = services is not None and object_key(namespace, service) in self.registry.store(services).objects
        if not routes:
            if not exists:  # a configured backend stands for the Service; without either there is nothing
                raise not_found("", "services", service)
            raise ApiError(503, f'no endpoints available for service "{service}"')
        for (route_port, route_path), response in routes.items():
            if route_path == path.strip("/") and port in (None, route_port):
                if callable(response):  # a backend whose answer depends on the current objects
                    response = response()
                return Response(response.status, response.body, response.content_type, dict(response.headers))
        # The backend, not the API server, answers unknown paths.
        return Response(404, b"404 page not found\n", "text/plain; charset=utf-8")


# --- module helpers --------------------------------------------------------------------------------


def _combine(first: Predicate | None, second: Predicate | None) -> Predicate | None:
    if first is None or second is None:
        return first or second
    return lambda obj: first(obj) and second(obj)


def _parse_limit(raw: str | None) -> int:
    if raw is None or raw == "":
        return 0
    try:
        return max(0, int(raw))
    except ValueError:
        raise bad_request(f'limit: Invalid value: "{raw}": must be an integer') from None


def _dry_run(query: dict[str, str], options_kind: str) -> bool:
    value = query.get("dryRun")
    if value is None or value == "":
        return False
    if value != "All":
        raise invalid_options(options_kind, "dryRun", f'Unsupported value: "{value}": supported values: "All"')
    return True


def _decode_object(obj: Any, info: KindInfo) -> Obj:
    """Check apiVersion/kind against the URL; return the object without them and with its own metadata dict."""
    if not isinstance(obj, dict):
        raise bad_request("the body of the request must be a JSON object")
    if obj.get("apiVersion") not in (None, "", info.api_version):
        raise bad_request(
            f"the API version in the data ({obj['apiVersion']}) does not match the expected API version "
            f"({info.api_version})"
        )
    if obj.get("kind") not in (None, "", info.kind):
        raise bad_request(f"the kind in the data ({obj['kind']}) does not match the expected kind ({info.kind})")
    body = strip_type(obj)
    if not isinstance(body.get("metadata") or {}, dict):
        raise bad_request("metadata must be an object")
    body["metadata"] = dict(body.get("metadata") or {})
    return body


def _check_namespace(info: KindInfo, meta: Obj, namespace: str | None) -> None:
    given = meta.get("namespace")
    if info.namespaced and given and given != namespace:
        raise bad_request("the namespace of the provided object does not match the namespace sent on the request")


def _check_identity(info: KindInfo, meta: Obj, namespace: str | None, name: str) -> None:
    if meta.get("name") != name:
        raise bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})")
    _check_namespace(info, meta, namespace)


def _check_preconditions(info: KindInfo, current: Obj, preconditions: Obj, name: str) -> None:
    meta = current["metadata"]
    uid, rv = preconditions.get("uid"), preconditions.get("resourceVersion")
    if uid and uid != meta.get("uid"):
        raise precondition_failed(info.group, info.kind, name, "UID", uid, str(meta.get("uid")))
    if rv and rv != meta.get("resourceVersion"):
        raise precondition_failed(info.group, info.kind, name, "ResourceVersion", rv, str(meta.get("resourceVersion")))


def _generate_name(info: KindInfo, meta: Obj) -> str:
    prefix = meta.get("generateName")
    if not prefix:
        raise ApiError(
            422, f'{info.kind} "" is invalid: metadata.name: Required value: name or generateName is required'
        )
    alphabet = "bcdfghjklmnpqrstvwxz2456789"  # same consonant/digit alphabet as utilrand.String
    return validate.generated_name(prefix, "".join(secrets.choice(alphabet) for _ in range(5)))


def _builtin_group(group: str) -> bool:
    """Compiled-in groups answer unknown paths with a Status; custom resource groups (and unknown ones) do not."""
    return "." not in group or group.endswith(".k8s.io")


def _manager(request: Request) -> str:
    # Without fieldManager the real server names the manager after the User-Agent's first segment.
    if manager := request.query.get("fieldManager"):
        return manager
    return request.user_agent.split("/")[0] or "unknown"


def _managed_fields(previous: list[Obj], info: KindInfo, manager: str, operation: str, obj: Obj) -> list[Obj]:
    """Upsert one entry per (manager, operation); fieldsV1 is an approximation (see package docstring)."""
    fields = patches.field_set({k: v for k, v in obj.items() if k != "metadata"})
    labels_and_annotations = {k: obj.get("metadata", {}).get(k) for k in ("labels", "annotations")}
    meta_fields = patches.field_set({k: v for k, v in labels_and_annotations.items() if v})
    if meta_fields:
        fields["f:metadata"] = meta_fields
    entry = {
        "manager": manager,
        "operation": operation,
        "apiVersion": info.api_version,
        "time": now_timestamp(),
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    kept = [e for e in previous if (e.get("manager"), e.get("operation")) != (manager, operation)]
    return [*kept, entry]


# Kinds whose registry strategy allows create on update (of those served here).
_CREATE_ON_UPDATE = {("coordination.k8s.io", "leases"), ("", "events"), ("events.k8s.io", "events")}

_PATCH_TYPES_BUILTIN = [patches.JSON_PATCH, patches.MERGE, patches.STRATEGIC, patches.APPLY]
_PATCH_TYPES_CUSTOM = [patches.JSON_PATCH, patches.MERGE, patches.APPLY]


def _apply_patch(info: KindInfo, content_type: str, current: Obj, body: Any) -> Any:
    if content_type == patches.MERGE or (content_type == patches.STRATEGIC and info.builtin):
        # Strategic merge is treated as a plain merge patch: list merge keys and $patch directives
        # are not modelled. Custom resources reject it, exactly like the real server (415).
        if not isinstance(body, dict):
            raise bad_request("merge patch body must be a JSON object")
        return patches.merge_patch(current, body)
    if content_type == patches.JSON_PATCH:
        return patches.json_patch(current, body)
    accepted = ", ".join(_PATCH_TYPES_BUILTIN if info.builtin else _PATCH_TYPES_CUSTOM)
    raise ApiError(415, f"the body of the request was in an unknown format - accepted media types include: {accepted}")


def register_defaults(registry: Registry) -> None:
    core = [
        ("Node", "nodes", False),
        ("Pod", "pods", True),
        ("Secret", "secrets", True),
        ("ConfigMap", "configmaps", True),
        ("Namespace", "namespaces", False),
        ("Event", "events", True),
        ("Service", "services", True),
        ("ServiceAccount", "serviceaccounts", True),
    ]
    for kind, plural, namespaced in core:
        registry.register(KindInfo("", "v1", kind, plural, namespaced))
    # What kai-gitops reads of the KAI operator's operands and the chart's deployer Job (plain objects here).
    registry.register(KindInfo("apps", "v1", "Deployment", "deployments", True))
    registry.register(KindInfo("batch", "v1", "Job", "jobs", True))
    # Plain object kinds on the real server too: a Lease is only its spec (holder, renew time), with
    # resourceVersion preconditions doing the locking; events.k8s.io/v1 Events share storage with core
    # Events there (served here as a separate store: not modelled).
    registry.register(KindInfo("coordination.k8s.io", "v1", "Lease", "leases", True))
    registry.register(KindInfo("events.k8s.io", "v1", "Event", "events", True))
    registry.register(
        KindInfo("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False)
    )
