"""Accel Profile: diagnose the profiler artifacts of a pull request's workflow run and post a check run on its head.

``workflow_run`` completed (a run triggered by a pull request) -> a ``profile`` job. The job lists the run's
artifacts whose names match ``profiles.artifact`` (default ``accel-profile*``), downloads each (capped), unpacks
it safely (:mod:`diagnose.archive`), runs :func:`diagnose.core.diagnose` under a time limit, and compares with
the most recent successful run of the same workflow on the base branch that uploaded a profile. With
``gate.max_step_time_regression`` set, a slower step fails the check (the gate's conclusion). Runs without a
matching artifact post nothing. Any limit that stops the work ends the check ``neutral`` with the limit named.

Needs the App permission ``actions: read`` and the ``workflow_run`` event.
"""

from __future__ import annotations

import fnmatch
import logging
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import httpx
from githubkit import GitHub

from diagnose.archive import ArchiveError, ArchiveLimits, extract_zip
from diagnose.compare import compare
from diagnose.config import DEFAULT_ARTIFACT, ProfilesConfig
from diagnose.core import LimitExceeded, diagnose
from diagnose.render_md import render

from .check_runs import TEXT_LIMIT, complete_check_run, find_check_run, start_check_run
from .config_loader import load_repo_config
from .events import Routed, pr_key
from .store import Job, JobSpec

if TYPE_CHECKING:
    from .runtime import Runtime

log = logging.getLogger(__name__)

PROFILE_CHECK = "Accel Profile"
PR_EVENTS = {"pull_request", "pull_request_target"}
CHUNK = 1 << 16


@dataclass(frozen=True)
class ProfileLimits:
    max_artifact_bytes: int = 1 << 30     # one artifact as downloaded (zipped)
    max_artifacts: int = 4                # matching artifacts read per run
    time_limit: float = 600.0             # seconds for the whole diagnosis
    archive: ArchiveLimits = field(default_factory=ArchiveLimits)


DEFAULT_LIMITS = ProfileLimits()


class ProfileLimit(Exception):
    """A limit stopped the job; the message goes to the check run."""


def route_workflow_run(payload: dict[str, Any]) -> Routed:
    """``workflow_run`` completed for a pull request -> one ``profile`` job for its head commit."""
    if payload.get("action") != "completed":
        return Routed("ignored", note=f"workflow_run {payload.get('action')}")
    run = payload["workflow_run"]
    if run.get("event") not in PR_EVENTS:
        return Routed("ignored", note=f"workflow_run for {run.get('event')}, not a pull request")
    if run.get("conclusion") in ("cancelled", "skipped", "stale"):
        return Routed("ignored", note=f"workflow_run {run.get('conclusion')}")
    repo = payload["repository"]
    prs = run.get("pull_requests") or []
    pr = prs[0] if prs else None
    sha = run["head_sha"]
    job = {
        "installation_id": payload["installation"]["id"],
        "owner": repo["owner"]["login"],
        "repo": repo["name"],
        "run_id": run["id"],
        "workflow_id": run.get("workflow_id"),
        "workflow_name": run.get("name"),
        "head_sha": sha,
        "pull_number": pr["number"] if pr else None,
        "base_ref": (pr.get("base") or {}).get("ref") if pr else None,
        "default_branch": repo.get("default_branch") or "main",
    }
    key = (pr_key(repo["id"], pr["number"]) if pr else f"{repo['id']}@{sha}") + ":profile"
    return Routed("queued", [JobSpec("profile", job, pr_key=key, head_sha=sha, supersedable=False)])


def matching(artifacts: list[dict[str, Any]], pattern: str) -> list[dict[str, Any]]:
    return [a for a in artifacts if not a.get("expired") and fnmatch.fnmatchcase(str(a.get("name", "")), pattern)]


async def list_artifacts(gh: GitHub[Any], owner: str, repo: str, run_id: int) -> list[dict[str, Any]]:
    resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts", params={"per_page": 100})
    return list((resp.json() or {}).get("artifacts") or [])


async def download_artifact(gh: GitHub[Any], owner: str, repo: str, artifact: dict[str, Any], dest: Path, limits: ProfileLimits) -> Path:
    """Stream the artifact's zip to ``dest`` (GitHub redirects to a storage host; the API token is not sent there)."""
    size = int(artifact.get("size_in_bytes") or 0)
    name = artifact.get("name", "?")
    if size > limits.max_artifact_bytes:
        raise ProfileLimit(f"the artifact {name!r} is {size / (1 << 20):.0f} MiB, over the {limits.max_artifact_bytes >> 20} MiB limit")
    total = 0
    async with gh.get_async_client() as client:
        req = client.build_request("GET", f"repos/{owner}/{repo}/actions/artifacts/{artifact['id']}/zip")
        resp = await client.send(req, stream=True)
        try:
            if resp.status_code == 410:
                raise ProfileLimit(f"the artifact {name!r} has expired")
            if resp.status_code >= 400:
                raise httpx.HTTPStatusError(f"artifact download answered HTTP {resp.status_code}", request=req, response=resp)
            with open(dest, "wb") as fh:
                async for chunk in resp.aiter_bytes(CHUNK):
                    total += len(chunk)
                    if total > limits.max_artifact_bytes:
                        raise ProfileLimit(f"the artifact {name!r} is larger than the {limits.max_artifact_bytes >> 20} MiB limit")
                    fh.write(chunk)
        finally:
            await resp.aclose()
    return dest


async def fetch_profile(gh: GitHub[Any], owner: str, repo: str, arts: list[dict[str, Any]], work: Path,
                        limits: ProfileLimits) -> tuple[Path, list[str]]:
    """Download and unpack the matching artifacts under ``work``: the folder and the artifacts' names."""
    names = []
    work.mkdir(parents=True, exist_ok=True)
    for n, art in enumerate(arts[: limits.max_artifacts]):
        zpath = work / f"artifact-{n}.zip"
        await download_artifact(gh, owner, repo, art, zpath, limits)
        folder = work / "files" / f"{n}-{_slug(art.get('name', 'artifact'))}"
        try:
            await anyio.to_thread.run_sync(extract_zip, zpath, folder, limits.archive)
        except ArchiveError as exc:
            raise ProfileLimit(f"the artifact {art.get('name')!r} was refused: {exc}") from None
        finally:
            zpath.unlink(missing_ok=True)
        names.append(str(art.get("name")))
    return work / "files", names


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:60] or "artifact"


async def _base_run(gh: GitHub[Any], owner: str, repo: str, workflow_id: Any, branch: str, exclude: int,
                    pattern: str) -> list[dict[str, Any]] | None:
    """The profile artifacts of the most recent successful run of the workflow on ``branch`` that kept one."""
    if not workflow_id or not branch:
        return None
    resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
                             params={"branch": branch, "status": "success", "per_page": 5, "exclude_pull_requests": "true"})
    for run in (resp.json() or {}).get("workflow_runs") or []:
        if run.get("id") == exclude:
            continue
        arts = matching(await list_artifacts(gh, owner, repo, run["id"]), pattern)
        if arts:
            return arts
    return None


def _diagnose(folder: Path, settings: dict[str, Any], deadline: float, audit: dict[str, Any] | None = None) -> dict[str, Any]:
    return diagnose([str(folder)], settings, root=folder, deadline=deadline, audit=audit)


async def static_statuses(rt: Runtime, gh: GitHub[Any], owner: str, repo: str, sha: str, loaded: Any, work: Path) -> dict[str, Any] | None:
    """The profiled commit's check statuses (audited in the sandbox, like a PR audit), or None when that audit
    cannot be had (unreadable archive, a limit, GitHub refusing the tarball): the diagnosis then goes on without."""
    from .audit_compute import CacheSpec
    from .jobs import cache_spec
    from .profile_audit import compute_statuses
    from .sandbox import run_limited
    from .tarball import download_commit

    try:
        archive = await download_commit(gh, owner, repo, sha, work, max_download=rt.tuning.max_download, retry_delay=rt.tuning.retry_base_delay)
    except Exception as exc:
        log.info("profile of %s/%s@%s: no static audit (%s)", owner, repo, sha[:12], type(exc).__name__)
        return None
    spec: CacheSpec = cache_spec(rt)
    try:
        outcome = await anyio.to_thread.run_sync(lambda: run_limited(
            compute_statuses, (str(archive), f"{owner}/{repo}@{sha[:12]}", loaded, rt.tuning.limits, spec),
            timeout=rt.settings.audit_timeout, memory_bytes=rt.settings.audit_memory_mb << 20))
    finally:
        archive.unlink(missing_ok=True)
    statuses = outcome.results.get("statuses")
    if statuses is None:
        log.info("profile of %s/%s@%s: no static audit (%s)", owner, repo, sha[:12],
                 outcome.reason or outcome.error or outcome.results.get("source_error") or "no result")
    return statuses


def compose(report: dict[str, Any], cmp: dict[str, Any] | None, base_ref: str | None, artifacts: list[str], lang: str) -> dict[str, str]:
    b = report["verdict"]["bottleneck"]
    title = f"Profile: {b}"
    if cmp and cmp.get("rows"):
        row = next((r for r in cmp["rows"] if r["metric"].startswith("step time")), None)
        if row:
            title += f" · step {row['head']:.0f} ms ({row['delta_text']} vs {base_ref})"
    summary = render(report, lang, cmp)
    head = f"Artifacts: {', '.join(f'`{a}`' for a in artifacts)}" + (f" · compared with the latest profile on `{base_ref}`" if cmp else
                                                                     " · no profile on the base branch to compare with") + "\n\n"
    summary = head + summary
    if len(summary) > TEXT_LIMIT:
        summary = summary[: TEXT_LIMIT - 200] + "\n\n… (cut at GitHub's check-run size limit; run `accel-audit diagnose` locally for the rest)"
    return {"title": title, "summary": summary}


async def run_profile(rt: Runtime, job: Job, limits: ProfileLimits = DEFAULT_LIMITS) -> str:
    p = job.payload
    gh = rt.github.installation(int(p["installation_id"]))
    owner, repo, sha, run_id = p["owner"], p["repo"], p["head_sha"], int(p["run_id"])
    base_ref = p.get("base_ref")
    if p.get("pull_number") is None:
        resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/commits/{sha}/pulls", params={"per_page": 10})
        pr = next((x for x in resp.json() if x.get("state") == "open" and (x.get("head") or {}).get("sha") == sha), None)
        if pr is None:
            return "no-pull-request"
        base_ref = pr["base"]["ref"]
    loaded = await load_repo_config(gh, owner, repo, base_ref or p.get("default_branch"))
    cfg = loaded.config
    prof: ProfilesConfig = getattr(cfg, "profiles", None) or ProfilesConfig(DEFAULT_ARTIFACT)
    work = Path(tempfile.mkdtemp(prefix=f"profile-{job.id[:12]}-", dir=_tmp_dir(rt)))
    try:
        arts = matching(await list_artifacts(gh, owner, repo, run_id), prof.artifact)
        if not arts:
            return "no-artifacts"
        existing = await find_check_run(gh, owner, repo, sha, PROFILE_CHECK, rt.settings.app_id)
        run = await start_check_run(gh, owner, repo, sha, PROFILE_CHECK, existing, job.id)
        deadline = time.monotonic() + limits.time_limit
        settings = dict(prof.thresholds)
        try:
            folder, names = await fetch_profile(gh, owner, repo, arts, work / "head", limits)
            statuses = await static_statuses(rt, gh, owner, repo, sha, loaded, work / "src")
            report = await anyio.to_thread.run_sync(_diagnose, folder, settings, deadline, statuses)
            cmp = None
            base_arts = await _base_run(gh, owner, repo, p.get("workflow_id"), base_ref or "", run_id, prof.artifact)
            if base_arts:
                base_folder, _ = await fetch_profile(gh, owner, repo, base_arts, work / "base", limits)
                base = await anyio.to_thread.run_sync(_diagnose, base_folder, settings, deadline)
                cmp = compare(base, report, prof.max_step_time_regression_pct)
        except (ProfileLimit, LimitExceeded) as exc:
            await complete_check_run(gh, owner, repo, run, "neutral", {
                "title": "Accel Profile stopped at a limit",
                "summary": f"The profile of workflow run {run_id} was not diagnosed: {exc}.\n\nLimits: "
                           f"{limits.max_artifact_bytes >> 20} MiB per artifact download, {limits.archive.max_unpacked_bytes >> 20} MiB unpacked, "
                           f"{limits.archive.max_members} files, {limits.time_limit:.0f} s. Upload fewer or smaller traces "
                           "(a few profiled steps, gzip), or run `accel-audit diagnose` locally.",
            }, [])
            return "limit"
        except Exception as exc:  # leave no run in progress; the runner decides whether the job is tried again
            await complete_check_run(gh, owner, repo, run, "neutral", {
                "title": "Accel Profile could not finish",
                "summary": f"The diagnosis of workflow run {run_id} stopped: {type(exc).__name__}. It is tried again if the cause "
                           "looks temporary; otherwise re-run the workflow.",
            }, [])
            raise
        if all(i.get("skipped") for i in report["inputs"]):
            conclusion = "neutral"
        elif cmp and (cmp.get("gate") or {}).get("failed"):
            conclusion = cfg.gate.conclusion
        else:
            conclusion = "success" if cmp and cmp.get("gate") else "neutral"
        await complete_check_run(gh, owner, repo, run, conclusion, compose(report, cmp, base_ref, names, cfg.language), [])
        return "done"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _tmp_dir(rt: Runtime) -> Path:
    d = Path(rt.settings.data_dir) / "tmp"
    d.mkdir(parents=True, exist_ok=True)
    return d
