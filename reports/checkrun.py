"""The check run's output (title, summary, text), each within GitHub's 65,535-character limit."""

from __future__ import annotations

from checks.engine import Audit

from .markdown import render_markdown
from .scoring import overall

GITHUB_TEXT_LIMIT = 65_535


def check_run_output(audit: Audit, *, lang: str = "en", changes_md: str | None = None) -> dict[str, str]:
    """``{"title", "summary", "text"}`` for ``PATCH /repos/{o}/{r}/check-runs/{id}``.

    ``changes_md`` is the "Changes in this PR" section of the regression review; it goes first.
    """
    s = overall(audit.results)
    title = f"Accel score {s.points:g}/{s.max} ({s.percent}%) · {audit.project.bottleneck.value}"
    summary = ((changes_md.rstrip() + "\n\n") if changes_md else "") + render_markdown(audit)
    if len(summary) > GITHUB_TEXT_LIMIT:
        summary = summary[: GITHUB_TEXT_LIMIT - 200].rsplit("\n", 1)[0] + "\n\n_(report folded: see the JSON report)_\n"
    return {"title": title[:255], "summary": summary, "text": ""}
