"""Benchmark ``/accel fix``: from the PR comment to the follow-up pull request, on a ~40 MB repository.

The repository is ``scan_bench``'s synthetic training repository (3,000 Python files and 500 configs, ~40 MB); the
PR's head regresses one recipe (``save_steps: 1``, ``logging_steps: 1``). GitHub is the test suite's fake
(``tests/bot/fakegit.py``) mocked at the HTTP layer with respx, in this process; the service is the real runtime
(SQLite queue, on-disk facts cache). A ``pull_request`` audit runs first, as it does on every push, so the facts
cache is warm; then the ``/accel fix`` comment is delivered and the queue drained: the figure is the wall time from
the delivery to the follow-up PR's creation, pinned to one core.

    .venv/bin/python benchmarks/fix_bench.py [--py-files 3000] [--configs 500] [--seed 0]

Target: under 15 s on one core.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--py-files", type=int, default=3000)
    ap.add_argument("--configs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    import respx
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from fastapi.testclient import TestClient
    from scan_bench import generate

    from bot.app import create_app
    from bot.runtime import build_runtime
    from bot.settings import load_settings
    from tests.bot.fakegh import API_HOST, CODELOAD_HOST, git_diff, make_tarball
    from tests.bot.fakegit import FakeGitData
    from tests.bot.helpers import APP_ID, BASE_SHA, HEAD_SHA, SECRET, TEST_TUNING, deliver, drain, issue_comment, pull_request

    with tempfile.TemporaryDirectory(prefix="fix-bench-") as tmp:
        repo = Path(tmp) / "repo"
        n_files, n_bytes = generate(repo, args.py_files, args.configs, args.seed)
        base = _files(repo)
        head = dict(base)
        target = next(p for p in sorted(base) if p.startswith("configs/sft/") and re.search(r"^save_steps: \d+$", base[p], re.M))
        head[target] = re.sub(r"^save_steps: \d+$", "save_steps: 1", base[target], flags=re.M)
        head[target] = re.sub(r"^logging_steps: \d+$", "logging_steps: 1", head[target], flags=re.M)

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
        pub = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        fake = FakeGitData(APP_ID, pub)
        t = time.perf_counter()
        fake.tarballs[BASE_SHA] = make_tarball(base)
        fake.tarballs[HEAD_SHA] = make_tarball(head)
        fake.diffs[7] = git_diff(base, head)
        fake.pulls[7] = pull_request(number=7)["pull_request"]
        fake.permissions["octocat"] = "write"
        print(f"repository: {n_files} files, {n_bytes / 1e6:.1f} MB; tarballs {len(fake.tarballs[HEAD_SHA]) / 1e6:.1f} MB gz "
              f"(built in {time.perf_counter() - t:.1f} s)")
        settings = load_settings({"ACCEL_APP_ID": str(APP_ID), "ACCEL_PRIVATE_KEY": pem, "ACCEL_WEBHOOK_SECRET": SECRET,
                                  "ACCEL_DATA_DIR": str(Path(tmp) / "data")})
        with respx.mock(assert_all_called=False) as router:
            router.route(host=API_HOST).mock(side_effect=fake.handle)
            router.route(host=CODELOAD_HOST).mock(side_effect=fake.handle)
            rt = build_runtime(settings, TEST_TUNING)
            try:
                with TestClient(create_app(rt)) as client:
                    t = time.perf_counter()
                    deliver(client, "pull_request", pull_request())
                    drain(rt)
                    print(f"PR audit (cold facts cache, base + head): {time.perf_counter() - t:.1f} s")
                    t = time.perf_counter()
                    deliver(client, "issue_comment", issue_comment("/accel fix"))
                    drain(rt)
                    took = time.perf_counter() - t
            finally:
                rt.close()
        # side by side, same process and cache: one warm audit of the head (what every push costs), so the figure
        # can be read as a ratio on a loaded machine
        from checks.engine import AuditOptions, DirFactsCache, audit_files

        cache = DirFactsCache(Path(tmp) / "data" / "facts")
        t = time.perf_counter()
        audit_files(((k, v.encode()) for k, v in head.items()), "head", AuditOptions(cache=cache))
        warm = time.perf_counter() - t
        prs = [p for p in fake.pulls.values() if p["head"]["ref"] == "accel-audit/fix-pr7"]
        if not prs:
            print("no follow-up PR was opened:", fake.issue_comments[-1]["body"][:500] if fake.issue_comments else "no reply")
            return 1
        print(f"/accel fix -> follow-up PR (warm facts cache, one core): {took:.1f} s  [target < 15 s]")
        print(f"one warm audit of the head, same cache: {warm:.1f} s  (the fix costs {took / warm:.1f} warm audits: "
              "the head's audit, the re-audit that verifies the edits, a confirming re-audit when an edit is dropped)")
        try:
            print(f"load average while running: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        except OSError:
            pass
        print("reply:", fake.issue_comments[-1]["body"].splitlines()[0])
        print(f"git data calls: {len(fake.calls_to('POST', r'/git/blobs$'))} blob(s), {len(fake.calls_to('POST', r'/git/trees$'))} tree, "
              f"{len(fake.calls_to('POST', r'/git/commits$'))} commit, {len(fake.calls_to('POST', r'/git/refs$'))} ref")
    return 0


if __name__ == "__main__":
    sys.exit(main())
