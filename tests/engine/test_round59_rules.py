"""Round 59 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check

# --- unified-io-2.pytorch: a model port whose only ``from_config`` builds a data preprocessor; no training loop -------------

_UIO2_MODEL = (
    "import torch\nfrom torch import nn\nfrom huggingface_hub import PyTorchModelHubMixin\n\n\n"
    "class UnifiedIOModel(nn.Module, PyTorchModelHubMixin):\n    def __init__(self, config):\n        super().__init__()\n"
    "        self.proj = nn.Linear(config.emb_dim, config.emb_dim)\n\n    def forward(self, batch):\n"
    "        return self.proj(batch['inputs'])\n"
)
_UIO2_GET = (
    "from uio2.preprocessing import UnifiedIOPreprocessor\nfrom uio2.model import UnifiedIOModel\n\n\n"
    "def get_model(config, tokenizer_path):\n    preprocessor = UnifiedIOPreprocessor.from_config(config, tokenizer_path)\n"
    "    model = UnifiedIOModel(config)\n    return model, preprocessor\n"
)
_UIO2_PRE = (
    "class UnifiedIOPreprocessor:\n    @staticmethod\n    def from_config(cfg, tokenizer):\n        return UnifiedIOPreprocessor()\n\n"
    "    def __call__(self, text_inputs, target_modality):\n        return {'inputs': text_inputs}\n"
)


def test_a_preprocessor_built_from_its_config_is_no_model_pretrained() -> None:
    files = {"uio2/model.py": _UIO2_MODEL, "uio2/get_model.py": _UIO2_GET, "uio2/preprocessing.py": _UIO2_PRE}
    result = _audit(files)
    assert not result.project.pretrains and not result.training_code_found, result.project
    # control: a causal LM built from its config is a model trained from scratch
    files["uio2/get_model.py"] = _UIO2_GET.replace("    model = UnifiedIOModel(config)\n",
                                                   "    model = AutoModelForCausalLM.from_config(config)\n") \
        .replace("from uio2.model import UnifiedIOModel\n", "from transformers import AutoModelForCausalLM\n")
    assert _audit(files).project.pretrains


# --- Macaw-LLM: ``path=./`` and ``train_path=$path/run_clm_llms.py``; MM_LLMs builds CLIPModel, WhisperModel and Llama ---------

_MACAW_SH = (
    "export NCCL_DEBUG=INFO\n\npath=./\ntrain_path=$path/run_clm_llms.py\n\n"
    "torchrun --nnodes 1 --nproc_per_node 8 \\\n    ${{train_path}} \\\n    --deepspeed $path/configs/ds.json \\\n"
    "    --model_name_or_path ${{path}} \\\n    --per_device_train_batch_size 4 \\\n    --gradient_accumulation_steps {ga} \\\n"
    "    --fp16 True \\\n    --output_dir $path/trained_models/\n"
)
_MACAW_MODEL = (
    "from torch import nn\nfrom transformers import PreTrainedModel, CLIPModel, WhisperModel, LlamaForCausalLM\n\n\n"
    "class MM_LLMs(PreTrainedModel):\n    def __init__(self, config):\n        super().__init__(config)\n"
    "        self.image_encoder = CLIPModel(config.image_config)\n        self.audio_encoder = WhisperModel(config.audio_config)\n"
    "        self.llm = LlamaForCausalLM(config.llm_config)\n\n    def forward(self, **inputs):\n"
    "        return self.llm(**inputs)\n"
)
_MACAW_RUN = _LLAVA_TRAIN.replace("import transformers\n", "import transformers\nfrom modeling import MM_LLMs\n", 1).replace(
    "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n",
    "    model = MM_LLMs(config=None)\n", 1)
_DS = '{"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"}\n'


def _macaw(ga: str = "3") -> dict[str, str]:
    return {"train.sh": _MACAW_SH.format(ga=ga), "run_clm_llms.py": _MACAW_RUN, "modeling.py": _MACAW_MODEL,
            "configs/ds.json": _DS}


def test_a_folder_variable_ending_in_a_slash_still_names_the_script() -> None:
    result = _audit(_macaw())
    assert result.roles.by_path.get("train.sh") == "launch", (result.roles.by_path, result.roles.why)
    c5 = _check(result, "C5")
    assert c5.status.value == "used" and "3" in c5.detail, c5.detail
    assert _check(result, "A3").status.value == "used", _check(result, "A3").detail
    # control: the run's own accumulation of 1 is read from the same launch
    assert _check(_audit(_macaw(ga="1")), "C5").status.value == "unused"


def test_a_composite_model_building_a_clip_tower_and_an_llm_is_multimodal() -> None:
    project = _audit(_macaw()).project
    assert project.multimodal and project.model_type == "MLLM", project.model_type
    # control: the same class without the image tower is an audio-language model, not a vision one
    files = _macaw()
    files["modeling.py"] = _MACAW_MODEL.replace("        self.image_encoder = CLIPModel(config.image_config)\n", "")
    assert not _audit(files).project.multimodal


# --- UniTok: ``class LRScheduler`` with a linear warmup and ``math.cos`` annealing in ``step``; ``grad_accu: int = 1`` -----------

_SCHED = (
    "import math\n\n\nclass LRScheduler:\n    def __init__(self, optim, schedule):\n        self.optim = optim\n"
    "        self.schedule = schedule\n        self.wp_iter = schedule['warmup_iter']\n        self.max_iter = schedule['max_iter']\n\n"
    "    def step(self, cur_iter):\n        if cur_iter < self.wp_iter:\n            mult = cur_iter / self.wp_iter\n        else:\n"
    "            past = (cur_iter - self.wp_iter) / (self.max_iter - self.wp_iter)\n"
    "            mult = 0.1 + 0.9 * (0.5 + 0.5 * math.cos(math.pi * past))\n"
    "        for g in self.optim.param_groups:\n            g['lr'] = g['initial_lr'] * mult\n"
)
_UNITOK_MAIN = (
    "import argparse\n\nimport torch\nfrom utils.scheduler import LRScheduler\n\n\ndef main():\n"
    "    parser = argparse.ArgumentParser()\n    parser.add_argument('--grad_accu', type=int, default={ga})\n"
    "    args = parser.parse_args()\n    model = torch.nn.Linear(8, 8)\n    optimizer = torch.optim.AdamW(model.parameters())\n"
    "    sched = LRScheduler(optimizer, {{'warmup_iter': 100, 'max_iter': 1000}})\n"
    "    for it, batch in enumerate(range(1000)):\n        sched.step(it)\n        loss = model(batch).sum() / args.grad_accu\n"
    "        loss.backward()\n        if (it + 1) % args.grad_accu == 0:\n            optimizer.step()\n            optimizer.zero_grad()\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)


def _unitok(ga: int = 1) -> dict[str, str]:
    return {"utils/scheduler.py": _SCHED, "main.py": _UNITOK_MAIN.format(ga=ga),
            "launch.sh": "torchrun --nproc_per_node=8 main.py --lr 1e-4\n"}


def test_a_scheduler_class_of_the_projects_own_warms_up_and_anneals() -> None:
    g1 = _check(_audit(_unitok()), "G1")
    assert g1.status.value == "used" and "warmup" in g1.detail and "cosine" in g1.detail, g1.detail
    # control: the same class without its warmup length anneals only
    files = _unitok()
    files["utils/scheduler.py"] = _SCHED.replace("schedule['warmup_iter']", "0")
    g1 = _check(_audit(files), "G1")
    assert g1.status.value == "partial" and "without warmup" in g1.detail, g1.detail
    # control: a library's scheduler class that nothing in scope builds is its users' choice, not the run's schedule
    files = _unitok()
    files["main.py"] = files["main.py"].replace("    sched = LRScheduler(optimizer, {'warmup_iter': 100, 'max_iter': 1000})\n", "") \
        .replace("        sched.step(it)\n", "")
    assert _check(_audit(files), "G1").status.value == "unused"


def test_grad_accu_is_an_accumulation_setting() -> None:
    c5 = _check(_audit(_unitok(ga=4)), "C5")
    assert c5.status.value == "used" and "4" in c5.detail, c5.detail
    c5 = _check(_audit(_unitok(ga=1)), "C5")
    assert c5.status.value == "unused" and "grad_accu" in str([e.snippet for e in c5.evidence]), c5


# --- Mono-InternVL: ``GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))``; ``unfreeze_vit_layers: int = 0``;
#     ``PackedDataset(IterableDataset)`` built only ``if data_args.use_packed_ds:`` ------------------------------------------

_INTERNVL_SH = (
    "#!/bin/bash\n\nGPUS=8\nPER_DEVICE_BATCH_SIZE=4\nBATCH_SIZE={batch}\nGRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))\n\n"
    "torchrun --nproc_per_node=$GPUS --master_port=29501 \\\n  internvl/train/internvl_chat_finetune.py \\\n"
    "  --model_name_or_path OpenGVLab/Mono-InternVL-2B \\\n  --freeze_llm False \\\n  --bf16 True \\\n"
    "  --per_device_train_batch_size ${{PER_DEVICE_BATCH_SIZE}} \\\n  --gradient_accumulation_steps ${{GRADIENT_ACC}} \\\n"
    "  --output_dir runs/x\n"
)
_INTERNVL_TRAIN = (
    "from dataclasses import dataclass, field\n\nimport transformers\nfrom torch.utils.data import ConcatDataset\n"
    "from internvl.train.dataset_packed import PackedDataset\n\n\n@dataclass\nclass ModelArguments:\n"
    "    model_name_or_path: str = field(default=None)\n    freeze_llm: bool = field(default=False)\n"
    "    unfreeze_vit_layers: int = field(default={unfreeze})\n\n\n@dataclass\nclass DataArguments:\n"
    "    use_packed_ds: bool = field(default={packed})\n\n\n"
    "def main():\n    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, transformers.TrainingArguments))\n"
    "    model_args, data_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
    "    model.vision_model = transformers.CLIPVisionModel.from_pretrained(model_args.model_name_or_path)\n"
    "    if model_args.freeze_llm:\n        model.language_model.requires_grad_(False)\n"
    "    if data_args.use_packed_ds:\n        train_dataset = PackedDataset(datasets=[])\n    else:\n"
    "        train_dataset = ConcatDataset([])\n"
    "    transformers.Trainer(model=model, args=training_args, train_dataset=train_dataset).train()\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)
_PACKED = (
    "from torch.utils.data import IterableDataset\n\n\nclass PackedDataset(IterableDataset):\n"
    "    def __init__(self, datasets):\n        self.datasets = datasets\n\n    def __iter__(self):\n"
    "        for d in self.datasets:\n            yield from d\n"
)


def _internvl(batch: int = 128, unfreeze: int = 0, packed: str = "False") -> dict[str, str]:
    return {"shell/finetune_torchrun.sh": _INTERNVL_SH.format(batch=batch),
            "internvl/train/internvl_chat_finetune.py": _INTERNVL_TRAIN.format(unfreeze=unfreeze, packed=packed),
            "internvl/train/dataset_packed.py": _PACKED}


def test_shell_arithmetic_over_the_scripts_own_variables_is_computed() -> None:
    c5 = _check(_audit(_internvl()), "C5")
    assert c5.status.value == "used" and "4" in c5.detail, c5.detail
    # control: a global batch of one micro-batch per GPU accumulates nothing
    c5 = _check(_audit(_internvl(batch=32)), "C5")
    assert c5.status.value == "unused" and "default" not in c5.detail, c5.detail


def test_a_count_of_layers_to_unfreeze_of_zero_freezes_nothing() -> None:
    g5 = _check(_audit(_internvl()), "G5")
    assert g5.status.value == "unused", (g5.detail, [e.snippet for e in g5.evidence])
    # control: a launch that freezes the LLM freezes part of the model
    files = _internvl()
    files["shell/finetune_torchrun.sh"] = files["shell/finetune_torchrun.sh"].replace("--freeze_llm False", "--freeze_llm True")
    assert _check(_audit(files), "G5").status.value == "used"


def test_a_streaming_dataset_built_only_behind_an_off_switch_is_not_used() -> None:
    f9 = _check(_audit(_internvl()), "F9")
    assert f9.status.value == "unused" and "use_packed_ds" in f9.detail, f9.detail
    # control: switched on by default, the run streams
    assert _check(_audit(_internvl(packed="True")), "F9").status.value == "used"
    # control: a WebDataset pipeline over tar shards beside the optional class streams too
    files = _internvl()
    files["internvl/train/internvl_chat_finetune.py"] = files["internvl/train/internvl_chat_finetune.py"].replace(
        "        train_dataset = ConcatDataset([])\n",
        "        train_dataset = wds.DataPipeline(wds.SimpleShardList(data_args.shards), wds.tarfile_to_samples())\n", 1) \
        .replace("import transformers\n", "import transformers\nimport webdataset as wds\n", 1)
    assert _check(_audit(files), "F9").status.value == "used"


# --- OmniLMM / LLaSM: ``initialize_vision_tokenizer`` (adds tokens, resizes to len(tokenizer)) that nothing calls -------------

_OMNI_MODEL = (
    "from transformers import LlamaForCausalLM\n\n\nclass OmniLMMForCausalLM(LlamaForCausalLM):\n"
    "    def initialize_vision_tokenizer(self, tokenizer):\n        tokenizer.add_tokens(['<im_patch>'], special_tokens=True)\n"
    "        self.resize_token_embeddings(len(tokenizer))\n"
)


def test_a_resize_in_a_method_nothing_calls_is_not_the_runs_vocabulary() -> None:
    files = {"omnilmm/model/omnilmm.py": _OMNI_MODEL,
             "finetune/finetune.py": _LLAVA_TRAIN.replace("import transformers\n",
                                                          "import transformers\nfrom omnilmm.model.omnilmm import OmniLMMForCausalLM\n", 1),
             "finetune/finetune_ds.sh": "torchrun --nproc_per_node 8 finetune/finetune.py --bf16 true\n"}
    d7 = _check(_audit(files), "D7")
    assert "resize" not in d7.detail, d7.detail
    # control: the training script that calls it resizes the vocabulary unpadded
    files["finetune/finetune.py"] = files["finetune/finetune.py"].replace(
        "    transformers.Trainer(", "    model.initialize_vision_tokenizer(tokenizer)\n    transformers.Trainer(", 1)
    d7 = _check(_audit(files), "D7")
    assert d7.status.value == "unused" and "resize" in d7.detail, d7.detail


# --- TokenFlow: ``tokenflow/utils/deepspeed.py`` (``create_deepspeed_config``, imported by nothing) beside ``import deepspeed`` in
#     another sub-project's trainer --------------------------------------------------------------------------------------------

_DS_BUILDER = (
    "def create_deepspeed_config(args):\n    ds_config = {\n        'train_batch_size': args.global_batch_size,\n"
    "        'optimizer': {'type': 'Adam', 'params': {'lr': args.lr}},\n        'zero_optimization': {'stage': 2},\n    }\n"
    "    return ds_config\n"
)


def test_an_absolute_import_of_a_library_is_not_a_far_module_of_that_name() -> None:
    train = _LLAVA_TRAIN.replace("import transformers\n", "import deepspeed\nimport transformers\n", 1)
    files = {"i2t/llava/train/train.py": train, "tokenflow/utils/deepspeed.py": _DS_BUILDER,
             "i2t/scripts/train.sh": "deepspeed i2t/llava/train/train.py --bf16 True\n"}
    result = _audit(files)
    assert result.roles.by_path.get("tokenflow/utils/deepspeed.py") != "training", result.roles.by_path
    d6 = _check(result, "D6")
    assert d6.status.value == "unused", (d6.detail, [e.path for e in d6.evidence])
    # control: the script's own sibling module of that name is what it imports
    files["i2t/llava/train/deepspeed.py"] = _DS_BUILDER
    files.pop("tokenflow/utils/deepspeed.py")
    assert _audit(files).roles.by_path.get("i2t/llava/train/deepspeed.py") == "training"


# --- Macaw-LLM: ``param.requires_grad = False if model_args.freeze_multi_modal_encoder is True else False`` ------------------

_MACAW_FREEZE = (
    "\n\ndef freeze(model, model_args):\n    for name, param in model.named_parameters():\n        if ('encoder' in name):\n"
    "            param.requires_grad = {value}\n    return model\n"
)


def test_a_conditional_with_the_same_value_on_both_arms_is_that_value() -> None:
    files = _macaw()
    files["run_clm_llms.py"] += _MACAW_FREEZE.format(value="False if model_args.freeze_multi_modal_encoder is True else False")
    files["run_clm_llms.py"] = files["run_clm_llms.py"].replace("    model = MM_LLMs(config=None)\n",
                                                                "    model = freeze(MM_LLMs(config=None), None)\n", 1)
    g5 = _check(_audit(files), "G5")
    assert g5.status.value == "used" and any(e.line and "requires_grad" in e.snippet for e in g5.evidence), g5.detail
    # control: a real switch (True when the flag is set) decides nothing by itself
    files["run_clm_llms.py"] = files["run_clm_llms.py"].replace("False if model_args", "True if model_args", 1)
    assert _check(_audit(files), "G5").status.value != "used"


# --- UniTok: OpenCLIP 2.20.0 copied to ``open_clip/`` at the root of a repository that packages nothing -----------------------

_OPEN_CLIP_INIT = "from .factory import create_model\nfrom .tokenizer import tokenize\n"
_OPEN_CLIP_FACTORY = (
    "import torch\n\n\ndef create_model(name, context_length=77):\n    model = torch.nn.Linear(8, 8)\n    return model\n"
)
_UNITOK_TRAIN = (
    "import torch\nimport open_clip\n\n\ndef main():\n    model = open_clip.create_model('ViT-B-16')\n"
    "    optimizer = torch.optim.AdamW(model.parameters())\n    for batch in range(10):\n        loss = model(batch).sum()\n"
    "        loss.backward()\n        optimizer.step()\n\n\nif __name__ == '__main__':\n    main()\n"
)


def test_a_library_copied_to_the_root_of_an_unpackaged_repository_is_the_library() -> None:
    files = {"open_clip/__init__.py": _OPEN_CLIP_INIT, "open_clip/factory.py": _OPEN_CLIP_FACTORY,
             "open_clip/tokenizer.py": "def tokenize(texts, context_length=77):\n    return texts\n",
             "open_clip/version.py": "__version__ = '2.20.0'\n", "main.py": _UNITOK_TRAIN,
             "launch.sh": "torchrun --nproc_per_node=8 main.py --lr 1e-4\n"}
    roles = _audit(files).roles
    assert roles.library_copies == ["open_clip"] and roles.library_versions["open_clip"][2] == "2.20.0", roles
    # control: a wheel of the library (its METADATA names the distribution) is the library itself, beside a top-level
    # package of its own that imports it (torchtune's wheel ships ``recipes/``)
    wheel = dict(files)
    wheel["open_clip_torch-2.20.0.dist-info/METADATA"] = "Metadata-Version: 2.1\nName: open_clip_torch\nVersion: 2.20.0\n"
    assert _audit(wheel).roles.library_copies == []
    # control: the library's own repository (its packaging names it) is the project
    files["pyproject.toml"] = "[project]\nname = \"open_clip_torch\"\nversion = \"2.20.0\"\n"
    assert _audit(files).roles.library_copies == []


# --- LLaVA-UHD: README "sh train.sh"; train.sh runs stage 1 with accumulation 16 and stage 2 with 1 ---------------------------

_UHD_LAUNCH = ("torchrun --nproc_per_node 8 llava/train/train_mem.py --deepspeed scripts/zero2.json \\\n"
               "    --per_device_train_batch_size 4 \\\n    --gradient_accumulation_steps {ga} \\\n    --output_dir runs/x\n")


def test_a_documented_recipe_whose_stages_disagree_decides_nothing() -> None:
    files = {"README.md": "# LLaVA-UHD\n\n## Train\n\n```bash\nsh train.sh\n```\n",
             "train.sh": _UHD_LAUNCH.format(ga=16) + "\n" + _UHD_LAUNCH.format(ga=1),
             "scripts/train/a.sh": _UHD_LAUNCH.format(ga=1), "scripts/train/b.sh": _UHD_LAUNCH.format(ga=2),
             "scripts/train/c.sh": _UHD_LAUNCH.format(ga=2), "llava/train/train_mem.py": _LLAVA_TRAIN,
             "scripts/zero2.json": _DS}
    c5 = _check(_audit(files), "C5")
    assert "documented" not in c5.detail and c5.status.value == "used", c5.detail
    # control: a documented recipe with one value decides when the recipes have no majority
    files["train.sh"] = _UHD_LAUNCH.format(ga=16)
    c5 = _check(_audit(files), "C5")
    assert "documented at README.md" in c5.detail and "16" in c5.detail, c5.detail


# --- VTimeLLM: ``--tune_mm_mlp_adapter True`` over CLIP frame features read with ``np.load`` in the dataset's ``__getitem__`` ----

_VTIME_DATASET = (
    "import numpy as np\nimport torch\nfrom torch.utils.data import Dataset\n\n\nclass LazySupervisedDataset(Dataset):\n"
    "    def __init__(self, data_args):\n        self.data_args = data_args\n\n    def __getitem__(self, i):\n"
    "        feature_path = '{}/{}.npy'.format(self.data_args.feat_folder, i)\n        image = np.load(feature_path)\n"
    "        return {'images': torch.from_numpy(image)}\n"
)
_VTIME_SH = (
    "deepspeed vtimellm/train/train_mem.py \\\n    --deepspeed ./scripts/zero3.json \\\n"
    "    --model_name_or_path ./checkpoints/vicuna-7b-v1.5 \\\n    --feat_folder /path/to/stage1_feat \\\n"
    "    --tune_mm_mlp_adapter True \\\n    --bf16 True \\\n    --output_dir ./checkpoints/stage1\n"
)


def _vtimellm() -> dict[str, str]:
    train = _LLAVA_TRAIN.replace("import transformers\n", "import transformers\nfrom vtimellm.train.dataset import LazySupervisedDataset\n", 1)
    return {"vtimellm/train/train_mem.py": train, "vtimellm/train/dataset.py": _VTIME_DATASET, "scripts/stage1.sh": _VTIME_SH,
            "scripts/zero3.json": _DS}


def test_llavas_projector_switches_make_a_multimodal_run() -> None:
    assert _audit(_vtimellm()).project.multimodal
    # control: the same run without the projector switch names nothing multimodal
    files = _vtimellm()
    files["scripts/stage1.sh"] = _VTIME_SH.replace("    --tune_mm_mlp_adapter True \\\n", "")
    assert not _audit(files).project.multimodal


def test_precomputed_visual_features_leave_no_vision_encoder_to_freeze() -> None:
    result = _audit(_vtimellm())
    h1, h2 = _check(result, "H1"), _check(result, "H2")
    assert h1.status.value == "n/a" and "precomputed" in h1.detail and "dataset.py:" in h1.detail, h1.detail
    assert h2.status.value == "n/a" and "precomputed" in h2.detail, h2.detail
    # control: a training path that also builds the vision tower runs it, and H1 is judged
    files = _vtimellm()
    files["vtimellm/train/train_mem.py"] = files["vtimellm/train/train_mem.py"].replace(
        "    transformers.Trainer(", "    vision = transformers.CLIPVisionModel.from_pretrained('openai/clip-vit-large-patch14')\n"
        "    transformers.Trainer(", 1)
    assert _check(_audit(files), "H1").status.value != "n/a"


# --- Cobra (prismatic): ``get_vision_backbone_and_transform(...)`` beside ``get_llm_backbone_and_tokenizer(...)`` -------------

_COBRA_PRETRAIN = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\nfrom cobra.models import get_vision_backbone_and_transform, get_vlm\n\n\n"
    "def pretrain(cfg):\n    vision_backbone, image_transform = get_vision_backbone_and_transform(cfg.vision_backbone_id)\n"
    "    llm = AutoModelForCausalLM.from_pretrained('state-spaces/mamba-2.8b-zephyr')\n"
    "    vlm = get_vlm(cfg.model_id, vision_backbone, llm)\n    optimizer = torch.optim.AdamW(vlm.parameters())\n"
    "    for batch in range(10):\n        loss = vlm(batch).loss\n        loss.backward()\n        optimizer.step()\n\n\n"
    "if __name__ == '__main__':\n    pretrain(None)\n"
)
_COBRA_MODELS = (
    "import timm\n\n\ndef get_vision_backbone_and_transform(name):\n    return timm.create_model(name, pretrained=True), None\n\n\n"
    "def get_vlm(model_id, vision, llm):\n    return llm\n"
)


def test_a_vision_backbone_builder_in_the_training_script_makes_a_multimodal_run() -> None:
    files = {"scripts/pretrain.py": _COBRA_PRETRAIN, "cobra/models/__init__.py": _COBRA_MODELS,
             "scripts/pretrain.sh": "torchrun --nproc_per_node 8 scripts/pretrain.py\n"}
    project = _audit(files).project
    assert project.multimodal and project.model_type == "MLLM", project.model_type
    # control: the same run without the vision backbone is a language model's
    files["scripts/pretrain.py"] = _COBRA_PRETRAIN.replace(
        "    vision_backbone, image_transform = get_vision_backbone_and_transform(cfg.vision_backbone_id)\n", "") \
        .replace("get_vlm(cfg.model_id, vision_backbone, llm)", "get_vlm(cfg.model_id, None, llm)")
    assert not _audit(files).project.multimodal


# --- baby-llama2-chinese: ``model_args = dict(dim=dim, ..., vocab_size=64793, ...)`` then ``ModelArgs(**model_args)`` ----------

_BABY_PRETRAIN = (
    "import torch\nfrom model import Transformer, ModelArgs\n\nmax_seq_len = 512\ndim = 512\nn_layers = 8\nn_heads = 8\n\n"
    "model_args = dict(\n    dim=dim,\n    n_layers=n_layers,\n    n_heads=n_heads,\n    vocab_size={vocab},\n    max_seq_len=max_seq_len,\n)\n"
    "gptconf = ModelArgs(**model_args)\nmodel = Transformer(gptconf)\noptimizer = torch.optim.AdamW(model.parameters())\n"
    "for X, Y in range(10):\n    loss = model(X, Y)\n    loss.backward()\n    optimizer.step()\n"
)
_BABY_MODEL = (
    "from dataclasses import dataclass\n\nimport torch\n\n\n@dataclass\nclass ModelArgs:\n    dim: int = 4096\n"
    "    n_layers: int = 32\n    n_heads: int = 32\n    vocab_size: int = -1\n    max_seq_len: int = 2048\n\n\n"
    "class Transformer(torch.nn.Module):\n    def __init__(self, params):\n        super().__init__()\n"
    "        self.tok_embeddings = torch.nn.Embedding(params.vocab_size, params.dim)\n"
)


def test_a_models_arguments_gathered_in_a_dict_are_its_dimensions() -> None:
    files = {"pretrain.py": _BABY_PRETRAIN.format(vocab=64793), "model.py": _BABY_MODEL,
             "README.md": "```bash\ntorchrun --standalone --nproc_per_node=4 pretrain.py\n```\n"}
    d7 = _check(_audit(files), "D7")
    assert d7.status.value == "unused" and "64793" in d7.detail, d7.detail
    # control: a vocabulary on Tensor Core tiles is aligned
    files["pretrain.py"] = _BABY_PRETRAIN.format(vocab=64000)
    d7 = _check(_audit(files), "D7")
    assert "64000" not in d7.detail or d7.status.value != "unused", d7.detail


# --- ChatLM-mini-Chinese: ``peft_config = LoraConfig(...)`` in the main block, then ``train_dpo(dpo_config, peft_config=None)`` ----

_CHATLM_DPO = (
    "from peft import LoraConfig, TaskType\nfrom trl import DPOTrainer\n\n\ndef train_dpo(config, peft_config=None):\n"
    "    trainer = DPOTrainer(model=config.model, args=config.args, peft_config=peft_config)\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n\n    peft_config = LoraConfig(\n        task_type=TaskType.SEQ_2_SEQ_LM,\n        r=16,\n"
    "        lora_alpha=16,\n    )\n\n    dpo_config = object()\n\n    train_dpo(dpo_config, peft_config={arg})\n"
)


def test_a_peft_config_built_and_dropped_adapts_nothing() -> None:
    files = {"dpo_train.py": _CHATLM_DPO.format(arg="None"), "README.md": "```bash\npython dpo_train.py\n```\n"}
    g4 = _check(_audit(files), "G4")
    assert g4.status.value != "used", (g4.detail, [e.snippet for e in g4.evidence])
    # control: the config handed to the trainer adapts the model
    files["dpo_train.py"] = _CHATLM_DPO.format(arg="peft_config")
    assert _check(_audit(files), "G4").status.value == "used"


# --- TimeChat (LAVIS): ``for i in metric_logger.log_every(range(iters_per_epoch), log_freq, header):`` ... ``wandb.log(...)`` ----

_LAVIS_TASK = (
    "import wandb\n\n\nclass BaseTask:\n    def _train_inner_loop(self, epoch, iters_per_epoch, model, data_loader, optimizer, metric_logger,\n"
    "                          log_freq=50, header=''):\n        for i in metric_logger.log_every(range({loop}), log_freq, header):\n"
    "            samples = next(data_loader)\n            loss = model(samples)['loss']\n            loss.backward()\n"
    "            optimizer.step()\n            optimizer.zero_grad()\n"
    "            wandb.log({{'train/loss': loss.item()}}, step=epoch * iters_per_epoch + i)\n"
)


def test_a_count_of_iterations_per_epoch_walks_steps_not_epochs() -> None:
    files = {"timechat/tasks/base_task.py": _LAVIS_TASK.format(loop="iters_per_epoch"),
             "train.py": "from timechat.tasks.base_task import BaseTask\n\n\ndef main():\n    BaseTask()._train_inner_loop(0, 10, None, None, None, None)\n\n\n"
                         "if __name__ == '__main__':\n    main()\n",
             "train.sh": "torchrun --nproc_per_node=8 train.py --cfg-path train_configs/stage2.yaml\n"}
    i5 = _check(_audit(files), "I5")
    assert i5.status.value == "unused" and "every step" in i5.detail, i5.detail
    # control: a loop over the epochs logs once per epoch
    files["timechat/tasks/base_task.py"] = _LAVIS_TASK.format(loop="num_epochs")
    assert _check(_audit(files), "I5").status.value != "unused"


# --- ALLaVA: ``FreedomIntelligence/ALLaVA-Phi2-2_7B`` and ``ALLaVA-StableLM2-1_6B`` (round 61) ---------------------------------


def test_a_decimal_size_spelt_with_an_underscore_is_one_number() -> None:
    from checks.project import size_in_name

    assert size_in_name("FreedomIntelligence/ALLaVA-Phi2-2_7B") == 2.7
    assert size_in_name("Qwen/Qwen2-0_5B") == 0.5
    # control: an underscore between words, or a version before the size, is no decimal point
    assert size_in_name("huggyllama/llama_7b") == 7.0
    assert size_in_name("OpenGVLab/InternVL2_5-8B") == 8.0
    assert size_in_name("THUDM/chatglm2_6b") == 6.0  # ChatGLM2, 6B: the version is glued to the name
    assert size_in_name("internlm/internlm2_1_8b") == 1.8  # InternLM2, 1.8B


# --- Linly: a converter named for TencentPretrain and instruction-data formatters; training lives in another framework ---------

_LINLY_CONVERT = (
    "import argparse\n\nimport torch\nimport transformers\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--input_model_path')\n    args = parser.parse_args()\n"
    "    model = transformers.LlamaForCausalLM.from_pretrained(args.input_model_path, torch_dtype=torch.float16)\n"
    "    model.save_pretrained('out')\n\n\nif __name__ == '__main__':\n    main()\n"
)
_LINLY_PREP = ("import json\nimport sys\n\nfor line in open(sys.argv[1]):\n    a, b = line.split('\\t')\n"
               "    print(json.dumps({'instruction': a, 'output': b}, ensure_ascii=False))\n")


def test_a_converter_named_for_a_pretraining_framework_and_data_formatters_train_nothing() -> None:
    files = {"scripts/convert_llama_from_tencentpretrain_to_hf.py": _LINLY_CONVERT,
             "instructions/preprocess/csl.py": _LINLY_PREP, "README.md": "# Linly\n\nTrained with TencentPretrain.\n"}
    assert not _audit(files).training_code_found
    # control: a script named for fine-tuning in the project's own folder trains
    files["instructions/finetune.py"] = _LLAVA_TRAIN
    assert _audit(files).training_code_found


# --- LanguageBind: ``cd /path/to/LanguageBind; torchrun -m main`` (the root's main.py, also imported by a Gradio demo's model
#     module) beside ``training/main.py`` + ``training/train.py``, a copy of OpenCLIP's trainer nothing runs --------------------

_LB_MAIN = (
    "import sys\n\nimport torch\nfrom train import train_one_epoch\n\n\ndef main(args):\n    model = torch.nn.Linear(8, 8)\n"
    "    optimizer = torch.optim.AdamW(model.parameters())\n    train_one_epoch(model, optimizer)\n\n\n"
    "if __name__ == '__main__':\n    main(sys.argv[1:])\n"
)
_LB_TRAIN = ("def train_one_epoch(model, optimizer, data=range(10)):\n    for batch in data:\n        loss = model(batch).sum()\n"
             "        loss.backward()\n        optimizer.step()\n")
_LB_DEMO = "import gradio as gr\n\nfrom main import main\n\n\ndef app():\n    return gr.Interface(fn=main, inputs='text', outputs='text')\n"


def _languagebind() -> dict[str, str]:
    return {"main.py": _LB_MAIN, "train.py": _LB_TRAIN, "model/languagebind.py": _LB_DEMO,
            "training/main.py": _LB_MAIN.replace("from train import", "from training.train import"),
            "training/train.py": _LB_TRAIN.replace("range(10)", "range(20)"),
            "scripts/audio_language/train.sh": "cd /path/to/LanguageBind\ntorchrun --nnodes=2 --nproc_per_node 8 \\\n    -m main \\\n"
                                               "    --lr 1e-3 --accum-freq 4\n"}


def test_python_m_runs_the_module_importable_from_where_the_launch_starts() -> None:
    roles = _audit(_languagebind()).roles
    assert "main.py" in roles.entry_points and roles.by_path.get("main.py") == "training", (roles.entry_points, roles.why)
    assert "training/main.py" not in roles.entry_points and "training/train.py" not in roles.entry_points, roles.entry_points
    # control: a launch that starts inside training/ runs that copy
    files = _languagebind()
    files["training/run.sh"] = "torchrun --nproc_per_node 8 -m main --lr 1e-3\n"
    files.pop("scripts/audio_language/train.sh")
    assert "training/main.py" in _audit(files).roles.entry_points


# --- transfusion-pytorch: ``from transfusion_pytorch import Transfusion`` (through the package ``__init__``) in train_toy.py,
#     beside MNIST trainers that import ``transfusion_pytorch.transfusion`` directly ---------------------------------------------

_TF_MODEL = "import torch\n\n\nclass Transfusion(torch.nn.Module):\n    def forward(self, x):\n        return x.sum()\n"
_TF_TOY = ("import torch\nfrom transfusion_pytorch import Transfusion\n\nmodel = Transfusion()\n"
           "optimizer = torch.optim.Adam(model.parameters())\nfor step in range(100):\n    loss = model(torch.randn(4, 8))\n"
           "    loss.backward()\n    optimizer.step()\n")
_TF_MNIST = ("import torch\nfrom torchvision.datasets import MNIST\nfrom transfusion_pytorch.transfusion import Transfusion\n\n"
             "model = Transfusion()\ndata = MNIST('./data', download=True)\noptimizer = torch.optim.Adam(model.parameters())\n"
             "for x, y in data:\n    loss = model(x)\n    loss.backward()\n    optimizer.step()\n")


def test_a_module_a_package_init_hands_to_a_training_script_is_on_the_training_path() -> None:
    files = {"transfusion_pytorch/__init__.py": "from transfusion_pytorch.transfusion import Transfusion\n",
             "transfusion_pytorch/transfusion.py": _TF_MODEL, "train_toy.py": _TF_TOY, "train_mnist.py": _TF_MNIST}
    roles = _audit(files).roles
    assert roles.by_path.get("transfusion_pytorch/transfusion.py") == "training", roles.why
    # control: with no training script using the package, the MNIST trainer's model is its side project's
    files.pop("train_toy.py")
    assert _audit(files).roles.by_path.get("transfusion_pytorch/transfusion.py") != "training"


# --- ST-LLM (LAVIS): ``lora_r = cfg.get("lora_r", 0)`` then ``if lora_r > 0:`` builds LoRA; no recipe sets lora_r ------------------

_STLLM_MODEL = (
    "from peft import LoraConfig, get_peft_model\nfrom transformers import LlamaForCausalLM\n\n\nclass StllmLlamaForCausalLM(LlamaForCausalLM):\n"
    "    @classmethod\n    def from_config(cls, cfg):\n        model = cls.from_pretrained(cfg.get('llama_model'))\n"
    "        lora_r = cfg.get('lora_r', 0)\n        if lora_r > 0:\n            loraconfig = LoraConfig(r=lora_r, target_modules=['q_proj', 'v_proj'])\n"
    "            model = get_peft_model(model, loraconfig)\n        return model\n"
)
_STLLM_TRAIN = _LLAVA_TRAIN.replace("import transformers\n", "import transformers\nfrom stllm.models.st_llm import StllmLlamaForCausalLM\n", 1) \
    .replace("transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)", "StllmLlamaForCausalLM.from_config({})")


def test_a_local_read_from_the_config_with_a_default_decides_its_branch() -> None:
    files = {"stllm/models/st_llm.py": _STLLM_MODEL, "stllm/train/train_hf.py": _STLLM_TRAIN,
             "config/instructblipbase_stllm_qa.yaml": "model:\n  llama_model: lmsys/vicuna-7b-v1.1\n  freeze_LLM: False\n",
             "script/train/train.sh": "deepspeed stllm/train/train_hf.py --cfg-path config/instructblipbase_stllm_qa.yaml\n"}
    g4 = _check(_audit(files), "G4")
    assert g4.status.value != "used" and "lora_r" in g4.detail, g4.detail
    # control: a recipe that sets the key turns LoRA on
    files["config/instructblipbase_stllm_qa.yaml"] += "  lora_r: 8\n"
    assert _check(_audit(files), "G4").status.value == "used"


# --- LanguageBind's C5 detail: ``--accum-freq`` 4 or 2 in half of its launches, 1 in the others, default 1 -----------------------

_ACC_MAIN = (
    "import argparse\n\nimport torch\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--accum-freq', type=int, default=1)\n    args = parser.parse_args()\n"
    "    model = torch.nn.Linear(8, 8)\n    optimizer = torch.optim.AdamW(model.parameters())\n"
    "    for i, batch in enumerate(range(100)):\n        loss = model(batch).sum() / args.accum_freq\n        loss.backward()\n"
    "        if (i + 1) % args.accum_freq == 0:\n            optimizer.step()\n            optimizer.zero_grad()\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)


def test_a_split_of_recipes_says_that_the_default_decides() -> None:
    files = {"main.py": _ACC_MAIN}
    for i, n in enumerate((4, 2, 4, 1, 1, 1)):
        files[f"scripts/run{i}.sh"] = f"torchrun --nproc_per_node 8 main.py --accum-freq {n} --lr 1e-4\n"
    c5 = _check(_audit(files), "C5")
    assert "3 of 6" in c5.detail and "default of 1 decides" in c5.detail, c5.detail
    # control: one launch in six accumulating is a minority
    files["scripts/run1.sh"] = files["scripts/run1.sh"].replace("--accum-freq 2", "--accum-freq 1")
    files["scripts/run2.sh"] = files["scripts/run2.sh"].replace("--accum-freq 4", "--accum-freq 1")
    c5 = _check(_audit(files), "C5")
    assert "default of 1 decides" not in c5.detail, c5.detail
