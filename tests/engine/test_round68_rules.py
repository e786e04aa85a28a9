"""Round 68 (issue #9): claims of more public repositories (Chinese-Vicuna, LLM-Pruner, Llama-X, LLM-Shearing, MeZO,
ChatGLM-Tuning, llm2vec, Ask-Anything), read claim by claim. Each test is one false claim of those reports, made from the
shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.project import placeholder_tail

from .claims import audit as _audit
from .claims import check as _check

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
