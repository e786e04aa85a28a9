"""Round 75 (issue #9): claims of six more public repositories (Aurora, CareGPT, Zhongjing, BianQue, aiXcoder-7B, MAP-NEO),
read claim by claim. Each test is one false claim of those reports, made from the shape of the real code, with a control
that keeps the rule honest."""

from __future__ import annotations

from reports.markdown import render_markdown

from .claims import audit as _audit
from .claims import check as _check

# --- Aurora: a README-only QLoRA run of Mixtral-8x7B on one GPU, through a vendored llmtuner copy -----------------------------

_LLMTUNER_TRAIN = (
    "from transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments\n\nfrom .data import preprocess\n\n\n"
    "def run_sft(model, tokenizer, dataset, training_args):\n    dataset = preprocess(dataset, tokenizer)\n"
    "    trainer = Seq2SeqTrainer(model=model, args=training_args, train_dataset=dataset)\n    trainer.train()\n")
_LLMTUNER_ENTRY = "from llmtuner.train import run_sft\n\n\ndef main():\n    run_sft(None, None, None, None)\n\n\nif __name__ == '__main__':\n    main()\n"
_LLMTUNER_DATA = (
    "def preprocess(dataset, tokenizer):\n    def tokenize(examples):\n        return tokenizer(examples['prompt'], truncation=True)\n\n"
    "    return dataset.map(tokenize, batched=True, load_from_cache_file=True)\n")
_LLMTUNER_PPO = (
    "from transformers.optimization import get_scheduler\n\n\ndef run_ppo(optimizer, training_args, num_training_steps):\n"
    "    lr_scheduler = get_scheduler(\n        training_args.lr_scheduler_type,\n        optimizer=optimizer,\n"
    "        num_warmup_steps=training_args.get_warmup_steps(num_training_steps),\n"
    "        num_training_steps=num_training_steps,\n    )\n    return lr_scheduler\n")
_AURORA_README = (
    "# Aurora\n\nActivating chat capability for Mixtral-8x7B sparse Mixture-of-Experts.\n\n```bash\n"
    "{env}python src/train_bash.py \\\n    --stage sft \\\n    --model_name_or_path {model} \\\n    --do_train \\\n"
    "    --finetuning_type lora \\\n    --quantization_bit 4 \\\n    --overwrite_cache \\\n    --per_device_train_batch_size 2 \\\n"
    "    --gradient_accumulation_steps 4 \\\n    --lr_scheduler_type cosine \\\n{warmup}    --fp16\n```\n")


def _aurora(model: str = "./Mixtral-8x7B-Instruct-v0.1", env: str = "CUDA_VISIBLE_DEVICES=5 ", warmup: str = "") -> dict[str, str]:
    return {"README.md": _AURORA_README.format(model=model, env=env, warmup=warmup), "src/train_bash.py": _LLMTUNER_ENTRY,
            "src/llmtuner/__init__.py": "", "src/llmtuner/train/__init__.py": _LLMTUNER_TRAIN,
            "src/llmtuner/train/data.py": _LLMTUNER_DATA, "src/llmtuner/train/ppo.py": _LLMTUNER_PPO}


def test_a_readme_run_from_a_local_copy_of_mixtral_is_a_46_7b_mixture_of_experts() -> None:
    result = _audit(_aurora())
    assert result.project.moe and result.project.estimated_params == "46.7B", (result.project.moe, result.project.estimated_params)
    assert _check(result, "A7").status.value != "n/a", _check(result, "A7")
    # control: a local copy of a dense model is that dense model
    result = _audit(_aurora(model="./Llama-2-7b-hf"))
    assert not result.project.moe and result.project.estimated_params == "7B", (result.project.moe, result.project.estimated_params)


def test_one_visible_gpu_in_a_readme_run_is_a_single_gpu_project() -> None:
    result = _audit(_aurora())
    assert result.project.num_gpus == 1, result.project.num_gpus
    # control: the same command without the device list leaves the GPU count open
    assert _audit(_aurora(env="")).project.num_gpus is None


def test_exported_visible_devices_give_accelerate_launch_its_process_count() -> None:
    sh = "#!/bin/bash\n# multi-GPU\nexport CUDA_VISIBLE_DEVICES=0,1,2,3\n\naccelerate launch {cfg}src/train_pt.py \\\n    --do_train\n"
    files = {**_aurora(), "scripts/pretrain.sh": sh.format(cfg=""), "src/train_pt.py": _LLMTUNER_ENTRY}
    assert _audit(files).project.num_gpus == 4
    # control: an accelerate config file sets the process count, not the visible devices
    files["scripts/pretrain.sh"] = sh.format(cfg="--config_file ds.yaml ")
    assert _audit(files).project.num_gpus != 4


def test_a_scheduler_that_reads_the_hf_warmup_helper_has_no_warmup_when_nothing_sets_one() -> None:
    g1 = _check(_audit(_aurora()), "G1")
    assert g1.status.value == "partial" and "without warmup" in (g1.detail or ""), g1
    # control: the README run that sets a warmup ratio warms up
    g1 = _check(_audit(_aurora(warmup="    --warmup_ratio 0.03 \\\n")), "G1")
    assert g1.status.value == "used", g1


def test_overwrite_cache_in_a_readme_run_retokenizes_the_training_jobs_data() -> None:
    f6 = _check(_audit(_aurora()), "F6")
    assert f6.status.value == "partial" and "overwrite_cache: true (README.md:" in (f6.detail or ""), f6
    # control: without the flag the job's datasets.map cache is read back
    files = _aurora()
    files["README.md"] = files["README.md"].replace("    --overwrite_cache \\\n", "")
    f6 = _check(_audit(files), "F6")
    assert f6.status.value == "used", f6


# --- CareGPT / DB-GPT-Hub: the shared model loader of the training path loads the QLoRA base -----------------------------------

_LOADER = (
    "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\n\n\ndef load_model(model_args):\n    config_kwargs = {}\n"
    "    if model_args.quantization_bit is not None:\n"
    "        config_kwargs['quantization_config'] = BitsAndBytesConfig(load_in_4bit=True)\n"
    "    return AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **config_kwargs)\n")
_CHAT = ("from llmtuner.train.loader import load_model\n\n\ndef chat(args):\n    model = load_model(args)\n"
         "    return model.generate(**args.inputs, max_new_tokens=512)\n")


def test_a_bnb_config_in_the_training_paths_model_loader_is_the_qlora_base_not_quantized_serving() -> None:
    files = {**_aurora(), "src/llmtuner/train/loader.py": _LOADER, "src/cli_demo.py": _CHAT}
    files["src/llmtuner/train/__init__.py"] = "from .loader import load_model\n" + _LLMTUNER_TRAIN
    j4 = _check(_audit(files), "J4")
    assert j4.status.value != "used", j4
    # control: the chat script that loads its own 4-bit model serves a quantized one
    files["src/cli_demo.py"] = ("from transformers import AutoModelForCausalLM, BitsAndBytesConfig\n\n"
                                "model = AutoModelForCausalLM.from_pretrained('x', quantization_config=BitsAndBytesConfig(load_in_4bit=True))\n"
                                "print(model.generate(max_new_tokens=64))\n")
    j4 = _check(_audit(files), "J4")
    assert j4.status.value == "used", j4


# --- MAP-NEO: the pre-training code is a submodule this checkout lacks; PaddleOCR casts are no precision setting -------------------

_GITMODULES = ('[submodule "Megatron-LM-NEO"]\n\tpath = Megatron-LM-NEO\n'
               '\turl = https://github.com/multimodal-art-projection/Megatron-LM-NEO.git\n')


def test_a_declared_submodule_absent_from_the_checkout_is_named_in_the_overview() -> None:
    files = {**_aurora(), ".gitmodules": _GITMODULES}
    result = _audit(files)
    assert [m["path"] for m in result.project.notes.get("missing_submodules", [])] == ["Megatron-LM-NEO"]
    assert "Submodules not in this checkout: `Megatron-LM-NEO`" in render_markdown(result), "overview line missing"
    # a url's credentials never reach the report
    files[".gitmodules"] = _GITMODULES.replace("https://", "https://bot:ghp_s3cret@")
    shown = render_markdown(_audit(files))
    assert "ghp_s3cret" not in shown and "https://github.com/multimodal-art-projection/Megatron-LM-NEO.git" in shown
    # control: a submodule checked out with its files is audited like the rest
    files["Megatron-LM-NEO/pretrain_gpt.py"] = "import torch\n\n\ndef main():\n    pass\n"
    assert "missing_submodules" not in _audit(files).project.notes


def test_a_tensor_cast_to_float32_does_not_switch_mixed_precision_off() -> None:
    loss = ("import paddle\n\n\ndef east_loss(l_score, f_geo):\n    sign = paddle.less_than(paddle.abs(f_geo), l_score)\n"
            "    sign = paddle.cast(sign, dtype='float32')\n    spec = paddle.static.InputSpec([None, 3, 32, 100], dtype='float32')\n"
            "    return paddle.mean(sign * l_score)\n")
    train = ("import torch\nfrom transformers import AutoModelForCausalLM\n\nfrom losses import east_loss\n\n"
             "model = AutoModelForCausalLM.from_pretrained('gpt2'{dtype})\nopt = torch.optim.AdamW(model.parameters())\n"
             "for batch in loader:\n    loss = east_loss(model(**batch).logits, batch['y'])\n    loss.backward()\n    opt.step()\n")
    c1 = _check(_audit({"train.py": train.format(dtype=""), "losses.py": loss}), "C1")
    assert "explicitly disabled" not in (c1.detail or ""), c1
    # control: a model loaded in FP32 by the run's own keyword is precision switched off
    c1 = _check(_audit({"train.py": train.format(dtype=", dtype='float32'"), "losses.py": loss}), "C1")
    assert "explicitly disabled" in (c1.detail or ""), c1


def test_accelerate_after_accelerate_config_leaves_the_gpu_count_open_beside_a_one_gpu_run() -> None:
    readme = ("# CareGPT\n\n```bash\naccelerate config\naccelerate launch src/train_bash.py \\\n    --stage sft \\\n"
              "    --do_train \\\n    --finetuning_type lora\n```\n\n```bash\nCUDA_VISIBLE_DEVICES=0 python src/train_bash.py \\\n"
              "    --stage rm \\\n    --do_train \\\n    --finetuning_type lora\n```\n")
    files = {**_aurora(), "README.md": readme}
    assert _audit(files).project.num_gpus is None
    # control: without the accelerate run, the one-GPU command is the run
    files["README.md"] = readme.replace("accelerate launch src/train_bash.py", "CUDA_VISIBLE_DEVICES=0 python src/train_bash.py")
    assert _audit(files).project.num_gpus == 1


def test_a_batch_prediction_through_the_training_entry_says_nothing_of_the_training_gpus() -> None:
    readme = ("# CareGPT\n\n```bash\naccelerate launch --config_file my_config.yaml src/train_bash.py \\\n    --do_train\n```\n\n"
              "```bash\nCUDA_VISIBLE_DEVICES=0 python src/train_bash.py \\\n    --stage sft \\\n    --do_predict\n```\n")
    files = {**_aurora(), "README.md": readme}
    assert _audit(files).project.num_gpus is None
    # control: the same command that trains is a one-GPU run
    files["README.md"] = readme.replace("--do_predict", "--do_train")
    assert _audit(files).project.num_gpus == 1


# --- YuLan-Chat / lawyer-llama (held over from round 74): a chat model spread over the GPUs by device_map -----------------------

_SPREAD_CHAT = ("import torch\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\n"
                "model = AutoModelForCausalLM.from_pretrained('yulan-team/YuLan-Chat-2-13b-fp16', device_map={dm}, torch_dtype=torch.float16)\n"
                "tok = AutoTokenizer.from_pretrained('yulan-team/YuLan-Chat-2-13b-fp16')\n"
                "print(model.generate(tok('hi', return_tensors='pt').input_ids.cuda(), max_new_tokens=64))\n")


def test_a_model_spread_layer_by_layer_over_the_gpus_is_said_under_tensor_parallel() -> None:
    a4 = _check(_audit({"inference.py": _SPREAD_CHAT.format(dm="'auto'")}), "A4")
    assert a4.status.value == "unused" and "spread layer by layer over the visible GPUs" in (a4.detail or ""), a4
    assert [e.line for e in a4.evidence] == [4], a4.evidence
    # control: a model placed on one device is not spread
    a4 = _check(_audit({"inference.py": _SPREAD_CHAT.format(dm="{'': 0}")}), "A4")
    assert "spread layer by layer" not in (a4.detail or ""), a4
