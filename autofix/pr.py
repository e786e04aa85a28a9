"""Fixes for a pull request: its own regressions first (base values back at their sites), then the catalog."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from checks.engine import Audit

from .diff import unified_all
from .plan import FixPlan, plan_fixes


def plan_pr(
    base: Audit | None,
    head: Audit,
    head_read: Callable[[str], str | None],
    base_read: Callable[[str], str | None] | None,
    *,
    diff_text: str | None = None,
    regressions: Iterable[Any] | None = None,
    only: Iterable[str] = (),
    unsafe: bool = False,
    named_unsafe: bool = True,
    touched: set[str] | None = None,
) -> FixPlan:
    """The verified fix plan of a PR. ``regressions`` (``review.model.Change``) are computed from the two audits
    when not given; restoring them is never held back by their grade (the base ran with those values)."""
    if regressions is None:
        regressions = []
        if base is not None:
            from review.pipeline import build_pr_review

            regressions = build_pr_review(base, head, diff_text=diff_text).regressions
    return plan_fixes(head, head_read, only=only, unsafe=unsafe, regressions=regressions, base_read=base_read,
                      unsafe_regressions=True, named_unsafe=named_unsafe, touched=touched)


__all__ = ["plan_pr", "unified_all"]


def demo_fix_diff(base_dir: str, head_dir: str) -> str:
    """The follow-up PR's diff for two checked-out trees (``make demo`` prints it for its sample PR)."""
    from pathlib import Path

    from checks.engine import audit_path

    def files(root: Path) -> dict[str, str]:
        out = {}
        for p in sorted(root.rglob("*")):
            if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(root).parts:
                try:
                    out[p.relative_to(root).as_posix()] = p.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    continue
        return out

    b, h = Path(base_dir), Path(head_dir)
    bf, hf = files(b), files(h)
    from .render import edits_table

    changed = {p for p in set(bf) | set(hf) if bf.get(p) != hf.get(p)}
    plan = plan_pr(audit_path(b), audit_path(h), hf.get, bf.get, diff_text=unified_all(bf, hf), touched=changed)
    if not plan.edits:
        return "Nothing to fix.\n"
    return f"{edits_table(plan)}\n\nScore {plan.score_before}% -> {plan.score_after}%\n\n{plan.diff()}"
