"""Accel Profile in the App: workflow_run -> artifacts -> diagnose -> check run, with base comparison, gate and limits.

GitHub is faked at the HTTP layer (tests/bot/fakegh.py); the Actions endpoints are answered by injected responses
and the artifact storage host by its own respx route, which also checks the API token never reaches it.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import httpx
import pytest

from bot import profile_job
from bot.events import route
from tests.diagnose.tracegen import RankSpec, write_trace

from .helpers import APP_ID, BASE_SHA, HEAD_SHA, INSTALLATION, OWNER, REPO, REPO_ID, deliver, drain

BLOB = "results-receiver.actions.githubusercontent.com"
API = f"/repos/{OWNER}/{REPO}"


def workflow_run(event: str = "pull_request", run_id: int = 900, conclusion: str = "success") -> dict:
    repo = {"id": REPO_ID, "name": REPO, "full_name": f"{OWNER}/{REPO}", "owner": {"login": OWNER, "id": 1}, "default_branch": "main"}
    prs = [{"url": "", "id": 1007, "number": 7, "head": {"ref": "tune", "sha": HEAD_SHA, "repo": {"id": REPO_ID}},
            "base": {"ref": "main", "sha": BASE_SHA, "repo": {"id": REPO_ID}}}] if event == "pull_request" else []
    run = {"id": run_id, "name": "profile", "workflow_id": 55, "head_sha": HEAD_SHA, "head_branch": "tune", "event": event,
           "status": "completed", "conclusion": conclusion, "pull_requests": prs, "run_attempt": 1}
    return {"action": "completed", "workflow_run": run, "repository": repo, "installation": {"id": INSTALLATION},
            "sender": {"login": "octocat", "id": 1, "type": "User"}}


def trace_zip(tmp: Path, kernel_us: float, name: str = "rank-0.pt.trace.json.gz", extra: dict[str, bytes] | None = None) -> bytes:
    p = write_trace(tmp / f"t{kernel_us}.json.gz", RankSpec(kernel_us=kernel_us, sync_item=True, comm_us=300, overlap=0.5), gz=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(name, p.read_bytes())
        for k, v in (extra or {}).items():
            zf.writestr(k, v)
    return buf.getvalue()


def artifacts(*items: tuple[int, str, int]) -> httpx.Response:
    return httpx.Response(200, json={"total_count": len(items), "artifacts": [
        {"id": i, "name": n, "size_in_bytes": s, "expired": False, "archive_download_url": f"https://api.github.com{API}/actions/artifacts/{i}/zip"}
        for i, n, s in items]})


def serve_blobs(gh_mock, blobs: dict[str, bytes], seen_auth: list[str]) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        seen_auth.append(request.headers.get("authorization", ""))
        return httpx.Response(200, content=blobs[request.url.path.rsplit("/", 1)[-1]], headers={"content-type": "application/zip"})

    gh_mock.route(host=BLOB).mock(side_effect=handler)


def redirect(blob: str) -> httpx.Response:
    return httpx.Response(302, headers={"location": f"https://{BLOB}/rest/artifacts/{blob}"})


def test_routing() -> None:
    r = route("workflow_run", workflow_run(), APP_ID)
    assert r.outcome == "queued" and r.specs[0].kind == "profile" and r.specs[0].payload["run_id"] == 900
    assert r.specs[0].payload["base_ref"] == "main" and r.specs[0].pr_key.endswith(":profile")
    assert route("workflow_run", workflow_run(event="push"), APP_ID).outcome == "ignored"
    assert route("workflow_run", workflow_run(conclusion="cancelled"), APP_ID).outcome == "ignored"
    assert route("workflow_run", dict(workflow_run(), action="requested"), APP_ID).outcome == "ignored"


def test_profile_check_run_with_base_comparison_and_gate(client, rt, fake, gh_mock, tmp_path: Path) -> None:
    fake.configs[(REPO, "main")] = "gate:\n  max_step_time_regression: 10%\n"
    head_zip, base_zip = trace_zip(tmp_path, 140.0), trace_zip(tmp_path, 100.0)
    seen_auth: list[str] = []
    serve_blobs(gh_mock, {"head.zip": head_zip, "base.zip": base_zip}, seen_auth)
    fake.inject("GET", rf"{API}/actions/runs/900/artifacts$", artifacts((77, "accel-profile", len(head_zip)), (70, "coverage", 10)), times=2)
    fake.inject("GET", rf"{API}/actions/artifacts/77/zip$", redirect("head.zip"))
    fake.inject("GET", rf"{API}/actions/workflows/55/runs$", httpx.Response(200, json={"total_count": 1, "workflow_runs": [{"id": 800}]}))
    fake.inject("GET", rf"{API}/actions/runs/800/artifacts$", artifacts((78, "accel-profile-main", len(base_zip))))
    fake.inject("GET", rf"{API}/actions/artifacts/78/zip$", redirect("base.zip"))

    assert deliver(client, "workflow_run", workflow_run()).status_code == 202
    drain(rt)
    runs = fake.runs_named("Accel Profile")
    assert len(runs) == 1
    run = runs[0]
    assert run.head_sha == HEAD_SHA and run.status == "completed"
    assert run.conclusion == "failure"  # the step time grew by more than 10%
    assert "slower than the 10% allowed" in run.output["summary"]
    assert run.output["title"].startswith("Profile: ") and "vs main" in run.output["title"]
    assert "`accel-profile`" in run.output["summary"] and "coverage" not in run.output["summary"]
    assert seen_auth == ["", ""]  # the storage host never saw the installation token
    wf = fake.calls_to("GET", r"/actions/workflows/55/runs$")[0]
    assert wf.method == "GET"


def test_no_matching_artifact_posts_nothing(client, rt, fake) -> None:
    fake.inject("GET", rf"{API}/actions/runs/900/artifacts$", artifacts((70, "coverage", 10)))
    deliver(client, "workflow_run", workflow_run())
    drain(rt)
    assert fake.runs_named("Accel Profile") == []


def test_oversized_artifact_stops_with_a_clear_message(client, rt, fake) -> None:
    fake.inject("GET", rf"{API}/actions/runs/900/artifacts$", artifacts((77, "accel-profile", 5 << 30)))
    deliver(client, "workflow_run", workflow_run())
    drain(rt)
    run = fake.runs_named("Accel Profile")[0]
    assert run.conclusion == "neutral" and run.output["title"] == "Accel Profile stopped at a limit"
    assert "5120 MiB, over the 1024 MiB limit" in run.output["summary"]


def test_traversal_in_artifact_is_refused(client, rt, fake, gh_mock, tmp_path: Path) -> None:
    bad = trace_zip(tmp_path, 100.0, extra={"../../etc/cron.d/x": b"* * * * * root true"})
    serve_blobs(gh_mock, {"bad.zip": bad}, [])
    fake.inject("GET", rf"{API}/actions/runs/900/artifacts$", artifacts((77, "accel-profile", len(bad))))
    fake.inject("GET", rf"{API}/actions/artifacts/77/zip$", redirect("bad.zip"))
    deliver(client, "workflow_run", workflow_run())
    drain(rt)
    run = fake.runs_named("Accel Profile")[0]
    assert run.conclusion == "neutral" and "refused member '../../etc/cron.d/x'" in run.output["summary"]


def test_time_limit(rt, fake, gh_mock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from bot.store import Job

    z = trace_zip(tmp_path, 100.0)
    serve_blobs(gh_mock, {"a.zip": z}, [])
    fake.inject("GET", rf"{API}/actions/runs/900/artifacts$", artifacts((77, "accel-profile", len(z))))
    fake.inject("GET", rf"{API}/actions/artifacts/77/zip$", redirect("a.zip"))
    spec = route("workflow_run", workflow_run(), APP_ID).specs[0]
    job = Job(spec.id, spec.kind, spec.payload, spec.pr_key, spec.head_sha, False, "running", 0)
    limits = profile_job.ProfileLimits(time_limit=-1.0)  # already past: the first file stops it
    assert asyncio.run(profile_job.run_profile(rt, job, limits)) == "limit"
    run = fake.runs_named("Accel Profile")[0]
    assert run.conclusion == "neutral" and "time limit" in run.output["summary"]


def test_a_failure_after_start_leaves_no_run_in_progress(rt, fake, gh_mock, tmp_path: Path) -> None:
    import asyncio

    from bot.store import Job

    fake.inject("GET", rf"{API}/actions/runs/900/artifacts$", artifacts((77, "accel-profile", 100)))
    fake.inject("GET", rf"{API}/actions/artifacts/77/zip$", httpx.Response(404, json={"message": "Not Found"}))
    spec = route("workflow_run", workflow_run(), APP_ID).specs[0]
    job = Job(spec.id, spec.kind, spec.payload, spec.pr_key, spec.head_sha, False, "running", 0)
    with pytest.raises(httpx.HTTPStatusError):
        asyncio.run(profile_job.run_profile(rt, job))
    run = fake.runs_named("Accel Profile")[0]
    assert run.status == "completed" and run.conclusion == "neutral" and "HTTPStatusError" in run.output["summary"]


def test_repo_config_profiles_section() -> None:
    from bot.repo_config import ConfigError, parse_config, validate

    cfg = validate({"profiles": {"artifact": "perf-*", "thresholds": {"idle_high_pct": 15}}, "gate": {"max_step_time_regression": "5%"}})
    assert cfg.profiles.artifact == "perf-*" and cfg.profiles.max_step_time_regression_pct == 5.0
    assert cfg.profiles.thresholds["idle_high_pct"] == 15 and hash(cfg)
    assert validate({}).profiles.artifact == "accel-profile*"
    with pytest.raises(ConfigError, match=r"profiles\.thresholds: unknown key 'idle'"):
        validate({"profiles": {"thresholds": {"idle": 1}}})
    loaded = parse_config("gate:\n  max_step_time_regression: fast\n")
    assert loaded.errors and "expected a percentage" in loaded.errors[0]


def test_recommendations_say_what_the_static_audit_of_the_profiled_commit_found(client, rt, fake, gh_mock, tmp_path: Path) -> None:
    from .fakegh import make_tarball
    from .repos import HEAD

    fake.tarballs[HEAD_SHA] = make_tarball(HEAD)  # train.py: bf16=False, save_steps=1
    head_zip = trace_zip(tmp_path, 140.0)
    serve_blobs(gh_mock, {"head.zip": head_zip}, [])
    fake.inject("GET", rf"{API}/actions/runs/900/artifacts$", artifacts((77, "accel-profile", len(head_zip))))
    fake.inject("GET", rf"{API}/actions/artifacts/77/zip$", redirect("head.zip"))
    fake.inject("GET", rf"{API}/actions/workflows/55/runs$", httpx.Response(200, json={"total_count": 0, "workflow_runs": []}))
    deliver(client, "workflow_run", workflow_run())
    drain(rt)
    summary = fake.runs_named("Accel Profile")[0].output["summary"]
    assert fake.calls_to("GET", rf"/tarball/{HEAD_SHA}")
    assert "(static audit: unused, `train.py:" in summary or "(static audit: partial, `train.py:" in summary, summary


def test_without_the_commit_archive_the_diagnosis_goes_on_alone(client, rt, fake, gh_mock, tmp_path: Path) -> None:
    head_zip = trace_zip(tmp_path, 140.0)
    serve_blobs(gh_mock, {"head.zip": head_zip}, [])
    fake.inject("GET", rf"/tarball/{HEAD_SHA}$", httpx.Response(404, json={"message": "Not Found"}))
    fake.inject("GET", rf"{API}/actions/runs/900/artifacts$", artifacts((77, "accel-profile", len(head_zip))))
    fake.inject("GET", rf"{API}/actions/artifacts/77/zip$", redirect("head.zip"))
    fake.inject("GET", rf"{API}/actions/workflows/55/runs$", httpx.Response(200, json={"total_count": 0, "workflow_runs": []}))
    deliver(client, "workflow_run", workflow_run())
    drain(rt)
    run = fake.runs_named("Accel Profile")[0]
    assert run.status == "completed" and run.output["title"].startswith("Profile: ") and "static audit" not in run.output["summary"]


def test_a_monorepo_keeps_only_the_statuses_its_projects_agree_on() -> None:
    from bot.profile_audit import merged_statuses

    a = [{"id": "C1", "status": "used", "evidence": [{"path": "a/x.py", "line": 3}]}, {"id": "D2", "status": "unused", "evidence": []}]
    b = [{"id": "C1", "status": "used", "evidence": []}, {"id": "D2", "status": "used", "evidence": []}]
    assert merged_statuses([a, b]) == {"checks": [{"id": "C1", "status": "used", "evidence": [{"path": "a/x.py", "line": 3}]}]}
    assert merged_statuses([]) == {"checks": []}
