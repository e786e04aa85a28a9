"""Round 54 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check

# --- EAGLE: xformers kernels in a monkey patch nothing imports ---------------------------------------------------------------

_XFORMERS_PATCH = (
    "import transformers\nimport xformers.ops\n\n\ndef replace_llama_attn_with_xformers_attn():\n"
    "    transformers.models.llama.modeling_llama.LlamaAttention.forward = xformers_forward\n\n\n"
    "def xformers_forward(self, hidden_states, attention_mask=None):\n"
    "    q, k, v = self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)\n"
    "    return xformers.ops.memory_efficient_attention(q, k, v, attn_bias=xformers.ops.LowerTriangularMask())\n")


def test_fused_kernels_in_a_module_nothing_imports_are_no_fusion() -> None:
    files = {"train_mem.py": "from train import train\n\nif __name__ == '__main__':\n    train()\n", "train.py": _LLAVA_TRAIN,
             "eagle/train/llama_xformers_attn_monkey_patch.py": _XFORMERS_PATCH,
             "scripts/finetune.sh": "deepspeed train_mem.py --bf16 True --output_dir out\n"}
    assert _check(_audit(files), "D6").status.value == "unused"
    # control: the entry point applies the patch
    files["train_mem.py"] = ("from eagle.train.llama_xformers_attn_monkey_patch import replace_llama_attn_with_xformers_attn\n"
                             "replace_llama_attn_with_xformers_attn()\nfrom train import train\n\nif __name__ == '__main__':\n    train()\n")
    assert _check(_audit(files), "D6").status.value == "used"


# --- Ovis: D2 raised AttributeError on a DeepSpeed config's compile section ----------------------------------------------------

def test_a_deepspeed_compile_section_does_not_crash_d2() -> None:
    files = {"train.py": _LLAVA_TRAIN,
             "scripts/zero3_cp.json": '{\n  "zero_optimization": {"stage": 3},\n  "compile": {\n    "enabled": true\n  }\n}\n',
             "scripts/run.sh": "deepspeed train.py --deepspeed scripts/zero3_cp.json --bf16 True --output_dir out\n"}
    audit = _audit(files)
    d2 = _check(audit, "D2")
    assert "failed on this repository" not in d2.detail, d2.detail


# --- Video-R1 / R1-V: an internal cluster script written for another checkout's layout ---------------------------------------

_GRPO = ("from trl import GRPOConfig, TrlParser\nfrom transformers import Trainer\n\n\ndef main(args):\n"
         "    Trainer(model=None, args=args).train()\n\n\nif __name__ == '__main__':\n"
         "    (args,) = TrlParser((GRPOConfig,)).parse_args_and_config()\n    main(args)\n")


def test_a_launch_whose_deepspeed_config_is_nowhere_is_stale() -> None:
    arnold = ("#!/bin/bash\nexport NCCL_IB_GID_INDEX=3\nexport NCCL_SOCKET_IFNAME=eth0\ncd /home/tiger/multimodal-open-r1\n"
              "torchrun --nproc_per_node=\"${ARNOLD_WORKER_GPU}\" --nnodes=\"${ARNOLD_WORKER_NUM}\" --node_rank=\"${ARNOLD_ID}\" \\\n"
              "    src/open_r1/grpo.py \\\n    --deepspeed {cfg} \\\n    --bf16 \\\n    --attn_implementation eager \\\n"
              "    --output_dir out\n")
    files = {"src/r1-v/src/open_r1/grpo.py": _GRPO, "src/r1-v/local_scripts/zero3.json": '{"zero_optimization": {"stage": 3}}\n',
             "src/r1-v/local_scripts/train_aria_moe.sh": arnold.replace("{cfg}", "scripts/zero3.json"),
             "src/scripts/run_grpo.sh": ("cd src/r1-v\ntorchrun --nproc_per_node=4 --nnodes=1 src/open_r1/grpo.py \\\n"
                                         "    --deepspeed local_scripts/zero3.json --bf16 --attn_implementation flash_attention_2 "
                                         "--output_dir out\n")}
    audit = _audit(files)
    assert audit.roles.by_path.get("src/r1-v/local_scripts/train_aria_moe.sh") == "other", audit.roles.why
    assert not audit.project.multi_node
    assert _check(audit, "D1").status.value == "used"
    # control: the project that wrote these scripts (open-r1-multimodal): no launch of its own passes a config that is
    # there, so the path is its own layout, broken or not, and the script stays its launch
    alone = {k: v for k, v in files.items() if k != "src/scripts/run_grpo.sh"}
    assert _audit(alone).roles.by_path.get("src/r1-v/local_scripts/train_aria_moe.sh") != "other"
    # control: the same script passing the config where it is
    files["src/r1-v/local_scripts/train_aria_moe.sh"] = arnold.replace("{cfg}", "local_scripts/zero3.json")
    audit = _audit(files)
    assert audit.roles.by_path.get("src/r1-v/local_scripts/train_aria_moe.sh") != "other"
    assert audit.project.multi_node


# --- Video-R1: a kept previous release is an archived copy -------------------------------------------------------------------

def test_a_previous_version_folder_is_archived() -> None:
    from checks.roles import path_role
    assert path_role("previous_version/src/r1-v/src/open_r1/grpo.py", "python")[0] == "archive"
    assert path_role("Video-R1-main-previous/src/r1-v/src/open_r1/grpo.py", "python")[0] == "archive"
    assert path_role("src/previous_utils.py", "python")[0] is None


# --- Video-R1: graphs in side scripts' engines, an eager rollout engine in training --------------------------------------------

def test_decode_graphs_only_outside_training_beside_an_eager_rollout_engine_is_partial() -> None:
    trainer = ("from vllm import LLM\nfrom transformers import Trainer\n\n\nclass VLLMTrainer(Trainer):\n"
               "    def __init__(self, model, args):\n        super().__init__(model=model, args=args)\n"
               "        self.llm = LLM(model=model, enforce_eager=True)\n")
    files = {"src/open_r1/trainer/vllm_trainer.py": trainer,
             "src/open_r1/grpo.py": ("from open_r1.trainer.vllm_trainer import VLLMTrainer\n\n\ndef main(args):\n"
                                     "    VLLMTrainer('m', args).train()\n"),
             "run_grpo_vllm.sh": "#!/bin/bash\ntorchrun --nproc_per_node=7 src/open_r1/grpo.py --use_vllm true --output_dir out\n",
             "src/generate_cot_vllm.py": ("from vllm import LLM, SamplingParams\nllm = LLM(model='Qwen/Qwen2.5-VL-72B-Instruct')\n"
                                          "outputs = llm.generate(prompts, SamplingParams(max_tokens=1024))\n"),
             "requirements.txt": "vllm==0.7.2\n"}
    j6 = _check(_audit(files), "J6")
    assert j6.status.value == "partial" and "rollout engine is built eager" in j6.detail, j6.detail
    # control: the rollout engine keeps its graphs
    files["src/open_r1/trainer/vllm_trainer.py"] = trainer.replace("enforce_eager=True", "enforce_eager=False")
    assert _check(_audit(files), "J6").status.value == "used"


# --- VLM-R1: --freeze_vision_modules is a vision-tower freeze switch -------------------------------------------------------

def test_freeze_vision_modules_freezes_the_vision_tower() -> None:
    trainer = ("from transformers import Trainer, Qwen2_5_VLForConditionalGeneration\n\n\nclass VLMGRPOTrainer(Trainer):\n"
               "    def __init__(self, model, args, freeze_vision_modules=False):\n"
               "        model = Qwen2_5_VLForConditionalGeneration.from_pretrained(model)\n        if freeze_vision_modules:\n"
               "            for p in model.visual.parameters():\n                p.requires_grad = False\n"
               "        super().__init__(model=model, args=args)\n")
    entry = ("from dataclasses import dataclass, field\nfrom trl import GRPOConfig, TrlParser\nfrom trainer import VLMGRPOTrainer\n\n\n"
             "@dataclass\nclass Args:\n    freeze_vision_modules: bool = field(default=False)\n\n\n"
             "if __name__ == '__main__':\n    args, training_args = TrlParser((Args, GRPOConfig)).parse_args_and_config()\n"
             "    VLMGRPOTrainer('m', training_args, freeze_vision_modules=args.freeze_vision_modules).train()\n")
    launch = "torchrun --nproc_per_node=8 grpo_jsonl.py --freeze_vision_modules {v} --bf16 --output_dir out\n"
    files = {"trainer.py": trainer, "grpo_jsonl.py": entry, "run_scripts/run_grpo_rec.sh": launch.format(v="true")}
    assert _check(_audit(files), "H1").status.value == "used"
    files["run_scripts/run_grpo_rec.sh"] = launch.format(v="false")
    assert _check(_audit(files), "H1").status.value != "used"


# --- FlagScale / Pai-Megatron-Patch: Megatron's --empty-unused-memory-level defaults to 0 -------------------------------------

def test_megatrons_empty_unused_memory_level_defaults_to_off() -> None:
    train = ("import torch\nfrom megatron.training import get_args\nfrom megatron.core import mpu\n\n\n"
             "def train(forward_step_func, model, optimizer, train_data_iterator):\n    args = get_args()\n"
             "    for iteration in range(args.train_iters):\n"
             "        loss = train_step(forward_step_func, train_data_iterator, model, optimizer)\n"
             "        if args.empty_unused_memory_level >= 1:\n            torch.cuda.empty_cache()\n"
             "        optimizer.step()\n")
    launch = ("torchrun --nproc_per_node 8 flagscale/train/train_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 1 "
              "--global-batch-size 64 --bf16{extra}\n")
    files = {"flagscale/train/train.py": train, "flagscale/train/train_gpt.py": "from flagscale.train.train import train\ntrain(None, None, None, None)\n",
             "examples/run.sh": launch.format(extra="")}
    c6 = _check(_audit(files), "C6")
    assert "runs in the training loop" not in c6.detail, c6.detail
    # control: a launch that raises the level
    files["examples/run.sh"] = launch.format(extra=" --empty-unused-memory-level 1")
    c6 = _check(_audit(files), "C6")
    assert "runs in the training loop" in c6.detail, c6.detail


# --- FlagScale: a serving engine's quantization: fp8 is no FP8 training ----------------------------------------------------------

def test_a_serving_engines_fp8_quantization_is_no_fp8_training() -> None:
    serve = "- serve_id: vllm_model\n  engine_args_specific:\n    sglang:\n      quantization: fp8\n      tp_size: 8\n"
    train = "system:\n  precision:\n    bf16: true\nmodel:\n  num_layers: 64\n  quantization: {q}\n"
    files = {"train.py": _LLAVA_TRAIN, "examples/grok2/conf/serve/270b.yaml": serve,
             "examples/grok2/conf/train/270b.yaml": train.format(q="none")}
    assert _check(_audit(files), "C2").status.value != "used"
    # control: the training config's own quantization option picks FP8
    files["examples/grok2/conf/train/270b.yaml"] = train.format(q="fp8")
    assert _check(_audit(files), "C2").status.value in ("used", "partial")


# --- LWM: a JAX project whose training step is pjit-compiled, with Ring Attention ------------------------------------------------

_LWM_TRAIN = ("import jax\nfrom jax.experimental.pjit import pjit\nimport optax\nfrom lwm.llama import attend\n\n\ndef main(argv):\n"
              "    def train_step(train_state, rng, batch):\n        grads = jax.grad(loss_fn)(train_state.params, batch)\n"
              "        return train_state.apply_gradients(grads=grads), rng, {}\n\n"
              "    sharded_train_step = pjit(\n        train_step,\n        in_shardings=(None, None, None),\n"
              "        donate_argnums=(0, 1),\n    )\n"
              "    for step in range(100):\n        train_state, rng, metrics = sharded_train_step(train_state, rng, batch)\n")
_LWM_MODEL = ("from functools import partial\nimport jax\nfrom ringattention import ringattention\n\n\n"
              "def attend(self, xq, xk, xv, bias, segment_ids):\n    if self.config.scan_attention:\n"
              "        ring_attention_sharded = jax.experimental.shard_map.shard_map(\n            partial(\n"
              "                ringattention,\n                axis_name='sp',\n                float32_logits=True,\n"
              "            ),\n            mesh=self.mesh,\n        )\n        return ring_attention_sharded(xq, xk, xv, bias, segment_ids)\n")


def test_a_pjit_compiled_train_step_is_training_and_ring_attention_is_fused() -> None:
    files = {"lwm/train.py": _LWM_TRAIN, "lwm/llama.py": _LWM_MODEL,
             "scripts/run_train_text.sh": "python3 -u -m lwm.train --mesh_dim='!1,-1,2,2' --dtype='fp32'\n",
             "scripts/sample_pyt.py": ("from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('x')\n"
                                       "out = model.generate(**inputs)\n")}
    audit = _audit(files)
    assert audit.project.does_training, audit.project.notes
    assert _check(audit, "D1").status.value == "used"
    # the PyTorch spellings of remat, sequence parallelism and NCCL tuning find nothing: not judged, with what to check
    for cid in ("A6", "C3", "E4"):
        r = _check(audit, cid)
        assert r.status.value == "n/a" and "training path is JAX" in r.detail, (cid, r.detail)
    # control: the attention module without Ring Attention
    files["lwm/llama.py"] = _LWM_MODEL.replace("from ringattention import ringattention\n", "").replace("ringattention,", "dot_attention,")
    assert _check(_audit(files), "D1").status.value != "used"


# --- Ovis: a NaViT MLLM read as a text LLM; its pixel range is dynamic resolution --------------------------------------------

def test_an_image_pixel_range_makes_a_multimodal_run_with_dynamic_resolution() -> None:
    launch = ("torchrun --nproc_per_node 8 ovis/train/train.py --deepspeed scripts/zero_configs/zero1_cp.json "
              "--model_path AIDC-AI/Ovis2.5-9B --single_image_min_pixels {lo} --single_image_max_pixels 3211264 --bf16 True\n")
    files = {"ovis/train/train.py": _LLAVA_TRAIN, "scripts/run_ovis2_5_sft.sh": launch.format(lo=200704)}
    audit = _audit(files)
    assert audit.project.model_type == "MLLM"
    assert _check(audit, "H2").status.value == "used"
    # control: the two bounds the same: every image at one size
    files["scripts/run_ovis2_5_sft.sh"] = launch.format(lo=3211264)
    assert _check(_audit(files), "H2").status.value != "used"


# --- EAGLE / Open-LLaVA-NeXT: D1 named xformers from the same dead monkey patch --------------------------------------------------

def test_an_attention_kind_only_a_dead_module_calls_is_not_named() -> None:
    entry = ("import transformers\n\n\ndef train():\n    model = transformers.AutoModelForCausalLM.from_pretrained(\n"
             "        'lmsys/vicuna-7b-v1.5', attn_implementation='flash_attention_2')\n"
             "    transformers.Trainer(model=model).train()\n\n\nif __name__ == '__main__':\n    train()\n")
    files = {"train_mem.py": entry, "eagle/train/llama_xformers_attn_monkey_patch.py": _XFORMERS_PATCH,
             "scripts/finetune.sh": "deepspeed train_mem.py --bf16 True --output_dir out\n"}
    d1 = _check(_audit(files), "D1")
    assert d1.status.value == "used" and "xformers" not in d1.detail, d1.detail
    # control: the entry point applies the patch too
    files["train_mem.py"] = ("from eagle.train.llama_xformers_attn_monkey_patch import replace_llama_attn_with_xformers_attn\n"
                             "replace_llama_attn_with_xformers_attn()\n" + entry)
    assert "xformers" in _check(_audit(files), "D1").detail


# --- CogVLM2: the dataset copies each sample to the GPU in __getitem__: workers and pinning need CPU samples first ------------

def test_advice_for_workers_and_pinning_says_to_move_the_gpu_copy_out_of_getitem() -> None:
    train = ("import torch\nfrom torch.utils.data import Dataset, DataLoader\n\n\nclass ConversationDataset(Dataset):\n"
             "    def __init__(self, root_dir, device='cuda'):\n        self.device = device\n        self.items = []\n\n"
             "    def __len__(self):\n        return len(self.items)\n\n    def __getitem__(self, idx):\n"
             "        input_data = self.items[idx]\n        for key in input_data:\n"
             "            input_data[key] = input_data[key]{copy}\n        return input_data\n\n\n"
             "def main(model, optimizer):\n    loader = DataLoader(ConversationDataset('data'), batch_size=2, shuffle=True)\n"
             "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n\n\n"
             "if __name__ == '__main__':\n    main(None, None)\n")
    files = {"finetune_demo/peft_lora.py": train.format(copy=".to('cuda')")}
    audit = _audit(files)
    for cid in ("F1", "F3"):
        r = _check(audit, cid)
        assert r.status.value == "unused" and r.values.get("advice_for") == "gpu-samples", (cid, r.detail)
        assert "moves each sample to the GPU in __getitem__ (finetune_demo/peft_lora.py:" in r.detail
    # control: CPU samples, and a device held in a variable (it may be the CPU: nemo-automodel's ``device: str = "cpu"``)
    for copy in (".float()", ".to(self.device)"):
        audit = _audit({"finetune_demo/peft_lora.py": train.format(copy=copy)})
        assert _check(audit, "F1").values.get("advice_for") != "gpu-samples", copy
