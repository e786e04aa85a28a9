"""Words of a fix: the follow-up pull request's body, the replies on the PR, suggestion blocks."""

from __future__ import annotations

from .model import Dropped, Edit
from .plan import FixPlan

MAX_DIFF = 60_000


def _v(text: str) -> str:
    return "`" + text.strip().replace("`", "'") + "`" if text.strip() else "(new line)"


def edit_row(e: Edit) -> str:
    checks = ", ".join(e.checks)
    grade = "**unsafe**" if e.safety.value == "unsafe" else "safe"
    benefit = e.benefit if e.reason == "regression" else f"recommendation: {e.benefit}"
    return f"| {checks} | `{e.site.path}:{e.line_after or e.site.line}` | {_v(e.before_text)} → {_v(e.after_text)} | {grade} | {benefit.replace('|', '/')} |"


def edits_table(plan: FixPlan) -> str:
    rows = ["| check | where | before → after | safety | benefit |", "|---|---|---|---|---|"]
    rows += [edit_row(e) for e in plan.edits]
    return "\n".join(rows)


def dropped_list(dropped: list[Dropped], limit: int = 20) -> str:
    if not dropped:
        return ""
    lines = [f"- {d.check}" + (f" `{d.path}:{d.line}`" if d.path else "") + f": {d.reason}" for d in dropped[:limit]]
    if len(dropped) > limit:
        lines.append(f"- … and {len(dropped) - limit} more")
    return "\n".join(lines)


def pr_body(plan: FixPlan, number: int, head_sha: str) -> str:
    unsafe = [e for e in plan.edits if e.safety.value == "unsafe"]
    parts = [
        f"accel-audit fixes for #{number} (on `{head_sha[:12]}`). Every edit below was re-audited before it was proposed: "
        "the file still parses, its check improved and no other check got worse. Untouched lines are byte-identical.",
        "",
        edits_table(plan),
        "",
        f"**Score** {plan.score_before}% → {plan.score_after}%",
    ]
    if unsafe:
        parts += ["", f"⚠️ {len(unsafe)} edit(s) are **unsafe**: they change numerics or memory behaviour "
                  "(precision, kernels, compile, overlap). Review them and run a short training to compare loss curves before merging."]
    dl = dropped_list(plan.dropped)
    if dl:
        parts += ["", "<details><summary>Not fixed</summary>", "", dl, "", "</details>"]
    return "\n".join(parts)


def diff_block(plan: FixPlan) -> str:
    d = plan.diff()
    if len(d) > MAX_DIFF:
        d = d[:MAX_DIFF] + "\n… (diff cut at 60,000 characters)\n"
    fence = "````" if "```" in d else "```"
    return f"{fence}diff\n{d}{fence}"


def suggestions(plan: FixPlan) -> str:
    """Suggestion blocks for the one-line edits (a value changed on its line)."""
    out = []
    for e in plan.edits:
        if e.before_text and e.after_text and e.raw_line is None:
            out += [f"`{e.site.path}` line {e.line_after or e.site.line} ({', '.join(e.checks)}):", "```suggestion", e.after_text, "```", ""]
    return "\n".join(out).rstrip()


def nothing_to_fix(plan: FixPlan) -> str:
    msg = "accel-audit found nothing it can fix automatically here"
    if plan.elsewhere:
        msg += (f" ({plan.elsewhere} recommendation(s) with a fix are in files this pull request does not touch: "
                "`accel-audit fix` applies them locally)")
    dl = dropped_list(plan.dropped)
    if dl:
        return f"{msg}. What was considered and why it was not fixed:\n\n{dl}"
    return f"{msg}: no regression of this PR and no recommendation with an edit in the fix catalog applies (score {plan.score_before}%)."
