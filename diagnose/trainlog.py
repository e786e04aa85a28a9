"""Training logs: step time, throughput and MFU from HF Trainer, Lightning/tqdm, Megatron, DeepSpeed and plain lines.

Recognised lines (one log may mix them; the first :data:`WARMUP` measurements are dropped as warm-up when
there are enough)::

    [2024-05-14 10:21:03] iteration       20/  500000 | consumed samples: 1280 | elapsed time per iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 180.3 | ...
    {'train_runtime': 123.4, 'train_samples_per_second': 10.5, 'train_steps_per_second': 0.65, 'train_loss': 1.9, 'epoch': 1.0}
    Epoch 0:  45%|████▌     | 450/1000 [02:15<02:45,  3.33it/s, v_num=0, loss=2.31]
    [Rank 0] epoch=0/micro_step=100/global_step=100, RunningAvgSamplesPerSec=45.6, CurrSamplesPerSec=46.1, MemAllocated=10.2GB
    iter 100: loss 2.3456, time 123.45ms, mfu 35.21%
    step 100 | loss 2.31 | 12345 tokens/s

GPU count from ``world size`` / ``WORLD_SIZE`` / ``Num processes`` lines, else the setting ``gpus``.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path
from typing import Any

from .sources import open_text

WARMUP = 2
MAX_LINE = 8192

_MEGATRON_T = re.compile(r"elapsed time per iteration \(ms\):\s*([\d.]+)")
_MEGATRON_TF = re.compile(r"throughput per GPU \(TFLOP/s/GPU\):\s*([\d.]+)")
_MEGATRON_GBS = re.compile(r"global batch size:\s*(\d+)")
_MEGATRON_TOK = re.compile(r"tokens per (?:second|sec)(?: per GPU)?[^:]*:\s*([\d.]+)", re.I)
_HF_RUNTIME = re.compile(r"'train_steps_per_second':\s*([\d.]+)")
_HF_SAMPLES = re.compile(r"'train_samples_per_second':\s*([\d.]+)")
_TQDM = re.compile(r"\|\s*(\d+)/(\d+)\s*\[[\d:]+<[\d:?]+,\s*([\d.]+)(it/s|s/it)")
_DS = re.compile(r"CurrSamplesPerSec=([\d.]+)")
_NANOGPT = re.compile(r"\biter \d+: loss [\d.]+, time ([\d.]+)ms(?:, mfu (-?[\d.]+)%)?")
_TOKS = re.compile(r"([\d.,]+)\s*(?:tokens/s|tok/s|tokens per second|tokens/sec)\b", re.I)
_STEP_MS = re.compile(r"\bstep[_ ]time[^\d]{0,6}([\d.]+)\s*(ms|s)\b", re.I)
_WORLD = re.compile(r"(?:world[_ ]size|WORLD_SIZE|Num processes|num_processes|nproc_per_node \* nnodes)\s*[:=]?\s*(\d+)", re.I)
_LIGHTNING_WORLD = re.compile(r"Initializing distributed: GLOBAL_RANK: \d+, MEMBER: \d+/(\d+)")
_MFU = re.compile(r"\bmfu[^\d\-]{0,4}(-?[\d.]+)\s*%?", re.I)


def _trim(values: list[float]) -> list[float]:
    return values[WARMUP:] if len(values) > WARMUP + 2 else values


def read(path: Path) -> dict[str, Any]:
    step_ms: list[float] = []
    tflops: list[float] = []
    toks: list[float] = []
    samples: list[float] = []
    mfu: list[float] = []
    world: int | None = None
    source = None
    with open_text(path) as f:
        for line in f:
            line = line[:MAX_LINE]
            if (m := _MEGATRON_T.search(line)) is not None:
                step_ms.append(float(m.group(1)))
                source = source or "megatron"
                if (m2 := _MEGATRON_TF.search(line)) is not None:
                    tflops.append(float(m2.group(1)))
                if (m2 := _MEGATRON_TOK.search(line)) is not None:
                    toks.append(float(m2.group(1)))
                if (m2 := _MEGATRON_GBS.search(line)) is not None and float(m.group(1)) > 0:
                    samples.append(int(m2.group(1)) * 1000.0 / float(m.group(1)))
                continue
            if (m := _NANOGPT.search(line)) is not None:
                step_ms.append(float(m.group(1)))
                if m.group(2) is not None and float(m.group(2)) > 0:
                    mfu.append(float(m.group(2)))
                source = source or "plain"
                continue
            if (m := _HF_RUNTIME.search(line)) is not None:
                v = float(m.group(1))
                if v > 0:
                    step_ms.append(1000.0 / v)
                if (m2 := _HF_SAMPLES.search(line)) is not None:
                    samples.append(float(m2.group(1)))
                source = source or "hf-trainer"
                continue
            if (m := _DS.search(line)) is not None:
                samples.append(float(m.group(1)))
                source = source or "deepspeed"
                continue
            if (m := _TQDM.search(line)) is not None and int(m.group(1)) > 0:
                rate = float(m.group(3))
                if rate > 0:
                    step_ms.append(1000.0 / rate if m.group(4) == "it/s" else 1000.0 * rate)
                    source = source or "tqdm"
            if (m := _TOKS.search(line)) is not None:
                try:
                    toks.append(float(m.group(1).replace(",", "")))
                    source = source or "plain"
                except ValueError:
                    pass
            if (m := _STEP_MS.search(line)) is not None:
                step_ms.append(float(m.group(1)) * (1000 if m.group(2).lower() == "s" else 1))
                source = source or "plain"
            if (m := _MFU.search(line)) is not None:
                mfu.append(float(m.group(1)))
            if world is None and ((m := _WORLD.search(line)) or (m := _LIGHTNING_WORLD.search(line))) and int(m.group(1)) > 0:
                world = int(m.group(1))
    out: dict[str, Any] = {}
    if source is None:
        return out
    out["format"] = source
    if step_ms:
        v = _trim(step_ms)
        out["step_time_ms"] = round(statistics.median(v), 2)
        out["steps_seen"] = len(step_ms)
        if len(v) >= 3:
            out["step_time_cv"] = round(statistics.pstdev(v) / statistics.mean(v), 3)
    if toks:
        out["tokens_per_s"] = round(statistics.median(_trim(toks)), 1)
    if samples:
        out["samples_per_s"] = round(statistics.median(_trim(samples)), 2)
    if tflops:
        out["tflops_per_gpu"] = round(statistics.median(_trim(tflops)), 1)
    if mfu:
        out["mfu_pct"] = round(statistics.median(_trim(mfu)), 1)
    if world:
        out["gpus"] = world
    return out


PEAK_BF16_TFLOPS = {"h100": 989.0, "h200": 989.0, "h800": 989.0, "gh200": 989.0, "b200": 2250.0, "gb200": 2500.0, "a100": 312.0,
                    "a800": 312.0, "l40s": 362.0, "a10g": 70.0, "l4": 121.0, "v100": 125.0, "mi300x": 1307.0, "mi250": 362.0}


def add_mfu(run: dict[str, Any], settings: dict[str, Any]) -> None:
    """MFU when the model size is known: Megatron's TFLOP/s/GPU, or 6·N·tokens/s over the GPUs, against the GPU's dense BF16 peak."""
    if "mfu_pct" in run:
        return
    peak = settings.get("peak_tflops") or PEAK_BF16_TFLOPS.get(str(settings.get("hardware") or "").lower())
    if not peak:
        return
    if "tflops_per_gpu" in run:
        run["mfu_pct"] = round(100 * run["tflops_per_gpu"] / peak, 1)
        run["mfu_basis"] = f"TFLOP/s/GPU from the log over {peak:g} TFLOP/s peak"
        return
    params = settings.get("model_params")
    gpus = run.get("gpus") or settings.get("gpus")
    if params and gpus and "tokens_per_s" in run:
        achieved = 6 * float(params) * run["tokens_per_s"] / int(gpus) / 1e12
        run["mfu_pct"] = round(100 * achieved / peak, 1)
        run["mfu_basis"] = f"6 x {float(params):.3g} params x tokens/s over {gpus} GPUs, {peak:g} TFLOP/s peak"


def throughput(run: dict[str, Any]) -> tuple[float, str] | None:
    """The whole job's throughput (tokens/s, samples/s, or 1/step time); Megatron's per-GPU figure is multiplied by the GPUs."""
    if "tokens_per_s" in run:
        return run["tokens_per_s"], "tokens/s"
    if "samples_per_s" in run:
        return run["samples_per_s"], "samples/s"
    if "tflops_per_gpu" in run and run.get("gpus"):
        return run["tflops_per_gpu"] * run["gpus"], "TFLOP/s"
    return None  # a step time alone says nothing about throughput without the batch size


def scaling(runs: list[tuple[str, dict[str, Any]]]) -> dict[str, Any] | None:
    """Scaling efficiency TN / (N x T1) between the runs with the fewest and the most GPUs (N = the ratio of GPU counts).

    Both runs must report the same measure (tokens/s, samples/s, or Megatron's TFLOP/s/GPU times the GPUs).
    """
    groups: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
    for p, r in runs:
        t = throughput(r) if r.get("gpus") else None
        if t is not None:
            groups.setdefault((r.get("format", ""), t[1]), []).append((p, r))  # only like with like: same log format, same measure
    known = next((g for g in groups.values() if len({r["gpus"] for _, r in g}) >= 2), None)
    if known is None:
        return None
    known.sort(key=lambda pr: pr[1]["gpus"])
    (p1, r1), (pn, rn) = known[0], known[-1]
    t1, unit1 = throughput(r1)  # type: ignore[misc]
    tn, unitn = throughput(rn)  # type: ignore[misc]
    if unit1 != unitn:
        return None
    n = rn["gpus"] / r1["gpus"]
    eff = tn / (n * t1)
    return {"efficiency_pct": round(100 * eff, 1), "gpus": [r1["gpus"], rn["gpus"]], "throughput": [t1, tn], "unit": unit1,
            "paths": [p1, pn]}
