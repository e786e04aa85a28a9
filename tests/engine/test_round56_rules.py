"""Round 56 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check

# --- axlearn: ``trainer_state._replace(model={})``, a model option whose value is a mapping -------------------------------

def test_a_mapping_as_a_model_option_is_no_model_name() -> None:
    files = {"train.py": _LLAVA_TRAIN,
             "common/state_builder.py": ("def empty(state):\n    # Empty model.\n"
                                         "    return state._replace(learner=dict(ema=1), model={})\n")}
    result = _audit(files)  # the audit used to stop here: TypeError: unhashable type: 'dict'
    assert _check(result, "C1").status.value in ("used", "partial", "unused"), _check(result, "C1")
    # control: a named model beside it is still the run's
    files["common/state_builder.py"] += "\n\nMODEL = dict(model_name_or_path='Qwen/Qwen2.5-7B')\n"
    assert "Qwen/Qwen2.5-7B" in _audit(files).project.model_names


# --- Vary: a README command spelt ``Vary/train/...`` for ``Vary-master/vary/train/...``, its flags one per line ------------

_VARY_README = ("# Vary\n\n```Shell\ndeepspeed   Vary/train/train_qwen_vary.py  --deepspeed /Vary/zero_config/zero2.json\n"
                "            --model_name_or_path /Qwen-7B/path/\n            --bf16 True\n"
                "            --gradient_checkpointing True\n            --dataloader_num_workers 4\n"
                "            --model_max_length 4096\n            --output_dir /path/to/save/\n```\n")
_VARY_TRAIN = _LLAVA_TRAIN.replace(
    "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n",
    "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n"
    "    model.vision_tower = transformers.CLIPVisionModel.from_pretrained('/cache/vit-large-patch14/')\n")


def test_a_readme_command_spelt_with_other_capitals_runs_the_repositorys_script() -> None:
    files = {"README.md": _VARY_README, "Vary-master/vary/train/train_qwen_vary.py": _VARY_TRAIN,
             "Vary-master/zero_config/zero2.json": '{"zero_optimization": {"stage": 2}}\n'}
    result = _audit(files)
    assert "Vary-master/vary/train/train_qwen_vary.py" in result.roles.entry_points, result.roles.entry_points
    c3 = _check(result, "C3")
    assert c3.status.value == "used", c3.detail
    assert ("README.md", 7) in [(e.path, e.line) for e in c3.evidence], c3.evidence
    assert result.project.max_seq_len == 4096, result.project.max_seq_len
    # control: a README that names a script the repository does not have runs nothing of it
    files["README.md"] = _VARY_README.replace("Vary/train/train_qwen_vary.py", "Vary/train/train_other.py")
    assert _check(_audit(files), "C3").status.value != "used"


def test_flags_on_the_lines_below_a_readme_command_are_its_flags() -> None:
    files = {"README.md": _VARY_README.replace("Vary/train/", "vary/train/"), "vary/train/train_qwen_vary.py": _VARY_TRAIN}
    f1 = _check(_audit(files), "F1")
    assert f1.status.value == "used" and ("README.md", 8) in [(e.path, e.line) for e in f1.evidence], (f1.detail, f1.evidence)
    # control: a blank line ends the command (the next block of flags is prose, not this command's)
    files["README.md"] = files["README.md"].replace("            --bf16 True\n", "\n            --bf16 True\n")
    assert _check(_audit(files), "F1").status.value != "used"


def test_a_placeholder_folder_after_the_model_name_keeps_the_model_and_a_vision_tower_names_none() -> None:
    files = {"README.md": _VARY_README.replace("Vary/train/", "vary/train/"), "vary/train/train_qwen_vary.py": _VARY_TRAIN}
    project = _audit(files).project
    assert project.model_names[:1] == ["Qwen-7B"] and project.estimated_params == "7B", (project.model_names, project.estimated_params)
    assert not any("vit-large" in n for n in project.model_names), project.model_names


# --- MiniCPM-o: ``eval_mm/vlmevalkit/``, a copy of VLMEvalKit, read as training code --------------------------------------

_VLMEVAL_RUN = ("import torch\nfrom vlmeval.config import supported_VLM\n\n\ndef main():\n    model = supported_VLM['MiniCPM-V']()\n"
                "    for batch in torch.utils.data.DataLoader(range(10), num_workers=16):\n        model.generate(batch)\n\n\n"
                "if __name__ == '__main__':\n    main()\n")
_MINICPM_FT = ("#!/bin/bash\nMODEL=\"openbmb/MiniCPM-o-2_6\"\n"
               "torchrun --nproc_per_node 8 finetune.py \\\n    --model_name_or_path $MODEL \\\n    --tune_vision true \\\n"
               "    --bf16 true \\\n    --output_dir output\n")


def test_a_multimodal_evaluation_toolkit_folder_is_evaluation_code() -> None:
    files = {"finetune/finetune.py": _LLAVA_TRAIN, "finetune/finetune_ds.sh": _MINICPM_FT,
             "eval_mm/vlmevalkit/run.py": _VLMEVAL_RUN,
             "eval_mm/vlmevalkit/scripts/run_inference.sh": "torchrun --nproc_per_node=8 run.py --data MME --model MiniCPM-V\n"}
    result = _audit(files)
    assert result.roles.by_path["eval_mm/vlmevalkit/run.py"] == "eval", result.roles.by_path
    # (by either name: the toolkit's own folder, or a project folder named for multimodal evaluation)
    for name in ("tools/VLMEvalKit/run.py", "eval_mm/run.py"):
        moved = {(name if k == "eval_mm/vlmevalkit/run.py" else k): v for k, v in files.items()}
        assert _audit(moved).roles.by_path[name] == "eval", name
    f1 = _check(result, "F1")
    assert not any(e.path.startswith("eval_mm/") for e in f1.evidence), f1.evidence
    # control: the same script in a folder of the project's own code is read
    files["tools/run.py"] = files.pop("eval_mm/vlmevalkit/run.py")
    files["tools/run_inference.sh"] = files.pop("eval_mm/vlmevalkit/scripts/run_inference.sh")
    assert _audit(files).roles.by_path["tools/run.py"] != "eval"


def test_minicpm_o_fine_tuning_is_a_multimodal_run() -> None:
    files = {"finetune/finetune.py": _LLAVA_TRAIN, "finetune/finetune_ds.sh": _MINICPM_FT}
    project = _audit(files).project
    assert project.model_type == "MLLM" and "minicpm_v" in project.model_families, (project.model_type, project.model_families)
    # control: MiniCPM's text model is an LLM
    files["finetune/finetune_ds.sh"] = _MINICPM_FT.replace("MiniCPM-o-2_6", "MiniCPM-2B-sft-bf16").replace("    --tune_vision true \\\n", "")
    project = _audit(files).project
    assert project.model_type == "LLM" and project.model_families == ["minicpm"], (project.model_type, project.model_families)


_STEP_AFTER_PROBE = (
    "import torch\nfrom transformers import Trainer\nfrom transformers.utils import is_sagemaker_mp_enabled\n\n\n"
    "class CPMTrainer(Trainer):\n    def training_step(self, model, inputs, num_items_in_batch=None):\n        model.train()\n"
    "        if is_sagemaker_mp_enabled():\n            return smp_forward_backward(model, inputs)\n"
    "        loss = self.compute_loss(model, inputs)\n        del inputs\n        torch.cuda.empty_cache()\n"
    "        self.accelerator.backward(loss)\n        return loss.detach()\n")


def test_empty_cache_past_a_platform_probe_runs_every_step() -> None:
    files = {"finetune/finetune.py": _LLAVA_TRAIN.replace("transformers.Trainer(", "CPMTrainer(").replace(
                 "import transformers\n", "import transformers\nfrom trainer import CPMTrainer\n"),
             "finetune/trainer.py": _STEP_AFTER_PROBE, "finetune/finetune_ds.sh": _MINICPM_FT,
             "finetune/ds_config_zero2.json": '{"zero_optimization": {"stage": 2, "contiguous_gradients": true}}\n'}
    files["finetune/finetune_ds.sh"] = _MINICPM_FT.replace("--bf16 true", "--deepspeed ds_config_zero2.json")
    c6 = _check(_audit(files), "C6")
    assert c6.status.value == "partial" and "trainer.py:13" in c6.detail, c6.detail
    # control: under a switch of the run's own it is not known to run every step
    files["finetune/trainer.py"] = _STEP_AFTER_PROBE.replace("        torch.cuda.empty_cache()\n",
                                                             "        if self.args.free_cache:\n            torch.cuda.empty_cache()\n")
    assert _check(_audit(files), "C6").status.value == "used"


# --- LLaVA-pp: ``--deepspeed ./scripts/zero3.json``, a config of the LLaVA checkout the scripts are copied into ----------

def test_overlap_in_a_deepspeed_config_the_repository_lacks_is_not_judged() -> None:
    launch = ("#!/bin/bash\n\ndeepspeed llava/train/train_mem.py \\\n    --deepspeed ./scripts/zero3.json \\\n"
              "    --bf16 True \\\n    --output_dir out\n")
    files = {"llava/train/train_mem.py": _LLAVA_TRAIN, "scripts/finetune.sh": launch}
    e2 = _check(_audit(files), "E2")
    assert e2.status.value == "n/a" and "./scripts/zero3.json" in e2.detail and "not in the repository" in e2.detail, e2.detail
    assert [(e.path, e.line) for e in e2.evidence] == [("scripts/finetune.sh", 4)], e2.evidence
    # control: the config in the tree decides
    files["scripts/zero3.json"] = '{\n  "zero_optimization": {"stage": 2, "overlap_comm": false}\n}\n'
    e2 = _check(_audit(files), "E2")
    assert e2.status.value == "unused" and "explicitly disabled" in e2.detail, e2.detail


# --- DeepSeek-VL2: an inference repository of a vision-language MoE model, read as a text LLM -----------------------------

_DSVL2 = {
    "deepseek_vl2/__init__.py": "",
    "deepseek_vl2/models/__init__.py": "from .modeling_deepseek_vl_v2 import DeepseekVLV2ForCausalLM\n",
    "deepseek_vl2/models/siglip_vit.py": (
        "import torch.nn as nn\n\n\nclass VisionTransformer(nn.Module):\n    def __init__(self, img_size=384, width=1152):\n"
        "        super().__init__()\n        self.width = width\n"),
    "deepseek_vl2/models/configuration_deepseek.py": (
        "from transformers.configuration_utils import PretrainedConfig\n\n\nclass DeepseekV2Config(PretrainedConfig):\n"
        "    model_type = 'deepseek_v2'\n\n    def __init__(self, vocab_size=102400, hidden_size=4096,\n"
        "                 moe_intermediate_size=1407, **kwargs):\n        self.vocab_size = vocab_size\n"
        "        self.moe_intermediate_size = moe_intermediate_size\n        super().__init__(**kwargs)\n"),
    "deepseek_vl2/models/modeling_deepseek.py": (
        "from transformers import PreTrainedModel\n\n\nclass DeepseekV2PreTrainedModel(PreTrainedModel):\n    pass\n\n\n"
        "class DeepseekV2ForCausalLM(DeepseekV2PreTrainedModel):\n    def __init__(self, config):\n"
        "        super().__init__(config)\n"),
    "deepseek_vl2/models/modeling_deepseek_vl_v2.py": (
        "from transformers import PretrainedConfig, PreTrainedModel\n\nfrom .configuration_deepseek import DeepseekV2Config\n"
        "from .modeling_deepseek import DeepseekV2ForCausalLM\nfrom .siglip_vit import VisionTransformer\n\n\n"
        "class DeepseekVLV2Config(PretrainedConfig):\n    def __init__(self, language_config=None, **kwargs):\n"
        "        super().__init__(**kwargs)\n        self.language_config = DeepseekV2Config(**(language_config or {}))\n\n\n"
        "class DeepseekVLV2ForCausalLM(PreTrainedModel):\n    def __init__(self, config):\n        super().__init__(config)\n"
        "        self.vision = VisionTransformer(img_size=384)\n"
        "        self.language = DeepseekV2ForCausalLM(config.language_config)\n"),
    "deepseek_vl2/models/processing_deepseek_vl_v2.py": (
        "def select_best_resolution(image_size, candidate_resolutions):\n    return candidate_resolutions[0]\n\n\n"
        "class DeepseekVLV2Processor:\n    def tokenize_with_images(self, image, cropping=True):\n"
        "        best_width, best_height = select_best_resolution(image.size, self.candidate_resolutions)\n"
        "        return best_width, best_height\n"),
    "inference.py": (
        "import torch\nfrom transformers import AutoModelForCausalLM\n\n"
        "from deepseek_vl2.models import DeepseekVLV2ForCausalLM\n\n\ndef main(model_path):\n"
        "    vl_gpt: DeepseekVLV2ForCausalLM = AutoModelForCausalLM.from_pretrained(model_path, trust_remote_code=True,\n"
        "                                                                            torch_dtype=torch.bfloat16)\n"
        "    return vl_gpt.generate(max_new_tokens=512)\n\n\nif __name__ == '__main__':\n    main('deepseek-ai/deepseek-vl2-tiny')\n"),
}


def test_a_model_class_that_builds_an_image_model_and_a_causal_lm_is_a_vision_language_model() -> None:
    project = _audit(_DSVL2).project
    assert project.model_type == "MLLM" and project.multimodal, project.model_type
    # control: the same classes that no script of the project imports are a library's, not the project's model
    files = {k: v for k, v in _DSVL2.items() if k != "inference.py"}
    files["inference.py"] = _DSVL2["inference.py"].replace("from deepseek_vl2.models import DeepseekVLV2ForCausalLM\n", "").replace(
        "vl_gpt: DeepseekVLV2ForCausalLM = ", "vl_gpt = ")
    assert not _audit(files).project.multimodal


def test_a_processor_that_tiles_each_image_to_its_best_resolution_is_dynamic_resolution() -> None:
    h2 = _check(_audit(_DSVL2), "H2")
    assert h2.status.value == "used" and h2.evidence[0].path.endswith("processing_deepseek_vl_v2.py"), (h2.detail, h2.evidence)
    # control: where an option picks the resolution (LLaVA's ``image_aspect_ratio: pad``), the option decides
    files = dict(_DSVL2, **{"scripts/run.sh": "deepspeed inference.py --image_aspect_ratio pad\n"})
    assert _check(_audit(files), "H2").status.value == "unused"


def test_a_sub_config_built_from_the_checkpoints_mapping_keeps_no_class_default() -> None:
    d7 = _check(_audit(_DSVL2), "D7")
    assert "1407" not in d7.detail and d7.status.value == "n/a", d7.detail
    # control: built from its own defaults, the class's sizes are the model's
    files = dict(_DSVL2)
    files["deepseek_vl2/models/modeling_deepseek_vl_v2.py"] = files["deepseek_vl2/models/modeling_deepseek_vl_v2.py"].replace(
        "DeepseekV2Config(**(language_config or {}))", "DeepseekV2Config()")
    d7 = _check(_audit(files), "D7")
    assert "moe_intermediate_size=1407" in d7.detail, d7.detail


# --- ChatGLM-Efficient-Tuning: ChatGLM loaded as remote code through ``**config_kwargs`` -------------------------------------

_GLM_LOADER = (
    "from transformers import AutoConfig, AutoModel, AutoTokenizer\nfrom trl import AutoModelForCausalLMWithValueHead\n\n\n"
    "def load_model_and_tokenizer(model_args, stage='sft'):\n    config_kwargs = {\n        \"trust_remote_code\": True,\n"
    "        \"cache_dir\": model_args.cache_dir,\n    }\n"
    "    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, **config_kwargs)\n"
    "    config = AutoConfig.from_pretrained(model_args.model_name_or_path, **config_kwargs)\n"
    "    model = AutoModel.from_pretrained(model_args.model_name_or_path, config=config, **config_kwargs)\n"
    "    if stage == 'ppo':\n        model = AutoModelForCausalLMWithValueHead.from_pretrained(model)\n    return model, tokenizer\n")
_GLM_TRAIN = (
    "from dataclasses import dataclass, field\n\nfrom transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments\n\n"
    "from loader import load_model_and_tokenizer\n\n\n@dataclass\nclass ModelArguments:\n"
    "    model_name_or_path: str = field(default=\"THUDM/chatglm-6b\")\n    cache_dir: str = field(default=None)\n\n\n"
    "def main():\n    model_args, training_args = HfArgumentParser((ModelArguments, Seq2SeqTrainingArguments)).parse_args_into_dataclasses()\n"
    "    model, tokenizer = load_model_and_tokenizer(model_args)\n"
    "    Seq2SeqTrainer(model=model, args=training_args, tokenizer=tokenizer).train()\n\n\nif __name__ == '__main__':\n    main()\n")


def test_remote_code_trusted_through_a_keyword_mapping_picks_its_own_attention() -> None:
    files = {"src/loader.py": _GLM_LOADER, "src/train_bash.py": _GLM_TRAIN,
             "examples/train_sft.sh": ("CUDA_VISIBLE_DEVICES=0 python ../src/train_bash.py \\\n"
                                       "    --model_name_or_path path_to_chatglm2_6b \\\n    --fp16 \\\n    --output_dir out\n")}
    d1 = _check(_audit(files), "D1")
    assert d1.status.value == "n/a" and "trust_remote_code" in d1.detail, d1.detail
    # control: without trust_remote_code the model is transformers' own class, whose attn_implementation applies
    files["src/loader.py"] = _GLM_LOADER.replace('        "trust_remote_code": True,\n', "")
    d1 = _check(_audit(files), "D1")
    assert d1.status.value != "n/a", d1.detail


# --- TinyLLaVA_Factory: ``--fp16 True`` in eleven launch scripts, ``--bf16 True`` in the two Qwen2 ones ---------------------

def test_launches_that_differ_in_precision_are_judged_by_their_majority() -> None:
    launch = "deepspeed --include localhost:4,5,6,7 tinyllava/train/train.py \\\n    --{p} True \\\n    --output_dir out\n"
    files = {"tinyllava/train/train.py": _LLAVA_TRAIN,
             **{f"scripts/train/{n}.sh": launch.format(p="fp16") for n in ("pretrain", "finetune", "lora/finetune_lora")},
             "scripts/train/qwen2/finetune_qwen2.sh": launch.format(p="bf16")}
    c1 = _check(_audit(files), "C1")
    assert c1.detail.startswith("FP16 mixed precision in 3 of 4") and "qwen2/finetune_qwen2.sh" in c1.detail, c1.detail
    assert c1.values["precision"] == "fp16" and c1.evidence[0].path != "scripts/train/qwen2/finetune_qwen2.sh", c1.evidence
    # control: when every launch says BF16, BF16 it is
    files = {k: v.replace("--fp16", "--bf16") for k, v in files.items()}
    c1 = _check(_audit(files), "C1")
    assert c1.detail == "BF16 mixed precision", c1.detail


# --- axlearn: a JAX library whose recipes shard by mesh axes (``mesh_shape_from_axes(data=-1, fsdp=8)``) ---------------

_AX_TRAINER = (
    "import jax\nimport jax.numpy as jnp\nfrom jax.experimental.pjit import pjit\n\n\nclass SpmdTrainer:\n"
    "    def _pjit_train_step(self):\n        return pjit(self._train_step, in_shardings=None, out_shardings=None)\n\n"
    "    def _train_step(self, state, input_batch):\n"
    "        loss, grads = jax.value_and_grad(self._loss)(state.model, input_batch)\n"
    "        return self.learner.update(grads), loss\n")
_AX_RECIPE = (
    "from axlearn.common.utils import mesh_shape_from_axes\n\n\ndef get_trainer_kwargs(model_size):\n"
    "    if model_size == '7B':\n        return dict(mesh_shape=mesh_shape_from_axes(data=-1, fsdp=8))\n"
    "    return dict(mesh_shape=mesh_shape_from_axes(fsdp=-1, expert=16, model=8), num_experts=16, top_k=2)\n")
_AX_KERNEL = ("import jax\nimport jax.numpy as jnp\n\n\ndef _dot(lhs, rhs):\n"
              "    return jax.lax.dot(lhs, rhs, precision=\"float32\", preferred_element_type=jnp.float32)\n")
_AX_CLIP = ("def set_clip_model_config(*, text_encoder_cfg, vision_encoder_cfg):\n"
            "    clip_stream_encoder = {\n        \"visual_encoder\": vision_encoder_cfg,\n        \"textual_encoder\": text_encoder_cfg,\n"
            "    }\n    return clip_stream_encoder\n")


def _axlearn(**extra: str) -> dict[str, str]:
    return {"axlearn/common/trainer.py": _AX_TRAINER, "axlearn/experiments/text/gpt/fuji.py": _AX_RECIPE,
            "axlearn/common/rattention/kernels/linear_attention_kernels.py": _AX_KERNEL, "axlearn/vision/clip.py": _AX_CLIP,
            "axlearn/common/launch_trainer_main.py": ("from axlearn.common.trainer import SpmdTrainer\n\n\ndef main():\n"
                                                      "    SpmdTrainer().run()\n\n\nif __name__ == '__main__':\n    main()\n"),
            **extra}


def test_jax_mesh_axes_give_fsdp_tensor_and_expert_parallelism() -> None:
    result = _audit(_axlearn())
    assert result.project.notes.get("jax_training"), result.project.notes
    a2, a4, a7 = (_check(result, c) for c in ("A2", "A4", "A7"))
    assert a2.status.value == "used" and "fsdp" in a2.detail, a2.detail
    assert a4.status.value == "used" and "model=8" in a4.detail, a4.detail
    assert a7.status.value == "used" and "expert=16" in a7.detail, a7.detail
    # control: axes of one device are no parallelism
    one = _AX_RECIPE.replace("fsdp=-1, expert=16, model=8", "fsdp=-1, expert=1, model=1")
    result = _audit(_axlearn(**{"axlearn/experiments/text/gpt/fuji.py": one}))
    assert _check(result, "A4").status.value == "unused" and _check(result, "A7").status.value == "unused"
    # a config's size of the axis says the same (levanter ``model_axis_size: 1``); with no size anywhere, not judged
    files = _axlearn(**{"axlearn/experiments/text/gpt/fuji.py": "", "config/gpt2_small.yaml": "model_axis_size: 1\nnum_train_steps: 100\n"})
    a4 = _check(_audit(files), "A4")
    assert a4.status.value == "unused" and "config/gpt2_small.yaml:1" in a4.detail, a4.detail
    files.pop("config/gpt2_small.yaml")
    assert _check(_audit(files), "A4").status.value == "n/a"


def test_a_products_accumulation_precision_is_not_the_runs_precision() -> None:
    result = _audit(_axlearn())
    c1 = _check(result, "C1")
    assert "explicitly disabled" not in c1.detail, c1.detail
    assert _check(result, "A5").status.value == "n/a"  # JAX: no pipeline spelling read, not judged
    # the trainer's compute dtype set on its config object is the run's precision
    common = ("import jax.numpy as jnp\n\nSTEP_DTYPE = jnp.bfloat16\n\n\ndef get_trainer_config_fn(cfg):\n"
              "    cfg.train_dtype = STEP_DTYPE\n    return cfg\n")
    c1 = _check(_audit(_axlearn(**{"axlearn/experiments/text/gpt/common.py": common})), "C1")
    assert c1.status.value == "used" and c1.evidence[0].path.endswith("common.py"), (c1.detail, c1.evidence)
    # control: a run's own float32 setting is still read as such
    result = _audit(_axlearn(**{"configs/run.yaml": "precision: float32\nlearning_rate: 3.0e-4\n"}))
    assert "explicitly disabled" in _check(result, "C1").detail, _check(result, "C1").detail


def test_a_mapping_key_in_library_code_off_the_training_path_makes_no_multimodal_run() -> None:
    assert _audit(_axlearn()).project.model_type != "MLLM"
    # control: the same key in a file of the training path
    files = _axlearn(**{"axlearn/common/trainer.py": _AX_TRAINER + "\n\nSTREAMS = {\"visual_encoder\": None}\n"})
    assert _audit(files).project.model_type == "MLLM"


# --- TinyLLaVA_Factory and ChatGLM-Efficient-Tuning: GPUs named, not counted ------------------------------------------------

def test_the_gpus_a_launch_names_are_its_gpu_count() -> None:
    launch = ("deepspeed --include localhost:4,5,6,7 --master_port 29501 train.py \\\n    --deepspeed ./zero3.json \\\n"
              "    --per_device_train_batch_size 8 \\\n    --gradient_accumulation_steps 4 \\\n    --output_dir out\n")
    files = {"train.py": _LLAVA_TRAIN, "scripts/finetune.sh": launch}
    result = _audit(files)
    assert result.project.num_gpus == 4 and "global batch 128" in _check(result, "G2").detail, _check(result, "G2").detail
    files["scripts/finetune.sh"] = "CUDA_VISIBLE_DEVICES=0 python train.py \\\n    --per_device_train_batch_size 4 \\\n    --output_dir out\n"
    assert _audit(files).project.num_gpus == 1
    # control: a GPU list the launch leaves to its caller counts nothing
    files["scripts/finetune.sh"] = launch.replace("localhost:4,5,6,7", "localhost:$GPUS")
    result = _audit(files)
    assert result.project.num_gpus is None and "does not fix the GPU count" in _check(result, "G2").detail
