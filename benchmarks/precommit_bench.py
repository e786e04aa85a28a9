"""Time of the pre-commit hook (``accel-audit pr --base HEAD --worktree``) on the large synthetic repository.

Generates the repository of ``scan_bench.py`` (3,500 files, ~40 MB), commits it, then times the hook
in a child process for: a commit that touches no audited file; one edited recipe with an empty facts
cache (the first run in a clone); the same edit again (warm cache, the usual case); ten edited files.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scan_bench import generate

ROOT = Path(__file__).resolve().parents[1]
GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"]


def git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True)


def hook(repo: Path) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS MB, exit code, CPU seconds) of one hook run (CPU: what a loaded machine cannot inflate)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "accel_audit.cli", "pr", "--repo", str(repo), "--base", "HEAD", "--worktree"],
                          cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, after.ru_maxrss / 1024.0, proc.returncode, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--py-files", type=int, default=3000)
    ap.add_argument("--configs", type=int, default=500)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        n_files, n_bytes = generate(repo, args.py_files, args.configs, 0)
        (repo / "README.md").write_text("# bench\n")
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "base")
        print(f"repository: {n_files} files, {n_bytes / 1e6:.1f} MB")
        (repo / "README.md").write_text("# bench\n\nmore\n")
        wall, rss, code, cpu = hook(repo)
        print(f"no audited file touched:          {wall:6.2f} s  (CPU {cpu:5.2f} s)  exit {code}")
        recipes = sorted((repo / "configs" / "sft").glob("*.yaml"))
        first = recipes[0]
        first.write_text(re.sub(r"(?m)^bf16: true\n", "", first.read_text()).replace("dataloader_num_workers:", "dataloader_num_workers: 0 #"))
        wall, rss, code, cpu = hook(repo)
        print(f"1 recipe edited, cold cache:      {wall:6.2f} s  (CPU {cpu:5.2f} s)  exit {code}  (peak RSS so far {rss:.0f} MB)")
        wall, rss, code, cpu = hook(repo)
        print(f"1 recipe edited, warm cache:      {wall:6.2f} s  (CPU {cpu:5.2f} s)  exit {code}")
        for r in recipes[1:10]:
            r.write_text(r.read_text().replace("save_steps:", "save_steps: 1 #"))
        wall, rss, code, cpu = hook(repo)
        print(f"10 recipes edited, warm cache:    {wall:6.2f} s  (CPU {cpu:5.2f} s)  exit {code}  (peak RSS {rss:.0f} MB)")
        cache = repo / ".git" / "accel-audit" / "facts"
        size = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file())
        print(f"facts cache: {size / 1e6:.0f} MB in {os.path.relpath(cache, repo)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
