"""The Events `reconcile --apply` records on each changed object, created through the product's writer on the
real API server, which validates what the stand-in does not: the generateName and the note's size."""

from __future__ import annotations

import kubernetes
import pytest

from reconciler.core.refs import ObjectRef
from reconciler.plans.applied import ChangeResult, WriteResult
from reconciler.plans.plan import Change, FieldChange, Operation
from reconciler.plans.writable import LABEL_PATH
from reconciler.reconcile.apply import ClusterWriter
from reconciler.reconcile.events import EVENT_NAMESPACE, event_for
from tests.support.cluster_session import envtest_session
from tests.support.envtest import EnvTest

LONGEST = ".".join(["n" * 63] * 3 + ["n" * 61])  # a valid object name of 253 characters, dots included
LABEL = FieldChange(LABEL_PATH, "True", None)


@pytest.mark.parametrize(
    ("kind", "name", "fields"),
    [
        ("Queue", "default-queue", (FieldChange(("spec", "resources", "cpu", "quota"), 0, -1),)),
        ("Node", "gpu-node-2", (LABEL,)),
        ("Node", LONGEST, (LABEL,)),
        ("Node", "n" * 199 + "-x", (LABEL,)),  # cut after 200 characters it would end in '-'
        (
            "Queue",
            "many-fields",
            tuple(FieldChange(("spec", "resources", "cpu", f"f{i}"), i, i + 1) for i in range(200)),
        ),  # a note cut at 1024 bytes of "→"
    ],
)
def test_the_real_server_accepts_the_event_of_every_change(
    envtest: EnvTest, admin_client, kind: str, name: str, fields: tuple[FieldChange, ...]
) -> None:
    api = "scheduling.run.ai/v2" if kind == "Queue" else "v1"
    change = Change(ObjectRef(api, kind, name), Operation.UPDATE, fields, ("KAI-D-002",), "drift")
    session = envtest_session(envtest)
    try:
        body = event_for(
            ChangeResult(change, WriteResult.APPLIED, resource_version="7", uid="0a1b"),
            plan_id="p1",
            holder="host_1234",
        )
        created = ClusterWriter(session).create_event(EVENT_NAMESPACE, body)
    finally:
        session.close()
    stored = kubernetes.client.EventsV1Api(admin_client).read_namespaced_event(
        created["metadata"]["name"], EVENT_NAMESPACE
    )
    assert stored.metadata.name.startswith(body["metadata"]["generateName"][:58])
    assert (stored.regarding.kind, stored.regarding.name, stored.note) == (kind, name, body["note"])
