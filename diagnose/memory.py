"""CUDA caching-allocator state: ``torch.cuda.memory_stats()`` JSON, ``memory_summary()`` text, ``_dump_snapshot`` pickle.

The snapshot is a pickle. It is read by :class:`ContainersOnly`, an unpickler whose ``find_class`` refuses
every class, so only plain containers and scalars (dict, list, tuple, str, bytes, numbers, bool, None) can
come out of it; a pickle that names any class or function is refused before anything runs. Nothing else in
this package unpickles.

Figures (MiB): ``peak_allocated_mb`` (tensors at the peak), ``peak_reserved_mb`` (what the allocator held),
``fragmentation_pct`` = (reserved − allocated) / reserved at the peaks, ``alloc_retries`` (cudaMalloc failed,
the cache was flushed and the call retried), ``ooms``, ``segments_freed`` (segments given back to the driver:
``empty_cache`` or retries; a large count against the segments held means churn).
"""

from __future__ import annotations

import io
import json
import pickle
import re
from pathlib import Path
from typing import Any

from .sources import open_binary, open_text

MIB = 1024 * 1024
MAX_SNAPSHOT_BYTES = 256 * MIB
MAX_STATS_BYTES = 16 * MIB  # memory_stats() is a flat dict of a few hundred keys


class RefusedPickle(pickle.UnpicklingError):
    pass


class ContainersOnly(pickle.Unpickler):
    """Refuses every global: no class, function or module can be loaded, so no code can run."""

    def find_class(self, module: str, name: str) -> Any:
        raise RefusedPickle(f"the snapshot names {module}.{name}: only plain containers are accepted")


def loads_containers(data: bytes) -> Any:
    return ContainersOnly(io.BytesIO(data)).load()


def _mb(b: float) -> float:
    return round(b / MIB, 1)


def _finish(peak_alloc: float | None, peak_res: float | None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if peak_alloc is not None:
        out["peak_allocated_mb"] = _mb(peak_alloc)
    if peak_res is not None:
        out["peak_reserved_mb"] = _mb(peak_res)
    if peak_alloc is not None and peak_res:
        out["fragmentation_pct"] = round(100 * max(0.0, peak_res - peak_alloc) / peak_res, 1)
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def read_stats(path: Path) -> dict[str, Any]:
    with open_text(path) as f:
        text = f.read(MAX_STATS_BYTES + 1)
    if len(text) > MAX_STATS_BYTES:
        raise ValueError(f"larger than {MAX_STATS_BYTES // MIB} MiB: not a memory_stats() dump")
    d = json.loads(text)
    if not isinstance(d, dict):
        raise ValueError("memory_stats JSON is not an object")
    g = d.get
    return _finish(
        g("allocated_bytes.all.peak"), g("reserved_bytes.all.peak"),
        alloc_retries=g("num_alloc_retries"), ooms=g("num_ooms"),
        segments_freed=g("segment.all.freed"), segments_allocated=g("segment.all.allocated"),
        inactive_split_mb=_mb(g("inactive_split_bytes.all.current")) if g("inactive_split_bytes.all.current") is not None else None,
    )


_UNITS = {"B": 1, "KiB": 1024, "KB": 1024, "MiB": MIB, "MB": MIB, "GiB": 1024 * MIB, "GB": 1024 * MIB, "TiB": MIB * MIB}
_CELL = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]?i?B)\b")


def _bytes(cell: str) -> float | None:
    m = _CELL.search(cell)
    return float(m.group(1)) * _UNITS.get(m.group(2), 1) if m else None


def read_summary(path: Path) -> dict[str, Any]:
    """``torch.cuda.memory_summary()``: rows ``| Metric | Cur Usage | Peak Usage | Tot Alloc | Tot Freed |``."""
    rows: dict[str, list[str]] = {}
    retries = ooms = None
    with open_text(path) as f:
        for line in f:
            if "cudaMalloc retries" in line or "CUDA OOMs" in line:
                m = re.search(r"CUDA OOMs:\s*(\d+)", line)
                ooms = int(m.group(1)) if m else ooms
                m = re.search(r"cudaMalloc retries:\s*(\d+)", line)
                retries = int(m.group(1)) if m else retries
                continue
            if not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 5 and cells[0] and not cells[0].startswith("from"):
                rows[cells[0]] = cells[1:]
    alloc = rows.get("Allocated memory")
    res = rows.get("GPU reserved memory")
    seg = rows.get("GPU reserved segments")
    segments_freed = int(re.sub(r"\D", "", seg[3]) or 0) if seg and re.search(r"\d", seg[3]) else None
    segments_allocated = int(re.sub(r"\D", "", seg[2]) or 0) if seg and re.search(r"\d", seg[2]) else None
    return _finish(_bytes(alloc[1]) if alloc else None, _bytes(res[1]) if res else None,
                   alloc_retries=retries, ooms=ooms, segments_freed=segments_freed, segments_allocated=segments_allocated)


def read_snapshot(path: Path) -> dict[str, Any]:
    """``torch.cuda.memory._dump_snapshot()``: segments now, and the allocator's trace replayed for the peaks."""
    with open_binary(path) as f:
        data = f.read(MAX_SNAPSHOT_BYTES + 1)
    if len(data) > MAX_SNAPSHOT_BYTES:
        raise ValueError(f"the snapshot is larger than {MAX_SNAPSHOT_BYTES // MIB} MiB")
    snap = loads_containers(data)
    if not isinstance(snap, dict) or not isinstance(snap.get("segments"), list):
        raise ValueError("not a memory snapshot (no 'segments' list)")
    reserved = allocated = 0
    for seg in snap["segments"]:
        if isinstance(seg, dict):
            reserved += int(seg.get("total_size") or 0)
            allocated += int(seg.get("allocated_size") or 0)
    peak_alloc, peak_res = allocated, reserved
    segments_freed = ooms = empty_cache = 0
    traces = snap.get("device_traces") or []
    if traces:
        cur_a = cur_r = 0
        events = [e for dev in traces if isinstance(dev, list) for e in dev if isinstance(e, dict)]
        # The trace is a ring buffer of the last events: replay it relative to its start, and keep the state at
        # the end equal to the segments above (cur_* are offsets from the unknown starting state).
        hi_a = hi_r = 0
        for e in events:
            act, size = e.get("action"), int(e.get("size") or 0)
            if act == "alloc":
                cur_a += size
            elif act == "free_completed":
                cur_a -= size
            elif act == "segment_alloc":
                cur_r += size
            elif act in ("segment_free", "segment_unmap"):
                cur_r -= size
                segments_freed += 1
            elif act == "oom":
                ooms += 1
            elif act == "empty_cache":
                empty_cache += 1
            hi_a, hi_r = max(hi_a, cur_a), max(hi_r, cur_r)
        peak_alloc = allocated + (hi_a - cur_a)
        peak_res = reserved + (hi_r - cur_r)
    return _finish(peak_alloc, peak_res, ooms=ooms if traces else None, segments_freed=segments_freed if traces else None,
                   empty_cache_calls=empty_cache or None, segments=len(snap["segments"]))
