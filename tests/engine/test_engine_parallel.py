"""Facts extracted in worker processes are the facts extracted in-process, in the same order."""

from __future__ import annotations

import json
from concurrent.futures import Executor, Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest

import checks.parallel
from accel_audit.cli import main
from checks.engine import DirFactsCache, build_facts
from checks.facts import extract_file
from checks.source import Limits, ReadStats, iter_directory

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "repos"


def _files(name: str) -> list[tuple[str, bytes]]:
    return list(iter_directory(FIXTURES / name, Limits(), ReadStats()))


def _records(facts: Any) -> list[tuple[str, str]]:
    return [(path, repr(ff)) for path, ff in facts.files.items()]


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """One file per batch: many batches, so the bounded window fills and drains; workers from the first file."""
    monkeypatch.setattr(checks.parallel, "BATCH_BYTES", 1)
    monkeypatch.setattr(checks.parallel, "LOCAL_FIRST_BYTES", 0)


def test_two_workers_give_the_same_facts_in_the_same_order(small_batches: None) -> None:
    files = _files("hf_deepspeed") + _files("megatron_pretrain")
    assert len(files) > 8
    assert _records(build_facts(files, jobs=2)) == _records(build_facts(files))


def test_workers_with_a_cache_mix_hits_and_misses_in_order(small_batches: None, tmp_path: Path) -> None:
    files = _files("llava_mllm")
    cache = DirFactsCache(tmp_path)
    build_facts(files[::2], cache=cache)  # every other file is cached
    mixed = build_facts(files, cache=cache, jobs=2)
    assert _records(mixed) == _records(build_facts(files))
    assert len([p for p in tmp_path.rglob("*") if p.is_file() and p.parent != tmp_path]) == len(files)  # the misses were cached too


class _BrokenPool(Executor):
    """A pool whose workers have died: every batch fails as a killed worker's would."""

    def __init__(self) -> None:
        self.submitted = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.submitted += 1
        fut: Future[Any] = Future()
        fut.set_exception(BrokenProcessPool("a worker died"))
        return fut


def test_a_broken_pool_falls_back_to_this_process(small_batches: None) -> None:
    files = _files("hf_deepspeed") + _files("megatron_pretrain")
    pool = _BrokenPool()
    slots = [(p, d, None, i) for i, (p, d) in enumerate(files)]
    out = list(checks.parallel.extract_parallel(slots, 2, lambda p, d: extract_file(p, d), executor=pool))
    assert [(p, repr(ff)) for p, _, ff, _, _ in out] == [(p, repr(extract_file(p, d))) for p, d in files]
    assert all(fresh for _, _, _, fresh, _ in out) and [tag for *_, tag in out] == list(range(len(files)))
    # batches already in flight when the first failure shows (at most 2 per worker + 1); none after it
    assert pool.submitted <= 5 < len(files)


class _LazyFuture(Future):  # type: ignore[type-arg]
    """A worker's answer that is still running until someone waits for it, then computed on the spot."""

    def __init__(self, fn: Any, args: tuple[Any, ...]) -> None:
        super().__init__()
        self._call = (fn, args)

    def done(self) -> bool:
        return self._call is None

    def result(self, timeout: float | None = None) -> Any:
        if self._call is not None:
            fn, args = self._call
            self._call = None
            self.set_result(fn(*args))
        return super().result(timeout)


class _BusyPool(_BrokenPool):
    """A pool whose workers are always busy: a batch is done only when the scan waits for it."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.submitted += 1
        return _LazyFuture(fn, args)


def test_this_process_extracts_a_batch_when_every_worker_is_busy(small_batches: None) -> None:
    """``jobs=2``: one worker; a batch that finds it with one batch running and one queued is extracted here, and the
    facts are the same, in the same order, as an extraction in this process."""
    files = _files("hf_deepspeed") + _files("megatron_pretrain")
    here: list[str] = []

    def local(p: str, d: bytes) -> Any:
        here.append(p)
        return extract_file(p, d)

    pool = _BusyPool()
    slots = [(p, d, None, i) for i, (p, d) in enumerate(files)]
    out = list(checks.parallel.extract_parallel(slots, 2, local, executor=pool))
    assert [(p, repr(ff)) for p, _, ff, _, _ in out] == [(p, repr(extract_file(p, d))) for p, d in files]
    assert [tag for *_, tag in out] == list(range(len(files)))
    assert here and pool.submitted and len(here) + pool.submitted == len(files)  # one file per batch: each went one way
    assert set(here).isdisjoint(p for p, _ in files[:2])  # the first two batches found the worker free


def test_scan_jobs_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(FIXTURES / "vllm_service"), "--format", "json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(["scan", str(FIXTURES / "vllm_service"), "--format", "json", "--jobs", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == one
    with pytest.raises(SystemExit) as exc:
        main(["scan", str(FIXTURES / "vllm_service"), "--jobs", "-1"])
    assert exc.value.code == 2 and "0 (one per CPU) or more" in capsys.readouterr().err


class _CountingPool(_BrokenPool):
    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.shut = True


def test_a_small_repository_starts_no_worker_and_a_large_one_does(monkeypatch: pytest.MonkeyPatch) -> None:
    files = _files("hf_deepspeed") + _files("megatron_pretrain")
    slots = [(p, d, None, i) for i, (p, d) in enumerate(files)]
    small = _CountingPool()
    out = list(checks.parallel.extract_parallel(slots, 2, lambda p, d: extract_file(p, d), executor=small))
    assert small.submitted == 0 and small.shut and len(out) == len(files)  # under LOCAL_FIRST_BYTES: all in this process
    monkeypatch.setattr(checks.parallel, "BATCH_BYTES", 1)
    monkeypatch.setattr(checks.parallel, "LOCAL_FIRST_BYTES", sum(len(d) for _, d in files) // 2)
    large = _CountingPool()
    out = list(checks.parallel.extract_parallel(slots, 2, lambda p, d: extract_file(p, d), executor=large))
    assert large.submitted > 0 and [(p, repr(ff)) for p, _, ff, _, _ in out] == [(p, repr(extract_file(p, d))) for p, d in files]


def test_a_platform_without_worker_processes_scans_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers are the default: where a pool cannot be made at all (no sem_open, as on some sandboxes) the scan goes on here."""

    def no_pool(*args: Any, **kwargs: Any) -> Executor:
        raise ImportError("This platform lacks a functioning sem_open implementation")

    monkeypatch.setattr(checks.parallel, "ProcessPoolExecutor", no_pool)
    monkeypatch.setattr(checks.parallel, "LOCAL_FIRST_BYTES", 0)
    files = _files("hf_deepspeed")
    assert _records(build_facts(files, jobs=2)) == _records(build_facts(files))


def test_a_workers_strings_load_as_the_scans_one_copy() -> None:
    """Two batches with the same source lines and names (two copies of a file) load with one object per equal string,
    and the same facts as an extraction in this process."""
    from checks.cache import loads_batch

    src = b"import torch\nloader = torch.utils.data.DataLoader(ds, num_workers=4, pin_memory=True)\nx = 'cuda:0'\n"
    strings: dict[Any, Any] = {}
    one, = loads_batch(checks.parallel._extract_batch([("a/train.py", src)]), strings)
    two, = loads_batch(checks.parallel._extract_batch([("b/train.py", src)]), strings)
    assert one.calls[0].text is two.calls[0].text and one.calls[0].name is two.calls[0].name
    assert one.calls[0].text == "loader = torch.utils.data.DataLoader(ds, num_workers=4, pin_memory=True)"
    here = extract_file("b/train.py", src)
    assert repr(two) == repr(here)
