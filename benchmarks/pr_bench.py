"""Benchmark ``accel-audit pr``: peak memory and time of a PR review on a large repository.

Builds a temporary git repository from a source tree (default: the megatron-core sdist in
/work/corpus-cache, fetched with ``python -m corpus.fetch megatron-core==0.19.2``), or uses an
existing repository with ``--repo``/``--base``/``--head``. The PR edits one launcher-like
script (``--bf16`` removed, ``--num-workers 0``) and one Python file. Each mode runs in its own
child process and prints the child's peak RSS:

* ``scan``: one audit of the head revision, the reference a PR review should stay close to;
* ``pr``: what ``accel-audit pr`` does: base and head share the facts (and string table) of unchanged
  files, base's query indexes are rebuilt only after head is audited, blobs are streamed;
* ``separate``: base and head audited independently (what it did before).

Measured on NVIDIA/Megatron-LM at 2d754e65bf (2 shared cores, other jobs running): scan 312 MB,
pr 330 MB, separate 589 MB peak RSS (the issue's 613 MB).

    python benchmarks/pr_bench.py [--src DIR] [--repo DIR --base REF --head REF]

Target: ``pr`` peak RSS < 350 MB on a Megatron-size repository.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SRC = Path("/work/corpus-cache/megatron-core-0.19.2-sdist")

CHILD = r'''
import sys, time
sys.path.insert(0, {root!r})
from checks.engine import AuditOptions
from review.gitlocal import audit_revision, git_diff, resolve
from review.pipeline import build_pr_review
from accel_audit.commands.pr import SharedFacts
repo, base, head, mode = sys.argv[1:5]
t = time.perf_counter()
revs = resolve(repo, base, head)
if mode == "scan":
    audit_revision(repo, revs.head, AuditOptions())
else:
    cache = SharedFacts() if mode == "pr" else None
    if mode == "pr":
        from accel_audit.commands.pr import audit_pair
        b, h = audit_pair(repo, revs, AuditOptions(cache=cache))
    else:
        b = audit_revision(repo, revs.base, AuditOptions())
        h = audit_revision(repo, revs.head, AuditOptions())
    r = build_pr_review(b, h, diff_text=git_diff(repo, revs.base, revs.head))
    print("regressions", len(r.regressions), "comments", len(r.comments), "shared files", cache.hits if cache else 0, file=sys.stderr)
print(f"{{time.perf_counter() - t:.1f}}")
'''

LAUNCHER = """#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 32 \\
    --hidden-size 4096 \\
    --bf16 \\
    --num-workers 2 \\
    --save-interval 1000
"""


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b.invalid", "-c", "commit.gpgsign=false", "-C", str(repo), *args],
                   check=True, capture_output=True, env=env)


def build(src: Path, dest: Path) -> tuple[str, str]:
    shutil.copytree(src, dest)
    (dest / "examples").mkdir(exist_ok=True)
    (dest / "examples" / "pretrain_bench.sh").write_text(LAUNCHER)
    _git(dest, "init", "-q", "-b", "main")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "base")
    _git(dest, "checkout", "-q", "-b", "pr")
    (dest / "examples" / "pretrain_bench.sh").write_text(LAUNCHER.replace("    --bf16 \\\n", "").replace("--num-workers 2", "--num-workers 0"))
    py = next(p for p in sorted(dest.rglob("*.py")) if p.stat().st_size > 2000)
    py.write_text(py.read_text() + "\n# touched by the PR\n")
    _git(dest, "commit", "-q", "-am", "head")
    return "main", "pr"


def run(repo: str, base: str, head: str, mode: str) -> tuple[float, float]:
    """(seconds, peak RSS MB) of one mode in a fresh child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT)), repo, base, head, mode], capture_output=True, text=True, check=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if out.stderr.strip():
        print(f"  ({mode}: {out.stderr.strip().splitlines()[-1]})")
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: run the largest expected mode last or read it per run
    return float(out.stdout.strip().splitlines()[-1]), max(peak, before) / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=DEFAULT_SRC)
    ap.add_argument("--repo")
    ap.add_argument("--base")
    ap.add_argument("--head")
    ap.add_argument("--modes", default="scan,pr,separate", help="in increasing order of expected peak")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pr-bench-") as tmp:
        if args.repo:
            repo, base, head = args.repo, args.base, args.head
        else:
            if not args.src.is_dir():
                print(f"source tree not found: {args.src} (python -m corpus.fetch megatron-core==0.19.2 --dest /work/corpus-cache)")
                return 2
            repo = str(Path(tmp) / "repo")
            base, head = build(args.src, Path(repo))
        print(f"repository: {repo} ({base}...{head})")
        # one child per mode, smallest expected peak first: RUSAGE_CHILDREN reports the largest child so far
        for mode in args.modes.split(","):
            t0 = time.perf_counter()
            secs, peak = run(repo, base, head, mode)
            print(f"{mode:9s} {secs:6.1f} s in the child ({time.perf_counter() - t0:.1f} s wall)   peak RSS so far {peak:6.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
