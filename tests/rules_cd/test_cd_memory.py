"""C2-C6 logic beyond the checks' own examples: hardware applicability, guards, derived values, findings."""

from __future__ import annotations

from checks.base import REGISTRY, all_checks
from checks.engine import AuditOptions, build_facts, run_checks
from checks.model import CheckResult, Priority, Status
from checks.project import detect_project
from checks.rules._helpers import guard_flags

all_checks()


def run(check_id: str, files: dict[str, str], hardware: str | None = None) -> CheckResult:
    facts = build_facts((p, t.encode()) for p, t in files.items())
    project = detect_project(facts, hardware=hardware)
    [result], _ = run_checks(facts, project, AuditOptions(hardware=hardware), [REGISTRY[check_id]])
    return result


def test_guard_flags_reads_plain_flags_only():
    assert guard_flags("args.compile and not (self.training)") == [("compile", False), ("training", True)]
    assert guard_flags("step % args.accum == 0") == []
    assert guard_flags("a or b") == []
    assert guard_flags(None) == []


FP8_YAML = {"accelerate.yaml": "distributed_type: MULTI_GPU\nmixed_precision: fp8\n"}


def test_fp8_not_applicable_on_a100_and_says_it_is_configured():
    r = run("C2", FP8_YAML, hardware="a100")
    assert r.status == Status.NA
    assert "a100" in r.detail and "accelerate.yaml:2" in r.detail


def test_fp8_on_hopper_is_used_and_advised_when_missing():
    assert run("C2", FP8_YAML, hardware="h100").status == Status.USED
    missing = run("C2", {"train.py": "from transformers import Trainer\nimport torch\nloss.backward()\n"}, hardware="H100 80GB")
    assert missing.status == Status.UNUSED and missing.priority == Priority.MEDIUM
    assert run("C2", {"train.py": "loss.backward()\n"}).priority == Priority.LOW  # unknown GPU


def test_fp8_flag_passed_by_launcher_turns_autocast_on():
    files = {
        "train.py": "import argparse\nimport transformer_engine.pytorch as te\np = argparse.ArgumentParser()\n"
        "p.add_argument('--fp8', action='store_true')\nargs = p.parse_args()\nwith te.fp8_autocast(enabled=args.fp8):\n    y = model(x)\n",
        "run.sh": "torchrun --nproc_per_node 8 train.py --fp8\n",
    }
    assert run("C2", files).status == Status.USED


def test_checkpoint_behind_flag_counts_when_a_launch_turns_it_on():
    model = (
        "import torch.utils.checkpoint\nclass M:\n    def forward(self, x):\n        if self.gradient_checkpointing and self.training:\n"
        "            x = torch.utils.checkpoint.checkpoint(self.layer, x)\n        return x\n"
    )
    off = run("C3", {"modeling.py": model})
    assert off.status == Status.UNUSED and "flag" in off.detail
    on = run("C3", {"modeling.py": model, "run.sh": "deepspeed train.py --gradient_checkpointing True\n"})
    assert on.status == Status.USED and on.values == {"gradient_checkpointing": True}


def test_llamafactory_can_switch_checkpointing_off():
    files = {
        "cfg.yaml": "model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: full\ndisable_gradient_checkpointing: true\n",
        "run.sh": "llamafactory-cli train cfg.yaml\n",
    }
    assert run("C3", files).status == Status.UNUSED


def test_long_context_without_recompute_is_high_priority():
    files = {"cfg.yaml": "model_name_or_path: meta-llama/Llama-3.1-8B\nmax_seq_length: 8192\ngradient_checkpointing: false\n",
             "train.py": "from trl import SFTTrainer\ntrainer = SFTTrainer(model=m)\ntrainer.train()\n"}
    assert run("C3", files).priority == Priority.HIGH


def test_deepspeed_chat_offload_flag_from_the_launch():
    main = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--offload', action='store_true')\n"
    assert run("C4", {"main.py": main}).status == Status.UNUSED
    r = run("C4", {"main.py": main, "run.sh": "deepspeed main.py --zero_stage 3 --offload\n"})
    assert r.status == Status.USED


def test_megatron_accumulation_from_world_size():
    files = {"pretrain.sh": (
        "GPUS_PER_NODE=8\nNNODES=2\ntorchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NNODES pretrain_gpt.py \\\n"
        "  --tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 64\n")}
    r = run("C5", files)
    assert r.status == Status.USED and r.values == {"gradient_accumulation_steps": 32}


def test_accumulation_loop_with_unknown_steps_is_used_without_a_made_up_value():
    files = {"train.py": (
        "accum = cfg_from_somewhere()\nfor step, batch in enumerate(loader):\n    (model(batch) / accum).backward()\n"
        "    if (step + 1) % accum == 0:\n        optimizer.step()\n")}
    r = run("C5", files)
    assert r.status == Status.USED and "gradient_accumulation_steps" not in r.values


def test_accelerate_accumulate_with_one_step_is_unused():
    files = {"train.py": (
        "from accelerate import Accelerator\naccelerator = Accelerator(gradient_accumulation_steps=1)\n"
        "for batch in loader:\n    with accelerator.accumulate(model):\n        accelerator.backward(model(batch))\n")}
    r = run("C5", files)
    assert r.status == Status.UNUSED and r.values == {"gradient_accumulation_steps": 1}


def test_training_advice_is_silent_for_a_serving_project():
    files = {"serve.py": "from vllm import LLM\nllm = LLM('meta-llama/Llama-3.1-70B-Instruct')\nprint(llm.generate(['hi']))\n"}
    for cid in ("C1", "C3", "C4", "C5"):
        assert run(cid, files).priority is None, cid


def test_empty_cache_in_the_loop_is_a_finding_not_use():
    files = {"train.py": "import torch\nfor batch in loader:\n    loss = model(batch)\n    torch.cuda.empty_cache()\n"}
    r = run("C6", files)
    assert r.status == Status.UNUSED
    assert [(e.path, e.line) for e in r.findings] == [("train.py", 4)]
    ok = run("C6", {**files, "run.sh": "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True torchrun train.py\n"})
    # (the allocator is tuned, and the loop still hands the cache back every step: partial, round 40)
    assert ok.status == Status.PARTIAL and ok.values["alloc_conf"] == "expandable_segments:True" and ok.findings
    once = run("C6", {"train.py": files["train.py"].replace("    torch.cuda.empty_cache()\n", "") + "torch.cuda.empty_cache()\n",
                      "run.sh": "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True torchrun train.py\n"})
    assert once.status == Status.USED and not once.findings


def test_empty_cache_once_after_eval_is_neither_use_nor_finding():
    r = run("C6", {"eval.py": "import torch\nresults = evaluate(model)\ntorch.cuda.empty_cache()\n"})
    assert r.status == Status.UNUSED and not r.findings


def test_megatron_fp8_flags_appended_to_a_bash_array():
    script = (
        'DTYPE="fp8"\nTRAINING_ARGS=(\n    --micro-batch-size 1\n    --bf16\n)\nDTYPE_ARGS=()\n'
        'if [[ "$DTYPE" == "fp8" ]]; then\n    DTYPE_ARGS+=(\n        "--fp8-format hybrid"\n        "--fp8-amax-history-len 1024"\n    )\nfi\n'
        'torchrun --nproc_per_node 8 pretrain_gpt.py ${TRAINING_ARGS[@]} ${DTYPE_ARGS[@]}\n'
    )
    r = run("C2", {"train_llama3_8b_h100_fp8.sh": script})
    assert r.status == Status.USED and r.evidence[0].key == "--fp8_format"


def test_checkpointing_read_through_a_negated_disable_switch():
    # ``gradient_checkpointing=not config.disable_gradient_checkpointing`` with ``Field(False)``: on, cited at that keyword
    # (it was cited only from peft-only helpers, or not found at all)
    params = ("from pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
              "    disable_gradient_checkpointing: bool = Field({}, title='Disable gradient checkpointing')\n")
    utils = ("from transformers import TrainingArguments\n\ndef configure_training_args(config):\n"
             "    return TrainingArguments(output_dir='out', gradient_checkpointing=not config.disable_gradient_checkpointing)\n")
    r = run("C3", {"llm/params.py": params.format("False"), "llm/utils.py": utils})
    assert r.status == Status.USED and (r.evidence[0].path, r.evidence[0].line) == ("llm/utils.py", 4), r.detail
    assert run("C3", {"llm/params.py": params.format("True"), "llm/utils.py": utils}).status == Status.UNUSED


def test_a_precision_in_a_branch_no_setting_takes_is_not_used():
    # ``if config.mixed_precision == "bf16": training_args["bf16"] = True`` with ``Field(None)`` and a preset of "fp16":
    # BF16 was claimed from that line; the branch the preset takes is FP16
    files = {
        "llm/params.py": ("from typing import Optional\nfrom pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                          "    mixed_precision: Optional[str] = Field(None, title='fp16, bf16 or None')\n"),
        "llm/utils.py": ("import torch\n\ndef configure_training_args(config):\n    training_args = dict(output_dir='out')\n"
                         "    if config.mixed_precision == 'fp16':\n        training_args['fp16'] = True\n"
                         "    if config.mixed_precision == 'bf16':\n        training_args['bf16'] = True\n    return training_args\n\n"
                         "def cast(config, model):\n    for name, module in model.named_modules():\n"
                         "        if config.mixed_precision == 'bf16':\n            module = module.to(torch.bfloat16)\n"),
    }
    r = run("C1", files)
    assert r.status == Status.UNUSED, r.detail
    files["app/presets.py"] = "from llm.params import LLMParams\nPRESET = LLMParams(mixed_precision='fp16')\n"
    r = run("C1", files)
    assert r.status == Status.USED and r.values["precision"] == "fp16", (r.detail, r.values)
    assert ("llm/utils.py", 8) not in [(e.path, e.line) for e in r.evidence]


def test_a_dtype_keyword_in_a_branch_the_run_does_not_take_is_not_its_precision():
    """open_clip 3.3.0: ``convert_weights_to_lp(model, dtype=torch.bfloat16)`` runs only ``if precision == 'bf16':`` while the
    training flag ``--precision`` defaults to "amp" (FP16 autocast with a GradScaler). The previous rule said BF16."""
    files = {
        "src/open_clip/openai.py": (
            "import torch\n\n\ndef load_openai_model(name, precision=None, device=None):\n    model = build_model_from_openai_state_dict(sd)\n"
            "    if precision != 'fp16':\n        model.float()\n        if precision == 'bf16':\n"
            "            convert_weights_to_lp(model, dtype=torch.bfloat16)\n    return model\n"),
        "src/open_clip_train/params.py": (
            "import argparse\n\n\ndef parse_args(args):\n    parser = argparse.ArgumentParser()\n    parser.add_argument(\n"
            "        \"--precision\",\n        choices=[\"amp\", \"amp_bf16\", \"bf16\", \"fp16\", \"fp32\"],\n        default=\"amp\",\n    )\n"
            "    return parser.parse_args(args)\n"),
        "src/open_clip_train/main.py": (
            "import torch\n\n\ndef main(args):\n    scaler = None\n    if args.precision == \"amp\":\n"
            "        scaler = torch.amp.GradScaler(device=device)\n    for batch in loader:\n"
            "        with torch.amp.autocast(device_type='cuda', dtype=torch.float16):\n            loss = model(batch)\n"
            "        scaler.scale(loss).backward()\n        scaler.step(optimizer)\n        scaler.update()\n"),
    }
    r = run("C1", files)
    assert r.status is Status.USED and r.values["precision"] == "fp16", (r.detail, r.values)
    assert all(e.path != "src/open_clip/openai.py" for e in r.evidence)


def test_a_scaler_built_only_for_the_fp16_branch_is_the_fallback_not_the_precision():
    """nanoGPT: ``dtype = 'bfloat16' if torch.cuda.is_bf16_supported() else 'float16'`` and ``GradScaler(enabled=(dtype ==
    'float16'))``; nanochat builds its scaler only ``if COMPUTE_DTYPE == torch.float16``. Both train in BF16 where the GPU has
    it; an unconditional scaler with an autocast that names no dtype is FP16 (LAVIS)."""
    nanogpt = {"train.py": (
        "import torch\nfrom contextlib import nullcontext\n\n"
        "dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'\n"
        "ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]\n"
        "ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)\n"
        "scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))\n"
        "while True:\n    with ctx:\n        logits, loss = model(X, Y)\n    scaler.scale(loss).backward()\n"
        "    scaler.step(optimizer)\n    scaler.update()\n")}
    r = run("C1", nanogpt)
    assert r.status is Status.USED and r.values["precision"] == "bf16", (r.detail, r.values)
    nanochat = {"scripts/base_train.py": (
        "import torch\nfrom nanochat.common import COMPUTE_DTYPE\n\n"
        "scaler = torch.amp.GradScaler() if COMPUTE_DTYPE == torch.float16 else None\n"
        "for step in range(num_iterations):\n    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n"),
        "nanochat/optim.py": (
            "import torch\nfrom nanochat.common import COMPUTE_DTYPE\n\n\ndef muon_step(g):\n"
            "    X = g.bfloat16() if COMPUTE_DTYPE == torch.bfloat16 else g\n    return X\n")}
    r = run("C1", nanochat)
    assert r.values.get("precision") == "bf16", (r.detail, r.values)
