"""The cyclic garbage collector paused over trees being built (the YAML readers, the cluster pages), and always
turned back on."""

from __future__ import annotations

import gc
import threading

import pytest

from reconciler.core.collector import collector_paused
from reconciler.yamlio import document, libyaml


def test_the_collector_is_off_inside_and_back_on_after_an_error() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            with collector_paused():
                pass
            assert not gc.isenabled()  # the inner block does not turn on what the outer one paused
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_blocks_overlapping_in_two_threads_keep_it_off_until_the_last_ends() -> None:
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            entered.set()
            release.wait(5)

    with collector_paused():
        worker = threading.Thread(target=other)
        worker.start()
        assert entered.wait(5)
    assert not gc.isenabled()  # this thread's block ended first: the other one still holds it off
    release.set()
    worker.join(5)
    assert gc.isenabled()


@pytest.mark.parametrize(("reader", "entry"), [("libyaml", "documents_and_ends"), ("ruamel", "ruamel_documents")])
def test_both_readers_read_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch, reader: str, entry: str) -> None:
    """Observed inside each reader's own entry, the one KAI_GITOPS_YAML_READER chooses."""
    seen: list[bool] = []
    owner = libyaml if entry == "documents_and_ends" else document
    read = getattr(owner, entry)

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return read(*args, **kwargs)

    monkeypatch.setenv("KAI_GITOPS_YAML_READER", reader)
    monkeypatch.setattr(owner, entry, spy)
    docs = document.load_documents("a: [1, {b: c}]\n", "values.yaml")
    assert docs[0].data == {"a": [1, {"b": "c"}]}
    assert seen == [False]
    assert gc.isenabled()
