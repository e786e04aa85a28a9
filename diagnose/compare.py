"""Compare two diagnoses (a baseline and this run): step time, temporal breakdown, overlap; and the step-time gate."""

from __future__ import annotations

import statistics
from typing import Any

_RANK_METRICS = (("idle_pct", "idle % (mean over ranks)"), ("compute_pct", "compute % (mean over ranks)"),
                 ("non_compute_pct", "non-compute % (mean over ranks)"), ("comm_comp_overlap_pct", "comm-comp overlap % (mean over ranks)"),
                 ("comm_share_pct", "communication % of kernel time (mean over ranks)"))


def step_times(report: dict[str, Any]) -> dict[str, float]:
    """Step times (ms) by where they come from: ``train-log`` (the log's median) and ``trace`` (ProfilerStep mean)."""
    out: dict[str, float] = {}
    s = report.get("steps") or {}
    if s.get("source") == "train-log" and s.get("step_time_ms"):
        out["train-log"] = float(s["step_time_ms"])
    ts = report.get("trace_steps") or {}
    if ts.get("step_time_ms"):
        out["trace"] = float(ts["step_time_ms"])
    return out


def step_time_pair(base: dict[str, Any], head: dict[str, Any]) -> tuple[float, float, str] | None:
    """Baseline and head step time from the same kind of source (a log's step is not a profiled step), the log first."""
    b, h = step_times(base), step_times(head)
    for src in ("train-log", "trace"):
        if src in b and src in h:
            return b[src], h[src], src
    return None


def _mean(report: dict[str, Any], key: str) -> float | None:
    vals = [r[key] for r in report.get("ranks", []) if key in r]
    return round(statistics.mean(vals), 2) if vals else None


def compare(base: dict[str, Any], head: dict[str, Any], max_regression_pct: float | None = None) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []

    def add(metric: str, b: float | None, h: float | None, unit: str, relative: bool) -> None:
        if b is None or h is None:
            return
        if relative:
            pct = 100 * (h - b) / b if b else 0.0
            text = f"{pct:+.1f}%"
            rows.append({"metric": metric, "baseline": b, "head": h, "delta": round(h - b, 3), "delta_pct": round(pct, 1), "delta_text": text})
        else:
            rows.append({"metric": metric, "baseline": b, "head": h, "delta": round(h - b, 2), "delta_text": f"{h - b:+.1f} {unit}"})

    pair = step_time_pair(base, head)
    if pair:
        add(f"step time (ms, {pair[2]})", pair[0], pair[1], "ms", True)
    for key, label in _RANK_METRICS:
        add(label, _mean(base, key), _mean(head, key), "pp", False)
    for key, label in (("tokens_per_s", "tokens/s"), ("samples_per_s", "samples/s"), ("mfu_pct", "MFU %")):
        add(label, (base.get("steps") or {}).get(key), (head.get("steps") or {}).get(key), "", key != "mfu_pct")
    out: dict[str, Any] = {"rows": rows, "bottleneck": [base["verdict"]["bottleneck"], head["verdict"]["bottleneck"]]}
    if max_regression_pct is not None:
        if pair:
            b, h, src = pair
            change = 100 * (h - b) / b if b else 0.0
            failed = change > max_regression_pct
            out["gate"] = {"failed": failed, "change_pct": round(change, 1), "limit_pct": max_regression_pct, "source": src,
                           "text": (f"step time ({src}) {b:.1f} -> {h:.1f} ms ({change:+.1f}%): "
                                    + (f"slower than the {max_regression_pct:g}% allowed" if failed else f"within the {max_regression_pct:g}% allowed"))}
        else:
            out["gate"] = {"failed": False, "text": "no step time of the same kind (training log or profiler steps) on both sides: "
                                                    "the step-time gate was not applied"}
    return out
