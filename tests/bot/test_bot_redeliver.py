"""The redelivery sweep asks GitHub again for deliveries that failed while the service was down."""

from __future__ import annotations

import datetime as dt

from bot.maintenance import redeliver_once
from bot.store import JobSpec


def _d(i: int, guid: str, code: int, minutes_ago: float, now: dt.datetime) -> dict:
    return {"id": i, "guid": guid, "delivered_at": (now - dt.timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "redelivery": False, "duration": 10.0, "status": "x", "status_code": code, "event": "pull_request", "action": "opened",
            "installation_id": 42, "repository_id": 1}


def test_failed_deliveries_are_redelivered_once_each(rt, fake, monkeypatch) -> None:
    now = dt.datetime.now(dt.UTC)
    fake.hook_deliveries = [
        _d(1, "down-1", 0, 5, now),  # no answer: the service was down
        _d(2, "down-2", 502, 30, now),  # a proxy answered 502
        _d(3, "ok-1", 202, 31, now),
        _d(4, "retried-ok", 202, 40, now), _d(5, "retried-ok", 503, 50, now),  # a later attempt got through
        _d(6, "bad-sig", 401, 60, now),  # our own final answer: a redelivery would get the same
        _d(7, "journaled", 503, 70, now),  # recorded by us although the answer was lost
        _d(8, "too-old", 0, 60 * 24, now),  # outside the window
    ]
    rt.store.accept("journaled", "pull_request", [JobSpec("command", {})])
    assert sorted(redeliver_once(rt)) == ["down-1", "down-2"]
    assert sorted(fake.redelivered) == [1, 2]
    assert all(c.auth.startswith("Bearer ") for c in fake.calls_to("POST", r"/attempts$"))  # as the App (JWT)
    # periodic sweeps are spaced across processes (the period record), then bounded retries per delivery
    from bot.maintenance import PERIOD_LOCK

    assert rt.store.try_lock(PERIOD_LOCK, "another-process", 60) is False  # its periodic sweep is skipped this interval
    monkeypatch.setattr(rt.tuning, "max_redeliveries", 2)  # the Tuning object is shared by the tests
    assert sorted(redeliver_once(rt, startup=True)) == ["down-1", "down-2"]  # a start-up sweep always runs
    assert redeliver_once(rt, startup=True) == []
    assert len(fake.redelivered) == 4


def test_a_live_sweep_blocks_a_second_one_and_a_dead_holder_does_not(rt, fake) -> None:
    import os
    import socket
    import subprocess
    import sys

    from bot.maintenance import SWEEP_LOCK

    now = dt.datetime.now(dt.UTC)
    fake.hook_deliveries = [_d(1, "down-1", 0, 5, now)]
    # another live process sweeping right now (PID 1 of this host exists): the start-up sweep waits for the next tick
    assert rt.store.try_lock(SWEEP_LOCK, f"{socket.gethostname()}:1:live", 300)
    assert redeliver_once(rt, startup=True) is None
    rt.store.unlock(SWEEP_LOCK, f"{socket.gethostname()}:1:live")
    # a process that died holding it (the lock outlives it): taken over at once
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert rt.store.try_lock(SWEEP_LOCK, f"{socket.gethostname()}:{dead.pid}:old", 300)
    assert redeliver_once(rt, startup=True) == ["down-1"]
    # this process's previous life (same host and PID, another nonce), e.g. PID 1 of a restarted container
    assert rt.store.try_lock(SWEEP_LOCK, f"{socket.gethostname()}:{os.getpid()}:previous", 300)
    assert redeliver_once(rt, startup=True) == ["down-1"]  # ran, not blocked
    assert rt.store.lock_owner(SWEEP_LOCK) is None  # released after the sweep
