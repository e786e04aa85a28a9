"""Round 57 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- anole: a copy of transformers 4.42.0.dev0 in the tree, installed with ``pip install -e``, imported as ``transformers`` --

_ANOLE_TRAIN = (
    "import torch\nfrom transformers import ChameleonForCausalLM, Trainer, TrainingArguments\n\n\n"
    "class TokenDataset(torch.utils.data.Dataset):\n    def __init__(self, rows):\n        self.rows = rows\n\n"
    "    def __len__(self):\n        return len(self.rows)\n\n    def __getitem__(self, i):\n        return self.rows[i]\n\n\n"
    "def main():\n    model = ChameleonForCausalLM.from_pretrained('/models/anole-7b-hf')\n"
    "    args = TrainingArguments(output_dir='out', learning_rate=1e-3, per_device_train_batch_size=1,\n"
    "                             save_steps=3000, fp16=False, logging_steps=1, deepspeed='ds_config.json')\n"
    "    Trainer(model=model, args=args, train_dataset=TokenDataset([])).train()\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)
#: the copy's own trainer: a SageMaker-only DDP branch and a collator that tokenizes, neither of which the project runs
_COPY_TRAINER = (
    "import torch\nfrom torch import nn\nfrom .data.data_collator import DataCollatorWithPadding\n\n\n"
    "class Trainer:\n    def _wrap_model(self, model):\n        if is_sagemaker_dp_enabled():\n"
    "            model = nn.parallel.DistributedDataParallel(model, device_ids=[0])\n        return model\n\n"
    "    def training_step(self, model, inputs):\n        with torch.autocast('cuda', dtype=torch.bfloat16):\n"
    "            loss = model(**inputs).loss\n        loss.backward()\n        torch.cuda.empty_cache()\n        return loss\n"
)
_COPY_COLLATOR = (
    "class DataCollatorWithPadding:\n    def __call__(self, features):\n"
    "        return self.tokenizer.pad(features, padding=True, return_tensors='pt')\n"
)


def _anole(version_in: str = "__init__.py") -> dict[str, str]:
    copy = "transformers/src/transformers"
    files = {
        "training/train.py": _ANOLE_TRAIN,
        "training/train.sh": "torchrun --nproc_per_node=8 train.py\n",
        "training/ds_config.json": '{"zero_optimization": {"stage": 2, "overlap_comm": true}, "train_batch_size": "auto"}\n',
        "transformers/setup.py": "from setuptools import setup\nsetup(name='transformers', version='4.42.0.dev0')\n",
        f"{copy}/__init__.py": "from .trainer import Trainer\nfrom .training_args import TrainingArguments\n",
        f"{copy}/trainer.py": _COPY_TRAINER,
        f"{copy}/data/__init__.py": "",
        f"{copy}/data/data_collator.py": _COPY_COLLATOR,
        f"{copy}/training_args.py": "class TrainingArguments:\n    pass\n",
        "requirements.txt": "deepspeed==0.14.4\njsonlines\n",
        "viewer/backend/requirements.txt": "transformers==4.36.2\n",
    }
    if version_in == "__init__.py":
        files[f"{copy}/__init__.py"] = '__version__ = "4.42.0.dev0"\n' + files[f"{copy}/__init__.py"]
    return files


def test_a_copy_of_transformers_in_the_tree_is_read_as_the_library_not_as_the_projects_code() -> None:
    result = _audit(_anole())
    c1 = _check(result, "C1")
    # the copy's ``torch.autocast(..., dtype=torch.bfloat16)`` in its trainer was "BF16 mixed precision"; the run sets fp16=False
    assert c1.status.value == "unused" and not any(e.path.startswith("transformers/") for e in c1.evidence), (c1.detail, c1.evidence)
    a1 = _check(result, "A1")
    assert not any("sagemaker" in (e.snippet or "") or e.path.startswith("transformers/") for e in a1.evidence), a1.evidence
    assert result.roles.role("transformers/src/transformers/trainer.py") == "vendored"
    # the release the copy declares is the one the run uses, not another folder's pin
    d1 = _check(result, "D1")
    assert "4.42.0.dev0" in d1.detail and "4.36.2" not in d1.detail, d1.detail
    # control: a copy that declares no release is no library copy: as before, what the project imports of it is read
    result = _audit(_anole(version_in="none"))
    assert result.roles.role("transformers/src/transformers/trainer.py") == "training"


def test_a_copy_whose_release_is_in_its_version_module_is_a_library_copy_too() -> None:
    # Groma's ``mmcv/mmcv/version.py`` (``__version__ = '1.4.7'``, which ``mmcv/__init__.py`` imports with ``*``)
    files = {
        "groma/train/train.py": "import torch\nfrom mmcv.ops.nms import nms\n\n\ndef main(model, loader, opt):\n"
                                "    for batch in loader:\n        model(**batch).loss.backward()\n        opt.step()\n",
        "scripts/train.sh": "torchrun --nproc_per_node 8 groma/train/train.py\n",
        "pyproject.toml": '[project]\nname = "groma"\nversion = "1.0.0"\n',
        "mmcv/setup.py": "from setuptools import setup\nsetup(name='mmcv')\n",
        "mmcv/mmcv/__init__.py": "from .version import *\n",
        "mmcv/mmcv/version.py": "__version__ = '1.4.7'\n",
        "mmcv/mmcv/ops/__init__.py": "",
        "mmcv/mmcv/ops/nms.py": "import lmdb\n\n\ndef nms(boxes):\n    return lmdb.open('/tmp/x')\n",
    }
    result = _audit(files)
    assert result.roles.role("mmcv/mmcv/ops/nms.py") == "vendored", result.roles.why.get("mmcv/mmcv/ops/nms.py")
    # control: a package of the project's own distribution named after its import name stays the project's
    # (open_clip_torch ships ``src/open_clip/``)
    files = {"src/open_clip/__init__.py": "from .version import __version__\nfrom .factory import create_model\n",
             "src/open_clip/version.py": "__version__ = '3.3.0'\n",
             "src/open_clip/factory.py": "def create_model(name):\n    return name\n",
             "src/open_clip_train/main.py": "import torch\nfrom open_clip import create_model\n\n\ndef main(loader, opt):\n"
                                            "    model = create_model('ViT-B-32')\n    for batch in loader:\n"
                                            "        model(batch).backward()\n        opt.step()\n\n\nif __name__ == '__main__':\n    main(None, None)\n",
             "pyproject.toml": '[project]\nname = "open_clip_torch"\n',
             "scripts/train.sh": "torchrun --nproc_per_node 8 -m open_clip_train.main\n"}
    assert _audit(files).roles.role("src/open_clip/factory.py") != "vendored"


# --- LLaVA-Med: PEFT only loads a trained adapter to serve it; instruction data named for fine-tuning --------------------

_LLAVA_MED_BUILDER = (
    "import torch\nfrom transformers import AutoTokenizer, AutoModelForCausalLM\n\n\n"
    "def load_pretrained_model(model_path, model_base, model_name, device='cuda'):\n"
    "    if 'lora' in model_name.lower() and model_base is not None:\n        from peft import PeftModel\n"
    "        tokenizer = AutoTokenizer.from_pretrained(model_base)\n"
    "        model = AutoModelForCausalLM.from_pretrained(model_base, torch_dtype=torch.float16)\n"
    "        model = PeftModel.from_pretrained(model, model_path)\n        model = model.merge_and_unload()\n"
    "    else:\n        tokenizer = AutoTokenizer.from_pretrained(model_path)\n"
    "        model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.float16)\n"
    "    return tokenizer, model\n"
)
_LLAVA_MED_CLI = (
    "import argparse\nimport torch\nfrom llava.model.builder import load_pretrained_model\n\n\ndef main(args):\n"
    "    tokenizer, model = load_pretrained_model(args.model_path, args.model_base, 'llava-med')\n"
    "    with torch.inference_mode():\n        out = model.generate(tokenizer('hi', return_tensors='pt').input_ids, max_new_tokens=64)\n"
    "    print(tokenizer.decode(out[0]))\n\n\nif __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--model-path', type=str, default='facebook/opt-350m')\n"
    "    parser.add_argument('--model-base', type=str, default=None)\n    main(parser.parse_args())\n"
)


def test_peft_that_only_loads_an_adapter_to_serve_it_is_no_fine_tuning() -> None:
    files = {"llava/model/builder.py": _LLAVA_MED_BUILDER, "llava/serve/cli.py": _LLAVA_MED_CLI,
             "llava/data/download_images.py": "import sys\n\n\nif __name__ == '__main__':\n    print(sys.argv)\n",
             "download_data.sh": "python llava/data/download_images.py --input_path data/urls.jsonl\n",
             "data/instruct/llava_med_instruct_60k.json": '[{"id": "1", "conversations": []}]\n',
             "pyproject.toml": '[project]\nname = "llava-med"\ndependencies = ["peft", "transformers==4.36.2"]\n'}
    result = _audit(files)
    assert not result.project.does_training and result.project.does_inference, (result.project.does_training,
                                                                                 result.project.does_inference)
    assert _check(result, "C1").status.value == "n/a"
    # control: an adapter attached to be trained (``get_peft_model``) is fine-tuning
    files["llava/model/builder.py"] = _LLAVA_MED_BUILDER.replace(
        "        model = model.merge_and_unload()\n",
        "        from peft import LoraConfig, get_peft_model\n        model = get_peft_model(model, LoraConfig(r=8))\n")
    assert _audit(files).project.does_training


# --- anole and Lumina-mGPT: Chameleon, an early-fusion model of VQ image tokens --------------------------------------------

def test_a_chameleon_model_is_multimodal_and_has_no_vision_encoder_to_freeze() -> None:
    files = _anole()
    result = _audit(files)
    assert result.project.model_type == "MLLM", result.project.model_type
    h1 = _check(result, "H1")
    assert h1.status.value == "n/a" and "early-fusion" in h1.detail and "training/train.py" in h1.detail, h1.detail
    # control: a CLIP vision tower beside it is a vision encoder H1 judges
    files["training/train.py"] = _ANOLE_TRAIN.replace(
        "    Trainer(", "    model.vision = CLIPVisionModel.from_pretrained('openai/clip-vit-large-patch14')\n    Trainer(").replace(
        "from transformers import", "from transformers import CLIPVisionModel,")
    assert _check(_audit(files), "H1").status.value == "unused"


# --- Lumina-mGPT: ``srun -n32 --ntasks-per-node=8 --gres=gpu:8 bash exps/7B.sh`` in TRAIN.md --------------------------------

def test_srun_tasks_over_tasks_per_node_is_a_documented_multi_node_run() -> None:
    train = ("import torch\n\n\ndef main(model, loader, opt):\n    for batch in loader:\n        model(batch).backward()\n"
             "        opt.step()\n\n\nif __name__ == '__main__':\n    main(None, None, None)\n")
    files = {"finetune.py": train, "exps/7B.sh": "python -u finetune.py --batch_size 8\n",
             "TRAIN.md": "# Training\n\n```bash\nsrun -n32 --ntasks-per-node=8 --gres=gpu:8 bash exps/7B.sh\n```\n"}
    result = _audit(files)
    assert "TRAIN.md:4" in result.project.notes.get("multi_node_documented", ""), result.project.notes
    assert "4 nodes" in result.project.notes["multi_node_documented"]
    # control: eight tasks at eight a node is one node
    files["TRAIN.md"] = files["TRAIN.md"].replace("-n32", "-n8")
    assert "multi_node_documented" not in _audit(files).project.notes


# --- R1-V, Visual-RFT: a vLLM GRPO trainer chosen only under TRL's ``use_vllm``, which no launch passes ----------------------

_VLLM_TRAINER = (
    "from transformers import Trainer\nfrom vllm import LLM, SamplingParams\n\n\n"
    "class Qwen2VLGRPOVLLMTrainer(Trainer):\n    def __init__(self, model, args):\n        self.use_vllm = args.use_vllm\n"
    "        if self.use_vllm:\n            self.llm = LLM(model=model, gpu_memory_utilization=0.7)\n"
    "        super().__init__(model=model, args=args)\n"
)
_GRPO = (
    "from trl import GRPOConfig, ModelConfig, TrlParser\nfrom trainer import Qwen2VLGRPOTrainer, Qwen2VLGRPOVLLMTrainer\n\n\n"
    "def main(script_args, training_args, model_args):\n"
    "    trainer_cls = Qwen2VLGRPOTrainer if not training_args.use_vllm else Qwen2VLGRPOVLLMTrainer\n"
    "    trainer = trainer_cls(model=model_args.model_name_or_path, args=training_args)\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    parser = TrlParser((dict, GRPOConfig, ModelConfig))\n    main(*parser.parse_args_and_config())\n"
)
_HF_GRPO_TRAINER = (
    "import torch\nfrom transformers import Trainer\n\n\nclass Qwen2VLGRPOTrainer(Trainer):\n"
    "    def compute_loss(self, model, inputs):\n        ids = model.generate(**inputs, max_new_tokens=256)\n"
    "        return model(ids).loss\n"
)


def test_a_vllm_engine_behind_trls_use_vllm_that_no_launch_sets_is_not_the_runs_engine() -> None:
    files = {"src/open_r1/grpo.py": _GRPO, "src/open_r1/trainer/__init__.py":
             "from .grpo_trainer import Qwen2VLGRPOTrainer\nfrom .vllm_grpo_trainer import Qwen2VLGRPOVLLMTrainer\n",
             "src/open_r1/trainer/grpo_trainer.py": _HF_GRPO_TRAINER, "src/open_r1/trainer/vllm_grpo_trainer.py": _VLLM_TRAINER,
             "src/scripts/run_grpo.sh": "torchrun --nproc_per_node=8 src/open_r1/grpo.py --model_name_or_path Qwen/Qwen2-VL-2B-Instruct "
                                        "--bf16 --gradient_checkpointing false\n"}
    j5 = _check(_audit(files), "J5")
    assert j5.status.value != "used", (j5.detail, j5.evidence)
    # control: the launch that passes ``--use_vllm true`` runs it (R1-V's run_grpo_vllm.sh)
    files["src/scripts/run_grpo.sh"] = files["src/scripts/run_grpo.sh"].replace("--bf16", "--use_vllm true --bf16")
    assert _check(_audit(files), "J5").status.value == "used"


# --- Groma: ``scripts/debug.sh`` (one GPU, no accumulation) beside the two stages' launches -------------------------------

def test_a_debug_launch_beside_the_training_launches_is_no_recipe() -> None:
    train = ("import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
             "    args, = parser.parse_args_into_dataclasses()\n"
             "    model = transformers.AutoModelForCausalLM.from_pretrained('lmsys/vicuna-7b-v1.5')\n"
             "    transformers.Trainer(model=model, args=args).train()\n\n\nif __name__ == '__main__':\n    train()\n")
    launch = "torchrun --nproc_per_node=8 groma/train/train.py --gradient_accumulation_steps {ga} --output_dir out\n"
    files = {"groma/train/train.py": train, "scripts/vl_pretrain.sh": launch.format(ga=8),
             "scripts/det_pretrain.sh": launch.format(ga=8),
             "scripts/debug.sh": launch.format(ga=1).replace("--nproc_per_node=8", "--nproc_per_node=1"),
             "scripts/debug_finetune.sh": launch.format(ga=1).replace("--nproc_per_node=8", "--nproc_per_node=1")}
    result = _audit(files)
    assert result.roles.role("scripts/debug.sh") == "dev", result.roles.role("scripts/debug.sh")
    assert _check(result, "C5").status.value == "used", _check(result, "C5").detail
    # control: a repository whose only launch is named for debugging keeps it as its run
    only = {"groma/train/train.py": train, "scripts/debug.sh": launch.format(ga=1)}
    assert _audit(only).roles.role("scripts/debug.sh") == "launch"


# --- Valley: a dataclass default every YAML recipe replaces --------------------------------------------------------

def test_a_recipe_that_sets_the_model_option_overrides_the_templates_opt_default() -> None:
    train = ("from dataclasses import dataclass, field\nfrom typing import Optional\nimport transformers\n\n\n@dataclass\n"
             "class ModelArguments:\n    model_name_or_path: Optional[str] = field(default='facebook/opt-125m')\n\n\n"
             "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
             "    model_args, args = parser.parse_yaml_file('valley/configs/experiment/valley_stage1.yaml')\n"
             "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
             "    transformers.Trainer(model=model, args=args).train()\n\n\nif __name__ == '__main__':\n    train()\n")
    files = {"valley/train/train.py": train,
             "valley/configs/experiment/valley_stage1.yaml": "model_name_or_path: Path/to/opensource/LLM\nbf16: true\n",
             "train.sh": "deepspeed valley/train/train.py valley/configs/experiment/valley_stage1.yaml\n"}
    assert "opt" not in _audit(files).project.model_families
    # control: without a recipe that sets it, the default is the model the run loads
    del files["valley/configs/experiment/valley_stage1.yaml"]
    assert "opt" in _audit(files).project.model_families


# --- Pai-Megatron-Patch: Megatron launches with batch sizes from positional arguments, an HF example, a converter ------------

_MEGATRON_STEP = (
    "from megatron.core.pipeline_parallel import get_forward_backward_func\n"
    "from megatron.core.num_microbatches_calculator import get_num_microbatches\n\n\n"
    "def train_step(forward_step_func, data_iterator, model, optimizer):\n"
    "    forward_backward_func = get_forward_backward_func()\n"
    "    losses = forward_backward_func(forward_step_func=forward_step_func, data_iterator=data_iterator, model=model,\n"
    "                                   num_microbatches=get_num_microbatches(), seq_length=4096, forward_only=False)\n"
    "    optimizer.step()\n    return losses\n"
)


def test_a_megatron_projects_hf_example_does_not_make_the_hf_default_its_accumulation() -> None:
    hf = ("import transformers\n\n\ndef main():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
          "    args, = parser.parse_args_into_dataclasses()\n"
          "    model = transformers.AutoModelForCausalLM.from_pretrained('baichuan-inc/Baichuan2-7B-Base')\n"
          "    transformers.Trainer(model=model, args=args).train()\n\n\nif __name__ == '__main__':\n    main()\n")
    files = {"megatron_patch/training.py": _MEGATRON_STEP, "examples/qwen/pretrain_qwen.py":
             "from megatron_patch.training import train_step\n\n\nif __name__ == '__main__':\n    train_step(None, None, None, None)\n",
             "examples/qwen/run_mcore_qwen.sh": ("BATCH_SIZE=$3\nGLOBAL_BATCH_SIZE=$4\ntorchrun --nproc_per_node $GPUS_PER_NODE "
                                                 "examples/qwen/pretrain_qwen.py --micro-batch-size ${BATCH_SIZE} "
                                                 "--global-batch-size ${GLOBAL_BATCH_SIZE} --bf16\n"),
             "examples/baichuan/finetune_hf.py": hf,
             "examples/baichuan/run_ds_train_huggingface_baichuan.sh": "torchrun --nproc_per_node 8 examples/baichuan/finetune_hf.py --bf16\n",
             "toolkits/checkpoints_convertor/impl/convert.py": ("import torch\n\n\ndef main():\n"
                                                                "    torch.save({}, 'out.pt')\n\n\nif __name__ == '__main__':\n    main()\n"),
             "toolkits/checkpoints_convertor/run_2xH20.sh": ("torchrun --nproc_per_node 1 toolkits/checkpoints_convertor/impl/convert.py "
                                                             "--micro-batch-size 1 --global-batch-size 1024\n")}
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "n/a" and "get_num_microbatches" in c5.detail, c5.detail
    assert not any(e.path.startswith("toolkits/") for e in c5.evidence), c5.evidence
    # control: a training launch that fixes both batch sizes and its GPUs shows the accumulation it implies
    files["examples/qwen/run_mcore_qwen.sh"] = ("torchrun --nproc_per_node 8 examples/qwen/pretrain_qwen.py --micro-batch-size 1 "
                                                "--global-batch-size 256 --bf16\n")
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "used" and "32 micro-batches" in c5.detail, c5.detail


# --- Valley: recipes name ``deepspeed: valley/configs/deepspeed/config_zero2.json``, which ``*json`` in .gitignore kept out --

def test_a_deepspeed_config_a_recipe_names_and_the_repository_lacks_leaves_overlap_and_offload_not_judged() -> None:
    train = ("import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
             "    args, = parser.parse_yaml_file('valley/configs/experiment/valley_stage1.yaml')\n"
             "    model = transformers.LlamaForCausalLM.from_pretrained('lmsys/vicuna-7b-v1.5')\n"
             "    transformers.Trainer(model=model, args=args).train()\n\n\nif __name__ == '__main__':\n    train()\n")
    recipe = ("model_name_or_path: Path/to/opensource/LLM\nbf16: true\nper_device_train_batch_size: 16\n"
              "deepspeed: valley/configs/deepspeed/config_zero2.json\n")
    files = {"valley/train/train.py": train, "valley/configs/experiment/valley_stage1.yaml": recipe,
             "valley/configs/experiment/valley_stage2.yaml": recipe,
             "train.sh": "deepspeed valley/train/train.py valley/configs/experiment/valley_stage1.yaml\n"}
    result = _audit(files)
    for cid in ("E2", "C4"):
        c = _check(result, cid)
        assert c.status.value == "n/a" and "config_zero2.json" in c.detail, (cid, c.detail)
    # control: the config in the repository decides
    files["valley/configs/deepspeed/config_zero2.json"] = '{"zero_optimization": {"stage": 2, "overlap_comm": false}}\n'
    result = _audit(files)
    assert _check(result, "E2").status.value != "n/a" and _check(result, "C4").status.value == "unused"


# --- CoreNet: its own FSDP subclass, built by a train-eval pipeline a registry files under the name the 3B recipes pick ------

def _corenet(pipeline: str) -> dict[str, str]:
    return {
        "corenet/modeling/models/fsdp_wrapper.py": (
            "from torch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy\n\n\n"
            "class FullyShardedDataParallelWrapper(FullyShardedDataParallel):\n    def __init__(self, opts, model):\n"
            "        super().__init__(model, sharding_strategy=ShardingStrategy.FULL_SHARD, limit_all_gathers=True)\n"),
        "corenet/train_eval_pipelines/base.py": (
            "class Registry:\n    def register(self, name):\n        return lambda cls: cls\n\n\n"
            "TRAIN_EVAL_PIPELINE_REGISTRY = Registry()\n\n\n@TRAIN_EVAL_PIPELINE_REGISTRY.register(\"default_train_eval_pipeline\")\n"
            "class DefaultTrainEvalPipeline:\n    def train(self, model, loader, optimizer):\n        for batch in loader:\n"
            "            model(batch).backward()\n            optimizer.step()\n"),
        "corenet/train_eval_pipelines/fsdp_train_eval.py": (
            "from functools import cached_property\n"
            "from corenet.modeling.models.fsdp_wrapper import FullyShardedDataParallelWrapper\n"
            "from corenet.train_eval_pipelines.base import TRAIN_EVAL_PIPELINE_REGISTRY, DefaultTrainEvalPipeline\n\n\n"
            "@TRAIN_EVAL_PIPELINE_REGISTRY.register(\"fsdp_train_eval_pipeline\")\nclass FSDPTrainEvalPipeline(DefaultTrainEvalPipeline):\n"
            "    @cached_property\n    def model(self):\n        model = self._prepare_model()\n"
            "        fsdp_model = FullyShardedDataParallelWrapper(opts=self.opts, model=model)\n        return fsdp_model\n"),
        "corenet/cli/main_train.py": ("from corenet.train_eval_pipelines.base import DefaultTrainEvalPipeline\n\n\n"
                                      "def main():\n    DefaultTrainEvalPipeline().train(None, [], None)\n\n\n"
                                      "if __name__ == '__main__':\n    main()\n"),
        "projects/openelm/openelm_3B.yaml": f"train_eval_pipeline:\n  name: \"{pipeline}\"\ncommon:\n  mixed_precision: true\n",
        "projects/openelm/README.md": "```bash\ncorenet-train --common.config-file projects/openelm/openelm_3B.yaml\n```\n",
        "setup.py": ("from setuptools import setup\nsetup(name='corenet', entry_points={'console_scripts': "
                     "['corenet-train = corenet.cli.main_train:main']})\n"),
    }


def test_an_fsdp_subclass_built_by_a_pipeline_a_recipe_picks_by_its_registered_name_shards() -> None:
    a2 = _check(_audit(_corenet("fsdp_train_eval_pipeline")), "A2")
    assert a2.status.value == "used" and "subclass" in a2.detail, a2.detail
    # control: no recipe picks that pipeline: the wrapper is in a module nothing reaches
    a2 = _check(_audit(_corenet("default_train_eval_pipeline")), "A2")
    assert a2.status.value == "unused", a2.detail


# --- anole: ``prepare_data.sh`` runs ``data_tokenization.py``; train.py's ``TokenizedDataset(DATASET_TOKENIZED_PATH)`` reads ids -

_ANOLE_DATA_TOKENIZATION = (
    "import json\nfrom chameleon.inference.chameleon import ChameleonInferenceModel\n"
    "from training.constants_training import DATASET_RAW_PATH, DATASET_TOKENIZED_PATH\n\n"
    "if __name__ == '__main__':\n    model = ChameleonInferenceModel('/models/7b', '/tokenizer/text_tokenizer.json')\n"
    "    output_data = model.sft_tokenization(DATASET_RAW_PATH)\n"
    "    with open(DATASET_TOKENIZED_PATH, 'w') as output_file:\n        for entry in output_data:\n"
    "            output_file.write(json.dumps(entry) + '\\n')\n"
)
_ANOLE_DATASET = (
    "import jsonlines\nimport torch\nfrom torch.utils.data import Dataset\n"
    "from transformers import ChameleonForCausalLM, Trainer, TrainingArguments\n"
    "from constants_training import DATASET_TOKENIZED_PATH\n\n\nclass TokenizedDataset(Dataset):\n"
    "    def __init__(self, filepath):\n        self.tokenized_data = []\n        with jsonlines.open(filepath) as reader:\n"
    "            for obj in reader:\n                self.tokenized_data.append(torch.tensor(obj['text_tokens'] + obj['image_tokens']))\n\n"
    "    def __len__(self):\n        return len(self.tokenized_data)\n\n    def __getitem__(self, idx):\n"
    "        return self.tokenized_data[idx]\n\n\n"
    "model = ChameleonForCausalLM.from_pretrained('/models/anole-7b-hf')\ndataset = TokenizedDataset(DATASET_TOKENIZED_PATH)\n"
    "Trainer(model=model, args=TrainingArguments(output_dir='out', bf16=True), train_dataset=dataset).train()\n"
)


def test_a_dataset_class_named_for_tokens_built_from_their_file_is_no_tokenization_and_the_data_tokenization_script_is() -> None:
    files = {"training/train.py": _ANOLE_DATASET, "training/data_tokenization.py": _ANOLE_DATA_TOKENIZATION,
             "training/constants_training.py": "DATASET_RAW_PATH = '/data/raw.jsonl'\nDATASET_TOKENIZED_PATH = '/data/tok.jsonl'\n",
             "training/prepare_data.sh": "python data_tokenization.py\n", "training/train.sh": "torchrun --nproc_per_node=8 train.py\n"}
    f6 = _check(_audit(files), "F6")
    assert f6.status.value == "used" and not any("TokenizedDataset" in (e.key or "") for e in f6.evidence), (f6.detail, f6.evidence)
    # without the script, reading the ids is still no tokenization at start-up
    del files["training/prepare_data.sh"], files["training/data_tokenization.py"]
    f6 = _check(_audit(files), "F6")
    assert "start-up" not in f6.detail, f6.detail
    # control: the same class handed a tokenizer tokenizes the dataset at start-up
    files["training/train.py"] = _ANOLE_DATASET.replace("TokenizedDataset(DATASET_TOKENIZED_PATH)",
                                                        "TokenizedDataset(tokenizer, '/data/raw.jsonl')")
    f6 = _check(_audit(files), "F6")
    assert f6.status.value != "used" and "start-up" in f6.detail, f6.detail


# --- openvla: a DataLoader at 0 workers over an IterableDataset that iterates a tf.data (RLDS) pipeline ----------------------

_RLDS_DATASET = (
    "import tensorflow as tf\nfrom torch.utils.data import IterableDataset\n\n\n"
    "def make_dataset(paths):\n    ds = tf.data.TFRecordDataset(paths)\n"
    "    return ds.map(decode_and_resize, num_parallel_calls=16)\n\n\n"
    "class RLDSDataset(IterableDataset):\n    def __init__(self, paths, batch_transform):\n"
    "        self.dataset = make_dataset(paths)\n        self.batch_transform = batch_transform\n\n"
    "    def __iter__(self):\n        for rlds_batch in self.dataset.as_numpy_iterator():\n"
    "            yield self.batch_transform(rlds_batch)\n"
)
_VLA_TRAIN = (
    "import torch\nfrom torch.utils.data import DataLoader\nfrom prismatic.vla.datasets import RLDSDataset\n\n\n"
    "def train(model, optimizer, collator):\n    vla_dataset = RLDSDataset(['/data/bridge'], None)\n"
    "    # Set `num_workers` to 0; RLDS loader handles parallelism!\n"
    "    dataloader = DataLoader(vla_dataset, batch_size=32, sampler=None, collate_fn=collator, num_workers=0)\n"
    "    for batch in dataloader:\n        model(**batch).loss.backward()\n        optimizer.step()\n\n\n"
    "if __name__ == '__main__':\n    train(None, None, None)\n"
)


def test_zero_loader_workers_over_a_tf_data_pipeline_are_not_the_runs_loading_parallelism() -> None:
    files = {"prismatic/vla/datasets.py": _RLDS_DATASET, "prismatic/vla/__init__.py": "", "vla-scripts/train.py": _VLA_TRAIN,
             "vla-scripts/finetune.py": _VLA_TRAIN,
             "README.md": ("```bash\ntorchrun --standalone --nnodes 1 --nproc-per-node 8 vla-scripts/train.py\n"
                           "torchrun --standalone --nnodes 1 --nproc-per-node 8 vla-scripts/finetune.py\n```\n")}
    f1 = _check(_audit(files), "F1")
    assert f1.status.value == "used" and "tf.data" in f1.detail and "main process" not in f1.detail, (f1.detail, f1.evidence)
    # control: map-style loaders that shuffle (a torch Dataset, not the tf.data stream) at 0 workers load in the main process
    files["vla-scripts/train.py"] = files["vla-scripts/finetune.py"] = _VLA_TRAIN.replace("sampler=None", "shuffle=True")
    assert _check(_audit(files), "F1").status.value == "unused"
