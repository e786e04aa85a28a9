"""The redelivery sweep asks GitHub again for deliveries that failed while the service was down."""

from __future__ import annotations

import datetime as dt

from bot.maintenance import redeliver_once
from bot.store import JobSpec


def _d(i: int, guid: str, code: int, minutes_ago: float, now: dt.datetime) -> dict:
    return {"id": i, "guid": guid, "delivered_at": (now - dt.timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "redelivery": False, "duration": 10.0, "status": "x", "status_code": code, "event": "pull_request", "action": "opened",
            "installation_id": 42, "repository_id": 1}


def test_failed_deliveries_are_redelivered_once_each(rt, fake) -> None:
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
    # one sweep at a time across processes (a lock in the journal), then bounded retries per delivery
    assert rt.store.try_lock("redeliver", "another-process", 60) is False
    rt.tuning.max_redeliveries = 2
    rt.store.try_lock("redeliver", rt.worker_id, 0.001)
    import time

    time.sleep(0.01)
    assert sorted(redeliver_once(rt)) == ["down-1", "down-2"]
    time.sleep(0.01)
    rt.store.try_lock("redeliver", rt.worker_id, 0.001)
    time.sleep(0.01)
    assert redeliver_once(rt) == []
    assert len(fake.redelivered) == 4
