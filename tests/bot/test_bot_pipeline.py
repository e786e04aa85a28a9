"""End to end: webhook -> queue -> audit of base and head from tarballs -> check run + review, GitHub mocked by respx."""

from __future__ import annotations

import logging

import httpx
import jwt

from bot.check_runs import complete_check_run
from bot.repo_config import CONFIG_PATH

from .fakegh import git_diff
from .helpers import (
    APP_ID,
    BASE_SHA,
    HEAD_SHA,
    NEWER_SHA,
    OWNER,
    REPO,
    SECRET,
    check_run,
    deliver,
    drain,
    issue_comment,
    pull_request,
)
from .repos import BASE, HEAD


def _setup_pr(fake, number: int = 7) -> None:
    fake.diffs[number] = git_diff(BASE, HEAD)
    fake.pulls[number] = pull_request(number=number)["pull_request"]


def test_pull_request_audit_end_to_end(client, rt, fake, rsa_key, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    _setup_pr(fake)
    assert deliver(client, "pull_request", pull_request()).status_code == 202
    assert drain(rt) == 1

    runs = fake.runs_named()
    assert len(runs) == 1
    run = runs[0]
    assert run.head_sha == HEAD_SHA and run.status == "completed"
    # created in_progress first, completed afterwards
    created = fake.calls_to("POST", r"/check-runs$")[0]
    assert created.body["status"] == "in_progress" and created.body["name"] == "Accel Audit"
    assert run.conclusion == "neutral"  # a regression, no gate configured: visible, not blocking
    assert run.output["title"].startswith("Accel score")
    assert "Changes in this PR" in run.output["summary"] and "C1" in run.output["summary"]
    assert "## Scan" in run.output["text"]
    # the annotation: the high-priority C1 finding on train.py, a file the PR touches
    assert any(a["path"] == "train.py" and a["title"].startswith("C1") for a in run.annotations)
    # both commits read through the tarball endpoint and its redirect; config read from the base branch
    assert len(fake.calls_to("GET", rf"/tarball/{HEAD_SHA}$")) == 1 and len(fake.calls_to("GET", rf"/tarball/{BASE_SHA}$")) == 1
    cfg_call = fake.calls_to("GET", r"/contents/\.github/accel-audit\.yml$")[0]
    assert cfg_call.path == f"/repos/{OWNER}/{REPO}/contents/{CONFIG_PATH}"
    # the review: one inline comment on the bf16 line, COMMENT event, on the head commit
    assert len(fake.reviews) == 1
    review = fake.reviews[0]
    assert review["event"] == "COMMENT" and review["commit_id"] == HEAD_SHA
    assert review["comments"] and {(c["path"], c["side"]) for c in review["comments"]} == {("train.py", "RIGHT")}
    assert any("C1" in c["body"] or "bf16" in c["body"] for c in review["comments"])
    # App JWT as GitHub requires, and one installation token reused for every call
    token_calls = fake.calls_to("POST", r"/access_tokens$")
    assert len(token_calls) == 1
    claims = jwt.decode(token_calls[0].auth[7:], rsa_key[1], algorithms=["RS256"])
    assert claims["iss"] == str(APP_ID) and claims["exp"] - claims["iat"] <= 600
    # secrets never logged
    logged = "\n".join(r.getMessage() for r in caplog.records)
    token = next(iter(fake.tokens))
    assert SECRET not in logged and "PRIVATE KEY" not in logged and token not in logged
    assert rt.store.active_count() == 0


def test_rerun_on_same_sha_updates_the_same_check_run(client, rt, fake) -> None:
    _setup_pr(fake)
    deliver(client, "pull_request", pull_request())
    drain(rt)
    run = fake.runs_named()[0]
    n_ann = len(run.annotations)
    assert n_ann >= 1
    assert deliver(client, "check_run", check_run(run_id=run.id)).json()["status"] == "queued"
    drain(rt)
    assert len(fake.check_runs) == 1  # updated, not duplicated
    assert run.status == "completed" and run.conclusion == "neutral"
    assert len(run.annotations) == n_ann  # annotations already there are not appended twice
    # ready_for_review on the same commit also updates that run
    deliver(client, "pull_request", pull_request(action="ready_for_review"))
    drain(rt)
    assert len(fake.check_runs) == 1
    # the review is not posted again for the same findings
    assert len(fake.reviews) == 1


def test_superseded_head_is_dropped(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.tarballs[NEWER_SHA] = fake.tarballs[HEAD_SHA]
    deliver(client, "pull_request", pull_request())
    deliver(client, "pull_request", pull_request(action="synchronize", head=NEWER_SHA, updated_at="2026-11-01T10:05:00Z"))
    # an older event delivered late does not move the head back
    deliver(client, "pull_request", pull_request(action="reopened", updated_at="2026-11-01T09:30:00Z"))
    drain(rt)
    shas = [r.head_sha for r in fake.check_runs.values()]
    assert shas == [NEWER_SHA]
    assert not fake.calls_to("GET", rf"/tarball/{HEAD_SHA}$")


def test_502s_then_success(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.inject("POST", r"/check-runs$", httpx.Response(502, json={"message": "Server Error"}), times=2)
    fake.inject("GET", r"/tarball/", httpx.Response(502, text="bad gateway"), times=1)
    deliver(client, "pull_request", pull_request())
    drain(rt)
    assert len(fake.calls_to("POST", r"/check-runs$")) == 3
    runs = fake.runs_named()
    assert len(runs) == 1 and runs[0].status == "completed"
    assert 'accel_github_api_errors_total{kind="502"} 2.0' in client.get("/metrics").text


def test_secondary_rate_limit_waits_for_retry_after(client, rt, fake) -> None:
    _setup_pr(fake)
    limited = httpx.Response(
        403, headers={"retry-after": "1", "x-ratelimit-remaining": "4990"},
        json={"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."},
    )
    fake.inject("PATCH", r"/check-runs/\d+$", limited)
    deliver(client, "pull_request", pull_request())
    drain(rt)
    patches = fake.calls_to("PATCH", r"/check-runs/\d+$")
    assert len(patches) >= 2
    assert patches[1].t - patches[0].t >= 1.0  # the retry came after Retry-After
    assert fake.runs_named()[0].status == "completed"
    assert 'accel_github_api_errors_total{kind="secondary_rate_limit"} 1.0' in client.get("/metrics").text


def test_primary_rate_limit_puts_the_job_back_until_reset(client, rt, fake) -> None:
    import time

    _setup_pr(fake)
    reset = str(int(time.time()) + 3600)  # an hour away: too long to sleep inside a request
    fake.inject("GET", r"/contents/", httpx.Response(403, headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset},
                                                      json={"message": "API rate limit exceeded"}))
    deliver(client, "pull_request", pull_request())
    drain(rt)  # the retry is scheduled an hour later; the drain fast-forwards the clock
    assert rt.huey.scheduled_count() == 0
    assert fake.runs_named()[0].status == "completed"
    assert 'accel_jobs_total{kind="pr_audit",outcome="retry"} 1.0' in client.get("/metrics").text


def test_invalid_config_is_reported_and_defaults_apply(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.configs[(REPO, "main")] = "gate:\n  min_score: high\n"
    deliver(client, "pull_request", pull_request())
    drain(rt)
    run = fake.runs_named()[0]
    err = ".github/accel-audit.yml: gate.min_score: expected a number from 0 to 100 (percent), got 'high'"
    assert err in run.output["summary"] and err in run.output["text"]
    assert run.conclusion == "neutral"  # defaults: no gate


def test_yaml_syntax_error_names_line_and_column(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.configs[(REPO, "main")] = "language: en\nignore: [C2\n"
    deliver(client, "pull_request", pull_request())
    drain(rt)
    assert "invalid YAML at line 3, column 1" in fake.runs_named()[0].output["summary"]


def test_gate_blocks_with_configured_conclusion_and_extends_org_defaults(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.configs[(REPO, "main")] = "_extends: .github\nlanguage: en\n"
    fake.configs[(".github", "")] = "gate:\n  fail_on_regression: true\n  conclusion: action_required\n"
    deliver(client, "pull_request", pull_request())
    drain(rt)
    run = fake.runs_named()[0]
    assert run.conclusion == "action_required"
    assert "Merge gate: action required" in run.output["summary"]


def test_min_score_gate_fails(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.configs[(REPO, "main")] = "gate:\n  min_score: 99\n"
    deliver(client, "pull_request", pull_request())
    drain(rt)
    assert fake.runs_named()[0].conclusion == "failure"


def test_monorepo_projects_get_one_check_run_each(client, rt, fake) -> None:
    from .fakegh import make_tarball

    base = {f"llm/{k}": v for k, v in BASE.items()} | {f"vlm/{k}": v for k, v in BASE.items()}
    head = {f"llm/{k}": v for k, v in HEAD.items()} | {f"vlm/{k}": v for k, v in BASE.items()}
    fake.tarballs[BASE_SHA], fake.tarballs[HEAD_SHA] = make_tarball(base), make_tarball(head)
    fake.diffs[7] = git_diff(base, head)
    fake.configs[(REPO, "main")] = "projects:\n  - llm\n  - path: vlm\n    name: Vision\n"
    deliver(client, "pull_request", pull_request())
    drain(rt)
    names = sorted(r.name for r in fake.check_runs.values())
    assert names == ["Accel Audit (Vision)", "Accel Audit (llm)"]
    llm = fake.runs_named("Accel Audit (llm)")[0]
    vision = fake.runs_named("Accel Audit (Vision)")[0]
    assert llm.conclusion == "neutral" and vision.conclusion == "success"
    assert {c["path"] for c in fake.reviews[0]["comments"]} == {"llm/train.py"}
    assert all(a["path"].startswith("llm/") for a in llm.annotations) and llm.annotations


def test_large_pr_falls_back_to_the_files_api(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.diff_406.add(7)
    patch = git_diff(BASE, HEAD).split("\n", 3)[3]  # from the first hunk on
    fake.files[7] = [{"filename": "train.py", "status": "modified", "patch": patch}]
    deliver(client, "pull_request", pull_request())
    drain(rt)
    assert fake.calls_to("GET", r"/pulls/7/files$")
    assert {c["path"] for c in fake.reviews[0]["comments"]} == {"train.py"}


def test_fork_pr_and_rerun_with_empty_pull_requests(client, rt, fake) -> None:
    _setup_pr(fake)
    deliver(client, "pull_request", pull_request(fork=True))
    drain(rt)
    run = fake.runs_named()[0]
    assert run.status == "completed" and len(fake.reviews) == 1
    # a check_run event of a fork PR has an empty pull_requests array: the PR is found from the commit
    deliver(client, "check_run", check_run(run_id=run.id, with_pr=False))
    drain(rt)
    assert fake.calls_to("GET", rf"/commits/{HEAD_SHA}/pulls$")
    assert len(fake.check_runs) == 1 and run.status == "completed"


def test_annotations_are_batched_50_per_request(rt, fake) -> None:
    import asyncio

    fake.tokens.add("ghs_x")
    gh = rt.github.installation(42)
    run_id = 4711
    from .fakegh import CheckRun

    fake.check_runs[run_id] = CheckRun(run_id, "Accel Audit", HEAD_SHA, "in_progress")
    anns = [{"path": "train.py", "start_line": i, "end_line": i, "annotation_level": "warning", "title": f"T{i}", "message": "m"} for i in range(1, 121)]
    n = asyncio.run(complete_check_run(gh, OWNER, REPO, run_id, "success", {"title": "t", "summary": "s", "text": "x"}, anns))
    assert n == 3
    run = fake.check_runs[run_id]
    assert run.patches == 3 and len(run.annotations) == 120 and run.conclusion == "success"
    assert [len(c.body["output"].get("annotations", [])) for c in fake.calls_to("PATCH", rf"/check-runs/{run_id}$")] == [50, 50, 20]


def test_commands(client, rt, fake) -> None:
    _setup_pr(fake)
    deliver(client, "issue_comment", issue_comment("/accel help"))
    deliver(client, "issue_comment", issue_comment("/accel fix C1"))
    deliver(client, "issue_comment", issue_comment("/accel frobnicate"))
    drain(rt)
    bodies = [c["body"] for c in fake.issue_comments]
    assert "accel-audit commands" in bodies[0]
    assert "write access" in bodies[1] and "Nothing was changed" in bodies[1]  # the fake knows no permission: refused
    assert bodies[2].startswith("Unknown command `/accel frobnicate`")
    assert not fake.check_runs
    # a stranger cannot ask for a rescan; a collaborator can
    deliver(client, "issue_comment", issue_comment("/accel rescan", association="NONE", login="stranger"))
    drain(rt)
    assert "can be asked for by" in fake.issue_comments[-1]["body"] and not fake.check_runs
    deliver(client, "issue_comment", issue_comment("/accel rescan"))
    drain(rt)
    assert [r for r in fake.reactions if r["content"] == "rocket"] == [{"comment_id": 99001, "content": "rocket"}]
    assert [r["content"] for r in fake.reactions if r["content"] != "rocket"] == ["eyes"]  # /accel fix is acknowledged at once
    assert fake.runs_named()[0].status == "completed"


def test_base_is_audited_at_the_merge_base(client, rt, fake) -> None:
    """GitHub diffs a PR against the merge base: the base tip may already contain the PR's change."""
    from .fakegh import make_tarball

    merge_base = "ab" * 20
    _setup_pr(fake)
    fake.merge_bases[BASE_SHA] = merge_base
    fake.tarballs[merge_base] = make_tarball(BASE)
    fake.tarballs[BASE_SHA] = make_tarball(HEAD)  # the tip moved on with the same change: comparing to it hides the regression
    deliver(client, "pull_request", pull_request())
    drain(rt)
    assert len(fake.calls_to("GET", rf"/tarball/{merge_base}$")) == 1
    assert not fake.calls_to("GET", rf"/tarball/{BASE_SHA}$")
    assert fake.reviews and any("C1" in c["body"] or "bf16" in c["body"] for c in fake.reviews[0]["comments"])


def test_monorepo_projects_share_the_inline_budget_and_list_the_overflow(client, rt, fake) -> None:
    from .fakegh import make_tarball

    base = {f"llm/{k}": v for k, v in BASE.items()} | {f"vlm/{k}": v for k, v in BASE.items()}
    head = {f"llm/{k}": v for k, v in HEAD.items()} | {f"vlm/{k}": v for k, v in HEAD.items()}
    fake.tarballs[BASE_SHA], fake.tarballs[HEAD_SHA] = make_tarball(base), make_tarball(head)
    fake.diffs[7] = git_diff(base, head)
    fake.configs[(REPO, "main")] = "projects:\n  - llm\n  - vlm\ncomments:\n  max_inline: 1\n"
    deliver(client, "pull_request", pull_request())
    drain(rt)
    assert len(fake.reviews) == 1 and len(fake.reviews[0]["comments"]) == 1
    assert fake.reviews[0]["comments"][0]["path"].startswith("llm/")
    vlm = fake.runs_named("Accel Audit (vlm)")[0]
    assert "over the inline comment limit (1)" in vlm.output["summary"]



def test_annotations_follow_the_report_plan_not_raw_priorities() -> None:
    """A check-level HIGH that the report's plan withholds (FP8 on an A100) is never annotated."""
    from bot.check_runs import annotations_for
    from checks.engine import AuditOptions, audit_files
    from checks.model import Evidence, Priority, Status
    from reports.advice import build_plan

    files = {
        "train.py": (
            "import torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
            "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
            "args = TrainingArguments(output_dir='out', per_device_train_batch_size=4)\n"
            "Trainer(model=model, args=args).train()\n"
        ),
    }
    audit = audit_files(((p, t.encode()) for p, t in files.items()), options=AuditOptions(hardware="a100"))
    fp8 = audit.result("C2")
    fp8.status, fp8.priority = Status.UNUSED, Priority.HIGH
    fp8.evidence = [Evidence("train.py", 4, "args = TrainingArguments(...)")]
    assert "C2" in {w.check for w in build_plan(audit).withheld}
    titles = [a["title"] for a in annotations_for(audit, ["train.py"])]
    assert not any(t.startswith("C2") for t in titles)
    assert any(t.startswith("D1") for t in titles)  # advice the plan keeps is still annotated
