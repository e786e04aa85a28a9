"""How a value that a check measured gets worse or better, and what that costs.

Each rule judges one canonical value name of ``Outcome.values`` (``save_steps``,
``precision``, ``zero_stage`` ...) between base and head, and says why the change
costs, with numbers where the inputs allow it. Values are effective settings, so a
setting that only moved between files compares equal and produces no verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checks.facts import as_number, truthy

__all__ = ["ALIASES", "RULES", "Env", "Verdict", "fmt", "norm_attention", "norm_precision"]


@dataclass(frozen=True, slots=True)
class Env:
    """What the head project tells the quantification (all optional)."""

    params_b: float | None = None  # model size in billions of parameters
    gpus: int | None = None  # world size (GPUs per node x nodes)
    seq: int | None = None  # max sequence length
    multi_node: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    direction: int  # -1 worse, +1 better
    what: str
    why: str
    what_zh: str
    why_zh: str


Judge = Callable[[str, Any, Any, Env], "Verdict | None"]


def fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "unset"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (list, tuple, set, frozenset)):
        return ", ".join(fmt(x) for x in sorted(v, key=str)) or "none"
    return str(v)


def _x(r: float) -> str:
    """A ratio as people say it: 500x, 2.5x."""
    return f"{r:.0f}×" if r >= 10 or float(r).is_integer() else f"{r:.1f}×"


def _gb(x: float) -> str:
    return f"{x:.0f} GB" if x >= 10 else f"{x:.1f} GB"


# -- intervals: checkpoint, logging, evaluation ---------------------------------------------


def _interval(noun: str, noun_zh: str, extra: Callable[[float, float, Env], tuple[str, str]] | None = None) -> Judge:
    def judge(name: str, before: Any, after: Any, env: Env) -> Verdict | None:
        a, b = as_number(before), as_number(after)
        if a is None or b is None or a <= 0 or b <= 0 or a == b or (a < 1) != (b < 1):
            return None  # unknown, or a ratio of the run on one side and a step count on the other
        what = f"`{name}` {fmt(a)} → {fmt(b)}"
        if b < a:
            r = a / b
            why = f"{_x(r)} more {noun}" + (" (one after every optimizer step)" if b == 1 else "")
            why_zh = f"{noun_zh}次数增加 {_x(r)}" + ("（每个优化步都触发一次）" if b == 1 else "")
            if extra:
                e, ez = extra(a, b, env)
                why, why_zh = why + e, why_zh + ez
            return Verdict(-1, what, why + ".", what, why_zh + "。")
        r = b / a
        return Verdict(1, what, f"{_x(r)} fewer {noun}.", what, f"{noun_zh}次数减少到 1/{_x(r)[:-1]}。")

    return judge


def _ckpt_extra(a: float, b: float, env: Env) -> tuple[str, str]:
    en = ": every save stops training while weights and optimizer state are written"
    zh = "：每次保存都会阻塞训练，写出权重和优化器状态"
    if env.params_b:
        size = 14 * env.params_b  # bf16 weights + fp32 master copy + Adam m and v: 2 + 4 + 8 bytes per parameter
        en += f" (about {_gb(size)} per full checkpoint with Adam state for {env.params_b:g}B parameters)"
        zh += f"（{env.params_b:g}B 模型含 Adam 状态的完整检查点约 {_gb(size)}）"
    return en, zh


def _log_extra(a: float, b: float, env: Env) -> tuple[str, str]:
    return (
        ": each logging step synchronises the GPU with the host (`loss.item()`) and writes to the trackers",
        "：每次日志都会让 GPU 与主机同步（`loss.item()`）并写入日志后端",
    )


def _eval_extra(a: float, b: float, env: Env) -> tuple[str, str]:
    return (": each evaluation pauses training for a full pass over the evaluation set", "：每次评估都要暂停训练并完整跑一遍验证集")


# -- counts: loader workers, prefetch --------------------------------------------------------


def _workers(name: str, before: Any, after: Any, env: Env) -> Verdict | None:
    a, b = as_number(before), as_number(after)
    if a is None or b is None or a == b or a < 0 or b < 0:
        return None
    what = f"`{name}` {fmt(a)} → {fmt(b)}"
    if b < a:
        if b == 0:
            why = ("data loading and collation now run in the training process between steps: the GPU idles while every batch "
                   "is read, decoded and collated (a data-I/O bound step)")
            why_zh = "数据读取与 collate 改在训练进程内串行执行：每个 batch 准备期间 GPU 空等（数据 I/O 瓶颈）"
        else:
            why = f"{_x(a / b)} fewer loader processes prepare batches in parallel; the GPU waits when they cannot keep up"
            why_zh = f"并行准备数据的加载进程减少 {_x(a / b)}，跟不上时 GPU 会等待数据"
        return Verdict(-1, what, why + ".", what, why_zh + "。")
    why = "batches are prepared in background worker processes while the GPU computes" if a == 0 else f"{_x(b / a)} more loader processes"
    why_zh = "数据在后台 worker 进程中准备，与 GPU 计算重叠" if a == 0 else f"数据加载进程增加 {_x(b / a)}"
    return Verdict(1, what, why + ".", what, why_zh + "。")


def _prefetch(name: str, before: Any, after: Any, env: Env) -> Verdict | None:
    a, b = as_number(before), as_number(after)
    if a is None or b is None or a == b:
        return None
    what = f"`{name}` {fmt(a)} → {fmt(b)}"
    if b < a:
        if b == 0:
            return Verdict(-1, what, f"no batch is prepared ahead any more (was {fmt(a)} per worker): the GPU waits for every batch to be loaded.",
                           what, f"不再预取任何 batch（原为每个 worker {fmt(a)} 个）：GPU 要等每个 batch 加载完成。")
        return Verdict(-1, what, f"each worker keeps {fmt(b)} batch(es) ready instead of {fmt(a)}: less slack to absorb slow reads.",
                       what, f"每个 worker 预取的 batch 从 {fmt(a)} 个减为 {fmt(b)} 个：吸收读取抖动的余量变小。")
    return Verdict(1, what, f"each worker keeps {fmt(b)} batches ready instead of {fmt(a)}.", what, f"每个 worker 预取 {fmt(b)} 个 batch（原为 {fmt(a)}）。")


# -- precision -------------------------------------------------------------------------------

_PRECISION_RANK = {"fp32": 0, "tf32": 1, "fp16": 2, "bf16": 2, "fp8": 3}


def norm_precision(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v).strip().lower().replace("torch.", "")
    if not s:
        return None
    if "fp8" in s or "float8" in s or ("transformer-engine" in s and "16" not in s):
        return "fp8"
    if "bf16" in s or "bfloat16" in s:
        return "bf16"
    if "fp16" in s or "float16" in s or s in {"16", "16-mixed", "16-true", "half"}:
        return "fp16"
    if "tf32" in s:
        return "tf32"
    if s in {"fp32", "float32", "32", "32-true", "no", "none", "float", "full", "false"}:
        return "fp32"
    return None


def _precision(name: str, before: Any, after: Any, env: Env) -> Verdict | None:
    a, b = norm_precision(before), norm_precision(after)
    if a is None or b is None or _PRECISION_RANK[a] == _PRECISION_RANK[b]:
        return None
    what = f"`{name}` {a} → {b}"
    if _PRECISION_RANK[b] < _PRECISION_RANK[a]:
        if a == "fp8":
            why = "FP8 Tensor Core throughput is lost (H100 SXM: 1,979 FP8 vs 989 BF16 dense TFLOPS)"
            why_zh = "失去 FP8 Tensor Core 吞吐（H100 SXM：FP8 1979 对 BF16 989 dense TFLOPS）"
        else:
            why = (f"{a.upper()} removed: about 2× activation memory and slower matmuls (A100: 312 BF16/FP16 vs 19.5 FP32 "
                   "or 156 TF32 dense TFLOPS; mixed precision typically trains 1.5-3× faster)")
            why_zh = (f"去掉了 {a.upper()}：激活显存约翻倍，矩阵乘更慢（A100：BF16/FP16 312 对 FP32 19.5、TF32 156 dense TFLOPS；"
                      "混合精度通常带来 1.5-3 倍加速）")
        return Verdict(-1, what, why + ".", what, why_zh + "。")
    return Verdict(1, what, f"{b.upper()} Tensor Core matmuls and smaller activations.", what, f"启用 {b.upper()}：Tensor Core 矩阵乘、激活显存更小。")


# -- attention -------------------------------------------------------------------------------

_ATTN_RANK = {"eager": 0, "sdpa": 2, "flex_attention": 2, "flash_attention_2": 3, "flash_attention_3": 4}


def norm_attention(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "flash_attention_2" if v else None  # use_flash_attention_2 / flash_attn flags
    s = str(v).strip().lower()
    if "flash_attention_3" in s or s in {"fa3", "flash3"}:
        return "flash_attention_3"
    if "flash" in s or s in {"fa2", "fa"}:
        return "flash_attention_2"
    if "flex" in s:
        return "flex_attention"
    if "transformer-engine" in s or "transformer_engine" in s:
        return "flash_attention_2"  # TransformerEngine's fused attention runs flash/cuDNN kernels
    if "sdpa" in s or "scaled_dot_product" in s or s in {"xformers", "mem_efficient", "memory_efficient", "default", "auto"}:
        return "sdpa"
    if s in {"eager", "math", "vanilla", "none", "standard", "naive", "false"}:
        return "eager"
    return None


def _attention(name: str, before: Any, after: Any, env: Env) -> Verdict | None:
    a, b = norm_attention(before), norm_attention(after)
    if a is None or b is None or _ATTN_RANK[a] == _ATTN_RANK[b]:
        return None
    what = f"`{name}` {a} → {b}"
    if _ATTN_RANK[b] < _ATTN_RANK[a]:
        if b == "eager":
            why = "eager attention materialises the full seq×seq score matrix: O(n²) activation memory and extra HBM traffic"
            why_zh = "eager 注意力会显式构造 seq×seq 的分数矩阵：激活显存 O(n²)，显存带宽开销大"
            if env.seq:
                mib = env.seq * env.seq * 2 / (1 << 20)
                why += f" ({env.seq}² × 2 bytes ≈ {mib:,.0f} MiB per head, per layer, per sequence)"
                why_zh += f"（{env.seq}² × 2 字节 ≈ 每个头、每层、每条序列 {mib:,.0f} MiB）"
            why += "; FlashAttention-2 runs attention 2-4× faster than a standard implementation (Dao, 2023)"
            why_zh += "；FlashAttention-2 的注意力速度是标准实现的 2-4 倍（Dao, 2023）"
        else:
            why = (f"{b} is slower than {a}: SDPA falls back to its memory-efficient or math kernel with padding masks, "
                   "and loses FlashAttention's variable-length (packed) path")
            why_zh = f"{b} 比 {a} 慢：SDPA 在有 padding mask 时会回退到 memory-efficient 或 math 内核，且无 FlashAttention 的变长（packing）路径"
        return Verdict(-1, what, why + ".", what, why_zh + "。")
    return Verdict(1, what, f"fused attention kernel ({b}) instead of {a}.", what, f"使用融合注意力内核（{b}），替代 {a}。")


# -- on/off features -------------------------------------------------------------------------


def _offload_on(v: Any) -> bool | None:
    if isinstance(v, str) and v.strip().lower() in {"cpu", "nvme"}:
        return True
    return truthy(v)


def _flag(off_en: str, off_zh: str, on_en: str, on_zh: str, norm: Callable[[Any], bool | None] = truthy,
          off_extra: Callable[[Env], tuple[str, str]] | None = None) -> Judge:
    def judge(name: str, before: Any, after: Any, env: Env) -> Verdict | None:
        a, b = norm(before), norm(after)
        if a is None or b is None or a == b:
            return None
        what = f"`{name}` {fmt(before)} → {fmt(after)}"
        if a and not b:
            en, zh = off_en, off_zh
            if off_extra:
                e, ez = off_extra(env)
                en, zh = en + e, zh + ez
            return Verdict(-1, what, en + ".", what, zh + "。")
        return Verdict(1, what, on_en + ".", what, on_zh + "。")

    return judge


def _offload_extra(env: Env) -> tuple[str, str]:
    if env.params_b and env.gpus:
        gb = 12 * env.params_b / env.gpus
        return (f" (about {_gb(gb)} of Adam state per GPU for {env.params_b:g}B parameters on {env.gpus} GPUs)",
                f"（{env.params_b:g}B 参数、{env.gpus} 张 GPU 时每卡约 {_gb(gb)} Adam 状态）")
    return "", ""


# -- ZeRO stage --------------------------------------------------------------------------------


def _zero_bytes(stage: int, n: int) -> float:
    """Model-state bytes per parameter and GPU with mixed-precision Adam (ZeRO paper, K = 12)."""
    return {0: 16.0, 1: 4 + 12 / n, 2: 2 + 14 / n, 3: 16 / n}[stage]


def _zero(name: str, before: Any, after: Any, env: Env) -> Verdict | None:
    a, b = as_number(before), as_number(after)
    if a is None or b is None or a == b or a not in (0, 1, 2, 3) or b not in (0, 1, 2, 3):
        return None
    a_i, b_i = int(a), int(b)
    what = f"`{name}` {a_i} → {b_i}"
    n = env.gpus or 8
    per_a, per_b = _zero_bytes(a_i, n), _zero_bytes(b_i, n)
    scale = f"{n} GPUs" if env.gpus else "8 GPUs (assumed)"
    if b_i < a_i:
        why = f"less is sharded: model states take {per_b:.1f} instead of {per_a:.1f} bytes per parameter on each GPU with {scale}"
        why_zh = f"分片变少：{scale} 时每卡模型状态由每参数 {per_a:.1f} 字节增至 {per_b:.1f} 字节"
        if env.params_b:
            why += f" ({_gb(per_a * env.params_b)} → {_gb(per_b * env.params_b)} for {env.params_b:g}B parameters)"
            why_zh += f"（{env.params_b:g}B 参数：{_gb(per_a * env.params_b)} → {_gb(per_b * env.params_b)}）"
        why += "; the batch or sequence length may no longer fit"
        why_zh += "；原来的 batch 或序列长度可能放不下"
        return Verdict(-1, what, why + ".", what, why_zh + "。")
    why = f"model states take {per_b:.1f} instead of {per_a:.1f} bytes per parameter on each GPU with {scale}"
    return Verdict(1, what, why + ".", what, f"{scale} 时每卡模型状态由每参数 {per_a:.1f} 字节降至 {per_b:.1f} 字节。")


RULES: dict[str, Judge] = {
    "save_steps": _interval("checkpoint writes", "检查点写入", _ckpt_extra),
    "save_interval": _interval("checkpoint writes", "检查点写入", _ckpt_extra),
    "checkpoint_interval": _interval("checkpoint writes", "检查点写入", _ckpt_extra),
    "logging_steps": _interval("logging events", "日志记录", _log_extra),
    "log_interval": _interval("logging events", "日志记录", _log_extra),
    "eval_steps": _interval("evaluation passes", "评估", _eval_extra),
    "num_workers": _workers,
    "dataloader_num_workers": _workers,
    "prefetch_factor": _prefetch,
    "precision": _precision,
    "attn_implementation": _attention,
    "torch_compile": _flag(
        "torch.compile switched off: no graph capture or kernel fusion; PyTorch 2.0 measured 1.3-1.5× faster training on A100 "
        "across its 163-model benchmark",
        "关闭了 torch.compile：失去图捕获与算子融合；PyTorch 2.0 在 A100 上 163 个模型的基准中训练提速约 1.3-1.5 倍",
        "torch.compile fuses kernels and cuts Python overhead", "torch.compile 融合算子、减少 Python 开销"),
    "gradient_checkpointing": _flag(
        "gradient checkpointing switched off: every layer now keeps its full activations for the backward pass, so activation "
        "memory grows roughly with the number of layers; the ~30% recompute is saved, but the batch or sequence length that "
        "needed checkpointing may no longer fit",
        "关闭了梯度检查点：每层都保存完整激活用于反向，激活显存大致随层数线性增长；省下约 30% 的重算，但原先依赖它的 batch 或序列长度可能放不下",
        "activations are recomputed in the backward pass instead of stored", "反向时重算激活而不保存，显著降低激活显存"),
    "offload_optimizer": _flag(
        "optimizer offload removed: the optimizer states move back to GPU memory", "移除了优化器 offload：优化器状态回到 GPU 显存",
        "optimizer states live in host memory", "优化器状态放到主机内存", norm=_offload_on, off_extra=_offload_extra),
    "offload_param": _flag(
        "parameter offload removed: parameters move back to GPU memory", "移除了参数 offload：参数回到 GPU 显存",
        "parameters live in host memory", "参数放到主机内存", norm=_offload_on),
    "pin_memory": _flag(
        "pin_memory switched off: host-to-device copies go through pageable memory and cannot overlap with compute",
        "关闭了 pin_memory：主机到设备的拷贝走可分页内存，无法与计算重叠",
        "batches are copied from pinned memory", "batch 从锁页内存拷贝"),
    "zero_stage": _zero,
}

#: Setting names that carry a canonical value in configs, call keywords and launcher flags (attribution looks them up).
ALIASES: dict[str, tuple[str, ...]] = {
    "save_steps": ("save_steps", "save_interval", "checkpoint_interval", "checkpointing_steps", "save_every", "save_freq", "ckpt_interval"),
    "logging_steps": ("logging_steps", "log_interval", "log_every", "log_freq", "log_every_n_steps", "logging_interval"),
    "eval_steps": ("eval_steps", "eval_interval", "eval_every", "val_check_interval"),
    "num_workers": ("num_workers", "dataloader_num_workers"),
    "prefetch_factor": ("prefetch_factor", "dataloader_prefetch_factor"),
    "precision": ("bf16", "fp16", "mixed_precision", "precision", "torch_dtype", "dtype", "bf16.enabled", "fp16.enabled", "half", "amp"),
    "attn_implementation": ("attn_implementation", "_attn_implementation", "use_flash_attention_2", "use_flash_attn", "flash_attn",
                            "flash_attention", "attention_implementation", "attn_impl"),
    "torch_compile": ("torch_compile", "compile", "use_compile", "torch_compile_backend", "torch_compile_mode"),
    "gradient_checkpointing": ("gradient_checkpointing", "activation_checkpointing", "use_gradient_checkpointing", "recompute_granularity",
                               "recompute_activations", "enable_gradient_checkpointing"),
    "offload_optimizer": ("offload_optimizer", "offload_optimizer.device", "cpu_offload", "offload_optimizer_device"),
    "offload_param": ("offload_param", "offload_param.device", "offload_param_device"),
    "zero_stage": ("zero_optimization.stage", "zero_stage"),
    "gradient_accumulation_steps": ("gradient_accumulation_steps", "accumulate_grad_batches", "gradient_accumulation", "grad_accum_steps",
                                    "gradient_accumulation_iters"),
    "pin_memory": ("pin_memory", "dataloader_pin_memory"),
}
ALIASES["save_interval"] = ALIASES["checkpoint_interval"] = ALIASES["save_steps"]
ALIASES["log_interval"] = ALIASES["logging_steps"]
ALIASES["dataloader_num_workers"] = ALIASES["num_workers"]
