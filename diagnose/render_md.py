"""Markdown report (English or Chinese), in the audit report's style: verdict first, then the measured figures."""

from __future__ import annotations

from typing import Any

from .i18n import advice_text, reason_text

T = {
    "en": {
        "title": "Accel Profile: runtime diagnosis",
        "bottleneck": "Bottleneck",
        "why": "Why",
        "recs": "What to do first",
        "ranks": "Per-rank GPU time (HTA definitions)",
        "rank": "Rank", "span": "Span (ms)", "idle": "Idle %", "compute": "Compute %", "noncompute": "Non-compute %",
        "comm": "Comm. % of kernel time", "overlap": "Comm-comp overlap %", "step": "Step (ms)",
        "idle_split": "Where the idle time goes",
        "top": "Top kernels", "kernel": "Kernel", "type": "Type", "time": "Time (ms)", "share": "Share %",
        "sync": "CUDA sync points", "calls": "Calls",
        "util": "GPU utilisation", "gpu": "GPU", "mean": "Mean %", "low": "Near-zero samples %", "saw": "Sawtooth", "drops": "Drops",
        "memory": "Memory", "nccl": "NCCL", "steps": "Training log", "inputs": "Inputs", "kind": "Read as", "scaling": "Scaling efficiency",
        "stragglers": "Stragglers", "static": "static audit", "yes": "yes", "no": "no", "baseline": "Against the baseline",
        "metric": "Metric", "base": "Baseline", "head": "This run", "delta": "Change",
        "timeline": "Timeline", "ktypes": "Kernel types", "file": "File", "busy": "computation busy", "communication": "communication",
        "computation": "computation", "mem": "memory",
    },
    "zh": {
        "title": "Accel Profile：运行时诊断",
        "bottleneck": "瓶颈类型",
        "why": "判定依据",
        "recs": "优先处理",
        "ranks": "各 rank 的 GPU 时间（HTA 定义）",
        "rank": "Rank", "span": "跨度 (ms)", "idle": "空闲 %", "compute": "计算 %", "noncompute": "非计算 %",
        "comm": "通信占 Kernel 时间 %", "overlap": "通信-计算重叠 %", "step": "单步 (ms)",
        "idle_split": "空闲时间去向",
        "top": "耗时最多的 Kernel", "kernel": "Kernel", "type": "类型", "time": "时间 (ms)", "share": "占比 %",
        "sync": "CUDA 同步点", "calls": "次数",
        "util": "GPU 利用率", "gpu": "GPU", "mean": "平均 %", "low": "接近 0 的采样 %", "saw": "锯齿", "drops": "掉底次数",
        "memory": "显存", "nccl": "NCCL", "steps": "训练日志", "inputs": "输入文件", "kind": "识别为", "scaling": "扩展效率",
        "stragglers": "拖后腿的 rank", "static": "静态审计", "yes": "是", "no": "否", "baseline": "与基线对比",
        "metric": "指标", "base": "基线", "head": "本次", "delta": "变化",
        "timeline": "时间线", "ktypes": "Kernel 类型", "file": "文件", "busy": "计算忙碌", "communication": "通信",
        "computation": "计算", "mem": "访存",
    },
}


MAX_RANK_ROWS = 32


def _f(v: Any, nd: int = 1) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _short(name: str, n: int = 80) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"


def render(report: dict[str, Any], lang: str = "en", compare: dict[str, Any] | None = None) -> str:
    t = T["zh" if lang == "zh" else "en"]
    v = report["verdict"]
    out = [f"# {t['title']}", "", f"**{t['bottleneck']}: `{v['bottleneck']}`**", ""]
    if v.get("note"):
        out += [v["note"], ""]
    if v["reasons"]:
        out += [f"## {t['why']}", ""]
        for r in v["reasons"]:
            ev = r["evidence"]
            where = f" — `{ev['path']}`" if ev.get("path") else ""
            out.append(f"- [{r['type']}] {reason_text(r, lang)}{where}")
        out.append("")
    if report.get("recommendations"):
        out += [f"## {t['recs']}", ""]
        for rec in report["recommendations"]:
            static = ""
            if rec.get("static_status"):
                static = f" ({t['static']}: {rec['static_status']}" + (f", `{rec['static_evidence']}`" if rec.get("static_evidence") else "") + ")"
            out.append(f"- **{rec['check']}** ({rec['priority']}){static}: {advice_text(rec, lang)}")
        out.append("")
    if compare:
        out += [f"## {t['baseline']}", "", f"| {t['metric']} | {t['base']} | {t['head']} | {t['delta']} |", "|---|---:|---:|---:|"]
        for row in compare["rows"]:
            out.append(f"| {row['metric']} | {_f(row['baseline'], 2)} | {_f(row['head'], 2)} | {row['delta_text']} |")
        if compare.get("gate"):
            out += ["", f"**{compare['gate']['text']}**"]
        out.append("")
    all_ranks = [r for r in report.get("ranks", []) if "span_ms" in r]
    # Many ranks: the most idle ones (the interesting ones) up to MAX_RANK_ROWS; the JSON report has every rank.
    ranks = all_ranks if len(all_ranks) <= MAX_RANK_ROWS else sorted(
        sorted(all_ranks, key=lambda r: -r.get("idle_pct", 0))[:MAX_RANK_ROWS], key=lambda r: (r.get("rank") is None, r.get("rank") or 0))
    if ranks:
        out += [f"## {t['ranks']}", "",
                f"| {t['rank']} | {t['span']} | {t['idle']} | {t['compute']} | {t['noncompute']} | {t['comm']} | {t['overlap']} | {t['step']} |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in ranks:
            out.append(f"| {_f(r.get('rank'))} | {_f(r['span_ms'], 1)} | {_f(r['idle_pct'])} | {_f(r['compute_pct'])} | {_f(r['non_compute_pct'])} | "
                       f"{_f(r.get('comm_share_pct'))} | {_f(r.get('comm_comp_overlap_pct'))} | {_f((r.get('steps') or {}).get('step_time_ms'), 2)} |")
        if len(all_ranks) > len(ranks):
            out.append(f"\n… the {len(ranks)} most idle of {len(all_ranks)} ranks; `--format json` lists every rank.")
        out.append("")
        split = [r for r in ranks if r.get("idle_split", {}).get("launch_gap_pct_of_idle") is not None]
        if split:
            keys = ("dataloader", "sync", "host_wait", "launch_gap", "other")
            out += [f"### {t['idle_split']}", "", f"| {t['rank']} | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
            for r in split:
                sp = r["idle_split"]
                out.append(f"| {r.get('rank', '–')} | " + " | ".join(f"{sp[k + '_pct_of_idle']:.1f}% ({sp[k + '_ms']:.1f} ms)" for k in keys) + " |")
            out.append("")
        r0 = max(ranks, key=lambda r: r.get("span_ms", 0))
        if r0.get("top_kernels"):
            out += [f"### {t['top']} ({t['rank']} {r0.get('rank', '–')}, `{r0['path']}`)", "",
                    f"| {t['kernel']} | {t['type']} | {t['time']} | {t['share']} |", "|---|---|---:|---:|"]
            for k in r0["top_kernels"]:
                out.append(f"| `{_cell(_short(k['name']))}` | {k['type']} | {_f(k['time_ms'], 2)} | {_f(k['pct'])} |")
            out.append("")
    syncs = [(r, s) for r in report.get("ranks", []) for s in r.get("sync_points", [])]
    if syncs:
        out += [f"### {t['sync']}", "", f"| {t['rank']} | API | {t['calls']} | {t['time']} |", "|---|---|---:|---:|"]
        for r, s in syncs[:12]:
            out.append(f"| {_f(r.get('rank'))} | `{s['name']}` | {s['count']} | {_f(s['time_ms'], 2)} |")
        out.append("")
    if report.get("stragglers"):
        out += [f"### {t['stragglers']}", ""]
        for st in report["stragglers"]:
            out.append(f"- rank {st['rank']}: +{st['over_pct']:.1f}% ({st['compute_ms']:.1f} vs {st['median_ms']:.1f} ms) — `{st['path']}`")
        out.append("")
    u = report.get("utilization")
    if u:
        out += [f"## {t['util']} ({u['source']})", "", f"| {t['gpu']} | {t['mean']} | {t['low']} | {t['drops']} | {t['saw']} |", "|---|---:|---:|---:|---|"]
        for g in u["gpus"]:
            out.append(f"| {g['index']} | {_f(g['mean_pct'])} | {_f(g['low_share_pct'])} | {g['drops']} | {t['yes'] if g['sawtooth'] else t['no']} |")
        out.append("")
    m = report.get("memory")
    if m:
        out += [f"## {t['memory']}", ""]
        for k in ("peak_allocated_mb", "peak_reserved_mb", "fragmentation_pct", "alloc_retries", "ooms", "segments_freed", "empty_cache_calls"):
            if k in m:
                out.append(f"- {k}: {_f(m[k])}")
        out += [f"- `{m['path']}`", ""]
    n = report.get("nccl")
    if n:
        out += [f"## {t['nccl']}", ""]
        for k in ("version", "transports", "gdr", "algorithms", "nodes", "network"):
            if k in n:
                val = ", ".join(map(str, n[k])) if isinstance(n[k], list) else n[k]
                out.append(f"- {k}: {val}")
        if n.get("env"):
            out.append("- env: " + ", ".join(f"`{k}={v}`" for k, v in n["env"].items()))
        out.append("")
    s = report.get("steps")
    if s and s.get("source") == "train-log":
        out += [f"## {t['steps']} (`{s['path']}`)", ""]
        for k in ("step_time_ms", "tokens_per_s", "samples_per_s", "tflops_per_gpu", "mfu_pct", "gpus"):
            if k in s:
                out.append(f"- {k}: {_f(s[k], 2)}")
        if s.get("runs"):
            out += ["", "| File | GPUs | Step (ms) | tokens/s | samples/s | MFU % |", "|---|---:|---:|---:|---:|---:|"]
            for run in s["runs"]:
                out.append(f"| `{_cell(run['path'])}` | {_f(run.get('gpus'))} | {_f(run.get('step_time_ms'), 1)} | {_f(run.get('tokens_per_s'), 0)} | "
                           f"{_f(run.get('samples_per_s'), 2)} | {_f(run.get('mfu_pct'))} |")
            out.append("")
        if s.get("scaling"):
            sc = s["scaling"]
            out.append(f"- {t['scaling']}: {sc['efficiency_pct']:.1f}% ({sc['gpus'][0]} → {sc['gpus'][1]} GPUs, {sc['unit']})")
        out.append("")
    out += [f"## {t['inputs']}", "", f"| {t['file']} | {t['kind']} | |", "|---|---|---|"]
    for i in report["inputs"]:
        extra = i.get("skipped") or i.get("truncated") or i.get("note") or (f"rank {i['rank']}" if "rank" in i else "")
        out.append(f"| `{_cell(i['path'])}` | {i['kind']} | {_cell(extra)} |")
    out.append("")
    return "\n".join(out)
