"""One self-contained HTML page: verdict, per-rank timeline and breakdown charts as inline SVG, no scripts or fetches."""

from __future__ import annotations

from html import escape
from typing import Any

from .i18n import advice_text, reason_text
from .render_md import T

C_COMPUTE, C_COMM, C_OTHER, C_IDLE, C_MEM = "#3b6fd8", "#f08a24", "#9b6bd3", "#d9dde3", "#2bb39a"
BOTTLENECK_COLOR = {"data-io-bound": "#d9822b", "communication-bound": "#c2410c", "launch-bound": "#7c3aed", "memory-bound": "#be185d",
                    "compute-bound": "#15803d", "needs-profiling": "#64748b"}

MAX_CHART_RANKS = 64

CSS = """
body{font:14px/1.45 -apple-system,Segoe UI,Roboto,Helvetica,Arial,"PingFang SC","Microsoft YaHei","Noto Sans CJK SC","WenQuanYi Micro Hei",sans-serif;color:#1f2937;margin:0;background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 10px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}
.card{background:#fff;border:1px solid #e5e7eb;border-radius:10px;padding:16px 18px;margin:12px 0;box-shadow:0 1px 2px rgba(0,0,0,.04)}
.badge{display:inline-block;color:#fff;border-radius:999px;padding:3px 12px;font-weight:600;font-size:14px}
ul{margin:6px 0;padding-left:20px} li{margin:3px 0}
table{border-collapse:collapse;width:100%;font-size:13px} th,td{padding:5px 8px;border-bottom:1px solid #eef0f3;text-align:left}
th{color:#6b7280;font-weight:600} td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f1f3f5;padding:1px 4px;border-radius:4px}
.legend span{display:inline-block;margin-right:14px;font-size:12px;color:#4b5563} .legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.muted{color:#6b7280;font-size:12px} .check{font-weight:700;color:#111827}
svg text{font:11px -apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;fill:#374151}
"""


def _legend(items: list[tuple[str, str]]) -> str:
    return '<div class="legend">' + "".join(f'<span><i style="background:{c}"></i>{escape(n)}</span>' for n, c in items) + "</div>"


def breakdown_svg(ranks: list[dict[str, Any]], width: int = 1040) -> str:
    """Horizontal stacked bars: idle / compute / non-compute share of each rank's GPU span."""
    row, label_w, top = 22, 70, 6
    h = top + row * len(ranks) + 22
    bar_w = width - label_w - 60
    parts = [f'<svg width="{width}" height="{h}" viewBox="0 0 {width} {h}" role="img" aria-label="temporal breakdown">']
    for i, r in enumerate(ranks):
        y = top + i * row
        x = label_w
        parts.append(f'<text x="{label_w - 8}" y="{y + 14}" text-anchor="end">rank {escape(str(r.get("rank", "?")))}</text>')
        for key, color in (("compute_pct", C_COMPUTE), ("non_compute_pct", C_COMM), ("idle_pct", C_IDLE)):
            w = bar_w * max(0.0, r.get(key, 0.0)) / 100
            if w > 0:
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row - 6}" fill="{color}"><title>{key} {r.get(key, 0):.1f}%</title></rect>')
                if w > 34:
                    fill = "#fff" if color != C_IDLE else "#374151"
                    parts.append(f'<text x="{x + w / 2:.1f}" y="{y + 12}" text-anchor="middle" style="fill:{fill}">{r.get(key, 0):.1f}%</text>')
            x += w
        parts.append(f'<text x="{label_w + bar_w + 6}" y="{y + 12}">{r.get("span_ms", 0):.0f} ms</text>')
    for pct in (0, 25, 50, 75, 100):
        x = label_w + bar_w * pct / 100
        parts.append(f'<text x="{x:.1f}" y="{h - 4}" text-anchor="middle" class="muted">{pct}%</text>')
    parts.append("</svg>")
    return "".join(parts)


def timeline_svg(ranks: list[dict[str, Any]], width: int = 1040) -> str:
    """One lane per rank across its GPU span: compute busy (blue, height = busy share) with communication above (orange)."""
    lane, label_w, top = 34, 70, 4
    shown = ranks[:64]
    h = top + lane * len(shown) + 20
    plot_w = width - label_w - 10
    parts = [f'<svg width="{width}" height="{h}" viewBox="0 0 {width} {h}" role="img" aria-label="GPU timeline">']
    longest = max((r["timeline"]["end_us"] - r["timeline"]["start_us"]) for r in shown) or 1.0
    for i, r in enumerate(shown):
        tl = r["timeline"]
        y0 = top + i * lane
        parts.append(f'<text x="{label_w - 8}" y="{y0 + lane / 2 + 4:.1f}" text-anchor="end">rank {escape(str(r.get("rank", "?")))}</text>')
        parts.append(f'<rect x="{label_w}" y="{y0 + 2}" width="{plot_w}" height="{lane - 6}" fill="#f3f4f6"/>')
        span = tl["end_us"] - tl["start_us"]
        scale = plot_w * (span / longest)
        n = len(tl["busy"]) or 1
        bw = scale / n
        base = y0 + lane - 4
        full = lane - 6
        for k in range(n):
            c = tl["compute"][k]
            m = tl["communication"][k]
            x = label_w + k * bw
            if c > 0:
                parts.append(f'<rect x="{x:.2f}" y="{base - full * c:.2f}" width="{bw + 0.3:.2f}" height="{full * c:.2f}" fill="{C_COMPUTE}"/>')
            if m > 0:
                parts.append(f'<rect x="{x:.2f}" y="{y0 + 2:.2f}" width="{bw + 0.3:.2f}" height="{max(2.0, full * m * 0.35):.2f}" fill="{C_COMM}" opacity=".9"/>')
    parts.append(f'<text x="{label_w}" y="{h - 4}">0 ms</text>')
    parts.append(f'<text x="{label_w + plot_w}" y="{h - 4}" text-anchor="end">{longest / 1000:.1f} ms</text>')
    parts.append("</svg>")
    return "".join(parts)


def kernel_types_svg(ranks: list[dict[str, Any]], width: int = 1040) -> str:
    have = [r for r in ranks if r.get("kernel_types")]
    row, label_w, top = 20, 70, 4
    h = top + row * len(have) + 6
    bar_w = width - label_w - 20
    parts = [f'<svg width="{width}" height="{h}" viewBox="0 0 {width} {h}" role="img" aria-label="kernel types">']
    for i, r in enumerate(have):
        y = top + i * row
        x = label_w
        parts.append(f'<text x="{label_w - 8}" y="{y + 13}" text-anchor="end">rank {escape(str(r.get("rank", "?")))}</text>')
        for key, color in (("computation", C_COMPUTE), ("communication", C_COMM), ("memory", C_MEM)):
            v = r["kernel_types"].get(key, 0.0)
            w = bar_w * v / 100
            if w > 0:
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row - 5}" fill="{color}"><title>{key} {v:.1f}%</title></rect>')
                if w > 40:
                    parts.append(f'<text x="{x + w / 2:.1f}" y="{y + 11}" text-anchor="middle" style="fill:#fff">{v:.1f}%</text>')
            x += w
    parts.append("</svg>")
    return "".join(parts)


def util_svg(gpus: list[dict[str, Any]], low: float, high: float, width: int = 1040) -> str:
    lane, label_w = 84, 70
    h = lane * len(gpus) + 8
    plot_w = width - label_w - 10
    parts = [f'<svg width="{width}" height="{h}" viewBox="0 0 {width} {h}" role="img" aria-label="GPU utilisation">']
    for i, g in enumerate(gpus):
        y0 = i * lane + 18
        ph = lane - 28
        tl = g["timeline"] or [0.0]
        parts.append(f'<text x="{label_w - 8}" y="{y0 + ph / 2 + 4:.1f}" text-anchor="end">GPU {escape(str(g["index"]))}</text>')
        parts.append(f'<rect x="{label_w}" y="{y0}" width="{plot_w}" height="{ph}" fill="#f9fafb" stroke="#e5e7eb"/>')
        for thr, col in ((high, "#86efac"), (low, "#fca5a5")):
            yy = y0 + ph * (1 - thr / 100)
            parts.append(f'<line x1="{label_w}" x2="{label_w + plot_w}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="{col}" stroke-dasharray="4 3"/>')
        step = plot_w / max(1, len(tl) - 1)
        pts = " ".join(f"{label_w + k * step:.1f},{y0 + ph * (1 - min(100.0, v) / 100):.1f}" for k, v in enumerate(tl))
        color = "#dc2626" if g.get("sawtooth") else C_COMPUTE
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="1.5"/>')
        tag = f"mean {g['mean_pct']:.0f}% · {g['drops']} drops" + (" · sawtooth" if g.get("sawtooth") else "") + f" · {g.get('path', '')}"
        parts.append(f'<text x="{label_w + plot_w}" y="{y0 - 5}" text-anchor="end">{escape(tag)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _table(headers: list[str], rows: list[list[Any]], numeric: set[int]) -> str:
    out = ["<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in headers) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f'<td class="n">{escape(str(c))}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(r)) + "</tr>")
    out.append("</table>")
    return "".join(out)


def render(report: dict[str, Any], lang: str = "en", compare: dict[str, Any] | None = None) -> str:
    t = T["zh" if lang == "zh" else "en"]
    v = report["verdict"]
    b = v["bottleneck"]
    body = [f"<h1>{escape(t['title'])}</h1>",
            f'<div class="card"><div>{escape(t["bottleneck"])}: <span class="badge" style="background:{BOTTLENECK_COLOR.get(b, "#334155")}">{escape(b)}</span></div>']
    if v.get("note"):
        body.append(f'<p class="muted">{escape(v["note"])}</p>')
    if v["reasons"]:
        body.append(f"<h3>{escape(t['why'])}</h3><ul>")
        for r in v["reasons"]:
            ev = r["evidence"]
            where = f' <span class="muted">— <code>{escape(ev["path"])}</code></span>' if ev.get("path") else ""
            body.append(f"<li><b>{escape(r['type'])}</b>: {escape(reason_text(r, lang))}{where}</li>")
        body.append("</ul>")
    body.append("</div>")
    if report.get("recommendations"):
        body.append(f'<h2>{escape(t["recs"])}</h2><div class="card"><ul>')
        for rec in report["recommendations"]:
            static = ""
            if rec.get("static_status"):
                static = f' <span class="muted">({escape(t["static"])}: {escape(rec["static_status"])})</span>'
            body.append(f'<li><span class="check">{escape(rec["check"])}</span> <span class="muted">{escape(rec["priority"])}</span>{static} — {escape(advice_text(rec, lang))}</li>')
        body.append("</ul></div>")
    if compare:
        rows = [[escape(r["metric"]), f"{r['baseline']:.2f}", f"{r['head']:.2f}", r["delta_text"]] for r in compare["rows"]]
        body.append(f'<h2>{escape(t["baseline"])}</h2><div class="card">' + _table([t["metric"], t["base"], t["head"], t["delta"]], rows, {1, 2, 3}))
        if compare.get("gate"):
            body.append(f"<p><b>{escape(compare['gate']['text'])}</b></p>")
        body.append("</div>")
    all_ranks = [r for r in report.get("ranks", []) if "span_ms" in r]
    ranks = all_ranks if len(all_ranks) <= MAX_CHART_RANKS else sorted(
        sorted(all_ranks, key=lambda r: -r.get("idle_pct", 0))[:MAX_CHART_RANKS], key=lambda r: (r.get("rank") is None, r.get("rank") or 0))
    if ranks:
        body.append(f'<h2>{escape(t["ranks"])}</h2><div class="card">')
        if len(all_ranks) > len(ranks):
            body.append(f'<p class="muted">The {len(ranks)} most idle of {len(all_ranks)} ranks; the JSON report lists every rank.</p>')
        body.append(_legend([(t["compute"], C_COMPUTE), (t["noncompute"], C_COMM), (t["idle"], C_IDLE)]))
        body.append(breakdown_svg(ranks))
        if any(r.get("timeline") for r in ranks):
            body.append(f"<h3>{escape(t['timeline'])}</h3>" + _legend([(t["busy"], C_COMPUTE), (t["communication"], C_COMM)]))
            body.append(timeline_svg([r for r in ranks if r.get("timeline")]))
        body.append(f"<h3>{escape(t['ktypes'])}</h3>" + _legend([(t["computation"], C_COMPUTE), (t["communication"], C_COMM), (t["mem"], C_MEM)]))
        body.append(kernel_types_svg(ranks))
        rows = [[escape(str(r.get("rank"))), f"{r['span_ms']:.1f}", f"{r['idle_pct']:.1f}", f"{r['compute_pct']:.1f}", f"{r['non_compute_pct']:.1f}",
                 f"{r.get('comm_comp_overlap_pct', 0):.1f}", f"{(r.get('steps') or {}).get('step_time_ms', 0):.2f}", f"<code>{escape(r['path'])}</code>"]
                for r in ranks]
        body.append(_table([t["rank"], t["span"], t["idle"], t["compute"], t["noncompute"], t["overlap"], t["step"], t["file"]], rows, {1, 2, 3, 4, 5, 6}))
        r0 = max(ranks, key=lambda r: r.get("span_ms", 0))
        if r0.get("top_kernels"):
            rows = [[f"<code>{escape(k['name'][:110])}</code>", escape(k["type"]), f"{k['time_ms']:.2f}", f"{k['pct']:.1f}"] for k in r0["top_kernels"]]
            body.append(f"<h3>{escape(t['top'])} (rank {escape(str(r0.get('rank')))})</h3>" + _table([t["kernel"], t["type"], t["time"], t["share"]], rows, {2, 3}))
        body.append("</div>")
    u = report.get("utilization")
    if u:
        s = report.get("settings", {})
        body.append(f'<h2>{escape(t["util"])} <span class="muted">({escape(u["source"])})</span></h2><div class="card">')
        body.append(util_svg(u["gpus"], float(s.get("sawtooth_low_pct", 10)), float(s.get("sawtooth_high_pct", 60))))
        body.append("</div>")
    for key, title in (("memory", t["memory"]), ("nccl", t["nccl"]), ("steps", t["steps"])):
        sec = report.get(key)
        if not sec or (key == "steps" and sec.get("source") != "train-log"):
            continue
        rows = [[escape(k), escape(", ".join(map(str, val)) if isinstance(val, list) else str(val))] for k, val in sec.items()
                if k not in ("findings", "channels", "runs", "env", "first_line", "communicators") and not isinstance(val, dict)]
        body.append(f'<h2>{escape(title)}</h2><div class="card">' + _table(["", ""], rows, set()) + "</div>")
    rows = [[f"<code>{escape(i['path'])}</code>", escape(i["kind"]), escape(i.get("skipped") or i.get("truncated") or i.get("note") or "")]
            for i in report["inputs"]]
    body.append(f'<h2>{escape(t["inputs"])}</h2><div class="card">' + _table([t["file"], t["kind"], ""], rows, set()) + "</div>")
    return (f'<!doctype html><html lang="{"zh" if lang == "zh" else "en"}"><head><meta charset="utf-8"><title>{escape(t["title"])}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head><body><main>'
            + "".join(body) + "</main></body></html>\n")
