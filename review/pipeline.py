"""From two audits and the PR's diff to the review the bot posts (and ``accel-audit pr`` prints)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from checks.engine import Audit

from .attribute import attribute, locate
from .comments import changes_section, fingerprint, inline_comments
from .compare import compare_audits
from .diff import DiffIndex, parse_diff, parse_files
from .model import PRReview

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
) -> PRReview:
    """Compare, attribute to diff lines, render comments and the "Changes in this PR" section.

    Every comment's target is a line of the diff's hunks (validated in :mod:`review.attribute`);
    regressions whose cause is not in the diff, and those over ``max_inline``, are listed in
    ``unplaced`` and in ``summary_md`` only. ``inline_limit`` is the configured limit the summary
    names when ``max_inline`` is what is left of it (a monorepo shares one budget across projects).
    """
    diff = load_diff(diff_text, files)
    cmp = compare_audits(base, head)
    placed, unplaced = attribute(cmp.regressions, base, head, diff)
    for ch in cmp.regressions:
        ch.fingerprint = fingerprint(ch.check, ch.path, ch.finding or ch.key or "")
    for ch in cmp.improvements:
        ch.path, ch.line = locate(ch, base, head)
        ch.fingerprint = fingerprint(ch.check, ch.path, ch.finding or ch.key or "")
    comments, over = inline_comments(placed, max_inline, lang)
    overflow = [p.change for p in over]
    left_out = unplaced + overflow
    order = {id(c): i for i, c in enumerate(cmp.regressions)}
    left_out.sort(key=lambda c: order.get(id(c), 0))
    review = PRReview(
        regressions=cmp.regressions,
        improvements=cmp.improvements,
        comments=comments,
        unplaced=left_out,
        category_delta=dict(cmp.category_delta),
        summary_md=changes_section(cmp, unplaced, overflow, max_inline if inline_limit is None else inline_limit, lang),
    )
    return review
