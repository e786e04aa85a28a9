"""``accel-audit diagnose``: formats, the JSON contract, baseline comparison and gate, settings, the static-audit link."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from accel_audit.cli import main
from diagnose.config import parse_profiles
from diagnose.settings import SettingsError

from .tracegen import write_ranks

FIX = Path(__file__).parent / "fixtures"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["diagnose", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def starved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("starved")
    write_ranks(d, 2, loader_us=3000, sync_item=True, comm_us=400, overlap=0.8)
    return d


def test_json_contract(capsys: pytest.CaptureFixture[str], starved: Path) -> None:
    code, out, _ = _run(capsys, str(starved), str(FIX / "nvidia-smi-sawtooth.csv"), str(FIX / "memory_summary.txt"),
                        str(FIX / "nccl-1node-ib.log"), str(FIX / "megatron-8gpu.log"), "--format", "json")
    assert code == 0
    r = json.loads(out)
    assert r["schema_version"] == 1
    assert {i["kind"] for i in r["inputs"]} == {"kineto", "nvidia-smi", "memory-summary", "nccl-log", "train-log"}
    for rank in r["ranks"]:
        for k in ("span_ms", "idle_pct", "compute_pct", "non_compute_pct", "comm_comp_overlap_pct"):
            assert isinstance(rank[k], float)
        assert rank["idle_pct"] + rank["compute_pct"] + rank["non_compute_pct"] == pytest.approx(100, abs=0.05)
        assert set(rank["kernel_types"]) == {"computation", "communication", "memory"}
        assert {"name", "type", "time_ms", "pct"} <= set(rank["top_kernels"][0])
    assert r["utilization"]["source"] == "nvidia-smi" and r["utilization"]["gpus"][0]["sawtooth"] is True
    assert {"peak_allocated_mb", "peak_reserved_mb", "fragmentation_pct"} <= set(r["memory"])
    assert r["nccl"]["version"] == "2.19.3" and r["steps"]["source"] == "train-log" and r["steps"]["format"] == "megatron"
    assert r["verdict"]["bottleneck"] == "data-io-bound"
    for reason in r["verdict"]["reasons"]:
        assert reason["evidence"]["path"] and "value" in reason["evidence"]
        assert re.search(r"\d", reason["text"])  # every reason cites its number
    assert all(re.fullmatch(r"[A-J]\d{1,2}", rec["check"]) for rec in r["recommendations"])


def test_markdown_zh_and_html(capsys: pytest.CaptureFixture[str], starved: Path, tmp_path: Path) -> None:
    code, out, _ = _run(capsys, str(starved), "--lang", "zh")
    assert code == 0 and "瓶颈类型" in out and "`data-io-bound`" in out and "| 0 |" in out
    html = tmp_path / "r.html"
    code, _, _ = _run(capsys, str(starved), str(FIX / "dmon.txt"), "--format", "html", "-o", str(html))
    text = html.read_text()
    assert code == 0 and text.startswith("<!doctype html>") and text.count("<svg") >= 4
    assert "<script" not in text and "http://" not in text and "https://" not in text  # self-contained


def test_html_escapes_names(tmp_path: Path) -> None:
    from diagnose.render_html import render

    rep = {"verdict": {"bottleneck": "needs-profiling", "reasons": []}, "inputs": [{"path": "<img src=x onerror=alert(1)>", "kind": "unknown"}]}
    assert "<img" not in render(rep)


def test_baseline_delta_and_gate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    write_ranks(fast, 2, kernel_us=100, sync_item=True)
    write_ranks(slow, 2, kernel_us=130, sync_item=True)
    code, out, _ = _run(capsys, str(slow), "--baseline", str(fast), "--format", "json")
    r = json.loads(out)
    row = next(x for x in r["baseline"]["rows"] if x["metric"] == "step time (ms, trace)")
    assert code == 0 and row["delta_pct"] > 10
    code, out, _ = _run(capsys, str(slow), "--baseline", str(fast), "--max-step-time-regression", "10%")
    assert code == 1 and "slower than the 10% allowed" in out
    code, out, _ = _run(capsys, str(fast), "--baseline", str(slow), "--max-step-time-regression", "10%")
    assert code == 0 and "within the 10% allowed" in out


def test_settings_from_config_and_flags(capsys: pytest.CaptureFixture[str], starved: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "accel-audit.yml"
    cfg.write_text("profiles:\n  thresholds:\n    idle_high_pct: 99\n")
    code, out, _ = _run(capsys, str(starved), "--config", str(cfg), "--format", "json")
    assert json.loads(out)["verdict"]["bottleneck"] != "data-io-bound"  # the idle threshold was raised out of reach
    code, out, _ = _run(capsys, str(starved), "--config", str(cfg), "--set", "idle_high_pct=20", "--format", "json")
    assert json.loads(out)["verdict"]["bottleneck"] == "data-io-bound"
    code, _, err = _run(capsys, str(starved), "--set", "idle_hgh_pct=20")
    assert code == 2 and "unknown diagnosis setting 'idle_hgh_pct'" in err


def test_profiles_config_validation() -> None:
    p = parse_profiles({"profiles": {"artifact": "perf-*", "thresholds": {"straggler_pct": 5}, "model_params": "7e9"},
                        "gate": {"max_step_time_regression": "10%"}})
    assert p.artifact == "perf-*" and p.max_step_time_regression_pct == 10.0
    assert p.thresholds == {"straggler_pct": 5, "model_params": 7e9, "max_step_time_regression_pct": 10.0}
    assert parse_profiles({}).artifact == "accel-profile*"
    with pytest.raises(SettingsError, match="unknown key 'treshold'"):
        parse_profiles({"profiles": {"treshold": {}}})
    with pytest.raises(SettingsError, match="expected a percentage"):
        parse_profiles({"gate": {"max_step_time_regression": "ten"}})


def test_static_audit_puts_unused_checks_first(capsys: pytest.CaptureFixture[str], starved: Path, tmp_path: Path) -> None:
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps({"checks": [
        {"id": "F1", "status": "used", "evidence": [{"path": "train.py", "line": 40}]},
        {"id": "F3", "status": "unused", "evidence": []},
    ]}))
    _, out, _ = _run(capsys, str(starved), "--audit", str(audit), "--format", "json")
    recs = json.loads(out)["recommendations"]
    assert recs[0]["check"] == "F3" and recs[0]["static_status"] == "unused"
    f1 = next(r for r in recs if r["check"] == "F1")
    assert f1["priority"] == "low" and f1["static_evidence"] == "train.py:40"


def test_bad_paths_and_nothing_recognised(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, str(tmp_path / "missing"))
    assert code == 2 and "no such file" in err
    (tmp_path / "a.txt").write_text("nothing here\n")
    code, _, err = _run(capsys, str(tmp_path))
    assert code == 2 and "no input was recognised" in err


def test_every_reason_has_chinese_wording(tmp_path: Path) -> None:
    from diagnose.core import diagnose
    from diagnose.i18n import ADVICE_ZH, reason_text
    from diagnose.verdict import ADVICE

    write_ranks(tmp_path / "a", 4, loader_us=2500, sync_item=True, comm_us=3000, overlap=0.1, slow_rank=2, slow=1.5)
    write_ranks(tmp_path / "b", 2, kernels_per_step=60)
    rep = diagnose([str(FIX), str(tmp_path / "a")])
    reasons = rep["verdict"]["reasons"] + diagnose([str(tmp_path / "b")])["verdict"]["reasons"]
    assert {r["key"] for r in reasons} >= {"idle_dataloader", "comm_low_overlap", "compute_bound", "sawtooth", "fragmentation", "retries",
                                           "churn", "scaling", "straggler", "nccl.nccl-socket", "nccl.tp-spans-nodes", "nsys_comm"}
    for r in reasons:
        zh = reason_text(r, "zh")
        assert zh != r["text"] and not re.search(r"[A-Za-z]{12,}", zh.replace("DataLoader.__next__", "")), zh
    assert {c for items in ADVICE.values() for c, _ in items} <= set(ADVICE_ZH)
    # the finding names its check: sockets between nodes -> E4 leads the communication advice
    assert rep["recommendations"][0]["check"] in ("E4", "A4")


def test_baseline_compares_like_with_like(tmp_path: Path) -> None:
    from diagnose.compare import compare
    from diagnose.core import diagnose

    write_ranks(tmp_path / "t", 2, sync_item=True)
    traces_only = diagnose([str(tmp_path / "t")])
    with_log = diagnose([str(tmp_path / "t"), str(FIX / "megatron-8gpu.log")])
    cmp = compare(traces_only, with_log, 10.0)
    row = next(r for r in cmp["rows"] if r["metric"].startswith("step time"))
    assert row["metric"] == "step time (ms, trace)" and row["delta_pct"] == 0.0  # not the log's 2100 ms against a profiled step
    assert cmp["gate"]["failed"] is False and cmp["gate"]["source"] == "trace"
    cmp = compare(diagnose([str(FIX / "megatron-8gpu.log")]), diagnose([str(FIX / "nanogpt.log")]), 10.0)
    assert cmp["gate"]["source"] == "train-log" and cmp["gate"]["failed"] is False  # 2100 -> 1320 ms: faster
    cmp = compare(traces_only, diagnose([str(FIX / "nanogpt.log")]), 10.0)
    assert not [r for r in cmp["rows"] if r["metric"].startswith("step time")] and "not applied" in cmp["gate"]["text"]


def test_many_ranks_are_summarised(tmp_path: Path) -> None:
    from diagnose.core import diagnose
    from diagnose.render_html import render as html
    from diagnose.render_md import render as md

    write_ranks(tmp_path, 40, steps=2, kernels_per_step=8, slow_rank=7, slow=1.5)
    rep = diagnose([str(tmp_path)])
    assert len(rep["ranks"]) == 40
    text = md(rep)
    assert "the 32 most idle of 40 ranks" in text
    assert html(rep).count("<svg") >= 3
