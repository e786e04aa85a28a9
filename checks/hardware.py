"""The GPUs a repository configuration or ``scan --hardware`` may name, and what the checks need to know about them.

One list for the CLI and the App, so both accept and refuse the same names.
"""

from __future__ import annotations

import re

#: accepted names, normalised (lower case, no spaces or dashes)
KNOWN_GPUS: tuple[str, ...] = (
    "h100", "h200", "h800", "h20", "gh200", "b100", "b200", "gb200", "a100", "a800", "a30", "a40", "a10", "a10g",
    "a6000", "rtxa6000", "l4", "l40", "l40s", "v100", "t4", "p100", "p40", "rtx2080", "rtx3090", "rtx4090", "rtx5090",
    "rtx6000", "rtx6000ada", "mi250", "mi300x", "tpu",
)
#: pre-Ampere GPUs: no BF16 Tensor Cores and no FlashAttention-2 kernels (FA2 needs sm_80+)
NO_BF16_FA2: frozenset[str] = frozenset({"v100", "t4", "p100", "p40", "rtx2080"})


def normalize_gpu(name: object) -> str | None:
    """The known name of ``name`` (``"H100"``, ``"a100-80gb"`` -> ``"a100"``), or None when it is not a known GPU."""
    if not isinstance(name, str):
        return None
    norm = re.sub(r"[\s_\-]+", "", name.strip().lower()).replace("nvidia", "").replace("tesla", "").replace("geforce", "")
    if norm in KNOWN_GPUS:
        return norm
    # a known name followed by a memory/form-factor suffix: "a10080gb", "h100sxm", "v10032gb"
    best = max((k for k in KNOWN_GPUS if norm.startswith(k) and re.fullmatch(r"(\d+gb|sxm\d*|pcie|nvl|hbm\d*e?)*", norm[len(k):])),
               key=len, default=None)
    return best


def lacks_bf16_fa2(hardware: str | None) -> bool:
    return normalize_gpu(hardware) in NO_BF16_FA2 if hardware else False
