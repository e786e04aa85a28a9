"""Snippets fitted to the repository: dialects, TrainingArguments calls, launcher flags, DeepSpeed, Lightning."""

from __future__ import annotations

import ast

import yaml

from checks.engine import build_facts
from checks.model import Project
from checks.project import detect_project
from reports.applicability import gpu
from reports.snippets import fit, repo_style

from .helpers import fake_check

LIGER = fake_check("D5", snippets={"hf-yaml": "use_liger_kernel: true\n", "python": "from liger_kernel.transformers import AutoLigerKernelForCausalLM\n"})
FLASH = fake_check("D1", snippets={"hf-yaml": "attn_implementation: flash_attention_2\n"})


def style(files: dict[str, str]):
    facts = build_facts((p, t.encode()) for p, t in files.items())
    return repo_style(facts, detect_project(facts))


def test_axolotl_dialect():
    s = style({"examples/llama.yml": "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 2\nsequence_len: 4096\ndatasets:\n  - path: x\n"})
    snip = fit(LIGER, s)
    doc = yaml.safe_load(snip.code)
    assert snip.target == "axolotl" and snip.where == "examples/llama.yml"
    assert doc["plugins"] == ["axolotl.integrations.liger.LigerPlugin"] and doc["liger_fused_linear_cross_entropy"] is True
    assert yaml.safe_load(fit(FLASH, s).code) == {"flash_attention": True}


def test_llamafactory_dialect():
    s = style({"examples/sft.yaml": "model_name_or_path: Qwen/Qwen2-7B\nstage: sft\nfinetuning_type: lora\ncutoff_len: 2048\ntemplate: qwen\n"})
    assert yaml.safe_load(fit(FLASH, s).code) == {"flash_attn": "fa2"}
    assert yaml.safe_load(fit(LIGER, s).code) == {"enable_liger_kernel": True}


def test_training_arguments_call_gets_keywords():
    s = style({"train.py": "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', learning_rate=1e-4)\n"})
    snip = fit(LIGER, s)
    assert snip.target == "hf-args" and snip.where == "train.py:2"
    tree = ast.parse(snip.code)
    call = tree.body[0].value
    assert call.func.id == "TrainingArguments" and [k.arg for k in call.keywords] == ["use_liger_kernel"]


def test_launcher_flags_for_hfargumentparser_scripts():
    s = style({"run.sh": "torchrun --nproc_per_node 8 train.py --learning_rate 1e-4 --output_dir out\n", "train.py": "import torch\n"})
    snip = fit(LIGER, s)
    assert snip.target == "hf-flags" and "--use_liger_kernel True" in snip.code and snip.where == "run.sh:1"


def test_deepspeed_and_raw_loop_and_unfitted():
    ds = fake_check("A3", snippets={"deepspeed-json": '{"zero_optimization": {"stage": 3}}\n', "python": "import deepspeed\n"})
    s = style({"configs/ds.json": '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 1}}', "train.py": "import torch\nloss.backward()\n"})
    assert fit(ds, s).target == "deepspeed-json" and fit(ds, s).where == "configs/ds.json"
    raw = style({"train.py": "import torch\nloss.backward()\n"})
    assert fit(ds, raw).target == "python" and fit(ds, raw).where == "train.py"
    only_yaml = fake_check("I4", snippets={"hf-yaml": "logging_steps: 10\n"})
    snip = fit(only_yaml, raw)
    assert snip.fitted is False and snip.target == "hf-yaml"
    assert fit(fake_check("X9"), raw) is None


def test_lightning_first_when_the_repo_uses_it():
    chk = fake_check("C1", snippets={"hf-yaml": "bf16: true\n", "lightning": "trainer = L.Trainer(precision=\"bf16-mixed\")\n"})
    s = style({"train.py": "import lightning as L\ntrainer = L.Trainer(devices=8)\ntrainer.fit(model)\n"})
    snip = fit(chk, s)
    assert snip.target == "lightning" and snip.where == "train.py:2"
    assert "16-mixed" in fit(chk, s, gpu("v100")).code and "bf16" not in fit(chk, s, gpu("v100")).code


def test_gpu_names_are_normalised():
    assert gpu("NVIDIA A100-SXM4-80GB").name == "A100"
    assert gpu("Tesla V100-PCIE-32GB").bf16 is False
    assert gpu("H100 80GB HBM3").fp8 is True
    assert gpu("L40S").fp8 is True
    assert gpu("tpu-v5") is None and gpu(None) is None
    assert Project(hardware="h200").hardware == "h200"


MEGATRON_RUN = """\
#!/bin/bash
GPT_ARGS="--num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048"
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --tensor-model-parallel-size 2 \\
    --micro-batch-size 4 --global-batch-size 256 \\
    --lr 1.5e-4 --train-iters 500000 --bf16 \\
    --data-path /data/my-gpt2_text_document --log-interval 1
"""


def test_megatron_script_gets_megatron_flags_never_hf_keys():
    s = style({"examples/pretrain_gpt.sh": MEGATRON_RUN, "pretrain_gpt.py": "from megatron.training import pretrain\npretrain()\n"})
    assert s.dialect == "megatron"
    ckpt = fake_check("C3", snippets={"hf-yaml": "gradient_checkpointing: true\n", "python": "model.gradient_checkpointing_enable()\n"})
    snip = fit(ckpt, s)
    assert snip.target == "megatron-flags" and "--recompute-granularity selective" in snip.code
    assert snip.where.startswith("examples/pretrain_gpt.sh:")
    assert "gradient_checkpointing" not in snip.code and "_" not in snip.code.split("\n")[1]
    assert fit(LIGER, s) is None  # no Megatron spelling for Liger: no HF snippet instead


def test_dev_makefile_and_ci_config_are_never_the_place_to_edit():
    from checks.engine import audit_files
    from reports.advice import build_plan

    files = {
        "train.py": "from transformers import TrainingArguments, Trainer\nargs = TrainingArguments(output_dir='o')\nTrainer(args=args).train()\n",
        "Makefile": "test:\n\tpytest tests\nstyle:\n\truff check .\n",
        ".github/workflows/ci.yml": "jobs:\n  t:\n    steps:\n      - run: python -m pytest --learning_rate 1e-4 --output_dir o\n",
        "tests/fixtures/sft.yaml": "learning_rate: 1.0e-4\noutput_dir: out\nbf16: false\nlogging_steps: 1\n",
    }
    audit = audit_files((p, t.encode()) for p, t in files.items())
    for rec in build_plan(audit).recommendations:
        if rec.snippet and rec.snippet.where:
            assert rec.snippet.where.startswith("train.py"), (rec.check, rec.snippet.where)


def test_a_script_with_its_own_argparse_gets_no_trainingarguments_flag_it_lacks():
    """OpenFlamingo's train.py parses its own options (``--precision``, ``--lr_scheduler``): appending
    ``--use_liger_kernel True`` to its README command would stop the run at argument parsing."""
    train = ("import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--learning_rate', type=float, default=1e-4)\n"
             "parser.add_argument('--lr_scheduler', default='constant')\nparser.add_argument('--precision', default='fp32')\n"
             "args = parser.parse_args()\n")
    run = "torchrun --nproc_per_node 8 train.py --learning_rate 1e-4 --lr_scheduler cosine\n"
    snip = fit(LIGER, style({"run.sh": run, "train.py": train}))
    assert snip.target == "python" and "--use_liger_kernel" not in snip.code
    # control: the same command for a script that parses TrainingArguments takes every TrainingArguments field
    hf = "from transformers import HfArgumentParser, TrainingArguments\n(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n"
    snip = fit(LIGER, style({"run.sh": run, "train.py": train + hf}))
    assert snip.target == "hf-flags" and "--use_liger_kernel True" in snip.code


def test_a_trainingarguments_field_newer_than_the_pinned_transformers_is_not_offered():
    """lm-buddy pins transformers==4.36.2; ``use_liger_kernel`` is a TrainingArguments field from 4.45.0 on."""
    train = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', learning_rate=1e-4)\n"
    old = fit(LIGER, style({"train.py": train, "requirements.txt": "transformers==4.36.2\n"}))
    assert old.target == "python" and "use_liger_kernel" not in old.code
    bounded = fit(LIGER, style({"train.py": train, "requirements.txt": "transformers>=4.30,<4.45\n"}))
    assert bounded.target == "python"
    for spec in ("transformers==4.46.1\n", "transformers>=4.30\n"):  # controls: a release that has it, or no upper bound
        snip = fit(LIGER, style({"train.py": train, "requirements.txt": spec}))
        assert snip.target == "hf-args" and "use_liger_kernel=True" in snip.code


def test_a_recipe_frameworks_key_is_never_offered_to_a_plain_trl_recipe():
    # alignment-handbook: TRL scripts read recipes with TrlParser, which refuses unknown keys; F6's hf-yaml snippet is
    # LLaMA-Factory's ``tokenized_path``
    offline = fake_check("F6", snippets={"hf-yaml": "tokenized_path: /data/tokenized/sft_qwen2\n",
                                         "python": "tok = raw.map(tokenize, batched=True)\ntok.save_to_disk('/data/tokenized/train')\n"})
    trl = {"recipes/zephyr-7b-beta/sft/config_full.yaml": "model_name_or_path: mistralai/Mistral-7B-v0.1\nbf16: true\nlogging_steps: 5\n",
           "scripts/sft.py": "from trl import SFTConfig, SFTTrainer, TrlParser\nparser = TrlParser((SFTConfig,))\n"}
    snip = fit(offline, style(trl))
    assert snip is not None and "tokenized_path" not in snip.code
    lf = style({"examples/sft.yaml": "model_name_or_path: Qwen/Qwen2-7B\nstage: sft\nfinetuning_type: lora\ncutoff_len: 2048\ntemplate: qwen\n"})
    assert yaml.safe_load(fit(offline, lf).code) == {"tokenized_path": "/data/tokenized/sft_qwen2"}


def test_snippets_go_to_the_runs_launch_and_trainer_script_not_a_test_script_or_a_constants_module():
    # FastChat: ``scripts/test_readme_train.sh`` tests the README's command; ``fastchat/constants.py`` sorts first
    files = {
        "fastchat/constants.py": "SERVER_ERROR_MSG = 'NETWORK ERROR'\n",
        "fastchat/train/train.py": ("import transformers\nfrom fastchat.constants import SERVER_ERROR_MSG\n\n\ndef train():\n"
                                    "    trainer = transformers.Trainer(model=model, args=training_args)\n    trainer.train()\n"),
        "scripts/test_readme_train.sh": "torchrun --nproc_per_node=4 fastchat/train/train.py --bf16 True --per_device_train_batch_size 2\n",
        "scripts/train_vicuna_7b.sh": "torchrun --nproc_per_node=4 fastchat/train/train.py --bf16 True --per_device_train_batch_size 4\n",
    }
    facts = build_facts((p, t.encode()) for p, t in files.items())
    roles = {p: "training" for p in files if p.endswith(".py")} | {p: "launch" for p in files if p.endswith(".sh")}
    s = repo_style(facts, detect_project(facts), roles)
    assert s.where["hf-flags"].startswith("scripts/train_vicuna_7b.sh")
    assert s.where["python"] == "fastchat/train/train.py"


def test_data_parallel_advice_for_an_hf_trainer_script_is_its_launch():
    # alpaca-lora / qlora: ``python finetune.py`` around transformers' Trainer. The report offered a hand-written
    # ``DDP(model.to(local_rank))``, which the Trainer would wrap a second time; the fix is a torchrun launch of the script
    from checks.rules.a_parallelism import A1DataParallel

    s = style({"finetune.py": ("import transformers\n\n\ndef train():\n"
                               "    trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(output_dir='o'))\n"
                               "    trainer.train()\n"),
               "README.md": "```bash\npython finetune.py --base_model decapoda-research/llama-7b-hf\n```\n"})
    snip = fit(A1DataParallel(), s)
    assert snip.target == "shell" and snip.code.strip() == "torchrun --nproc_per_node=8 finetune.py"
    # control: a project with its own loop gets the DDP wrapper in that loop
    loop = style({"train.py": "import torch\nloss = model(x).loss\nloss.backward()\noptimizer.step()\n"})
    assert fit(A1DataParallel(), loop).target == "python"


ACCUM = fake_check("C5", snippets={"hf-yaml": "per_device_train_batch_size: 4\ngradient_accumulation_steps: 8\n"})
_HF_TRAIN = ("import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
             "    (args,) = parser.parse_args_into_dataclasses()\n    transformers.Trainer(model=None, args=args).train()\n")


def test_accumulation_flags_keep_the_launchs_global_batch():
    # appended flags win: the example's 4 x 8 would turn the launch's 16 x 1 into 32 sequences per GPU per step
    s = style({"train.py": _HF_TRAIN, "scripts/finetune.sh": (
        "deepspeed train.py --deepspeed zero3.json --bf16 True --per_device_train_batch_size 16 \\\n"
        "    --gradient_accumulation_steps 1 --output_dir out\n")})
    code = fit(ACCUM, s).code
    assert "--per_device_train_batch_size 8 --gradient_accumulation_steps 2" in code and "16 x 1 = 8 x 2" in code, code
    # a micro-batch of 1 cannot be halved: the comment says the global batch then grows
    s = style({"train.py": _HF_TRAIN, "scripts/finetune.sh": (
        "deepspeed train.py --bf16 True --per_device_train_batch_size 1 --gradient_accumulation_steps 4 --output_dir out\n")})
    code = fit(ACCUM, s).code
    assert "--gradient_accumulation_steps 8" in code and "rescale the learning rate" in code and "per_device" not in code, code


def test_flags_for_a_bash_c_command_go_inside_its_quotes():
    s = style({"train.py": _HF_TRAIN, "scripts/finetune.sh": (
        "srun --nodes=2 bash -c 'torchrun --nnodes 2 --nproc_per_node 8 train.py \\\n    --bf16 True \\\n"
        "    --per_device_train_batch_size 4 \\\n    --output_dir out'\n")})
    assert fit(LIGER, s).code.startswith("# add inside the quoted training command (bash -c '...') in scripts/finetune.sh:1")
