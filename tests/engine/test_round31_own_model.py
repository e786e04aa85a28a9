"""Round 31 (issue #9): minimind at HEAD, read as a new user would. It trains its own ``MiniMindForCausalLM`` with
hand-written SFT/DPO/GRPO/distillation loops (``trainer/train_dpo.py``: ``scaler.step(optimizer)``), loads a reward model
with ``AutoModel.from_pretrained`` inside ``class LMForRewardModel``, and lists ``trl`` in requirements.txt without ever
importing it. The report said G6 "no alignment training" and recommended Liger's HF one-liner first, at High."""

from __future__ import annotations

from checks.model import Priority, Status
from reports.advice import build_plan

from .claims import audit as _audit

_MODEL = (
    "import torch\nfrom torch import nn\nfrom transformers import PreTrainedModel, PretrainedConfig\n\n\n"
    "class MiniMindConfig(PretrainedConfig):\n    model_type = 'minimind'\n\n\n"
    "class MiniMindForCausalLM(PreTrainedModel):\n    config_class = MiniMindConfig\n\n"
    "    def __init__(self, config):\n        super().__init__(config)\n"
    "        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)\n\n"
    "    def forward(self, input_ids, labels=None):\n"
    "        logits = self.lm_head(self.model(input_ids))\n        return logits\n"
)
_UTILS = (
    "import torch\nfrom transformers import AutoModel, AutoTokenizer\n\n\n"
    "class LMForRewardModel:\n    def __init__(self, model_path, device='cuda', dtype=torch.float16):\n"
    "        self.tokenizer = AutoTokenizer.from_pretrained(model_path, trust_remote_code=True)\n"
    "        self.model = AutoModel.from_pretrained(model_path, torch_dtype=dtype, trust_remote_code=True)\n"
    "        self.model = self.model.to(device).eval()\n"
)


def _loop(loss: str, script: str) -> str:
    return (
        "import argparse\nimport torch\nfrom torch.utils.data import DataLoader\n"
        "from model.model_minimind import MiniMindConfig, MiniMindForCausalLM\n"
        "from trainer.trainer_utils import LMForRewardModel\n\n\n"
        "def train_epoch(model, loader, optimizer, scaler):\n"
        "    for step, (x, y) in enumerate(loader):\n"
        "        with torch.cuda.amp.autocast(dtype=torch.bfloat16):\n"
        f"            loss = {loss}\n"
        "        scaler.scale(loss).backward()\n        scaler.step(optimizer)\n        scaler.update()\n"
        "        optimizer.zero_grad(set_to_none=True)\n\n\n"
        "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--num_workers', type=int, default=8)\n"
        "    parser.add_argument('--dtype', type=str, default='bfloat16')\n    args = parser.parse_args()\n"
        "    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=768, num_hidden_layers=8)).cuda()\n"
        + ("    reward_model = LMForRewardModel('internlm2-1_8b-reward', dtype=torch.float16)\n" if "grpo" in script else "")
        + "    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)\n"
        "    loader = DataLoader(ds, batch_size=32, num_workers=args.num_workers, pin_memory=True)\n"
        "    train_epoch(model, loader, optimizer, torch.cuda.amp.GradScaler(enabled=(args.dtype == 'float16')))\n"
    )


def _repo(*, requirements: str = "torch\ntransformers==4.57.6\ntrl==0.13.0\n") -> dict[str, str]:
    return {
        "model/model_minimind.py": _MODEL,
        "trainer/trainer_utils.py": _UTILS,
        "trainer/train_pretrain.py": _loop("model(x, labels=y).loss", "pretrain"),
        "trainer/train_dpo.py": _loop("dpo_loss(ref_logp, model(x).log_softmax(-1), mask, beta=0.1)", "dpo"),
        "trainer/train_grpo.py": _loop("grpo_loss(model(x), reward_model, y)", "grpo"),
        "requirements.txt": requirements,
    }


def test_hand_written_dpo_and_grpo_scripts_are_alignment_training():
    r = _audit(_repo()).result("G6")
    assert r.status is Status.UNUSED
    assert r.detail.startswith("the alignment/distillation run selected at trainer/train_")
    assert {e.path for e in r.evidence} <= {"trainer/train_dpo.py", "trainer/train_grpo.py"}


def test_control_sft_only_is_not_alignment():
    files = {k: v for k, v in _repo().items() if k not in ("trainer/train_dpo.py", "trainer/train_grpo.py")}
    assert _audit(files).result("G6").status is Status.NA


def test_a_requirement_never_imported_is_not_the_projects_framework():
    audit = _audit(_repo())
    assert "trl" not in audit.project.frameworks
    assert "transformers" in audit.project.frameworks


def test_control_an_imported_requirement_is():
    files = _repo()
    files["trainer/train_dpo.py"] = "from trl import DPOTrainer\n" + files["trainer/train_dpo.py"]
    assert "trl" in _audit(files).project.frameworks


def test_liger_advice_for_the_projects_own_architecture():
    audit = _audit(_repo())
    r = audit.result("D5")
    assert r.status is Status.UNUSED and r.priority is Priority.LOW
    rec = build_plan(audit).get("D5")
    assert rec is not None and rec.text.startswith("The trained model is the project's own architecture")
    assert rec.snippet is not None and "LigerFusedLinearCrossEntropyLoss" in rec.snippet.code
    assert "AutoLigerKernelForCausalLM.from_pretrained" not in rec.snippet.code


def test_control_an_hf_model_loaded_to_train_keeps_the_one_line_patch():
    files = _repo()
    files["trainer/train_pretrain.py"] = files["trainer/train_pretrain.py"].replace(
        "    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=768, num_hidden_layers=8)).cuda()\n",
        "    from transformers import AutoModelForCausalLM\n"
        "    model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-0.5B').cuda()\n")
    audit = _audit(files)
    r = audit.result("D5")
    assert r.priority is Priority.HIGH
    rec = build_plan(audit).get("D5")
    assert rec is not None and not rec.text.startswith("The trained model is the project's own")


def test_a_reward_models_dtype_is_not_the_runs_precision():
    r = _audit(_repo()).result("C1")
    assert r.status is Status.USED and r.detail == "BF16 mixed precision"
    assert not [e for e in r.evidence if "LMForRewardModel" in e.snippet]
    assert any("autocast" in e.snippet for e in r.evidence)


# FastChat at HEAD: fine-tuning only (``train.py`` loads LLaMA with ``from_pretrained``); its model adapter, imported by the
# LoRA trainer, builds empty models with ``from_config`` only to load compressed or AWQ weights into them
_FASTCHAT = {
    "fastchat/model/compression.py": (
        "from accelerate import init_empty_weights\nfrom transformers import AutoConfig, AutoModelForCausalLM\n\n\n"
        "def load_compress_model(model_path, device, torch_dtype):\n"
        "    config = AutoConfig.from_pretrained(model_path, low_cpu_mem_usage=True, torch_dtype=torch_dtype)\n"
        "    with init_empty_weights():\n"
        "        model = AutoModelForCausalLM.from_config(config, trust_remote_code=True)\n"
        "    return model\n"),
    "fastchat/train/train.py": (
        "import transformers\nfrom fastchat.model.compression import load_compress_model\n\n\n"
        "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, transformers.TrainingArguments))\n"
        "    model_args, data_args, training_args = parser.parse_args_into_dataclasses()\n"
        "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
        "    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=ds)\n    trainer.train()\n"),
    "scripts/train_vicuna_7b.sh": (
        "torchrun --nproc_per_node=4 --master_port=20001 fastchat/train/train.py \\\n"
        "    --model_name_or_path ~/model_weights/llama-7b \\\n    --bf16 True \\\n    --output_dir output_vicuna_7b\n"),
}


def test_a_skeleton_built_to_load_compressed_weights_is_not_pretraining():
    audit = _audit(_FASTCHAT)
    assert not audit.project.pretrains
    assert build_plan(audit).get("G3") is None


def test_control_a_model_initialised_from_its_config_is_pretraining():
    files = dict(_FASTCHAT)
    files["fastchat/train/train.py"] = files["fastchat/train/train.py"].replace(
        "transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)",
        "transformers.AutoModelForCausalLM.from_config(transformers.AutoConfig.from_pretrained(model_args.model_name_or_path))")
    assert _audit(files).project.pretrains


# alignment-handbook at HEAD: the 4-node Mixtral run is documented in a README (``--num_machines 4``); no launch in the
# tree spans nodes. E1 judges it multi-node; the withheld E3/E4 advice must not call the same project single-node
_HANDBOOK = {
    "scripts/sft.py": (
        "from trl import SFTConfig, SFTTrainer, TrlParser\n\n\n"
        "def main(script_args, training_args, model_args):\n"
        "    trainer = SFTTrainer(model=model_args.model_name_or_path, args=training_args, train_dataset=ds)\n"
        "    trainer.train()\n"),
    "recipes/zephyr-7b-beta/sft/config_full.yaml": (
        "model_name_or_path: mistralai/Mistral-7B-v0.1\nbf16: true\nper_device_train_batch_size: 16\nlogging_steps: 5\n"),
    "recipes/accelerate_configs/zero3.yaml": "distributed_type: DEEPSPEED\nnum_machines: 1\nnum_processes: 8\n",
    "recipes/zephyr-141b-A35b/README.md": (
        "# Zephyr 141B\n\nWe trained on 4 nodes of 8 x H100s:\n\n```shell\n"
        "ACCELERATE_LOG_LEVEL=info accelerate launch --config_file recipes/accelerate_configs/fsdp.yaml --num_machines 4 "
        "--num_processes 32 --main_process_ip $MASTER_ADDR --main_process_port 29500 --machine_rank $RANK scripts/orpo.py "
        "recipes/zephyr-141b-A35b/orpo/config_full.yaml\n```\n"),
}


def test_the_withheld_communication_advice_shares_e1s_verdict_on_nodes():
    audit = _audit(_HANDBOOK)
    assert audit.result("E1").status is not Status.NA
    why = {w.check: w.reason for w in build_plan(audit).withheld}
    assert "single-node" not in why.get("E3", "") and "no multi-node launch" not in why.get("E4", "")


def test_control_a_single_node_project_gets_no_fabric_advice():
    files = {k: v for k, v in _HANDBOOK.items() if not k.endswith("README.md")}
    audit = _audit(files)
    assert audit.result("E1").status is Status.NA
    why = {w.check: w.reason for w in build_plan(audit).withheld}
    assert why["E3"].startswith("single-node") and why["E4"].startswith("no multi-node launch")


def test_empty_cache_once_before_the_loop_of_a_training_function_is_no_finding():
    # mistral-finetune ``train.py``: ``torch.cuda.empty_cache()`` once, before ``while state.step < args.max_steps:``
    files = {"train.py": (
        "import torch\n\n\ndef _train(args, model, optimizer, data_loader, state):\n    model.train()\n"
        "    torch.cuda.empty_cache()\n\n    while state.step < args.max_steps:\n        state.start_step()\n"
        "        loss = model(next(data_loader)).loss\n        loss.backward()\n        optimizer.step()\n")}
    r = _audit(files).result("C6")
    assert not r.findings and "every step" not in (r.detail or "")
    step = {"train.py": files["train.py"].replace("def _train(", "def train_step(")}
    assert _audit(step).result("C6").findings


def _nemo_rl(lora_recipes: int) -> dict[str, str]:
    """NeMo-RL-shaped: recipes share top-level sections; the LoRA section's switch is on only in some of them."""
    def recipe(lora: bool) -> str:
        return ("defaults: ../../sft.yaml\nsft:\n  max_num_steps: 350\npolicy:\n  model_name: meta-llama/Llama-3.1-8B\n"
                + ("  dtensor_cfg:\n    lora_cfg:\n      enabled: true\n      dim: 128\n" if lora else "  train_global_batch_size: 32\n")
                + "logger:\n  wandb_enabled: true\ncluster:\n  gpus_per_node: 8\n  num_nodes: 1\n")
    files = {f"examples/configs/recipes/llm/sft-{i}.yaml": recipe(i < lora_recipes) for i in range(6)}
    files["nemo_rl/algorithms/sft.py"] = (
        "def sft_train(policy, dataloader, optimizer):\n    for batch in dataloader:\n        loss = policy.train(batch)\n"
        "        loss.backward()\n        optimizer.step()\n")
    return files


def test_lora_switched_on_in_a_minority_of_recipes_is_not_the_projects_fine_tuning():
    r = _audit(_nemo_rl(1)).result("G4")
    assert r.status is Status.UNUSED and r.detail.startswith("full-parameter training in most recipes: LoRA is switched on in 1 of 6")


def test_control_lora_on_in_most_recipes():
    assert _audit(_nemo_rl(5)).result("G4").status is Status.USED


def test_a_hard_wired_bf16_param_dtype_is_mixed_precision():
    # mistral-finetune: BF16 weights with FP32 master copies, set by a local in the training function
    files = {"train.py": (
        "import torch\nfrom finetune.mixed_precision import prepare_mixed_precision, upcast_mixed_precision\n\n\n"
        "def _train(args, model, optimizer, batches):\n    param_dtype = torch.bfloat16\n    optim_dtype = torch.float32\n"
        "    prepare_mixed_precision(model.parameters(), param_dtype=param_dtype, optim_dtype=optim_dtype)\n"
        "    for batch in batches:\n        loss = model(batch).loss\n        loss.backward()\n"
        "        upcast_mixed_precision(model.parameters(), optim_dtype=optim_dtype)\n        optimizer.step()\n")}
    r = _audit(files).result("C1")
    assert r.status is Status.USED and "BF16" in r.detail


def _handbook_recipes() -> dict[str, str]:
    """alignment-handbook-shaped recipes: each recipe's own per-device batch and accumulation, logging every 5 steps in
    most of them."""
    rows = [(16, 1, 10), (8, 2, 5), (8, 2, 5), (4, 4, 5), (2, 8, 1), (2, 8, 10)]
    files = {f"recipes/model{i}/sft/config_full.yaml": (
        f"model_name_or_path: mistralai/Mistral-7B-v0.1\nbf16: true\nper_device_train_batch_size: {b}\n"
        f"gradient_accumulation_steps: {ga}\nlearning_rate: 2.0e-05\nlogging_steps: {log}\nnum_train_epochs: 1\n")
        for i, (b, ga, log) in enumerate(rows)}
    files["scripts/sft.py"] = ("from trl import SFTConfig, SFTTrainer, TrlParser\n\n\ndef main(script_args, training_args, model_args):\n"
                               "    trainer = SFTTrainer(model=model_args.model_name_or_path, args=training_args)\n    trainer.train()\n")
    return files


def test_a_distribution_is_headlined_by_its_majority_and_batches_pair_within_a_recipe():
    audit = _audit(_handbook_recipes())
    assert audit.result("C5").detail.startswith("gradient accumulation over 2-8 micro-batches")
    assert audit.result("I4").detail.startswith("metrics logged every 5 steps")
    assert "a batch of 16 sequences per GPU" in audit.result("G2").detail  # 16 x 1, 8 x 2, 4 x 4, 2 x 8: never 16 x 8


def test_an_image_reader_fed_base64_by_a_chat_template_is_no_per_sample_file_read():
    # FastChat: ``fastchat/utils.py load_image`` opens a path, a URL or base64; its only callers on the training path are
    # the conversation template's ``load_image(image.base64_str)``
    utils = ("import os\nfrom PIL import Image\n\n\ndef load_image(image_file):\n"
             "    if image_file.lower().endswith(('png', 'jpg', 'jpeg')):\n        image = Image.open(image_file)\n    return image\n")
    conv = ("from fastchat.utils import load_image\n\n\nclass Conversation:\n    def to_gemini_api_messages(self):\n"
            "        for image in self.images:\n            pil_image = load_image(image.base64_str)\n")
    data = ("import torch\nfrom torch.utils.data import Dataset\nfrom fastchat.conversation import Conversation\nfrom fastchat.utils import load_image\n\n\n"
            "class SupervisedDataset(Dataset):\n    def __getitem__(self, i):\n        return self.input_ids[i]\n\n\n"
            "def train():\n    loader = torch.utils.data.DataLoader(SupervisedDataset(), batch_size=8)\n"
            "    for batch in loader:\n        model(batch).loss.backward()\n")
    files = {"fastchat/utils.py": utils, "fastchat/conversation.py": conv, "fastchat/train/train.py": data}
    r = _audit(files).result("F4")
    assert not r.evidence and "one file at a time" not in r.detail
    files["fastchat/train/train.py"] = data.replace("return self.input_ids[i]", "return load_image(self.paths[i])")
    assert "one file at a time" in _audit(files).result("F4").detail


# OLMo at HEAD: its recipes list the training data under ``data.paths`` (object-store URLs) and resume from ``load_path``
# (a checkpoint); its eval-task configs sit under ``olmo_data/oe_eval_tasks/``
_OLMO = {
    "configs/peteish1-google.yaml": (
        "run_name: peteish1\nload_path: gs://ai2-llm/checkpoints/OLMo-small/peteish1/step1907359\n"
        "model:\n  d_model: 2048\n  n_layers: 16\n  vocab_size: 100278\n  embedding_size: 100352\n"
        "data:\n  num_workers: 32\n  paths:\n    - gs://ai2-llm/preprocessed/dclm/part-0-00000.npy\n"
        "    - gs://ai2-llm/preprocessed/dclm/part-0-00001.npy\n"),
    "olmo_data/oe_eval_tasks/copycolors/10way/config.json": (
        '{"task_name": "copycolors", "task_config": {"dataset_path": "sarahwie/copycolors_mcqa", "num_shots": 0}}'),
    "scripts/train.py": (
        "import torch\nfrom torch.utils.data import DataLoader\n\n\ndef main(cfg):\n"
        "    loader = DataLoader(dataset, batch_size=cfg.device_train_microbatch_size, num_workers=cfg.data.num_workers)\n"
        "    for batch in loader:\n        model(batch).loss.backward()\n        optim.step()\n"),
}


def test_data_locations_are_the_data_section_not_the_checkpoint_or_eval_tasks():
    audit = _audit(_OLMO)
    reasons = " ".join(audit.project.bottleneck_reasons)
    assert "checkpoints/OLMo-small" not in reasons and "gs://ai2-llm/preprocessed/dclm" in reasons
    i1 = audit.result("I1")
    assert "gs://ai2-llm/preprocessed/dclm/part-0-00000.npy" in i1.detail and "copycolors" not in i1.detail
    assert audit.roles.role("olmo_data/oe_eval_tasks/copycolors/10way/config.json") == "eval"


def test_a_project_with_its_own_image_models_is_not_called_text_only():
    # Megatron-DeepSpeed: ViT classification and DINO pre-training under megatron/model/vision/, no multimodal LLM
    files = {"megatron/model/vision/classification.py": (
        "from megatron.model.module import MegatronModule\n\n\nclass VitClassificationModel(MegatronModule):\n"
        "    def __init__(self, config, num_classes):\n        super().__init__()\n"),
        "pretrain_gpt.py": "from megatron.training import pretrain\npretrain(train_valid_test_datasets_provider, model_provider)\n"}
    r = _audit(files).result("H1")
    assert r.status is Status.NA and r.detail.startswith("no multimodal LLM training recognised: the image model defined here (VitClassificationModel at")
    files.pop("megatron/model/vision/classification.py")
    assert _audit(files).result("H1").detail == "text-only project (no vision encoder)"


def test_a_partial_worker_count_is_headlined_by_its_most_common_value():
    loader = ("from torch.utils.data import DataLoader\n\n\ndef train(ds, model, optimizer):\n"
              "    loader = DataLoader(ds, batch_size=8, num_workers={n})\n"
              "    for batch in loader:\n        model(batch).loss.backward()\n        optimizer.step()\n")
    files = {f"recipes/train_{i}.py": loader.format(n=n) for i, n in enumerate((2, 2, 2, 1))}
    r = _audit(files).result("F1")
    assert r.status is Status.PARTIAL and r.detail.startswith("only 2 loader worker(s) for training")
    assert r.evidence[0].path != "recipes/train_3.py"


def test_a_launch_distilling_from_a_teacher_is_distillation_training():
    # Megatron-DeepSpeed ``compression/ds_pretrain_gpt_125M_dense_kd.sh``: ``--kd --kd-alpha-ce 1 --load-teacher $TEACHER``
    def launch(kd: bool) -> dict[str, str]:
        flags = " --kd --kd-alpha-ce 1 --kd-beta-ce 1 --load-teacher /ckpt/gpt-1.3B" if kd else ""
        return {"pretrain_gpt.py": "from megatron.training import pretrain\npretrain(train_valid_test_datasets_provider, model_provider)\n",
                "examples/compression/ds_pretrain_gpt_125M_dense_kd.sh": (
                    f"deepspeed pretrain_gpt.py --num-layers 12 --hidden-size 768 --seq-length 2048{flags}\n")}
    r = _audit(launch(True)).result("G6")
    assert r.status is Status.UNUSED and any(e.path.endswith("_kd.sh") for e in r.evidence)
    assert _audit(launch(False)).result("G6").status is Status.NA


def test_the_launched_model_sizes_the_project_not_an_overridden_default_or_a_borrowed_tokenizer():
    # FastChat: ``model_name_or_path`` defaults to facebook/opt-125m; every launch passes a LLaMA checkpoint; the RWKV
    # adapter borrows pythia-160m's tokenizer
    train = ("from dataclasses import dataclass, field\nfrom typing import Optional\nimport transformers\n\n\n@dataclass\n"
             "class ModelArguments:\n    model_name_or_path: Optional[str] = field(default='facebook/opt-125m')\n\n\n"
             "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
             "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
             "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
             "    transformers.Trainer(model=model, args=training_args).train()\n")
    rwkv = ("from transformers import AutoTokenizer\n\n\nclass RwkvModel:\n    def __init__(self, model_path):\n"
            "        self.tokenizer = AutoTokenizer.from_pretrained('EleutherAI/pythia-160m', use_fast=True)\n")
    files = {"fastchat/train/train.py": train, "fastchat/model/rwkv_model.py": rwkv}
    for name, path in (("7b", "~/model_weights/llama-7b"), ("7b_lora", "lmsys/vicuna-7b-v1.5"), ("13b", "~/model_weights/llama-13b"),
                       ("readme", "meta-llama/Llama-2-7b-hf")):
        files[f"scripts/train_{name}.sh"] = (f"torchrun --nproc_per_node=4 fastchat/train/train.py --model_name_or_path {path} "
                                             "--bf16 True --output_dir out\n")
    p = _audit(files).project
    assert p.params_billions == 7.0
    assert "125M" not in p.notes.get("params_distribution", {}) and "160M" not in p.notes.get("params_distribution", {})


def test_flash_attn_triton_kernels_are_a_librarys_and_get_no_triton_advice():
    files = {"olmo/train.py": (
        "import torch\n\n\nclass Trainer:\n    def __post_init__(self):\n        if self.cfg.fused_loss:\n"
        "            from flash_attn.ops.triton.cross_entropy import cross_entropy_loss\n            self.loss_fn = cross_entropy_loss\n\n"
        "    def train_step(self, batch):\n        loss = self.loss_fn(self.model(batch), batch['labels'])\n        loss.backward()\n"
        "        self.optim.step()\n")}
    audit = _audit(files)
    r = audit.result("D3")
    assert r.status is Status.UNUSED and "flash-attn's Triton kernels are imported" in r.detail
    assert build_plan(audit).get("D3") is None


def test_quantized_loading_offered_as_an_option_is_named():
    cli = ("import argparse\nfrom transformers import AutoModelForCausalLM\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
           "    parser.add_argument('--model-path', type=str, default='lmsys/vicuna-7b-v1.5')\n"
           "    parser.add_argument('--load-8bit', action='store_true', help='Use 8-bit quantization')\n"
           "    args = parser.parse_args()\n    model = AutoModelForCausalLM.from_pretrained(args.model_path, load_in_8bit=args.load_8bit)\n"
           "    output_ids = model.generate(input_ids, max_new_tokens=512)\n")
    r = _audit({"fastchat/serve/cli.py": cli}).result("J4")
    assert r.status is Status.UNUSED and "quantized loading is an option no launch turns on (load_8bit" in r.detail


def test_a_slurm_script_running_accelerate_across_its_nodes_is_multi_node():
    # alignment-handbook ``recipes/launch.slurm``: srun options with arithmetic, and ``bash -c "$LAUNCHER $CMD"``
    slurm = (
        "#!/bin/bash\n#SBATCH --ntasks-per-node=1\nNUM_NODES=$SLURM_NNODES\nGPUS_PER_NODE=8\n"
        "WORLD_SIZE=$(($NUM_NODES*$GPUS_PER_NODE))\n"
        "if [[ \"$USE_VLLM\" == \"true\" ]]; then\n     NUM_NODES=$((NUM_NODES - 1))\nfi\n"
        "export CMD=\" \\\n    scripts/sft.py --config recipes/sft.yaml\n    \"\n"
        "export LAUNCHER=\"ACCELERATE_LOG_LEVEL=info accelerate launch \\\n"
        "    --config_file recipes/accelerate_configs/zero3.yaml  \\\n    --num_machines $NUM_NODES \\\n"
        "    --num_processes $WORLD_SIZE \\\n    --main_process_ip $MASTER_ADDR \\\n    --machine_rank $SLURM_PROCID \\\n"
        "    --rdzv_backend=c10d \\\n    \"\n"
        "NODELIST=$(IFS=,; echo \"${TRAIN_NODES[*]}\")\n"
        "SRUN_ARGS=\" \\\n    --wait=60 \\\n    --nodes=$NUM_NODES \\\n    --ntasks=$NUM_NODES \\\n    --nodelist=$NODELIST\n    \"\n"
        "srun $SRUN_ARGS bash -c \"$LAUNCHER $CMD\" 2>&1\n")
    files = {"recipes/launch.slurm": slurm,
             "scripts/sft.py": ("from trl import SFTConfig, SFTTrainer, TrlParser\n\n\ndef main(script_args, training_args, model_args):\n"
                                "    trainer = SFTTrainer(model=model_args.model_name_or_path, args=training_args)\n    trainer.train()\n")}
    audit = _audit(files)
    [launch] = [x for x in audit.facts.launches() if x.launcher == "accelerate"]
    assert launch.script == "scripts/sft.py" and launch.launcher_args["machine_rank"] == "$SLURM_PROCID"
    assert audit.project.multi_node


def test_a_projects_own_vision_language_model_is_multimodal_and_its_eval_scripts_are_context():
    # nanoVLM: ``class VisionLanguageModel(nn.Module)`` joins its own ViT to its language model; ``evaluation.py`` and
    # ``eval.slurm`` run lmms-eval, not training
    files = {
        "models/vision_transformer.py": "import torch.nn as nn\n\n\nclass ViT(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n",
        "models/vision_language_model.py": (
            "import torch.nn as nn\nfrom models.vision_transformer import ViT\n\n\nclass VisionLanguageModel(nn.Module):\n"
            "    def __init__(self, cfg):\n        super().__init__()\n        self.vision_encoder = ViT(cfg)\n"),
        "train.py": ("from models.vision_language_model import VisionLanguageModel\n\n\ndef train(cfg, loader, optimizer):\n"
                     "    model = VisionLanguageModel(cfg)\n    for batch in loader:\n        model(batch).loss.backward()\n        optimizer.step()\n"),
        "evaluation.py": "import lmms_eval\n\n\ndef main():\n    lmms_eval.evaluate(model)\n",
        "eval.slurm": "#!/bin/bash\n#SBATCH --nodes=1\npython evaluation.py --model nanovlm --tasks mmstar\n",
    }
    audit = _audit(files)
    assert audit.project.multimodal
    assert audit.roles.role("evaluation.py") == "eval" and audit.roles.role("eval.slurm") == "eval"
    assert audit.result("H1").status is not Status.NA
