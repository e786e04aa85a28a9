"""Diagnose a set of inputs: detect each file, read it with its module, assemble the report (diagnose-json.md)."""

from __future__ import annotations

import gzip
import os
import sqlite3
import statistics
import time
import zlib
from pathlib import Path
from typing import Any

from . import gpuutil, kineto, memory, nccl, nsys, trainlog, verdict
from .jsonstream import TraceFormatError
from .settings import merged
from .sources import detect, iter_files

SCHEMA_VERSION = 1


class LimitExceeded(Exception):
    """A limit of the run was hit (time or number of files); the message says which."""


def _display(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    rel = os.path.relpath(path)
    return Path(rel).as_posix() if not rel.startswith("..") else path.as_posix()


def diagnose(paths: list[str], settings: dict[str, Any] | None = None, *, root: Path | None = None, audit: dict[str, Any] | None = None,
             deadline: float | None = None, max_files: int = 10_000) -> dict[str, Any]:
    """The report for the files under ``paths``. ``deadline`` (time.monotonic()) raises :class:`LimitExceeded` between files."""
    s = merged(settings)
    inputs: list[dict[str, Any]] = []
    ranks: list[dict[str, Any]] = []
    util_gpus: list[dict[str, Any]] = []
    util_source: set[str] = set()
    memories: list[dict[str, Any]] = []
    nccls: list[dict[str, Any]] = []
    runs: list[tuple[str, dict[str, Any]]] = []
    nsys_tables: list[dict[str, Any]] = []
    for n, path in enumerate(iter_files(paths)):
        if n >= max_files:
            raise LimitExceeded(f"more than {max_files} files")
        if deadline is not None and time.monotonic() > deadline:
            raise LimitExceeded("the time limit was reached")
        shown = _display(path, root)
        kind = detect(path)
        entry: dict[str, Any] = {"path": shown, "kind": kind or "unknown"}
        inputs.append(entry)
        if kind is None:
            entry["skipped"] = "not a recognised profile or log"
            continue
        try:
            if kind == "kineto":
                rt = kineto.read(path, shown, s, deadline)
                r: dict[str, Any] = {"rank": rt.rank, "path": shown, **rt.result}
                if rt.rank is not None:
                    entry["rank"] = rt.rank
                if rt.world_size:
                    r["world_size"] = rt.world_size
                if rt.truncated:
                    entry["truncated"] = rt.truncated
                    r["truncated"] = True
                if not rt.result.get("gpu_events"):
                    entry["note"] = "no GPU events (a CPU-only profile): CPU-side figures only"
                ranks.append(r)
            elif kind in ("nvidia-smi", "dmon"):
                series = gpuutil.read_smi_csv(path) if kind == "nvidia-smi" else gpuutil.read_dmon(path)
                gpus = gpuutil.summarise(series, s)
                if not gpus:
                    entry["skipped"] = "no utilisation samples"
                for g in gpus:
                    g["path"] = shown
                util_gpus.extend(gpus)
                util_source.add("nvidia-smi" if kind == "nvidia-smi" else "nvidia-smi dmon")
            elif kind == "nsys-csv":
                t = nsys.read_csv(path, s)
                t["path"] = shown
                nsys_tables.append(t)
            elif kind == "nsys-sqlite":
                for res in nsys.read_sqlite(path, s):
                    ranks.append({"rank": res.pop("device"), "path": shown, "source": "nsys", **res})
            elif kind in ("memory-stats", "memory-summary", "memory-snapshot"):
                reader = {"memory-stats": memory.read_stats, "memory-summary": memory.read_summary, "memory-snapshot": memory.read_snapshot}[kind]
                m = reader(path)
                m["path"] = shown
                memories.append(m)
            elif kind == "nccl-log":
                info = nccl.read(path, shown)
                info["path"] = shown
                info["findings"] = nccl.findings(info)
                nccls.append(info)
                run = trainlog.read(path)  # a job's stdout often carries both
                if run:
                    entry["also"] = "train-log"
                    runs.append((shown, run))
            elif kind == "train-log":
                run = trainlog.read(path)
                if not run:
                    entry["skipped"] = "no step time or throughput lines"
                else:
                    runs.append((shown, run))
        except kineto.TimeLimit as exc:
            raise LimitExceeded(str(exc)) from None
        except TraceFormatError as exc:
            entry["skipped"] = f"unreadable trace: {exc}"
        except (memory.RefusedPickle, ValueError, OSError, EOFError, gzip.BadGzipFile, zlib.error, sqlite3.Error, UnicodeError) as exc:
            entry["skipped"] = f"unreadable: {type(exc).__name__}: {exc}"
    return assemble(inputs, ranks, util_gpus, util_source, memories, nccls, runs, nsys_tables, s, audit)


def assemble(inputs: list[dict[str, Any]], ranks: list[dict[str, Any]], util_gpus: list[dict[str, Any]], util_source: set[str],
             memories: list[dict[str, Any]], nccls: list[dict[str, Any]], runs: list[tuple[str, dict[str, Any]]],
             nsys_tables: list[dict[str, Any]], s: dict[str, Any], audit: dict[str, Any] | None) -> dict[str, Any]:
    report: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "inputs": inputs}
    ranks.sort(key=lambda r: (r.get("rank") is None, r.get("rank") if r.get("rank") is not None else 0, r["path"]))
    for r in ranks:
        if "kernel_types" in r:
            r["comm_share_pct"] = r["kernel_types"]["communication"]
    if ranks:
        report["ranks"] = ranks
        strag = verdict.stragglers(ranks, s)
        if strag:
            report["stragglers"] = strag
        steps = [r["steps"]["step_time_ms"] for r in ranks if r.get("steps") and r.get("gpu_events")]
        if steps:
            report["trace_steps"] = {"step_time_ms": round(statistics.mean(steps), 3), "max_ms": max(steps), "min_ms": min(steps)}
    if nsys_tables:
        report["nsys"] = nsys_tables
    if util_gpus:
        report["utilization"] = {"source": ", ".join(sorted(util_source)), "gpus": util_gpus}
    if memories:
        worst = max(memories, key=lambda m: (m.get("peak_reserved_mb", 0), m.get("alloc_retries", 0) or 0))
        agg = dict(worst)
        for key in ("alloc_retries", "ooms", "segments_freed"):
            vals = [m[key] for m in memories if m.get(key) is not None]
            if vals:
                agg[key] = max(vals)
        report["memory"] = agg
        if len(memories) > 1:
            report["memory"]["files"] = len(memories)
    if nccls:
        main = max(nccls, key=lambda i: (i.get("nodes", 1), i.get("lines", 0)))
        info = {k: main[k] for k in ("version", "transports", "gdr", "algorithms", "nodes", "network", "env", "path", "channels") if k in main}
        info["findings"] = [f for i in nccls for f in i["findings"]]
        transports = sorted({t for i in nccls for t in i.get("transports", [])})
        info["transports"] = transports
        report["nccl"] = info
    if runs:
        for _, run in runs:
            trainlog.add_mfu(run, s)
        best_path, best = max(runs, key=lambda pr: (pr[1].get("steps_seen", 0), len(pr[1])))
        steps: dict[str, Any] = {"source": "train-log", "path": best_path, **best}
        if len(runs) > 1:
            steps["runs"] = [{"path": p, **r} for p, r in runs]
            sc = trainlog.scaling(runs)
            if sc:
                steps["scaling"] = sc
        report["steps"] = steps
    elif report.get("trace_steps"):
        report["steps"] = {"source": "trace", "step_time_ms": report["trace_steps"]["step_time_ms"]}
    v, recs = verdict.build(report, s, audit)
    report["verdict"] = v
    report["recommendations"] = recs
    report["settings"] = {k: v for k, v in s.items() if v is not None}
    return report
