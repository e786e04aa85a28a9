"""Kineto / PyTorch profiler Chrome traces, one per rank, read as a stream with HTA's definitions.

What counts (HTA 0.5 ``Trace._filter_irrelevant_gpu_kernels`` and ``GPUKernelFilter``): complete events
(with ``dur``) whose ``args`` carry ``stream >= 0`` and ``correlation >= 0`` are GPU events; with two or more
distinct ``ProfilerStep#N`` names, only GPU events whose correlation matches a CPU-side event that starts before
the last ``ProfilerStep`` are kept. Kernel types use HTA's name patterns (``utils.get_kernel_type``).
"""

from __future__ import annotations

import bisect
import heapq
import math
import re
import statistics
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import intervals as iv
from .jsonstream import TraceFormatError, stream_trace
from .sources import open_text

COMM_RE = re.compile(r"^nccl.*Kernel")
MEMORY_RE = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")
NOT_COMPUTE_RE = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")
RCCL_RE = re.compile(r"^rccl.*Kernel")

COMPUTATION, COMMUNICATION, MEMORY, OTHER = "computation", "communication", "memory", "other"
_TYPES = (COMPUTATION, COMMUNICATION, MEMORY, OTHER)

SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaStreamWaitEvent",
              "hipStreamSynchronize", "hipDeviceSynchronize")
ITEM_OPS = ("aten::item", "aten::_local_scalar_dense")
SYNC_MEMCPY = ("cudaMemcpy", "hipMemcpy")  # the blocking copies (not ...Async)
TIMELINE_BINS = 240


def kernel_type(name: str) -> str:
    """HTA's classification: communication, memory, computation, or other (e.g. ``...Sync`` events)."""
    if COMM_RE.match(name) or RCCL_RE.match(name):
        return COMMUNICATION
    if MEMORY_RE.match(name):
        return MEMORY
    if not NOT_COMPUTE_RE.match(name):
        return COMPUTATION
    return OTHER


def _int(v: Any, default: int = -1) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


@dataclass(slots=True)
class _Collector:
    """Per-file columns, kept compact: the GPU events and the CPU launches they may match."""

    names: dict[str, int] = field(default_factory=dict)
    g_ts: array = field(default_factory=lambda: array("d"))
    g_dur: array = field(default_factory=lambda: array("d"))
    g_name: array = field(default_factory=lambda: array("l"))
    g_corr: array = field(default_factory=lambda: array("q"))
    g_stream: array = field(default_factory=lambda: array("q"))
    launch_ts: dict[int, float] = field(default_factory=dict)  # correlation -> start of the CPU event carrying it
    step_starts: dict[str, float] = field(default_factory=dict)  # ProfilerStep#N -> start
    steps: list[tuple[float, float]] = field(default_factory=list)
    syncs: dict[str, list[float]] = field(default_factory=dict)  # name -> [count, total us, max us]
    sync_spans: list[tuple[float, float]] = field(default_factory=list)
    loader: list[tuple[float, float]] = field(default_factory=list)
    events: int = 0

    def add(self, e: dict[str, Any]) -> None:
        dur = e.get("dur")
        if dur is None or e.get("cat") in (None, "Trace"):
            return
        args = e.get("args")
        name = e.get("name", "")
        try:
            raw = float(e["ts"])
            raw_dur = float(dur)
            # HTA's round_down_time_stamps: start rounded up, end rounded down (ns-resolution traces)
            ts = float(math.ceil(raw))
            dur = float(math.floor(raw + raw_dur)) - ts
        except (KeyError, TypeError, ValueError, OverflowError):
            return
        self.events += 1
        if isinstance(args, dict):
            stream = _int(args.get("stream"))
            corr = _int(args.get("correlation"))
        else:
            stream = corr = -1
        if stream >= 0 and corr >= 0:
            nid = self.names.get(name)
            if nid is None:
                nid = self.names[name] = len(self.names)
            self.g_ts.append(ts)
            self.g_dur.append(dur)
            self.g_name.append(nid)
            self.g_corr.append(corr)
            self.g_stream.append(stream)
            return
        # CPU side
        if corr >= 0:
            self.launch_ts[corr] = ts
        if "ProfilerStep" in name:
            prev = self.step_starts.get(name)
            self.step_starts[name] = ts if prev is None else max(prev, ts)
            if name.startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation":  # the host-side step, once
                self.steps.append((raw, raw + raw_dur))
            return
        if name in SYNC_CALLS or name in ITEM_OPS or name in SYNC_MEMCPY:
            s = self.syncs.setdefault(name, [0, 0.0, 0.0])
            s[0] += 1
            s[1] += raw_dur
            s[2] = max(s[2], raw_dur)
            if name in SYNC_CALLS or name in SYNC_MEMCPY:
                self.sync_spans.append((raw, raw + raw_dur))
            return
        if "DataLoader" in name and "__next__" in name:
            self.loader.append((raw, raw + raw_dur))


@dataclass(slots=True)
class RankTrace:
    path: str
    rank: int | None
    world_size: int | None
    meta: dict[str, Any]
    events: int
    truncated: str | None
    result: dict[str, Any]


class TimeLimit(Exception):
    """The deadline passed while a trace was being read."""


def read(path: Path, display: str, settings: dict[str, Any] | None = None, deadline: float | None = None) -> RankTrace:
    """Stream one trace file; raise :class:`TraceFormatError` only when nothing usable was read.

    ``deadline`` (``time.monotonic()``) is checked every 65,536 events and raises :class:`TimeLimit`.
    """
    col = _Collector()
    truncated = None
    meta: dict[str, Any] = {}
    on_event = col.add
    if deadline is not None:
        count = [0]
        add = col.add

        def on_event(e: dict[str, Any]) -> None:
            count[0] += 1
            if not count[0] & 0xFFFF and time.monotonic() > deadline:
                raise TimeLimit(f"the time limit was reached while reading {display}")
            add(e)

    with open_text(path) as f:
        try:
            meta, _ = stream_trace(f, on_event)
        except TraceFormatError as exc:
            if not exc.truncated or not len(col.g_ts):
                raise
            truncated = f"{exc} after {exc.events} events: the events read so far were analysed"
        except (OSError, EOFError) as exc:  # a gzip stream cut short
            if not len(col.g_ts):
                raise TraceFormatError(f"unreadable: {exc}", truncated=True) from None
            truncated = f"unreadable after {col.events} events ({exc}): the events read so far were analysed"
    dist = meta.get("distributedInfo") if isinstance(meta.get("distributedInfo"), dict) else {}
    rank = _int(dist.get("rank"), -1) if dist else -1
    world = _int(dist.get("world_size"), -1) if dist else -1
    small_meta = {k: meta[k] for k in ("schemaVersion", "distributedInfo", "cuda_runtime_version", "deviceProperties") if k in meta}
    result = analyse(col, settings or {})
    return RankTrace(display, rank if rank >= 0 else None, world if world > 0 else None, small_meta, col.events, truncated, result)


def _r(x: float, nd: int = 1) -> float:
    return round(x, nd)


def analyse(col: _Collector, settings: dict[str, Any]) -> dict[str, Any]:
    """Per-rank figures in HTA's terms from the collected columns (microseconds in, milliseconds out)."""
    n = len(col.g_ts)
    keep = range(n)
    filtered = False
    if len(col.step_starts) >= 2:
        cutoff = max(col.step_starts.values())
        launched = col.launch_ts.get
        inf = float("inf")
        keep = [i for i in range(n) if launched(col.g_corr[i], inf) < cutoff]
        filtered = True
    names = [""] * len(col.names)
    for k, v in col.names.items():
        names[v] = k
    types = [kernel_type(nm) for nm in names]

    by_name: dict[int, list[float]] = {}
    by_stream: dict[int, array] = {}
    g_ts, g_dur, g_name, g_stream = col.g_ts, col.g_dur, col.g_name, col.g_stream
    count = 0
    for i in keep:
        nid = g_name[i]
        d = g_dur[i]
        s = by_name.get(nid)
        if s is None:
            by_name[nid] = [d, 1]
        else:
            s[0] += d
            s[1] += 1
        idx = by_stream.get(g_stream[i])
        if idx is None:
            idx = by_stream[g_stream[i]] = array("q")
        idx.append(i)
        count += 1
    for sid, idx in by_stream.items():  # a stream runs its kernels in order; re-sort only a stream written out of order
        if any(g_ts[idx[k]] > g_ts[idx[k + 1]] for k in range(len(idx) - 1)):
            by_stream[sid] = array("q", sorted(idx, key=g_ts.__getitem__))

    def ordered(kind: str | None) -> Any:
        """Kept events of one kernel type (all when None) as (start, end, index), sorted by start, built lazily."""
        def run(idx: array) -> Any:
            for i in idx:
                if kind is None or types[g_name[i]] == kind:
                    t = g_ts[i]
                    yield t, t + g_dur[i], i
        return heapq.merge(*(run(idx) for idx in by_stream.values()))

    out: dict[str, Any] = {"gpu_events": count, "filtered_to_steps": filtered}
    if col.syncs:
        out["sync_points"] = [
            {"name": k, "count": int(v[0]), "time_ms": _r(v[1] / 1000, 3), "max_ms": _r(v[2] / 1000, 3)}
            for k, v in sorted(col.syncs.items(), key=lambda kv: -kv[1][1])
        ]
    steps = sorted(col.steps)
    complete = steps[:-1] if len(steps) >= 2 else steps
    if complete:
        durs = [b - a for a, b in complete]
        out["steps"] = {"count": len(complete), "step_time_ms": _r(statistics.mean(durs) / 1000, 3),
                        "min_ms": _r(min(durs) / 1000, 3), "max_ms": _r(max(durs) / 1000, 3)}
        if col.loader:
            lo, hi = complete[0][0], complete[-1][1]
            loader = iv.total(iv.merge((max(a, lo), min(b, hi)) for a, b in col.loader if b > lo and a < hi))
            out["dataloader_pct_of_steps"] = _r(100 * loader / (hi - lo), 2) if hi > lo else 0.0
    if not count:
        return out
    merged = iv.merge_sorted(ordered(None))
    start, end = merged[0][0], merged[-1][1]
    span = end - start
    busy = iv.total(merged)
    m = {t: iv.merge_sorted(ordered(t)) for t in _TYPES}
    t_time = {t: iv.total(m[t]) for t in _TYPES}
    idle = span - busy
    compute = t_time[COMPUTATION]
    non_compute = span - compute - idle
    out.update(
        span_ms=_r(span / 1000, 3),
        idle_pct=_r(100 * idle / span, 2) if span else 0.0,
        compute_pct=_r(100 * compute / span, 2) if span else 0.0,
        non_compute_pct=_r(100 * non_compute / span, 2) if span else 0.0,
    )
    main_types = (COMPUTATION, COMMUNICATION, MEMORY)
    type_sum = sum(t_time[t] for t in main_types)
    if type_sum:
        out["kernel_types"] = {t: _r(100 * t_time[t] / type_sum, 2) for t in main_types}
    out["kernel_time_ms"] = {t: _r(t_time[t] / 1000, 3) for t in main_types if t_time[t]}
    comm = t_time[COMMUNICATION]
    if comm:
        out["comm_comp_overlap_pct"] = _r(100 * iv.intersection_total(m[COMMUNICATION], m[COMPUTATION]) / comm, 2)
    step = max(1, count // 100_000)  # the median of at most 100,000 kernels sampled evenly
    durs = sorted(g_dur[i] for k, i in enumerate(keep) if not k % step)
    out["median_kernel_us"] = _r(durs[len(durs) // 2], 2)
    del durs
    total_kernel = sum(v[0] for v in by_name.values())
    top_n = int(settings.get("top_kernels", 10))
    top = sorted(by_name.items(), key=lambda kv: -kv[1][0])[:top_n]
    out["top_kernels"] = [
        {"name": names[nid], "type": types[nid], "time_ms": _r(v[0] / 1000, 3), "count": int(v[1]),
         "pct": _r(100 * v[0] / total_kernel, 2) if total_kernel else 0.0}
        for nid, v in top
    ]
    out["idle_split"] = _idle_split(col, merged, settings)
    bins = int(settings.get("timeline_bins", TIMELINE_BINS))
    out["timeline"] = {
        "start_us": start, "end_us": end,
        "busy": [round(x, 3) for x in iv.busy_bins(merged, start, end, bins)],
        "compute": [round(x, 3) for x in iv.busy_bins(m[COMPUTATION], start, end, bins)],
        "communication": [round(x, 3) for x in iv.busy_bins(m[COMMUNICATION], start, end, bins)],
    }
    return out


def _idle_split(col: _Collector, merged: iv.Merged, settings: dict[str, Any]) -> dict[str, Any]:
    """Split the GPU's idle gaps by what the next kernel waited for.

    * ``launch_gap``: a gap shorter than ``launch_gap_us`` (back-to-back launch latency);
    * ``dataloader``: the part of a gap during which the host was in a DataLoader ``__next__``;
    * ``sync``: (the rest of the gap) the next kernel was launched after the gap began and a blocking CUDA sync call ended in the gap
      (the host waited for the GPU to drain, then had to refill it);
    * ``host_wait``: the next kernel was launched after the gap began (the GPU waited for the CPU);
    * ``other``: the next kernel was already queued (cross-stream dependencies, events, the profiler).
    """
    launch_gap = float(settings.get("launch_gap_us", 10.0))
    syncs_end = sorted(b for _, b in col.sync_spans)
    loader = iv.merge(col.loader)
    out = {"launch_gap": 0.0, "dataloader": 0.0, "sync": 0.0, "host_wait": 0.0, "other": 0.0}
    for k, a, b in iv.gaps(merged):
        g = b - a
        if g < launch_gap:
            out["launch_gap"] += g
            continue
        in_loader = iv.intersection_total([(a, b)], loader) if loader else 0.0
        out["dataloader"] += in_loader
        g -= in_loader
        if g <= 0:
            continue
        corr = col.g_corr[merged.first[k + 1]]  # the kernel that ended the gap
        launched = col.launch_ts.get(corr)
        if launched is not None and launched >= a:
            j = bisect.bisect_right(syncs_end, a)
            if j < len(syncs_end) and syncs_end[j] <= b:
                out["sync"] += g
            else:
                out["host_wait"] += g
        else:
            out["other"] += g
    total = sum(out.values())
    res: dict[str, Any] = {k + "_ms": _r(v / 1000, 3) for k, v in out.items()}
    if total:
        res.update({k + "_pct_of_idle": _r(100 * v / total, 2) for k, v in out.items()})
    return res
