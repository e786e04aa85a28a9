"""``Facts._in_order`` (the union of two index answers in repository order) is recorded as the order of the records
filed under those keys (``("<", index, *keys)``), not as a read of every touched file's whole record list.

So a check that merges index answers (``calls("torch.*")``, ``calls_where``, two names at once) is reused after an edit
that leaves those records as they were, and runs when their order in a file changes. Each test names the mutation of
the recording it catches.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.facts import Facts
from checks.facts.types import Call, FileFacts
from checks.query_log import Recorder, attributes, dirty_reads, file_digests, share_hashes

from .test_engine_check_reuse import Scanner, _lr


def _call(name: str, line: int) -> Call:
    return Call(path="train.py", line=line, name=name, args=(), kwargs={}, text="pkg.a(); pkg.b()")


def _files(order: list[str]) -> list[FileFacts]:
    """train.py calls ``pkg.a`` and ``pkg.b`` on one line, in ``order``; other.py calls ``pkg.a``."""
    return [FileFacts("train.py", "python", calls=[_call(n, 3) for n in order]),
            FileFacts("other.py", "python", calls=[Call(path="other.py", line=1, name="pkg.a", args=(), kwargs={}, text="pkg.a()")])]


def _recorded(files: list[FileFacts]) -> tuple[Facts, set[tuple[str, ...]], list]:
    rec = Recorder()
    facts = rec.watch(Facts(files))
    rec.begin("X")
    got = facts.for_check("X").calls("pkg.*")  # two last segments, "a" and "b": two pools merged in repository order
    return facts, rec.per["X"], got


def test_an_order_read_is_recorded_as_the_keys_order_not_the_files_lists() -> None:
    """Catches: ``_in_order`` reading the touched files' lists through the recording views (every such check would be
    dirty after any edit of those files) or recording nothing about the order."""
    _facts, deps, got = _recorded(_files(["pkg.a", "pkg.b"]))
    assert [c.name for c in got] == ["pkg.a", "pkg.b", "pkg.a"]
    assert ("<", "calls_by_short", "a", "b") in deps
    assert not any(d[0] == "f" and d[2] == "calls" for d in deps)


def test_a_changed_order_is_dirty_though_each_keys_records_are_the_same() -> None:
    """train.py's calls ``a, b, a`` become ``a, a, b`` with every record unchanged (same line, same text) and the
    distinct names in the same order: each key's answer is the same, only the merged order differs, and only the order
    read says so. Catches: an order read hashed without its order (sorted, or as the keys' answers), or not compared."""
    before = _files(["pkg.a", "pkg.b", "pkg.a"])
    facts, deps, got = _recorded(before)
    wholes, attrs = attributes(deps)
    log = {"by_key": {"k": file_digests(before[0], wholes | attrs.get("train.py", frozenset()))}, "keys": {"train.py": "k"},
           "hashes": share_hashes(deps, [facts])}
    after = _files(["pkg.a", "pkg.a", "pkg.b"])
    assert dirty_reads(log, {"train.py": after[0]}, deps) == {("<", "calls_by_short", "a", "b")}
    _f, _d, now = _recorded(after)
    assert [c.name for c in now] != [c.name for c in got]  # the answer did change
    assert dirty_reads(log, {"train.py": _files(["pkg.a", "pkg.b", "pkg.a"])[0]}, deps) == set()  # the same order: clean


def test_a_check_merging_index_answers_is_reused_when_its_records_are_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The optimizer's learning rate changed in train.py: I1 and I2 merge call names by pattern (``calls_where``) over
    calls of train.py whose records did not change, so they are reused; the report is a cold ``-j1`` scan's.
    Catches: the order read recorded as the file's whole call list (I1 and I2 would run)."""
    s = Scanner(tmp_path, monkeypatch)
    first, reused = s.warm()
    assert reused == set() and first == s.cold()
    s.edit("train.py", _lr)
    report, reused = s.warm()
    assert reused is not None and {"I1", "I2"} <= reused and "G1" not in reused
    assert report == s.cold()
