"""Round 11 (held-out NeMo AutoModel): HF's adapter_config.json written from an adapter a run already has is not LoRA."""

from __future__ import annotations

from checks.rules.g_strategy import _ADAPTER_EXPORT
from tests.rules_ghj.ghj_util import audit


def test_an_adapter_config_serialised_from_the_adapter_object_is_not_lora():
    result, _ = audit(_ADAPTER_EXPORT, "G4")
    assert result.status.value == "unused"
    assert all(e.path != "pkg/checkpoint/addons.py" for e in result.evidence)


def test_the_same_dict_filled_from_the_runs_arguments_is_lora():
    files = {**_ADAPTER_EXPORT, "pkg/checkpoint/addons.py": _ADAPTER_EXPORT["pkg/checkpoint/addons.py"].replace(
        "peft_config.dim", "args.lora_rank").replace("peft_config.alpha", "args.lora_alpha")}
    assert audit(files, "G4")[0].status.value == "used"


def test_a_literal_rank_is_still_a_choice():
    files = {**_ADAPTER_EXPORT, "pkg/checkpoint/addons.py": _ADAPTER_EXPORT["pkg/checkpoint/addons.py"].replace(
        "peft_config.dim", "16")}
    assert audit(files, "G4")[0].status.value == "used"


def test_a_config_serialising_its_own_fields_is_not_lora():
    # round 12 (VeOmni): ``"r": self.r`` in a LoRA config's to_peft_dict describes an adapter, it chooses none
    from checks.rules.g_strategy import _SELF_EXPORT

    result, _ = audit(_SELF_EXPORT, "G4")
    assert result.status.value == "unused"
    assert all(e.path != "pkg/lora/config.py" for e in result.evidence)


def test_the_same_dict_filled_from_the_trainers_arguments_is_lora():
    from checks.rules.g_strategy import _SELF_EXPORT

    files = {**_SELF_EXPORT, "pkg/lora/config.py": _SELF_EXPORT["pkg/lora/config.py"].replace(
        "self.r,", "self.args.lora_rank,").replace("self.lora_alpha,", "self.args.lora_alpha,")}
    assert audit(files, "G4")[0].status.value == "used"


# 2026-12-04 (Megatron-LM): an inference engine's LoRA config serves adapters; it is no PEFT gate of the training run
_TRTLLM_BUILDER = (
    "try:\n    from tensorrt_llm.lora_manager import LoraConfig\nexcept ImportError:\n    LoraConfig = None\n\n\n"
    "class TRTLLMEngineBuilder:\n    @staticmethod\n"
    "    def build_and_save_engine(engine_dir, model_cls, config, use_lora_plugin=None, lora_ckpt_list=None, max_lora_rank=64):\n"
    "        build_config = {}\n        if use_lora_plugin is not None:\n"
    "            lora_config = LoraConfig(lora_dir=lora_ckpt_list, lora_ckpt_source='nemo', max_lora_rank=max_lora_rank)\n"
    "            build_config['lora_config'] = lora_config\n        return build_config\n"
)
_FT_LOOP = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\n"
    "def finetune(args, loader):\n    model = AutoModelForCausalLM.from_pretrained(args.load)\n"
    "    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)\n"
    "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n"
)


_EXPORT_SCRIPT = (
    "from pkg.export.trtllm.engine_builder import TRTLLMEngineBuilder\n\n"
    "TRTLLMEngineBuilder.build_and_save_engine(\n    engine_dir='/tmp/engine',\n    model_cls=None,\n    config={},\n"
    "    lora_ckpt_list=None,\n    use_lora_plugin=None,\n    max_lora_rank=64,\n)\n"
)


def test_an_inference_engines_lora_config_is_not_the_runs_peft_gate():
    files = {"pkg/export/trtllm/engine_builder.py": _TRTLLM_BUILDER, "examples/export/gpt_export.py": _EXPORT_SCRIPT,
             "pkg/finetune.py": _FT_LOOP,
             "scripts/finetune.sh": "torchrun --nproc_per_node 8 pkg/finetune.py --load meta-llama/Llama-2-7b-hf\n"}
    result, _ = audit(files, "G4")
    assert result.status.value == "unused"
    assert "engine_builder.py" not in result.detail and "use_lora_plugin" not in result.detail, result.detail


def test_a_peft_lora_config_under_the_same_gate_is_cited():
    files = {"pkg/export/trtllm/engine_builder.py": _TRTLLM_BUILDER, "pkg/finetune.py": _FT_LOOP.replace(
        "    optimizer =", "    if args.use_lora:\n        model = get_peft_model(model, LoraConfig(r=8))\n    optimizer =").replace(
        "from transformers import AutoModelForCausalLM\n", "from peft import LoraConfig, get_peft_model\nfrom transformers import AutoModelForCausalLM\n"),
             "pkg/arguments.py": "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--use-lora', action='store_true')\n",
             "scripts/finetune.sh": "torchrun --nproc_per_node 8 pkg/finetune.py --load meta-llama/Llama-2-7b-hf\n"}
    result, _ = audit(files, "G4")
    assert result.status.value == "unused"
    assert "args.use_lora" in result.detail, result.detail
