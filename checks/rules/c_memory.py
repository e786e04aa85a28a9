"""C. Memory optimisation (显存优化): C1-C6."""

from __future__ import annotations

from ..base import Check, Context, register
from ..facts import Expr, truthy
from ..model import Bottleneck, Example, FixSafety, Outcome, Priority, Status
from ._helpers import evs, off, on

U, P, N = Status.USED, Status.PARTIAL, Status.UNUSED

_LOW_DTYPES = ("bfloat16", "float16", "half", "bf16", "fp16")
_LIGHTNING_MIXED = {"bf16", "bf16-mixed", "bf16-true", "16", "16-mixed", "16-true", "fp16", "half", "transformer-engine", "transformer-engine-float16"}


def _is_low_dtype(v: object) -> str | None:
    text = v.dotted or v.text if isinstance(v, Expr) else str(v)
    if not text:
        return None
    low = text.lower()
    if "bfloat16" in low or low in {"bf16", "bf16-mixed", "bf16-true"}:
        return "bf16"
    if "float16" in low or low in {"fp16", "half", "16", "16-mixed", "16-true"}:
        return "fp16"
    return None


@register
class C1MixedPrecision(Check):
    id = "C1"
    title = "Mixed precision (BF16/FP16)"
    title_zh = "混合精度训练 (FP16/BF16)"
    bottlenecks = (Bottleneck.COMPUTE, Bottleneck.MEMORY)
    priority = Priority.HIGH
    benefit = "~2x matmul throughput on Tensor Cores and about half the activation memory versus FP32"
    what = (
        "Whether training runs in BF16 or FP16 mixed precision: HF `bf16`/`fp16`, DeepSpeed `bf16.enabled`, "
        "accelerate `mixed_precision`, Lightning `precision=`, `torch.autocast`, FSDP `MixedPrecision`, or a "
        "`GradScaler` loop. A value set to false, a flag that defaults off and is never passed, or a commented line is not use."
    )
    why = (
        "FP32 training doubles activation memory and leaves Tensor Cores idle: on A100/H100, BF16 matmuls run at "
        "312/989 dense TFLOPS against 19.5/67 TFLOPS for FP32 (NVIDIA datasheets), and mixed-precision training "
        "typically gives 1.5-3x end-to-end speed-ups (Micikevicius et al., 2018). FP16 without loss scaling can "
        "underflow gradients, so a custom FP16 loop needs a `GradScaler`."
    )
    fix = "Enable BF16 (Ampere or newer) or FP16 with a GradScaler (older GPUs): `bf16: true` in the trainer config or DeepSpeed `\"bf16\": {\"enabled\": true}`."
    fix_zh = "启用 BF16（A100/H100 等 Ampere 及更新架构）或 FP16+GradScaler（较老 GPU）：在训练配置中设置 `bf16: true`，或在 DeepSpeed 配置中设置 `\"bf16\": {\"enabled\": true}`。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://arxiv.org/abs/1710.03740", "https://pytorch.org/docs/stable/amp.html")
    snippets = {
        "hf-yaml": "bf16: true\ntf32: true\n",
        "deepspeed-json": '{\n  "bf16": {"enabled": true}\n}\n',
        "accelerate-yaml": "mixed_precision: bf16\n",
        "python": (
            "import torch\n\n"
            "with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):\n"
            "    loss = model(**batch).loss\n"
            "loss.backward()\n"
        ),
        "lightning": "trainer = L.Trainer(precision=\"bf16-mixed\")\n",
    }
    examples = (
        Example({"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nbf16: true\n"}, U, "hf yaml"),
        Example({"ds.json": '{\n  "train_batch_size": 64,\n  "bf16": {\n    "enabled": true\n  }\n}\n'}, U, "deepspeed json"),
        Example({"run.sh": "torchrun --nproc_per_node 8 train.py --bf16 True --output_dir out\n",
                 "train.py": "from transformers import HfArgumentParser, TrainingArguments\n"}, U, "launcher flag"),
        Example({"train.py": "import lightning as L\ntrainer = L.Trainer(precision='bf16-mixed', devices=8)\n"}, U, "lightning"),
        Example({"train.py": "import torch\nscaler = torch.cuda.amp.GradScaler()\nwith torch.autocast('cuda', dtype=torch.float16):\n    loss = model(x)\n"}, U, "amp loop"),
        Example({"train.yaml": "bf16: false\nfp16: false\n"}, N, "disabled values"),
        Example({"train.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--bf16', action='store_true')\n",
                 "run.sh": "python train.py --lr 1e-4\n"}, N, "flag never passed"),
        Example({"train.yaml": "# bf16: true\nlr: 0.001\n"}, N, "commented out"),
        Example({"train.py": '"""We should try bf16 one day."""\nprint("fp16")\n'}, N, "keyword in strings"),
        Example({"train.py": "import torch\nwith torch.autocast('cuda', dtype=torch.float16):\n    loss = model(x)\nloss.backward()\n"}, P, "fp16 without scaler"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list = []
        kinds: set[str] = set()
        disabled: list = []
        for name in ("bf16", "fp16", "bf16_full_eval", "half", "amp", "use_amp", "mixed_precision_training"):
            eff = f.effective(name)
            hits = on(eff)
            if hits:
                used += hits
                kinds.add("fp16" if name in ("fp16", "half") else "bf16" if name.startswith("bf16") else "amp")
            disabled += off(eff)
        for e in f.config("bf16.enabled", "fp16.enabled", "amp.enabled"):
            t = truthy(e.value)
            if t:
                used.append(e)
                kinds.add(e.keys[-2] if isinstance(e.keys[-2], str) else "amp")
            elif t is False:
                disabled.append(e)
        for s in f.effective("mixed_precision", "precision", "dtype", "torch_dtype", "compute_dtype", "param_dtype", "mixed_precision_dtype"):
            low = _is_low_dtype(s.value)
            if low:
                used.append(s)
                kinds.add(low)
            elif isinstance(s.value, str) and s.value.lower() in {"no", "fp32", "32", "32-true", "float32"}:
                disabled.append(s)
        for c in f.calls("Trainer", "Fabric", "Accelerator"):
            v = c.kwargs.get("precision", c.kwargs.get("mixed_precision"))
            if v is not None and (str(v).lower() in _LIGHTNING_MIXED or _is_low_dtype(v)):
                used.append(c)
                kinds.add(_is_low_dtype(v) or "fp16")
        autocast = [c for c in f.calls("torch.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast")
                    if truthy(c.kwargs.get("enabled", True)) is not False]
        scaler = f.calls("GradScaler", "ShardedGradScaler")
        mp_policy = f.calls("MixedPrecision", "MixedPrecisionPolicy")
        halves = [c for c in f.calls("half", "bfloat16") if c.name.startswith("?") or "." in c.name]
        to_low = [c for c in f.calls("to") if any(_is_low_dtype(a) for a in c.args if isinstance(a, Expr)) or _is_low_dtype(c.kwargs.get("dtype", ""))]
        for c in autocast:
            kind = _is_low_dtype(c.kwargs.get("dtype", "")) or "bf16"
            kinds.add(kind)
        used += autocast + scaler + mp_policy + halves + to_low
        if mp_policy or halves or to_low:
            kinds.add("bf16")
        if scaler:
            kinds.add("fp16")
        if not used:
            detail = "mixed precision is explicitly disabled" if disabled else "no BF16/FP16 training setting found"
            return Outcome(N, evs(disabled), detail, {"precision": "fp32"})
        only_manual_fp16 = autocast and not scaler and all(_is_low_dtype(c.kwargs.get("dtype", "")) == "fp16" for c in autocast) and not (
            on(f.effective("fp16", "bf16")) or f.config("fp16.enabled", "bf16.enabled") or mp_policy
        )
        precision = "bf16" if "bf16" in kinds else "fp16"
        if only_manual_fp16:
            return Outcome(P, evs(autocast), "FP16 autocast without a GradScaler: gradients may underflow", {"precision": "fp16"})
        return Outcome(U, [f.ev(x) for x in used], f"{precision.upper()} mixed precision", {"precision": precision})
