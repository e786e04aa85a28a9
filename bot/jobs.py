"""What a job does once claimed: audit a pull request (check runs, review), or answer an ``/accel`` command."""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from githubkit import GitHub
from githubkit.exception import RequestFailed

from checks.engine import Audit, AuditOptions
from checks.source import SourceError
from reports.scoring import overall
from review.model import PRReview

from . import commands
from .check_runs import annotations_for, complete_check_run, find_check_run, start_check_run
from .config_loader import load_repo_config
from .events import pr_key
from .fix_job import FIX_ACTIONS
from .gate import decide
from .output import compose
from .pr_diff import PRDiff, fetch_pr_diff
from .repo_config import ProjectSpec, RepoConfig
from .store import Job, JobSpec, PRHead
from .tarball import audit_commit, audit_project_in_archive, download_commit

if TYPE_CHECKING:
    from .runtime import Runtime

log = logging.getLogger(__name__)


class Superseded(Exception):
    """A newer push of the pull request was seen: this job's result would be stale."""


def _options(rt: Runtime, cfg: RepoConfig) -> AuditOptions:
    return AuditOptions(limits=rt.tuning.limits, ignore=cfg.ignore, exclude=cfg.exclude, training=cfg.training, hardware=cfg.hardware, cache=rt.facts_cache)


async def audit_projects(rt: Runtime, gh: GitHub[Any], owner: str, repo: str, sha: str, cfg: RepoConfig) -> dict[ProjectSpec, Audit]:
    options = _options(rt, cfg)
    kw = {"max_download": rt.tuning.max_download, "retry_delay": rt.tuning.retry_base_delay}
    if len(cfg.projects) == 1 and not cfg.projects[0].path:
        return {cfg.projects[0]: await audit_commit(gh, owner, repo, sha, options, **kw)}
    archive = await download_commit(gh, owner, repo, sha, rt.settings.data_dir / "tmp", **kw)
    try:
        root = f"{owner}/{repo}@{sha[:12]}"
        return {p: await anyio.to_thread.run_sync(audit_project_in_archive, archive, p.path, root, options) for p in cfg.projects}
    finally:
        archive.unlink(missing_ok=True)


def _prefixed(review: PRReview, prefix: str) -> PRReview:
    if not prefix:
        return review
    pre = prefix.rstrip("/") + "/"

    def fix(items: list[Any]) -> list[Any]:
        return [dataclasses.replace(x, path=pre + x.path) if getattr(x, "path", None) else x for x in items]

    return dataclasses.replace(
        review, regressions=fix(review.regressions), improvements=fix(review.improvements), comments=fix(review.comments), unplaced=fix(review.unplaced)
    )


def _merge(reviews: list[PRReview]) -> PRReview:
    """One review for the PR from the projects' reviews (their inline budgets already add up to ``max_inline``)."""
    out = PRReview()
    for r in reviews:
        out.regressions += r.regressions
        out.improvements += r.improvements
        out.comments += r.comments
        out.unplaced += r.unplaced
        for k, v in r.category_delta.items():
            out.category_delta[k] = out.category_delta.get(k, 0.0) + v
    out.summary_md = "\n\n".join(r.summary_md for r in reviews if r.summary_md)
    return out


async def _merge_base(gh: GitHub[Any], owner: str, repo: str, base_sha: str, head_sha: str) -> str:
    """The commit GitHub diffs the PR against; the base branch tip may have moved on since the branch was cut.

    Auditing the tip instead would compare against changes the PR does not contain and place comments on
    removed lines at the wrong numbers. Falls back to the tip when GitHub cannot compare the two.
    """
    try:
        resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/compare/{base_sha}...{head_sha}", params={"per_page": 1})
        sha = ((resp.json() or {}).get("merge_base_commit") or {}).get("sha")
    except RequestFailed as exc:
        log.info("compare %s...%s failed (%s): auditing the base tip", base_sha[:12], head_sha[:12], exc.response.status_code)
        return base_sha
    return sha if isinstance(sha, str) and sha else base_sha


async def _find_pr_for_commit(gh: GitHub[Any], owner: str, repo: str, sha: str) -> dict[str, Any] | None:
    """The open PR whose head is ``sha`` (check-run events for fork PRs carry an empty ``pull_requests``)."""
    resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/commits/{sha}/pulls", params={"per_page": 10})
    for pr in resp.json():
        if pr.get("state") == "open" and (pr.get("head") or {}).get("sha") == sha:
            return pr
    return None


def _is_superseded(rt: Runtime, job: Job) -> bool:
    if not job.supersedable or not job.pr_key:
        return False
    latest = rt.store.latest_head(job.pr_key)
    return latest is not None and latest != job.head_sha


async def run_pr_audit(rt: Runtime, job: Job) -> str:
    p = job.payload
    gh = rt.github.installation(int(p["installation_id"]))
    owner, repo, sha = p["owner"], p["repo"], p["head_sha"]
    number, base_sha, base_ref = p.get("pull_number"), p.get("base_sha"), p.get("base_ref")
    if number is None:
        pr = await _find_pr_for_commit(gh, owner, repo, sha)
        if pr is not None:
            number, base_sha, base_ref = pr["number"], pr["base"]["sha"], pr["base"]["ref"]

    loaded = await load_repo_config(gh, owner, repo, base_ref or p.get("default_branch"))
    cfg = loaded.config
    runs: dict[ProjectSpec, tuple[int, bool]] = {}
    for proj in cfg.projects:
        existing = p.get("check_run_id") if p.get("check_run_name") == proj.check_name else None
        if existing is None:
            existing = await find_check_run(gh, owner, repo, sha, proj.check_name, rt.settings.app_id)
        runs[proj] = (await start_check_run(gh, owner, repo, sha, proj.check_name, existing, job.id), existing is not None)

    started = time.monotonic()
    try:
        diff = await fetch_pr_diff(gh, owner, repo, int(number)) if number is not None else PRDiff()
        heads = await audit_projects(rt, gh, owner, repo, sha, cfg)
        if number is not None and base_sha:
            base_sha = await _merge_base(gh, owner, repo, base_sha, sha)
        bases = await audit_projects(rt, gh, owner, repo, base_sha, cfg) if (number is not None and base_sha) else {}
    except SourceError as exc:
        for run_id, _ in runs.values():
            await complete_check_run(gh, owner, repo, run_id, "neutral", {
                "title": "Accel Audit could not read the repository",
                "summary": f"The repository archive at `{sha[:12]}` could not be audited: {exc}",
            }, [])
        return "unreadable"
    finally:
        rt.metrics.audit_seconds.observe(time.monotonic() - started)

    if _is_superseded(rt, job):
        await _cancel(gh, owner, repo, runs, rt.store.latest_head(job.pr_key) or "")
        raise Superseded()

    from review.pipeline import build_pr_review

    # Every project's review first: the PR's inline budget is shared, and a project whose comments do not fit
    # lists the overflow in its own check run (the review pipeline does that for what exceeds its budget).
    per_project: dict[ProjectSpec, PRReview] = {}
    budget = cfg.max_inline
    if number is not None:
        for proj in cfg.projects:
            pdiff = diff.for_project(proj.path)
            review = build_pr_review(
                bases.get(proj), heads[proj], diff_text=pdiff.diff_text, files=pdiff.files, max_inline=budget, lang=cfg.language,
                inline_limit=cfg.max_inline,
            )
            budget = max(0, budget - len(review.comments))
            per_project[proj] = review
    reviews = [_prefixed(per_project[proj], proj.path) for proj in cfg.projects if proj in per_project]
    for proj in cfg.projects:
        head = heads[proj]
        review = per_project.get(proj)
        verdict = decide(cfg.gate, overall(head.results).percent, bool(review and review.has_regression))
        output = compose(head, lang=cfg.language, changes_md=review.summary_md if review else None, loaded=loaded, verdict=verdict,
                         unplaced=review.unplaced if review else None)
        annotations = annotations_for(head, diff.changed, proj.path)
        run_id, was_there = runs[proj]
        await complete_check_run(gh, owner, repo, run_id, verdict.conclusion, output, annotations, skip_existing=was_there,
                                 actions=FIX_ACTIONS if number is not None else None)

    if number is not None and reviews:  # for a following /accel fix on this head (bot.fix_hints)
        from .fix_hints import save as save_fix_hint

        save_fix_hint(rt, owner, repo, int(number), sha, base_sha or "", [c for r in reviews for c in r.regressions])
    if number is not None and reviews and not _is_superseded(rt, job):
        from review.publish import publish_review

        merged = reviews[0] if len(reviews) == 1 else _merge(reviews)
        await publish_review(gh, owner, repo, int(number), sha, merged, event=cfg.review_event)
    return "done"


async def _cancel(gh: GitHub[Any], owner: str, repo: str, runs: dict[ProjectSpec, tuple[int, bool]], newer: str) -> None:
    for run_id, _ in runs.values():
        await complete_check_run(gh, owner, repo, run_id, "cancelled", {
            "title": "Superseded by a newer push",
            "summary": f"A newer commit (`{newer[:12]}`) of this pull request is being audited instead.",
        }, [])


async def report_failure(rt: Runtime, job: Job, reason: str) -> None:
    """Best effort: close the job's check runs with ``neutral`` and the reason (never blocks a merge on our error)."""
    if job.kind != "pr_audit":
        return
    p = job.payload
    gh = rt.github.installation(int(p["installation_id"]))
    try:
        loaded = await load_repo_config(gh, p["owner"], p["repo"], p.get("base_ref") or p.get("default_branch"))
        for proj in loaded.config.projects:
            run_id = await find_check_run(gh, p["owner"], p["repo"], p["head_sha"], proj.check_name, rt.settings.app_id)
            if run_id is not None:
                await complete_check_run(gh, p["owner"], p["repo"], run_id, "neutral", {
                    "title": "Accel Audit could not finish",
                    "summary": f"The audit stopped: {reason}. Comment `/accel rescan` on the pull request to try again.",
                }, [])
    except Exception as exc:  # GitHub may be the reason we are here
        log.warning("could not report the failure of job %s: %s", job.id, type(exc).__name__)


async def _reply(gh: GitHub[Any], owner: str, repo: str, number: int, body: str) -> None:
    await gh.arequest("POST", f"/repos/{owner}/{repo}/issues/{number}/comments", json={"body": body})


async def run_command(rt: Runtime, job: Job) -> str:
    p = job.payload
    gh = rt.github.installation(int(p["installation_id"]))
    owner, repo, number, name = p["owner"], p["repo"], int(p["number"]), p["command"]
    if name == "help":
        await _reply(gh, owner, repo, number, commands.HELP)
        return "help"
    if name == "fix":
        from .fix_job import run_fix

        return await run_fix(rt, job)
    if name != "rescan":
        await _reply(gh, owner, repo, number, commands.unknown_reply(name))
        return "unknown"
    if not p.get("is_pull_request"):
        await _reply(gh, owner, repo, number, commands.NOT_A_PR.format(command=name))
        return "not-a-pr"
    pr = (await gh.arequest("GET", f"/repos/{owner}/{repo}/pulls/{number}")).json()
    if p.get("association") not in commands.TRUSTED and p.get("author") != (pr.get("user") or {}).get("login"):
        await _reply(gh, owner, repo, number, commands.NOT_ALLOWED)
        return "not-allowed"
    if pr.get("state") != "open":
        await _reply(gh, owner, repo, number, "This pull request is closed: nothing to rescan.")
        return "closed"
    from .events import _ts

    key = pr_key(p["repo_id"], number)
    sha = pr["head"]["sha"]
    spec = JobSpec("pr_audit", {
        "installation_id": p["installation_id"], "owner": owner, "repo": repo, "pull_number": number, "head_sha": sha,
        "base_sha": pr["base"]["sha"], "base_ref": pr["base"]["ref"],
        "default_branch": (pr["base"].get("repo") or {}).get("default_branch") or pr["base"]["ref"], "trigger": "comment.rescan",
    }, pr_key=key, head_sha=sha, supersedable=True)
    rt.store.set_head(PRHead(key, sha, _ts(pr.get("updated_at"))))
    rt.store.add_job(spec)
    rt.enqueue(spec.id)
    await gh.arequest("POST", f"/repos/{owner}/{repo}/issues/comments/{p['comment_id']}/reactions", json={"content": "rocket"})
    return "rescan-queued"
