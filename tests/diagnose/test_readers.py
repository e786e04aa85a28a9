"""nvidia-smi / dmon, NCCL, memory, training logs and Nsight inputs, each on fixtures in the real tools' formats."""

from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path

import pytest

from diagnose import gpuutil, memory, nccl, nsys, trainlog
from diagnose.core import diagnose
from diagnose.sources import detect

FIX = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(("name", "kind"), [
    ("nvidia-smi-sawtooth.csv", "nvidia-smi"), ("dmon.txt", "dmon"), ("nccl-2node-socket.log", "nccl-log"),
    ("megatron-8gpu.log", "train-log"), ("hf-trainer.log", "train-log"), ("nanogpt.log", "train-log"),
    ("memory_summary.txt", "memory-summary"), ("memory_stats.json", "memory-stats"), ("nsys_stats_kern_sum.csv", "nsys-csv"),
    ("kineto-cpu-gloo/rank-0.pt.trace.json.gz", "kineto"), ("make_kineto_cpu_gloo.py", None),
])
def test_detect_by_content(name: str, kind: str | None) -> None:
    assert detect(FIX / name) == kind


def test_detect_ignores_the_file_name(tmp_path: Path) -> None:
    p = tmp_path / "rank0.pt.trace.json"
    p.write_text("step 1 loss 2.0\n")
    assert detect(p) is None
    q = tmp_path / "whatever.bin"
    q.write_bytes((FIX / "dmon.txt").read_bytes())
    assert detect(q) == "dmon"


def test_nvidia_smi_sawtooth_and_steady() -> None:
    s = gpuutil.summarise(gpuutil.read_smi_csv(FIX / "nvidia-smi-sawtooth.csv"), {})
    assert [g["index"] for g in s] == [0, 1]
    assert s[0]["sawtooth"] and s[0]["drops"] == 10 and s[0]["period_s"] == 6.0
    steady = gpuutil.summarise(gpuutil.read_smi_csv(FIX / "nvidia-smi-steady.csv"), {})
    assert not steady[0]["sawtooth"] and steady[0]["mean_pct"] > 95


def test_dmon_with_date_columns_and_repeated_headers() -> None:
    series = gpuutil.read_dmon(FIX / "dmon.txt")
    assert sorted(series) == ["0", "1"] and len(series["0"].util) == 48
    g = gpuutil.summarise(series, {})[0]
    assert g["sawtooth"] and g["period_s"] == 4.0


def test_irregular_drops_are_not_a_sawtooth() -> None:
    s = gpuutil.Series("0", times=[float(t) for t in range(40)], util=[100.0] * 40)
    for t in (3, 4, 7, 30):  # drops at 3, 7, 30: intervals 4 and 23 s
        s.util[t] = 0.0
    res = gpuutil.sawtooth(s, 10, 60, 3, 0.5)
    assert res["drops"] == 3 and not res["sawtooth"]


def test_nccl_multinode_socket_tp_span() -> None:
    info = nccl.read(FIX / "nccl-2node-socket.log", "x")
    assert info["version"] == "2.21.5" and info["nodes"] == 2
    assert info["transports"] == ["NET/Socket", "P2P"]
    assert info["env"]["NCCL_IB_DISABLE"] == "1"
    assert set(info["algorithms"]) == {"ring", "tree"}
    ids = {f["id"]: f for f in nccl.findings(info)}
    assert ids["nccl-socket"]["line"] == 20
    assert ids["tp-spans-nodes"]["check"] == "A4"


def test_nccl_single_node_ib_is_clean() -> None:
    info = nccl.read(FIX / "nccl-1node-ib.log", "x")
    assert info["transports"] == ["P2P"] and info["network"] == ["IB"] and info["nodes"] == 1
    assert nccl.findings(info) == []


def test_gdr_off_on_multinode() -> None:
    info = {"nodes": 2, "transports": ["NET/IB", "P2P"], "gdr": False, "gdr_line": 7, "first_line": {}}
    assert [f["id"] for f in nccl.findings(info)] == ["gdr-off"]


def test_megatron_scaling_efficiency() -> None:
    a = trainlog.read(FIX / "megatron-8gpu.log")
    b = trainlog.read(FIX / "megatron-16gpu.log")
    assert a["format"] == "megatron" and a["gpus"] == 8 and a["step_time_ms"] == pytest.approx(2100.4, abs=0.1)
    assert a["tflops_per_gpu"] == 179.4
    sc = trainlog.scaling([("a", a), ("b", b)])
    # samples/s: 256/2.1004 s -> 121.9 on 8 GPUs; 512/3.3034 s -> 155.0 on 16: 155.0 / (2 x 121.9) = 63.6%
    assert sc["gpus"] == [8, 16] and sc["unit"] == "samples/s" and sc["efficiency_pct"] == pytest.approx(63.6, abs=0.1)
    trainlog.add_mfu(a, {"hardware": "h100"})
    assert a["mfu_pct"] == round(100 * 179.4 / 989, 1)


def test_hf_trainer_and_nanogpt_logs() -> None:
    hf = trainlog.read(FIX / "hf-trainer.log")
    assert hf["samples_per_s"] == 27.79
    nano = trainlog.read(FIX / "nanogpt.log")
    assert nano["step_time_ms"] == pytest.approx(1320.0, abs=2) and nano["mfu_pct"] == 31.5  # the warm-up iteration is dropped


def test_mfu_from_tokens_and_model_size(tmp_path: Path) -> None:
    p = tmp_path / "train.log"
    p.write_text("".join(f"step {i} | loss 2.0 | 20,000 tokens/s\n" for i in range(8)))
    run = trainlog.read(p)
    trainlog.add_mfu(run, {"model_params": 7e9, "gpus": 8, "hardware": "a100"})
    assert run["mfu_pct"] == round(100 * 6 * 7e9 * 20000 / 8 / 1e12 / 312, 1)


def test_memory_summary_and_stats() -> None:
    s = memory.read_summary(FIX / "memory_summary.txt")
    assert s["peak_allocated_mb"] == 48133 and s["peak_reserved_mb"] == 78310
    assert s["fragmentation_pct"] == round(100 * (78310 - 48133) / 78310, 1)
    assert s["alloc_retries"] == 14 and s["ooms"] == 0 and s["segments_freed"] == 694
    j = memory.read_stats(FIX / "memory_stats.json")
    assert j["peak_allocated_mb"] == round(50471157760 / 2**20, 1) and j["alloc_retries"] == 0


def _snapshot() -> dict:
    blocks = [{"address": 0, "size": 2 << 20, "requested_size": 2 << 20, "state": "active_allocated", "frames": []}]
    segs = [{"device": 0, "address": 0, "total_size": 20 << 20, "stream": 0, "segment_type": "large", "allocated_size": 2 << 20,
             "active_size": 2 << 20, "requested_size": 2 << 20, "blocks": blocks}]
    trace = [{"action": "segment_alloc", "addr": 0, "size": 20 << 20, "stream": 0, "frames": []},
             {"action": "alloc", "addr": 0, "size": 12 << 20, "stream": 0, "frames": [{"filename": "train.py", "line": 3, "name": "f"}]},
             {"action": "free_requested", "addr": 0, "size": 10 << 20, "stream": 0},
             {"action": "free_completed", "addr": 0, "size": 10 << 20, "stream": 0},
             {"action": "segment_free", "addr": 0, "size": 4 << 20, "stream": 0},
             {"action": "segment_alloc", "addr": 0, "size": 4 << 20, "stream": 0},
             {"action": "oom", "addr": 0, "size": 64 << 30, "stream": 0}]
    return {"segments": segs, "device_traces": [trace], "allocator_settings": {"expandable_segments": False}}


def test_snapshot_is_read_as_plain_containers(tmp_path: Path) -> None:
    p = tmp_path / "snapshot.pickle"
    p.write_bytes(pickle.dumps(_snapshot(), protocol=4))
    assert detect(p) == "memory-snapshot"
    m = memory.read_snapshot(p)
    # now: 20 MiB reserved, 2 MiB allocated; the replay's peak was 10 MiB above the end state
    assert m["peak_reserved_mb"] == 20.0 and m["peak_allocated_mb"] == 12.0
    assert m["ooms"] == 1 and m["segments_freed"] == 1


class _Evil:
    def __reduce__(self):  # what a malicious snapshot would carry
        import os

        return (os.system, ("echo pwned > /tmp/should-not-exist",))


def test_snapshot_with_any_class_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "snapshot.pickle"
    p.write_bytes(pickle.dumps({"segments": [], "x": _Evil()}, protocol=4))
    with pytest.raises(memory.RefusedPickle, match=r"(posix|os)\.system"):
        memory.read_snapshot(p)
    rep = diagnose([str(p)])
    assert "only plain containers" in rep["inputs"][0]["skipped"]
    q = tmp_path / "snap2.pickle"

    class Point:  # a plain class is refused too: no class is ever looked up
        pass

    globals()["Point"] = Point
    Point.__qualname__ = "Point"
    q.write_bytes(pickle.dumps({"segments": [Point()]}, protocol=4))
    with pytest.raises(memory.RefusedPickle):
        memory.read_snapshot(q)


def test_nsys_stats_csv() -> None:
    r = nsys.read_csv(FIX / "nsys_stats_kern_sum.csv", {})
    assert r["tables"] == 3
    assert r["kernel_time_ms"]["communication"] == pytest.approx(1015.87, abs=0.01)
    assert r["kernel_time_ms"]["memory"] == pytest.approx(41.39, abs=0.01)
    assert r["sync_points"][0]["name"] == "cudaStreamSynchronize" and r["sync_points"][0]["count"] == 96
    assert not any(k["name"].startswith("cuda") for k in r["top_kernels"])


def make_nsys_sqlite(path: Path) -> None:
    """The tables and columns of ``nsys export --type sqlite`` that the reader uses (2023-2024 schema)."""
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
            contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
            shortName INTEGER NOT NULL, gridX INTEGER, blockX INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
            contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER, globalTid INTEGER,
            correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER, callchainId INTEGER);
    """)
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "sm90_xmma_gemm_bf16bf16_bf16f32"), (2, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"),
                                                          (3, "cudaLaunchKernel_v7000"), (4, "cudaStreamSynchronize_v3020")])
    # device 0: gemm 0-50 us, nccl 40-80 us, gemm 100-140 us; device 1: one gemm
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, demangledName, shortName) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [(0, 50_000, 0, 7, 11, 1, 1), (40_000, 80_000, 0, 20, 12, 2, 2), (100_000, 140_000, 0, 7, 13, 1, 1),
                    (0, 10_000, 1, 7, 21, 1, 1)])
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, correlationId, copyKind) VALUES (85000, 95000, 0, 7, 14, 1)")
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, correlationId, nameId) VALUES (?, ?, ?, ?)",
                   [(-5000, -1000, 11, 3), (-900, -500, 12, 3), (96_000, 99_000, 13, 3), (81_000, 99_500, 0, 4)])
    db.commit()
    db.close()


def test_nsys_sqlite_read_only(tmp_path: Path) -> None:
    p = tmp_path / "report1.sqlite"
    make_nsys_sqlite(p)
    before = p.read_bytes()
    p.chmod(0o444)
    assert detect(p) == "nsys-sqlite"
    res = {r["device"]: r for r in nsys.read_sqlite(p, {})}
    d0 = res[0]
    # span 0..140 = 140 us; busy 0..80, 85..95, 100..140 = 130; compute 0..50 + 100..140 = 90; comm 40..80 overlaps compute 10 of 40
    assert d0["span_ms"] == 0.14 and d0["idle_pct"] == round(100 * 10 / 140, 2)
    assert d0["compute_pct"] == round(100 * 90 / 140, 2) and d0["comm_comp_overlap_pct"] == 25.0
    assert d0["sync_points"][0]["name"] == "cudaStreamSynchronize"
    assert res[1]["compute_pct"] == 100.0
    assert p.read_bytes() == before
    rep = diagnose([str(p)])
    assert [r["rank"] for r in rep["ranks"]] == [0, 1] and rep["ranks"][0]["source"] == "nsys"


def test_unknown_and_empty_inputs_are_listed(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "empty.json").write_text("")
    rep = diagnose([str(tmp_path)])
    assert {i["path"].split("/")[-1]: i["kind"] for i in rep["inputs"]} == {"notes.txt": "unknown", "empty.json": "unknown"}
    assert rep["verdict"]["bottleneck"] == "needs-profiling"


def test_dmon_default_columns(tmp_path: Path) -> None:
    lines = ["# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk ",
             "# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz "]
    for i in range(30):
        sm = 0 if i % 5 == 4 else 97
        lines.append(f"    0    312     61     70     {sm:>2}     45      0      0      0      0   1593   1410 ")
    p = tmp_path / "dmon.log"
    p.write_text("\n".join(lines) + "\n")
    assert detect(p) == "dmon"
    g = gpuutil.summarise(gpuutil.read_dmon(p), {})[0]
    assert g["samples"] == 30 and g["drops"] == 6 and g["sawtooth"] and g["period_s"] == 5.0


def test_deepspeed_and_lightning_lines() -> None:
    assert detect(FIX / "lightning-deepspeed.log") == "train-log"
    run = trainlog.read(FIX / "lightning-deepspeed.log")
    assert run["format"] == "deepspeed" and run["samples_per_s"] == 41.8  # median after the two warm-up reports
    assert run["gpus"] == 8
    assert run["step_time_ms"] == pytest.approx(1000 / 0.82, abs=1)
