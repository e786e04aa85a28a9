"""Benchmark: ``diagnose`` on a ~1 GB multi-rank Kineto trace set, time and peak RSS, side by side with HTA.

The set is generated on the fly into ``--dir`` (default /tmp/diagnose-bench-1g; reused when its size matches) by
tests/diagnose/tracegen.py: ``--ranks`` files of realistic events (cpu_op with shapes, cuda_runtime launches, kernels,
NCCL, memcpy/memset). Both tools run in their own process; peak RSS is sampled over the whole process tree (HTA parses
ranks in worker processes). HTA needs a separate Python with HolisticTraceAnalysis (``--hta-python`` / $HTA_PYTHON /
.venv-tools/bin/python); without it only our figures are printed. Targets: peak RSS < 500 MB and faster than HTA.

Measured 2026-12-01 on the shared 2-core machine, 8 files, 1031 MiB, one run:
    diagnose: 51.6 s wall, 14.7 s CPU, peak RSS 54 MiB
    HTA 0.5:  481.9 s wall, 207.6 s CPU, peak RSS 1958 MiB (process tree); largest difference 0.000 pp
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import diagnose_common
from benchmarks.diagnose_common import hta_python, max_diff, run_hta, run_ours
from tests.diagnose.tracegen import RankSpec, write_trace


def generate(folder: Path, total_bytes: int, ranks: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    sample = folder / ".sample.json"
    write_trace(sample, RankSpec(steps=4, kernels_per_step=200, comm_us=2000, overlap=0.4, sync_item=True, loader_us=500, pad_args=2))
    per_step = sample.stat().st_size / 4.25  # four full steps and the cut quarter step
    sample.unlink()
    steps = max(2, int(total_bytes / ranks / per_step))
    for r in range(ranks):
        write_trace(folder / f"rank-{r}.pt.trace.json", RankSpec(rank=r, world=ranks, steps=steps, kernels_per_step=200, comm_us=2000,
                                                                 overlap=0.4, sync_item=True, loader_us=500, pad_args=2,
                                                                 slow=1.2 if r == ranks - 1 else 1.0))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/diagnose-bench-1g")
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--hta-python")
    ap.add_argument("--no-hta", action="store_true")
    args = ap.parse_args()
    folder = Path(args.dir)
    want = int(args.gb * (1 << 30))
    have = sum(p.stat().st_size for p in folder.glob("rank-*.pt.trace.json")) if folder.exists() else 0
    if abs(have - want) > want * 0.1 or len(list(folder.glob("rank-*.pt.trace.json"))) != args.ranks:
        for p in folder.glob("rank-*.pt.trace.json"):
            p.unlink()
        print(f"generating {args.gb:g} GB in {args.ranks} ranks under {folder} ...", flush=True)
        generate(folder, want, args.ranks)
        have = sum(p.stat().st_size for p in folder.glob("rank-*.pt.trace.json"))
    print(f"trace set: {args.ranks} files, {have / (1 << 20):.0f} MiB")
    wall, rss, ours = run_ours(folder)
    cpu = diagnose_common.LAST_CPU
    print(f"diagnose: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {rss:.0f} MiB ({have / (1 << 20) / wall:.1f} MiB/s)", flush=True)
    py = None if args.no_hta else hta_python(args.hta_python)
    if py is None:
        print("HTA: not run" + ("" if args.no_hta else " (no Python with HolisticTraceAnalysis found)"))
        return 0
    h_wall, h_rss, theirs = run_hta(py, folder)
    h_cpu = diagnose_common.LAST_CPU
    print(f"HTA 0.5: {h_wall:.1f} s wall, {h_cpu:.1f} s CPU, peak RSS {h_rss:.0f} MiB (process tree)")
    print(f"speed-up {h_wall / wall:.1f}x wall, {h_cpu / cpu:.1f}x CPU; memory {h_rss / rss:.1f}x less; largest difference in breakdown/overlap: "
          f"{max_diff(theirs, ours):.3f} pp")
    return 0


if __name__ == "__main__":
    sys.exit(main())
