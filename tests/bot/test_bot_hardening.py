"""Issue #15, fail closed and stay up: one test per finding of the probe (each failed before its fix)."""

from __future__ import annotations

import json

import httpx

from .fakegh import git_diff, make_tarball
from .helpers import (
    HEAD_SHA,
    NEWER_SHA,
    OWNER,
    REPO,
    deliver,
    drain,
    headers,
    issue_comment,
    pull_request,
)
from .repos import BASE, HEAD

DEEP_TOML = "[project]\nname = \"x\"\ndependencies = " + "[" * 5000 + "]" * 5000 + "\n"


def _setup_pr(fake, number: int = 7) -> None:
    fake.diffs[number] = git_diff(BASE, HEAD)
    fake.pulls[number] = pull_request(number=number)["pull_request"]


# ---------------------------------------------------------------- gating must not fail open

def test_a_crashing_file_is_a_parse_error_and_the_gate_still_decides(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.tarballs[HEAD_SHA] = make_tarball(dict(HEAD, **{"pyproject.toml": DEEP_TOML}))
    deliver(client, "pull_request", pull_request())
    drain(rt)
    run = fake.runs_named()[0]
    assert run.status == "completed" and run.conclusion == "failure"  # the regression still blocks
    assert "pyproject.toml" in run.output["text"]  # listed among the files that could not be parsed


def test_an_audit_that_cannot_finish_blocks_a_gated_repo(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.tarballs[HEAD_SHA] = b"this is not a gzip archive"
    deliver(client, "pull_request", pull_request())
    drain(rt)
    run = fake.runs_named()[0]
    assert run.status == "completed" and run.conclusion == "failure"
    assert "could not" in run.output["summary"] and "blocks the merge" in run.output["summary"]


def test_gate_turned_off_gives_neutral_when_the_audit_cannot_finish(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.configs[(REPO, "main")] = "gate:\n  fail_on_regression: false\n"
    fake.tarballs[HEAD_SHA] = b"this is not a gzip archive"
    deliver(client, "pull_request", pull_request())
    drain(rt)
    assert fake.runs_named()[0].conclusion == "neutral"


def test_a_failed_job_completes_its_check_run_with_the_gate_conclusion(client, rt, fake) -> None:
    _setup_pr(fake)
    # the diff endpoint answers 422 (not transient) after the check run was started: the job fails
    fake.inject("GET", r"/pulls/7$", httpx.Response(422, json={"message": "Validation Failed"}), times=1)
    fake.inject("GET", r"/pulls/7$", httpx.Response(200, json=fake.pulls[7]), times=1)  # the head check passes first
    fake.injected.reverse()
    deliver(client, "pull_request", pull_request())
    drain(rt)
    run = fake.runs_named()[0]
    assert run.status == "completed" and run.conclusion == "failure"
    assert "GitHub answered 422" in run.output["summary"]


# ---------------------------------------------------------------- trust boundaries

def test_extends_cannot_read_another_path_and_never_echoes_extended_content(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.configs[(REPO, "main")] = "_extends: private-infra:deploy/prod.yml\n"
    deliver(client, "pull_request", pull_request())
    drain(rt)
    run = fake.runs_named()[0]
    assert "only .github/accel-audit.yml of another repository" in run.output["summary"]
    assert not fake.calls_to("GET", r"/repos/octo-org/private-infra/")
    # an extended file with a secret-looking key: the error names the repository, never the key
    fake.configs[(REPO, "main")] = "_extends: shared\n"
    fake.configs[("shared", "")] = "aws_secret_access_key: AKIAEXAMPLE\n"
    fake.pulls[7]["head"]["sha"] = NEWER_SHA
    fake.tarballs[NEWER_SHA] = fake.tarballs[HEAD_SHA]
    deliver(client, "pull_request", pull_request(action="synchronize", head=NEWER_SHA, updated_at="2026-11-01T10:05:00Z"))
    drain(rt)
    run = next(r for r in fake.runs_named() if r.head_sha == NEWER_SHA)
    assert f"invalid config in {OWNER}/shared" in run.output["summary"]
    assert "aws_secret_access_key" not in json.dumps(run.output) and "AKIA" not in json.dumps(run.output)


def test_rescan_by_a_read_only_collaborator_is_refused(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.permissions.update({"reader": "read", "triager": "triage", "maintainer": "maintain"})
    for login in ("reader", "triager", "octocat"):  # octocat: the PR's author, no access (404)
        deliver(client, "issue_comment", issue_comment("/accel rescan", association="COLLABORATOR", login=login))
    drain(rt)
    assert not fake.check_runs and len(fake.issue_comments) == 3
    assert all("write, maintain or admin" in c["body"] for c in fake.issue_comments)
    assert fake.calls_to("GET", r"/collaborators/reader/permission$")
    deliver(client, "issue_comment", issue_comment("/accel rescan", login="maintainer"))
    drain(rt)
    assert fake.runs_named()[0].status == "completed"


def test_repeated_rescans_are_debounced(client, rt, fake) -> None:
    _setup_pr(fake)
    fake.permissions["octocat"] = "admin"
    for i in range(8):
        payload = issue_comment("/accel rescan")
        payload["comment"]["id"] = 99001 + i
        deliver(client, "issue_comment", payload)
    drain(rt)
    assert len(fake.calls_to("GET", rf"/tarball/{HEAD_SHA}$")) == 1  # one audit, not eight
    assert [r["content"] for r in fake.reactions].count("rocket") == 1


def test_commands_are_answered_on_pull_requests_only(client, rt, fake) -> None:
    assert deliver(client, "issue_comment", issue_comment("/accel help", on_pr=False)).json()["status"] == "ignored"
    drain(rt)
    assert not fake.issue_comments


def test_unknown_command_reply_never_echoes_user_text(client, rt, fake) -> None:
    _setup_pr(fake)
    deliver(client, "issue_comment", issue_comment("/accel `@octo-org/everyone`[x](https://evil.example)"))
    drain(rt)
    body = fake.issue_comments[0]["body"]
    assert "@octo-org" not in body and "evil.example" not in body and body.startswith("Unknown `/accel` command.")


def test_metrics_need_a_bearer_token_on_the_webhook_port(tmp_path, rsa_key, gh_mock) -> None:
    from fastapi.testclient import TestClient

    from bot.app import create_app
    from bot.runtime import build_runtime
    from bot.settings import load_settings

    from .helpers import APP_ID, SECRET, TEST_TUNING

    token = "m" * 32
    env = {"ACCEL_APP_ID": str(APP_ID), "ACCEL_PRIVATE_KEY": rsa_key[0], "ACCEL_WEBHOOK_SECRET": SECRET,
           "ACCEL_DATA_DIR": str(tmp_path / "d"), "ACCEL_METRICS_TOKEN": token}
    rt = build_runtime(load_settings(env), TEST_TUNING)
    try:
        with TestClient(create_app(rt)) as c:
            assert c.get("/metrics").status_code == 404
            assert c.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 404
            ok = c.get("/metrics", headers={"Authorization": f"Bearer {token}"})
            assert ok.status_code == 200 and "accel_webhook_deliveries_total" in ok.text
    finally:
        rt.close()


# ---------------------------------------------------------------- resource limits on the webhook

def test_chunked_body_over_the_limit_is_413_without_reading_it_whole(client, rt) -> None:
    from bot.app import MAX_BODY

    sent = 0

    def chunks():
        nonlocal sent
        block = b"x" * (1 << 20)
        while sent < MAX_BODY + (8 << 20):
            sent += len(block)
            yield block

    hdr = headers("pull_request", b"")
    hdr.pop("Content-Length", None)
    r = client.post("/api/github/webhooks", content=chunks(), headers=hdr)
    assert r.status_code == 413 and r.json()["status"] == "too_large"
    assert rt.store.active_count() == 0


def test_signed_deeply_nested_json_is_400(client, rt) -> None:
    body = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    r = client.post("/api/github/webhooks", content=body, headers=headers("pull_request", body))
    assert r.status_code == 400 and r.json()["status"] == "malformed"
