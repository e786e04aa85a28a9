"""Round 44 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.model import Status
from checks.rules.a_parallelism import ONE_GPU_INFERENCE

from .claims import audit as _audit
from .claims import check as _check

# --- DeepSeek-VL (round 43 leftover): one-GPU generation scored as missing tensor parallelism and NCCL tuning ------------

_CLI_CHAT = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\ndef load_model(model_path):\n"
    "    vl_gpt = AutoModelForCausalLM.from_pretrained(model_path, trust_remote_code=True)\n"
    "    return vl_gpt.to(torch.bfloat16).cuda().eval()\n\n\n"
    "def chat(vl_gpt, inputs_embeds, attention_mask):\n"
    "    return vl_gpt.language_model.generate(inputs_embeds=inputs_embeds, attention_mask=attention_mask, max_new_tokens=512,"
    " do_sample=False, use_cache=True)\n")


def test_one_gpu_generation_leaves_tensor_parallel_and_nccl_out_of_the_score():
    a = _audit({"inference.py": ONE_GPU_INFERENCE, "cli_chat.py": _CLI_CHAT})
    assert a.project.does_inference and not a.project.does_training
    for cid in ("A4", "E4"):
        r = _check(a, cid)
        assert r.status is Status.NA and "no generation spans GPUs" in (r.detail or ""), (cid, r.status, r.detail)
    # control: the same chat run by a two-process launch spans GPUs; both stay judged
    b = _audit({"inference.py": ONE_GPU_INFERENCE, "cli_chat.py": _CLI_CHAT,
                "run.sh": "deepspeed --num_gpus 2 cli_chat.py --model_path deepseek-ai/deepseek-vl-7b-chat\n"})
    assert {_check(b, c).status for c in ("A4", "E4")} == {Status.UNUSED}


# --- gpt-fast (round 43 leftover): NCCL tuning advised for 8-GPU generation inside one node --------------------------------

def test_nccl_tuning_is_withheld_for_single_node_generation():
    from reports.advice import build_plan
    run = "torchrun --standalone --nproc_per_node=8 generate.py --compile --checkpoint_path checkpoints/model.pth\n"
    a = _audit({"generate.py": ONE_GPU_INFERENCE, "run.sh": run})
    assert _check(a, "E4").status is Status.UNUSED and not a.project.multi_node
    plan = build_plan(a)
    assert "E4" not in {r.check for r in plan.recommendations}
    assert any(w.check == "E4" and "no multi-node launch" in w.reason for w in plan.withheld)
    # control: across two nodes the advice stands
    b = _audit({"generate.py": ONE_GPU_INFERENCE, "run.sh": run.replace("--standalone ", "--nnodes 2 --node_rank $RANK ")})
    assert "E4" in {r.check for r in build_plan(b).recommendations}


# --- PiotrNawrot/nanoT5: a Hydra config with `every_steps` in three sections; its own Logger.log_stats ---------------------

_NANOT5_CONFIG = (
    "eval:\n  every_steps: 100000 # Eval once in the end\n  steps: 500\n\n"
    "checkpoint:\n  every_steps: 100000 # Save checkpoint once in the end\n\n"
    "logging:\n  neptune: false\n  every_steps: 100\n  grad_l2: true\n")
_NANOT5_TRAIN = (
    "import time\n\n\ndef maybe_save_checkpoint(accelerator, args):\n"
    "    if (args.current_train_step > args.optim.total_steps\n"
    "        or args.current_train_step % args.checkpoint.every_steps == 0):\n"
    "        output_dir = f'checkpoint-pt-{args.current_train_step}'\n        accelerator.save_state(output_dir=output_dir)\n\n\n"
    "def maybe_logging(averager, args, model, optimizer, logger):\n"
    "    if args.current_train_step % args.logging.every_steps == 0:\n"
    "        averaged_stats = averager.average()\n"
    "        logger.log_stats(stats=averaged_stats, step=args.current_train_step, args=args, prefix='train/')\n"
    "        args.last_log = time.time()\n\n\n"
    "def train(model, train_dataloader, accelerator, lr_scheduler, optimizer, logger, args):\n"
    "    for batch_id, batch in enumerate(train_dataloader, start=1):\n"
    "        loss = model(**batch).loss\n        accelerator.backward(loss / args.optim.grad_acc)\n"
    "        if batch_id % args.optim.grad_acc == 0:\n            optimizer.step()\n            lr_scheduler.step()\n"
    "            optimizer.zero_grad(set_to_none=True)\n"
    "            maybe_logging(averager, args, model, optimizer, logger)\n"
    "            maybe_save_checkpoint(accelerator, args)\n            args.current_train_step += 1\n")


def test_guard_interval_is_read_from_the_section_its_attribute_path_names():
    a = _audit({"nanoT5/configs/default.yaml": _NANOT5_CONFIG, "nanoT5/utils/train_utils.py": _NANOT5_TRAIN})
    i3 = _check(a, "I3")
    assert i3.status is Status.USED and "every 100000 steps" in (i3.detail or ""), i3.detail
    # control: a leaf set in one section only is read as before
    b = _audit({"nanoT5/configs/default.yaml": "checkpoint:\n  every_steps: 5\n",
                "nanoT5/utils/train_utils.py": _NANOT5_TRAIN})
    assert _check(b, "I3").status is Status.UNUSED


def test_a_projects_own_logger_log_stats_is_a_log_call():
    a = _audit({"nanoT5/configs/default.yaml": _NANOT5_CONFIG, "nanoT5/utils/train_utils.py": _NANOT5_TRAIN})
    i4 = _check(a, "I4")
    assert i4.status is Status.USED and "log_stats() every 100 steps" in (i4.detail or ""), i4.detail
    # control: the same call with no guard logs every step
    b = _audit({"nanoT5/utils/train_utils.py": _NANOT5_TRAIN.replace(
        "    if args.current_train_step % args.logging.every_steps == 0:\n", "    if True:\n")})
    assert _check(b, "I4").status is Status.UNUSED


# --- JonasGeiping/cramming: failure handlers read as per-step logging; intermediate checkpoints switched off ---------------

_CRAMMING_DEFAULT = ("print_loss_every_nth_step: 1000\nsave_intermediate_checkpoints: False\nsave_every_nth_step: 10000\n"
                     "troubleshoot_strategy: recover_checkpoint\n")
_CRAMMING_PRETRAIN = (
    "import logging\nimport time\n\nlog = logging.getLogger(__name__)\n\n\n"
    "def main_training_process(cfg, model_engine, dataloader, checkpoint_rendevous):\n"
    "    training_allowed, no_recovery_necessary = True, True\n"
    "    for step, batch in enumerate(dataloader, 1):\n"
    "        loss = model_engine.step(batch)\n"
    "        if step % cfg.impl.print_loss_every_nth_step == 0:\n"
    "            log.info(f'Train loss {loss.item():2.4f} at step {step}')\n"
    "        if cfg.impl.save_intermediate_checkpoints and step % cfg.impl.save_every_nth_step == 0:\n"
    "            model_engine.save_training_checkpoint(checkpoint_rendevous, metadata=dict(step=step))\n"
    "        if not loss.detach().isfinite():\n"
    "            training_allowed, no_recovery_necessary = engage_troubleshooting(model_engine, step, training_allowed, cfg)\n"
    "        if not no_recovery_necessary:\n"
    "            log.info(f'Attempting reload of checkpoint on device {cfg.impl.local_rank}.')\n"
    "            model_engine.load_training_checkpoint(checkpoint_rendevous)\n"
    "            no_recovery_necessary = True\n\n\n"
    "def engage_troubleshooting(model_engine, step, training_allowed, cfg):\n"
    "    log.info(f'Non-finite loss in step {step} on device {cfg.impl.local_rank}.')\n"
    "    if 'recover_checkpoint' in cfg.impl.troubleshoot_strategy:\n        return training_allowed, False\n"
    "    log.info(f'Stopping training due to non-finite parameters in step {step}.')\n"
    "    return False, True\n")


def test_failure_handlers_are_not_per_step_logging():
    a = _audit({"cramming/config/impl/_default.yaml": _CRAMMING_DEFAULT, "pretrain.py": _CRAMMING_PRETRAIN})
    i4 = _check(a, "I4")
    assert i4.status is Status.USED and "every 1000 steps" in (i4.detail or ""), (i4.status, i4.detail)
    # control: a plain per-step loss line in the same loop is still found
    b = _audit({"cramming/config/impl/_default.yaml": _CRAMMING_DEFAULT, "pretrain.py": _CRAMMING_PRETRAIN.replace(
        "        if step % cfg.impl.print_loss_every_nth_step == 0:\n            log.info(", "        log.info(")})
    assert _check(b, "I4").status is Status.UNUSED


def test_a_loop_save_behind_a_switch_that_is_off_means_no_checkpoint_during_the_run():
    a = _audit({"cramming/config/impl/_default.yaml": _CRAMMING_DEFAULT, "pretrain.py": _CRAMMING_PRETRAIN})
    i3 = _check(a, "I3")
    assert i3.status is Status.USED and "save_intermediate_checkpoints = False" in (i3.detail or ""), i3.detail
    # control: switched on, the interval decides
    b = _audit({"cramming/config/impl/_default.yaml": _CRAMMING_DEFAULT.replace("save_intermediate_checkpoints: False",
                                                                                "save_intermediate_checkpoints: True"),
                "pretrain.py": _CRAMMING_PRETRAIN})
    assert "every 10000 steps" in (_check(b, "I3").detail or "")


# --- foundation-model-stack/fms-fsdp: FSDP's strategy picked in code from the run's `sharding_strategy` option --------------

_FMS_CONFIG = (
    "from dataclasses import dataclass\n\n\n@dataclass\nclass train_config:\n    model_variant: str = \"7b\"\n"
    "    sharding_strategy: str = \"hsdp\"\n    fsdp_activation_checkpointing: bool = False\n    mixed_precision: bool = True\n")
_FMS_POLICIES = (
    "from torch.distributed.fsdp import ShardingStrategy\n\n\ndef get_policies(cfg, rank, block):\n"
    "    if cfg.sharding_strategy == \"fsdp\":\n        sharding_strategy = ShardingStrategy.FULL_SHARD\n"
    "    elif cfg.sharding_strategy == \"hsdp\":\n        sharding_strategy = ShardingStrategy.HYBRID_SHARD\n"
    "    elif cfg.sharding_strategy == \"ddp\":\n        sharding_strategy = ShardingStrategy.NO_SHARD\n"
    "    else:\n        sharding_strategy = ShardingStrategy.FULL_SHARD\n    return sharding_strategy\n")
_FMS_MAIN = (
    "import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\nfrom fms_fsdp import config\n"
    "from fms_fsdp.utils.train_utils import get_policies\n\n\ndef main(**kwargs):\n    cfg = config.train_config()\n"
    "    sharding_strategy_policy = get_policies(cfg, rank, block)\n"
    "    model = FSDP(model, auto_wrap_policy=wrapping_policy, sharding_strategy=sharding_strategy_policy,\n"
    "                 device_id=torch.cuda.current_device(), limit_all_gathers=True)\n"
    "    loss = model(batch).loss\n    loss.backward()\n    optimizer.step()\n")


def test_fsdp_strategy_held_in_a_variable_is_the_options_value_not_fsdps_default():
    files = {"fms_fsdp/config/training.py": _FMS_CONFIG, "fms_fsdp/utils/train_utils.py": _FMS_POLICIES,
             "main_training_llama.py": _FMS_MAIN,
             "scripts/train.sh": "torchrun --nnodes=$SLURM_NTASKS --nproc_per_node=8 main_training_llama.py --sharding_strategy=hsdp\n"}
    a2 = _check(_audit(files), "A2")
    assert a2.status is Status.USED and "HYBRID_SHARD, set at scripts/train.sh:1" in (a2.detail or ""), a2.detail
    # control: options that disagree leave it unresolved, never FSDP's own default
    files["scripts/train_small.sh"] = "torchrun --nproc_per_node=8 main_training_llama.py --sharding_strategy=fsdp\n"
    a2 = _check(_audit(files), "A2")
    assert "FULL_SHARD" not in (a2.detail or "") and "not resolved: sharding_strategy=sharding_strategy_policy" in (a2.detail or ""), a2.detail


# --- BlinkDL/RWKV-LM: launches that disagree on a value all turn a `> 0` switch on ---------------------------------------

_RWKV_TRAIN = (
    "from argparse import ArgumentParser\n\nparser = ArgumentParser()\n"
    "parser.add_argument(\"--magic_prime\", default=0, type=int)\nparser.add_argument(\"--real_bsz\", default=1, type=int)\n"
    "args = parser.parse_args()\n")
_RWKV_TRAINER = (
    "import torch\n\n\ndef my_save(args, trainer, dd, ff):\n    torch.save(dd, ff)\n\n\n"
    "def on_train_batch_end(trainer, pl_module, args, real_step):\n"
    "    if trainer.is_global_zero:\n        if args.magic_prime > 0:\n"
    "            if int(real_step) == int(args.magic_prime // args.real_bsz) - 1:\n"
    "                my_save(args, trainer, pl_module.state_dict(), f\"{args.proj_dir}/rwkv-final.pth\")\n")


def test_a_comparison_every_launch_makes_true_is_not_switched_off_by_the_default():
    from checks.rules._helpers import guard_off
    files = {"train.py": _RWKV_TRAIN, "src/trainer.py": _RWKV_TRAINER,
             "demo-training-run.sh": "python train.py --magic_prime 2926181 --real_bsz 16\n",
             "demo-training-prepare.sh": "python train.py --magic_prime 2926181 --real_bsz 1\n",
             "demo-training-run-v7-pile.sh": "python train.py --magic_prime 81082817 --real_bsz 30\n",
             "demo-training-prepare-v7-pile.sh": "python train.py --magic_prime 81082817 --real_bsz 1\n"}
    f = _audit(files).facts
    save = next(c for c in f.calls("my_save") if c.path == "src/trainer.py")
    assert guard_off(f, save) == []
    # control: one more launch of the script that leaves it at its default runs with the branch off (LLaVA's one
    # ``--bits 4`` QLoRA launch beside the launches at the default 16)
    f = _audit({**files, "demo-eval.sh": "python train.py --real_bsz 1\n"}).facts
    assert guard_off(f, next(c for c in f.calls("my_save") if c.path == "src/trainer.py"))
    # control: launches that leave it at 0 keep the branch off
    files = {k: v.replace("2926181", "0").replace("81082817", "0") for k, v in files.items()}
    f = _audit(files).facts
    assert guard_off(f, next(c for c in f.calls("my_save") if c.path == "src/trainer.py"))


# --- shibing624/MedicalGPT: DeepSpeed configs shipped as options, passed by none of its launches -------------------------

_ZERO = ('{{\n  "fp16": {{"enabled": "auto"}},\n  "optimizer": {{"type": "AdamW", "params": {{"lr": "auto"}}}},\n'
         '  "zero_optimization": {{\n    "stage": {stage},\n    "overlap_comm": true,\n    "contiguous_gradients": true\n  }},\n'
         '  "train_micro_batch_size_per_gpu": "auto"\n}}\n')
_SFT = ("from transformers import HfArgumentParser, Trainer, TrainingArguments\n\n\ndef main():\n"
        "    parser = HfArgumentParser((TrainingArguments,))\n    (training_args,) = parser.parse_args_into_dataclasses()\n"
        "    trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset)\n    trainer.train()\n")


def _medicalgpt(launch: str) -> dict[str, str]:
    return {"training/supervised_finetuning.py": _SFT, "scripts/run_sft.sh": launch,
            **{f"scripts/zero{n}.json": _ZERO.format(stage=n) for n in (1, 2, 3)},
            "docs/training_params.md": "4. add `--deepspeed zero2.json` to run ZeRO-2; with little memory, `--deepspeed zero3.json --fp16`\n"}


def test_deepspeed_configs_no_launch_passes_are_options_not_the_run():
    launch = ("CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 training/supervised_finetuning.py \\\n"
              "    --model_name_or_path Qwen/Qwen3.5-2B --bf16 --output_dir outputs-sft\n")
    a = _audit(_medicalgpt(launch))
    a3, e2, d6 = _check(a, "A3"), _check(a, "E2"), _check(a, "D6")
    assert a3.status is Status.UNUSED and "ZeRO only if a run passes it" in (a3.detail or ""), a3.detail
    assert e2.status is Status.USED and "DDP overlaps" in (e2.detail or ""), e2.detail  # the Trainer's DDP, not overlap_comm
    assert not any(e.path.endswith(".json") for e in d6.evidence), d6.evidence
    assert _check(a, "B1").status is Status.PARTIAL
    # control: the launch passes zero3.json, which is then the run's
    b = _audit(_medicalgpt(launch.replace("--bf16", "--bf16 --deepspeed scripts/zero3.json")))
    assert _check(b, "A3").status is Status.USED and _check(b, "A3").values.get("zero_stage") == 3
    # control: the README's training command passes it (starcoder's chat/README.md): the documented run's
    files = _medicalgpt(launch)
    files["README.md"] = ("```bash\ntorchrun --nproc_per_node 8 training/supervised_finetuning.py --bf16 "
                          "--deepspeed scripts/zero3.json\n```\n")
    assert _check(_audit(files), "A3").status is Status.USED


# --- FoundationVision/LlamaGen: a copy of vLLM's engine hands speculative_config on under its own name ---------------------

_ENGINE = (
    "from typing import Optional\n\n\nclass LLMEngine:\n"
    "    def __init__(self, model_config, cache_config, executor_class, speculative_config: Optional[object]):\n"
    "        self.model_executor = executor_class(model_config=model_config, cache_config=cache_config,\n"
    "                                             speculative_config=speculative_config)\n\n"
    "    def step(self):\n        return self.model_executor.execute_model()\n")
_SAMPLE = ("from autoregressive.serve.llm import LLM\n\n\ndef main(args):\n"
           "    llm = LLM(args=args, model='autoregressive/serve/fake_json/GPT-B.json', gpu_memory_utilization=0.9,"
           " skip_tokenizer_init=True)\n    outputs = llm.generate(prompt_token_ids=prompt_token_ids, use_tqdm=False)\n")


def test_a_parameter_handed_on_under_its_own_name_configures_no_speculative_decoding():
    files = {"autoregressive/serve/llm_engine.py": _ENGINE, "autoregressive/serve/sample_c2i.py": _SAMPLE}
    assert _check(_audit(files), "J7").status is Status.UNUSED
    # control: a caller that passes a draft model configures it
    files["autoregressive/serve/sample_c2i.py"] = _SAMPLE.replace(
        "skip_tokenizer_init=True)", "skip_tokenizer_init=True,\n              speculative_config={'model': 'gpt-b-draft', 'num_speculative_tokens': 4})")
    assert _check(_audit(files), "J7").status is Status.USED


# --- PiotrNawrot/nanoT5: the README runs `python -m nanoT5.main`, whose data pipeline streams C4 -----------------------

_NANOT5_MAIN = (
    "import hydra\nfrom accelerate import Accelerator\n\nfrom .utils import get_dataloaders, get_model, train\n\n\n"
    "@hydra.main(config_path='configs', config_name='default', version_base='1.1')\ndef main(args):\n"
    "    accelerator = Accelerator()\n    model = get_model(args)\n    train_dataloader, test_dataloader = get_dataloaders(args)\n"
    "    train(model, train_dataloader, test_dataloader, accelerator, args)\n\n\nif __name__ == '__main__':\n    main()\n")
_NANOT5_MODEL_UTILS = (
    "import datasets\nfrom torch.utils.data import DataLoader\n\n\ndef get_dataloaders(args):\n"
    "    dataset = datasets.load_dataset('c4', 'en', streaming=True)\n"
    "    return DataLoader(dataset['train'], batch_size=args.optim.batch_size, num_workers=args.data.num_workers), None\n")


def test_a_documented_python_dash_m_main_that_trains_is_the_run():
    files = {"nanoT5/main.py": _NANOT5_MAIN, "nanoT5/utils/__init__.py": "from .model_utils import *\nfrom .train_utils import *\n",
             "nanoT5/utils/model_utils.py": _NANOT5_MODEL_UTILS, "nanoT5/utils/train_utils.py": _NANOT5_TRAIN,
             "README.md": "```\npython -m nanoT5.main \\\n    optim.name={adafactor,adamwscale} \\\n    optim.lr_scheduler={legacy,cosine}\n```\n"}
    a = _audit(files)
    assert a.roles.by_path["nanoT5/utils/model_utils.py"] == "training", a.roles.by_path
    assert _check(a, "F9").status is Status.USED
    # control: a package main that serves (no training loop called) is not made the run
    files["nanoT5/main.py"] = _NANOT5_MAIN.replace("    train(model, train_dataloader, test_dataloader, accelerator, args)\n",
                                                   "    serve(model, args)\n")
    assert _audit(files).roles.by_path["nanoT5/main.py"] != "training"


# --- fms-fsdp: activation checkpointing applied through a functools.partial the training script calls behind its switch ---

_FMS_AC = (
    "from functools import partial\n\nfrom torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (\n"
    "    CheckpointImpl,\n    apply_activation_checkpointing,\n    checkpoint_wrapper,\n)\n\n"
    "non_reentrant_wrapper = partial(\n    checkpoint_wrapper,\n    checkpoint_impl=CheckpointImpl.NO_REENTRANT,\n)\n\n\n"
    "def apply_fsdp_checkpointing(model, block, p):\n    def selective_checkpointing(submodule):\n"
    "        return isinstance(submodule, block)\n\n"
    "    apply_activation_checkpointing(\n        model,\n        checkpoint_wrapper_fn=non_reentrant_wrapper,\n"
    "        check_fn=selective_checkpointing,\n    )\n")
_FMS_AC_POLICIES = (
    "from functools import partial\n\nfrom fms_fsdp.policies.ac_handler import apply_fsdp_checkpointing\n\n\n"
    "def get_policies(cfg, rank, block):\n    apply_selective_ac = partial(apply_fsdp_checkpointing, block=block)\n"
    "    return apply_selective_ac\n")
_FMS_AC_MAIN = (
    "from fms_fsdp import config\nfrom fms_fsdp.utils.train_utils import get_policies\n\n\ndef main(**kwargs):\n"
    "    cfg = config.train_config()\n    apply_selective_ac = get_policies(cfg, rank, block)\n"
    "    if cfg.fsdp_activation_checkpointing:\n        apply_selective_ac(model, p=cfg.selective_checkpointing)\n"
    "    loss = model(batch).loss\n    loss.backward()\n    optimizer.step()\n")


def test_checkpointing_applied_through_a_partial_behind_a_switch_that_is_off_is_not_used():
    files = {"fms_fsdp/config/training.py": _FMS_CONFIG, "fms_fsdp/policies/ac_handler.py": _FMS_AC,
             "fms_fsdp/utils/train_utils.py": _FMS_AC_POLICIES, "main_training_llama.py": _FMS_AC_MAIN,
             "scripts/train.sh": "torchrun --nproc_per_node=8 main_training_llama.py --fsdp_activation_checkpointing=False\n"}
    assert _check(_audit(files), "C3").status is Status.UNUSED
    # control: the launch switches it on
    files["scripts/train.sh"] = files["scripts/train.sh"].replace("=False", "=True")
    assert _check(_audit(files), "C3").status is Status.USED


# --- togethercomputer/OpenChatKit: eight `python dist_clm_train.py $(echo ${ARGS}) --rank N &` processes, GPipe, a LoRA example

_OCK_TRAIN = (
    "import argparse\nimport torch\n\nfrom pipeline_parallel.dist_pp_utils import get_pp_module\n\n\n"
    "def save_checkpoint(pipe, args):\n    torch.save(pipe.model.state_dict(), f'{args.checkpoint_path}/prank_0_checkpoint.pt')\n\n\n"
    "def train_loop(args, pipe, device, train_data_loader):\n"
    "    for i, data in enumerate(train_data_loader):\n        pipe.sgd_iter(data['input_ids'].to(device))\n"
    "        if pipe.global_step % args.checkpoint_steps == 0:\n            save_checkpoint(pipe, args)\n\n\n"
    "def main():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--pipeline-group-size', type=int, default=4)\n"
    "    parser.add_argument('--checkpoint-steps', type=int, default=0)\n    parser.add_argument('--rank', type=int, default=0)\n"
    "    args = parser.parse_args()\n    pipe = get_pp_module(args)\n    train_loop(args, pipe, 'cuda', loader)\n\n\n"
    "if __name__ == '__main__':\n    main()\n")
_OCK_PIPE = ("import torch\n\n\nclass GpipeAsync:\n    def sgd_iter(self, input_):\n        loss = self.forward_stage(input_)\n"
             "        loss.backward()\n        self.optimizer.step()\n        self.global_step += 1\n")
_OCK_FSDP = (  # modules/dist_gpt_fsdp_module.py: nothing imports it
    "from fairscale.nn.data_parallel import FullyShardedDataParallel as FSDP\n\n\nclass GPTStageFull:\n"
    "    def __init__(self, args, emb, explicit_fsdp=True):\n        self._explicit_fsdp = explicit_fsdp\n"
    "        self.emb = self._create_first_layer(emb)\n\n"
    "    def _create_first_layer(self, emb):\n        if self._explicit_fsdp:\n"
    "            return FSDP(emb, reshard_after_forward=True, move_params_to_cpu=False, mixed_precision=False)\n        return emb\n")
_OCK_LORA = (
    "from peft import LoraConfig, get_peft_model\nfrom transformers import Trainer, TrainingArguments\n\n"
    "model = get_peft_model(model, LoraConfig(r=8, lora_alpha=32, target_modules=['query_key_value']))\n"
    "trainer = Trainer(model=model, train_dataset=data['train'], args=TrainingArguments(output_dir='outputs', max_steps=200))\n"
    "trainer.train()\n")


def _ock_launch(steps: int) -> str:
    ranks = "".join(f"python ${{DIR}}/dist_clm_train.py $(echo ${{ARGS}}) --cuda-id {r} --rank {r} \\\n    & \\\n" for r in range(8))
    return ('DIR=$(cd -- "$( dirname -- "${BASH_SOURCE[0]}" )" &> /dev/null && pwd)\n'
            f"CHECKPOINT_STEPS=${{FINETUNE_CHECKPOINT_STEPS:-{steps}}}\n\n"
            'ARGS="--model-name ${BASE_MODEL} --fp16 --checkpoint-steps ${CHECKPOINT_STEPS} \\\n'
            '--pipeline-group-size 8 --data-group-size 1 --pp-mode gpipe"\n\n'
            f"(trap 'kill 0' SIGINT; \\\n{ranks}wait)\n")


def _ock(steps: int = 10) -> dict[str, str]:
    return {"training/dist_clm_train.py": _OCK_TRAIN, "training/pipeline_parallel/dist_gpipe_pipeline_async.py": _OCK_PIPE,
            "training/pipeline_parallel/dist_pp_utils.py": "from .dist_gpipe_pipeline_async import GpipeAsync\n\n\n"
            "def get_pp_module(args):\n    return GpipeAsync(args)\n",
            "training/modules/dist_gpt_fsdp_module.py": _OCK_FSDP, "training/lora/example/redpajama-incite-chat-3b.py": _OCK_LORA,
            "training/finetune_RedPajama-INCITE-7B-Chat.sh": _ock_launch(steps),
            "training/finetune_RedPajama-INCITE-Chat-3B-v1.sh": _ock_launch(steps)}


def test_processes_started_side_by_side_by_rank_and_flags_echoed_from_a_variable():
    a = _audit(_ock())
    a1, a5 = _check(a, "A1"), _check(a, "A5")
    assert a1.status is Status.USED and "single-process" not in (a1.detail or ""), a1.detail
    assert a5.status is Status.USED and "pipeline parallel size 8" in (a5.detail or ""), a5.detail
    # control: one process, no rank, no pipeline flags echoed
    files = _ock()
    for k in [k for k in files if k.endswith(".sh")]:
        files[k] = "python training/dist_clm_train.py --model-name x\n"
    b = _audit(files)
    assert "single" in (_check(b, "A1").detail or "") and "size 8" not in (_check(b, "A5").detail or "")  # (the default's 4)


def test_fsdp_in_a_module_no_entry_point_reaches_counts_for_nothing():
    a = _audit(_ock())
    assert _check(a, "A2").status is Status.UNUSED and "no training entry point reaches" in (_check(a, "A2").detail or "")
    assert "FSDP" not in (_check(a, "E2").detail or "")
    single = {k: ("python training/dist_clm_train.py --model-name x\n" if k.endswith(".sh") else v) for k, v in _ock().items()}
    assert "FSDP" not in (_check(_audit(single), "A1").detail or ""), _check(_audit(single), "A1").detail
    # control: the training script imports it
    files = _ock()
    files["training/dist_clm_train.py"] = "from modules.dist_gpt_fsdp_module import GPTStageFull\n" + _OCK_TRAIN
    assert _check(_audit(files), "A2").status is Status.USED


def test_a_lora_example_of_its_own_does_not_make_full_fine_tunes_adapter_recipes():
    i3 = _check(_audit(_ock(10)), "I3")
    assert i3.status is Status.UNUSED and "every 10 steps" in (i3.detail or ""), i3.detail
    # control: the launched script itself wraps the model with PEFT: adapter recipes, 10 steps is sane for them
    files = _ock(10)
    files["training/dist_clm_train.py"] = _OCK_TRAIN.replace(
        "    pipe = get_pp_module(args)\n", "    pipe = get_pp_module(args)\n    pipe.model = get_peft_model(pipe.model, LoraConfig(r=8))\n")
    assert _check(_audit(files), "I3").status is Status.USED


def test_a_partial_also_handed_on_as_a_value_keeps_its_function_live():
    # lingua: ``data_builder = partial(build_dataloader, state)``; ``async_iterator(prefetch, data_builder)`` when
    # ``load_async`` (the default), ``data_builder()`` otherwise: build_dataloader runs either way
    from checks.rules._helpers import callers_off
    data = ("from functools import partial\n\n\ndef build_dataloader(state):\n    data_it = pack_tokens(read(state), state)\n"
            "    return data_it\n\n\ndef build_dataloader_from_args(args, state=None):\n"
            "    data_builder = partial(build_dataloader, state)\n    if args.load_async:\n"
            "        return async_iterator(args.prefetch_size, data_builder)\n    else:\n        return data_builder()\n")
    args = "from dataclasses import dataclass\n\n\n@dataclass\nclass DataArgs:\n    load_async: bool = True\n"
    f = _audit({"lingua/data.py": data, "lingua/args.py": args}).facts
    pack = next(c for c in f.calls("pack_tokens"))
    assert callers_off(f, pack) == []
    # control: only called, under the switch that is on, the other arm is off
    f = _audit({"lingua/data.py": data.replace("        return async_iterator(args.prefetch_size, data_builder)\n",
                                               "        return None\n"), "lingua/args.py": args}).facts
    assert callers_off(f, next(c for c in f.calls("pack_tokens")))


def test_a_launch_of_a_renamed_script_runs_the_variants_beside_it():
    # fms-fsdp: scripts/train.sh runs main_training.py; the repository has main_training_llama.py and main_training_mamba.py
    files = {"fms_fsdp/config/training.py": _FMS_CONFIG, "fms_fsdp/utils/train_utils.py": _FMS_POLICIES,
             "main_training_llama.py": _FMS_MAIN, "main_training_mamba.py": _FMS_MAIN,
             "scripts/train.sh": "torchrun --nnodes=$SLURM_NTASKS --nproc_per_node=8 main_training.py --sharding_strategy=hsdp\n"}
    roles = _audit(files).roles
    assert {"main_training_llama.py", "main_training_mamba.py"} <= set(roles.entry_points), roles.entry_points
    # control: a launched script the repository has is the one run
    files["main_training.py"] = _FMS_MAIN
    assert "main_training_llama.py" not in _audit(files).roles.entry_points


# --- cambrian-mllm/cambrian: a bucket prefix a string helper strips is no read of training data -----------------------

_CAMBRIAN_TRAINER = (
    "from transformers import Trainer\n\n\nclass CambrianTrainer(Trainer):\n"
    "    def remove_prefix(text, prefix='gs://us-central2-storage/'):\n        if prefix in text:\n"
    "            return text.replace(prefix, '')\n        return text\n\n"
    "    def _save_checkpoint(self, model, trial):\n        output_dir = self.remove_prefix(self.args.output_dir)\n")
_CAMBRIAN_TRAIN = ("from cambrian.train.cambrian_trainer import CambrianTrainer\n\n\ndef train():\n"
                   "    trainer = CambrianTrainer(model=model, args=training_args, train_dataset=data)\n    trainer.train()\n")


def test_a_prefix_a_string_helper_strips_is_not_remote_training_data():
    files = {"cambrian/train/cambrian_trainer.py": _CAMBRIAN_TRAINER, "cambrian/train/train_fsdp.py": _CAMBRIAN_TRAIN,
             "scripts/cambrian/finetune_cambrian_8b.sh": "python cambrian/train/train_fsdp.py --data_path /mnt/disks/storage/data.jsonl\n"}
    reasons = " ".join(_audit(files).project.bottleneck_reasons)
    assert "remote object storage" not in reasons, reasons
    # control: a training data path on a bucket is that read
    files["cambrian/train/train_fsdp.py"] = _CAMBRIAN_TRAIN.replace("def train():\n", "def train():\n    data_path = 'gs://us-central2-storage/data/train.jsonl'\n")
    assert "remote object storage" in " ".join(_audit(files).project.bottleneck_reasons)


# --- FoundationVision/LlamaGen: CUDA graphs only in its sampling scripts, which torchrun launches -------------------------

_LG_TRAIN = ("import torch\n\n\ndef main(args):\n    model = GPT_models[args.gpt_model]()\n    model = torch.compile(model)\n"
             "    for x, y in loader:\n        loss = model(x, y)\n        loss.backward()\n        optimizer.step()\n")
_LG_SAMPLE = ("import torch\n\n\ndef main(args):\n    gpt_model = GPT_models[args.gpt_model]()\n"
              "    gpt_model = torch.compile(gpt_model, mode='reduce-overhead', fullgraph=True)\n"
              "    samples = generate(gpt_model, c_indices, latent_size ** 2, cfg_scale=args.cfg_scale)\n")


def test_cuda_graphs_of_sampling_scripts_are_not_the_training_steps():
    files = {"autoregressive/train/train_c2i.py": _LG_TRAIN, "autoregressive/sample/sample_c2i_ddp.py": _LG_SAMPLE,
             "scripts/autoregressive/train_c2i.sh": "torchrun --nproc_per_node=8 autoregressive/train/train_c2i.py --gpt-model GPT-B\n",
             "scripts/autoregressive/sample_c2i.sh": "torchrun --nproc_per_node=8 autoregressive/sample/sample_c2i_ddp.py --gpt-model GPT-B\n"}
    a = _audit(files)
    assert a.roles.by_path["autoregressive/sample/sample_c2i_ddp.py"] not in ("training", "code")
    assert _check(a, "D4").status is Status.UNUSED
    # control: a data-sampling script (LLM-Shearing's ``data/sample.py`` tokenizes and saves a mix) is no inference script
    data = {**files, "llmshearing/data/sample.py": "import numpy as np\n\ntokens = tokenizer(texts)['input_ids']\nnp.save('out.npy', tokens)\n",
            "scripts/sample.sh": "torchrun --nproc_per_node=1 llmshearing/data/sample.py --target_dir data\n"}
    assert _audit(data).roles.by_path["llmshearing/data/sample.py"] != "eval"
    # control: the training script compiled with reduce-overhead captures the step
    files["autoregressive/train/train_c2i.py"] = _LG_TRAIN.replace("torch.compile(model)", "torch.compile(model, mode='reduce-overhead')")
    assert _check(_audit(files), "D4").status is Status.USED


def test_cuda_graph_capture_in_a_module_no_training_entry_reaches_is_generations():
    runner = ("import torch\n\n\nclass GraphRunner:\n    def capture(self, model, inputs):\n        self.graph = torch.cuda.CUDAGraph()\n"
              "        with torch.cuda.graph(self.graph):\n            self.out = model(inputs)\n")
    files = {"autoregressive/train/train_c2i.py": _LG_TRAIN, "autoregressive/runtime/graph_runner.py": runner,
             "scripts/train_c2i.sh": "torchrun --nproc_per_node=8 autoregressive/train/train_c2i.py\n"}
    d4 = _check(_audit(files), "D4")
    assert d4.status is Status.UNUSED and "no training entry point reaches" in (d4.detail or ""), (d4.status, d4.detail)
    # control: the training script imports and uses it
    files["autoregressive/train/train_c2i.py"] = "from autoregressive.runtime.graph_runner import GraphRunner\n" + _LG_TRAIN
    assert _check(_audit(files), "D4").status is Status.USED


# --- dvlab-research/LLaMA-VID: a sane interval is headlined by the value most recipes set, as a finding is ----------------

def test_a_sane_intervals_headline_is_the_recipes_majority():
    train = ("from transformers import HfArgumentParser, Trainer, TrainingArguments\n\n\ndef train():\n"
             "    (training_args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()\n"
             "    Trainer(model=model, args=training_args, train_dataset=data).train()\n")
    files = {"llamavid/train/train.py": train}
    for n in range(11):
        files[f"scripts/video/train/stage_{n}.sh"] = f"deepspeed llamavid/train/train.py --save_steps 1000 --logging_steps 10 --run {n}\n"
    files["scripts/image_only/train/stage_1.sh"] = "deepspeed llamavid/train/train.py --save_steps 200 --logging_steps 10\n"
    i3 = _check(_audit(files), "I3")
    assert i3.status is Status.USED and "(save_steps=1000)" in (i3.detail or ""), i3.detail
    # control: two recipes, one each: the smaller interval is the headline
    two = {"llamavid/train/train.py": train, "a.sh": files["scripts/video/train/stage_0.sh"], "b.sh": files["scripts/image_only/train/stage_1.sh"]}
    assert "(save_steps=200)" in (_check(_audit(two), "I3").detail or "")
