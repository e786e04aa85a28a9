"""Nothing lost: a job whose worker died mid-run is run again after restart (journal leases)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from fastapi.testclient import TestClient

from bot.app import create_app
from bot.maintenance import recover_once
from bot.runtime import build_runtime
from bot.settings import load_settings
from bot.store import Claim

from .fakegh import FakeServer, git_diff
from .helpers import HEAD_SHA, deliver, drain, pull_request, tuning
from .repos import BASE, HEAD


def test_job_interrupted_after_dequeue_runs_again_after_restart(client, rt, fake, settings, gh_mock) -> None:
    fake.diffs[7] = git_diff(BASE, HEAD)
    deliver(client, "pull_request", pull_request())
    rt.dispatcher.join()
    # worker A takes the message off the queue and claims the job, then dies (kill -9: nothing else happens)
    task = rt.huey.dequeue()
    job_id = task.args[0]
    status, _ = rt.store.claim(job_id, "worker-A", lease=30, now=time.time() - 60)  # its lease ran out 30 s ago
    assert status == Claim.CLAIMED
    assert rt.huey.pending_count() == 0  # the message is gone: huey alone would have lost the job
    rt.close()

    restarted = build_runtime(settings, tuning())
    try:
        assert recover_once(restarted) == [job_id]
        drain(restarted)
        assert restarted.store.get(job_id).state == "done"
        assert restarted.store.get(job_id).attempts == 1
        assert fake.runs_named()[0].status == "completed"
    finally:
        restarted.close()


def test_live_lease_blocks_a_second_run_of_the_same_pr(client, rt, fake) -> None:
    fake.diffs[7] = git_diff(BASE, HEAD)
    deliver(client, "pull_request", pull_request())
    rt.dispatcher.join()
    job_id = rt.huey.dequeue().args[0]
    assert rt.store.claim(job_id, "worker-A", lease=30)[0] == Claim.CLAIMED
    # a duplicate message of the same job, and a rerun of the same PR, wait while worker A holds the lease
    assert rt.store.claim(job_id, "worker-B", lease=30)[0] == Claim.RUNNING
    deliver(client, "pull_request", pull_request(action="reopened"))
    rt.dispatcher.join()
    other = rt.huey.dequeue().args[0]
    from bot.runner import execute

    assert execute(rt, other) == "busy"  # put back in the queue, a few seconds later
    assert rt.huey.scheduled_count() + rt.huey.pending_count() == 1
    assert recover_once(rt) == []  # a live lease is not recovered


def _worker_script(env: dict[str, str]) -> str:
    return (
        "import json, os\n"
        "from bot.settings import load_settings\n"
        "from bot.runtime import build_runtime, Tuning\n"
        "from bot.queue import make_consumer\n"
        "rt = build_runtime(load_settings(), Tuning(write_interval=0.0, lease=2.0, retry_base_delay=0.01))\n"
        "make_consumer(rt, 1).run()\n"
    )


def test_kill_9_mid_job_then_restart(rsa_key, backend, env, fake, tmp_path: Path) -> None:
    """A real worker process is killed with SIGKILL while it downloads the tarball; a new one finishes the job."""
    fake.diffs[7] = git_diff(BASE, HEAD)
    fake.hold_tarball = threading.Event()
    with FakeServer(fake) as server:
        env = dict(env, ACCEL_GITHUB_API_URL=server.url)
        settings = load_settings(env)
        web = build_runtime(settings, tuning(lease=2.0))
        with TestClient(create_app(web)) as client:
            assert deliver(client, "pull_request", pull_request()).status_code == 202
        proc = subprocess.Popen(
            [sys.executable, "-c", _worker_script(env)], env={**os.environ, **env}, cwd=Path(__file__).resolve().parents[2],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            assert fake.tarball_started.wait(60), "the worker never reached the tarball download"
            assert [r.status for r in fake.runs_named()] == ["in_progress"]
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
        fake.hold_tarball.set()  # GitHub answers again; the dead worker will never read it

        restarted = build_runtime(settings, tuning(lease=2.0))
        try:
            recovered: list[str] = []
            for _ in range(100):  # the dead worker's 2 s lease runs out
                recovered = recover_once(restarted)
                if recovered:
                    break
                time.sleep(0.1)
            assert len(recovered) == 1
            drain(restarted)
            job = restarted.store.get(recovered[0])
            assert job.state == "done" and job.attempts == 1
        finally:
            restarted.close()
            web.close()
    runs = fake.runs_named()
    assert len(runs) == 1 and runs[0].status == "completed" and runs[0].head_sha == HEAD_SHA  # the same run, completed
    assert len(fake.reviews) == 1
    assert json.dumps(fake.reviews[0]["comments"])  # posted once
