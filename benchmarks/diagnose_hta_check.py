"""Cross-check ``diagnose`` against Holistic Trace Analysis on the same traces: temporal breakdown and overlap per rank.

Needs a Python with ``HolisticTraceAnalysis`` installed (not a project dependency): ``--hta-python``, ``$HTA_PYTHON`` or
``.venv-tools/bin/python``. Scenarios are generated Kineto traces (tests/diagnose/tracegen.py) into a temporary folder.
Prints one line per scenario and the largest difference in percentage points; exits 1 when it exceeds ``--tolerance``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.diagnose_common import hta_python, max_diff, run_hta, run_ours
from tests.diagnose.tracegen import write_ranks

SCENARIOS = {
    "data-starved": {"world": 2, "loader_us": 2500, "sync_item": True, "comm_us": 500, "overlap": 0.6},
    "comm-bound": {"world": 4, "comm_us": 3000, "overlap": 0.1},
    "compute-bound": {"world": 2, "kernels_per_step": 60, "comm_us": 300, "overlap": 0.9},
    "straggler": {"world": 4, "slow_rank": 1, "slow": 1.5, "comm_us": 800, "overlap": 0.5, "sync_item": True},
    "gzip-8-ranks": {"world": 8, "gz": True, "comm_us": 1200, "overlap": 0.3, "loader_us": 800, "sync_item": True},
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hta-python")
    ap.add_argument("--tolerance", type=float, default=1.0, help="percentage points (default 1)")
    args = ap.parse_args()
    py = hta_python(args.hta_python)
    if py is None:
        print("HolisticTraceAnalysis not found: pip install HolisticTraceAnalysis into a separate venv and pass --hta-python")
        return 2
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="diag-hta-") as tmp:
        for name, kw in SCENARIOS.items():
            kw = dict(kw)
            folder = Path(tmp) / name
            write_ranks(folder, kw.pop("world"), **kw)
            _, _, theirs = run_hta(py, folder)
            _, _, ours = run_ours(folder)
            d = max_diff(theirs, ours)
            worst = max(worst, d)
            r0h, r0o = theirs[0], ours[0]
            print(f"{name:14s} ranks={len(theirs)}  HTA rank0 idle/compute/non-compute/overlap = "
                  f"{r0h['idle_pct']:.2f}/{r0h['compute_pct']:.2f}/{r0h['non_compute_pct']:.2f}/{r0h.get('comm_comp_overlap_pct', 0):.2f}  "
                  f"ours = {r0o['idle_pct']:.2f}/{r0o['compute_pct']:.2f}/{r0o['non_compute_pct']:.2f}/{r0o.get('comm_comp_overlap_pct') or 0:.2f}  "
                  f"max diff {d:.3f} pp")
    print(f"largest difference over all ranks and figures: {worst:.3f} percentage points (tolerance {args.tolerance:g})")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
