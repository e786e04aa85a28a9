"""GPU utilisation over time: ``nvidia-smi --query-gpu=... --format=csv -l N`` logs and ``nvidia-smi dmon`` output.

Sawtooth (the seed's data-starvation signal): the utilisation keeps falling from busy (``>= high``) to near
zero (``<= low``) and climbing back, at least ``min_drops`` times, at a regular period (the coefficient of
variation of the intervals between drops at most ``max_period_cv``).
"""

from __future__ import annotations

import csv
import datetime as dt
import itertools
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .sources import open_text

MAX_SAMPLES = 2_000_000  # per file; later lines are counted but not kept
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass
class Series:
    index: str
    times: list[float] = field(default_factory=list)  # seconds from the first sample (sample number when no clock)
    util: list[float] = field(default_factory=list)
    mem_used_mib: list[float] = field(default_factory=list)
    name: str = ""


def _num(text: str) -> float | None:
    m = _NUM.search(text or "")
    return float(m.group()) if m else None


def _clock(text: str) -> float | None:
    text = text.strip()
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y%m%d %H:%M:%S"):
        try:
            return dt.datetime.strptime(text, fmt).timestamp()
        except ValueError:
            continue
    return None


def read_smi_csv(path: Path) -> dict[str, Series]:
    """``nvidia-smi --query-gpu=timestamp,index,utilization.gpu,... --format=csv`` (units or ``nounits``; header needed)."""
    out: dict[str, Series] = {}
    t0: float | None = None
    with open_text(path) as f:
        reader = csv.reader(f, skipinitialspace=True)
        header: list[str] | None = None
        n = 0
        for row in reader:
            if not row:
                continue
            cells = [c.strip() for c in row]
            if "utilization.gpu" in cells[0] or any(c.startswith("utilization.gpu") for c in cells):
                header = [re.sub(r"\s*\[.*\]$", "", c) for c in cells]
                continue
            if header is None or len(cells) < len(header):
                continue
            rec = dict(zip(header, cells))
            u = _num(rec.get("utilization.gpu", ""))
            if u is None:
                continue
            n += 1
            if n > MAX_SAMPLES:
                continue
            idx = rec.get("index") or rec.get("pci.bus_id") or "0"
            s = out.setdefault(idx, Series(idx, name=rec.get("name", "")))
            clock = _clock(rec.get("timestamp", "")) if "timestamp" in rec else None
            if clock is not None:
                t0 = clock if t0 is None else t0
                s.times.append(clock - t0)
            else:
                s.times.append(float(len(s.util)))
            s.util.append(u)
            mem = _num(rec.get("memory.used", ""))
            if mem is not None:
                s.mem_used_mib.append(mem)
    return out


def read_dmon(path: Path) -> dict[str, Series]:
    """``nvidia-smi dmon`` (``-s u`` or the default ``pucvmet``; ``-o DT`` date/time columns allowed)."""
    out: dict[str, Series] = {}
    cols: list[str] | None = None
    t0: float | None = None
    with open_text(path) as f:
        for line in f:
            if line.startswith("#"):
                words = line[1:].split()
                if (words and words[0] in ("gpu", "Date", "Time")) or "gpu" in words[:3]:
                    cols = words
                continue
            parts = line.split()
            if not cols or len(parts) != len(cols):
                continue
            rec = dict(zip(cols, parts))
            idx = rec.get("gpu", "0")
            u = _num(rec.get("sm", ""))
            if u is None:
                continue
            s = out.setdefault(idx, Series(idx))
            if len(s.util) >= MAX_SAMPLES:
                continue
            clock = _clock(f"{rec['Date']} {rec['Time']}") if "Date" in rec and "Time" in rec else None
            if clock is not None:
                t0 = clock if t0 is None else t0
                s.times.append(clock - t0)
            else:
                s.times.append(float(len(s.util)))  # dmon samples once a second by default
            s.util.append(u)
            fb = _num(rec.get("fb", ""))
            if fb is not None:
                s.mem_used_mib.append(fb)
    return out


def sawtooth(s: Series, low: float, high: float, min_drops: int, max_cv: float) -> dict[str, Any]:
    """Drops from busy to near zero: how many, how regular, and the verdict."""
    drops: list[float] = []
    was_high = False
    in_low = False
    for t, u in zip(s.times, s.util):
        if u >= high:
            was_high = True
            in_low = False
        elif u <= low:
            if was_high and not in_low:
                drops.append(t)
                was_high = False
            in_low = True
    intervals = [b - a for a, b in itertools.pairwise(drops)]
    cv = statistics.pstdev(intervals) / statistics.mean(intervals) if len(intervals) >= 2 and statistics.mean(intervals) > 0 else None
    is_saw = len(drops) >= min_drops and cv is not None and cv <= max_cv
    out: dict[str, Any] = {"drops": len(drops), "sawtooth": is_saw}
    if intervals:
        out["period_s"] = round(statistics.median(intervals), 2)
    if cv is not None:
        out["period_cv"] = round(cv, 2)
    return out


def summarise(series: dict[str, Series], settings: dict[str, Any]) -> list[dict[str, Any]]:
    low = float(settings.get("sawtooth_low_pct", 10))
    high = float(settings.get("sawtooth_high_pct", 60))
    min_drops = int(settings.get("sawtooth_min_drops", 3))
    max_cv = float(settings.get("sawtooth_max_period_cv", 0.5))
    gpus = []
    for idx in sorted(series, key=lambda k: (len(k), k)):
        s = series[idx]
        if not s.util:
            continue
        g: dict[str, Any] = {"index": int(idx) if idx.isdigit() else idx, "samples": len(s.util),
                             "mean_pct": round(statistics.mean(s.util), 1),
                             "low_share_pct": round(100 * sum(1 for u in s.util if u <= low) / len(s.util), 1)}
        g.update(sawtooth(s, low, high, min_drops, max_cv))
        if s.mem_used_mib:
            g["peak_mem_used_mib"] = max(s.mem_used_mib)
        step = max(1, len(s.util) // 240)
        g["timeline"] = [round(statistics.mean(s.util[i:i + step]), 1) for i in range(0, len(s.util), step)]
        gpus.append(g)
    return gpus
