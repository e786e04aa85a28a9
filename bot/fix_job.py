"""``/accel fix [ID ...] [--dry-run]`` and the check run's "Apply fixes" button: a follow-up pull request.

Only users with write, maintain or admin permission on the base repository; the comment gets 👀 at once and a
reply with the outcome. The fix is computed on the PR's head (regressions against the merge base first, then
the catalog), committed with the Git Data API on ``accel-audit/fix-pr<N>`` and proposed as a PR into the PR's
head branch. A fork PR (the installation cannot write there) or a refused ref gets the patch as a reply.
"""

from __future__ import annotations

import logging
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio.to_thread
from githubkit import GitHub
from githubkit.exception import RequestFailed

from checks.engine import Audit, AuditOptions, audit_files
from checks.source import ReadStats, SourceError, iter_tarball

from . import fix_hints, git_data
from .permissions import can_write
from .pr_diff import fetch_pr_diff
from .store import Job
from .tarball import download_commit

if TYPE_CHECKING:
    from autofix.plan import FixPlan

    from .runtime import Runtime

log = logging.getLogger(__name__)

_ID = re.compile(r"^[A-Ja-j]\d{1,2}$")
REFUSED = ("`/accel fix` changes code, so it can be asked for by people with write access to this repository only. "
           "Nothing was changed; a maintainer can run it.")
USAGE = "Usage: `/accel fix [ID ...] [--dry-run]`, e.g. `/accel fix I3 F3` or `/accel fix --dry-run`."
NEVER = ("/.github/workflows/",)


@dataclass(slots=True)
class Request:
    ids: list[str]
    dry_run: bool


def parse_args(args: list[str]) -> Request | str:
    ids, dry = [], False
    for a in args:
        if a == "--dry-run":
            dry = True
        elif _ID.match(a):
            ids.append(a.upper())
        else:
            return f"`{a[:40]}` is not a check ID or option. {USAGE}"
    return Request(ids, dry)


async def _reply(gh: GitHub[Any], owner: str, repo: str, number: int, body: str) -> None:
    await gh.arequest("POST", f"/repos/{owner}/{repo}/issues/{number}/comments", json={"body": body[:65000]})


def _read_archive(archive: Path, options: AuditOptions) -> tuple[dict[str, bytes], dict[str, str]]:
    """Files of the archive as the audit reads them, and each one's git mode (regular files only)."""
    stats = ReadStats()
    with open(archive, "rb") as fh:
        files = dict(iter_tarball(fh, options.limits, stats))
    modes: dict[str, str] = {}
    with tarfile.open(archive, "r:*") as tf:
        for m in tf:
            if m.isfile():
                rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
                if rel in files:
                    modes[rel] = "100755" if m.mode & 0o111 else "100644"
    return files, modes


def _text(files: dict[str, bytes]) -> Any:
    def read(path: str) -> str | None:
        data = files.get(path)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return read


async def fetch_text(gh: GitHub[Any], owner: str, repo: str, path: str, ref: str) -> str | None:
    """One file's exact text at ``ref`` (None: absent, or not UTF-8)."""
    try:
        resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/contents/{quote(path)}", params={"ref": ref},
                                 headers={"Accept": "application/vnd.github.raw+json"})
    except RequestFailed as exc:
        if exc.response.status_code == 404:
            return None
        raise
    try:
        return resp.content.decode("utf-8")
    except UnicodeDecodeError:
        return None


async def _snapshot(rt: Runtime, gh: GitHub[Any], owner: str, repo: str, sha: str, options: AuditOptions) -> tuple[Audit, dict[str, bytes], dict[str, str]]:
    archive = await download_commit(gh, owner, repo, sha, rt.settings.data_dir / "tmp", max_download=rt.tuning.max_download,
                                    retry_delay=rt.tuning.retry_base_delay)
    try:
        files, modes = await anyio.to_thread.run_sync(_read_archive, archive, options)
    finally:
        archive.unlink(missing_ok=True)
    audit = await anyio.to_thread.run_sync(lambda: audit_files(files.items(), f"{owner}/{repo}@{sha[:12]}", options))
    return audit, files, modes


async def compute(rt: Runtime, gh: GitHub[Any], owner: str, repo: str, pr: dict[str, Any], req: Request) -> tuple[FixPlan, dict[str, str]]:
    """The verified plan for the PR's current head, and the modes of the files it edits."""
    from autofix.pr import plan_pr

    from .config_loader import load_repo_config
    from .jobs import _merge_base, _options

    head_sha, base_sha = pr["head"]["sha"], pr["base"]["sha"]
    number = int(pr["number"])
    cfg = (await load_repo_config(gh, owner, repo, pr["base"]["ref"])).config
    options = _options(rt, cfg)
    head, hfiles, modes = await _snapshot(rt, gh, owner, repo, head_sha, options)
    diff = await fetch_pr_diff(gh, owner, repo, number)
    hint = fix_hints.load(rt, owner, repo, number, head_sha)
    if hint is not None:  # the PR audit of this head found the regressions: only their files are read at the merge base
        merge_base, regressions = hint
        base_texts: dict[str, str] = {}
        for path in sorted({c.path for c in regressions if c.path and c.kind == "regression"}):
            text = await fetch_text(gh, owner, repo, path, merge_base)
            if text is not None:
                base_texts[path] = text

        def work() -> FixPlan:
            return plan_pr(None, head, _text(hfiles), base_texts.get, regressions=regressions, only=req.ids, named_unsafe=True,
                           touched=diff.changed or None)
    else:
        merge_base = await _merge_base(gh, owner, repo, base_sha, head_sha)
        base, bfiles, _ = await _snapshot(rt, gh, owner, repo, merge_base, options)

        def work() -> FixPlan:
            return plan_pr(base, head, _text(hfiles), _text(bfiles), diff_text=diff.diff_text or None, only=req.ids, named_unsafe=True,
                           touched=diff.changed or None)

    plan = await anyio.to_thread.run_sync(work)
    from autofix.model import Dropped

    for p in list(plan.files):
        if any(n in "/" + p for n in NEVER) or p not in modes:  # never workflows, symlinks, submodules, paths outside
            plan.files.pop(p)
            plan.dropped += [Dropped(e.check, p, e.site.line, "not a regular file of the repository (or a workflow): never edited")
                             for e in plan.edits if e.site.path == p]
            plan.edits = [e for e in plan.edits if e.site.path != p]
    return plan, {p: modes[p] for p in plan.files}


ACK_TTL = 86400.0


def ack_lock(job_id: str) -> str:
    """The journal lock saying who posted the eyes reaction of a ``/accel fix`` job (the dispatcher or the job)."""
    return f"ack:{job_id}"


def needs_ack(job: Job) -> bool:
    return job.kind == "command" and job.payload.get("command") == "fix" and bool(job.payload.get("comment_id"))


async def _eyes(rt: Runtime, job: Job) -> None:
    p = job.payload
    gh = rt.github.installation(int(p["installation_id"]))
    await gh.arequest("POST", f"/repos/{p['owner']}/{p['repo']}/issues/comments/{p['comment_id']}/reactions", json={"content": "eyes"})


def acknowledge(rt: Runtime, job: Job) -> bool:
    """React with eyes when ``/accel fix`` arrives (called by the dispatcher, before the job is queued), so the
    person sees it was heard even while every worker is busy with audits. Best effort: when GitHub does not
    answer, the job reacts when it starts."""
    import asyncio

    name = ack_lock(job.id)
    if not needs_ack(job) or not rt.store.try_lock(name, "dispatcher", ACK_TTL):
        return False
    try:
        asyncio.run(_eyes(rt, job))
        return True
    except Exception as exc:
        rt.store.unlock(name, "dispatcher")
        log.warning("job %s: the eyes reaction failed (%s); the job will react when it starts", job.id, type(exc).__name__)
        return False


async def run_fix(rt: Runtime, job: Job) -> str:
    from autofix import render

    p = job.payload
    gh = rt.github.installation(int(p["installation_id"]))
    owner, repo = p["owner"], p["repo"]
    if p.get("number") is None:  # the button on a fork PR's check run: GitHub sends no pull_requests, find it by commit
        from .jobs import _find_pr_for_commit

        found = await _find_pr_for_commit(gh, owner, repo, str(p.get("head_sha") or ""))
        if found is None:
            log.info("Apply fixes on %s/%s@%s: no open pull request has that head; nothing to do", owner, repo, str(p.get("head_sha"))[:12])
            return "no-pr"
        p = {**p, "number": found["number"]}
    number = int(p["number"])
    if needs_ack(job) and rt.store.try_lock(ack_lock(job.id), f"job:{job.id}", ACK_TTL):  # the dispatcher did not react
        await _eyes(rt, job)
    if not p.get("is_pull_request", True):
        await _reply(gh, owner, repo, number, "`/accel fix` works on pull requests only.")
        return "not-a-pr"
    author = p.get("author") or ""
    if not author or not await can_write(gh, owner, repo, author):
        await _reply(gh, owner, repo, number, f"@{author} " + REFUSED if author else REFUSED)
        return "fix-refused"
    debounce = f"command:{p.get('repo_id')}#{number}:fix"
    if not rt.store.try_lock(debounce, f"job:{job.id}", rt.tuning.command_debounce):
        log.info("/accel fix on %s/%s#%s debounced (asked again within %.0f s)", owner, repo, number, rt.tuning.command_debounce)
        return "debounced"  # the eyes reaction above already answered
    req = parse_args(list(p.get("args") or []))
    if isinstance(req, str):
        await _reply(gh, owner, repo, number, req)
        return "fix-usage"
    pr = (await gh.arequest("GET", f"/repos/{owner}/{repo}/pulls/{number}")).json()
    if pr.get("state") != "open":
        await _reply(gh, owner, repo, number, "This pull request is closed: nothing to fix.")
        return "closed"
    try:
        for _ in range(3):  # the head may move while the fix is computed: redo it on the new head
            plan, modes = await compute(rt, gh, owner, repo, pr, req)
            now = (await gh.arequest("GET", f"/repos/{owner}/{repo}/pulls/{number}")).json()
            if now["head"]["sha"] == pr["head"]["sha"]:
                break
            pr = now
    except SourceError as exc:
        await _reply(gh, owner, repo, number, f"accel-audit could not read the pull request's files: {exc}. Nothing was changed.")
        return "unreadable"
    head_sha = pr["head"]["sha"]
    if not plan.edits:
        await _reply(gh, owner, repo, number, render.nothing_to_fix(plan))
        return "nothing-to-fix"
    summary = f"{len(plan.edits)} fix(es), score {plan.score_before}% → {plan.score_after}%"
    if req.dry_run:
        await _reply(gh, owner, repo, number, f"Dry run on `{head_sha[:12]}`: {summary}. Nothing was created.\n\n"
                     f"{render.edits_table(plan)}\n\n{render.diff_block(plan)}")
        return "fix-dry-run"
    head_repo = (pr["head"].get("repo") or {})
    base_repo = (pr["base"].get("repo") or {})
    if head_repo.get("id") != base_repo.get("id") or head_repo.get("fork"):
        await _patch_reply(gh, owner, repo, number, plan, summary, "this pull request comes from a fork, where accel-audit cannot push")
        return "fix-fork-patch"
    branch = f"accel-audit/fix-pr{number}"
    marker = f"pr{number}"
    try:
        tip = await git_data.branch_tip(gh, owner, repo, branch)
        if tip is not None and not await git_data.ours(gh, owner, repo, tip, marker):
            await _reply(gh, owner, repo, number, f"`{branch}` has commits that accel-audit did not make, so it was left alone. "
                         f"Delete the branch (or merge it) and run `/accel fix` again.\n\n{summary}.\n\n{render.diff_block(plan)}")
            return "fix-branch-taken"
        message = f"accel-audit fixes for #{number}\n\n" + "\n".join(
            f"- {', '.join(e.checks)} {e.site.path}:{e.line_after or e.site.line} ({e.safety.value})" for e in plan.edits
        ) + f"\n\n{git_data.TRAILER}: {marker}"
        sha = await git_data.commit_files(gh, owner, repo, head_sha, {k: (v, modes[k]) for k, v in plan.files.items()}, message)
        await git_data.set_branch(gh, owner, repo, branch, sha, tip is not None)
        pull, created = await git_data.open_or_update_pr(gh, owner, repo, branch, pr["head"]["ref"], f"accel-audit fixes for #{number}",
                                                         render.pr_body(plan, number, head_sha))
    except RequestFailed as exc:
        if exc.response.status_code in (403, 404, 409, 422):
            await _patch_reply(gh, owner, repo, number, plan, summary, f"GitHub refused the branch ({exc.response.status_code})")
            return "fix-ref-refused"
        raise
    url = pull.get("html_url") or f"https://github.com/{owner}/{repo}/pull/{pull.get('number')}"
    verb = "Opened" if created else "Updated"
    await _reply(gh, owner, repo, number, f"{verb} {url} with {summary}.\n\n{render.edits_table(plan)}")
    return "fix-opened" if created else "fix-updated"


async def _patch_reply(gh: GitHub[Any], owner: str, repo: str, number: int, plan: FixPlan, summary: str, why: str) -> None:
    from autofix import render

    sugg = render.suggestions(plan)
    body = (f"No branch was created: {why}. Here is the patch instead ({summary}); apply it with `git apply`.\n\n"
            f"{render.edits_table(plan)}\n\n{render.diff_block(plan)}")
    if sugg:
        body += f"\n\nOne-line edits as suggestions:\n\n{sugg}"
    await _reply(gh, owner, repo, number, body)


#: the check run's button; GitHub sends ``check_run.requested_action`` with this identifier
FIX_ACTIONS = [{"label": "Apply fixes", "description": "Open a PR with the verified safe fixes", "identifier": "fix"}]


def route_requested_action(payload: dict[str, Any]) -> Any:
    """``check_run.requested_action`` "Apply fixes" -> the same job as ``/accel fix`` by the user who pressed it."""
    from .events import Routed, _repo
    from .store import JobSpec

    ident = (payload.get("requested_action") or {}).get("identifier")
    run = payload["check_run"]
    owner, name, repo_id, _ = _repo(payload)
    prs = [p for p in run.get("pull_requests") or [] if (p.get("base") or {}).get("repo", {}).get("id", repo_id) == repo_id]
    sender = payload.get("sender") or {}
    if ident != "fix" or sender.get("type") == "Bot" or not (prs or run.get("head_sha")):
        return Routed("logged", note=f"requested_action {ident!r}: nothing to do")
    job = {
        "installation_id": payload["installation"]["id"], "owner": owner, "repo": name, "repo_id": repo_id,
        "number": prs[0]["number"] if prs else None,  # a fork PR's run lists none: the job finds it by head_sha
        "head_sha": run.get("head_sha"),
        "is_pull_request": True, "command": "fix", "args": [], "comment_id": None, "author": sender.get("login"),
        "association": "NONE", "trigger": "check_run.requested_action",
    }
    return Routed("queued", [JobSpec("command", job, pr_key="", head_sha="")])
