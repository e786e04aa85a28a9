"""Markdown report (minimal form; the full renderer lives in templates)."""

from __future__ import annotations

from checks.engine import Audit
from checks.model import CATEGORIES, Status

from .scoring import category_scores, overall

_MARK = {Status.USED: "[x]", Status.PARTIAL: "[~]", Status.UNUSED: "[ ]", Status.NA: "[-]"}


def render_markdown(audit: Audit) -> str:
    p = audit.project
    s = overall(audit.results)
    lines = [
        "# LLM/MLLM training acceleration audit",
        "",
        f"- Frameworks: {', '.join(p.frameworks) or 'none detected'}",
        f"- Model type: {p.model_type}" + (f" ({p.estimated_params})" if p.estimated_params else ""),
        "",
        "| # | Category | Score |",
        "|---|----------|-------|",
    ]
    for c in category_scores(audit.results):
        lines.append(f"| {c.id} | {CATEGORIES[c.id][0]} | {c.points:g}/{c.max} |" if c.applicable else f"| {c.id} | {CATEGORIES[c.id][0]} | n/a |")
    lines += ["", f"**Overall: {s.points:g} / {s.max} ({s.percent}%)**", ""]
    for r in audit.results:
        ev = f" — `{r.evidence[0].path}:{r.evidence[0].line}`" if r.evidence else ""
        lines.append(f"- {_MARK[r.status]} {r.id} {r.title}{ev}" + (f" ({r.detail})" if r.detail else ""))
    return "\n".join(lines) + "\n"
