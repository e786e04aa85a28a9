"""Round 73 (issue #9): claims of more public repositories (Nanbeige and Orion, held over from round 72; LongWriter,
Llama-Chinese, LongLLaVA, LaVIN, CuMo, Open-Sora), read claim by claim. Each test is one false claim of those reports, made
from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from reports.advice import build_plan

from .claims import audit as _audit
from .claims import check as _check

# --- Nanbeige: an HF Trainer SFT script over remote code, DeepSpeed ZeRO-3 with its own WarmupLR ------------------------------

_NANBEIGE_MAIN = (
    "from dataclasses import dataclass, field\n\nimport transformers\n\nimport dataloader\n{patch}\n\n@dataclass\n"
    "class SFTConfig:\n    model_name_or_path: str = field(default=None)\n    max_length: int = field(default=1024)\n\n\n"
    "def main():\n    parser = transformers.HfArgumentParser((SFTConfig, transformers.TrainingArguments))\n"
    "    sft_config, training_args = parser.parse_args_into_dataclasses()\n"
    "    tokenizer = transformers.AutoTokenizer.from_pretrained(sft_config.model_name_or_path, trust_remote_code=True)\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(sft_config.model_name_or_path, trust_remote_code={remote})\n"
    "    sft_dataset = dataloader.create_dataset(training_args, sft_config, tokenizer)\n"
    "    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=sft_dataset['train'], tokenizer=tokenizer)\n"
    "    trainer.train()\n\n\nif __name__ == '__main__':\n    main()\n")
_NANBEIGE_LOADER = (
    "import datasets\n\n\ndef create_dataset(training_args, sft_config, tokenizer):\n"
    "    raw_datasets = datasets.load_dataset('json', data_files={'train': sft_config.dataset_name + '/train.jsonl'})\n\n"
    "    def process_supervised(record):\n        tokenized = tokenizer(record['messages'], add_special_tokens=False)\n"
    "        return {'input_ids': tokenized['input_ids']}\n\n"
    "    with training_args.main_process_first(desc='dataset map tokenization'):\n"
    "        return raw_datasets.map(process_supervised, num_proc=8)\n")
_NANBEIGE_SH = (
    "deepspeed main.py \\\n    --deepspeed ds_config/ds_config_zero3.json \\\n    --model_name_or_path Nanbeige/Nanbeige-16b-base \\\n"
    "    --max_length 4096 \\\n    --learning_rate 1e-5 \\\n    --bf16 True{extra}\n")
_DS_WARMUP_AUTO = ('{\n  "bf16": {"enabled": "auto"},\n  "scheduler": {\n    "type": "WarmupLR",\n    "params": {\n'
                   '      "warmup_min_lr": "auto",\n      "warmup_max_lr": "auto",\n      "warmup_num_steps": "auto"\n    }\n  },\n'
                   '  "zero_optimization": {"stage": 3, "overlap_comm": true}\n}\n')
_NANBEIGE_CONFIG = (
    "from transformers.configuration_utils import PretrainedConfig\n\n\nclass NanbeigeConfig(PretrainedConfig):\n"
    "    model_type = 'nanbeige'\n\n    def __init__(self, vocab_size=32000, hidden_size=4096, intermediate_size=11006, "
    "num_hidden_layers=32, **kwargs):\n        self.vocab_size = vocab_size\n        self.hidden_size = hidden_size\n"
    "        self.intermediate_size = intermediate_size\n        super().__init__(**kwargs)\n")
_NANBEIGE_MODELING = (
    "import torch\nfrom torch import nn\n\ntry:\n    import flash_attn\n    from flash_attn import flash_attn_func\n\n"
    "    if int(flash_attn.__version__.split('.')[0]) >= 2:\n        Version_ = True\n    else:\n        Version_ = False\n"
    "except:\n    Version_ = False\n    flash_attn_func = None\n\n\n"
    "class NanbeigeAttention(nn.Module):\n    def forward(self, query_states, key_states, value_states):\n"
    "        if Version_ or (flash_attn_func and query_states.dtype != torch.float32):\n"
    "            return flash_attn_func(query_states, key_states, value_states, dropout_p=0.0, causal=True)\n"
    "        return torch.softmax(query_states @ key_states.transpose(-2, -1), dim=-1) @ value_states\n")


def _nanbeige(extra: str = "", patch: str = "", remote: str = "True") -> dict[str, str]:
    return {"finetune/main.py": _NANBEIGE_MAIN.format(patch=patch, remote=remote), "finetune/dataloader.py": _NANBEIGE_LOADER,
            "finetune/ds_config/ds_config_zero3.json": _DS_WARMUP_AUTO, "scripts/train.sh": _NANBEIGE_SH.format(extra=extra),
            "models/configuration_nanbeige.py": _NANBEIGE_CONFIG, "models/modeling_nanbeige.py": _NANBEIGE_MODELING}


def test_an_auto_warmup_the_trainer_fills_with_zero_is_a_constant_rate() -> None:
    g1 = _check(_audit(_nanbeige()), "G1")
    assert g1.status.value == "unused" and 'warmup_num_steps "auto"' in (g1.detail or ""), g1
    assert "ds_config_zero3.json" in (g1.detail or "")
    # control: a warmup ratio on the launch fills the "auto" with a real warmup (then constant: partial)
    g1 = _check(_audit(_nanbeige(extra=" \\\n    --warmup_ratio 0.03")), "G1")
    assert g1.status.value == "partial" and "holds the learning rate at its peak" in (g1.detail or ""), g1


def test_tokenizing_with_datasets_map_in_the_training_job_is_said_so() -> None:
    result = _audit(_nanbeige())
    f6 = _check(result, "F6")
    assert f6.status.value == "used" and f6.values.get("preprocessing") == "mapped", f6
    assert "in the training job rather than a separate preparation run" in (f6.detail or ""), f6
    f10 = _check(result, "F10")
    assert f10.status.value == "unused"
    held = next(w for w in build_plan(result).withheld if w.check == "F10")
    assert held.reason.startswith("the data is tokenized once by datasets.map"), held
    # control: a preparation script that maps and saves the dataset is preprocessing ahead of training
    files = _nanbeige()
    files["finetune/preprocess_data.py"] = (
        "import datasets\nfrom transformers import AutoTokenizer\n\ntok = AutoTokenizer.from_pretrained('Nanbeige/Nanbeige-16b-base')\n"
        "ds = datasets.load_dataset('json', data_files='train.jsonl')\n"
        "ds = ds.map(lambda r: tok(r['text']), num_proc=8)\nds.save_to_disk('data/tokenized')\n")
    f6 = _check(_audit(files), "F6")
    assert f6.status.value == "used" and f6.values.get("preprocessing") == "offline", f6


def test_config_class_defaults_of_remote_code_are_not_the_trained_models_sizes() -> None:
    d7 = _check(_audit(_nanbeige()), "D7")
    assert d7.status.value == "n/a" and "not judged" in (d7.detail or ""), d7
    # control: a model loaded without remote code leaves the shipped config class's defaults as what the audit can read
    d7 = _check(_audit(_nanbeige(remote="False")), "D7")
    assert d7.status.value == "unused" and "intermediate_size=11006" in (d7.detail or ""), d7


def test_a_hostfile_for_several_machines_in_the_readme_is_documented_multi_node() -> None:
    readme = ("# Finetuning\nWe provide a training script that uses DeepSpeed. Modify the config/hostfile based on the cluster "
              "setup. If using multiple machines and multiple GPUs, the IP configuration in SSH needs to be modified for each "
              "node.\n")
    files = {**_nanbeige(), "README_EN.md": readme}
    e1 = _check(_audit(files), "E1")
    assert e1.status.value == "unused" and "multi-node training is documented (README_EN.md:2" in (e1.detail or ""), e1
    # control: a hostfile named with no word of several machines says nothing of nodes
    files["README_EN.md"] = "# Finetuning\nModify the config/hostfile if you need to, then run scripts/train.sh.\n"
    assert _check(_audit(files), "E1").status.value == "n/a"


def test_an_attention_patch_from_a_module_the_repository_lacks_is_no_evidence() -> None:
    patch = "from llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn\n\nreplace_llama_attn_with_flash_attn()\n"
    files = _nanbeige(patch=patch)
    files["models/modeling_nanbeige.py"] = "import torch\n"  # no kernel of its own: only the patch could count
    d1 = _check(_audit(files), "D1")
    assert d1.status.value != "used" and not any("replace_llama_attn" in (e.snippet or "") for e in d1.evidence), d1
    # control: the module is in the repository, so the patch applies
    files["finetune/llama_flash_attn_monkey_patch.py"] = (
        "from flash_attn import flash_attn_varlen_func\nfrom transformers.models.llama import modeling_llama\n\n\n"
        "def forward(self, hidden_states):\n    return flash_attn_varlen_func(hidden_states, hidden_states, hidden_states)\n\n\n"
        "def replace_llama_attn_with_flash_attn():\n    modeling_llama.LlamaAttention.forward = forward\n")
    assert _check(_audit(files), "D1").status.value == "used"


def test_remote_codes_own_flash_attention_behind_an_optional_import() -> None:
    result = _audit(_nanbeige())
    d1 = _check(result, "D1")
    assert d1.status.value == "partial" and "remote code (trust_remote_code=True at finetune/main.py:" in (d1.detail or ""), d1
    assert "only when the optional flash_attn package imports" in (d1.detail or "")
    rec = next(r for r in build_plan(result).recommendations if r.check == "D1")
    assert "already calls FlashAttention when the `flash-attn` package imports" in rec.text, rec.text
    # control: flash-attn declared beside the other requirements: the kernel runs
    files = {**_nanbeige(), "requirements.txt": "transformers==4.33.3\ndeepspeed\nflash-attn>=2.1\n"}
    d1 = _check(_audit(files), "D1")
    assert d1.status.value == "used" and "calls flash_attn_func" in (d1.detail or ""), d1


def test_modeling_files_shipped_to_replace_the_installed_ones_are_the_runs_attention() -> None:
    main = _NANBEIGE_MAIN.format(patch="", remote="False")
    modeling = ("from flash_attn.flash_attn_interface import flash_attn_varlen_func\n\n\nclass LlamaLongAttention:\n"
                "    def forward(self, q, k, v, cu_seqlens, max_s):\n"
                "        return flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_s, max_s, causal=True)\n")
    files = {"train/main.py": main, "train/dataloader.py": _NANBEIGE_LOADER, "train/ds_config/stage3.json": _DS_WARMUP_AUTO,
             "train/scripts/llama3.sh": _NANBEIGE_SH.format(extra="").replace("main.py", "train/main.py"),
             "train/patch/modeling_llama.py": modeling, "requirements.txt": "flash-attn>=2.0.0\n"}
    d1 = _check(_audit(files), "D1")
    assert d1.status.value == "used" and "ships in train/patch/ to replace the installed ones" in (d1.detail or ""), d1
    # control: the same module outside a patch folder is a modeling file nothing loads
    files["train/extras/modeling_llama.py"] = files.pop("train/patch/modeling_llama.py")
    assert _check(_audit(files), "D1").status.value != "used"


def test_liger_advice_for_remote_code_of_an_unpatched_family_is_low_and_says_why() -> None:
    result = _audit(_nanbeige())
    rec = next(r for r in build_plan(result).recommendations if r.check == "D5")
    assert rec.priority.value == "low" and rec.text.startswith("The trained model is remote code"), (rec.priority, rec.text)
    # control: a Llama checkpoint the Trainer loads from transformers' own classes keeps the high-priority switch
    files = _nanbeige(remote="False")
    files["scripts/train.sh"] = files["scripts/train.sh"].replace("Nanbeige/Nanbeige-16b-base", "meta-llama/Llama-2-7b-hf")
    rec = next(r for r in build_plan(_audit(files)).recommendations if r.check == "D5")
    assert rec.priority.value == "high" and "remote code" not in rec.text, (rec.priority, rec.text)


# --- Orion: an AutoAWQ kit, and demos that spread one model over the GPUs of one process -----------------------------------------

_ORION_QUANT = (
    "import torch\nfrom awq.models.auto import AutoAWQForCausalLM\nfrom transformers import AutoTokenizer\n\n\n"
    "def quant(args):\n    bits = {bits}\n    quant_config = {{'zero_point': True, 'q_group_size': 128, 'w_bit': bits, 'version': 'GEMM'}}\n"
    "    tokenizer = AutoTokenizer.from_pretrained(args.model_path, trust_remote_code=True)\n"
    "    model = AutoAWQForCausalLM.from_pretrained(args.model_path, trust_remote_code=True, torch_dtype=torch.float16)\n"
    "    model.quantize(tokenizer, quant_config=quant_config)\n    model.save_quantized(args.save_path)\n")
_ORION_DEMO = (
    "import torch\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\n"
    "model = AutoModelForCausalLM.from_pretrained('OrionStarAI/Orion-14B-Chat', torch_dtype=torch.float16, device_map='auto', "
    "trust_remote_code=True)\ntokenizer = AutoTokenizer.from_pretrained('OrionStarAI/Orion-14B-Chat', trust_remote_code=True)\n"
    "out = model.generate(**tokenizer('hi', return_tensors='pt').to('cuda'), max_new_tokens=512)\n")


def test_a_projects_awq_quantization_kit_is_quantized_inference() -> None:
    files = {"demo/text_generation.py": _ORION_DEMO, "quantization/quant.py": _ORION_QUANT.format(bits=4)}
    j4 = _check(_audit(files), "J4")
    assert j4.status.value == "used" and "awq-w4" in (j4.detail or ""), j4
    assert any(e.path == "quantization/quant.py" for e in j4.evidence), j4.evidence
    # control: a quantize method of an object of no quantization library is no weight quantization
    files["quantization/quant.py"] = _ORION_QUANT.format(bits=4).replace("from awq.models.auto import", "from mylib.models import")
    assert _check(_audit(files), "J4").status.value == "unused"


# --- Llama-Chinese: the training script's own streaming option, left off; HF-Trainer pre-training and DeepSpeed's curriculum ----

_CLM = ("from dataclasses import dataclass, field\n\nfrom datasets import load_dataset\nfrom transformers import (AutoConfig, "
        "AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments)\n\n\n@dataclass\nclass DataTrainingArguments:\n"
        "    train_files: str = field(default=None)\n    streaming: bool = field(default=False, metadata={'help': 'Enable streaming mode'})\n\n\n"
        "def main():\n    parser = HfArgumentParser((DataTrainingArguments, TrainingArguments))\n"
        "    data_args, training_args = parser.parse_args_into_dataclasses()\n"
        "    raw_datasets = load_dataset('text', data_files=data_args.train_files, streaming=data_args.streaming)\n"
        "    config = AutoConfig.from_pretrained('config.json')\n    model = AutoModelForCausalLM.from_config(config)\n"
        "    trainer = Trainer(model=model, args=training_args, train_dataset=raw_datasets['train'])\n    trainer.train()\n\n\n"
        "if __name__ == '__main__':\n    main()\n")
_CLM_SH = "deepspeed --num_gpus 8 pretrain_clm.py \\\n    --train_files data/train.txt \\\n    --do_train \\\n    --bf16{extra}\n"


def test_a_training_scripts_streaming_option_left_off_is_said_so() -> None:
    files = {"train/pretrain/pretrain_clm.py": _CLM, "train/pretrain/pretrain.sh": _CLM_SH.format(extra="")}
    result = _audit(files)
    f9 = _check(result, "F9")
    assert f9.status.value == "unused" and "streaming is an option of the training script" in (f9.detail or ""), f9
    rec = next(r for r in build_plan(result).recommendations if r.check == "F9")
    assert "pass `--streaming True` with `--max_steps`" in rec.text, rec.text
    # control: a launch that turns it on streams
    files["train/pretrain/pretrain.sh"] = _CLM_SH.format(extra=" \\\n    --streaming True --max_steps 10000")
    assert _check(_audit(files), "F9").status.value == "used"


def test_a_sequence_length_curriculum_for_hf_trainer_pretraining_is_staged_runs() -> None:
    files = {"train/pretrain/pretrain_clm.py": _CLM, "train/pretrain/pretrain.sh": _CLM_SH.format(extra="")}
    rec = next(r for r in build_plan(_audit(files)).recommendations if r.check == "G3")
    assert rec.text.startswith("The HF Trainer has no sequence-length curriculum"), rec.text
    # control: a Megatron pre-training keeps DeepSpeed's (Megatron-DeepSpeed's) curriculum
    files = {"pretrain_gpt.py": "from megatron.training import pretrain\n\npretrain(train_valid_test_datasets_provider, model_provider)\n",
             "run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --hidden-size 1024 --seq-length 2048 --bf16\n"}
    rec = next(r for r in build_plan(_audit(files)).recommendations if r.check == "G3")
    assert "Megatron-DeepSpeed" in rec.text and "HF Trainer" not in rec.text, rec.text


# --- LaVIN: MAE's hand-written schedule, a linear warmup in the if before the cosine ---------------------------------------------

_LR_SCHED = ("import math\n\n\ndef adjust_learning_rate(optimizer, epoch, args):\n    if epoch < args.warmup_epochs:\n"
             "        lr = args.lr * epoch / args.warmup_epochs\n    else:\n        lr = args.min_lr + (args.lr - args.min_lr) * 0.5 * "
             "(1. + math.cos(math.pi * (epoch - args.warmup_epochs) / (args.epochs - args.warmup_epochs)))\n"
             "    for param_group in optimizer.param_groups:\n        param_group['lr'] = lr\n    return lr\n")
_LAVIN_TRAIN = ("import argparse\n\nimport torch\n\nimport util.lr_sched as lr_sched\n\n"
                "parser = argparse.ArgumentParser()\nparser.add_argument('--warmup_epochs', type=float, default=40)\n"
                "parser.add_argument('--epochs', type=int, default=400)\nargs = parser.parse_args()\n"
                "model = torch.nn.Linear(8, 8).cuda()\noptimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)\n"
                "for epoch in range(args.epochs):\n    lr_sched.adjust_learning_rate(optimizer, epoch, args)\n"
                "    loss = model(torch.randn(4, 8).cuda()).sum()\n    loss.backward()\n    optimizer.step()\n")


def test_a_hand_written_cosine_after_a_warmup_branch_warms_up() -> None:
    files = {"util/lr_sched.py": _LR_SCHED, "train.py": _LAVIN_TRAIN,
             "scripts/finetune.sh": "torchrun --nproc_per_node 8 train.py --epochs 20 --warmup_epochs 2\n"}
    g1 = _check(_audit(files), "G1")
    assert g1.status.value == "used" and g1.detail == "warmup + cosine schedule", g1
    # control: every launch sets that warmup to 0 and the default is 0: cosine without warmup
    files["scripts/finetune.sh"] = "torchrun --nproc_per_node 8 train.py --epochs 20 --warmup_epochs 0\n"
    files["train.py"] = _LAVIN_TRAIN.replace("default=40", "default=0")
    assert _check(_audit(files), "G1").status.value == "partial"


# --- LongLLaVA: a debugging switch in one of three launches, beside a stronger verdict -------------------------------------------

def test_a_debugging_switch_is_named_under_another_verdict() -> None:
    from .claims import LLAVA_TRAIN

    sh = ("#!/bin/bash\n{env}deepspeed --hostfile hostfile llava/train/train_mem.py \\\n    --deepspeed scripts/zero3.json \\\n"
          "    --model_name_or_path lmsys/vicuna-13b-v1.5 \\\n    --bf16 True\n")
    zero3 = '{\n  "zero_optimization": {"stage": 3, "overlap_comm": true}\n}\n'
    files = {"llava/train/train_mem.py": LLAVA_TRAIN, "scripts/zero3.json": zero3, "Align.sh": sh.format(env="export CUDA_LAUNCH_BLOCKING=1\n"),
             "SingleImageSFT.sh": sh.format(env=""), "MultiImageSFT.sh": sh.format(env="")}
    p = _audit(files).project
    assert p.bottleneck.value != "launch-bound", p.bottleneck
    assert any(r.startswith("also launch-bound: CUDA_LAUNCH_BLOCKING=1 in the training launch (`Align.sh:2`)") for r in p.bottleneck_reasons), \
        p.bottleneck_reasons
    # control: without it nothing of the kind is said
    files["Align.sh"] = sh.format(env="")
    assert not any("CUDA_LAUNCH_BLOCKING" in r for r in _audit(files).project.bottleneck_reasons)


# --- CuMo: the docs run three stages, the last one named for its stage first --------------------------------------------------

def test_a_stage_script_the_docs_run_sets_the_sequence_length_too() -> None:
    from .claims import LLAVA_TRAIN

    sh = ("#!/bin/bash\ndeepspeed cumo/train/train_mem.py \\\n    --deepspeed ./scripts/zero3.json \\\n"
          "    --model_name_or_path mistralai/Mistral-7B-Instruct-v0.2 \\\n    --model_max_length {n} \\\n    --bf16 True\n")
    docs = ("## Training\nFirst pre-train the MLP connector.\n```bash\nbash scripts/cumo/pretrain_mistral_7b.sh\n```\n\n"
            "The final step is the visual instruction tuning stage,\n```bash\nbash scripts/cumo/{last}.sh\n```\n")
    files = {"cumo/train/train_mem.py": LLAVA_TRAIN, "scripts/zero3.json": '{"zero_optimization": {"stage": 3}}\n',
             "scripts/cumo/pretrain_mistral_7b.sh": sh.format(n=2048), "scripts/cumo/pft_mistral_7b.sh": sh.format(n=4096),
             "scripts/cumo/sft_mistral_7b.sh": sh.format(n=4096),
             "docs/getting_started.md": docs.format(last="sft_mistral_7b")}
    assert _audit(files).project.max_seq_len == 4096
    # control: a last stage whose name says no training stage is not read as a documented recipe, so the one documented
    # recipe, the pre-training, gives its 2048 (as CuMo read before)
    files["scripts/cumo/stage3_mistral_7b.sh"] = files.pop("scripts/cumo/sft_mistral_7b.sh")
    files["docs/getting_started.md"] = docs.format(last="stage3_mistral_7b")
    assert _audit(files).project.max_seq_len == 2048


# --- Llama-Chinese: two configs of one name in two folders, each launch passing its own; offload_param under ZeRO-2 ------------

def _ds(stage: int, offload: str) -> str:
    return ('{\n  "bf16": {"enabled": "auto"},\n  "optimizer": {"type": "AdamW", "params": {"lr": "auto"}},\n'
            f'  "zero_optimization": {{\n    "stage": {stage},{offload}\n    "overlap_comm": true\n  }}\n}}\n')


def test_a_relative_config_path_is_the_launch_folders_file_and_zero2_ignores_offload_param() -> None:
    opt = '\n    "offload_optimizer": {"device": "cpu", "pin_memory": true},'
    param = '\n    "offload_param": {"device": "cpu", "pin_memory": true},'
    sh = "deepspeed --num_gpus 8 {script} \\\n    --deepspeed ./{cfg} \\\n    --do_train \\\n    --bf16\n"
    files = {"train/pretrain/pretrain_clm.py": _CLM, "train/sft/finetune_clm.py": _CLM,
             "train/pretrain/pretrain.sh": sh.format(script="pretrain_clm.py", cfg="ds_config_zero3.json"),
             "train/pretrain/ds_config_zero3.json": _ds(3, ""), "train/pretrain/ds_config_zero2.json": _ds(2, opt + param),
             "train/sft/finetune.sh": sh.format(script="finetune_clm.py", cfg="ds_config_zero2.json"),
             "train/sft/ds_config_zero2.json": _ds(2, param)}
    c4 = _check(_audit(files), "C4")
    # (the one offloading optimizer config is the pre-training folder's, which no launch passes; ZeRO-2 ignores offload_param)
    assert c4.status.value == "partial" and "no launch script or config uses it" in (c4.detail or ""), c4
    assert {e.path for e in c4.evidence} == {"train/pretrain/ds_config_zero2.json"}, c4.evidence
    # control: the fine-tuning's own ZeRO-2 config offloads the optimizer: cited from its own folder
    files["train/sft/ds_config_zero2.json"] = _ds(2, opt)
    c4 = _check(_audit(files), "C4")
    assert c4.status.value == "used" and [e.path for e in c4.evidence] == ["train/sft/ds_config_zero2.json"], c4
    # ... and D6 says that this config's optimizer runs on the host, beside the pre-training's fused one
    d6 = _check(_audit(files), "D6")
    assert d6.status.value == "used" and "the optimizer of train/sft/ds_config_zero2.json is offloaded to the CPU" in (d6.detail or ""), d6


def test_engine_snippets_of_an_inference_project_name_its_own_model() -> None:
    from reports.json_report import recommendations

    files = {"demo/text_generation.py": _ORION_DEMO}
    recs = {r["check"]: r for r in recommendations(_audit(files))}
    shown = [recs[c]["snippet"] for c in ("J1", "J2", "J5") if c in recs and recs[c].get("snippet")]
    assert shown and all('LLM(model="OrionStarAI/Orion-14B-Chat", trust_remote_code=True' in s for s in shown), shown
    assert not any("Qwen/Qwen2.5-7B-Instruct" in s or "Llama-3.1-8B" in s for s in shown), shown
    # control: a model loaded without remote code is named without it
    files["demo/text_generation.py"] = _ORION_DEMO.replace(", \"\n    \"trust_remote_code=True)", ")").replace(
        "device_map='auto', trust_remote_code=True)", "device_map='auto')")
    recs = {r["check"]: r for r in recommendations(_audit(files))}
    shown = [recs[c]["snippet"] for c in ("J1", "J2", "J5") if c in recs and recs[c].get("snippet")]
    assert shown and all("OrionStarAI/Orion-14B-Chat" in s and "trust_remote_code" not in s for s in shown), shown


# --- CuMo: the whole model frozen only in the projector pre-training stage, its CLIP trained in the later stages ----------------

_CUMO_TRAIN = (
    "from dataclasses import dataclass, field\n\nimport transformers\n\nfrom cumo.model import LlavaMistralForCausalLM\n\n\n"
    "@dataclass\nclass ModelArguments:\n    vision_tower: str = field(default=None)\n    tune_mm_mlp_adapter: bool = field(default=False)\n"
    "    mm_vision_select_layer: int = field(default=-2)\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
    "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = LlavaMistralForCausalLM.from_pretrained('mistralai/Mistral-7B-Instruct-v0.2')\n"
    "    if model_args.vision_tower is not None:\n        model.get_model().initialize_vision_modules(model_args=model_args)\n"
    "        vision_tower = model.get_vision_tower()\n        vision_tower.to(dtype=training_args.bf16)\n"
    "        if model_args.tune_mm_mlp_adapter:\n            model.requires_grad_(False)\n"
    "            for p in model.get_model().mm_projector.parameters():\n                p.requires_grad = True\n"
    "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n")
_CUMO_SH = ("deepspeed cumo/train/train.py \\\n    --vision_tower openai/clip-vit-large-patch14-336 \\\n"
            "    --mm_vision_select_layer -2 \\\n{extra}    --bf16 True\n")


def test_a_whole_model_freeze_only_the_projector_stage_passes_is_a_staged_freeze() -> None:
    files = {"cumo/train/train.py": _CUMO_TRAIN,
             "scripts/pretrain_mistral_7b.sh": _CUMO_SH.format(extra="    --tune_mm_mlp_adapter True \\\n"),
             "scripts/pft_mistral_7b.sh": _CUMO_SH.format(extra=""), "scripts/sft_mistral_7b.sh": _CUMO_SH.format(extra="")}
    result = _audit(files)
    h1 = _check(result, "H1")
    assert h1.status.value == "partial" and "1 of 3 training launch files pass --tune_mm_mlp_adapter" in (h1.detail or ""), h1
    rec = next(r for r in build_plan(result).recommendations if r.check == "H1")
    assert rec.priority.value == "low" and rec.text.startswith("The vision encoder is frozen only in the stages"), rec
    # control: every stage pre-trains the projector only: the tower is frozen throughout
    for name in ("scripts/pft_mistral_7b.sh", "scripts/sft_mistral_7b.sh"):
        files[name] = _CUMO_SH.format(extra="    --tune_mm_mlp_adapter True \\\n")
    h1 = _check(_audit(files), "H1")
    assert h1.status.value == "used" and h1.detail == "the vision encoder is frozen", h1


# --- LaVIN: adapters chosen by parameter name, every other weight frozen in the same loop -------------------------------------

_LAVIN_ADAPT = (
    "import torch\n\nfrom lavin.model import Transformer\n\n\ndef LaVIN(args):\n    llama = Transformer(args)\n"
    "    learnable_keys = [{keys}]\n    for name, param in llama.named_parameters():\n        for key in learnable_keys:\n"
    "            if key in name:\n                param.requires_grad = True\n                param.data = param.data.float()\n"
    "            else:\n                param.requires_grad = False\n    return llama\n")
_LAVIN_LOOP = ("import torch\n\nfrom lavin.mm_adaptation import LaVIN\n\nmodel = LaVIN(None)\n"
               "optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)\n"
               "for batch in range(10):\n    loss = model(batch).sum()\n    loss.backward()\n    optimizer.step()\n")


def test_adapters_chosen_by_parameter_name_are_parameter_efficient_fine_tuning() -> None:
    files = {"lavin/mm_adaptation.py": _LAVIN_ADAPT.format(keys="'adapter'"), "train.py": _LAVIN_LOOP,
             "scripts/finetune.sh": "torchrun --nproc_per_node 8 train.py --llm_model 7B\n"}
    g4 = _check(_audit(files), "G4")
    assert g4.status.value == "used" and "only the parameters whose names contain 'adapter' train" in (g4.detail or ""), g4
    # control: training only the norms by name is no parameter-efficient method of added modules
    files["lavin/mm_adaptation.py"] = _LAVIN_ADAPT.format(keys="'norm'")
    assert _check(_audit(files), "G4").status.value != "used"
