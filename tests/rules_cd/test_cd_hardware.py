"""The target GPU decides whether BF16 and FlashAttention-2 are usable (issue 9): on V100/T4 "used" is a finding."""

from __future__ import annotations

import subprocess
import sys

import pytest

from checks.base import REGISTRY, all_checks
from checks.engine import AuditOptions, build_facts, run_checks
from checks.hardware import normalize_gpu
from checks.project import detect_project

RECIPE = {"train.py": (
    "import torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
    "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2-1.5B', torch_dtype=torch.bfloat16,\n"
    "                                             attn_implementation='flash_attention_2')\n"
    "args = TrainingArguments(output_dir='out', bf16=True, logging_steps=10)\n"
    "Trainer(model=model, args=args, train_dataset=ds).train()\n")}


def _run(hardware: str | None, *ids: str):
    all_checks()
    facts = build_facts((p, t.encode()) for p, t in RECIPE.items())
    results, _ = run_checks(facts, detect_project(facts, hardware=hardware), AuditOptions(hardware=hardware), [REGISTRY[i] for i in ids])
    return {r.id: r for r in results}


@pytest.mark.parametrize("gpu", ["v100", "t4"])
def test_bf16_and_fa2_on_pre_ampere_are_findings_with_the_alternative(gpu):
    r = _run(gpu, "C1", "D1")
    assert r["C1"].status.value == "partial" and "FP16" in r["C1"].detail and r["C1"].findings
    assert {e.line for e in r["C1"].findings} <= {3, 5} and 5 in {e.line for e in r["C1"].findings}
    assert r["D1"].status.value == "partial" and "sdpa" in r["D1"].detail and [e.line for e in r["D1"].findings] == [4]


@pytest.mark.parametrize("gpu", ["a100", "h100", None])
def test_bf16_and_fa2_on_ampere_or_unknown_stay_used(gpu):
    r = _run(gpu, "C1", "D1")
    assert r["C1"].status.value == "used" and r["D1"].status.value == "used"


def test_gpu_names_normalise_and_unknown_names_are_refused():
    assert normalize_gpu("H100") == "h100" and normalize_gpu("A100-80GB") == "a100" and normalize_gpu("Tesla V100") == "v100"
    assert normalize_gpu("l40s") == "l40s" and normalize_gpu("potato") is None and normalize_gpu("a1000") is None


def test_cli_rejects_an_unknown_gpu_with_exit_2(tmp_path):
    (tmp_path / "train.py").write_text("import torch\n")
    res = subprocess.run([sys.executable, "-m", "accel_audit.cli", "scan", str(tmp_path), "--hardware", "potato"],
                         capture_output=True, text=True)
    assert res.returncode == 2 and "unknown GPU 'potato'" in res.stderr and res.stdout == ""
    ok = subprocess.run([sys.executable, "-m", "accel_audit.cli", "scan", str(tmp_path), "--hardware", "V100", "--format", "json"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and '"hardware": "v100"' in ok.stdout


def test_a_plain_launch_keeps_the_scripts_own_compile_value():
    all_checks()
    files = {"train.py": "import torch\ncompile = True\nmodel = GPT(cfg)\nif compile:\n    model = torch.compile(model)\n",
             "run.sh": "python train.py config/train_gpt2.py\npython train.py config/eval.py --device=cpu --compile=False\n"}
    facts = build_facts((p, t.encode()) for p, t in files.items())
    [r], _ = run_checks(facts, detect_project(facts), AuditOptions(), [REGISTRY["D2"]])
    assert r.status.value == "used"
