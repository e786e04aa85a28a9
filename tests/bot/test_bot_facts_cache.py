"""The App's facts cache (Redis, or the data directory without Redis): an entry planted by anyone who can write there
is rejected, never unpickled in the worker that holds the App's private key."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from bot.facts_cache import RedisFactsCache, facts_cache_key
from bot.runtime import Runtime
from checks.cache import DirFactsCache, seal_entry
from checks.engine import build_facts, cache_key
from checks.facts import extract_file

from .repos import BASE


class _Exploit:
    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (exec, (f"open({str(self.sentinel)!r}, 'w').write('pwned')",))


def _plant(rt: Runtime, key: str, blob: bytes) -> None:
    cache = rt.facts_cache
    if isinstance(cache, RedisFactsCache):
        rt.redis.set(cache.prefix + key, blob)
    else:
        assert isinstance(cache, DirFactsCache)
        (cache.dir / key[:2]).mkdir(exist_ok=True)
        (cache.dir / key[:2] / key).write_bytes(blob)


def test_a_planted_pickle_in_the_apps_cache_is_not_run(rt: Runtime, tmp_path: Path, backend: str) -> None:
    files = sorted((p, t.encode()) for p, t in BASE.items())
    path, data = next((p, d) for p, d in files if p.endswith(".py"))
    sentinel = tmp_path / "ran"
    _plant(rt, cache_key(path, data), pickle.dumps(_Exploit(sentinel)))
    facts = build_facts(files, cache=rt.facts_cache)
    assert not sentinel.exists()
    assert facts.files[path] == extract_file(path, data)
    assert rt.facts_cache.get(cache_key(path, data)) == extract_file(path, data)  # the good entry replaced the planted one


def test_entries_sealed_with_another_key_are_misses(rt: Runtime, rsa_key: tuple[str, bytes]) -> None:
    ff = extract_file("train.py", b"import torch\n")
    _plant(rt, "k" * 64, seal_entry(ff, facts_cache_key("another App's private key")))
    assert rt.facts_cache.get("k" * 64) is None
    _plant(rt, "k" * 64, seal_entry(ff, facts_cache_key(rsa_key[0])))  # what this App itself writes
    assert rt.facts_cache.get("k" * 64) == ff


def test_the_redis_cache_needs_a_real_key() -> None:
    with pytest.raises(ValueError):
        RedisFactsCache(object(), b"")
