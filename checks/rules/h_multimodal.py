"""H. Multimodal (多模态专项): H1-H3, n/a for a text-only project.

Judgement notes:

* H1: the vision encoder is frozen when code calls ``requires_grad_(False)`` (or sets
  ``p.requires_grad = False`` in a loop) on a vision sub-module, or a config turns a
  ``freeze_vision_*`` key on / a ``tune_mm_vision``-style key off (polarity matters), or
  LLaVA-NeXT ``mm_tunable_parts`` leaves ``mm_vision_tower`` out. InternVL's
  ``freeze_backbone`` is its ViT (LLaVA's ``freeze_backbone`` is the LLM: not counted here).
  LLaMA-Factory freezes the vision tower by default (``freeze_vision_tower: true``).
  A recipe that freezes in one stage and unfreezes later still uses the practice.
* H2: dynamic resolution means the number of visual tokens follows the image: LLaVA-NeXT
  ``anyres*``, InternVL ``dynamic_image_size``, Qwen2-VL/2.5-VL/3-VL native resolution
  (``min_pixels``/``max_pixels``), MiniCPM-V slicing, Idefics image splitting. ``pad``/``square``
  is fixed resolution.
* H3 is strict: only methods that prune or merge visual tokens (FastV, ToMe, VisionZip,
  SparseVLM, PDrop, PruMerge, ``visual_token_select``...) are ``used``. A fixed pooling the
  recipe configures to cut visual tokens (LLaVA-NeXT ``mm_spatial_pool_stride`` >= 2,
  MobileVLM ``ldpnet``, ``mm_projector_type`` with pooling) is ``partial``. Pooling that is part
  of the architecture (InternVL pixel shuffle ``downsample_ratio``, Qwen2-VL's 2x2 merger, a
  Q-Former/resampler) is not counted.
"""

from __future__ import annotations

import re
from typing import Any

from ..base import Check, Context, register
from ..facts import Call, Expr, Facts, Setting, as_number, truthy
from ..lazyre import lazy_compile
from ..model import Bottleneck, Example, FixSafety, Outcome, Priority, Status
from ..project import launch_runs_no_training, own_model_classes
from ._helpers import _TEST_FILE, callers_off, class_at, evs, guard_flags, guard_off, module_of

U, P, N = Status.USED, Status.PARTIAL, Status.UNUSED

_VISION = lazy_compile(
    r"(?i)(vision|visual|(^|[._])vit($|[._])|image_encoder|img_encoder|image_tower|(^|[._])clip|siglip|vision_tower|"
    r"vis_encoder|visual_encoder|vision_backbone|visual_backbone|encoder_image|image_model|vision_model|eva_vit|intern_vit)"
)


#: a function that builds or loads the vision tower (``get_vision_model``, ``build_vision_tower``, ``load_image_encoder``)
_VISION_BUILDER = lazy_compile(r"(?i)^_?(get|load|build|create|init|make)_\w*(vision|visual|vit|image_encoder|clip|siglip)\w*$")


_MLLM_NAME = lazy_compile(r"(?i)(vl\b|[-_]vl|llava|internvl|minicpm[-_]?v|mllama|paligemma|pixtral|idefics|glm4v|qwen2_vl|video|"
                        r"vision|intern_vl|kimi_vl|gemma3|llama4)")


#: a class of an image model the project defines itself (``VitClassificationModel``, ``SwinTransformer``, ``DINOPretrainModel``)
_OWN_VISION_CLASS = lazy_compile(r"^((Vit|ViT|Swin|Mit|MixVision|DINO|ConvNeXt|ResNet)\w*(Model|Backbone|Transformer)|"
                               r"(Vit|ViT|VisionTransformer|SwinTransformer|ConvNeXt|ResNet))$")


def _own_vision_models(f: Facts) -> list[Any]:
    """Image-model classes (``nn.Module`` subclasses) defined by the project, outside tests."""
    return own_model_classes(f, _OWN_VISION_CLASS, bases=("Module",))


class _MultimodalOnly(Check):
    def not_applicable(self, ctx: Context) -> str | None:
        if not ctx.project.multimodal:
            if ctx.facts.calls("timm.create_model", "torchvision.models.*"):
                # image models trained on their own (a ResNet classifier, a Faster-RCNN detector): not text-only, yet no
                # vision encoder feeds a language model
                return "no multimodal LLM: the vision models here (torchvision/timm) are not a vision encoder feeding a language model"
            own = _own_vision_models(ctx.facts)
            if own:
                # the project's own image models (Megatron-DeepSpeed ``megatron/model/vision/``: ViT classification, DINO
                # pre-training): not text-only either
                k = own[0]
                return (f"no multimodal LLM training recognised: the image model defined here ({k.name} at {k.path}:{k.line}) "
                        "was not seen feeding a language model")
            audio = _audio_encoders(ctx.facts)
            if audio:
                # an audio-language model (SALMONN: Whisper and BEATs encoders feeding Vicuna): multimodal, but the H checks
                # are the checklist's vision items (a frozen vision tower, dynamic image resolution, visual-token pruning)
                a = audio[0]
                return (f"audio-language model ({a.name.rsplit('.', 2)[-2] if a.short == 'from_pretrained' else a.short} at "
                        f"{a.path}:{a.line}): the H checks cover a vision encoder, dynamic image resolution and visual-token "
                        "pruning, none of which it has; its audio encoder is not judged here")
            return "text-only project (no vision encoder)"
        return None


#: an audio or speech encoder (its class loaded from a checkpoint or built): Whisper, BEATs, HuBERT, wav2vec 2.0, WavLM, CLAP
_AUDIO_ENCODER = lazy_compile(r"(^|\.)(Whisper(Model|Encoder|ForConditionalGeneration)|BEATs|Hubert\w*Model|Wav2Vec2\w*Model|"
                            r"WavLM\w*Model|Clap(Audio)?Model|Qwen2Audio\w*)(\.from_pretrained)?$")


def _audio_encoders(f: Facts) -> list[Any]:
    """Audio encoders the training path loads or builds (``WhisperModel.from_pretrained(whisper_path).encoder``, ``BEATs(cfg)``,
    ``whisper.load_model("large-v3")``), outside tests; a feature extractor alone is not one."""
    calls = f.calls("from_pretrained", "BEATs", "WhisperModel", "WhisperEncoder", "HubertModel", "Wav2Vec2Model", "WavLMModel",
                    "load_model")
    return [c for c in calls if not _TEST_FILE.search(c.path) and (_AUDIO_ENCODER.search(c.name) or c.name == "whisper.load_model")]


def _lf_yamls(f: Facts) -> list[str]:
    out = []
    for path in f.files_of_kind("yaml", "json"):
        ff = f.files[path]
        keys = {str(e.keys[0]) for e in ff.configs if e.keys}
        if "stage" in keys and keys & {"template", "finetuning_type", "dataset"}:
            out.append(path)
    return sorted(out)


def _file_has(f: Facts, path: str, *keys: str) -> bool:
    ff = f.files.get(path)
    if ff is None:
        return False
    want = set(keys)
    if any(str(e.key) in want for e in ff.configs):
        return True
    return any(want & set(x.script_args) for x in ff.launches)


# --------------------------------------------------------------------------------------
# H1 vision encoder freezing
# --------------------------------------------------------------------------------------

_FREEZE_VISION_KEYS = ("freeze_vision_tower", "freeze_vision_encoder", "freeze_vision", "freeze_vit", "freeze_visual_encoder",
                       "freeze_vision_model", "freeze_image_encoder", "freeze_visual", "freeze_vision_backbone", "freeze_clip",
                       "freeze_encoder_vision", "freeze_img_encoder", "freeze_vision_tower_layers",
                       "freeze_vision_modules",  # VLM-R1's GRPO trainer (``--freeze_vision_modules true``)
                       "fix_vit",  # Qwen-VL's finetune.py and its descendants (SeeClick ``--fix_vit False``), InternLM-XComposer
                       "lock_image")  # OpenCLIP's ``--lock-image`` (LiT: the image tower locked, the text tower trained)
_TUNE_VISION_KEYS = ("tune_mm_vision", "tune_vision", "tune_vit", "train_vision", "train_vision_tower", "train_vit",
                     "unfreeze_mm_vision_tower", "unfreeze_vision_tower", "unfreeze_vit", "trainable_vision_tower",
                     "finetune_vision", "finetune_vit", "tune_vision_encoder", "train_vision_encoder", "tune_visual_encoder",
                     "vision_tower_trainable", "tune_vision_tower", "tune_mm_vision_tower")


#: settings that list the modules to freeze by name prefix (ROLL ``freeze_module_prefix: "vision_model.blocks,..."``)
#: (lmm-r1's OpenRLHF ``--freeze_prefix visual``)
_FREEZE_PREFIX_KEYS = ("freeze_module_prefix", "freeze_modules", "frozen_modules", "freeze_module_names", "freeze_prefix")
_FROZEN_VISION_PREFIX = lazy_compile(r"(?i)(^|[,\s.\[\]'\"])(vision\w*|visual\w*|vit\w*|image_encoder|img_encoder)\b")


def _receiver(c: Any) -> str:
    """What ``requires_grad_`` is called on: ``model.perceiver`` for ``model.perceiver.requires_grad_(True)``."""
    return c.name.rsplit(".requires_grad_", 1)[0] if not c.name.startswith("?") else c.text.split(".requires_grad_", 1)[0]


def _gated_vision_freeze(f: Facts) -> tuple[Any, list[Any]] | None:
    """A vision-encoder freeze in a branch the settings switch off (nanoVLM: ``else: p.requires_grad = False`` of ``if
    train_cfg.lr_vision_backbone > 0:``, the learning rate 5e-5 by default): (the freeze, the settings that close it)."""
    for a in f.attr_assigns("requires_grad"):
        if truthy(a.value) is False and _VISION.search((a.loop or "") + " " + a.target) and (gates := guard_off(f, a)):
            return a, gates
    return None


def _frozen_whole(f: Facts, calls: list[Any]) -> list[Any]:
    """A whole model frozen and then only parts of it that are no vision module unfrozen, in a function that builds the
    vision encoder (OpenFlamingo ``model.requires_grad_(False)``, then ``model.perceiver.requires_grad_(True)`` and
    ``model.lang_encoder.gated_cross_attn_layers.requires_grad_(True)``, beside ``vision_encoder, _, image_processor =
    open_clip.create_model_and_transforms(...)``): the vision encoder stays frozen. Those whole-model freezes."""
    out = []
    for c in calls:
        recv = _receiver(c)
        if truthy(c.args[0] if c.args else c.kwargs.get("requires_grad", True)) is not False or _VISION.search(recv):
            continue
        parts = [_receiver(x) for x in calls if x.path == c.path and x.func == c.func and x.line > c.line
                 and truthy(x.args[0] if x.args else x.kwargs.get("requires_grad", True)) is True]
        # (or a loop that switches a part back on: LLaVA's ``for p in model.get_model().mm_projector.parameters():
        # p.requires_grad = True`` after ``model.requires_grad_(False)``)
        parts += [module_of(a.loop) for a in f.attr_assigns("requires_grad") if a.path == c.path
                  and a.func == c.func and a.line > c.line and a.loop and truthy(a.value) is True]
        parts = [r for r in parts if r.startswith(recv + ".")]
        builds_vision = any(x.func == c.func and _VISION.search(x.text) for x in f.calls_in([c.path])) if parts else False
        if parts and builds_vision and not any(_VISION.search(r[len(recv):]) for r in parts):
            out.append(c)
        elif not parts and _built_from_vision(f, c, recv):
            out.append(c)
    return out


def _staged_whole_freeze(f: Facts, frozen: list[Any]) -> tuple[Any, str, set[str], set[str]] | None:
    """Every vision freeze found is a whole-model freeze under one flag that only some training launches turn on (CuMo:
    ``if model_args.tune_mm_mlp_adapter: model.requires_grad_(False)``, passed by its two projector pre-training scripts of
    six; its pre-finetuning and instruction-tuning stages train the CLIP experts): (the freeze, the flag, the launch files
    that pass it on, the training launch files). None otherwise (LLaVA also freezes its tower where it loads it)."""
    calls = [x for x in frozen if isinstance(x, Call)]
    if not calls or len(calls) != len(frozen):
        return None
    flags = {tuple(guard_flags(x.guard)) for x in calls}
    if len(flags) != 1 or len(next(iter(flags))) != 1 or next(iter(flags))[0][1]:
        return None  # (one flag, tested as it is, not negated)
    flag = next(iter(flags))[0][0]
    runs = {x.path for x in f.launches() if x.script and not launch_runs_no_training(f, x.path)}
    on = {s.path for s in f.settings(flag) if s.source == "launcher" and truthy(s.value) is True and s.path in runs}
    if not on or len(on) >= len(runs):
        return None
    return calls[0], flag, on, runs


def _built_from_vision(f: Facts, c: Any, recv: str) -> bool:
    """Whether the model ``c`` freezes whole was built, earlier in the same function, from a vision encoder it is handed
    (Multimodal-GPT ``model = Flamingo(vision_encoder, lang_encoder, ...)``, then ``model.requires_grad_(False)`` and LoRA on
    ``model.lang_encoder`` only): the encoder is frozen with the rest, whatever trains afterwards outside it."""
    head = re.compile(rf"\s*{re.escape(recv)}\s*=[^=]")
    for x in f.calls_in([c.path]):
        if x.func != c.func or x.line >= c.line or not head.match(x.text):
            continue
        if any(isinstance(v, Expr) and _VISION.search(v.text) for v in (*x.args, *x.kwargs.values())):
            return True
    return False


def _vision_code(f: Facts) -> tuple[list[Any], list[Any]]:
    frozen: list[Any] = []
    unfrozen: list[Any] = []
    grads = f.calls("requires_grad_")
    frozen += _frozen_whole(f, grads)
    for c in grads:
        recv = _receiver(c)
        if not _VISION.search(recv):
            continue
        flag = c.args[0] if c.args else c.kwargs.get("requires_grad", True)
        t = truthy(flag)
        if t is False:
            frozen.append(c)
        elif t is True:
            unfrozen.append(c)
    for a in f.attr_assigns("requires_grad"):
        scope = (a.loop or "") + " " + a.target
        # ... or inside a function that builds the vision model (minimind-v ``get_vision_model``: ``model =
        # SiglipVisionModel.from_pretrained(path)``, then ``for param in model.parameters(): param.requires_grad = False``)
        if _VISION_BUILDER.match(a.func or ""):
            scope += " " + (a.func or "")
        if not _VISION.search(scope) or guard_off(f, a):
            continue  # a freeze in a branch the settings switch off (nanoVLM: ``else`` of ``if lr_vision_backbone > 0:``)
        t = truthy(a.value)
        if t is False:
            frozen.append(a)
        elif t is True:
            unfrozen.append(a)
    for c in f.calls("freeze_vision_tower", "freeze_vision", "freeze_vit", "freeze_vision_encoder", "freeze_visual_encoder",
                     "freeze_image_encoder"):
        frozen.append(c)
    return frozen, unfrozen


#: OpenFlamingo's shape: an OpenCLIP image tower inside a model that is frozen whole, then partly unfrozen
_FLAMINGO_FACTORY = (
    "import open_clip\nfrom transformers import AutoModelForCausalLM\nfrom .flamingo import Flamingo\n\n"
    "def create_model_and_transforms(clip_vision_encoder_path, clip_vision_encoder_pretrained, lang_encoder_path):\n"
    "    vision_encoder, _, image_processor = open_clip.create_model_and_transforms(\n"
    "        clip_vision_encoder_path, pretrained=clip_vision_encoder_pretrained\n    )\n"
    "    lang_encoder = AutoModelForCausalLM.from_pretrained(lang_encoder_path)\n"
    "    model = Flamingo(vision_encoder, lang_encoder)\n"
    "    model.requires_grad_(False)\n"
    "    {unfreeze}"
    "    return model, image_processor\n"
)

#: Multimodal-GPT's shape: the model built from an OpenCLIP image tower and a LLaMA is frozen whole, and LoRA then wraps only
#: its language model; ``{frozen}`` is the object frozen whole
_MMGPT_BUILDER = (
    "import open_clip\nfrom peft import LoraConfig, get_peft_model\nfrom transformers import LlamaForCausalLM\n"
    "from .flamingo import Flamingo\n\n\n"
    "def create_model_and_transforms(clip_vision_encoder_path, lang_encoder_path, tuning_config):\n"
    "    vision_encoder, _, image_processor = open_clip.create_model_and_transforms(clip_vision_encoder_path)\n"
    "    lang_encoder = LlamaForCausalLM.from_pretrained(lang_encoder_path)\n"
    "    model = Flamingo(\n        vision_encoder,\n        lang_encoder,\n        vis_dim=1024,\n    )\n"
    "    # Freeze all parameters\n    {frozen}.requires_grad_(False)\n"
    "    lora_config = LoraConfig(r=16, lora_alpha=16, target_modules=tuning_config.lora_target_modules)\n"
    "    model.lang_encoder = get_peft_model(model.lang_encoder, peft_config=lora_config)\n"
    "    return model, image_processor\n"
)

#: OpenCLIP's trainer shape: LiT's ``--lock-image`` (store_true) gates the image-tower lock
_CLIP_TRAINER = (
    "import argparse\nfrom open_clip import create_model_and_transforms\n\n\ndef main(argv):\n"
    "    parser = argparse.ArgumentParser()\n    parser.add_argument('--model', default='RN50')\n"
    "    parser.add_argument('--lock-image', default=False, action='store_true')\n    args = parser.parse_args(argv)\n"
    "    model, preprocess_train, preprocess_val = create_model_and_transforms(args.model, '')\n"
    "    if args.lock_image:\n        model.lock_image_tower(unlocked_groups=0)\n    return model\n"
)


def _nanovlm(lr_vision: float) -> dict[str, str]:
    """nanoVLM's shape: each part of the VLM gets its own learning rate, and a part whose rate is 0 is frozen instead."""
    return {
        "models/config.py": ("from dataclasses import dataclass\n\n\n@dataclass\nclass TrainConfig:\n    lr_mp: float = 0.00512\n"
                             f"    lr_vision_backbone: float = {lr_vision}\n    lr_language_backbone: float = 5e-5\n"),
        "models/vision_language_model.py": ("import torch.nn as nn\nfrom transformers import SiglipVisionModel\n\n\n"
                                            "class VisionLanguageModel(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n"
                                            "        self.vision_encoder = SiglipVisionModel.from_pretrained(cfg.vit_model_type)\n"),
        "train.py": (
            "import argparse\nimport torch\nfrom models.config import TrainConfig\n\n\ndef train(train_cfg, model):\n"
            "    param_groups = []\n    if train_cfg.lr_vision_backbone > 0:\n"
            "        param_groups.append({'params': list(model.vision_encoder.parameters()), 'lr': train_cfg.lr_vision_backbone})\n"
            "    else:\n        for p in list(model.vision_encoder.parameters()):\n            p.requires_grad = False\n"
            "    optimizer = torch.optim.AdamW(param_groups)\n    for batch in loader:\n        loss = model(**batch)\n"
            "        loss.backward()\n        optimizer.step()\n\n\n"
            "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
            "    parser.add_argument('--lr_vision_backbone', type=float, default=None)\n    args = parser.parse_args()\n"
            "    train_cfg = TrainConfig()\n    if args.lr_vision_backbone is not None:\n"
            "        train_cfg.lr_vision_backbone = args.lr_vision_backbone\n    train(train_cfg, model)\n"),
    }



#: Anole's ``training/train.py``: a Chameleon checkpoint fine-tuned on sequences of text and VQ image tokens, with the HF Trainer
_ANOLE_TRAIN = (
    "import torch\nfrom transformers import ChameleonForCausalLM, Trainer, TrainingArguments\n\n"
    "model = ChameleonForCausalLM.from_pretrained('/models/anole-7b-hf')\n"
    "args = TrainingArguments(output_dir='out', learning_rate=1e-3, fp16=False)\n"
    "Trainer(model=model, args=args, train_dataset=dataset).train()\n"
)
#: early-fusion models: images are VQ tokens in the sequence (Chameleon, the Anole and Lumina-mGPT models trained from it;
#: MMaDA's MAGVIT-v2 image tokenizer)
_EARLY_FUSION = ("ChameleonForCausalLM", "ChameleonForConditionalGeneration", "ChameleonForCausalLM.*",
                 "ChameleonForConditionalGeneration.*", "MAGVITv2", "MAGVITv2.*")
#: a vision encoder beside the language model (a CLIP/SigLIP tower, a VLM class that builds one)
_VISION_TOWERS = ("CLIPVisionModel", "SiglipVisionModel", "InternVisionModel", "CLIPVisionModel.*", "SiglipVisionModel.*",
                  "InternVisionModel.*", "LlavaForConditionalGeneration.*", "Qwen2VLForConditionalGeneration.*",
                  "Qwen2_5_VLForConditionalGeneration.*", "AutoModelForVision2Seq.*", "AutoModelForImageTextToText.*")


def _early_fusion(f: Facts, training: frozenset[str] | set[str] = frozenset()) -> Any:
    """The first use of an early-fusion model class (a training file's first) when no vision encoder is used beside it,
    else None."""
    uses = sorted(f.uses(*_EARLY_FUSION), key=lambda u: u.path not in training)
    return uses[0] if uses and not f.uses(*_VISION_TOWERS) else None


#: a training path that builds or loads a vision encoder under one of its usual spellings (a model class, a builder, a loader)
_VISION_BUILD = lazy_compile(r"(?i)^(build|create|load|get)_?\w*(vision|visual|vit|clip|siglip|eva|image_encoder|img_encoder|"
                             r"image_tower)\w*$|^(encode_images?|get_image_features)$")
_FEATURE_LOADS = ("numpy.load", "np.load", "torch.load")


def precomputed_features(ctx: Context) -> Any:
    """The read of precomputed visual features in a dataset of the training path (VTimeLLM's ``np.load(feature_path)``
    of CLIP frame features, ``<N, 768> float16``) when no file of the training path builds, loads or calls a vision encoder
    (a tower class, a ``build_vision_tower``/``clip.load``-style builder, ``encode_images``): the encoder ran once, offline.
    None otherwise."""
    f, train = ctx.facts, ctx.project.training_files
    if not train or f.uses(*_VISION_TOWERS) or _own_vision_models(f) or f.calls("timm.create_model", "open_clip.*"):
        return None
    for path in train:
        ff = f.files.get(path)
        if ff is None:
            continue
        if any(_VISION_BUILD.match(c.short) or c.name in ("clip.load",) or "vision_tower" in c.name for c in ff.calls):
            return None
    loads = [c for c in f.calls(*_FEATURE_LOADS) if c.path in train and c.func == "__getitem__" and class_at(f, c.path, c.line)]
    return loads[0] if loads else None


#: moondream's ``finetune_text.py``: the image embedding is computed without autograd, only ``model.text`` trains
_MOONDREAM_STEP = ("import torch\n\n\ndef main(model, dataset, optimizer):\n    for sample in dataset:\n"
                   "        with torch.no_grad():\n            img_emb = model._run_vision_encoder(sample['image'])\n"
                   "        loss = model.text(img_emb, sample['qa'])\n        loss.backward()\n        optimizer.step()\n")


@register
class H1VisionFreeze(_MultimodalOnly):
    id = "H1"
    title = "Vision encoder freezing"
    title_zh = "视觉编码器冻结"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMPUTE)
    priority = Priority.MEDIUM
    benefit = "no gradients or optimizer state for the ViT (0.3-6B parameters) and no weight-gradient GEMMs through it"
    what = (
        "Whether the vision encoder is frozen during multimodal training: `vision_tower.requires_grad_(False)`, "
        "`for p in model.visual.parameters(): p.requires_grad = False`, `freeze_vision_tower: true` (LLaMA-Factory, on by "
        "default), InternVL `freeze_backbone`, ms-swift `freeze_vit`, Qwen-VL `tune_mm_vision: false`, LLaVA-NeXT "
        "`mm_tunable_parts` without `mm_vision_tower`. A key set the other way (`tune_mm_vision: true`) is not freezing."
    )
    why = (
        "LLaVA-1.5 keeps CLIP ViT-L frozen in both stages and trains in ~1 day on 8 A100s (Liu et al., 2023). A frozen "
        "encoder saves its gradients and Adam states (~12 bytes per parameter: ~72 GB for InternViT-6B, ~3.6 GB for a 300M "
        "CLIP ViT-L) and the backward weight GEMMs through it. Unfreezing the ViT pays off mainly in late stages with a "
        "small LR (LLaVA-OneVision trains it at 1/5 of the LLM's LR)."
    )
    fix = "Freeze the vision encoder unless a late stage needs it: `freeze_vision_tower: true` (LLaMA-Factory) or `model.vision_tower.requires_grad_(False)`."
    fix_zh = "除非后期阶段确有需要，否则冻结视觉编码器：LLaMA-Factory 设置 `freeze_vision_tower: true`，或调用 `model.vision_tower.requires_grad_(False)`。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://arxiv.org/abs/2310.03744", "https://llamafactory.readthedocs.io/en/latest/advanced/arguments.html")
    snippets = {
        "hf-yaml": "freeze_vision_tower: true\nfreeze_multi_modal_projector: false\n",
        "python": "model.get_vision_tower().requires_grad_(False)\n",
    }
    examples = (
        Example({"training/train.py": _ANOLE_TRAIN}, Status.NA, "Anole: a Chameleon model trained on VQ image tokens"),
        Example({"training/train.py": _ANOLE_TRAIN.replace("from transformers import", "from transformers import CLIPVisionModel,")
                 + "vision = CLIPVisionModel.from_pretrained('openai/clip-vit-large-patch14')\n"}, N,
                "the same run beside a CLIP vision tower nothing freezes"),
        Example(_nanovlm(5e-5), N, "nanoVLM: the ViT is frozen only in the else of lr_vision_backbone > 0, which is 5e-5"),
        Example(_nanovlm(0), U, "the same trainer with lr_vision_backbone 0: the freeze branch runs"),
        Example({"moondream/finetune/finetune_text.py": _MOONDREAM_STEP}, U, "moondream: the vision encoder runs under no_grad"),
        Example({"moondream/finetune/finetune_text.py": _MOONDREAM_STEP.replace("        with torch.no_grad():\n            img_emb", "        img_emb")},
                N, "the same step with the encoder outside no_grad"),
        Example({"moondream/finetune/finetune_text.py": _MOONDREAM_STEP.replace("def main(", "def evaluate(")
                 .replace("        loss.backward()\n", "")
                 + "\n\ndef train(model, batch):\n    emb = model._run_vision_encoder(batch['image'])\n"
                   "    model.text(emb).backward()\n"}, N, "no_grad only in an evaluation function"),
        Example({"llava/model/clip_encoder.py": "from transformers import CLIPVisionModel\nclass CLIPVisionTower:\n"
                 "    def load_model(self):\n        self.vision_tower = CLIPVisionModel.from_pretrained(self.name)\n"
                 "        self.vision_tower.requires_grad_(False)\n"}, U, "llava clip tower"),
        Example({"qwenvl/train/train_qwen.py": "from transformers import Qwen2VLForConditionalGeneration\n"
                 "model = Qwen2VLForConditionalGeneration.from_pretrained(model_args.model_name_or_path)\n"
                 "def set_model(model_args, model):\n    for n, p in model.visual.named_parameters():\n"
                 "        p.requires_grad = False\n"}, U, "loop over model.visual"),
        Example({"examples/qwen2vl_full_sft.yaml": "model_name_or_path: Qwen/Qwen2-VL-7B-Instruct\nstage: sft\n"
                 "finetuning_type: full\nfreeze_vision_tower: true\ntemplate: qwen2_vl\n"}, U, "llamafactory key"),
        Example({"scripts/sft.sh": "torchrun --nproc_per_node 8 qwenvl/train/train_qwen.py --model_name_or_path "
                 "Qwen/Qwen2.5-VL-7B-Instruct --tune_mm_vision False --tune_mm_mlp True --tune_mm_llm True\n"}, U, "tune_mm_vision False"),
        Example({"scripts/sft.sh": "torchrun --nproc_per_node 8 qwenvl/train/train_qwen.py --model_name_or_path "
                 "Qwen/Qwen2.5-VL-7B-Instruct --tune_mm_vision True --tune_mm_mlp True --tune_mm_llm True\n",
                 "qwenvl/train/train_qwen.py": "from transformers import Qwen2VLForConditionalGeneration\n"
                 "def set_model(model_args, model):\n    if model_args.tune_mm_vision:\n"
                 "        for n, p in model.visual.named_parameters():\n            p.requires_grad = True\n    else:\n"
                 "        for n, p in model.visual.named_parameters():\n            p.requires_grad = False\n"},
                N, "every launch tunes the vision tower"),
        Example({"examples/qwen2vl_full_sft.yaml": "model_name_or_path: Qwen/Qwen2-VL-7B-Instruct\nstage: sft\n"
                 "finetuning_type: full\nfreeze_vision_tower: false\ntemplate: qwen2_vl\n"}, N, "explicitly unfrozen"),
        Example({"train.py": "from transformers import LlavaForConditionalGeneration\n"
                 "model = LlavaForConditionalGeneration.from_pretrained('llava-hf/llava-1.5-7b-hf')\n"
                 "# model.vision_tower.requires_grad_(False)\n"}, N, "commented out"),
        Example({"train.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('gpt2')\n"
                 "model.transformer.wte.requires_grad_(False)\n"}, Status.NA, "text-only"),
        Example({"open_flamingo/src/factory.py": _FLAMINGO_FACTORY.format(unfreeze="model.perceiver.requires_grad_(True)\n"
                 "    model.lang_encoder.gated_cross_attn_layers.requires_grad_(True)\n")}, U,
                "whole model frozen, only the resampler and cross-attention unfrozen (OpenCLIP encoder)"),
        Example({"open_flamingo/src/factory.py": _FLAMINGO_FACTORY.format(unfreeze="model.perceiver.requires_grad_(True)\n"
                 "    model.vision_encoder.requires_grad_(True)\n")}, N, "whole model frozen, then the vision encoder unfrozen"),
        Example({"mmgpt/models/builder.py": _MMGPT_BUILDER.format(frozen="model")}, U,
                "the model built from the image tower frozen whole, LoRA only on its language model (Multimodal-GPT)"),
        Example({"mmgpt/models/builder.py": _MMGPT_BUILDER.format(frozen="lang_encoder")}, N,
                "only the language model frozen whole: the image tower it is built beside trains"),
        Example({"src/clip_train/main.py": _CLIP_TRAINER}, N, "a CLIP trainer's --lock-image left off: the image tower trains"),
        Example({"src/clip_train/main.py": _CLIP_TRAINER,
                 "scripts/lit.sh": "torchrun --nproc_per_node 8 -m clip_train.main --model ViT-B-32 --lock-image\n"}, U,
                "the same trainer launched with --lock-image (LiT)"),
    )

    def not_applicable(self, ctx: Context) -> str | None:
        why = super().not_applicable(ctx)
        if why is None and (c := _early_fusion(ctx.facts, ctx.project.training_files)) is not None:
            name = next((part for part in reversed(c.name.split(".")) if part.startswith(("Chameleon", "MAGVIT"))), c.name)
            return (f"early-fusion model ({name} at {c.path}:{c.line}): images enter as discrete tokens of a fixed VQ image "
                    "tokenizer, which is never trained: there is no vision encoder to freeze")
        if why is None and (load := precomputed_features(ctx)) is not None:
            return (f"the visual features are precomputed: the training path reads them from disk ({load.name} at "
                    f"{load.path}:{load.line}) and builds or loads no vision encoder, so none runs in training to freeze")
        return why

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.values.get("vision_frozen") == "staged":
            return Priority.LOW  # frozen where the projector is pre-trained; the later stages' training of it is a method choice
        return super().recommendation_priority(ctx, outcome)

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        frozen, unfrozen = _vision_code(f)
        for s in f.effective(*_FREEZE_VISION_KEYS):
            t = truthy(s.value)
            if t is None and as_number(s.value) is not None:
                t = (as_number(s.value) or 0) != 0
            if t is True:
                frozen.append(s)
            elif t is False:
                unfrozen.append(s)
        for s in f.effective(*_TUNE_VISION_KEYS):
            t = truthy(s.value)
            if t is False:
                frozen.append(s)
            elif t is True:
                unfrozen.append(s)
        internvl = "internvl" in ctx.project.model_families
        for s in f.effective("freeze_backbone"):
            if internvl or _file_has(f, s.path, "freeze_llm", "freeze_mlp", "unfreeze_vit_layers"):
                t = truthy(s.value)
                if t is True:
                    frozen.append(s)
                elif t is False:
                    unfrozen.append(s)
        for s in f.effective("mm_tunable_parts"):
            if isinstance(s.value, str):
                (unfrozen if "mm_vision_tower" in s.value else frozen).append(s)
        # a list of module-name prefixes to freeze that names the vision tower (ROLL ``freeze_module_prefix: vision_model``)
        for s in f.effective(*_FREEZE_PREFIX_KEYS):
            if isinstance(s.value, str) and _FROZEN_VISION_PREFIX.search(s.value):
                frozen.append(s)
        # LLaMA-Factory: freeze_vision_tower defaults to true (for a config that trains a multimodal model), unless
        # the repository carries its own copy of the arguments with another default
        own = [truthy(x.default) for x in f.fields("freeze_vision_tower")]
        lf_default = own[0] if own else True
        for path in _lf_yamls(f) if lf_default else []:
            ff = f.files[path]
            mm = any(e.keys and e.keys[0] in ("template", "model_name_or_path") and isinstance(e.value, str)
                     and _MLLM_NAME.search(e.value) for e in ff.configs)
            if mm and not any(e.keys and e.keys[0] == "freeze_vision_tower" for e in ff.configs):
                e = next((x for x in f.records("configs") if x.path == path and x.keys and x.keys[0] in ("stage", "template")), None)
                if e is not None:
                    frozen.append(Setting("freeze_vision_tower", True, e.path, e.line, "config", e.text,
                                          "freeze_vision_tower (LLaMA-Factory default)", 2))
        # launches and configs decide over code: ``requires_grad_(False)`` at load time and ``if/else`` branches on a
        # flag are what the flags switch; a recipe whose every launch trains the ViT does not freeze it
        explicit = [x for x in frozen + unfrozen if isinstance(x, Setting) and x.source in ("launcher", "config")]
        if explicit:
            frozen = [x for x in frozen if x in explicit]
            unfrozen = [x for x in unfrozen if x in explicit]
        staged = _staged_whole_freeze(f, frozen) if frozen and not unfrozen else None
        if staged is not None:
            c, flag, on, runs = staged
            names = ", ".join(sorted(p.rsplit("/", 1)[-1] for p in on)[:3]) + (", ..." if len(on) > 3 else "")
            return Outcome(P, evs([c, *[s for s in f.settings(flag) if s.path in on][:3]]),
                           f"the vision encoder is frozen only where `{c.guard}` holds ({c.short}(False) at {c.path}:{c.line}, "
                           f"then only other parts switched back on): {len(on)} of {len(runs)} training launch files pass "
                           f"--{flag} ({names}); the other stages train it", {"vision_frozen": "staged", "advice_for": "staged"})
        if frozen:
            detail = "the vision encoder is frozen" + (" (unfrozen in another stage/config)" if unfrozen else "")
            return Outcome(U, evs(frozen), detail, {"vision_frozen": True})
        gated = _gated_vision_freeze(f) if not unfrozen else None
        if gated is not None:
            a, gates = gated
            g = gates[0]
            what = f"{g.key.rsplit('.', 1)[-1]} is {g.value!r} at {g.path}:{g.line}" if isinstance(g, Setting) else f"{g.path}:{g.line}"
            return Outcome(N, evs([a, *gates[:2]]), f"the vision encoder is trained: it is frozen only when `{a.guard}` "
                           f"({a.path}:{a.line}), and {what}", {"vision_frozen": False})
        peft = _peft_freezes_vision(ctx) if not unfrozen else None
        if peft is not None:
            c, targets, where = peft
            return Outcome(U, evs([c, *where[:1]]), f"the vision encoder is frozen: get_peft_model ({c.path}:{c.line}) freezes every "
                           f"base weight, and LoRA targets only modules of the language model ({', '.join(targets)})",
                           {"vision_frozen": True, "by": "peft"})
        # (a freeze switch's default of False, no run setting it, freezes nothing in code: a tower run without autograd is
        # frozen all the same, GOT-OCR2.0's ``freeze_vision_tower: bool = field(default=False)``)
        defaults_only = all(isinstance(x, Setting) and x.source in ("field-default", "argparse-default") for x in unfrozen)
        off = _vision_without_grad(f, ctx) if defaults_only else []
        if off:
            c, g = off[0]
            return Outcome(U, evs([c]), f"the vision encoder runs without gradients: {c.short}() under `{g.text}` "
                           f"({g.path}:{g.line}), so no gradient or activation of it is kept", {"vision_frozen": True, "by": "no_grad"})
        return Outcome(N, evs(unfrozen), "the vision encoder is trained" if unfrozen else "no vision-encoder freezing found",
                       {"vision_frozen": False})


#: a call that runs a vision tower (moondream ``model._run_vision_encoder(img)``, GOT-OCR2.0 ``vision_tower_high(image)``)
_VISION_CALL = lazy_compile(r"(?i)^_?(run_)?(vision_(tower|model|encoder)\w*|visual|vit|image_encoder|encode_images?|get_image_features)$")
#: a function that evaluates or generates: its ``no_grad`` block is no training step's
_EVAL_FUNC = lazy_compile(r"(?i)eval|generat|infer|predict|sample|test|valid|chat|demo")


def _vision_without_grad(f: Facts, ctx: Context) -> list[tuple[Any, Any]]:
    """(call, block) for each vision-tower call of a training file inside a block without autograd (``with torch.no_grad():
    img_emb = model._run_vision_encoder(sample["image"])`` in moondream's training step; GOT-OCR2.0's ``with
    torch.set_grad_enabled(False): cnn_feature = vision_tower_high(image)`` in its model's forward), outside functions that
    evaluate or generate."""
    training = ctx.project.training_files
    spans: dict[str, list[Any]] = {}
    for g in f.records("grad_off"):
        if not training or g.path in training:
            spans.setdefault(g.path, []).append(g)
    out: list[tuple[Any, Any]] = []
    for c in f.calls_in(sorted(spans)) if spans else ():
        if not _VISION_CALL.match(c.short) or (c.func and _EVAL_FUNC.search(c.func)):
            continue
        g = next((g for g in spans[c.path] if g.line < c.line <= g.end), None)
        if g is not None:
            out.append((c, g))
    return out


#: a LoRA target or saved module that lies in the vision tower (not the language model's "visual expert" of CogVLM,
#: ``vision_expert_query_key_value``, an attention of the LLM for image tokens)
_VISION_MODULE = lazy_compile(r"(?i)vision_(tower|model|encoder)|visual\.|\bvit\b|vit\.|image_encoder|patch_embed|all[-_]linear")


def _peft_freezes_vision(ctx: Context) -> tuple[Any, list[str], list[Any]] | None:
    """A PEFT wrapper every training run goes through (CogVLM2 ``model = get_peft_model(model, peft_config)`` in
    ``finetune_demo/peft_lora.py``, under no switch) whose LoRA targets are known and name no module of the vision tower,
    with no ``modules_to_save``: PEFT freezes every base weight, the vision encoder's included. (the call, the target
    names, where they are set); None otherwise."""
    f = ctx.facts
    train = ctx.project.training_files
    calls = [c for c in f.calls("get_peft_model") if (not train or c.path in train) and not c.guard and not callers_off(f, c)]
    configs = [c for c in f.calls("LoraConfig") if any(x.path == c.path for x in calls)]
    if not calls or not configs:
        return None
    targets: list[str] = []
    where: list[Any] = []
    for c in configs:
        if "modules_to_save" in c.kwargs or c.star_kwargs:
            return None
        v = c.kwargs.get("target_modules")
        vals: list[Any] = []
        if isinstance(v, (str, tuple, list)):
            vals = [v]
        elif isinstance(v, Expr) and v.ref:
            found = [s for s in f.effective(v.ref) if s.path == c.path or s.rank > 0]
            vals, where = [s.value for s in found], where + found
        if not vals or any(not isinstance(x, (str, tuple, list)) for x in vals):
            return None
        names = [n for x in vals for n in ((x,) if isinstance(x, str) else x)]
        if not names or any(not isinstance(n, str) or _VISION_MODULE.search(n) for n in names):
            return None
        targets += [n for n in names if n not in targets]
    return calls[0], targets, where


# --------------------------------------------------------------------------------------
# H2 dynamic resolution
# --------------------------------------------------------------------------------------

_NATIVE_DYNAMIC = {"qwen2_vl", "qwen2_5_vl", "qwen3_vl", "pixtral"}
_NATIVE_CALLS = ("Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration",
                 "Qwen3VLMoeForConditionalGeneration", "Qwen2VLImageProcessor", "PixtralVisionModel")
_NATIVE_NAME = lazy_compile(r"(?i)(qwen[23](\.5)?[-_]?vl|qwen3[-_]vl|pixtral|qwen2[-_.]5[-_]omni|kimi[-_]vl)")


def _native_model_sites(f: Facts) -> list[Any]:
    out: list[Any] = list(f.calls(*_NATIVE_CALLS))
    for s in f.settings("model_name_or_path", "pretrained_model_name_or_path", "base_model", "model_name", "model_id",
                        "model_path", "model", "pretrained_model"):
        if isinstance(s.value, str) and _NATIVE_NAME.search(s.value):
            out.append(s)
    for c in f.calls("from_pretrained"):
        if c.args and isinstance(c.args[0], str) and _NATIVE_NAME.search(c.args[0]):
            out.append(c)
    return out


@register
class H2DynamicResolution(_MultimodalOnly):
    id = "H2"
    title = "Dynamic resolution"
    title_zh = "动态分辨率"
    bottlenecks = (Bottleneck.COMPUTE,)
    priority = Priority.LOW
    benefit = "visual tokens scale with the image instead of padding every image to one size: fewer wasted tokens on small images"
    what = (
        "Whether images keep (close to) their native resolution and aspect ratio: LLaVA-NeXT `image_aspect_ratio: anyres` / "
        "`anyres_max_9` with `image_grid_pinpoints`, InternVL `dynamic_image_size: true` (`max_dynamic_patch`), Qwen2-VL/"
        "2.5-VL native resolution (`min_pixels`/`max_pixels`), MiniCPM-V slicing, Idefics `do_image_splitting`. "
        "`image_aspect_ratio: pad|square` is a fixed resolution."
    )
    why = (
        "LLaVA-NeXT's AnyRes (4x the pixels of LLaVA-1.5) raised TextVQA from 58.2 to 64.9 at 7B (Liu et al., 2024); "
        "Qwen2-VL's naive dynamic resolution encodes a 224x224 image into 66 tokens instead of padding it to a fixed grid "
        "(Wang et al., 2024). Fixed-size padding spends compute on blank pixels and loses detail on large images."
    )
    fix = "Use dynamic resolution: `image_aspect_ratio: anyres_max_9` (LLaVA-NeXT), `dynamic_image_size: true` with `max_dynamic_patch: 12` (InternVL), or bound Qwen2-VL with `min_pixels`/`max_pixels`."
    fix_zh = "采用动态分辨率：LLaVA-NeXT 设置 `image_aspect_ratio: anyres_max_9`，InternVL 设置 `dynamic_image_size: true` 与 `max_dynamic_patch: 12`，或为 Qwen2-VL 设置 `min_pixels`/`max_pixels`。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://llava-vl.github.io/blog/2024-01-30-llava-next/", "https://arxiv.org/abs/2409.12191")
    snippets = {
        "hf-yaml": "image_aspect_ratio: anyres_max_9\nimage_grid_pinpoints: \"(1x1),...,(6x6)\"\n",
        "python": (
            "from transformers import AutoProcessor\n\n"
            "processor = AutoProcessor.from_pretrained(\n"
            "    \"Qwen/Qwen2.5-VL-7B-Instruct\", min_pixels=256 * 28 * 28, max_pixels=1280 * 28 * 28\n)\n"
        ),
    }
    examples = (
        Example({"scripts/finetune.sh": "deepspeed llava/train/train_mem.py --vision_tower openai/clip-vit-large-patch14-336 "
                 "--image_aspect_ratio anyres --image_grid_pinpoints \"[(336, 672), (672, 336), (672, 672)]\"\n"}, U, "llava anyres"),
        Example({"shell/internvl2_8b.sh": "torchrun --nproc_per_node 8 internvl_chat_finetune.py --model_name_or_path "
                 "OpenGVLab/InternVL2-8B --force_image_size 448 --max_dynamic_patch 6 --dynamic_image_size True --use_thumbnail True\n"},
                U, "internvl dynamic tiles"),
        Example({"train.py": "from transformers import AutoProcessor, Qwen2VLForConditionalGeneration\n"
                 "model = Qwen2VLForConditionalGeneration.from_pretrained('Qwen/Qwen2-VL-7B-Instruct')\n"
                 "processor = AutoProcessor.from_pretrained('Qwen/Qwen2-VL-7B-Instruct', min_pixels=200704, max_pixels=1003520)\n"},
                U, "qwen2-vl native resolution"),
        Example({"scripts/finetune.sh": "deepspeed llava/train/train_mem.py --vision_tower openai/clip-vit-large-patch14-336 "
                 "--image_aspect_ratio pad --mm_projector_type mlp2x_gelu\n"}, N, "llava pad"),
        Example({"shell/internvl.sh": "torchrun --nproc_per_node 8 internvl_chat_finetune.py --model_name_or_path OpenGVLab/InternVL2-8B "
                 "--dynamic_image_size False --force_image_size 448\n"}, N, "dynamic off"),
        Example({"train.py": "from transformers import LlavaForConditionalGeneration\n"
                 "model = LlavaForConditionalGeneration.from_pretrained('llava-hf/llava-1.5-7b-hf')\n"
                 "# image_aspect_ratio = 'anyres'\n"}, N, "fixed 336px llava-1.5"),
        Example({"finetune/finetune.sh": "torchrun --nproc_per_node 8 finetune.py --model_name_or_path internlm/internlm-xcomposer2d5-7b "
                 "--data_path data.txt --fix_vit False --hd_num 18 --bf16 True\n",
                 "finetune/finetune.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass DataArguments:\n"
                 "    data_path: str = 'data.txt'\n    hd_num: int = 18\n"}, U, "InternLM-XComposer 2.5 HD sub-images"),
        Example({"finetune/finetune.sh": "torchrun --nproc_per_node 8 finetune.py --model_name_or_path internlm/internlm-xcomposer2d5-7b "
                 "--data_path data.txt --fix_vit False --hd_num 1 --bf16 True\n"}, N, "one 560 px view: no HD sub-images"),
    )

    def not_applicable(self, ctx: Context) -> str | None:
        why = super().not_applicable(ctx)
        if why is None and (load := precomputed_features(ctx)) is not None:
            return (f"the visual features are precomputed ({load.name} at {load.path}:{load.line}): the image resolution "
                    "was decided when they were extracted, outside the training run")
        return why

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list[Any] = []
        fixed: list[Any] = []
        for s in f.effective("image_aspect_ratio"):
            if isinstance(s.value, str) and "anyres" in s.value.lower():
                used.append(s)
            elif isinstance(s.value, str) or s.value is None:
                fixed.append(s)
        for s in f.effective("dynamic_image_size", "dynamic_resolution", "use_dynamic_resolution", "variable_resolution",
                             "native_resolution", "do_image_splitting", "dynamic_hd", "use_image_slicing", "slice_mode"):
            t = truthy(s.value)
            if t is True:
                used.append(s)
            elif t is False:
                fixed.append(s)
        # (InternLM-XComposer2-4KHD/2.5 ``--hd_num 18``: up to 18 sub-images of 560 px cut to the image's aspect ratio)
        for s in f.effective("max_slice_nums", "num_crops", "max_num_tiles", "max_image_tiles", "hd_num"):
            n = as_number(s.value)
            if n is not None:
                (used if n > 1 else fixed).append(s)
        native = set(ctx.project.model_families) & _NATIVE_DYNAMIC
        sites = _native_model_sites(f)
        if native or sites:
            used += sites
            used += f.effective("min_pixels", "max_pixels", "image_min_pixels", "image_max_pixels")
        else:
            used += _pixel_ranges(f)
        if not used and not fixed:
            # no option chooses: a processor that tiles each image to the best of its candidate resolutions by itself
            # (DeepSeek-VL2 ``select_best_resolution(image.size, self.candidate_resolutions)``, InternVL's
            # ``dynamic_preprocess``); behind LLaVA's ``image_aspect_ratio`` option the option decides (above)
            used += [c for c in f.calls(*_TILING_CALLS) if c.func not in _TILING_CALLS and not guard_off(f, c)]
        if used:
            return Outcome(U, evs(used), "images are encoded at dynamic resolution", {"dynamic_resolution": True})
        return Outcome(N, evs(fixed), "images are resized/padded to a fixed resolution" if fixed else "no dynamic resolution found",
                       {"dynamic_resolution": False})


#: functions that cut an image into tiles of the candidate resolution closest to its own (LLaVA-NeXT's anyres helpers,
#: InternVL's ``dynamic_preprocess``)
_TILING_CALLS = ("select_best_resolution", "dynamic_preprocess", "process_anyres_image")


#: the pixel budgets of an image processor that keeps each image's aspect ratio between a lower and an upper bound
_PIXEL_RANGES = (("min_pixels", "max_pixels"), ("image_min_pixels", "image_max_pixels"),
                 ("single_image_min_pixels", "single_image_max_pixels"))


def _pixel_ranges(f: Facts) -> list[Any]:
    """A run's pixel range for its images (Ovis2.5's launch: ``--single_image_min_pixels 200704 --single_image_max_pixels
    3211264`` for its NaViT encoder): both bounds set by one launch or config, the lower under the upper, so each image
    keeps its own size between them."""
    out: list[Any] = []
    for lo_key, hi_key in _PIXEL_RANGES:
        for hi in f.effective(hi_key):
            if hi.source not in ("launcher", "config"):
                continue
            lo = next((x for x in f.effective(lo_key) if x.path == hi.path), None)
            a, b = (as_number(lo.value) if lo is not None else None), as_number(hi.value)
            if lo is not None and a is not None and b is not None and 0 < a < b:
                out += [lo, hi]
    return out


# --------------------------------------------------------------------------------------
# H3 visual token pruning
# --------------------------------------------------------------------------------------

_PRUNE_KEYS = ("token_pruning", "visual_token_pruning", "prune_visual_tokens", "use_fast_v", "use_fastv", "fastv",
               "token_merge", "token_merging", "use_tome", "tome", "visual_token_select", "use_visionzip", "visionzip",
               "sparsevlm", "use_sparsevlm", "pdrop", "use_pdrop", "prumerge", "use_prumerge", "visual_token_reduction",
               "vision_token_pruning", "image_token_pruning", "use_token_pruning", "token_prune", "fastv_k", "fast_v_agg_layer")
_PRUNE_CALLS = ("tome.patch.*", "tome.patch.timm", "tome.patch.mae", "tome.patch.swag", "bipartite_soft_matching", "visionzip",
                "VisionZip", "FastVLlamaModel", "sparsevlm_init", "prumerge", "TokenPruner", "prune_visual_tokens")
#: visual tokens resampled to a fixed, small set of latents by the architecture itself (Flamingo's Perceiver resampler,
#: Qwen-VL's ``Resampler``, BLIP-2's Q-Former): the LLM never sees the patch tokens, so pruning them is moot
_RESAMPLER = lazy_compile(r"^(?:\w*Perceiver\w*Resampler|Resampler|init_[QqTt]former|\w*Q[Ff]ormer\w*)$")
#: patches merged by a fixed factor inside the architecture (Qwen2-VL's 2x2 ``PatchMerger``, InternVL's pixel shuffle)
_MERGER = lazy_compile(r"^\w*PatchMerger$")


def _architectural(f: Facts) -> tuple[list[Any], list[Any]]:
    """(resampler sites, merger sites): visual-token compression built into the model code of the facts' files."""
    resamplers = f.calls_where(lambda s: bool(_RESAMPLER.match(s)))
    mergers = [*f.calls_where(lambda s: bool(_MERGER.match(s))),
               *(c for c in f.calls("pixel_shuffle") if "scale_factor" in c.kwargs or len(c.args) >= 2)]
    return resamplers, mergers


_POOL_PROJECTORS = lazy_compile(r"(?i)(ldp|ldpnet|ldpv2|spatial_pool|pool|tokenpacker|c_abstractor|d_abstractor|honeybee|"
                              r"avgpool|downsample)")


@register
class H3VisualTokenPruning(_MultimodalOnly):
    id = "H3"
    title = "Visual token pruning"
    title_zh = "视觉 Token 裁剪"
    bottlenecks = (Bottleneck.COMPUTE, Bottleneck.MEMORY)
    priority = Priority.LOW
    benefit = "fewer visual tokens in the LLM: attention and FFN cost drop roughly in proportion"
    what = (
        "Whether redundant visual tokens are pruned or merged before/inside the LLM: FastV (`use_fast_v`, `fast_v_agg_layer`), "
        "ToMe (`tome.patch`), VisionZip, SparseVLM, PDrop, LLaVA-PruMerge, `visual_token_select`. A configured pooling that "
        "cuts visual tokens (`mm_spatial_pool_stride` >= 2, MobileVLM `ldpnet`) is partial; pooling that is part of the "
        "architecture (InternVL pixel shuffle, Qwen2-VL merger) is not counted."
    )
    why = (
        "FastV prunes 50 % of image tokens after layer 2 of LLaVA-1.5-13B and cuts 45 % of FLOPs with no loss on most "
        "benchmarks (Chen et al., 2024); VisionZip keeps 10 % of LLaVA-NeXT's tokens at ~95 % of the accuracy and 8x faster "
        "prefill (Yang et al., 2024). Visual tokens are often 70-90 % of a multimodal sequence."
    )
    fix = "Reduce visual tokens where accuracy allows: FastV-style pruning at inference, ToMe/VisionZip, or a pooled projector (`mm_spatial_pool_stride: 2`) for video/high-resolution inputs."
    fix_zh = "在精度允许时减少视觉 Token：推理时使用 FastV 式裁剪、ToMe/VisionZip，或对视频/高分辨率输入使用池化投影（`mm_spatial_pool_stride: 2`）。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://arxiv.org/abs/2403.06764", "https://arxiv.org/abs/2412.04467", "https://arxiv.org/abs/2210.09461")
    snippets = {
        "hf-yaml": "mm_spatial_pool_stride: 2\nmm_spatial_pool_mode: bilinear\n",
        "python": "from visionzip import visionzip\n\nmodel = visionzip(model, dominant=54, contextual=10)\n",
    }
    examples = (
        Example({"llava/serve/run_fastv.py": "from transformers import AutoConfig, LlavaForConditionalGeneration\n"
                 "config = AutoConfig.from_pretrained(path)\nconfig.use_fast_v = True\nconfig.fast_v_agg_layer = 2\n"
                 "config.fast_v_attention_rank = 288\nmodel = LlavaForConditionalGeneration.from_pretrained(path, config=config)\n"},
                U, "fastv"),
        Example({"inference.py": "from visionzip import visionzip\nfrom transformers import LlavaForConditionalGeneration\n"
                 "model = LlavaForConditionalGeneration.from_pretrained('llava-hf/llava-1.5-7b-hf')\n"
                 "model = visionzip(model, dominant=54, contextual=10)\n"}, U, "visionzip"),
        Example({"vision/encoder.py": "import timm\nimport tome\nfrom transformers import CLIPImageProcessor\n"
                 "processor = CLIPImageProcessor.from_pretrained(name)\nvit = timm.create_model('vit_large_patch16_384')\n"
                 "tome.patch.timm(vit)\nvit.r = 16\n"}, U, "tome on the vision encoder"),
        Example({"scripts/video_sft.sh": "deepspeed llava/train/train_mem.py --vision_tower google/siglip-so400m-patch14-384 "
                 "--mm_spatial_pool_stride 2 --mm_spatial_pool_mode bilinear --mm_resampler_type spatial_pool\n"}, P, "pooled projector"),
        Example({"scripts/finetune.sh": "deepspeed llava/train/train_mem.py --vision_tower openai/clip-vit-large-patch14-336 "
                 "--mm_projector_type mlp2x_gelu --image_aspect_ratio pad\n"}, N, "plain mlp projector"),
        Example({"scripts/NVILA-Lite/sft.sh": (  # VILA: NVILA merges 3x3 visual tokens in its projector, chosen per recipe
            "torchrun --nnodes=$NNODES --nproc_per_node=8 llava/train/train_mem.py \\\n    --deepspeed scripts/zero3.json \\\n"
            "    --vision_tower Efficient-Large-Model/paligemma-siglip-so400m-patch14-448 \\\n"
            "    --mm_projector mlp_downsample_3x3_fix \\\n    --bf16 True\n")}, P, "NVILA's downsampling projector"),
        Example({"inference.py": "from transformers import LlavaForConditionalGeneration\n"
                 "model = LlavaForConditionalGeneration.from_pretrained(path)\nmodel.config.use_fast_v = False\n"}, N, "fastv off"),
        Example({  # OpenFlamingo: a Perceiver resampler hands 64 latents per image to gated cross-attention layers
            "open_flamingo/src/flamingo.py": (
                "from torch import nn\nfrom .helpers import PerceiverResampler\n\n\nclass Flamingo(nn.Module):\n"
                "    def __init__(self, vision_encoder, lang_encoder, vis_dim, cross_attn_every_n_layers=1):\n"
                "        super().__init__()\n        self.vision_encoder = vision_encoder.visual\n        self.vis_dim = vis_dim\n"
                "        self.perceiver = PerceiverResampler(dim=self.vis_dim)\n        self.lang_encoder = lang_encoder\n"),
            "open_flamingo/train/train.py": (
                "import open_clip\nfrom transformers import AutoModelForCausalLM\nfrom open_flamingo.src.flamingo import Flamingo\n"
                "vision_encoder, _, image_processor = open_clip.create_model_and_transforms('ViT-L-14', pretrained='openai')\n"
                "lang_encoder = AutoModelForCausalLM.from_pretrained('anas-awadalla/mpt-1b-redpajama-200b')\n"
                "model = Flamingo(vision_encoder, lang_encoder, vis_dim=1024)\n"),
        }, N, "a Perceiver resampler is the architecture, not pruning"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list[Any] = [*f.calls(*_PRUNE_CALLS)]
        off: list[Any] = []
        for s in f.effective(*_PRUNE_KEYS):
            t = truthy(s.value)
            n = as_number(s.value)
            if t is None and n is not None:
                t = n > 0
            if t is True:
                used.append(s)
            elif t is False:
                off.append(s)
        for a in f.attr_assigns(*_PRUNE_KEYS):
            t = truthy(a.value)
            if t is True:
                used.append(a)
            elif t is False:
                off.append(a)
        if used:
            return Outcome(U, evs(used), "visual tokens are pruned or merged", {"visual_token_pruning": True})
        pooled: list[Any] = []
        for s in f.effective("mm_spatial_pool_stride", "spatial_pool_stride", "mm_pooling_stride", "pool_stride"):
            n = as_number(s.value)
            if n is not None and n >= 2:
                pooled.append(s)
        # (VILA/NVILA recipes: ``--mm_projector mlp_downsample_3x3_fix``, a 3x3 token merge before the LLM)
        for s in f.effective("mm_projector_type", "mm_resampler_type", "projector_type", "mm_projector"):
            if isinstance(s.value, str) and _POOL_PROJECTORS.search(s.value):
                pooled.append(s)
        if pooled:
            return Outcome(P, evs(pooled), "a fixed pooling reduces visual tokens (no content-aware pruning)",
                           {"visual_token_pruning": "pooling"})
        resamplers, mergers = _architectural(f)
        if resamplers or mergers:
            x = (resamplers or mergers)[0]
            how = "resamples visual tokens to a fixed set of latents" if resamplers else "merges visual patches by a fixed factor"
            return Outcome(N, evs([*off, x]), f"no visual-token pruning or merging found; the model code {how} as part of its "
                           f"architecture (`{x.short}` at {x.path}:{x.line}), which this check does not count",
                           {"visual_token_pruning": "resampler" if resamplers else False})
        if ctx.project.notes.get("dual_encoder_only"):  # a CLIP-style dual encoder has no LLM for the tokens to reach
            return Outcome(N, evs(off), "no visual token is pruned or merged in the image tower", {"visual_token_pruning": False})
        return Outcome(N, evs(off), "no visual-token pruning or merging found (FastV, ToMe, VisionZip, a pooled projector); "
                       "compression built into a model's architecture is not counted", {"visual_token_pruning": False})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.values.get("visual_token_pruning") == "resampler":
            return None  # a Perceiver resampler or Q-Former hands the LLM a few dozen latents per image: nothing to prune
        return super().recommendation_priority(ctx, outcome)
