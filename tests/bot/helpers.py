"""Payloads shaped like GitHub's documented webhook examples, signing, and a queue drainer."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import uuid
from typing import Any

from bot.runtime import Runtime, Tuning
from bot.signature import sign

APP_ID = 4242
SECRET = "It's a Secret to Everybody"
OWNER, REPO, REPO_ID, INSTALLATION = "octo-org", "train-repo", 1296269, 42
BASE_SHA = "b" * 40
HEAD_SHA = "c" * 40
NEWER_SHA = "d" * 40
FUTURE = dt.datetime(2100, 1, 1)

TEST_TUNING = Tuning(write_interval=0.0, retry_base_delay=0.01, job_retry_delay=0.01, busy_retry=0.01, lease=30, redis_blocking=False)


def tuning(**kw: Any) -> Tuning:
    return dataclasses.replace(TEST_TUNING, **kw)


def _repo() -> dict[str, Any]:
    return {
        "id": REPO_ID, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": REPO, "full_name": f"{OWNER}/{REPO}", "private": False,
        "owner": {"login": OWNER, "id": 1, "type": "Organization"}, "default_branch": "main", "fork": False,
    }


def _user(login: str = "octocat", kind: str = "User") -> dict[str, Any]:
    return {"login": login, "id": 583231, "type": kind}


def pull_request(action: str = "opened", number: int = 7, head: str = HEAD_SHA, base: str = BASE_SHA,
                 updated_at: str = "2026-11-01T10:00:00Z", fork: bool = False) -> dict[str, Any]:
    head_repo = dict(_repo(), id=REPO_ID + 1, full_name=f"contributor/{REPO}", fork=True) if fork else _repo()
    pr = {
        "url": f"https://api.github.com/repos/{OWNER}/{REPO}/pulls/{number}", "id": 1000 + number, "number": number,
        "state": "open", "locked": False, "title": "Tune the trainer", "user": _user(), "draft": False,
        "created_at": "2026-11-01T09:00:00Z", "updated_at": updated_at,
        "head": {"label": "octocat:tune", "ref": "tune", "sha": head, "user": _user(), "repo": head_repo},
        "base": {"label": f"{OWNER}:main", "ref": "main", "sha": base, "user": _user(OWNER), "repo": _repo()},
    }
    return {"action": action, "number": number, "pull_request": pr, "repository": _repo(), "sender": _user(),
            "installation": {"id": INSTALLATION, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI="}}


def check_run(action: str = "rerequested", run_id: int = 5555, head: str = HEAD_SHA, with_pr: bool = True, number: int = 7,
              name: str = "Accel Audit") -> dict[str, Any]:
    prs = [{"url": "", "id": 1007, "number": number, "head": {"ref": "tune", "sha": head, "repo": {"id": REPO_ID, "name": REPO}},
            "base": {"ref": "main", "sha": BASE_SHA, "repo": {"id": REPO_ID, "name": REPO}}}] if with_pr else []
    run = {"id": run_id, "head_sha": head, "external_id": "", "status": "completed", "conclusion": "neutral", "name": name,
           "check_suite": {"id": 5}, "app": {"id": APP_ID, "slug": "accel-audit"}, "pull_requests": prs}
    out = {"action": action, "check_run": run, "repository": _repo(), "sender": _user(), "installation": {"id": INSTALLATION}}
    if action == "requested_action":
        out["requested_action"] = {"identifier": "fix"}
    return out


def issue_comment(body: str, number: int = 7, on_pr: bool = True, association: str = "COLLABORATOR", login: str = "octocat",
                  kind: str = "User") -> dict[str, Any]:
    issue = {"number": number, "title": "Tune the trainer", "user": _user(), "state": "open"}
    if on_pr:
        issue["pull_request"] = {"url": f"https://api.github.com/repos/{OWNER}/{REPO}/pulls/{number}"}
    return {"action": "created", "issue": issue,
            "comment": {"id": 99001, "body": body, "user": _user(login, kind), "author_association": association},
            "repository": _repo(), "sender": _user(login, kind), "installation": {"id": INSTALLATION}}


def headers(event: str, body: bytes, delivery: str | None = None, secret: str = SECRET) -> dict[str, str]:
    return {
        "X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4()), "X-Hub-Signature-256": sign(secret, body),
        "Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/abc123",
        "X-GitHub-Hook-Installation-Target-Type": "integration", "X-GitHub-Hook-Installation-Target-ID": str(APP_ID),
    }


def deliver(client: Any, event: str, payload: dict[str, Any], delivery: str | None = None, secret: str = SECRET) -> Any:
    body = json.dumps(payload).encode()
    return client.post("/api/github/webhooks", content=body, headers=headers(event, body, delivery, secret))


def drain(rt: Runtime, limit: int = 200) -> int:
    """Run every queued and scheduled task in this thread, fast-forwarding delays (no sleeping in tests)."""
    n = 0
    if rt.dispatcher is not None:
        rt.dispatcher.join()
    while n < limit:
        task = rt.huey.dequeue()
        if task is None:
            due = rt.huey.read_schedule(FUTURE)
            if not due:
                break
            for t in due:
                rt.huey.execute(t, timestamp=FUTURE)
                n += 1
            continue
        rt.huey.execute(task, timestamp=FUTURE)
        n += 1
    return n


class TestClock:
    """Virtual time for a test: :func:`drain_clocked` moves it forward by each scheduled task's wait."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def drain_clocked(rt: Runtime, clock: TestClock, limit: int = 500) -> int:
    """Like :func:`drain`, but a task due ``d`` seconds ahead runs after the clock moved ``d`` forward."""
    n = 0
    if rt.dispatcher is not None:
        rt.dispatcher.join()

    def run(t: Any) -> None:
        real = dt.datetime.now(dt.UTC).replace(tzinfo=None) if rt.huey.utc else dt.datetime.now()
        if t.eta is not None:
            clock.now += max((t.eta - real).total_seconds(), 0.0)
        rt.huey.execute(t, timestamp=FUTURE)

    while n < limit:
        task = rt.huey.dequeue()
        if task is None:
            due = sorted(rt.huey.read_schedule(FUTURE), key=lambda t: t.eta or FUTURE)
            if not due:
                break
            for t in due:
                run(t)
                n += 1
            continue
        run(task)
        n += 1
    return n
