"""What a job does once claimed: audit a pull request (check runs, review), or answer an ``/accel`` command."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from githubkit import GitHub
from githubkit.exception import RequestFailed

from checks.engine import Audit, AuditOptions
from checks.source import SourceError

from . import commands
from .audit_compute import AuditInput, CacheSpec, Computed, compute_pr
from .check_runs import complete_check_run, find_check_run, start_check_run
from .config_loader import load_repo_config
from .events import pr_key
from .facts_cache import facts_cache_key
from .fix_job import FIX_ACTIONS
from .gate import Verdict, gave_up
from .permissions import can_write
from .pr_diff import PRDiff, fetch_pr_diff
from .repo_config import ProjectSpec, RepoConfig
from .retry import transient_delay
from .sandbox import run_limited
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
    """Audit a commit in this process, without limits. :func:`run_pr_audit` does not use it: its audits run in a
    child process with a wall-time budget and a memory limit (:mod:`bot.sandbox`, :mod:`bot.audit_compute`)."""
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


async def _github_head(gh: GitHub[Any], owner: str, repo: str, number: int) -> str | None:
    """The pull request's head commit as GitHub has it now (None once the PR is closed)."""
    pr = (await gh.arequest("GET", f"/repos/{owner}/{repo}/pulls/{number}")).json()
    if pr.get("state") != "open":
        return None
    return str((pr.get("head") or {}).get("sha") or "") or None


async def _github_head_or_unknown(gh: GitHub[Any], owner: str, repo: str, number: int, sha: str) -> str | None:
    try:
        return await _github_head(gh, owner, repo, number)
    except RequestFailed as exc:
        if exc.response.status_code == 404:  # cannot tell (no access to the PR): audit the commit asked for
            return sha
        raise


async def _superseded_by(rt: Runtime, gh: GitHub[Any], job: Job, number: int | None) -> str | None:
    """The newer head that makes this job stale, decided from GitHub's state of the pull request, never from the
    order deliveries arrived in (two pushes in one second share ``updated_at``); ``""`` for a closed PR."""
    if not job.supersedable or number is None:
        return None
    p = job.payload
    head = await _github_head_or_unknown(gh, p["owner"], p["repo"], int(number), job.head_sha)
    if head == job.head_sha:
        return None
    if head and job.pr_key:
        rt.store.set_head(PRHead(job.pr_key, head, time.time()))
    return head or ""


async def run_pr_audit(rt: Runtime, job: Job) -> str:
    p = job.payload
    gh = rt.github.installation(int(p["installation_id"]))
    owner, repo, sha = p["owner"], p["repo"], p["head_sha"]
    number, base_sha, base_ref = p.get("pull_number"), p.get("base_sha"), p.get("base_ref")
    if number is None:
        pr = await _find_pr_for_commit(gh, owner, repo, sha)
        if pr is not None:
            number, base_sha, base_ref = pr["number"], pr["base"]["sha"], pr["base"]["ref"]

    newer = await _superseded_by(rt, gh, job, number)
    if newer is not None:
        log.info("job %s dropped: head %s is no longer the pull request's head (%s)", job.id, sha[:12], newer[:12] or "closed")
        if job.attempts:  # an earlier run of this job may have started check runs: close them
            loaded = await load_repo_config(gh, owner, repo, base_ref or p.get("default_branch"))
            started_runs = {}
            for proj in loaded.config.projects:
                run_id = await find_check_run(gh, owner, repo, sha, proj.check_name, rt.settings.app_id)
                if run_id is not None:
                    started_runs[proj] = (run_id, True)
            await _cancel(gh, owner, repo, started_runs, newer)
        raise Superseded()

    loaded = await load_repo_config(gh, owner, repo, base_ref or p.get("default_branch"))
    cfg = loaded.config
    runs: dict[ProjectSpec, tuple[int, bool]] = {}
    for proj in cfg.projects:
        existing = p.get("check_run_id") if p.get("check_run_name") == proj.check_name else None
        if existing is None:
            existing = await find_check_run(gh, owner, repo, sha, proj.check_name, rt.settings.app_id)
        runs[proj] = (await start_check_run(gh, owner, repo, sha, proj.check_name, existing, job.id), existing is not None)

    started = time.monotonic()
    archives: list[Path] = []
    try:
        diff = await fetch_pr_diff(gh, owner, repo, int(number)) if number is not None else PRDiff()
        kw = {"max_download": rt.tuning.max_download, "retry_delay": rt.tuning.retry_base_delay}
        tmp = rt.settings.data_dir / "tmp"
        archives.append(await download_commit(gh, owner, repo, sha, tmp, **kw))
        if number is not None and base_sha:
            base_sha = await _merge_base(gh, owner, repo, base_sha, sha)
            archives.append(await download_commit(gh, owner, repo, base_sha, tmp, **kw))
        inp = AuditInput(
            str(archives[0]), str(archives[1]) if len(archives) > 1 else None, f"{owner}/{repo}@{sha[:12]}",
            f"{owner}/{repo}@{(base_sha or '')[:12]}", loaded, diff, number is not None, rt.tuning.limits, cache_spec(rt),
        )
        outcome = await anyio.to_thread.run_sync(lambda: run_limited(
            compute_pr, (inp,), timeout=rt.settings.audit_timeout, memory_bytes=rt.settings.audit_memory_mb << 20))
    except SourceError as exc:
        await _complete_unreadable(gh, owner, repo, sha, runs, cfg, str(exc))
        return "unreadable"
    finally:
        for path in archives:
            path.unlink(missing_ok=True)
        rt.metrics.audit_seconds.observe(time.monotonic() - started)

    if "source_error" in outcome.results:
        await _complete_unreadable(gh, owner, repo, sha, runs, cfg, str(outcome.results["source_error"]))
        return "unreadable"
    if outcome.error is not None and outcome.limit is None:
        raise AuditError(outcome.error)

    newer = await _superseded_by(rt, gh, job, number)
    if newer is not None:
        await _cancel(gh, owner, repo, runs, newer)
        raise Superseded()

    final: Computed | None = outcome.results.get("final")
    if final is None:  # over a limit: what was found (the head's findings, if it got that far) and the reason
        log.warning("job %s: %s", job.id, outcome.reason)
        verdict = gave_up(cfg.gate, outcome.reason)
        head: Computed | None = outcome.results.get("head")
        found = {r.check_name: r for r in head.projects} if head else {}
        for proj in cfg.projects:
            run_id, was_there = runs[proj]
            r = found.get(proj.check_name)
            stopped = {"time": "time budget", "memory": "memory limit"}.get(str(outcome.limit), "process killed")
            output = {"title": f"Accel Audit stopped: {stopped}",
                      "summary": _gave_up_summary(verdict)}
            if r is not None:
                output["summary"] += "\n\n### What was found before it stopped (the head commit, no comparison with the base)\n\n" + r.output["summary"]
                output["text"] = r.output.get("text", "")
            await complete_check_run(gh, owner, repo, run_id, verdict.conclusion, output, r.annotations if r else [], skip_existing=was_there)
        return f"limit-{outcome.limit}"

    for proj, result in zip(cfg.projects, final.projects, strict=True):
        run_id, was_there = runs[proj]
        await complete_check_run(gh, owner, repo, run_id, result.conclusion, result.output, result.annotations, skip_existing=was_there,
                                 actions=FIX_ACTIONS if number is not None else None)

    if number is not None and final.review is not None:  # for a following /accel fix on this head (bot.fix_hints)
        from .fix_hints import save as save_fix_hint

        save_fix_hint(rt, owner, repo, int(number), sha, base_sha or "", list(final.review.regressions))

    if number is not None and final.review is not None and await _superseded_by(rt, gh, job, number) is None:
        from review.publish import publish_review

        await publish_review(gh, owner, repo, int(number), sha, final.review, event=cfg.review_event)
    return "done"


class AuditError(Exception):
    """The audit's child process failed (not a limit): the job gives up and reports it."""


def cache_spec(rt: Runtime) -> CacheSpec:
    """Where the audit's child finds the facts cache (the same one this process uses)."""
    key = facts_cache_key(rt.settings.private_key)
    if rt.settings.redis_url:
        return CacheSpec("redis", rt.settings.redis_url, key)
    cache = rt.facts_cache
    root = getattr(cache, "dir", None)
    return CacheSpec("dir", str(root), key) if root else CacheSpec("none")


async def _complete_unreadable(gh: GitHub[Any], owner: str, repo: str, sha: str, runs: dict[ProjectSpec, tuple[int, bool]],
                               cfg: RepoConfig, error: str) -> None:
    verdict = gave_up(cfg.gate, f"the repository archive at `{sha[:12]}` could not be read: {error}")
    for run_id, _ in runs.values():
        await complete_check_run(gh, owner, repo, run_id, verdict.conclusion, {
            "title": "Accel Audit could not read the repository",
            "summary": _gave_up_summary(verdict),
        }, [])


async def _cancel(gh: GitHub[Any], owner: str, repo: str, runs: dict[ProjectSpec, tuple[int, bool]], newer: str) -> None:
    for run_id, _ in runs.values():
        await complete_check_run(gh, owner, repo, run_id, "cancelled", {
            "title": "Superseded by a newer push",
            "summary": f"A newer commit (`{newer[:12]}`) of this pull request is being audited instead." if newer
            else "The pull request was closed before the audit finished.",
        }, [])


def _gave_up_summary(verdict: Verdict) -> str:
    gate = (f"The repository's gate blocks the merge (`{verdict.conclusion}`) until an audit finishes: an audit that "
            "cannot finish is not a pass.") if verdict.blocks else "The repository's gate is off: this result does not block the merge."
    return "\n\n".join([*(r[0].upper() + r[1:] + "." for r in verdict.reasons), gate,
                         "Comment `/accel rescan` on the pull request to try again."])


async def report_failure(rt: Runtime, job: Job, reason: str) -> bool:
    """Complete the job's check runs with the reason: the gate's blocking conclusion on a gated repository.

    Returns False when GitHub could not be told (the caller retries later); a check run is never left
    ``in_progress`` by a job that gave up.
    """
    if job.kind != "pr_audit":
        return True
    p = job.payload
    gh = rt.github.installation(int(p["installation_id"]))
    try:
        try:
            loaded = await load_repo_config(gh, p["owner"], p["repo"], p.get("base_ref") or p.get("default_branch"))
            cfg = loaded.config
        except Exception as exc:
            if transient_delay(exc, 0) is not None:
                raise
            cfg = RepoConfig()  # the default gate: fail closed
        verdict = gave_up(cfg.gate, reason)
        for proj in cfg.projects:
            run_id = await find_check_run(gh, p["owner"], p["repo"], p["head_sha"], proj.check_name, rt.settings.app_id)
            if run_id is None and p.get("check_run_name") == proj.check_name:
                run_id = p.get("check_run_id")
            if run_id is None:
                continue
            await complete_check_run(gh, p["owner"], p["repo"], run_id, verdict.conclusion, {
                "title": "Accel Audit could not finish", "summary": _gave_up_summary(verdict),
            }, [])
        return True
    except Exception as exc:  # GitHub may be the reason we are here
        log.warning("could not report the failure of job %s: %s", job.id, type(exc).__name__)
        return False


async def _reply(gh: GitHub[Any], owner: str, repo: str, number: int, body: str) -> None:
    await gh.arequest("POST", f"/repos/{owner}/{repo}/issues/{number}/comments", json={"body": body})


async def run_command(rt: Runtime, job: Job) -> str:
    p = job.payload
    gh = rt.github.installation(int(p["installation_id"]))
    if p.get("command") == "fix" and p.get("is_pull_request"):  # its own permission check, refusal and debounce; the
        from .fix_job import run_fix  # button on a fork PR's check run comes without the PR's number

        return await run_fix(rt, job)
    owner, repo, number, name = p["owner"], p["repo"], int(p["number"]), p["command"]
    if not p.get("is_pull_request"):
        return "not-a-pr"  # commands are answered on pull requests only
    if name == "help":
        await _reply(gh, owner, repo, number, commands.HELP)
        return "help"
    if name not in commands.COMMANDS:
        await _reply(gh, owner, repo, number, commands.unknown_reply(name))
        return "unknown"
    if name in commands.WRITE_COMMANDS:
        author = str(p.get("author") or "")
        if not author or not await can_write(gh, owner, repo, author):
            await _reply(gh, owner, repo, number, commands.NOT_ALLOWED.format(command=name))
            return "not-allowed"
        if not rt.store.try_lock(f"command:{p.get('repo_id')}#{number}:{name}", f"comment:{p.get('comment_id')}", rt.tuning.command_debounce):
            await _react(gh, owner, repo, p, "eyes")
            log.info("/accel %s on %s/%s#%s debounced (asked again within %.0f s)", name, owner, repo, number, rt.tuning.command_debounce)
            return "debounced"
    pr = (await gh.arequest("GET", f"/repos/{owner}/{repo}/pulls/{number}")).json()
    if pr.get("state") != "open":
        await _reply(gh, owner, repo, number, "This pull request is closed: nothing to rescan.")
        return "closed"
    key = pr_key(p["repo_id"], number)
    sha = pr["head"]["sha"]
    spec = JobSpec("pr_audit", {
        "installation_id": p["installation_id"], "owner": owner, "repo": repo, "pull_number": number, "head_sha": sha,
        "base_sha": pr["base"]["sha"], "base_ref": pr["base"]["ref"],
        "default_branch": (pr["base"].get("repo") or {}).get("default_branch") or pr["base"]["ref"], "trigger": "comment.rescan",
    }, pr_key=key, head_sha=sha, supersedable=True)
    rt.store.set_head(PRHead(key, sha, time.time()))
    rt.store.add_job(spec)
    rt.enqueue(spec.id)
    await _react(gh, owner, repo, p, "rocket")
    return "rescan-queued"


async def _react(gh: GitHub[Any], owner: str, repo: str, p: dict[str, Any], content: str) -> None:
    await gh.arequest("POST", f"/repos/{owner}/{repo}/issues/comments/{p['comment_id']}/reactions", json={"content": content})
