"""``/accel fix`` and the "Apply fixes" button end to end, against the fake GitHub at the HTTP layer."""

from __future__ import annotations

import pytest

from .fakegh import git_diff, make_tarball
from .fakegit import FakeGitData
from .helpers import APP_ID, BASE_SHA, HEAD_SHA, check_run, deliver, drain, issue_comment, pull_request
from .repos import BASE, HEAD

BRANCH = "accel-audit/fix-pr7"


@pytest.fixture
def fake(rsa_key: tuple[str, bytes]) -> FakeGitData:
    gh = FakeGitData(APP_ID, rsa_key[1])
    gh.tarballs[BASE_SHA] = make_tarball(BASE)
    gh.tarballs[HEAD_SHA] = make_tarball(HEAD)
    gh.diffs[7] = git_diff(BASE, HEAD)
    gh.pulls[7] = pull_request(number=7)["pull_request"]
    gh.permissions["octocat"] = "write"
    return gh


def _replies(fake: FakeGitData) -> list[str]:
    return [c["body"] for c in fake.issue_comments]


def test_fix_opens_a_pr_then_updates_the_same_one(client, rt, fake, monkeypatch) -> None:
    monkeypatch.setattr(rt.tuning, "command_debounce", 0.0)
    deliver(client, "issue_comment", issue_comment("/accel fix"))
    drain(rt)
    assert fake.reactions[0]["content"] == "eyes"
    assert fake.refs[BRANCH] in fake.commits
    commit = fake.commits[fake.refs[BRANCH]]
    assert commit["parents"] == [{"sha": HEAD_SHA}] and "Accel-Audit-Fix: pr7" in commit["message"]
    tree = fake.trees[commit["tree"]["sha"]]
    assert tree["base_tree"] == "e" * 40 and [e["path"] for e in tree["tree"]] == ["train.py"]
    train = fake.blobs[tree["tree"][0]["sha"]]
    # the PR's regressions go back to the base's values at their sites; every other line is the head's
    assert train == HEAD["train.py"].replace("save_steps=1,", "save_steps=500,").replace("bf16=False,", "bf16=True,")
    prs = [p for p in fake.pulls.values() if p["head"]["ref"] == BRANCH]
    assert len(prs) == 1 and prs[0]["base"]["ref"] == "tune"
    body = prs[0]["body"]
    assert "| I3 | `train.py:" in body and "save_steps=1" in body and "save_steps=500" in body and "**Score**" in body
    assert "**unsafe**" in body  # bf16 restored: flagged
    assert _replies(fake)[-1].startswith(f"Opened {prs[0]['html_url']}")
    # a second run (after the debounce window: off in this test) updates the same branch and PR
    deliver(client, "issue_comment", issue_comment("/accel fix"))
    drain(rt)
    assert len(fake.calls_to("POST", r"/pulls$")) == 1 and len(fake.calls_to("PATCH", rf"/git/refs/heads/{BRANCH}$")) == 1
    assert fake.calls_to("PATCH", rf"/git/refs/heads/{BRANCH}$")[0].body["force"] is True
    assert _replies(fake)[-1].startswith("Updated ")


def test_fix_is_acknowledged_when_it_arrives_not_when_a_worker_is_free(client, rt, fake) -> None:
    deliver(client, "issue_comment", issue_comment("/accel fix"))
    rt.dispatcher.join()  # queued, no worker has run anything yet
    assert fake.reactions == [{"comment_id": 99001, "content": "eyes"}] and not fake.calls_to("GET", r"/pulls/7$")
    drain(rt)
    assert [r["content"] for r in fake.reactions] == ["eyes"]  # the job does not react a second time
    assert fake.refs[BRANCH] in fake.commits


def test_when_the_early_reaction_fails_the_job_reacts(client, rt, fake) -> None:
    import httpx

    fake.inject("POST", r"/reactions$", httpx.Response(403, json={"message": "Resource not accessible by integration"}))
    deliver(client, "issue_comment", issue_comment("/accel fix"))
    rt.dispatcher.join()
    assert not fake.reactions and len(fake.calls_to("POST", r"/reactions$")) == 1
    drain(rt)
    assert [r["content"] for r in fake.reactions] == ["eyes"] and fake.refs[BRANCH] in fake.commits


def test_fix_asked_again_at_once_is_debounced(client, rt, fake) -> None:
    deliver(client, "issue_comment", issue_comment("/accel fix"))
    deliver(client, "issue_comment", issue_comment("/accel fix"))
    drain(rt)
    # both comments are acknowledged; one fix is computed, pushed and answered
    assert [r["content"] for r in fake.reactions] == ["eyes", "eyes"]
    assert len(fake.calls_to("POST", r"/pulls$")) == 1 and not fake.calls_to("PATCH", rf"/git/refs/heads/{BRANCH}$")
    assert len([b for b in _replies(fake) if b.startswith("Opened ")]) == 1 and len(_replies(fake)) == 1


def test_without_write_permission_nothing_is_created(client, rt, fake) -> None:
    fake.permissions["octocat"] = "triage"
    deliver(client, "issue_comment", issue_comment("/accel fix", association="COLLABORATOR"))
    drain(rt)
    assert "write access" in _replies(fake)[-1] and not fake.blobs and not fake.refs and not fake.calls_to("GET", r"/tarball/")


def test_fork_pr_gets_the_patch_and_suggestions(client, rt, fake) -> None:
    fake.pulls[7] = pull_request(number=7, fork=True)["pull_request"]
    deliver(client, "issue_comment", issue_comment("/accel fix I3"))
    drain(rt)
    reply = _replies(fake)[-1]
    assert "fork" in reply and "```diff\n--- a/train.py\n+++ b/train.py\n" in reply and "-        save_steps=1,\n+        save_steps=500,\n" in reply
    assert "```suggestion\n        save_steps=500,\n```" in reply
    assert "bf16" not in reply.split("```diff")[1]  # only I3 was asked for
    assert not fake.blobs and not fake.refs


def test_dry_run_replies_with_the_diff_only(client, rt, fake) -> None:
    deliver(client, "issue_comment", issue_comment("/accel fix --dry-run"))
    drain(rt)
    assert "```diff" in _replies(fake)[-1] and "Nothing was created" in _replies(fake)[-1] and not fake.refs


def test_a_branch_a_person_pushed_to_is_left_alone(client, rt, fake) -> None:
    fake.refs[BRANCH] = HEAD_SHA  # a person's commit
    deliver(client, "issue_comment", issue_comment("/accel fix"))
    drain(rt)
    assert "left alone" in _replies(fake)[-1] and fake.refs[BRANCH] == HEAD_SHA and not fake.calls_to("POST", r"/pulls$")


def test_apply_fixes_button(client, rt, fake) -> None:
    assert deliver(client, "check_run", check_run(action="requested_action")).json()["status"] == "queued"
    drain(rt)
    assert BRANCH in fake.refs and _replies(fake)[-1].startswith("Opened ")
    assert not fake.reactions  # no comment to react to


def test_apply_fixes_button_on_a_fork_pr_replies_with_the_patch(client, rt, fake) -> None:
    """GitHub lists no pull_requests on a fork PR's check run: the job finds the PR by its head commit."""
    fake.pulls[7] = pull_request(number=7, fork=True)["pull_request"]
    assert deliver(client, "check_run", check_run(action="requested_action", with_pr=False)).json()["status"] == "queued"
    drain(rt)
    assert fake.calls_to("GET", rf"/commits/{HEAD_SHA}/pulls$")
    reply = _replies(fake)[-1]
    assert "fork" in reply and "```diff\n--- a/train.py\n+++ b/train.py\n" in reply and not fake.refs


def test_apply_fixes_button_for_a_commit_without_an_open_pr_does_nothing(client, rt, fake) -> None:
    assert deliver(client, "check_run", check_run(action="requested_action", with_pr=False, head="d" * 40)).json()["status"] == "queued"
    drain(rt)
    assert not fake.issue_comments and not fake.refs and not fake.calls_to("GET", r"/collaborators/")


def test_bad_arguments_get_the_usage(client, rt, fake) -> None:
    deliver(client, "issue_comment", issue_comment("/accel fix everything"))
    drain(rt)
    assert "Usage: `/accel fix" in _replies(fake)[-1] and not fake.refs


def test_audit_offers_the_button(client, rt, fake) -> None:
    deliver(client, "pull_request", pull_request())
    drain(rt)
    done = [c for c in fake.calls_to("PATCH", r"/check-runs/\d+$") if c.body.get("status") == "completed"]
    assert done and done[0].body["actions"][0]["identifier"] == "fix" and done[0].body["actions"][0]["label"] == "Apply fixes"


def test_fix_after_the_pr_audit_reads_only_the_regressed_files_at_the_base(client, rt, fake, monkeypatch) -> None:
    monkeypatch.setattr(rt.tuning, "command_debounce", 0.0)
    deliver(client, "pull_request", pull_request())
    drain(rt)
    base_downloads = len(fake.calls_to("GET", rf"/tarball/{BASE_SHA}$"))
    deliver(client, "issue_comment", issue_comment("/accel fix"))
    drain(rt)
    # the audit's regressions were reused: no second download of the base, one file read through the contents API
    assert len(fake.calls_to("GET", rf"/tarball/{BASE_SHA}$")) == base_downloads
    assert [c.path for c in fake.calls_to("GET", r"/contents/train\.py$")] == ["/repos/octo-org/train-repo/contents/train.py"]
    commit = fake.commits[fake.refs[BRANCH]]
    tree = fake.trees[commit["tree"]["sha"]]
    assert fake.blobs[tree["tree"][0]["sha"]] == HEAD["train.py"].replace("save_steps=1,", "save_steps=500,").replace("bf16=False,", "bf16=True,")
    # a newer head makes the hint stale: the fix audits the base itself
    from .helpers import NEWER_SHA

    fake.tarballs[NEWER_SHA] = fake.tarballs[HEAD_SHA]
    fake.pulls[7] = pull_request(number=7, head=NEWER_SHA)["pull_request"]
    deliver(client, "issue_comment", issue_comment("/accel fix"))
    drain(rt)
    assert len(fake.calls_to("GET", rf"/tarball/{BASE_SHA}$")) == base_downloads + 1


def test_button_from_a_reader_or_a_bot_creates_nothing(client, rt, fake) -> None:
    fake.permissions["octocat"] = "read"
    assert deliver(client, "check_run", check_run(action="requested_action")).json()["status"] == "queued"
    drain(rt)
    assert "write access" in _replies(fake)[-1] and not fake.refs and not fake.blobs
    bot = check_run(action="requested_action")
    bot["sender"] = {"login": "accel-audit[bot]", "id": 1, "type": "Bot"}
    assert deliver(client, "check_run", bot).json()["status"] == "logged"


def test_a_refused_ref_falls_back_to_the_patch(client, rt, fake) -> None:
    import httpx

    fake.inject("POST", r"/git/refs$", httpx.Response(403, json={"message": "Resource not accessible by integration"}))
    deliver(client, "issue_comment", issue_comment("/accel fix"))
    drain(rt)
    reply = _replies(fake)[-1]
    assert "GitHub refused the branch (403)" in reply and "```diff" in reply and not fake.refs
    assert not fake.calls_to("POST", r"/pulls$")


def test_the_fix_is_redone_when_the_head_moved(client, rt, fake) -> None:
    import httpx

    from .helpers import NEWER_SHA

    moved = pull_request(number=7, head=NEWER_SHA)["pull_request"]
    fake.tarballs[NEWER_SHA] = make_tarball(dict(HEAD, **{"README.md": "moved on\n"}))
    # the first read sees the old head; while the fix is computed a push moves it
    fake.inject("GET", r"/pulls/7$", httpx.Response(200, json=fake.pulls[7]))
    fake.pulls[7] = moved
    deliver(client, "issue_comment", issue_comment("/accel fix"))
    drain(rt)
    assert len(fake.calls_to("GET", rf"/tarball/{NEWER_SHA}$")) == 1
    commit = fake.commits[fake.refs[BRANCH]]
    assert commit["parents"] == [{"sha": NEWER_SHA}]
