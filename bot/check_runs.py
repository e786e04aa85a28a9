"""The ``Accel Audit`` check run: found or created ``in_progress``, completed with output and annotations.

Re-running on the same commit updates the run already there (found by name, head SHA and our App ID)
instead of adding a second one. Annotations go at most 50 per request; the rest follow in further PATCH
calls on the same run (GitHub appends them). When an existing run is updated, annotations it already
carries are not sent again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from githubkit import GitHub

from checks.engine import Audit
from checks.model import Priority, Status
from reports.advice import build_plan

MAX_ANNOTATIONS_PER_REQUEST = 50
TEXT_LIMIT = 65_535
TITLE_LIMIT = 255
MESSAGE_LIMIT = 64 * 1024 - 1


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def find_check_run(gh: GitHub[Any], owner: str, repo: str, sha: str, name: str, app_id: int) -> int | None:
    resp = await gh.arequest(
        "GET",
        f"/repos/{owner}/{repo}/commits/{sha}/check-runs",
        params={"check_name": name, "filter": "latest", "app_id": app_id, "per_page": 10},
    )
    for run in resp.json().get("check_runs", []):
        if run.get("name") == name and run.get("head_sha") == sha and (run.get("app") or {}).get("id", app_id) == app_id:
            return int(run["id"])
    return None


async def start_check_run(gh: GitHub[Any], owner: str, repo: str, sha: str, name: str, existing: int | None, external_id: str) -> int:
    body = {"name": name, "status": "in_progress", "started_at": _now(), "external_id": external_id}
    if existing is not None:
        await gh.arequest("PATCH", f"/repos/{owner}/{repo}/check-runs/{existing}", json=body)
        return existing
    resp = await gh.arequest("POST", f"/repos/{owner}/{repo}/check-runs", json=dict(body, head_sha=sha))
    return int(resp.json()["id"])


def _ann_key(a: dict[str, Any]) -> tuple:
    return (a.get("path"), a.get("start_line"), a.get("end_line"), a.get("title"), (a.get("message") or "")[:200])


async def existing_annotations(gh: GitHub[Any], owner: str, repo: str, run_id: int) -> set[tuple]:
    keys: set[tuple] = set()
    page = 1
    while page <= 10:
        resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/check-runs/{run_id}/annotations", params={"per_page": 100, "page": page})
        batch = resp.json()
        keys.update(_ann_key(a) for a in batch)
        if len(batch) < 100:
            break
        page += 1
    return keys


async def complete_check_run(
    gh: GitHub[Any],
    owner: str,
    repo: str,
    run_id: int,
    conclusion: str,
    output: dict[str, str],
    annotations: list[dict[str, Any]],
    *,
    skip_existing: bool = False,
    actions: list[dict[str, str]] | None = None,
) -> int:
    """Complete the run; return the number of PATCH requests sent. ``actions``: buttons (e.g. "Apply fixes")."""
    if skip_existing and annotations:
        have = await existing_annotations(gh, owner, repo, run_id)
        annotations = [a for a in annotations if _ann_key(a) not in have]
    batches = [annotations[i : i + MAX_ANNOTATIONS_PER_REQUEST] for i in range(0, len(annotations), MAX_ANNOTATIONS_PER_REQUEST)] or [[]]
    head = {"title": output["title"][:TITLE_LIMIT], "summary": output["summary"][:TEXT_LIMIT]}
    first_output: dict[str, Any] = dict(head)
    if output.get("text"):
        first_output["text"] = output["text"][:TEXT_LIMIT]
    if batches[0]:
        first_output["annotations"] = batches[0]
    await gh.arequest(
        "PATCH",
        f"/repos/{owner}/{repo}/check-runs/{run_id}",
        json={"status": "completed", "conclusion": conclusion, "completed_at": _now(), "output": first_output, **({"actions": actions} if actions else {})},
    )
    for batch in batches[1:]:
        await gh.arequest("PATCH", f"/repos/{owner}/{repo}/check-runs/{run_id}", json={"output": dict(head, annotations=batch)})
    return len(batches)


def annotations_for(audit: Audit, touched: Iterable[str], prefix: str = "") -> list[dict[str, Any]]:
    """Annotations for high-priority findings on files the PR touches (repository-relative paths).

    "High priority" is the report's advice plan, so an annotation never recommends what the summary
    withholds (FP8 on an A100, sharding for a small single-GPU model...).
    """
    touched = set(touched)
    pre = (prefix.rstrip("/") + "/") if prefix else ""
    out: list[dict[str, Any]] = []
    seen: set[tuple] = set()
    plan = build_plan(audit)
    for r in audit.results:
        rec = plan.get(r.id)
        if r.status == Status.NA or rec is None or rec.priority != Priority.HIGH:
            continue
        places = list(r.findings)
        if r.status in (Status.UNUSED, Status.PARTIAL):
            places += list(r.evidence)
        for ev in places:
            path = pre + ev.path
            if path not in touched or not ev.line:
                continue
            key = (path, ev.line, r.id)
            if key in seen:
                continue
            seen.add(key)
            msg = " ".join(x for x in (r.detail, rec.text) if x) or r.title
            out.append({
                "path": path,
                "start_line": int(ev.line),
                "end_line": int(ev.line),
                "annotation_level": "warning",
                "title": f"{r.id} {r.title}"[:TITLE_LIMIT],
                "message": msg[:MESSAGE_LIMIT],
                **({"raw_details": ev.snippet[:2000]} if ev.snippet else {}),
            })
    return out
