"""A full warm audit reuses the last audit's context pass ("also seen in tests") when every input of it is the same.

The context pass runs each check that is unused or partly used on the training path over the out-of-scope files
(tests, docs, CI, ...) and shows where they do use it. Its output is a function of those files' facts, every file's
role, the overview (without step zero's verdict, which no check reads) and each check's status: a re-scan whose edit
(in scope, read by a check, so audited in full) changes none of them takes the stored context evidence instead of
running it again. Any other edit runs it, and every report is a cold ``-j1`` scan's of the edited tree. The reused pass's reads stay in the
query log, so a later edit of a context file is still seen.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import checks.engine as engine
import checks.tree_index as tree_index
from accel_audit.cli import main
from checks.cache import LOG_MAGIC, DirFactsCache, _open

from .test_engine_query_log import _edit

ROOT = Path(__file__).resolve().parents[2]

TEST_FILE = '''import torch
from model import GPT


def test_compiled():
    model = torch.compile(GPT())
    with torch.autocast("cuda", dtype=torch.bfloat16):
        model(torch.zeros(1, 8, dtype=torch.long))
'''


class Scanner:
    """One copy of ``minimal_loop`` with a test that uses two practices the training path does not (C1, D2)."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(tree_index, "RACY_NS", 0)  # the files here were written a moment ago
        self.repo, self.cache = tmp_path / "repo", tmp_path / "cache"
        shutil.copytree(ROOT / "fixtures" / "repos" / "minimal_loop", self.repo)
        (self.repo / "tests").mkdir()
        (self.repo / "tests" / "test_speed.py").write_text(TEST_FILE)
        self.audits = self.passes = self.checks = 0
        audit_files, context_pass, run_checks = engine.audit_files, engine._context_pass, engine.run_checks

        def counting_checks(*a: object, **k: object) -> object:
            self.checks += 1
            return run_checks(*a, **k)  # type: ignore[arg-type]

        def counting_audits(*a: object, **k: object) -> engine.Audit:
            self.audits += 1
            return audit_files(*a, **k)  # type: ignore[arg-type]

        def counting_passes(*a: object, **k: object) -> None:
            self.passes += 1
            context_pass(*a, **k)  # type: ignore[arg-type]

        monkeypatch.setattr(engine, "audit_files", counting_audits)
        monkeypatch.setattr(engine, "_context_pass", counting_passes)
        monkeypatch.setattr(engine, "run_checks", counting_checks)

    def scan(self, *extra: str) -> str:
        out = self.repo.parent / "report.json"
        assert main(["scan", str(self.repo), "--format", "json", "-o", str(out), "--jobs", "1", *extra]) in (0, 1)
        return out.read_text()

    def warm(self) -> tuple[str, bool, bool]:
        """The warm report, whether it audited in full, and whether it ran the context pass."""
        audits, passes = self.audits, self.passes
        report = self.scan("--cache", str(self.cache))
        return report, self.audits > audits, self.passes > passes

    def log(self) -> dict[str, Any]:
        """The directory's query log as the last full audit stored it."""
        (path,) = (self.cache / "trees").glob("*.qlog")
        log = _open(path.read_bytes(), DirFactsCache(self.cache, private=True).key, LOG_MAGIC)
        assert isinstance(log, dict)
        return log

    def cold(self) -> str:
        return self.scan()

    def edit(self, rel: str, change: Callable[[str], str]) -> None:
        _edit(self.repo / rel, change)  # a new inode, as an editor that saves by rename does


@pytest.fixture
def s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scanner:
    s = Scanner(tmp_path, monkeypatch)
    first, full, ran = s.warm()  # fills the cache and the query log
    assert full and ran and first == s.cold()
    assert _context(first) == {"C1": [("tests/test_speed.py", 7)], "D2": [("tests/test_speed.py", 6)]}
    return s


def _context(report: str) -> dict[str, list[tuple[str, int]]]:
    return {c["id"]: [(e["path"], e["line"]) for e in c["context"]] for c in json.loads(report)["checks"] if c.get("context")}


def _batch(t: str) -> str:
    return t.replace("batch_size=8", "batch_size=16")


def test_an_in_scope_edit_a_check_reads_reuses_the_context_pass(s: Scanner) -> None:
    s.edit("train.py", _batch)
    report, full, ran = s.warm()
    assert full and not ran  # audited in full (a check reads the batch size), the context pass's inputs are the same
    assert report == s.cold()
    s.edit("train.py", lambda t: t.replace("batch_size=16", "batch_size=32"))  # reused from a log that reused it
    report, full, ran = s.warm()
    assert full and not ran and report == s.cold()


def test_a_context_file_edit_after_a_reuse_is_still_seen(s: Scanner) -> None:
    """The log written by an audit that reused the context pass still holds what the pass read: moving the test's
    lines is seen (a log without those reads would return the stored results, citing the old lines)."""
    ran_deps = s.log()["context"]["deps"]  # what the pass read when it ran
    assert ran_deps
    s.edit("train.py", _batch)
    _report, full, ran = s.warm()
    assert full and not ran
    assert s.log()["context"]["deps"] == ran_deps  # the reused pass's reads, kept
    s.edit("tests/test_speed.py", lambda t: "# a line above every call\n" + t)
    report, full, ran = s.warm()
    assert full and ran
    assert report == s.cold()
    assert _context(report) == {"C1": [("tests/test_speed.py", 8)], "D2": [("tests/test_speed.py", 7)]}  # moved down a line


@pytest.mark.parametrize(("rel", "change", "why"), [
    pytest.param("tests/test_speed.py", lambda t: t.replace("    model = torch.compile(GPT())\n", "    model = GPT()\n"),
                 "a context file changed", id="context-file"),
    pytest.param("train.py", lambda t: t.replace("model = GPT(config).to(device)\n",
                                                 "model = GPT(config).to(device)\nmodel = torch.compile(model)\n"),
                 "a check's status changed (D2 is used on the training path now)", id="status"),
    pytest.param("model.py", lambda t: t.replace("256", "512"), "the overview changed (max_seq_len)", id="overview"),
    pytest.param("train.py", lambda t: t.replace("num_workers=0", "num_workers=4, pin_memory=True"),
                 "step zero's verdict changed (data-io-bound drops out of the tie), and F1-F3's statuses", id="step-zero"),
])
def test_an_edit_of_an_input_reruns_the_context_pass(s: Scanner, rel: str, change: Callable[[str], str], why: str) -> None:
    before = s.cold()
    s.edit(rel, change)
    report, full, ran = s.warm()
    assert full and ran, why
    cold = s.cold()
    assert report == cold and cold != before


def test_an_edit_that_only_moves_step_zeros_citations_reuses_the_context_pass(s: Scanner) -> None:
    """A comment line above the training loop moves the lines step zero cites (``train.py:49`` becomes 50): the verdict's
    text changes, and no input of the context pass does (it reads the overview without step zero's verdict, which no
    check reads), so the pass is reused. Catches: the overview compared with step zero's reasons in it (the pass would
    run again on every edit that moves a line or a count step zero cites)."""
    before = s.cold()
    s.edit("train.py", lambda t: t.replace("for epoch in range(10):", "# ten epochs\nfor epoch in range(10):"))
    report, full, ran = s.warm()
    assert full and not ran
    cold = s.cold()
    assert report == cold and cold != before
    assert "`train.py:50`" in json.loads(cold)["project"]["bottleneck_reasons"][1]
    assert _context(cold) == {"C1": [("tests/test_speed.py", 7)], "D2": [("tests/test_speed.py", 6)]}


def test_a_file_changing_role_reruns_the_context_pass(s: Scanner) -> None:
    """``paths.training`` in the repository's config changes the options (no log applies); a file the training script
    starts importing changes the roles (``tools/helpers.py``: project code, then training code; a module under
    ``tests/`` stays a test's when the script imports it): either way the pass runs again."""
    (s.repo / "tools").mkdir()
    (s.repo / "tools" / "helpers.py").write_text("import torch\n\n\ndef fast(model):\n    return torch.compile(model)\n")
    report, full, ran = s.warm()
    assert full and ran and report == s.cold()  # an added file
    assert _role(report, "tools/helpers.py") == "code"
    s.edit("train.py", lambda t: t.replace("from model import GPT, GPTConfig\n",
                                           "from model import GPT, GPTConfig\nfrom tools.helpers import fast\n"))
    report, full, ran = s.warm()
    assert full and ran and report == s.cold()
    assert _role(report, "tools/helpers.py") == "training"


def _role(report: str, path: str) -> str:
    return next(f["role"] for f in json.loads(report)["files"] if f["path"] == path)


def test_a_context_file_edit_reuses_the_checks(s: Scanner) -> None:
    """Only a test changed (its calls moved: read by the checks' whole-list reads, so audited in full): the facts in
    scope and the roles are the same, so the overview, the checks, step zero and the notes are the last audit's, and
    the context pass runs on them."""
    checks, ran_deps = s.checks, s.log()["main"]["deps"]
    s.edit("tests/test_speed.py", lambda t: "# a line above every call\n" + t)
    report, full, ran = s.warm()
    assert full and ran and s.checks == checks  # audited in full without running a check
    assert s.log()["main"]["deps"] >= ran_deps  # what the reused results read, kept
    assert report == s.cold()
    assert _context(report) == {"C1": [("tests/test_speed.py", 8)], "D2": [("tests/test_speed.py", 7)]}
    s.edit("train.py", _batch)  # then an in-scope edit, from a log whose results were reused: the checks run
    checks = s.checks
    report, full, ran = s.warm()
    assert full and s.checks == checks + 1 and report == s.cold()


def test_an_in_scope_guide_edit_reruns_the_checks(s: Scanner) -> None:
    (s.repo / "docs").mkdir()
    (s.repo / "docs" / "multi-gpu.qmd").write_text("```bash\ntorchrun --nnodes 1 --nproc_per_node 8 train.py\n```\n")
    report, full, _ran = s.warm()
    assert full and report == s.cold()
    checks = s.checks
    s.edit("docs/multi-gpu.qmd", lambda t: t.replace("--nnodes 1", "--nnodes 2"))  # a multi-node launch: E1 applies
    report, full, _ran = s.warm()
    assert full and s.checks == checks + 1
    cold = s.cold()
    assert report == cold and '"id": "E1"' in cold
    assert next(c for c in json.loads(cold)["checks"] if c["id"] == "E1")["status"] != "n/a"


def test_a_fresh_process_reusing_the_checks_still_runs_the_context_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each scan in a process of its own, as the console script runs: an audit that reuses the last results imports
    no check module on the way, and the context pass must still find them (in one test process, an earlier scan has
    imported them already)."""
    s = Scanner(tmp_path, monkeypatch)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def scan(*extra: str) -> str:
        out = tmp_path / "report.json"
        subprocess.run([sys.executable, "-m", "accel_audit", "scan", str(s.repo), "--format", "json", "-o", str(out),
                        "--jobs", "1", *extra], cwd=ROOT, env=env, check=False, capture_output=True, timeout=300)
        return out.read_text()

    scan("--cache", str(s.cache))
    s.edit("tests/test_speed.py", lambda t: "# a line above every call\n" + t)
    time.sleep(2.1)  # out of the racy window of a process that does not share the test's setting
    warm = scan("--cache", str(s.cache))
    assert warm == scan()
    assert _context(warm) == {"C1": [("tests/test_speed.py", 8)], "D2": [("tests/test_speed.py", 7)]}
