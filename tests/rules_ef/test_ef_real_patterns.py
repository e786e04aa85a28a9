"""Patterns of real training code (issue 9): hand-written token pipelines, loader sizes, the real prefetch value."""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status

from ._audit import audit

MODDED = (
    "from pathlib import Path\nimport torch\n"
    "def _load_data_shard(file: Path):\n"
    "    header = torch.from_file(str(file), False, 256, dtype=torch.int32)\n"
    "    num_tokens = int(header[2])\n"
    "    with file.open('rb', buffering=0) as f:\n"
    "        tokens = torch.empty(num_tokens, dtype=torch.uint16, pin_memory=True)\n"
    "        f.seek(256 * 4)\n"
    "        nbytes = f.readinto(tokens.numpy())\n"
    "    return tokens\n"
)


def test_modded_nanogpt_reader_is_pretokenized_sharded_offline_and_pinned():
    r, _ = audit({"train_gpt.py": MODDED}, "F3", "F4", "F6", "F10")
    assert {k: v.status.value for k, v in r.items()} == {"F3": "used", "F4": "used", "F6": "used", "F10": "used"}
    assert any(e.line == 4 for e in r["F10"].evidence)  # torch.from_file, at its own line
    assert [e.line for e in r["F3"].evidence] == [7]  # the pinned buffer


def test_far_too_many_workers_is_a_finding_at_its_line():
    r, _ = audit({"train.py": "from torch.utils.data import DataLoader\n"
                              "train_loader = DataLoader(train_ds, batch_size=8,\n    num_workers=64, pin_memory=True)\n"}, "F1")
    f1 = r["F1"]
    assert f1.status.value == "used" and f1.values["max_num_workers"] == 64
    assert [(e.line, e.value) for e in f1.findings] == [(3, 64)]
    assert "num_workers=64" in f1.detail


def test_prefetch_detail_states_the_real_value_and_a_huge_one_is_a_finding():
    r, _ = audit({"train.py": "from torch.utils.data import DataLoader\n"
                              "train_loader = DataLoader(train_ds, batch_size=8, num_workers=8, prefetch_factor=4)\n"}, "F2")
    assert "prefetch_factor=4" in r["F2"].detail and "default" not in r["F2"].detail
    r, _ = audit({"train.py": "from torch.utils.data import DataLoader\n"
                              "train_loader = DataLoader(train_ds, batch_size=8, num_workers=8, prefetch_factor=64)\n"}, "F2")
    assert r["F2"].findings and "prefetch_factor=64" in r["F2"].detail


def test_tokenizer_statistics_are_not_token_shards():
    r, _ = audit({"stats.py": "import numpy as np\nnp.save('tokenizer_length_stats.npy', lengths)\n"}, "F10")
    assert r["F10"].status.value == "unused"


def test_a_callers_config_value_reaches_the_loader_one_hop():
    files = {
        "config.py": "from dataclasses import dataclass\n@dataclass\nclass DataArgs:\n    num_loading_workers: int = 1\n",
        "dataloader.py": ("from torch.utils.data import DataLoader\n"
                          "def get_train_dataloader(ds, dataloader_num_workers: int):\n"
                          "    return DataLoader(ds, batch_size=8, num_workers=dataloader_num_workers)\n"),
        "run_train.py": ("from dataloader import get_train_dataloader\n"
                         "loader = get_train_dataloader(ds, dataloader_num_workers=config.data.num_loading_workers)\n"),
    }
    r, _ = audit(files, "F1")
    assert r["F1"].status.value == "partial" and r["F1"].values["num_workers"] == 1


_NANOCHAT_OPTIM = (
    "import torch\nimport torch.distributed as dist\n\n\nclass MuonAdamW(torch.optim.Optimizer):\n"
    "    def _reduce_adamw(self, group, world_size):\n        infos = {}\n        for p in group['params']:\n"
    "            grad = p.grad\n            if world_size == 1:\n                infos[p] = (None, grad)\n"
    "            else:\n                rank_size = grad.shape[0] // world_size\n"
    "                grad_slice = torch.empty_like(grad[:rank_size])\n"
    "                future = dist.reduce_scatter_tensor(grad_slice, grad, op=dist.ReduceOp.AVG, async_op=True).get_future()\n"
    "                infos[p] = (future, grad_slice)\n        return infos\n\n"
    "    def _compute_adamw(self, p, p_slice):\n        return dist.all_gather_into_tensor(p, p_slice, async_op=True).get_future()\n"
)
_NANOCHAT_TRAIN = {
    "nanochat/optim.py": _NANOCHAT_OPTIM,
    "scripts/base_train.py": ("import torch\nfrom nanochat.optim import MuonAdamW\nfrom nanochat.dataloader import loader\n\n"
                              "optimizer = MuonAdamW(param_groups)\nfor step in range(num_iterations):\n"
                              "    x, y = next(train_loader)\n    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n"),
    "runs/speedrun.sh": "torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=26\n",
}


def test_a_hand_written_sharded_optimizer_is_zero2_and_fsdp_is_not_advised():
    """nanochat: no DDP, no DeepSpeed; its optimizer reduce-scatters gradients and all-gathers updated slices (ZeRO-2)."""
    results, _ = audit(_NANOCHAT_TRAIN, "A2", "A3")
    assert results["A3"].status == Status.USED and results["A3"].values["zero_stage"] == 2
    assert [(e.path, e.line) for e in results["A3"].evidence] == [("nanochat/optim.py", 15)]
    assert results["A2"].priority is None  # sharding is in use: no FSDP advice
    without = audit({**_NANOCHAT_TRAIN, "nanochat/optim.py": _NANOCHAT_OPTIM.replace(
        "dist.all_gather_into_tensor(p, p_slice, async_op=True).get_future()", "None")}, "A2", "A3")[0]
    assert without["A3"].status == Status.UNUSED and without["A2"].priority is not None  # reduce-scatter alone is not ZeRO


def test_a_copy_whose_non_blocking_follows_a_local_condition_is_asynchronous():
    loader = ("import torch\n\ndef tokenizing_distributed_data_loader_with_state(B, T, device='cuda'):\n    use_cuda = device == 'cuda'\n"
              "    cpu_buffer = torch.empty(2 * B * T, dtype=torch.long, pin_memory=use_cuda)\n"
              "    gpu_buffer = torch.empty(2 * B * T, dtype=torch.long, device=device)\n    while True:\n"
              "        gpu_buffer.copy_(cpu_buffer, non_blocking=use_cuda)\n        batch = gpu_buffer.view(2, B, T)\n"
              "        yield batch[0], batch[1]\n")
    results, _ = audit({"nanochat/dataloader.py": loader}, "F11")
    assert results["F11"].status == Status.PARTIAL
    off = audit({"nanochat/dataloader.py": loader.replace("non_blocking=use_cuda", "non_blocking=False")}, "F11")[0]["F11"]
    assert off.status == Status.UNUSED and "non_blocking=False" in (off.detail or "")
    unseen = audit({"nanochat/dataloader.py": loader.replace(", non_blocking=use_cuda", "")}, "F11")[0]["F11"]
    assert unseen.status == Status.UNUSED and "no non_blocking" in (unseen.detail or "") and not unseen.evidence


def test_per_sample_reads_are_the_training_paths_not_an_inference_helpers():
    """LLaVA: the training dataset opens one image per sample (train.py); the Cog predictor and the CLI open one per
    request. Only the training read is cited."""
    files = {
        "llava/train/train.py": (
            "import os\nfrom PIL import Image\nfrom torch.utils.data import Dataset\nimport transformers\n\n"
            "class LazySupervisedDataset(Dataset):\n    def __getitem__(self, i):\n        sources = self.list_data_dict[i]\n"
            "        image = Image.open(os.path.join(self.data_args.image_folder, sources['image'])).convert('RGB')\n"
            "        return dict(image=self.processor(image))\n\n"
            "def train():\n    trainer = transformers.Trainer(model=model, train_dataset=LazySupervisedDataset())\n    trainer.train()\n"),
        "llava/train/train_mem.py": "from llava.train.train import train\n\nif __name__ == '__main__':\n    train()\n",
        "scripts/v1_5/finetune.sh": "deepspeed llava/train/train_mem.py --image_folder ./playground/data --bf16 True\n",
        "predict.py": (
            "from PIL import Image\n\nclass Predictor:\n    def predict(self, image, prompt):\n"
            "        image_data = load_image(str(image))\n        return self.model.generate(image_data)\n\n"
            "def load_image(image_file):\n    return Image.open(image_file).convert('RGB')\n"),
    }
    f4 = audit_files((p, t.encode()) for p, t in files.items()).result("F4")
    assert f4.status == Status.UNUSED
    assert [(e.path, e.line) for e in f4.evidence] == [("llava/train/train.py", 9)]


def test_a_loader_subclass_is_the_loader_its_super_init_builds():
    """picotron: ``class MicroBatchDataLoader(DataLoader)`` with ``pin_memory=True`` in its ``__init__`` and
    ``super().__init__(..., pin_memory=pin_memory, num_workers=num_workers)``; train.py builds it without pin_memory.
    The loader pins (the previous rule said 'no data loader found to pin') and its construction is not a second loader."""
    from checks.rules.f_data import _LOADER_SUBCLASS, _LOADER_SUBCLASS_CALL

    r, _ = audit({"picotron/data.py": _LOADER_SUBCLASS, "train.py": _LOADER_SUBCLASS_CALL}, "F1", "F2", "F3")
    assert r["F3"].status is Status.USED
    assert [(e.path, e.line) for e in r["F3"].evidence] == [("picotron/data.py", 5)]
    assert r["F1"].status is Status.USED and r["F1"].values["num_workers"] == 4
    assert [(e.path, e.line) for e in r["F1"].evidence] == [("train.py", 7)]  # the value the caller passes
    assert r["F2"].status is Status.USED
    off, _ = audit({"picotron/data.py": _LOADER_SUBCLASS.replace("pin_memory=True):", "pin_memory=False):"),
                    "train.py": _LOADER_SUBCLASS_CALL}, "F3")
    assert off["F3"].status is Status.UNUSED


def test_handling_a_tokenizer_is_not_tokenizing_the_dataset():
    """fairseq2 0.8.1: ``get_llama_tokenizer_hub = TokenizerHubAccessor(...)`` at module level and recipe helpers
    ``_load_tokenizer``/``_download_tokenizer``/``_maybe_get_tokenizer_family`` load, log and register tokenizers. The previous
    rule read each as 'the whole dataset is tokenized in-process at start-up' (and step zero as online tokenization)."""
    files = {
        "fairseq2/models/llama/hub.py": (
            "from fairseq2.data.tokenizers import TokenizerHubAccessor\nfrom fairseq2.models import ModelHubAccessor\n\n"
            "get_llama_model_hub = ModelHubAccessor(LLAMA_FAMILY, kls=TransformerLM, config_kls=LLaMAConfig)\n\n"
            "get_llama_tokenizer_hub = TokenizerHubAccessor(LLAMA_FAMILY, kls=LLaMATokenizer, config_kls=LLaMATokenizerConfig)\n"),
        "fairseq2/recipe/internal/tokenizer.py": (
            "def _load_tokenizer(context, section_name):\n    family = _maybe_get_tokenizer_family(context, section_name)\n"
            "    tokenizer = _download_tokenizer(family, section_name)\n    _log_tokenizer(tokenizer)\n    return tokenizer\n\n\n"
            "tokenizer = _load_tokenizer(context, 'tokenizer')\n"),
    }
    r, _ = audit(files, "F6")
    assert r["F6"].evidence == [] and "start-up" not in r["F6"].detail


def test_a_tokenizing_helper_reached_from_some_forward_by_a_generic_name_is_not_per_step():
    """axolotl: prompt strategies' ``load(tokenizer, cfg)`` build ``PretrainTokenizationStrategy(..., max_length=...)``; some
    model's ``forward`` elsewhere calls an unrelated ``load``. Only a tokenizer called in a ``forward`` itself (BLIP-2) runs
    every step; the merged rule read axolotl's prepared-dataset pipeline as partial 'the model's forward still tokenizes'."""
    files = {
        "src/axolotl/prompt_strategies/pretrain.py": (
            "def load(tokenizer, cfg):\n    return PretrainTokenizationStrategy(\n        tokenizer,\n"
            "        text_column='text',\n        max_length=cfg.sequence_len * 64,\n    )\n"),
        "src/axolotl/monkeypatch/loader.py": (
            "import torch\n\n\nclass Patched(torch.nn.Module):\n    def forward(self, x):\n        w = load(self.tokenizer, self.cfg)\n"
            "        return x\n"),
        "src/axolotl/utils/data/shared.py": (
            "from datasets import load_from_disk\n\n\ndef save_preprocessed_dataset(cfg, dataset, prepared_path):\n"
            "    dataset.save_to_disk(str(prepared_path))\n\n\ndef load_preprocessed_dataset(cfg, prepared_path):\n"
            "    return load_from_disk(str(prepared_path))\n"),
    }
    r, _ = audit(files, "F6")
    assert "forward" not in r["F6"].detail, r["F6"].detail
