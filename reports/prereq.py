"""Advice that needs a newer PyTorch than the project pins.

Video-LLaMA's ``environment.yml`` pins ``pytorch=1.12.1``: ``torch.compile``, ``scaled_dot_product_attention``,
``AdamW(fused=True)``, the allocator's ``expandable_segments`` and Liger Kernel do not exist there, so each such
recommendation starts by saying the pin has to be raised first (where, and to what). The pin is the project's own
top-level declaration (the shallowest requirements/environment file that names torch), not a vendored model's."""

from __future__ import annotations

import re
from typing import Any

from checks.engine import Audit
from checks.lazyre import lazy_compile
from checks.rules.d_compute import declared_cap, documented_pins

#: the PyTorch release each piece of advice needs: torch.compile and SDPA (2.0), ``fused=True`` on AdamW (2.0),
#: ``expandable_segments`` in ``PYTORCH_CUDA_ALLOC_CONF`` (2.1), Liger Kernel (``torch>=2.1.2``), Float8 training
#: through torchao (2.1)
NEEDS_TORCH: dict[str, tuple[int, ...]] = {"D1": (2, 0), "D2": (2, 0), "D4": (2, 0), "D6": (2, 0), "C6": (2, 1),
                                           "D5": (2, 1, 2), "C2": (2, 1)}

_TEST = lazy_compile(r"(^|/)(tests?|testing)/", re.I)


#: the transformers release a piece of advice needs, and the part that needs it: TrainingArguments' ``use_liger_kernel``
#: (4.45), ``DataCollatorWithFlattening`` (4.44), ``generate``'s ``cache_implementation="static"`` (4.38; Chinese-Llama-2's
#: demo image pins 4.31.0, DISC-LawLLM's demo 4.29.1)
NEEDS_TRANSFORMERS: dict[str, tuple[tuple[int, ...], str]] = {"D5": ((4, 45), "`use_liger_kernel`"),
                                                              "F7": ((4, 44), "`DataCollatorWithFlattening`"),
                                                              "J1": ((4, 38), "`cache_implementation`"),
                                                              "J6": ((4, 38), "`cache_implementation`")}


def torch_cap(audit: Audit) -> tuple[tuple[int, ...], str, str] | None:
    """(highest PyTorch the project allows, its requirement as written, where) when its own top-level declaration caps it."""
    deps = [d for d in [*audit.facts.deps("torch"), *audit.facts.deps("pytorch")] if not _TEST.search(d.path)] \
        or documented_pins(audit.facts, "torch")
    return _cap(deps)


def transformers_cap(audit: Audit) -> tuple[tuple[int, ...], str, str] | None:
    """(highest transformers the project allows, its requirement as written, where), as :func:`torch_cap` (ToolBench's
    ``requirements.txt`` pins ``transformers==4.28.1``)."""
    deps = [d for d in audit.facts.deps("transformers") if not _TEST.search(d.path)] or documented_pins(audit.facts, "transformers")
    return _cap(deps)


def _cap(deps: list[Any]) -> tuple[tuple[int, ...], str, str] | None:
    cap = declared_cap(deps)
    if cap is None:
        return None
    hi, d0 = cap
    return hi, f"`{d0.name}{(d0.spec or '').replace(' ', '')}`", f"{d0.path}:{d0.line}"


def torch_first(check_id: str, cap: tuple[tuple[int, ...], str, str] | None) -> tuple[str, str] | None:
    """(English, Chinese) prefix of a recommendation whose practice needs a PyTorch newer than the project's pin."""
    need = NEEDS_TORCH.get(check_id)
    if cap is None or need is None or cap[0] >= need:
        return None
    v = ".".join(map(str, need))
    return (f"Needs PyTorch {v}+ ({cap[2]} pins {cap[1]}: raise it first). ",
            f"需要 PyTorch {v} 及以上（{cap[2]} 固定为 {cap[1]}，需先升级）。")


def transformers_first(check_id: str, cap: tuple[tuple[int, ...], str, str] | None, text: str) -> tuple[str, str] | None:
    """(English, Chinese) prefix of a recommendation whose ``text`` names a part of transformers newer than the project's pin."""
    need = NEEDS_TRANSFORMERS.get(check_id)
    if cap is None or need is None or cap[0] >= need[0] or need[1].strip("`") not in text:
        return None
    v, what = ".".join(map(str, need[0])), need[1]
    return (f"{what} needs transformers {v}+ ({cap[2]} pins {cap[1]}: raise it first). ",
            f"{what} 需要 transformers {v} 及以上（{cap[2]} 固定为 {cap[1]}，需先升级）。")
