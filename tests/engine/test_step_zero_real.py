"""Step zero and the overview on small fixtures written after real training repositories (issue #9).

Each fixture keeps the shape of the code that fooled the engine (or that it must recognise), written as our own
excerpt-sized code: the verdict and every figure in it must be what reading that code gives.
"""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Bottleneck


def audit(files: dict[str, str]):
    return audit_files((p, t.encode()) for p, t in files.items())


# nanoGPT's shape: GPT-2 small set by globals in train.py, weights tied, BF16 autocast, SDPA, torch.compile,
# pre-tokenized train.bin read with np.memmap into pinned memory, one node.
NANOGPT = {
    "model.py": '''import math
from dataclasses import dataclass
import torch
import torch.nn as nn
from torch.nn import functional as F


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768


class CausalSelfAttention(nn.Module):
    def forward(self, x):
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=None, is_causal=True)
        return self.c_proj(y)


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(config.vocab_size, config.n_embd)))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    @classmethod
    def from_pretrained(cls, model_type):
        config_args = {
            'gpt2': dict(n_layer=12, n_head=12, n_embd=768),
            'gpt2-medium': dict(n_layer=24, n_head=16, n_embd=1024),
            'gpt2-large': dict(n_layer=36, n_head=20, n_embd=1280),
            'gpt2-xl': dict(n_layer=48, n_head=25, n_embd=1600),
        }[model_type]
        return cls(GPTConfig(**config_args))
''',
    "train.py": '''import os
from contextlib import nullcontext
import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from model import GPTConfig, GPT

out_dir = 'out'
eval_interval = 2000
log_interval = 1
dataset = 'openwebtext'
gradient_accumulation_steps = 5 * 8
batch_size = 12
block_size = 1024
n_layer = 12
n_head = 12
n_embd = 768
dropout = 0.0
bias = False
device = 'cuda'
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
compile = True
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = torch.amp.autocast(device_type='cuda', dtype=ptdtype)
data_dir = os.path.join('data', dataset)


def get_batch(split):
    data = np.memmap(os.path.join(data_dir, 'train.bin'), dtype=np.uint16, mode='r')
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i+block_size]).astype(np.int64)) for i in ix])
    x = x.pin_memory().to(device, non_blocking=True)
    return x, x


model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size, bias=bias, vocab_size=None, dropout=dropout)
model = GPT(GPTConfig(**model_args))
if compile:
    model = torch.compile(model)
model = DDP(model, device_ids=[0])
X, Y = get_batch('train')
while True:
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
        X, Y = get_batch('train')
        loss.backward()
    optimizer.step()
''',
    "README.md": "```\ntorchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py\n```\n",
}


def test_nanogpt_shape_is_compute_bound_on_positive_evidence():
    a = audit(NANOGPT)
    p = a.project
    assert p.estimated_params == "124M"  # 12 x 768 with a tied 50,304-token embedding: GPT-2 small, not a registry entry
    assert p.notes["params_source"].startswith("train.py:")
    assert p.bottleneck == Bottleneck.COMPUTE, p.bottleneck_reasons
    (reason,) = p.bottleneck_reasons
    for cited in ("C1 at `train.py:", "D1 at `model.py:", "D2 at `train.py:", "F10 at `train.py:"):
        assert cited in reason
    assert "single node" in reason


def test_without_compile_the_same_code_is_not_called_compute_bound():
    files = dict(NANOGPT, **{"train.py": NANOGPT["train.py"].replace("compile = True", "compile = False").replace(
        "if compile:\n    model = torch.compile(model)\n", "")})
    p = audit(files).project
    assert p.bottleneck != Bottleneck.COMPUTE
    # 124M parameters, eager: short kernels only at small micro-batches (nanoGPT's default runs 12 x 1024 tokens per
    # micro-batch), so launch-bound is a candidate to profile, not the verdict (round 41)
    assert p.bottleneck == Bottleneck.UNKNOWN
    assert any(r.startswith("launch-bound:") and "small model (~124M" in r for r in p.bottleneck_reasons)


def test_reading_from_object_storage_is_not_compute_bound():
    files = dict(NANOGPT, **{"train.py": NANOGPT["train.py"].replace("data_dir = os.path.join('data', dataset)", "data_dir = 's3://corpus-bucket/owt'")})
    assert audit(files).project.bottleneck != Bottleneck.COMPUTE


# torchtune's PPO config: the reward/value model is built from dimensions in the YAML, and the library passes
# ``dim=embed_dim`` to RoPE and ``hidden_dim=intermediate_dim`` to the MLP. Neither makes 14,336 a hidden size.
TORCHTUNE_PPO = {
    "recipes/configs/mistral/7B_full_ppo_low_memory.yaml": '''policy_model:
  _component_: torchtune.models.mistral.mistral_7b
reward_and_value_model:
  _component_: torchtune.models.mistral._component_builders.mistral_classifier
  attn_dropout: 0.0
  embed_dim: 4096
  intermediate_dim: 14336
  max_seq_len: 32768
  num_heads: 32
  num_kv_heads: 8
  num_layers: 32
  vocab_size: 32001
dtype: bf16
''',
    "torchtune/models/mistral/_component_builders.py": '''from torchtune.modules import RotaryPositionalEmbeddings, FeedForward


def mistral_classifier(num_classes, *, vocab_size, num_layers, num_heads, num_kv_heads, embed_dim, intermediate_dim, max_seq_len):
    head_dim = embed_dim // num_heads
    rope = RotaryPositionalEmbeddings(dim=embed_dim, max_seq_len=max_seq_len)
    mlp = FeedForward(hidden_dim=intermediate_dim, dim=embed_dim)
    return rope, mlp
''',
    "recipes/ppo_full_finetune_single_device.py": '''from torch.utils.data import DataLoader


class PPOFullFinetuneRecipeSingleDevice:
    def _setup_data(self, ds, batch_size):
        return DataLoader(dataset=ds, batch_size=batch_size, drop_last=True)

    def train(self):
        for batch in self._dataloader:
            loss = self._ppo_step(batch)
            loss.backward()
''',
}


def test_a_resolved_keyword_is_not_a_hidden_size():
    p = audit(TORCHTUNE_PPO).project
    assert p.params_billions is None or p.params_billions < 10, p.notes  # was ~80B: 14,336 read as the hidden size
    assert not any("80B" in r or "large dense model" in r for r in p.bottleneck_reasons)


# OLMo's shape: the model config class has GPT-2 small defaults; the trained sizes live in run configs not shipped.
OLMO = {
    "olmo/config.py": '''from dataclasses import dataclass


@dataclass
class ModelConfig:
    d_model: int = 768
    n_heads: int = 12
    n_layers: int = 12
    vocab_size: int = 50257
    embedding_size: int = 50304
''',
    "olmo/train.py": '''class Trainer:
    def train_step(self, batch):
        loss = self.model_forward(batch)
        loss.backward()
        self.optim.step()
''',
}


def test_a_config_class_default_is_not_the_model_size():
    p = audit(OLMO).project
    assert p.estimated_params is None
    assert not any("small model" in r for r in p.bottleneck_reasons)
    assert p.bottleneck != Bottleneck.LAUNCH


# A file of presets (litgpt's config table, torchtune's model builders) names many models, not the trained one.
def test_a_table_of_presets_is_not_a_size():
    presets = "configs = [\n" + "".join(
        f"    dict(name='m{i}', n_embd={h}, n_layer={n}, vocab_size=50304),\n" for i, (h, n) in enumerate([(768, 12), (2048, 24), (8192, 80)])
    ) + "]\n"
    p = audit({"pkg/config.py": presets, "pkg/train.py": "loss = model(x)\nloss.backward()\n"}).project
    assert p.estimated_params is None


# Two entry points that train different small models (modded-nanogpt's train_gpt.py / train_gpt_medium.py): the range.
def test_entry_points_of_different_sizes_give_a_range():
    def script(h: int, n: int) -> str:
        return (f"model = GPT(vocab_size=50257, num_layers={n}, num_heads=6, model_dim={h})\n"
                "x = torch.cat([a, b], dim=1)\nloss = model(x)\nloss.backward()\n")
    p = audit({"train_gpt.py": script(768, 11), "train_gpt_medium.py": script(1024, 16)}).project
    assert p.estimated_params is None
    lo, hi = p.notes["params_range"].split("-")
    assert lo.endswith("M") and hi.endswith("M")
    assert sorted(p.notes["params_range_sources"]) == ["train_gpt.py:1", "train_gpt_medium.py:1"]  # the model_dim, not dim=1


# llm-foundry's shape: an eval command builds a Trainer too; the training step is the train command.
def test_the_training_step_is_not_an_eval_command():
    files = {
        "llmfoundry/command_utils/eval.py": "from composer import Trainer\n\ndef evaluate_model(cfg):\n    trainer = Trainer(model=m, eval_dataloader=d)\n    trainer.eval()\n",
        "llmfoundry/command_utils/train.py": "from composer import Trainer\n\ndef train(cfg):\n    trainer = Trainer(model=m, train_dataloader=d)\n    trainer.fit()\n",
    }
    reasons = audit(files).project.bottleneck_reasons
    site = [r for r in reasons if "training step at" in r]
    assert site and all("eval.py" not in r for r in site) and "train.py:" in site[0]


# TRL's shape: the reference-model pre-pass inside get_train_dataloader and an embedding sampler are not the
# training loader; the training loader of the same project is.
def test_a_reference_precompute_loader_is_not_the_training_loader():
    files = {
        "trl/trainer/dpo_trainer.py": '''from torch.utils.data import DataLoader


class DPOTrainer(Trainer):
    def _get_sample_prompt_embeddings(self, dataset):
        dataloader_params = {
            "batch_size": 8,
            "num_workers": 0,
        }
        return DataLoader(dataset, **dataloader_params)

    def get_train_dataloader(self):
        if self.precompute_ref_log_probs:
            dataloader_params = {
                "batch_size": 8,
                "num_workers": 0,
            }
            loader = DataLoader(self.train_dataset, **dataloader_params)
        return super().get_train_dataloader()

    def training_step(self, model, inputs):
        loss = self.compute_loss(model, inputs)
        loss.backward()
''',
    }
    reasons = audit(files).project.bottleneck_reasons
    assert not any("dpo_trainer.py:7" in r or "dpo_trainer.py:14" in r for r in reasons), reasons


def test_a_replay_buffer_loader_reads_no_files():
    files = {"trainer/ppo_actor.py": '''from torch.utils.data import DataLoader


class ActorTrainer:
    def ppo_train(self):
        dataloader = DataLoader(
            self.replay_buffer,
            batch_size=4,
        )
        for experience in dataloader:
            loss = self.training_step(experience)
            loss.backward()
'''}
    assert not any("num_workers = 0" in r for r in audit(files).project.bottleneck_reasons)


# Multimodal: the reason needs an image call that runs per batch on the training path.
_VLM_TRAIN = '''from transformers import AutoProcessor, LlavaForConditionalGeneration, Trainer
model = LlavaForConditionalGeneration.from_pretrained("llava-hf/llava-1.5-7b-hf")
processor = AutoProcessor.from_pretrained("llava-hf/llava-1.5-7b-hf")
'''


def test_multimodal_without_per_batch_image_work_gives_no_image_reason():
    files = {"train.py": _VLM_TRAIN + "trainer = Trainer(model=model, train_dataset=ds)\ntrainer.train()\n"}
    p = audit(files).project
    assert p.multimodal
    assert not any("image" in r for r in p.bottleneck_reasons)


def test_images_processed_in_the_collator_are_cited():
    files = {"train.py": _VLM_TRAIN + '''

def collate_fn(examples):
    texts = [e["text"] for e in examples]
    images = [e["images"] for e in examples]
    return processor(text=texts, images=images, return_tensors="pt", padding=True)


trainer = Trainer(model=model, train_dataset=ds, data_collator=collate_fn)
trainer.train()
'''}
    reasons = audit(files).project.bottleneck_reasons
    assert any("images are decoded or processed per batch" in r and "train.py:9" in r for r in reasons), reasons


# modded-nanogpt's shape: the synchronisations sit in the validation branch, taken every N steps, not every step.
def test_a_sync_in_a_periodic_branch_is_not_a_per_step_stall():
    files = {"train_gpt.py": '''import torch
for step in range(train_steps + 1):
    last_step = (step == train_steps)
    if last_step or (val_loss_every > 0 and step % val_loss_every == 0):
        torch.cuda.synchronize()
        val_loss = model(x).item()
    loss = model(x)
    loss.backward()
'''}
    assert not any("synchronisation" in r for r in audit(files).project.bottleneck_reasons)


# litgpt's shape: config.py lists every supported model; Gemma's 256,000-token vocabulary is one row of the table.
def test_the_largest_vocabulary_of_a_preset_table_is_not_the_trained_one():
    table = "configs = [\n" + "".join(f"    dict(name='m{i}', vocab_size={v}, padded_vocab_size={v}),\n"
                                     for i, v in enumerate((32000, 50254, 256000))) + "]\n"
    files = {"litgpt/config.py": table, "litgpt/pretrain.py": "from litgpt.config import configs\n\ndef fit():\n    for batch in loader:\n        loss = model(batch)\n        loss.backward()\n"}
    assert not any("256,000-token" in r for r in audit(files).project.bottleneck_reasons)


# open_clip's shape: one JSON per model preset; the multilingual ones (a 250k-token vocabulary) are a few of many.
def test_a_large_vocabulary_in_a_minority_of_model_configs_is_a_preset():
    def cfg(vocab: int) -> str:
        return '{\n  "embed_dim": 768,\n  "text_cfg": {\n    "vocab_size": ' + str(vocab) + ',\n    "width": 768\n  }\n}\n'

    train = {"src/open_clip_train/main.py": "def main(args):\n    for batch in loader:\n        loss = model(batch)\n        loss.backward()\n"}
    minority = {**train, **{f"src/open_clip/model_configs/ViT-B-{i}.json": cfg(49408) for i in range(5)},
                "src/open_clip/model_configs/ViT-B-16-SigLIP-i18n-256.json": cfg(250000)}
    assert not any("250,000-token" in r for r in audit(minority).project.bottleneck_reasons)
    majority = {**train, **{f"src/open_clip/model_configs/ViT-B-{i}.json": cfg(250000) for i in range(5)}}
    assert any("250,000-token" in r for r in audit(majority).project.bottleneck_reasons)


# A sync after the training loop (summing token counts once) or in another loop is not paid every step.
def test_a_sync_outside_the_step_loop_is_not_counted():
    files = {"finetune.py": '''def fit(model, loader):
    for batch in loader:
        loss = model(batch)
        loss.backward()
    for key in token_counts:
        total_token_counts[key] = token_counts[key].item()
'''}
    assert not any("synchronisation" in r for r in audit(files).project.bottleneck_reasons)
    files = {"finetune.py": '''def fit(model, loader):
    for batch in loader:
        loss = model(batch)
        loss.backward()
        losses.append(loss.item())
        print(loss.cpu())
        metrics.append(acc.item())
'''}
    assert any("3 CPU-GPU synchronisation point(s)" in r and "finetune.py:5" in r for r in audit(files).project.bottleneck_reasons)


# axolotl's shape: the training loader sits under ``if self.args.sample_packing``; a bench loader next to it is not it.
def test_the_training_loader_under_a_sample_packing_branch_is_cited_and_the_bench_loader_is_not():
    files = {"src/axolotl/core/trainer_builder.py": '''from torch.utils.data import DataLoader


class AxolotlTrainer(Trainer):
    def get_train_dataloader(self):
        if self.args.sample_packing and not self.args.pretraining:
            train_dataset = self.train_dataset.remove_columns(["length"])
            dataloader_params = {
                "batch_size": self._train_batch_size,
                "num_workers": 0,
            }
            return DataLoader(train_dataset, **dataloader_params)
        return super().get_train_dataloader()

    def get_bench_dataloader(self, bench_dataset):
        dataloader_params = {
            "batch_size": 4,
            "num_workers": 0,
        }
        return DataLoader(bench_dataset, **dataloader_params)

    def training_step(self, model, inputs):
        loss = self.compute_loss(model, inputs)
        loss.backward()
'''}
    reasons = audit(files).project.bottleneck_reasons
    cited = [r for r in reasons if "num_workers = 0" in r]
    assert cited and "trainer_builder.py:10" in cited[0] and "(+1)" not in cited[0], reasons


# llm-foundry / axolotl: an HF config class's __init__ defaults, built from a run config (``MPTConfig(**cfg)``) or
# from another config's dimensions (``MambaConfig(d_model=config.d_model)``), are not the trained model.
def test_config_class_defaults_filled_from_elsewhere_are_not_the_model():
    config_cls = '''from transformers import PretrainedConfig


class MPTConfig(PretrainedConfig):
    def __init__(self, d_model: int = 2048, n_layers: int = 24, vocab_size: int = 50368, **kwargs):
        self.d_model = d_model
        self.n_layers = n_layers
'''
    for call in ("cfg = MPTConfig(**model_cfg)", "cfg = MPTConfig(d_model=base.d_model, n_layers=base.n_layers)"):
        files = {"llmfoundry/models/mpt/configuration_mpt.py": config_cls,
                 "llmfoundry/train.py": f"from llmfoundry.models.mpt.configuration_mpt import MPTConfig\n{call}\nloss = model(x)\nloss.backward()\n"}
        assert audit(files).project.estimated_params is None, call


# torchtune's recipe configs name the size in their file name; the builder names (qwen2_5_1_5b) are ambiguous.
def test_torchtune_recipe_sizes_come_from_config_file_names():
    def cfg(builder: str) -> str:
        return f"model:\n  _component_: torchtune.models.{builder}\n  lora_rank: 8\ndtype: bf16\n"
    files = {
        "recipes/configs/llama3_1/8B_lora.yaml": cfg("llama3_1.lora_llama3_1_8b"),
        "recipes/configs/llama3_1/8B_full.yaml": cfg("llama3_1.llama3_1_8b"),
        "recipes/configs/qwen2_5/1_5B_lora.yaml": cfg("qwen2_5.lora_qwen2_5_1_5b_instruct"),
        "recipes/lora_finetune_single_device.py": "def train(self):\n    for batch in self._dataloader:\n        loss = self._loss_step(batch)\n        loss.backward()\n",
    }
    p = audit(files).project
    assert p.estimated_params == "8B"  # two of three configs
    assert p.notes["params_distribution"] == {"8B": 2, "1.5B": 1}


def test_an_attention_block_size_is_not_the_sequence_length():
    files = {"train_gpt.py": '''from dataclasses import dataclass


@dataclass
class Hyperparameters:
    val_loss_every: int = 250
    # attention masking
    block_size: int = 128


args = Hyperparameters()
model = GPT(vocab_size=50257, num_layers=11, num_heads=6, model_dim=768, max_seq_len=args.val_batch_size // 8)
loss = model(x)
loss.backward()
'''}
    assert audit(files).project.max_seq_len is None
