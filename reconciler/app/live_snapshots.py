"""`check --live-snapshot`: a snapshot is judged only as the cluster it says it is of, and its age is said.

A snapshot names its cluster by the API server's own identity, the UID of the kube-system namespace
(`kai-gitops snapshot` writes it as the List annotation `kai-gitops.io/cluster-uid`, beside
`kai-gitops.io/taken-at`); the cluster's entry in kai-gitops.yaml may pin it (`clusterUID`). With `--base`, the
pin is the base's: a pull request cannot vouch for the snapshot that judges it. A snapshot of another
cluster is refused (its Queues would make a quota cut pass or fail on someone else's numbers); one that does
not say (a `kubectl get -o yaml` List, an older kai-gitops) is judged, with a warning, since it cannot be
told apart. One older than --live-snapshot-max-age (24 hours by default) is judged with a warning that its
live checks are stale: running work moves, and a quota cut that was safe yesterday may not be today.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from reconciler.core.errors import UserError
from reconciler.findings.age import duration_text
from reconciler.model.config import RepoConfig
from reconciler.model.queues import SnapshotQueues
from reconciler.sources.repoconfig import CONFIG_FILE
from reconciler.sources.snapshot import CLUSTER_UID_ANNOTATION

log = logging.getLogger("kai_gitops.snapshot")
DEFAULT_MAX_AGE = timedelta(hours=24)


def expected_cluster_uids(head: RepoConfig, base: RepoConfig | None) -> dict[str, str | None]:
    """Each cluster's pinned kube-system UID: the base's entry where the base declares the cluster."""
    pinned: dict[str, str | None] = {c.name: c.cluster_uid for c in head.clusters}
    if base is not None:
        pinned |= {c.name: c.cluster_uid for c in base.clusters}
    return pinned


def checked(
    cluster: str, snapshot: SnapshotQueues, expected_uid: str | None, max_age: timedelta, now: datetime
) -> SnapshotQueues:
    """`snapshot` when it may judge `cluster`'s queues; a one-line error for another cluster's."""
    shown = snapshot.path or snapshot.source
    if expected_uid is not None and snapshot.cluster_uid is not None and snapshot.cluster_uid != expected_uid:
        raise UserError(
            f"--live-snapshot {cluster}: the snapshot is of another cluster (kube-system UID "
            f"{snapshot.cluster_uid}, but {CONFIG_FILE} pins '{cluster}' to {expected_uid})",
            where=shown,
            hint=f"pass the snapshot `kai-gitops snapshot` took of '{cluster}', or fix its "
            "clusterUID in kai-gitops.yaml",
        )
    if expected_uid is not None and snapshot.cluster_uid is None:
        log.warning(
            "%s: the snapshot does not say which cluster it is of (no %s annotation): it cannot be held "
            "to the clusterUID of '%s'; take it again with `kai-gitops snapshot`",
            shown,
            CLUSTER_UID_ANNOTATION,
            cluster,
        )
    if snapshot.taken_at is None:
        log.warning(
            "%s: the snapshot does not say when it was taken: the live checks of '%s' may be stale", shown, cluster
        )
    elif now - snapshot.taken_at > max_age:
        log.warning(
            "%s: the snapshot was taken %s ago (%s), more than --live-snapshot-max-age allows (%s): the "
            "live checks of '%s' (quota cuts below running work, live-only parents) are stale",
            shown,
            duration_text((now - snapshot.taken_at).total_seconds()),
            f"{snapshot.taken_at:%Y-%m-%d %H:%M} UTC",
            duration_text(max_age.total_seconds()),
            cluster,
        )
    return snapshot
