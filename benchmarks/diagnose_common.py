"""Shared by the diagnose benchmarks: run a command, sample the RSS of its whole process tree, and HTA's figures."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAST_CPU = 0.0


def _tree_rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants (HTA parses ranks in worker processes), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
    return total


def run_measured(cmd: list[str], timeout: float = 3600) -> tuple[float, float, str]:
    """(wall seconds, peak RSS of the process tree in MiB, stdout) of ``cmd``; raises on a non-zero exit.

    The CPU seconds of the whole tree (user + system, every reaped descendant included) are left in
    :data:`LAST_CPU`: on a shared machine they compare better than wall time.
    """
    global LAST_CPU
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_kb(proc.pid))
        if time.monotonic() - start > timeout:
            proc.kill()
            raise TimeoutError(" ".join(cmd))
        time.sleep(0.1)
    out, err = proc.communicate()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} exited {proc.returncode}: {err[-2000:]}")
    return wall, peak / 1024, out


HTA_SCRIPT = r"""
import json, sys, logging
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
t = TraceAnalysis(trace_dir=sys.argv[1])
tb = t.get_temporal_breakdown(visualize=False)
ov = t.get_comm_comp_overlap(visualize=False)
out = {}
for _, row in tb.iterrows():
    out[int(row["rank"])] = {"idle_pct": float(row["idle_time_pctg"]), "compute_pct": float(row["compute_time_pctg"]),
                             "non_compute_pct": float(row["non_compute_time_pctg"])}
for _, row in ov.iterrows():
    out[int(row["rank"])]["comm_comp_overlap_pct"] = float(row["comp_comm_overlap_pctg"])
print(json.dumps(out))
"""

OURS_SCRIPT = r"""
import json, sys
from diagnose.core import diagnose
r = diagnose([sys.argv[1]])
print(json.dumps({str(x["rank"]): {k: x.get(k) for k in ("idle_pct", "compute_pct", "non_compute_pct", "comm_comp_overlap_pct")}
                  for x in r["ranks"]}))
"""


def hta_python(explicit: str | None) -> str | None:
    for cand in (explicit, os.environ.get("HTA_PYTHON"), str(ROOT / ".venv-tools/bin/python")):
        if cand and Path(cand).exists():
            ok = subprocess.run([cand, "-c", "import hta"], capture_output=True).returncode == 0
            if ok:
                return cand
    return None


def run_hta(py: str, folder: Path, timeout: float = 3600) -> tuple[float, float, dict[int, dict[str, float]]]:
    wall, rss, out = run_measured([py, "-c", HTA_SCRIPT, str(folder)], timeout)
    return wall, rss, {int(k): v for k, v in json.loads(out.strip().splitlines()[-1]).items()}


def run_ours(folder: Path, timeout: float = 3600) -> tuple[float, float, dict[int, dict[str, float]]]:
    wall, rss, out = run_measured([sys.executable, "-c", OURS_SCRIPT, str(folder)], timeout)
    return wall, rss, {int(k): v for k, v in json.loads(out.strip().splitlines()[-1]).items()}


def max_diff(a: dict[int, dict[str, float]], b: dict[int, dict[str, float]]) -> float:
    worst = 0.0
    for rank, figs in a.items():
        for k, v in figs.items():
            other = b.get(rank, {}).get(k)
            if v is None or other is None:
                continue
            worst = max(worst, abs(v - other))
    return worst
