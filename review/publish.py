"""Post the review on GitHub: one review per push, only new findings, fixed ones replied to and resolved.

- Existing review comments are listed (all pages); a top-level comment of ours carries
  ``<!-- accel-audit:fp=... -->`` (several when findings on one line share a comment). A
  comment whose findings are all on an open thread already is not posted again.
- New comments go out in one ``POST /pulls/{n}/reviews`` with ``event`` COMMENT or
  REQUEST_CHANGES (never a PENDING review); nothing is posted when nothing is new.
- A thread all of whose findings disappeared gets a reply "Fixed in <sha>" (marked
  ``<!-- accel-audit:fixed=... -->`` so it is said once), and the thread is resolved
  with GraphQL ``resolveReviewThread``. Nothing is ever deleted.
- Writes are sent one at a time, ``write_interval`` seconds apart (GitHub's secondary
  rate limits ask for about one second between content-creating requests).
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only a type here: importing githubkit costs every CLI run ~30 MB and ~0.3 s
    from githubkit import GitHub

from .comments import parse_fingerprints
from .model import InlineComment, PRReview

__all__ = ["EVENTS", "publish_review", "review_request"]

EVENTS = ("COMMENT", "REQUEST_CHANGES")
_FIXED = re.compile(r"<!--\s*accel-audit:fixed=([0-9a-f]{8,64})\s*-->")

THREADS_QUERY = """
query($owner: String!, $repo: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $repo) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes { id isResolved comments(first: 1) { nodes { databaseId } } }
      }
    }
  }
}
"""

RESOLVE_MUTATION = """
mutation($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } }
}
"""


def _comment_json(c: InlineComment, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {"path": prefix + c.path, "line": c.line, "side": c.side, "body": c.body}
    if c.start_line is not None:
        out["start_line"] = c.start_line
        out["start_side"] = c.start_side or c.side
    return out


def _review_body(review: PRReview, n_new: int) -> str:
    n = len(review.regressions)
    return (f"**accel-audit**: {n} change(s) in this pull request slow training down; "
            f"{n_new} new inline comment(s) below. The check run lists every change with its expected cost.")


def review_request(review: PRReview, commit_id: str, *, event: str = "COMMENT", comments: list[InlineComment] | None = None,
                   path_prefix: str = "", body: str | None = None) -> dict[str, Any]:
    """The JSON body of ``POST /repos/{o}/{r}/pulls/{n}/reviews`` for these comments (default: all of the review's)."""
    if event not in EVENTS:
        raise ValueError(f"review event must be one of {EVENTS}, not {event!r} (no PENDING or APPROVE review)")
    items = review.comments if comments is None else comments
    prefix = path_prefix.strip("/") + "/" if path_prefix.strip("/") else ""
    return {
        "commit_id": commit_id,
        "event": event,
        "body": body if body is not None else _review_body(review, len(items)),
        "comments": [_comment_json(c, prefix) for c in items],
    }


async def _list_review_comments(gh: GitHub[Any], owner: str, repo: str, pull_number: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pages = gh.rest.paginate(
        gh.rest.pulls.async_list_review_comments, map_func=lambda r: r.json(), owner=owner, repo=repo, pull_number=pull_number, per_page=100,
        headers={"Cache-Control": "no-cache"},  # a cached page would repost what the last push already commented
    )
    async for item in pages:
        if isinstance(item, dict):
            out.append(item)
    return out


async def _threads(gh: GitHub[Any], owner: str, repo: str, pull_number: int) -> dict[int, tuple[str, bool]]:
    """First comment's database id -> (thread node id, resolved)."""
    out: dict[int, tuple[str, bool]] = {}
    cursor: str | None = None
    for _ in range(100):  # 10,000 threads is far beyond any real PR
        data = await gh.async_graphql(THREADS_QUERY, {"owner": owner, "repo": repo, "number": pull_number, "cursor": cursor})
        pr = ((data or {}).get("repository") or {}).get("pullRequest") or {}
        threads = pr.get("reviewThreads") or {}
        for node in threads.get("nodes") or []:
            first = ((node.get("comments") or {}).get("nodes") or [{}])[0] or {}
            if isinstance(first.get("databaseId"), int):
                out[first["databaseId"]] = (node["id"], bool(node.get("isResolved")))
        info = threads.get("pageInfo") or {}
        if not info.get("hasNextPage"):
            break
        cursor = info.get("endCursor")
    return out


def _ours(c: dict[str, Any]) -> bool:
    user = c.get("user")
    return not isinstance(user, dict) or user.get("type") == "Bot"


async def publish_review(
    gh: GitHub[Any],
    owner: str,
    repo: str,
    pull_number: int,
    commit_id: str,
    review: PRReview,
    *,
    event: str = "COMMENT",
    path_prefix: str = "",
    write_interval: float = 1.0,
) -> dict[str, Any]:
    """Post what is new for this push; reply to and resolve the threads of fixed findings.

    ``path_prefix`` is the sub-project folder when the audit ran on part of a monorepo: it is
    prepended to comment paths, and only threads under it are considered ours to resolve.
    Returns ``{"review_id", "posted", "already_commented", "fixed", "resolved"}``.
    """
    if event not in EVENTS:
        raise ValueError(f"review event must be one of {EVENTS}, not {event!r}")
    prefix = path_prefix.strip("/") + "/" if path_prefix.strip("/") else ""
    existing = await _list_review_comments(gh, owner, repo, pull_number)
    threads_of_ours: list[tuple[dict[str, Any], list[str]]] = []  # our top-level comments and the findings each carries
    fixed_said: set[str] = set()
    for c in existing:
        body = c.get("body") or ""
        if c.get("in_reply_to_id"):
            if _ours(c):
                fixed_said.update(_FIXED.findall(body))
            continue
        fps = parse_fingerprints(body)
        if fps and _ours(c) and str(c.get("path") or "").startswith(prefix):
            threads_of_ours.append((c, fps))
    # a thread is open while one of its findings has not been declared fixed
    open_threads = [(c, fps) for c, fps in threads_of_ours if not set(fps) <= fixed_said]
    live = {fp for _, fps in open_threads for fp in fps}
    current = {c.fingerprint for c in review.regressions if c.fingerprint}
    for ic in review.comments:
        current.add(ic.fingerprint)
        current.update(ic.also)

    result: dict[str, Any] = {"review_id": None, "posted": [], "already_commented": [], "fixed": [], "resolved": []}
    new = [ic for ic in review.comments if not {ic.fingerprint, *ic.also} <= live]
    result["already_commented"] = [ic.fingerprint for ic in review.comments if {ic.fingerprint, *ic.also} <= live]
    writes = 0

    async def pace() -> None:
        nonlocal writes
        if writes and write_interval > 0:
            await asyncio.sleep(write_interval)
        writes += 1

    if new:
        await pace()
        body = review_request(review, commit_id, event=event, comments=new, path_prefix=path_prefix)
        resp = await gh.rest.pulls.async_create_review(owner, repo, pull_number, data=body)
        result["review_id"] = resp.json().get("id")
        result["posted"] = [ic.fingerprint for ic in new]

    gone = [(c, fps) for c, fps in open_threads if not set(fps) & current and isinstance(c.get("id"), int)]
    if gone:
        threads = await _threads(gh, owner, repo, pull_number)
        for comment, fps in gone:
            thread = threads.get(comment["id"])
            if thread is not None and thread[1]:
                continue  # someone already resolved it: say nothing
            await pace()
            markers = "\n".join(f"<!-- accel-audit:fixed={fp} -->" for fp in fps)
            await gh.rest.pulls.async_create_reply_for_review_comment(
                owner, repo, pull_number, comment["id"], body=f"Fixed in {commit_id}.\n\n{markers}"
            )
            result["fixed"] += fps
            if thread is not None:
                await pace()
                await gh.async_graphql(RESOLVE_MUTATION, {"threadId": thread[0]})
                result["resolved"].append(thread[0])
    return result
