"""A large YAML snapshot is read an item at a time (reconciler/yamlio/stream.py): the same objects as the whole-file
readers, memory that follows what the checks keep rather than the file, and one-line errors with the line."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from reconciler.sources import snapshot
from reconciler.sources.snapshot import read_snapshot_queues, snapshot_items
from tests.support.helpers import DEMO_SNAPSHOTS, assert_one_line_error, run_cli


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every YAML snapshot read an item at a time, however small."""
    monkeypatch.setattr(snapshot, "STREAM_ABOVE_BYTES", 0)


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    monkeypatch.setattr(snapshot, "STREAM_ABOVE_BYTES", 1 << 40)
    whole = (snapshot_items(str(path)), read_snapshot_queues(str(path)))
    monkeypatch.setattr(snapshot, "STREAM_ABOVE_BYTES", 0)
    return whole, (snapshot_items(str(path)), read_snapshot_queues(str(path)))


@pytest.mark.parametrize("name", sorted(p.name for p in DEMO_SNAPSHOTS.glob("*.yaml")))
def test_streamed_items_equal_the_whole_file_readers(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    whole, streamed = _both(DEMO_SNAPSHOTS / name, monkeypatch)
    assert streamed == whole
    assert streamed[1].taken_at is not None


SCALARS = """\
apiVersion: v1
kind: List
metadata:
  annotations:
    kai-gitops.io/taken-at: "2026-12-01T10:00:00.000000Z"
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: "x", namespace: ns, labels: {a: yes, b: "yes", c: 010, d: 0x1F, e: 1e3, f: ~, g: 2026-01-01}}
  data:
    block: |
      line one
      line two
    folded: >-
      a
      b
    list: [1, -2, 3.5, .inf, true, No, null]
- {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
"""


def test_scalars_mean_what_the_whole_file_reader_makes_of_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "snapshot.yaml"
    path.write_text(SCALARS)
    monkeypatch.setattr(snapshot, "STREAM_ABOVE_BYTES", 1 << 40)
    whole = snapshot_items(str(path))
    monkeypatch.setattr(snapshot, "STREAM_ABOVE_BYTES", 0)
    assert snapshot_items(str(path)) == whole
    assert whole[0]["metadata"]["labels"] == {
        "a": True,
        "b": "yes",
        "c": 10,
        "d": 31,
        "e": 1000.0,
        "f": None,
        "g": "2026-01-01",
    }


@pytest.mark.usefixtures("streamed")
@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("items:\n- *a\n", (":2:", "an alias to an undefined anchor &a in a snapshot over 0 KB")),
        ("items:\n- !!map {apiVersion: v1, kind: Namespace}\n", (":2:", "the tag tag:yaml.org,2002:map")),
        ("items:\n- apiVersion: v1\n  kind: Namespace\n  <<: {a: 1}\n", (":4:", "a merge key")),
        ("items:\n- apiVersion: v1\n  kind: Namespace\n  ? [a]\n  : 1\n", (":4:", "a complex key")),
        ("%YAML 1.1\n---\nitems: []\n", (":", "a % directive")),
        (
            "kind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  kind: Pod\n",
            (":5:", 'duplicate key "kind" at lines 4 and 5'),
        ),
        ("kind: List\nitems:\n- apiVersion: v1\n  kind: [unclosed\n", (":", "invalid YAML")),
        ("kind: List\nitems:\n- apiVersion: v1\n- kind: Pod\n", (":3:", "item 0 has no kind/apiVersion")),
        (
            "kind: Pod\napiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n",
            (":1:", "must be a Kubernetes List"),
        ),
        (
            "kind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  deep: " + "[" * 120 + "]" * 120 + "\n",
            (":5:", "nested deeper than 100 levels"),
        ),
    ],
)
def test_what_the_streamed_reader_refuses_is_one_line_naming_file_and_line(
    tmp_path: Path, text: str, needles: tuple[str, ...]
) -> None:
    path = tmp_path / "snapshot.yaml"
    path.write_text(text)
    assert_one_line_error(*run_cli(["doctor", "--snapshot", path]), str(path), *needles)


ALIASES = """\
kind: List
items:
- apiVersion: nvcf.nvidia.io/v1
  kind: NVCFBackend
  metadata: {name: b, namespace: nvca-operator}
  spec:
    featureGate: {values: &gates [SelfHosted, LogPosting]}
  status:
    featureGate: {values: *gates}
- &ns {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
- *ns
"""


def test_anchors_and_aliases_read_as_the_whole_file_reader_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyYAML (kai-gitops snapshot's writer) anchors an object that appears twice in an item."""
    path = tmp_path / "snapshot.yaml"
    path.write_text(ALIASES)
    monkeypatch.setattr(snapshot, "STREAM_ABOVE_BYTES", 1 << 40)
    whole = snapshot_items(str(path))
    monkeypatch.setattr(snapshot, "STREAM_ABOVE_BYTES", 0)
    streamed = snapshot_items(str(path))
    assert streamed == whole
    assert streamed[0]["status"]["featureGate"]["values"] == ["SelfHosted", "LogPosting"]
    assert streamed[1] == streamed[2] and streamed[1] is not streamed[2]


@pytest.mark.usefixtures("streamed")
def test_an_alias_bomb_stops_at_the_value_budget(tmp_path: Path) -> None:
    lines = ["kind: List", "items:", "- apiVersion: v1", "  kind: ConfigMap", "  a0: &a0 [x, x, x, x, x, x, x, x]"]
    lines += [f"  a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 13)]
    path = tmp_path / "snapshot.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert_one_line_error(*run_cli(["doctor", "--snapshot", path]), str(path), "more than 40,000,000 YAML values")


@pytest.mark.usefixtures("streamed")
def test_aliases_cannot_nest_past_the_depth_limit(tmp_path: Path) -> None:
    lines = ["kind: List", "items:", "- apiVersion: v1", "  kind: ConfigMap", "  a0: &a0 [x]"]
    lines += [f"  a{i}: &a{i} [*a{i - 1}]" for i in range(1, 120)]
    path = tmp_path / "snapshot.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert_one_line_error(*run_cli(["doctor", "--snapshot", path]), str(path), "nested deeper than 100 levels")


@pytest.mark.usefixtures("streamed")
def test_the_value_budget_is_counted_as_the_values_arrive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "SNAPSHOT_MAX_NODES", 20)
    path = tmp_path / "snapshot.yaml"
    path.write_text(
        "kind: List\nitems:\n" + "".join(f"- {{apiVersion: v1, kind: Namespace, n: {i}}}\n" for i in range(10))
    )
    assert_one_line_error(*run_cli(["doctor", "--snapshot", path]), f"{path}:5:", "more than 20 YAML values")


@pytest.mark.usefixtures("streamed")
def test_a_wrong_taken_at_names_its_line_in_a_streamed_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.yaml"
    path.write_text(SCALARS.replace("2026-12-01T10:00:00.000000Z", "yesterday"))
    assert_one_line_error(
        *run_cli(["doctor", "--snapshot", path]), f"{path}:5:5:", "kai-gitops.io/taken-at is not an RFC 3339 time"
    )


def _pods(count: int) -> str:
    pod = (
        "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p{i}\n    namespace: team\n"
        "    labels: {{app: a{i}}}\n"
        "  spec: {{schedulerName: kai-scheduler, nodeName: n1, containers: [{{name: main, image: img}}]}}\n"
        "  status: {{phase: Running, conditions: [{{type: Ready, status: 'True'}}]}}\n"
    )
    queue = (
        "- apiVersion: scheduling.run.ai/v2\n  kind: Queue\n  metadata: {name: default-queue}\n"
        "  spec: {resources: {gpu: {quota: 1, limit: 2, overQuotaWeight: 1}}}\n"
    )
    return "apiVersion: v1\nkind: List\nitems:\n" + queue + "".join(pod.format(i=i) for i in range(count))


def test_memory_follows_what_is_kept_not_the_file(tmp_path: Path) -> None:
    """The Queues of a 1.6 MB snapshot of 8,000 pods: the read's peak is the file's text held a few times over
    (bytes, then str) and one item, where the whole-file read's was ~500 bytes per byte of the file."""
    path = tmp_path / "snapshot.yaml"
    path.write_text(_pods(8_000))
    size = path.stat().st_size
    assert size > snapshot.STREAM_ABOVE_BYTES
    tracemalloc.start()
    try:
        queues = read_snapshot_queues(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert list(queues.queues) == ["default-queue"]
    assert peak < 8 * size, (peak, size)
