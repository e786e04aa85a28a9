"""Round 39 (issue #9): five more public repositories read claim by claim (LongLoRA, TinyLLaVA-Factory, h2o-llmstudio,
LLaMA2-Accessory, TinyZero). Each test is one false claim of those reports, made from the shape of the real code, with a
control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- LongLoRA: README commands, a side tool for PDFs, two DeepSpeed configs of which the commands pass one -------------------

_LL_TRAIN = (
    "from dataclasses import dataclass, field\nfrom typing import Optional\n\nimport transformers\nfrom peft import LoraConfig, get_peft_model\n\n\n"
    "@dataclass\nclass ModelArguments:\n    model_name_or_path: Optional[str] = field(default=\"EleutherAI/pythia-1.4b-deduped\")\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
    "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
    "    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16))\n"
    "    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=data)\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    train()\n"
)
_LL_README = (
    "# LongLoRA\n\n### Fine-tuning\n```\ntorchrun --nproc_per_node=8 fine-tune.py  \\\n"
    "        --model_name_or_path path_to/Llama-2-7b-hf \\\n        --bf16 True \\\n        --output_dir path_to_saving_checkpoints \\\n"
    "        --warmup_steps 20 \\\n        --lr_scheduler_type \"constant_with_warmup\" \\\n        --logging_steps 10 \\\n"
    "        --deepspeed \"ds_configs/stage2.json\" \\\n        --max_steps 1000\n```\n\n"
    "You could change `ds_configs/stage2.json` to `ds_configs/stage3.json` if you want.\n"
)
_LL_STAGE2 = '{\n  "train_micro_batch_size_per_gpu": "auto",\n  "zero_optimization": {\n    "stage": 2,\n    "overlap_comm": true\n  }\n}\n'
_LL_STAGE3 = (
    '{\n  "scheduler": {\n    "type": "WarmupDecayLR",\n    "params": {"warmup_num_steps": "auto", "total_num_steps": "auto"}\n  },\n'
    '  "zero_optimization": {\n    "stage": 3,\n    "offload_optimizer": {"device": "cpu"}\n  },\n  "steps_per_print": 5,\n'
    '  "train_micro_batch_size_per_gpu": "auto"\n}\n'
)
_PDF2TXT = (
    "import argparse\nimport easyocr\nfrom detectron2.config import get_cfg\nfrom detectron2.engine import DefaultPredictor\n"
    "from backbone import build_vit_fpn_backbone\n\n\ndef main():\n    cfg = get_cfg()\n    cfg.merge_from_file('configs/cascade_dit_large.yaml')\n"
    "    predictor = DefaultPredictor(cfg)\n    reader = easyocr.Reader(['en'])\n\n\nif __name__ == '__main__':\n    main()\n"
)
_PDF2TXT_BACKBONE = "from detectron2.modeling import Backbone, BACKBONE_REGISTRY, FPN\nfrom beit import dit_large_patch16\n"
_PDF2TXT_BEIT = "import torch.nn as nn\nfrom timm.models.layers import drop_path\n\n\nclass Beit(nn.Module):\n    pass\n"
_PDF2TXT_CFG = "MODEL:\n  MASK_ON: True\nSOLVER:\n  LR_SCHEDULER_NAME: \"WarmupCosineLR\"\n  WARMUP_ITERS: 1000\n  AMP:\n    ENABLED: True\n"


def _longlora(**extra: str) -> dict[str, str]:
    return {"fine-tune.py": _LL_TRAIN, "README.md": _LL_README, "ds_configs/stage2.json": _LL_STAGE2,
            "ds_configs/stage3.json": _LL_STAGE3, "requirements.txt": "transformers>=4.34.0\npeft\ndeepspeed\n", **extra}


def test_a_detectron2_pdf_tool_and_its_configs_are_a_side_project():
    files = _longlora(**{"pdf2txt/pdf2txt.py": _PDF2TXT, "pdf2txt/backbone.py": _PDF2TXT_BACKBONE, "pdf2txt/beit.py": _PDF2TXT_BEIT,
                         "pdf2txt/configs/cascade_dit_large.yaml": _PDF2TXT_CFG, "pdf2txt/requirements.txt": "timm==0.5.4\neasyocr\n"})
    a = _audit(files)
    roles = a.roles.by_path
    for p in ("pdf2txt/pdf2txt.py", "pdf2txt/backbone.py", "pdf2txt/beit.py", "pdf2txt/configs/cascade_dit_large.yaml",
              "pdf2txt/requirements.txt"):
        assert roles[p] == "side", (p, roles[p], a.roles.why.get(p))
    g1 = _check(a, "G1")
    assert not any(e.path.startswith("pdf2txt/") for e in g1.evidence), g1.evidence
    # control: a detectron2 module the training path imports (a region-feature extractor of an MLLM) is the project's
    files["fine-tune.py"] = "from pdf2txt.backbone import build_vit_fpn_backbone\n" + _LL_TRAIN
    assert _audit(files).roles.by_path["pdf2txt/backbone.py"] != "side"


def test_the_scheduler_of_a_deepspeed_config_no_command_passes_is_not_the_runs_schedule():
    g1 = _check(_audit(_longlora()), "G1")
    assert g1.status.value == "partial" and "WarmupDecayLR" not in g1.detail, g1.detail
    assert any("constant_with_warmup" in e.snippet for e in g1.evidence)
    # control: the commands pass stage3.json, whose WarmupDecayLR replaces the Trainer's schedule
    files = _longlora()
    files["README.md"] = _LL_README.replace('"ds_configs/stage2.json" \\', '"ds_configs/stage3.json" \\')
    g1 = _check(_audit(files), "G1")
    assert g1.status.value == "used" and "WarmupDecayLR" in g1.detail, g1.detail


def test_steps_per_print_of_a_deepspeed_config_no_command_passes_is_not_the_runs_logging():
    i4 = _check(_audit(_longlora()), "I4")
    assert i4.status.value == "used" and not any(e.path == "ds_configs/stage3.json" for e in i4.evidence), (i4.detail, i4.evidence)
    files = _longlora()
    files["README.md"] = _LL_README.replace('"ds_configs/stage2.json" \\', '"ds_configs/stage3.json" \\')
    i4 = _check(_audit(files), "I4")
    assert i4.status.value == "unused" and any(e.path == "ds_configs/stage3.json" for e in i4.evidence), i4.detail


def test_a_placeholder_folder_before_a_model_name_names_that_model_and_an_overridden_default_names_none():
    p = _audit(_longlora()).project
    assert p.model_names[0] == "Llama-2-7b-hf" and p.params_billions == 7, (p.model_names, p.params_billions)
    assert "EleutherAI/pythia-1.4b-deduped" not in p.model_names
    # control: without a documented command, the argument default is the model the script trains
    files = _longlora()
    files["README.md"] = "# LongLoRA\n"
    assert "EleutherAI/pythia-1.4b-deduped" in _audit(files).project.model_names


# --- TinyLLaVA-Factory: per-sample processors built in the dataset, a trainer subclass, a borrowed tokenizer --------------------

_TL_DATASET = (
    "import json\nfrom PIL import Image\nfrom torch.utils.data import Dataset\n\nfrom .image_preprocess import ImagePreprocess\n"
    "from .text_preprocess import TextPreprocess\n\n\nclass LazySupervisedDataset(Dataset):\n"
    "    def __init__(self, data_path, tokenizer, data_args):\n        self.list_data_dict = json.load(open(data_path))\n"
    "        self.text_preprocess = TextPreprocess(tokenizer, data_args.conv_version)\n"
    "        self.image_preprocess = ImagePreprocess(data_args.image_processor, data_args)\n\n"
    "    def __len__(self):\n        return len(self.list_data_dict)\n\n"
    "    def __getitem__(self, i):\n        sources = self.list_data_dict[i]\n"
    "        data_dict = self.text_preprocess(sources['conversations'])\n"
    "        image = Image.open(sources['image']).convert('RGB')\n        data_dict['image'] = self.image_preprocess(image)\n"
    "        return data_dict\n"
)
_TL_TEXT = (
    "class TextPreprocess:\n    def __init__(self, tokenizer, version):\n        self.tokenizer = tokenizer\n\n"
    "    def __call__(self, messages):\n        ids = self.tokenizer(messages, return_tensors='pt').input_ids\n        return dict(input_ids=ids)\n"
)
_TL_IMAGE = (
    "class ImagePreprocess:\n    def __init__(self, image_processor, data_args):\n        self.image_processor = image_processor\n\n"
    "    def __call__(self, image):\n        return self.image_processor(image, return_tensors='pt')['pixel_values'][0]\n"
)
_TL_TRAIN = (
    "import transformers\nfrom tinyllava.train.tinyllava_trainer import LLaVATrainer\nfrom tinyllava.data.dataset import LazySupervisedDataset\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n"
    "    trainer = LLaVATrainer(model=model, args=training_args, train_dataset=LazySupervisedDataset('d.json', None, None))\n"
    "    trainer.train()\n\n\nif __name__ == '__main__':\n    train()\n"
)
_TL_TRAINER = "from transformers import Trainer\n\n\nclass LLaVATrainer(Trainer):\n    pass\n"
_TL_SH = ("deepspeed tinyllava/train/train.py \\\n    --model_name_or_path $LLM_VERSION \\\n"
          "    --tokenizer_name_or_path meta-llama/Llama-2-7b-hf \\\n    --group_by_modality_length True \\\n    --bf16 True\n")


def _tinyllava(**extra: str) -> dict[str, str]:
    return {"tinyllava/data/dataset.py": _TL_DATASET, "tinyllava/data/text_preprocess.py": _TL_TEXT,
            "tinyllava/data/image_preprocess.py": _TL_IMAGE, "tinyllava/train/train.py": _TL_TRAIN,
            "tinyllava/train/tinyllava_trainer.py": _TL_TRAINER, "scripts/train/finetune_openelm.sh": _TL_SH, **extra}


def test_processors_a_dataset_builds_and_calls_per_sample_are_online_even_in_a_file_named_preprocess():
    f6 = _check(_audit(_tinyllava()), "F6")
    assert f6.status.value == "unused" and "per sample" in f6.detail, f6.detail
    # control: a preprocessing script that tokenizes and saves the dataset ahead of training
    files = _tinyllava(**{"tools/preprocess_data.py": (
        "from datasets import load_dataset\nfrom transformers import AutoTokenizer\n\ntok = AutoTokenizer.from_pretrained('gpt2')\n"
        "ds = load_dataset('json', data_files='d.json')\nds = ds.map(lambda b: tok(b['text']), batched=True)\nds.save_to_disk('out')\n")})
    files["tinyllava/data/dataset.py"] = _TL_DATASET.replace("self.text_preprocess(sources['conversations'])", "dict(sources)")
    files["tinyllava/data/text_preprocess.py"] = "X = 1\n"
    files["tinyllava/data/image_preprocess.py"] = "X = 1\n"
    files["tinyllava/data/dataset.py"] = files["tinyllava/data/dataset.py"].replace(
        "        data_dict['image'] = self.image_preprocess(image)\n", "")
    assert _check(_audit(files), "F6").status.value == "used"


def test_a_borrowed_tokenizer_beside_the_model_option_is_no_model_name():
    p = _audit(_tinyllava()).project
    assert "meta-llama/Llama-2-7b-hf" not in p.model_names and p.params_billions is None, (p.model_names, p.params_billions)
    # control: a script that names only a tokenizer path is left as it was
    files = _tinyllava()
    files["scripts/train/finetune_openelm.sh"] = _TL_SH.replace("    --model_name_or_path $LLM_VERSION \\\n", "")
    assert "meta-llama/Llama-2-7b-hf" in _audit(files).project.model_names


def test_packing_advice_for_a_trainer_subclass_names_the_collator_and_the_trainer_script():
    from reports.json_report import to_json

    a = _audit(_tinyllava())
    f7 = _check(a, "F7")
    assert f7.status.value == "unused" and f7.values.get("advice_for") == "hf-trainer", f7.values
    recs = {r["check"]: r for r in to_json(a)["recommendations"]}
    assert "DataCollatorWithFlattening" in recs["F7"]["text"], recs["F7"]["text"]
    placed = {r["snippet_where"] for r in recs.values() if r.get("snippet_target") == "python"}
    assert placed == {"tinyllava/train/train.py"}, placed


# --- h2o-llmstudio: options of a Python config, off by default -------------------------------------------------------------

_H2O_MODELING = (
    "import deepspeed\nimport torch\nfrom torch.nn.parallel import DistributedDataParallel\nfrom transformers import AutoConfig, AutoModel\n\n\n"
    "def wrap_model_distributed(model, optimizer, cfg):\n    if cfg.environment.use_deepspeed and not cfg.training.lora:\n"
    "        ds_config = {\n            \"zero_optimization\": {\n                \"overlap_comm\": True,\n"
    "                \"contiguous_gradients\": True,\n            },\n            \"steps_per_print\": 2000,\n        }\n"
    "        ds_engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config_params=ds_config)\n"
    "        return ds_engine, optimizer\n    model = DistributedDataParallel(model, device_ids=[0])\n    return model, optimizer\n\n\n"
    "def create_nlp_backbone(cfg, model_class=AutoModel):\n    kwargs = {}\n"
    "    if cfg.training.attention_implementation != 'auto':\n        kwargs['attn_implementation'] = cfg.training.attention_implementation\n"
    "    config = AutoConfig.from_pretrained(cfg.llm_backbone)\n"
    "    backbone = model_class.from_pretrained(cfg.llm_backbone, config=config, **kwargs)\n    return backbone\n"
)
_H2O_MODEL = ("from transformers import AutoModelForCausalLM\nfrom llm_studio.src.utils.modeling_utils import create_nlp_backbone\n\n\n"
              "class Model:\n    def __init__(self, cfg):\n        self.backbone = create_nlp_backbone(cfg, model_class=AutoModelForCausalLM)\n")
_H2O_CONFIG = (
    "from dataclasses import dataclass\n\n\n@dataclass\nclass ConfigNLPCausalLMEnvironment:\n    use_deepspeed: bool = False\n"
    "    mixed_precision: bool = True\n\n\n@dataclass\nclass ConfigNLPCausalLMTraining:\n    attention_implementation: str = 'auto'\n"
    "    lora: bool = True\n"
)
_H2O_TRAIN = (
    "from llm_studio.src.models.text_causal_language_modeling_model import Model\n"
    "from llm_studio.src.utils.modeling_utils import wrap_model_distributed\n\n\n"
    "def run_train(cfg, model, optimizer, loader):\n    model, optimizer = wrap_model_distributed(model, optimizer, cfg)\n"
    "    for itr, batch in enumerate(loader):\n        loss = model(batch)['loss']\n        loss.backward()\n        optimizer.step()\n\n\n"
    "def run(cfg):\n    model = Model(cfg)\n    run_train(cfg, model, None, [])\n\n\nif __name__ == '__main__':\n    run(None)\n"
)


def _h2o(use_deepspeed: str = "False", lora: str = "True") -> dict[str, str]:
    return {"llm_studio/src/utils/modeling_utils.py": _H2O_MODELING,
            "llm_studio/src/models/text_causal_language_modeling_model.py": _H2O_MODEL,
            "llm_studio/python_configs/text_causal_language_modeling_config.py": _H2O_CONFIG.replace(
                "use_deepspeed: bool = False", f"use_deepspeed: bool = {use_deepspeed}").replace("lora: bool = True", f"lora: bool = {lora}"),
            "llm_studio/train.py": _H2O_TRAIN, "pyproject.toml": '[project]\nname = "h2o-llmstudio"\ndependencies = ["transformers==4.56.1", "deepspeed"]\n'}


def test_deepspeed_behind_a_switch_that_is_off_by_default_drives_nothing():
    a = _audit(_h2o())
    b1, c6, e2, i4 = (_check(a, x) for x in ("B1", "C6", "E2", "I4"))
    assert b1.status.value == "unused" and "branch the run leaves off" in b1.detail, b1.detail
    assert c6.status.value == "unused", c6.detail
    assert not any(e.line == 9 for e in e2.evidence) and "DDP" in e2.detail, (e2.detail, e2.evidence)
    assert not any("steps_per_print" in (e.snippet or "") for e in i4.evidence), i4.evidence
    # control: the same dict with the switch on by default (and full fine-tuning, which its guard also asks)
    a = _audit(_h2o("True", lora="False"))
    assert _check(a, "B1").status.value == "used" and _check(a, "C6").status.value == "used"


def test_a_model_class_passed_as_a_parameter_loads_an_hf_model_with_its_default_attention():
    d1 = _check(_audit(_h2o()), "D1")
    assert d1.status.value == "partial" and "SDPA" in d1.detail, d1.detail
    files = _h2o()
    files["llm_studio/src/models/text_causal_language_modeling_model.py"] = _H2O_MODEL.replace(
        "model_class=AutoModelForCausalLM", "model_class=MyOwnNet")
    assert _check(_audit(files), "D1").status.value != "partial"


# --- LLaMA2-Accessory: fairscale model parallel, a NativeScaler step, epoch-counted saves -----------------------------------

_ACC_MAIN = (
    "import argparse\nimport torch\nfrom torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing, checkpoint_wrapper\n"
    "from engine_finetune import train_one_epoch\nimport misc\n\n\n"
    "def get_args_parser():\n    parser = argparse.ArgumentParser('finetune')\n"
    "    parser.add_argument('--model_parallel_size', default=1, type=int)\n"
    "    parser.add_argument('--checkpointing', action='store_true', default=False)\n"
    "    parser.add_argument('--save_interval', default=1, type=int, help='number of epochs between model saving')\n"
    "    parser.add_argument('--save_iteration_interval', default=5000, type=int)\n    parser.add_argument('--epochs', default=1, type=int)\n"
    "    return parser\n\n\n"
    "def main(args):\n    model = build(args)\n    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)\n"
    "    loss_scaler = misc.NativeScalerWithGradNormCount()\n    if args.checkpointing:\n"
    "        apply_activation_checkpointing(model, checkpoint_wrapper_fn=checkpoint_wrapper)\n"
    "    for epoch in range(args.epochs):\n        train_one_epoch(model, loader, optimizer, epoch, loss_scaler, log_writer, args)\n"
    "        if epoch % args.save_interval == 0 or epoch + 1 == args.epochs:\n            misc.save_checkpoint(args.output_dir, model)\n\n\n"
    "if __name__ == '__main__':\n    main(get_args_parser().parse_args())\n"
)
_ACC_ENGINE = (
    "import torch\nimport misc\n\n\n"
    "def train_one_epoch(model, data_loader, optimizer, epoch, loss_scaler, log_writer, args):\n"
    "    metric_logger = misc.MetricLogger(delimiter='  ')\n    print_freq = 10\n"
    "    for data_iter_step, batch in enumerate(metric_logger.log_every(data_loader, print_freq, 'Epoch')):\n"
    "        c_loss = model(batch)\n        loss = c_loss\n"
    "        grad_norm = loss_scaler(loss, optimizer, model, parameters=model.parameters(), update_grad=True)\n"
    "        if torch.any(torch.isinf(grad_norm)):\n            print('grad norm is inf')\n"
    "        metric_logger.update(closs=c_loss.item())\n"
    "        for metric_name, metric in metric_logger.meters.items():\n"
    "            if log_writer is not None:\n                log_writer.add_scalar(metric_name, metric.value, data_iter_step)\n"
    "        optimizer.zero_grad(set_to_none=True)\n"
)
_ACC_MISC = (
    "import torch\n\n\nclass NativeScalerWithGradNormCount:\n    def __init__(self):\n        self._scaler = torch.cuda.amp.GradScaler()\n\n"
    "    def __call__(self, loss, optimizer, model, parameters=None, update_grad=True):\n"
    "        self._scaler.scale(loss).backward()\n        if update_grad:\n            self._scaler.step(optimizer)\n"
    "            self._scaler.update()\n        return torch.tensor(1.0)\n\n\n"
    "class MetricLogger:\n    def log_every(self, iterable, print_freq, header=None):\n        for i, obj in enumerate(iterable):\n"
    "            if i % print_freq == 0:\n                print(header, i)\n            yield obj\n\n\n"
    "def save_checkpoint(output_dir, model):\n    torch.save(model.state_dict(), output_dir)\n"
)
_ACC_MOE = (
    "import torch.nn as nn\nimport fairscale.nn.model_parallel.initialize as fs_init\n\n\n"
    "class MoE(nn.Module):\n    def __init__(self, dim, hidden_dim, num_experts, num_experts_per_tok):\n        super().__init__()\n"
    "        mp_size = fs_init.get_model_parallel_world_size()\n        mp_rank = fs_init.get_model_parallel_rank()\n"
    "        n_local_experts = num_experts // mp_size\n"
    "        self.local_experts = [str(i) for i in range(n_local_experts*mp_rank, n_local_experts*(mp_rank+1))]\n"
    "        self.experts = nn.ModuleDict({i: nn.Linear(dim, hidden_dim) for i in self.local_experts})\n"
    "        self.gate = nn.Linear(dim, num_experts, bias=False)\n\n\n"
    "class Transformer(nn.Module):\n    def __init__(self, args):\n        super().__init__()\n"
    "        self.moe = MoE(args.dim, args.hidden_dim, num_experts=8, num_experts_per_tok=2)\n"
)


def _acc_sh(name: str, mp: int, ckpt: bool = True) -> str:
    return (f"#!/bin/bash\nexp_name=finetune/{name}\n\npython -u main_finetune.py \\\n--output_dir output/\"$exp_name\" --epochs 1 \\\n"
            f"--model_parallel_size {mp}" + (" --checkpointing" if ckpt else "") + " \\\n--llama_type llama\n")


def _accessory(ckpt: tuple[bool, ...] = (True, True, True, False)) -> dict[str, str]:
    files = {"main_finetune.py": _ACC_MAIN, "engine_finetune.py": _ACC_ENGINE, "misc.py": _ACC_MISC, "model/LLM/mixtral.py": _ACC_MOE}
    for i, (name, mp) in enumerate((("alpaca", 1), ("dialog_13B", 2), ("dialog_mixtral", 8), ("dialog_70B", 8))):
        files[f"exps/finetune/{name}.sh"] = _acc_sh(name, mp, ckpt[i])
    return files


def test_a_store_true_switch_most_launches_pass_turns_the_checkpointing_it_guards_on():
    a = _audit(_accessory())
    # (``python -u main_finetune.py``: a script named for fine-tuning is the run's entry point, as ``main_pretrain.py`` is)
    assert a.roles.by_path["main_finetune.py"] == "training", a.roles.why.get("main_finetune.py")
    c3 = _check(a, "C3")
    assert c3.status.value == "used" and any("--checkpointing" in (e.snippet or "") for e in c3.evidence), (c3.detail, c3.evidence)
    c3 = _check(_audit(_accessory((True, False, False, False))), "C3")
    assert c3.status.value == "unused", c3.detail


def test_an_interval_an_epoch_counter_is_taken_modulo_counts_epochs():
    i3 = _check(_audit(_accessory()), "I3")
    assert i3.status.value == "used" and "save_interval=1 epoch" in i3.detail and "save_iteration_interval=5000" in i3.detail, i3.detail
    files = _accessory()
    files["main_finetune.py"] = _ACC_MAIN.replace("if epoch % args.save_interval == 0", "if data_iter % args.save_interval == 0")
    assert "save_interval=1 epoch" not in _check(_audit(files), "I3").detail


def test_a_loss_scaler_step_loop_reports_to_tensorboard_every_step_and_an_inf_warning_is_no_log():
    a = _audit(_accessory())
    i5, i4 = _check(a, "I5"), _check(a, "I4")
    assert i5.status.value == "unused" and any("add_scalar" in (e.snippet or "") for e in i5.evidence), (i5.detail, i5.evidence)
    assert not any("grad norm is inf" in (e.snippet or "") for e in i4.evidence), (i4.detail, i4.evidence)
    # control: the report guarded by an interval of 100 steps
    files = _accessory()
    files["engine_finetune.py"] = _ACC_ENGINE.replace("if log_writer is not None:", "if log_writer is not None and data_iter_step % 100 == 0:")
    assert _check(_audit(files), "I5").status.value == "used"


def test_experts_split_over_model_parallel_ranks_are_expert_parallelism_and_tp_sizes_are_a_spread():
    a = _audit(_accessory())
    a7, a4 = _check(a, "A7"), _check(a, "A4")
    assert a7.status.value == "used" and "model-parallel ranks" in a7.detail, a7.detail
    assert a7.evidence[0].path.endswith("dialog_mixtral.sh"), a7.evidence
    assert a4.detail.startswith("tensor parallel size up to 8: 8 in 2 settings"), a4.detail
    # control: every recipe on one model-parallel rank
    files = {k: (v.replace("--model_parallel_size 2", "--model_parallel_size 1").replace("--model_parallel_size 8", "--model_parallel_size 1")
                 if k.endswith(".sh") else v) for k, v in _accessory().items()}
    assert _check(_audit(files), "A7").status.value == "unused"


def test_a_qformer_vocabulary_is_no_gemm_dimension():
    cfg = ('{\n  "qformer_config": {\n    "hidden_size": 768,\n    "vocab_size": 30522\n  },\n'
           '  "text_config": {\n    "hidden_size": 2560,\n    "vocab_size": 50272\n  }\n}\n')
    files = {**_accessory(), "resources/hf/blip2/config.json": cfg}
    d7 = _check(_audit(files), "D7")
    assert d7.status.value == "used", d7.detail
    files["resources/hf/blip2/config.json"] = cfg.replace('"vocab_size": 50272', '"vocab_size": 50277')
    assert _check(_audit(files), "D7").status.value == "unused"


# --- TinyZero: one multi-node example among many single-node launches ---------------------------------------------------------

def test_rdma_advice_for_a_minority_of_multi_node_recipes_is_not_high():
    train = ("import torch\nimport torch.distributed as dist\n\n\ndef main():\n    dist.init_process_group('nccl')\n"
             "    loss = model(x)\n    loss.backward()\n    opt.step()\n\n\nif __name__ == '__main__':\n    main()\n")
    files = {"train.py": train}
    for i in range(5):
        files[f"examples/run_{i}.sh"] = "torchrun --nnodes 1 --nproc_per_node 8 train.py\n"
    files["examples/run_big.sh"] = "torchrun --nnodes 4 --nproc_per_node 8 train.py\n"
    a = _audit(files)
    e1 = _check(a, "E1")
    assert e1.status.value == "unused" and a.project.multi_node
    from checks.model import Priority
    assert e1.priority in (Priority.MEDIUM, None), e1.priority
    # control: the multi-node launches are the majority
    files = {"train.py": train, **{f"examples/run_{i}.sh": "torchrun --nnodes 4 --nproc_per_node 8 train.py\n" for i in range(5)}}
    assert _check(_audit(files), "E1").priority is Priority.HIGH


def test_a_save_after_the_step_loop_in_the_epoch_loop_is_once_per_epoch():
    # torchtune ``recipes/ppo_full_finetune_single_device.py``: the step loop builds ``range(...)`` iterables of its own; the
    # epoch loop's ``range(...)`` is another loop, and the save after the step loop runs once per epoch
    recipe = (
        "import torch\n\n\nclass Recipe:\n    def train(self):\n"
        "        for curr_epoch in range(self._epochs_run, self.total_epochs):\n"
        "            for idx, batch in enumerate(self._dataloader):\n"
        "                for i in range(self._ppo_epochs):\n"
        "                    loss = self._model(batch).loss\n                    loss.backward()\n"
        "                self._optimizer.step()\n                self._optimizer.zero_grad(set_to_none=True)\n"
        "            self.save_checkpoint(curr_epoch)\n\n"
        "    def save_checkpoint(self, epoch):\n        torch.save(self._model.state_dict(), f'ckpt_{epoch}.pt')\n\n\n"
        "if __name__ == '__main__':\n    Recipe().train()\n"
    )
    i3 = _check(_audit({"recipes/ppo_full_finetune.py": recipe}), "I3")
    assert i3.status.value != "unused" and not i3.findings, (i3.detail, i3.findings)


_H2O_SCHEDULERS = (
    "import math\nfrom torch.optim.lr_scheduler import LambdaLR\nfrom transformers import get_constant_schedule_with_warmup\n\n\n"
    "def constant_schedule_with_warmup(optimizer, num_warmup_steps, **kwargs):\n"
    "    return get_constant_schedule_with_warmup(optimizer=optimizer, num_warmup_steps=num_warmup_steps)\n\n\n"
    "def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, num_cycles=0.5):\n"
    "    def lr_lambda(current_step):\n        if current_step < num_warmup_steps:\n"
    "            return float(current_step) / float(max(1, num_warmup_steps))\n"
    "        progress = float(current_step - num_warmup_steps) / float(max(1, num_training_steps - num_warmup_steps))\n"
    "        return 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress))\n\n"
    "    return LambdaLR(optimizer, lr_lambda)\n\n\n"
    "class Schedulers:\n    _schedulers = {\n        \"Cosine\": get_cosine_schedule_with_warmup,\n"
    "        \"Constant\": constant_schedule_with_warmup,\n    }\n\n"
    "    @classmethod\n    def get(cls, name):\n        return cls._schedulers.get(name)\n"
)


def test_a_registry_of_schedule_builders_counts_only_the_builder_the_schedule_name_picks():
    files = {**_h2o(), "llm_studio/src/schedulers.py": _H2O_SCHEDULERS,
             "examples/example_oasst2.yaml": "training:\n    schedule: Cosine\n    warmup_epochs: 0.0\n    learning_rate: 0.0001\n"}
    g1 = _check(_audit(files), "G1")
    assert g1.status.value == "partial" and g1.detail.startswith("cosine schedule without warmup"), g1.detail
    # control: the recipe picks the constant builder
    files["examples/example_oasst2.yaml"] = files["examples/example_oasst2.yaml"].replace("Cosine", "Constant")
    assert "cosine" not in _check(_audit(files), "G1").detail


def test_a_diffusion_trainers_folder_is_a_side_project_with_its_models_and_sampler():
    dit_train = ("import torch\nfrom diffusers.models import AutoencoderKL\nfrom models import DiT_models\n\n\n"
                 "def main():\n    vae = AutoencoderKL.from_pretrained('sd-vae-ft-ema')\n    model = DiT_models['DiT-XL/2']()\n"
                 "    loss = model(x).mean()\n    loss.backward()\n\n\nif __name__ == '__main__':\n    main()\n")
    dit_models = ("import torch.nn as nn\nfrom flash_attn import flash_attn_func\nfrom apex.normalization import FusedRMSNorm as RMSNorm\n\n\n"
                  "class Block(nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n        self.norm = RMSNorm(dim)\n\n"
                  "    def forward(self, q, k, v):\n        return flash_attn_func(q, k, v, causal=False)\n\n\nDiT_models = {'DiT-XL/2': Block}\n")
    dit_sample = "from models import DiT_models\n\n\ndef sample():\n    return DiT_models['DiT-XL/2'](8)\n"
    files = {**_accessory(), "large_dit/train.py": dit_train, "large_dit/models.py": dit_models, "large_dit/sample.py": dit_sample}
    a = _audit(files)
    for p in ("large_dit/train.py", "large_dit/models.py", "large_dit/sample.py"):
        assert a.roles.by_path[p] == "side", (p, a.roles.why.get(p))
    assert not any(e.path.startswith("large_dit/") for e in _check(a, "D6").evidence)
    # control: the LLM trainer imports the folder's models module: it is the project's code
    files["main_finetune.py"] = "from large_dit.models import Block\n" + _ACC_MAIN
    files["large_dit/__init__.py"] = ""
    assert _audit(files).roles.by_path["large_dit/models.py"] != "side"


def test_a_fused_optimizer_imported_under_the_plain_name_with_a_fallback_is_optional():
    files = _accessory()
    files["main_finetune.py"] = _ACC_MAIN.replace(
        "import misc\n", "import misc\n\ntry:\n    from apex.optimizers import FusedAdam as AdamW\nexcept ImportError:\n"
        "    from torch.optim import AdamW\n", 1).replace("torch.optim.AdamW(model.parameters()", "AdamW(model.parameters()")
    d6 = _check(_audit(files), "D6")
    assert "only when the optional package apex" in d6.detail, d6.detail
    # control: apex listed in the requirements is installed with the project
    files["requirements.txt"] = "torch\napex\n"
    assert _check(_audit(files), "D6").status.value == "used"


def test_a_decay_in_one_trainer_and_a_constant_rate_in_another_are_both_named():
    sft = ("from transformers import get_cosine_schedule_with_warmup\n\n\nclass SFTTrainer:\n    def fit(self, opt, total):\n"
           "        self.lr_scheduler = get_cosine_schedule_with_warmup(optimizer=opt, num_warmup_steps=100, num_training_steps=total)\n"
           "        for batch in self.loader:\n            self.model(batch).loss.backward()\n            opt.step()\n")
    ppo = ("from transformers import get_constant_schedule_with_warmup\n\n\nclass Worker:\n    def init_model(self, opt):\n"
           "        self.lr_scheduler = get_constant_schedule_with_warmup(optimizer=opt, num_warmup_steps=10)\n")
    # (TinyZero/verl: the PPO config's ``warmup_style: constant`` is the first schedule name seen)
    cfg = "actor_rollout_ref:\n  actor:\n    optim:\n      lr: 1e-6\n      lr_warmup_steps_ratio: 0.1\n      warmup_style: constant\n"
    g1 = _check(_audit({"trainer/fsdp_sft_trainer.py": sft, "workers/fsdp_workers.py": ppo, "trainer/config/ppo_trainer.yaml": cfg}), "G1")
    assert g1.status.value == "used" and "cosine" in g1.detail and "constant" in g1.detail and "at other sites" in g1.detail, g1.detail
    g1 = _check(_audit({"trainer/fsdp_sft_trainer.py": sft}), "G1")
    assert "other sites" not in g1.detail and "cosine" in g1.detail, g1.detail


def test_d1_advice_names_the_projects_own_attention_option_left_at_auto():
    from reports.json_report import to_json

    a = _audit(_h2o())
    d1 = _check(a, "D1")
    assert d1.values.get("advice_for") == "project-option" and d1.values.get("flag") == "attention_implementation", d1.values
    rec = next(r for r in to_json(a)["recommendations"] if r["check"] == "D1")
    assert "`attention_implementation` option" in rec["text"] and rec["snippet"].startswith("attention_implementation: flash_attention_2")
    # control: a project without such an option gets transformers' own keyword
    files = _h2o()
    files["llm_studio/python_configs/text_causal_language_modeling_config.py"] = _H2O_CONFIG.replace(
        "    attention_implementation: str = 'auto'\n", "")
    assert _check(_audit(files), "D1").values.get("advice_for") is None


def test_a_loop_that_steps_through_an_optimizer_helper_is_a_step_loop():
    # modded-nanogpt ``train_gpt.py``: micro-batches in an inner loop, then ``training_manager.step_optimizers(step)``
    train = ("import torch\n\n\ndef print0(s, console=False):\n    print(s)\n\n\n"
             "for step in range(train_steps + 1):\n    last_step = step == train_steps\n    if last_step:\n        break\n"
             "    for idx in range(grad_accum_steps):\n        loss = model(next(loader)).sum()\n        loss.backward()\n"
             "    training_manager.step_optimizers(step)\n"
             "    print0(f'step:{step+1}/{train_steps} train_time:{t:.0f}ms', console=True)\n")
    i4 = _check(_audit({"train_gpt.py": train}), "I4")
    assert i4.status.value == "unused" and any(x.line == 16 for x in i4.findings), (i4.detail, i4.findings)
    i4 = _check(_audit({"train_gpt.py": train.replace("    print0(f'step", "    if step % 100 == 0:\n        print0(f'step")}), "I4")
    assert i4.status.value == "used", i4.detail


# --- LongVA: its own packaged folder (``longva/`` with a pyproject) beside the text-extension stage --------------------------

_LV_PYPROJECT = '[project]\nname = "longva"\nversion = "1.7.0.dev0"\n'
_LV_TRAIN = (
    "import transformers\nfrom trl.trainer.utils import DPODataCollatorWithPadding\nfrom longva.train.dataset import LazySupervisedDataset\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
    "    (args,) = parser.parse_args_into_dataclasses()\n    model = transformers.AutoModelForCausalLM.from_pretrained(args.output_dir)\n"
    "    trainer = transformers.Trainer(model=model, args=args, train_dataset=LazySupervisedDataset('d.json', None))\n"
    "    trainer.train()\n\n\nif __name__ == '__main__':\n    train()\n"
)
_LV_DATASET = (
    "import json\nfrom PIL import Image\nfrom torch.utils.data import Dataset\n\n\nclass LazySupervisedDataset(Dataset):\n"
    "    def __init__(self, path, tokenizer):\n        self.rows = json.load(open(path))\n        self.tokenizer = tokenizer\n\n"
    "    def __len__(self):\n        return len(self.rows)\n\n    def __getitem__(self, i):\n"
    "        image = Image.open(self.rows[i]['image']).convert('RGB')\n"
    "        ids = self.tokenizer(self.rows[i]['text'], return_tensors='pt').input_ids\n        return dict(input_ids=ids, image=image)\n"
)
_LV_TEXT_EXTEND = (
    "import torch\nfrom accelerate import Accelerator\nfrom datasets import load_from_disk\nfrom torch.utils.data import DataLoader\n\n\n"
    "def main(args):\n    accelerator = Accelerator(gradient_accumulation_steps=4)\n    train_dataset = load_from_disk(args.dataset)\n"
    "    train_loader = DataLoader(train_dataset, batch_size=1, shuffle=True)\n    for step, batch in enumerate(train_loader):\n"
    "        loss = model(batch['input_ids']).loss\n        accelerator.backward(loss)\n        optim.step()\n\n\n"
    "if __name__ == '__main__':\n    main(None)\n"
)


def _longva() -> dict[str, str]:
    return {"longva/pyproject.toml": _LV_PYPROJECT, "longva/longva/__init__.py": "", "longva/longva/train/__init__.py": "",
            "longva/longva/train/train_mem.py": _LV_TRAIN, "longva/longva/train/dataset.py": _LV_DATASET,
            "longva/trl/__init__.py": '__version__ = "0.7.11.dev0"\n\nfrom .trainer import DPOTrainer\n',
            "longva/trl/trainer/__init__.py": "from .utils import DPODataCollatorWithPadding, TokenStreamDataset\n",
            "longva/trl/trainer/utils.py": _TRL_UTILS_LV,
            "longva/scripts/finetune.sh": "torchrun --nproc_per_node 8 longva/train/train_mem.py \\\n    --model_name_or_path Qwen/Qwen2-7B-Instruct \\\n    --bf16 True\n",
            "local_demo/multimodal_chat.py": "import gradio as gr\nfrom longva.model.builder import load_pretrained_model\n",
            "longva/longva/model/__init__.py": "", "longva/longva/model/builder.py": "def load_pretrained_model(path):\n    return path\n",
            "text_extend/text_extend_train.py": _LV_TEXT_EXTEND,
            "text_extend/extend_qwen2.sh": "accelerate launch text_extend/text_extend_train.py --dataset PY007/tokenized_4096\n"}


_TRL_UTILS_LV = ("import torch\nfrom torch.utils.data import IterableDataset\n\n\nclass DPODataCollatorWithPadding:\n"
                 "    def __call__(self, features):\n        return features\n\n\n"
                 "class TokenStreamDataset(IterableDataset):\n    def __iter__(self):\n        yield from self.buffer\n")


def test_a_packaged_folder_only_demos_import_is_the_projects_own_and_its_trl_copy_is_a_library():
    a = _audit(_longva())
    assert a.roles.by_path["longva/longva/train/train_mem.py"] == "training", a.roles.why.get("longva/longva/train/train_mem.py")
    assert a.roles.library_copies == ["longva/trl"], a.roles.library_copies
    assert _check(a, "F9").status.value == "unused", _check(a, "F9").detail  # the copy's streaming dataset class is not the run's
    # control: the project's own training script imports the packaged folder: a library it uses
    files = _longva()
    files["text_extend/text_extend_train.py"] = "from longva.model.builder import load_pretrained_model\n" + _LV_TEXT_EXTEND
    assert _audit(files).roles.by_path["longva/longva/train/train_mem.py"] == "vendored"


def test_a_pretokenized_table_a_training_script_feeds_its_loader_is_tokenized_ahead():
    a = _audit(_longva())
    f6, f4 = _check(a, "F6"), _check(a, "F4")
    assert f6.status.value == "partial", f6.detail
    assert f4.status.value == "partial" and "hold only the records" not in f4.detail, f4.detail


# --- simpleRL-reason (a verl fork): a keyword that reads ``config.model.path``, LoRA behind ``.get('lora_rank', 0) > 0`` ------

_SRL_WORKER = ("from transformers import AutoModelForCausalLM\n\n\nclass ActorRolloutRefWorker:\n"
               "    def _build_model_optimizer(self, model_path):\n        return AutoModelForCausalLM.from_pretrained(model_path)\n\n"
               "    def init_model(self):\n        self.actor = self._build_model_optimizer(model_path=self.config.model.path)\n")
_SRL_GEN_CFG = "data:\n  path: /tmp/math_Qwen2-7B-Instruct.parquet\n  batch_size: 128\nmodel:\n  path: ~/models/deepseek-llm-1.3b-chat\n"
_SRL_SFT = (
    "from peft import LoraConfig, get_peft_model\n\n\nclass FSDPSFTTrainer:\n    def _build_model(self, model):\n"
    "        if self.config.model.get('lora_rank', 0) > 0:\n"
    "            model = get_peft_model(model, LoraConfig(r=self.config.model.lora_rank))\n        return model\n\n"
    "    def fit(self):\n        for batch in self.loader:\n            self.model(batch).loss.backward()\n            self.optimizer.step()\n"
)
_SRL_SFT_CFG = "model:\n  partial_pretrain: ~/models/gemma-1.1-7b-it\n  lora_rank: 0\noptim:\n  lr: 1e-5\n"


def test_a_keyword_reading_a_section_of_the_config_reads_that_section_only():
    a = _audit({"verl/workers/fsdp_workers.py": _SRL_WORKER, "verl/trainer/config/generation.yaml": _SRL_GEN_CFG})
    read = [(s.key, s.value) for s in a.facts.settings("model_path")]
    assert read == [("model.path", "~/models/deepseek-llm-1.3b-chat")], read
    assert not any("parquet" in n for n in a.project.model_names), a.project.model_names
    # control: ``self.config`` holds one section of the YAML, whatever it is called there (EasyR1: ``worker.actor.padding_free``)
    worker = ("class DataParallelPPOActor:\n    def __init__(self, config):\n        self.config = config\n\n"
              "    def forward(self, batch):\n        return self.model(batch, padding_free=self.config.padding_free)\n")
    a = _audit({"verl/workers/actor/dp_actor.py": worker, "examples/config.yaml": "worker:\n  actor:\n    padding_free: true\n"})
    assert [s.key for s in a.facts.settings("padding_free")] == ["worker.actor.padding_free"]


def test_lora_behind_a_config_get_comparison_with_rank_zero_is_off():
    files = {"verl/trainer/fsdp_sft_trainer.py": _SRL_SFT, "verl/trainer/config/sft_trainer.yaml": _SRL_SFT_CFG}
    g4 = _check(_audit(files), "G4")
    assert g4.status.value == "unused" and "lora_rank" in g4.detail, g4.detail
    files["verl/trainer/config/sft_trainer.yaml"] = _SRL_SFT_CFG.replace("lora_rank: 0", "lora_rank: 32")
    assert _check(_audit(files), "G4").status.value == "used"


def test_a_loaded_table_wrapped_in_a_tokenizing_dataset_is_raw_records():
    # nanoVLM ``train.py``: ``load_from_disk`` of the raw image-text records, wrapped in ``data.datasets.VQADataset``
    train = ("from datasets import load_from_disk\nfrom torch.utils.data import DataLoader\nfrom data.datasets import VQADataset\n\n\n"
             "def main():\n    raw = load_from_disk('the_cauldron')\n    train_loader = DataLoader(VQADataset(raw, tok), batch_size=8)\n"
             "    for batch in train_loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n\n\n"
             "if __name__ == '__main__':\n    main()\n")
    ds = ("from torch.utils.data import Dataset\n\n\nclass VQADataset(Dataset):\n    def __init__(self, rows, tokenizer):\n"
          "        self.rows, self.tokenizer = rows, tokenizer\n\n    def __len__(self):\n        return len(self.rows)\n\n"
          "    def __getitem__(self, i):\n        return self.tokenizer(self.rows[i]['text'], return_tensors='pt')\n")
    f6 = _check(_audit({"train.py": train, "data/datasets.py": ds, "data/__init__.py": ""}), "F6")
    assert f6.status.value == "unused" and "raw records" in f6.detail, f6.detail


# --- align-anything: its own DeepSpeed trainers named like TRL's, and its own tracker class ------------------------------------

_AA_LOGGER = ("import wandb\nfrom torch.utils import tensorboard\n\n\nclass Logger:\n    def __init__(self, log_type, log_dir):\n"
              "        self.log_type = log_type\n        if log_type == 'tensorboard':\n            self.writer = tensorboard.SummaryWriter(log_dir)\n"
              "        else:\n            self.wandb = wandb.init(project='x')\n\n"
              "    def log(self, metrics, step):\n        if self.log_type == 'tensorboard':\n"
              "            for key, value in metrics.items():\n                self.writer.add_scalar(key, value, global_step=step)\n"
              "        else:\n            self.wandb.log(metrics, step=step)\n")
_AA_BASE = ("import deepspeed\nfrom utils.logger import Logger\n\n\nclass SupervisedTrainerBase:\n    def init_logger(self):\n"
            "        self.logger = Logger(log_type='wandb', log_dir='out')\n")
_AA_DPO = ("import transformers\nfrom trainers.base import SupervisedTrainerBase\n\n\nclass DPOTrainer(SupervisedTrainerBase):\n"
           "    def train(self):\n        for batch in self.train_dataloader:\n            info = self.train_step(batch)\n"
           "            self.global_step += 1\n            self.logger.log(info, step=self.global_step)\n\n"
           "    def train_step(self, batch):\n        loss = self.model(**batch).loss\n        self.model.backward(loss)\n"
           "        self.model.step()\n        return {'train/loss': loss.item()}\n\n\n"
           "def main():\n    trainer = DPOTrainer()\n    trainer.train()\n\n\nif __name__ == '__main__':\n    main()\n")


def test_a_projects_own_trainer_named_dpotrainer_is_no_hf_trainer_and_its_logger_class_reports_each_step():
    a = _audit({"utils/logger.py": _AA_LOGGER, "utils/__init__.py": "", "trainers/base.py": _AA_BASE, "trainers/__init__.py": "",
                "trainers/dpo.py": _AA_DPO})
    i4, i5 = _check(a, "I4"), _check(a, "I5")
    assert "HF Trainer" not in i4.detail and "HF Trainer" not in i5.detail, (i4.detail, i5.detail)
    assert i5.status.value == "unused" and any(e.path == "trainers/dpo.py" for e in i5.evidence), (i5.detail, i5.evidence)
    # control: a trainer class that subclasses TRL's is the HF one, with its default logging interval
    files = {"train.py": "import trl\nfrom trl import DPOTrainer as Base\n\n\nclass DPOTrainer(trl.DPOTrainer):\n    pass\n\n\n"
                         "trainer = DPOTrainer(model=model, args=args)\ntrainer.train()\n"}
    assert "HF Trainer" in _check(_audit(files), "I4").detail


def test_a_torchrun_of_a_completion_example_that_trains_nothing_is_inference():
    # Meta's llama3: the README runs ``torchrun --nproc_per_node 1 example_text_completion.py`` (model parallel generation)
    readme = ("# Llama 3\n\n```bash\ntorchrun --nproc_per_node 1 example_text_completion.py \\\n    --ckpt_dir Meta-Llama-3-8B/ \\\n"
              "    --tokenizer_path Meta-Llama-3-8B/tokenizer.model \\\n    --max_seq_len 128 --max_batch_size 4\n```\n")
    example = ("import fire\nfrom llama import Llama\n\n\ndef main(ckpt_dir, tokenizer_path, max_seq_len=128, max_batch_size=4):\n"
               "    generator = Llama.build(ckpt_dir=ckpt_dir, tokenizer_path=tokenizer_path, max_seq_len=max_seq_len,\n"
               "                            max_batch_size=max_batch_size)\n"
               "    results = generator.text_completion(['I believe'], max_gen_len=64)\n\n\n"
               "if __name__ == '__main__':\n    fire.Fire(main)\n")
    generation = ("import torch\n\n\nclass Llama:\n    @torch.inference_mode()\n    def generate(self, prompt_tokens, max_gen_len):\n"
                  "        for cur_pos in range(max_gen_len):\n            logits = self.model.forward(tokens, cur_pos)\n"
                  "            next_token = torch.argmax(logits[:, -1], dim=-1)\n        return tokens\n\n"
                  "    def text_completion(self, prompts, max_gen_len):\n        return self.generate(prompts, max_gen_len=max_gen_len)\n")
    p = _audit({"README.md": readme, "example_text_completion.py": example, "llama/generation.py": generation,
                "llama/__init__.py": "from .generation import Llama\n"}).project
    assert p.does_inference and not p.does_training, (p.does_inference, p.does_training)
    # control: the same launch of a script that steps an optimizer trains
    p = _audit({"README.md": readme, "example_text_completion.py": example + "\nloss.backward()\noptimizer.step()\n",
                "llama/generation.py": generation, "llama/__init__.py": "from .generation import Llama\n"}).project
    assert p.does_training
