"""The facts cache's directory index: unchanged files are not read again, and the report is the cold scan's.

A re-scan with ``--cache`` trusts a file's recorded facts only while its stat signature (size, mtime, ctime,
inode, device) is the one recorded, only for files that were not changed just before the scan, and only from
an index whose HMAC proves that this cache wrote it.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

import checks.tree_index as tree_index
from accel_audit.cli import main
from checks.cache import TREE_MAGIC, DirFactsCache
from checks.engine import TREE_VERSION, AuditOptions, audit_path
from checks.source import Limits, ReadStats, Unread, iter_directory

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "repos" / "hf_deepspeed"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of a fixture with a data JSON the sniff skips; files written before the scan count as settled."""
    monkeypatch.setattr(tree_index, "RACY_NS", 0)  # the files here were written a moment ago
    dst = tmp_path / "repo"
    shutil.copytree(FIXTURE, dst)
    golden = {"lm loss": {"start_step": 1, "values": {str(i): 10.0 - i / 100 for i in range(1, 400)}}}
    (dst / "golden_values.json").write_text(json.dumps(golden, indent=4))
    (dst / "blob.yaml").write_bytes(b"a: 1\n" + b"\x00" * 10)
    return dst


def _scan(path: Path, *extra: str) -> str:
    out = path.parent / "report.json"
    assert main(["scan", str(path), "--format", "json", "-o", str(out), "--jobs", "1", *extra]) == 0
    return out.read_text()


def _files(path: Path, cache: DirFactsCache | None) -> tuple[list[tuple[str, object]], ReadStats]:
    stats = ReadStats()
    index = cache.open_tree(path, TREE_VERSION) if cache is not None else None
    return list(iter_directory(path, Limits(), stats, index)), stats


def test_a_warm_scan_reads_no_unchanged_file_and_reports_the_same(repo: Path, tmp_path: Path) -> None:
    cold = _scan(repo)
    cache = tmp_path / "cache"
    assert _scan(repo, "--cache", str(cache)) == cold  # fills the cache: index and pack
    assert len(list((cache / "trees").glob("*.idx"))) == 1 and len(list((cache / "trees").glob("*.pack"))) == 1
    files, stats = _files(repo, DirFactsCache(cache, private=True))
    assert files and all(isinstance(d, Unread) for _p, d in files)  # nothing read
    plain_files, plain_stats = _files(repo, None)
    assert [p for p, _ in files] == [p for p, _ in plain_files]
    assert stats == plain_stats  # counts, bytes and the skipped files with their reasons (data, binary)
    assert any(s.reason.startswith("data:") for s in stats.skipped) and any(s.reason == "binary" for s in stats.skipped)
    assert _scan(repo, "--cache", str(cache)) == cold


def test_a_change_that_keeps_size_and_mtime_is_still_seen(repo: Path, tmp_path: Path) -> None:
    """ctime changes with every write and cannot be set back: a same-size edit with the old mtime restored is read."""
    cache = tmp_path / "cache"
    _scan(repo, "--cache", str(cache))
    target = next(p for p in sorted(repo.rglob("*.py")) if b"bf16" in p.read_bytes() or b"torch" in p.read_bytes())
    before = target.stat()
    data = target.read_bytes()
    edited = data.replace(b"torch", b"TORCH", 1)
    assert edited != data and len(edited) == len(data)
    target.write_bytes(edited)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size and target.stat().st_mtime_ns == before.st_mtime_ns
    files, _ = _files(repo, DirFactsCache(cache, private=True))
    read = {p for p, d in files if not isinstance(d, Unread)}
    assert read == {str(target.relative_to(repo))}
    assert _scan(repo, "--cache", str(cache)) == _scan(repo)


def test_files_changed_just_before_the_scan_are_not_vouched_for(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_index, "RACY_NS", 3600 * 10**9)  # everything here changed "just now"
    cache = tmp_path / "cache"
    _scan(repo, "--cache", str(cache))
    files, _ = _files(repo, DirFactsCache(cache, private=True))
    assert files and not any(isinstance(d, Unread) for _p, d in files)
    assert _scan(repo, "--cache", str(cache)) == _scan(repo)


def test_added_and_removed_files_and_a_lost_pack(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _scan(repo, "--cache", str(cache))
    (repo / "extra_train.py").write_text("import torch\nmodel = torch.compile(model)\n")
    os.utime(repo / "extra_train.py", ns=(1, 1))
    victim = next(p for p in sorted(repo.rglob("*.py")) if p.name != "extra_train.py")
    victim.unlink()
    assert _scan(repo, "--cache", str(cache)) == _scan(repo)
    for pack in (cache / "trees").glob("*.pack"):
        pack.unlink()  # the index vouches for files whose facts are gone: they are read after all
    assert _scan(repo, "--cache", str(cache)) == _scan(repo)
    assert list((cache / "trees").glob("*.pack"))  # and the pack is written again
    files, _ = _files(repo, DirFactsCache(cache, private=True))
    assert all(isinstance(d, Unread) for _p, d in files)
    assert _scan(repo, "--cache", str(cache)) == _scan(repo)


def test_a_forged_or_altered_index_is_ignored_and_never_unpickled(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold = _scan(repo)
    _scan(repo, "--cache", str(cache))
    sentinel = tmp_path / "ran"

    class Exploit:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (exec, (f"open({str(sentinel)!r}, 'w').write('pwned')",))

    for f in sorted((cache / "trees").glob("*.idx")) + sorted((cache / "trees").glob("*.pack")):
        blob = f.read_bytes()
        flipped = bytearray(blob)
        flipped[-3] ^= 1
        f.write_bytes(bytes(flipped))
        assert _scan(repo, "--cache", str(cache)) == cold
        f.write_bytes(TREE_MAGIC + b"\0" * 32 + pickle.dumps(Exploit()))
        assert _scan(repo, "--cache", str(cache)) == cold
        assert not sentinel.exists()


def test_an_index_of_another_directory_or_version_is_not_used(repo: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    _scan(repo, "--cache", str(cache_dir))
    other = tmp_path / "other"
    shutil.copytree(repo, other, copy_function=shutil.copy2)
    idx = next((cache_dir / "trees").glob("*.idx"))
    cache = DirFactsCache(cache_dir, private=True)
    real_other = os.path.realpath(other)
    other_idx, _ = cache._tree_files(real_other)
    shutil.copy(idx, other_idx)  # an authentic index, but of another directory
    files, _ = _files(other, cache)
    assert not any(isinstance(d, Unread) for _p, d in files)
    index = DirFactsCache(cache_dir, private=True).open_tree(repo, TREE_VERSION + " (another)")
    assert index.old == {}


def test_the_index_follows_the_audit_options_cache_only_for_directories(repo: Path, tmp_path: Path) -> None:
    """``audit_path`` with a DirFactsCache gives the same audit as without, cold and warm."""
    cache = DirFactsCache(tmp_path / "cache", private=True)
    plain = audit_path(repo)
    for _ in range(2):
        warm = audit_path(repo, AuditOptions(cache=DirFactsCache(tmp_path / "cache", private=True)))
        assert [(r.id, r.status, r.evidence) for r in warm.results] == [(r.id, r.status, r.evidence) for r in plain.results]
        assert warm.stats == plain.stats
    assert cache.open_tree(repo, TREE_VERSION).old  # recorded
