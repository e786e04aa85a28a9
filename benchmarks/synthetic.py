"""A deterministic synthetic training repository (about 3,000 Python files and 500 configs, ~40 MB).

``scan_bench.py`` measures real code now (``benchmarks/corpus.py``); this generator stays for the
benchmarks that need a repository they can commit and edit (``precommit_bench.py``, ``fix_bench.py``).
"""

from __future__ import annotations

import random
from pathlib import Path

MODEL = '''"""{doc}"""

import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class {cls}Config:
    hidden_size: int = {hidden}
    num_hidden_layers: int = {layers}
    num_attention_heads: int = {heads}
    intermediate_size: int = {ffn}
    vocab_size: int = {vocab}
    max_position_embeddings: int = {seq}
    rms_norm_eps: float = 1e-6
    dropout: float = {dropout}
    tie_word_embeddings: bool = {tie}
    extra: dict = field(default_factory=dict)


class {cls}RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).type_as(x) * self.weight


class {cls}Attention(nn.Module):
    def __init__(self, config: {cls}Config, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.v_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states, attention_mask=None, position_ids=None):
        bsz, q_len, _ = hidden_states.size()
        q = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        {attn}
        out = out.transpose(1, 2).contiguous().view(bsz, q_len, -1)
        return self.o_proj(out)


class {cls}MLP(nn.Module):
    def __init__(self, config: {cls}Config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class {cls}Layer(nn.Module):
    def __init__(self, config: {cls}Config, layer_idx: int):
        super().__init__()
        self.self_attn = {cls}Attention(config, layer_idx)
        self.mlp = {cls}MLP(config)
        self.input_layernorm = {cls}RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = {cls}RMSNorm(config.hidden_size, eps=config.rms_norm_eps)

    def forward(self, hidden_states, attention_mask=None, position_ids=None):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states), attention_mask, position_ids)
        hidden_states = residual + hidden_states
        residual = hidden_states
        return residual + self.mlp(self.post_attention_layernorm(hidden_states))


class {cls}Model(nn.Module):
    def __init__(self, config: {cls}Config):
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([{cls}Layer(config, i) for i in range(config.num_hidden_layers)])
        self.norm = {cls}RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.gradient_checkpointing = {gc}
        self.apply(self._init_weights)

    def _init_weights(self, module):
        std = 0.02 / math.sqrt(2 * self.config.num_hidden_layers)
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=std)
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=std)

    def forward(self, input_ids, labels=None, attention_mask=None):
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(layer, hidden_states, attention_mask, use_reentrant=False)
            else:
                hidden_states = layer(hidden_states, attention_mask)
        logits = self.lm_head(self.norm(hidden_states)).float()
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1), ignore_index=-100)
        return logits, loss
'''

TRAIN = '''"""{doc}"""

import argparse
import logging
import os
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from .modeling_{mod} import {cls}Config, {cls}Model

logger = logging.getLogger(__name__)
NUM_WORKERS = {workers}
LOG_EVERY = {log_every}


def get_args():
    parser = argparse.ArgumentParser(description="{doc}")
    parser.add_argument("--data_path", type=str, default="{data}")
    parser.add_argument("--output_dir", type=str, default="outputs/{mod}")
    parser.add_argument("--batch_size", type=int, default={bs})
    parser.add_argument("--grad_accum", type=int, default={accum})
    parser.add_argument("--lr", type=float, default={lr})
    parser.add_argument("--warmup_steps", type=int, default={warmup})
    parser.add_argument("--max_steps", type=int, default={steps})
    parser.add_argument("--save_every", type=int, default={save_every})
    parser.add_argument("--{flag}", action="store_true", help="enable {flag}")
    parser.add_argument("--seed", type=int, default={seed})
    return parser.parse_args()


class {cls}Dataset(Dataset):
    def __init__(self, path, seq_len={seq}):
        with open(path) as fh:
            self.rows = [json.loads(line) for line in fh]
        self.seq_len = seq_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        ids = self.rows[idx]["input_ids"][: self.seq_len]
        ids = ids + [0] * (self.seq_len - len(ids))
        x = torch.tensor(ids, dtype=torch.long)
        return {{"input_ids": x, "labels": x.clone()}}


def build_loader(args, rank, world_size):
    ds = {cls}Dataset(args.data_path)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True, seed=args.seed)
    return DataLoader(ds, batch_size=args.batch_size, sampler=sampler, num_workers=NUM_WORKERS, pin_memory={pin}, drop_last=True)


def lr_at(step, args):
    if step < args.warmup_steps:
        return args.lr * (step + 1) / args.warmup_steps
    return args.lr * max(0.0, 1.0 - (step - args.warmup_steps) / max(1, args.max_steps - args.warmup_steps))


def main():
    args = get_args()
    dist.init_process_group(backend="nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    config = {cls}Config(hidden_size={hidden}, num_hidden_layers={layers}, num_attention_heads={heads})
    model = {cls}Model(config).cuda()
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    loader = build_loader(args, rank, world_size)
    step, t0 = 0, time.time()
    for epoch in range(1000):
        loader.sampler.set_epoch(epoch)
        for i, batch in enumerate(loader):
            batch = {{k: v.cuda(non_blocking=True) for k, v in batch.items()}}
            with torch.autocast("cuda", dtype=torch.{dtype}):
                _, loss = model(**batch)
            (loss / args.grad_accum).backward()
            if (i + 1) % args.grad_accum:
                continue
            for group in optimizer.param_groups:
                group["lr"] = lr_at(step, args)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % LOG_EVERY == 0 and rank == 0:
                logger.info("step %d loss %.4f %.1f ms/step", step, loss.item(), (time.time() - t0) * 1000 / LOG_EVERY)
                t0 = time.time()
            if step % args.save_every == 0 and rank == 0:
                torch.save({{"model": model.module.state_dict(), "step": step}}, os.path.join(args.output_dir, f"step_{{step}}.pt"))
            if step >= args.max_steps:
                return


if __name__ == "__main__":
    main()
'''

UTIL = '''"""{doc}"""

import os
import re

import numpy as np
import torch

DEFAULTS = {{
    "{mod}": {{"lr": {lr}, "batch_size": {bs}, "warmup": {warmup}, "workers": {workers}}},
    "optimizer": {{"type": "AdamW", "params": {{"lr": {lr}, "betas": [0.9, 0.95], "eps": 1e-8}}}},
    "scheduler": {{"type": "cosine", "warmup_steps": {warmup}}},
}}


def {fn}(tokens, block_size={seq}, pad_id=0):
    """Split a token stream into blocks of ``block_size``; pad the last one."""
    out = []
    for start in range(0, len(tokens), block_size):
        chunk = tokens[start : start + block_size]
        if len(chunk) < block_size:
            chunk = chunk + [pad_id] * (block_size - len(chunk))
        out.append(chunk)
    return np.asarray(out, dtype=np.int32)


def count_parameters(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def latest_checkpoint(path: str):
    steps = [int(m.group(1)) for f in os.listdir(path) if (m := re.match(r"step_(\\d+)\\.pt$", f))]
    return os.path.join(path, f"step_{{max(steps)}}.pt") if steps else None
'''

DS = """{{
  "train_micro_batch_size_per_gpu": {bs},
  "gradient_accumulation_steps": {accum},
  "gradient_clipping": 1.0,
  "bf16": {{"enabled": {bf16}}},
  "zero_optimization": {{
    "stage": {stage},
    "overlap_comm": {overlap},
    "contiguous_gradients": true,
    "reduce_bucket_size": {bucket},
    "offload_optimizer": {{"device": "{offload}", "pin_memory": true}}
  }},
  "optimizer": {{"type": "AdamW", "params": {{"lr": {lr}, "betas": [0.9, 0.95], "weight_decay": 0.1}}}},
  "scheduler": {{"type": "WarmupDecayLR", "params": {{"warmup_num_steps": {warmup}, "total_num_steps": {steps}}}}},
  "steps_per_print": {log_every},
  "wall_clock_breakdown": false
}}
"""

YAML = """# {doc}
model_name_or_path: {model}
stage: sft
do_train: true
finetuning_type: {ft}
lora_rank: {rank}
lora_target: all
dataset: {mod}_data
template: default
cutoff_len: {seq}
preprocessing_num_workers: {workers}
output_dir: saves/{mod}
logging_steps: {log_every}
save_steps: {save_every}
per_device_train_batch_size: {bs}
gradient_accumulation_steps: {accum}
learning_rate: {lr}
num_train_epochs: 3.0
lr_scheduler_type: cosine
warmup_ratio: 0.03
bf16: {bf16}
flash_attn: {fa}
dataloader_num_workers: {workers}
experiments:
""" + "".join(f"  - name: run{i}\n    lr: {{lr}}\n    seed: {i}\n    notes: \"sweep point {i} for {{mod}}\"\n" for i in range(20))

SH = """#!/bin/bash
# {doc}
set -euo pipefail
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE={ib}
MODEL=${{MODEL:-{model}}}
OUT=outputs/{mod}

torchrun --nproc_per_node={gpus} --master_port={port} train_{mod}.py \\
    --model_name_or_path $MODEL \\
    --output_dir $OUT \\
    --bf16 {bf16} \\
    --per_device_train_batch_size {bs} \\
    --gradient_accumulation_steps {accum} \\
    --learning_rate {lr} \\
    --warmup_ratio 0.03 \\
    --lr_scheduler_type cosine \\
    --logging_steps {log_every} \\
    --save_steps {save_every} \\
    --dataloader_num_workers {workers} \\
    --deepspeed configs/ds_{mod}.json
"""

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "lumen", "vega", "orion", "nova", "atlas", "zephyr", "kite", "ember"]


def _params(rng: random.Random, i: int) -> dict:
    w = rng.choice(WORDS)
    heads = rng.choice([8, 12, 16, 32, 40])
    return {
        "doc": f"{w.title()} model and training utilities, variant {i} (generated for the benchmark).",
        "cls": f"{w.title()}{i}", "mod": f"{w}_{i}", "fn": f"chunk_{w}_{i}",
        "hidden": heads * rng.choice([64, 128]), "layers": rng.choice([12, 24, 32, 40]), "heads": heads,
        "ffn": rng.choice([5504, 11008, 13824, 14336]), "vocab": rng.choice([32000, 50257, 151936, 128256]),
        "seq": rng.choice([1024, 2048, 4096]), "dropout": rng.choice([0.0, 0.1]), "tie": rng.choice([True, False]),
        "gc": rng.choice([True, False]), "workers": rng.choice([0, 2, 4, 8]), "log_every": rng.choice([1, 10, 50, 100]),
        "data": rng.choice(["/mnt/nvme/data/train.jsonl", "data/train.jsonl", "s3://bucket/tokens/train.jsonl", "/mnt/cfs/corpus.jsonl"]),
        "bs": rng.choice([1, 2, 4, 8, 16]), "accum": rng.choice([1, 2, 4, 8]), "lr": rng.choice([1e-4, 2e-5, 3e-4, 5e-6]),
        "warmup": rng.choice([0, 100, 2000]), "steps": rng.choice([10000, 100000]), "save_every": rng.choice([1, 500, 1000, 5000]),
        "flag": rng.choice(["compile", "cpu_offload", "use_flash_attn", "packing"]), "seed": rng.randrange(10_000),
        "pin": rng.choice([True, False]), "dtype": rng.choice(["bfloat16", "float16"]),
        "attn": rng.choice([
            "out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask, is_causal=attention_mask is None)",
            "att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)\n        out = F.softmax(att, dim=-1) @ v",
        ]),
        "bf16": rng.choice(["true", "false"]), "stage": rng.choice([1, 2, 3]), "overlap": rng.choice(["true", "false"]),
        "bucket": rng.choice([5e8, 2e8]), "offload": rng.choice(["cpu", "none"]),
        "model": rng.choice(["meta-llama/Llama-2-7b-hf", "Qwen/Qwen2-1.5B", "mistralai/Mistral-7B-v0.1"]),
        "ft": rng.choice(["lora", "full"]), "rank": rng.choice([8, 16, 64]), "fa": rng.choice(["fa2", "auto", "disabled"]),
        "gpus": rng.choice([1, 4, 8]), "port": 29500 + i % 100, "ib": rng.choice([0, 1]),
    }


def generate(root: Path, py_files: int, configs: int, seed: int) -> tuple[int, int]:
    """Write the synthetic repository; returns (files, bytes)."""
    rng = random.Random(seed)
    n_files = n_bytes = 0

    def write(rel: str, text: str) -> None:
        nonlocal n_files, n_bytes
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode()
        p.write_bytes(data)
        n_files += 1
        n_bytes += len(data)

    for i in range(py_files):
        p = _params(rng, i)
        pkg = f"src/pkg_{i % 40}"
        kind = i % 3
        if kind == 0:
            write(f"{pkg}/modeling_{p['mod']}.py", MODEL.format(**p) * 3)
        elif kind == 1:
            write(f"{pkg}/train_{p['mod']}.py", TRAIN.format(**p) * 3)
        else:
            write(f"{pkg}/utils_{p['mod']}.py", UTIL.format(**p) * 10)
    for i in range(configs):
        p = _params(rng, i)
        kind = i % 3
        if kind == 0:
            write(f"configs/ds_{p['mod']}.json", DS.format(**p))
        elif kind == 1:
            write(f"configs/sft/{p['mod']}.yaml", YAML.format(**p))
        else:
            write(f"scripts/run_{p['mod']}.sh", SH.format(**p))
    write("requirements.txt", "torch>=2.2\ntransformers>=4.40\ndeepspeed>=0.14\nflash-attn>=2.5\naccelerate\npeft\n")
    return n_files, n_bytes

