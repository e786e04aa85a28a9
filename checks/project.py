"""The project overview: frameworks, model type and scale, and what the project does.

These facts decide applicability (``n/a``): H needs a multimodal model, J needs
inference, E1 needs several nodes, A7 needs an MoE model, G4/G5 need fine-tuning,
G6 needs alignment or distillation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .facts import Call, ConfigEntry, Container, Expr, Facts, Setting, as_number, truthy
from .facts.types import Decorator, DocHint, Import
from .guard_value import excludes
from .lazyre import lazy_compile
from .model import Project
from .roles import training_script_name, trains_itself

# framework -> (import prefixes, dependency names, launchers)
FRAMEWORKS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "deepspeed": (("deepspeed",), ("deepspeed",), ("deepspeed",)),
    "megatron": (("megatron",), ("megatron-core", "megatron-lm"), ()),
    "accelerate": (("accelerate",), ("accelerate",), ("accelerate",)),
    "colossalai": (("colossalai",), ("colossalai",), ("colossalai",)),
    "fsdp": (("torch.distributed.fsdp", "torch.distributed._composable.fsdp"), (), ()),
    "vescale": (("vescale",), ("vescale",), ()),
    "transformers": (("transformers",), ("transformers",), ()),
    "lightning": (("lightning", "pytorch_lightning", "lightning_fabric"), ("lightning", "pytorch-lightning"), ("lightning",)),
    "peft": (("peft",), ("peft",), ()),
    "trl": (("trl",), ("trl",), ()),
    # Oat (sail-sg/oat, ``oat-llm``): online alignment (PPO/GRPO/Dr. GRPO, DPO) on DeepSpeed learners and vLLM actors; a
    # project that runs its learner (understand-r1-zero's ``train_zero_math.py``: ``class ZeroMathLearner(PPOLearner)``
    # handed to ``get_program``) fine-tunes through it, with no backward pass of its own
    "oat": (("oat.algorithms", "oat.learners", "oat.actors", "oat.interface", "oat.args"), ("oat-llm",), ()),
    "ray": (("ray",), (), ()),  # Ray Train / Ray actors drive the training processes (imports only: many list it as an extra)
    "vllm": (("vllm",), ("vllm",), ("vllm",)),
    "sglang": (("sglang",), ("sglang",), ()),
    # Hugging Face's serving engine, started by its launcher (MathCoder ``deploy.sh``: ``text-generation-launcher --model-id
    # ...``); its Python client (``text_generation.Client``) only talks to one
    "tgi": (("text_generation_server",), (), ("text-generation-launcher",)),
    "tensorrt-llm": (("tensorrt_llm",), ("tensorrt-llm",), ()),
    "torchtune": (("torchtune",), ("torchtune",), ("torchtune",)),
    "axolotl": (("axolotl",), ("axolotl",), ("axolotl",)),
    "llamafactory": (("llamafactory", "llmtuner"), ("llamafactory", "llmtuner"), ("llamafactory",)),
    "ms-swift": (("swift.llm", "swift.megatron", "swift.trainers", "swift.tuners"), ("ms-swift", "ms_swift"), ("swift",)),
    "nanotron": (("nanotron",), ("nanotron",), ()),
    "composer": (("composer", "llmfoundry"), ("mosaicml", "llm-foundry"), ("composer",)),
    "unsloth": (("unsloth",), ("unsloth",), ()),
    "liger-kernel": (("liger_kernel",), ("liger-kernel",), ()),
    "flash-attn": (("flash_attn",), ("flash-attn",), ()),
    "xformers": (("xformers",), ("xformers",), ()),
    "apex": (("apex",), ("apex",), ()),
    "transformer-engine": (("transformer_engine",), ("transformer-engine",), ()),
    "bitsandbytes": (("bitsandbytes",), ("bitsandbytes",), ()),
    "triton": (("triton",), ("triton",), ()),
    # other deep-learning frameworks a project may train with (CodeGeeX: MindSpore on Ascend, inference in OneFlow and Paddle)
    "mindspore": (("mindspore",), ("mindspore",), ()),
    "oneflow": (("oneflow",), ("oneflow",), ()),
    "paddle": (("paddle",), ("paddlepaddle", "paddlepaddle-gpu"), ()),
}

#: libraries that work only when imported (no launcher of their own here, or one the launches are checked for first): a
#: dependency line alone does not make them the project's framework when the project has its own PyTorch code (dclm lists
#: ``llm-foundry`` for its evaluation harness; its training runs open_lm)
_IMPORTED_LIBRARIES = frozenset({"trl", "peft", "composer"})
#: the switches that turn Liger Kernel on without an import (HF ``use_liger_kernel``, axolotl's per-kernel keys)
_LIGER_SWITCHES = ("use_liger_kernel", "use_liger", "enable_liger_kernel", "liger_kernel", "liger_rope", "liger_rms_norm",
                   "liger_glu_activation", "liger_layer_norm", "liger_cross_entropy", "liger_fused_linear_cross_entropy", "liger_swiglu")

_MODEL_KEYS = (
    "model_name_or_path", "pretrained_model_name_or_path", "base_model", "model_name", "model_id",
    "model_path", "base_model_name_or_path", "tokenizer_name_or_path", "model", "pretrained_model", "hf_model",
    "pretrained_model_path",  # MMaDA's `pretrained_model_path: "GSAI-ML/LLaDA-8B-Instruct"` under `model.mmada`
    "input_model_filename",  # Cambrian's and LongVU's ``--input_model_filename $BASE_CHECKPOINT`` (the model train.py loads)
    "pretrain",  # OpenRLHF-style `--pretrain` (oat-llm `pretrain: str = "trl-lib/pythia-1b-deduped-tldr-sft"`): the model trained
    # LAVIS's InstructBLIP/BLIP-2 configs name their language model (BLIVA ``t5_model: "google/flan-t5-xxl"``,
    # ``llm_model: "lmsys/vicuna-7b-v1.1"``); the Q-Former's ``bert-base-uncased`` is only the bridge's initial weights
    "llm_model", "t5_model",
)
_FAMILIES = (
    ("qwen3-vl", "qwen3_vl"), ("llava", "llava"), ("internvl", "internvl"), ("qwen2-vl", "qwen2_vl"), ("qwen2.5-vl", "qwen2_5_vl"), ("qwen-vl", "qwen_vl"),
    ("minicpm-v", "minicpm_v"), ("minicpm-o", "minicpm_v"), ("minicpm-llama3-v", "minicpm_v"), ("cogvlm", "cogvlm"), ("cogagent", "cogvlm"), ("glm-4v", "glm4v"), ("minicpm-llama", "llama"), ("minicpm", "minicpm"), ("idefics", "idefics"), ("paligemma", "paligemma"), ("mllama", "mllama"), ("pixtral", "pixtral"),
    ("mixtral", "mixtral"), ("mistral", "mistral"), ("llama", "llama"), ("qwen3", "qwen3"), ("qwen2", "qwen2"), ("qwen", "qwen"),
    ("gemma", "gemma"), ("phi", "phi"), ("chatglm", "glm"), ("glm", "glm"), ("deepseek", "deepseek"), ("baichuan", "baichuan"),
    ("falcon", "falcon"), ("gpt2", "gpt2"), ("gpt-neox", "gpt_neox"), ("pythia", "gpt_neox"), ("opt-", "opt"), ("bloom", "bloom"),
    ("t5", "t5"), ("olmo", "olmo"), ("granite", "granite"), ("yi-", "yi"), ("internlm", "internlm"),
)
_MULTIMODAL_FAMILIES = {"llava", "internvl", "qwen2_vl", "qwen2_5_vl", "qwen_vl", "minicpm_v", "idefics", "paligemma", "mllama", "pixtral",
                        "qwen3_vl", "cogvlm", "glm4v"}
_MM_NAMES = (
    "LlavaForConditionalGeneration", "LlavaNextForConditionalGeneration", "Qwen2VLForConditionalGeneration",
    "Qwen2_5_VLForConditionalGeneration", "AutoModelForVision2Seq", "AutoModelForImageTextToText", "CLIPVisionModel",
    "SiglipVisionModel", "CLIPImageProcessor", "InternVisionModel", "Blip2ForConditionalGeneration",
    "IdeficsForVisionText2Text", "MllamaForConditionalGeneration", "PaliGemmaForConditionalGeneration",
    # ImageBind's image/audio/video encoder feeding an LLM (PandaGPT ``imagebind_model.imagebind_huge(pretrained=True)``)
    "imagebind_huge", "ImageBindModel",
    # OpenCLIP's constructors always build an image tower (OpenFlamingo takes ``.visual`` of
    # ``open_clip.create_model_and_transforms(clip_vision_encoder_path, ...)`` as its vision encoder)
    "open_clip.create_model_and_transforms", "open_clip.create_model", "open_clip.create_model_from_pretrained",
    # early-fusion image-token models (Chameleon, and Anole and Lumina-mGPT trained from it: images enter as VQ tokens)
    "ChameleonForConditionalGeneration", "ChameleonForCausalLM",
    # the MAGVIT-v2 image tokenizer of unified models (Show-o, MMaDA: images enter the language model as its codes)
    "MAGVITv2",
)
_MM_KEYS = ("vision_tower", "mm_vision_tower", "mm_projector_type", "image_folder", "image_aspect_ratio", "vision_encoder",
            "freeze_vision_tower", "mm_use_im_start_end", "image_processor", "vision_model", "visual_encoder", "vit_model",
            "vision_encoder_path",
            # InternLM-XComposer's ``--fix_vit``: whether its ViT is frozen
            "fix_vit",
            # LAVIS-style recipes (MiniGPT-4 train_configs: ``datasets: {laion: {vis_processor: {train: {name: blip2_image_train}}}}``)
            "vis_processor", "freeze_vit",
            # the image's token count of SwissArmyTransformer's VLMs (VisualGLM ``--image_length``, default 32 Q-Former queries)
            "image_length",
            # MiniCPM-V's and MiniCPM-o's fine-tuning (``--tune_vision true``, ``--max_slice_nums 9``)
            "tune_vision", "max_slice_nums",
            # LLaVA's projector between a visual encoder and the LLM, trained alone in stage 1 (VTimeLLM's ``--tune_mm_mlp_adapter
            # True`` over offline CLIP frame features, ``--pretrain_mm_mlp_adapter`` in the later stages)
            "tune_mm_mlp_adapter", "pretrain_mm_mlp_adapter")
#: an image processor's pixel budget set by a run (Qwen-VL ``max_pixels``, Ovis2.5's ``--single_image_max_pixels 3211264``):
#: read in launches and config files only (a library's collate function takes the same names for the models it supports)
_MM_RUN_KEYS = ("max_pixels", "min_pixels", "image_max_pixels", "image_min_pixels", "single_image_max_pixels",
                "single_image_min_pixels", "video_max_pixels")
_ALIGN_TRAINERS = ("DPOTrainer", "ORPOTrainer", "KTOTrainer", "CPOTrainer", "PPOTrainer", "GRPOTrainer", "RewardTrainer",
                   "OnlineDPOTrainer", "RLOOTrainer", "GKDTrainer", "SimPOTrainer", "PRMTrainer", "NashMDTrainer", "XPOTrainer",
                   "DPOConfig", "ORPOConfig", "KTOConfig", "CPOConfig", "GRPOConfig", "PPOConfig", "GKDConfig")
_ALIGN_CONFIGS = frozenset(t for t in _ALIGN_TRAINERS if t.endswith("Config"))
_TEST_PATH_RE = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$")
#: a distillation trainer class of the project's own (``KDTrainer``, ``DistillationTrainer``, ``DistillTrainer``)
_KD_TRAINER = lazy_compile(r"^(KD|\w*Distil(l|lation)?)\w*Trainer$")
_ALIGN_WORDS = lazy_compile(r"^(dpo|orpo|kto|simpo|cpo|ppo|grpo|rm|reward|ipo|rlhf|gkd|distill\w*)$", re.I)
#: settings that select the training kind by one of those words (``stage: dpo``; oat-llm ``algo: Literal["DPO", ..., "PPO"] = "DPO"``)
#: (HALOs launches pick the objective as a Hydra group: ``launch.py loss=dpo``, ``loss=kto``, ``loss=ppo``)
_ALIGN_SELECTORS = ("stage", "rl", "rlhf_type", "training_type", "train_type", "task", "algo", "algorithm", "loss", "loss_type")
_MOE_KEYS = ("num_experts", "num_local_experts", "moe_num_experts", "n_routed_experts", "num_moe_experts", "moe_layer_freq",
             "expert_model_parallel_size", "moe_expert_parallel_size", "ep_size", "num_experts_per_tok", "moe_k")
_PARAMS = lazy_compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bBmM])(?![a-zA-Z0-9])")
_SEQ_KEYS = ("max_seq_length", "max_seq_len", "model_max_length", "seq_length", "seq_len", "cutoff_len", "block_size",
             "sequence_len", "max_length", "context_length", "encoder_seq_length", "max_position_embeddings", "max_source_length")
_INFERENCE_ENGINES = ("vllm", "sglang", "tensorrt_llm", "text_generation_server", "lmdeploy", "exllamav2", "ctranslate2", "llama_cpp", "onnxruntime")
# a file or folder named for inference, as a whole word: ``chat.py``, ``serve/``, ``inference_vllm.py``; not
# ``chatglm_train.py``, ``apply_lora.py`` or ``mapping.py``
_INFER_PATH = lazy_compile(
    r"(?:^|[/_\-.])(infer\w*|serve|serving|server|generate|generation|chat|demo|predict\w*|deploy\w*|api|app|gradio|webui|sample|sampling)"
    r"(?=[/_\-.]|$)",
    re.I,
)
#: a model's own generation method (``medusa_generate``, ``ea_generate``, ``stream_generate``): a name ending in ``_generate``
#: (and a model API's own generation entry point: VILA's ``model.generate_content(prompt)`` in ``serving/server.py`` and
#: ``llava/cli/infer.py``)
#: OLMo-core's ``generation_module.generate_batch(...)`` in its ``generate/chat.py`` CLI)
_GENERATE_METHOD = lazy_compile(r"[a-z]\w*_generate|generate_(content|stream|text|response|chat|batch)")
#: a model's own chat method called on the loaded model (``model.chat``, ``self.model.stream_chat``), not an API client's
_MODEL_CHAT = lazy_compile(r"^(self\.)?\w*model\.(stream_)?chat$")
_SERVING_LAUNCHERS = ("vllm", "sglang", "lmdeploy", "text-generation-launcher", "trtllm-serve", "trtllm-build", "tritonserver")
_SERVING_IMAGES = ("vllm/vllm-openai", "lmsysorg/sglang", "text-generation-inference", "tritonserver", "openmmlab/lmdeploy")
# trainers that generate rollouts every step (their throughput is inference throughput)
_ONLINE_RL = ("GRPOTrainer", "PPOTrainer", "RLOOTrainer", "OnlineDPOTrainer", "NashMDTrainer", "XPOTrainer")
_MOE_NAME = lazy_compile(r"moe|a3b|a22b|mixtral", re.I)
#: ``8x7B`` in a checkpoint name, and the published total parameters (billions) of the shapes we know: Mixtral-8x7B and
#: Mixtral-8x22B (Mistral AI's model cards)
_EXPERTS_X_SIZE = lazy_compile(r"(?<![\w.])(\d+)x(\d+(?:\.\d+)?)[bB](?![a-zA-Z0-9])")
_MOE_TOTALS: dict[tuple[int, float], float] = {(8, 7.0): 46.7, (8, 22.0): 140.6}
_MODEL_DIM_KEYS = ("num_layers", "num_hidden_layers", "n_layer", "n_layers", "hidden_size", "d_model", "n_embd")
_TRAINING_KNOBS = ("learning_rate", "num_train_epochs", "per_device_train_batch_size", "gradient_accumulation_steps", "max_steps")
_TRAIN_RECIPE_KEYS = {"do_train", "stage", "learning_rate", "num_train_epochs", "finetuning_type", "do_predict"}
_RL_SCRIPTS = lazy_compile(r"(verl\.trainer\.main_ppo|openrlhf\.cli\.train_ppo|openrlhf\.cli\.train_grpo)")
_ALIGN_SCRIPTS = lazy_compile(r"(verl\.trainer\.main_ppo|openrlhf\.cli\.train_(ppo|grpo|dpo|kto|rm|prm|kd)|trl\s+(dpo|grpo|kto|orpo))")
#: a training module named for a preference/RL/distillation algorithm (NeMo-Aligner ``nemo_aligner/algorithms/dpo.py``,
#: ``ppo.py``, ``kto.py``; ``grpo_trainer.py``): with an optimizer step of its own, the project's trainer for that algorithm
#: also a training script named for it (minimind ``trainer/train_dpo.py``, ``train_grpo.py``, ``train_distillation.py``)
_ALIGN_MODULE = lazy_compile(r"(^|/)(train_)?(dpo|ppo|grpo|kto|orpo|simpo|cpo|ipo|rloo|rlhf|reinforce|gkd|spin|distill(ation)?)"
                           r"(_?trainer|_train(ing)?)?\.py$", re.I)
#: a folder named for one of those algorithms (DeepSpeed-Chat ``step2_dpo_finetuning/``, ``step3_rlhf_finetuning/``)
_ALIGN_DIR = lazy_compile(r"(^|/|_)(dpo|ppo|grpo|kto|orpo|simpo|rloo|rlhf)(_[^/]*)?/[^/]+\.py$", re.I)
#: the temperature of a DPO-family loss (``self.beta``, ``beta``, ``neox_args.dpo_beta``) in the argument of ``logsigmoid``:
#: SigLIP's ``logsigmoid(labels * logits)``, a reward model's ``logsigmoid(chosen - rejected)`` and ring attention's
#: log-sum-exp merge have none
_BETA = lazy_compile(r"(?i)(^|[^a-z])beta([^a-z]|$)")
_FINETUNE_HINT = lazy_compile(r"(finetun|fine_tun|fine-tun|sft|lora|instruct|adapter|peft)", re.I)
#: a folder of inference or serving code: what it holds is named for the workload it serves (Chameleon's
#: ``chameleon/inference/model_adapter.py``, an adapter in the design-pattern sense, over an inference-only model)
_INFERENCE_DIR = lazy_compile(r"(?i)^(infer\w*|serve|serving|server)$")
#: a folder of data preparation: what it holds formats the data of a run (Linly's ``instructions/preprocess/csl.py`` turns a
#: TSV into instruction JSONL), whatever the data is for
_DATA_PREP_DIR = lazy_compile(r"(?i)^(pre_?process\w*|data_?(process|prep)\w*|prepare_?data\w*)$")


def _finetune_path(path: str) -> bool:
    """A path named for fine-tuning (``finetune.py``, ``sft/``, ``lora_train.sh``); a part that names pre-training as well
    (GaLore's and ReLoRA's ``peft_pretraining/``: parameter-efficient pre-training from scratch) is not, nor is anything
    in a folder of inference code or of data preparation."""
    parts = path.split("/")
    if any(_INFERENCE_DIR.match(d) or _DATA_PREP_DIR.match(d) for d in parts[:-1]):
        return False
    if _INFERENCE_FILE.match(parts[-1]):
        return False  # DeepSeek-Math's ``replicate/predict_instruct.py``: a Cog predictor of the instruct model
    return any(_FINETUNE_HINT.search(part) and not _PRETRAIN_PATH.search(part) for part in parts)


#: a script named for inference (``predict_instruct.py``, ``chat_sft.py``, ``infer_lora.py``): it serves the model its name
#: names, it does not fine-tune it
_INFERENCE_FILE = lazy_compile(r"(?i)^(predict|infer|inference|serve|server|chat|demo|generate|generation|eval|evaluate)(_\w*)?\.py$")


#: settings of an optimisation run: a recipe that sets one trains
_OPTIM_KEYS = ("learning_rate", "lr", "num_train_epochs", "max_steps", "warmup_steps", "warmup_ratio", "gradient_accumulation_steps",
               "per_device_train_batch_size", "train_batch_size", "train_micro_batch_size_per_gpu", "train_iters", "epochs")
#: a path that names pre-training (``pretrain_gpt.py``, ``pretraining/``), not pretrained weights: ``pretrained.py`` (OpenCLIP's
#: registry of released checkpoints), ``load_pretrained.py`` are where weights to start from come from, the opposite
_PRETRAIN_PATH = lazy_compile(r"pretrain(?!ed)", re.I)
#: the run's option naming the weights its model starts from, read off the options object (``args.pretrained``,
#: ``cfg.model.pretrained``): a tag or a checkpoint file
_PRETRAINED_OPTION = lazy_compile(r"^[A-Za-z_]\w*(\.\w+)*\.pretrained$")


def _pretrain_file(path: str) -> bool:
    """A path named for pre-training, other than a checkpoint tool's (Linly's
    ``scripts/convert_llama_from_tencentpretrain_to_hf.py`` converts TencentPretrain weights; it trains nothing)."""
    return bool(_PRETRAIN_PATH.search(path)) and not CHECKPOINT_TOOL.search(path.rsplit("/", 1)[-1].rsplit(".", 1)[0])


#: a module's own self-test or demo function (``def test():``, ``def _demo():``, ``def sanity_check():``)
_SELF_TEST_FUNC = lazy_compile(r"^_?(test|tests|demo|selftest|self_test|sanity_check|smoke_test)(_\w+)?$")


def _library_demo_lines(facts: Facts) -> frozenset[tuple[str, int]]:
    """Lines of the calls in the ``if __name__ == "__main__":`` block of a module that other modules of the project import:
    a library module's self-demo (modalities ``huggingface_model.py`` building its adapter for ``epfl-llm/meditron-7b`` to
    print it), not a run. A script's main block (a module nothing imports) stays."""
    cached = facts._s.get("_library_demo_lines")
    if cached is not None:
        return cached
    imported: dict[str, set[str]] = {}
    for i in facts.records("imports"):
        module = _absolute_module(i.module, i.path)
        for name in (module, f"{module}.{i.name}" if i.name else module):
            imported.setdefault(name, set()).add(i.path)
    out: set[tuple[str, int]] = set()
    main_calls: list[Any] = []
    for c in facts.calls_selected("main_block"):
        parts = c.path[:-3].split("/")
        if any(imported.get(".".join(parts[k:]), set()) - {c.path} for k in range(len(parts) - 1)):
            out.add((c.path, c.line))
            out.update((c.path, ln) for ln in c.kw_lines.values())
            main_calls.append(c)
    # the module's own self-test that only its main block runs (FastChat's flash-attention patch: ``def test():`` builds a
    # one-layer ``LlamaConfig(hidden_size=1024, ...)`` to compare kernels, run by ``if __name__ == "__main__": test()``): its
    # calls are the self-test's, not the training run's. Only a function named for a test or demo: a builder the main block
    # also runs (llm-foundry ``build_text_dataloader``) is registered or handed on by reference elsewhere. One called or
    # imported anywhere else in the project stays
    imported_names = {i.name for i in facts.records("imports") if i.name}
    for m in main_calls:
        if not _SELF_TEST_FUNC.match(m.name) or m.name in imported_names:
            continue
        body = [c for c in facts.files[m.path].calls if c.func == m.name]
        if not body or any(c.path != m.path or (c.line != m.line and c.func != m.name) for c in facts.calls(m.name) if c.short == m.name):
            continue
        for c in body:
            out.add((c.path, c.line))
            out.update((c.path, ln) for ln in c.kw_lines.values())
    facts._s["_library_demo_lines"] = frozenset(out)
    return facts._s["_library_demo_lines"]


def _absolute_module(module: str, importer: str) -> str:
    """A relative import's module as its dotted path from the repository root (``.vllm_client`` imported by
    ``trl/generation/vllm_generation.py`` is ``trl.generation.vllm_client``; ``..utils`` one package up); an absolute one
    as it is."""
    if not module.startswith("."):
        return module
    rest = module.lstrip(".")
    level = len(module) - len(rest)
    pkg = importer.split("/")[:-1]
    pkg = pkg[: len(pkg) - (level - 1)] if level - 1 <= len(pkg) else []
    return ".".join(pkg + ([rest] if rest else []))


_DOC_EXT = (".md", ".qmd", ".rst", ".mdx")


def _in_docs(s: Any) -> bool:
    """A setting of a README's training command (:meth:`Facts.documented_runs`): the model it names is a documented
    model (:func:`_documented_models`), which the training path's own names and loads take precedence over."""
    return s.source == "launcher" and s.path.endswith(_DOC_EXT)


#: ``pretrain`` also names a pre-training config (salesforce-lavis ``pretrain: configs/models/blip2/blip2_pretrain.yaml``)
_CONFIG_FILE = lazy_compile(r"\.(ya?ml|json|toml|py|cfg|ini)$", re.I)


def _config_file_value(s: Setting) -> bool:
    return s.name == "pretrain" and isinstance(s.value, str) and _CONFIG_FILE.search(s.value) is not None


#: the top-level sections of an evaluation's output file (VLM2Vec ``experiments/public/all_scores/v2.0.1/*.json``:
#: ``{"metadata": {"model_name": "LamRA-Ret-Qwen2.5VL-7b"}, "metrics": {...}}``; lm-eval's ``{"results": ..., "config": ...}``)
_RESULT_SECTIONS = ("metrics", "results", "scores", "eval_results", "evaluation_results")


def _result_files(facts: Facts) -> set[str]:
    """JSON files that hold an evaluation's scores: the model they name is one that was scored (a baseline, a competitor),
    not one the project trains."""
    return {e.path for e in facts.config_under(*_RESULT_SECTIONS) if e.path.endswith(".json") and e.keys
            and str(e.keys[0]) in _RESULT_SECTIONS}


def _strings(facts: Facts, keys: tuple[str, ...]) -> list[str]:
    demo = _library_demo_lines(facts)
    settings = facts.settings(*keys)
    vocab = _tokenizer_beside_model(settings)
    scored = _result_files(facts)
    out = [s.value for s in settings if isinstance(s.value, str) and (s.path, s.line) not in demo and id(s) not in vocab
           and not _config_file_value(s) and not _in_docs(s) and not _ENDPOINT_NAME.match(s.key) and s.path not in scored]
    tokenizer_only: dict[str, bool] = {}
    for c in facts.calls("from_pretrained", "LLM", "pipeline", "load_model"):
        if (c.path, c.line) in demo or c.name.startswith(_ENCODER_LIBS) or _ENCODER_CLASS.search(c.name):
            continue  # (a speech or vision encoder a loader builds beside the LLM: ``whisper.load_model('large-v3')``)
        found: list[str] = []
        # ``pipeline("sentiment-analysis", model=...)``: the first argument is the task; a project's own
        # ``load_model("sft", device)`` takes a phase or source name unless the value spells a hub ID or a model family
        if c.short != "pipeline":
            found += [a for a in c.args[:1] if isinstance(a, str) and not _carried_past_guard(c, None, a)
                      and (c.short != "load_model" or "/" in a or _family_word(a))]
        for k in ("pretrained_model_name_or_path", "model", "model_name_or_path"):
            v = c.kwargs.get(k)
            if isinstance(v, str) and not _carried_past_guard(c, k, v):
                found.append(v)
        # a tokenizer's own loader (``RustBPETokenizer.from_pretrained("gpt2")``) names a vocabulary, not the trained model
        tok = bool(_TOKENIZER_CLASS.search(c.name.rsplit(".", 1)[0])) if c.short == "from_pretrained" else False
        for v in found:
            tokenizer_only[v] = tokenizer_only.get(v, True) and tok
        out += found
    out += [x.script for x in facts.launches("vllm") if x.script and "/" in x.script]  # ``vllm serve org/model``
    vocab_only = {v for v, only in tokenizer_only.items() if only} - {s.value for s in facts.settings(*keys) if isinstance(s.value, str)}
    return [s for s in out if 2 < len(s) < 200 and s not in vocab_only]


def _tokenizer_beside_model(settings: list[Any]) -> set[int]:
    """ids of ``tokenizer_name_or_path`` settings in a file that also sets the model (TinyLLaVA's OpenELM recipes: ``--model_name_or_path
    $LLM_VERSION`` with ``--tokenizer_name_or_path meta-llama/Llama-2-7b-hf``, the vocabulary OpenELM borrows): a vocabulary,
    not the trained model; alone in its file it may be the only name the model has."""
    with_model = {s.path for s in settings if s.name != "tokenizer_name_or_path"}
    return {id(s) for s in settings if s.name == "tokenizer_name_or_path" and s.path in with_model}


_TOKENIZER_CLASS = lazy_compile(r"(Tokenizer|Processor|FeatureExtractor)\w*$")
#: the name an inference server binds a model function under, or a client calls it by (PyTriton ``triton.bind(model_name=
#: "critic_infer", infer_func=...)``, ``FuturesModelClient(url, model_name=...)``): an endpoint, not a checkpoint
_ENDPOINT_NAME = lazy_compile(r"^(bind|\w*ModelClient)\(model_name=\)$")


def _family_word(name: str) -> bool:
    low = name.lower()
    return any(family_in(k, low) for k, _ in _FAMILIES)


#: family names short enough to sit inside other words (``yi-`` in Fengshenbang's ``Taiyi-CLIP``, ``phi`` in ``dolphin``,
#: ``opt-`` in ``adopt-``): found only at the start of a word
_WORD_START_FAMILIES = frozenset({"yi-", "yi_", "phi", "opt-", "opt_"})


def family_in(needle: str, low: str) -> bool:
    """Whether the family name ``needle`` appears in the lower-cased name ``low`` (the short ones at a word's start)."""
    if needle not in _WORD_START_FAMILIES:
        return needle in low
    i = low.find(needle)
    while i >= 0:
        if i == 0 or not low[i - 1].isalpha():
            return True
        i = low.find(needle, i + 1)
    return False


def _carried_past_guard(call: Any, keyword: str | None, value: str) -> bool:
    """A constant the extractor carried into the call from a local name (``init_from = 'scratch'`` read into
    ``GPT.from_pretrained(init_from)``) whose branch condition tests that name against it (``elif
    init_from.startswith('gpt2'):``): the call never receives that value."""
    if not call.guard:
        return False
    pat = rf"\b{re.escape(keyword)}\s*=\s*([A-Za-z_]\w*)\s*[,)]" if keyword else rf"\b{re.escape(call.short)}\(\s*([A-Za-z_]\w*)\s*[,)]"
    m = re.search(pat, call.text)
    return bool(m) and excludes(call.guard, m.group(1), value)


_TOKEN_COUNT = lazy_compile(r"(tokens?|tok|step|steps|iter|ckpt)[-_]?$", re.I)


_UNDERSCORE_DECIMAL = lazy_compile(r"(?<![A-Za-z\d.])(\d+)_(\d+)([bBmM])(?![a-zA-Z])")


def size_in_name(name: str) -> float | None:
    """The parameter count a model name states (``Llama-2-7b-hf`` -> 7.0), in billions, or None.

    The first size in the last path segment: a checkpoint name's later sizes are token counts
    (``OLMo-1B-0724-hf-step477000-tokens2000B``), and ``tokens503b`` is never a model size.
    """
    # (a decimal size spelt with an underscore, as Hugging Face names spell it: ``ALLaVA-Phi2-2_7B``, ``Qwen2-0_5B``)
    last = _UNDERSCORE_DECIMAL.sub(r"\1.\2\3", name.split("/")[-1]).replace("_", "-")
    # a mixture of experts named by experts x expert size (``Mixtral-8x7B``): its total, which is not the product (the
    # experts share attention and embeddings); only the published totals, other shapes are not guessed
    if (moe := _EXPERTS_X_SIZE.search(last)) is not None:
        return _MOE_TOTALS.get((int(moe.group(1)), float(moe.group(2))))
    for m in _PARAMS.finditer(last):
        if _TOKEN_COUNT.search(last[: m.start()]) or re.match(r"\s*-?tok", last[m.end():], re.I):
            continue
        val = float(m.group(1)) * (1.0 if m.group(2) in "bB" else 1e-3)
        return val if 0.01 <= val <= 2000 else None
    return None


def _params_from_names(named: list[tuple[str, str]]) -> tuple[float | None, dict[str, int]]:
    """The model size most recipes name, and how many files name each size (``{"7B": 30, "70B": 2}``).

    ``named``: (path, model name) pairs. A registry (one file naming many models) says nothing about the
    model this project trains and is left out; so is a size only a minority of recipes uses.
    """
    per_file: dict[str, set[float]] = {}
    for path, n in named:
        v = size_in_name(n)
        if v is not None and not _DEBUG_RECIPE.search(path):
            per_file.setdefault(path, set()).add(v)
    votes: dict[float, int] = {}
    for sizes in per_file.values():
        if len(sizes) > 3:  # a registry or a model zoo table
            continue
        for v in sizes:
            votes[v] = votes.get(v, 0) + 1
    if not votes:
        return None, {}
    dist = {_fmt_params(v): n for v, n in sorted(votes.items(), key=lambda kv: -kv[1])}
    best, n = max(votes.items(), key=lambda kv: (kv[1], -kv[0]))
    total = sum(votes.values())
    # names that round one size differently are one size (TinyLlama: ``tiny_LLaMA_1b`` and ``TinyLlama-1.1B``)
    near = sum(c for v, c in votes.items() if abs(v - best) <= _SAME_SIZE * max(v, best))
    if len(votes) > 1 and near * 2 <= total:  # no majority: the recipes train different sizes
        return None, dist
    return best, dist


#: a recipe kept for debugging, CI or smoke tests (prime-rl's ``configs/debug/algo/*.toml`` and ``configs/ci/``, all on a
#: 0.6B model): what it names says nothing about the size the project's runs train
_DEBUG_RECIPE = lazy_compile(r"(?i)(^|/)(debug|smoke|ci|tests?|fake|toy|dummy|mock|mini)(/|[_.-][^/]*$)")

#: two sizes named within this fraction of each other are one model size, rounded differently (1B and 1.1B; not 7B and 8B)
_SAME_SIZE = 0.10


_H_KEYS = ("hidden_size", "n_embd", "n_embed", "d_model", "model_dim", "hidden_dim", "emb_dim", "d_embed", "dim")
_L_KEYS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "num_layer")
_V_KEYS = ("vocab_size", "padded_vocab_size")
_F_KEYS = ("intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim", "inter_dim")
_E_KEYS = ("num_experts", "num_local_experts", "moe_num_experts", "n_routed_experts", "num_moe_experts")
_K_KEYS = ("num_experts_per_tok", "moe_router_topk", "moe_top_k", "top_k_experts", "moe_k", "n_activated_experts")
_EF_KEYS = ("moe_intermediate_size", "moe_ffn_hidden_size", "expert_intermediate_size", "moe_inter_dim")
#: a DeepSeek-style MoE: its first layers are dense (``n_dense_layers: 3``, HF ``first_k_dense_replace``) and every MoE layer
#: adds always-active shared experts (``n_shared_experts: 1``) beside the routed ones (DeepSeek-V3's ``config_671B.json``)
_DN_KEYS = ("n_dense_layers", "first_k_dense_replace")
_SE_KEYS = ("n_shared_experts",)
#: what only a language model's config sets beside its dimensions: its attention heads under a transformer LM's names
#: (``num_heads`` alone is any attention block's: a tabular transformer combiner's, a vision encoder's) and its context
#: length. Dimensions with none of these and no vocabulary (``combiner: {hidden_size: 64, num_layers: 3, num_heads: 8}``
#: of a tabular model's AutoML default) are not a language model's, so they size no model the run trains
_LM_SIG_KEYS = ("num_attention_heads", "n_head", "n_heads", "num_key_value_heads", "num_kv_heads", "n_kv_heads", "num_query_groups",
                "max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", *_SEQ_KEYS)
#: an encoder-decoder (T5) config: its FFN width, per-head width, head count and decoder depth
_ED_SLOTS = ((("d_ff",), "df"), (("d_kv",), "dkv"), (("num_heads",), "nh"), (("num_decoder_layers",), "dl"),
             # grouped-query attention: the query heads and the key/value heads (TeleChat2-115B: ``n_head: 64``,
             # ``num_key_value_heads: 8``), whose K and V projections are that fraction of the hidden size wide
             (("num_attention_heads", "n_head", "n_heads"), "ah"),
             (("num_key_value_heads", "num_kv_heads", "n_kv_heads", "multi_query_group_num"), "kvh"))
#: a config that declares an encoder-only text model or a vision tower (BERT as a text encoder or a Q-Former, CLIP/ViT):
#: a part of a multimodal model or a side model, never the LLM whose size decides the step
_ENCODER_ONLY_TYPE = frozenset({"bert", "roberta", "xlm-roberta", "deberta", "deberta-v2", "electra", "distilbert", "albert",
                                "camembert", "mpnet", "clip", "clip_vision_model", "siglip", "siglip_vision_model", "vit", "dinov2"})
_ENCODER_ONLY_ARCH = lazy_compile(r"^(Bert|Roberta|XLMRoberta|Deberta(V2)?|Electra|DistilBert|Albert|Camembert|MPNet|CLIPVision|"
                                r"SiglipVision|ViT|Dinov2)(Model|For\w+)?$")


@dataclass(frozen=True, slots=True)
class _Size:
    total: float  # billions
    active: float | None  # billions, for a mixture of experts
    where: str  # path:line of the hidden size
    default: bool  # set by an entry point's own code or its launch
    vocab_assumed: bool = False  # no vocabulary size next to the dimensions: 32,000 assumed for the embeddings


#: below this (10M parameters) a language model is a toy or a test fixture: the smallest real LM checkpoints (Pythia-14M) are larger
_TOY_BILLIONS = 0.01
_CODE_DEFAULT_SOURCES = ("field-default",)
_MOCK_PATH = lazy_compile(r"(^|/|_)(mock|dummy|fake)[\w-]*(\.\w+$|/)|(^|/|_)tiny[_-][\w-]*\.\w+$", re.I)


def _built_on_training_path(facts: Facts, owner: str, training: frozenset[str]) -> bool:
    """The training path builds the config class itself (``Transformer(ModelArgs(max_seq_len=...))``), so its
    field defaults are the model it trains; a class filled from a run config it does not ship is not."""
    # ``MPTConfig(**cfg)`` fills the class from a run config: its defaults say nothing; ``ModelArgs(max_seq_len=...)`` keeps them
    # and ``MambaConfig(d_model=config.d_model, ...)`` passes the dimensions from elsewhere
    dims = {k.lower() for k in (*_H_KEYS, *_L_KEYS)}
    from .rules._helpers import class_at  # the rules import this module

    # (not inside another config class's ``__init__``: MMaDA's ``LLaDAConfig(PretrainedConfig).__init__`` builds
    # ``ModelConfig()``, GPT-2's defaults, and updates it with the checkpoint's config.json that from_pretrained hands it)
    return bool(owner) and any(c.path in training and not c.star_kwargs and not c.args and not dims & {k.lower() for k in c.kwargs}
                               and not (c.func == "__init__" and (class_at(facts, c.path, c.line) or "").endswith("Config"))
                               for c in facts.calls(owner))


def _dimension_settings(facts: Facts, keys: tuple[str, ...], training: frozenset[str]) -> list:
    """Settings that state a model dimension under its own name.

    Left out: a value resolved from another name (``RoPE(dim=embed_dim)`` makes ``embed_dim`` no hidden size),
    a dataclass field default (the default of a config class, ``d_model: int = 768``, is not the model a run
    trains), and ``dim=`` as a call keyword (``torch.cat(x, dim=1)`` names an axis)."""
    names = {k.lower() for k in keys}
    demo = _library_demo_lines(facts)
    out = []
    for st in facts.settings(*keys):
        name = st.name.lower().replace("-", "_")
        if name not in names:
            continue
        if st.source == "call" and (st.path, st.line) in demo:
            continue  # a library module's self-test or demo builds that model, not the run (:func:`_library_demo_lines`)
        if st.source in _CODE_DEFAULT_SOURCES and not _built_on_training_path(facts, st.key.split(".")[0], training):
            continue
        if st.source == "call" and name == "dim":
            continue
        out.append(st)
    return out


def run_configs(facts: Facts) -> set[str]:
    """The config files the project's README or docs/ training commands pass (``--config-file examples/config_tiny_llama.yaml``),
    as written (``./`` dropped)."""
    out: set[str] = set()
    for x in facts.readme_runs():
        for v in x.script_args.values():
            if isinstance(v, str) and v.lower().endswith((".yaml", ".yml", ".json", ".toml", ".py")) and "$" not in v:
                out.add(v.strip("'\"").removeprefix("./"))
    return out


def _is_run_config(path: str, run_cfgs: set[str]) -> bool:
    return any(path == c or path.endswith("/" + c) for c in run_cfgs)


#: one entry of a literal table of model presets: ``"d12": GPTConfig(block_size=1024, n_layer=12, ...)``, ``'gpt2': dict(n_layer=12, ...)``
_PRESET_ENTRY = lazy_compile(r"""^\s*["']([\w.\-/]+)["']\s*:\s*[\w.]+\(""")


def _picked_presets(facts: Facts) -> set[str]:
    """Model names the launches pass (``--model d12``), else the option defaults: the presets a run picks from a table."""
    st = [s for s in facts.settings(*_MODEL_KEYS) if isinstance(s.value, str)]
    launched = {s.value for s in st if s.source == "launcher"}
    return launched or {s.value for s in st if s.source in ("argparse-default", "field-default")}


#: a method that builds the config of a published checkpoint to load it (nanoGPT/build-nanogpt ``GPT.from_pretrained``:
#: ``config_args = {'gpt2': dict(n_layer=12, ...), ..., 'gpt2-xl': dict(n_layer=48, n_head=25, n_embd=1600)}[model_type]``)
_CHECKPOINT_LOADER_FUNC = lazy_compile(r"^(from_pretrained|load_pretrained|from_hf|from_huggingface|load_hf_weights?)$")


def _in_checkpoint_loader(facts: Facts, st: Any) -> bool:
    """A dimension keyword of a call inside a checkpoint loader's method (see :data:`_CHECKPOINT_LOADER_FUNC`): the sizes of
    the checkpoints it can load, not of the model the run builds."""
    ff = facts.files.get(st.path)
    return ff is not None and any(c.func and _CHECKPOINT_LOADER_FUNC.match(c.func) and (c.line == st.line or st.line in c.kw_lines.values())
                                  for c in ff.calls if c.line <= st.line)


def _table_entries(facts: Facts, path: str, memo: dict[str, set[str]]) -> set[str]:
    """The names of a preset table's entries in one file (llm.c ``{"d12": GPTConfig(...), "d24": ...}``), memoised."""
    if path not in memo:
        ff = facts.files.get(path)
        memo[path] = {m.group(1) for c in (ff.calls if ff is not None else ()) if (m := _PRESET_ENTRY.match(c.text))}
    return memo[path]


def _sizes_from_config(facts: Facts, training: frozenset[str]) -> list[_Size]:
    """Sizes from model dimensions set together in one place (a config file, a launch command, a script).

    A place that sets one dimension to several values (a table of presets, a file of model builders) names
    many models, not the one a run trains, and is left out."""
    groups: dict[tuple[str, str], dict[str, float]] = {}
    seen: dict[tuple[str, str], dict[str, set[float]]] = {}
    where: dict[tuple[str, str], str] = {}
    picked = _picked_presets(facts)
    entries: dict[str, set[str]] = {}
    # a vision tower's config built in a call that also sets its patch or image size (Mantis ``configuration_llava.py``:
    # ``CONFIG_MAPPING["clip_vision_model"](hidden_size=1024, patch_size=14, image_size=336, num_hidden_layers=24,
    # vocab_size=32000)``, a CLIP ViT-L default passed a vocabulary anyway): its dimensions size the image encoder
    image_kw = [(st.path, st.key.split("(", 1)[0], st.line) for st in facts.settings("patch_size", "image_size")
                if st.source == "call"]

    def vision_call(st: Any) -> bool:
        head = st.key.split("(", 1)[0]
        return st.source == "call" and any(p == st.path and k == head and abs(ln - st.line) <= 12 for p, k, ln in image_kw)

    for keys, slot in ((_H_KEYS, "h"), (_L_KEYS, "l"), (_V_KEYS, "v"), (_F_KEYS, "f"), (_E_KEYS, "e"), (_K_KEYS, "k"), (_EF_KEYS, "ef"), (_DN_KEYS, "dn"), (_SE_KEYS, "se"),
                       *_ED_SLOTS, (_LM_SIG_KEYS, "lm")):
        for st in _dimension_settings(facts, keys, training):
            v = as_number(st.value)
            if not v or v < 1 or (slot == "h" and v < 64):
                continue
            if image_kw and slot in ("h", "l", "v") and vision_call(st):
                continue
            if st.source == "call" and _in_checkpoint_loader(facts, st):
                continue
            # one launch command is one group (its flags sit on their own lines); a file is one group otherwise; an entry of
            # a preset table (llm.c ``{"d12": GPTConfig(n_layer=12, n_embd=768, ...), "d24": ...}[args.model]``) is its own
            # group when a launch picks that preset (``--model d12``); the others stay in their file's group, which their
            # several values then leave out as a table
            preset = _PRESET_ENTRY.match(st.text) if st.source == "call" else None
            if preset is not None and preset.group(1) not in picked:
                if picked & _table_entries(facts, st.path, entries):
                    continue  # a launch picks another entry of this table: this one is an alternative no run trains
                preset = None
            g = (st.path, st.text if st.source == "launcher" else f"preset:{preset.group(1)}" if preset else "")
            seen.setdefault(g, {}).setdefault(slot, set()).add(v)
            if slot not in groups.setdefault(g, {}):
                groups[g][slot] = v
                if slot == "h":
                    where[g] = f"{st.path}:{st.line}"
    groups = {g: d for g, d in groups.items() if len(seen[g].get("h", ())) <= 1 and len(seen[g].get("l", ())) <= 1}
    # with a known training path, a script off it (a converter building a tiny test model, a sizing notebook, a mock
    # config) does not say what the project trains; config files and launch scripts still do
    if training:
        groups = {g: d for g, d in groups.items()
                  if g[0] in training or (not g[0].endswith((".py", ".ipynb")) and not _WEIGHTS_ONLY_PATH.search(g[0]))}
    # a mock/tiny test model is not the model, unless the project's README runs it (nanotron's quick start trains
    # ``examples/config_tiny_llama.yaml``, a 28-layer model despite its name)
    run_cfgs = run_configs(facts)
    groups = {g: d for g, d in groups.items() if not _MOCK_PATH.search(g[0]) or _is_run_config(g[0], run_cfgs)}
    encoders = _encoder_only_files(facts)
    groups = {g: d for g, d in groups.items() if g[0] not in encoders}
    # a vision tower's config (LLaVA-NeXT ``SigLipVisionConfig``: hidden 1152, 27 layers, 16 heads beside image_size and
    # patch_size, no vocabulary) sizes the image encoder, not the language model trained on its features
    vision = {st.path for st in facts.settings("patch_size", "image_size", "num_channels", "vision_patch_size")}
    groups = {g: d for g, d in groups.items() if not (g[0] in vision and not d.get("v"))}
    enc_dec = {s.path for s in facts.settings("is_encoder_decoder") if truthy(s.value) is True}
    gated = {s.path for s in facts.settings("feed_forward_proj", "is_gated_act")
             if truthy(s.value) is True or (isinstance(s.value, str) and s.value.startswith("gated"))}
    out: list[_Size] = []
    # (a vocabulary of -1 is "from the tokenizer", Meta's ``params.json``: OneLLM's ``"vocab_size": -1``; no size)
    repo_vocab = {v for st in facts.settings(*_V_KEYS) if (v := as_number(st.value)) and v > 0}
    # the training path's own vocabulary (nanoGPT: 50,257 for GPT-2 weights, 50,304 padded): the largest it sets
    train_vocab = {v for st in facts.settings(*_V_KEYS) if st.path in training and (v := as_number(st.value)) and v > 0}
    tied = _ties_embeddings(facts, training)
    # a config file that says whether its own model ties them (nanotron ``model_config.tie_word_embeddings: true``)
    tie_file = {st.path: truthy(st.value) for st in facts.settings("tie_word_embeddings", "tie_embeddings", "weight_tying")
                if truthy(st.value) is not None and not st.path.endswith((".py", ".ipynb"))}
    for g, d in groups.items():
        h, layers = d.get("h"), d.get("l")
        if not h or not layers or h < 64 or layers > 1000:
            continue
        if not d.get("v") and not d.get("lm") and not d.get("dl"):
            continue  # no vocabulary, LM attention heads or context length beside the dimensions: not a language model's config
        vocab = d.get("v") or (next(iter(repo_vocab)) if len(repo_vocab) == 1 else (max(train_vocab) if train_vocab else None))
        assumed = vocab is None
        vocab = vocab or 32000
        ffn = d.get("f") or 4 * h
        attn = 4 * h * h
        heads, kv_heads = d.get("ah"), d.get("kvh")
        if heads and kv_heads and 0 < kv_heads < heads:
            attn = 2 * h * h + 2 * h * (h * kv_heads / heads)  # Q and O full width; K and V one head group per KV head
        experts, k = d.get("e"), d.get("k")
        emb = (1 if tie_file.get(g[0], tied) else 2) * vocab * h  # input embeddings and output head, one matrix when tied
        if d.get("dl") or g[0] in enc_dec:
            # encoder-decoder (T5): attention is heads x d_kv wide; the decoder adds cross-attention; a non-gated FFN is
            # two matrices; one shared embedding unless the head is untied
            inner = (d.get("dkv") or 0) * (d.get("nh") or 0) or h
            attn = 4 * h * inner
            mlp = (3 if g[0] in gated else 2) * h * (d.get("df") or ffn)
            total = layers * (attn + mlp) + (d.get("dl") or layers) * (2 * attn + mlp) + vocab * h
            out.append(_Size(total / 1e9, None, where.get(g, g[0]), g[0] in training, assumed))
            continue
        if experts and experts > 1:
            ef = d.get("ef") or ffn
            mlp = 3 * h * ef
            dense = min(d.get("dn") or 0, layers)  # (the dense layers' FFN is the dense width, ``inter_dim``)
            shared = d.get("se") or 0
            dense_mlp = dense * (3 * h * ffn if ffn != 4 * h else 8 * h * h)
            total = layers * attn + dense_mlp + (layers - dense) * (experts + shared) * mlp + emb
            active = layers * attn + dense_mlp + (layers - dense) * (k + shared) * mlp + emb if k else None
        else:
            total = layers * (attn + (3 * h * ffn if ffn != 4 * h else 8 * h * h)) + emb
            active = None
        out.append(_Size(total / 1e9, active / 1e9 if active else None, where.get(g, g[0]), g[0] in training, assumed))
    return out


def _encoder_only_files(facts: Facts) -> set[str]:
    """Config files that declare an encoder-only model (``"architectures": ["BertModel"]``, ``"model_type": "bert"``)."""
    out = {s.path for s in facts.settings("model_type") if isinstance(s.value, str) and s.value.lower() in _ENCODER_ONLY_TYPE}
    for s in facts.settings("architectures"):
        names = s.value if isinstance(s.value, (list, tuple)) else (s.value,)
        if names and all(isinstance(n, str) and _ENCODER_ONLY_ARCH.match(n) for n in names):
            out.add(s.path)
    return {p for p in out if not p.endswith((".py", ".ipynb"))}


_EMB_NAMES = lazy_compile(r"(wte|embed\w*|tok_embeddings|word_embeddings)\.weight$")
_HEAD_NAMES = lazy_compile(r"(lm_head|output|head)\.weight$")


def _ties_embeddings(facts: Facts, training: frozenset[str]) -> bool:
    """The training path ties the output head to the input embeddings (``self.transformer.wte.weight =
    self.lm_head.weight``, ``tie_word_embeddings: true``): one vocabulary matrix, not two."""
    for a in facts.records("attr_assigns"):
        if training and a.path not in training:
            continue
        value = getattr(a.value, "text", None)
        if isinstance(value, str) and ((_EMB_NAMES.search(a.target) and _HEAD_NAMES.search(value))
                                       or (_HEAD_NAMES.search(a.target) and _EMB_NAMES.search(value))):
            return True
    return any(truthy(s.value) is True and (not training or s.path in training)
               for s in facts.settings("tie_word_embeddings", "tie_embeddings", "weight_tying"))


def _fmt_params(b: float) -> str:
    if b >= 1:
        return f"{b:.0f}B" if abs(b - round(b)) < 0.05 else f"{b:.1f}B"
    return f"{b * 1000:.0f}M"


_WEIGHTS_ONLY_FUNC = lazy_compile(r"(from_pretrained|from_hf|to_hf|load|convert|download|export|import|hf_|merge)", re.I)
#: (OLMo-core keeps its HF interop in ``nn/hf/`` (config and checkpoint conversion) and ``scripts/merge_hf_checkpoints.py``)
_WEIGHTS_ONLY_PATH = lazy_compile(r"(^|/)(convert|export|download|prepare|conversion|checkpoint_conv|hf_|merge)\w*|(^|/)(tools?|hf)/", re.I)
_EVAL_FUNC = lazy_compile(r"(?i)^_*(evaluate|eval)(_\w+)?$")
_TRANSFORMERS_TRAINING = ("Trainer", "TrainingArguments", "Seq2SeqTrainer", "Seq2SeqTrainingArguments", "HfArgumentParser",
                          "PreTrainedModel", "get_scheduler", "get_cosine_schedule_with_warmup", "get_linear_schedule_with_warmup")


def transformers_weights_only(facts: Facts) -> list[str]:
    """Where transformers is used, when every use only loads or converts weights (nanoGPT's ``GPT.from_pretrained``
    pulling GPT-2 from the hub); empty when it is used for training (a Trainer, a model class trained here)."""
    calls = [c for c in facts.calls("transformers.*")]
    refs = [r for r in facts.refs("transformers.*")]
    if not calls and not refs:
        return []
    if facts.uses(*(f"transformers.{n}" for n in _TRANSFORMERS_TRAINING)):
        return []
    for c in calls:
        # a tokenizer is the data preparation's tool (llm.c ``dev/data/fineweb.py``: ``AutoTokenizer.from_pretrained`` in
        # ``tokenize_llama``), and a benchmark scored on the hub's weights (``hellaswag.py``'s ``evaluate``) trains nothing
        if not (_WEIGHTS_ONLY_FUNC.search(c.func or "") or _WEIGHTS_ONLY_PATH.search(c.path) or _TOKENIZER_CLASS.search(c.name)
                or _EVAL_FUNC.match(c.func or "")):
            return []
    for r in refs:
        if not _WEIGHTS_ONLY_PATH.search(r.path) and r.path not in {c.path for c in calls}:
            return []
    return [f"{c.path}:{c.line}" for c in calls[:3]]


#: accelerate's big-model loading helpers: they build or place a model's weights, they do not run training
_ACCELERATE_LOADING = frozenset({"init_empty_weights", "init_on_device", "infer_auto_device_map", "load_checkpoint_and_dispatch",
                                 "load_checkpoint_in_model", "dispatch_model", "get_balanced_memory",
                                 # seeding every RNG (SpecForge ``from accelerate.utils import set_seed``): a utility, not the
                                 # framework that runs the training
                                 "set_seed"})


def availability_probe(f: Facts, imp: Import) -> bool:
    """``try: import accelerate  # noqa: F401`` / ``except ImportError:``: a module imported only to learn whether it is
    installed (fairseq2 0.8.1 checks for accelerate before passing ``device_map="auto"`` to an HF loader), whose name
    nothing in the file then uses. It wires nothing."""
    if not getattr(imp, "optional", False) or imp.name is not None or imp.path not in f.files:
        return False
    mod = str(imp.module or "")
    ff = f.files[imp.path]
    return bool(mod) and not any(c.name == mod or c.name.startswith(mod + ".") for c in ff.calls)


def accelerate_loading_only(facts: Facts) -> list[str]:
    """Where accelerate is imported, when every import is one of its model-loading helpers (olmo-core's HF checkpoint
    converter: ``from accelerate import init_empty_weights``), its ``set_seed`` or a probe of whether it is installed
    (:func:`availability_probe`); empty when anything else of it is used
    (``Accelerator``, a plugin, a launch)."""
    imps = facts.imports("accelerate")
    if not imps or any(i.name not in _ACCELERATE_LOADING and not availability_probe(facts, i) for i in imps):
        return []
    if any(c.name.rsplit(".", 1)[-1] not in _ACCELERATE_LOADING for c in facts.calls("accelerate.*") if c.name.startswith("accelerate.")):
        return []
    return [f"{i.path}:{i.line}" for i in imps[:3]]


#: DeepSpeed's utilities a project may import without training on DeepSpeed: the FLOPs profiler (based's
#: ``from deepspeed.profiling.flops_profiler import get_model_profile`` in a callback) and its checkpoint converters
_DEEPSPEED_UTILITY = lazy_compile(r"^deepspeed\.(profiling|utils\.zero_to_fp32|checkpoint)(\.|$)")


def deepspeed_utility_only(facts: Facts) -> list[str]:
    """Where DeepSpeed is imported, when every import is one of its utilities (:data:`_DEEPSPEED_UTILITY`) and no launch,
    DeepSpeed config or call of its engine uses it; empty otherwise."""
    imps = facts.imports("deepspeed")
    if not imps or any(not _DEEPSPEED_UTILITY.match(i.full) for i in imps):
        return []
    if facts.launches("deepspeed") or facts.config("zero_optimization") or facts.calls("deepspeed.initialize", "deepspeed.init_distributed"):
        return []
    return [f"{i.path}:{i.line}" for i in imps[:3]]


#: ``/path/to/DeepSeek-V3.1-source``, ``<your model>``, ``${MODEL}``, ``{model_path}``: a value to fill in, not a model; the
#: role an RL/distillation system gives a model (``MFCDef(model_name="actor")``, ``ModelName("critic", 0)``) or a chat
#: template gives a speaker (``{"human": "user", "model": "assistant"}``) names no checkpoint
_PLACEHOLDER_NAME = lazy_compile(r"^\?+$|^\|.*\|$|\.\.\.|(^|[/_])path_to[_/]|(^|/)path/to/|(^|/)(model[_-]?)?path$|<[^>]*>|\$\{?\w|\{\w*\}|(^|[/_-])your[_-]|^\.\.?/|^(model|tokenizer|base_model|base|auto|none|null|empty|default|all)$|^(cl100k|o200k|p50k|r50k)_base$"
                               r"|^(actor|critic|ref|reference|reward|rew|policy|value|teacher|student|assistant|user|system|human)$", re.I)


#: closed-weight models served only by their vendors' APIs (a config generator's ``--model claude-sonnet-4-20250514``, a
#: data-synthesis step's ``gemini-flash-lite-latest``): nothing can train them, so they never name the trained model
_HOSTED_NAME = lazy_compile(r"^(anthropic/|openai/|google/)?(claude-|gpt-(3\.5|4)|o[134](-|$)|gemini-|text-(davinci|embedding)-|chatgpt-)", re.I)
#: a value that spells a setting's own name (``MODEL_TYPE = "model_type"``) or a run label (``--model_name`` default
#: ``"run"``, "name for the model"): it names a key or an experiment, not a checkpoint
_KEY_OR_RUN_NAME = lazy_compile(r"^(model_type|model_name|model_path|model_id|model_name_or_path|run|experiment|exp|my[_-]?model)$", re.I)


#: ``model: str = Field("xgboost")`` of a tabular trainer: a classical estimator or its library, not a model checkpoint
_ESTIMATOR_NAME = lazy_compile(r"^(xgboost|lightgbm|catboost|sklearn|scikit[-_]learn|random[_-]?forest|extra[_-]?trees|"
                             r"decision[_-]?tree|logistic[_-]?regression|linear[_-]?regression|ridge|lasso|svm|svc|svr|knn)$", re.I)


def _fsdp_configured(facts: Facts) -> bool:
    """An FSDP setting in a config: ``fsdp_sharding_strategy``, or an ``fsdp_config`` with something in it (BELLE's
    accelerate configs keep an empty ``fsdp_config: {}`` beside ``distributed_type: DEEPSPEED``: no FSDP)."""
    if facts.config("fsdp_sharding_strategy"):
        return True
    for e in facts.config("fsdp_config"):
        if not isinstance(e.value, Container) or e.value.kind != "map":
            return e.value not in (None, "", "{}")
        depth = len(e.keys)
        ff = facts.files.get(e.path)
        if ff is not None and any(len(c.keys) > depth and tuple(c.keys[:depth]) == tuple(e.keys) for c in ff.configs):
            return True
    return False


#: a script named for inference, generation or a demo (Meta's llama3 ``example_text_completion.py``, ``example_chat_completion.py``)
_INFERENCE_SCRIPT = lazy_compile(r"(^|[_-])(infer|inference|generate|generation|predict|prediction|serve|server|serving|"
                               r"completion|chat|chatbot|demo)([_-]|\.py$)", re.I)


_GPU_COUNT_KEYS = frozenset({"nproc_per_node", "num_gpus", "gpus", "num_processes", "nproc-per-node"})


def _visible_gpus(launch: Any, facts: Facts | None = None) -> int | None:
    """The GPUs a launch with no process count of its own runs on, from the devices it names: DeepSpeed's ``--include
    localhost:4,5,6,7`` (TinyLLaVA: four), else the ``CUDA_VISIBLE_DEVICES`` it sets, which the DeepSpeed launcher uses
    when no ``--include``/``--num_gpus`` is given, and which leaves a plain ``python`` run one GPU when it names one
    (ChatGLM-Efficient-Tuning ``CUDA_VISIBLE_DEVICES=0 python ../src/train_bash.py``). The devices may be exported above
    the launch in its script (Zhongjing's ``export CUDA_VISIBLE_DEVICES=0,1,2,3`` before ``accelerate launch``, which
    without a config file or ``--num_processes`` starts one process per visible GPU)."""
    if _GPU_COUNT_KEYS & set(launch.launcher_args):
        return None
    inc = launch.launcher_args.get("include") if launch.launcher == "deepspeed" else None
    if isinstance(inc, str):
        host, _, ids = inc.strip("'\"").partition(":")
        parts = ids.split(",")
        return len(parts) if host and "@" not in inc and all(x.strip().isdigit() for x in parts) else None
    cvd = str(launch.env.get("CUDA_VISIBLE_DEVICES", "")).strip("'\"")
    if not cvd and facts is not None:
        above = [e for e in facts.envs("CUDA_VISIBLE_DEVICES") if e.path == launch.path and e.line < launch.line and e.source == "shell"]
        cvd = str(above[-1].value).strip("'\"") if above else ""
    parts = cvd.split(",")
    if not cvd or not all(x.strip().isdigit() for x in parts):
        return None
    if launch.launcher == "deepspeed" and "num_nodes" not in launch.launcher_args and "hostfile" not in launch.launcher_args:
        return len(parts)
    if launch.launcher == "accelerate" and not {"config_file", "num_machines", "multi_gpu"} & set(launch.launcher_args):
        return len(parts)
    return 1 if launch.launcher == "python" and len(parts) == 1 else None


def _inference_launch(facts: Facts, launch: Any) -> bool:
    """A distributed launch of a script named for inference whose own code runs no training step (llama3's README:
    ``torchrun --nproc_per_node 1 example_text_completion.py``, model parallel across GPUs for generation only), or an HF
    training entry run with ``--do_predict`` and no ``--do_train``."""
    script = str(launch.script or "").strip("'\"").removeprefix("./")
    name = script.rsplit("/", 1)[-1]
    if truthy(launch.script_args.get("do_predict")) and not truthy(launch.script_args.get("do_train")):
        return True  # a batch prediction through the training entry (``train_bash.py --do_predict``, CareGPT's README)
    if not name.endswith(".py") or not _INFERENCE_SCRIPT.search(name):
        return False
    ff = facts.files.get(script) or next((facts.files[p] for p in facts.paths_named(name)), None)
    # (an optimizer ``step()`` too: the roles' reading of a script that trains itself, and of one that steps by hand)
    return ff is not None and not trains_itself(ff) and not any(c.short in ("step", "zero_grad") for c in ff.calls)


def _hf_trainer_seen(facts: Facts) -> bool:
    """transformers' or TRL's Trainer (or one of their trainers) imported or called in scope: it runs on Accelerate."""
    return any((i.name or "").endswith("Trainer") for i in facts.imports("transformers", "trl")) or any(
        r.name.endswith("Trainer") for r in facts.refs("transformers.*", "trl.*")) or any(
        c.short.endswith("Trainer") for c in facts.calls("transformers.*", "trl.*")) or any(
        b.startswith(("transformers.", "trl.")) and b.endswith("Trainer") for ff in facts.files.values() for k in ff.classes for b in k.bases)


def detect_project(facts: Facts, hardware: str | None = None, training: Iterable[str] | None = None) -> Project:
    """The overview, from the facts in scope. ``training``: the files on the training path (their own settings
    are the project's defaults when recipes disagree); None when the roles were not classified."""
    p = Project(hardware=hardware)
    roles_known = training is not None
    train_paths = frozenset(training or ())
    p.training_files = train_paths
    launchers = {x.launcher for x in facts.launches()}
    own_python = bool(facts.imports("torch", "transformers"))
    declared: set[str] = set()  # frameworks seen only as dependencies
    for fw, (mods, deps, launch) in FRAMEWORKS.items():
        if facts.imports(*mods) or launchers.intersection(launch):
            p.frameworks.append(fw)
        elif deps and facts.deps(*deps):
            declared.add(fw)
            if fw in _IMPORTED_LIBRARIES and own_python:
                # a library the project's own PyTorch code never imports (minimind lists ``trl==0.13.0`` in requirements.txt
                # and writes its DPO/GRPO loops by hand): declared, not used; a recipe that names it still counts (below)
                p.notes.setdefault("declared_only", []).append(fw)
                continue
            if fw == "accelerate" and own_python and not _hf_trainer_seen(facts):
                # Accelerate in pyproject.toml beside a hand-written loop that never imports it (OmniQuant's ``main.py``
                # calibrates layer by layer; B3: "only a dependency"), and no HF Trainer that would run on it
                p.notes.setdefault("declared_only", []).append(fw)
                continue
            if fw == "liger-kernel" and own_python and not any(truthy(s.value) for s in facts.settings(*_LIGER_SWITCHES)):
                # Liger in requirements.txt and the Dockerfile, never imported nor switched on by a Trainer flag (MMR1's verl
                # fork): installed, not used (D5 says the same)
                p.notes.setdefault("declared_only", []).append(fw)
                continue
            p.frameworks.append(fw)
    weights_only = transformers_weights_only(facts) if "transformers" in p.frameworks else []
    if weights_only and not {"trl", "peft", "llamafactory", "axolotl"} & set(p.frameworks):
        p.frameworks.remove("transformers")
        p.notes["transformers_weights_only"] = weights_only
    accel_loading = accelerate_loading_only(facts) if "accelerate" in p.frameworks and "accelerate" not in launchers else []
    if accel_loading:
        p.frameworks.remove("accelerate")
        p.notes["accelerate_loading_only"] = accel_loading
    ds_utility = deepspeed_utility_only(facts) if "deepspeed" in p.frameworks and "deepspeed" not in launchers else []
    if ds_utility:
        p.frameworks.remove("deepspeed")
        p.notes["deepspeed_utility_only"] = ds_utility
    if "fsdp" not in p.frameworks and (_fsdp_configured(facts) or facts.refs("FullyShardedDataParallel")):
        p.frameworks.append("fsdp")
    if "deepspeed" not in p.frameworks and facts.config("zero_optimization"):
        p.frameworks.append("deepspeed")
    p.frameworks += sorted(_recipe_frameworks(facts) - set(p.frameworks))
    if "megatron" not in p.frameworks and _megatron_launched(facts):
        # a Megatron checkout the launches run from outside the repository (octopack ``torchrun ... finetune_mtf.py
        # --tensor-model-parallel-size 4 --num-layers 40 ...``): nothing here imports it, but it trains (B2's reading)
        p.frameworks.append("megatron")
    # a torchtune recipe config (``model: {_component_: torchtune.models.llama3_1.lora_llama3_1_8b}``) run by ``tune run``
    if "torchtune" not in p.frameworks and any(isinstance(e.value, str) and e.value.startswith("torchtune.")
                                               for e in facts.config("_component_")):
        p.frameworks.append("torchtune")
    p.frameworks.sort()
    if not p.frameworks and any(i.path in train_paths for i in facts.imports("torch")):
        p.notes["plain_torch"] = True  # the training path is PyTorch written by hand (llm.c's ``train_gpt2.py``, nanoGPT)

    named = _named_models(facts, train_paths)
    names = _strings(facts, _MODEL_KEYS)
    # the models the recipes name most often first (the overview shows three); documentation placeholders, relative
    # paths (``./tests/assets/tokenizer``), generic words (``model``, ``EMPTY``) and tiktoken encodings (``cl100k_base``)
    # name no model
    counts: dict[str, int] = {}
    rejected = _not_model_values(facts)
    for n in map(placeholder_tail, names):
        if _model_like(n, rejected):
            counts[n] = counts.get(n, 0) + 1
    # a default every launch overrides names no model of the run (LongLoRA: ``EleutherAI/pythia-1.4b-deduped`` in both
    # fine-tuning scripts' arguments, replaced by the README commands' ``--model_name_or_path``)
    model_settings = facts.settings(*_MODEL_KEYS)
    overridden = _overridden_defaults(model_settings, train_paths)
    doc_replaced = _doc_replaced_defaults(facts)
    # (a model option's value may be a mapping: axlearn's ``model: {...}`` config blocks name no model by themselves)
    model_settings = [st for st in model_settings if isinstance(st.value, str)]
    overridden |= {id(st) for st in model_settings if (st.path, st.value) in doc_replaced}
    for st in model_settings:
        if id(st) in overridden and st.value in counts:
            counts[st.value] -= 1
            if counts[st.value] <= 0:
                del counts[st.value]
    # a model named in a training recipe (beside a learning rate or epoch count) before one named only by an evaluation,
    # judge or inference config (oumi's judges name gpt-4o more often than any model it trains)
    recipes = {x.path for x in facts.settings(*_TRAINING_KNOBS)}
    trained: dict[str, int] = {}
    for x in facts.settings(*_MODEL_KEYS):
        if x.path in recipes and isinstance(x.value, str) and x.value in counts:
            trained[x.value] = trained.get(x.value, 0) + 1
    # ... and before those, the models of the shell recipes the README runs (lmm-r1's ``bash
    # examples/scripts/lmm_r1/train_fre_text.sh`` trains Qwen2.5-VL-3B beside thirty upstream OpenRLHF scripts of Llama-3-8B)
    # (a local copy, ``./models/Qwen2.5-VL-3B-Instruct``, is the named model whose last part it keeps)
    runbook = _documented_scripts(facts)
    shown: dict[str, int] = {}
    by_tail = {n.rstrip("/").rsplit("/", 1)[-1].lower(): n for n in counts}
    for x in facts.settings(*_MODEL_KEYS) if runbook else ():
        v = placeholder_tail(x.value) if x.path in runbook and isinstance(x.value, str) else None
        n = v if v in counts else by_tail.get(v.rstrip("/").rsplit("/", 1)[-1].lower()) if v else None
        if n is not None:
            shown[n] = shown.get(n, 0) + 1
    p.model_names = sorted(counts, key=lambda n: (-shown.get(n, 0), -trained.get(n, 0), -counts[n], n))[:10]
    # no config or code of the training path names its model, but the README's documented run does (``base_model:`` in its
    # YAML config, ``--model_name_or_path`` of its training command): that is the model the run trains, named first
    # A name the training path holds only as an option's default (FastChat ``model_name_or_path: Optional[str] =
    # field(default="facebook/opt-125m")``, Stanford Alpaca's placeholder; a serving CLI's ``--model-path`` default) or as a
    # tokenizer it loads is what the documented command replaces with its ``--model_name_or_path meta-llama/Llama-2-7b-hf``:
    # then the documented run's model is the one named
    doc_models = [(n, w) for n, w in _documented_models(facts) if n in counts or _model_like(n, rejected)]
    replaced: set[tuple[str, Any]] = set()
    if doc_models:
        replaced = {(s.path, s.value) for s in facts.settings(*_MODEL_KEYS) if s.source in ("field-default", "argparse-default")}
        loads = [(c, a) for c in facts.calls("from_pretrained") for a in c.args[:1] if isinstance(a, str)]
        replaced |= {(c.path, a) for c, a in loads if "Tokenizer" in c.name}
        replaced -= {(c.path, a) for c, a in loads if "Tokenizer" not in c.name}  # the code loads that model itself
    documented = [] if _path_names_model([x for x in named if x not in replaced], train_paths | recipes, counts) else doc_models
    if documented:
        first = list(dict.fromkeys(n for n, _ in documented))
        p.model_names = (first + [n for n in p.model_names if n not in first])[:10]
    fams: list[str] = []
    # (a template's placeholder, and a default every launch overrides, name no family of the run: EVE's
    # ``model_name_or_path: Optional[str] = field(default="facebook/opt-125m")``, LLaVA's, beside launches of Vicuna and Qwen2.5)
    replaced_names = ({v for _, v in doc_replaced} | {st.value for st in model_settings if id(st) in overridden}) - set(counts)
    # (and the model a README's training command starts from, when it is the run's: Aurora's ``./Mixtral-8x7B-Instruct-v0.1``)
    doc_names = [n for n, _ in documented if n not in names]
    for n in [*names, *doc_names]:
        if n in replaced_names:
            continue
        low = n.lower()
        for needle, fam in _FAMILIES:
            if family_in(needle, low):
                fams.append(fam)
                break
    for s in facts.settings("model_type", "architectures"):
        vals = s.value if isinstance(s.value, tuple) else (s.value,)
        for v in vals:
            if isinstance(v, str):
                low = v.lower()
                for needle, fam in _FAMILIES:
                    if family_in(needle.replace("-", "_"), low) or family_in(needle, low):
                        fams.append(fam)
                        break
    p.model_families = sorted(set(fams))

    p.multimodal = bool(
        set(p.model_families) & _MULTIMODAL_FAMILIES
        or facts.uses(*_MM_NAMES)
        # ``Qwen2VLForConditionalGeneration.from_pretrained(...)`` resolves to ``transformers.<Class>.from_pretrained``
        or facts.uses(*(f"{n}.*" for n in _MM_NAMES))
        # (a dict literal in library code off the training path is no recipe: axlearn's CLIP builder ``{"visual_encoder":
        # vision_encoder_cfg, ...}`` in ``axlearn/vision/clip.py``, which no experiment imports)
        or any(e.fmt != "python" or not train_paths or e.path in train_paths for e in facts.config(*_MM_KEYS))
        or facts.arg_options(*_MM_KEYS)
        or facts.fields(*_MM_KEYS)
        or any(set(launch.script_args) & {*_MM_KEYS, *_MM_RUN_KEYS} for launch in facts.launches())
        or any(e.fmt in ("yaml", "json") for e in facts.config(*_MM_RUN_KEYS))
        or bool(_own_vlm_classes(facts))
        or bool(_vision_in_step(facts))
        or bool(_composite_vlms(facts))
        or bool(_vision_builders(facts, train_paths) and (names or _looks_llm(facts, p)))
    )
    p.model_type = "MLLM" if p.multimodal else ("LLM" if (names or _looks_llm(facts, p)) else "unknown")
    if p.model_type == "LLM" and _encoder_models_only(facts, p):
        # every model the project names is an encoder-only checkpoint (a BERT fine-tuned for classification in a general
        # trainer's example) and nothing loads a generative language model: no LLM is known to be trained
        p.model_type = "unknown"
        p.notes["encoder_models_only"] = list(p.model_names)
    if p.model_type == "MLLM" and (dual := _dual_encoders_only(facts, p)) is not None:
        # a contrastive image-text dual encoder (OpenCLIP's CLIP/SigLIP/CoCa towers, HF ``CLIPModel``) and no generative
        # language model anywhere: multimodal, but no LLM is trained (not an MLLM)
        p.model_type = "unknown"
        p.notes["dual_encoder_only"] = f"{dual.path}:{dual.line}"

    # a name only a tokenizer is loaded from (FastChat's RWKV adapter borrows ``EleutherAI/pythia-160m``'s tokenizer) names
    # the family the vocabulary comes from, not the size of a model trained
    borrowed = _tokenizer_only_names(facts, named)
    _estimate_size(facts, p, [x for x in named if x[1] not in borrowed], train_paths, documented)

    moe_names = [n for n in names if _MOE_NAME.search(n)]
    moe_settings = [s for s in facts.settings(*_MOE_KEYS) if (as_number(s.value) or 0) > 1]
    in_code = bool(_moe_in_code(facts))
    if not in_code and _moe_code_off(facts):
        # the experts' count defaults beside layers the run never builds (open_lm ``moe_num_experts: int = 8`` in ``Params``)
        # (and the keywords of the switched-off layer's own call: TinyChart's ``MoE(..., num_experts=4, ep_size=1)`` under
        # ``getattr(config, 'load_moe_mm_projector', False)``)
        moe_settings = [s for s in moe_settings if s.source not in ("field-default", "argparse-default")
                        and not (s.source == "call" and s.key.split("(", 1)[0] in ("MoE", "MixtureOfExperts", "SparseMoeBlock"))]
    p.moe = bool(in_code or moe_settings or any(f in ("mixtral",) for f in p.model_families) or moe_names)
    if p.moe:
        # where the experts are seen, for step zero's reason: a layer or model class in code, an expert count, a model name
        named_at = [s for s in facts.settings(*_MODEL_KEYS, "model_type", "architectures")
                    if any(isinstance(v, str) and (_MOE_NAME.search(v) or "mixtral" in v.lower())
                           for v in (s.value if isinstance(s.value, tuple) else (s.value,)))]
        # a training recipe's site before an inference, evaluation or serving one
        at = sorted(_moe_in_code(facts) or moe_settings or named_at, key=lambda x: bool(_NOT_TRAIN_RUN.search(x.path)))[:1]
        if at:
            p.notes["moe_at"] = f"{at[0].path}:{at[0].line}"
    recipe_files = {s.path for s in facts.settings(*_MODEL_DIM_KEYS) if s.path.endswith((".yml", ".yaml", ".json"))}
    moe_recipes = {s.path for s in moe_settings}
    if p.moe and not in_code and moe_settings and moe_recipes <= recipe_files and len(moe_recipes) * 2 < len(recipe_files):
        # one recipe of many sets experts (GPT-NeoX: moe_num_experts in configs/125M-dmoe.yml, 1 of 59 model configs)
        p.notes["moe_minority"] = (len(moe_recipes), len(recipe_files), sorted(moe_recipes)[:3])
    elif p.moe and (not in_code or all(_defines_only(u) for u in _moe_in_code(facts))) and not moe_settings \
            and moe_names and len(moe_names) * 2 < len(names):
        # only some recipes name a mixture-of-experts model (alignment-handbook: Mixtral-8x22B in 1 of 22; LLaVA-NeXT:
        # Qwen1.5-MoE-A2.7B beside its Qwen2-7B runs, its MoE classes only defined): an option
        p.notes["moe_minority"] = (len(moe_names), len(names), sorted(set(moe_names))[:3])
    elif p.moe and not moe_settings and not moe_names and len(set(names)) >= 2 \
            and (not in_code or all(_defines_only(u) for u in _moe_in_code(facts))):
        # a model zoo's mixture-of-experts class (LLaVA-NeXT ``class LlavaMixtralForCausalLM(MixtralForCausalLM, ...)``) or a
        # supported MoE family (ms-swift) while every model the launches and recipes name is dense: an architecture
        # offered, not the run's
        u = next(iter(_moe_in_code(facts)), None)
        at = f"{u.path}:{u.line}" if u is not None else p.notes.get("moe_at") or "a supported model family"
        shown = sorted({n for n in names if "/" in n}) or sorted(set(names))  # hub ids first (``Qwen/Qwen2.5-3B-Instruct``)
        p.notes["moe_option"] = (at, len(set(names)), shown[:3])
    p.does_inference = _does_inference(facts, p)
    if missing := facts._s.get("missing_submodules"):
        # code the repository keeps in submodules this checkout lacks is not audited: the report says which (MAP-NEO's
        # pre-training code is its ``Megatron-LM-NEO`` submodule; a GitHub tarball never includes one)
        p.notes["missing_submodules"] = [{"path": path, "url": url, "line": line} for path, url, line in missing]
    p.alignment = bool(
        facts.calls(*_ALIGN_TRAINERS) or facts.imports(*(f"trl.{t}" for t in _ALIGN_TRAINERS))
        # (LLaVA-NeXT ``from trl.trainer import DPOTrainer``, subclassed as its LLaVADPOTrainer)
        or facts.imports(*(f"trl.trainer.{t}" for t in _ALIGN_TRAINERS))
        or any(isinstance(s.value, str) and _ALIGN_WORDS.match(s.value) for s in facts.settings(*_ALIGN_SELECTORS))
        or facts.settings("teacher_model", "teacher_model_name_or_path", "distill_alpha", "kd_temperature", "beta_dpo", "dpo_beta")
        # the project's own knowledge-distillation trainer (LLM-QAT's and BitDistiller's ``class KDTrainer(Trainer)``, whose
        # loss is a KL divergence against a frozen teacher's logits)
        or any(_KD_TRAINER.match(k.name) and any(b.endswith("Trainer") for b in k.bases) and not _TEST_PATH_RE.search(k.path)
               for k in facts.records("classes"))
        or facts.uses("liger_kernel.chunked_loss.*", "LigerFusedLinearJSD", "LigerKLDIVLoss", "LigerJSD")
        or facts.settings("adv_estimator")
        or any(_ALIGN_SCRIPTS.search(f"{launch.script or ''} {launch.text}") for launch in facts.launches())
        # a launch that distils from a teacher (Megatron-DeepSpeed ``--kd --kd-alpha-ce 1 --load-teacher $TEACHER``)
        or any(truthy(launch.script_args.get("kd")) or launch.script_args.get("load_teacher") for launch in facts.launches())
        # the project's own experiment config class for PPO/DPO/GRPO... (realhf ``class PPOConfig(CommonExperimentConfig)``
        # with its fields, registered as a quickstart command): the project runs that alignment training
        or any(x.owner in _ALIGN_CONFIGS and not _TEST_PATH_RE.search(x.path) for x in facts.records("fields"))
        # the project's own trainer module for one of those algorithms, which steps an optimizer (NeMo-Aligner's
        # ``DPOTrainer.train_single_step``: ``self.optimizer.step(closure=None)`` in ``algorithms/dpo.py``); the example
        # scripts that construct it are not shipped
        or bool(alignment_steps(facts))
        # a preference loss of the DPO family written out (SPIN's ``SPINTrainer.spin_loss``: ``losses =
        # -F.logsigmoid(self.beta * logits)`` over policy and reference log-ratios, in a plain ``Trainer`` subclass)
        or bool(preference_losses(facts))
        # an online-alignment library's learner (Oat's ``PPOLearner``, ``DAPLearner``): RL or preference training
        or bool(facts.imports(*_LEARNER_MODULES))
    )
    # a checkpoint load: Hugging Face's ``from_pretrained``, or the project's own loader of released weights (Mamba's
    # ``MambaLMHeadModel.from_pretrained`` reading an HF state dict)
    loads_weights = bool((facts.calls("from_pretrained") and not _only_tokenizer_loads(facts)) or own_pretrained_loader(facts) is not None)
    others = _finetunes_otherwise(facts, p, declared - _recipe_frameworks(facts))
    p.finetunes = loads_weights or others
    p.pretrains = bool(
        fresh_models(facts) or "megatron" in p.frameworks or "nanotron" in p.frameworks
        or any(_pretrain_file(path) for path in facts.files)
    )
    # (a sampler's denoising step, ``self.scheduler.step(noise_pred, t, latents)`` in a diffusion pipeline, takes the model's
    # output and the sample; an LR scheduler's ``step`` takes at most an epoch)
    steps = [c for c in facts.calls("backward", "Trainer", "SFTTrainer", "fit", "train", "optimizer.step", "step", "pretrain")
             if not (c.short == "step" and len(c.args) >= 2 and "sched" in c.name.lower())]
    handed_on = [c for c in steps if _not_a_training_call(c)]
    optional_megatron = p.pretrains and _pretrains_only_by_optional_megatron(facts, p)
    # a checkpoint loaded and nothing else that trains (StreamingLLM: ``from_pretrained`` and a hand-written decode loop; no
    # backward, trainer, optimizer step or training launch anywhere) is generation, not a fine-tuning run
    # (a README that runs a training script, ModelCenter's ``torchrun ... train.py`` over its BMTrain layers, documents the
    # training its library is for)
    loads_only = loads_weights and len(handed_on) == len(steps) and not others and not any(
        h.kind == "command" and isinstance(h.value, str) and training_script_name(h.value.rsplit("/", 1)[-1])
        for h in facts.records("doc_hints"))
    from .rules._helpers import hf_trainer_subclasses  # the rules import this module

    # models built from their configuration and adapters attached, with nothing that trains them (Emu: its own
    # ``from_pretrained`` classmethods build the skeleton with ``from_config`` and load the released weights, ``get_peft_model``
    # wraps the LM to load an instruction-tuned checkpoint; no backward, optimizer step, trainer, training launch,
    # documented training command, training entry point or trainer subclass, whose ``train()`` its users call, anywhere)
    # is an inference release, neither pre-training nor fine-tuning code
    trains_nothing = (not steps and not train_paths and not facts.launches() and not p.alignment and "megatron" not in p.frameworks
                      and "nanotron" not in p.frameworks
                      and not any(_pretrain_file(path) or (_finetune_path(path) and path.endswith(".py")) for path in facts.files)
                      and not any(h.kind == "command" for h in facts.records("doc_hints")) and not hf_trainer_subclasses(facts)
                      # (a recipe or launch that sets the optimisation, ``lr: 0.0001`` beside ``model_name_or_path``, is a run's)
                      and not any(s.source in ("config", "launcher") for s in facts.settings(*_OPTIM_KEYS)))
    p.does_training = bool(
        len(handed_on) < len(steps)
        or (not trains_nothing and ((p.finetunes and not loads_only) or (p.pretrains and not optional_megatron)))
        or _lightning_steps(facts)
        or any(not _inference_launch(facts, x) for x in
               facts.launches("torchrun", "deepspeed", "accelerate", "colossalai", "llamafactory", "axolotl", "torchtune"))
        # a training step compiled by a JAX jit on the training path (LWM ``sharded_train_step = pjit(train_step, ...)``,
        # run by ``scripts/run_train_text.sh``): JAX computes and applies the gradients there, no ``backward()`` call
        or any(d.path in train_paths for d in jax_jitted_steps(facts))
    )
    if p.does_training and roles_known and _unstarted_training(facts, p, train_paths, steps):
        # a training loop kept from the codebase a project grew out of, which nothing starts (MovieChat: LAVIS's runner and
        # ``BaseTask.train_step`` beside an ``inference.py``; no train script, launch, documented training command or entry
        # point, and no package whose users would call it): the project runs inference only
        p.does_training = False
        p.notes["infrastructure_only"] = [f"`{c.text}` ({c.path}:{c.line}), which nothing starts" for c in steps[:3]]
    learners = _library_learners(facts, train_paths)
    if learners:
        i = learners[0]
        p.notes["library_learner"] = f"`{i.name}` from `{i.module}`, {i.path}:{i.line}"
    hooks = [] if p.does_training else _trainer_step_hooks(facts)
    if hooks:
        # a library of HF Trainer subclasses whose ``Trainer(...).train()`` is its users' script: training code, on a model
        # the user passes in (the project neither loads nor builds one): cited where the fine-tuning checks are not judged
        p.does_training = True
        from .rules._helpers import class_at  # the rules import this module

        c = hooks[0]
        p.notes["user_model_trainer"] = [f"`{c.func}` of `{class_at(facts, c.path, c.line)}` ({c.path}:{c.line})"]
    if not p.does_training and (handed_on or optional_megatron):
        # what looked like training and is infrastructure around a user's run: cited when the checks are not judged
        sites = [f"`{c.text}` ({c.path}:{c.line})" for c in handed_on[:3]]
        if optional_megatron:
            i = facts.imports("megatron")[0]
            sites.append(f"Megatron imported only if installed (`{i.text.strip()}`, {i.path}:{i.line})")
        p.notes["infrastructure_only"] = sites
    p.adapter_training = bool(
        any(isinstance(s.value, str) and s.value.lower() in ("lora", "qlora") for s in facts.settings("finetuning_type", "adapter", "train_type", "peft_type"))
        or facts.calls("LoraConfig", "get_peft_model", "prepare_model_for_kbit_training")
    )
    _topology(facts, p, train_paths)
    _seq_len(facts, p, train_paths)
    jax = jax_training(facts)
    if jax:
        p.notes["jax_training"] = jax
        if "jax" not in p.frameworks:  # the training framework: the step is an XLA program (a transformers Flax model too)
            p.frameworks = sorted([*p.frameworks, "jax"])
    return p


#: a file of an inference, evaluation or serving run, not of training
_NOT_TRAIN_RUN = lazy_compile(r"(?i)infer|eval|serv(e|ing)|generat|benchmark|(^|/)tests?/")

#: JAX's compilers: a function under one of these runs as one XLA program
JAX_JITS = ("jax.jit", "jax.pjit", "jax.experimental.pjit.pjit", "jax.pmap", "equinox.filter_jit", "equinox.filter_pmap",
            "haliax.named_jit", "haliax.partitioning.named_jit", "flax.nnx.jit")
#: the function a JAX compiler wraps is the training step (``train_step``, ``update_fn``, ``_train_step``, ``p_train_step``)
TRAIN_STEP_NAME = lazy_compile(r"^_*(p_)?(train_?step|train_?update|update_?step|train_?fn|step_?fn|train_?batch)(_\w+)?$|^_*(train|update)$", re.I)
_NOT_TRAIN_PATH = lazy_compile(r"(^|/)(tests?|testing|benchmarks?|examples?)/|(^|/)test_[^/]*\.py$|_test\.py$")


def jax_jitted_steps(f: Facts) -> list[Any]:
    """Training-step functions compiled by a JAX jit, as decorators (``@named_jit(...)`` over ``def train_step``) or as a
    call that is handed the step function (EasyLM's ``sharded_train_step = pjit(train_step, in_shardings=...)``,
    ``jax.pmap(train_step, axis_name="batch")``); a call is given the shape of a decorator on the function it compiles."""
    steps = [d for d in f.decorators(*JAX_JITS) if TRAIN_STEP_NAME.match(d.target or "") and not _NOT_TRAIN_PATH.search(d.path)]
    for c in f.calls(*JAX_JITS):
        ref = c.args[0].ref if c.args else None
        if ref and TRAIN_STEP_NAME.match(ref) and not _NOT_TRAIN_PATH.search(c.path):
            steps.append(Decorator(c.path, c.line, c.name, ref, c.text))
        elif (bound := _BOUND_TO.match(c.text)) and TRAIN_STEP_NAME.match(bound.group(1)) and not _NOT_TRAIN_PATH.search(c.path):
            # the compiled function bound to a training step's name (maxtext ``p_train_step = jax.jit(functional_train,
            # in_shardings=..., donate_argnums=...)``, ``functional_train`` a partial of its ``train_step``)
            steps.append(Decorator(c.path, c.line, c.name, bound.group(1), c.text))
    return steps


#: ``name = <call>`` (the call's text starts with the assignment of its result)
_BOUND_TO = lazy_compile(r"^\s*([A-Za-z_]\w*)\s*=\s*[\w.]+\(")


def jax_training(f: Facts) -> str | None:
    """``"<jit> on <step> (path:line)"`` when the project trains with JAX and not PyTorch: a training step compiled by a JAX
    jit (levanter's ``@named_jit`` over ``train_step``) and no PyTorch backward pass (``loss.backward()``) in the code in
    scope. A PyTorch mechanism (DeepSpeed, pinned DataLoader memory, PyTorch FSDP) does not apply to such a run, and a
    recogniser that reads only PyTorch spellings cannot say it is missing (checks.stack). A project that trains both ways
    (a PyTorch trainer beside a JAX driver) keeps every check."""
    steps = jax_jitted_steps(f)
    if not steps or any(not _NOT_TRAIN_PATH.search(c.path) for c in f.calls("backward")):
        return None
    # a PyTorch trainer run beside the JAX driver (tevatron: ``trainer.train()`` of its HF Trainer subclass in ``driver/train.py``
    # next to ``driver/jax_train.py``): the backward pass is the trainer's, and the project trains both ways
    # (the Hugging Face or TRL Trainer, imported; levanter's own JAX ``trainer.train(...)`` is no such thing)
    hf_trainer = any((i.name or "").endswith("Trainer") for i in f.imports("transformers", "trl"))
    if hf_trainer and any(c.name.rsplit(".", 1)[0].lower().endswith("trainer") and not _NOT_TRAIN_PATH.search(c.path)
                          for c in f.calls("train")):
        return None
    d = steps[0]
    return f"{d.name} on {d.target} ({d.path}:{d.line})"


_SLURM_NODES = lazy_compile(r"^\$\{?(SLURM_NNODES|SLURM_JOB_NUM_NODES)\}?$")


def _sbatch_nodes(facts: Facts, launch: Any, nn: str) -> tuple[float, str] | None:
    """The node count a launch's ``$SLURM_NNODES`` takes from its own script's ``#SBATCH -N 1`` / ``--nodes=2`` directive,
    with the directive's path:line; None when the launch reads another variable or the script asks for no count."""
    if not _SLURM_NODES.match(nn.strip("\"'")):
        return None
    for e in facts.files[launch.path].configs if launch.path in facts.files else ():
        if e.fmt == "scheduler" and e.keys == ("SBATCH", "nodes") and (n := as_number(e.value)) and n > 0:
            return n, f"{e.path}:{e.line}"
    return None


def _hostfile_hosts(facts: Facts, launch: Any) -> tuple[int, str, bool] | None:
    """The number of hosts in the hostfile a launch names (``deepspeed --hostfile configs/hostfile``), when the repository
    ships that file (found next to the launch script, or by its path from the root), with the file's path:line and whether
    its list goes on past them (a ``...`` line); None otherwise."""
    ref = launch.launcher_args.get("hostfile")
    if not isinstance(ref, str) or not ref or "$" in ref:
        return None
    r = ref.strip("\"'")
    while r.startswith("./"):
        r = r[2:]
    here = launch.path.rsplit("/", 1)[0] + "/" if "/" in launch.path else ""
    found = [c for c in (here + r, r) if c in facts.files]
    if not found:  # run from another folder (BELLE's ``train/scripts/multinode_run.sh`` naming ``configs/hostfile`` of ``train/``)
        found = [p for p in facts.paths_named(r.rsplit("/", 1)[-1]) if p.endswith("/" + r)]
        if len(found) != 1:
            return None
    ff = facts.files[found[0]]
    entry = next((e for e in ff.configs if e.keys == ("hostfile_hosts",)), None) if ff.kind == "hostfile" else None
    if entry is None or not isinstance(entry.value, int):
        return None
    n = entry.value
    more = any(e.keys == ("hostfile_more",) for e in ff.configs)
    inc = launch.launcher_args.get("include")
    if isinstance(inc, str) and inc and "$" not in inc:
        # ``--include GPU002,GPU003`` (colossalai) or ``worker-0:0,1@worker-1`` (DeepSpeed): those hosts of the file only
        n, more = min(n, len(inc.split("@")) if "@" in inc or ":" in inc else len(inc.split(","))), False
    return n, f"{found[0]}:{entry.line}", more


#: training libraries whose learner classes a project's entry point subclasses and hands to the library's launcher (no
#: ``backward()`` or trainer call in the project's own code)
_LEARNER_MODULES = ("oat.algorithms", "oat.learners")


def _library_learners(facts: Facts, train_paths: Iterable[str]) -> list[Any]:
    """The imports of a training library's learner class (``from oat.algorithms.ppo import PPOActor, PPOArgs, PPOLearner``)
    in the project's training files."""
    paths = set(train_paths)
    found = [i for i in facts.imports(*_LEARNER_MODULES) if i.path in paths and (i.name or "").endswith("Learner")]
    # the library's own tree (Oat's wheel: ``oat/algorithms/ppo.py`` imports ``oat.learners``) is scanned: its loop is read
    return [i for i in found if not facts.paths_named(i.module.rsplit(".", 1)[-1] + ".py")
            and not any(p.startswith(i.module.replace(".", "/") + "/") for p in facts.paths_named("__init__.py"))]


def _not_a_training_call(c: Any) -> bool:
    """A ``step``/``train`` call that runs no training: a wrapper's own ``step`` method handing the call on to what it wraps
    (``def step(self, closure=None): self.optimizer.step(closure)`` in an optimizer or scheduler wrapper a library offers),
    a model layer's decode step called from its ``forward``,
    or ``train(...)`` with arguments on the result of another call (a job builder's chain ``self.role(ACTOR).train(entrypoint)``
    that declares which user code a role runs; ``Trainer(...).train()`` takes none)."""
    if c.short == "step" and c.func == "step":
        return True
    if c.short == "step" and c.name == "self.step" and c.func == "forward":
        return True  # a layer's recurrent decode step in its own forward (Mamba ``out, _, _ = self.step(hidden_states, conv_state, ...)``)
    if c.short == "train" and c.func == "train" and c.name.startswith("self."):
        return True  # a wrapper's ``def train(self, mode=True): self.model.train(mode)``: a mode switch handed on
    return c.short == "train" and c.name.startswith("?.") and bool(c.args)


def _lightning_steps(facts: Facts) -> list[Any]:
    """The calls in ``training_step`` of the project's LightningModule subclasses (``class MinGPT(LightningModule):`` ...
    ``def training_step(self, batch, batch_idx): loss = self(x, y)``): Lightning's Trainer runs that method, so the module is
    training code even when the ``Trainer(...).fit`` that runs it is the user's script, not in the repository."""
    modules = {r.path for r in facts.refs("LightningModule") if r.text.startswith("class ")}
    return [c for c in facts.calls_in(sorted(modules)) if c.func == "training_step"] if modules else []


def _trainer_step_hooks(facts: Facts) -> list[Any]:
    """The calls in ``compute_loss``/``training_step`` of the project's subclasses of an HF/TRL trainer (``class
    ReftTrainer(Trainer):`` ... ``def compute_loss(self, model, inputs, return_outputs=False): ... = model(**inputs)``):
    the HF Trainer's loop runs those methods on every micro-batch, so the subclass is training code even when the
    ``Trainer(...).train()`` that runs it is the user's script, not in the repository (as a LightningModule's
    ``training_step`` is, :func:`_lightning_steps`)."""
    from .rules._helpers import HF_STEP_HOOKS, HF_TRAINERS, class_at, hf_trainer_subclasses  # the rules import this module

    subclasses = hf_trainer_subclasses(facts)
    if not subclasses:
        return []
    paths = sorted({r.path for r in facts.refs(*HF_TRAINERS, *subclasses) if r.text.strip().startswith("class ")
                    and not _TEST_PATH_RE.search(r.path)})
    return [c for c in facts.calls_in(paths) if c.func in HF_STEP_HOOKS and class_at(facts, c.path, c.line) in subclasses]


def _pretrains_only_by_optional_megatron(facts: Facts, p: Project) -> bool:
    """Pre-training is inferred only from Megatron among the frameworks, and every Megatron import sits in a ``try:`` that
    catches ImportError (a checkpoint plug-in for users' Megatron runs, used only if installed): nothing else says the
    project pre-trains (no ``from_config`` build, no nanotron, no pretrain file)."""
    if "megatron" not in p.frameworks or "nanotron" in p.frameworks or fresh_models(facts) \
            or any("pretrain" in path.lower() for path in facts.files):
        return False
    megatron = facts.imports("megatron")
    return bool(megatron) and all(i.optional for i in megatron)


#: a stand-in that says it is one: a scratch path (``model_path="/tmp/dummy_gr00t_checkpoint"`` to build a policy for its
#: config only), a dummy/fake/mock checkpoint, or the ``"test-model"`` label of an OpenAI-compatible response
_STAND_IN_NAME = lazy_compile(r"^/(var/)?tmp/|(^|[/_-])(dummy|fake|mock)([/_-]|$)|^test[-_]?model$", re.I)
#: a tokenizer's file (NeMo ``tokenizer: {library: sentencepiece, model: 2053..._256k.model}``, ``tokenizer.model``): a
#: vocabulary, not a checkpoint
#: (or a tokenizer's own repository: BigScience's ``--tokenizer-name-or-path bigscience/tokenizer``)
_TOKENIZER_FILE = lazy_compile(r"\.(model|spm|tiktoken|vocab|bpe)$|(^|/)tokenizers?/?$", re.I)
#: a bare weight file name (``"model.safetensors"``, ``"pytorch_model.bin"`` joined to a checkpoint folder): the file a
#: loader reads from whatever checkpoint it is given, not a model
#: a weight file, by itself or at the end of a path (SEED-Story's ``pretrained_model_path: pretrained/detokenizer/.../
#: pytorch_model.bin``, Show-o2's ``Wan2.1_VAE.pth``): a file of weights, not a checkpoint's name
_WEIGHT_FILE = lazy_compile(r"^([^\s]*/)?[\w.-]+\.(safetensors|bin|pt|pth|ckpt|gguf|index\.json)$", re.I)


#: a placeholder folder written before a checkpoint's real name (LongLoRA's README: ``--model_name_or_path
#: path_to/Llama-2-7b-hf`` with "remember to change path_to/Llama-2-7b-hf to your own directory")
_PLACEHOLDER_HEAD = lazy_compile(r"^/?(?:[\w.-]*path_to[\w.-]*|path/to|your[_-][\w.-]*|<[^<>/]*>)/")
_PLACEHOLDER_DIR = lazy_compile(r"^/?(?:[\w.-]*path_to[\w.-]*|path/to|your[_-][\w.-]*|<[^<>/]*>)/(?:[^/]+/)*([^/]+)$")
#: ... or in the part before a placeholder word (Vary's README: ``--model_name_or_path /Qwen-7B/path/``)
_PLACEHOLDER_LEAF = lazy_compile(r"^/?(?:[^/]+/)*([^/]+)/(?:path|dir|folder|here)/?$", re.I)


def placeholder_tail(name: str) -> str:
    """The checkpoint a placeholder path names in its last part (``path_to/Llama-2-7b-hf`` -> ``Llama-2-7b-hf``): a model
    family and a size, and no placeholder of its own; else ``name`` unchanged."""
    m = _PLACEHOLDER_DIR.match(name) or _PLACEHOLDER_LEAF.match(name)
    if m and _family_word(m.group(1)) and size_in_name(m.group(1)) and not _PLACEHOLDER_NAME.search(m.group(1)):
        return m.group(1)
    head = _PLACEHOLDER_HEAD.match(name)
    if head and not name.endswith("/"):  # (``/path_to_llm/hf_llama_7b/``: a folder to fill in, no leaf below the name)
        # ... or in a part above a leaf that names none (Llama-X's README: ``--model_name_or_path /path/to/llama-7B/hf``, the
        # converted weights' ``hf`` folder under the checkpoint's)
        for part in reversed(name[head.end():].split("/")[:-1]):
            if _family_word(part) and size_in_name(part) and not _PLACEHOLDER_NAME.search(part):
                return part
    return name


#: a config file a model option points at (SEED-X ``llm_model: configs/clm_models/llama2chat7b_lora.yaml``, a Hydra
#: config that builds the model): the config's own keys name the checkpoint, the file's path does not
_CONFIG_FILE_NAME = lazy_compile(r"\.(ya?ml|json)$", re.I)
#: three or more words: a sentence, not a checkpoint name
_SENTENCE = lazy_compile(r"\S\s+\S+\s+\S")


def _model_like(name: str, rejected: set[str]) -> bool:
    """A value that can name a trained checkpoint: no placeholder, stand-in, estimator, hosted API model, key name or run label."""
    # (a sentence is no checkpoint: simple_GRPO's ``"model_path": "here is the base model path"``)
    return not _PLACEHOLDER_NAME.search(name) and not _ESTIMATOR_NAME.match(name) and name not in rejected \
        and not _SENTENCE.search(name.strip()) \
        and not _HOSTED_NAME.match(name) and not _KEY_OR_RUN_NAME.match(name) and not _STAND_IN_NAME.search(name) \
        and not _TOKENIZER_FILE.search(name) and not _WEIGHT_FILE.match(name) and not _CONFIG_FILE_NAME.search(name)


def _path_names_model(named: list[tuple[str, str]], paths: frozenset[str] | set[str], counts: dict[str, int]) -> bool:
    """A file of the training path or a training recipe names a model (a setting, a ``from_pretrained`` argument)."""
    return any(path in paths and name in counts for path, name in named)


def _documented_models(facts: Facts) -> list[tuple[str, str]]:
    """(model name, path:line) of the checkpoints the project's own README and docs/ document a training run starting from
    (``model`` doc hints: ``base_model:`` of a README's YAML config, ``--model_name_or_path`` of a README's training command);
    an example folder's README documents that example, not the project's run."""
    return [(_local_copy_tail(placeholder_tail(h.value)), f"{h.path}:{h.line}") for h in facts.records("doc_hints")
            if h.kind == "model" and 2 < len(h.value) < 200 and ("/" not in h.path or h.path.startswith("docs/"))]


def _local_copy_tail(name: str) -> str:
    """The checkpoint a README command's relative path names in its last part (Aurora: ``--model_name_or_path
    ./Mixtral-8x7B-Instruct-v0.1``, the downloaded copy of that hub model): a model family and a size; else ``name``."""
    m = re.match(r"^\.\.?/(?:[^/]+/)*([^/]+)/?$", name)
    if m and _family_word(m.group(1)) and size_in_name(m.group(1)) and not _PLACEHOLDER_NAME.search(m.group(1)):
        return m.group(1)
    return name


#: the placeholder model of the Alpaca training template (stanford_alpaca ``model_name_or_path: default="facebook/opt-125m"``),
#: and of HF's ``run_clm.py`` template (CodeShell's ``finetune.py``: ``field(default="gpt2")``, every launch passing its own)
_PLACEHOLDER_MODEL = lazy_compile(r"^(facebook/opt-(125|350)m|gpt2)$")


def _overridden_defaults(model_settings: list[Any], training: frozenset[str] | None = None) -> set[int]:
    """ids of the model options' defaults that the launches override (FastChat: ``model_name_or_path`` defaults to
    ``facebook/opt-125m`` and every launch passes ``--model_name_or_path ~/model_weights/llama-7b``): the launched models are
    the run's. A launch that passes a value it takes from its own command line (``--model_name_or_path $MODEL`` with
    ``MODEL=$1`` in an option-parsing ``case`` arm, Qwen finetune/finetune_ds.sh) names no model: the default still stands."""
    # (a recipe file overrides a dataclass field's default: Valley's ``valley/configs/experiment/*.yaml`` set
    # ``model_name_or_path`` for the dataclass whose default is ``facebook/opt-125m``, parsed with ``HfArgumentParser``)
    launched = {st.name for st in model_settings if st.source == "launcher" and isinstance(st.value, str) and "$" not in st.value}
    recipes = {st.name for st in model_settings if _recipe_file(st) and isinstance(st.value, str) and "$" not in st.value}
    out = {id(st) for st in model_settings if (st.source in ("field-default", "argparse-default") and st.name in launched)
           or (st.source == "field-default" and st.name in recipes)}
    # the Alpaca template's placeholder default (``facebook/opt-125m``, kept by FastChat, LLaVA and their forks) where the
    # launches pass the option, even from their own command line (MobileVLM ``--model_name_or_path ${LANGUAGE_MODEL}`` with
    # ``LANGUAGE_MODEL=$3``): a placeholder no run trains, whatever model the caller names
    # (or pass another model option: LongVU's launches load ``--input_model_filename $BASE_CHECKPOINT`` and never set the
    # template's ``model_name_or_path``, which only an error message reads)
    passed = {st.name for st in model_settings if st.source == "launcher" and isinstance(st.value, str)}
    out |= {id(st) for st in model_settings if ((st.source in ("field-default", "argparse-default") and passed)
                                                 or (st.source == "field-default" and st.name in recipes))
            and isinstance(st.value, str) and _PLACEHOLDER_MODEL.match(st.value.strip())}
    # a serving or chat tool's ``--model-path`` default, where the training launches name their model by another option
    # (ml-ferret: ``ferretui/serve/cli.py`` ``parser.add_argument("--model-path", type=str, default="facebook/opt-350m")``,
    # LLaVA's placeholder, beside ``--model_name_or_path ./model/vicuna-7b-v1-3`` in every training launch): the tool
    # loads that model only when run bare; it is no model the project trains
    if passed and training is not None:
        out |= {id(st) for st in model_settings if st.source == "argparse-default" and st.path not in training
                and _SERVING_TOOL.search(st.path)}
    return out


def _recipe_file(st: Any) -> bool:
    """A setting a YAML/JSON recipe holds (not a Python dict, which may be any code's): it fills a dataclass field of the
    same name when the recipe is parsed into it (``HfArgumentParser.parse_yaml_file``), not an argparse option's default."""
    return st.source == "config" and st.path.endswith((".yaml", ".yml", ".json"))


#: a serving, chat or demo tool's module (``serve/cli.py``, ``model_worker.py``, ``gradio_web_server.py``, ``demo.py``)
_SERVING_TOOL = lazy_compile(r"(^|/)(serve|serving|server|demos?|chat)/|(^|/)(\w+_)?(cli|chat|demo|worker|server|inference)\.py$"
                             r"|(^|/)gradio\w*\.py$")


def _named_models(facts: Facts, training: frozenset[str] | None = None) -> list[tuple[str, str]]:
    """(path, model name) from recipes, launchers and ``from_pretrained`` calls; not from registries of names."""
    out: list[tuple[str, str]] = []
    demo = _library_demo_lines(facts)
    rejected = _not_model_values(facts)
    model_settings = facts.settings(*_MODEL_KEYS)
    overridden = _overridden_defaults(model_settings, training) | _tokenizer_beside_model(model_settings)
    scored = _result_files(facts)
    for st in model_settings:
        if id(st) in overridden or st.path in scored:
            continue
        if (isinstance(st.value, str) and 2 < len(st.value) < 200 and (st.path, st.line) not in demo and not _not_a_model(facts, st)
                and not _config_file_value(st) and not _in_docs(st)):
            out.append((st.path, placeholder_tail(st.value)))
    for c in facts.calls("from_pretrained", "LLM", "pipeline", "load_model"):
        if (c.path, c.line) in demo or c.name.startswith(_ENCODER_LIBS) or _ENCODER_CLASS.search(c.name):
            continue  # (a speech or vision encoder a loader builds beside the LLM: ``whisper.load_model('large-v3')``)
        vals = [a for a in c.args[:1] if isinstance(a, str)]
        vals += [v for k in ("pretrained_model_name_or_path", "model", "model_name_or_path") if isinstance(v := c.kwargs.get(k), str)]
        out += [(c.path, v) for v in vals if 2 < len(v) < 200 and v not in rejected]
    out += [(x.path, x.script) for x in facts.launches("vllm") if x.script and "/" in x.script]  # ``vllm serve org/model``
    # a model config built from a named preset (lit-llama's ``LLaMAConfig.from_name("7B")``, lit-gpt's
    # ``Config.from_name("pythia-160m")``): the preset is the model's name
    for c in facts.calls("from_name"):
        if (c.path, c.line) not in demo and _CONFIG_CLASS.search(c.name.rsplit(".", 1)[0]):
            out += [(c.path, a) for a in c.args[:1] if isinstance(a, str) and 1 < len(a) < 200 and a not in rejected]
    # a torchtune recipe config builds its model from a component (``model: {_component_: torchtune.models...}``) and
    # names the size in its file name (``recipes/configs/qwen2_5/1_5B_lora.yaml``; the builder ``qwen2_5_1_5b`` is
    # ambiguous): the file name is the model name
    for e in facts.config("_component_"):
        if len(e.keys) >= 2 and str(e.keys[-2]) in ("model", "policy_model") and isinstance(e.value, str) \
                and e.value.startswith("torchtune.models.") and (m := _TUNE_SIZE.match(e.path.rsplit("/", 1)[-1])):
            out.append((e.path, m.group(1).replace("_", ".") + "B"))
    return out


#: a model-config class (``LLaMAConfig``, ``Config``, ``ModelArgs``)
_CONFIG_CLASS = lazy_compile(r"(^|\.)\w*(Config|Args)$")
#: libraries of speech/vision encoders: their checkpoints are parts of a multimodal model, not the LLM being trained
_TOKENIZER_CLASS = lazy_compile(r"Tokenizer")


def _tokenizer_only_names(facts: Facts, named: list[tuple[str, str]]) -> set[str]:
    """Names that only ``*Tokenizer.from_pretrained`` loads name, no model load, setting or launch (FastChat's
    ``AutoTokenizer.from_pretrained("EleutherAI/pythia-160m")`` for its RWKV adapter)."""
    tok: set[str] = set()
    other: set[str] = set()
    for c in facts.calls("from_pretrained"):
        first = c.args[0] if c.args and isinstance(c.args[0], str) else None
        if first is None:
            continue
        cls = c.name.rsplit(".", 2)[-2] if c.name.count(".") else ""
        (tok if _TOKENIZER_CLASS.search(cls) else other).add(first)
    other |= {s.value for s in facts.settings(*_MODEL_KEYS) if isinstance(s.value, str) and s.source != "call"}
    return {n for _, n in named if n in tok and n not in other}


#: libraries whose ``load_model`` / ``from_pretrained`` builds a model beside the trained LLM: a speech or vision encoder, or
#: a language-ID or word-vector classifier that filters the data (GLM's ``fasttext.load_model("/mnt/lid.176.bin")``)
_ENCODER_LIBS = ("whisper.", "open_clip.", "timm.", "torchvision.", "clip.", "fasttext.", "gensim.", "spacy.")
#: ... and a vision tower or an image processor loaded beside the LLM (Vary: ``CLIPVisionModel.from_pretrained(
#: '/cache/vit-large-patch14/')``, ``CLIPImageProcessor.from_pretrained(...)``): no model the run is named for
_ENCODER_CLASS = lazy_compile(r"(ImageProcessor|VideoProcessor|VisionModel|VisionTransformer|VisionTower|VisionEncoder|"
                              r"ImageEncoder|FeatureExtractor)(Fast)?\.from_pretrained$")
_CLASS_PATH = lazy_compile(r"^[a-z_]\w*(\.[a-z_]\w*)+\.[A-Z]\w*$")
_API_CALL = lazy_compile(r"\.(chat\.)?completions\.create\(|\.messages\.create\(|\.responses\.create\(")


def _not_a_model(facts: Facts, st: Setting) -> bool:
    """A model-named setting whose value is no trained model: a Python class path (ms-swift's trainer registry
    ``'rm': 'swift.trainers.RewardConfig'``), a hosted API's model (``client.chat.completions.create(model='qwen-max')``),
    or a name only a tokenizer is loaded from (``model_name = 'Qwen/Qwen2.5-3B-Instruct'`` then
    ``AutoTokenizer.from_pretrained(model_name)`` to count tokens)."""
    return bool(isinstance(st.value, str) and _CLASS_PATH.match(st.value)) or (st.source == "call" and bool(_API_CALL.search(st.text or ""))) \
        or _tokenizer_only(facts, st) or _api_section(facts, st) or _tokenizer_section(st) or _scorer_module(st)


#: a module named for the model that scores outputs (RL4LMs ``envs/text_generation/preference_reward.py``, ``metric.py``,
#: ``judge.py``): the checkpoint it loads computes rewards or metrics, under ``eval()``, it is not trained
_SCORER_MODULE = lazy_compile(r"(^|[/_])(\w*_)?(rewards?|metrics?|scorers?|judges?)(_\w*)?\.py$", re.I)


def _scorer_module(st: Setting) -> bool:
    """A model named in code of a reward, metric or judge module (``model_path = "t5-11b~commongen_prefs.pt"`` in RL4LMs'
    ``preference_reward.py``, a frozen T5-11B scorer run on CPU): not the model the project trains."""
    return st.source in ("assign", "call", "argparse-default") and bool(_SCORER_MODULE.search(st.path))


def _tokenizer_section(st: Setting) -> bool:
    """A value of a config's tokenizer section (NeMo ``model: {tokenizer: {type: GPT2BPETokenizer}}`` or ``type: bpe``, handed to
    ``get_nmt_tokenizer(model_name=cfg.tokenizer.type)``): a vocabulary or its kind, not the model trained."""
    return st.source == "config" and bool(re.search(r"(^|\.)tokenizer\.", st.key.lower()))


def _api_section(facts: Facts, st: Setting) -> bool:
    """A model named in a config section for a judge or a hosted API (``llm_as_a_judge: {model: "gpt-4o-mini", base_url: null}``
    in an RL environment's config): the model the rewards are asked of, not the one trained."""
    if st.source != "config" or "." not in st.key:
        return False
    parent = st.key.rsplit(".", 1)[0]
    if re.search(r"(^|[._])(llm_)?(as_a_)?judge", parent, re.I):
        return True
    return any(e.path == st.path for e in facts.config(f"{parent}.base_url", f"{parent}.api_base", f"{parent}.api_key"))


def _not_model_values(facts: Facts) -> set[str]:
    """The values of model-named settings that are no model (:func:`_not_a_model`), unless another setting names it as one;
    and, whatever names them, values that are the name of a class the project imports (a registry of initializer classes
    by parallel mode, ``{"data": "Initializer_Data", "model": "Initializer_Model"}``, names code, not a checkpoint)."""
    no: set[str] = set()
    yes: set[str] = set()
    settings = [st for st in facts.settings(*_MODEL_KEYS) if isinstance(st.value, str)]
    # (file, value) of hosted-API requests: ``client.chat.completions.create(model=MODEL_NAME)``
    api = {(st.path, st.value) for st in settings if st.source == "call" and _API_CALL.search(st.text or "")}
    for st in settings:
        (no if _not_a_model(facts, st) or _api_constant(facts, st, api) else yes).add(st.value)
    classes = {v for v in no | yes if _CLASS_NAME.match(v)}
    if classes:
        classes &= {i.name for i in facts.records("imports") if i.name}
    # a Hydra config-group choice (HALOs ``launch.py model=llama`` picks ``config/model/llama.yaml``): a config file's
    # name, whatever the group is called; the model it loads is that file's ``name_or_path``
    groups = {v for v in no | yes if re.fullmatch(r"[\w.-]+", v) and any(
        p.endswith((f"/model/{v}.yaml", f"/model/{v}.yml", f"/models/{v}.yaml")) for p in facts.files)}
    # ... also where the group's config is not shipped, when the same command sets a key under it (amber-train's
    # ``python -u direct-preference-optimization/train.py model=blank_model model.name_or_path=LLM360/AmberChat``): ``model`` is
    # a group, ``blank_model`` the file chosen for it
    for launch in facts.launches():
        for k, v in launch.script_args.items():
            if k in _MODEL_KEYS and isinstance(v, str) and any(o.startswith(k + ".") for o in launch.script_args):
                groups.add(v)
    # the output of another stage of the same pipeline (EasyContext's second stage loads ``output/7B_32K_bs_1M_...``, the
    # first stage's ``--output-dir ./output/7B_32K_bs_1M_...``; VILA's ``runs/train/stage15_9tile/model``): a checkpoint the
    # project writes, not a model it is named for
    outputs = {_norm_dir(str(st.value)) for st in facts.settings(*_OUTPUT_KEYS) if st.rank > 0 and isinstance(st.value, str)}
    outputs.discard("")
    stages = {v for v in no | yes if any(_norm_dir(v) == d or _norm_dir(v).startswith(d + "/") for d in outputs)}
    return (no - yes) | classes | groups | stages


_OUTPUT_KEYS = ("output_dir", "output-dir", "output_path", "save_dir", "save_path", "ckpt_dir", "checkpoint_dir")


def _norm_dir(v: str) -> str:
    v = v.strip().strip("'\"").rstrip("/")
    return v[2:] if v.startswith("./") else v


_LOADS = frozenset({"from_pretrained", "LLM", "pipeline", "load_model"})


def _api_constant(facts: Facts, st: Setting, api: set[tuple[str, str]]) -> bool:
    """A name bound to a model string that its file sends to a hosted API (``MODEL_NAME = "Qwen/Qwen2.5-7B-Instruct"``
    then ``client.chat.completions.create(model=MODEL_NAME, ...)`` against a provider's base_url, in a tool an agent
    calls) and loads nowhere (no ``from_pretrained``/``LLM(...)`` of it in that file): the model a request is sent to,
    not one the project trains."""
    if st.source != "assign" or (st.path, st.value) not in api or st.path not in facts.files:
        return False
    return not any(c.short in _LOADS and any(getattr(a, "ref", None) == st.name or a == st.value
                                             for a in (*c.args[:1], *c.kwargs.values()))
                   for c in facts.files[st.path].calls)


#: a Python class name (``Initializer_Model``, ``LlamaForCausalLM``): capitalised, letters, digits and underscores only
_CLASS_NAME = lazy_compile(r"^[A-Z][A-Za-z0-9_]*$")


def _tokenizer_only(facts: Facts, st: Setting) -> bool:
    """A name bound in a file whose every ``from_pretrained`` of it loads a tokenizer, processor or config."""
    if st.source != "assign":
        return False
    # (the extractor carries a local constant into the call: ``from_pretrained(model_name)`` reads as the string)
    uses = [c for c in facts.files[st.path].calls if c.short == "from_pretrained"
            and any(getattr(a, "ref", None) == st.name or a == st.value for a in (*c.args[:1], *c.kwargs.values()))] \
        if st.path in facts.files else []
    return bool(uses) and all(re.search(r"Tokenizer|Processor|Config", c.name) for c in uses)


#: a function that cuts token streams into training blocks (HF's ``group_texts``, a packing helper)
_GROUPS_TEXT = lazy_compile(r"(?i)group|pack|chunk|concat|token")


_TUNE_SIZE = lazy_compile(r"^(\d+(?:_\d+)?)B_", re.I)


def _trained_names(facts: Facts, named: list[tuple[str, str]], training: frozenset[str]) -> list[tuple[str, str]]:
    """The (path, model name) pairs that can name a model a training project trains: not those of a serving or generation
    file off the training path (the ``--model`` default ``llama2-7b`` of an inference engine's HTTP API server,
    ``inference/server/api_server.py``): that is the model served, and its size says nothing about a training step. A
    project that only serves (``vllm serve Qwen/Qwen2.5-1.5B-Instruct`` in ``serve.sh``) is sized by what it serves."""
    trains = facts.calls("backward", "Trainer", "SFTTrainer", "fit", "train", "optimizer.step", "step", "pretrain") \
        or facts.launches("torchrun", "deepspeed", "accelerate", "colossalai", "llamafactory", "axolotl", "torchtune")
    if not trains:
        return named
    return [(path, n) for path, n in named if path in training or not _SERVE_PATH.search(path)]


#: a model class of one architecture (``LlamaForCausalLM``, the project's ``LlavaLlamaForCausalLM``): loading a checkpoint with it
#: fixes the checkpoint's family, unlike ``AutoModelForCausalLM``
_ARCH_CLASS = lazy_compile(r"^(?!Auto)\w+(ForCausalLM|ForConditionalGeneration|LMHeadModel)$")


def _family(name: str) -> str | None:
    low = name.lower()
    return next((fam for needle, fam in _FAMILIES if family_in(needle, low)), None)


def _unloadable_defaults(facts: Facts, training: frozenset[str]) -> set[tuple[str, str]]:
    """(path, model name) of a name the training path holds only as an option's default (``model_name_or_path:
    Optional[str] = field(default="facebook/opt-125m")``, the Stanford Alpaca template's placeholder) when every model
    the training path loads from that option is built by an architecture class of another family (LLaVA's train.py
    loads it only with ``LlavaLlamaForCausalLM``, ``LlavaMptForCausalLM`` or ``transformers.LlamaForCausalLM``): an OPT
    checkpoint cannot be the model that run trains, so the default's size says nothing about it."""
    out: set[tuple[str, str]] = set()
    for s in facts.settings(*_MODEL_KEYS):
        if s.source not in ("field-default", "argparse-default") or s.path not in training or not isinstance(s.value, str):
            continue
        fam = _family(s.value)
        if fam is None:
            continue
        classes = [c.name.rsplit(".", 2)[-2] for c in facts.calls("from_pretrained") if c.path in training
                   and any(getattr(a, "ref", None) == s.name for a in c.args[:1])]
        models = [k for k in classes if _ARCH_CLASS.match(k) or k.startswith("AutoModel")]
        if models and all(_ARCH_CLASS.match(k) and not _loads_family(k, fam) for k in models):
            out.add((s.path, s.value))
    return out | _doc_replaced_defaults(facts)


def _doc_replaced_defaults(facts: Facts) -> set[tuple[str, str]]:
    """(path, model name) of a model option's default that a documented command of the same script replaces with a model
    of another family (WizardLM's README: ``deepspeed train_freeform.py --model_name_or_path /path/to/llama-7B/hf`` beside the
    Stanford Alpaca template's ``default="facebook/opt-125m"``), in that script and in the other copies of the template
    with the same default (``training/src/train.py``): a placeholder, not a model the project trains."""
    docs = [x for x in facts.records("doc_launches") if x.script]
    defaults = [s for s in facts.settings(*_MODEL_KEYS) if s.source in ("field-default", "argparse-default")
                and isinstance(s.value, str)] if docs else []
    def replaces(v: Any, default: str) -> bool:
        # a model of another family, named (not ``$MODEL``: Qwen's and DeepSeek-Coder's READMEs leave their own default)
        return (isinstance(v, str) and "$" not in v and (fam := _family(v)) is not None
                and (dfam := _family(default)) is not None and fam != dfam)
    placeholders = {s.value for s in defaults if any(
        str(x.script).rsplit("/", 1)[-1] == s.path.rsplit("/", 1)[-1]
        and any(k in _MODEL_KEYS and replaces(v, s.value) for k, v in x.script_args.items()) for x in docs)}
    # (not a model the code loads by that very name itself: ``from_pretrained("facebook/opt-125m")`` trains it)
    placeholders -= {a for c in facts.calls("from_pretrained") if "Tokenizer" not in c.name for a in c.args[:1] if isinstance(a, str)}
    return {(s.path, s.value) for s in defaults if s.value in placeholders}


#: families whose checkpoints are published in the Llama architecture (Yi, DeepSeek LLM 7B/67B, InternLM2 converted)
_LLAMA_SHAPED = frozenset({"yi", "deepseek", "internlm", "baichuan"})


def _loads_family(cls: str, fam: str) -> bool:
    """Whether the architecture class ``cls`` (``Qwen2_5_VLForConditionalGeneration``) can load a checkpoint of family ``fam``."""
    low = cls.lower().replace("_", "")
    return fam.replace("_", "") in low or (fam in _LLAMA_SHAPED and "llama" in low)


#: a file or folder of a serving or generation workload (``inference/server/api_server.py``, ``infer.yaml``,
#: ``11B_generation_v2.yaml``); narrower than :data:`_INFER_PATH`, whose ``chat``/``demo``/``app`` also name the folders of
#: chat models' training recipes (``examples/yi-34B-chat/qlora.yml``)
_SERVE_PATH = lazy_compile(r"(?:^|[/_\-.])(infer\w*|serve|serving|server|generate|generation)(?=[/_\-.]|$)", re.I)


def _estimate_size(facts: Facts, p: Project, named: list[tuple[str, str]], training: frozenset[str],
                   documented: Sequence[tuple[str, str]] = ()) -> None:
    """Parameters from the model config the training path uses; from model names only when no config says: first the
    model the README's documented run starts from (``documented``: (name, path:line), given only when no file of the
    training path names a model), then the names the recipes agree on.

    Recipes that disagree: the entry point's own default wins, else the majority; no majority is unknown
    (with the distribution in ``notes``). A mixture of experts reports total and active parameters.
    """
    sizes = _sizes_from_config(facts, training)
    # a model of a few million parameters beside real ones is a toy task (trlx's random-walk example builds
    # ``GPT2Config(n_layer=6, n_embd=144, vocab_size=23)``, 1M, beside its 6B-65B recipes), not the size the project trains
    sizes = [x for x in sizes if x.total >= _TOY_BILLIONS] or sizes
    # a debug recipe beside real ones (lingua ``apps/main/configs/debug.yaml``, 101M, the README's quick start, beside
    # ``llama_1B.yaml`` and ``llama_7B.yaml``) checks that the code runs; it is not the model the project trains
    sizes = [x for x in sizes if not _DEBUG_RECIPE.search(x.where.rsplit(":", 1)[0])] or sizes
    chosen: _Size | None = None
    pool: list[_Size] = []
    if sizes:
        # the entry point that runs the step sets the default; then other files of the training path; then any
        step_files = {c.path for c in facts.calls("backward", "Trainer", "SFTTrainer", "pretrain")}
        run_cfgs = run_configs(facts)
        pool = ([x for x in sizes if x.where.rsplit(":", 1)[0] in step_files]
                # the config the project's README trains with (nanotron: ``run_train.py --config-file examples/config_tiny_llama.yaml``)
                or [x for x in sizes if _is_run_config(x.where.rsplit(":", 1)[0], run_cfgs)]
                or [x for x in sizes if x.default] or sizes)
        votes: dict[str, list[_Size]] = {}
        for x in pool:
            votes.setdefault(_fmt_params(x.total), []).append(x)
        top = max(votes.values(), key=len)
        if len(votes) == 1 or len(top) * 2 > len(pool):
            chosen = top[0]
        if len({_fmt_params(x.total) for x in sizes}) > 1:
            dist: dict[str, int] = {}
            for x in sizes:
                dist[_fmt_params(x.total)] = dist.get(_fmt_params(x.total), 0) + 1
            p.notes["params_distribution"] = dist
    if chosen is not None and (lib := _recipe_library(facts, chosen, sizes, named, training)):
        # one recipe spells out its dimensions, the others name the models they train: a library of recipes for many sizes
        # (litgpt: ``stories15M`` in ``config_hub/pretrain/tinystories.yaml`` beside 7B-9B fine-tuning recipes), not one size
        (lo, lo_where), (hi, hi_where) = lib
        p.notes["params_range"] = f"{_fmt_params(lo)}-{_fmt_params(hi)}"
        p.notes["params_range_billions"] = (lo, hi)
        p.notes["params_range_sources"] = [lo_where, hi_where]
        return
    if chosen is not None:
        p.params_billions = chosen.total
        p.estimated_params = _fmt_params(chosen.total)
        p.notes["params_source"] = chosen.where
        if chosen.vocab_assumed:
            p.notes["params_note"] = "no vocabulary size next to the model dimensions: 32,000 tokens assumed for the embeddings"
        if chosen.active:
            p.notes["active_params"] = _fmt_params(chosen.active)
        return
    if sizes:
        # the configs disagree: no one size, but the range the training path's configs span is known
        lo, hi = min(pool, key=lambda x: x.total), max(pool, key=lambda x: x.total)
        p.notes["params_range"] = f"{_fmt_params(lo.total)}-{_fmt_params(hi.total)}"
        p.notes["params_range_billions"] = (lo.total, hi.total)
        p.notes["params_range_sources"] = [lo.where, hi.where]
        return
    if documented:
        b, dist = _params_from_names([(where.rsplit(":", 1)[0], name) for name, where in documented])
        if b is not None:
            p.params_billions = b
            p.estimated_params = _fmt_params(b)
            p.notes["params_source"] = "model name"
            p.notes["params_named"] = next((name, where) for name, where in documented if size_in_name(name) == b)
            if len(dist) > 1:
                p.notes["params_distribution"] = dist
            return
    placeholders = _unloadable_defaults(facts, training)
    named = [x for x in _trained_names(facts, named, training) if x not in placeholders]
    runbook = _documented_scripts(facts)
    ran = [(path, n) for path, n in named if path in runbook]
    if ran and _params_from_names(ran)[0] is not None:
        # the recipes the README runs name the model (lmm-r1: Qwen2.5-VL-3B in ``examples/scripts/lmm_r1/*.sh``, beside the
        # upstream OpenRLHF examples of Llama-3-8B it keeps): the size of the documented run
        named = ran
    b, dist = _params_from_names(named)
    if b is not None and training and all(path.endswith(".py") and path not in training
                                          for path, n in named if size_in_name(n) == b):
        # every name of that size is set in a Python module the training path never reaches (a package's runnable demo
        # whose ``BASE_MODEL = "Qwen/Qwen3-30B-A3B-Instruct-2507"`` drives a pipeline on a hosted backend): that module's
        # model, not the one the run trains; a recipe, config or launch script naming it would still size it
        b = None
    if len(dist) > 1:
        p.notes["params_distribution"] = dist
    if b is None and len(dist) > 1:
        # the recipes train models of several sizes, none the majority (LLMZoo: Phoenix-7B beside Chimera-7B and 13B): the
        # range they span, with where its two ends are named, rather than "unknown"
        sized = sorted(((v, path, n) for path, n in named if (v := size_in_name(n)) is not None), key=lambda x: (x[0], x[1]))
        ends = []
        for _, path, n in (sized[0], sized[-1]):
            line = next((st.line for st in facts.settings(*_MODEL_KEYS) if st.path == path and st.value == n), None)
            ends.append(f"{path}:{line}" if line else path)
        p.notes["params_range"] = f"{_fmt_params(sized[0][0])}-{_fmt_params(sized[-1][0])}"
        p.notes["params_range_billions"] = (sized[0][0], sized[-1][0])
        p.notes["params_range_sources"] = ends
        return
    if b is not None:
        p.params_billions = b
        p.estimated_params = _fmt_params(b)
        p.notes["params_source"] = "model name"
        # where a name of that size is set, a recipe or a file of the training path first: the model's size is cited like
        # any other reason (TinyLlama: ``model_name = "tiny_LLaMA_1b"`` in pretrain/tinyllama.py, not a conversion command)
        for path, name in sorted(named, key=lambda x: x[0] not in training and not x[0].endswith((".yaml", ".yml", ".json", ".toml"))):
            if size_in_name(name) == b:
                line = next((st.line for st in facts.settings(*_MODEL_KEYS) if st.path == path and st.value == name), None)
                p.notes["params_named"] = (name, f"{path}:{line}" if line else path)
                break


def _recipe_library(facts: Facts, chosen: _Size, sizes: list[_Size], named: list[tuple[str, str]],
                    training: frozenset[str]) -> tuple[tuple[float, str], tuple[float, str]] | None:
    """The range of sizes of a library of recipes: the size the dimensions of one file give (``chosen``, the only file that
    spells them out) beside three or more other recipe files naming models of other sizes, more of them than name a size
    like it (litgpt: ``stories15M`` at 15M beside ``falcon-7b/lora.yaml``, ``gemma-2-9b/qlora.yaml``, ...). (smallest,
    where), (largest, where); None otherwise."""
    cfg_file = chosen.where.rsplit(":", 1)[0]
    if len({x.where.rsplit(":", 1)[0] for x in sizes}) != 1:
        return None
    per_file: dict[str, float] = {}
    for path, name in _trained_names(facts, named, training):
        v = size_in_name(name)
        if (v is not None and path != cfg_file and path.endswith((".yaml", ".yml", ".json", ".toml"))
                and not _DEBUG_RECIPE.search(path)):
            per_file.setdefault(path, v)
    other = {p: v for p, v in per_file.items() if abs(v - chosen.total) > _SAME_SIZE * max(v, chosen.total)}
    if len(other) < 3 or len(other) * 2 <= len(per_file):
        return None
    def where(v: float) -> str:
        path = sorted(q for q, x in other.items() if x == v)[0]
        line = next((st.line for st in facts.settings(*_MODEL_KEYS) if st.path == path and size_in_name(str(st.value)) == v), None)
        return f"{path}:{line}" if line else path
    lo, hi = min(other.values()), max(other.values())
    return (min((chosen.total, chosen.where), (lo, where(lo))), max((chosen.total, chosen.where), (hi, where(hi))))


#: the name of a call that builds a configuration or arguments object (``LlamaConfig(...)``, ``SFTConfig(...)``): its keywords
#: are settings, unlike those of an arbitrary call (a layer, a tensor op, ``tag.update(seq_len=128)``)
CONFIG_CALLEE = lazy_compile(r"(Config|Configs|Args|Arguments|Params|Hparams|HParams|Settings|Options|Spec)$")
_CONFIG_CALLEE = lazy_compile(rf"{CONFIG_CALLEE.pattern}|^(dict|Namespace|OmegaConf\.create)$")
#: the text tower section of an open_clip / EVA-CLIP model config: its ``context_length`` is CLIP's, not the LLM's
_CLIP_TEXT = "text_cfg."
_TRAIN_SEQ_KEYS = tuple(k for k in _SEQ_KEYS if k not in ("max_position_embeddings", "max_length", "max_source_length"))


def _seq_len(facts: Facts, p: Project, training: frozenset[str]) -> None:
    """The training sequence length: the entry point's own value, else the value most files set.

    ``max_position_embeddings`` (what the model could take) and generation lengths are not it.
    """
    per_file: dict[str, set[int]] = {}
    clip_text: dict[str, set[int]] = {}
    triton_files = {i.path for i in facts.imports("triton")}
    for st in facts.effective(*_TRAIN_SEQ_KEYS):
        if st.name not in _TRAIN_SEQ_KEYS:
            continue  # a value read through another name (``max_length = max_position_embeddings``): not a training length
        v = as_number(st.value)
        # ``block_size: int = 128`` under "attention masking" (modded-nanogpt) is a kernel tile, not a context length:
        # a block size below 256 is ambiguous and left out
        if st.name.lower() == "block_size" and ((v is not None and v < 256) or "BLOCK_SIZE" in st.key or st.path in triton_files):
            continue  # ``BLOCK_SIZE = 1024`` / ``block_size = 1024`` beside a Triton kernel (Megatron-LM) is a tile size as well
        if st.name.lower() == "block_size" and st.source == "assign" and any(
                a.path == st.path and a.line == st.line and a.func and not _GROUPS_TEXT.search(a.func) for a in facts.assigns("block_size")):
            # a function's local (vila-u's tar reader: ``block_size = 512`` in ``next_header``; a download's chunk in a dataset's
            # ``__init__``) is a byte block, not a config; the cap in a text-grouping function (LMFlow ``group_text``) is one
            continue
        # a keyword of an arbitrary call (verl ``padding_utils.py:139 meta.update(seq_len=128)``) is not the run's context
        # length; a config or arguments object's is (``SFTConfig(max_seq_length=2048)``)
        if st.source == "call" and not _CONFIG_CALLEE.search(st.key.split("(", 1)[0]):
            continue
        if isinstance(st.value, float):
            continue  # a length is a whole number of tokens: ``block_size = 1e6`` (Megatron-DeepSpeed's Retro DB blocks) is not one
        if v and 16 <= v <= 10_000_000:
            # a CLIP model config's text tower (LLaVA-NeXT's 26 EVA-CLIP configs: ``text_cfg.context_length: 77``) sets the
            # length only for a project that trains CLIP itself (open_clip): counted apart, used when nothing else is set
            # (and CLIP's own text context, 77 tokens, as a CLIP trainer sets it: Fengshenbang's Taiyi-CLIP ``--seq_length``
            # default 77 in ``pretrain_taiyi_clip/pretrain.py`` beside its LLM recipes)
            clip = (st.source == "config" and st.key.startswith(_CLIP_TEXT)) or (
                v == 77 and (st.name.lower() == "context_length" or "clip" in st.path.lower()))
            (clip_text if clip else per_file).setdefault(st.path, set()).add(int(v))
    # a training length's option default on the training path (FastChat ``model_max_length: int = field(default=512)``) that
    # ``effective`` dropped for an alias set elsewhere with a higher rank (a serving module's generation
    # ``gen_kwargs["max_length"] = ...``): that is another name's value, and the default is still the run's length
    named_eff = {st.name for st in facts.effective(*_TRAIN_SEQ_KEYS)}
    for st in facts.settings(*_TRAIN_SEQ_KEYS):
        if st.name in _TRAIN_SEQ_KEYS and st.name not in named_eff and st.path in training \
                and st.source in ("field-default", "argparse-default"):
            v = as_number(st.value)
            if v and 16 <= v <= 10_000_000:
                per_file.setdefault(st.path, set()).add(int(v))
    # the launches and recipes set it, each its own value with no majority, so the vote kept only code defaults (VILA:
    # ``--model_max_length`` 4096 in 6 launches, 8192 in 4, 262144 in 4, ... up to 1048576 in LongVILA's): the
    # launches' values are the run's, the defaults of a side script's dataclass are not
    set_by_runs: dict[str, set[int]] = {}
    for st in facts.settings(*_TRAIN_SEQ_KEYS):
        v = as_number(st.value)
        if st.name in _TRAIN_SEQ_KEYS and st.source in ("launcher", "config") and st.rank > 0 and v and 16 <= v <= 10_000_000 \
                and not isinstance(st.value, float) and not _TEST_PATH_RE.search(st.path):
            set_by_runs.setdefault(st.path, set()).add(int(v))
    if not set_by_runs and not any(st.path in training for st in facts.effective(*_TRAIN_SEQ_KEYS)):
        # an RL run's sequence is its prompt and its response (OpenRLHF ``--prompt_max_len 1024 --generate_max_len 3000``,
        # Oat's ``--prompt_max_length`` and ``--generate_max_length``): what the launches set, when no training length is set
        per_file = _rl_seq_lens(facts) or per_file
    if len(set_by_runs) >= 3 and not any(st.source in ("launcher", "config") and as_number(st.value) is not None
                                         for st in facts.effective(*_TRAIN_SEQ_KEYS)):
        per_file = set_by_runs
    # (a project that only generates builds no CLIP text tower to train: LaVIT's ``text_cfg.context_length: 77`` in a visual
    # encoder's config is no length of its runs)
    per_file = per_file or (clip_text if p.does_training else {})
    per_file = {k: v for k, v in per_file.items() if len(v) <= 3}  # a table of presets is not a setting
    if not per_file:
        return
    # the README command that is the run (a repository that ships no launch, :meth:`Facts.documented_runs`) sets the run's
    # own value, before the training path's code defaults (FastChat's ``--model_max_length 2048`` over a 4096 default)
    runs = {x.path for x in facts.documented_runs()}
    own = [max(v) for k, v in per_file.items() if k in runs] or _documented_seq_len(facts) \
        or [max(v) for k, v in per_file.items() if k in training]
    votes: dict[int, int] = {}
    for v in per_file.values():
        for x in v:
            votes[x] = votes.get(x, 0) + 1
    if len(votes) > 1:
        p.notes["seq_len_distribution"] = dict(sorted(votes.items(), key=lambda kv: -kv[1]))
    if own and len(set(own)) == 1:
        p.max_seq_len = own[0]
        return
    best, n = max(votes.items(), key=lambda kv: (kv[1], kv[0]))
    if len(votes) == 1 or n * 2 > sum(votes.values()):
        p.max_seq_len = best


def _documented_scripts(facts: Facts) -> dict[str, str]:
    """The launch scripts the README runs or links as the way to train (:meth:`Facts.documented_recipes` that are shell
    scripts: lmm-r1's ``bash examples/scripts/lmm_r1/train_fre_text.sh``): a project's reproduction of its own runs. A
    framework's quick-start recipe (LLaMA-Factory's ``llamafactory-cli train examples/train_lora/qwen3_lora_sft.yaml``,
    axolotl's) is one example of a catalogue, and sizes no run."""
    return {p: w for p, w in facts.documented_recipes().items() if p.endswith(".sh")}


#: (prompt length, response length) option pairs of RL trainers: OpenRLHF, Oat, verl (``data.max_prompt_length``), TRL
_RL_LENGTHS = (("prompt_max_len", "generate_max_len"), ("prompt_max_length", "generate_max_length"),
               ("max_prompt_length", "max_response_length"), ("max_prompt_length", "max_completion_length"))


def _rl_seq_lens(facts: Facts) -> dict[str, set[int]]:
    """Path -> the prompt plus response lengths its RL launches or recipe configs set (both in one command or one file)."""
    out: dict[str, set[int]] = {}
    for prompt, response in _RL_LENGTHS:
        got: dict[tuple[str, str, str], dict[str, int]] = {}
        for st in facts.settings(prompt, response):
            v = as_number(st.value)
            if st.source not in ("launcher", "config") or st.rank <= 0 or not v or isinstance(st.value, float) \
                    or _TEST_PATH_RE.search(st.path):
                continue
            which = prompt if st.name == prompt else response if st.name == response else None
            if which is not None:
                got.setdefault((st.path, st.source, st.text if st.source == "launcher" else ""), {})[which] = int(v)
        for (path, _src, _cmd), pair in got.items():
            if len(pair) == 2 and 16 <= sum(pair.values()) <= 10_000_000:
                out.setdefault(path, set()).add(sum(pair.values()))
    return out


def _documented_seq_len(facts: Facts) -> list[int]:
    """The training length the recipes the README names or links as the way to train set, when they agree (for RL
    recipes, the longest prompt plus response among them): the run a user follows, even where more (upstream) scripts
    set another (Open-LLaVA-NeXT's "Training script with DeepSpeed
    ZeRO-2: [`finetune.sh`](scripts/v1_6/train/7b/finetune.sh)" at 4096, beside six LLaVA-1.5 scripts at 2048)."""
    documented = facts.documented_recipes()
    if not documented:
        return []
    found = {int(v) for st in facts.settings(*_TRAIN_SEQ_KEYS)
             if st.path in documented and st.name in _TRAIN_SEQ_KEYS and st.source in ("launcher", "config")
             and not isinstance(st.value, float) and (v := as_number(st.value)) and 16 <= v <= 10_000_000}
    if not found:  # RL recipes: prompt plus response (lmm-r1's README runs ``bash examples/scripts/lmm_r1/train_fre_text.sh``)
        found = {v for path, vs in _rl_seq_lens(facts).items() if path in documented for v in vs}
        return [max(found)] if found else []
    return list(found) if len(found) == 1 else []


# top-level keys that only a LLaMA-Factory / axolotl recipe file has together (a YAML-only project runs
# ``llamafactory-cli train x.yaml`` or ``axolotl train x.yml`` from its README)
_RECIPE_KEYS = {
    "llamafactory": ({"finetuning_type", "stage"}, {"finetuning_type", "template"}, {"template", "cutoff_len", "stage"}),
    "axolotl": ({"base_model", "sequence_len"}, {"base_model", "micro_batch_size"}),
}


def recipe_files(facts: Facts) -> dict[str, list[ConfigEntry]]:
    """LLaMA-Factory / axolotl recipe files by framework, each as its first top-level entry."""
    by_path: dict[str, list[ConfigEntry]] = {}
    for e in facts.records("configs"):
        if e.fmt in ("yaml", "json") and len(e.keys) == 1 and isinstance(e.keys[0], str):
            by_path.setdefault(e.path, []).append(e)
    out: dict[str, list[ConfigEntry]] = {}
    for entries in by_path.values():
        ks = {str(e.keys[0]) for e in entries}
        for fw, sigs in _RECIPE_KEYS.items():
            if any(sig <= ks for sig in sigs):
                out.setdefault(fw, []).append(min(entries, key=lambda e: e.line))
    return out


#: Megatron-LM's training scripts and the flags their launches pass
_MEGATRON_ENTRY = lazy_compile(r"(^|/)pretrain_\w+\.py$|(^|/)(finetune|train)_\w*megatron\w*\.py$")
_MEGATRON_LAUNCH_FLAGS = frozenset({"tensor_model_parallel_size", "pipeline_model_parallel_size", "micro_batch_size",
                                    "global_batch_size", "num_layers"})


def megatron_launch(x: Any) -> bool:
    """A launch that runs a Megatron-LM training script: ``pretrain_*.py`` with a Megatron flag, or three Megatron flags
    with a model-parallel size (B2's reading, and the overview's)."""
    flags = sum(k in _MEGATRON_LAUNCH_FLAGS for k in x.script_args)
    parallel = "tensor_model_parallel_size" in x.script_args or "pipeline_model_parallel_size" in x.script_args
    return bool(_MEGATRON_ENTRY.search(x.script or "") and flags >= 1) or (flags >= 3 and parallel)


def _megatron_launched(facts: Facts) -> bool:
    return any(megatron_launch(x) for x in facts.launches())


def _recipe_frameworks(facts: Facts) -> set[str]:
    return set(recipe_files(facts))


#: a checkpoint of an encoder-only model (``bert-base-cased``, ``FacebookAI/roberta-large``, ``microsoft/deberta-v3-base``)
_ENCODER_CKPT = lazy_compile(r"^([\w.-]+/)?(bert|roberta|xlm-roberta|distilbert|distilroberta|albert|electra|deberta(-v[23])?|camembert|"
                           r"mpnet|all-mpnet|minilm|all-minilm)([-_]|$)", re.I)
#: a load of a generative language model's class (``AutoModelForCausalLM``, ``T5ForConditionalGeneration``, ``GPT2LMHeadModel``)
_GENERATIVE_CLASS = lazy_compile(r"(CausalLM|Seq2SeqLM|ConditionalGeneration|LMHeadModel)\b")


def _defines_only(u: Any) -> bool:
    """A use that only names the class: a subclass's ``class X(MixtralForCausalLM, ...)`` line, its ``super(MixtralForCausalLM,
    self).__init__(config)``, or an import."""
    text = str(getattr(u, "text", "")).lstrip()
    return text.startswith(("class ", "from ", "import ", "super(")) or bool(re.match(r"^super\(\w+,\s*self\)", text))


def _moe_in_code(facts: Facts) -> list:
    """Uses of a mixture-of-experts model or layer, except a class only patched in place: a kernel library's
    ``modeling_mixtral.MixtralForCausalLM.forward = lce_forward`` (one of its per-family patch functions) changes that class
    for whoever trains it and says nothing of the model this project trains."""
    found = facts.uses("MixtralForCausalLM", "MoE", "MixtureOfExperts", "deepspeed.moe.layer.MoE", "SparseMoeBlock")
    if not found:
        return found
    sites = {(u.path, u.line) for u in found}
    patched = [a for a in facts.records("attr_assigns") if (a.path, a.line) in sites]
    off = _moe_layers_off(facts, sites)
    return [u for u in found if (u.path, u.line) not in off and not any(
        a.path == u.path and a.line == u.line and a.target.startswith(u.name + ".") for a in patched)]


def _moe_layers_off(facts: Facts, sites: set[tuple[str, int]]) -> set[tuple[str, int]]:
    """(path, line) of the mixture-of-experts layers built only in a branch the settings switch off (open_lm
    ``self.feed_forward = MoE(moe_args)`` under ``elif args.ffn_type == "moe":``, with ``ffn_type`` "swiglu" by default and
    in every model config): an architecture offered, not the run's."""
    from .rules._helpers import guard_off  # (the rules import this module)
    return {(c.path, c.line) for c in facts.calls("MoE", "MixtureOfExperts", "SparseMoeBlock") if (c.path, c.line) in sites
            and c.guard and guard_off(facts, c)}


def _moe_code_off(facts: Facts) -> bool:
    """Every mixture-of-experts layer of the code is built only in a branch that is off (see :func:`_moe_layers_off`)."""
    found = facts.uses("MoE", "MixtureOfExperts", "SparseMoeBlock")
    sites = {(u.path, u.line) for u in found}
    return bool(sites) and _moe_layers_off(facts, sites) == sites


def _encoder_models_only(facts: Facts, p: Project) -> bool:
    """Every model name the overview found is an encoder-only checkpoint (:data:`_ENCODER_CKPT`) and no call loads or
    builds a generative language model's class."""
    if not p.model_names or not all(_ENCODER_CKPT.match(n) for n in p.model_names):
        return False
    return not any(_GENERATIVE_CLASS.search(c.name) for c in facts.calls("from_pretrained", "from_config"))


#: constructors of contrastive image-text dual encoders: an image tower and a text tower trained to match (CLIP, SigLIP)
_DUAL_ENCODER_BUILDERS = ("open_clip.create_model_and_transforms", "open_clip.create_model", "open_clip.create_model_from_pretrained",
                          "CLIPModel.from_pretrained", "SiglipModel.from_pretrained", "CLIPModel", "SiglipModel")


def _dual_encoders_only(facts: Facts, p: Project) -> Call | None:
    """The first call outside the tests that builds a contrastive image-text dual encoder (OpenCLIP
    ``create_model_and_transforms(args.model, ...)``, ``CLIPModel.from_pretrained``), when the project names no language
    model family and nothing loads, builds or constructs a generative language model's class (``AutoModelForCausalLM``,
    ``T5ForConditionalGeneration``): the trained model is the dual encoder, not an LLM. None otherwise (OpenFlamingo takes
    an OpenCLIP image tower into an ``AutoModelForCausalLM``: an MLLM)."""
    builders = [c for c in facts.calls(*_DUAL_ENCODER_BUILDERS) if not _TEST_PATH_RE.search(c.path)]
    if not builders or p.model_families:
        return None
    if any(_GENERATIVE_CLASS.search(c.name) for c in facts.calls("from_pretrained", "from_config")):
        return None
    if facts.calls_where(lambda short: bool(_GENERATIVE_CLASS.search(short))):
        return None
    return builders[0]


def _looks_llm(facts: Facts, p: Project) -> bool:
    return bool(
        facts.calls("AutoModelForCausalLM.from_pretrained", "AutoModelForCausalLM.from_config")
        or {"transformers", "megatron", "vllm", "trl", "nanotron", "torchtune", "axolotl", "llamafactory"} & set(p.frameworks)
        or facts.settings("vocab_size", "n_layer", "num_hidden_layers")
    )


#: calls that read a checkpoint's weights into a model (``bmt.load(model, path)``, ``model.load_state_dict(torch.load(path))``)
_WEIGHT_LOADS = ("torch.load", "bmtrain.load", "safetensors.torch.load_file", "safetensors.torch.load_model", "load_state_dict",
                 "load_checkpoint")
#: generation, conversion, evaluation or tokenizer/config files: a weight load there is not the trained model's
_NOT_MODEL_FILE = lazy_compile(r"generat|sampl|convert|conversion|export|eval|infer|chat|serve|server|demo|bench|"
                             r"tokeni[sz]er|processor|config", re.I)


def pretrained_option_to_model(facts: Facts) -> Call | None:
    """A call outside the tests that builds a model (its name says ``model``) and is handed the run's ``pretrained`` option
    off the options object, positionally or as ``pretrained=`` (OpenCLIP ``create_model_and_transforms(args.model,
    args.pretrained, ...)``, ``timm.create_model(cfg.model, pretrained=cfg.pretrained)``), where the project declares that
    option (an argparse ``--pretrained`` or a config field): the first such call. A teacher's weights
    (``args.distill_pretrained``) are not the trained model's."""
    if not any(s.source in ("argparse-default", "field-default") and not _TEST_PATH_RE.search(s.path)
               for s in facts.settings("pretrained")):
        return None
    for c in facts.calls_where(lambda short: "model" in short.lower()):
        if _TEST_PATH_RE.search(c.path):
            continue
        values = [*c.args[:3], c.kwargs.get("pretrained")]
        if any(_PRETRAINED_OPTION.match(getattr(v, "text", "") or "") for v in values if v is not None):
            return c
    return None


def own_pretrained_loader(facts: Facts) -> Call | None:
    """A weight load inside the project's own ``from_pretrained`` (a model library's ``BaseModel.from_pretrained`` that builds
    the model from its config and reads the checkpoint into it, ModelCenter's ``bmt.load(model, .../pytorch_model.pt)``): the
    project loads pretrained weights into the models it trains, even when every ``from_pretrained`` call it makes itself is a
    tokenizer's or config's. Not in a test or a generation/conversion/evaluation/tokenizer/config file."""
    for c in facts.calls(*_WEIGHT_LOADS):
        if (c.func or "").rsplit(".", 1)[-1] == "from_pretrained" and not _TEST_PATH_RE.search(c.path) \
                and not _NOT_MODEL_FILE.search(c.path.rsplit("/", 1)[-1]):
            return c
    return None


def _only_tokenizer_loads(facts: Facts) -> bool:
    return all("Tokenizer" in c.name or "Processor" in c.name or "Config" in c.name for c in facts.calls("from_pretrained"))



#: a function that builds an empty model only to load quantized, compressed or converted weights into it (FastChat
#: ``load_compress_model``, ``load_awq_quantized``: ``AutoModelForCausalLM.from_config(config)`` under
#: ``init_empty_weights()``): a skeleton for released weights, not a model initialised to pre-train
_SKELETON_FUNC = lazy_compile(r"(?i)quant|compress|awq|gptq|exllama|convert|export|merge|(^|_)(int[48]|[48]bit)(_|$)")


def fresh_models(facts: Facts) -> list[Call]:
    """``from_config`` calls that initialise a model from its configuration (random weights: pre-training), not
    skeletons that quantized or converted weights are loaded into (:data:`_SKELETON_FUNC`)."""
    return [c for c in facts.calls("from_config", "_from_config") if not (c.func and _SKELETON_FUNC.search(c.func))
            and not _NOT_A_MODEL.search(c.name)]


#: a ``from_config`` receiver that builds no model: a data processor, tokenizer or feature extractor (unified-io-2
#: ``UnifiedIOPreprocessor.from_config(config, tokenizer_path)``), whose configuration holds no weights to initialise
_NOT_A_MODEL = lazy_compile(r"(Processor|Preprocessor|Tokenizer\w*|FeatureExtractor|Collator|Transforms?)\.(_?from_config)$")


#: a model class of the project's own that joins an image encoder to a language model (nanoVLM ``VisionLanguageModel``,
#: ``MyVLM``, ``MultiModalForCausalLM``)
_OWN_VLM_CLASS = lazy_compile(r"(?i)^\w*(VisionLanguage|VisionText|ImageText|Vision2Seq|VLM|MLLM|Multi_?[Mm]odal)\w*$")


def own_model_classes(facts: Facts, name: re.Pattern[str], bases: tuple[str, ...] = ("Module", "PreTrainedModel")) -> list[Any]:
    """Classes the project defines outside tests whose name matches ``name`` and one of whose bases ends in ``bases``
    (an ``nn.Module``/``MegatronModule`` or ``PreTrainedModel`` subclass: a model, not its config or processor), in path
    order."""
    out = []
    for path, ff in facts.files.items():
        if ff.kind != "python" or _TEST_PATH_RE.search(path):
            continue
        out += [k for k in ff.classes if name.match(k.name) and any(b.rsplit(".", 1)[-1].endswith(bases) for b in k.bases)]
    return sorted(out, key=lambda k: (k.path, k.line))


#: a model's image encoder run by name (moondream ``model._run_vision_encoder(sample["image"])``, LLaVA ``encode_images``)
_VISION_STEP = tuple(f"{u}{r}{n}" for u in ("", "_") for r in ("", "run_") for n in (
    "vision_encoder", "vision_tower", "vision_model", "encode_images", "encode_image", "image_encoder", "get_image_features"))


def _vision_in_step(facts: Facts) -> list[Any]:
    """Calls of a model's image encoder in a file that runs the training step (a backward pass): the run feeds images to
    the model, whatever its classes are called (moondream's ``finetune_text.py``: ``img_emb =
    model._run_vision_encoder(sample["image"])`` beside ``loss.backward()``)."""
    stepping = {c.path for c in facts.calls("backward") if not _TEST_PATH_RE.search(c.path)}
    return [c for c in facts.calls(*_VISION_STEP) if c.path in stepping] if stepping else []


#: a causal language model's class (``DeepseekV2ForCausalLM``, ``LlamaForCausalLM``, ``GPT2LMHeadModel``)
_LM_CLASS = lazy_compile(r"^\w+(ForCausalLM|LMHeadModel)$")
#: HF's causal LMs a vision-language model's constructor builds around its image model (Janus: ``LlamaForCausalLM(config)``)
_HF_LMS = ("LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM", "Phi3ForCausalLM", "GemmaForCausalLM", "Gemma2ForCausalLM",
           "Qwen3ForCausalLM", "AutoModelForCausalLM.from_config", "AutoModelForCausalLM.from_pretrained")


#: Hugging Face image towers a composite model builds in its constructor from a config
_HF_VISION = ("CLIPModel", "CLIPVisionModel", "CLIPVisionModelWithProjection", "CLIPVisionTransformer", "SiglipVisionModel",
              "SiglipModel", "Siglip2VisionModel", "Dinov2Model")


def _composite_vlms(facts: Facts) -> list[str]:
    """Model classes whose constructor builds both the project's own image model and a causal language model (DeepSeek-VL2
    ``DeepseekVLV2ForCausalLM.__init__``: ``self.vision = VisionTransformer(...)``, ``self.language =
    DeepseekV2ForCausalLM(language_config)``), that a script of the project imports or builds: a vision-language model,
    whatever it is named, trained or only run."""
    from .rules._helpers import class_at  # the rules import this module

    # (or a Hugging Face image tower built from its config: Macaw-LLM ``MM_LLMs.__init__``: ``self.image_encoder =
    # CLIPModel(config.image_config)`` beside ``self.llm = LlamaForCausalLM(config.llm_config)``)
    vision = {k.name for k in _own_vision_classes(facts)} | set(_HF_VISION)
    lms = [*{k.name for k in own_model_classes(facts, _LM_CLASS)}, *_HF_LMS]
    built = {(c.path, class_at(facts, c.path, c.line)) for c in facts.calls(*lms) if c.func == "__init__"}
    found = {k: c.path for c in facts.calls(*vision) if c.func == "__init__" and (c.path, k := class_at(facts, c.path, c.line)) in built
             and k is not None}
    out = sorted(found)
    if not out:
        return out
    tops = {p.split("/", 1)[0].removesuffix(".py") for p in found.values()}  # the package that defines it, as scripts import it
    used = {i.name for i in facts.imports(*tops) if i.name in out and not _TEST_PATH_RE.search(i.path)}
    used |= {c.short for c in facts.calls(*out)}
    used |= {c.name.rsplit(".", 2)[-2] for c in facts.calls(*(f"{k}.from_pretrained" for k in out))}
    return [k for k in out if k in used]


#: a builder of a vision encoder called by name (Cobra's and prismatic's ``get_vision_backbone_and_transform(...)`` beside
#: ``get_llm_backbone_and_tokenizer(...)`` in ``scripts/pretrain.py``, LLaVA's ``build_vision_tower(model_args)``)
_VISION_BUILDER = lazy_compile(r"^_?(get|build|create|load|init)_(vision|visual|vit|image)_?\w*(backbone|tower|encoder)\w*$")


def _vision_builders(facts: Facts, train_paths: set[str] | frozenset[str]) -> list[Any]:
    """Calls of a vision-encoder builder in an entry point of the training path (a script a launch, a documented command or
    a console script runs), outside tests: the run builds an image encoder for its language model. (Not a builder deep
    in a library of model providers: Megatron-Bridge's MIMO provider calls ``build_vision_encoder_spec``.)"""
    return [c for c in facts.calls_where(_VISION_BUILDER.match)
            if not _TEST_PATH_RE.search(c.path) and facts.entry_point(c.path) and (not train_paths or c.path in train_paths)]


def _own_vision_classes(facts: Facts) -> list[Any]:
    """The project's own image-model classes (:data:`_OWN_VISION_NAME`), outside tests."""
    return own_model_classes(facts, _OWN_VISION_NAME)


#: an image model's class (``VisionTransformer``, ``SiglipVisionModel``, ``CLIPVisionTower``, ``InternVisionModel``)
_OWN_VISION_NAME = lazy_compile(r"^(\w*Vision(Transformer|Model|Tower|Encoder)\w*|ViT\w*|\w+ViT|Vit\w*Model)$")


def _own_vlm_classes(facts: Facts) -> list[Any]:
    """Model classes the project defines named for a vision-language model (:func:`own_model_classes`) and built where
    training steps."""
    out = [k for k in own_model_classes(facts, _OWN_VLM_CLASS) if not re.search(r"(?i)(config|processor|dataset|collator|args)$", k.name)]
    if not out:
        return out
    # ... built where the training step runs (nanoVLM's train.py: ``model = VisionLanguageModel(cfg)`` beside
    # ``loss.backward()``), not only offered as a model plugin (slime's ``Qwen3_5VLModel`` provider)
    stepping = {c.path for c in facts.calls("backward")}
    names = {k.name for k in out}
    built = {n for c in facts.calls(*names, *(f"{n}.from_pretrained" for n in names)) if c.path in stepping
             for n in names if c.short == n or c.name.endswith(f"{n}.from_pretrained")}
    return [k for k in out if k.name in built]


def preference_losses(facts: Facts) -> list[Call]:
    """Preference losses of the DPO family written out by the project: ``logsigmoid`` of a ``beta``-scaled margin (SPIN
    ``losses = -F.logsigmoid(self.beta * logits)``, minimind ``train_dpo.py``, gpt-neox ``neox_args.dpo_beta * logits``)."""
    from .rules._helpers import _FRAMEWORK_CALLED, callers_off  # the rules import this module

    out: list[Call] = []
    for c in facts.calls("logsigmoid"):
        if not (c.args and isinstance(c.args[0], Expr) and _BETA.search(c.args[0].text)) or _TEST_PATH_RE.search(c.path):
            continue
        func = c.func
        if func and not func.startswith("__") and not _FRAMEWORK_CALLED.match(func) and not facts.calls(func) \
                and not any(r.name.rsplit(".", 1)[-1] == func for r in facts.refs(func)):
            continue  # a loss function nothing in the project calls (a ``loss=dpo`` the runs never pick reaches it only by name)
        if callers_off(facts, c):
            continue  # called only under a switch that is off
        out.append(c)
    return out


def alignment_steps(facts: Facts) -> list[Call]:
    """Optimizer steps in the project's own trainer module for a preference/RL/distillation algorithm (``_ALIGN_MODULE``):
    ``self.optimizer.step()`` or, under a gradient scaler, ``scaler.step(optimizer)`` (minimind ``train_dpo.py``); and the
    backward passes of a training script in a folder named for one (DeepSpeed-Chat ``training/step2_dpo_finetuning/main.py``:
    ``model.backward(loss)`` on its DeepSpeed engine)."""
    steps = [c for c in facts.calls("step") if c.short == "step" and _ALIGN_MODULE.search(c.path) and not _TEST_PATH_RE.search(c.path)
             and ("optim" in c.name.lower() or any(isinstance(a, Expr) and "optim" in a.text.lower() for a in c.args[:1]))]
    return steps + [c for c in facts.calls("backward") if _ALIGN_DIR.search(c.path) and not _TEST_PATH_RE.search(c.path)]

#: an HF-style model definition module (``modeling_internvl_chat.py``): its ``chat``/``batch_chat`` helpers call ``generate``
#: for the model's users; the name of the model ("chat") does not make it an inference script
_MODEL_MODULE = lazy_compile(r"(^|/)(modeling|configuration|processing|tokenization|image_processing)_\w+\.py$")


def _unstarted_training(facts: Facts, p: Project, train_paths: frozenset[str], steps: list[Any]) -> bool:
    """Training steps that no run reaches, in a repository that runs inference: no training entry point or launch of any
    kind, no documented command, no packaging (a library's users write the entry points: TRL's trainers), no Lightning
    module and a generation entry the project does run."""
    if train_paths or facts.launches() or not steps or _lightning_steps(facts):
        return False
    if any(h.kind in ("command", "command_file", "run_script") for h in facts.records("doc_hints")):
        return False
    if any(path.rsplit("/", 1)[-1] in _PACKAGING_NAMES or path.endswith((".dist-info/METADATA", "/PKG-INFO")) for path in facts.files):
        return False  # (a wheel's or an sdist's metadata too: collie-lm's wheel ships no setup.py)
    # ... and a generation script of its own that runs (MovieChat's ``inference.py``: ``generate`` under its main block)
    runs = {c.path for c in facts.calls("generate", "chat", "stream_chat", "answer") if _inference_file(c.path)}
    if not any(c.path in runs and c.func is None for c in facts.records("calls")):
        return False
    return _does_inference(facts, p)


#: the files that make a folder an installable package
_PACKAGING_NAMES = frozenset({"setup.py", "pyproject.toml", "setup.cfg"})


def _inference_file(path: str) -> bool:
    """A file named or filed for inference; a model definition module counts only by its folder (``serve/modeling_qwen.py``)."""
    if not _MODEL_MODULE.search(path):
        return bool(_INFER_PATH.search(path))
    return "/" in path and bool(_INFER_PATH.search(path.rsplit("/", 1)[0]))


def _own_steps(facts: Facts) -> bool:
    """Whether the scope has a training step of its own: a call that runs one (``backward``, ``optimizer.step``, a
    trainer's ``train``/``fit``) other than infrastructure handing it on (see :func:`_not_a_training_call`)."""
    return any(not _not_a_training_call(c) for c in facts.calls("backward", "Trainer", "SFTTrainer", "fit", "train",
                                                                 "optimizer.step", "step", "pretrain"))


def _finetunes_otherwise(facts: Facts, p: Project, declared: set[str] = frozenset()) -> bool:  # type: ignore[assignment]
    """A fine-tuning signal other than a ``from_pretrained`` load of weights (with it, :func:`detect_project`'s ``finetunes``).
    ``declared``: frameworks seen only in the dependencies, which no code imports, launches or names in a recipe
    (alpaca_eval lists ``peft`` for its local decoders; its own code evaluates): they say nothing about fine-tuning."""
    if "peft" in p.frameworks and _adapters_only_loaded(facts):
        declared = set(declared) | {"peft"}
    return bool(
        p.alignment  # preference/RL/distillation training starts from a pretrained model
        or {"peft", "trl", "llamafactory", "axolotl"} & (set(p.frameworks) - declared)
        # set by a config or launch, not an argparse/dataclass default (Megatron defines ``--finetune``, default off);
        # Megatron's ``--load`` resumes pre-training and says nothing about fine-tuning
        or any(truthy(s.value) is not False and s.source not in ("argparse-default", "field-default")
               for s in facts.settings("finetuning_type", "lora_r", "lora_rank", "adapter", "pretrained_checkpoint", "finetune"))
        # (a guide named for fine-tuning counts beside training code of the project's own, pytorch-accelerated's
        # ``docs/fine_tuning.rst``; in a repository that trains nothing itself, InternLM's ``finetune/README.md`` pointing at
        # XTuner and LLaMA-Factory documents someone else's training)
        # (not a dataset file: LLaVA-Med's ``data/instruct/llava_med_instruct_60k.json`` is instruction data it releases)
        or any(_finetune_path(path) for path in facts.files if (not path.lower().endswith(_DOC_EXT) or _own_steps(facts))
               and not _DATA_FILE.search(path))
        # the model factory is handed the run's ``--pretrained`` option (OpenCLIP ``create_model_and_transforms(args.model,
        # args.pretrained, ...)``): the run can start from released weights, a fine-tuning path even with the option unset
        or pretrained_option_to_model(facts) is not None
        # a launch/config that starts from a hub checkpoint (``--model_name_or_path OpenGVLab/InternVL2-8B``)
        or any(isinstance(s.value, str) and "/" in s.value and s.source in ("launcher", "config")
               for s in facts.settings("model_name_or_path", "base_model", "pretrained_model_name_or_path"))
    )


#: a dataset file under a data folder: records, not code or a recipe
_DATA_FILE = lazy_compile(r"(^|/)(data|datasets?)/(.+/)?[^/]+\.(jsonl?|parquet|csv|tsv|arrow)$", re.I)


def _adapters_only_loaded(facts: Facts) -> bool:
    """PEFT is used only to load trained adapters for generation: every call into it is ``PeftModel.from_pretrained``
    without ``is_trainable=True`` (LLaVA-Med's ``llava/model/builder.py``: the LoRA weights are loaded and merged with
    ``merge_and_unload()`` for serving). No adapter is configured or attached, so nothing is fine-tuned with it."""
    uses = [c for c in facts.records("calls") if c.name.split(".", 1)[0] == "peft"]
    # (or an adapter config built for inference and attached to load trained weights into: Luotuo's evaluation notebooks,
    # ``LoraConfig(task_type=TaskType.CAUSAL_LM, inference_mode=True, r=8)`` then ``get_peft_model(model, peft_config)``
    # and the saved ``.pt`` state dict loaded into it)
    configs = [c for c in uses if c.short == "LoraConfig"]
    inference_cfg = bool(configs) and all(truthy(c.kwargs.get("inference_mode")) is True for c in configs)
    return bool(uses) and all((c.short == "from_pretrained" and truthy(c.kwargs.get("is_trainable")) is not True)
                              or (inference_cfg and c.short in ("LoraConfig", "get_peft_model", "set_peft_model_state_dict"))
                              for c in uses)


#: HF pipeline tasks that run one forward pass per input and decode nothing (RLHF-Reward-Modeling's reward server:
#: ``pipeline("sentiment-analysis", model=model_path, ...)`` scores responses): no generation workload for J
_SCORING_TASKS = frozenset({"sentiment-analysis", "text-classification", "token-classification", "ner", "feature-extraction",
                            "fill-mask", "zero-shot-classification", "question-answering", "image-classification",
                            "audio-classification", "object-detection", "image-segmentation", "zero-shot-image-classification"})


def _scoring_pipeline(c: Call) -> bool:
    """``pipeline(task, ...)`` whose task (first argument or ``task=``) is a forward-only scoring task."""
    if c.short != "pipeline":
        return False
    task = c.args[0] if c.args else c.kwargs.get("task")
    return isinstance(task, str) and task in _SCORING_TASKS


def _does_inference(facts: Facts, p: Project) -> bool:
    """Inference is a workload of the project: an engine, a generation script/service, or online-RL rollouts.

    ``model.generate`` inside training or evaluation code (``eval.py``, a callback) does not make a training
    repository an inference project: J is about serving/generation throughput, not a few eval samples.
    """
    if facts.imports(*_INFERENCE_ENGINES) or facts.launches("vllm"):
        return True
    # an engine in the dependencies counts when the project has no Python code of its own in scope (a serving image's
    # requirements); beside code that never imports it (alpaca_eval lists ``vllm`` for the local decoders of its evaluation
    # harness, code outside the training path) it is declared, not run
    if facts.deps("vllm", "sglang", "tensorrt-llm", "lmdeploy", "text-generation") and not any(
            path.endswith(".py") and path != "setup.py" and not path.endswith("/setup.py") for path in facts.files):
        return True
    if facts.launches(*_SERVING_LAUNCHERS) or any((x.script or "").split(".")[0] in _INFERENCE_ENGINES for x in facts.launches("python")):
        return True
    # a Cog predictor (DeepSeek-Math's ``replicate/predict.py``: ``class Predictor(BasePredictor)``, whose ``predict`` streams
    # ``self.model.generate`` from a thread): Replicate serves the model through it
    if facts.imports("cog") and any(b.rsplit(".", 1)[-1] == "BasePredictor" for k in facts.records("classes") for b in k.bases):
        return True
    if any(isinstance(e.value, str) and any(i in e.value for i in _SERVING_IMAGES) for e in facts.config("image")):
        return True
    # an inference recipe (LLaMA-Factory ``llamafactory-cli chat/api x.yaml``: ``infer_backend`` without training keys)
    if any(not _TRAIN_RECIPE_KEYS & {str(k.keys[0]) for k in facts.files[e.path].configs if k.keys}
           for e in facts.config("infer_backend") if len(e.keys) == 1 and e.path in facts.files):
        return True
    if any(_inference_file(c.path) and "Trainer" not in c.text and not _scoring_pipeline(c) for c in facts.calls("generate", "pipeline")):
        return True
    # a remote-code model's own chat methods (ChatGLM2-6B ``api.py``: ``model.chat(tokenizer, prompt, history=history)``;
    # ``openai_api.py``, ``cli_demo.py``: ``model.stream_chat(...)``), served or streamed by an inference-named script
    if any(_inference_file(c.path) and _MODEL_CHAT.match(c.name) for c in facts.calls("chat", "stream_chat")):
        return True
    # a model's own decoding loop named for its method (Medusa ``model.medusa_generate(input_ids, ...)`` streamed by
    # ``medusa/inference/cli.py``; EAGLE ``ea_generate``): a method call ending in ``_generate`` in an inference-named file
    # (``generate_candidates``, ``generate_medusa_buffers`` build parts of a step and are not the loop)
    if any(_inference_file(c.path) and c.name.count(".") >= 1 and "Trainer" not in c.text
           for c in facts.calls_where(_GENERATE_METHOD.fullmatch)):
        return True
    # a hand-written decode loop outside training code (StreamingLLM's ``greedy_generate``: ``model(input_ids=...,
    # past_key_values=past_key_values, use_cache=True)`` once per generated token)
    if any(c.loop is not None and truthy(c.kwargs.get("use_cache")) is True and c.path in facts.files
           and not trains_itself(facts.files[c.path]) for c in facts.calls_with_kw("past_key_values")):
        return True
    # Megatron Core's own inference engines (``megatron.core.inference.engines``), built by its inference scripts
    if any(c.name.startswith("megatron.core.inference.") for c in facts.calls("DynamicInferenceEngine", "StaticInferenceEngine")):
        return True
    if facts.calls(*_ONLINE_RL) or any(isinstance(s.value, str) and s.value.lower() == "ppo" for s in facts.settings("stage")):
        return True
    # RL rollouts configured in a config (verl ``actor_rollout_ref.rollout``, TRL/OpenRLHF ``use_vllm``)
    if facts.config("rollout.name") or any(truthy(s.value) for s in facts.effective("use_vllm")):
        return True
    return any(_RL_SCRIPTS.search(launch.script or "") for launch in facts.launches())


#: a batch or launch script named for serving, generation or evaluation (open-r1 ``slurm/serve_r1_vllm.slurm``,
#: ``generate.slurm``, ``evaluate.slurm``): the nodes it asks for serve a model, they are not the training run's
#: (``ckpt_ds_zero_to_universal.sh``, ``mcore_to_hf.sh``: a checkpoint converted from one layout to another)
#: a checkpoint tool, by its file's name without the extension (TencentPretrain
#: ``scripts/convert_llama_from_megatron_checkpoint_to_pytorch_checkpoint.py``, Yuan 2.0 ``tools/merge_pp_partitions.py`` and
#: ``examples/convert_hf.sh``, maxtext ``llama_or_mistral_ckpt.py``): its parallel layout and save interval are the
#: checkpoint's, not a run's
_CHECKPOINT_TOOL_NAMES = r"export|convert|_to_(hf|huggingface|universal|fp32|megatron|mcore|dcp)(_|$)|(^|_)(merge|split)_|partitions"
#: (and Megatron-LM's ``tools/checkpoint_util.py``, which reshards a checkpoint to other parallel sizes)
CHECKPOINT_TOOL = lazy_compile(_CHECKPOINT_TOOL_NAMES + r"|_c(h)?kpt$|^checkpoint_util$", re.I)
_NOT_TRAINING_SCRIPT = lazy_compile(r"infer|generat|serv(e|er|ing)|eval|bench|router|pass_rate|" + _CHECKPOINT_TOOL_NAMES, re.I)


def checkpoint_tool_file(path: str) -> bool:
    """Whether the file at ``path`` (a script, a module or a launch's script argument) is named for a checkpoint tool."""
    return bool(CHECKPOINT_TOOL.search(path.rsplit("/", 1)[-1].rsplit(".", 1)[0]))


def checkpoint_tool(facts: Facts, s: Any) -> bool:
    """A setting of a checkpoint tool: a code default in a Python file named for one, a flag of a shell script named for
    one, or a flag passed to such a script."""
    names = [s.path] if s.source in ("argparse-default", "field-default", "launcher") else []
    if s.source == "launcher" and getattr(s, "script", None):
        names.append(str(s.script))
    return any(checkpoint_tool_file(n) for n in names)


def _not_training_script(facts: Facts, path: str) -> bool:
    """A shell/batch script that runs no training: named for another job, or launching only inference engines."""
    ff = facts.files.get(path)
    if ff is None or ff.kind != "shell":
        return False
    if _NOT_TRAINING_SCRIPT.search(path.rsplit("/", 1)[-1].rsplit(".", 1)[0]):
        return True
    return bool(ff.launches) and all(x.launcher in _SERVING_LAUNCHERS for x in ff.launches)


def launch_runs_no_training(facts: Facts, path: str) -> bool:
    """A shell/batch launch file that runs no training (see :func:`_not_training_script`), or that sits in a folder of
    serving or generation work (Megatron-LM ``examples/inference/advanced/run_prefix_cache_lru_resume_repro.sh``): the
    environment it exports configures that run, not training."""
    if _not_training_script(facts, path):
        return True
    ff = facts.files.get(path)
    return ff is not None and ff.kind == "shell" and any(_SERVE_PATH.search(part) for part in path.split("/")[:-1])


#: a shell positional parameter with a default (``${1:-1}``): the script's caller passes the value
_POSITIONAL_DEFAULT = lazy_compile(r"^\$\{\d+:-(\d+)\}$")
#: torchrun's node-count flag as launches spell it (argparse takes the prefix ``--nnode``: picotron's Slurm template)
_NNODES_KEYS = ("nnodes", "nnode")
#: the node counts of OpenRLHF's Ray roles (``train_ppo_ray``'s ``--actor_num_nodes``, ``--critic_num_nodes``...)
_RAY_ROLE_NODES = ("actor_num_nodes", "critic_num_nodes", "ref_num_nodes", "reward_num_nodes")


def _topology(facts: Facts, p: Project, train_paths: frozenset[str] = frozenset()) -> None:
    nodes: list[tuple[float, str]] = []
    unresolved_at: dict[str, str] = {}  # where a multi-node launch leaves its node count to the environment -> that value
    gpus: list[float] = []
    local_only: set[tuple[str, int]] = set()  # the node count of a ``--standalone`` launch (its flag is a setting too)
    by_argument: list[str] = []  # launches whose node count is the script's own argument, one node by default
    unresolved_gpus: list[str] = []  # launches whose process count is set when they start
    for launch in facts.launches():
        if _not_training_script(facts, launch.path):
            continue
        # a README command that is the run (:meth:`Facts.documented_runs`) says how many GPUs; a node count in one of them
        # is a documented multi-node variant (nanoGPT's "across 2 nodes like"), read below as documented, not configured
        documented = launch.path.endswith(_DOC_EXT)
        # ``torchrun --standalone --nnodes 8`` (GaLore's scripts/benchmark_c4/llama_7b.sh): standalone sets a rendezvous on
        # localhost with a fresh id, so no other node can join; as written the launch waits for nodes that never come
        standalone = "standalone" in launch.launcher_args
        for k, v in {**launch.launcher_args}.items():
            n = as_number(v) if not isinstance(v, str) or ":" not in v else as_number(v.split(":")[-1])
            if k in {"nnodes", "nnode", "num_nodes", "num_machines"} and n and not documented:
                if standalone and n > 1:
                    p.notes.setdefault("standalone_nodes", f"{launch.path}:{launch.arg_line(k)}")
                    local_only.add((launch.path, launch.arg_line(k)))
                    continue
                nodes.append((n, f"{launch.path}:{launch.line}"))
            if k in {"nproc_per_node", "num_gpus", "gpus", "num_processes", "nproc-per-node"} and n and not _inference_launch(facts, launch):
                gpus.append(n)  # (not a chat demo's ``deepspeed --num_gpus=1 examples/vis_chatbot.py``: LMFlow)
            elif k in {"nproc_per_node", "num_gpus", "gpus", "num_processes", "nproc-per-node"} and isinstance(v, str) and "$" in v \
                    and not documented and not _inference_launch(facts, launch):
                # a count the launch takes when it starts (mPLUG-DocOwl ``--nproc_per_node $(nvidia-smi ... | wc -l)``)
                unresolved_gpus.append(f"{launch.path}:{launch.arg_line(k)}")
        cfg = launch.launcher_args.get("config_file") if launch.launcher == "accelerate" else None
        if isinstance(cfg, str) and "num_processes" not in launch.launcher_args and not _inference_launch(facts, launch):
            # the accelerate config the launch names sets the process count (sailor-llm ``accelerate launch --config_file
            # fsdp_config.yaml``: ``num_processes: 8``, ``num_machines: 1``)
            from .rules._helpers import resolve_file  # the rules import this module

            where = resolve_file(facts, cfg)
            for st in facts.settings("num_processes") if where else ():
                if st.path == where and (n := as_number(st.value)) and n > 0:
                    gpus.append(n)
        # (a README command that is the run counts too: Aurora's ``CUDA_VISIBLE_DEVICES=5 python src/train_bash.py`` trains on
        # one GPU)
        if not _inference_launch(facts, launch) and (visible := _visible_gpus(launch, facts)):
            gpus.append(visible)
        elif launch.launcher == "accelerate" and not _inference_launch(facts, launch) \
                and not {"num_processes", "config_file", "num_machines"} & set(launch.launcher_args):
            # ``accelerate launch src/train_bash.py`` after ``accelerate config`` (CareGPT's README): the saved default config
            # sets the process count, which the repository does not show
            unresolved_gpus.append(f"{launch.path}:{launch.line}")
        # a rendezvous address or node rank with a node count left to the environment ($NNODES): multi-node;
        # ``--nnodes 1 --master_addr localhost`` is not
        # (accelerate spells them ``--num_machines $NUM_NODES --machine_rank $SLURM_PROCID --main_process_ip $MASTER_ADDR``:
        # alignment-handbook's ``recipes/launch.slurm``)
        nn = next((launch.launcher_args[k] for k in (*_NNODES_KEYS, "num_machines") if k in launch.launcher_args), None)
        unresolved = nn is not None and as_number(str(nn).split(":")[-1]) is None
        if documented:
            continue
        by_arg = _POSITIONAL_DEFAULT.match(str(nn)) if unresolved else None
        if by_arg and int(by_arg.group(1)) <= 1 and "hostfile" not in launch.launcher_args:
            # the count is the script's own argument with a default of one node (VideoLLaMA2 ``ARG_WORLD_SIZE=${1:-1}``,
            # ``torchrun --nnodes $WORLD_SIZE --master_addr=...``): one node as shipped, more when a caller passes it
            k = next(k for k in (*_NNODES_KEYS, "num_machines") if k in launch.launcher_args)
            by_argument.append(f"{launch.path}:{launch.arg_line(k)}: `--{k} {nn}` (the node count is an argument of the "
                               f"script, {by_arg.group(1)} by default)")
        elif unresolved and (job := _sbatch_nodes(facts, launch, str(nn))) is not None:
            # ``torchrun --nnodes $SLURM_NNODES`` in a batch script that asks for its nodes (OpenRLHF's
            # ``train_llama_slurm.sh``: ``#SBATCH -N 1``): the count the scheduler gives, one node there
            if job[0] > 1:
                nodes.append(job)
        elif (hosts := _hostfile_hosts(facts, launch)) is not None:
            # the hostfile the launch names, shipped beside it (ColossalChat's ``--hostfile ./hostfile`` holding ``localhost``):
            # its hosts are the nodes, cited where the file lists them; a list that goes on (``...``) gives a least, no count
            count, listed, more = hosts
            if more:  # a template filled in for the job: several nodes, the count unknown
                nodes.append((max(count, 2), f"{launch.path}:{launch.line}"))
                unresolved_at[f"{launch.path}:{launch.line}"] = f"{listed} lists {count}, then ..."
            elif count > 1:
                nodes.append((count, listed))
        elif "hostfile" in launch.launcher_args or (unresolved and any(k in launch.launcher_args for k in (
                "master_addr", "node_rank", "rdzv_endpoint", "machine_rank", "main_process_ip"))):
            # cited at the line that holds the node count (aguvis: ``--nnodes ${WORLD_SIZE}`` in a flag string above the command)
            key = next((k for k in ("nnodes", "nnode", "num_nodes", "num_machines", "hostfile", "master_addr", "node_rank",
                                    "rdzv_endpoint", "machine_rank", "main_process_ip") if k in launch.launcher_args), "")
            at = f"{launch.path}:{launch.launcher_arg_lines.get(key, launch.line)}"
            nodes.append((2, at))
            counted = any(as_number(str(launch.launcher_args.get(k, "")).split(":")[-1])
                          for k in ("nnodes", "nnode", "num_nodes", "num_machines"))
            if not counted:  # ``deepspeed --num_nodes 2 --hostfile hostfile`` gives its count
                unresolved_at[at] = str(nn) if unresolved else "a hostfile"
        # a model-parallel group larger than one node's GPUs (Megatron ``--tensor-model-parallel-size 8
        # --pipeline-model-parallel-size 16`` with ``--nproc_per_node 8``) can only run across nodes
        per_node = as_number(launch.launcher_args.get("nproc_per_node"))
        group = 1.0
        for k in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size"):
            group *= as_number(launch.script_args.get(k)) or 1.0
        if per_node and per_node >= 1 and group > per_node:
            nodes.append((-(-group // per_node), f"{launch.path}:{launch.line}"))
    unnamed: list[str] = []
    # (OpenRLHF's Ray launcher places each model on its own nodes: MM-EUREKA ``--actor_num_nodes 2 --actor_num_gpus_per_node 8``)
    for s in facts.effective("num_machines", "nnodes", "num_nodes", "nodes", "NNODES", "trainer.num_nodes", *_RAY_ROLE_NODES):
        n = as_number(s.value)
        # (GPT-NeoX ``num_nodes: int = -1``: "all the hostfile's nodes", a sentinel, not a count)
        if n and n > 0 and not _not_training_script(facts, s.path) and not _in_docs(s) and (s.path, s.line) not in local_only:
            if n > 1 and s.name == "num_machines" and _unnamed_launcher_config(facts, s.path):
                # EasyContext's ``accelerate_configs/two_node.yaml`` (``num_machines: 2``), which no launch passes as
                # ``--config_file``: an option the project ships, not how its runs are launched
                unnamed.append(f"{s.path}:{s.line}: `num_machines: {s.value}` (an accelerate config no launch names)")
                continue
            nodes.append((n, f"{s.path}:{s.line}"))
    for e in facts.envs("NNODES", "NUM_NODES", "WORLD_SIZE_NODES", "SLURM_NNODES"):
        n = as_number(e.value)
        if n and n > 0 and not _not_training_script(facts, e.path):
            nodes.append((n, f"{e.path}:{e.line}"))
    auto: list[str] = []
    # a Fabric/Trainer of the training path: ``Fabric(devices=1)`` in a chat, generation or LoRA-merge script is not how
    # many GPUs training uses; where some of them sit in files that run the step (``fabric.backward``), only those
    fabrics = [c for c in facts.calls("Trainer", "Fabric") if not train_paths or c.path in train_paths]
    stepping = {c.path for c in facts.calls("backward")}
    fabrics = [c for c in fabrics if c.path in stepping] or fabrics
    for c in fabrics:
        n = as_number(c.kwargs.get("num_nodes"))
        if n and n > 0:
            nodes.append((n, f"{c.path}:{c.line}"))
        g = c.kwargs.get("devices")
        if (dev := as_number(g)) and dev > 0:
            gpus.append(dev)
        elif dev == -1:
            auto.append(f"{c.path}:{c.kw_line('devices')}")
        elif g is not None:
            # ``devices="auto"`` (or ``devices=devices`` whose parameter defaults to "auto"): every GPU of the node
            ref = getattr(g, "ref", None)
            vals = [g] if isinstance(g, str) else [s.value for s in facts.effective(ref, near=c.path) if s.path == c.path] if ref else []
            if vals and all(isinstance(v, str) and v.strip().lower() in ("auto", "-1") for v in vals):
                auto.append(f"{c.path}:{c.kw_line('devices')}")
    if auto and not gpus:
        p.notes["gpus_auto"] = auto[0]
    top = max(nodes, key=lambda x: x[0]) if nodes else None
    p.num_nodes = int(top[0]) if top else None
    if top:
        p.notes["nodes_source"] = top[1]
        p.notes["multi_node_sites"] = sorted({w for n, w in nodes if n > 1})
    p.num_gpus = int(max(gpus)) if gpus else None
    if p.num_gpus == 1 and unresolved_gpus:
        # one GPU in some launches and a count set at start-up in others (mPLUG-DocOwl: PaperOwl's ``--nproc_per_node 1``
        # beside DocOwl1.5's every visible GPU): not "a single GPU"
        p.num_gpus = None
        p.notes["gpus_unresolved"] = unresolved_gpus[0]
    p.multi_node = bool(p.num_nodes and p.num_nodes > 1)
    if top and top[1] in unresolved_at and not any(n >= 2 and w not in unresolved_at for n, w in nodes):
        # two is the least such a launch can mean, not its count: multi-node with no number (the overview says the count is
        # set when the job starts; a global batch or a world size is not computed from it)
        p.notes["nodes_unresolved"] = unresolved_at[top[1]]
        p.num_nodes = None
    # multi-node launches documented in prose only (README ``torchrun --nnodes 2``, ``NNODES=2 llamafactory-cli``):
    # documented, not configured, so ``multi_node`` stays false and the overview says where the docs describe it
    if not p.multi_node:
        docs = documented_multi_node(facts)
        if docs:
            p.notes["multi_node_documented"] = f"{docs[0].path}:{docs[0].line}: `{docs[0].value}`" + (f" (+{len(docs) - 1})" if len(docs) > 1 else "")
        elif unnamed:
            p.notes["multi_node_documented"] = unnamed[0] + (f" (+{len(unnamed) - 1})" if len(unnamed) > 1 else "")
        elif by_argument:
            p.notes["multi_node_documented"] = by_argument[0] + (f" (+{len(by_argument) - 1})" if len(by_argument) > 1 else "")


def _unnamed_launcher_config(facts: Facts, path: str) -> bool:
    """An accelerate launcher config (a YAML with ``distributed_type``) whose file name no launch, config or code names
    (:func:`checks.rules._helpers.referenced_configs`)."""
    from .rules._helpers import referenced_configs  # the rules import this module

    if not path.endswith((".yaml", ".yml")) or not any(e.path == path for e in facts.config("distributed_type")):
        return False
    return path.rsplit("/", 1)[-1] not in referenced_configs(facts)


#: a folder named for multi-node runs (``multi_node/``, ``multi-node/``, ``multinode/``)
_MULTI_NODE_DIR = lazy_compile(r"(^|/)multi[-_]?nodes?/", re.I)
_NODE_RANK = lazy_compile(r"^--?(node|machine)[_-]rank$")
_RENDEZVOUS = lazy_compile(r"^--?(master|main_process|rdzv)[_-](addr|address|ip|endpoint)$")
#: a list of the hosts to start processes on (ColossalAI's ``colossalai run --host h1,h2`` / ``--hostfile``, DeepSpeed's
#: ``--hostfile``): with a rendezvous address, only multi-node launches need one
_HOSTS = lazy_compile(r"^--?(host_?file|hosts?)$")


@dataclass(frozen=True, slots=True)
class _ClickOption:
    path: str
    line: int
    flags: tuple[str, ...]
    text: str


def documented_multi_node(f: Facts) -> list[DocHint]:
    """Multi-node runs the project documents without configuring them: launches in prose (``docs/multi-node.qmd``:
    ``num_machines: 2``; tests' docs aside), the project's own launcher's multi-node options (:func:`multi_node_launcher`),
    and launches kept in a folder named for multi-node runs (DeepSpeed-Chat ``training_scripts/opt/multi_node/run_66b.sh``:
    ``deepspeed main.py ...`` takes its hosts from the default ``/job/hostfile``)."""
    docs = [h for h in f.records("doc_hints") if h.kind == "multi_node" and not re.search(r"(^|/)tests?/", h.path)]
    return docs + multi_node_launcher(f) + multi_node_folders(f)


def multi_node_folders(f: Facts) -> list[DocHint]:
    """Training launches kept in a folder named for multi-node runs (``multi_node/``, ``multinode/``)."""
    return [DocHint(x.path, x.line, "multi_node", "a launch in a multi-node folder", x.text) for x in f.launches()
            if _MULTI_NODE_DIR.search(x.path) and not _not_training_script(f, x.path)]


def multi_node_launcher(f: Facts) -> list[DocHint]:
    """Multi-node launches offered by the project's own launcher: an argparse parser (tests aside) with a node-rank option
    and a rendezvous address (Composer's ``composer`` launcher: ``--world_size``, ``--node_rank``, ``--master_addr``), which
    exist only to join processes across nodes. Its node-rank options, as documented multi-node launches (E1 applies, the
    overview says where): documented, not configured by a launch."""
    out: list[DocHint] = []
    by_path: dict[str, list[Any]] = {}
    # argparse options, and click's decorator options (``@click.option("-H", "-host", "--host", default=None)``, the
    # ``colossalai run`` launcher), which the facts keep as calls
    clicks = [_ClickOption(c.path, c.line, tuple(a for a in c.args if isinstance(a, str) and a.startswith("-")), c.text)
              for c in f.calls("click.option") if c.name == "click.option"]
    for o in [*f.records("arg_options"), *clicks]:
        if o.flags and not re.search(r"(^|/)tests?/", o.path):
            by_path.setdefault(o.path, []).append(o)
    for opts in by_path.values():
        ranks = [o for o in opts if any(_NODE_RANK.match(fl) for fl in o.flags)] or \
            [o for o in opts if any(_HOSTS.match(fl) for fl in o.flags)]
        if ranks and any(_RENDEZVOUS.match(fl) for o in opts for fl in o.flags):
            o = ranks[0]
            flag = max((fl for fl in o.flags if _NODE_RANK.match(fl) or _HOSTS.match(fl)), key=len, default=o.flags[0])
            out.append(DocHint(o.path, o.line, "multi_node", f"launcher options {flag} and a rendezvous address", o.text))
    return out
