"""The check run's output (title, summary, text), each within GitHub's 65,535-character limit.

``summary``: the regression review's "Changes in this PR" (when given), the overview with the
bottleneck, the category score table and the prioritized advice. ``text``: the detailed results
and the snippets. Both fold (see :mod:`reports.markdown`) rather than cut.
"""

from __future__ import annotations

from checks.engine import Audit

from .advice import build_plan
from .fold import GITHUB_TEXT_LIMIT, cut_blocks
from .i18n import BOTTLENECK, TEXT, check_lang
from .markdown import render_markdown
from .scoring import overall

TITLE_LIMIT = 255
#: room the summary keeps for the report itself when a long "Changes in this PR" section comes first
MIN_REPORT_ROOM = 8_000


def check_run_output(audit: Audit, *, lang: str = "en", changes_md: str | None = None) -> dict[str, str]:
    """``{"title", "summary", "text"}`` for ``PATCH /repos/{o}/{r}/check-runs/{id}``.

    ``changes_md`` is the "Changes in this PR" section of the regression review; it goes first.
    """
    check_lang(lang)
    if not audit.training_code_found:
        md = render_markdown(audit, lang=lang)
        return {"title": TEXT[lang]["no_training_code"][:TITLE_LIMIT], "summary": md, "text": ""}
    plan = build_plan(audit)
    s = overall(audit.results)
    label = "Accel score" if lang == "en" else "加速得分"
    title = f"{label} {s.points:g}/{s.max} ({s.percent}%) · {BOTTLENECK[lang][audit.project.bottleneck]}"
    head = ""
    if changes_md and changes_md.strip():
        note = f"_{TEXT[lang]['folded_cut']}_"
        head = cut_blocks(changes_md.strip(), GITHUB_TEXT_LIMIT - MIN_REPORT_ROOM - 2, note) + "\n\n"
    summary = head + render_markdown(
        audit, lang=lang, max_chars=GITHUB_TEXT_LIMIT - len(head), sections=("overview", "summary", "advice"), plan=plan
    )
    text = render_markdown(audit, lang=lang, max_chars=GITHUB_TEXT_LIMIT, sections=("details", "snippets"), plan=plan)
    return {"title": title[:TITLE_LIMIT], "summary": summary, "text": text}
