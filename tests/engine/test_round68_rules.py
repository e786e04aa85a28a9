"""Round 68 (issue #9): claims of more public repositories (Chinese-Vicuna, LLM-Pruner, Llama-X, LLM-Shearing, MeZO,
ChatGLM-Tuning, llm2vec, Ask-Anything), read claim by claim. Each test is one false claim of those reports, made from the
shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from pathlib import Path

from checks.project import placeholder_tail

from .claims import audit as _audit
from .claims import check as _check
from .claims import scan_cold_and_cached

# --- Chinese-Vicuna / LLM-Pruner: Alpaca-LoRA's accumulation count, a quotient of numbers the script knows -------------------

_VICUNA_FINETUNE = (
    "import argparse\nimport os\n\nimport transformers\nfrom datasets import load_dataset\n\n"
    "parser = argparse.ArgumentParser()\nparser.add_argument('--data_path', type=str, default='merge.json')\n"
    "args = parser.parse_args()\n\n"
    "MICRO_BATCH_SIZE = {micro}  # this could actually be 5 but i like powers of 2\nBATCH_SIZE = 128\n"
    "GRADIENT_ACCUMULATION_STEPS = BATCH_SIZE // MICRO_BATCH_SIZE\nEPOCHS = 3\n\n"
    "world_size = int(os.environ.get('WORLD_SIZE', 1))\nddp = world_size != 1\nif ddp:\n"
    "    GRADIENT_ACCUMULATION_STEPS = GRADIENT_ACCUMULATION_STEPS // world_size\n\n"
    "model = transformers.LlamaForCausalLM.from_pretrained('decapoda-research/llama-7b-hf')\n"
    "data = load_dataset('json', data_files=args.data_path)\n"
    "trainer = transformers.Trainer(\n    model=model,\n    train_dataset=data['train'],\n"
    "    args=transformers.TrainingArguments(\n        per_device_train_batch_size=MICRO_BATCH_SIZE,\n"
    "        gradient_accumulation_steps=GRADIENT_ACCUMULATION_STEPS,\n        num_train_epochs=EPOCHS,\n"
    "        fp16=True,\n        output_dir='lora-Vicuna',\n    ),\n)\ntrainer.train()\n")
_VICUNA_SH = "torchrun --nproc_per_node=2 --master_port=12345 finetune.py \\\n--data_path sample/merge.json\n"
_ZERO_AUTO = '{\n  "fp16": {"enabled": true},\n  "gradient_accumulation_steps": "auto",\n  "zero_optimization": {"stage": 2}\n}\n'


def test_an_accumulation_count_bound_to_a_quotient_of_constants_is_read() -> None:
    files = {"finetune.py": _VICUNA_FINETUNE.format(micro=4), "scripts/finetune.sh": _VICUNA_SH, "sample/zero_config.json": _ZERO_AUTO}
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "used" and c5.values.get("gradient_accumulation_steps") == 32, c5
    assert "128 / 4 = 32" in (c5.detail or "") and "world_size" in (c5.detail or ""), c5.detail
    assert any(e.path == "finetune.py" and e.line == 28 for e in c5.evidence), c5.evidence  # the keyword's own line
    # control: a quotient of one (the global batch is one micro-batch) is one micro-batch per step
    files["finetune.py"] = _VICUNA_FINETUNE.format(micro=128)
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "unused" and c5.values.get("gradient_accumulation_steps") == 1, c5


_PRUNER_TRAIN = (
    "import argparse\nimport os\n\nimport transformers\n\n\ndef main(args):\n"
    "    gradient_accumulation_steps = args.batch_size // args.micro_batch_size\n"
    "    world_size = int(os.environ.get('WORLD_SIZE', 1))\n    if world_size != 1:\n"
    "        gradient_accumulation_steps = gradient_accumulation_steps // world_size\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(args.base_model)\n"
    "    trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(\n"
    "        per_device_train_batch_size=args.micro_batch_size,\n"
    "        gradient_accumulation_steps=gradient_accumulation_steps,\n        fp16=True,\n        output_dir=args.output_dir))\n"
    "    trainer.train()\n\n\nif __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--base_model', type=str, default='decapoda-research/llama-7b-hf')\n"
    "    parser.add_argument('--output_dir', type=str, default='tune_log')\n"
    "    parser.add_argument('--batch_size', type=int, default=128)\n"
    "    parser.add_argument('--micro_batch_size', type=int, default=4)\n    main(parser.parse_args())\n")


def test_an_accumulation_quotient_of_parsed_options_takes_the_launch_values() -> None:
    files = {"post_training.py": _PRUNER_TRAIN,
             "scripts/prune.sh": "CUDA_VISIBLE_DEVICES=0 python post_training.py --batch_size 64 --micro_batch_size {m}\n"}
    c5 = _check(_audit({**files, "scripts/prune.sh": files["scripts/prune.sh"].format(m=4)}), "C5")
    assert c5.status.value == "used" and c5.values.get("gradient_accumulation_steps") == 16, c5
    assert any(e.path == "scripts/prune.sh" for e in c5.evidence), c5.evidence
    # control: an option the script reads but no launch or default gives a number stays "not judged"
    files["post_training.py"] = _PRUNER_TRAIN.replace("default=4)", "required=True)")
    files["scripts/prune.sh"] = "CUDA_VISIBLE_DEVICES=0 python post_training.py --batch_size 64 --micro_batch_size $MB\n"
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "n/a", c5


# --- Chinese-Vicuna: a ChatGLM example in tools/application/ that no script or README step runs (there
# ``chatglm_lora_finetune.py``; a command naming "chat" reads as a chat demo's, so the example is renamed here) ----------------------------------

_CHATGLM_EXAMPLE = (
    "import torch\nfrom accelerate import Accelerator, DeepSpeedPlugin\nfrom torch.utils.data import DataLoader\n"
    "from transformers import AutoModel\n\nmixed_precision = 'bf16'\naccumulate_step = 8\n"
    "deepspeed_plugin = DeepSpeedPlugin(zero_stage=2, gradient_accumulation_steps=accumulate_step)\n"
    "accelerator = Accelerator(mixed_precision=mixed_precision, gradient_accumulation_steps=accumulate_step, "
    "deepspeed_plugin=deepspeed_plugin)\n"
    "model = AutoModel.from_pretrained('/model/chatglm-6b', trust_remote_code=True)\n"
    "loader = DataLoader(dataset, batch_size=1, num_workers=0)\nmodel, loader = accelerator.prepare(model, loader)\n"
    "for step, batch in enumerate(loader):\n    with accelerator.accumulate(model):\n        loss = model(**batch).loss\n"
    "        accelerator.backward(loss)\n")


def test_a_training_script_in_a_folder_nothing_runs_is_not_the_run() -> None:
    files = {"finetune.py": _VICUNA_FINETUNE.format(micro=4), "scripts/finetune.sh": _VICUNA_SH,
             "tools/application/glm_lora_finetune.py": _CHATGLM_EXAMPLE}
    result = _audit(files)
    assert result.roles.role("tools/application/glm_lora_finetune.py") == "other", result.roles.why
    assert "no launch or documented command" in result.roles.why["tools/application/glm_lora_finetune.py"]
    assert not any(e.path.startswith("tools/") for e in _check(result, "B3").evidence)
    c1 = _check(result, "C1")
    assert "BF16" not in (c1.detail or ""), c1.detail
    # control: a README step that runs the example puts it on the training path
    files["README.md"] = "## Train\n\n```bash\npython tools/application/glm_lora_finetune.py\n```\n"
    result = _audit(files)
    assert result.roles.role("tools/application/glm_lora_finetune.py") == "training", result.roles.why
    # control: a sub-package's trainer (torchtitan's experiments) may be what a registry of the run picks: it stays
    files = {"pkg/__init__.py": "", "pkg/train.py": _VICUNA_FINETUNE.format(micro=4),
             "run_train.sh": "torchrun --nproc_per_node=8 -m pkg.train\n",
             "pkg/experiments/__init__.py": "", "pkg/experiments/graph/__init__.py": "",
             "pkg/experiments/graph/train.py": _CHATGLM_EXAMPLE}
    result = _audit(files)
    assert result.roles.role("pkg/experiments/graph/train.py") == "training", result.roles.why


# --- Llama-X: the README's model sits above the converted weights' ``hf`` folder ------------------------------------------------


def test_a_placeholder_path_names_its_model_above_a_format_folder() -> None:
    assert placeholder_tail("/path/to/llama-7B/hf") == "llama-7B"
    assert placeholder_tail("your_dir/llama-13b/v1/hf") == "llama-13b"
    # controls: a leaf that names the model wins; a path without a placeholder, or naming no size, is kept as written
    assert placeholder_tail("path_to/Llama-2-7b-hf") == "Llama-2-7b-hf"
    assert placeholder_tail("/path/to/hf") == "/path/to/hf"
    assert placeholder_tail("/data/llama-7B/hf") == "/data/llama-7B/hf"


# --- Llama-X: "fused kernels are in use" from a DeepSpeed AdamW that the same config offloads to the CPU --------------------------

_LLAMAX_DS = ('{{\n  "zero_optimization": {{\n    "stage": 3,\n    "offload_optimizer": {{\n      "device": "{dev}",\n'
              '      "pin_memory": true\n    }}\n  }},\n  "fp16": {{"enabled": true}},\n'
              '  "optimizer": {{\n    "type": "AdamW",\n    "params": {{"lr": 2e-5}}\n  }},\n'
              '  "train_micro_batch_size_per_gpu": "auto"\n}}\n')
_LLAMAX_SH = "deepspeed train.py --deepspeed configs/ds.json --fp16 True --output_dir out\n"


def test_an_offloaded_deepspeed_adam_is_named_a_cpu_update() -> None:
    files = {"train.py": _VICUNA_FINETUNE.format(micro=4), "configs/ds.json": _LLAMAX_DS.format(dev="cpu"), "run.sh": _LLAMAX_SH}
    d6 = _check(_audit(files), "D6")
    assert d6.status.value == "used" and "runs on the CPU" in (d6.detail or "") and d6.values.get("fused_kernels") is False, d6
    assert any(e.path == "configs/ds.json" and e.line == 5 for e in d6.evidence), d6.evidence
    # control: the same optimizer section left on the GPU is DeepSpeed's FusedAdam
    files["configs/ds.json"] = _LLAMAX_DS.format(dev="none")
    d6 = _check(_audit(files), "D6")
    assert d6.status.value == "used" and d6.detail == "fused kernels are in use", d6


# --- Chinese-Vicuna: "4-bit (NF4) ... dequantizes to 16 bit" for a bare load_in_4bit=True -----------------------------------------

_FOURBIT = (
    "import transformers\nfrom peft import LoraConfig, get_peft_model\n{bnb}\n"
    "model = transformers.LlamaForCausalLM.from_pretrained('decapoda-research/llama-7b-hf', {load}, device_map='auto')\n"
    "model = get_peft_model(model, LoraConfig(r=8, target_modules=['q_proj', 'v_proj']))\n"
    "trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(optim='paged_adamw_8bit', output_dir='o'))\n"
    "trainer.train()\n")


def test_a_bare_four_bit_load_is_fp4_computing_in_fp32() -> None:
    files = {"finetune_4bit.py": _FOURBIT.format(bnb="", load="load_in_4bit=True")}
    result = _audit(files)
    g4 = _check(result, "G4")
    assert g4.values.get("base_quant_type") == "fp4" and g4.values.get("base_compute_dtype") == "float32", g4.values
    reasons = " ".join(result.project.bottleneck_reasons)
    assert "FP4" in reasons and "FP32" in reasons and "NF4" not in reasons, reasons
    # control: QLoRA's own config, NF4 computing in BF16
    files = {"finetune_4bit.py": _FOURBIT.format(
        bnb="import torch\nq = transformers.BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type='nf4', "
            "bnb_4bit_compute_dtype=torch.bfloat16)\n", load="quantization_config=q")}
    result = _audit(files)
    g4 = _check(result, "G4")
    assert g4.values.get("base_quant_type") == "nf4" and g4.values.get("base_compute_dtype") == "bfloat16", g4.values
    reasons = " ".join(result.project.bottleneck_reasons)
    assert "4-bit (NF4): each matmul first dequantizes the weights to BF16" in reasons, reasons


# --- MeZO: a Trainer subclass's copied loop enables checkpointing under an option nothing sets -----------------------------------

_MEZO_TRAINER = (
    "from transformers import Trainer\n\n\nclass OurTrainer(Trainer):\n"
    "    def _inner_training_loop(self, batch_size=None, args=None, resume_from_checkpoint=None, trial=None):\n"
    "        train_dataloader = self.get_train_dataloader()\n"
    "        if not (self.args.linear_probing) and args.gradient_checkpointing:\n"
    "            self.model.gradient_checkpointing_enable()\n"
    "        for step, inputs in enumerate(train_dataloader):\n"
    "            tr_loss_step = self.training_step(self.model, inputs)\n")
_MEZO_RUN = (
    "from transformers import AutoModelForCausalLM, HfArgumentParser, TrainingArguments\n\nfrom trainer import OurTrainer\n\n"
    "(args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()\n"
    "model = AutoModelForCausalLM.from_pretrained('facebook/opt-13b')\n"
    "trainer = OurTrainer(model=model, args=args)\ntrainer.train()\n")


def test_a_trainer_subclass_option_left_at_its_default_is_off() -> None:
    files = {"large_models/trainer.py": _MEZO_TRAINER, "large_models/run.py": _MEZO_RUN,
             "large_models/mezo.sh": "python run.py --output_dir out --learning_rate 1e-6\n"}
    c3 = _check(_audit(files), "C3")
    assert c3.status.value == "unused" and "off by default" in (c3.detail or ""), c3
    # control: a launch that turns the option on
    files["large_models/mezo.sh"] = "python run.py --output_dir out --gradient_checkpointing True\n"
    c3 = _check(_audit(files), "C3")
    assert c3.status.value == "used", c3


# --- LLM-Shearing: the project's own subclass of MosaicML's StreamingDataset, over MDS shards -----------------------------------

_SHEARING_DS = ("import numpy as np\nfrom streaming.base.dataset import StreamingDataset\n\n\n"
                "class TextStreamingDataset({base}):\n    def __init__(self, local, split, shuffle, max_seq_len):\n"
                "        super().__init__(local=local, split=split, shuffle=shuffle)\n        self.max_seq_len = max_seq_len\n\n"
                "    def __getitem__(self, idx):\n        sample = super().__getitem__(idx)\n"
                "        return np.frombuffer(sample['tokens'], dtype=np.uint16)[: self.max_seq_len]\n")
_SHEARING_LOADER = ("from torch.utils.data import DataLoader\n\nfrom llmshearing.datasets.streaming_dataset import TextStreamingDataset\n\n\n"
                    "def build_text_dataloader(cfg, device_batch_size):\n"
                    "    dataset = TextStreamingDataset(local=cfg.dataset.local, split=cfg.dataset.split, shuffle=True, max_seq_len=4096)\n"
                    "    return DataLoader(dataset, batch_size=device_batch_size, num_workers=0)\n")
_SHEARING_TRAIN = ("import torch\n\nfrom llmshearing.datasets.load_text_dataloader import build_text_dataloader\n\n\n"
                   "def main(cfg):\n    loader = build_text_dataloader(cfg, 4)\n    for batch in loader:\n"
                   "        loss = model(batch).loss\n        loss.backward()\n\n\nif __name__ == '__main__':\n    main(cfg)\n")


def test_a_subclass_of_a_streaming_dataset_streams_shards() -> None:
    files = {"llmshearing/__init__.py": "", "llmshearing/datasets/__init__.py": "",
             "llmshearing/datasets/streaming_dataset.py": _SHEARING_DS.format(base="StreamingDataset"),
             "llmshearing/datasets/load_text_dataloader.py": _SHEARING_LOADER, "llmshearing/train.py": _SHEARING_TRAIN,
             "llmshearing/scripts/pruning.sh": "composer llmshearing/train.py llmshearing/configs/7b.yaml\n"}
    result = _audit(files)
    for cid in ("F4", "F9"):
        c = _check(result, cid)
        assert c.status.value == "used" and any(e.path.endswith("load_text_dataloader.py") for e in c.evidence), (cid, c)
    # control: a dataset class of its own over a map-style torch Dataset streams nothing
    files["llmshearing/datasets/streaming_dataset.py"] = _SHEARING_DS.format(base="torch.utils.data.Dataset").replace(
        "from streaming.base.dataset import StreamingDataset", "import torch")
    result = _audit(files)
    assert _check(result, "F9").status.value != "used"


# --- LLM-Shearing: a launch's OmegaConf dotlist overrides its base YAML, named by the checkout's absolute path -------------------

_SHEARING_YAML = ("max_seq_len: 4096\ntrain_loader:\n  name: text\n  dataset:\n    split: train\n  drop_last: true\n"
                  "  num_workers: 8\neval_loader:\n  name: text\n  dataset:\n    split: eval\n  num_workers: 8\n")


def test_a_dotlist_override_replaces_its_base_configs_value() -> None:
    launch = ("config_file=/scratch/gpfs/user/LLM-Shearing/llmshearing/configs/llama2/7b.yaml\n"
              "composer llmshearing/train.py $config_file \\\n    max_seq_len=4096 \\\n    train_loader.num_workers=0 \\\n"
              "    autoresume=false\n")
    files = {"llmshearing/train.py": _SHEARING_TRAIN, "llmshearing/configs/llama2/7b.yaml": _SHEARING_YAML,
             "llmshearing/scripts/pruning.sh": launch}
    f = _audit(files).facts
    kept = {(s.path, s.key) for s in f.effective("num_workers")}
    assert ("llmshearing/configs/llama2/7b.yaml", "train_loader.num_workers") not in kept, kept
    assert ("llmshearing/configs/llama2/7b.yaml", "eval_loader.num_workers") in kept, kept  # another section's: not overridden
    # control: a launch that leaves the loader's workers to the YAML keeps its value
    files["llmshearing/scripts/pruning.sh"] = launch.replace("    train_loader.num_workers=0 \\\n", "")
    kept = {(s.path, s.key) for s in _audit(files).facts.effective("num_workers")}
    assert ("llmshearing/configs/llama2/7b.yaml", "train_loader.num_workers") in kept, kept


# --- llm2vec: "tuned DDP buckets" from PyTorch DDP's own default bucket size ------------------------------------------------------

_LLM2VEC_TRAIN = ("from accelerate import Accelerator, DistributedDataParallelKwargs\n\n\ndef main():\n"
                  "    kwargs = [DistributedDataParallelKwargs(dim=0, broadcast_buffers=True, bucket_cap_mb={mb}, "
                  "find_unused_parameters=True)]\n    accelerator = Accelerator(kwargs_handlers=kwargs)\n"
                  "    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)\n    for batch in loader:\n"
                  "        loss = model(**batch).loss\n        accelerator.backward(loss)\n        optimizer.step()\n\n\n"
                  "if __name__ == '__main__':\n    main()\n")


def test_the_default_ddp_bucket_size_tunes_nothing() -> None:
    files = {"experiments/run_supervised.py": _LLM2VEC_TRAIN.format(mb=25),
             "run.sh": "torchrun --nproc_per_node=8 experiments/run_supervised.py train_configs/supervised/MetaLlama3.json\n"}
    e2 = _check(_audit(files), "E2")
    assert "tuned DDP buckets" not in (e2.detail or ""), e2
    # control: a bucket size of the project's own choosing is a tuning
    files["experiments/run_supervised.py"] = _LLM2VEC_TRAIN.format(mb=100)
    e2 = _check(_audit(files), "E2")
    assert e2.status.value == "used" and "tuned DDP buckets" in (e2.detail or ""), e2


# --- round 69. MoRA (Alpaca-LoRA's fire entry): the quotient's terms are the entry function's parameters ---------------------------

_MORA_TRAIN = (
    "import os\n\nimport fire\nimport transformers\n\n\n"
    "def train(base_model: str = '', batch_size: int = 128, micro_batch_size: int = 4, num_epochs: int = 3):\n"
    "    gradient_accumulation_steps = batch_size // micro_batch_size\n"
    "    world_size = int(os.environ.get('WORLD_SIZE', 1))\n    if world_size != 1:\n"
    "        gradient_accumulation_steps = gradient_accumulation_steps // world_size\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(base_model)\n"
    "    trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(\n"
    "        per_device_train_batch_size=micro_batch_size,\n"
    "        gradient_accumulation_steps=gradient_accumulation_steps,\n        num_train_epochs=num_epochs,\n"
    "        output_dir='out'))\n    trainer.train()\n\n\nif __name__ == '__main__':\n    fire.Fire(train)\n")


def test_an_accumulation_quotient_of_entry_parameters_takes_the_launch_values() -> None:
    files = {"train.py": _MORA_TRAIN,
             "run.sh": "deepspeed --num_gpus=8 train.py --base_model meta-llama/Llama-2-7b-hf --batch_size 128 --micro_batch_size 4\n"}
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "used" and c5.values.get("gradient_accumulation_steps") == 32, c5
    assert any(e.path == "run.sh" for e in c5.evidence), c5.evidence
    # control: a launch that leaves one term to the parameter's default (not read) keeps the count "not judged"
    files["run.sh"] = "deepspeed --num_gpus=8 train.py --base_model meta-llama/Llama-2-7b-hf --batch_size 128\n"
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "n/a", c5


# --- BitDistiller: the pins sit in ``requirement.txt`` (singular) ------------------------------------------------------------------


def test_a_requirement_txt_is_a_requirements_file() -> None:
    from checks.facts.extract import classify

    assert classify("requirement.txt") == "requirements" and classify("requirements_mistral.txt") == "requirements"
    assert classify("requirement_notes.md") != "requirements" and classify("train/requirement.py") != "requirements"
    files = {"train/train.py": _MORA_TRAIN, "requirement.txt": "transformers==4.31.0\ndatasets\ndeepspeed\n",
             "train/train.sh": "deepspeed --num_gpus=8 train.py --base_model meta-llama/Llama-2-7b-hf\n"}
    d1 = _check(_audit(files), "D1")
    # transformers 4.31 predates the SDPA default (4.36): eager attention, not "partial"
    assert d1.status.value == "unused" and "< 4.36" in (d1.detail or ""), d1


# --- MoRA, DoRA: torch.compile after the trainer was built through a class name; an evaluation script's train(mode=False) -----------

_DORA_FINETUNE = (
    "import sys\n\nimport fire\nimport torch\nimport transformers\n\n\nclass OurTrainer(transformers.Trainer):\n    pass\n\n\n"
    "def train(base_model: str = '', output_dir: str = 'out'):\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(base_model)\n"
    "    TRAINER_CLS = OurTrainer\n"
    "    trainer = TRAINER_CLS(\n        model=model,\n        args=transformers.TrainingArguments(output_dir=output_dir),\n    )\n"
    "    model.config.use_cache = False\n"
    "    if torch.__version__ >= '2' and sys.platform != 'win32':\n        model = torch.compile(model)\n"
    "    trainer.train()\n\n\nif __name__ == '__main__':\n    fire.Fire(train)\n")
_DORA_EVAL = (
    "import torch\nfrom peft import PeftModel\nfrom transformers import AutoModelForCausalLM\n\n\ndef main():\n"
    "    model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
    "    model = PeftModel.from_pretrained(model, 'out')\n"
    "    for name, module in model.named_modules():\n        module.train(mode=False)\n"
    "    model = torch.compile(model)\n    outputs = model.generate(input_ids=torch.ones(1, 8, dtype=torch.long))\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


def test_a_compile_after_a_trainer_built_through_a_class_name_does_not_compile_training() -> None:
    files = {"commonsense_reasoning/finetune.py": _DORA_FINETUNE, "commonsense_reasoning/commonsense_evaluate.py": _DORA_EVAL,
             "commonsense_reasoning/llama2_7B_DoRA.sh": ("CUDA_VISIBLE_DEVICES=$4 python finetune.py --base_model x --output_dir $3\n\n"
                                                        "CUDA_VISIBLE_DEVICES=$4 python commonsense_evaluate.py --model LLaMA2-7B\n")}
    result = _audit(files)
    assert result.roles.role("commonsense_reasoning/commonsense_evaluate.py") != "training", result.roles.why
    d2 = _check(result, "D2")
    assert d2.status.value == "unused" and "after the trainer was built" in (d2.detail or ""), d2
    # control: compiled before the trainer is built, the trainer holds the compiled module
    files["commonsense_reasoning/finetune.py"] = _DORA_FINETUNE.replace(
        "    TRAINER_CLS = OurTrainer\n", "    model = torch.compile(model)\n    TRAINER_CLS = OurTrainer\n").replace(
        "        model = torch.compile(model)\n", "        pass\n")
    d2 = _check(_audit(files), "D2")
    assert d2.status.value == "used", d2



# --- ReLoRA: a hand loop that accumulates under its own DDP wrap without no_sync() ----------------------------------------------

_RELORA_MAIN = (
    "import argparse\n\nimport torch\nimport torch.distributed as dist\n\n\ndef main(args):\n"
    "    dist.init_process_group(backend='nccl')\n"
    "    model = torch.nn.parallel.DistributedDataParallel(\n        model,\n        device_ids=[local_rank],\n    )\n"
    "    for batch_idx, batch in enumerate(dataloader):\n        global_step += 1\n"
    "{body}"
    "\n\nif __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--gradient_accumulation', type=int, default=4)\n    main(parser.parse_args())\n")
_RELORA_PLAIN = ("        loss = model(**batch).loss\n        scaled_loss = loss / args.gradient_accumulation\n        scaled_loss.backward()\n"
                 "        if global_step % args.gradient_accumulation != 0:\n            continue\n"
                 "        optimizer.step()\n        optimizer.zero_grad()\n")


def test_accumulation_under_the_projects_ddp_without_no_sync_is_a_finding() -> None:
    files = {"torchrun_main.py": _RELORA_MAIN.format(body=_RELORA_PLAIN),
             "run.sh": "torchrun --nproc-per-node 8 torchrun_main.py --gradient_accumulation 16\n"}
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "used" and "nothing calls no_sync()" in (c5.detail or ""), c5
    assert [(e.path, e.line) for e in c5.findings] == [("torchrun_main.py", 9)], c5.findings
    # control: the same loop skipping the all-reduce of the non-final micro-batches
    body = ("        sync = global_step % args.gradient_accumulation == 0\n"
            "        with (model.no_sync() if not sync else contextlib.nullcontext()):\n"
            "            loss = model(**batch).loss\n            (loss / args.gradient_accumulation).backward()\n"
            "        if not sync:\n            continue\n        optimizer.step()\n        optimizer.zero_grad()\n")
    files["torchrun_main.py"] = "import contextlib\n" + _RELORA_MAIN.format(body=body)
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "used" and not c5.findings and "no_sync" not in (c5.detail or ""), c5
    # control: nanoGPT's spelling, the reducer's flag set by hand on the last micro-batch only
    body = ("        model.require_backward_grad_sync = global_step % args.gradient_accumulation == 0\n" + _RELORA_PLAIN)
    files["torchrun_main.py"] = _RELORA_MAIN.format(body=body)
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "used" and not c5.findings, c5


# --- PiSSA: an attention option the project declares but never hands the model's load ---------------------------------------------

_PISSA_TRAIN = (
    "from dataclasses import dataclass, field\nfrom typing import Optional\n\nimport torch\nimport transformers\n\n\n"
    "@dataclass\nclass TrainingArguments(transformers.TrainingArguments):\n"
    "    model_name_or_path: Optional[str] = field(default='meta-llama/Llama-2-7b-hf')\n"
    "    attn_implementation : Optional[str] = field(default='flash_attention_2')\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser(TrainingArguments)\n"
    "    script_args = parser.parse_args_into_dataclasses()[0]\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(\n        script_args.model_name_or_path,\n"
    "        torch_dtype=torch.bfloat16,\n{extra}    )\n"
    "    data_module = dict(train_dataset=train_dataset, eval_dataset=None)\n"
    "    trainer = transformers.Trainer(model=model, args=script_args, **data_module)\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    train()\n")


def test_an_attention_option_no_load_reads_is_not_the_attention() -> None:
    files = {"train.py": _PISSA_TRAIN.format(extra=""), "requirements.txt": "transformers==4.45.1\ntorch==2.4.0\n",
             "scripts/run.sh": "deepspeed --master_port=16971 train.py --bf16 True --output_dir out\n"}
    d1 = _check(_audit(files), "D1")
    assert d1.status.value == "partial" and not any(e.line == 11 for e in d1.evidence), d1
    # control: the same option handed to the load chooses FlashAttention-2
    files["train.py"] = _PISSA_TRAIN.format(extra="        attn_implementation=script_args.attn_implementation,\n")
    d1 = _check(_audit(files), "D1")
    assert d1.status.value == "used" and "flash_attention_2" in (d1.detail or ""), d1


# --- LLM-QAT: the project's own KDTrainer is distillation training (G6 applies) -----------------------------------------------------

_QAT_KD = ("import torch.nn.functional as F\nfrom transformers import Trainer\n\n\nclass {name}(Trainer):\n"
           "    def compute_loss(self, model, inputs, return_outputs=False):\n        student_logits = model(**inputs).logits\n"
           "        teacher_logits = model.teacher(**inputs).logits\n"
           "        return F.kl_div(F.log_softmax(student_logits, -1), F.softmax(teacher_logits, -1), reduction='batchmean')\n")
_QAT_TRAIN = ("import transformers\n\nfrom utils.kd_trainer import {name}\n\n\ndef train():\n"
              "    model = transformers.AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
              "    trainer = {name}(model=model, args=transformers.TrainingArguments(output_dir='out'))\n    trainer.train()\n\n\n"
              "if __name__ == '__main__':\n    train()\n")


def test_a_kd_trainer_of_the_projects_own_is_distillation_training() -> None:
    files = {"utils/__init__.py": "", "utils/kd_trainer.py": _QAT_KD.format(name="KDTrainer"),
             "train.py": _QAT_TRAIN.format(name="KDTrainer"), "run_train.sh": "torchrun --nproc_per_node=8 train.py\n"}
    g6 = _check(_audit(files), "G6")
    assert g6.status.value == "unused" and "distillation" in (g6.detail or ""), g6
    # control: a trainer subclass of another purpose
    files = {k: v.replace("KDTrainer", "LoggingTrainer") for k, v in files.items()}
    g6 = _check(_audit(files), "G6")
    assert g6.status.value == "n/a", g6


def test_an_evaluation_scripts_train_false_reads_the_same_through_the_cache_recording(tmp_path: Path) -> None:
    # the roles read calls through their recording view (``RoleCall``) when a scan keeps a facts cache: ``train(mode=False)``
    # must be seen there too (Chinese-Vicuna's ``tools/merge_lora.py``: ``lora_model.train(False)`` read as training cached)
    files = {"commonsense_reasoning/finetune.py": _DORA_FINETUNE, "commonsense_reasoning/commonsense_evaluate.py": _DORA_EVAL,
             "commonsense_reasoning/llama2_7B_DoRA.sh": ("CUDA_VISIBLE_DEVICES=$4 python finetune.py --base_model x\n\n"
                                                        "CUDA_VISIBLE_DEVICES=$4 python commonsense_evaluate.py --model LLaMA2-7B\n")}
    report = scan_cold_and_cached(tmp_path, files)
    assert report["scan"]["entry_points"] == ["commonsense_reasoning/finetune.py"], report["scan"]["entry_points"]


# --- Telechat: DeepSpeed-Chat's own LoRA behind a rank switch is not "PEFT" -------------------------------------------------------

_TELECHAT_MAIN = (
    "import argparse\n\nimport deepspeed\nfrom transformers import AutoModelForCausalLM\n{imp}\n\n"
    "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--lora_dim', type=int, default=0)\n"
    "    args = parser.parse_args()\n    model = AutoModelForCausalLM.from_pretrained('telechat-7b')\n"
    "    if args.lora_dim > 0:\n{body}"
    "    model, optimizer, _, _ = deepspeed.initialize(model=model)\n    for batch in loader:\n"
    "        loss = model(**batch).loss\n        model.backward(loss)\n        model.step()\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


def test_a_projects_own_lora_behind_its_switch_is_not_called_peft() -> None:
    own = _TELECHAT_MAIN.format(imp="from utils.module.lora import convert_linear_layer_to_lora, mark_only_lora_as_trainable",
                                body="        model = convert_linear_layer_to_lora(model, 'self_attention.', 1, args.lora_dim)\n"
                                     "        mark_only_lora_as_trainable(model, 'lora_only')\n")
    files = {"sft/main.py": own, "sft/run_telechat_single_node.sh": "deepspeed --master_port 29500 main.py --zero_stage 3\n"}
    g4 = _check(_audit(files), "G4")
    assert g4.status.value == "unused" and "PEFT" not in (g4.detail or "") and "mark_only_lora_as_trainable" in (g4.detail or ""), g4
    # control: PEFT's own builder under the same switch is named so
    files["sft/main.py"] = _TELECHAT_MAIN.format(imp="from peft import LoraConfig, get_peft_model",
                                                 body="        model = get_peft_model(model, LoraConfig(r=args.lora_dim))\n")
    g4 = _check(_audit(files), "G4")
    assert g4.status.value == "unused" and "PEFT is built only under" in (g4.detail or ""), g4
