"""``accel-audit pr --repo DIR --base REF --head REF``: the bot's review of a PR, on a local git repository.

Both trees are read from git objects (no checkout, nothing executed); the diff is the
PR-style ``merge-base...head`` diff. The output is what the bot would post: the check
run (title and summary with the "Changes in this PR" section) and every inline comment
with its path, line and side. The base revision's ``.github/accel-audit.yml`` applies
(``ignore``, ``paths.exclude``, ``hardware``), as in the App.

Exit status, so that it can gate any CI like the App's gate:

- 0: no regression (or ``--no-fail-on-regression``), and the head score is not under ``--fail-under``;
- 1: the PR has regressions (``--fail-on-regression``, the default), or the head score is under ``--fail-under``;
- 2: the audit could not run (not a git repository, unknown revision: named in the error).

Base and head share the parsed facts of every file whose content is the same on both
sides (one in-memory cache keyed by content hash), so a PR audit parses each unchanged
file once and holds one copy of its facts.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from checks.engine import Audit, AuditOptions
from checks.facts.types import FileFacts
from reports import json_text
from review.gitlocal import GitError, Revisions, audit_revision, git_diff, read_blob, resolve
from review.model import Change, PRReview
from review.pipeline import build_pr_review
from review.publish import review_request


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pr", help="review the changes between two revisions of a local git repository, as the bot would on a PR")
    p.add_argument("--repo", default=".", help="local git repository (default: the current directory)")
    p.add_argument("--base", required=True, help="base revision (the PR's target branch)")
    p.add_argument("--head", help="head revision (the PR's branch)")
    p.add_argument("--worktree", action="store_true",
                   help="the head is the working tree (tracked and new files, as the commit hook sees them); "
                        "facts are cached in the git directory")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--lang", choices=("en", "zh"), default="en")
    p.add_argument("--max-inline", type=int, default=20, help="at most this many inline comments (default 20)")
    p.add_argument("--event", choices=("COMMENT", "REQUEST_CHANGES"), default="COMMENT", help="review event (default COMMENT)")
    p.add_argument("--fail-on-regression", action=argparse.BooleanOptionalAction, default=True,
                   help="exit 1 when the PR has regressions (default on; --no-fail-on-regression: report only)")
    p.add_argument("--fail-under", type=float, default=None, metavar="PERCENT",
                   help="also exit 1 when the head's overall score is under PERCENT (the gate's min_score)")
    p.set_defaults(func=run)


def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [_jsonable(x) for x in v]
    return getattr(v, "text", None) or str(v)


def change_json(c: Change) -> dict[str, Any]:
    return {
        "check": c.check, "kind": c.kind, "finding": c.finding, "what": c.what, "why": c.why, "path": c.path, "line": c.line,
        "side": c.side if c.path and c.line else None, "key": c.key, "before": _jsonable(c.before), "after": _jsonable(c.after),
        "suggestion": c.suggestion, "fingerprint": c.fingerprint, "site": c.site, "sites": list(c.sites), "new_site": c.new_site,
        "base_path": c.base_path, "base_line": c.base_line, "base_key": c.base_key, "base_raw": _jsonable(c.base_raw),
        "head_path": c.head_path, "head_line": c.head_line, "head_raw": _jsonable(c.head_raw), "placed": c.placed,
        "suppressed_by_pr": c.suppressed_by_pr,
    }


def review_output(head: Audit, review: PRReview, revs: Revisions, *, event: str = "COMMENT", lang: str = "en") -> dict[str, Any]:
    """Everything the bot would send for this push, as one JSON document."""
    from reports.checkrun import check_run_output

    return {
        "base": {"ref": revs.base_ref, "merge_base": revs.base},
        "head": {"ref": revs.head_ref, "sha": revs.head},
        "check_run": check_run_output(head, lang=lang, changes_md=review.summary_md),
        "review": review_request(review, revs.head, event=event) if review.comments else None,
        "has_regression": review.has_regression,
        "regressions": [change_json(c) for c in review.regressions],
        "improvements": [change_json(c) for c in review.improvements],
        "not_inline": [change_json(c) for c in review.unplaced],
        "suppressed_by_pr": [change_json(c) for c in review.suppressed_by_pr],
        "sites_compared": review.sites_compared,
        "category_delta": review.category_delta,
    }


def render_markdown(out: dict[str, Any]) -> str:
    cr = out["check_run"]
    lines = [
        f"# accel-audit pr: {out['base']['ref']}...{out['head']['ref']} "
        f"(merge base {out['base']['merge_base'][:12]} → head {out['head']['sha'][:12]})",
        "",
        "## Check run",
        "",
        f"**{cr['title']}**",
        "",
        cr["summary"].rstrip(),
    ]
    if cr.get("text"):
        lines += ["", cr["text"].rstrip()]
    review = out["review"]
    lines += ["", "---", ""]
    if review is None:
        lines += ["## Review", "", "No inline comment: nothing new to post on the diff."]
    else:
        lines += [f"## Review (event {review['event']}, commit {review['commit_id'][:12]}): {len(review['comments'])} inline comment(s)"]
        for c in review["comments"]:
            lines += ["", f"### `{c['path']}` line {c['line']} ({c['side']})", "", c["body"].rstrip()]
    return "\n".join(lines) + "\n"


class SharedFacts:
    """An in-memory facts cache for one PR audit: head reuses base's facts of every unchanged file (same content hash)."""

    def __init__(self) -> None:
        self._d: dict[str, FileFacts] = {}
        self.hits = 0
        self.strings: dict[str, str] = {"": ""}  # one string table for both audits (see checks.engine.build_facts)

    def get(self, key: str) -> FileFacts | None:
        ff = self._d.get(key)
        self.hits += ff is not None
        return ff

    def put(self, key: str, value: FileFacts) -> None:
        self._d[key] = value


def base_options(repo: str, base_rev: str) -> tuple[AuditOptions, list[str]]:
    """Audit options from the base revision's ``.github/accel-audit.yml`` (as the App reads it), and its errors."""
    from bot.repo_config import CONFIG_PATH, parse_config

    raw = read_blob(repo, base_rev, CONFIG_PATH)
    loaded = parse_config(raw.decode("utf-8", "replace") if raw is not None else None)
    cfg = loaded.config
    return AuditOptions(ignore=cfg.ignore, exclude=cfg.exclude, training=cfg.training, hardware=cfg.hardware, cache=SharedFacts()), loaded.errors


def audit_pair(repo: str, revs: Revisions, options: AuditOptions) -> tuple[Audit, Audit]:
    """Audit base, then head, sharing the facts of unchanged files (``options.cache``: a :class:`SharedFacts`).

    The base's query indexes are dropped while head is audited and rebuilt from its file facts
    afterwards (the facts themselves are shared with head): the two sets of indexes never
    coexist with head's audit working memory.
    """
    from checks.facts import Facts

    base = audit_revision(repo, revs.base, options)
    base_files = list(base.facts.files.values())
    base.facts = Facts(())  # type: ignore[assignment]
    head = audit_revision(repo, revs.head, options)
    base.facts = Facts(base_files)
    return base, head


def run(args: argparse.Namespace) -> int:
    if (args.head is None) == (not getattr(args, "worktree", False)):
        print("accel-audit: pr needs --head REF or --worktree (one of them)", file=sys.stderr)
        return 2
    try:
        if getattr(args, "worktree", False):
            from accel_audit.localconfig import config_at, options_for
            from review.worktree import review_inputs

            wt = review_inputs(args.repo, args.base, options_for(config_at(args.repo, args.base).config))
            if wt.head is None or wt.base is None:
                print(f"accel-audit: no file that the audit reads differs from {args.base}", file=sys.stderr)
                return 0
            revs, base, head, diff_text = wt.revs, wt.base, wt.head, wt.diff_text
        else:
            revs = resolve(args.repo, args.base, args.head)
            options, errors = base_options(args.repo, revs.base)
            for err in errors:
                print(f"accel-audit: base config ignored: {err}", file=sys.stderr)
            base, head = audit_pair(args.repo, revs, options)
            diff_text = git_diff(args.repo, revs.base, revs.head)
    except GitError as exc:
        print(f"accel-audit: {exc}", file=sys.stderr)
        return 2
    review = build_pr_review(base, head, diff_text=diff_text, max_inline=args.max_inline, lang=args.lang,
                             ignored=frozenset(base.ignored))
    out = review_output(head, review, revs, event=args.event, lang=args.lang)
    if args.format == "json":
        sys.stdout.write(json_text.dumps(out) + "\n")
    else:
        sys.stdout.write(render_markdown(out))
    failed = bool(args.fail_on_regression and review.has_regression)
    if args.fail_under is not None:
        from reports.scoring import overall

        failed = failed or overall(head.results).percent < args.fail_under
    return 1 if failed else 0
