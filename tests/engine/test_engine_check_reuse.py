"""A full warm audit reuses each check whose own reads have the same answers as in the last recorded audit.

The reads are recorded per consumer (roles, the overview, each check, step zero, the report), with the reads of the memos
a consumer finds (built by another: ``recipe_modules``, ``call_names_by_segment``, ...) given to it; checks that share a
memo by ``setdefault`` are reused only together, and what a check wrote to the distributions' accumulators is written
again in its turn when its result is reused (the notes read it). After an edit, the checks none of whose reads changed
give their stored result (before the notes) and are not run; every other check runs. Every report here is a cold
``-j1`` scan's of the edited tree. Each test names the mutation of the reuse logic it catches.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import checks.engine as engine
import checks.tree_index as tree_index
from accel_audit.cli import main

from .test_engine_query_log import _edit

ROOT = Path(__file__).resolve().parents[2]


def _recipe(workers: int) -> str:
    """A YAML training recipe; three of them disagree on five tuning values (two say ``workers``, one says 0)."""
    return (f"model: gpt\nlearning_rate: 0.0003\nbatch_size: {workers + 8}\nnum_workers: {workers}\nmax_steps: 100\n"
            f"gradient_accumulation_steps: {workers + 1}\nwarmup_steps: {workers * 10}\nlogging_steps: {workers + 10}\n"
            f"save_steps: {workers + 100}\nbf16: true\n")


class Scanner:
    """One copy of ``minimal_loop`` with three YAML recipes whose values disagree (so the notes cite distributions)."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(tree_index, "RACY_NS", 0)  # the files here were written a moment ago
        self.repo, self.cache = tmp_path / "repo", tmp_path / "cache"
        shutil.copytree(ROOT / "fixtures" / "repos" / "minimal_loop", self.repo)
        (self.repo / "configs").mkdir()
        for name, workers in (("a", 4), ("b", 4), ("c", 0)):
            (self.repo / "configs" / f"{name}.yaml").write_text(_recipe(workers))
        self.reused: list[set[str]] = []  # per full audit with a recorded log: the checks it reused
        plan = engine._checks_reused

        def spy(*a: Any, **k: Any) -> dict[str, Any]:
            out = plan(*a, **k)
            self.reused.append(set(out))
            return out

        monkeypatch.setattr(engine, "_checks_reused", spy)

    def scan(self, *extra: str) -> str:
        out = self.repo.parent / "report.json"
        assert main(["scan", str(self.repo), "--format", "json", "-o", str(out), "--jobs", "1", *extra]) in (0, 1)
        return out.read_text()

    def warm(self) -> tuple[str, set[str] | None]:
        """The warm report, and the checks its full audit reused (None: it ran none of the per-check reuse)."""
        n = len(self.reused)
        report = self.scan("--cache", str(self.cache))
        return report, (self.reused[-1] if len(self.reused) > n else None)

    def cold(self) -> str:
        return self.scan()

    def edit(self, rel: str, change: Callable[[str], str]) -> None:
        _edit(self.repo / rel, change)


@pytest.fixture
def s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scanner:
    s = Scanner(tmp_path, monkeypatch)
    first, reused = s.warm()  # fills the cache and the query log: nothing to reuse yet
    assert reused == set() and first == s.cold()
    return s


def _status(report: str, check_id: str) -> str:
    return next(c["status"] for c in json.loads(report)["checks"] if c["id"] == check_id)


def _detail(report: str, check_id: str) -> str:
    return next(c["detail"] or "" for c in json.loads(report)["checks"] if c["id"] == check_id)


def _lr(t: str) -> str:
    return t.replace("lr=3e-4", "lr=1e-4")


def _compile(t: str) -> str:
    return t.replace("model = GPT(config).to(device)\n", "model = GPT(config).to(device)\nmodel = torch.compile(model)\n")


def test_an_edit_reruns_the_checks_that_read_it_and_reuses_the_rest(s: Scanner) -> None:
    """The optimizer's learning rate changed (a call's keyword): the checks that read that call run, the others are
    reused, and the reused C5's note (``gradient_accumulation_steps: 5 in 2 recipes, ...``) is the cold scan's: its
    writes to the distributions were replayed. Catches: no replay (C5's note is lost), reusing a check whose reads
    changed (G1 reads the optimizer's call)."""
    s.edit("train.py", _lr)
    report, reused = s.warm()
    assert reused is not None and "C5" in reused and "G1" not in reused and len(reused) > 30
    assert report == s.cold()
    assert "gradient_accumulation_steps: 5 in 2 recipes" in _detail(report, "C5")


def test_a_status_change_reruns_that_check(s: Scanner) -> None:
    """``torch.compile`` added: D2 (compilation) changes status; it reads the calls named ``compile``, so it runs.
    Catches: taking every read as unchanged (D2 would stay unused)."""
    before = s.cold()
    s.edit("train.py", _compile)
    report, reused = s.warm()
    assert reused is not None and "D2" not in reused and reused
    cold = s.cold()
    assert report == cold and _status(cold, "D2") != _status(before, "D2")


def test_a_reused_checks_reads_are_kept_for_the_next_edit(s: Scanner) -> None:
    """After an audit that reused D2, its log still holds D2's reads: adding ``torch.compile`` next is seen.
    Catches: a reused check carrying no reads into the new log (D2 would be reused with nothing to compare)."""
    s.edit("train.py", _lr)
    report, reused = s.warm()
    assert reused is not None and "D2" in reused and report == s.cold()
    s.edit("train.py", _compile)
    report, reused = s.warm()
    assert reused is not None and "D2" not in reused
    assert report == s.cold()


def test_a_memo_another_consumer_built_carries_its_reads(s: Scanner) -> None:
    """D5 (Liger kernels) finds ``liger_kernel.*`` calls through the memo of call names by segment that an earlier
    consumer built; a ``liger_kernel.transformers.LigerRMSNorm()`` call added to model.py changes that memo's reads (the
    set of call names) and none of D5's own lookups, so D5 runs only because the memo's reads were given to it.
    Catches: a memo's hit recording nothing (D5 would be reused, still unused)."""
    before = s.cold()
    s.edit("model.py", lambda t: t.replace("        self.drop = nn.Dropout(config.dropout)\n",
                                           "        self.drop = nn.Dropout(config.dropout)\n        liger_kernel.transformers.LigerRMSNorm()\n"))
    report, reused = s.warm()
    assert reused is not None and "D5" not in reused and "C5" in reused
    cold = s.cold()
    assert report == cold and cold != before


def test_a_role_change_reruns_every_check(s: Scanner) -> None:
    """A file added (the structure changed): no check is reused. Catches: comparing only the changed files' reads."""
    (s.repo / "helpers.py").write_text("import torch\n\n\ndef fast(model):\n    return torch.compile(model)\n")
    report, reused = s.warm()
    assert not reused and report == s.cold()
    s.edit("train.py", lambda t: t.replace("from model import GPT, GPTConfig\n", "from model import GPT, GPTConfig\nfrom helpers import fast\n"))
    report, reused = s.warm()
    assert report == s.cold()


def _count_overviews(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    runs = [0]
    detect = engine.detect_project

    def counting(*a: Any, **k: Any) -> Any:
        runs[0] += 1
        return detect(*a, **k)

    monkeypatch.setattr(engine, "detect_project", counting)
    return runs


def test_an_edit_the_overview_did_not_read_reuses_it(s: Scanner, monkeypatch: pytest.MonkeyPatch) -> None:
    """The learning rate changed: nothing the overview read (model configs, launches, frameworks...) has another answer,
    so the last audit's overview is taken with its reads and its accumulator writes, and the report is the cold scan's.
    A second edit, from the log that reused it, is judged on the kept reads. Catches: the overview's reads not kept in the
    log (the second edit would see none), or the overview rebuilt on every audit."""
    runs = _count_overviews(monkeypatch)
    s.edit("train.py", _lr)
    report, reused = s.warm()
    assert reused is not None and runs[0] == 0
    assert report == s.cold()
    before = runs[0]  # (the cold scan above ran it once)
    s.edit("model.py", lambda t: t.replace("n_layer: int = 12", "n_layer: int = 24"))
    report, _reused = s.warm()
    assert runs[0] == before + 1  # the model's depth is an overview read: it ran again
    assert report == s.cold()


def test_an_edit_the_overview_read_reruns_it(s: Scanner, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's depth changed (``n_layer`` 12 to 24): the overview's estimated size reads it, so the overview runs
    again and the report is the cold scan's, with the new size. Catches: an overview reused whatever changed."""
    before = json.loads(s.cold())["project"]["estimated_params"]
    runs = _count_overviews(monkeypatch)
    s.edit("model.py", lambda t: t.replace("n_layer: int = 12", "n_layer: int = 24"))
    report, _reused = s.warm()
    assert runs[0] == 1
    cold = s.cold()
    assert report == cold and json.loads(cold)["project"]["estimated_params"] != before
