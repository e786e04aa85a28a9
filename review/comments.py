"""Inline comment bodies, fingerprints, and the "Changes in this PR" section of the check run."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from checks.base import Check, all_checks
from checks.model import CATEGORIES, FixSafety

from .attribute import Placement, feature_key, norm_key
from .compare import Comparison
from .diff import LEFT
from .model import Change, InlineComment
from .suggest import rewrite_line

__all__ = [
    "BODY_LIMIT", "FP_MARKER", "changes_section", "comment_body", "fingerprint", "inline_comments", "marker", "parse_fingerprint",
    "parse_fingerprints", "suggestion_for", "suppressed_section",
]

BODY_LIMIT = 65_536
FP_MARKER = re.compile(r"<!--\s*accel-audit:fp=([0-9a-f]{8,64})\s*-->")
_PY = (".py", ".pyi")
_FENCE = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml", ".py": "python", ".sh": "bash", ".bash": "bash", ".cfg": "ini"}
_SUMMARY_ROWS = 50

_T = {
    "en": {
        "regression": "regression", "why": "Why it costs", "fix": "Fix", "restore": "This PR removed the line below; restoring it brings the base behaviour back:",
        "suggest_note": "The suggestion restores the base value `{v}`.", "unsafe": "It changes numerics or memory behaviour: check the run before merging.",
        "title": "Changes in this PR", "score": "Score", "regressions": "Regressions", "improvements": "Improvements",
        "by_cat": "Score by category", "category": "Category", "base": "Base", "head": "Head", "delta": "Δ", "check": "Check",
        "change": "Change", "where": "Where", "impact": "Impact", "none": "No regression or improvement between the base and this PR.",
        "not_inline": "Not commented inline", "not_in_diff": "not changed by this PR", "over_limit": "over the inline comment limit ({n})",
        "removed_line": "removed line", "more": "… and {n} more", "no_base": "The base branch could not be audited: only findings on lines this PR adds are listed.",
        "counts": "**{r}** regression(s) · **{i}** improvement(s)", "unknown_place": "cause not located",
        "also": "Also on this line:",
        "suppressed": "Suppressed by this PR", "suppressed_note": "These regressions are on lines this PR marks `# accel-ignore`; they still count for the gate.",
    },
    "zh": {
        "regression": "性能回退", "why": "代价", "fix": "修复", "restore": "本 PR 删除了下面这一行；恢复它即可回到 base 的行为：",
        "suggest_note": "建议的修改恢复 base 中的取值 `{v}`。", "unsafe": "该修改会影响数值精度或显存行为：合并前请验证训练。",
        "title": "本 PR 的变化", "score": "得分", "regressions": "回退", "improvements": "改进",
        "by_cat": "分类得分", "category": "类别", "base": "Base", "head": "Head", "delta": "变化", "check": "检查项",
        "change": "变化", "where": "位置", "impact": "影响", "none": "与 base 相比没有回退或改进。",
        "not_inline": "未以行内评论发出", "not_in_diff": "不在本 PR 的改动中", "over_limit": "超出行内评论上限（{n} 条）",
        "removed_line": "被删除的行", "more": "…… 另有 {n} 项", "no_base": "无法审计 base 分支：只列出本 PR 新增行上的问题。",
        "counts": "**{r}** 项回退 · **{i}** 项改进", "unknown_place": "未定位到原因",
        "also": "同一行的另一项：",
        "suppressed": "本 PR 自行屏蔽的回退", "suppressed_note": "以下回退所在的行被本 PR 标记为 `# accel-ignore`；门禁仍然计入。",
    },
}


def _t(lang: str) -> dict[str, str]:
    return _T.get(lang, _T["en"])


def fingerprint(check: str, path: str | None, finding: str) -> str:
    """Stable across pushes: the same check, file and finding give the same hash."""
    return hashlib.sha256(f"{check}\0{path or ''}\0{finding}".encode()).hexdigest()[:20]


def marker(fp: str) -> str:
    return f"<!-- accel-audit:fp={fp} -->"


def parse_fingerprint(body: str | None) -> str | None:
    m = FP_MARKER.search(body or "")
    return m.group(1) if m else None


def parse_fingerprints(body: str | None) -> list[str]:
    """Every finding a comment carries (several when findings on one line were folded together)."""
    return FP_MARKER.findall(body or "")


def _registry() -> dict[str, Check]:
    return {c.id: c for c in all_checks()}


def _fence(path: str) -> str:
    for ext, lang in _FENCE.items():
        if path.endswith(ext):
            return lang
    return ""


def suggestion_for(p: Placement) -> str | None:
    """The RIGHT line rewritten with the base value, when the fix is an edit of that line."""
    if p.side == LEFT or p.key is None:
        return None
    new = p.base_value
    if new is None and p.change.finding and feature_key(norm_key(p.key)) == p.change.finding.lower():
        new = p.change.before  # the key is the value's own name: the measured base value fits the line
    if new is None or isinstance(new, (list, tuple, dict)):
        return None
    return rewrite_line(p.text, p.key, p.value, new, python=p.path.endswith(_PY))


def _code_fence(body: str) -> str:
    """A fence longer than any backtick run in ``body``."""
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    return "`" * max(3, longest + 1)


def comment_body(p: Placement, lang: str = "en", check: Check | None = None, also: list[tuple[Placement, Check | None]] | None = None) -> str:
    """Markdown for one inline comment; ``also``: further findings on the same line, each with its own marker."""
    t = _t(lang)
    c = p.change
    what = (c.what_zh or c.what) if lang == "zh" else c.what
    why = (c.why_zh or c.why) if lang == "zh" else c.why
    title = (getattr(check, "title_zh", None) if lang == "zh" else None) or (check.title if check else c.check)
    parts = [f"**accel-audit · {c.check} {title}: {t['regression']}**", "", what, "", f"**{t['why']}:** {why}"]
    if c.suggestion is not None:
        fence = _code_fence(c.suggestion)
        shown = c.before if p.base_value is None else p.base_value
        parts += ["", f"{fence}suggestion", c.suggestion, fence, t["suggest_note"].format(v=_short(shown))]
        if check is not None and check.fix_safety == FixSafety.UNSAFE:
            parts.append(t["unsafe"])
    elif p.side == LEFT and p.base_text is not None:
        fence = _code_fence(p.base_text)
        parts += ["", t["restore"], "", f"{fence}{_fence(p.path)}", p.base_text, fence]
    elif check is not None:
        fix = (check.fix_zh if lang == "zh" else check.fix) or check.fix
        parts += ["", f"**{t['fix']}:** {fix}"]
    markers = [marker(c.fingerprint)]
    for q, qcheck in also or []:
        qc = q.change
        q_title = (getattr(qcheck, "title_zh", None) if lang == "zh" else None) or (qcheck.title if qcheck else qc.check)
        q_what = (qc.what_zh or qc.what) if lang == "zh" else qc.what
        q_why = (qc.why_zh or qc.why) if lang == "zh" else qc.why
        parts += ["", f"**{t['also']} {qc.check} {q_title}:** {q_what} — {q_why}"]
        markers.append(marker(qc.fingerprint))
    tail = "\n\n" + "\n".join(markers)
    body = "\n".join(parts)
    if len(body) + len(tail) > BODY_LIMIT:
        body = body[: BODY_LIMIT - len(tail) - 2].rsplit("\n", 1)[0] + "\n…"
    return body + tail


def _short(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    s = str(v)
    return s if len(s) <= 60 else s[:57] + "…"


def inline_comments(placements: list[Placement], max_inline: int, lang: str = "en") -> tuple[list[InlineComment], list[Placement]]:
    """Comments for the first ``max_inline`` placements (already in priority order), and the overflow."""
    reg = _registry()
    groups: dict[tuple[str, int, str], list[Placement]] = {}
    for p in placements:  # one comment per line: GitHub shows several on one line as separate threads, which reads as noise
        groups.setdefault((p.path, p.line, p.side), []).append(p)
    out: list[InlineComment] = []
    over: list[Placement] = []
    for group in groups.values():
        if len(out) >= max(0, max_inline):
            over += group
            continue
        host, rest = group[0], group[1:]
        host.change.suggestion = suggestion_for(host)
        body = comment_body(host, lang, reg.get(host.change.check), [(q, reg.get(q.change.check)) for q in rest])
        out.append(InlineComment(path=host.path, line=host.line, side=host.side, body=body, fingerprint=host.change.fingerprint,
                                 also=[q.change.fingerprint for q in rest]))
    return out, over


# -- the check run's "Changes in this PR" section -------------------------------------------------


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\r", " ").replace("\n", " ").strip()


def _num(x: float) -> str:
    return f"{x:g}"


def _signed(x: float) -> str:
    return f"+{x:g}" if x > 0 else f"−{abs(x):g}" if x < 0 else "0"


def _where(c: Change, t: dict[str, str], reasons: dict[str, str]) -> str:
    if c.path and c.line:
        loc = f"`{c.path}:{c.line}`"
        if c.fingerprint in reasons:
            return f"{loc} ({reasons[c.fingerprint]})"
        if c.side == LEFT:
            return f"{loc} ({t['removed_line']})"
        return loc
    return reasons.get(c.fingerprint, t["unknown_place"])


def _rows(changes: Iterable[Change], lang: str, t: dict[str, str], reasons: dict[str, str]) -> list[str]:
    rows = [f"| {t['check']} | {t['change']} | {t['where']} | {t['impact']} |", "|---|---|---|---|"]
    items = list(changes)
    for c in items[:_SUMMARY_ROWS]:
        what = (c.what_zh or c.what) if lang == "zh" else c.what
        why = (c.why_zh or c.why) if lang == "zh" else c.why
        rows.append(f"| {c.check} | {_cell(what)} | {_cell(_where(c, t, reasons))} | {_cell(why)} |")
    if len(items) > _SUMMARY_ROWS:
        rows.append(f"| | {t['more'].format(n=len(items) - _SUMMARY_ROWS)} | | |")
    return rows


def changes_section(cmp: Comparison, unplaced: list[Change], overflow: list[Change], max_inline: int, lang: str = "en") -> str:
    """Markdown for the top of the check run summary."""
    t = _t(lang)
    lines = [f"## {t['title']}", ""]
    if cmp.base_missing:
        lines += [f"_{t['no_base']}_", ""]
    if cmp.total and cmp.total[0] is not None:
        (bp, bm), (hp, hm) = cmp.total
        lines += [f"{t['score']}: {_num(bp)}/{bm} → {_num(hp)}/{hm} ({_signed(hp - bp)})", ""]
    lines += [t["counts"].format(r=len(cmp.regressions), i=len(cmp.improvements)), ""]
    reasons = {c.fingerprint: t["not_in_diff"] for c in unplaced}
    reasons.update({c.fingerprint: t["over_limit"].format(n=max_inline) for c in overflow})
    if not cmp.regressions and not cmp.improvements:
        lines += [t["none"], ""]
    if cmp.regressions:
        lines += [f"### {t['regressions']}", "", *_rows(cmp.regressions, lang, t, reasons), ""]
    if cmp.improvements:
        lines += [f"### {t['improvements']}", "", *_rows(cmp.improvements, lang, t, {}), ""]
    if cmp.category_delta:
        lines += [f"### {t['by_cat']}", "", f"| {t['category']} | {t['base']} | {t['head']} | {t['delta']} |", "|---|---|---|---|"]
        for cat, delta in cmp.category_delta.items():
            b, h = cmp.category_scores.get(cat, (None, (0.0, 0)))
            name = CATEGORIES[cat][1] if lang == "zh" else CATEGORIES[cat][0]
            b_txt = f"{_num(b[0])}/{b[1]}" if b else "n/a"
            h_txt = f"{_num(h[0])}/{h[1]}" if h and h[1] else "n/a"
            lines.append(f"| {cat} {name} | {b_txt} | {h_txt} | {_signed(delta)} |")
        lines.append("")
    not_inline = [c for c in cmp.regressions if c.fingerprint in reasons]
    if not_inline:
        lines += [f"### {t['not_inline']}", ""]
        for c in not_inline[:_SUMMARY_ROWS]:
            what = (c.what_zh or c.what) if lang == "zh" else c.what
            lines.append(f"- {c.check} {what} — {_where(c, t, reasons)}")
        if len(not_inline) > _SUMMARY_ROWS:
            lines.append(f"- {t['more'].format(n=len(not_inline) - _SUMMARY_ROWS)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def suppressed_section(changes: list[Change], lang: str = "en") -> str:
    """The regressions a PR silenced on its own lines: listed so that no PR hides its own regression unseen."""
    t = _t(lang)
    lines = ["", f"### {t['suppressed']}", "", t["suppressed_note"], ""]
    for c in changes[:_SUMMARY_ROWS]:
        what = (c.what_zh or c.what) if lang == "zh" else c.what
        lines.append(f"- {c.check} {what} — `{c.path}:{c.line}`")
    return "\n".join(lines) + "\n"
