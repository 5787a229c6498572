"""A live Queue's status.allocated in the units KAI compares with its spec, and the facts the quota rules read."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.errors import UserError
from reconciler.core.quantity import parse_quantity
from reconciler.model.queues import allocation_from_status
from reconciler.sources.snapshot import read_snapshot
from tests.support.helpers import default_queues, live_state, queue, snapshot_file


def running(
    name: str, allocated: dict[str, Any] | None, non_preemptible: dict[str, Any] | None = None, **kwargs: Any
) -> dict[str, Any]:
    q = queue(name, **kwargs)
    if allocated is not None:
        q["status"] = {"allocated": allocated, "allocatedNonPreemptible": non_preemptible or {}}
    return q


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", "0.5"),
        ("2", "2"),
        ("4Gi", str(4 * 2**30)),
        ("1.5Gi", str(3 * 2**29)),
        ("100M", "1e8"),
        ("1e3", "1000"),
        ("12E", "1.2e19"),
        ("1Ki", "1024"),
        (3, "3"),
        (0.5, "0.5"),
        ("-1", "-1"),
    ],
)
def test_quantities_parse_as_the_api_server_writes_them(text: object, value: str) -> None:
    assert parse_quantity(text) == Decimal(value)


@pytest.mark.parametrize("text", ["abc", "1Z", "", None, True, "1 Gi", "Gi"])
def test_a_bad_quantity_is_refused(text: object) -> None:
    with pytest.raises(ValueError, match="is not a resource quantity"):
        parse_quantity(text)


def test_allocation_is_in_the_spec_units_kai_compares() -> None:
    """CPU cores -> millicores, memory bytes -> MB of 10^6 bytes (KAI's `mebibytes = 1000 * 1000`), GPUs as
    devices, a fraction kept; any */gpu resource counts as GPUs (a bare `gpu` is no resource KAI counts)."""
    obj = running(
        "team-a",
        {"cpu": "2500m", "memory": "4Gi", "nvidia.com/gpu": "1500m", "example.com/gpu": "1", "pods": "3", "gpu": "7"},
        {"memory": "2G", "nvidia.com/gpu": "500m"},
    )
    allocation = allocation_from_status(obj)
    assert allocation is not None
    assert allocation.allocated == {"cpu": 2500.0, "gpu": 2.5, "memory": 4294.9673}
    assert allocation.non_preemptible == {"cpu": 0.0, "gpu": 0.5, "memory": 2000.0}


def test_a_queue_without_status_has_no_allocation() -> None:
    assert allocation_from_status(queue("fresh")) is None
    assert allocation_from_status(queue("fresh") | {"status": {"childQueues": ["a"]}}) is None
    zero = allocation_from_status(queue("idle") | {"status": {"allocated": {}}})
    assert zero is not None and zero.allocated == {"cpu": 0.0, "gpu": 0.0, "memory": 0.0}


def test_live_facts_carry_the_allocation_or_null() -> None:
    from reconciler.checks.facts import live_facts

    live = live_state([*default_queues(), running("team-a", {"nvidia.com/gpu": "6"}, parent="default-parent-queue")])
    queues = {q["name"]: q for q in live_facts(live, None)["queues"]}
    assert queues["team-a"]["allocated"] == {"cpu": 0.0, "gpu": 6.0, "memory": 0.0}
    assert queues["team-a"]["allocated_non_preemptible"] == {"cpu": 0.0, "gpu": 0.0, "memory": 0.0}
    assert queues["default-queue"]["allocated"] is None


def test_a_snapshot_with_a_broken_quantity_names_the_queue(tmp_path: Path) -> None:
    path = snapshot_file(tmp_path, [running("team-a", {"nvidia.com/gpu": "six"})])
    with pytest.raises(UserError) as caught:
        read_snapshot(str(path))
    message = str(caught.value)
    assert "team-a" in message and "status.allocated.nvidia.com/gpu" in message and "'six'" in message


def test_desired_facts_carry_every_git_queue_with_where_its_numbers_are(tmp_path: Path) -> None:
    """The default queues from the values and the queue files' queues, each number's YAML path with it."""
    from reconciler.app.pipeline import desired_clusters, open_desired
    from reconciler.app.settings import GitSettings
    from reconciler.checks.facts import desired_facts
    from tests.support.helpers import load_demo_builder

    repo = tmp_path / "repo"
    load_demo_builder().build_repo(repo)
    [lab] = desired_clusters(open_desired(GitSettings(str(repo))), "lab-standalone")
    queues = {q["name"]: q for q in desired_facts(lab)["queues"]}
    assert list(queues) == ["default-parent-queue", "default-queue", "research", "research-nlp", "research-vision"]
    child = queues["default-queue"]
    assert (child["origin"], child["doc"], child["parent"]) == ("default-queue", "kai_values", "default-parent-queue")
    assert child["paths"]["cpu.quota"] == ["defaultQueue", "childResources", "cpu", "quota"]
    assert child["resources"]["cpu"] == {"quota": 0.0, "limit": -1.0, "overQuotaWeight": 1.0}  # the PR's edit
    vision = queues["research-vision"]
    assert (vision["origin"], vision["parent"], vision["resources"]["gpu"]["quota"]) == ("queue-file", "research", 6.0)
    assert vision["paths"]["gpu.quota"] == ["spec", "resources", "gpu", "quota"]
