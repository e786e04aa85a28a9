"""G1-G6: the judgement calls beyond the checks' own examples."""

from __future__ import annotations

from checks.model import Priority
from tests.rules_ghj.ghj_util import audit, status

NANO = (
    "import argparse, math\n"
    "p = argparse.ArgumentParser()\n"
    "p.add_argument('--learning_rate', default=1e-3, type=float)\n"
    "p.add_argument('--decay_lr', action='store_true')\n"
    "p.add_argument('--warmup_iters', default=100, type=int)\n"
    "p.add_argument('--lr_decay_iters', default=5000, type=int)\n"
    "class Trainer:\n"
    "    def get_lr(self, it):\n"
    "        if it < self.args.warmup_iters:\n"
    "            return self.args.learning_rate * it / self.args.warmup_iters\n"
    "        return 0.5 * (1.0 + math.cos(math.pi * it / self.args.lr_decay_iters))\n"
    "    def train(self):\n"
    "        lr = self.get_lr(self.iter_num) if self.args.decay_lr else self.args.learning_rate\n"
    "        loss.backward()\n"
)


def test_g1_nanogpt_schedule_behind_a_switch_nobody_turns_on_is_constant():
    r, _ = audit({"train.py": NANO}, "G1")
    assert r.status.value == "unused"
    assert r.values["decay"] is False


def test_g1_nanogpt_schedule_turned_on_by_the_launch_script():
    r, _ = audit({"train.py": NANO, "run.sh": "torchrun --nproc_per_node 8 train.py --decay_lr\n"}, "G1")
    assert r.status.value == "used"
    assert any(e.path == "run.sh" and e.key == "--decay_lr" for e in r.evidence)


def test_g1_hf_default_is_partial_with_the_default_as_evidence_key():
    r, _ = audit({"train.py": "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o')\n"}, "G1")
    assert r.status.value == "partial"
    assert r.evidence[0].key == "lr_scheduler_type"


def test_g1_get_scheduler_name_resolved_through_argparse():
    files = {
        "train.py": "import argparse\nfrom transformers import get_scheduler\np = argparse.ArgumentParser()\n"
        "p.add_argument('--lr_scheduler_type', default='cosine')\np.add_argument('--num_warmup_steps', type=int, default=0)\n"
        "args = p.parse_args()\n"
        "s = get_scheduler(args.lr_scheduler_type, optimizer=opt, num_warmup_steps=args.num_warmup_steps, num_training_steps=n)\n",
    }
    assert status(files, "G1") == "partial"  # cosine, but the warmup default 0 is never overridden
    files["run.sh"] = "accelerate launch train.py --num_warmup_steps 500\n"
    assert status(files, "G1") == "used"


def test_g1_verl_constant_warmup_style_is_unused():
    cfg = "actor_rollout_ref:\n  actor:\n    optim:\n      lr: 1e-6\n      lr_warmup_steps: -1\n      lr_warmup_steps_ratio: 0.\n" \
          "      warmup_style: constant\n"
    r, _ = audit({"verl/trainer/config/ppo_trainer.yaml": cfg}, "G1")
    assert r.status.value == "unused"
    assert r.values["lr_schedule"] == "constant"


def test_g1_torchtune_component_and_lambda_with_warmup():
    tt = "lr_scheduler:\n  _component_: torchtune.training.lr_schedulers.get_cosine_schedule_with_warmup\n  num_warmup_steps: 100\n"
    assert status({"recipes/configs/llama3/8B_lora.yaml": tt}, "G1") == "used"
    lam = "import torch\nsched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, step / warmup_steps))\n"
    assert status({"train.py": lam}, "G1") == "partial"  # warmup, no decay


def test_g2_priority_follows_the_global_batch():
    small = {"train.yaml": "per_device_train_batch_size: 4\ngradient_accumulation_steps: 8\nlearning_rate: 1e-5\n"}
    r, _ = audit(small, "G2")
    assert r.status.value == "unused" and r.priority is None and r.values["global_batch"] == 32
    huge = {"ds.json": '{"train_batch_size": 65536, "optimizer": {"type": "AdamW"}}'}
    assert audit(huge, "G2")[0].priority == Priority.MEDIUM
    big = {"run.sh": "torchrun --nnodes 16 --nproc_per_node 8 train.py --per_device_train_batch_size 16 --gradient_accumulation_steps 4\n"}
    r, _ = audit(big, "G2")
    assert r.values["global_batch"] == 8192 and r.priority == Priority.LOW


def test_g3_fine_tuning_gets_no_curriculum_advice():
    files = {"train.py": "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2-7B')\n"}
    r, p = audit(files, "G3")
    assert r.status.value == "unused" and not p.pretrains and r.priority is None


def test_g4_priority_high_only_for_a_large_full_fine_tune():
    big = {"sft.yaml": "model_name_or_path: meta-llama/Llama-2-13b-hf\nstage: sft\ndo_train: true\nfinetuning_type: full\ntemplate: llama2\n"}
    r, _ = audit(big, "G4")
    assert r.status.value == "unused" and r.priority == Priority.HIGH
    small = {"sft.yaml": big["sft.yaml"].replace("Llama-2-13b-hf", "Qwen2-0.5B")}
    assert audit(small, "G4")[0].priority is None


def test_g4_llamafactory_default_is_lora_and_bnb_makes_it_qlora():
    cfg = "model_name_or_path: meta-llama/Meta-Llama-3-8B\nstage: sft\ndo_train: true\nquantization_bit: 4\ntemplate: llama3\n"
    r, _ = audit({"examples/qlora.yaml": cfg}, "G4")
    assert r.status.value == "used" and r.values["finetuning"] == "qlora"


def test_g4_peft_behind_an_if_flag_that_is_off():
    code = (
        "import argparse\nfrom peft import LoraConfig, get_peft_model\nfrom transformers import AutoModelForCausalLM\n"
        "p = argparse.ArgumentParser()\np.add_argument('--use_lora', action='store_true')\nargs = p.parse_args()\n"
        "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2-7B')\n"
        "if args.use_lora:\n    model = get_peft_model(model, LoraConfig(r=8))\n"
    )
    assert status({"train.py": code}, "G4") == "unused"
    assert status({"train.py": code, "run.sh": "python train.py --use_lora\n"}, "G4") == "used"


def test_g4_g5_not_applicable_to_training_from_scratch_but_applicable_to_rl():
    scratch = {"train.py": "from model import GPT, GPTConfig\nmodel = GPT(GPTConfig())\nloss.backward()\n"}
    assert status(scratch, "G4") == "n/a" and status(scratch, "G5") == "n/a"
    grpo = {"grpo.py": "from trl import GRPOConfig, GRPOTrainer\ntrainer = GRPOTrainer(model='Qwen/Qwen2.5-7B', args=GRPOConfig())\n"}
    assert status(grpo, "G4") == "unused"


def test_g5_whole_model_freezes_do_not_count_but_freeze_then_unfreeze_does():
    teacher = "import torch\nteacher.requires_grad_(False)\nfor p in model.parameters():\n    p.requires_grad = False\n"
    files = {"distill.py": teacher, "x_finetune.py": "from transformers import AutoModel\nm = AutoModel.from_pretrained('bert-base-uncased')\n"}
    assert status(files, "G5") == "unused"
    unfreeze = "def setup(model):\n    for p in model.parameters():\n        p.requires_grad = False\n" \
               "    for p in model.lm_head.parameters():\n        p.requires_grad = True\n"
    files["x_finetune.py"] += unfreeze
    assert status(files, "G5") == "used"


def test_g5_lora_only_is_unused_without_advice():
    files = {"train.py": "from peft import LoraConfig, get_peft_model\nmodel = get_peft_model(model, LoraConfig(r=8))\n"}
    r, _ = audit(files, "G5")
    assert r.status.value == "unused" and r.priority is None


def test_g6_verl_fused_kernels_and_liger_patch_alone():
    verl = "actor_rollout_ref:\n  model:\n    use_fused_kernels: True\nalgorithm:\n  adv_estimator: grpo\n"
    assert status({"ppo_trainer.yaml": verl}, "G6") == "used"
    lf = "model_name_or_path: Qwen/Qwen2.5-7B\nstage: kto\nenable_liger_kernel: true\ntemplate: qwen\n"
    r, _ = audit({"kto.yaml": lf}, "G6")
    assert r.status.value == "unused" and r.evidence and r.priority == Priority.MEDIUM


def test_g5_projector_only_stage_and_mllm_defaults_in_a_text_only_fork():
    llava = {"scripts/pretrain.sh": "deepspeed llava/train/train_mem.py --model_name_or_path lmsys/vicuna-7b-v1.5 "
             "--vision_tower openai/clip-vit-large-patch14-336 --tune_mm_mlp_adapter True\n"}
    assert status(llava, "G5") == "used"
    qwen = {"sft.sh": "torchrun --nproc_per_node 8 train_qwen.py --model_name_or_path Qwen/Qwen2.5-VL-7B-Instruct "
            "--tune_mm_vision True --tune_mm_mlp True --tune_mm_llm True\n"}
    assert status(qwen, "G5") == "unused"  # everything trains
    fork = {"src/hparams.py": "from dataclasses import dataclass, field\n@dataclass\nclass FinetuningArguments:\n"
            "    freeze_vision_tower: bool = field(default=True)\n    freeze_trainable_layers: int = field(default=2)\n",
            "examples/full_sft.yaml": "model_name_or_path: meta-llama/Meta-Llama-3-8B\nstage: sft\nfinetuning_type: full\ntemplate: llama3\n"}
    assert status(fork, "G5") == "unused"


QWEN_SET_MODEL = (
    "from transformers import Qwen2_5_VLForConditionalGeneration\n"
    "def set_model(model_args, model):\n"
    "    if model_args.tune_mm_vision:\n        for n, p in model.visual.named_parameters():\n            p.requires_grad = True\n"
    "    else:\n        for n, p in model.visual.named_parameters():\n            p.requires_grad = False\n"
    "    if model_args.tune_mm_llm:\n        for n, p in model.language_model.named_parameters():\n            p.requires_grad = True\n"
    "    else:\n        for n, p in model.language_model.named_parameters():\n            p.requires_grad = False\n"
)


def test_g5_flag_branches_follow_the_launch_flags():
    launch = "torchrun --nproc_per_node 8 qwenvl/train/train_qwen.py --model_name_or_path Qwen/Qwen2.5-VL-7B-Instruct " \
             "--tune_mm_vision {v} --tune_mm_llm True\n"
    files = {"qwenvl/train/train_qwen.py": QWEN_SET_MODEL, "scripts/sft.sh": launch.format(v="True")}
    assert status(files, "G5") == "unused"
    files["scripts/sft.sh"] = launch.format(v="False")
    assert status(files, "G5") == "used"


def test_g6_liger_on_the_sft_recipe_is_not_a_fused_dpo_loss():
    files = {"scripts/run_dpo.py": "from trl import DPOConfig, DPOTrainer\ntrainer = DPOTrainer(model, args=training_args)\n",
             "scripts/run_sft.py": "from trl import SFTConfig, SFTTrainer\ntrainer = SFTTrainer(model, args=training_args)\n",
             "recipes/zephyr/sft/config_full.yaml": "model_name_or_path: mistralai/Mistral-7B-v0.1\nuse_liger_kernel: true\n",
             "recipes/zephyr/dpo/config_full.yaml": "model_name_or_path: alignment-handbook/zephyr-7b-sft-full\nbeta: 0.01\n"}
    assert status(files, "G6") == "unused"
    files["recipes/zephyr/dpo/config_full.yaml"] += "use_liger_kernel: true\n"
    assert status(files, "G6") == "used"
