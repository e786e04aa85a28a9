"""The context's facts (tests, docs, CI, ...) are indexed only when something reads more of them than their files: a
full warm audit that reuses the last context pass never builds them (0.05 s on Megatron-LM), and what it does read (the
report's parse errors) is recorded as it was. Each test names the mutation it catches."""

from __future__ import annotations

from pathlib import Path

import pytest

import checks.engine as engine
from checks.facts import Facts, extract_file
from checks.query_log import Recorder

from .test_engine_check_reuse import Scanner, _lr

FILES = {
    "train.py": b"import torch\n\nloss = torch.zeros(1)\nloss.backward()\n",
    "tests/test_a.py": b"def test_a(:\n    pass\n",  # a parse error
    "tests/test_b.py": b"import torch\n\n\ndef test_b():\n    torch.compile(lambda x: x)\n",
}


def test_the_context_files_are_read_without_building_their_indexes() -> None:
    """Its files and their parse errors, recorded per file as the built facts' would be, with no index built; anything
    else builds them, with the same answers as facts built at once. Catches: the files read unrecorded, or the indexes
    built for the files alone."""
    parsed = [extract_file(p, d) for p, d in FILES.items()]
    rec, ctx_rec = Recorder(), Recorder()
    _facts, context, roles = engine.split_facts(parsed, (), rec, ctx_rec)
    assert roles.by_path["tests/test_a.py"] not in engine.IN_SCOPE
    eager = Facts([ff for ff in parsed if ff.path.startswith("tests/")])
    assert context.errors() == eager.errors() and context.errors()
    assert context._built is None  # type: ignore[attr-defined]
    assert {("f", "tests/test_a.py", "error"), ("f", "tests/test_b.py", "error")} <= ctx_rec.deps
    assert [c.name for c in context.calls("torch.compile")] == [c.name for c in eager.calls("torch.compile")]
    assert context._built is not None  # type: ignore[attr-defined]


def test_a_reused_context_pass_leaves_the_context_unbuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The learning rate changed in train.py (no status changes): the context pass is reused and the context's facts are
    never indexed; the report is a cold ``-j1`` scan's. Catches: building them up front (split_facts) or for the log."""
    s = Scanner(tmp_path, monkeypatch)
    (s.repo / "tests").mkdir()
    (s.repo / "tests" / "test_compile.py").write_text("import torch\n\n\ndef test_c(model):\n    torch.compile(model)\n")
    first, _ = s.warm()
    assert first == s.cold()
    built: list[bool] = []
    real = engine._Deferred._s.fget  # type: ignore[attr-defined]

    def spy(self: engine._Deferred) -> dict:
        if self._built is None and self._files:
            built.append(True)
        return real(self)

    monkeypatch.setattr(engine._Deferred, "_s", property(spy))
    s.edit("train.py", _lr)
    report, reused = s.warm()
    assert reused is not None and not built
    assert report == s.cold()
