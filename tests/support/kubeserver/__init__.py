"""A local Kubernetes API server for tests and benchmarks.

It speaks real HTTP/1.1 (keep-alive, Content-Length on every answer) on 127.0.0.1, so the official
``kubernetes`` client and raw urllib3 work against it unmodified::

    with KubeTestServer() as server:
        server.register_kai_and_nvca_kinds()
        server.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
        api = kubernetes.client.CoreV1Api(
            kubernetes.client.ApiClient(kubernetes.client.Configuration(host=server.url)))
        api.list_node(label_selector="nvidia.com/gpu.present=true", limit=500)

What it models, faithfully to the real server where the cluster reader can observe it:

* discovery (``/api``, ``/api/v1``, ``/apis``, ``/apis/<g>``, ``/apis/<g>/<v>``, ``/version``);
  custom kinds exist only after ``register_kind`` so "KAI not installed" is testable; below ``/apis`` a
  group nobody serves, or an unknown version or resource of a custom resource group, is a plain-text
  ``404 page not found`` (a compiled-in group's is a ``Status``), as on the real server;
* get / list / create / update / patch / delete, cluster-scoped and namespaced, plus cluster-wide
  lists of namespaced kinds; list items of built-in kinds carry no ``apiVersion``/``kind``, those of
  custom resources do, as on the real server; a PUT to a missing Lease or Event creates it (409 when the
  body names the uid of a deleted one), as their registries allow;
* the real server's checks on what kai-gitops writes, with its messages (``_validate.py``): object names
  and ``generateName`` prefixes (422; a generated name keeps 58 characters of the prefix), ``MicroTime``
  fields of Leases and Events that do not decode (400), Lease specs and events.k8s.io/v1 Events (422);
* label selectors (every operator) and per-kind field selectors, with the real 400s;
* ``limit``/``continue`` paging in etcd key order (namespace, then name), ``remainingItemCount``
  when unfiltered, and 410 ``Expired`` for stale tokens, offering an inconsistent continue token (``rv``
  -1: the rest of the list as it is now) like the real server;
* merge, JSON and (simplified) server-side-apply patches, ``dryRun=All``, ``resourceVersion``
  preconditions (409 Conflict), delete preconditions on ``uid``/``resourceVersion`` with the real
  message, 409 AlreadyExists, ``Status`` bodies for every error;
* the ``services/<name>[:<port>]/proxy/<path>`` subresource with canned backend answers, or answers
  computed per request (``set_proxy_handler``; the snapshot mode uses it for NVCA's ``/healthz``); with
  neither a backend nor a Service object it is 404 ``services "<name>" not found``, with a Service but no
  backend 503 "no endpoints available" (a Service whose pods are not ready);
* ``coordination.k8s.io/v1`` Leases and ``events.k8s.io/v1`` Events as the plain objects they are (a
  Lease's locking is the ``resourceVersion`` precondition on update, which is modelled);
* fault injection (status + Retry-After, delays, connection resets, expired continue tokens, a list that
  never ends (its first page again and again, with a repeated or a fresh ``continue`` token), an HTML
  page instead of JSON as a proxy in front may answer, a ``before`` hook that changes an object just
  before the request is served so the server's own 409 Conflict follows), each fault optionally letting
  its first ``after`` matching requests through (e.g. a dry-run before the write);
* a request log (``server.requests``: method, path, query, status) for asserting what a client did;
* a standalone mode serving a snapshot until killed (``python -m tests.support.kubeserver --snapshot FILE
  --kubeconfig-out FILE``; see ``__main__.py`` and ``_snapshot.py``).

What this server does not model
-------------------------------
The real tier runs what is not modelled here: tests/real/ against etcd + kube-apiserver
(tests/support/envtest), and tests/real/test_kubeserver_differential.py sends every request shape
kai-gitops sends to both servers and compares the answers, so a difference the product can see fails there.

* **watch** (``?watch=true`` answers 405) and ``deletecollection``; discovery advertises only the
  verbs implemented here (create, delete, get, list, patch, update);
* **authentication / authorization / RBAC** (every request is allowed: a 403 only comes from an injected
  fault, shaped like the real server's), impersonation, API priority and fairness (429s only come from
  injected faults), audit;
* **admission**: no webhooks, no NamespaceLifecycle (objects may be created in namespaces that do
  not exist), no quota or LimitRange, no defaulting (e.g. ``spec.schedulerName`` stays unset unless
  given; field selectors then see ``""``);
* **validation** beyond the checks above: no OpenAPI/CRD schema validation (a Queue with ``quota: "lots"``
  or a PolicyReport result outside its enum is stored), pruning of unknown fields, CEL rules, immutable
  fields, or validation of other kinds' specs (Pods, Nodes, ...);
* **status subresources** (``/status``, ``/scale``, ``/log``, ``/exec``...): 404; writes to the main
  resource change ``.status`` too;
* **consistent-snapshot pagination**: each page reads the *current* objects after the token's key,
  so writes between pages show up (the real server serves all pages from the first page's snapshot:
  etcd's revision, or since Kubernetes 1.34 a watch-cache snapshot, which etcd compaction does not expire).
  The list ``metadata.resourceVersion`` of continued pages is the first page's, as on the real server;
* ``resourceVersion`` / ``resourceVersionMatch`` list parameters (lists are always "most recent"),
  and etcd compaction (only the token TTL and the ``expire_continue`` fault produce 410s; on the real
  server compaction expires the tokens of lists served from etcd, such as Events, which have no watch cache);
* **strategic merge patch** semantics: treated as a plain RFC 7386 merge patch (lists are replaced
  wholesale; ``patchMergeKey``, ``$patch``, ``$retainKeys``, ``$setElementOrder`` are ignored).
  Custom resources reject it with 415, exactly like the real server;
* **server-side apply**: the applied configuration is merge-patched onto the live object (or creates
  it); field ownership, conflicts between managers, ``force`` and removal of fields a manager stops
  applying are not modelled (kai-gitops writes merge patches with resourceVersion preconditions, which
  are). ``metadata.managedFields`` records one entry per (manager, operation) whose ``fieldsV1`` only
  lists map keys (lists are atomic). Non-apply writes record an ``Update``
  entry named after ``fieldManager`` or the User-Agent, like the real server;
* **deletion semantics**: no finalizers, graceful deletion, ``deletionTimestamp``, owner references
  or garbage collection; DELETE removes immediately and answers a ``Status`` Success (the real server
  answers the object itself for several built-in kinds, e.g. Pods);
* **Events**: core ``v1`` and ``events.k8s.io/v1`` Events are two separate stores here (one store with
  conversion on the real server), with no event aggregation, series or TTL; core v1 Events are not
  validated;
* request bodies are not kept in the request log;
* **multiple versions of one kind**: all registered versions share one store and are served without
  conversion (only ``apiVersion`` is rewritten);
* aggregated discovery (``apidiscovery.k8s.io``), OpenAPI (``/openapi/v2``, ``/openapi/v3``),
  protobuf/CBOR encodings, ``Table`` output, health endpoints of the API server itself;
* service proxy: Endpoints and ports are not consulted, only whether a Service object exists; answers
  come from ``set_healthz``/``set_proxy_response`` (backend 404 for other paths of a configured
  service). Query strings and request bodies are not forwarded;
* TLS and HTTP/2.
"""

from ._server import KAI_AND_NVCA_KINDS, Fault, KubeTestServer, RequestRecord, register_kai_and_nvca_kinds

__all__ = ["KAI_AND_NVCA_KINDS", "Fault", "KubeTestServer", "RequestRecord", "register_kai_and_nvca_kinds"]
