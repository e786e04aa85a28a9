"""From two audits and the PR's diff to the review the bot posts (and ``accel-audit pr`` prints)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from checks.engine import Audit

from .attribute import attribute, locate
from .comments import changes_section, fingerprint, inline_comments, suppressed_section
from .compare import compare_audits, rank_key
from .diff import DiffIndex, parse_diff, parse_files
from .model import PRReview
from .site_compare import compare_sites

__all__ = ["build_pr_review", "load_diff"]


def load_diff(diff_text: str | bytes | None = None, files: Iterable[Mapping[str, Any]] | None = None) -> DiffIndex:
    """The unified diff when given, else the PR files API list, else an empty diff (nothing can be placed)."""
    if diff_text is not None:
        return parse_diff(diff_text)
    return parse_files(files or [])


def build_pr_review(
    base: Audit | None,
    head: Audit,
    *,
    diff_text: str | None = None,
    files: list[dict] | None = None,
    max_inline: int = 20,
    lang: str = "en",
    inline_limit: int | None = None,
    ignored: frozenset[str] | None = None,
) -> PRReview:
    """Compare, attribute to diff lines, render comments and the "Changes in this PR" section.

    Every comment's target is a line of the diff's hunks (validated in :mod:`review.attribute`);
    regressions whose cause is not in the diff, and those over ``max_inline``, are listed in
    ``unplaced`` and in ``summary_md`` only. ``inline_limit`` is the configured limit the summary
    names when ``max_inline`` is what is left of it (a monorepo shares one budget across projects).

    Every run configuration the PR touches or adds is compared with itself in base first
    (:mod:`review.site_compare`); the repository-wide comparison adds what no site explains
    (a check's status, findings in code). ``ignored``: check IDs the base branch's config
    ignores (default: the audits' own ignore lists); a regression the PR suppresses with
    ``accel-ignore`` still counts unless its check is ignored there.
    """
    diff = load_diff(diff_text, files)
    if ignored is None:
        ignored = frozenset((base.ignored if base is not None else []) or []) | frozenset(head.ignored or [])
    sites = compare_sites(base, head, diff, ignored)
    cmp = compare_audits(base, head)
    # the per-site verdict replaces the repository-wide one for the same check and direction (no duplicate, and the
    # numbers are the site's own: its base value, its model)
    # (both directions: a site that regressed is not also credited by a repository-wide value that moved the other way)
    site_reg = {c.check for c in sites.regressions} | {c.check for c in sites.improvements}
    site_imp = set(site_reg)
    # checks whose repository-wide value follows from another's: no prefetch without loader workers
    for derived, cause in (("F2", "F1"),):
        if cause in site_reg:
            site_reg.add(derived)
        if cause in site_imp:
            site_imp.add(derived)
    cmp.regressions = [c for c in cmp.regressions if c.check not in site_reg]
    cmp.improvements = [c for c in cmp.improvements if c.check not in site_imp]
    placed, unplaced = attribute(cmp.regressions, base, head, diff)
    for ch in cmp.regressions:
        ch.fingerprint = fingerprint(ch.check, ch.path, ch.finding or ch.key or "")
    for ch in cmp.improvements:
        ch.path, ch.line = locate(ch, base, head)
        ch.fingerprint = fingerprint(ch.check, ch.path, ch.finding or ch.key or "")
    for ch in sites.regressions + sites.improvements:
        ch.fingerprint = fingerprint(ch.check, ch.path, f"{ch.finding}\0{ch.site}")
    rank = rank_key(head)
    cmp.regressions = sorted(sites.regressions + cmp.regressions, key=rank)
    cmp.improvements = sorted(sites.improvements + cmp.improvements, key=rank)
    order = {id(c): i for i, c in enumerate(cmp.regressions)}
    placed = sorted(sites.placements + placed, key=lambda p: order.get(id(p.change), 0))
    unplaced = sites.unplaced + unplaced
    comments, over = inline_comments(placed, max_inline, lang)
    overflow = [p.change for p in over]
    left_out = unplaced + overflow
    left_out.sort(key=lambda c: order.get(id(c), 0))
    summary = changes_section(cmp, unplaced, overflow, max_inline if inline_limit is None else inline_limit, lang)
    if sites.suppressed:
        summary += suppressed_section(sites.suppressed, lang)
    review = PRReview(
        regressions=cmp.regressions,
        improvements=cmp.improvements,
        comments=comments,
        unplaced=left_out,
        category_delta=dict(cmp.category_delta),
        summary_md=summary,
        suppressed_by_pr=sites.suppressed,
        sites_compared=sites.sites,
    )
    return review
