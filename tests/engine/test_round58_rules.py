"""Round 58 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check

# --- vila-u: ``n_node=${SLURM_JOB_NUM_NODES:-1}`` in its SLURM launchers; a tar reader's local ``block_size = 512`` ---------

_VILA_U_LAUNCH = (
    "#!/bin/bash\nmaster_addr=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
    "n_node=${{SLURM_JOB_NUM_NODES:-1}}\n"
    "torchrun --nnodes=$n_node --nproc_per_node=8 --master_port=25001 --master_addr $master_addr --node_rank=$SLURM_PROCID \\\n"
    "    vila_u/train/train_mem.py \\\n    --model_name_or_path meta-llama/Llama-2-7b \\\n"
    "    --model_max_length {length} \\\n    --bf16 True \\\n    --output_dir runs/vila-u\n"
)
_TAR_READER = (
    "import mmap\n\n\ndef next_header(offset, header):\n    block_size = 512\n"
    "    size = int(header.size.decode('utf-8').strip('\\x00'), 8)\n"
    "    padded_file_size = (size + block_size - 1) // block_size * block_size\n    return offset + block_size + padded_file_size\n"
)


def _vila_u(length: str = "8192", default: str = "${SLURM_JOB_NUM_NODES:-1}") -> dict[str, str]:
    train = _LLAVA_TRAIN.replace("import transformers\n", "import transformers\nfrom vila_u.wids.wids_mmtar import next_header\n", 1)
    return {"vila_u/train/train_mem.py": train, "vila_u/wids/wids_mmtar.py": _TAR_READER,
            "scripts/train/pretrain.sh": _VILA_U_LAUNCH.format(length=length).replace("${SLURM_JOB_NUM_NODES:-1}", default)}


def test_a_node_count_the_scheduler_gives_is_the_jobs_not_its_fallback() -> None:
    project = _audit(_vila_u()).project
    assert not project.num_nodes and "SLURM_JOB_NUM_NODES" in str(project.notes.get("nodes_unresolved")), project.notes
    # control: a variable of the script's own defaulting to 1 is one node
    project = _audit(_vila_u(default="${NNODE_COUNT:-1}")).project
    assert "nodes_unresolved" not in project.notes and not project.multi_node, project.notes


def test_a_functions_local_block_size_is_no_context_length() -> None:
    assert _audit(_vila_u()).project.max_seq_len == 8192
    # control: a module-level ``block_size`` is a nanoGPT-style context length
    files = _vila_u()
    files["vila_u/train/config.py"] = "block_size = 1024\n"
    files["vila_u/train/train_mem.py"] = "from vila_u.train.config import block_size\n" + files["vila_u/train/train_mem.py"]
    files["scripts/train/pretrain.sh"] = files["scripts/train/pretrain.sh"].replace("    --model_max_length 8192 \\\n", "")
    assert _audit(files).project.max_seq_len == 1024
    # control: the cap in a text-grouping function (LMFlow's ``group_text``) is the training block
    files = _vila_u()
    files["scripts/train/pretrain.sh"] = files["scripts/train/pretrain.sh"].replace("    --model_max_length 8192 \\\n", "")
    files["vila_u/train/train_mem.py"] += "\n\ndef group_text(examples):\n    block_size = 2048\n    return examples[:block_size]\n"
    assert _audit(files).project.max_seq_len == 2048


# --- Show-o: ``models/training_utils.py`` (an EMA class whose ``step`` empties the cache), which nothing imports ---------------

_EMA = ("import torch\n\n\nclass EMAModel:\n    def __init__(self, parameters):\n        self.shadow = [p.clone() for p in parameters]\n\n"
        "    @torch.no_grad()\n    def step(self, parameters):\n        for s, p in zip(self.shadow, parameters):\n"
        "            s.mul_(0.99).add_(p, alpha=0.01)\n        torch.cuda.empty_cache()\n")
_SHOWO_TRAIN = ("import torch\n\n\ndef main(model, loader, optimizer):\n    for batch in loader:\n        loss = model(**batch)\n"
                "        loss.backward()\n        optimizer.step()\n\n\nif __name__ == '__main__':\n    main(None, [], None)\n")


def test_a_helper_module_named_for_training_is_no_entry_point() -> None:
    files = {"models/training_utils.py": _EMA, "training/train.py": _SHOWO_TRAIN,
             "scripts/train.sh": "accelerate launch --num_processes 8 training/train.py\n"}
    result = _audit(files)
    assert "models/training_utils.py" not in result.roles.entry_points, result.roles.entry_points
    assert _check(result, "C6").status.value != "unused" or "empty_cache" not in _check(result, "C6").detail
    # control: the training script that imports and steps it runs it every step
    files["training/train.py"] = _SHOWO_TRAIN.replace("import torch\n", "import torch\nfrom models.training_utils import EMAModel\n") \
        .replace("        optimizer.step()\n", "        optimizer.step()\n        ema.step(model.parameters())\n")
    c6 = _check(_audit(files), "C6")
    assert "empty_cache" in c6.detail, c6.detail


# --- MiniGPT4-video: empty_cache in ``@torch.no_grad() def multi_select``; A-OKVQA's trainer under ``common/vqa_tools/`` ------

_MINIGPT_MODEL = (
    "import torch\nfrom torch import nn\n\n\nclass MiniGPT4Video(nn.Module):\n    def forward(self, samples):\n"
    "        return self.llama_model(**samples).loss\n\n    @torch.no_grad()\n    def multi_select(self, images, texts, answers):\n"
    "        scores = []\n        for answer in answers:\n            scores.append(self.score(images, texts, answer))\n"
    "            torch.cuda.empty_cache()\n        return scores\n"
)


def test_a_method_without_autograd_and_an_evaluation_toolkits_trainer_are_not_the_training_loop() -> None:
    files = {"minigpt4/models/mini_gpt4_llama_v2.py": _MINIGPT_MODEL,
             "train.py": ("import torch\nfrom minigpt4.models.mini_gpt4_llama_v2 import MiniGPT4Video\n\n\ndef main(loader, opt):\n"
                          "    model = MiniGPT4Video()\n    for samples in loader:\n        model(samples).backward()\n        opt.step()\n\n\n"
                          "if __name__ == '__main__':\n    main([], None)\n"),
             "train_configs/stage3.yaml": "run:\n  num_workers: 4\n",
             "training_scripts/stage_3.sh": "torchrun --nproc-per-node 4 train.py --cfg-path train_configs/stage3.yaml\n",
             "minigpt4/common/vqa_tools/aokvqa/transfer_experiments/train.py": (
                 "import pytorch_lightning as pl\nfrom torch.utils.data import DataLoader\n\n\ndef main(model, ds):\n"
                 "    loader = DataLoader(ds, batch_size=128, num_workers=0)\n    pl.Trainer().fit(model, loader)\n\n\n"
                 "if __name__ == '__main__':\n    main(None, None)\n"),
             "minigpt4/common/vqa_tools/aokvqa/transfer_experiments/README.md":
                 "```bash\npython transfer_experiments/train.py --aokvqa-dir data/aokvqa\n```\n"}
    result = _audit(files)
    assert "minigpt4/common/vqa_tools/aokvqa/transfer_experiments/train.py" not in result.roles.entry_points
    c6 = _check(result, "C6")
    assert "empty_cache" not in c6.detail, c6.detail
    # control: the same loop in a method with autograd runs in training
    files["minigpt4/models/mini_gpt4_llama_v2.py"] = _MINIGPT_MODEL.replace("    @torch.no_grad()\n", "")
    files["train.py"] = files["train.py"].replace("        model(samples).backward()\n",
                                                  "        model(samples).backward()\n        model.multi_select(None, None, [1])\n")
    assert "empty_cache" in _check(_audit(files), "C6").detail


# --- MMaDA: LLaDA's config class defaults (GPT-2's 124M) inside ``LLaDAConfig.__init__``; MAGVIT-v2 image codes ---------------

_LLADA_CONFIG = (
    "from dataclasses import dataclass\nfrom transformers import AutoConfig, PretrainedConfig\n\n\n@dataclass\nclass ModelConfig:\n"
    "    d_model: int = 768\n    n_heads: int = 12\n    n_layers: int = 12\n    mlp_hidden_size: int = 3072\n"
    "    vocab_size: int = 50257\n    max_sequence_length: int = 1024\n\n\nclass LLaDAConfig(PretrainedConfig):\n"
    "    model_type = 'llada'\n\n    def __init__(self, **kwargs):\n        model_config = ModelConfig()\n"
    "        all_kwargs = model_config.__dict__\n        all_kwargs.update(kwargs)\n        super().__init__(**all_kwargs)\n"
)
_MMADA_TRAIN = (
    "import torch\nfrom omegaconf import OmegaConf\nfrom models import MAGVITv2, MMadaModelLM\n\n\ndef main():\n"
    "    config = OmegaConf.load('configs/mmada_pretraining_stage1.yaml')\n"
    "    vq_model = MAGVITv2.from_pretrained(config.model.vq_model.vq_model_name)\n    vq_model.requires_grad_(False)\n"
    "    model = MMadaModelLM.from_pretrained(config.model.mmada.pretrained_model_path, torch_dtype=torch.bfloat16)\n"
    "    for batch in []:\n        ids = vq_model.get_code(batch['images'])\n        model(ids).loss.backward()\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)


def _mmada() -> dict[str, str]:
    return {"models/configuration_llada.py": _LLADA_CONFIG, "models/__init__.py": "from .configuration_llada import LLaDAConfig\n",
            "training/train_mmada.py": _MMADA_TRAIN,
            "configs/mmada_pretraining_stage1.yaml": ("model:\n  vq_model:\n    vq_model_name: showlab/magvitv2\n  mmada:\n"
                                                      "    pretrained_model_path: GSAI-ML/LLaDA-8B-Instruct\n"),
            "scripts/train.sh": "accelerate launch --num_processes 8 training/train_mmada.py\n"}


def test_a_config_class_filled_from_the_checkpoint_does_not_size_the_model_and_magvit_codes_make_an_mllm() -> None:
    result = _audit(_mmada())
    assert result.project.estimated_params == "8B", (result.project.estimated_params, result.project.notes.get("params_source"))
    assert result.project.model_type == "MLLM"
    h1 = _check(result, "H1")
    assert h1.status.value == "n/a" and "MAGVITv2" in h1.detail, h1.detail
    # control: a training script that builds the config with its defaults trains that size
    files = _mmada()
    files["training/train_mmada.py"] = _MMADA_TRAIN.replace(
        "    model = MMadaModelLM.from_pretrained(config.model.mmada.pretrained_model_path, torch_dtype=torch.bfloat16)\n",
        "    model = MMadaModelLM(ModelConfig())\n").replace("from models import", "from models.configuration_llada import ModelConfig\n"
                                                          "from models import")
    del files["configs/mmada_pretraining_stage1.yaml"]
    assert _audit(files).project.estimated_params != "8B"


def test_a_weight_file_path_is_no_model_name() -> None:
    # SEED-Story/SEED-X: ``pretrained_model_path: pretrained/detokenizer/checkpoint-4000/pytorch_model.bin`` (an adapter's weights)
    files = _mmada()
    files["configs/detokenizer.yaml"] = "pretrained_model_path: pretrained/detokenizer/checkpoint-4000/pytorch_model.bin\n"
    names = _audit(files).project.model_names
    assert "GSAI-ML/LLaDA-8B-Instruct" in names and not any(n.endswith(".bin") for n in names), names


# --- SpeechGPT: ``torchrun --nnode $NNODE`` (torchrun takes the prefix) in all three stages -----------------------------------

def test_every_launch_that_spans_nodes_through_the_nnode_prefix_is_multi_node() -> None:
    launch = ("NNODE=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | wc -l)\n"
              "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
              "NODE_RANK=$(($(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | grep -Fn $(hostname) | cut -d: -f1)-1))\n"
              "torchrun \\\n    --nnode $NNODE \\\n    --nproc_per_node 8 \\\n    --node_rank $NODE_RANK \\\n"
              "    --master_addr $MASTER_ADDR \\\n    speechgpt/src/train/{script}.py \\\n    --bf16 True \\\n"
              "    --fsdp \"full_shard auto_wrap\"\n")
    files = {"speechgpt/src/train/ma_pretrain.py": _LLAVA_TRAIN, "speechgpt/src/train/cm_sft.py": _LLAVA_TRAIN,
             "speechgpt/scripts/ma_pretrain.sh": launch.format(script="ma_pretrain"),
             "speechgpt/scripts/cm_sft.sh": launch.format(script="cm_sft")}
    project = _audit(files).project
    reasons = " ".join(project.bottleneck_reasons)
    assert "several nodes" in reasons and "next to single-node ones" not in reasons, reasons
    # control: a single-node launch beside them is said
    files["speechgpt/scripts/single_node.sh"] = "torchrun --nproc_per_node 8 speechgpt/src/train/cm_sft.py --bf16 True\n"
    assert "next to single-node ones" in " ".join(_audit(files).project.bottleneck_reasons)


def test_the_helper_module_rule_reads_the_main_block_in_a_recorded_scan_too(tmp_path, monkeypatch) -> None:
    """The roles' recorded view of a call (``--cache``, the App's PR audit) carries whether it is in a main block: the rule
    crashed there (``RoleCall`` has no guard), and adding a main block to the helper is a role change a warm scan sees."""
    import checks.tree_index as tree_index
    from accel_audit.cli import main

    monkeypatch.setattr(tree_index, "RACY_NS", 0)  # the files here were written a moment ago
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    for rel, text in {"models/training_utils.py": _EMA + "\n\nEMAModel([]).step([])\n", "training/train.py": _SHOWO_TRAIN,
                      "scripts/train.sh": "accelerate launch --num_processes 8 training/train.py\n"}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)

    def scan(*extra: str) -> str:
        out = tmp_path / "report.json"
        assert main(["scan", str(repo), "--format", "json", "-o", str(out), "--jobs", "1", *extra]) in (0, 1)
        return out.read_text()

    assert scan("--cache", str(cache)) == scan()
    # the same calls moved into a main block make the helper a script of its own: the warm scan's roles follow, as a cold
    # scan's do (only whether the calls sit in a main block changed)
    (repo / "models/training_utils.py").write_text(_EMA + "\n\nif __name__ == '__main__':\n    EMAModel([]).step([])\n")
    warm = scan("--cache", str(cache))
    assert warm == scan() and '"models/training_utils.py"' in warm
