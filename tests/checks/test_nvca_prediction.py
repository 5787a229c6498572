"""NVCA's `kai-scheduler-queues` verdict predicted byte for byte, and Go's %v for float64
(docs/policies.md#nvca-health-check).

Expected strings are written out literally on purpose: operators grep for NVCA's own words, so a change
to a constant in reconciler/checks/nvca.py must break these tests.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.checks.nvca import Verdict, predict
from reconciler.core.show import format_go_float
from reconciler.model.queues import QueueSpec, queue_spec_from_values
from reconciler.sources.snapshot import read_snapshot
from tests.support.helpers import CHART_DEFAULT, DEMO_SNAPSHOTS, UNLIMITED, queue

NOT_INSTALLED = (
    "KAI Scheduler is not installed but the KAIScheduler feature flag is enabled. Either install KAI "
    "Scheduler (see https://github.com/NVIDIA/KAI-Scheduler) or disable the KAIScheduler feature flag"
)
NOT_FOUND = (
    "Expected the two default queues default-parent-queue and default-queue, but either one or both were "
    "not found. See https://raw.githubusercontent.com/NVIDIA/KAI-Scheduler/refs/heads/main/docs/quickstart/"
    "default-queues.yaml for setting up right hierarchy"
)
HIERARCHY = (
    "Queue hierarchy misconfigured: 'default-parent-queue' must be a parent queue and 'default-queue' must "
    "be a child of 'default-parent-queue'. See https://raw.githubusercontent.com/NVIDIA/KAI-Scheduler/refs/"
    "heads/main/docs/quickstart/default-queues.yaml for setting up the correct hierarchy"
)


def specs(*objects: dict[str, Any]) -> dict[str, QueueSpec]:
    out = {}
    for o in objects:
        spec = queue_spec_from_values(o)
        out[spec.name] = spec
    return out


def parent(triple: dict[str, Any] = UNLIMITED, **kw: Any) -> dict[str, Any]:
    return queue("default-parent-queue", triple, **kw)


def child(
    triple: dict[str, Any] = UNLIMITED, parent_name: str | None = "default-parent-queue", **kw: Any
) -> dict[str, Any]:
    return queue("default-queue", triple, parent_name, **kw)


def unhealthy(message: str) -> Verdict:
    return Verdict(False, (message,))


HEALTHY = Verdict(True, ())


# -- step 1 and 2 -------------------------------------------------------------------------------------------------


def test_not_installed_literal() -> None:
    verdict = predict({}, kind_served=False)
    assert verdict == unhealthy(
        "KAI Scheduler is not installed but the KAIScheduler feature flag is enabled. Either install KAI Scheduler "
        "(see https://github.com/NVIDIA/KAI-Scheduler) or disable the KAIScheduler feature flag"
    )
    assert verdict.to_dict() == {"status": "unhealthy", "errors": [NOT_INSTALLED]}


def test_not_installed_wins_over_existing_queues() -> None:
    assert predict(specs(parent(), child()), kind_served=False) == unhealthy(NOT_INSTALLED)


def test_list_error_literal() -> None:
    error = 'queues.scheduling.run.ai is forbidden: User "system:serviceaccount:nvca-system:nvca" cannot list'
    assert predict({}, list_error=error) == unhealthy(
        "Failed to list KAI Scheduler queues: queues.scheduling.run.ai is forbidden: User "
        '"system:serviceaccount:nvca-system:nvca" cannot list'
    )


@pytest.mark.parametrize(
    "objects",
    [
        [],
        [parent()],
        [child()],
        [queue("default", UNLIMITED), queue("research", UNLIMITED, "default")],
        [parent(), queue("Default-Queue", UNLIMITED, "default-parent-queue")],  # names are case-sensitive
    ],
)
def test_not_exactly_two_default_queues(objects: list[dict[str, Any]]) -> None:
    assert predict(specs(*objects)) == unhealthy(
        "Expected the two default queues default-parent-queue and default-queue, but either one or both were not "
        "found. See https://raw.githubusercontent.com/NVIDIA/KAI-Scheduler/refs/heads/main/docs/quickstart/"
        "default-queues.yaml for setting up right hierarchy"
    )


def test_other_queues_are_ignored() -> None:
    broken_other = queue("research", {"quota": 0, "limit": 0, "overQuotaWeight": 0}, "nowhere")
    aaa = queue("aaa", {"quota": 5, "limit": 5, "overQuotaWeight": 5}, "zzz")
    assert predict(specs(broken_other, parent(), aaa, child())) == HEALTHY


# -- step 3 and 4: hierarchy ------------------------------------------------------------------------------------------


def test_healthy() -> None:
    verdict = predict(specs(parent(), child()))
    assert verdict == HEALTHY
    assert verdict.healthy and verdict.status == "healthy"
    assert verdict.to_dict() == {"status": "healthy", "errors": []}


def test_no_parent_anywhere() -> None:
    assert predict(specs(parent(), child(parent_name=None))) == unhealthy(
        "Queue hierarchy misconfigured: 'default-parent-queue' must be a parent queue and 'default-queue' must be a "
        "child of 'default-parent-queue'. See https://raw.githubusercontent.com/NVIDIA/KAI-Scheduler/refs/heads/"
        "main/docs/quickstart/default-queues.yaml for setting up the correct hierarchy"
    )


def test_empty_parent_string_is_no_parent() -> None:
    c = child()
    c["spec"]["parentQueue"] = ""
    assert predict(specs(parent(), c)) == unhealthy(HIERARCHY)


def test_no_parent_anywhere_but_child_resources_violate_first() -> None:
    verdict = predict(specs(parent(), child(CHART_DEFAULT, parent_name=None)))
    assert verdict == unhealthy(
        "CPU resource violation for queue default-queue: expected limit=-1, quota=-1, "
        "overQuotaWeight=1, got limit=-1, quota=0, overQuotaWeight=1"
    )


def test_parent_with_a_parent_stops_the_loop_even_if_the_child_is_broken() -> None:
    broken_child = child({"quota": 0, "limit": 0, "overQuotaWeight": 0})
    assert predict(specs(parent(parent="root"), broken_child)) == unhealthy(HIERARCHY)


def test_parent_with_a_parent_stops_before_its_own_resources_are_checked() -> None:
    assert predict(specs(parent(CHART_DEFAULT, parent="root"), child())) == unhealthy(HIERARCHY)


def test_child_with_a_non_default_parent_still_passes_nvca_quirk() -> None:
    assert predict(specs(parent(), child(parent_name="some-other-queue"))) == HEALTHY


def test_child_whose_parent_is_itself_passes_nvca_quirk() -> None:
    assert predict(specs(parent(), child(parent_name="default-queue"))) == HEALTHY


# -- step 3: resources -----------------------------------------------------------------------------------------------


def test_demo_violation_literal() -> None:
    assert predict(specs(parent(CHART_DEFAULT), child(CHART_DEFAULT))) == unhealthy(
        "CPU resource violation for queue default-parent-queue: expected limit=-1, quota=-1, overQuotaWeight=1, "
        "got limit=-1, quota=0, overQuotaWeight=1"
    )


def test_gpu_checked_after_cpu_and_before_memory() -> None:
    resources = {
        "cpu": UNLIMITED,
        "gpu": {"quota": 8, "limit": 16, "overQuotaWeight": 2},
        "memory": {"quota": 1, "limit": 1, "overQuotaWeight": 1},
    }
    assert predict(specs(parent(resources=resources), child())) == unhealthy(
        "GPU resource violation for queue default-parent-queue: expected limit=-1, quota=-1, overQuotaWeight=1, "
        "got limit=16, quota=8, overQuotaWeight=2"
    )


def test_memory_violation_literal() -> None:
    resources = {"cpu": UNLIMITED, "gpu": UNLIMITED, "memory": {"quota": -1, "limit": 1024000, "overQuotaWeight": 1}}
    assert predict(specs(parent(), child(resources=resources))) == unhealthy(
        "Memory resource violation for queue default-queue: expected limit=-1, quota=-1, overQuotaWeight=1, "
        "got limit=1.024e+06, quota=-1, overQuotaWeight=1"
    )


def test_only_the_first_violation_is_reported_parent_before_child() -> None:
    p = parent(resources={"cpu": UNLIMITED, "gpu": UNLIMITED, "memory": CHART_DEFAULT})
    c = child({"quota": 0, "limit": 0, "overQuotaWeight": 0})
    verdict = predict(specs(c, p))
    assert verdict == unhealthy(
        "Memory resource violation for queue default-parent-queue: expected limit=-1, "
        "quota=-1, overQuotaWeight=1, got limit=-1, quota=0, overQuotaWeight=1"
    )
    assert len(verdict.errors) == 1


@pytest.mark.parametrize("field, value", [("quota", -2), ("limit", 0), ("overQuotaWeight", 2), ("overQuotaWeight", 0)])
def test_each_field_of_the_triple_counts(field: str, value: int) -> None:
    triple = dict(UNLIMITED, **{field: value})
    verdict = predict(specs(parent(), child(resources={"cpu": UNLIMITED, "gpu": triple, "memory": UNLIMITED})))
    assert not verdict.healthy
    assert verdict.errors[0].startswith("GPU resource violation for queue default-queue: ")


def test_unlimited_as_floats_is_healthy() -> None:
    floats = {"quota": -1.0, "limit": -1.0, "overQuotaWeight": 1.0}
    assert predict(specs(parent(floats), child(floats))) == HEALTHY


def test_missing_resources_block_reads_as_zeros() -> None:
    assert predict(specs(parent(no_resources=True), child())) == unhealthy(
        "CPU resource violation for queue default-parent-queue: expected limit=-1, quota=-1, overQuotaWeight=1, "
        "got limit=0, quota=0, overQuotaWeight=0"
    )


def test_missing_numbers_read_as_zero() -> None:
    resources = {"cpu": {"limit": -1}, "gpu": UNLIMITED, "memory": UNLIMITED}
    assert predict(specs(parent(), child(resources=resources))) == unhealthy(
        "CPU resource violation for queue default-queue: expected limit=-1, quota=-1, overQuotaWeight=1, "
        "got limit=-1, quota=0, overQuotaWeight=0"
    )


def test_missing_resource_kind_reads_as_zeros() -> None:
    resources = {"cpu": UNLIMITED, "memory": UNLIMITED}
    assert predict(specs(parent(), child(resources=resources))) == unhealthy(
        "GPU resource violation for queue default-queue: expected limit=-1, quota=-1, overQuotaWeight=1, "
        "got limit=0, quota=0, overQuotaWeight=0"
    )


def test_numbers_print_as_go_does() -> None:
    resources = {
        "cpu": {"quota": 1500000, "limit": 0.5, "overQuotaWeight": 0.00001},
        "gpu": UNLIMITED,
        "memory": UNLIMITED,
    }
    assert predict(specs(parent(resources=resources), child())) == unhealthy(
        "CPU resource violation for queue default-parent-queue: expected limit=-1, quota=-1, overQuotaWeight=1, "
        "got limit=0.5, quota=1.5e+06, overQuotaWeight=1e-05"
    )


def test_prediction_matches_nvca_in_the_demo_snapshot() -> None:
    state = read_snapshot(str(DEMO_SNAPSHOTS / "prod-addon.yaml"))
    assert state.healthz is not None
    status, errors = state.healthz.queue_component()
    verdict = predict(state.queues, kind_served=state.queue_kind_served)
    assert (verdict.status, list(verdict.errors)) == (status, errors)
    lab = read_snapshot(str(DEMO_SNAPSHOTS / "lab-standalone.yaml"))
    assert predict(lab.queues, kind_served=lab.queue_kind_served) == HEALTHY


# -- Go float formatting ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, text",
    [
        (-1.0, "-1"),
        (0.0, "0"),
        (1.0, "1"),
        (100.0, "100"),
        (1024.0, "1024"),
        (0.5, "0.5"),
        (123456.0, "123456"),
        (999999.0, "999999"),
        (1e6, "1e+06"),
        (1.5e6, "1.5e+06"),
        (1e-05, "1e-05"),
        (float("nan"), "NaN"),
        (float("inf"), "+Inf"),
        (float("-inf"), "-Inf"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (0.00012, "0.00012"),
        (1e21, "1e+21"),
        (-0.0, "-0"),
        (123456.789, "123456.789"),
        (64000.0, "64000"),
        (-2.5e-7, "-2.5e-07"),
        (1e100, "1e+100"),
        (0.1, "0.1"),
        (5e-324, "5e-324"),
    ],
)
def test_go_float_format(value: float, text: str) -> None:
    assert format_go_float(value) == text
