"""The fix catalog: which checks have an edit, for which settings, to which value, graded like Ruff's fixes.

``safe``: no change to numerics or memory (``pin_memory``, loader workers, logging/checkpoint intervals).
``unsafe``: precision, gradient checkpointing, attention kernels, compile, Liger, fused optimizers, overlap of
communication (peak memory): proposed only with ``--unsafe-fixes`` (or ``/accel fix`` naming the check) and
flagged in the pull request body. A check graded ``display-only`` never becomes an edit; a catalog entry is
never graded safer than its check.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checks.base import REGISTRY, all_checks
from checks.engine import Audit
from checks.facts.types import Expr, Setting
from checks.model import CheckResult, Evidence, FixSafety, Status

from .model import Dropped, Edit, Site
from .scope import editable

_CALL_KEY = re.compile(r"^([A-Za-z_][\w.]*)\((\w+)=\)$")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_FIELD = re.compile(r"^[A-Za-z_]\w*\.[A-Za-z_]\w*$")
_SHELL_EXT = (".sh", ".bash", ".slurm", ".sbatch", ".zsh")
HF_MARKERS = frozenset({
    "output_dir", "per_device_train_batch_size", "learning_rate", "num_train_epochs", "gradient_accumulation_steps",
    "max_steps", "logging_steps", "save_steps", "lr_scheduler_type", "warmup_ratio", "warmup_steps", "save_strategy",
    "per_device_eval_batch_size", "weight_decay", "report_to",
})


def _false(v: Any) -> bool:
    return v is False or v == 0 or (isinstance(v, str) and v.strip().lower() in ("false", "0", "no", "off"))


def _zero(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool) and v == 0) or v == "0"


def _lt(n: int) -> Callable[[Any], bool]:
    def bad(v: Any) -> bool:
        try:
            return not isinstance(v, bool) and 0 <= float(v) < n
        except (TypeError, ValueError):
            return False
    return bad


@dataclass(frozen=True, slots=True)
class Rule:
    check: str
    names: tuple[str, ...]  # setting names (leaf keys, call keywords, flags without dashes)
    bad: Callable[[Any], bool]
    good: Any  # the value to write (a callable gets the audit)
    safety: FixSafety
    benefit: str
    add_key: str | None = None  # when nothing sets it and the check is unused: add this key to the HF training config
    add_after: tuple[str, ...] = ()
    findings_only: bool = False  # intervals: only what the check itself flagged
    needs_dep: str | None = None  # adding the key needs this package among the dependencies


def _attn(audit: Audit) -> str:
    return "flash_attention_2" if audit.facts.deps("flash-attn", "flash_attn") else "sdpa"


RULES: tuple[Rule, ...] = (
    Rule("C1", ("bf16",), _false, True, FixSafety.UNSAFE,
         "BF16 mixed precision: about half the activation memory and 1.5-3x faster matmuls on Ampere/Hopper GPUs "
         "(needs an A100/H100-class GPU; numerics change)", "bf16", ("fp16", "tf32", "learning_rate")),
    Rule("C1", ("enabled",), _false, True, FixSafety.UNSAFE,
         "DeepSpeed BF16: about half the activation memory and faster matmuls (numerics change)"),
    Rule("C3", ("gradient_checkpointing",), _false, True, FixSafety.UNSAFE,
         "activation checkpointing: activation memory drops to about one layer's worth for ~20-30% more compute, "
         "so larger batches or sequences fit", "gradient_checkpointing", ("bf16", "tf32", "gradient_accumulation_steps")),
    Rule("D1", ("attn_implementation",), lambda v: isinstance(v, str) and v.lower() == "eager", _attn, FixSafety.UNSAFE,
         "fused attention (FlashAttention-2 / SDPA) instead of eager: no seq x seq score matrix in memory, "
         "2-4x faster attention (kernel changes round-off)"),
    Rule("D2", ("torch_compile",), _false, True, FixSafety.UNSAFE,
         "torch.compile fuses element-wise kernels: typically 10-40% faster steps after a compile warm-up",
         "torch_compile", ("tf32", "bf16", "gradient_checkpointing")),
    Rule("D5", ("use_liger_kernel",), _false, True, FixSafety.UNSAFE,
         "Liger kernels (fused RMSNorm/RoPE/SwiGLU/cross-entropy): ~20% higher throughput and ~60% less memory "
         "for the loss on supported models", "use_liger_kernel", ("gradient_checkpointing", "bf16"), needs_dep="liger-kernel"),
    Rule("D6", ("optim",), lambda v: isinstance(v, str) and v.lower() in ("adamw_torch", "adamw_hf", "adamw"), "adamw_torch_fused",
         FixSafety.UNSAFE, "fused AdamW: one kernel per parameter group instead of one per tensor (needs CUDA tensors)"),
    Rule("E2", ("overlap_comm",), _false, True, FixSafety.UNSAFE,
         "ZeRO overlap_comm: gradient reduction runs during the backward pass instead of after it (more bucket memory)"),
    Rule("F1", ("num_workers", "dataloader_num_workers"), _zero, 4, FixSafety.SAFE,
         "4 loader worker processes: batches are read and collated while the GPU computes"),
    Rule("F2", ("prefetch_factor", "dataloader_prefetch_factor"), _lt(2), 2, FixSafety.SAFE,
         "each worker keeps 2 batches ready (PyTorch's default)"),
    Rule("F3", ("pin_memory", "dataloader_pin_memory"), _false, True, FixSafety.SAFE,
         "pinned host memory: faster, asynchronous host-to-GPU copies"),
    Rule("I3", ("save_steps", "save_interval", "save_every", "save_freq", "checkpoint_every", "ckpt_every", "save_every_n_steps",
                "every_n_train_steps", "checkpointing_steps"), _lt(100), 500, FixSafety.SAFE,
         "a checkpoint every 500 steps instead of every few: training no longer stops to write weights and optimizer state",
         findings_only=True),
    Rule("I4", ("logging_steps", "log_interval", "log_every", "log_freq", "log_every_n_steps", "logging_interval"), _lt(10), 10,
         FixSafety.SAFE, "metrics every 10 steps: no host sync and logger call on every step", findings_only=True),
    Rule("I5", ("logging_steps", "log_interval", "log_every", "log_freq", "log_every_n_steps", "report_every", "eval_steps"),
         _lt(10), 10, FixSafety.SAFE, "progress reported every 10 steps instead of every step", findings_only=True),
)


def catalog() -> dict[str, list[Rule]]:
    out: dict[str, list[Rule]] = {}
    for r in RULES:
        out.setdefault(r.check, []).append(r)
    return out


def grade(rule: Rule) -> FixSafety:
    """The stricter of the catalog's grade and the check's own."""
    check = REGISTRY.get(rule.check)
    if check is None:
        all_checks()
        check = REGISTRY.get(rule.check)
    own = check.fix_safety if check is not None else FixSafety.UNSAFE
    if own == FixSafety.DISPLAY_ONLY:
        return FixSafety.DISPLAY_ONLY
    return FixSafety.UNSAFE if FixSafety.UNSAFE in (own, rule.safety) else FixSafety.SAFE


def norm(name: str) -> str:
    return name.strip().lstrip("-").lower().replace("-", "_")


def site_for(path: str, line: int, key: str) -> Site | None:
    """The editor that can find ``key`` again in ``path``, or None."""
    low = path.lower()
    if low.endswith((".yaml", ".yml")):
        return Site(path, line, "yaml", key) if not key.startswith("-") else None
    if low.endswith(".json"):
        return Site(path, line, "json", key) if not key.startswith("-") else None
    if low.endswith(".py"):
        if _CALL_KEY.match(key):
            return Site(path, line, "call", key)
        if key.startswith("--"):
            return Site(path, line, "argparse", key)
        if _FIELD.match(key):
            return Site(path, line, "field", key)
        if _IDENT.match(key):
            return Site(path, line, "assign", key)
        return None
    if key.startswith("-") and (low.endswith(_SHELL_EXT) or "/" not in key):
        if low.endswith(_SHELL_EXT) or low.rsplit("/", 1)[-1] in ("makefile",):
            return Site(path, line, "shell", key)
    return None


def leaf(key: str) -> str:
    m = _CALL_KEY.match(key)
    if m:
        return norm(m.group(2))
    return norm(key.split(".")[-1])


def _audit_value(rule: Rule, audit: Audit) -> Any:
    return rule.good(audit) if callable(rule.good) else rule.good


def recommend(audit: Audit, only: set[str] | None = None) -> tuple[list[Edit], list[Dropped]]:
    """Edits for the checks the audit found unused, partial or with findings, from the catalog."""
    edits: list[Edit] = []
    dropped: list[Dropped] = []
    seen: set[tuple[str, int, str]] = set()
    by_id = {r.id: r for r in audit.results}
    for rule in RULES:
        if only and rule.check not in only:
            continue
        res = by_id.get(rule.check)
        if res is None or res.status == Status.NA:
            continue
        safety = grade(rule)
        if safety == FixSafety.DISPLAY_ONLY:
            continue
        if res.status == Status.USED and not res.findings:
            continue
        good = _audit_value(rule, audit)
        cands = _candidates(rule, res, audit)
        found_any = False
        for path, line, key, value, cited in cands:
            if leaf(key) not in rule.names:
                continue
            if rule.check == "C1" and leaf(key) == "enabled" and not key.lower().endswith("bf16.enabled"):
                continue
            found_any = True
            if isinstance(value, Expr) or not rule.bad(value) or not cited:
                continue  # only sites the check itself cites: what its report shows, and what a re-audit can confirm
            site = site_for(path, line, key)
            if site is None:
                dropped.append(Dropped(rule.check, path, line, f"no editor for {key} in this kind of file"))
                continue
            why = editable(path, audit.roles)
            if why:
                dropped.append(Dropped(rule.check, path, line, why))
                continue
            k = (site.path, site.line, leaf(site.key))
            if k in seen:
                for e in edits:
                    if (e.site.path, e.site.line, leaf(e.site.key)) == k and rule.check not in e.checks:
                        e.also.append(rule.check)
                continue
            seen.add(k)
            edits.append(Edit(rule.check, site, value, good, safety, rule.benefit, "recommendation"))
        if not found_any and rule.add_key and res.status in (Status.UNUSED, Status.PARTIAL):
            if rule.needs_dep and not audit.facts.deps(rule.needs_dep, rule.needs_dep.replace("-", "_")):
                dropped.append(Dropped(rule.check, "", 0, f"{rule.add_key} needs the {rule.needs_dep} package, which the repository does not depend on"))
                continue
            target = hf_config(audit)
            if target is None:
                continue
            path, line, kind = target
            why = editable(path, audit.roles)
            if why:
                dropped.append(Dropped(rule.check, path, line, why))
                continue
            if kind == "call":
                site = Site(path, line, "call", f"TrainingArguments({rule.add_key}=)")
            else:
                site = Site(path, line, kind, rule.add_key)
            k = (site.path, -1, rule.add_key)
            if k in seen:
                continue
            seen.add(k)
            edits.append(Edit(rule.check, site, None, good, safety, rule.benefit, "recommendation", after_key=",".join(rule.add_after)))
    return edits, dropped


def _candidates(rule: Rule, res: CheckResult, audit: Audit) -> list[tuple[str, int, str, Any, bool]]:
    """(path, line, key, value, cited): the check's own evidence and findings (cited), and every other place
    that sets one of the rule's names (not cited: they only tell that the setting exists somewhere)."""
    out: list[tuple[str, int, str, Any, bool]] = []
    evs: list[Evidence] = list(res.findings)
    if not rule.findings_only:
        evs += res.evidence
    for e in evs:
        if e.key:
            out.append((e.path, e.line, e.key, e.value, True))
    cited = {(e.path, e.line) for e in [*res.findings, *res.evidence]}
    if not rule.findings_only:
        s: Setting
        for s in audit.facts.settings(*rule.names):
            out.append((s.path, s.line, s.key, s.value, (s.path, s.line) in cited))
        if rule.check == "C1":
            for c in audit.facts.config("bf16.enabled"):
                out.append((c.path, c.line, c.dotted, c.value, (c.path, c.line) in cited))
    uniq: dict[tuple[str, int, str], tuple[str, int, str, Any, bool]] = {}
    for c in out:
        uniq.setdefault((c[0], c[1], leaf(c[2])), c)
    return list(uniq.values())


def hf_config(audit: Audit) -> tuple[str, int, str] | None:
    """The Hugging Face training-arguments file (YAML/JSON with TrainingArguments keys at the top), or the
    ``TrainingArguments(...)`` call: (path, line, kind). The one with the most such keys wins."""
    tops: dict[str, set[str]] = {}
    first: dict[str, int] = {}
    fmts: dict[str, str] = {}
    for e in audit.facts.records("configs"):
        if len(e.keys) == 1 and e.fmt in ("yaml", "json") and isinstance(e.keys[0], str) and e.keys[0] in HF_MARKERS:
            tops.setdefault(e.path, set()).add(e.keys[0])
            first.setdefault(e.path, e.line)
            fmts[e.path] = e.fmt
    best = sorted(((len(v), p) for p, v in tops.items() if len(v) >= 3 and editable(p, audit.roles) is None), key=lambda x: (-x[0], x[1]))
    if best:
        p = best[0][1]
        return p, first[p], fmts[p]
    calls = [c for c in audit.facts.calls("TrainingArguments", "transformers.TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig")
             if editable(c.path, audit.roles) is None and len(c.kwargs) >= 2]
    if calls:
        return calls[0].path, calls[0].line, "call"
    return None
