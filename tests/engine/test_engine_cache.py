"""The facts cache never runs what it loads: a planted pickle under a file's cache key is rejected, not executed."""

from __future__ import annotations

import json
import os
import pickle
import stat
from pathlib import Path

import pytest

from accel_audit.cli import main
from checks.cache import MAGIC, CacheDirError, DirFactsCache, open_entry, seal_entry
from checks.engine import build_facts, cache_key
from checks.facts import extract_file

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "repos" / "minimal_loop"


class _Exploit:
    """A pickle that, when loaded, writes a file: what an attacker with write access to the cache would plant."""

    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (exec, (f"open({str(self.sentinel)!r}, 'w').write('pwned')",))


def _planted(sentinel: Path) -> bytes:
    return pickle.dumps(_Exploit(sentinel))


def test_the_exploit_is_live_when_unpickled(tmp_path: Path) -> None:
    """The payload the tests below plant does run code when loaded as a bare pickle (the old cache did this)."""
    sentinel = tmp_path / "ran"
    pickle.loads(_planted(sentinel))
    assert sentinel.read_text() == "pwned"


def _files() -> list[tuple[str, bytes]]:
    return sorted((str(p.relative_to(FIXTURE)), p.read_bytes()) for p in FIXTURE.rglob("*.py"))


@pytest.mark.parametrize("forge", ["bare pickle", "our header, no key", "our header, another key"])
def test_a_planted_entry_is_rejected_and_the_file_parsed_again(tmp_path: Path, forge: str) -> None:
    cache = DirFactsCache(tmp_path / "cache", private=True)
    files = _files()
    path, data = files[0]
    sentinel = tmp_path / "ran"
    payload = _planted(sentinel)
    if forge == "bare pickle":
        blob = payload
    elif forge == "our header, no key":
        blob = MAGIC + b"\0" * 32 + payload
    else:
        import hashlib
        import hmac

        blob = MAGIC + hmac.new(b"a guessed key, not the cache's", payload, hashlib.sha256).digest() + payload
    entry = tmp_path / "cache" / cache_key(path, data)[:2] / cache_key(path, data)
    entry.parent.mkdir()
    entry.write_bytes(blob)

    facts = build_facts(files, cache=cache)
    assert not sentinel.exists()
    assert facts.files[path] == extract_file(path, data)  # parsed again, and the entry replaced by a good one
    assert open_entry(entry.read_bytes(), cache.key) == extract_file(path, data)


def test_an_altered_entry_is_a_miss(tmp_path: Path) -> None:
    key = os.urandom(32)
    ff = extract_file("train.py", b"import torch\nmodel = torch.compile(model)\n")
    blob = seal_entry(ff, key)
    assert open_entry(blob, key) == ff
    flipped = bytearray(blob)
    flipped[-5] ^= 1
    assert open_entry(bytes(flipped), key) is None
    assert open_entry(blob, os.urandom(32)) is None
    assert open_entry(b"", key) is None and open_entry(None, key) is None


def test_the_directory_key_is_private_and_kept(tmp_path: Path) -> None:
    d = tmp_path / "cache"
    first = DirFactsCache(d, private=True)
    key_file = d / "key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(first.key) == 32
    assert DirFactsCache(d, private=True).key == first.key  # entries stay valid across runs
    key_file.chmod(0o644)
    with pytest.raises(CacheDirError, match="key"):
        DirFactsCache(d, private=True)


def test_the_cli_scan_ignores_a_planted_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(FIXTURE), "--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    cache = tmp_path / "cache"
    sentinel = tmp_path / "ran"
    DirFactsCache(cache, private=True)
    for rel, data in _files():  # every Python file's entry is an exploit
        k = cache_key(rel, data)
        (cache / k[:2]).mkdir(exist_ok=True)
        (cache / k[:2] / k).write_bytes(_planted(sentinel))
    assert main(["scan", str(FIXTURE), "--format", "json", "--cache", str(cache)]) == 0
    assert json.loads(capsys.readouterr().out) == plain
    assert not sentinel.exists()
