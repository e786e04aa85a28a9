"""Kineto traces: streaming reader, HTA's definitions on generated GPU-shaped traces, real CPU traces, damaged files."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from diagnose import intervals as iv
from diagnose import kineto
from diagnose.core import diagnose
from diagnose.jsonstream import TraceFormatError, stream_trace

from .tracegen import RankSpec, write_ranks, write_trace

FIX = Path(__file__).parent / "fixtures"


def _events(text: str) -> tuple[dict, list[dict]]:
    out: list[dict] = []
    meta, n = stream_trace(io.StringIO(text), out.append)
    assert n == len(out)
    return meta, out


def test_stream_reads_keys_around_trace_events_and_chunk_boundaries(monkeypatch: pytest.MonkeyPatch) -> None:
    import diagnose.jsonstream as js

    monkeypatch.setattr(js, "CHUNK", 7)  # every value crosses a chunk boundary
    text = json.dumps({"schemaVersion": 1, "distributedInfo": {"rank": 3}, "traceEvents": [{"ph": "X", "name": "a", "ts": 1.5, "dur": 12345},
                                                                                           {"ph": "X", "name": "b\\u00e9", "ts": 2}],
                       "traceName": "x", "baseTimeNanoseconds": 1700000000000000000})
    meta, evs = _events(text)
    assert meta["distributedInfo"] == {"rank": 3} and meta["baseTimeNanoseconds"] == 1700000000000000000
    assert [e["name"] for e in evs] == ["a", "b\\u00e9"] and evs[0]["dur"] == 12345


def test_stream_empty_and_not_an_object() -> None:
    assert _events('{"traceEvents": []}') == ({}, [])
    with pytest.raises(TraceFormatError, match="expected a JSON object"):
        _events("[1, 2]")


def test_truncated_trace_keeps_events_read_so_far(tmp_path: Path) -> None:
    full = write_trace(tmp_path / "r.pt.trace.json", RankSpec(steps=4))
    data = full.read_bytes()
    cut = tmp_path / "cut.pt.trace.json"
    cut.write_bytes(data[: int(len(data) * 0.7)])
    with pytest.raises(TraceFormatError) as exc:
        stream_trace(io.StringIO(cut.read_text()), lambda e: None)
    assert exc.value.truncated and exc.value.events > 100
    rt = kineto.read(cut, "cut.pt.trace.json")
    assert rt.truncated and "analysed" in rt.truncated
    assert rt.result["gpu_events"] > 0
    report = diagnose([str(cut)])
    assert "truncated" in report["inputs"][0]


def test_corrupt_trace_is_skipped_with_the_reason(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pt.trace.json"
    bad.write_text('{"schemaVersion": 1, "traceEvents": [{"ph": "X", "ts": 1, "dur": 2} {"oops"}]}')
    report = diagnose([str(bad)])
    assert report["inputs"][0]["kind"] == "kineto"
    assert "unreadable trace" in report["inputs"][0]["skipped"]
    gz = tmp_path / "cut.pt.trace.json.gz"
    gz.write_bytes(gzip.compress(b'{"schemaVersion": 1, "traceEvents": [' + b'{"ph": "X"},' * 5000)[:2000])
    report = diagnose([str(gz)])
    assert report["inputs"][0]["skipped"].startswith("unreadable")


def test_kernel_types_follow_hta_patterns() -> None:
    assert kineto.kernel_type("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)") == "communication"
    assert kineto.kernel_type("ncclKernel_AllGather_RING_LL_Sum_int8_t") == "communication"
    assert kineto.kernel_type("Memcpy HtoD (Pinned -> Device)") == "memory"
    assert kineto.kernel_type("Memset (Device)") == "memory"
    assert kineto.kernel_type("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn") == "computation"
    assert kineto.kernel_type("Event Sync") == "other"


def test_interval_union_and_overlap() -> None:
    m = iv.merge([(0, 10), (5, 12), (12, 13), (20, 30)])
    assert m == [(0, 13), (20, 30)]
    assert iv.total(m) == 23
    assert iv.intersection_total(m, iv.merge([(8, 22)])) == 7
    assert iv.busy_bins([(0, 5)], 0, 10, 2) == [1.0, 0.0]


def _hand_trace(tmp_path: Path) -> Path:
    """Two steps and a cut one; kernels placed by hand so every figure can be worked out on paper."""
    def ev(name: str, cat: str, ts: float, dur: float, **args: object) -> dict:
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}

    events = [
        ev("ProfilerStep#1", "user_annotation", 0, 100), ev("ProfilerStep#2", "user_annotation", 100, 100),
        ev("ProfilerStep#3", "user_annotation", 200, 50),
        ev("cudaLaunchKernel", "cuda_runtime", 1, 2, correlation=1), ev("cudaLaunchKernel", "cuda_runtime", 2, 2, correlation=2),
        ev("cudaLaunchKernel", "cuda_runtime", 101, 2, correlation=3), ev("cudaLaunchKernel", "cuda_runtime", 201, 2, correlation=4),
        # compute 10..60 and 110..150; comm 40..80 (20 of its 40 us overlap compute); the 4th kernel is launched in the cut step
        ev("gemm", "kernel", 10, 50, stream=7, correlation=1), ev("ncclDevKernel_AllReduce", "kernel", 40, 40, stream=20, correlation=2),
        ev("gemm", "kernel", 110, 40, stream=7, correlation=3), ev("gemm", "kernel", 210, 40, stream=7, correlation=4),
        ev("gemm_orphan", "kernel", 160, 5, stream=7, correlation=99),  # its launch is not in the trace: HTA drops it
        # the device-side copy of a step annotation carries no stream/correlation (as Kineto writes it): not a GPU event
        {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7, "ts": 5, "dur": 150, "args": {"External id": 1}},
    ]
    p = tmp_path / "hand.pt.trace.json"
    p.write_text(json.dumps({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": events}))
    return p


def test_hta_definitions_on_a_hand_worked_trace(tmp_path: Path) -> None:
    r = kineto.read(_hand_trace(tmp_path), "hand").result
    # kept: gemm 10-60, nccl 40-80, gemm 110-150 -> span 10..150 = 140; busy 10..80 (70) + 110..150 (40) = 110; idle 30
    assert r["gpu_events"] == 3 and r["filtered_to_steps"]
    assert r["span_ms"] == 0.14
    assert r["idle_pct"] == round(100 * 30 / 140, 2)
    assert r["compute_pct"] == round(100 * 90 / 140, 2)
    assert r["non_compute_pct"] == round(100 * 20 / 140, 2)
    assert r["comm_comp_overlap_pct"] == 50.0
    assert r["kernel_types"] == {"computation": round(100 * 90 / 130, 2), "communication": round(100 * 40 / 130, 2), "memory": 0.0}
    assert r["steps"]["count"] == 2 and r["steps"]["step_time_ms"] == 0.1


def test_generated_multirank_traces_scenarios(tmp_path: Path) -> None:
    write_ranks(tmp_path / "starved", 2, loader_us=3000, sync_item=True)
    rep = diagnose([str(tmp_path / "starved")])
    assert [r["rank"] for r in rep["ranks"]] == [0, 1]
    assert rep["verdict"]["bottleneck"] == "data-io-bound"
    assert rep["ranks"][0]["idle_split"]["dataloader_pct_of_idle"] > 80
    assert rep["recommendations"][0]["check"] == "F1"

    write_ranks(tmp_path / "comm", 4, comm_us=3000, overlap=0.1, gz=True)
    rep = diagnose([str(tmp_path / "comm")])
    assert rep["verdict"]["bottleneck"] == "communication-bound"
    assert all(r["comm_comp_overlap_pct"] < 15 for r in rep["ranks"])
    assert rep["verdict"]["reasons"][0]["evidence"]["path"].endswith(".pt.trace.json.gz")

    write_ranks(tmp_path / "busy", 2, kernels_per_step=60)
    rep = diagnose([str(tmp_path / "busy")])
    assert rep["verdict"]["bottleneck"] == "compute-bound"
    assert all(r["compute_pct"] > 95 for r in rep["ranks"])

    write_ranks(tmp_path / "strag", 4, slow_rank=2, slow=1.5)
    rep = diagnose([str(tmp_path / "strag")])
    assert [s["rank"] for s in rep["stragglers"]] == [2]


def test_real_cpu_kineto_traces_with_distributed_info() -> None:
    rep = diagnose([str(FIX / "kineto-cpu-gloo")])
    assert [i["rank"] for i in rep["inputs"]] == [0, 1]
    assert all(i["note"].startswith("no GPU events") for i in rep["inputs"])
    r = rep["ranks"][0]
    assert r["world_size"] == 2
    assert r["steps"]["count"] >= 1 and r["steps"]["step_time_ms"] > 0
    assert any(s["name"] == "aten::item" for s in r["sync_points"])
    assert rep["verdict"]["bottleneck"] == "needs-profiling"


def test_gzip_cut_mid_stream_keeps_what_was_read(tmp_path: Path) -> None:
    full = write_trace(tmp_path / "r.pt.trace.json.gz", RankSpec(steps=120), gz=True)  # several MB: past the first 1 MB read
    data = full.read_bytes()
    cut = tmp_path / "cut.pt.trace.json.gz"
    cut.write_bytes(data[: len(data) * 3 // 4])
    rep = diagnose([str(cut)])
    entry = rep["inputs"][0]
    assert entry["kind"] == "kineto" and "truncated" in entry and "skipped" not in entry
    assert rep["ranks"][0]["gpu_events"] > 100 and rep["ranks"][0]["truncated"]
