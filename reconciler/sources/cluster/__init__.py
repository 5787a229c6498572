"""Live state from a cluster: kubeconfig or in-cluster credentials, paged server-filtered reads, retries.

    session = ClusterSessions(kubeconfig, context, guard=check_write).open(repo_kube_context)   # session.py
    live = session.read_live()                     # complete LiveState, or UserError: never partial
    read = cluster_reader(kubeconfig, context)     # a reader alone (bench/live_read.py), no session kept

`read_live(client, sink)` feeds any ObjectSink (LiveStateBuilder, snapshot writer, or a Tee of both).

Read-only RBAC the reader needs (a CronJob's ClusterRole):
  apiextensions.k8s.io customresourcedefinitions: get      scheduling.run.ai queues: list
  kai.scheduler schedulingshards: get                      nvcf.nvidia.io nvcfbackends: list
  "" nodes, namespaces, pods, events: list                 "" configmaps: get (nvca-operator)
  "" secrets: list (kai-scheduler; cluster-wide optional)  "" services/proxy: get (nvca-system, for /healthz)
Secrets are listed with `owner=helm` + `type=helm.sh/release.v1` selectors and only summaries are kept; a
403 on the cluster-wide list falls back to kai-scheduler and is reported as KAI-R-016 (deploy/ roles).
"""

from __future__ import annotations

from collections.abc import Callable

from reconciler.model.live import LiveState, LiveStateBuilder
from reconciler.sources.cluster.client import ClusterClient, ReadError, ReadSettings, kube_system_uid
from reconciler.sources.cluster.progress import ReadProgress
from reconciler.sources.cluster.reads import ReadOutcome, read_live
from reconciler.sources.cluster.slim import ObjectSink, Tee

__all__ = [
    "ClusterClient",
    "ObjectSink",
    "ReadError",
    "ReadOutcome",
    "ReadProgress",
    "ReadSettings",
    "Tee",
    "cluster_reader",
    "kube_system_uid",
    "read_cluster",
    "read_live",
]


def cluster_reader(
    kubeconfig: str | None, context: str | None, *, settings: ReadSettings | None = None
) -> Callable[[str | None], LiveState]:
    """A LiveReader for the pipeline; its argument is the repo's kubeContext, which --context overrides."""

    def read(repo_context: str | None) -> LiveState:
        client = ClusterClient.connect(kubeconfig, context, settings, repo_context=repo_context)
        try:
            return read_cluster(client)
        finally:
            client.close()

    return read


def cluster_source(label: str) -> str:
    """A LiveState's `source` when read from the cluster behind the connection `label` names."""
    return f"live cluster ({label})"


def read_cluster(client: ClusterClient, *extra_sinks: ObjectSink) -> LiveState:
    """Everything the checks need from `client`, reduced into a LiveState (and fed to `extra_sinks` too)."""
    builder = LiveStateBuilder(cluster_source(client.label))
    sink: ObjectSink = Tee([builder, *extra_sinks]) if extra_sinks else builder
    with ReadProgress(client.label) as progress:
        outcome = read_live(client, sink, progress)
    builder.mark_queue_kind_served(outcome.queue_kind_served)
    return builder.finish()
