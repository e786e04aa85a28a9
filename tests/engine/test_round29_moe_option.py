"""Round 29 (issue #9, read on LLaVA-NeXT at HEAD): a mixture-of-experts class a model zoo defines is an architecture
offered, not the run's model, when the launches and recipes name dense models (or MoE ones only in a minority)."""

from __future__ import annotations

from checks.engine import audit_files

ZOO = {
    "llava/model/language_model/llava_mixtral.py": (
        "from transformers import MixtralConfig, MixtralForCausalLM\n\n\nclass LlavaMixtralForCausalLM(MixtralForCausalLM):\n"
        "    def __init__(self, config):\n        super(MixtralForCausalLM, self).__init__(config)\n"),
    "llava/train/train.py": (
        "from transformers import AutoModelForCausalLM\n\nfrom llava.model.language_model.llava_mixtral import LlavaMixtralForCausalLM\n\n\n"
        "def train(args):\n    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)\n"
        "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n"),
}
LAUNCH = ("deepspeed --num_gpus 8 llava/train/train.py --deepspeed scripts/zero3.json --model_name_or_path {m} --bf16 True "
          "--output_dir out/{n}\n")


def _audit(models: list[str]):
    files = {**ZOO, **{f"scripts/train/run_{i}.sh": LAUNCH.format(m=m, n=i) for i, m in enumerate(models)}}
    return audit_files((p, t.encode()) for p, t in files.items())


def _a7(a):
    return next(r for r in a.results if r.id == "A7")


def test_an_moe_class_offered_while_every_run_is_dense():
    a = _audit(["Qwen/Qwen2-7B-Instruct", "lmms-lab/llava-onevision-qwen2-7b-ov", "Qwen/Qwen2-72B-Instruct"])
    assert a.project.notes.get("moe_option"), a.project.notes
    r = _a7(a)
    assert "a mixture-of-experts architecture is offered (llava/model/language_model/llava_mixtral.py:4)" in r.detail, r.detail
    assert r.priority is None or r.priority.value == "low"
    assert not any("mixture-of-experts" in x for x in a.project.bottleneck_reasons), a.project.bottleneck_reasons


def test_an_moe_run_in_a_minority_of_launches():
    a = _audit(["Qwen/Qwen2-7B-Instruct", "Qwen/Qwen2-72B-Instruct", "Qwen/Qwen1.5-MoE-A2.7B-Chat"])
    assert a.project.notes.get("moe_minority"), a.project.notes
    assert "in only 1 of 3 model settings" in _a7(a).detail, _a7(a).detail
