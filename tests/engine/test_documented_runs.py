"""A repository that ships no launch is configured by its README's training command (Stanford Alpaca, FastChat, Medusa);
serving and generation batch scripts do not size the training run (open-r1). Issue #9."""

from __future__ import annotations

from checks.base import REGISTRY
from checks.engine import AuditOptions, audit_files
from checks.model import Status
from checks.rules.c_memory import ALPACA_README, ALPACA_TRAIN
from reports.snippets import fit, repo_style


def _audit(files: dict[str, str]):
    return audit_files(((p, t.encode()) for p, t in files.items()), options=AuditOptions())


def _style(files: dict[str, str]):
    a = _audit(files)
    return repo_style(a.facts, a.project, a.roles.by_path)


def test_a_model_keyword_is_not_appended_to_a_command_whose_parser_lacks_it():
    """`--attn_implementation` is no TrainingArguments field: Alpaca's HfArgumentParser would reject it, so D1's snippet goes
    into the training script, while `--dataloader_num_workers` (a TrainingArguments field) is appended to the command."""
    style = _style({"train.py": ALPACA_TRAIN, "README.md": ALPACA_README})
    assert "hf-flags" in style.targets and style.where["hf-flags"] == "README.md:4"
    d1 = fit(REGISTRY["D1"], style)
    assert d1 is not None and d1.target != "hf-flags" and "--attn_implementation" not in d1.code
    f1 = fit(REGISTRY["F1"], style)
    assert f1 is not None and f1.target == "hf-flags" and "--dataloader_num_workers" in f1.code


def test_a_parser_that_defines_the_model_keyword_takes_it_as_a_flag():
    train = ALPACA_TRAIN.replace("import transformers\n", "import transformers\nfrom dataclasses import dataclass\n\n\n"
                                 "@dataclass\nclass ModelArguments:\n    attn_implementation: str = 'sdpa'\n", 1)
    style = _style({"train.py": train, "README.md": ALPACA_README})
    d1 = fit(REGISTRY["D1"], style)
    assert d1 is not None and d1.target == "hf-flags" and "--attn_implementation flash_attention_2" in d1.code


SERVE = ("#!/bin/bash\n#SBATCH --job-name=r1-vllm\n#SBATCH --nodes=4\n#SBATCH --gpus-per-node=8\n\n"
         "srun vllm serve deepseek-ai/DeepSeek-R1 --tensor-parallel-size 8 --pipeline-parallel-size 4\n")
TRAIN_SLURM = ("#!/bin/bash\n#SBATCH --job-name=open_r1\n#SBATCH --gres=gpu:8\n\nNUM_NODES=$SLURM_NNODES\n"
               "srun accelerate launch --config_file recipes/zero3.yaml --num_machines $NUM_NODES src/pkg/grpo.py --config recipe.yaml\n")
GRPO = "from trl import GRPOTrainer\ntrainer = GRPOTrainer(model=model, args=args)\ntrainer.train()\n"


def test_a_serving_batch_script_does_not_size_the_training_run():
    files = {"src/pkg/grpo.py": GRPO, "slurm/train.slurm": TRAIN_SLURM, "slurm/experimental/serve_r1_vllm.slurm": SERVE}
    p = _audit(files).project
    assert p.num_nodes is None and not p.multi_node
    assert not any("serve_r1_vllm" in r for r in p.bottleneck_reasons)
    # the same node count in a training batch script is the run's
    p = _audit({**files, "slurm/train.slurm": TRAIN_SLURM.replace("#SBATCH --gres=gpu:8", "#SBATCH --nodes=4\n#SBATCH --gres=gpu:8")}).project
    assert p.num_nodes == 4


def test_a_documented_sbatch_on_several_nodes_is_a_documented_multi_node_run():
    readme = "## Training\n\n```shell\nsbatch --nodes=2 slurm/train.slurm --model Qwen2.5-1.5B-Instruct --task grpo\n```\n"
    a = _audit({"src/pkg/grpo.py": GRPO, "slurm/train.slurm": TRAIN_SLURM, "README.md": readme})
    assert a.project.notes["multi_node_documented"].startswith("README.md:4: `sbatch --nodes=2`")
    assert a.result("E1").status != Status.NA


TRAIN_MEM = "from pkg.train.train import train\n\nif __name__ == '__main__':\n    train()\n"
TRAIN_LORA = (
    "from peft import LoraConfig, get_peft_model\nfrom pkg.train.xformers_patch import replace_attn\nimport transformers\n\n\n"
    "def train():\n    replace_attn()\n    model = transformers.AutoModelForCausalLM.from_pretrained('m')\n"
    "    model = get_peft_model(model, LoraConfig(r=8))\n    transformers.Trainer(model=model).train()\n"
)
XFORMERS = "import xformers.ops\n\n\ndef replace_attn():\n    return xformers.ops.memory_efficient_attention\n"
DOC = "## Train\n\n```bash\ntorchrun --nproc_per_node=4 pkg/train/train_mem.py \\\n    --bf16 True \\\n    --output_dir out\n```\n"


def test_siblings_of_the_documented_entry_point_are_alternatives_of_a_repository_without_launches():
    """FastChat: the README runs train_mem.py (which imports train.py); train_lora.py beside it, and the xformers patch
    only it imports, are an alternative run: not LoRA, not xformers fusion for the documented run."""
    files = {"README.md": DOC, "pkg/train/train_mem.py": TRAIN_MEM, "pkg/train/train.py": ALPACA_TRAIN,
             "pkg/train/train_lora.py": TRAIN_LORA, "pkg/train/xformers_patch.py": XFORMERS}
    a = _audit(files)
    assert a.roles.role("pkg/train/train_lora.py") == "other" and a.roles.role("pkg/train/xformers_patch.py") == "other"
    assert a.roles.why["pkg/train/xformers_patch.py"] == "imported only by the alternative entry point pkg/train/train_lora.py"
    assert a.roles.role("pkg/train/train.py") == "training"
    assert a.result("G4").status == Status.UNUSED and a.result("D6").status == Status.UNUSED
    # with a shipped launch (which may run any of them through a variable), every train*.py stays an entry point
    shipped = _audit({**files, "scripts/lora.sh": "torchrun --nproc_per_node=4 $SCRIPT --bf16 True\n"})
    assert shipped.roles.role("pkg/train/train_lora.py") == "training" and shipped.result("G4").status == Status.USED
