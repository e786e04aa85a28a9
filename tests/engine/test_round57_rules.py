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
