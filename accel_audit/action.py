"""The GitHub Action (``action.yml``): scan, review a pull request, write the job summary, apply the gate.

Run by the composite action as ``python -m accel_audit.action`` with the environment GitHub sets for a
step (``GITHUB_WORKSPACE``, ``GITHUB_EVENT_NAME``, ``GITHUB_EVENT_PATH``, ``GITHUB_STEP_SUMMARY``,
``GITHUB_OUTPUT``, ``RUNNER_TEMP``) and the action's inputs as ``INPUT_*`` variables.

What it does, like the App:

- reads ``.github/accel-audit.yml`` from the pull request's base commit (a PR cannot loosen its own gate),
  else from the checked-out tree; an invalid file gives the defaults and its exact error in the summary;
- scans the checked-out tree and writes SARIF (``sarif-file``) for ``github/codeql-action/upload-sarif``;
- on ``pull_request`` / ``pull_request_target``: audits the merge base and the head commit (read from git
  objects, nothing is checked out or run), reviews the diff, and adds a warning annotation on each
  regressed line;
- writes the verdict, the "Changes in this PR" section and the Markdown report to the job summary, and
  ``score``, ``conclusion``, ``regressions`` and ``sarif-file`` to the step's outputs;
- exits 1 when the gate (``min-score``, ``fail-on-regression`` inputs, else the file's ``gate``) blocks,
  2 when it cannot run (with one line saying why), else 0.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.gate import Verdict, decide
from bot.repo_config import Gate, LoadedConfig
from checks.engine import Audit, AuditOptions, CacheDirError, DirFactsCache, audit_path
from checks.source import SourceError
from reports import json_text
from review.gitlocal import GitError, Revisions, audit_revision, git_diff, resolve
from review.model import PRReview
from review.worktree import SharedFacts

from .localconfig import LocalConfig, config_at, config_in, options_for

PR_EVENTS = ("pull_request", "pull_request_target")
SUMMARY_LIMIT = 300_000  # characters: GitHub takes up to 1 MiB of job summary per step, and a CJK character or a bar is 3 bytes


class ActionError(Exception):
    """The action cannot run; the message is one line for the log."""


@dataclass(slots=True)
class Inputs:
    min_score: float | None = None
    fail_on_regression: bool | None = None
    sarif_file: str = "accel-audit.sarif"
    language: str | None = None


@dataclass(slots=True)
class Result:
    exit_code: int
    verdict: Verdict
    score: float
    regressions: int
    summary: str
    outputs: dict[str, str] = field(default_factory=dict)


def _input(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(f"INPUT_{name}", "").strip()
    return value or None


def read_inputs(env: Mapping[str, str]) -> Inputs:
    inputs = Inputs()
    raw = _input(env, "MIN_SCORE")
    if raw is not None:
        try:
            inputs.min_score = float(raw.rstrip("%"))
        except ValueError:
            raise ActionError(f"min-score: not a number: {raw!r}") from None
        if not 0 <= inputs.min_score <= 100:
            raise ActionError(f"min-score: a percentage from 0 to 100, not {raw}")
    raw = _input(env, "FAIL_ON_REGRESSION")
    if raw is not None:
        low = raw.lower()
        if low not in ("true", "false"):
            raise ActionError(f"fail-on-regression: true or false, not {raw!r}")
        inputs.fail_on_regression = low == "true"
    inputs.sarif_file = _input(env, "SARIF_FILE") or inputs.sarif_file
    lang = _input(env, "LANGUAGE")
    if lang is not None and lang not in ("en", "zh"):
        raise ActionError(f"language: en or zh, not {lang!r}")
    inputs.language = lang
    return inputs


def _event(env: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    name = env.get("GITHUB_EVENT_NAME", "")
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return name, {}
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ActionError(f"cannot read the event payload {path}: {exc}") from None
    return name, payload if isinstance(payload, dict) else {}


def _pr_shas(payload: dict[str, Any]) -> tuple[str, str, int | None]:
    pr = payload.get("pull_request") or {}
    base, head = (pr.get("base") or {}).get("sha"), (pr.get("head") or {}).get("sha")
    if not (isinstance(base, str) and isinstance(head, str) and base and head):
        raise ActionError("the pull_request event has no base.sha / head.sha")
    return base, head, pr.get("number")


def _has_commit(repo: str, sha: str) -> bool:
    return subprocess.run(["git", "-C", repo, "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True).returncode == 0


def ensure_commits(repo: str, *shas: str) -> None:
    """Fetch the PR's commits when the checkout is shallow (``actions/checkout`` fetches one commit by default)."""
    missing = [s for s in shas if not _has_commit(repo, s)]
    if not missing:
        return
    res = subprocess.run(["git", "-C", repo, "fetch", "--no-tags", "--quiet", "origin", *missing], capture_output=True, text=True)
    if res.returncode != 0 or any(not _has_commit(repo, s) for s in missing):
        raise ActionError(
            f"commit(s) {', '.join(s[:12] for s in missing)} are not in the checkout and could not be fetched "
            "(use actions/checkout with fetch-depth: 0)"
        )


def _cache(env: Mapping[str, str]) -> DirFactsCache | None:
    tmp = env.get("RUNNER_TEMP")
    if not tmp:
        return None
    try:
        return DirFactsCache(Path(tmp) / "accel-audit-facts", private=True)
    except (OSError, CacheDirError):
        return None


def _gate(inputs: Inputs, cfg_gate: Gate) -> Gate:
    return Gate(
        inputs.min_score if inputs.min_score is not None else cfg_gate.min_score,
        inputs.fail_on_regression if inputs.fail_on_regression is not None else cfg_gate.fail_on_regression,
        cfg_gate.conclusion,
    )


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotations(review: PRReview) -> list[str]:
    """``::warning`` workflow commands: GitHub shows them on the PR's diff (the Action has no review to post)."""
    out: list[str] = []
    for ch in review.regressions:
        where = f"file={_escape_prop(ch.path)},line={ch.line}," if ch.path and ch.line and ch.side == "RIGHT" else ""
        if ch.path and ch.line and ch.side == "LEFT":
            where = f"file={_escape_prop(ch.path)},"  # a removed line has no line number in the head
        out.append(f"::warning {where}title={_escape_prop(f'accel-audit {ch.check}')}::{_escape_data(f'{ch.what}: {ch.why}')}")
    return out


def _summary(audit: Audit, *, lang: str, loaded: LoadedConfig, notes: list[str], verdict: Verdict,
             review: PRReview | None, revs: Revisions | None) -> str:
    from reports.checkrun import check_run_output
    from reports.markdown import render_markdown

    title = check_run_output(audit, lang=lang)["title"]
    parts = [f"## Accel Audit: {title}"]
    if verdict.blocks:
        parts.append("**Merge gate: " + verdict.conclusion.replace("_", " ") + "** — " + "; ".join(verdict.reasons))
    elif verdict.reasons:
        parts.append("_" + "; ".join(verdict.reasons) + "_")
    for err in loaded.errors:
        parts.append(f"> [!WARNING]\n> Invalid configuration, defaults applied: `{err}`")
    parts += [f"> [!NOTE]\n> {n}" for n in notes]
    if loaded.source:
        parts.append(f"Configuration read from `{loaded.source}`.")
    if revs is not None:
        parts.append(f"Pull request: merge base `{revs.base[:12]}` → head `{revs.head[:12]}`.")
    if review is not None and review.summary_md.strip():
        parts.append(review.summary_md.strip())
    if review is not None and review.unplaced:
        lines = ["### Regressions outside the diff", ""]
        for ch in review.unplaced:
            where = f" (`{ch.path}:{ch.line}`)" if ch.path and ch.line else ""
            lines.append(f"- **{ch.check}** {ch.what}{where}: {ch.why}")
        parts.append("\n".join(lines))
    head = "\n\n".join(parts) + "\n\n"
    if len(head) > SUMMARY_LIMIT // 2:
        head = head[: SUMMARY_LIMIT // 2].rsplit("\n", 1)[0] + "\n\n_(folded to fit the job summary)_\n\n"
    return head + render_markdown(audit, lang=lang, max_chars=SUMMARY_LIMIT - len(head))


def run(env: Mapping[str, str]) -> Result:
    inputs = read_inputs(env)
    workspace = Path(env.get("GITHUB_WORKSPACE") or ".")
    root = workspace.resolve()
    if not root.is_dir():
        raise ActionError(f"GITHUB_WORKSPACE: {root} is not a directory")
    event, payload = _event(env)
    is_pr = event in PR_EVENTS and "pull_request" in payload

    base_sha = head_sha = None
    if is_pr:
        base_sha, head_sha, _number = _pr_shas(payload)
        ensure_commits(str(root), base_sha, head_sha)
    local: LocalConfig = config_at(str(root), base_sha) if base_sha else config_in(root)
    cfg = local.config
    notes = list(local.notes)
    if len(cfg.projects) > 1 or cfg.projects[0].path:
        notes.append("`projects`: the Action audits the whole repository; the App gives each project its own check run")
    lang = inputs.language or cfg.language
    options = options_for(cfg, AuditOptions(cache=SharedFacts(_cache(env))))  # the scan, base and head share unchanged files' facts

    try:
        scanned = audit_path(root, options)
    except SourceError as exc:
        raise ActionError(str(exc)) from None
    sarif_path = (workspace / inputs.sarif_file).resolve()
    from reports.sarif import to_sarif

    sarif_path.parent.mkdir(parents=True, exist_ok=True)
    with open(sarif_path, "w", encoding="utf-8") as fh:
        json_text.dump(to_sarif(scanned), fh)

    review: PRReview | None = None
    revs: Revisions | None = None
    audit = scanned
    if is_pr and base_sha and head_sha:
        from review.pipeline import build_pr_review

        try:
            revs = resolve(str(root), base_sha, head_sha)
            base = audit_revision(str(root), revs.base, options)
            head = audit_revision(str(root), revs.head, options)
            diff_text = git_diff(str(root), revs.base, revs.head)
        except GitError as exc:
            raise ActionError(str(exc)) from None
        review = build_pr_review(base, head, diff_text=diff_text, max_inline=cfg.max_inline, lang=lang)
        audit = head  # the gate judges the PR's head commit, as the App does

    from reports.scoring import overall

    score = overall(audit.results).percent
    verdict = decide(_gate(inputs, cfg.gate), score, bool(review and review.has_regression))
    summary = _summary(audit, lang=lang, loaded=local.loaded, notes=notes, verdict=verdict, review=review, revs=revs)
    regressions = len(review.regressions) if review else 0
    outputs = {
        "score": f"{score:g}",
        "conclusion": verdict.conclusion,
        "regressions": str(regressions),
        "sarif-file": str(sarif_path),
    }
    result = Result(1 if verdict.blocks else 0, verdict, score, regressions, summary, outputs)
    if review is not None:
        for line in annotations(review):
            print(line)
    return result


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)


def write_outputs(path: str | None, outputs: Mapping[str, str]) -> None:
    """``name<<DELIMITER`` blocks in ``$GITHUB_OUTPUT`` (safe for any value)."""
    if not path:
        return
    lines: list[str] = []
    for name, value in outputs.items():
        delim = f"ghadelimiter_{secrets.token_hex(8)}"
        lines += [f"{name}<<{delim}", value, delim]
    _append(path, "\n".join(lines) + "\n")


def main(env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    try:
        result = run(env)
    except ActionError as exc:
        print(f"::error title=accel-audit::{_escape_data(str(exc))}")
        _append(env.get("GITHUB_STEP_SUMMARY"), f"## Accel Audit could not run\n\n{exc}\n")
        return 2
    _append(env.get("GITHUB_STEP_SUMMARY"), result.summary.rstrip() + "\n")
    write_outputs(env.get("GITHUB_OUTPUT"), result.outputs)
    print(f"accel-audit: score {result.outputs['score']}%, {result.regressions} regression(s), conclusion {result.verdict.conclusion}")
    if result.verdict.blocks:
        print(f"::error title=accel-audit gate::{_escape_data('; '.join(result.verdict.reasons))}")
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
