"""The Markdown report (English or Chinese) in the seed's structure, rendered from a jinja2 template.

Sections: overview (with the step-zero bottleneck and its reasons), the summary table with an
at-a-glance score bar per category, detailed results ([x]/[ ] items with ``path:line``
evidence), prioritized advice, and snippets for the top three recommendations.

Size: GitHub caps a check run's summary and text at 65,535 characters. The report degrades by
folding, level by level (fewer evidence locations per check, then no evidence for practices in
use, then no withheld-advice list, then no detailed results, then fewer recommendations), and
re-renders whole; a last resort drops whole trailing blocks. A table is never cut.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from checks.base import REGISTRY, all_checks
from checks.engine import Audit
from checks.learner_library import library_reason_zh
from checks.model import CATEGORIES, CheckResult, Evidence, Status
from checks.stack import jax_reason_zh
from checks.workload import INFERENCE_CHECKS, inference_only

from .advice import SNIPPET_COUNT, Plan, build_plan
from .applicability import jax_text
from .fold import GITHUB_TEXT_LIMIT, cell, clip, code, cut_blocks, fence
from .i18n import BOTTLENECK, MODEL_TYPE, PRIORITY, TEXT, category_name, check_lang, na_reason_zh, skip_reason, status_detail_zh
from .resources import templates
from .scoring import CategoryScore, category_scores, overall

ALL_SECTIONS = ("overview", "summary", "details", "advice", "snippets")
BAR_WIDTH = 10


@dataclass(frozen=True, slots=True)
class Fold:
    """How much of the report to show."""

    evidence: int = 3  # evidence locations per check
    used_evidence: bool = True  # evidence under practices already in use
    withheld: bool = True  # the "not recommended for this project" list
    details: bool = True  # the detailed-results section
    advice: int | None = None  # recommendations shown (None: all)
    snippets: int = SNIPPET_COUNT
    reasons: int = 6  # bottleneck reasons


LEVELS: tuple[Fold, ...] = (
    Fold(),
    Fold(evidence=1),
    Fold(evidence=1, used_evidence=False),
    Fold(evidence=1, used_evidence=False, withheld=False),
    Fold(evidence=0, used_evidence=False, withheld=False),
    Fold(details=False, withheld=False),
    Fold(details=False, withheld=False, advice=15),
    Fold(details=False, withheld=False, advice=5, snippets=1, reasons=3),
    Fold(details=False, withheld=False, advice=3, snippets=0, reasons=1),
)


def bar(points: float, maximum: int, width: int = BAR_WIDTH) -> str:
    """``███████░░░`` for 7/10: the share of points, in ``width`` cells."""
    if maximum <= 0:
        return "—"
    filled = round(width * points / maximum)
    if 0 < points and filled == 0:
        filled = 1  # something is in place: never an empty bar
    if points < maximum and filled == width:
        filled = width - 1  # something is missing: never a full bar
    return "█" * filled + "░" * (width - filled)


def _num(x: float) -> str:
    return f"{x:g}"


def _short(title: str) -> str:
    """A short label: the parenthesised acronym when there is one (``Data parallel (DDP)`` -> ``DDP``)."""
    m = re.search(r"\(([^)]*)\)\s*$", title)
    if m and re.fullmatch(r"[A-Za-z0-9_/+\-. ]{1,14}", m.group(1)) and (m.group(1).upper() == m.group(1) or "_" in m.group(1)):
        return m.group(1)
    return re.sub(r"\s*[(（][^)）]*[)）]\s*$", "", title)


class _Ctx:
    def __init__(self, audit: Audit, plan: Plan, lang: str) -> None:
        all_checks()
        self.audit = audit
        self.plan = plan
        self.lang = lang
        self.t = TEXT[lang]
        self.c = "：" if lang == "zh" else ": "
        self.rec_no = {r.check: n for n, r in enumerate(plan.recommendations, 1)}
        self.withheld = {w.check: w for w in plan.withheld}

    def title(self, r: CheckResult) -> str:
        decl = REGISTRY.get(r.id)
        return decl.title_zh if self.lang == "zh" and decl is not None else r.title

    def ev(self, e: Evidence) -> str:
        snippet = code(e.snippet, 100)
        return f"`{e.path}:{e.line}`" + (f" {snippet}" if snippet else "")


def _overview(ctx: _Ctx, fold: Fold) -> dict[str, Any]:
    p = ctx.audit.project
    t = ctx.t
    reasons = p.notes.get("bottleneck_reasons_zh") if ctx.lang == "zh" else None
    reasons = reasons or p.bottleneck_reasons
    stats = ctx.audit.stats
    errors = ctx.audit.parse_errors
    return {
        "root": ctx.audit.root.replace("`", "'"),
        "frameworks": ", ".join(p.frameworks) or (t["plain_torch"] if p.notes.get("plain_torch") else t["none"]),
        "model_type": MODEL_TYPE[ctx.lang].get(p.model_type, p.model_type)
        + (f" ({', '.join(cell(n) for n in p.model_families)})" if p.model_families else ""),
        "scale": _scale(p, t),
        "seq_len": _seq_len(p, t),
        "hardware": p.hardware or "",
        "nodes": _nodes(p, t),
        "workload": t["inference_only"].format(ids=", ".join(sorted(INFERENCE_CHECKS, key=lambda c: (c[0], int(c[1:])))))
        if inference_only(p) else "",
        "bottleneck": BOTTLENECK[ctx.lang][p.bottleneck],
        "reasons": [clip(r, 450) for r in reasons[: fold.reasons]],
        "profile_hint": t["profile_hint_jax" if p.notes.get("jax_training") else "profile_hint"],
        "ignored": ", ".join(ctx.audit.ignored),
        "parse_errors": ", ".join(code(path, 80) for path, _ in errors[:10]) + (f" (+{len(errors) - 10})" if len(errors) > 10 else ""),
        "skipped": _skipped(stats.skipped, ctx.lang),
        "submodules": _submodules(p.notes.get("missing_submodules") or [], ctx.lang),
    }


def _submodules(missing: list[dict[str, Any]], lang: str) -> str:
    """The submodules ``.gitmodules`` declares that this checkout lacks: their code is not audited."""
    if not missing:
        return ""
    names = ", ".join(code(m["path"], 80) + (f" ({code(m['url'], 100)})" if m.get("url") else "") for m in missing[:5])
    more = f" (+{len(missing) - 5})" if len(missing) > 5 else ""
    if lang == "zh":
        return f"{names}{more}：`.gitmodules` 声明了这些子模块，但此处没有其文件（GitHub 压缩包不含子模块），其中的代码未被审计；请用 `git submodule update --init` 检出后再扫描"
    return (f"{names}{more}: declared in `.gitmodules`, absent here (a GitHub tarball never includes submodules): their code "
            "is not audited; run `git submodule update --init` and scan again")


def _scale(p: Any, t: Mapping[str, str]) -> str:
    """The estimated size, else the range of sizes the recipes give (Megatron-LM: 295M-175.2B across its launch scripts,
    with where the two ends are); the model names the project mentions follow only a decided size or no range at all
    (beside a range they are tokenizers and side encoders, not the run's model)."""
    rng, where = p.notes.get("params_range"), p.notes.get("params_range_sources") or []
    if not p.estimated_params and rng:
        return t["scale_range"].format(range=rng, where=", ".join(code(str(w), 120) for w in where[:2]))
    return (p.estimated_params or t["unknown"]) + (f" · {clip(', '.join(p.model_names[:3]), 160)}" if p.model_names else "")


def _seq_len(p: Any, t: Mapping[str, str]) -> str:
    """The training sequence length the overview decided, with the other lengths the recipes set; empty when unknown."""
    dist = p.notes.get("seq_len_distribution") or {}
    if not p.max_seq_len:
        # recipes that each set their own length, none the majority (VILA: 4096 in 6 launches ... 1048576 in LongVILA's)
        if len(dist) >= 2 and sum(dist.values()) >= 3:
            shown = sorted(dist.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
            more = ", ..." if len(dist) > 4 else ""
            return t["seq_len_spread"].format(dist=", ".join(f"{n} ({k})" for n, k in shown) + more)
        return ""
    others = [str(n) for n in dist if n != p.max_seq_len][:3]
    if others:
        return t["seq_len_mixed"].format(n=p.max_seq_len, others=", ".join(others))
    return t["seq_len_value"].format(n=p.max_seq_len)


def _nodes(p: Any, t: Mapping[str, str]) -> str:
    """Multi-node training as configured (a launch or config), or as documented only (a README command)."""
    if p.multi_node and p.notes.get("nodes_unresolved"):
        return t["nodes_unresolved"].format(value=code(clip(str(p.notes["nodes_unresolved"]), 60), 80),
                                            where=code(str(p.notes.get("nodes_source", "")), 120))
    if p.multi_node and p.num_nodes:
        return t["nodes_configured"].format(n=p.num_nodes, where=code(str(p.notes.get("nodes_source", "")), 120))
    documented = p.notes.get("multi_node_documented")
    if documented:
        # (a project that trains nothing runs its model over nodes for generation: DeepSeek-V3's ``torchrun --nnodes 2 generate.py``)
        return t["nodes_documented_inference" if inference_only(p) else "nodes_documented"].format(where=clip(str(documented), 200))
    standalone = p.notes.get("standalone_nodes")
    return t["nodes_standalone"].format(where=code(str(standalone), 120)) if standalone else ""


def _skipped(skipped: list[Any], lang: str = "en", shown: int = 10) -> str:
    """How many files were passed over, and the first ones with the reason (the JSON report lists them all)."""
    if not skipped:
        return ""
    if lang == "zh":
        items = "，".join(f"{code(s.path, 80)}（{clip(skip_reason(s.reason, lang), 60)}）" for s in skipped[:shown])
        more = f"（另 {len(skipped) - shown} 个）" if len(skipped) > shown else ""
        return f"{len(skipped)} 个：{items}{more}"
    items = ", ".join(f"{code(s.path, 80)} ({clip(s.reason, 60)})" for s in skipped[:shown])
    more = f" (+{len(skipped) - shown})" if len(skipped) > shown else ""
    return f"{len(skipped)}: {items}{more}"


def _row_details(ctx: _Ctx, results: list[CheckResult]) -> str:
    t = ctx.t
    parts: list[str] = []
    used = [r for r in results if r.status == Status.USED]
    partial = [r for r in results if r.status == Status.PARTIAL]
    missing = [r for r in results if r.status == Status.UNUSED]
    judged_not = [r for r in results if r.status == Status.NA and (r.detail or "").startswith("not judged")]  # I3-I5, nothing seen
    na = [r for r in results if r.status == Status.NA and r not in judged_not]
    if used:
        parts.append("✓ " + ", ".join(f"{r.id} {_short(ctx.title(r))}" for r in used))
    if partial:
        parts.append("◐ " + ", ".join(f"{r.id} {_short(ctx.title(r))}" for r in partial))
    if missing:
        parts.append(f"✗ {t['missing_list']} " + ", ".join(r.id for r in missing))
    if na:
        parts.append(f"{t['na_list']} " + ", ".join(r.id for r in na))
    if judged_not:
        parts.append(f"{t['not_judged_list']} " + ", ".join(r.id for r in judged_not))
    return cell(" · ".join(parts))


def _table(ctx: _Ctx, scores: list[CategoryScore]) -> list[dict[str, str]]:
    rows = []
    for s in scores:
        rs = [r for r in ctx.audit.results if r.category == s.id]
        rows.append({
            "id": s.id,
            "name": category_name(s.id, ctx.lang),
            "score": f"{_num(s.points)}/{s.max}" if s.applicable else ctx.t["cat_na"],
            "bar": f"`{bar(s.points, s.max)}`" if s.applicable else "—",
            "details": _row_details(ctx, rs),
        })
    return rows


def _item(ctx: _Ctx, r: CheckResult, fold: Fold, folded: list[bool]) -> dict[str, Any]:
    t = ctx.t
    title = f"**{r.id}** {ctx.title(r)}"
    detail = clip(r.detail, 200) if r.detail else ""
    if ctx.lang == "zh":  # the checks state details in English: the seed's Chinese wording instead, evidence as is
        decl = REGISTRY.get(r.id)
        jax = jax_text(r.id, ctx.audit.project)  # a JAX trainer's advice, not the PyTorch spelling
        fix_zh = jax[1] if jax else decl.fix_zh if decl is not None else None
        if r.status == Status.UNUSED and r.priority is None and r.values.get("finetuning") == "frozen-llm":
            fix_zh = "无需 LoRA：语言模型已冻结，只训练其周围的模块，LoRA 只会增加可训练参数而不会节省显存"
        detail = (jax_reason_zh(r.id, r.detail) or library_reason_zh(r.id, r.detail) or na_reason_zh(r.detail)) if r.status == Status.NA else \
            status_detail_zh(r.status, bool(r.evidence or r.findings), fix_zh, r.detail)
    subs: list[str] = []
    if r.status == Status.NA:
        label = t["not_judged"] if (r.detail or "").startswith("not judged") else t["na"]  # I3-I5 with nothing seen
        if ctx.lang == "en" and label == t["not_judged"]:
            detail = detail.removeprefix("not judged: ")
        line = f"- ➖ ~~{title}~~ — {label}" + (f"{ctx.c}{detail}" if detail else "")
        return {"line": line, "subs": subs}
    mark = "[x]" if r.status == Status.USED else "[ ]"
    tag = f" _({t['partial']})_" if r.status == Status.PARTIAL else ""
    line = f"- {mark} {title}{tag}" + (f" — {detail}" if detail else "")
    if r.id in ctx.rec_no:
        line += f" → #{ctx.rec_no[r.id]}"
    elif r.id in ctx.withheld and r.status != Status.USED:
        w = ctx.withheld[r.id]
        line += f" ({t['withheld_here']}{ctx.c}{w.reason_zh if ctx.lang == 'zh' else w.reason})"
    show = fold.evidence if (r.status != Status.USED or fold.used_evidence) else 0
    ev = r.evidence
    if len(ev) > show and ev:
        folded[0] = True
    # a site that is both evidence and a finding (``logging_steps: 1``) is listed once, marked as a finding
    flagged = {(e.path, e.line) for e in r.findings}

    def mark(e: Any) -> str:
        return f"⚠ {ctx.ev(e)}" if (e.path, e.line) in flagged else ctx.ev(e)

    if len(ev) == 1 and show >= 1 and len(line) < 160:
        line += f" · {mark(ev[0])}"
    else:
        subs += [mark(e) for e in ev[:show]]
        if len(ev) > show and show:
            subs.append(f"(+{len(ev) - show} {t['more_evidence']})")
    # findings among the evidence are marked there (or counted in its "+N more"); the others follow
    cited = {(e.path, e.line) for e in ev} if show else set()
    findings = [e for e in r.findings if (e.path, e.line) not in cited]
    fshow = max(show, 1)
    subs += [f"⚠ {ctx.ev(e)}" for e in findings[:fshow]]
    if len(findings) > fshow:
        folded[0] = True
        subs.append(f"(+{len(findings) - fshow} {t['more_evidence']})")
    if r.context and show:
        from checks.roles import ROLE_LABELS

        labels = sorted({ROLE_LABELS.get(e.role or "", (e.role or "", e.role or ""))[1 if ctx.lang == "zh" else 0] for e in r.context})
        subs.append(f"ℹ {t['also_seen']} {'、'.join(labels) if ctx.lang == 'zh' else ', '.join(labels)}{ctx.c}"
                    + "; ".join(f"`{e.path}:{e.line}`" for e in r.context[:2]) + (f" ({t['context_note']})"))
    return {"line": line, "subs": subs}


def _details(ctx: _Ctx, fold: Fold, folded: list[bool]) -> list[dict[str, Any]]:
    out = []
    for cat in CATEGORIES:
        rs = [r for r in ctx.audit.results if r.category == cat]
        if rs:
            out.append({"id": cat, "name": category_name(cat, ctx.lang), "items": [_item(ctx, r, fold, folded) for r in rs]})
    return out


def _recs(ctx: _Ctx, fold: Fold) -> list[dict[str, Any]]:
    t = ctx.t
    zh = ctx.lang == "zh"
    out = []
    shown = ctx.plan.recommendations if fold.advice is None else ctx.plan.recommendations[: fold.advice]
    for rec in shown:
        text = clip(rec.text_zh if zh else rec.text, 400)
        benefit = clip(rec.benefit_zh if zh else rec.benefit, 240)
        detail = (rec.detail_zh or status_detail_zh(rec.status, False, None)) if zh else rec.detail
        title = rec.title_zh if zh else rec.title
        line = f"**[{PRIORITY[ctx.lang][rec.priority]}]** **{rec.check}** {title}{ctx.c}{text}"
        if benefit:
            line += f" — {t['benefit']}{ctx.c}{benefit}"
        trigger = rec.findings or rec.evidence
        own = rec.detail_zh if zh else rec.detail  # the check's own words, not the generic status text
        if not rec.findings and rec.evidence and rec.status == Status.PARTIAL and own:
            # a partial use without findings of its own: its evidence mixes what is in place with what falls short, so
            # the trigger is the check's judgment, with the sites it rests on
            sub = f"{t['trigger']}{ctx.c}{clip(own, 200)} (" + "; ".join(ctx.ev(e) for e in trigger[: max(fold.evidence, 1)])
            if len(trigger) > max(fold.evidence, 1):
                sub += f" (+{len(trigger) - max(fold.evidence, 1)} {t['more_evidence']})"
            sub += ")"
        elif trigger:
            sub = f"{t['trigger']}{ctx.c}" + "; ".join(ctx.ev(e) for e in trigger[: max(fold.evidence, 1)])
            if len(trigger) > max(fold.evidence, 1):
                sub += f" (+{len(trigger) - max(fold.evidence, 1)} {t['more_evidence']})"
        else:
            sub = f"{t['trigger']}{ctx.c}" + (clip(detail, 200) if detail else t["no_setting"])
        out.append({"line": line, "subs": [sub]})
    return out


def _withheld(ctx: _Ctx) -> list[str]:
    zh = ctx.lang == "zh"
    out = []
    for w in ctx.plan.withheld:
        decl = REGISTRY.get(w.check)
        title = decl.title_zh if zh and decl is not None else w.title
        out.append(f"**{w.check}** {title}{ctx.c}{w.reason_zh if zh else w.reason}")
    return out


def _snippets(ctx: _Ctx, fold: Fold) -> list[dict[str, str]]:
    t = ctx.t
    zh = ctx.lang == "zh"
    out = []
    for n, rec in enumerate(ctx.plan.recommendations[: fold.snippets], 1):
        s = rec.snippet
        if s is None:
            continue
        heading = f"{n}. {rec.check} {rec.title_zh if zh else rec.title}"
        if s.fitted:
            caption = f"{t['snippet_for']} `{s.target}`" + (f", {t['snippet_where']} `{s.where}`" if s.where else "")
        else:
            caption = f"{t['snippet_unfitted']} `{s.target}`"
        body = s.code.rstrip("\n")
        out.append({"heading": heading, "caption": caption, "lang": s.lang, "code": body, "fence": fence(body)})
    return out


def _render(audit: Audit, plan: Plan, lang: str, fold: Fold, sections: tuple[str, ...]) -> str:
    ctx = _Ctx(audit, plan, lang)
    t = ctx.t
    folded = [False]
    scores = category_scores(audit.results)
    s = overall(audit.results)
    details = _details(ctx, fold, folded) if fold.details else []
    recs = _recs(ctx, fold)
    hidden_recs = len(plan.recommendations) - len(recs)
    notes = {
        "details": "" if fold.details else t["folded_details"],
        "advice": t["folded_advice"].format(n=hidden_recs) if hidden_recs > 0 else "",
        "evidence": "",
    }
    if fold.details and (folded[0] or not fold.used_evidence):
        notes["evidence"] = t["folded_evidence"].format(n=fold.evidence) if folded[0] else t["folded_used"]
    md = templates().get_template("report.md.j2").render(
        sections=sections,
        t=t,
        c=ctx.c,
        overview=_overview(ctx, fold),
        table=_table(ctx, scores),
        overall={"text": f"{_num(s.points)} / {s.max} ({s.percent}%)", "bar": bar(s.points, s.max, 20)},
        details=details,
        notes=notes,
        recs=recs,
        withheld=_withheld(ctx) if fold.withheld else [],
        snippets=_snippets(ctx, fold),
    )
    return re.sub(r"\n{3,}", "\n\n", md).lstrip("\n")


def render_markdown(
    audit: Audit,
    *,
    lang: str = "en",
    max_chars: int = GITHUB_TEXT_LIMIT,
    sections: Iterable[str] = ALL_SECTIONS,
    plan: Plan | None = None,
) -> str:
    """The report, at most ``max_chars`` characters (folded as needed; never cut inside a table)."""
    check_lang(lang)
    secs = tuple(sections)
    unknown = set(secs) - set(ALL_SECTIONS)
    if unknown:
        raise ValueError(f"unknown report sections: {sorted(unknown)}")
    if not audit.training_code_found:
        return cut_blocks(no_training_code(audit, lang), max_chars, f"_{TEXT[lang]['folded_cut']}_")
    plan = plan if plan is not None else build_plan(audit)
    md = ""
    for fold in LEVELS:
        md = _render(audit, plan, lang, fold, secs)
        if len(md) <= max_chars:
            return md
    tight = replace(LEVELS[-1], reasons=1)
    md = _render(audit, plan, lang, tight, secs)
    return cut_blocks(md, max_chars, f"_{TEXT[lang]['folded_cut']}_")


def no_training_code(audit: Audit, lang: str = "en") -> str:
    """The whole report for a directory without training or inference code: what was read, and no score."""
    from checks.roles import ROLE_LABELS

    t = TEXT[lang]
    zh = lang == "zh"
    counts = audit.roles.counts()
    context = {r: n for r, n in counts.items() if r in ROLE_LABELS}
    lines = [f"# {t['title']}", "", f"**{t['no_training_code']}**", "",
             f"- {t['path']}{'：' if zh else ': '}`{audit.root.replace('`', chr(39))}`",
             f"- {t['files_read']}{'：' if zh else ': '}{audit.stats.files_read}"]
    if context:
        label = "、".join(f"{ROLE_LABELS[r][1]} {n}" for r, n in context.items()) if zh else \
            ", ".join(f"{n} in {ROLE_LABELS[r][0]}" for r, n in context.items())
        lines.append(f"- {t['context_only']}{'：' if zh else ': '}{label}")
    if audit.stats.skipped:  # a training script over the size limit is a reason to find nothing: say what was passed over
        lines.append(f"- {t['skipped']}{'：' if zh else ': '}{_skipped(audit.stats.skipped, lang)}")
    lines += ["", t["no_training_code_hint"], ""]
    return "\n".join(lines)


__all__ = ["ALL_SECTIONS", "LEVELS", "Fold", "bar", "no_training_code", "render_markdown"]
