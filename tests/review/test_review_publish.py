"""publish_review against a respx-mocked GitHub (REST + GraphQL), stateful across pushes."""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest
import respx
from githubkit import GitHub

from checks.model import Evidence, Status
from review.pipeline import build_pr_review
from review.publish import publish_review

from .review_util import result, synthetic

API = "https://api.github.com"
U, N = Status.USED, Status.UNUSED


def _review(save: int, log: int):
    base = synthetic([
        result("I3", U, [Evidence("train.yaml", 2, "save_steps: 500", "save_steps", 500)], {"save_steps": 500}),
        result("I4", U, [Evidence("train.yaml", 3, "logging_steps: 10", "logging_steps", 10)], {"logging_steps": 10}),
    ])
    head = synthetic([
        result("I3", N if save < 500 else U, [Evidence("train.yaml", 2, f"save_steps: {save}", "save_steps", save)], {"save_steps": save}),
        result("I4", N if log < 10 else U, [Evidence("train.yaml", 3, f"logging_steps: {log}", "logging_steps", log)], {"logging_steps": log}),
    ])
    patch = f"@@ -1,3 +1,3 @@\n model: m\n-save_steps: 500\n-logging_steps: 10\n+save_steps: {save}\n+logging_steps: {log}"
    return build_pr_review(base, head, files=[{"filename": "train.yaml", "status": "modified", "patch": patch}])


class FakeGitHub:
    """Just enough of GitHub's review API to keep state between pushes."""

    def __init__(self, per_page_cut: int = 100) -> None:
        self.comments: list[dict] = []
        self.threads: dict[int, dict] = {}  # first comment id -> thread
        self.next_id = 1000
        self.reviews: list[dict] = []
        self.replies: list[tuple[int, dict]] = []
        self.resolved: list[str] = []
        self.per_page_cut = per_page_cut

    def add_comment(self, body: str, path: str, user_type: str = "Bot", reply_to: int | None = None) -> dict:
        self.next_id += 1
        c = {"id": self.next_id, "body": body, "path": path, "user": {"login": "accel-audit[bot]" if user_type == "Bot" else "dev", "type": user_type}}
        if reply_to is not None:
            c["in_reply_to_id"] = reply_to
        else:
            self.threads[c["id"]] = {"id": f"PRRT_{c['id']}", "isResolved": False}
        self.comments.append(c)
        return c

    def list_comments(self, request: httpx.Request) -> httpx.Response:
        assert request.url.params.get("per_page") == "100"
        page = int(request.url.params.get("page", "1"))
        cut = self.per_page_cut
        items = self.comments[(page - 1) * cut : page * cut]
        headers = {}
        if page * cut < len(self.comments):
            headers["link"] = f'<{API}/repositories/1/pulls/7/comments?per_page=100&page={page + 1}>; rel="next"'
        return httpx.Response(200, json=items, headers=headers)

    def create_review(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.reviews.append(body)
        for c in body["comments"]:
            self.add_comment(c["body"], c["path"])
        return httpx.Response(200, json={"id": 555 + len(self.reviews), "state": "COMMENTED"})

    def reply(self, request: httpx.Request, comment_id: str) -> httpx.Response:
        body = json.loads(request.content)
        self.replies.append((int(comment_id), body))
        c = self.add_comment(body["body"], "", reply_to=int(comment_id))
        return httpx.Response(201, json=c)

    def graphql(self, request: httpx.Request) -> httpx.Response:
        payload = json.loads(request.content)
        if "resolveReviewThread" in payload["query"]:
            tid = payload["variables"]["threadId"]
            self.resolved.append(tid)
            for t in self.threads.values():
                if t["id"] == tid:
                    t["isResolved"] = True
            return httpx.Response(200, json={"data": {"resolveReviewThread": {"thread": {"id": tid, "isResolved": True}}}})
        assert payload["variables"]["number"] == 7
        nodes = [{"id": t["id"], "isResolved": t["isResolved"], "comments": {"nodes": [{"databaseId": cid}]}} for cid, t in self.threads.items()]
        return httpx.Response(200, json={"data": {"repository": {"pullRequest": {"reviewThreads": {
            "pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": nodes}}}}})

    def mount(self, router: respx.Router) -> None:
        router.get(f"{API}/repos/o/r/pulls/7/comments").mock(side_effect=self.list_comments)
        router.get(url__regex=rf"{API}/repositories/1/pulls/7/comments.*").mock(side_effect=self.list_comments)
        router.post(f"{API}/repos/o/r/pulls/7/reviews").mock(side_effect=self.create_review)
        router.post(url__regex=rf"{API}/repos/o/r/pulls/7/comments/(?P<comment_id>\d+)/replies").mock(side_effect=self.reply)
        router.post(f"{API}/graphql").mock(side_effect=self.graphql)


def _publish(review, sha: str, **kw):
    async def go():
        gh = GitHub("test-token", http_cache=False, auto_retry=False)
        return await publish_review(gh, "o", "r", 7, sha, review, write_interval=0, **kw)

    return asyncio.run(go())


def test_first_push_posts_one_review_with_validated_targets():
    fake = FakeGitHub()
    review = _review(1, 1)
    with respx.mock(assert_all_called=False) as router:
        fake.mount(router)
        out = _publish(review, "a" * 40)
    [body] = fake.reviews
    assert body["commit_id"] == "a" * 40 and body["event"] == "COMMENT" and body["body"]
    targets = [(c["path"], c["line"], c["side"]) for c in body["comments"]]
    assert targets == [("train.yaml", 2, "RIGHT"), ("train.yaml", 3, "RIGHT")]
    assert "```suggestion\nsave_steps: 500\n```" in body["comments"][0]["body"]
    assert all(c["body"].rstrip().endswith("-->") for c in body["comments"])
    assert out["posted"] == [c.fingerprint for c in review.comments] and out["review_id"] == 556


def test_second_synchronize_with_the_same_findings_posts_nothing_new():
    fake = FakeGitHub()
    with respx.mock(assert_all_called=False) as router:
        fake.mount(router)
        _publish(_review(1, 1), "a" * 40)
        out = _publish(_review(1, 1), "b" * 40)
        graphql_calls = [c for c in router.calls if c.request.url.path == "/graphql"]
    assert len(fake.reviews) == 1
    assert out["posted"] == [] and len(out["already_commented"]) == 2 and out["fixed"] == []
    assert fake.replies == [] and graphql_calls == []


def test_fixed_finding_gets_a_reply_and_its_thread_resolved_once():
    fake = FakeGitHub()
    with respx.mock(assert_all_called=False) as router:
        fake.mount(router)
        _publish(_review(1, 1), "a" * 40)
        save_comment = next(c for c in fake.comments if "save_steps" in c["body"])
        out = _publish(_review(500, 1), "c" * 40)  # save_steps restored, logging_steps still 1
        assert len(fake.reviews) == 1  # nothing new to post
        assert [(cid, b["body"].splitlines()[0]) for cid, b in fake.replies] == [(save_comment["id"], f"Fixed in {'c' * 40}.")]
        assert fake.resolved == [f"PRRT_{save_comment['id']}"] and out["resolved"] == fake.resolved
        again = _publish(_review(500, 1), "d" * 40)
    assert again["fixed"] == [] and len(fake.replies) == 1 and len(fake.resolved) == 1
    assert all(c.request.method != "DELETE" for c in router.calls)


def test_a_finding_that_comes_back_after_a_fix_is_posted_again():
    fake = FakeGitHub()
    with respx.mock(assert_all_called=False) as router:
        fake.mount(router)
        _publish(_review(1, 10), "a" * 40)
        _publish(_review(500, 10), "b" * 40)
        out = _publish(_review(1, 10), "c" * 40)
    assert len(fake.reviews) == 2 and len(out["posted"]) == 1


def test_existing_comments_on_a_later_page_are_seen():
    fake = FakeGitHub(per_page_cut=2)
    for i in range(3):
        fake.add_comment(f"human note {i}", "train.yaml", user_type="User")
    with respx.mock(assert_all_called=False) as router:
        fake.mount(router)
        _publish(_review(1, 1), "a" * 40)  # our two comments land on page 2 and 3
        out = _publish(_review(1, 1), "b" * 40)
    assert len(fake.reviews) == 1 and out["posted"] == []


def test_a_persons_comment_with_our_marker_is_not_ours():
    fake = FakeGitHub()
    review = _review(1, 10)
    fake.add_comment(f"quoting the bot: {review.comments[0].body}", "train.yaml", user_type="User")
    with respx.mock(assert_all_called=False) as router:
        fake.mount(router)
        out = _publish(review, "a" * 40)
    assert len(out["posted"]) == 1 and fake.replies == []


def test_nothing_new_and_nothing_fixed_sends_no_write():
    fake = FakeGitHub()
    empty = _review(500, 10)
    assert empty.comments == []
    with respx.mock(assert_all_called=False) as router:
        fake.mount(router)
        out = _publish(empty, "a" * 40)
        writes = [c for c in router.calls if c.request.method == "POST"]
    assert writes == [] and out == {"review_id": None, "posted": [], "already_commented": [], "fixed": [], "resolved": []}


@pytest.mark.parametrize("event", ["PENDING", "APPROVE", ""])
def test_no_pending_or_approve_review(event):
    with respx.mock(assert_all_called=False) as router, pytest.raises(ValueError):
        FakeGitHub().mount(router)
        _publish(_review(1, 1), "a" * 40, event=event)


def test_request_changes_and_path_prefix_for_a_monorepo_project():
    fake = FakeGitHub()
    fake.add_comment("<!-- accel-audit:fp=0123456789abcdef0123 -->", "other-project/x.yaml")  # another project's thread
    with respx.mock(assert_all_called=False) as router:
        fake.mount(router)
        out = _publish(_review(1, 10), "a" * 40, event="REQUEST_CHANGES", path_prefix="llm/")
    [body] = fake.reviews
    assert body["event"] == "REQUEST_CHANGES"
    assert [c["path"] for c in body["comments"]] == ["llm/train.yaml"]
    assert out["fixed"] == [] and fake.replies == []  # never resolves a thread outside its project
    assert re.fullmatch(r"[0-9a-f]{20}", out["posted"][0])


def _same_line_review(f1: int, f2: int):
    """F1 and F2 both cite the num_workers line: their findings share one comment."""
    ev = lambda n: Evidence("train.yaml", 2, f"dataloader_num_workers: {n}", "dataloader_num_workers", n)  # noqa: E731
    base = synthetic([result("F1", U, [ev(8)], {"num_workers": 8}), result("F2", U, [ev(8)], {"prefetch_factor": 2})])
    head = synthetic([result("F1", U if f1 else N, [ev(f1)], {"num_workers": f1}), result("F2", U if f2 else N, [ev(f1)], {"prefetch_factor": f2})])
    patch = f"@@ -1,2 +1,2 @@\n model: m\n-dataloader_num_workers: 8\n+dataloader_num_workers: {f1}"
    return build_pr_review(base, head, files=[{"filename": "train.yaml", "status": "modified", "patch": patch}])


def test_findings_on_one_line_share_a_comment_and_its_thread():
    review = _same_line_review(0, 0)
    [c] = review.comments
    assert len(c.also) == 1 and c.body.count("<!-- accel-audit:fp=") == 2 and "Also on this line:" in c.body
    fake = FakeGitHub()
    with respx.mock(assert_all_called=False) as router:
        fake.mount(router)
        _publish(review, "a" * 40)
        assert _publish(_same_line_review(0, 0), "b" * 40)["posted"] == []
        partly = _publish(_same_line_review(0, 2), "c" * 40)  # prefetch back, workers still 0: the thread stays open
        assert partly["fixed"] == [] and fake.replies == [] and fake.resolved == []
        both = _publish(_same_line_review(8, 2), "d" * 40)
    assert sorted(both["fixed"]) == sorted([c.fingerprint, *c.also]) and len(fake.replies) == 1 and len(fake.resolved) == 1
    assert len(fake.reviews) == 1
