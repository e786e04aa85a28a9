"""Value-level regressions found by auditing real public training repositories (shapes of their code, written by us).

The checks' own examples pin statuses; these pin the measured values that reports and the PR review compare.
"""

from __future__ import annotations

from checks.base import REGISTRY, all_checks
from checks.engine import AuditOptions, build_facts, run_checks
from checks.model import CheckResult, Project
from checks.project import detect_project


def _audit(files: dict[str, str], check_id: str) -> tuple[CheckResult, Project]:
    all_checks()
    facts = build_facts((path, text.encode()) for path, text in files.items())
    project = detect_project(facts)
    [result], _ = run_checks(facts, project, AuditOptions(), [REGISTRY[check_id]])
    return result, project


# LLaVA-shaped: LoRA switched on by a launch script; 4-bit loading exists only in the serving loader and behind
# a ``--bits`` flag that no script passes
LLAVA_LORA = {
    "llava/train/train.py": (
        "import transformers\nfrom dataclasses import dataclass, field\n"
        "@dataclass\nclass TrainingArguments(transformers.TrainingArguments):\n"
        "    bits: int = field(default=16)\n    lora_enable: bool = False\n    lora_r: int = 64\n"
        "def train():\n"
        "    parser = transformers.HfArgumentParser((TrainingArguments,))\n"
        "    (training_args,) = parser.parse_args_into_dataclasses()\n"
        "    if training_args.bits in [4, 8]:\n"
        "        from transformers import BitsAndBytesConfig\n"
        "        q = BitsAndBytesConfig(load_in_4bit=training_args.bits == 4)\n"
        "    model = transformers.AutoModelForCausalLM.from_pretrained('lmsys/vicuna-13b-v1.5')\n"
        "    if training_args.lora_enable:\n"
        "        from peft import LoraConfig, get_peft_model\n"
        "        model = get_peft_model(model, LoraConfig(r=training_args.lora_r, task_type='CAUSAL_LM'))\n"
        "    trainer = transformers.Trainer(model=model, args=training_args)\n    trainer.train()\n"
    ),
    "llava/model/builder.py": (
        "import torch\nfrom transformers import AutoModelForCausalLM, BitsAndBytesConfig\n"
        "def load_pretrained_model(model_path, load_8bit=False, load_4bit=False, device_map='auto'):\n"
        "    kwargs = {'device_map': device_map}\n"
        "    if load_8bit:\n        kwargs['load_in_8bit'] = True\n"
        "    elif load_4bit:\n"
        "        kwargs['load_in_4bit'] = True\n"
        "        kwargs['quantization_config'] = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16)\n"
        "    else:\n        kwargs['torch_dtype'] = torch.float16\n"
        "    return AutoModelForCausalLM.from_pretrained(model_path, low_cpu_mem_usage=True, **kwargs)\n"
    ),
    "scripts/v1_5/finetune_lora.sh": (
        "deepspeed llava/train/train.py --lora_enable True --lora_r 128 --bf16 True --output_dir ./checkpoints/lora\n"
    ),
}


def test_g4_serving_4bit_loader_is_not_qlora():
    result, _ = _audit(LLAVA_LORA, "G4")
    assert result.status.value == "used"
    assert result.values == {"finetuning": "lora"}
    assert not any(e.path == "llava/model/builder.py" for e in result.evidence)


def test_g4_axolotl_qlora_recipe_stays_qlora():
    files = {"examples/llama-3/qlora-1b.yml": (
        "base_model: NousResearch/Llama-3.2-1B\nload_in_8bit: false\nload_in_4bit: true\nadapter: qlora\n"
        "sequence_len: 2048\nmicro_batch_size: 2\n")}
    result, project = _audit(files, "G4")
    # (with where the 4-bit base is set, for the overview's memory figures and step zero)
    assert result.values == {"finetuning": "qlora", "base_bits": 4, "base_quant_at": "examples/llama-3/qlora-1b.yml:4",
                             "base_quant_sites": 1}
    assert "axolotl" in project.frameworks


def _project(files: dict[str, str]) -> Project:
    return detect_project(build_facts((path, text.encode()) for path, text in files.items()))


def test_yaml_only_recipe_sets_name_their_framework():
    lf = {"examples/train_lora/qwen3_lora_sft.yaml": (
        "model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
        "template: qwen3_nothink\ncutoff_len: 2048\n")}
    tt = {"recipes/configs/llama3_1/8B_lora.yaml": (
        "model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n  lora_rank: 8\n"
        "optimizer:\n  _component_: torch.optim.AdamW\n  lr: 3e-4\ndtype: bf16\n")}
    assert "llamafactory" in _project(lf).frameworks
    assert "torchtune" in _project(tt).frameworks
    # a generic HF YAML with a model and a batch size is neither
    plain = {"configs/sft.yaml": "model_name_or_path: meta-llama/Llama-3.1-8B\nper_device_train_batch_size: 4\nbf16: true\n"}
    assert not {"llamafactory", "axolotl", "torchtune"} & set(_project(plain).frameworks)


def test_llamafactory_chat_recipe_is_inference_but_a_predict_recipe_is_not():
    chat = {"examples/inference/qwen3.yaml": "model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\ntemplate: qwen3_nothink\ninfer_backend: huggingface\n"}
    predict = {"examples/train_lora/qwen3_lora_predict.yaml": (
        "model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\nstage: sft\ndo_predict: true\nfinetuning_type: lora\n"
        "predict_with_generate: true\ninfer_backend: huggingface\n")}
    assert _project(chat).does_inference is True
    assert _project(predict).does_inference is False


def test_megatron_model_parallel_group_wider_than_a_node_is_multi_node():
    script = ("torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --tensor-model-parallel-size 8 "
              "--pipeline-model-parallel-size 16 --fp16\n")
    p = _project({"examples/gpt3/train_gpt3_175b_distributed.sh": script})
    assert p.multi_node is True and p.num_nodes == 16
    assert _project({"run.sh": script.replace("16", "1")}).multi_node is False
