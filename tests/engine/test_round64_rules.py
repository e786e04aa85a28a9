"""Round 64 (issue #9): claims of more public repositories (aguvis, octopack, VisionLLM, llama3-Chinese-chat, CPM-Bee,
Fengshenbang-LM, MMR1), read claim by claim. Each test is one false claim of those reports, made from the shape of the real
code, with a control that keeps the rule honest."""

from __future__ import annotations

from reports.json_report import recommendations

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check

# --- aguvis: a ZeRO-3 config's ``"bf16": {"enabled": "auto"}`` under a launch's ``--bf16 True`` ---------------------------------

_ZERO3_AUTO = ('{\n  "fp16": {\n    "enabled": "auto"\n  },\n  "bf16": {\n    "enabled": "auto"\n  },\n'
               '  "zero_optimization": {\n    "stage": 3,\n    "overlap_comm": false\n  },\n'
               '  "train_micro_batch_size_per_gpu": "auto"\n}\n')
_AGUVIS_MULTI = ("torchrun --nproc_per_node 8 --nnodes 4 --node_rank ${{RANK}} --master_addr ${{MASTER_ADDR}} train.py \\\n"
                 "    --model_name_or_path Qwen/Qwen2-VL-7B-Instruct \\\n    --deepspeed ./scripts/zero3.json \\\n"
                 "    --{prec} True \\\n    --per_device_train_batch_size 2\n")


def test_deepspeed_auto_precision_filled_by_the_launch_reduces_gradients_in_it() -> None:
    files = {"train.py": _LLAVA_TRAIN, "scripts/zero3.json": _ZERO3_AUTO, "scripts/train.sh": _AGUVIS_MULTI.format(prec="bf16")}
    result = _audit(files)
    e3 = _check(result, "E3")
    assert e3.status.value == "partial" and "reduced in bf16" in e3.detail and "scripts/train.sh:4" in e3.detail, e3
    assert any(e.path == "scripts/train.sh" and e.key == "--bf16" for e in e3.evidence), e3.evidence
    # the advice does not offer communication_data_type bf16, which would change nothing
    rec = next(r for r in recommendations(result) if r["check"] == "E3")
    assert "changes nothing" in rec["text"] and '"communication_data_type"' not in rec["snippet"], rec
    # control: no precision flag, so "auto" leaves the engine in fp32: uncompressed
    files["scripts/train.sh"] = _AGUVIS_MULTI.format(prec="tf32")
    assert _check(_audit(files), "E3").status.value == "unused"
