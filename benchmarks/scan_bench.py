"""Benchmark ``accel-audit scan`` on real code against the parser's floor and Semgrep, side by side.

The tree is the corpus of :mod:`benchmarks.corpus` (pinned sdists of megatron-core, deepspeed, trl,
accelerate, peft, lightning and LLaMA-Factory plus realistic test-data JSON; downloaded, not
committed) or any directory given with ``--tree`` (a Megatron-LM checkout, say). Each round runs,
one after the other in child processes so that a busy machine slows them alike:

- ``floor``: CPython's bare parse, ``compile(src, path, "exec", ast.PyCF_ONLY_AST)``, of the same
  Python files the scan reads, on one core (its CPU time is the floor);
- ``scan -j1``: the scan on one core;
- ``scan``: the scan with its default options (every core on a large tree);
- ``semgrep``: Semgrep with 20 simple Python patterns (when ``--semgrep`` names its executable);

and prints wall and CPU seconds (the process and all its children), peak RSS of all the processes
together (sampled from /proc every 20 ms), and the ratios. ``--warm`` adds the re-scan after one
file changed, with the facts cache; ``--copies 1,2,4`` scans 1x, 2x and 4x copies of the tree.
The reports of ``scan -j1`` and ``scan`` are compared byte for byte.

    python benchmarks/scan_bench.py [--tree DIR] [--rounds 2] [--semgrep PATH] [--warm] [--copies 1,2,4]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.corpus import build, link_tree  # noqa: E402
from benchmarks.synthetic import generate  # noqa: E402, F401  (precommit_bench.py and fix_bench.py import it from here)
from corpus.fetch import DEFAULT_DEST  # noqa: E402

FLOOR = r"""
import ast, sys, time
sys.path.insert(0, sys.argv[2])
from checks.source import Limits, ReadStats, iter_directory
files = [(p, d) for p, d in iter_directory(sys.argv[1], Limits(), ReadStats()) if p.endswith((".py", ".pyi"))]
t = time.process_time()
for p, d in files:
    try:
        compile(d, p, "exec", ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError):
        pass
print(time.process_time() - t, len(files), sum(len(d) for _, d in files))
"""

#: 20 simple patterns, the kind of rule a user would otherwise write for these checks
SEMGREP_PATTERNS = (
    "torch.compile(...)", "torch.utils.data.DataLoader(..., num_workers=$N, ...)", "torch.autocast(...)",
    "torch.cuda.amp.autocast(...)", "torch.cuda.amp.GradScaler(...)", "torch.utils.checkpoint.checkpoint(...)",
    "deepspeed.initialize(...)", "torch.distributed.init_process_group(...)", "torch.backends.cuda.matmul.allow_tf32 = $V",
    "torch.backends.cudnn.benchmark = $V", "$X.item()", "torch.cuda.synchronize()", "$OPT.zero_grad(...)",
    "torch.save(...)", "torch.optim.AdamW(...)", "torch.nn.parallel.DistributedDataParallel(...)",
    "$M.gradient_checkpointing_enable(...)", "import flash_attn", "torch.cuda.empty_cache()", "$T.to($D, non_blocking=True)",
)


def semgrep_rules(path: Path) -> Path:
    lines = ["rules:"]
    for i, pat in enumerate(SEMGREP_PATTERNS):
        lines += [f"  - id: r{i:02d}", f"    pattern: {pat!r}", "    message: m", "    languages: [python]", "    severity: INFO"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _pss(pid: int) -> int:
    """Proportional set size of ``pid`` in bytes (pages shared with another process count half): 0 when unknown."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _tree_rss(root_pid: int) -> tuple[int, int]:
    """Resident bytes of ``root_pid`` and all its descendants: the sum of their RSS (pages a forked worker shares
    with its parent counted in each), and of their PSS (shared pages counted once)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(d))
            rss[int(d)] = int(fields[21]) * page
        except (OSError, IndexError, ValueError):
            continue
    total, pss, todo = 0, 0, [root_pid]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        pss += _pss(pid)
        todo.extend(children.get(pid, ()))
    return total, pss


def measure(cmd: list[str], **kw: object) -> dict[str, float | str]:
    """Wall and CPU seconds (with children) and the peak RSS of the whole process tree of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)  # type: ignore[call-overload]
    peak = [0, 0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            rss, pss = _tree_rss(proc.pid)
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
            stop.wait(0.02)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    th.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:4])}... failed ({proc.returncode}): {err[-800:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    res: dict[str, float | str] = {"wall": wall, "cpu": cpu, "rss": peak[0] / 2**20, "pss": peak[1] / 2**20, "out": out}
    last = err.strip().rsplit("\n", 1)[-1].split() if err.strip() else []
    if cmd[1:3] == ["-c", SCAN] and len(last) == 2:
        res["main_cpu"], res["worker_cpu"] = float(last[0]), float(last[1])
    return res


#: runs the CLI and prints the CPU seconds of the scan's own process and of its workers (the process's
#: CPU is the critical path: the wall time on an idle machine with cores to spare cannot be lower)
SCAN = r"""
import resource, sys
from accel_audit.cli import leave, run
rc, args = run(sys.argv[1:])
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, file=sys.stderr)
leave(rc) if getattr(args, "fast_exit", False) else sys.exit(rc)  # as the console script ends (accel_audit.cli.entry)
"""


def scan_cmd(tree: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-c", SCAN, "scan", str(tree), "--format", "json", "-o", str(out), *extra]


def _rng(xs: list[float]) -> str:
    return f"{min(xs):6.2f}" if len(xs) == 1 else f"{min(xs):6.2f}-{max(xs):<6.2f}"


def _row(name: str, runs: list[dict[str, float | str]]) -> str:
    w = [float(r["wall"]) for r in runs]
    c = [float(r["cpu"]) for r in runs]
    m = [float(r["rss"]) for r in runs]
    p = [float(r["pss"]) for r in runs]
    line = f"  {name:<22} wall {_rng(w)} s   cpu {_rng(c)} s   peak RSS {_rng(m)} MB (PSS {_rng(p)} MB)"
    if all("main_cpu" in r for r in runs) and any(float(r["worker_cpu"]) for r in runs):
        line += f"   (main process {_rng([float(r['main_cpu']) for r in runs])} s, workers {_rng([float(r['worker_cpu']) for r in runs])} s)"
    return line


def run_side_by_side(tree: Path, rounds: int, semgrep: str | None, tmp: Path) -> dict[str, list[dict[str, float | str]]]:
    res: dict[str, list[dict[str, float | str]]] = {"floor": [], "scan -j1": [], "scan": []}
    rules = semgrep_rules(tmp / "rules.yaml")
    if semgrep:
        res["semgrep (20 patterns)"] = []
    for _ in range(rounds):
        f = measure([sys.executable, "-c", FLOOR, str(tree), str(ROOT)])
        parse_cpu, nfiles, nbytes = str(f["out"]).split()
        f["parse"] = float(parse_cpu)
        f["files"], f["bytes"] = int(nfiles), int(nbytes)
        res["floor"].append(f)
        res["scan -j1"].append(measure(scan_cmd(tree, tmp / "j1.json", "--jobs", "1"), cwd=ROOT))
        res["scan"].append(measure(scan_cmd(tree, tmp / "default.json"), cwd=ROOT))
        if semgrep:
            res["semgrep (20 patterns)"].append(measure(
                [semgrep, "scan", "--config", str(rules), "--metrics=off", "--json", "--quiet", "--disable-version-check",
                 "--max-target-bytes", str(1 << 20), "-o", str(tmp / "semgrep.json"), str(tree)]))
    return res


def report(tree: Path, res: dict[str, list[dict[str, float | str]]], tmp: Path) -> None:
    fl = res["floor"][0]
    print(f"tree {tree}: {fl['files']} Python files the scan reads, {int(fl['bytes']) / 1e6:.1f} MB of Python")
    parse = [float(r["parse"]) for r in res["floor"]]
    print(f"  {'floor (bare parse)':<22} parse cpu {_rng(parse)} s (one core)")
    for name in list(res)[1:]:
        print(_row(name, res[name]))
    print("ratios (per round, same round's runs):")
    j1 = [float(s["cpu"]) / float(f["parse"]) for s, f in zip(res["scan -j1"], res["floor"])]
    dw = [float(s["wall"]) / float(f["parse"]) for s, f in zip(res["scan"], res["floor"])]
    print(f"  scan -j1 cpu / floor          {_rng(j1)}   (target <= 2.5)")
    print(f"  scan (default) wall / floor   {_rng(dw)}   (target <= 2.5)")
    if all("main_cpu" in r for r in res["scan"]):
        cp = [float(s["main_cpu"]) / float(f["parse"]) for s, f in zip(res["scan"], res["floor"])]
        print(f"  scan (default) main-process cpu / floor {_rng(cp)}   (its wall on an idle machine with a core per worker)")
    if "semgrep (20 patterns)" in res:
        sg = [float(s["wall"]) / float(g["wall"]) for s, g in zip(res["scan"], res["semgrep (20 patterns)"])]
        print(f"  scan wall / semgrep wall      {_rng(sg)}   (target <= 0.5)")
    same = (tmp / "j1.json").read_bytes() == (tmp / "default.json").read_bytes()
    print(f"  report of scan -j1 and scan (default) byte-identical: {same}")


#: ``--warm-edit``: an edit no check reads (a constant appended to a file), one a check reads (a ``num_workers`` value, or
#: a line inserted above every call of a file when the tree sets none), or both in each round
WARM_EDITS = ("both", "unqueried", "queried")
_NUM_WORKERS = re.compile(rb"num_workers\s*=\s*(\d+)")


def _queried_edit(tree: Path, fallback: Path) -> tuple[Path, Callable[[bytes, int], bytes]]:
    """A file and an edit of it that changes what a check reads."""
    for p in sorted(tree.rglob("*.py")):
        if _NUM_WORKERS.search(p.read_bytes()):
            def bump(data: bytes, r: int) -> bytes:
                m = _NUM_WORKERS.search(data)
                assert m is not None
                return data[: m.start(1)] + str(int(m.group(1)) + 1 + r).encode() + data[m.end(1):]
            return p, bump
    return fallback, lambda data, r: f"# edit {r}: every call below moves down a line\n".encode() + data


def warm(tree: Path, tmp: Path, rounds: int, which: str = "both", victim_rel: str | None = None) -> None:
    """Cold scan, then re-scans with the facts cache after one Python file changed: in a way no check reads (the audit's
    results are reused) and in a way a check reads (a full warm audit), each checked against a cold ``-j1`` scan."""
    cache = tmp / "cache"
    # a project file the audit reads (not CI, dot-folders, tests or docs, which are out of scope and never judged)
    victim = tree / victim_rel if victim_rel else next(
        p for p in sorted(tree.rglob("*.py")) if p.stat().st_size > 2000 and "test" not in p.name
        and not any(part.startswith(".") or part in ("tests", "test", "docs") for part in p.relative_to(tree).parts[:-1]))
    queried, q_edit = _queried_edit(tree, victim)
    edits: list[tuple[str, Path, Callable[[bytes, int], bytes]]] = []
    if which in ("both", "unqueried"):
        edits.append(("unqueried", victim, lambda data, r: data + f"\n# edit {r}\nLOCAL_EDIT = {r}\n".encode()))
    if which in ("both", "queried"):
        edits.append(("queried", queried, q_edit))
    originals = {p: p.read_bytes() for _n, p, _e in edits}
    cold: list[dict[str, float | str]] = []
    fill: list[dict[str, float | str]] = []
    warm_: dict[str, list[dict[str, float | str]]] = {n: [] for n, _p, _e in edits}
    same: list[bool] = []

    def put(path: Path, data: bytes) -> None:
        path.unlink()  # a new inode: the hard-linked original in the download cache stays as it was
        path.write_bytes(data)

    try:
        for r in range(rounds):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(measure(scan_cmd(tree, tmp / "cold.json"), cwd=ROOT))
            fill.append(measure(scan_cmd(tree, tmp / "fill.json", "--cache", str(cache)), cwd=ROOT))
            same.append((tmp / "fill.json").read_bytes() == (tmp / "cold.json").read_bytes())
            for name, path, edit in edits:
                put(path, edit(originals[path], r))
                warm_[name].append(measure(scan_cmd(tree, tmp / "warm.json", "--cache", str(cache)), cwd=ROOT))
                subprocess.run(scan_cmd(tree, tmp / "edited-cold.json", "--jobs", "1"), cwd=ROOT, check=True, capture_output=True)
                same.append((tmp / "warm.json").read_bytes() == (tmp / "edited-cold.json").read_bytes())
                put(path, originals[path])
                # the cache learns the restored file too (not measured), so the next edit starts from the same state
                subprocess.run(scan_cmd(tree, tmp / "restored.json", "--cache", str(cache)), cwd=ROOT, check=True, capture_output=True)
    finally:
        for path, data in originals.items():
            if path.read_bytes() != data:
                put(path, data)
    print("re-scan after one file changed, facts cache:")
    for name, path, _e in edits:
        how = "no check reads it: the audit's results are reused" if name == "unqueried" else "a check reads it: audited in full"
        print(f"  {name} edit: {path.relative_to(tree)} ({how})")
    print(_row("cold scan", cold))
    print(_row("cold scan filling cache", fill))
    for name, runs in warm_.items():
        print(_row(f"warm, {name} edit", runs))
    for name, runs in warm_.items():
        ratio = [float(w["wall"]) / float(c["wall"]) for w, c in zip(runs, cold)]
        cpu = [float(w["cpu"]) / float(c["cpu"]) for w, c in zip(runs, cold)]
        print(f"  warm ({name}) / cold: wall {_rng([100 * x for x in ratio])} %   cpu {_rng([100 * x for x in cpu])} %   (target <= 15 %)")
    print(f"  warm reports == cold -j1 report of the edited tree (and filling == cold): {all(same)}")


def copies(tree_for: dict[int, Path], tmp: Path, rounds: int = 1, baseline: Path | None = None) -> None:
    """Scan 1x, 2x, 4x... copies with the default options, ``rounds`` times each; with ``baseline`` (another checkout of
    accel-audit), its scan of each tree runs right before this one's, alternated, and the reports are compared."""
    print("memory as the tree grows (scan with default options):")
    floor = {n: float(str(measure([sys.executable, "-c", FLOOR, str(tree), str(ROOT)])["out"]).split()[0]) for n, tree in tree_for.items()}
    for n, tree in tree_for.items():
        runs: dict[str, list[dict[str, float | str]]] = {"baseline": [], "this": []}
        same = True
        for _ in range(rounds):
            if baseline is not None:
                runs["baseline"].append(measure(scan_cmd(tree, tmp / f"copies{n}-base.json"), cwd=baseline))
            runs["this"].append(measure(scan_cmd(tree, tmp / f"copies{n}.json"), cwd=ROOT))
            if baseline is not None:
                same = same and (tmp / f"copies{n}-base.json").read_bytes() == (tmp / f"copies{n}.json").read_bytes()
        for who, rs in runs.items():
            if rs:
                label = f"{n}x tree" + (f" ({who})" if baseline is not None else "")
                ratio = [float(r["wall"]) / floor[n] for r in rs]
                print(_row(label, rs) + f"   wall / floor {_rng(ratio)} (floor {floor[n]:.2f} s)")
        if baseline is not None:
            print(f"  {n}x: reports of baseline and this byte-identical: {same}")


def _copies(tree: Path, n: int, out: Path) -> Path:
    """``n`` hard-linked copies of ``tree`` side by side under ``out`` (made once)."""
    if not (out / f"copy{n}").exists():
        shutil.rmtree(out, ignore_errors=True)
        for i in range(1, n + 1):
            link_tree(tree, out / f"copy{i}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, help="scan this directory instead of the corpus")
    ap.add_argument("--dest", type=Path, default=DEFAULT_DEST, help="download cache of the corpus (outside the repository)")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "accel-audit-bench", help="where the corpus trees are assembled")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--semgrep", help="the semgrep executable (installed in a venv of its own)")
    ap.add_argument("--warm", action="store_true", help="also measure the re-scan after a one-file change with --cache")
    ap.add_argument("--warm-file", help="with --warm: the Python file (relative to the tree) the unqueried edit appends a "
                    "constant to (default: the first project file over 2 KB)")
    ap.add_argument("--warm-edit", choices=WARM_EDITS, default="both",
                    help="with --warm: an edit no check reads, one a check reads (a num_workers value), or both (default)")
    ap.add_argument("--copies", help="also scan N copies of the corpus, e.g. 1,2,4")
    ap.add_argument("--skip-main", action="store_true", help="only the --warm / --copies parts")
    ap.add_argument("--copies-rounds", type=int, default=1, help="with --copies: scans of each tree")
    ap.add_argument("--baseline", type=Path, help="with --copies: another checkout of accel-audit (run with this Python), "
                    "whose scan of each tree runs alternated with this one's")
    args = ap.parse_args(argv)
    tree = args.tree or build(args.work / "corpus", args.dest)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        if not args.skip_main:
            report(tree, run_side_by_side(tree, args.rounds, args.semgrep, tmp), tmp)
        if args.warm:
            warm(tree, tmp, args.rounds, args.warm_edit, args.warm_file)
        if args.copies:
            ns = [int(x) for x in args.copies.split(",")]
            trees = {n: tree if n == 1 else _copies(tree, n, args.work / f"{tree.name}-x{n}") for n in ns}
            copies(trees, tmp, args.copies_rounds, args.baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
