"""The reused daemon workers (db/_workers.py): a call's value or exception comes back in the
caller's context, an idle worker takes the next call, a call that hangs holds only its own
worker, and an idle worker ends."""

from __future__ import annotations

import contextvars
import threading
import time

import pytest

from langmem_vault.db import _workers
from langmem_vault.db._workers import hand_off

CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="none")


def test_a_call_comes_back_with_its_value_or_exception_in_the_callers_context() -> None:
    CALLER.set("turn 7")
    handoff = hand_off(lambda: (CALLER.get(), threading.current_thread().daemon))
    assert handoff.wait(5)
    assert handoff.result() == ("turn 7", True)
    failed = hand_off(lambda: 1 / 0)
    assert failed.wait(5)
    assert failed.outcome()[0] is False
    with pytest.raises(ZeroDivisionError):
        failed.result()


def test_an_idle_worker_takes_the_next_call() -> None:
    assert hand_off(threading.get_ident).wait(5)
    time.sleep(0.05)  # its worker is back waiting
    idle = {t.ident for t in threading.enumerate() if t.name == "langmem-vault-worker"}
    second = hand_off(threading.get_ident)
    assert second.wait(5)
    assert second.result() in idle  # no thread started for it


def test_a_hanging_call_holds_only_its_own_worker() -> None:
    release = threading.Event()
    hanging = hand_off(lambda: release.wait(10))
    try:
        assert not hanging.wait(0.05)
        other = hand_off(lambda: "answered")
        assert other.wait(5)
        assert other.result() == "answered"
    finally:
        release.set()
    assert hanging.wait(5) and hanging.result() is True


def test_an_idle_worker_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_workers, "IDLE_SECONDS", 0.05)
    handoff = hand_off(threading.current_thread)
    assert handoff.wait(5)
    worker = handoff.result()
    worker.join(5)  # it waits 0.05 s for another call, then ends
    assert not worker.is_alive()
    assert hand_off(lambda: "still served").wait(5)  # a new worker takes the next call
