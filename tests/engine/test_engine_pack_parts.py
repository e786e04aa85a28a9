"""A directory's pack of facts is kept in two parts, the files whose path puts them out of scope (tests, docs, CI, ...)
and the rest, each loaded on the first read of one of its files. A full warm audit that reuses the roles stands in for
the context files whose content the last recorded audit saw (their path and that audit's parse error), so when the
context pass is reused too, the context part is never unpickled. Every report here is a cold ``-j1`` scan's of the
edited tree; each test names the mutation it catches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import checks.cache as cache_mod

from .test_engine_check_reuse import Scanner, _lr

TESTS = {
    "tests/test_compile.py": "import torch\n\n\ndef test_c(model):\n    torch.compile(model)\n",
    "tests/test_broken.py": "def test_b(:\n    pass\n",  # a parse error, reported by every scan
}


class Loads:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parts: list[str] = []
        real = cache_mod._Pack.get

        def spy(pack: cache_mod._Pack, key: str, mac: bytes) -> object:
            if pack._facts is None:
                self.parts.append(pack.path.suffix)
            return real(pack, key, mac)

        monkeypatch.setattr(cache_mod._Pack, "get", spy)


@pytest.fixture
def s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Scanner, Loads]:
    s = Scanner(tmp_path, monkeypatch)
    (s.repo / "tests").mkdir()
    for rel, text in TESTS.items():
        (s.repo / rel).write_text(text)
    first, _ = s.warm()
    assert first == s.cold()
    assert sorted(p.suffix for p in (s.cache / "trees").glob("*.pack*")) == [".pack", ".pack1"]
    return s, Loads(monkeypatch)


def test_a_warm_audit_leaves_the_context_part_unloaded(s: tuple[Scanner, Loads]) -> None:
    """The learning rate changed: roles and context pass reused, only the main part is loaded, and the report (with
    the test's parse error) is a cold scan's. Catches: no stand-ins (the context part loaded), a stand-in's parse
    error not the last audit's (the report would lose it)."""
    scanner, loads = s
    scanner.edit("train.py", _lr)
    report, reused = scanner.warm()
    assert reused is not None and loads.parts == [".pack"]
    assert report == scanner.cold()
    assert [e[0] if isinstance(e, list) else e["path"] for e in json.loads(report)["scan"]["parse_errors"]] == ["tests/test_broken.py"]


def test_an_edit_the_roles_read_loads_every_part(s: tuple[Scanner, Loads]) -> None:
    """train.py no longer imports model.py: the roles are made again from every file's facts, so both parts load.
    Catches: stand-ins left in place for the roles (they would read a stand-in, or a file's facts would be missing)."""
    scanner, loads = s
    scanner.edit("train.py", lambda t: t.replace("from model import GPT, GPTConfig\n", ""))
    report, _ = scanner.warm()
    assert sorted(loads.parts) == [".pack", ".pack1"]
    assert report == scanner.cold()


def test_a_lost_context_part_is_read_and_written_again(s: tuple[Scanner, Loads]) -> None:
    """The context part is lost and ``torch.compile`` is added to train.py (a call the roles read: every file is loaded
    before the index is saved): the context files are read after all and the part is written again. Catches: a lost
    part not written again (the save decided before the stand-ins were loaded)."""
    scanner, _loads = s
    for part in (scanner.cache / "trees").glob("*.pack1"):
        part.unlink()
    scanner.edit("train.py", lambda t: t.replace("model = GPT(config).to(device)\n",
                                                 "model = GPT(config).to(device)\nmodel = torch.compile(model)\n"))
    report, _ = scanner.warm()
    assert report == scanner.cold()
    assert list((scanner.cache / "trees").glob("*.pack1"))
    report, _ = scanner.warm()
    assert report == scanner.cold()
