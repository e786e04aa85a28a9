"""Nsight Systems: ``nsys stats --format csv`` summary tables, and the SQLite export (``nsys export --type sqlite``).

The SQLite file is opened read-only through a ``file:...?mode=ro&immutable=1`` URI (no journal, no write,
no lock), and its kernel / memcpy / memset rows are streamed into the same per-device analysis as a Kineto
trace (HTA definitions; no ProfilerStep filter: Nsight has no such annotation, so the whole capture counts).
The CSV tables carry totals only, so their kernel-type shares are sums of kernel time, not unions.
"""

from __future__ import annotations

import csv
import re
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from . import kineto
from .sources import open_text

_SYNC_API = set(kineto.SYNC_CALLS) | {"cudaMemcpy", "cudaMemcpy_v3020", "cudaStreamSynchronize_v3020", "cudaDeviceSynchronize_v3020",
                                      "cudaEventSynchronize_v3020"}

_API_NAME = re.compile(r"^(cuda|cu|nccl)[A-Z]\w*$")


def _base_api(name: str) -> str:
    return name.split("_v", 1)[0]


def read_csv(path: Path, settings: dict[str, Any]) -> dict[str, Any]:
    tables: list[list[dict[str, str]]] = []
    with open_text(path) as f:
        header: list[str] | None = None
        for row in csv.reader(f):
            if not row or not any(c.strip() for c in row):
                header = None
                continue
            first = row[0].strip()
            if first in ("Time (%)", "Time(%)"):
                header = [c.strip() for c in row]
                tables.append([])
                continue
            if header is None or len(row) != len(header):
                continue
            tables[-1].append(dict(zip(header, row)))
    kernels: list[tuple[str, float, int]] = []
    memops: list[tuple[str, float, int]] = []
    api: list[tuple[str, float, int]] = []
    for t in tables:
        named = [r.get("Name", "") for r in t]
        is_api = bool(named) and sum(1 for n in named if _API_NAME.match(n)) >= 0.8 * len(named)
        for r in t:
            total = float(r.get("Total Time (ns)") or r.get("Total Time") or 0)
            count = int(float(r.get("Instances") or r.get("Count") or r.get("Num Calls") or 0))
            if "Operation" in r:
                memops.append((r["Operation"], total, count))
            elif "Name" in r:
                (api if is_api else kernels).append((r["Name"], total, count))
    out: dict[str, Any] = {"tables": len(tables)}
    type_time = {kineto.COMPUTATION: 0.0, kineto.COMMUNICATION: 0.0, kineto.MEMORY: 0.0}
    for name, total, _ in kernels:
        t = kineto.kernel_type(name)
        if t in type_time:
            type_time[t] += total
    for _, total, _ in memops:
        type_time[kineto.MEMORY] += total
    s = sum(type_time.values())
    if s:
        out["kernel_types"] = {k: round(100 * v / s, 2) for k, v in type_time.items()}
        out["kernel_types_basis"] = "sum of kernel time (nsys stats has no timeline)"
        out["kernel_time_ms"] = {k: round(v / 1e6, 3) for k, v in type_time.items() if v}
    if kernels:
        ktotal = sum(k[1] for k in kernels)
        top = sorted(kernels, key=lambda k: -k[1])[: int(settings.get("top_kernels", 10))]
        out["top_kernels"] = [{"name": n, "type": kineto.kernel_type(n), "time_ms": round(t / 1e6, 3), "count": c,
                               "pct": round(100 * t / ktotal, 2) if ktotal else 0.0} for n, t, c in top]
    syncs = [(n, t, c) for n, t, c in api if _base_api(n) in _SYNC_API]
    if syncs:
        out["sync_points"] = [{"name": n, "count": c, "time_ms": round(t / 1e6, 3)} for n, t, c in sorted(syncs, key=lambda x: -x[1])]
    if api:
        out["api_time_ms"] = round(sum(t for _, t, _ in api) / 1e6, 3)
    return out


def connect_ro(path: Path) -> sqlite3.Connection:
    uri = f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True)


def _tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def read_sqlite(path: Path, settings: dict[str, Any]) -> list[dict[str, Any]]:
    """One result per GPU (deviceId) in the export."""
    db = connect_ro(path)
    try:
        tables = _tables(db)
        if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
            raise ValueError("no CUPTI_ACTIVITY_KIND_KERNEL table: was the capture run with CUDA tracing (-t cuda)?")
        strings: dict[int, str] = {}
        if "StringIds" in tables:
            strings = dict(db.execute("SELECT id, value FROM StringIds"))
        cols = {r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
        name_col = "demangledName" if "demangledName" in cols else "shortName"
        per_dev: dict[int, kineto._Collector] = {}

        def col_for(dev: int) -> kineto._Collector:
            c = per_dev.get(dev)
            if c is None:
                c = per_dev[dev] = kineto._Collector()
            return c

        def add(c: kineto._Collector, start: int, end: int, name: str, stream: int, corr: int) -> None:
            nid = c.names.get(name)
            if nid is None:
                nid = c.names[name] = len(c.names)
            c.g_ts.append(start / 1000.0)
            c.g_dur.append((end - start) / 1000.0)
            c.g_name.append(nid)
            c.g_corr.append(corr)
            c.g_stream.append(stream)

        for start, end, dev, stream, nameid, corr in db.execute(
            f"SELECT start, end, deviceId, streamId, {name_col}, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL"
        ):
            add(col_for(dev), start, end, strings.get(nameid, str(nameid)), stream, corr)
        kinds = {0: "Unknown", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD", 9: "HtoH", 10: "PtoP"}
        if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
            for start, end, dev, stream, kind, corr in db.execute(
                "SELECT start, end, deviceId, streamId, copyKind, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY"
            ):
                add(col_for(dev), start, end, f"Memcpy {kinds.get(kind, kind)}", stream, corr)
        if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
            for start, end, dev, stream, corr in db.execute(
                "SELECT start, end, deviceId, streamId, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET"
            ):
                add(col_for(dev), start, end, "Memset (Device)", stream, corr)
        runtime: list[tuple[int, int, int, int]] = []
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
            for start, end, nameid, corr in db.execute("SELECT start, end, nameId, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
                runtime.append((start, end, nameid, corr))
        out = []
        for dev in sorted(per_dev):
            c = per_dev[dev]
            corrs = set(c.g_corr)
            for start, end, nameid, corr in runtime:
                if corr in corrs:
                    c.launch_ts[corr] = start / 1000.0
                name = _base_api(strings.get(nameid, ""))
                if name in kineto.SYNC_CALLS or name in kineto.SYNC_MEMCPY:
                    s = c.syncs.setdefault(name, [0, 0.0, 0.0])
                    d = (end - start) / 1000.0
                    s[0] += 1
                    s[1] += d
                    s[2] = max(s[2], d)
                    c.sync_spans.append((start / 1000.0, end / 1000.0))
            res = kineto.analyse(c, settings)
            res["device"] = dev
            out.append(res)
        return out
    finally:
        db.close()
