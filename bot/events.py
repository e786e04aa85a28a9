"""Which webhook deliveries become jobs.

* ``pull_request`` opened / synchronize / reopened / ready_for_review -> audit the head (supersedable: a newer
  push of the same PR drops it);
* ``check_run`` rerequested on one of our runs -> audit that commit again, updating that run;
  ``requested_action`` "Apply fixes" -> the fix command (bot.fix_job);
* ``issue_comment`` created with an ``/accel`` command -> the command job;
* ``workflow_run`` completed for a pull request -> the ``profile`` job (Accel Profile, bot/profile_job.py);
* ``installation`` / ``installation_repositories`` -> logged; everything else acknowledged and ignored.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from typing import Any

from .commands import parse_command
from .store import JobSpec, PRHead

log = logging.getLogger(__name__)

PR_ACTIONS = {"opened", "synchronize", "reopened", "ready_for_review"}
CHECK_RUN_PREFIX = "Accel Audit"


@dataclass(slots=True)
class Routed:
    outcome: str  # "queued" | "ignored" | "logged"
    specs: list[JobSpec] = field(default_factory=list)
    head: PRHead | None = None
    note: str = ""


def pr_key(repo_id: Any, number: Any) -> str:
    return f"{repo_id}#{number}"


def _ts(value: Any) -> float:
    if isinstance(value, str):
        try:
            return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return dt.datetime.now(dt.UTC).timestamp()


def _repo(payload: dict[str, Any]) -> tuple[str, str, Any, str]:
    repo = payload["repository"]
    return repo["owner"]["login"], repo["name"], repo["id"], repo.get("default_branch") or "main"


def _route_pull_request(payload: dict[str, Any]) -> Routed:
    action = payload.get("action")
    if action not in PR_ACTIONS:
        return Routed("ignored", note=f"pull_request {action}")
    pr = payload["pull_request"]
    if pr.get("state") == "closed":
        return Routed("ignored", note="closed pull request")
    owner, name, repo_id, default_branch = _repo(payload)
    key = pr_key(repo_id, pr["number"])
    sha = pr["head"]["sha"]
    job = {
        "installation_id": payload["installation"]["id"],
        "owner": owner,
        "repo": name,
        "pull_number": pr["number"],
        "head_sha": sha,
        "base_sha": pr["base"]["sha"],
        "base_ref": pr["base"]["ref"],
        "default_branch": default_branch,
        "fork": bool((pr["head"].get("repo") or {}).get("fork")) or (pr["head"].get("repo") or {}).get("id") != repo_id,
        "trigger": f"pull_request.{action}",
    }
    spec = JobSpec("pr_audit", job, pr_key=key, head_sha=sha, supersedable=True)
    return Routed("queued", [spec], PRHead(key, sha, _ts(pr.get("updated_at"))))


def _route_check_run(payload: dict[str, Any], app_id: int) -> Routed:
    action = payload.get("action")
    run = payload["check_run"]
    if (run.get("app") or {}).get("id") not in (None, app_id) or not str(run.get("name", "")).startswith(CHECK_RUN_PREFIX):
        return Routed("ignored", note="another app's check run")
    if action == "requested_action":
        from .fix_job import route_requested_action

        return route_requested_action(payload)
    if action != "rerequested":
        return Routed("ignored", note=f"check_run {action}")
    owner, name, repo_id, default_branch = _repo(payload)
    prs = [p for p in run.get("pull_requests") or [] if (p.get("base") or {}).get("repo", {}).get("id", repo_id) == repo_id]
    pr = prs[0] if prs else None
    sha = run["head_sha"]
    job = {
        "installation_id": payload["installation"]["id"],
        "owner": owner,
        "repo": name,
        "pull_number": pr["number"] if pr else None,
        "head_sha": sha,
        "base_sha": pr["base"]["sha"] if pr else None,
        "base_ref": pr["base"]["ref"] if pr else None,
        "default_branch": default_branch,
        "check_run_id": run["id"],
        "check_run_name": run.get("name"),
        "trigger": "check_run.rerequested",
    }
    key = pr_key(repo_id, pr["number"]) if pr else f"{repo_id}@{sha}"
    return Routed("queued", [JobSpec("pr_audit", job, pr_key=key, head_sha=sha, supersedable=False)])


def _route_issue_comment(payload: dict[str, Any]) -> Routed:
    if payload.get("action") != "created":
        return Routed("ignored", note=f"issue_comment {payload.get('action')}")
    comment = payload["comment"]
    if (payload.get("sender") or {}).get("type") == "Bot" or (comment.get("user") or {}).get("type") == "Bot":
        return Routed("ignored", note="comment by a bot")
    cmd = parse_command(comment.get("body") or "")
    if cmd is None:
        return Routed("ignored", note="no /accel command")
    owner, name, repo_id, _ = _repo(payload)
    issue = payload["issue"]
    job = {
        "installation_id": payload["installation"]["id"],
        "owner": owner,
        "repo": name,
        "repo_id": repo_id,
        "number": issue["number"],
        "is_pull_request": "pull_request" in issue,
        "command": cmd[0],
        "args": cmd[1],
        "comment_id": comment["id"],
        "author": (comment.get("user") or {}).get("login"),
        "association": comment.get("author_association", "NONE"),
    }
    return Routed("queued", [JobSpec("command", job, pr_key="", head_sha="")])


def route(event: str, payload: dict[str, Any], app_id: int) -> Routed:
    """Raises KeyError/TypeError for a payload that lacks what its event must carry (a malformed body)."""
    if event == "pull_request":
        return _route_pull_request(payload)
    if event == "check_run":
        return _route_check_run(payload, app_id)
    if event == "issue_comment":
        return _route_issue_comment(payload)
    if event == "workflow_run":
        from .profile_job import route_workflow_run

        return route_workflow_run(payload)
    if event in ("installation", "installation_repositories"):
        inst = payload.get("installation") or {}
        account = (inst.get("account") or {}).get("login")
        repos = [r.get("full_name") for r in (payload.get("repositories_added") or payload.get("repositories") or [])]
        removed = [r.get("full_name") for r in payload.get("repositories_removed") or []]
        log.info("%s %s: installation %s on %s, repositories %s%s", event, payload.get("action"), inst.get("id"), account,
                 repos, f", removed {removed}" if removed else "")
        return Routed("logged", note=f"{event} {payload.get('action')}")
    if event == "ping":
        return Routed("logged", note="ping")
    return Routed("ignored", note=event)
