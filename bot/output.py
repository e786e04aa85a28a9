"""The check run's title, summary and text: the report's check-run output plus what the service adds
(the gate's verdict, configuration errors, regressions not placed on a diff line, scan notes)."""

from __future__ import annotations

from typing import Any

from checks.engine import Audit
from reports.checkrun import check_run_output
from reports.json_report import recommendations

from .gate import Verdict
from .repo_config import LoadedConfig

LIMIT = 65_535


def _fit(text: str, limit: int = LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 120].rsplit("\n", 1)[0] + "\n\n_(folded to fit GitHub's 65,535-character limit)_\n"


def compose(audit: Audit, *, lang: str, changes_md: str | None, loaded: LoadedConfig, verdict: Verdict, unplaced: list[Any] | None = None) -> dict[str, str]:
    base = check_run_output(audit, lang=lang, changes_md=changes_md)
    top: list[str] = []
    for err in loaded.errors:
        top.append(f"> [!WARNING]\n> Invalid configuration, defaults applied: `{err}`")
    if verdict.blocks:
        top.append("**Merge gate: " + verdict.conclusion.replace("_", " ") + "** — " + "; ".join(verdict.reasons))
    summary = base["summary"]
    if top:
        summary = "\n\n".join(top) + "\n\n" + summary
    text_parts: list[str] = []
    if base.get("text"):
        text_parts.append(base["text"])
    if loaded.errors:
        text_parts.append("## Configuration\n\n" + "\n".join(f"- Invalid: `{e}` (defaults applied)" for e in loaded.errors))
    elif loaded.source:
        text_parts.append(f"## Configuration\n\nRead from `{loaded.source}`.")
    if unplaced:
        lines = ["## Regressions outside the diff", ""]
        for ch in unplaced:
            where = f" (`{ch.path}:{ch.line}`)" if getattr(ch, "path", None) and getattr(ch, "line", None) else ""
            lines.append(f"- **{ch.check}** {ch.what}{where}: {ch.why}")
        text_parts.append("\n".join(lines))
    recs = recommendations(audit)
    if recs:
        lines = ["## Recommendations", ""]
        lines += [f"- **{r['check']}** ({r['priority']}): {r['text']}" for r in recs[:30]]
        text_parts.append("\n".join(lines))
    st = audit.stats
    scan = [f"## Scan\n\n{st.files_read} files read ({st.bytes_read:,} bytes), {len(st.skipped)} skipped."]
    if st.truncated:
        scan.append("The total read limit was reached: some files were not audited.")
    errors = audit.parse_errors
    if errors:
        scan.append(f"{len(errors)} files could not be parsed: " + ", ".join(f"`{p}`" for p, _ in errors[:10]) + ("…" if len(errors) > 10 else ""))
    text_parts.append(" ".join(scan))
    return {"title": base["title"], "summary": _fit(summary), "text": _fit("\n\n".join(text_parts))}
