"""Small queries several checks share. Keep check-specific logic in the check."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..facts import Facts, Setting, as_number, truthy
from ..model import Evidence

#: HF ``TrainingArguments``-like classes (transformers, TRL, and the arg dataclasses built on them)
HF_ARGS = (
    "TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "ORPOConfig", "KTOConfig", "CPOConfig",
    "GRPOConfig", "PPOConfig", "RewardConfig", "GKDConfig", "RLOOConfig", "OnlineDPOConfig",
)
HF_TRAINERS = (
    "transformers.Trainer", "Seq2SeqTrainer", "SFTTrainer", "DPOTrainer", "ORPOTrainer", "KTOTrainer", "CPOTrainer",
    "GRPOTrainer", "PPOTrainer", "RewardTrainer", "GKDTrainer", "RLOOTrainer", "OnlineDPOTrainer",
)

#: Defaults of ``transformers.TrainingArguments`` that checks judge when nothing sets the value.
HF_DEFAULTS: dict[str, Any] = {
    "bf16": False,
    "fp16": False,
    "gradient_checkpointing": False,
    "gradient_accumulation_steps": 1,
    "dataloader_num_workers": 0,
    "dataloader_pin_memory": True,
    "dataloader_prefetch_factor": None,
    "dataloader_persistent_workers": False,
    "logging_steps": 500,
    "save_steps": 500,
    "eval_steps": None,
    "save_strategy": "steps",
    "logging_strategy": "steps",
    "torch_compile": False,
    "lr_scheduler_type": "linear",
    "warmup_steps": 0,
    "warmup_ratio": 0.0,
    "optim": "adamw_torch",
    "group_by_length": False,
    "use_liger_kernel": False,
    "ddp_find_unused_parameters": None,
    "disable_tqdm": False,
    "report_to": "all",
}


def uses_hf_trainer(facts: Facts) -> list[Any]:
    """Sites that configure an HF-style trainer (args class calls, trainer calls, HfArgumentParser)."""
    sites: list[Any] = [*facts.calls(*HF_ARGS), *facts.calls(*HF_TRAINERS)]
    for c in facts.calls("HfArgumentParser"):
        if any(isinstance(a, tuple) or getattr(a, "text", "") for a in c.args):
            sites.append(c)
    return sites


def on(settings: Iterable[Setting]) -> list[Setting]:
    """Settings whose value clearly turns the feature on."""
    return [s for s in settings if truthy(s.value) is True]


def off(settings: Iterable[Setting]) -> list[Setting]:
    return [s for s in settings if truthy(s.value) is False]


def numbers(settings: Iterable[Setting]) -> list[tuple[float, Setting]]:
    return [(n, s) for s in settings if (n := as_number(s.value)) is not None]


def evs(items: Iterable[Any], key: str | None = None) -> list[Evidence]:
    return [Facts.ev(x, key=key) for x in items]


def value_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    return getattr(v, "text", None) or repr(v)
