"""G. Training strategy (训练策略): G1-G6.

Judgement notes (what "used" means here, beyond keywords):

* G1 needs both a warmup and a decay. The HF ``TrainingArguments`` default
  (``lr_scheduler_type="linear"``, no warmup) and a cosine schedule without warmup are
  ``partial``; a ``constant`` schedule without warmup is ``unused``. axolotl defaults to
  cosine with a 3 % (at most 100 steps) warmup, so an axolotl config is ``used`` unless it
  overrides them; LLaMA-Factory configs follow the HF defaults.
* G2 recommends LAMB/LARS only for a huge global batch (estimated as DeepSpeed
  ``train_batch_size`` / Megatron ``global_batch_size``, else per-device batch x gradient
  accumulation x GPUs per node x nodes); small-batch fine-tuning gets no recommendation.
* G4: a LoRA code path guarded by a switch (``lora_enable``, ``use_lora``, ``use_peft``...)
  counts only when some launch or config turns the switch on. QLoRA is LoRA on a 4-bit base.
* G5: freezing a subset of parameters (a sub-module, a ``named_parameters`` filter, "freeze
  everything then unfreeze a part", ``freeze_*`` keys, LLaMA-Factory ``finetuning_type:
  freeze``). Freezing a whole auxiliary model (reference, teacher, reward, VAE) is not layer
  freezing. LoRA freezes the base implicitly, but that is G4's practice, not layer freezing:
  a LoRA-only run is ``unused`` here, with no recommendation (freezing layers adds nothing to LoRA).
* G6: a fused alignment/distillation loss (Liger chunked losses, TRL ``use_liger_loss`` or
  ``use_liger_kernel`` in a TRL preference/RL/distillation trainer, verl ``use_fused_kernels``).
  Liger model patching alone in an alignment run (LLaMA-Factory ``enable_liger_kernel``) is
  ``unused``: it patches the layers, the preference loss still materialises the logits.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from typing import Any

from ..base import Check, Context, register
from ..facts import Call, ConfigEntry, Container, Expr, Facts, Setting, as_number, truthy
from ..lazyre import lazy_compile
from ..model import Bottleneck, Evidence, Example, FixSafety, Outcome, Priority, Status
from ..project import (
    _ALIGN_TRAINERS,
    _ALIGN_WORDS,
    _MULTIMODAL_FAMILIES,
    alignment_steps,
    own_pretrained_loader,
    preference_losses,
    pretrained_option_to_model,
)
from ._helpers import (
    _FRAMEWORK_CALLED,
    DS_REF_NAMES,
    HF_TRAINERS,
    callers_off,
    callers_off_chain,
    class_at,
    constructions_off,
    declared_dict,
    evs,
    guard_flags,
    guard_off,
    hf_sites_training_first,
    module_of,
    parse_expr,
    resolve_file,
    set_under_off_branch,
    uncalled_function,
    unlaunched_ds_configs,
    uses_hf_trainer,
)
from ._registry import recipes_calling, split_text, total_recipes
from .a_parallelism import MMENGINE_CONFIG
from .c_memory import launch_batch_pairs, shell_ratio

U, P, N = Status.USED, Status.PARTIAL, Status.UNUSED


def _live(f: Facts, calls: list[Call]) -> list[Call]:
    """Calls whose enclosing ``if`` flag is not switched off (``if args.use_lamb:`` with ``use_lamb`` never set)."""
    return [c for c in calls if not guard_off(f, c)]


def _menu_choice(guard: str | None) -> tuple[str, str] | None:
    """The ``name == "constant"`` an ``if``/``elif`` branch requires (``scheduler == "warmupcosine"``), if any."""
    node = parse_expr(guard) if guard else None
    if node is None:
        return None
    for t in node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]:
        if (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq) and isinstance(t.left, ast.Name)
                and isinstance(t.comparators[0], ast.Constant) and isinstance(t.comparators[0].value, str)):
            return t.left.id, t.comparators[0].value
    return None


def _unresolved_menu(f: Facts, calls: list[Call]) -> list[Call]:
    """Scheduler builders of a menu dispatched on a string whose value nothing resolves (sentence-transformers' legacy
    ``_get_scheduler(optimizer, scheduler: str, ...)``: ``if scheduler == "constantlr": ... elif scheduler == "warmupcosine":
    return get_cosine_schedule_with_warmup(...)``): three or more branches of one function on one variable, none of them
    switched off by a known value. Any one of them is an option, not the run's schedule."""
    groups: dict[tuple[str, str | None, str], list[tuple[Call, str]]] = {}
    for c in calls:
        choice = _menu_choice(c.guard)
        if choice:
            groups.setdefault((c.path, c.func, choice[0]), []).append((c, choice[1]))
    out: list[Call] = []
    for members in groups.values():
        if len({v for _, v in members}) >= 3 and not any(guard_off(f, c) for c, _ in members):
            out += [c for c, _ in members]
    return out


def _top_keys(f: Facts, path: str) -> set[str]:
    ff = f.files.get(path)
    if ff is None:
        return set()
    return {str(e.keys[0]) for e in ff.configs if e.keys and e.fmt in ("yaml", "json", "toml")}


def _lf_yamls(f: Facts) -> list[str]:
    """LLaMA-Factory training configs (``stage`` plus ``template``/``finetuning_type``/``dataset``)."""
    out = []
    for path in f.files_of_kind("yaml", "json"):
        keys = _top_keys(f, path)
        if "stage" in keys and keys & {"template", "finetuning_type", "dataset"}:
            out.append(path)
    return sorted(out)


def _axolotl_yamls(f: Facts) -> list[str]:
    """axolotl training configs: ``base_model`` names a model (a string, not a section: ludwig's UI metadata for its LLM
    schema has ``base_model:`` and ``adapter:`` sections of field descriptions) next to an axolotl training key."""
    out = []
    for path in f.files_of_kind("yaml"):
        keys = _top_keys(f, path)
        if "base_model" in keys and keys & {"micro_batch_size", "sequence_len", "sample_packing", "adapter", "datasets"} and any(
                e.keys == ("base_model",) and isinstance(e.value, str) for e in f.files[path].configs):
            out.append(path)
    return sorted(out)


def _first_entry(f: Facts, path: str, *keys: str) -> Any:
    """The first top-level entry of ``keys`` in a config file (suppressions applied), else its first entry."""
    entries = [e for e in f.records("configs") if e.path == path]
    for e in entries:
        if e.keys and str(e.keys[0]) in keys:
            return e
    return entries[0] if entries else None


def _num(v: Any) -> float | None:
    """A number, also from composer-style durations (``"100ba"``, ``"0.03dur"``)."""
    n = as_number(v)
    if n is not None:
        return n
    if isinstance(v, str):
        m = re.match(r"^\s*([0-9]*\.?[0-9]+)", v)
        if m:
            return float(m.group(1))
    return None


# --------------------------------------------------------------------------------------
# G1 learning-rate schedule
# --------------------------------------------------------------------------------------

_DECAY_WORDS = ("cos", "linear", "poly", "inverse", "sqrt", "wsd", "decay", "exponential", "step", "plateau", "anneal",
                "cyclic", "noam", "trapezoid", "rex", "multistep")
_CONSTANT = {"constant", "fixed", "const", "constantlr", "constant_lr", "none", "null", "no", ""}


_WARMDOWN_KEYS = ("warmdown_ratio", "warmdown_iters", "warmdown_steps", "warmdown_frac", "cooldown_frac", "cooldown_ratio",
                  "cooldown_steps", "cooldown_iters")


def _ds_overrides_hf_decay(f: Facts, r: Any) -> tuple[ConfigEntry, list[Setting], list[str]] | None:
    """A decay named only by the HF Trainer's ``lr_scheduler_type`` while every DeepSpeed config the runs use has a scheduler
    that does not decay (DeepSeek-Coder: ``--lr_scheduler_type "cosine"`` in the README's command beside
    ``configs/ds_config_zero3.json``'s ``"scheduler": {"type": "WarmupLR"}``): with a ``scheduler`` section, transformers'
    DeepSpeed integration lets DeepSpeed build the schedule and ignores ``lr_scheduler_type``, so the run warms up and stays
    at its peak. The DeepSpeed scheduler entry, the overridden settings and the launch files that pass no DeepSpeed config
    (they keep the Trainer's schedule); None otherwise."""
    if not r.decay or not all(isinstance(x, Setting) and x.name == "lr_scheduler_type" for x in r.decay) or not uses_hf_trainer(f):
        return None
    unlaunched = unlaunched_ds_configs(f)
    ds_files = {e.path for e in f.config("zero_optimization") if e.path.endswith(".json") and e.path not in unlaunched
                and not _TEST_FILE.search(e.path)}
    flat = [e for e in r.constant if isinstance(e, ConfigEntry) and _ds_scheduler(f, e)]
    if not ds_files or not flat or ds_files - {e.path for e in flat}:
        return None
    # a launch that passes no DeepSpeed config keeps the Trainer's schedule (Qwen-VL ``finetune_lora_single_gpu.sh`` beside
    # four launches with ``--deepspeed finetune/ds_config_zero*.json``): it must be the exception
    with_ds = {s.path for s in f.settings(*DS_REF_NAMES) if s.source == "launcher"}
    launched = [s for s in r.decay if s.source == "launcher"]
    plain = [s for s in launched if s.path not in with_ds]
    if plain and len(plain) * 2 >= len(launched):
        return None
    return flat[0], [s for s in r.decay if s not in plain] + plain, sorted({s.path for s in plain})


def _ds_scheduler(f: Facts, e: ConfigEntry) -> bool:
    """``scheduler.type`` of a DeepSpeed config (a file with ``zero_optimization`` or ``train_micro_batch_size_per_gpu`` beside it)."""
    return e.dotted == "scheduler.type" and any(x.path == e.path for x in f.config("zero_optimization", "train_micro_batch_size_per_gpu"))


def _classify_schedule(name: str) -> tuple[bool, bool] | None:
    """(warmup, decay) implied by a schedule name, or None when the name says nothing."""
    s = name.strip().lower().replace("-", "_").replace(" ", "_").rsplit(".", 1)[-1]
    if s in _CONSTANT:
        return (False, False)
    if "onecycle" in s or "one_cycle" in s:
        return (True, True)
    warm = "warmup" in s
    if "constant" in s:
        return (warm, False)
    if s in {"warmuplr", "warmup", "warmup_lr"}:
        return (True, False)
    decay = any(k in s for k in _DECAY_WORDS) or "warmdown" in s or "cooldown" in s
    if warm or decay:
        return (warm, decay)
    return None


def _json_recipes(constant: int, cosine: int) -> dict[str, str]:
    """Firefly's shape: ``train.py`` reads one of many JSON recipes (``train_args/sft/qlora/qwen-7b-sft-qlora.json``)."""
    files = {"train.py": (
        "from transformers import HfArgumentParser, Trainer, TrainingArguments\n\n\ndef main():\n"
        "    parser = HfArgumentParser((CustomizedArguments, TrainingArguments))\n"
        "    args, training_args = parser.parse_json_file(json_file=train_args_file)\n"
        "    trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset)\n    trainer.train()\n")}
    for i in range(constant + cosine):
        kind = "constant_with_warmup" if i < constant else "cosine"
        files[f"train_args/sft/qlora/model{i}-sft-qlora.json"] = (
            '{\n    "output_dir": "output/firefly",\n    "num_train_epochs": 1,\n    "learning_rate": 2e-4,\n'
            f'    "lr_scheduler_type": "{kind}",\n    "warmup_steps": 100,\n    "fp16": true\n}}\n')
    return files


_MIN_VOTING_RECIPES = 5


def _schedule_vote(f: Facts) -> tuple[str, int, int, list[Setting], Counter[str]] | None:
    """The schedule most recipe files name when it does not decay and the recipes disagree (Firefly: ``"lr_scheduler_type":
    "constant_with_warmup"`` in 51 of its 65 JSON recipes, ``cosine`` in 14): (name, its recipes, recipes, its settings,
    recipes per name). None when fewer than five recipe files name one (verl's four base configs, its PPO defaults and an
    optimizer preset, are no recipe set to vote over), no name has a majority, or the majority decays."""
    by_file: dict[str, Setting] = {}
    for s in f.settings("lr_scheduler_type"):
        if s.source == "config" and s.path.endswith((".json", ".yaml", ".yml")) and isinstance(s.value, str):
            by_file[s.path] = s
    if len(by_file) < _MIN_VOTING_RECIPES:
        return None
    counts: Counter[str] = Counter(s.value.strip() for s in by_file.values())
    top, n = counts.most_common(1)[0]
    if len(counts) < 2 or n * 2 <= len(by_file) or (_classify_schedule(top) or (False, True))[1]:
        return None
    cited = [s for s in by_file.values() if s.value.strip() == top]
    return top, n, len(by_file), cited[:10], counts


_SCHEDULE_NAME_KEYS = ("lr_scheduler_type", "lr_scheduler", "scheduler", "lr_schedule", "lr_decay_style", "scheduler_type", "decay_type",
                       "lr_scheduler_name", "decay_style", "lr_policy", "sched", "warmup_style", "lr_scheduler_style")
#: the key of a Hydra defaults-list entry that picks the LR scheduler's config group (``override /scheduler``, ``/lr_scheduler``)
_HYDRA_SCHEDULER = lazy_compile(r"(override\s+)?/?(\w+/)*(lr_)?sched(uler)?(@[\w.]+)?")
_SCHEDULE_SECTION_KEYS = ("scheduler.type", "lr_scheduler.type", "sched.name", "scheduler.name", "lr_scheduler.name",
                          "lr_schedule.name", "lr_scheduler._component_", "scheduler._component_", "optim.sched.name")
_WARMUP_STRICT = ("warmup_ratio", "warmup_steps", "num_warmup_steps", "lr_warmup_iters", "lr_warmup_fraction",
                  "lr_warmup_samples", "lr_warmup_steps", "lr_warmup_ratio", "warmup_num_steps", "warmup_proportion",
                  "t_warmup", "warmup_updates", "warmup_t", "lr_warmup_steps_ratio", "warmup_steps_ratio")
_WARMUP_LOOSE = ("warmup_iters", "warmup_epochs", "warmup", "warmup_tokens", "warmup_iter", "n_warmup_steps")
_LR_NAMES = ("learning_rate", "lr", "max_lr", "min_lr", "base_lr", "peak_lr", "lr_decay_iters", "decay_lr", "init_lr",
             "lr_warmup_iters", "lr_scheduler_type")
_LR_CALL = lazy_compile(r"(?i)(sched|warmup|lr$|lr_|^lr|learning_rate|trainingarguments|config$|args$)")
_TORCH_DECAY = ("CosineAnnealingLR", "CosineAnnealingWarmRestarts", "StepLR", "MultiStepLR", "ExponentialLR",
                "PolynomialLR", "ReduceLROnPlateau", "CyclicLR")
_HF_SCHED_FUNCS = ("get_scheduler", "get_cosine_schedule_with_warmup", "get_linear_schedule_with_warmup",
                   "get_polynomial_decay_schedule_with_warmup", "get_cosine_with_hard_restarts_schedule_with_warmup",
                   "get_cosine_with_min_lr_schedule_with_warmup", "get_inverse_sqrt_schedule", "get_wsd_schedule",
                   "get_constant_schedule_with_warmup", "get_constant_schedule", "get_warmup_stable_decay_schedule")


def _call_short_of(setting: Setting) -> str | None:
    if setting.source != "call":
        return None
    return setting.key.split("(", 1)[0]


def _setting_call(f: Facts, s: Setting) -> Call | None:
    """The call a call-keyword setting (``get_linear_schedule_with_warmup(num_warmup_steps=)``) belongs to."""
    short = _call_short_of(s)
    if not short or s.path not in f.files:
        return None
    for c in f.files[s.path].calls:
        if c.short == short.rsplit(".", 1)[-1] and (c.line == s.line or s.line in c.kw_lines.values()):
            return c
    return None


def _call_func(f: Facts, s: Setting) -> str | None:
    c = _setting_call(f, s)
    return c.func if c is not None else None


def _resolve(f: Facts, v: Any) -> list[Any]:
    """Values of an argument: the constant, or the effective values of ``args.x``."""
    if isinstance(v, Expr):
        if v.ref:
            return [s.value for s in f.effective(v.ref) if not isinstance(s.value, Expr)]
        return []
    return [v]


def _lr_files(f: Facts) -> set[str]:
    paths = {s.path for s in f.settings(*_LR_NAMES)}
    paths |= {c.path for c in f.calls(*_HF_SCHED_FUNCS, *_TORCH_DECAY, "OneCycleLR", "LambdaLR", "LinearLR")}
    return paths


def _minority_launches(f: Facts, sites: list[Any]) -> tuple[list[Any], int, int, str] | None:
    """The launch-flag settings among ``sites`` when every one is a launch flag of one script and fewer than half of that
    script's launches pass any of them: (those settings, launches passing one, launches of the script, the script)."""
    flags = [s for s in sites if isinstance(s, Setting) and s.source == "launcher" and s.script]
    if not flags or len(flags) != len(sites) or len({s.script for s in flags}) != 1:
        return None
    script = flags[0].script or ""
    launches = [x for x in f.launches() if x.script == script]
    passing = {s.path for s in flags}
    if len(launches) < 3 or len(passing) * 2 >= len({x.path for x in launches}):
        return None
    return flags, len(passing), len({x.path for x in launches}), script


#: nanochat ``scripts/base_train.py``: warmup, a constant phase, and a linear warmdown whose length is a ratio of the steps
_WSD_SCRIPT = (
    "import argparse\n\nparser = argparse.ArgumentParser()\n"
    "parser.add_argument('--warmup-steps', type=int, default=40, help='number of steps for LR warmup')\n"
    "parser.add_argument('--warmdown-ratio', type=float, default={warmdown}, help='ratio of iterations for LR warmdown')\n"
    "args = parser.parse_args()\nnum_iterations = 10000\n\n\n"
    "def get_lr_multiplier(it):\n    warmup_iters = args.warmup_steps\n"
    "    warmdown_iters = round(args.warmdown_ratio * num_iterations)\n"
    "    if it < warmup_iters:\n        return (it + 1) / warmup_iters\n"
    "    elif it <= num_iterations - warmdown_iters:\n        return 1.0\n"
    "    progress = (num_iterations - it) / warmdown_iters\n    return progress\n\n\n"
    "for step in range(num_iterations):\n    for group in optimizer.param_groups:\n"
    "        group['lr'] = group['initial_lr'] * get_lr_multiplier(step)\n"
    "    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n"
)


class _Sched:
    def __init__(self) -> None:
        self.warm: list[Any] = []
        self.decay: list[Any] = []
        self.constant: list[Any] = []
        self.no_warm: list[Any] = []
        self.custom: list[Any] = []
        self.names: list[str] = []
        self.defaults: dict[int, tuple[str, Any]] = {}  # id(site) -> (key, value) of a framework default in effect

    def evidence(self, items: list[Any]) -> list[Evidence]:
        out = []
        for x in items:
            key, value = self.defaults.get(id(x), (None, None))
            out.append(Facts.ev(x, key=key, value=value))
        return out


def _g1_scan(f: Facts) -> _Sched:
    r = _Sched()
    lr_files = _lr_files(f)
    hf_key_seen = False
    # nanoGPT-style ``decay_lr`` switch: when every launch/config leaves it off, the hand-written
    # warmup/cosine ``get_lr`` is never called and the LR is constant
    decay_lr = f.effective("decay_lr")
    decay_off = bool(decay_lr) and all(truthy(s.value) is False for s in decay_lr)
    # schedule names from configs, flags, call keywords and code defaults
    for s in f.effective(*_SCHEDULE_NAME_KEYS):
        if not isinstance(s.value, str):
            continue
        short = _call_short_of(s)
        if short and not _LR_CALL.search(short) and not declared_dict(f, s):
            continue  # (a module-level ``dict(lr_scheduler_type=...)`` of a Python config is a declared setting)
        kind = _classify_schedule(s.value)
        if kind is None:
            continue
        hf = s.name == "lr_scheduler_type"
        hf_key_seen = hf_key_seen or hf
        r.names.append(s.value)
        warm, decay = kind
        if warm and _zero_sibling_warmup(f, s):
            warm = False  # ``scheduler: constant_with_warmup`` beside ``num_warmup_steps: 0``: the name's warmup is 0 steps
        if warm and not hf:
            r.warm.append(s)
        if decay and _held_past_any_run(f, s):
            decay = False  # (the section holds the rate for 10^7+ steps or stretches the decay over them: constant in practice)
        if decay:
            r.decay.append(s)
        if not decay and (not warm or hf):
            # (HF ``constant_with_warmup``: its warmup is the arguments' ``warmup_steps``/``warmup_ratio``, judged with them;
            # the name is the evidence that no decay follows)
            r.constant.append(s)
    # (a DeepSpeed config nothing passes, beside those the launches pass, is an alternative whose scheduler is not the run's:
    # LongLoRA's README commands pass ``stage2.json``, with no scheduler, and ``stage3.json``'s ``WarmupDecayLR`` is only
    # "you could change stage2.json to stage3.json")
    unlaunched = unlaunched_ds_configs(f)
    # (and a Hydra defaults entry that picks the scheduler config group: flash-attention's ``- override /scheduler:
    # cosine-warmup-timm`` in its experiment recipes, naming ``configs/scheduler/cosine-warmup-timm.yaml``)
    hydra = [e for e in f.records("configs") if len(e.keys) == 3 and e.keys[0] == "defaults" and isinstance(e.keys[2], str)
             and _HYDRA_SCHEDULER.fullmatch(e.keys[2].strip()) and not _TEST_FILE.search(e.path)]
    for e in [*f.config(*_SCHEDULE_SECTION_KEYS), *hydra]:
        if not isinstance(e.value, str) or e.path in unlaunched:
            continue
        kind = _classify_schedule(e.value)
        if kind is None:
            continue
        r.names.append(e.value.rsplit(".", 1)[-1])
        warm, decay = kind
        if decay and _held_past_any_run(f, e):
            decay = False  # (NeMo ``CosineAnnealing`` beside ``constant_steps: 100000000``: the rate never leaves its peak)
        if warm:
            r.warm.append(e)
        if decay:
            r.decay.append(e)
        if not decay and (not warm or _ds_scheduler(f, e)):
            # (a DeepSpeed config's ``"scheduler": {"type": "WarmupLR"}`` replaces the HF Trainer's own schedule: the
            # learning rate stays at its peak after the warmup, whatever lr_scheduler_type says; dolly's a100_config.json)
            r.constant.append(e)
    # a menu of scheduler builders dispatched on a string nothing resolves: neither its schedules nor its warmups are the run's
    hf_sched = f.calls(*_HF_SCHED_FUNCS)
    menu_calls = _unresolved_menu(f, hf_sched)
    menu = {id(c) for c in menu_calls}
    menu_lines = {(c.path, ln) for c in menu_calls for ln in (c.line, *(c.kw_line(k) for k in c.kwargs))}
    # warmup amounts
    unpicked = _unpicked_config_defaults(f)
    for names, strict in ((_WARMUP_STRICT, True), (_WARMUP_LOOSE, False)):
        for s in f.effective(*names):
            if (s.path, s.line) in menu_lines or (s.source == "field-default" and (s.path, s.line) in unpicked):
                continue
            if _read_by_other_call(f, s, names):
                continue
            short = _call_short_of(s)
            if short and (not _LR_CALL.search(short) or short == "schedule") and not declared_dict(f, s):
                continue  # e.g. torch.profiler.schedule(warmup=1)
            if not strict and not decay_off and isinstance(s.value, Expr) and short and _positive_guarded_warmup(f, s):
                r.warm.append(s)  # ``AnnealingLR(warmup_iter=int(self.warm_up * iters))`` built only when ``self.warm_up > 0``
                continue
            if not strict and (s.path not in lr_files or decay_off):
                continue
            n = _num(s.value)
            if n is not None:
                (r.warm if n > 0 else r.no_warm).append(s)
            elif isinstance(s.value, Expr) and strict and short and _zero_config_warmup(f, s.value):
                r.no_warm.append(s)  # ``num_warmup_steps=optim_config.num_warmup_steps`` with every recipe giving 0
            elif isinstance(s.value, Expr) and strict and short and _hf_default_warmup(f, s.value):
                r.no_warm.append(s)  # ``num_warmup_steps=args.warmup_steps``: the HF arguments' warmup, left at its 0
            elif isinstance(s.value, Expr) and strict and short and _zero_warmup_product(f, s.path, _call_func(f, s), s.value):
                r.no_warm.append(s)  # ``num_warmup_steps=lr_warmup_steps`` computed from a warmup ratio that is 0
            elif isinstance(s.value, Expr) and strict and short:
                r.warm.append(s)  # computed warmup passed to a scheduler/arguments call
    # nanoGPT / Megatron style decay switches
    for s in decay_lr:
        if truthy(s.value):
            r.decay.append(s)
        elif truthy(s.value) is False:
            r.constant.append(s)
    if not decay_off:
        for s in f.effective("lr_decay_iters", "lr_decay_samples", "lr_decay_steps", "lr_decay_tokens"):
            n = _num(s.value)
            if n and n > 0:
                r.decay.append(s)
    # a warmup-stable-decay schedule's final phase (nanochat ``--warmdown-ratio 0.65``, modded-nanogpt ``cooldown_frac``)
    for s in f.effective(*_WARMDOWN_KEYS):
        n = _num(s.value)
        if n and n > 0 and not isinstance(s.value, bool):
            r.decay.append(s)
            r.names.append("warmdown")
    # scheduler calls
    for c in _live(f, [c for c in hf_sched if id(c) not in menu]):
        _hf_sched_call(f, c, r)
    for c in _live(f, f.calls("OneCycleLR")):
        r.warm.append(c)
        r.decay.append(c)
        r.names.append("onecycle")
    for c in _live(f, f.calls(*_TORCH_DECAY)):
        r.decay.append(c)
        r.names.append(c.short)
    for c in _live(f, f.calls("LinearLR")):
        start = _num(c.kwargs.get("start_factor", c.args[1] if len(c.args) > 1 else 1 / 3))
        end = _num(c.kwargs.get("end_factor", c.args[2] if len(c.args) > 2 else 1.0))
        if start is not None and end is not None and start < end:
            r.warm.append(c)
        else:
            r.decay.append(c)
    for c in f.calls("WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "CosineAnnealingWithWarmupScheduler",
                     "LinearWithWarmupScheduler", "CosineLRScheduler", "ConstantWithWarmupScheduler"):
        kind = _classify_schedule(c.short) or (False, True)
        if c.short == "CosineLRScheduler":
            w = _num(c.kwargs.get("warmup_t", 0))
            kind = (bool(w and w > 0), True)
        if kind[0]:
            r.warm.append(c)
        if kind[1]:
            r.decay.append(c)
    for c in f.calls("LambdaLR", "MultiplicativeLR"):
        if c.func in _HF_SCHED_FUNCS and not c.func.startswith("get_scheduler"):
            # the body of a project's own copy of an HF builder (VeOmni/verl ``def get_constant_schedule_with_warmup(...):
            # ... return LambdaLR(optimizer, _lr_lambda)``): the builder's call sites are judged by name and warmup above
            continue
        fn = c.kwargs.get("lr_lambda", c.args[1] if len(c.args) > 1 else None)
        text = (fn.text if isinstance(fn, Expr) else str(fn or "")).lower()
        body = [x for x in f.calls("math.cos", "numpy.cos", "torch.cos", "np.cos") if x.func and x.func.lower() in text]
        warm = "warmup" in text
        decay = any(k in text for k in ("cos", "decay", "linear", "poly", "sqrt")) or bool(body)
        if warm:
            r.warm.append(c)
        if decay:
            r.decay.append(c)
        if not warm and not decay:
            r.custom.append(c)
    # a hand-written cosine schedule (nanoGPT's get_lr), unless it is switched off or only called behind an off flag
    for c in f.calls("math.cos", "numpy.cos", "np.cos"):
        # (or a method of a scheduler class of the project's own: UniTok ``class LRScheduler`` whose ``step(cur_iter)``
        # warms up linearly, then anneals with ``math.cos(math.pi * past)``; its callers build the class)
        owner = class_at(f, c.path, c.line) if c.func else None
        by_class = bool(owner and re.search(r"(?i)(lr|learning_rate)_?sched", owner))
        if c.func and (by_class or re.search(r"(?i)(lr|learning_rate|sched)", c.func)) and not decay_off:
            callers = [x for x in f.calls(owner)] if by_class else [x for x in f.calls(c.func) if x.func != c.func]
            if by_class and not callers:
                continue  # a library's scheduler class its users build (pytorch-accelerated ``CosineLrScheduler``)
            if callers and not _live(f, callers):
                continue
            r.decay.append(c)
            r.names.append("cosine")
            # (an argument or config value, not a scheduler object's own ``self.num_warmup_steps``: whether that object warms up is
            # its constructor's call, which the class reading below judges: fairseq2's cosine annealing, built with 0)
            warm_names = {m.rsplit(".", 1)[-1] for m in re.findall(r"[\w.]*warm_?up\w*", c.guard or "", re.I)
                          if not m.startswith("self.")}
            if warm_names and any((_num(s.value) or 0) > 0 for s in f.effective(*warm_names)):
                # the cosine runs in the ``else`` of a warmup test (MAE's ``lr_sched.adjust_learning_rate``, copied by LaVIN and
                # LLaMA-Adapter: ``if epoch < args.warmup_epochs: lr = args.lr * epoch / args.warmup_epochs`` else cosine),
                # with a positive warmup set somewhere (LaVIN's launches: ``--warmup_epochs 2``)
                r.warm.append(c)
            elif by_class and c.path in f.files and any("warmup" in a.text.lower() and class_at(f, a.path, a.line) == owner
                                                      for a in f.files[c.path].attr_assigns):
                r.warm.append(c)  # the class keeps a warmup length (``self.wp_iter = schedule['warmup_iter']``)
    # framework defaults
    if not hf_key_seen and not any(s.name == "lr_scheduler" for s in r.decay + r.constant if isinstance(s, Setting)):
        for path in _axolotl_yamls(f):
            e = _first_entry(f, path, "base_model")
            if e is not None and not f.config("lr_scheduler") and not r.decay:
                r.decay.append(e)
                r.names.append("cosine (axolotl default)")
                r.defaults[id(e)] = ("lr_scheduler", "cosine (axolotl default)")
            if e is not None and not any(s.path == path for s in r.no_warm):
                r.warm.append(e)
                r.defaults.setdefault(id(e), ("warmup_steps", "3% of steps (axolotl default)"))
        sites = hf_sites_training_first(f)
        lf = _lf_yamls(f)
        if (sites or lf) and not r.decay and not r.constant:
            site = sites[0] if sites else _first_entry(f, lf[0], "stage")
            r.decay.append(site)
            r.names.append("linear (HF default)")
            r.defaults[id(site)] = ("lr_scheduler_type", "linear (HF default, warmup 0)")
    _drop_unchosen(f, r)
    _drop_unpicked_registry(f, r)
    return r


_PROFILER_CLASS = lazy_compile(r"(?i)profil")



def _read_by_other_call(f: Facts, s: Setting, names: tuple[str, ...]) -> bool:
    """A setting of another name that only non-LR calls' warmup keywords read: ``OnlineDynamicEWMA(warmup_steps=
    cfg.ewma_warmup_steps)`` or ``torch.profiler.schedule(warmup=args.profiler_schedule_warmup)`` make the field they read a
    setting of ``warmup_steps``/``warmup``, but it warms up that call (a moving average, a profiler), not the learning rate."""
    if s.name in names:
        return False
    readers = [c for n in names for c in f.calls_with_kw(n)
               if any(k.lower() == n and isinstance(v, Expr) and v.ref and v.ref.lower() == s.name for k, v in c.kwargs.items())]
    return bool(readers) and not any(_LR_CALL.search(c.short) and c.short != "schedule" for c in readers)


def _unpicked_config_defaults(f: Facts) -> set[tuple[str, int]]:
    """Warmup field defaults that are not the run's LR warmup (their places):

    * a profiler's config class (``TorchProfilerConfig.num_warmup_steps = 1``: the steps the profiler warms up before it
      records), as ``torch.profiler.schedule(warmup=1)`` is skipped among calls;
    * a menu of scheduler config classes in one file, each with its own warmup default, where some are instantiated as
      the default of a field (``config: object = field(default_factory=lambda: CosineAnnealingLRConfig())``): the others
      (``MyleLRConfig.num_warmup_steps = 1``, never instantiated) are alternatives a config may name, not the default run.
    """
    fields = [s for s in f.settings(*_WARMUP_STRICT, *_WARMUP_LOOSE) if s.source == "field-default" and "." in s.key]
    out = {(s.path, s.line) for s in fields if _PROFILER_CLASS.search(s.key.rsplit(".", 1)[0])}
    by_file: dict[str, dict[str, list[Setting]]] = {}
    for s in fields:
        if (s.path, s.line) not in out:
            by_file.setdefault(s.path, {}).setdefault(s.key.rsplit(".", 1)[0], []).append(s)
    for classes in by_file.values():
        if len(classes) < 2:
            continue
        picked = {cls for cls in classes if any(c.short == cls for c in f.calls(cls))}
        if not picked or len(picked) == len(classes):
            continue
        out |= {(s.path, s.line) for cls, ss in classes.items() if cls not in picked for s in ss}
    return out


_NAME_TEST = lazy_compile(r"""^\(?(?:[\w.]+\.)?(\w+)\s*==\s*['"]([\w.+-]+)['"]\)?$""")


def _unchosen_guard(guard: str | None, chosen: set[str]) -> bool:
    """A branch taken only when a schedule-name setting equals a value no setting chooses (``elif cfg.lr_scheduler_type ==
    "cosine":`` while ``lr_scheduler_type`` is "constant"); negated conjuncts (``not (x == "linear")``) are the skipped branches."""
    for part in (guard or "").split(" and "):
        m = _NAME_TEST.match(part.strip())
        if m and m.group(1) in _SCHEDULE_NAME_KEYS and m.group(2).lower() not in chosen:
            return True
    return False


def _drop_unpicked_registry(f: Facts, r: _Sched) -> None:
    """Scheduler code inside a builder that a registry of builders keyed by name offers but the run's schedule name does not
    pick (h2o-llmstudio ``Schedulers._schedulers = {"Cosine": get_cosine_schedule_with_warmup, "Linear": ..., "Constant":
    constant_schedule_with_warmup}`` looked up by ``cfg.training.schedule``, ``"Cosine"`` by default): the other builders'
    warmups and constants are options, not the run's schedule."""
    menus: dict[tuple[str, Any], dict[str, str]] = {}
    for e in f.records("configs"):
        if (len(e.keys) == 2 and isinstance(e.keys[1], str) and isinstance(e.value, Expr) and e.value.ref
                and e.path.endswith(".py")):
            menus.setdefault((e.path, e.keys[0]), {})[e.keys[1]] = e.value.ref
    names = [s.value for s in f.effective(*_SCHEDULE_NAME_KEYS, "schedule") if isinstance(s.value, str)]
    unpicked: set[str] = set()
    for entries in menus.values():
        if len(set(entries.values())) < 2 or not names or not all(n in entries for n in names):
            continue
        picked = {entries[n] for n in names}
        unpicked |= {fn for fn in entries.values() if fn not in picked}
    if unpicked:
        def offered(x: Any) -> bool:
            if isinstance(x, Setting) and x.source == "call":
                x = _setting_call(f, x)  # a builder call's keyword (``num_warmup_steps=``) goes with its call
            if not (isinstance(x, Call) and x.func):
                return False
            fn = x.func.rsplit(".", 1)[-1]
            if fn in unpicked:
                return True
            # a nested ``lr_lambda`` passed by name (``LambdaLR(optimizer, lr_lambda)``) only by unpicked builders
            passers = [c for c in (f.files[x.path].calls if x.path in f.files else ()) if c.func and c.func != x.func
                       and any(isinstance(a, Expr) and a.text == x.func for a in (*c.args, *c.kwargs.values()))]
            return bool(passers) and all(c.func.rsplit(".", 1)[-1] in unpicked for c in passers)

        for part in (r.warm, r.decay, r.custom, r.constant):
            part[:] = [x for x in part if not offered(x)]
        # the picked entry names the schedule (``Cosine``), not the builders the registry also offers
        r.names[:0] = [n.lower() for n in dict.fromkeys(names) if _classify_schedule(n) is not None]


def _drop_unchosen(f: Facts, r: _Sched) -> None:
    """Scheduler calls in a branch of a schedule-name comparison that the effective name does not select, or inside a helper
    every call of which sits in such a branch (AReaL's own ``get_cosine_schedule_with_warmup``, called only under
    ``lr_scheduler_type == "cosine"`` with the default ``"constant"``), are alternatives, not the run's schedule."""
    chosen = {s.value.strip().lower() for s in f.effective(*_SCHEDULE_NAME_KEYS) if isinstance(s.value, str)}
    if not chosen:
        return

    def unchosen(x: Any, depth: int = 0) -> bool:
        if isinstance(x, Setting) and x.source == "call":
            x = _setting_call(f, x)  # a scheduler call's keyword (``num_warmup_steps=``) goes with its call
        if not isinstance(x, Call):
            return False
        if _unchosen_guard(x.guard, chosen):
            return True
        if not x.func or depth > 1:
            return False
        callers = [c for c in f.calls(x.func) if c.func != x.func]
        if not callers and x.path in f.files:
            # a nested ``lr_lambda`` is not called but passed by name (``LambdaLR(optimizer, lr_lambda)``): judged where it is passed
            callers = [c for c in f.files[x.path].calls if c.func and c.func != x.func
                       and any(isinstance(a, Expr) and a.text == x.func for a in (*c.args, *c.kwargs.values()))]
            return bool(callers) and all(unchosen(c, depth + 1) for c in callers)
        return bool(callers) and all(_unchosen_guard(c.guard, chosen) for c in callers)

    for part in (r.warm, r.decay, r.custom):
        part[:] = [x for x in part if not unchosen(x)]


#: (or its helper that reads them, ``training_args.get_warmup_steps(num_training_steps)``: LLaMA-Factory's PPO stage)
_HF_WARMUP_REF = lazy_compile(r"\b\w+\.(warmup_steps|warmup_ratio|get_warmup_steps\(\s*\w*\s*\))(?![\w(])")


def _hf_default_warmup(f: Facts, v: Expr) -> bool:
    """A warmup amount that only scales the HF Trainer arguments' own warmup (``num_warmup_steps=args.warmup_steps``,
    ``args.warmup_steps * 2`` in a custom optimizer's ``get_scheduler``) while nothing in the project sets
    ``warmup_steps``/``warmup_ratio``: HF's default, 0. Not when the project defines or sets those names itself."""
    if not _HF_WARMUP_REF.search(v.text) or re.sub(r"[\s\d.*+/()-]", "", _HF_WARMUP_REF.sub("", v.text)):
        return False
    if not uses_hf_trainer(f):
        return False
    return not [s for s in f.effective("warmup_steps", "warmup_ratio") if not (s.source == "call" and isinstance(s.value, Expr))]


#: SkyRL 0.3: the recipe's optimizer section names a warmup schedule and its warmup amount; the worker reads both
def _named_warmup(steps: int) -> dict[str, str]:
    return {
        "pkg/config/ppo_base_config.yaml": (
            "trainer:\n  policy:\n    optimizer_config:\n      lr: 1.0e-6\n      weight_decay: 1e-2\n"
            f"      num_warmup_steps: {steps} # number of mini-batch steps to warmup the optimizer for\n"
            "      scheduler: \"constant_with_warmup\"\n"),
        "pkg/workers/policy_worker.py": (
            "import torch\nfrom transformers.trainer import get_scheduler\n\n\nclass PolicyWorker:\n"
            "    def init_model(self, model, total_steps):\n        optim_config = self.cfg.trainer.policy.optimizer_config\n"
            "        optimizer = torch.optim.AdamW(model.parameters(), lr=optim_config.lr, weight_decay=optim_config.weight_decay)\n"
            "        lr_scheduler = get_scheduler(\n            self.cfg.trainer.policy.optimizer_config.scheduler,\n"
            "            optimizer,\n            num_warmup_steps=optim_config.num_warmup_steps,\n"
            "            num_training_steps=total_steps,\n        )\n        return optimizer, lr_scheduler\n"),
    }


def _zero_sibling_warmup(f: Facts, s: Setting) -> bool:
    """A config file's schedule name whose own section sets every warmup amount to 0 (SkyRL ``optimizer_config:
    num_warmup_steps: 0`` / ``scheduler: "constant_with_warmup"``): transformers' ``get_scheduler`` takes the warmup from
    the amount, so the run warms up for 0 steps."""
    if s.source != "config" or "." not in s.key:
        return False
    section = s.key.rsplit(".", 1)[0]
    amounts = [x for x in f.effective(*_WARMUP_STRICT) if x.path == s.path and x.key.rsplit(".", 1)[0] == section]
    return bool(amounts) and all(_num(x.value) == 0 for x in amounts)


#: a schedule section's hold phase or decay horizon no run reaches (steps)
_NEVER_STEPS = 10_000_000


def _held_past_any_run(f: Facts, s: Setting | ConfigEntry) -> bool:
    """A config file's decaying schedule whose own section holds the rate or stretches the decay over 10^7 steps or more,
    or decays to a floor no lower than the file's learning rate: trlx's NeMo configs (``sched: name: CosineAnnealing``
    beside ``constant_steps: 100000000``) keep the learning rate at its peak."""
    keys = getattr(s, "keys", None)
    if keys is not None:  # a config section's entry
        if len(keys) < 2:
            return False
        section = ".".join(str(k) for k in keys[:-1])
    elif s.source != "config" or "." not in s.key:
        return False
    else:
        section = s.key.rsplit(".", 1)[0]
    mine = (section, f"{section}.kwargs")
    # (a horizon counted in tokens or samples is no step count: OLMo's ``scheduler: {units: tokens, t_max: 5e12}``)
    units = [x for x in f.effective("units") if x.path == s.path and x.key.rsplit(".", 1)[0] in mine]
    if any(str(x.value).strip().lower() not in ("steps", "step") for x in units):
        return False
    if any(x.path == s.path and x.key.rsplit(".", 1)[0] in mine and (_num(x.value) or 0) >= _NEVER_STEPS
           for x in f.effective("constant_steps", "T_max", "t_max")):
        return True
    # a floor at the peak: trlx's ``scheduler: {name: cosine_annealing, kwargs: {T_max: 10000, eta_min: 1.412e-4}}`` beside
    # ``optimizer: {kwargs: {lr: 1.412e-4}}`` decays from the rate to itself
    floors = [n for x in f.effective("eta_min", "min_lr") if x.path == s.path and x.key.rsplit(".", 1)[0] in mine
              and (n := _num(x.value)) is not None]
    peaks = [n for x in f.effective("lr", "learning_rate") if x.path == s.path and (n := _num(x.value)) is not None]
    return bool(floors and peaks) and min(floors) >= max(peaks)


def _nemo_sched(constant_steps: int, min_lr: str = "5e-05") -> dict[str, str]:
    """A NeMo GPT recipe with a CosineAnnealing schedule (trlx ``configs/nemo_configs/megatron_1.3b.yaml``)."""
    return {
        "configs/nemo_configs/megatron_1.3b.yaml": (
            "trainer:\n  devices: 8\n  max_steps: 200\nmodel:\n  optim:\n    name: distributed_fused_adam\n    lr: 6e-05\n"
            f"    sched:\n      name: CosineAnnealing\n      warmup_steps: 0\n      constant_steps: {constant_steps}\n"
            f"      min_lr: {min_lr}\n"),
        "train.py": ("from nemo.collections.nlp.models.language_modeling.megatron_gpt_model import MegatronGPTModel\n"
                     "cfg = load('configs/nemo_configs/megatron_1.3b.yaml')\ntrainer.fit(MegatronGPTModel(cfg.model, trainer))\n"),
    }


_ATTR_CHAIN = lazy_compile(r"^\s*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.([A-Za-z_]\w*)\s*$")


def _zero_config_warmup(f: Facts, v: Expr) -> bool:
    """``num_warmup_steps=optim_config.num_warmup_steps``: a config field read by its own warmup name, where every
    concrete setting of that name the run could get (the recipes' ``num_warmup_steps: 0``, a dataclass default of 0) is
    zero: no warmup, whatever the scheduler's name promises (SkyRL ``scheduler: constant_with_warmup``)."""
    m = _ATTR_CHAIN.match(v.text or "")
    if not m or m.group(1) not in _WARMUP_STRICT:
        return False
    concrete = [s for s in f.effective(m.group(1)) if not isinstance(s.value, Expr)]
    return bool(concrete) and all(_num(s.value) == 0 for s in concrete)


def _factor_names(text: str) -> set[str]:
    """The names of the factors of a product, through ``int(...)``/``round(...)``: ``int(self.warm_up * self.epochs *
    len(loader))`` -> ``{"warm_up", "epochs"}``; empty when the expression is not a product."""
    node = parse_expr(text)
    while isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return set()
    out: set[str] = set()
    stack: list[ast.AST] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
            stack += [n.left, n.right]
        elif isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def _positive_guarded_warmup(f: Facts, s: Setting) -> bool:
    """A warmup amount passed to an LR-scheduler call as a product with a warmup factor that the call's own ``if`` requires
    to be positive: ``AnnealingLR(optimizer, warmup_iter=int(self.warm_up * self.epochs * len(loader)), ...)`` under ``if
    lr_scheduler is None and self.warm_up > 0:`` (a trainer that builds its default scheduler only with a warmup). Whenever
    the scheduler exists, it warms up."""
    short = _call_short_of(s)
    if not short or not _LR_CALL.search(short.rsplit(".", 1)[-1]):
        return False
    c = _setting_call(f, s)
    node = parse_expr(c.guard) if c is not None and c.guard else None
    names = _factor_names(s.value.text) if isinstance(s.value, Expr) and s.value.text else set()
    if node is None or not names:
        return False
    for t in node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]:
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], (ast.Gt, ast.GtE))
                and isinstance(t.comparators[0], ast.Constant) and isinstance(t.comparators[0].value, (int, float))):
            continue
        bound, left = t.comparators[0].value, t.left
        name = left.attr if isinstance(left, ast.Attribute) else left.id if isinstance(left, ast.Name) else None
        if name in names and "warm" in name.lower() and (bound > 0 or (isinstance(t.ops[0], ast.Gt) and bound >= 0)):
            return True
    return False


def _zero_warmup_product(f: Facts, path: str, func: str | None, v: Any) -> bool:
    """A warmup amount computed in the same function as a product with a warmup ratio that is 0 wherever it is set
    (VeOmni ``lr_warmup_steps = int(train_steps * lr_warmup_ratio)`` with ``lr_warmup_ratio`` defaulting to 0, then
    ``num_warmup_steps=lr_warmup_steps``): no warmup."""
    if not isinstance(v, Expr) or not v.text or not v.text.isidentifier() or path not in f.files:
        return False
    pat = re.compile(rf"\s*{re.escape(v.text)}\s*=\s*(.+?)\s*$")
    for c in f.files[path].calls:
        # not a fallback that tests the name's earlier value (verl ``num_warmup_steps = cfg.lr_warmup_steps`` then
        # ``if num_warmup_steps <= 0: num_warmup_steps = int(ratio * total)``)
        m = pat.match(c.text) if c.func == func and not re.search(rf"\b{re.escape(v.text)}\b", c.guard or "") else None
        node = parse_expr(m.group(1)) if m else None
        while isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            node = node.args[0]  # int(...), math.ceil(...), round(...)
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            continue
        factors: list[ast.AST] = []
        stack: list[ast.AST] = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
                stack += [n.left, n.right]
            else:
                factors.append(n)
        for x in factors:
            name = x.id if isinstance(x, ast.Name) else x.attr if isinstance(x, ast.Attribute) else None
            if name in _WARMUP_STRICT:
                vals = [_num(s.value) for s in f.effective(name) if not isinstance(s.value, Expr)]
                if vals and all(n == 0 for n in vals):
                    return True
    return False


def _hf_sched_call(f: Facts, c: Call, r: _Sched) -> None:
    if c.short == "get_scheduler":
        raw = c.kwargs.get("name", c.args[0] if c.args else None)
        names = [v for v in _resolve(f, raw) if isinstance(v, str)]
        if not names:
            r.custom.append(c)
            return
        kinds = [k for n in names if (k := _classify_schedule(n))]
        r.names.extend(names)
        if any(k[1] for k in kinds):
            r.decay.append(c)
        elif kinds:
            r.constant.append(c)
    elif c.short in ("get_constant_schedule",):
        r.constant.append(c)
        return
    else:
        kind = _classify_schedule(c.short.replace("get_", "").replace("_schedule", ""))
        r.names.append(c.short.replace("get_", "").replace("_schedule", ""))
        if kind and kind[1]:
            r.decay.append(c)
    raw_w = c.kwargs.get("num_warmup_steps", c.args[1] if len(c.args) > 1 else None)
    if raw_w is None:
        return
    vals = [n for v in _resolve(f, raw_w) if (n := _num(v)) is not None]
    if not vals and isinstance(raw_w, Expr) and (_hf_default_warmup(f, raw_w) or _zero_warmup_product(f, c.path, c.func, raw_w)
                                                 or _zero_config_warmup(f, raw_w)):
        vals = [0]
    if vals and all(v == 0 for v in vals):
        r.no_warm.append(c)
    else:
        r.warm.append(c)


_SWIFT_SCHED_ARGS = ("from dataclasses import dataclass\n\nfrom transformers import Seq2SeqTrainingArguments\n\n\n"
                     "@dataclass\nclass TrainArguments(Seq2SeqTrainingArguments):\n    lr_scheduler_type: str = 'cosine'\n")
_SWIFT_GALORE = ("from transformers import get_scheduler\n\n\ndef create_optimizer_and_scheduler(model, args, optimizer, max_steps):\n"
                 "    scheduler = get_scheduler(optimizer=optimizer, name=args.lr_scheduler_type, num_training_steps=max_steps,\n"
                 "                              num_warmup_steps={warm})\n    return optimizer, scheduler\n")
_SWIFT_SCHED_TRAIN = ("from transformers import Seq2SeqTrainer\n\n\ndef train(model, args, dataset):\n"
                      "    Seq2SeqTrainer(model=model, args=args, train_dataset=dataset).train()\n")


# VeOmni: the project's own copies of HF's schedule builders, chosen by ``lr_decay_style`` (default "constant"), with
# the warmup computed as ``int(train_steps * lr_warmup_ratio)`` and ``lr_warmup_ratio`` defaulting to 0
_OWN_BUILDERS = {
    "pkg/arguments.py": (
        "from dataclasses import dataclass, field\n\n\n@dataclass\nclass OptimizerConfig:\n"
        "    lr: float = field(default=5e-5)\n    lr_warmup_ratio: float = field(default=0)\n"
        "    lr_decay_style: str = field(default=\"constant\")\n"),
    "pkg/lr_scheduler.py": (
        "import math\n\nfrom torch.optim.lr_scheduler import LambdaLR\n\n\n"
        "def build_lr_scheduler(optimizer, train_steps, lr_warmup_ratio=0.0, lr_decay_style=\"constant\"):\n"
        "    lr_warmup_steps = int(train_steps * lr_warmup_ratio)\n    if lr_decay_style == \"constant\":\n"
        "        return get_constant_schedule_with_warmup(optimizer=optimizer, num_warmup_steps=lr_warmup_steps)\n"
        "    if lr_decay_style == \"cosine\":\n"
        "        return get_cosine_schedule_with_warmup(optimizer=optimizer, num_warmup_steps=lr_warmup_steps,\n"
        "                                               num_training_steps=train_steps)\n"
        "    raise ValueError(lr_decay_style)\n\n\n"
        "def get_constant_schedule_with_warmup(optimizer, num_warmup_steps):\n    def _lr_lambda(current_step):\n"
        "        if current_step < num_warmup_steps:\n            return current_step / max(1, num_warmup_steps)\n"
        "        return 1.0\n\n    return LambdaLR(optimizer, _lr_lambda)\n\n\n"
        "def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps):\n    def lr_lambda(current_step):\n"
        "        if current_step < num_warmup_steps:\n            return current_step / max(1, num_warmup_steps)\n"
        "        progress = (current_step - num_warmup_steps) / max(1, num_training_steps - num_warmup_steps)\n"
        "        return 0.5 * (1.0 + math.cos(math.pi * progress))\n\n    return LambdaLR(optimizer, lr_lambda)\n"),
    "pkg/trainer.py": (
        "from pkg.lr_scheduler import build_lr_scheduler\n\n\nclass Trainer:\n    def build(self, args):\n"
        "        self.lr_scheduler = build_lr_scheduler(self.optimizer, train_steps=args.train_steps,\n"
        "            lr_warmup_ratio=args.train.optimizer.lr_warmup_ratio, lr_decay_style=args.train.optimizer.lr_decay_style)\n"),
}

def _config_menu(cosine_warmup: int) -> dict[str, str]:
    """A recipe library's config dataclasses (fairseq2 0.8.1 ``recipe/config.py``): a scheduler section whose ``config``
    field defaults to one scheduler's config class, sibling scheduler config classes with their own warmup defaults, and a
    profiler config with its own ``num_warmup_steps``; the trainer builds the scheduler the section names."""
    return {
        "mylib/recipe/config.py": (
            "from dataclasses import dataclass, field\n\n\n"
            "@dataclass(kw_only=True)\nclass TorchProfilerConfig:\n    enabled: bool = False\n    skip_n_steps: int = 4\n"
            "    num_warmup_steps: int = 1\n    num_active_steps: int = 4\n\n\n"
            "@dataclass(kw_only=True)\nclass LRSchedulerSection:\n    name: str = 'cosine_annealing'\n"
            "    config: object = field(default_factory=lambda: CosineAnnealingLRConfig())\n\n\n"
            "@dataclass(kw_only=True)\nclass CosineAnnealingLRConfig:\n    cycle_len: int | None = None\n"
            f"    num_warmup_steps: int = {cosine_warmup}\n    final_lr_scale: float = 0.2\n\n\n"
            "@dataclass(kw_only=True)\nclass MyleLRConfig:\n    num_warmup_steps: int = 1\n    start_lr: float = 0.0\n\n\n"
            "@dataclass(kw_only=True)\nclass NoamLRConfig:\n    num_warmup_steps: int = 0\n"),
        "mylib/recipe/lr_schedulers.py": (
            "from mylib.optim import CosineAnnealingLR, MyleLR\nfrom mylib.recipe.config import CosineAnnealingLRConfig, MyleLRConfig\n\n\n"
            "def create_cosine(optimizer, config: CosineAnnealingLRConfig, num_steps):\n"
            "    return CosineAnnealingLR(optimizer, num_steps - config.num_warmup_steps, config.num_warmup_steps)\n\n\n"
            "def create_myle(optimizer, config: MyleLRConfig):\n    return MyleLR(optimizer, config.num_warmup_steps)\n"),
        "mylib/trainer.py": (
            "class Trainer:\n    def run(self):\n        for batch in self.data_reader:\n            loss = self.unit(batch)\n"
            "            loss.backward()\n            self.optimizer.step()\n            self.lr_scheduler.step()\n"),
    }


def _annealing_trainer(guard: str) -> dict[str, str]:
    """A trainer that builds its own annealing scheduler (FlagAI ``Trainer.train``): warmup iterations computed from a
    warmup fraction, cosine decay after them."""
    return {
        "mylib/schedulers.py": (
            "import math\nfrom torch.optim.lr_scheduler import _LRScheduler\n\nclass AnnealingLR(_LRScheduler):\n"
            "    def __init__(self, optimizer, start_lr, warmup_iter, num_iters, decay_style=None):\n"
            "        self.start_lr, self.warmup_iter, self.num_iters = start_lr, warmup_iter, num_iters\n"
            "        self.decay_style = decay_style\n        super().__init__(optimizer)\n\n"
            "    def get_lr(self):\n        if self.warmup_iter > 0 and self.last_epoch <= self.warmup_iter:\n"
            "            return float(self.start_lr) * self.last_epoch / self.warmup_iter\n"
            "        ratio = (self.last_epoch - self.warmup_iter) / self.num_iters\n"
            "        return self.start_lr * (math.cos(math.pi * ratio) + 1) / 2\n"),
        "mylib/trainer.py": (
            "from mylib.schedulers import AnnealingLR\n\nclass Trainer:\n"
            "    def __init__(self, lr=1e-3, warm_up=0.1, epochs=0):\n"
            "        self.lr, self.warm_up, self.epochs = lr, warm_up, epochs\n\n"
            "    def train(self, model, optimizer, train_dataloader, lr_scheduler=None):\n"
            f"        if {guard}:\n"
            "            lr_scheduler = AnnealingLR(optimizer, start_lr=self.lr,\n"
            "                                       warmup_iter=int(self.warm_up * self.epochs * len(train_dataloader)),\n"
            "                                       decay_style='cosine', num_iters=self.epochs * len(train_dataloader))\n"
            "        for batch in train_dataloader:\n            model(**batch)['loss'].backward()\n"
            "            optimizer.step()\n            lr_scheduler.step()\n"),
    }


#: sentence-transformers 6.3-shaped: the legacy fit API's scheduler menu, dispatched on a string that nothing in the package
#: passes; the training path is a Trainer subclass left at transformers' defaults
_SCHED_MENU = {
    "mylib/schedulers.py": (
        "import transformers\n\n\n"
        "def _get_scheduler(optimizer, scheduler: str, warmup_steps: int, t_total: int):\n"
        "    scheduler = scheduler.lower()\n"
        "    if scheduler == 'constantlr':\n"
        "        return transformers.get_constant_schedule(optimizer)\n"
        "    elif scheduler == 'warmupconstant':\n"
        "        return transformers.get_constant_schedule_with_warmup(optimizer, num_warmup_steps=warmup_steps)\n"
        "    elif scheduler == 'warmuplinear':\n"
        "        return transformers.get_linear_schedule_with_warmup(\n"
        "            optimizer, num_warmup_steps=warmup_steps, num_training_steps=t_total\n        )\n"
        "    elif scheduler == 'warmupcosine':\n"
        "        return transformers.get_cosine_schedule_with_warmup(\n"
        "            optimizer, num_warmup_steps=warmup_steps, num_training_steps=t_total\n        )\n"
        "    raise ValueError(f'Unknown scheduler {scheduler}')\n"),
    "mylib/trainer.py": (
        "from transformers import Trainer\n\n\n"
        "class EmbeddingTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):\n"
        "        return self.loss(*self.collect_features(inputs))\n"),
}


@register
class G1LRSchedule(Check):
    id = "G1"
    title = "LR schedule (warmup + decay)"
    title_zh = "学习率调度 (warmup + decay)"
    bottlenecks = (Bottleneck.UNKNOWN,)
    priority = Priority.LOW
    benefit = "stable large-batch training and fewer wasted steps; the base every other batch-size optimisation needs"
    what = (
        "Whether the learning rate warms up and then decays: HF `lr_scheduler_type` with `warmup_ratio`/`warmup_steps`, "
        "`get_scheduler`/`get_cosine_schedule_with_warmup`, `OneCycleLR`, `LinearLR`+`CosineAnnealingLR`, DeepSpeed "
        "`WarmupDecayLR`/`WarmupCosineLR`, Megatron `--lr-decay-style`/`--lr-warmup-*`, or a nanoGPT-style `get_lr`. "
        "Warmup without decay, decay without warmup (the HF default: linear decay, zero warmup) are partial; a constant LR is unused."
    )
    why = (
        "Warmup keeps Adam's early updates from diverging when the batch is large (Goyal et al. 2017 trained ResNet-50 with "
        "an 8k batch only with a 5-epoch linear warmup); cosine or linear decay to ~10 % of the peak is the schedule of "
        "GPT-3, LLaMA and most open LLM recipes. A schedule does not speed up a step, but a run that diverges or needs a "
        "restart wastes all of its GPU hours."
    )
    fix = "Use a warmup of ~1-3 % of the steps followed by cosine (or linear) decay: `lr_scheduler_type: cosine` with `warmup_ratio: 0.03`."
    fix_zh = "使用约 1-3% 步数的 warmup，再接 cosine（或 linear）衰减：`lr_scheduler_type: cosine` 且 `warmup_ratio: 0.03`。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://arxiv.org/abs/1706.02677", "https://huggingface.co/docs/transformers/main_classes/optimizer_schedules")
    snippets = {
        "hf-yaml": "lr_scheduler_type: cosine\nwarmup_ratio: 0.03\n",
        "deepspeed-json": (
            '{\n  "scheduler": {\n    "type": "WarmupCosineLR",\n'
            '    "params": {"total_num_steps": "auto", "warmup_num_steps": "auto"}\n  }\n}\n'
        ),
        "python": (
            "from transformers import get_cosine_schedule_with_warmup\n\n"
            "scheduler = get_cosine_schedule_with_warmup(\n"
            "    optimizer, num_warmup_steps=int(0.03 * total_steps), num_training_steps=total_steps\n)\n"
        ),
        "shell": "--lr-decay-style cosine --lr-warmup-fraction 0.01 --min-lr 1e-5\n",
    }
    examples = (
        Example(MMENGINE_CONFIG, U, "shikra: lr_scheduler_type and warmup_ratio in the module-level dict of an mmengine "
                "config the launched recipe's _base_ lists (declared settings, as YAML keys are)"),
        Example(_SCHED_MENU, P, "a scheduler menu dispatched on a string nothing passes is an option; the Trainer's default "
                "linear decay without warmup is the run's"),
        Example({**_SCHED_MENU, "mylib/train.py": (
            "from mylib.schedulers import _get_scheduler\n\n\n"
            "def build(optimizer, total):\n"
            "    scheduler = 'warmupcosine'\n"
            "    if scheduler == 'warmupcosine':\n"
            "        return _get_scheduler(optimizer, scheduler, warmup_steps=500, t_total=total)\n")},
                U, "the same menu called with a warmup of 500 steps"),
        Example({"configs/sft.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\ntemplate: llama2\n"
                 "lr_scheduler_type: cosine\nwarmup_ratio: 0.03\nlearning_rate: 2.0e-5\n"}, U, "hf yaml cosine + warmup"),
        Example({"ds_config.json": '{\n  "train_batch_size": 256,\n  "scheduler": {\n    "type": "WarmupDecayLR",\n'
                 '    "params": {"warmup_num_steps": 2000, "total_num_steps": 100000}\n  }\n}\n'}, U, "deepspeed WarmupDecayLR"),
        Example({  # torchtitan 0.3.0 components/optimizer/lr_scheduler.py: warmup, then a decay whose shape is decay_type
            "torchtitan/components/optimizer/lr_scheduler.py": (
                "from dataclasses import dataclass\nfrom typing import Literal\n\nfrom torch.optim.lr_scheduler import LambdaLR\n\n\n"
                "class LRSchedulersContainer:\n    @dataclass(kw_only=True, slots=True)\n    class Config:\n"
                "        warmup_steps: int = 200\n        decay_ratio: float | None = None\n"
                "        decay_type: Literal[\"linear\", \"sqrt\", \"cosine\"] = \"linear\"\n        min_lr_factor: float = 0.0\n\n"
                "    def __init__(self, config: Config, optimizers, training_steps: int):\n"
                "        self.schedulers = [LambdaLR(o, lambda step: _lr_factor(step, config, training_steps)) for o in optimizers]\n")},
            U, "torchtitan: warmup_steps 200 and decay_type linear by default"),
        Example({"pretrain_gpt.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --lr 3e-4 --min-lr 3e-5 "
                 "--lr-decay-style cosine --lr-warmup-fraction 0.01 --train-iters 500000\n"}, U, "megatron flags"),
        Example({"train.py": "from transformers import get_cosine_schedule_with_warmup\n"
                 "sched = get_cosine_schedule_with_warmup(opt, num_warmup_steps=500, num_training_steps=total)\n"}, U, "hf function"),
        Example({"train.py": "import math\nlearning_rate = 6e-4\nwarmup_iters = 2000\nlr_decay_iters = 600000\nmin_lr = 6e-5\n"
                 "decay_lr = True\n\ndef get_lr(it):\n    if it < warmup_iters:\n        return learning_rate * it / warmup_iters\n"
                 "    ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)\n"
                 "    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (learning_rate - min_lr)\n"}, U, "nanoGPT get_lr"),
        Example({"train.py": "from torch.optim.lr_scheduler import LinearLR, CosineAnnealingLR, SequentialLR\n"
                 "warm = LinearLR(opt, start_factor=0.01, total_iters=1000)\ncos = CosineAnnealingLR(opt, T_max=99000)\n"
                 "sched = SequentialLR(opt, [warm, cos], milestones=[1000])\n"}, U, "torch sequential"),
        Example({"axolotl.yml": "base_model: mistralai/Mistral-7B-v0.1\nsequence_len: 4096\nmicro_batch_size: 2\n"
                 "learning_rate: 0.0002\n"}, U, "axolotl defaults (cosine + warmup)"),
        Example({"mylib/schema/metadata/llm.yaml": (
            "base_model:\n  _meta:\n    ui_display_name: Model Name\n    expected_impact: 3\n"
            "adapter:\n  lora:\n    r:\n      ui_display_name: Rank\n      expected_impact: 2\n"),
            "mylib/train.py": ("import torch\n\n\ndef train(model, loader, lr=1e-4):\n"
                               "    opt = torch.optim.AdamW(model.parameters(), lr=lr)\n    for batch in loader:\n"
                               "        model(batch).loss.backward()\n        opt.step()\n")},
                N, "a schema's UI metadata with base_model/adapter sections is not an axolotl config"),
        Example({"train.py": "from transformers import TrainingArguments, Trainer\n"
                 "args = TrainingArguments(output_dir='out', learning_rate=2e-5, bf16=True)\n"
                 "trainer = Trainer(model=model, args=args)\n"}, P, "hf default: linear decay, no warmup"),
        Example({"train.yaml": "lr_scheduler_type: cosine\nwarmup_ratio: 0.0\nlearning_rate: 1.0e-4\n"}, P, "cosine without warmup"),
        Example({  # ms-swift: cosine over the HF arguments, warmup left at HF's 0; an optional optimizer passes it on
            "mylib/arguments.py": _SWIFT_SCHED_ARGS, "mylib/galore.py": _SWIFT_GALORE.format(warm="args.warmup_steps"),
            "mylib/train.py": _SWIFT_SCHED_TRAIN}, P, "cosine default, warmup passed through from HF's default 0"),
        Example({"mylib/arguments.py": _SWIFT_SCHED_ARGS + "    warmup_ratio: float = 0.05\n",
                 "mylib/galore.py": _SWIFT_GALORE.format(warm="args.warmup_steps"), "mylib/train.py": _SWIFT_SCHED_TRAIN},
                U, "cosine default with the arguments' own warmup_ratio 0.05"),
        Example({"ds.json": '{\n  "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 1000}}\n}\n'}, P, "warmup only"),
        Example({"train.yaml": "lr_scheduler_type: constant\nwarmup_steps: 0\nlearning_rate: 1.0e-5\n"}, N, "constant lr"),
        Example({"train.py": "import torch\nopt = torch.optim.AdamW(model.parameters(), lr=1e-4)\nfor batch in loader:\n"
                 "    loss = model(batch).loss\n    loss.backward()\n    opt.step()\n"}, N, "raw loop, fixed lr"),
        Example({"train.yaml": "# lr_scheduler_type: cosine\n# warmup_ratio: 0.03\nlearning_rate: 1.0e-5\n"}, N, "commented out"),
        Example({"bench.py": "import torch\nprof = torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=3))\n"},
                N, "profiler warmup is not an LR warmup"),
        Example({  # atorch 0.2.5: the profiler and a local-SGD moving average read their warmups from argument fields
            "mylib/args.py": ("from dataclasses import dataclass\n\n\n@dataclass\nclass TrainArgs:\n    learning_rate: float = 1e-4\n"
                              "    profiler_schedule_warmup: int = 1\n    ewma_warmup_steps: int = 120\n"),
            "mylib/profile.py": ("import torch\n\n\ndef make_profiler(args):\n    return torch.profiler.profile(\n"
                                 "        schedule=torch.profiler.schedule(wait=1, warmup=args.profiler_schedule_warmup, active=3))\n"),
            "mylib/averager.py": ("from mylib.ewma import OnlineDynamicEWMA\n\n\nclass Averager:\n    def __init__(self, args):\n"
                                  "        self.ewma = OnlineDynamicEWMA(alpha=0.02, warmup_steps=args.ewma_warmup_steps)\n"),
            "mylib/train.py": ("import torch\n\n\ndef train(model, loader, args):\n"
                               "    opt = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)\n    for batch in loader:\n"
                               "        model(batch).loss.backward()\n        opt.step()\n"),
        }, N, "warmups that a profiler's schedule and a moving average read from argument fields are not LR warmups"),
        # a library that subclasses TRL's trainer and rewrites its config defaults (unsloth 2025.9 trainer.py, rl.py:497): the
        # warmup it sets is followed by the HF Trainer's default linear decay
        Example({"mylib/trainer.py": "from trl import SFTTrainer\n\nclass FastTrainer(SFTTrainer):\n    def create_optimizer(self):\n        return super().create_optimizer()\n", "mylib/rl.py": "def patch_config_defaults():\n    replacements = {\n        \"warmup_ratio\": 0.1,\n        \"logging_steps\": 1,\n    }\n    return replacements\n"}, U, "library subclass of TRL's trainer with a warmup default"),
        Example({"mylib/trainer.py": "class SFTTrainer:\n    def train(self):\n        pass\n\nclass FastTrainer(SFTTrainer):\n    pass\n", "mylib/rl.py": "def patch_config_defaults():\n    replacements = {\n        \"warmup_ratio\": 0.1,\n        \"logging_steps\": 1,\n    }\n    return replacements\n"}, P, "own trainer class: warmup, no decay seen"),
        Example({  # AReaL: the schedule is picked by lr_scheduler_type, default "constant" (with warmup); cosine is another branch
            "pkg/api/cli_args.py": ("from dataclasses import dataclass, field\n\n@dataclass\nclass OptimizerConfig:\n"
                                    "    lr_scheduler_type: str = field(default='constant', metadata={'choices': ['linear', 'cosine', 'constant']})\n"
                                    "    warmup_steps_proportion: float = field(default=0.001)\n"),
            "pkg/engine/utils.py": ("import math\nfrom torch.optim.lr_scheduler import LambdaLR\n\n"
                                    "def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps):\n"
                                    "    def lr_lambda(current_step):\n        if current_step < num_warmup_steps:\n"
                                    "            return current_step / max(1, num_warmup_steps)\n"
                                    "        progress = (current_step - num_warmup_steps) / max(1, num_training_steps - num_warmup_steps)\n"
                                    "        return 0.5 * (1.0 + math.cos(math.pi * progress))\n"
                                    "    return LambdaLR(optimizer, lr_lambda)\n"),
            "pkg/engine/engine.py": ("from transformers import get_constant_schedule_with_warmup, get_linear_schedule_with_warmup\n"
                                     "from pkg.engine.utils import get_cosine_schedule_with_warmup\n\nclass Engine:\n"
                                     "    def create_optimizer(self, total):\n        cfg = self.optimizer_config\n"
                                     "        warmup = int(cfg.warmup_steps_proportion * total)\n"
                                     "        if cfg.lr_scheduler_type == 'cosine':\n"
                                     "            self.lr_scheduler = get_cosine_schedule_with_warmup(self.optimizer, warmup, total)\n"
                                     "        elif cfg.lr_scheduler_type == 'linear':\n"
                                     "            self.lr_scheduler = get_linear_schedule_with_warmup(self.optimizer, warmup, total)\n"
                                     "        elif cfg.lr_scheduler_type == 'constant':\n"
                                     "            self.lr_scheduler = get_constant_schedule_with_warmup(self.optimizer, warmup)\n"),
        }, P, "the cosine and linear branches are not the default constant-with-warmup schedule"),
        Example(_OWN_BUILDERS, N, "the project's own constant builder with a warmup computed from a zero ratio"),
        Example({**_OWN_BUILDERS, "pkg/arguments.py": _OWN_BUILDERS["pkg/arguments.py"].replace(
            "lr_warmup_ratio: float = field(default=0)", "lr_warmup_ratio: float = field(default=0.03)")}, P,
                "the same builder with a 3% warmup ratio"),
        Example(_annealing_trainer("lr_scheduler is None and self.warm_up > 0 and self.epochs > 0"), U,
                "a trainer's default scheduler, built only with a positive warmup fraction, then cosine"),
        Example(_annealing_trainer("lr_scheduler is None and self.epochs > 0"), P,
                "the same scheduler with a warmup fraction nothing shows to be positive"),
        Example(_config_menu(0), P,
                "the default scheduler config has 0 warmup; a profiler's and an unpicked scheduler's warmups do not count"),
        Example(_config_menu(2000), U, "the same library whose default scheduler config warms up for 2000 steps"),
        Example(_named_warmup(0), N, "a constant_with_warmup scheduler whose section sets 0 warmup steps: a constant LR"),
        Example(_json_recipes(constant=4, cosine=1), P, "Firefly: constant_with_warmup in most JSON recipes, cosine in one"),
        Example(_json_recipes(constant=3, cosine=1), U, "four recipes are too few to vote: the decay some of them run counts"),
        Example(_json_recipes(constant=1, cosine=4), U, "the same recipes, cosine in most"),
        Example(_named_warmup(100), P, "the same scheduler with 100 warmup steps and no decay"),
        Example({"scripts/finetune_guanaco_7b.sh": (  # qlora: HF's "constant" schedule takes no warmup
            "python qlora.py \\\n    --model_name_or_path huggyllama/llama-7b \\\n    --lr_scheduler_type constant \\\n"
            "    --warmup_ratio 0.03 \\\n    --learning_rate 0.0002\n"),
                 "qlora.py": "import transformers\ntrainer = transformers.Seq2SeqTrainer(model=model, args=training_args)\ntrainer.train()\n"},
                N, "lr_scheduler_type constant beside warmup_ratio: HF's constant schedule ignores the warmup"),
        Example({"scripts/finetune_guanaco_7b.sh": (
            "python qlora.py \\\n    --model_name_or_path huggyllama/llama-7b \\\n    --lr_scheduler_type constant_with_warmup \\\n"
            "    --warmup_ratio 0.03 \\\n    --learning_rate 0.0002\n"),
                 "qlora.py": "import transformers\ntrainer = transformers.Seq2SeqTrainer(model=model, args=training_args)\ntrainer.train()\n"},
                P, "constant_with_warmup: the warmup runs, no decay follows"),
        Example({"scripts/base_train.py": _WSD_SCRIPT.format(warmdown=0.65)}, U,
                "nanochat: linear warmup, constant, then a linear warmdown over the last 65% of the steps"),
        Example({"scripts/base_train.py": _WSD_SCRIPT.format(warmdown=0.0)}, P, "the same schedule with no warmdown"),
        Example(_nemo_sched(constant_steps=100000000), N, "trlx's NeMo config: CosineAnnealing held at its peak for 10^8 steps"),
        Example(_nemo_sched(constant_steps=30000, min_lr="6e-05") | {"configs/ppo.yml": (
            "optimizer:\n  name: adamw\n  kwargs:\n    lr: 1.412e-4\nscheduler:\n  name: cosine_annealing\n  kwargs:\n"
            "    T_max: 10000\n    eta_min: 1.412e-4\n")}, N, "trlx's default config: a cosine that decays to the rate itself"),
        Example(_nemo_sched(constant_steps=30000), P, "the same NeMo schedule decaying after 30,000 steps, no warmup"),
        Example({"configs/peteish7.yaml": (  # OLMo: a horizon counted in tokens is no step count
            "optimizer:\n  name: adamw\n  learning_rate: 3.0e-4\nscheduler:\n  name: cosine_with_warmup\n  units: tokens\n"
            "  t_warmup: 8388608000\n  t_max: 5e12\n  alpha_f: 0.1\n"),
            "scripts/train.py": "from olmo.optim import build_scheduler\nscheduler = build_scheduler(cfg)\ntrainer.fit()\n"},
            U, "OLMo: warmup and cosine over 5e12 tokens"),
    )

    def detect(self, ctx: Context) -> Outcome:
        r = _g1_scan(ctx.facts)
        few = _minority_launches(ctx.facts, r.warm)
        if few:
            # a warmup only a few launches of a script pass (EasyR1: ``worker.actor.optim.lr_warmup_steps=10`` in 1 of 21
            # launches of ``verl.trainer.main``, the others run with the base config's 0): not the project's schedule
            r.warm = [x for x in r.warm if x not in few[0]]
        # the decaying schedule most of the decay sites name (Megatron-LM: ``--lr-decay-style cosine`` in 17 launches), not
        # the first name seen (a ``constant`` beside them would read "warmup + constant schedule")
        decaying = Counter(v for x in r.decay if isinstance(v := getattr(x, "value", None), str) and v in r.names)
        name = decaying.most_common(1)[0][0] if decaying else next((n for n in r.names if n), None)
        if any(isinstance(x, Setting) for x in r.decay) and name and (_classify_schedule(name) or (False, False))[1] is False:
            # a setting turns a decay on but the name seen first does not decay (TinyLlama: ``decay_lr = True`` for nanoGPT's
            # ``get_lr`` cosine in the pre-training script, ``lr_scheduler_type="constant"`` in its SFT script): name the
            # decay by its code. Decay code alone (an unchosen cosine branch) does not rename the run's constant schedule
            name = "cosine" if any("cos" in (getattr(x, "text", "") or "") for x in r.decay) else None
        values = {"lr_schedule": name, "warmup": bool(r.warm), "decay": bool(r.decay)}
        vote = _schedule_vote(ctx.facts) if r.decay else None
        if vote is not None:
            top, n, total, cited, counts = vote
            warm, _ = _classify_schedule(top) or (False, False)
            others = ", ".join(f"{v} in {k}" for v, k in counts.most_common()[1:4])
            spread = f"lr_scheduler_type {top} in {n} of {total} recipes" + (f", {others}" if others else "") + " (judged by the majority)"
            values.update(lr_schedule=top, decay=False, warmup=warm)
            if warm:
                return Outcome(P, r.evidence(cited), f"warmup without a decay phase: {spread}", values)
            return Outcome(N, r.evidence(cited), f"constant learning rate: {spread}", values)
        overridden = _ds_overrides_hf_decay(ctx.facts, r)
        if r.warm and overridden is not None:
            ds, hf_decay, plain = overridden
            values.update(lr_schedule=str(ds.value), decay=False, advice_for="ds-scheduler")
            h = hf_decay[0]
            but = (f"; {len(plain)} launch{'es' if len(plain) > 1 else ''} without DeepSpeed ({', '.join(plain[:3])}) "
                   f"keep{'' if len(plain) > 1 else 's'} the Trainer's {h.value}" if plain else "")
            return Outcome(P, r.evidence([ds, *hf_decay, *r.warm]), f"warmup without a decay phase: the DeepSpeed config's scheduler "
                           f"{ds.value} ({ds.path}:{ds.line}) holds the learning rate at its peak after the warmup, and it replaces the "
                           f"Trainer's lr_scheduler_type {h.value} ({h.path}:{h.line}): the HF Trainer builds no schedule of its own "
                           f"when the DeepSpeed config has a scheduler{but}", values)
        if r.warm and r.decay:
            shown = f"{name or 'decay'} schedule"
            if name and (_classify_schedule(name) or (False, True))[1] is False:
                # the name seen first is a constant schedule of one trainer beside another's decay (TinyZero: the PPO
                # workers' constant_with_warmup, the SFT trainer's cosine): name both, not "warmup + constant"
                dec = next((n for n in r.names if (_classify_schedule(n) or (False, False))[1]), None)
                shown = f"{dec or 'decaying'} schedule ({name} at other sites)"
            return Outcome(U, r.evidence(r.decay + r.warm), f"warmup + {shown}", values)
        if r.decay:
            return Outcome(P, r.evidence(r.decay + r.no_warm), f"{name or 'decaying'} schedule without warmup", values)
        if r.warm and _hf_constant_ignores(r):
            # transformers' ``lr_scheduler_type="constant"`` is ``get_constant_schedule``: it takes no warmup, so the
            # recipes' ``warmup_ratio`` is ignored (qlora: ``--lr_scheduler_type constant --warmup_ratio 0.03``); only
            # ``constant_with_warmup`` warms up
            c = r.constant[0]
            return Outcome(N, r.evidence(r.constant + r.warm), f"constant learning rate: lr_scheduler_type \"constant\" "
                           f"({c.path}:{c.line}) takes no warmup, so the warmup setting is ignored", values)
        if r.warm:
            ds = next((e for e in r.constant if isinstance(e, ConfigEntry) and _ds_scheduler(ctx.facts, e)), None)
            flat = _flat_ds_warmup(ctx.facts, ds) if ds is not None else None
            if flat:
                # EasyContext's zero3_offload.json: ``WarmupLR`` with ``warmup_num_steps: 0`` and ``warmup_min_lr`` =
                # ``warmup_max_lr``: no warmup either, one learning rate throughout
                values.update(warmup=False, decay=False)
                if uses_hf_trainer(ctx.facts):  # (the advice names the Trainer's lr_scheduler_type)
                    values["advice_for"] = "ds-scheduler"
                return Outcome(N, r.evidence([ds]), f"constant learning rate: the DeepSpeed config's scheduler {ds.value} "
                               f"({ds.path}:{ds.line}) has {flat}", values)
            hf = " (it replaces the Trainer's lr_scheduler_type)" if uses_hf_trainer(ctx.facts) else ""
            why = (f": the DeepSpeed config's scheduler {ds.value} ({ds.path}:{ds.line}) holds the learning rate at its peak after "
                   f"the warmup{hf}" if ds is not None else "")
            if ds is not None and hf:
                values["advice_for"] = "ds-scheduler"
            return Outcome(P, r.evidence(r.warm + r.constant), "warmup without a decay phase" + why, values)
        if few and r.constant:
            return Outcome(N, r.evidence(r.constant + few[0]), f"constant learning rate; a warmup is set only in {few[1]} of "
                           f"{few[2]} launches of {few[3]}", values)
        if r.custom:
            return Outcome(P, r.evidence(r.custom), "a custom LR schedule whose warmup/decay cannot be verified statically", values)
        detail = "constant learning rate" if r.constant else "no LR schedule found"
        return Outcome(N, r.evidence(r.constant + r.no_warm), detail, values)


# --------------------------------------------------------------------------------------
# G2 large-batch optimizer
# --------------------------------------------------------------------------------------

_LAMB_NAME = lazy_compile(r"^(fused_?|apex_?|onebit_?|1bit_?|deepspeed_?|torch_?)?(lamb|lars|larc)(_\w+)?$", re.I)
_LAMB_CALLS = ("Lamb", "LAMB", "FusedLamb", "FusedLAMB", "Lars", "LARS", "LARC", "FusedLARS", "OnebitLamb", "ZeroOneLamb")


#: more sequences than any large-batch recipe uses (LAMB's BERT run: 65,536): a global batch above it counts tokens
_MAX_SEQ_BATCH = 131_072


#: names of a global batch size in sequences (NeMo-RL ``train_global_batch_size``)
_GLOBAL_BATCH_KEYS = ("train_batch_size", "global_batch_size", "global_train_batch_size", "train_global_batch_size", "total_batch_size")


def global_batch(f: Facts, ctx: Context | None = None) -> int | None:
    """Estimated global batch in sequences: explicit global sizes, else micro x accumulation x GPUs."""
    best: float | None = None
    for s in f.effective(*_GLOBAL_BATCH_KEYS):
        n = as_number(s.value)
        if n and n > _MAX_SEQ_BATCH:
            continue  # a token count (open-instruct's OLMo-core SFT: ``--global_batch_size 4194304``, 1024 x 4096 tokens)
        if n and n > 0 and not isinstance(s.value, str):
            best = max(best or 0, n)
    if best:
        return int(best)
    # a launch passing a global batch beside its micro-batch (OpenRLHF ``--train.batch_size 256 --train.micro_batch_size 2``)
    pairs = launch_batch_pairs(f)
    if pairs:
        return int(max(g for g, _, _, _ in pairs))
    # launches that compute their accumulation from a global batch (deita ``GRADACC=$(($TOTALBSZ/$NUMGPUS/$BSZPERDEV))``
    # with ``TOTALBSZ=512``): that global batch, the one most launches run
    computed = _computed_globals(f)
    if computed:
        counts = Counter(computed)
        return int(max(counts, key=lambda b: (counts[b], b)))
    micro_s = [(s, n) for s in f.effective(*_MICRO_KEYS) if (n := as_number(s.value)) and n > 0]
    if not micro_s:
        return None
    accum_s = [(s, n) for s in f.effective(*_ACCUM_KEYS) if (n := as_number(s.value)) and n > 0]
    if not accum_s:
        # a file that sets both a micro-batch and a batch (lit-llama ``batch_size = 128 / devices``, ``micro_batch_size =
        # 4``, ``gradient_accumulation_iters = batch_size // micro_batch_size``) accumulates up to that batch in code: the
        # micro-batch alone is not the batch per step, and the count it derives is not read
        paired = {s_.path for s_ in f.effective("batch_size") if s_.source in ("assign", "config")}
        if any(s_.path in paired for s_, _ in micro_s):
            return None
    gpus = 1
    if ctx is not None and ctx.project.num_gpus:
        # (nodes without a GPU count per node say nothing of the ranks: the batch stays per GPU, as G2's detail says)
        gpus = max(ctx.project.num_gpus, 1) * max(ctx.project.num_nodes or 1, 1)
    # a recipe's micro-batch goes with its own accumulation (alignment-handbook: 16 x 1 in one recipe, 2 x 8 in another),
    # never the largest of each taken from different recipes (16 x 8 = 128, a batch no recipe runs)
    # (a config generator's ``TokensArgs(micro_batch_size=256, batch_accumulation_per_replica=2)`` pairs the same way)
    def recipe(x: Setting) -> bool:  # a recipe file, or a config generator's call; not a dict a helper builds in code
        return x.source == "call" or (x.source == "config" and x.path.endswith((".yaml", ".yml", ".json", ".toml")))

    recipe_accum: dict[str, float] = {}
    for s_, n in accum_s:
        if recipe(s_):
            recipe_accum[s_.path] = max(recipe_accum.get(s_.path, 0), n)
    defaults = [n for s_, n in accum_s if s_.source in ("argparse-default", "field-default")]
    per_file = [m * recipe_accum.get(s_.path, max(defaults) if defaults else 1) for s_, m in micro_s if recipe(s_)]
    if per_file:
        # the batch most recipes run (a MoE example's 256 x 2 beside nanotron's 3 x 1 recipes is an outlier); ties: the larger
        counts = Counter(per_file)
        return int(max(counts, key=lambda b: (counts[b], b)) * gpus)
    # the same for launches: each launch's micro-batch with its own accumulation and its own ranks (EVE: 8 x 1 on 8 GPUs
    # x 16 nodes in EVEv2's recipes, 16 x 1 on 8 x 4 in EVEv1's), never 16 x 4 x 8 x 16 = 8192 from four different scripts
    per_launch = _launch_batches(f, ctx, max(defaults) if defaults else 1)
    if per_launch:
        counts = Counter(per_launch)
        return int(max(counts, key=lambda b: (counts[b], b)))
    return int(max(n for _, n in micro_s) * (max(n for _, n in accum_s) if accum_s else 1) * gpus)


_NPROC_KEYS = ("nproc_per_node", "num_gpus", "gpus")
#: launcher flags of a multi-node rendezvous: with them, the node count is the job's
_RENDEZVOUS_KEYS = ("master_addr", "node_rank", "rdzv_endpoint", "rdzv_backend", "hostfile", "machine_rank", "main_process_ip")
_NNODES_KEYS = ("nnodes", "nnode", "num_nodes")


def _launch_batches(f: Facts, ctx: Context | None, accum_default: float) -> list[float]:
    """The global batch of each launch that passes a micro-batch: micro x its accumulation (else ``accum_default``) x its
    processes (``--nproc_per_node`` x ``--nnodes``; accelerate's ``--num_processes`` counts every node's). A process count
    the launch leaves to the environment is the overview's; a launch whose accumulation is computed at start-up is left
    out (its batch is not known here)."""
    out: list[float] = []
    for launch in f.launches():
        args = {k.lstrip("-").replace("-", "_"): v for k, v in launch.script_args.items()}
        micro = next((n for k in _MICRO_KEYS if (n := as_number(args.get(k))) and n > 0), None)
        if micro is None:
            continue
        if any(k in args and as_number(args[k]) is None for k in _ACCUM_KEYS):
            continue  # an accumulation the launch computes when it starts (InternVL ``$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))``)
        accum = next((n for k in _ACCUM_KEYS if (n := as_number(args.get(k))) and n > 0), accum_default)
        largs = {k.lstrip("-").replace("-", "_"): v for k, v in launch.launcher_args.items()}
        procs = as_number(largs.get("num_processes")) if launch.launcher == "accelerate" else None
        if not procs:
            per_node = next((n for k in _NPROC_KEYS if (n := as_number(largs.get(k))) and n > 0), None)
            nodes = next((n for k in _NNODES_KEYS if (n := as_number(str(largs.get(k, "")).split(":")[-1])) and n > 0), None)
            project = ctx.project if ctx is not None else None
            if nodes is None and per_node and not any(k in largs for k in _RENDEZVOUS_KEYS):
                # ``torchrun --nproc_per_node=8`` with no node count and no rendezvous runs on one node (torchrun's default),
                # whatever another launch spans (amber-train: its SFT script on one node beside a 56-node pretraining job)
                nodes = 1
            procs = (per_node or (project.num_gpus if project is not None and project.num_gpus else 1)) * (
                nodes or (project.num_nodes if project is not None and project.num_nodes else 1))
        out.append(micro * accum * procs)
    return out


_MICRO_KEYS = ("per_device_train_batch_size", "train_micro_batch_size_per_gpu", "micro_batch_size", "micro_batch", "batch_size_per_gpu")
_ACCUM_KEYS = ("gradient_accumulation_steps", "accumulate_grad_batches", "grad_accum", "batch_accumulation_per_replica")


def _computed_globals(f: Facts) -> list[int]:
    """The global batches the launches divide their accumulation from (``$((512 / $NUMGPUS / 1))``): one per launch."""
    return [g for s in f.effective(*_ACCUM_KEYS) if s.source == "launcher" and (r := shell_ratio(s.value)) and (g := r[0]) > r[1]]


def _nodes_unknown(f: Facts, ctx: Context) -> bool:
    """The batch :func:`global_batch` estimates is one node's: no explicit global size, and the launches that pass a
    micro-batch rendezvous across nodes whose count the job sets when it starts (aguvis ``torchrun --nproc_per_node 8
    --nnodes ${WORLD_SIZE} --node_rank ${RANK}``), with no node count known to the overview."""
    if ctx.project.num_nodes or launch_batch_pairs(f) or _computed_globals(f):
        return False
    if any((n := as_number(s.value)) and 0 < n <= _MAX_SEQ_BATCH and not isinstance(s.value, str) for s in f.effective(*_GLOBAL_BATCH_KEYS)):
        return False
    runs = [largs for launch in f.launches()
            if any(k.lstrip("-").replace("-", "_") in _MICRO_KEYS for k in launch.script_args)
            for largs in [{k.lstrip("-").replace("-", "_"): v for k, v in launch.launcher_args.items()}]]
    return bool(runs) and all(any(k in largs for k in _RENDEZVOUS_KEYS) and launch_nodes(largs) is None for largs in runs)


def launch_nodes(largs: dict[str, Any]) -> float | None:
    """The node count a launch's own flags give (``--nnodes 4``, ``--nnodes 1:4`` -> 4), or None."""
    return next((n for k in _NNODES_KEYS if (n := as_number(str(largs.get(k, "")).split(":")[-1])) and n > 0), None)


def _gpus_unknown(f: Facts, ctx: Context) -> bool:
    """No explicit global batch size is set and the launches do not fix the GPU count: :func:`global_batch` then
    multiplies per-GPU sizes only."""
    if ctx.project.num_gpus or launch_batch_pairs(f) or _computed_globals(f):
        return False
    return not any((n := as_number(s.value)) and 0 < n <= _MAX_SEQ_BATCH and not isinstance(s.value, str)
                   for s in f.effective(*_GLOBAL_BATCH_KEYS))


_CHOICE_TEST = lazy_compile(r"""^\(?(?:[\w.]+\.)?(\w+)\s*==\s*['"]([\w.+-]+)['"]\)?$""")


def _lamb_chosen(f: Facts, name: str) -> bool:
    """Whether some place in the project (config, flag, call keyword, default, through ``args.x`` references) gives the
    option ``name`` a LAMB/LARS value."""
    for s in f.settings(name):
        for v in _resolve(f, s.value) if isinstance(s.value, Expr) else [s.value]:
            if isinstance(v, str) and _LAMB_NAME.match(v.strip().rsplit(".", 1)[-1]):
                return True
    return False


def _unchosen_lamb_branch(f: Facts, c: Call) -> tuple[str, str] | None:
    """A LAMB/LARS constructor in one branch of an optimizer menu (``elif optimizer == 'lamb': optimizer = Lamb(...)``)
    whose option no setting of the project sets to that value: an option the library offers, not the run's optimizer.
    Returns the (option, value) the branch requires."""
    for part in (c.guard or "").split(" and "):
        m = _CHOICE_TEST.match(part.strip())
        if m and _LAMB_NAME.match(m.group(2)) and not _lamb_chosen(f, m.group(1)):
            return m.group(1), m.group(2)
    return None


#: FlagAI-shaped: a library's optimizer menu with a LAMB branch; its trainer asks for the CPU Adam with ``optimizer='adam'``
_OPT_MENU = (
    "import torch\n\n\n"
    "def get_optimizer(param_groups, lr=1e-3, cpu_optimizer=False, optimizer='adam'):\n"
    "    if cpu_optimizer:\n"
    "        from deepspeed.ops.adam import DeepSpeedCPUAdam\n"
    "        optimizer = DeepSpeedCPUAdam(param_groups, lr=lr)\n"
    "    elif optimizer == 'adam':\n"
    "        optimizer = torch.optim.Adam(param_groups, lr=lr)\n"
    "    elif optimizer == 'lamb':\n"
    "        from torch_optimizer import Lamb\n"
    "        optimizer = Lamb(param_groups, lr=lr)\n"
    "    else:\n"
    "        raise NotImplementedError(optimizer)\n"
    "    return optimizer\n")
_OPT_MENU_TRAINER = (
    "from mylib.optimizers import get_optimizer\n\n\n"
    "class Trainer:\n"
    "    def __init__(self, lr=1e-3, optimizer_type='adam'):\n"
    "        self.lr, self.optimizer_type = lr, optimizer_type\n\n"
    "    def train(self, model):\n"
    "        return get_optimizer(model.parameters(), lr=self.lr, optimizer=self.optimizer_type)\n")
_OPT_MENU_SCRIPT = (
    "import argparse\n\nfrom mylib.optimizers import get_optimizer\n\n"
    "parser = argparse.ArgumentParser()\n"
    "parser.add_argument('--optimizer', default='adam', choices=['adam', 'lamb'])\n"
    "args = parser.parse_args()\n"
    "optimizer = get_optimizer(model.parameters(), optimizer=args.optimizer)\n")


@register
class G2LargeBatchOptimizer(Check):
    id = "G2"
    title = "Large-batch optimizer (LAMB/LARS)"
    title_zh = "大 Batch 优化器 (LAMB/LARS)"
    bottlenecks = (Bottleneck.COMMUNICATION,)
    priority = Priority.LOW
    benefit = "keeps convergence when the global batch grows to tens of thousands of sequences, so more GPUs can be used"
    what = (
        "Whether a layer-wise adaptive large-batch optimizer is used: DeepSpeed `optimizer.type: Lamb`/`OneBitLamb`, "
        "`FusedLamb`/`FusedLAMB` (DeepSpeed, apex), `torch_optimizer.Lamb`, timm `Lamb`/`Lars`, or `optim: lamb`-style keys."
    )
    why = (
        "LAMB trained BERT-Large with a 64k batch in 76 minutes on 1024 TPUv3 chips without accuracy loss (You et al., 2020); "
        "LARS did the same for ResNet-50 at 32k. For the batch sizes of typical LLM fine-tuning (a few hundred sequences) AdamW "
        "converges as well, so this only matters when the global batch is huge."
    )
    fix = "If the global batch is in the tens of thousands of sequences, switch to LAMB (DeepSpeed `\"optimizer\": {\"type\": \"Lamb\"}` or apex `FusedLAMB`) and re-tune the LR."
    fix_zh = "当全局 batch 达到数万条序列时，改用 LAMB（DeepSpeed `\"optimizer\": {\"type\": \"Lamb\"}` 或 apex `FusedLAMB`）并重新调整学习率。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://arxiv.org/abs/1904.00962", "https://www.deepspeed.ai/docs/config-json/#optimizer-parameters")
    snippets = {
        "deepspeed-json": '{\n  "optimizer": {\n    "type": "Lamb",\n    "params": {"lr": 0.002, "weight_decay": 0.01}\n  }\n}\n',
        "python": "from apex.optimizers import FusedLAMB\n\noptimizer = FusedLAMB(model.parameters(), lr=2e-3, weight_decay=0.01)\n",
    }
    examples = (
        Example({"ds_config.json": '{\n  "train_batch_size": 65536,\n  "optimizer": {\n    "type": "Lamb",\n'
                 '    "params": {"lr": 0.006}\n  }\n}\n'}, U, "deepspeed lamb"),
        Example({"train.py": "from apex.optimizers import FusedLAMB\noptimizer = FusedLAMB(model.parameters(), lr=6e-3)\n"}, U, "apex FusedLAMB"),
        Example({"train.py": "import torch_optimizer as optim\nopt = optim.Lamb(model.parameters(), lr=1e-3)\n"}, U, "torch_optimizer"),
        Example({"ds_config.json": '{\n  "optimizer": {"type": "AdamW", "params": {"lr": 0.0001}}\n}\n'}, N, "adamw"),
        Example({"train.yaml": "optim: adamw_torch\nper_device_train_batch_size: 4\n"}, N, "hf adamw"),
        Example({"train.py": "# from apex.optimizers import FusedLAMB\nopt = torch.optim.AdamW(params, lr=1e-4)\n"}, N, "commented out"),
        Example({"mylib/optimizers.py": _OPT_MENU, "mylib/trainer.py": _OPT_MENU_TRAINER}, N,
                "an optimizer menu's LAMB branch that nothing in the project chooses"),
        Example({"mylib/optimizers.py": _OPT_MENU, "train.py": _OPT_MENU_SCRIPT,
                 "run.sh": "torchrun --nproc_per_node 8 train.py --optimizer lamb\n"}, U,
                "the same menu with the launch script choosing lamb"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        live = _live(f, f.calls(*_LAMB_CALLS))
        options = [c for c in live if _unchosen_lamb_branch(f, c)]
        used: list[Any] = [c for c in live if c not in options]
        for e in f.config("optimizer.type", "optimizer.name", "optim.name", "optimizer._component_"):
            if isinstance(e.value, str) and _LAMB_NAME.match(e.value.rsplit(".", 1)[-1]):
                used.append(e)
        for s in f.effective("optim", "optimizer", "opt", "optimizer_type", "optimizer_name", "optim_type"):
            if isinstance(s.value, str) and _LAMB_NAME.match(s.value.strip()):
                used.append(s)
        gb = global_batch(f, ctx)
        values: dict[str, Any] = {"optimizer": "lamb" if used else None}
        if gb:
            values["global_batch"] = gb
        if used:
            return Outcome(U, evs(used), "a large-batch optimizer (LAMB/LARS) is used", values)
        if gb and _gpus_unknown(f, ctx):
            # LLaVA: ``deepspeed train_mem.py --per_device_train_batch_size 16`` runs on every GPU of the node; 16 is
            # what one GPU takes per step, not the global batch
            values["global_batch_per_gpu"] = True
            detail = (f"no LAMB/LARS optimizer (a batch of {gb} sequence{'s' if gb != 1 else ''} per GPU per optimizer step; "
                      "the launch does not fix the GPU count)")
        elif gb and _nodes_unknown(f, ctx):
            values["global_batch_per_node"] = True
            detail = (f"no LAMB/LARS optimizer (a batch of {gb} sequence{'s' if gb != 1 else ''} per node per optimizer step; "
                      "the node count is set when the job starts)")
        else:
            detail = "no LAMB/LARS optimizer" + (f" (estimated global batch {gb})" if gb else "")
        if options:
            c = options[0]
            name, value = _unchosen_lamb_branch(f, c) or ("", "")
            detail += (f"; the {c.short} at {c.path}:{c.line} is built only when {name} == '{value}', "
                       "which no setting in the project chooses")
        return Outcome(N, [], detail, values)

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status == U:
            return None
        gb = outcome.values.get("global_batch")
        if not gb or gb < 8192:
            return None
        return Priority.MEDIUM if gb >= 32768 else Priority.LOW


# --------------------------------------------------------------------------------------
# G3 sequence-length curriculum
# --------------------------------------------------------------------------------------


def _parents_enabled(f: Facts, path: str, keys: tuple[Any, ...]) -> bool:
    """False when an enclosing section (``data_efficiency``, ``data_sampling``) says ``enabled: false``."""
    ff = f.files.get(path)
    if ff is None:
        return True
    for e in ff.configs:
        if e.keys and e.keys[-1] == "enabled" and len(e.keys) < len(keys) and tuple(e.keys[:-1]) == tuple(keys[: len(e.keys) - 1]):
            if truthy(e.value) is False:
                return False
    return True


def _section(f: Facts, path: str, prefix: tuple[Any, ...]) -> list[Any]:
    ff = f.files.get(path)
    if ff is None:
        return []
    return [e for e in ff.configs if tuple(e.keys[: len(prefix)]) == prefix and len(e.keys) > len(prefix)]


def _catalogue_entry(f: Facts, e: Any) -> bool:
    """A section that only describes an algorithm (Composer's ``algorithms/seq_length_warmup/metadata.json``: ``"name":
    "Sequence Length Warmup"``, ``"tldr"``, ``"link"``, ``"domains": ["nlp"]``): every value under it is text, so it sets no
    duration or length and switches nothing on. An empty section (the algorithm at its defaults) is still a setting."""
    if not isinstance(e.value, Container):
        return False
    leaves = [x for x in _section(f, e.path, tuple(e.keys)) if not isinstance(x.value, Container)]
    return bool(leaves) and all(isinstance(x.value, str) or (isinstance(x.value, tuple) and all(isinstance(v, str) for v in x.value))
                                for x in leaves)


#: a project's own sequence-length curriculum (OLMo-core ``VSLCurriculumConfig``, ``name: VSLCurriculumType =
#: VSLCurriculumType.natural`` with ``grow_p2``/``grow_linear`` as the growing choices)
_OWN_CURRICULUM = lazy_compile(r"^\w*(VSL|SeqLen|Seqlen|SequenceLength|SeqLength)\w*Curriculum\w*$")
_GROWING = lazy_compile(r"grow|warmup|increas", re.I)
_TEST_FILE = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_test\.py$")

_VSL_LIB = {
    "src/olmo_core/data/numpy_dataset.py": (
        "from dataclasses import dataclass\nfrom enum import Enum\nfrom typing import Optional\n\n\n"
        "class VSLCurriculumType(str, Enum):\n    natural = 'natural'\n    grow_p2 = 'grow_p2'\n    grow_linear = 'grow_linear'\n\n\n"
        "@dataclass\nclass VSLCurriculumConfig:\n    name: VSLCurriculumType = VSLCurriculumType.natural\n"
        "    num_cycles: Optional[int] = None\n\n\n"
        "@dataclass\nclass NumpyVSLDatasetConfig:\n    max_sequence_length: int = 8192\n"
        "    vsl_curriculum: Optional[VSLCurriculumConfig] = None\n"),
}


def _fixed_length_host(f: Facts, c: Call) -> bool:
    """A VSL curriculum handed to a dataset config that is not a variable-sequence-length one (OLMo-core 2.1
    ``NumpyDatasetConfig.from_data_mix(..., vsl_curriculum=VSLCurriculumConfig(name=VSLCurriculumType.grow_p2))`` with the
    dataset's ``name`` left at its ``fsl`` default: ``validate()`` drops the curriculum)."""
    if "vsl" not in c.short.lower():
        return False
    ff = f.files.get(c.path)
    hosts = [o for o in (ff.calls if ff else []) if o.line <= c.line and o is not c and any(
        isinstance(v, Expr) and v.text.startswith(c.short + "(") for v in o.kwargs.values())]
    if not hosts:
        return False
    o = max(hosts, key=lambda x: x.line)
    name = o.kwargs.get("name")
    return "vsl" not in o.name.lower() and "vsl" not in (name.text if isinstance(name, Expr) else str(name or "")).lower()


def _flat_ds_warmup(f: Facts, ds: ConfigEntry) -> str | None:
    """What makes a DeepSpeed ``WarmupLR`` section a constant rate: no warmup steps, or the same rate at both ends."""
    params = {str(e.keys[-1]): e.value for e in f.config("warmup_num_steps", "warmup_min_lr", "warmup_max_lr")
              if e.path == ds.path and len(e.keys) >= 2 and tuple(e.keys[:-2]) == tuple(ds.keys[:-1])}
    steps, lo, hi = (as_number(params.get(k)) for k in ("warmup_num_steps", "warmup_min_lr", "warmup_max_lr"))
    if lo is not None and hi is not None and lo == hi:
        return f"warmup_min_lr = warmup_max_lr = {params['warmup_max_lr']}"
    if steps == 0:
        return "warmup_num_steps 0"
    # ``"warmup_num_steps": "auto"`` is filled by the HF Trainer with its own warmup steps (``get_warmup_steps``: 0 unless
    # ``warmup_steps`` or ``warmup_ratio`` is set); DeepSpeed's WarmupLR then ramps over max(2, 0) steps and holds the peak
    # (Nanbeige's train.sh sets neither: a constant 1e-5 after two steps)
    if str(params.get("warmup_num_steps")).lower() == "auto" and uses_hf_trainer(f):
        warm = f.effective("warmup_steps", "warmup_ratio")
        if all(as_number(s.value) == 0 for s in warm):
            return ('warmup_num_steps "auto", which the Trainer fills with its warmup steps: no warmup_steps or warmup_ratio is '
                    "set, so 0 (WarmupLR ramps over two steps, then holds the peak)")
    return None


def _vsl_recipe(kind: str) -> str:
    return ("from olmo_core.data.numpy_dataset import NumpyVSLDatasetConfig, VSLCurriculumConfig, VSLCurriculumType\n\n\n"
            "def build_config():\n    dataset = NumpyVSLDatasetConfig(\n        max_sequence_length=4096,\n"
            f"        vsl_curriculum=VSLCurriculumConfig(name={kind}, num_cycles=8),\n    )\n"
            "    loss = model(batch).loss\n    loss.backward()\n    return dataset\n")


@register
class G3SeqLenCurriculum(Check):
    id = "G3"
    title = "Sequence-length curriculum"
    title_zh = "序列长度渐进 (Curriculum)"
    bottlenecks = (Bottleneck.COMPUTE,)
    priority = Priority.LOW
    benefit = "short sequences early in pre-training: fewer FLOPs per token at the start and a more stable warm-up"
    what = (
        "Whether pre-training starts with short sequences and grows them: DeepSpeed `curriculum_learning` with "
        "`curriculum_type: seqlen`, DeepSpeed Data Efficiency `curriculum_metrics` on `seqlen_*`, Megatron-DeepSpeed "
        "`--curriculum-learning-legacy`, Composer `SeqLengthWarmup`. `enabled: false` is not use; a curriculum on another "
        "metric (vocabulary rarity) is not a sequence-length curriculum."
    )
    why = (
        "Sequence-length warmup let GPT-2 (117M/1.5B) pre-training run stably with an 8x larger batch and 4x larger LR and "
        "reach the same or better zero-shot results with up to 2.2x fewer tokens and 3.7x less wall-clock time (Li et al., "
        "NeurIPS 2022, 'The Stability-Efficiency Dilemma'). The gain is specific to pre-training; fine-tuning rarely benefits."
    )
    fix = ("For pre-training, enable a sequence-length curriculum: Megatron-DeepSpeed `\"curriculum_learning\": {\"enabled\": true, "
           "\"curriculum_type\": \"seqlen\", ...}` (its models take the `curriculum_seqlen` argument; drop a `--rampup-batch-size`), "
           "Composer `SeqLengthWarmup`.")
    fix_zh = ("预训练时启用序列长度渐进：Megatron-DeepSpeed `\"curriculum_learning\": {\"enabled\": true, \"curriculum_type\": "
              "\"seqlen\", ...}`（其模型接受 `curriculum_seqlen` 参数；如有 `--rampup-batch-size` 请去掉），或 Composer `SeqLengthWarmup`。")
    fix_safety = FixSafety.UNSAFE
    references = ("https://www.deepspeed.ai/tutorials/curriculum-learning/", "https://arxiv.org/abs/2108.06084")
    snippets = {
        "deepspeed-json": (
            '{\n  "curriculum_learning": {\n    "enabled": true,\n    "curriculum_type": "seqlen",\n    "min_difficulty": 64,\n'
            '    "max_difficulty": 2048,\n    "schedule_type": "fixed_linear",\n'
            '    "schedule_config": {"total_curriculum_step": 15000, "difficulty_step": 8}\n  }\n}\n'
        ),
    }
    examples = (
        Example({"ds_config.json": '{\n  "train_batch_size": 512,\n  "curriculum_learning": {\n    "enabled": true,\n'
                 '    "curriculum_type": "seqlen",\n    "min_difficulty": 64,\n    "max_difficulty": 1024,\n'
                 '    "schedule_type": "fixed_linear",\n    "schedule_config": {"total_curriculum_step": 15000, "difficulty_step": 8}\n'
                 '  }\n}\n'}, U, "deepspeed legacy seqlen"),
        Example({"ds_config.json": '{\n  "data_efficiency": {\n    "enabled": true,\n    "data_sampling": {\n      "enabled": true,\n'
                 '      "curriculum_learning": {\n        "enabled": true,\n        "curriculum_metrics": {\n'
                 '          "seqlen_truncate": {"min_difficulty": 80, "max_difficulty": 2048, "schedule_type": "fixed_linear"}\n'
                 '        }\n      }\n    }\n  }\n}\n'}, U, "data efficiency seqlen metric"),
        Example({"yamls/mpt-1b.yaml": "algorithms:\n  seq_length_warmup:\n    duration: 0.3\n    min_seq_length: 8\n"
                 "    max_seq_length: 2048\n"}, U, "composer seq_length_warmup"),
        Example({"ds_config.json": '{\n  "curriculum_learning": {\n    "enabled": false,\n    "curriculum_type": "seqlen",\n'
                 '    "min_difficulty": 64,\n    "max_difficulty": 1024\n  }\n}\n'}, N, "disabled"),
        Example({"ds_config.json": '{\n  "data_efficiency": {\n    "enabled": true,\n    "data_sampling": {\n'
                 '      "curriculum_learning": {\n        "enabled": true,\n        "curriculum_metrics": {\n'
                 '          "vocabularyrarity": {"min_difficulty": 1, "max_difficulty": 100}\n        }\n      }\n    }\n  }\n}\n'},
                N, "curriculum on vocabulary rarity only"),
        Example({"train.py": "# TODO: try curriculum learning with seqlen warmup\nmax_seq_len = 2048\n"}, N, "comment only"),
        Example({"mylib/algorithms/seq_length_warmup/metadata.json": (  # Composer 0.32: the algorithm's catalogue entry
            '{\n "seq_length_warmup": {\n  "name": "Sequence Length Warmup",\n  "class_name": "SeqLengthWarmup",\n'
            '  "tldr": "Progressively increase sequence length.",\n  "link": "https://arxiv.org/abs/2108.06084",\n'
            '  "domains": [\n   "nlp"\n  ]\n }\n}\n')}, N, "an algorithm catalogue entry that describes the warmup"),
        # OLMo-core: the library's own variable-sequence-length curriculum, growing ones (grow_p2, grow_linear) as options
        Example({**_VSL_LIB, "src/scripts/train/OLMo2-1B.py": _vsl_recipe("VSLCurriculumType.grow_p2")}, U,
                "a recipe builds the project's own growing VSL curriculum"),
        Example({**_VSL_LIB, "src/scripts/train/OLMo2-1B.py": _vsl_recipe("VSLCurriculumType.natural")}, N,
                "the 'natural' VSL curriculum samples lengths as they come: no growth"),
        Example({**_VSL_LIB, "src/scripts/train/OLMo2-1B.py": _vsl_recipe("VSLCurriculumType.grow_p2").replace(
            "NumpyVSLDatasetConfig(\n", "NumpyDatasetConfig(\n")}, N,
                "a growing VSL curriculum handed to the fixed-length dataset config, which drops it"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        # (the config class a recipe fills before the class it builds)
        own = sorted((k for k in f.records("classes") if _OWN_CURRICULUM.match(k.name) and not _TEST_FILE.search(k.path)),
                     key=lambda k: not k.name.endswith("Config"))
        for c in _live(f, f.calls_where(lambda n: bool(_OWN_CURRICULUM.match(n)))):
            kind = c.kwargs.get("name", c.args[0] if c.args else None)
            if _GROWING.search(kind.text if isinstance(kind, Expr) else str(kind or "")) and not _TEST_FILE.search(c.path) \
                    and not _fixed_length_host(f, c):
                return Outcome(U, evs([c]), f"sequence-length curriculum: {c.short} grows the sequence length", {"seqlen_curriculum": True})
        out = self._detect(ctx)
        if own and out.status == N and not out.evidence:
            k = own[0]
            out.evidence = [Evidence(k.path, k.line, k.text, k.name)]
            out.detail = (f"{out.detail}: the project's own {k.name} ({k.path}:{k.line}) offers one, and no training run "
                          "uses a growing one (a VSL curriculum counts only in a VSL dataset config)")
            out.values |= {"advice_for": "own-curriculum", "flag": k.name}
        return out

    def _detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list[Any] = []
        other: list[Any] = []
        disabled: list[Any] = []
        for e in f.config("curriculum_learning.enabled"):
            prefix = tuple(e.keys[:-1])
            if truthy(e.value) is not True or not _parents_enabled(f, e.path, e.keys):
                disabled.append(e)
                continue
            sec = _section(f, e.path, prefix)
            seqlen = [x for x in sec if any("seqlen" in str(k).lower() or "seq_len" in str(k).lower() for k in x.keys[len(prefix):])
                      or (str(x.keys[-1]) == "curriculum_type" and isinstance(x.value, str) and "seq" in x.value.lower())]
            if seqlen:
                used.append(seqlen[0])
            else:
                other.append(e)
        for s in f.effective("curriculum_learning_legacy", "curriculum_seqlen", "seqlen_warmup", "seq_len_warmup",
                             "sequence_length_warmup", "seq_length_warmup"):
            if isinstance(s.value, (bool, int, float, str)) and (truthy(s.value) or (as_number(s.value) or 0) > 0):
                used.append(s)
        for e in f.config("seq_length_warmup"):
            if e.value is not None and truthy(e.value) is not False and not _catalogue_entry(f, e):
                used.append(e)
        used += _live(f, f.calls("SeqLengthWarmup"))
        if used:
            return Outcome(U, evs(used), "sequence-length curriculum is enabled", {"seqlen_curriculum": True})
        if other:
            return Outcome(N, evs(other), "a curriculum is enabled, but not on sequence length", {"seqlen_curriculum": False})
        values: dict[str, Any] = {"seqlen_curriculum": False}
        if uses_hf_trainer(f) and not f.launches("megatron") and "megatron" not in ctx.project.frameworks:
            # DeepSpeed's curriculum hands ``curriculum_seqlen`` to the model's forward, which HF models do not accept
            # (Llama-Chinese's Atom pre-training through the HF Trainer): staged runs instead
            values["advice_for"] = "hf-trainer"
        return Outcome(N, evs(disabled), "sequence-length curriculum is disabled" if disabled else "no sequence-length curriculum",
                       values)

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status == U or not ctx.project.pretrains:
            return None  # the published gains are for pre-training; fine-tuning gets no advice
        if ctx.project.notes.get("dual_encoder_only"):
            return None  # a CLIP-style text tower reads 77-token captions: no long context to ramp up to
        return self.priority


# --------------------------------------------------------------------------------------
# G4 LoRA / QLoRA and G5 freezing share the fine-tuning applicability
# --------------------------------------------------------------------------------------


_SIDE_USE = lazy_compile(r"(generat|sampl|convert|conversion|export|eval|infer|chat|serve|server|demo|upload|to_hf|from_hf|hf_to|"
                       r"compare|verify|benchmark|bench)", re.I)
_TESTS_PATH = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$")
_FT_FRAMEWORKS = {"peft", "trl", "llamafactory", "axolotl", "unsloth", "torchtune"}


_TOKENIZER_LOAD = lazy_compile(r"tokeni[sz]er|processor|config", re.I)
_FINETUNE_PATH = lazy_compile(r"(finetun|fine_tun|fine-tun|sft|lora|instruct|adapter|peft)", re.I)


def _weights_only_for_side_use(ctx: Context) -> list[Call] | None:
    """A training project whose every model ``from_pretrained`` sits in a generation, conversion or evaluation
    script (``tools/convert_hf_to_megatron.py``, ``sample.py``, ``def generate(...)``), or that loads only tokenizers
    (OLMo's ``Tokenizer.from_pretrained``), and shows no other sign of fine-tuning: those loads (possibly none);
    None when the project does fine-tune."""
    f, p = ctx.facts, ctx.project
    if not (p.pretrains or p.does_training) or p.alignment or _FT_FRAMEWORKS & set(p.frameworks) or _peft_calls(f):
        return None
    loads = [c for c in f.calls("from_pretrained") if not _TESTS_PATH.search(c.path)
             and not _TOKENIZER_LOAD.search(f"{c.name} {c.path.rsplit('/', 1)[-1]}")]
    if not all(_SIDE_USE.search(c.path.rsplit("/", 1)[-1]) or _SIDE_USE.search(c.func or "") for c in loads):
        return None
    if own_pretrained_loader(f) or pretrained_option_to_model(f):
        return None  # the project reads weights into the model it trains (its own loader, or its --pretrained option)
    if any(_FINETUNE_PATH.search(path) for path in f.files if not _TESTS_PATH.search(path)):
        return None
    ft = [s for s in f.settings("finetuning_type", "lora_r", "lora_rank", "adapter", "pretrained_checkpoint", "finetune")
          if truthy(s.value) is not False and s.source not in ("argparse-default", "field-default") and not _TESTS_PATH.search(s.path)]
    hub = [s for s in f.settings("model_name_or_path", "base_model", "pretrained_model_name_or_path", "init_from")
           if isinstance(s.value, str) and "/" in s.value and s.source in ("launcher", "config") and not _TESTS_PATH.search(s.path)]
    return None if ft or hub else loads


def _pretrain_only(ctx: Context) -> str | None:
    """No fine-tuning path: training from scratch (``GPT(config)``, Megatron pre-training) or inference only."""
    if not ctx.project.finetunes:
        hooks = ctx.project.notes.get("user_model_trainer")
        if hooks and not ctx.project.pretrains:
            # training code is only a library's Trainer subclass (its step hooks): the model it trains is whatever the
            # user's script passes in; the project neither loads nor builds one, so "pre-trains from scratch" is unknown
            return (f"not judged: the project's training code is a Trainer subclass ({hooks[0]}) that trains the model a "
                    "user's script passes in; the project loads or builds none, so whether the run fine-tunes is not visible")
        if ctx.project.pretrains or ctx.project.does_training:
            return "the project only pre-trains from scratch (no fine-tuning path)"
        return "the project has no fine-tuning path"
    side = _weights_only_for_side_use(ctx)
    if side:
        c = side[0]
        return (f"the project pre-trains from scratch; from_pretrained only loads weights for generation/conversion/evaluation "
                f"({c.path}:{c.line}{', and ' + str(len(side) - 1) + ' more' if len(side) > 1 else ''}), not for fine-tuning")
    if side is not None:
        return "the project pre-trains from scratch: from_pretrained loads only tokenizers/configs, and nothing fine-tunes"
    return None


_PEFT_CALLS = (
    "peft.LoraConfig", "LoraConfig", "get_peft_model", "prepare_model_for_kbit_training", "AdaLoraConfig", "LoHaConfig",
    "LoKrConfig", "VeraConfig", "IA3Config", "PrefixTuningConfig", "PromptTuningConfig", "PromptEncoderConfig", "OFTConfig",
    "BOFTConfig", "peft.LoraModel", "FastLanguageModel.get_peft_model", "FastVisionModel.get_peft_model",
    "FastModel.get_peft_model", "inject_adapter_in_model", "mark_only_lora_as_trainable", "loralib.*",
    # pyreft: ``get_reft_model(model, reft_config)`` wraps the model in interventions and freezes every base weight
    # (``disable_model_grads=True`` by default): a representation fine-tune trains a few thousand parameters
    "pyreft.get_reft_model", "pyreft.utils.get_reft_model",
)
_LORA_SWITCHES = ("lora_enable", "use_lora", "use_peft", "lora", "enable_lora", "use_llm_lora", "peft", "do_lora", "lora_train",
                  "train_lora", "apply_lora", "with_lora", "finetune_lora", "low_rank_training")
#: the owner of an ``enable`` switch that is LoRA's (``LoraArgs.enable``, ``lora.enable``, ``LoRAConfig.enabled``)
_LORA_OWNER = lazy_compile(r"(?i)(^|[._])q?lora(_?(args|arguments|config|cfg|params))?$")
_LORA_VALUES = lazy_compile(r"^(q?lora|longlora|adalora|dora|lora\+|loraplus|pissa|olora|vera|loha|lokr|oft|boft|ia3|"
                          r"prefix|p_tuning|prompt_tuning|adapter|llamapro|reft|bone|fourierft)$", re.I)
_PEFT_CHOICES = {"r", "lora_r", "lora_rank", "rank", "target_modules", "lora_alpha", "num_virtual_tokens", "init_lora_weights"}
_FULL_VALUES = {"full", "freeze", "none", "full_finetune", "fft", "all"}


_TRAIN_SIDE_CALLS = {"backward", "Trainer", "SFTTrainer", "DPOTrainer", "TrainingArguments", "SFTConfig", "get_peft_model",
                     "prepare_model_for_kbit_training", "LoraConfig", "train", "fit", "HfArgumentParser"}


_BOUND_NAME = lazy_compile(r"^\s*([A-Za-z_]\w*)\s*=\s*[\w.]+\(")


def _discarded_config(f: Facts, c: Call) -> bool:
    """A PEFT config bound to a name at module level (a script's main block) that nothing after it reads, while a later call
    passes ``None`` for it (ChatLM-mini-Chinese ``peft_config = LoraConfig(...)`` then ``train_dpo(dpo_config,
    peft_config=None)``, the merge call commented out): built and dropped, it adapts nothing."""
    if c.func is not None or not c.short.endswith("Config") or c.path not in f.files:
        return False
    m = _BOUND_NAME.match(c.text)
    if m is None:
        return False
    word = re.compile(rf"\b{re.escape(m.group(1))}\b")
    ff = f.files[c.path]
    texts = [getattr(v, "text", None) or "" for x in ff.calls if x.line > c.line for v in (*x.args, *x.kwargs.values())]
    texts += [getattr(a.value, "text", None) or "" for a in (*ff.assigns, *ff.attr_assigns) if a.line > c.line]
    if any(word.search(t) for t in texts) or any(r.line > c.line and word.search(r.text) for r in ff.refs):
        return False
    # ... and a later call hands the trainer ``None`` in its place (``peft_config=None``): the script chose not to adapt
    name = m.group(1)
    return any(x.line > c.line and any(v is None and (k == name or "peft" in k or "lora" in k) for k, v in x.kwargs.items())
               for x in ff.calls)


#: a k-bit switch compared with a bit-width option (artidoro/qlora's ``load_in_4bit=args.bits == 4``, copied by Dromedary)
_BITS_COMPARE = lazy_compile(r"^(?:\w+\.)*(\w+)\s*==\s*(\d+)$")


def _bits_on(f: Facts, v: Any, bits: int) -> bool:
    """``v`` is ``<option> == bits`` and the runs set that option to ``bits``: the launches' value where they pass it
    (Dromedary's ``--bits 4``), else its default."""
    m = _BITS_COMPARE.match(v.text.strip()) if isinstance(v, Expr) else None
    if m is None or int(m.group(2)) != bits:
        return False
    found = f.effective(m.group(1))
    top = max((s.rank for s in found), default=None)
    values = {as_number(s.value) for s in found if s.rank == top}
    return bool(values) and values == {bits}


def _bnb_4bit(f: Facts) -> list[Any]:
    # (a helper no code of the project calls builds no model: the 4-bit config of a library copy's ``get_quantization_config``)
    out: list[Any] = [c for c in _live(f, f.calls("BitsAndBytesConfig")) if (truthy(c.kwargs.get("load_in_4bit")) is True
                      or _bits_on(f, c.kwargs.get("load_in_4bit"), 4)) and not uncalled_function(f, c)]
    # a call keyword (``BitsAndBytesConfig(load_in_4bit=True, ...) if lora_args.q_lora else None``) counts only when the
    # call's own branch is live, as the call above does
    out += [s for s in f.effective("load_in_4bit", "load_4bit") if (truthy(s.value) is True or _bits_on(f, s.value, 4))
            and not (s.source == "call" and (c := _setting_call(f, s)) is not None and (guard_off(f, c) or uncalled_function(f, c)))]
    out += [s for s in f.effective("quantization_bit", "quant_bits") if as_number(s.value) == 4]
    return [x for x in out if _training_side(f, x.path)]


def _four_bit_kind(f: Facts, site: Any) -> dict[str, str]:
    """The 4-bit data type and compute dtype a 4-bit load asks for, where the code says: a ``BitsAndBytesConfig``'s
    ``bnb_4bit_quant_type`` and ``bnb_4bit_compute_dtype`` (string or ``torch.<dtype>`` only), or the defaults transformers
    fills in for a bare ``from_pretrained(..., load_in_4bit=True)`` in a file that builds no ``BitsAndBytesConfig``
    (Chinese-Vicuna ``finetune_4bit.py``): FP4 computing in float32. A recipe's ``load_in_4bit: true`` is the framework's
    to fill (axolotl builds NF4 itself): nothing is said."""
    calls = [site] if isinstance(site, Call) else []
    if isinstance(site, Setting) and site.source == "call" and site.key.split("(", 1)[0].endswith("from_pretrained"):
        calls = [c for c in f.files[site.path].calls if c.short == "BitsAndBytesConfig"] if site.path in f.files else []
        if not calls:
            return {"base_quant_type": "fp4", "base_compute_dtype": "float32", "base_quant_defaults": "true"}
    if len(calls) != 1:
        return {}
    out: dict[str, str] = {}
    qt = calls[0].kwargs.get("bnb_4bit_quant_type")
    if isinstance(qt, str):
        out["base_quant_type"] = qt.lower()
    elif "bnb_4bit_quant_type" not in calls[0].kwargs:
        out["base_quant_type"] = "fp4"
    dt = calls[0].kwargs.get("bnb_4bit_compute_dtype")
    name = dt if isinstance(dt, str) else dt.text if isinstance(dt, Expr) and dt.text.startswith("torch.") else None
    if name is not None:
        out["base_compute_dtype"] = name.removeprefix("torch.")
    elif "bnb_4bit_compute_dtype" not in calls[0].kwargs:
        out["base_compute_dtype"] = "float32"
    return out


def _training_side(f: Facts, path: str) -> bool:
    """A file that trains, or no Python file: a k-bit load in Python that never trains (LLaVA's ``load_pretrained_model(
    load_4bit=...)`` for serving) is inference quantization (J4), not a quantized base under adapters."""
    ff = f.files.get(path)
    return not path.endswith(".py") or bool(ff and any(c.short in _TRAIN_SIDE_CALLS for c in ff.calls))


def bnb_8bit(f: Facts) -> list[Any]:
    """Where the trained model's frozen base is loaded in bitsandbytes 8-bit (LLM.int8): ``load_in_8bit=True`` (Platypus,
    ChatDoctor's ``train_lora.py``) or ``BitsAndBytesConfig(load_in_8bit=True)``, with PEFT's ``prepare_model_for_int8_training``
    on a live branch beside such a load."""
    out: list[Any] = [c for c in _live(f, f.calls("BitsAndBytesConfig")) if (truthy(c.kwargs.get("load_in_8bit")) is True
                      or _bits_on(f, c.kwargs.get("load_in_8bit"), 8)) and not uncalled_function(f, c)]
    out += [s for s in f.effective("load_in_8bit", "load_8bit") if (truthy(s.value) is True or _bits_on(f, s.value, 8))
            and not (s.source == "call" and (c := _setting_call(f, s)) is not None and (guard_off(f, c) or uncalled_function(f, c)))]
    # (a recipe's own top-level key, axolotl ``load_in_8bit: true``; not one entry of a list of served models, medAlpaca's
    # ``supported_models.json``: ``{"alpaca-lora": {"load_in_8bit": "True", ...}}``)
    out = [x for x in out if _training_side(f, x.path) and not (getattr(x, "source", "") == "config" and "." in x.key)]
    # PEFT's ``prepare_model_for_int8_training`` only backs up a load: on a 16-bit model it freezes the weights and casts
    # norms to FP32 (LLM-Adapters calls it whatever ``--load_8bit``, which defaults to False)
    if out:
        out += [c for c in _live(f, f.calls("prepare_model_for_int8_training")) if not uncalled_function(f, c) and not guard_off(f, c)
                and _training_side(f, c.path)]
    return out


def _enum_label(s: Setting) -> bool:
    """``LORA = "lora"``: an upper-case constant whose value is its own name (an enum member or a method label)."""
    name = s.key.rsplit(".", 1)[-1]
    return s.source in ("assign", "field-default") and name.isupper() and isinstance(s.value, str) and s.value.lower() == name.lower()


def _modules(f: Facts) -> tuple[set[str], set[str]]:
    """(dotted names of every Python module and package in the tree, the top-level packages among them)."""
    memo = f._memo
    key = ("g-modules",)
    if key not in memo:
        mods: set[str] = set()
        for p in f.files:
            if not p.endswith(".py"):
                continue
            parts = p[:-3].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            for i in range(len(parts)):  # ``src/pkg/x.py`` is ``pkg.x`` too
                mods.add(".".join(parts[i:]))
            for i in range(1, len(parts)):
                for j in range(i):
                    mods.add(".".join(parts[j:i]))  # the packages on the way
        # the project's own top-level packages: ``pkg/__init__.py`` or ``src/pkg/__init__.py``
        tops = {p.split("/")[-2] for p in f.files if re.fullmatch(r"(src/)?[\w-]+/__init__\.py", p)}
        memo[key] = (mods, tops)  # type: ignore[assignment]
    return memo[key]  # type: ignore[return-value]


def _stale_script(f: Facts, path: str) -> list[Any]:
    """Imports of the project's own package that the tree does not have (lmms-engine's ``prepare_kino_lora.py`` imports
    ``lmms_engine.models.qwen2_5_vl_audio``, not in the release): a script that cannot run against this code is no
    training path. Empty when every import of the project's packages resolves."""
    ff = f.files.get(path)
    if ff is None:
        return []
    mods, tops = _modules(f)
    return [i for i in ff.imports if "." in i.module and not i.module.startswith(".")
            and i.module.split(".", 1)[0] in tops and i.module not in mods]


_ENGINE_PACKAGES = ("tensorrt_llm.", "vllm.", "sglang.", "lmdeploy.")


def _peft_calls(f: Facts) -> list[Call]:
    """Calls that build adapters to train: PEFT's and the like, not an inference engine's LoRA config (Megatron-LM's
    TensorRT-LLM engine builder ``tensorrt_llm.lora_manager.LoraConfig(lora_dir=...)`` serves adapters, it trains none)."""
    return [c for c in f.calls(*_PEFT_CALLS) if not c.name.startswith(_ENGINE_PACKAGES)]
_SERVING_PATH = lazy_compile(r"(^|/)(\w*rollout\w*|\w*serv(e|er|ing)\w*|infer\w*|generat\w*)(/|\.py$)", re.I)


def _owner(s: Setting) -> str:
    return s.key.rsplit(".", 1)[0] if s.source == "field-default" and "." in s.key else s.path


def _kind_beside_off_switch(f: Facts, s: Setting) -> bool:
    """A code default naming the adapter kind (``peft_type``) in the same config class (or file) as a LoRA switch whose
    default is off: it says which adapter a run gets when it turns the switch on, not that one is trained."""
    return s.rank == 0 and any(x.rank == 0 and truthy(x.value) is False and _owner(x) == _owner(s)
                               for x in f.settings(*_LORA_SWITCHES))


_ADAPTER_NUMBERS = ("r", "lora_r", "lora_rank", "rank", "lora_alpha", "alpha")
_OBJECT_FIELD = lazy_compile(r"[A-Za-z_]\w*\.[A-Za-z_]\w*")


def _serialised_adapter(f: Facts, s: Setting) -> bool:
    """A ``"peft_type": "LORA"`` item of a Python dict whose rank/alpha items are read from an object handed in
    (``{"peft_type": "LORA", "r": peft_config.dim, "lora_alpha": peft_config.alpha}``, the adapter_config.json written
    when an adapter is saved), or from the same-named fields of the object itself (``{"peft_type": "LORA", "r": self.r,
    "lora_alpha": self.lora_alpha}`` in a LoRA config's ``to_peft_dict``): it describes an adapter a run already has, it
    does not choose one."""
    if s.source != "config" or not s.path.endswith(".py") or "." not in s.key or s.path not in f.files:
        return False
    parent = tuple(s.key.split(".")[:-1])
    nums = [e for e in f.files[s.path].configs if tuple(e.keys[:-1]) == parent and e.keys[-1] in _ADAPTER_NUMBERS]
    return bool(nums) and all(isinstance(e.value, Expr) and e.value.dotted is None and (
        (e.value.ref is None and _OBJECT_FIELD.fullmatch(e.value.text or ""))
        or e.value.text == f"self.{e.keys[-1]}") for e in nums)


#: calls that put adapters on a model: a PEFT config alone trains nothing until one of these (or a trainer) takes it
_PEFT_WRAPPERS = ("get_peft_model", "prepare_model_for_kbit_training", "FastLanguageModel.get_peft_model",
                  "FastVisionModel.get_peft_model", "FastModel.get_peft_model", "inject_adapter_in_model", "peft.LoraModel")


def _uncalled_config_helper(f: Facts, c: Call) -> bool:
    """A PEFT config built in a helper no code of the project calls or references (an exported ``def lora_defaults(r=8,
    alpha=16): return LoraConfig(...)`` for the user's own script), in a project whose every adapter wrapper is off
    (``get_peft_model(model, peft_config)`` under ``if peft_config is not None:``, the parameter defaulting to None and no
    caller passing it): an opt-in helper, not an adapter the run trains. A helper some code calls, or a project with a
    wrapper that runs, keeps the config as LoRA evidence."""
    if not c.func or c.short in {w.rsplit(".", 1)[-1] for w in _PEFT_WRAPPERS} or _TESTS_PATH.search(c.path):
        return False
    if any(x.func != c.func for x in f.calls(c.func)) or f.refs(c.func):
        return False
    wrappers = [w for w in f.calls(*_PEFT_WRAPPERS) if not _TESTS_PATH.search(w.path)]
    return bool(wrappers) and all(guard_off(f, w) or callers_off(f, w) for w in wrappers)


_LIST_ANNOTATION = lazy_compile(r":\s*(Optional\[)?\s*(typing\.)?(List|list|Sequence|Tuple|tuple)\[")


def _list_option(s: Setting) -> bool:
    """A switch-named field typed as a list and defaulting to None (xTuring's own ``LoraConfig.enable_lora:
    Optional[List[bool]] = field(default=None)``, loralib's per-projection mask for ``MergedLinear``): an option of the
    adapter a LoRA config builds, not an on/off switch of LoRA training."""
    return s.source == "field-default" and s.value is None and bool(_LIST_ANNOTATION.search(s.text or ""))


def _lora_recipe_minority(f: Facts, lora: list[Any]) -> tuple[set[str], int] | None:
    """When every LoRA signal is a recipe file's ``enable`` switch of a LoRA section and those recipes are a minority of
    their family (NeMo-RL: ``lora_cfg.enabled: true`` in 4 recipes; the others inherit ``enabled: False`` from their base
    config): (the recipes that turn it on, the family's size). None otherwise."""
    # (or a recipe's own LoRA switch: LAVIS ``lora: True`` in ``xinstruct_blip/train/vicuna7b/lora_training.yaml`` only)
    if not lora or not all(isinstance(x, Setting) and x.source == "config" and x.name in ("enable", "enabled", "lora", "use_lora", "lora_enable")
                           and x.path.endswith((".yaml", ".yml", ".json")) for x in lora):
        return None
    on_files = {x.path for x in lora}
    family = len(on_files) + len(f.sibling_recipes(on_files, share=1 / 3))
    return (on_files, family) if family >= 3 and len(on_files) * 2 < family else None


def _own_lora_args(enable: bool) -> dict[str, str]:
    """mistral-finetune-shaped: its own ``LoRALinear`` layers, built when ``LoraArgs.enable`` (a dataclass field) is on;
    the recipe gives the rank."""
    return {
        "model/args.py": (
            "from dataclasses import dataclass\n\nfrom simple_parsing.helpers import Serializable\n\n\n@dataclass\n"
            f"class LoraArgs(Serializable):\n    enable: bool = {enable}\n    rank: int = 16\n    dropout: float = 0.0\n"
            "    scaling: float = 2.0\n"),
        "model/lora.py": (
            "import torch.nn as nn\n\n\nclass LoRALinear(nn.Module):\n"
            "    def __init__(self, in_features, out_features, rank, scaling, dropout=0.0):\n        super().__init__()\n"
            "        self.lora_A = nn.Linear(in_features, rank, bias=False)\n        self.lora_B = nn.Linear(rank, out_features, bias=False)\n"
            "        self.frozen_W = nn.Linear(in_features, out_features, bias=False)\n"),
        "example/7B.yaml": "model_id_or_path: ''\nlora:\n  rank: 64\nseq_len: 32768\nbatch_size: 1\nmax_steps: 300\n",
    }


#: a condition on the PEFT config a trainer is handed (``if peft_config is not None:``)
_PEFT_CONFIG_GUARD = lazy_compile(r"^(not\s+)?\(?\s*peft_config\b(\s+is\s+not\s+None)?\s*\)?$")


def _trl_peft_gate(f: Facts, code: list[Call]) -> list[Call]:
    """TRL's ``get_peft_config(model_args)`` calls, when they are where every PEFT call of the project gets its config
    (R1-V: ``grpo.py:185 peft_config=get_peft_config(model_args)``, and the trainer's ``if peft_config is not None:
    model = get_peft_model(model, peft_config)``) and nothing turns ``use_peft`` on: TRL returns None unless a run
    passes ``--use_peft``, so no run builds an adapter. Empty otherwise (a PEFT call with its own config, or unguarded)."""
    gets = [c for c in f.calls("get_peft_config") if c.name.startswith("trl.")]
    if not gets or not all(c.short == "get_peft_model" and c.guard and _PEFT_CONFIG_GUARD.match(c.guard.strip())
                           and not c.guard.strip().startswith("not") for c in code):
        return []
    if any(truthy(s.value) is not False for s in f.settings("use_peft") if s.source in ("launcher", "config")):
        return []
    if any(h.kind == "command_flag" and h.value == "use_peft" for h in f.records("doc_hints")):
        return []  # the README's command turns it on
    return gets


def _lora_scan(f: Facts) -> tuple[list[Any], list[Any], list[Any]]:
    """(LoRA evidence, full/freeze evidence, disabled-switch evidence)."""
    lora: list[Any] = []
    full: list[Any] = []
    # an enum member that names a method (``class PEFT_METHOD(Enum): LORA = "lora"``) is a label, not a switch
    # ``"enable_lora": True`` in a rollout/serving engine's arguments (verl vllm_async_server.py) lets the inference engine
    # load adapters; it does not train with LoRA
    switches = [s for s in f.effective(*_LORA_SWITCHES) if not _enum_label(s) and not _list_option(s)
                and not (s.path.endswith(".py") and _SERVING_PATH.search(s.path))]
    # the on/off field of the project's own LoRA arguments (mistral-finetune ``class LoraArgs: enable: bool = True``, set in
    # a recipe as ``lora: {enable: ...}``)
    switches += [s for s in f.effective("enable", "enabled", "enable_lora") if _LORA_OWNER.search(s.key.rsplit(".", 1)[0])
                 and isinstance(s.value, bool) and s not in switches and not (s.path.endswith(".py") and _SERVING_PATH.search(s.path))]
    on = [s for s in switches if truthy(s.value) is True or (not isinstance(s.value, bool) and (as_number(s.value) or 0) > 0)
          or (isinstance(s.value, str) and _LORA_VALUES.match(s.value.strip()))]
    # a switch set only inside an ``if`` branch that is off (``engine_kwargs["enable_lora"] = True`` for the rollout engine,
    # under ``if cfg.trainer.policy.model.lora.rank > 0:`` with ``rank: 0``) is not turned on
    on = [s for s in on if not set_under_off_branch(f, s)]
    off = [s for s in switches if s not in on and (truthy(s.value) is False or as_number(s.value) == 0)]
    # a PEFT config built only from a dict the caller passes (llm-foundry: ``return LoraConfig(**peft_config_dict)`` in a
    # builder that runs when a run sets ``peft_config``) is support code, not a choice of LoRA
    # and a converter that spreads a config object the caller passes (fms-hf-tuning
    # ``HFPromptTuningConfig(task_type=task_type, **asdict(tuning_config))``), with no rank or target modules of its own
    # a PEFT wrapper in a helper every caller of which sits behind a switch that is off (verl ``_build_lora_module`` under
    # ``if self._is_lora:``, ``_is_lora = lora_rank > 0``, ``lora_rank: 0``) is not run
    # an inference engine's adapter config (megatron-core's TensorRT-LLM export: ``from tensorrt_llm.lora_manager import
    # LoraConfig``) serves LoRA checkpoints; it trains nothing
    code = [c for c in _live(f, f.calls(*_PEFT_CALLS)) if not c.name.startswith(_ENGINE_PACKAGES)
            and not callers_off(f, c) and not (c.star_kwargs and c.func and not c.args
                                                               and not set(c.kwargs) & _PEFT_CHOICES)
            and not _stale_script(f, c.path) and not _uncalled_config_helper(f, c) and not _discarded_config(f, c)]
    if code and not on and (trl_gate := _trl_peft_gate(f, code)):
        code = []  # every PEFT call waits for the config TRL's get_peft_config builds only under --use_peft, unset everywhere
        off += trl_gate
    lora += on  # the switch a launch or recipe turns on is the evidence to read first, then the code it enables
    if code and (on or not off):
        # a launch or recipe that gives the adapter a rank (OpenRLHF ``--ds.lora.rank 64``, read by ``if lora_rank > 0:``)
        lora += [s for s in f.effective(*_RANK_KEYS) if s.source in ("launcher", "config") and not isinstance(s.value, bool)
                 and (as_number(s.value) or 0) > 0 and s not in lora]
        lora += code
    else:
        # a ReFT wrapper is not LoRA: a LoRA switch that is off leaves it in place (pyreft's loreft/train.py builds
        # ``get_reft_model(model, reft_config)`` on every run and adds LoRA to it only under ``--use_lora``)
        lora += [c for c in code if c.short == "get_reft_model" and not c.guard]
    for s in f.effective("finetuning_type", "train_type", "sft_type", "tuner_type", "peft_type", "peft_scheme", "adapter",
                         "finetune_type", "training_type", "tuning_type"):
        if not isinstance(s.value, str):
            if s.name == "adapter" and s.value is None and s.source == "config":
                full.append(s)
            continue
        v = s.value.strip()
        if _LORA_VALUES.match(v) and not (s.name == "adapter" and s.source == "call"):
            if not on and _kind_beside_off_switch(f, s):
                continue  # AReaL ``peft_type: str = "lora"`` beside ``use_lora: bool = False``: the kind the switch would turn on
            if _serialised_adapter(f, s):
                continue  # an existing adapter's config written out at save time
            lora.append(s)
        elif v.lower() in _FULL_VALUES:
            full.append(s)
    for e in f.config("model._component_", "model.name"):
        if isinstance(e.value, str) and re.search(r"(^|[._])q?lora_", e.value.rsplit(".", 1)[-1]):
            lora.append(e)
    for launch in f.launches("torchtune"):
        if re.search(r"\bq?lora_\w+", launch.text):
            lora.append(launch)
    # LLaMA-Factory: finetuning_type defaults to "lora"
    for path in _lf_yamls(f):
        ff = f.files[path]
        if not any(e.keys and e.keys[0] == "finetuning_type" for e in ff.configs):
            e = _first_entry(f, path, "stage")
            if e is not None:
                lora.append(e)
    if not lora and not on and not off:
        # PEFT built only behind a switch that is off (OpenRLHF ``if lora_rank > 0:`` with ``--ds.lora.rank`` default 0)
        seen = {(x.path, x.line) for x in off}
        for c in _peft_calls(f):
            for g in guard_off(f, c):
                if (g.path, g.line) not in seen:
                    seen.add((g.path, g.line))
                    off.append(g)
    return lora, full, off


#: a LoRA converter or config a registry recipe lists (torchtitan ``LoRAConverter.Config(rank=8, alpha=16)``)
_LORA_RECIPE = lazy_compile(r"(?i)(^|\.)\w*lora\w*(\.config)?$")


_RANK_KEYS = ("lora_rank", "lora_r", "lora_dim", "lora.rank")


def _qlora_minority(lora: list[Any], q: list[Any]) -> str:
    """"5 of 35 LoRA recipes (examples/train_qlora/a.yaml, ...)" when every QLoRA sign is a recipe's or launch's own setting
    (a 4-bit base chosen per recipe) and fewer than half of the recipes that set up LoRA choose it: QLoRA is then an option
    a few recipes show, not how the project's runs train. Empty otherwise."""
    per_run = ("config", "launcher")
    if not q or not all(isinstance(x, Setting) and x.source in per_run for x in q):
        return ""
    q_files = sorted({x.path for x in q})
    recipes = {x.path for x in lora if isinstance(x, Setting) and x.source in per_run} | set(q_files)
    if len(recipes) < 3 or len(q_files) * 2 >= len(recipes):
        return ""
    shown = ", ".join(q_files[:2]) + (", ..." if len(q_files) > 2 else "")
    return f"{len(q_files)} of {len(recipes)} LoRA recipes ({shown})"


def _is_qlora(f: Facts, lora: list[Any]) -> list[Any]:
    """QLoRA evidence: a ``qlora`` adapter/recipe, or a 4-bit base next to LoRA."""
    q = [x for x in lora if re.search(r"(?i)\bq_?lora", str(getattr(x, "value", "")) + " " + str(getattr(x, "text", "")))]
    return q + _bnb_4bit(f)


#: an RL framework (skyrl-train): the LoRA rank comes from the Hydra YAML by its full key path; a checkpoint helper's
#: ``{"rank": rank}`` dict shares only the last segment; the rollout engine gets ``enable_lora`` under the same rank test
_RL_LORA = {
    "myrl/config/ppo_base_config.yaml": ("trainer:\n  strategy: fsdp2\n  policy:\n    model:\n      path: Qwen/Qwen2.5-1.5B-Instruct\n"
                                         "      lora:\n        rank: {rank}\n        alpha: 16\n"),
    "myrl/model_wrapper.py": (
        "import torch.nn as nn\nfrom peft import LoraConfig, TaskType, get_peft_model\nfrom transformers import AutoModelForCausalLM\n\n\n"
        "class HFModelWrapper(nn.Module):\n    def __init__(self, pretrain, lora_rank=0, lora_alpha=16):\n        super().__init__()\n"
        "        self.model = AutoModelForCausalLM.from_pretrained(pretrain)\n        if lora_rank > 0:\n"
        "            lora_config = LoraConfig(task_type=TaskType.CAUSAL_LM, r=lora_rank, lora_alpha=lora_alpha)\n"
        "            self.model = get_peft_model(self.model, lora_config)\n"),
    "myrl/workers/fsdp_worker.py": (
        "from myrl.model_wrapper import HFModelWrapper\n\n\nclass PolicyWorker:\n    def init_model(self, model_path):\n"
        "        self.model = HFModelWrapper(model_path, lora_rank=self.cfg.trainer.policy.model.lora.rank,\n"
        "                                    lora_alpha=self.cfg.trainer.policy.model.lora.alpha)\n"
        "        loss = self.model(self.batch).loss\n        loss.backward()\n        self.optimizer.step()\n"),
    "myrl/distributed/fsdp_strategy.py": (
        "import torch\n\n\ndef save_checkpoint(model, rank, world_size, path):\n"
        "    extra_state_dict = {{\"rank\": rank, \"world_size\": world_size}}\n    torch.save(extra_state_dict, path)\n"),
    "myrl/entrypoints/main_base.py": (
        "def create_inference_engines(cfg):\n    engine_kwargs = {{\"tensor_parallel_size\": 4}}\n"
        "    if cfg.trainer.policy.model.lora.rank > 0:\n        engine_kwargs[\"enable_lora\"] = True\n"
        "    return engine_kwargs\n"),
}


# NeMo AutoModel: the checkpointer writes HF's adapter_config.json from the adapter a run already has; the SFT recipe
# trains full parameters unless its YAML has a ``peft:`` section
_ADAPTER_EXPORT = {
    "pkg/checkpoint/addons.py": (
        "def _get_hf_peft_config(peft_config, model_state):\n    target_modules = model_state.lora_module_names()\n"
        "    config = {\n        \"task_type\": \"CAUSAL_LM\",\n        \"peft_type\": \"LORA\",\n        \"r\": peft_config.dim,\n"
        "        \"lora_alpha\": peft_config.alpha,\n        \"target_modules\": target_modules,\n    }\n    return config\n"),
    "train.py": ("from transformers import AutoModelForCausalLM\n\nmodel = AutoModelForCausalLM.from_pretrained('Qwen/Qwen3-0.6B')\n"
                 "for batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n    optimizer.step()\n"),
}


# VeOmni: a LoRA config class serialises its own fields into a PEFT adapter_config.json (``to_peft_dict``); the text
# trainer builds no adapter unless ``lora_config`` is given
_SELF_EXPORT = {
    "pkg/lora/config.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass LoraConfig:\n    r: int = 8\n    lora_alpha: int = 16\n\n"
        "    def to_peft_dict(self) -> dict:\n        d = {\n            \"peft_type\": \"LORA\",\n            \"r\": self.r,\n"
        "            \"lora_alpha\": self.lora_alpha,\n        }\n        return d\n"),
    "train.py": _ADAPTER_EXPORT["train.py"],
}

# xTuring 0.1.8: the library's own loralib-style LoRA; its config dataclass carries ``enable_lora``, the per-projection
# mask of ``MergedLinear`` (a list, None by default), and the engine builds the config and wraps the model unconditionally
def _lora_registry(listed: tuple[str, ...]) -> dict[str, str]:
    """torchtitan's shape: a LoRA model converter of its own, which a config-registry recipe opts into through
    ``model_converters=[LoRAConverter.Config(...)]``; ``listed`` names the recipes that list it."""
    def recipe(name: str) -> str:
        conv = ",\n        model_converters=[LoRAConverter.Config(rank=8, alpha=16.0)]" if name in listed else ""
        return (f"def {name}() -> Trainer.Config:\n    return Trainer.Config(\n"
                f"        checkpoint=CheckpointManager.Config(initial_load_path='assets/hf/Llama-3.1-8B', initial_load_in_hf=True){conv},\n    )\n")
    return {
        "torchtitan/components/lora.py": (
            "import torch.nn as nn\n\n\nclass LoRAConverter:\n    def __init__(self, config):\n        self.rank = config.rank\n"
            "        self.alpha = config.alpha\n\n    def convert(self, model: nn.Module) -> nn.Module:\n"
            "        for p in model.parameters():\n            p.requires_grad_(False)\n        return model\n"),
        "torchtitan/models/llama3/config_registry.py": (
            "from torchtitan.components.checkpoint import CheckpointManager\nfrom torchtitan.components.lora import LoRAConverter\n"
            "from torchtitan.trainer import Trainer\n\n\n" + "\n\n".join(recipe(n) for n in ("llama3_8b", "llama3_70b", "llama3_debugmodel_lora"))),
        "torchtitan/train.py": ("from transformers import AutoModelForCausalLM\n\n\ndef main(config):\n"
                                "    model = AutoModelForCausalLM.from_pretrained(config.checkpoint.initial_load_path)\n"
                                "    loss = model(batch).loss\n    loss.backward()\n"),
    }


_OWN_LORA = {
    "mylib/lora/lora.py": (
        "from dataclasses import dataclass, field\nfrom typing import List, Optional\n\nimport torch\n\n\n"
        "@dataclass\nclass LoraConfig:\n    r: int = field(default=8, metadata={'help': 'Lora attention dimension'})\n"
        "    lora_alpha: int = field(default=None, metadata={'help': 'Lora alpha'})\n"
        "    enable_lora: Optional[List[bool]] = field(\n        default=None, metadata={'help': 'Used with `lora.MergedLinear`.'}\n    )\n\n\n"
        "def mark_only_lora_as_trainable(model, bias='none'):\n    for n, p in model.named_parameters():\n"
        "        if 'lora_' not in n:\n            p.requires_grad = False\n\n\n"
        "class LoraModel(torch.nn.Module):\n    def __init__(self, config, model):\n        super().__init__()\n"
        "        self.model = model\n        mark_only_lora_as_trainable(self.model)\n"),
    "mylib/engines/causal.py": (
        "from transformers import AutoModelForCausalLM\n\nfrom mylib.lora.lora import LoraConfig, LoraModel\n\n\n"
        "class CausalLoraEngine:\n    def __init__(self, model_name):\n"
        "        model = AutoModelForCausalLM.from_pretrained(model_name)\n"
        "        lora_config = LoraConfig(r=8, lora_alpha=16, target_modules=['q_proj', 'v_proj'])\n"
        "        self.model = LoraModel(lora_config, model)\n\n"
        "    def training_step(self, batch):\n        return self.model(**batch).loss\n"),
}
_OWN_LORA_SWITCHED = {
    # the LoRA layers are frozen by the engine under the same switch (a freeze inside ``LoraModel.__init__`` would be
    # counted: class constructions are not followed back to their callers' switches)
    "mylib/lora/lora.py": _OWN_LORA["mylib/lora/lora.py"].replace("        mark_only_lora_as_trainable(self.model)\n", ""),
    "mylib/engines/causal.py": _OWN_LORA["mylib/engines/causal.py"].replace(
        "    def __init__(self, model_name):\n", "    def __init__(self, model_name, use_lora: bool = False):\n").replace(
        "        lora_config = LoraConfig(r=8, lora_alpha=16, target_modules=['q_proj', 'v_proj'])\n"
        "        self.model = LoraModel(lora_config, model)\n",
        "        self.model = model\n        if use_lora:\n"
        "            self.model = LoraModel(LoraConfig(r=8, lora_alpha=16, target_modules=['q_proj', 'v_proj']), model)\n"),
}


# an RL library's exported adapter helper (verifiers ``lora_defaults``): the package never calls it, and its trainer
# wraps the model with PEFT only when the caller passes a peft_config
_ADAPTER_HELPER = {
    "mylib/trainers/__init__.py": (
        "from peft import LoraConfig\n\nfrom .grpo_trainer import GRPOTrainer\n\n\n"
        "def lora_defaults(r=8, alpha=16) -> LoraConfig:\n    return LoraConfig(\n        r=r,\n        lora_alpha=alpha,\n"
        "        target_modules=['q_proj', 'v_proj', 'k_proj', 'o_proj'],\n        task_type='CAUSAL_LM',\n    )\n"),
    "mylib/trainers/grpo_trainer.py": (
        "from peft import PeftConfig, get_peft_model\nfrom transformers import Trainer\n\n\nclass GRPOTrainer(Trainer):\n"
        "    def __init__(self, model, args, peft_config: PeftConfig | None = None, **kwargs):\n"
        "        if peft_config is not None:\n            model = get_peft_model(model, peft_config)\n"
        "        super().__init__(model=model, args=args, **kwargs)\n"),
    "mylib/utils/model_utils.py": (
        "import torch\nfrom transformers import AutoModelForCausalLM\n\n\ndef get_model(model_name):\n"
        "    return AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.bfloat16)\n"),
}


#: CoLLiE 1.0.7's shape: the config dataclass keeps PEFT's base config built with no arguments (its ``peft_type`` is None),
#: and the model loader wraps the model only when that config names an adapter type
_BARE_PEFT = {
    "mylib/config.py": ("from dataclasses import dataclass, field\n\nfrom peft import PeftConfig\n\n\n@dataclass\nclass LMConfig:\n"
                        "    checkpointing: bool = True\n"
                        "    peft_config: PeftConfig = field(default_factory=lambda: PeftConfig(), metadata={'help': 'PEFT configuration.'})\n"),
    "mylib/model.py": ("from peft import get_peft_model\nfrom transformers import AutoModelForCausalLM\n\n\n"
                       "def load_model(path, config):\n    model = AutoModelForCausalLM.from_pretrained(path)\n"
                       "    if config.peft_config.peft_type is not None:\n        model = get_peft_model(model, config.peft_config)\n"
                       "    return model\n\n\ndef train(path, config, loader, optimizer):\n    model = load_model(path, config)\n"
                       "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n"),
}

#: xllm: a library whose README gives the user's four-line ``train.py`` (it calls the package's CLI entry) and then runs it
#: a library whose training code is only a subclass of the HF Trainer with its own ``compute_loss`` (pyreft's
#: ``ReftTrainer``): the ``Trainer(...).train()`` and the model it trains are its users' scripts
_TRAINER_ONLY_LIB = {
    "reftlib/trainer.py": (
        "from transformers import Trainer\nfrom torch.utils.data import DataLoader\n\n\n"
        "class InterventionTrainer(Trainer):\n"
        "    def get_train_dataloader(self):\n"
        "        return DataLoader(self.train_dataset, batch_size=self._train_batch_size, shuffle=True,\n"
        "                          collate_fn=self.data_collator)\n\n"
        "    def compute_loss(self, intervenable, inputs, return_outputs=False):\n"
        "        locations = inputs['intervention_locations'].permute(1, 0, 2).tolist()\n"
        "        _, outputs = intervenable({'input_ids': inputs['input_ids'], 'attention_mask': inputs['attention_mask']},\n"
        "                                  unit_locations={'sources->base': (None, locations)}, labels=inputs['labels'])\n"
        "        return (outputs.loss, outputs) if return_outputs else outputs.loss\n"),
    "reftlib/utils.py": (
        "from .model import InterventionModel\n\n\n"
        "def get_intervention_model(model, config, disable_model_grads=True):\n"
        "    wrapped = InterventionModel(config, model)\n    if disable_model_grads:\n        wrapped.disable_model_gradients()\n"
        "    return wrapped\n"),
}


_README_SCRIPT_LIB = {
    "mylib/config.py": ("from dataclasses import dataclass, field\n\n\n@dataclass\nclass Config:\n"
                        "    model_name_or_path: str = 'mistralai/Mistral-7B-v0.1'\n    use_lora: bool = field(default=False)\n"),
    "mylib/cli.py": (
        "from peft import LoraConfig, get_peft_model\n"
        "from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments\n\n"
        "from mylib.config import Config\n\n\ndef cli_run_train(train_dataset=None):\n"
        "    config = HfArgumentParser(Config).parse_args_into_dataclasses()[0]\n"
        "    model = AutoModelForCausalLM.from_pretrained(config.model_name_or_path)\n"
        "    if config.use_lora:\n        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=32, task_type='CAUSAL_LM'))\n"
        "    Trainer(model=model, args=TrainingArguments(output_dir='out'), train_dataset=train_dataset).train()\n"),
}
_README_SCRIPT = (
    "# mylib\n\nTraining on several GPUs starts from the command line.\n\n`train.py`\n\n```python\nfrom mylib.cli import cli_run_train\n\n"
    "if __name__ == '__main__':\n    cli_run_train()\n```\n\nRun it:\n\n```sh\ndeepspeed --num_gpus=8 {script} --use_lora True\n```\n")

#: OpenCLIP's trainer shape: its model factory takes the run's ``--pretrained`` (a tag or a checkpoint file)
_CLIP_PRETRAINED = (
    "import argparse\nimport torch\nfrom open_clip import create_model_and_transforms\n\n\ndef main(argv):\n"
    "    parser = argparse.ArgumentParser()\n    parser.add_argument('--model', default='RN50')\n"
    "    parser.add_argument('--pretrained', default='', type=str)\n    args = parser.parse_args(argv)\n"
    "    model, preprocess_train, preprocess_val = create_model_and_transforms(args.model, {weights})\n"
    "    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)\n"
    "    for images, texts in loader:\n        loss = model(images, texts)\n        loss.backward()\n        optimizer.step()\n"
)


#: pyreft ``examples/loreft/train.py``: ReFT interventions on every run, LoRA added only under ``--use_lora``
_LOREFT = {
    "examples/loreft/train.py": (
        "import argparse\n\nimport torch\nimport transformers\nfrom pyreft import LoreftIntervention, ReftConfig, "
        "ReftTrainerForCausalLM, get_reft_model\n\n\n"
        "def finetune(train_dataset, data_collator, use_lora=False, rank=1, layers=(2, 10, 18, 26)):\n"
        "    model = transformers.AutoModelForCausalLM.from_pretrained(\"yahma/llama-7b-hf\", torch_dtype=torch.bfloat16)\n"
        "    if use_lora:\n        from peft import LoraConfig, get_peft_model\n"
        "        peft_config = LoraConfig(r=4, lora_alpha=32, target_modules=[\"o_proj\"], task_type=\"CAUSAL_LM\")\n"
        "        model = get_peft_model(model, peft_config)\n"
        "    reft_config = ReftConfig(representations=[{\n        \"layer\": layer, \"component\": \"block_output\", "
        "\"low_rank_dimension\": rank,\n        \"intervention\": LoreftIntervention(embed_dim=model.config.hidden_size, "
        "low_rank_dimension=rank)} for layer in layers])\n"
        "    {wrap}\n"
        "    training_args = transformers.TrainingArguments(output_dir=\"out\", num_train_epochs=3, per_device_train_batch_size=4,\n"
        "                                                   learning_rate=9e-4, warmup_ratio=0.1, bf16=True, report_to=\"none\")\n"
        "    trainer = ReftTrainerForCausalLM(model=reft_model, args=training_args, train_dataset=train_dataset,\n"
        "                                     data_collator=data_collator)\n    trainer.train()\n\n\n"
        "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--use_lora\", action=\"store_true\")\n"
        "    parser.add_argument(\"--rank\", type=int, default=1)\n    args = parser.parse_args()\n"
        "    finetune(None, None, args.use_lora, args.rank)\n\n\nif __name__ == \"__main__\":\n    main()\n"),
}


@register
class G4LoRA(Check):
    id = "G4"
    title = "LoRA / QLoRA"
    title_zh = "LoRA / QLoRA"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMPUTE)
    priority = Priority.HIGH
    benefit = "trains <1 % of the weights: optimizer state and gradients shrink ~10x, a 7B model fits on one 24-48 GB GPU"
    what = (
        "Whether fine-tuning uses LoRA-style adapters instead of updating every weight: PEFT `LoraConfig`/`get_peft_model`, "
        "LLaMA-Factory `finetuning_type: lora` (its default), axolotl `adapter: lora|qlora`, torchtune `lora_*`/`qlora_*` "
        "models, ms-swift `--train_type lora`, switches such as `--lora_enable True`; QLoRA when the base is loaded in 4 bit. "
        "A LoRA code path whose switch no launch or config turns on is not use."
    )
    why = (
        "LoRA cut GPT-3 175B's trainable parameters 10,000x and GPU memory 3x with on-par quality (Hu et al., 2021); "
        "QLoRA fine-tuned a 65B model on one 48 GB GPU, reaching 99.3 % of ChatGPT on Vicuna (Dettmers et al., 2023). "
        "Full fine-tuning a 7B model in mixed precision needs ~16 bytes/parameter (112 GB) before activations."
    )
    fix = "Evaluate LoRA (or QLoRA for very large models) instead of full fine-tuning: `finetuning_type: lora` with `lora_rank: 16`, or PEFT `LoraConfig(r=16, target_modules=\"all-linear\")`."
    fix_zh = "评估用 LoRA（超大模型可用 QLoRA）替代全量微调：`finetuning_type: lora` 且 `lora_rank: 16`，或 PEFT `LoraConfig(r=16, target_modules=\"all-linear\")`。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://arxiv.org/abs/2106.09685", "https://arxiv.org/abs/2305.14314", "https://huggingface.co/docs/peft")
    snippets = {
        "hf-yaml": "finetuning_type: lora\nlora_rank: 16\nlora_target: all\n",
        "python": (
            "from peft import LoraConfig, get_peft_model\n\n"
            "config = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=\"all-linear\", task_type=\"CAUSAL_LM\")\n"
            "model = get_peft_model(model, config)\n"
        ),
    }
    examples = (
        Example({p: t.replace("{wrap}", "reft_model = get_reft_model(model, reft_config)") for p, t in _LOREFT.items()}, U,
                "pyreft: a ReFT model on every run (its base weights frozen), LoRA only under --use_lora"),
        Example({p: t.replace("{wrap}", "reft_model = model") for p, t in _LOREFT.items()}, N,
                "the same script without the ReFT wrapper trains the whole model unless --use_lora"),
        Example({"verl/trainer/config/model/hf_model.yaml": "path: Qwen/Qwen2.5-7B\nlora_rank: 0\nlora_alpha: 16\n",
                 "verl/workers/engine/fsdp/transformer_impl.py": (
                     "from peft import LoraConfig, get_peft_model\n\n\nclass FSDPEngine:\n    def __init__(self, model_config):\n"
                     "        self.model_config = model_config\n        self._is_lora = self.model_config.lora_rank > 0\n\n"
                     "    def _build_lora_module(self, module):\n"
                     "        return get_peft_model(module, LoraConfig(r=self.model_config.lora_rank, target_modules='all-linear'))\n\n"
                     "    def _build_model(self, module):\n        if self._is_lora:\n            module = self._build_lora_module(module)\n"
                     "        return module\n"),
                 "verl/workers/rollout/vllm_rollout/vllm_async_server.py": "engine_kwargs = {\"enable_lora\": True, \"max_loras\": 1}\n"},
                N, "LoRA behind a flag derived from lora_rank: 0; a rollout server's enable_lora"),
        Example({"arctic_training/config/model.py": ("from typing import Dict, Optional\nfrom pydantic import BaseModel\n\n\n"
                                                     "class ModelConfig(BaseModel):\n    name_or_path: str\n    peft_config: Optional[Dict] = None\n"),
                 "arctic_training/model/hf_factory.py": ("from peft import get_peft_model\n\n\nclass HFModelFactory:\n"
                                                         "    def post_create_model_callback(self, model):\n"
                                                         "        if self.config.peft_config is not None:\n"
                                                         "            model = get_peft_model(model, self.config.peft_config_obj)\n        return model\n")},
                N, "PEFT only when peft_config is not None, default None"),
        Example(_own_lora_args(True), U, "the project's own LoRA layers behind its LoraArgs.enable switch, on by default"),
        Example(_own_lora_args(False), N, "the same switch off by default and no recipe turning it on"),
        Example({"train.py": "from peft import LoraConfig, get_peft_model\nfrom transformers import AutoModelForCausalLM\n"
                 "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
                 "model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules=['q_proj', 'v_proj']))\n"}, U, "peft"),
        Example({"examples/llama3_lora_sft.yaml": "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\ndo_train: true\n"
                 "finetuning_type: lora\nlora_target: all\ntemplate: llama3\n"}, U, "llamafactory lora"),
        Example({"qlora.yml": "base_model: NousResearch/Llama-2-7b-hf\nload_in_4bit: true\nadapter: qlora\nlora_r: 32\n"
                 "sequence_len: 4096\nmicro_batch_size: 2\n"}, U, "axolotl qlora"),
        Example({"scripts/finetune_lora.sh": "deepspeed llava/train/train_mem.py --lora_enable True --lora_r 128 "
                 "--model_name_or_path lmsys/vicuna-13b-v1.5\n",
                 "llava/train/train.py": "from dataclasses import dataclass, field\nfrom peft import LoraConfig, get_peft_model\n"
                 "@dataclass\nclass TrainingArguments:\n    lora_enable: bool = False\n    lora_r: int = 64\n\n"
                 "def train():\n    if training_args.lora_enable:\n        model = get_peft_model(model, LoraConfig(r=training_args.lora_r))\n"},
                U, "switch turned on by a launch script"),
        Example({"examples/llama3_full_sft.yaml": "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\n"
                 "do_train: true\nfinetuning_type: full\ntemplate: llama3\n"}, N, "llamafactory full"),
        Example({"scripts/finetune.sh": "deepspeed llava/train/train_mem.py --model_name_or_path lmsys/vicuna-13b-v1.5\n",
                 "llava/train/train.py": "from dataclasses import dataclass, field\nfrom peft import LoraConfig, get_peft_model\n"
                 "@dataclass\nclass TrainingArguments:\n    lora_enable: bool = False\n\n"
                 "def train():\n    if training_args.lora_enable:\n        model = get_peft_model(model, LoraConfig(r=64))\n"},
                N, "switch defaults off, never turned on"),
        Example({  # OpenRLHF: LoRA is built only when a rank > 0 is passed; --ds.lora.rank defaults to 0
            "openrlhf/cli/train_sft.py": (
                "import argparse\nfrom openrlhf.models import Actor\nfrom transformers import AutoModelForCausalLM\n"
                "def train(args):\n    strategy = get_strategy(args)\n"
                "    model = Actor(args.pretrain, lora_rank=args.ds.lora.rank, lora_alpha=args.ds.lora.alpha)\n"
                "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
                "    parser.add_argument('--pretrain', type=str, default=None)\n"
                "    parser.add_argument('--ds.lora.rank', type=int, default=0)\n"
                "    parser.add_argument('--ds.lora.alpha', type=int, default=16)\n    train(parser.parse_args())\n"),
            "openrlhf/models/actor.py": (
                "from peft import LoraConfig, get_peft_model\nfrom transformers import AutoModelForCausalLM\n"
                "class Actor:\n    def __init__(self, pretrain, lora_rank=0, lora_alpha=16):\n"
                "        self.model = AutoModelForCausalLM.from_pretrained(pretrain)\n"
                "        if lora_rank > 0:\n            lora_config = LoraConfig(r=lora_rank, lora_alpha=lora_alpha)\n"
                "            self.model = get_peft_model(self.model, lora_config)\n"),
            "openrlhf/trainer/ray/ppo_actor.py": (
                "from openrlhf.models import Actor\n"
                "def init_model(strategy, pretrain):\n    return Actor(pretrain, lora_rank=strategy.args.ds.lora.rank)\n"),
        }, N, "LoRA rank option defaults to 0"),
        Example({
            "examples/scripts/train_sft_lora.sh": "deepspeed --module openrlhf.cli.train_sft --pretrain Qwen/Qwen2.5-7B --ds.lora.rank 64\n",
            "openrlhf/cli/train_sft.py": (
                "import argparse\nfrom openrlhf.models import Actor\n"
                "def train(args):\n    model = Actor(args.pretrain, lora_rank=args.ds.lora.rank)\n"
                "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
                "    parser.add_argument('--pretrain', type=str, default=None)\n"
                "    parser.add_argument('--ds.lora.rank', type=int, default=0)\n    train(parser.parse_args())\n"),
            "openrlhf/models/actor.py": (
                "from peft import LoraConfig, get_peft_model\nfrom transformers import AutoModelForCausalLM\n"
                "class Actor:\n    def __init__(self, pretrain, lora_rank=0):\n"
                "        self.model = AutoModelForCausalLM.from_pretrained(pretrain)\n"
                "        if lora_rank > 0:\n            self.model = get_peft_model(self.model, LoraConfig(r=lora_rank))\n"),
        }, U, "LoRA rank set by a launch script"),
        Example({  # fms-hf-tuning: LoRA only when --peft_method names it; the option defaults to "none" (full fine-tuning)
            "tuning/config/peft_config.py": (
                "from dataclasses import dataclass\nfrom enum import Enum\nfrom peft import LoraConfig as HFLoraConfig\n\n"
                "class PEFT_METHOD(Enum):\n    PT = \"pt\"\n    LORA = \"lora\"\n\n"
                "@dataclass\nclass LoraConfig(HFLoraConfig):\n    r: int = 8\n"),
            "tuning/utils/config_utils.py": (
                "from tuning.config import peft_config\n\n"
                "def create_tuning_config(peft_method, **kwargs):\n"
                "    if peft_method == peft_config.PEFT_METHOD.LORA.value:\n        tune_config = peft_config.LoraConfig()\n"
                "    else:\n        tune_config = None  # full parameter tuning\n    return tune_config\n"),
            "tuning/sft_trainer.py": (
                "import argparse\nimport transformers\nfrom trl import SFTTrainer\nfrom tuning.utils.config_utils import create_tuning_config\n\n"
                "def get_parser():\n    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))\n"
                "    parser.add_argument('--peft_method', type=str.lower, choices=['pt', 'lora', None, 'none'], default='none')\n"
                "    return parser\n\n"
                "def main():\n    model_args, training_args, additional = get_parser().parse_args_into_dataclasses()\n"
                "    peft = create_tuning_config(additional.peft_method)\n"
                "    trainer = SFTTrainer(model=model_args.model_name_or_path, args=training_args, peft_config=peft)\n    trainer.train()\n"),
        }, N, "PEFT method option defaults to none"),
        Example({
            "scripts/lora_sft.sh": "accelerate launch -m tuning.sft_trainer --model_name_or_path ibm-granite/granite-3b --peft_method lora --r 16\n",
            "tuning/utils/config_utils.py": (
                "from tuning.config import peft_config\n\n"
                "def create_tuning_config(peft_method, **kwargs):\n"
                "    if peft_method in (peft_config.PEFT_METHOD.ALORA.value, peft_config.PEFT_METHOD.LORA.value):\n"
                "        return peft_config.LoraConfig()\n    return None\n"),
            "tuning/config/peft_config.py": (
                "from enum import Enum\nfrom peft import LoraConfig\n\n"
                "class PEFT_METHOD(Enum):\n    LORA = \"lora\"\n    ALORA = \"alora\"\n"),
            "tuning/sft_trainer.py": (
                "import argparse\nfrom trl import SFTTrainer\nfrom tuning.utils.config_utils import create_tuning_config\n"
                "parser = argparse.ArgumentParser()\nparser.add_argument('--peft_method', type=str, default='none')\n"
                "args = parser.parse_args()\n"
                "trainer = SFTTrainer(model=args.model_name_or_path, peft_config=create_tuning_config(args.peft_method))\ntrainer.train()\n"),
        }, U, "PEFT method set to lora by a launch"),
        Example({"train.py": "from transformers import AutoModelForCausalLM, Trainer\n"
                 "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2-7B')\n# model = get_peft_model(model, lora_config)\n"
                 "trainer = Trainer(model=model)\n"}, N, "commented out: full fine-tune"),
        Example({"pretrain.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --hidden-size 2048 --lr 3e-4\n",
                 "pretrain_gpt.py": "from megatron.training import pretrain\npretrain(train_ds, model_provider)\n"},
                Status.NA, "pre-training only"),
        Example({  # a pre-training repo whose only from_pretrained converts a checkpoint or samples from GPT-2
            "pretrain.py": (
                "import torch\nfrom model import GPT, GPTConfig\nmodel = GPT(GPTConfig(n_layer=12, n_head=12, n_embd=768))\n"
                "optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, fused=True)\n"
                "for step, (x, y) in enumerate(loader):\n    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n"),
            "tools/convert_hf_checkpoint.py": (
                "from transformers import GPT2LMHeadModel\n"
                "def convert(model_type):\n    hf = GPT2LMHeadModel.from_pretrained(model_type)\n    return {k: v for k, v in hf.state_dict().items()}\n"),
            "sample.py": (
                "from transformers import AutoModelForCausalLM\n"
                "def generate(prompt):\n    model = AutoModelForCausalLM.from_pretrained('gpt2')\n    return model.generate(prompt)\n"),
        }, Status.NA, "weights loaded only for conversion and sampling"),
        Example({  # a model library whose own BaseModel.from_pretrained reads the checkpoint into the model it builds
            "mylib/model/basemodel.py": (
                "import os\nimport torch\nfrom .config import Config\n\n\nclass BaseModel(torch.nn.Module):\n"
                "    @classmethod\n    def from_pretrained(cls, path):\n        config = Config.from_pretrained(path)\n"
                "        model = cls(config)\n        model.load_state_dict(torch.load(os.path.join(path, 'pytorch_model.pt')))\n"
                "        return model\n"),
            "mylib/tokenizer/bert_tokenizer.py": (
                "from transformers import BertTokenizer as HFBertTokenizer\n\n\nclass BertTokenizer:\n"
                "    @classmethod\n    def from_pretrained(cls, name):\n        return HFBertTokenizer.from_pretrained(name)\n"),
            "mylib/trainer.py": (
                "import torch\n\n\ndef train(model, loader, lr=1e-5):\n"
                "    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)\n"
                "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n"
                "        optimizer.step()\n        optimizer.zero_grad()\n"),
        }, N, "the library's own from_pretrained loads weights: full fine-tuning"),
        Example({
            "pretrain.py": (
                "import torch\nfrom model import GPT, GPTConfig\nmodel = GPT(GPTConfig(n_layer=12, n_head=12, n_embd=768))\n"
                "for step, (x, y) in enumerate(loader):\n    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n"),
            "finetune.py": (
                "import torch\nfrom transformers import AutoModelForCausalLM\n"
                "model = AutoModelForCausalLM.from_pretrained('gpt2-xl')\n"
                "optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)\n"
                "for step, batch in enumerate(loader):\n    model(**batch).loss.backward()\n    optimizer.step()\n"),
        }, N, "pre-training and a full fine-tuning script"),
        Example({"llmfoundry/models/hf/hf_base.py": (  # the library builds a LoraConfig only from a run's peft_config dict
            "from typing import Any, Optional\nfrom composer.models import HuggingFaceModel\n"
            "class BaseHuggingFaceModel(HuggingFaceModel):\n"
            "    def __init__(self, model, tokenizer, peft_config: Optional[dict[str, Any]] = None):\n"
            "        peft_config_object = None\n"
            "        if peft_config is not None:\n            peft_config_object = self.get_peft_config(peft_config)\n"
            "        super().__init__(model=model, tokenizer=tokenizer, peft_config=peft_config_object)\n"
            "    def get_peft_config(self, peft_config_dict: dict[str, Any]):\n"
            "        from peft import LoraConfig\n        return LoraConfig(**peft_config_dict)\n"),
            "llmfoundry/command_utils/train.py": (
                "from transformers import AutoModelForCausalLM\n"
                "def train(cfg):\n    model = AutoModelForCausalLM.from_pretrained(cfg.pretrained_model_name_or_path)\n"
                "    trainer.fit()\n"),
        }, N, "LoraConfig(**dict) support code only"),
        Example({  # DeepSpeed-Chat: LoRA only when --lora_dim > 0; the default is 0 and the launch does not set it
            "training/step1_supervised_finetuning/main.py": (
                "import argparse\nfrom transformers import AutoModelForCausalLM\n"
                "from dschat.utils.module.lora import convert_linear_layer_to_lora, only_optimize_lora_parameters\n"
                "parser = argparse.ArgumentParser()\nparser.add_argument('--lora_dim', type=int, default=0)\n"
                "args = parser.parse_args()\nmodel = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)\n"
                "if args.lora_dim > 0:\n    model = convert_linear_layer_to_lora(model, args.lora_module_name, args.lora_dim)\n"
                "    model = only_optimize_lora_parameters(model)\n"
                "    lora_config = LoraConfig(r=args.lora_dim)\n"),
            "training/step1_supervised_finetuning/training_scripts/opt/single_node/run_1.3b.sh": (
                "deepspeed main.py --model_name_or_path facebook/opt-1.3b --zero_stage 2 --output_dir ./output\n"),
        }, N, "LoRA behind a rank comparison left at 0"),
        Example({p: t.format(rank=0) for p, t in _RL_LORA.items()}, N, "LoRA rank 0 in the Hydra config, read by its key path"),
        Example({p: t.format(rank=8) for p, t in _RL_LORA.items()}, U, "LoRA rank 8 in the Hydra config, read by its key path"),
        Example({
            "training/step1_supervised_finetuning/main.py": (
                "import argparse\nfrom peft import LoraConfig\n"
                "parser = argparse.ArgumentParser()\nparser.add_argument('--lora_dim', type=int, default=0)\n"
                "args = parser.parse_args()\n"
                "if args.lora_dim > 0:\n    lora_config = LoraConfig(r=args.lora_dim)\n"),
            "run_lora.sh": "deepspeed main.py --model_name_or_path facebook/opt-1.3b --lora_dim 128 --zero_stage 3\n",
        }, U, "LoRA rank set by the launch"),
        Example({  # lmms-engine: a weight-preparation tool built against a module this release does not have
            "src/lmms_engine/__init__.py": "",
            "src/lmms_engine/models/__init__.py": "",
            "src/lmms_engine/models/qwen2_5_vl/__init__.py": "from .modeling import Qwen2_5_VLForConditionalGeneration\n",
            "src/lmms_engine/train/runner.py": "class TrainRunner:\n    def run(self):\n        loss = self.model(**batch).loss\n        loss.backward()\n",
            "tools/prepare_init_weight/prepare_kino_lora.py": (
                "from peft import LoraConfig, get_peft_model\nfrom lmms_engine.models.qwen2_5_vl_audio import KinoForConditionalGeneration\n"
                "model = KinoForConditionalGeneration.from_pretrained('base')\n"
                "lora = LoraConfig(r=64, lora_alpha=128, target_modules=['q_proj', 'v_proj'])\nmodel = get_peft_model(model, lora)\n"),
        }, N, "LoRA only in a tool importing a module missing from the tree"),
        Example({
            "src/lmms_engine/__init__.py": "",
            "src/lmms_engine/models/__init__.py": "",
            "src/lmms_engine/models/qwen2_5_vl/__init__.py": "from .modeling import Qwen2_5_VLForConditionalGeneration\n",
            "src/lmms_engine/train/lora.py": (
                "from peft import LoraConfig, get_peft_model\nfrom lmms_engine.models.qwen2_5_vl import Qwen2_5_VLForConditionalGeneration\n"
                "model = Qwen2_5_VLForConditionalGeneration.from_pretrained('base')\n"
                "lora = LoraConfig(r=64, lora_alpha=128, target_modules=['q_proj', 'v_proj'])\nmodel = get_peft_model(model, lora)\n"),
        }, U, "LoRA in code whose own imports resolve"),
        Example({  # AReaL: the engine config names the adapter kind next to a LoRA switch that is off by default
            "pkg/api/cli_args.py": ("from dataclasses import dataclass, field\n\n@dataclass\nclass TrainEngineConfig:\n"
                                    "    use_lora: bool = field(default=False, metadata={'help': 'Whether to use LoRA.'})\n"
                                    "    lora_rank: int = 32\n"
                                    "    peft_type: str = field(default='lora', metadata={'help': 'peft method type.'})\n"),
            "pkg/engine.py": ("from peft import LoraConfig, get_peft_model\n\nclass Engine:\n    def initialize(self):\n"
                              "        if self.config.use_lora:\n            self.model = get_peft_model(self.model, LoraConfig(r=self.config.lora_rank))\n"),
        }, N, "peft_type names the adapter a switched-off use_lora would build"),
        Example({  # megatron-core 0.19.2 export/trtllm: LoRA checkpoints served by a TensorRT-LLM engine
            "megatron/core/export/trtllm/engine_builder/trtllm_engine_builder.py": (
                "class TRTLLMEngineBuilder:\n    @staticmethod\n    def build_and_save_engine(engine_dir, use_lora_plugin=None,\n"
                "                              max_lora_rank=64, lora_target_modules=None, lora_ckpt_list=None):\n"
                "        from tensorrt_llm.lora_manager import LoraConfig\n\n        if use_lora_plugin is not None:\n"
                "            lora_config = LoraConfig(\n                lora_dir=lora_ckpt_list,\n                max_lora_rank=max_lora_rank,\n"
                "                lora_target_modules=lora_target_modules,\n            )\n"),
            "megatron/training/training.py": "def train_step(model, optimizer, data_iterator):\n    loss = model(next(data_iterator))\n    loss.backward()\n",
        }, Status.NA, "an inference engine's LoRA config serves adapters, it trains none: no fine-tuning path"),
        Example(_ADAPTER_EXPORT, N, "an existing adapter's config written out at save time"),
        Example({**_ADAPTER_EXPORT, "pkg/checkpoint/addons.py": _ADAPTER_EXPORT["pkg/checkpoint/addons.py"].replace(
            "peft_config.dim", "args.lora_rank").replace("peft_config.alpha", "args.lora_alpha")}, U,
                "the same dict filled from the run's arguments"),
        Example(_SELF_EXPORT, N, "a LoRA config writing its own fields out as adapter_config.json"),
        Example({**_SELF_EXPORT, "pkg/lora/config.py": _SELF_EXPORT["pkg/lora/config.py"].replace(
            "self.r,", "self.args.lora_rank,").replace("self.lora_alpha,", "self.args.lora_alpha,")}, U,
                "the same dict filled from the trainer's run arguments"),
        Example(_lora_registry(("llama3_debugmodel_lora",)), N, "the project's LoRA converter listed only by a debug recipe"),
        Example(_lora_registry(("llama3_8b", "llama3_70b")), U, "the project's LoRA converter listed by most registry recipes"),
        Example(_OWN_LORA, U, "the library's own LoraConfig and LoraModel built by the engine; enable_lora is a list mask, not a switch"),
        Example(_OWN_LORA_SWITCHED, N, "the same library wrapping the model only under a use_lora parameter that defaults to False"),
        Example(_ADAPTER_HELPER, N, "an exported LoraConfig helper no code calls; the trainer wraps only when peft_config is passed"),
        Example({**_ADAPTER_HELPER, "examples/train_gsm8k.py": (
            "from transformers import AutoModelForCausalLM\nfrom mylib.trainers import GRPOTrainer, lora_defaults\n\n"
            "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-1.5B-Instruct')\n"
            "trainer = GRPOTrainer(model=model, args=None, peft_config=lora_defaults())\ntrainer.train()\n")},
                U, "the LoraConfig helper passed to the trainer by a shipped script"),
        Example(_BARE_PEFT, N, "the config keeps PEFT's base PeftConfig() (no adapter type); the loader wraps only when it names one"),
        Example({**_BARE_PEFT, "examples/lora.py": (
            "from peft import LoraConfig\nfrom mylib.config import LMConfig\nfrom mylib.model import train\n\n"
            "config = LMConfig(peft_config=LoraConfig(r=8, lora_alpha=16))\ntrain('meta-llama/Llama-2-7b-hf', config, loader, optimizer)\n")},
                U, "the same library, a shipped script handing the config a LoraConfig"),
        Example({**_README_SCRIPT_LIB, "README.md": _README_SCRIPT.format(script="train.py")}, U,
                "a README that gives its train.py whole and runs it with --use_lora True (the package ships no launch)"),
        Example({**_README_SCRIPT_LIB, "README.md": _README_SCRIPT.format(script="my_train.py")}, N,
                "a README command whose script is neither shipped nor given: the switch's default"),
        Example(_TRAINER_ONLY_LIB, Status.NA, "a library of one HF Trainer subclass: the model it trains is the user's, not judged"),
        Example({**_TRAINER_ONLY_LIB, "examples/train.py": (
            "import transformers\nfrom reftlib.trainer import InterventionTrainer\nfrom reftlib.utils import get_intervention_model\n\n"
            "model = transformers.AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-chat-hf')\n"
            "reft_model = get_intervention_model(model, config)\n"
            "args = transformers.TrainingArguments(output_dir='out', per_device_train_batch_size=10)\n"
            "InterventionTrainer(model=reft_model, args=args, train_dataset=ds).train()\n")},
                N, "the same library with a shipped script fine-tuning a hub checkpoint without LoRA"),
        Example({"src/clip_train/main.py": _CLIP_PRETRAINED.format(weights="args.pretrained")}, N,
                "a trainer whose --pretrained option feeds the model factory: a full fine-tuning path, not n/a"),
        Example({"src/clip_train/main.py": _CLIP_PRETRAINED.format(weights="''")}, Status.NA,
                "the same trainer never handed weights: pre-training only"),
    )

    def not_applicable(self, ctx: Context) -> str | None:
        return _pretrain_only(ctx)

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        lora, full, off = _lora_scan(f)
        few = _lora_recipe_minority(f, lora)
        if few:
            on_files, family = few
            where = f"LoRA is switched on in {len(on_files)} of {family} recipes ({', '.join(sorted(on_files)[:3])})"
            counts = f"on: {len(on_files)}, off: {family - len(on_files)}"
            llm = _frozen_llm(f, ctx.project.training_files)
            if llm:
                # (LAVIS: BLIP-2/InstructBLIP freeze the LLM and the ViT and train the Q-Former; one recipe adds LoRA)
                x = llm[0]
                return Outcome(N, evs([x, *lora[:3]]), f"no LoRA in most recipes, and none needed: the language model is frozen "
                               f"({x.path}:{x.line}) and only the modules around it train; {where}",
                               {"finetuning": "frozen-llm", "recipes.lora": counts})
            return Outcome(N, evs(lora[:5] + off[:3]), f"full-parameter training in most recipes: {where}",
                           {"finetuning": "full", "recipes.lora": counts})
        # the recipes choose full fine-tuning and none chooses LoRA (LIMO's ``train_limo.yaml``: ``finetuning_type: full``):
        # LoRA code of the framework (LLaMA-Factory's ``scripts/loftq_init.py``) is an option no run picks
        recipe_full = [x for x in full if isinstance(x, Setting) and x.source in ("config", "launcher")]
        if lora and recipe_full and not any(isinstance(x, Setting) and x.source in ("config", "launcher") for x in lora):
            x = recipe_full[0]
            return Outcome(N, evs(recipe_full[:5]), f"full-parameter fine-tuning: {x.key} is {x.value!r} ({x.path}:{x.line}"
                           f"{f' (+{len(recipe_full) - 1})' if len(recipe_full) > 1 else ''}); the LoRA code "
                           f"({lora[0].path}:{lora[0].line}) is an option no recipe or launch picks", {"finetuning": "full"})
        if lora and all(isinstance(x, Call) and x.short == "get_reft_model" for x in lora):
            x = lora[0]
            return Outcome(U, evs(lora), f"ReFT fine-tuning: get_reft_model() ({x.path}:{x.line}) trains interventions on the "
                           "hidden states and freezes every base weight (disable_model_grads=True by default)", {"finetuning": "reft"})
        if lora:
            q = _is_qlora(f, lora)
            minor = _qlora_minority(lora, q)
            if minor:
                # LLaMA-Factory: ``quantization_bit: 4`` in 5 of its 35 LoRA recipes; the rest load the base in 16 bit
                return Outcome(U, evs(lora + q), f"LoRA/PEFT fine-tuning; QLoRA (a 4-bit base) only in {minor}",
                               {"finetuning": "lora", "recipes.qlora": minor})
            kind = "qlora" if q else "lora"
            int8 = [] if q else bnb_8bit(f)
            if int8:
                # the frozen base is stored in int8 (a quarter of FP32, half of BF16) and its matmuls run through LLM.int8
                x = int8[0]
                return Outcome(U, evs(lora + int8), f"LoRA/PEFT fine-tuning on an 8-bit base (bitsandbytes LLM.int8, {x.path}:{x.line})",
                               {"finetuning": kind, "base_bits": 8, "base_quant_at": f"{x.path}:{x.line}",
                                "base_quant_sites": len({y.path for y in int8})})
            return Outcome(U, evs(lora + q), f"{'QLoRA' if q else 'LoRA/PEFT'} fine-tuning",
                           {"finetuning": kind, **({"base_bits": 4, "base_quant_at": f"{q[0].path}:{q[0].line}",
                                                    "base_quant_sites": len({x.path for x in q}), **_four_bit_kind(f, q[0])}
                                                   if q else {})})
        prefix = _prefix_tuning_runs(f)
        if prefix is not None:
            return prefix
        total = total_recipes(f)
        on_, cited = recipes_calling(f, _LORA_RECIPE) if total else ([], [])
        if on_:
            # the project's own LoRA converter that Python config-registry recipes opt into (torchtitan ``LoRAConverter``
            # in ``converters=[...]`` of one debug recipe): judged by how many recipes list it, as C2 judges FP8's
            listed = split_text("listed", on_, total)
            if len(on_) * 2 >= total:
                return Outcome(U, evs(cited[:10]), f"LoRA fine-tuning: the project's LoRA converter is {listed}",
                               {"finetuning": "lora", "recipes.lora": f"on: {len(on_)}, off: {total - len(on_)}"})
            return Outcome(N, evs(cited[:10]), f"full-parameter training unless a recipe lists the project's LoRA converter: {listed}",
                           {"finetuning": "full", "recipes.lora": f"on: {len(on_)}, off: {total - len(on_)}"})
        kind = "freeze" if any(str(getattr(s, "value", "")).lower() == "freeze" for s in full) else "full"
        detail = "LoRA switch is off in every launch/config" if off and not full else "full-parameter fine-tuning (no LoRA/PEFT)"
        train = ctx.project.training_files
        named = _trained_by_name(f, train) if not off and not full else None
        if named is not None:
            a, keys = named
            return Outcome(U, evs([a]), f"parameter-efficient fine-tuning: only the parameters whose names contain "
                           f"{' or '.join(repr(k) for k in keys)} train ({a.path}:{a.line}, every other parameter frozen in the "
                           "same loop)", {"finetuning": "adapter"})
        # (unconditional, in the model's builder or the entry point; not a helper named for freezing that a run calls when
        # asked: Megatron-LM's ``_freeze_all_model_chunks`` for logits-saving runs)
        frozen = [x for x in freeze_sites(f) if x.path in train and _MODEL_BUILD_FILE.search(x.path) and not getattr(x, "guard", None)
                  and "freeze" not in str(getattr(x, "func", "") or "").lower()] if not off and not full else []
        # the language model itself frozen wherever the model is built (Video-LLaMA ``for name, param in
        # self.llama_model.named_parameters(): param.requires_grad = False`` in ``models/video_llama.py``): only the modules
        # around it (Q-Formers, projectors) train, so LoRA would add trainable weights to the LLM rather than save any
        llm = _frozen_llm(f, train) if not off and not full else []
        if llm:
            x = llm[0]
            return Outcome(N, evs([x]), f"no LoRA/PEFT, and none needed: the language model is frozen ({x.path}:{x.line}); only "
                           "the modules around it train, so LoRA would add trainable weights rather than save memory",
                           {"finetuning": "frozen-llm"})
        base = _frozen_base(f, train) if not off and not full and not frozen else []
        if base:
            x = base[0]
            return Outcome(Status.NA, evs(base[:3]), f"{FROZEN_BASE} ({x.path}:{x.line}); only the parameters the project adds train, "
                           "so no fine-tuning of the model's weights to make parameter-efficient", {"finetuning": "frozen-base"})
        if frozen:
            # (open_flamingo freezes the whole model and trains its Perceiver and cross-attention layers: not "full-parameter")
            x = frozen[0]
            detail = f"no LoRA/PEFT: part of the model is frozen ({x.path}:{x.line}, G5) and the rest is trained in full"
        first = next((s for s in off if isinstance(s, Setting)), None)
        trl_get = next((c for c in off if isinstance(c, Call) and c.short == "get_peft_config"), None)
        if trl_get is not None and not full:
            gate = next(c for c in _peft_calls(f) if c.short == "get_peft_model")
            return Outcome(N, evs([gate, *off]), f"full-parameter fine-tuning unless a run turns LoRA on: PEFT is built only under "
                           f"`{gate.guard}` ({gate.path}:{gate.line}), and the config comes from TRL's get_peft_config "
                           f"({trl_get.path}:{trl_get.line}), None unless a run passes --use_peft; no launch or config does",
                           {"finetuning": kind})
        gated = [(c, g) for c in _peft_calls(f) if c.guard and (g := guard_off(f, c))]
        # the gate that the cited switch closes (not some other local condition around a PEFT call)
        gate = next((c for c, g in gated if first is None or any((x.path, x.line) == (first.path, first.line) for x in g)), None)
        if gate is not None and not full:
            where = f"; {first.key} is {first.value!r} at {first.path}:{first.line}" if first is not None else ""
            # (named by the call that builds it: Telechat's DeepSpeed-Chat ``convert_linear_layer_to_lora`` is no PEFT)
            what = "PEFT is built" if "peft" in gate.name.lower() else f"the LoRA code (`{gate.short}`) runs"
            detail = f"full-parameter fine-tuning unless a run turns LoRA on: {what} only under `{gate.guard}` ({gate.path}:{gate.line}){where}"
        elif first is not None and not full:
            detail = (f"full-parameter fine-tuning unless a run turns LoRA on: the LoRA switch {first.key} is {first.value!r} at "
                      f"{first.path}:{first.line}, and no launch or config turns it on")
        return Outcome(N, evs(full + off), detail, {"finetuning": kind})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status == U or outcome.values.get("finetuning") in ("frozen-llm", "frozen-base"):
            return None
        b = ctx.project.params_billions
        if b is not None and b < 1:
            return None  # a sub-1B model fully fine-tunes cheaply
        if b is not None and b >= 7:
            return Priority.HIGH  # the seed: large model + full fine-tuning -> evaluate LoRA/QLoRA
        return Priority.MEDIUM


#: the prefix length of P-Tuning v2 (ChatGLM's ``ptuning/train.sh``: ``--pre_seq_len 128``, read into the model config)
_PREFIX_KEYS = ("pre_seq_len",)


def _prefix_tuning_runs(f: Facts) -> Outcome | None:
    """P-Tuning v2 launches (ChatGLM-6B/ChatGLM2-6B ``ptuning/train.sh``: ``--pre_seq_len 128 --quantization_bit 4``): the
    model's own prefix encoder is the only trained part and the base weights stay frozen, a parameter-efficient run as
    LoRA is; the launches of the same script without it (``ds_train_finetune.sh``) fine-tune every weight. None when no
    launch or recipe sets a prefix length."""
    on_ = [s for s in f.effective(*_PREFIX_KEYS) if s.source in ("launcher", "config") and isinstance(s.value, int)
           and not isinstance(s.value, bool) and s.value > 0]
    if not on_:
        return None
    scripts = {s.script for s in on_ if s.script}
    with_ = {s.path for s in on_}
    without = sorted({x.path for x in f.launches() if x.script in scripts and x.path not in with_})
    runs = f"{len(with_)} of {len(with_) + len(without)} launches" if without else "every launch that sets it"
    detail = (f"P-Tuning v2 (prefix tuning): {on_[0].key} {on_[0].value} at {on_[0].path}:{on_[0].line} in {runs}; only the "
              "prefix encoder trains and the base weights stay frozen")
    values = {"finetuning": "prefix", "recipes.prefix": f"on: {len(with_)}, off: {len(without)}"}
    if without:
        detail += f"; full fine-tuning in {', '.join(without[:3])}"
    if len(with_) < len(without):
        return Outcome(N, evs(on_[:5]), f"full-parameter fine-tuning in most launches; {detail}", {**values, "finetuning": "full"})
    return Outcome(U, evs(on_[:5]), detail, values)


# --------------------------------------------------------------------------------------
# G5 layer freezing
# --------------------------------------------------------------------------------------

_AUX_MODEL = lazy_compile(r"(?i)(^|[._])(ref|reference|teacher|reward|rm|critic|vae|text_encoder|ema|discriminator|frozen|target|old)"
                        r"(_?model|_?net|_?policy)?($|[._])")
_WHOLE_MODEL = {"model", "net", "network", "module", "base_model", "llm", "lm", "policy", "self", "model.module", "self.model",
                "self.module", "self.net", "self.llm", "actor", "pretrained_model", "hf_model", "peft_model", "model_engine"}
_FREEZE_KEY = lazy_compile(r"^(freeze|frozen)(_\w+)?$|^fix_(layers?|embed\w*|backbone|encoder|vit|llm|lm|base|vision\w*)$", re.I)
# keys that configure a freeze mode or freeze something that is not a model layer
#: (``freeze_step``: DeepSpeed's 1-bit Adam/LAMB warm-up steps before the variance is frozen and compression starts)
_FREEZE_EXCLUDE = lazy_compile(r"(?i)^(freeze_support|freeze_bn\w*|freeze_batch_?norms?|freeze_norm_stats|freeze_seed|freeze_time\w*|freeze_steps?|"
                             r"freeze_graph|freeze_dict|freeze_trainable_\w+|freeze_extra_modules|freeze_random\w*)$")
_PARTS = {"vision": lazy_compile(r"(?i)(visual|vision|vit\b|vit_)"), "projector": lazy_compile(r"(?i)(merger|projector|mlp)"),
          "llm": lazy_compile(r"(?i)(language_model|llm|lm_head|(^|_)lm$)")}
_MM_KEY = lazy_compile(r"(?i)(vision|visual|vit|projector|mm_|image|clip|siglip|mlp_adapter)")
_PROJECTOR_TUNE = lazy_compile(r"(?i)^(tune|train|trainable)_(mm_)?(mlp\w*|projector)$")
_TUNE_KEY = lazy_compile(r"(?i)^(tune|train|unfreeze|trainable)_(mm_)?(vision\w*|visual\w*|vit\w*|llm|lm|language_model|mlp\w*|"
                       r"projector|embed\w*|backbone|encoder\w*|image_encoder)$")


def _receiver(c: Call) -> str:
    name = c.name.rsplit(".", 1)[0] if "." in c.name else ""
    if name.startswith("?"):
        text = c.text.split(".requires_grad_", 1)[0].strip()
        return re.sub(r"^\w+\s*=\s*", "", text)
    return name


def _is_whole(expr: str) -> bool:
    e = module_of(expr)
    return e in _WHOLE_MODEL or e.removeprefix("self.") in _WHOLE_MODEL


def _unfreezes(f: Facts) -> dict[tuple[str, str | None], list[Any]]:
    out: dict[tuple[str, str | None], list[Any]] = {}
    for a in f.attr_assigns("requires_grad"):
        if truthy(a.value) is True:
            out.setdefault((a.path, a.func), []).append(a)
    for c in f.calls("requires_grad_"):
        if truthy(_grad_arg(c)) is True:
            out.setdefault((c.path, c.func), []).append(c)
    return out


def _grad_arg(c: Call) -> Any:
    """The flag a ``requires_grad_(...)`` call sets: its argument, ``True`` (the default) when none is given."""
    return c.args[0] if c.args else c.kwargs.get("requires_grad", True)


#: LoRA/PEFT machinery freezing the base weights (G4, not layer freezing)
_ADAPTER_CODE = lazy_compile(r"(?i)(lora|peft|prefix_tuning|prompt_tuning|kbit)")  # ``prepare_model_for_kbit_training``: QLoRA's
#: an ``if`` that tests a parameter name for an adapter's (``if ".lora_A." in name or ".lora_B." in name:``): the branch that
#: freezes the rest is LoRA's base freeze (G4); ``if not use_lora:`` (full fine-tuning freezing layers) is not this
_ADAPTER_NAME_TEST = lazy_compile(r"""(?i)["'][^"']*(lora|adapter|peft)[^"']*["']\s+(not\s+)?in\b""")
#: a model-definition file (``models/flux/model/hf_embedder.py``, ``modeling_rae_siglip.py``)
_MODEL_DEF = lazy_compile(r"(^|/)(models?/|modeling_)")


def _put_in_eval(f: Facts, x: Any, recv: str) -> bool:
    """``model.eval()`` next to ``model.requires_grad_(False)`` in the same function: a module fixed for inference."""
    r = recv.strip()
    return bool(r) and any(c.path == x.path and c.func == getattr(x, "func", None) for c in f.calls(f"{r}.eval") if c.name == f"{r}.eval")


#: a MoE router / gate (``layer.mlp.router.weight``, ``shared_experts.gate_weight``): frozen for routing stability (verl's Megatron
#: ``freeze_moe_router``), a few thousand parameters whose backward costs nothing: not freezing layers to save compute
_ROUTER = lazy_compile(r"(^|\.)(router|moe_gate|gate_weight|gate_bias|expert_bias)(\.|$)")
#: a freeze key inside an adapter section (verl ``model.lora.freeze_language_model: True``) applies only to adapter training
_ADAPTER_SECTION = lazy_compile(r"(?i)(^|\.)(lora|peft|adapter|qlora)\.")


def _not_layer_freezing(x: Any, recv: str) -> bool:
    """A freeze that is not a fine-tuning choice about the trained model's layers: LoRA/PEFT code freezing the base (G4), a
    module put in eval mode and frozen whole (``hf_module.eval().requires_grad_(False)``: a fixed text encoder/VAE feature
    extractor), a freeze in a file of an auxiliary network (``discriminator.py``, ``wan_video_vae.py``), or a component a
    model's own constructor fixes as frozen (a pretrained encoder inside a model definition's ``__init__``)."""
    path = x.path
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    func = getattr(x, "func", None) or ""
    if _ADAPTER_CODE.search(stem) or _ADAPTER_CODE.search(func):
        return True
    if _ADAPTER_NAME_TEST.search(getattr(x, "guard", None) or ""):
        return True
    if re.search(r"\.eval\(\)$", recv.strip()):
        return True
    if _ROUTER.search(recv) or _ROUTER.search(getattr(x, "target", "") or ""):
        return True
    if _AUX_MODEL.search(stem):
        return True
    if _OPTIMIZER_CODE.search(path):
        return True  # an optimizer's own copies (Megatron's HybridDeviceOptimizer: fp32/CPU copies of params without a grad)
    return func == "__init__" and bool(_MODEL_DEF.search(path))


#: a file or folder of optimizer code (``megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py``, ``optim.py``)
_OPTIMIZER_CODE = lazy_compile(r"(^|/)(optim|optimizers?)(/|\.py$)|(^|/)\w*_optimizer\.py$")


def _frozen_copy(f: Facts, x: Any) -> bool:
    """A freeze in a loop over the parameters of a deep copy the same function made of a model (``self.module =
    deepcopy(model)`` then ``for p in self.module.parameters(): p.requires_grad_(False)``: an EMA or reference copy kept
    beside the trained model): the copy is frozen whole, no layer of the trained model is."""
    loop = getattr(x, "loop", None) or ""
    m = re.match(r"^([\w.]+)\.(parameters|named_parameters)\(\)$", loop.strip())
    if not m or not getattr(x, "func", None):
        return False
    made = re.compile(rf"^\s*{re.escape(m.group(1))}\s*=\s*(copy\.)?deepcopy\(")
    return any(c.path == x.path and c.func == x.func and made.match(c.text) for c in f.calls("deepcopy"))


#: pytorch-accelerated's ModelFreezer: ``freeze()`` sets ``requires_grad`` of the layer groups through a helper's parameter
_FREEZER = ("class ModelFreezer:\n    def __init__(self, model):\n        self.model = model\n"
            "        _set_requires_grad(model.parameters(), value=True)\n\n"
            "    def freeze(self, from_index=0, to_index=-2):\n        return self._freeze_unfreeze(from_index, to_index, freeze=True)\n\n"
            "    def _freeze_unfreeze(self, from_index, to_index, freeze=True):\n"
            "        for group in list(self.model.children())[from_index:to_index]:\n"
            "            _set_requires_grad(group.parameters(), value=not freeze)\n\n\n"
            "def _set_requires_grad(parameters, value=True):\n    for param in parameters:\n        param.requires_grad = value\n")
_FREEZER_RUN = ("from transformers import AutoModelForSequenceClassification\nfrom mylib.finetuning import ModelFreezer\n\n"
                "model = AutoModelForSequenceClassification.from_pretrained('bert-base-cased')\nfreezer = ModelFreezer(model)\n{call}"
                "for x, y in loader:\n    loss = model(x, labels=y).loss\n    loss.backward()\n    optimizer.step()\n")


#: pytorch-accelerated's ModelEma (after timm): a deep copy of the model kept for its moving average, frozen whole
_EMA_COPY = ("from copy import deepcopy\n\nfrom torch import nn\n\n\nclass ModelEma(nn.Module):\n"
             "    def __init__(self, model, decay=0.9999):\n        super().__init__()\n        self.module = deepcopy(model)\n"
             "        for p in self.module.parameters():\n            p.requires_grad_(False)\n        self.module.eval()\n"
             "        self.decay = decay\n")
_EMA_TRAIN = ("from transformers import AutoModelForSequenceClassification\nfrom mylib.utils import ModelEma\n\n"
              "model = AutoModelForSequenceClassification.from_pretrained('bert-base-cased')\n"
              "ema = ModelEma(model)\nfor step, (x, y) in enumerate(loader):\n    loss = loss_fn(model(x), y)\n    loss.backward()\n"
              "    optimizer.step()\n    ema.update(model)\n")


#: FlagEmbedding 1.4.2's shape: the runner freezes the position embeddings only under a TrainingArguments field that
#: defaults to False (``fix_position_embedding``), which no launch of the package sets
_FIX_POS_ARGS = ("from dataclasses import dataclass, field\n\nfrom transformers import TrainingArguments\n\n\n@dataclass\n"
                 "class EmbedderTrainingArguments(TrainingArguments):\n    temperature: float = field(default=0.02)\n"
                 "    fix_position_embedding: bool = field(default={default}, metadata={{'help': 'Freeze the position embeddings'}})\n")
_FIX_POS_RUNNER = ("from transformers import AutoModel, Trainer\n\n\nclass EmbedderRunner:\n"
                   "    def __init__(self, model_args, training_args):\n        self.model_args = model_args\n"
                   "        self.training_args = training_args\n\n    def load_model(self):\n"
                   "        model = AutoModel.from_pretrained(self.model_args.model_name_or_path)\n"
                   "        if self.training_args.fix_position_embedding:\n            for k, v in model.named_parameters():\n"
                   "                if 'position_embeddings' in k:\n                    v.requires_grad = False\n        return model\n\n"
                   "    def run(self, dataset):\n        trainer = Trainer(model=self.load_model(), args=self.training_args, train_dataset=dataset)\n"
                   "        trainer.train()\n")


#: a module that builds the model (``factory.py``, ``model_builder.py``, ``build_model.py``) or its training entry point
_MODEL_BUILD_FILE = lazy_compile(r"(^|/)(\w*factory|\w*builder|build\w*|(pre)?train\w*|finetun\w*|main)\.py$", re.I)


#: the language model of a multimodal (or adapter) model, as the attribute its parameters are reached through
_FROZEN_LLM = lazy_compile(r"(^|\.)(llama_model|language_model|llm|lm|llm_model|lang_model|lang_encoder|text_decoder|"
                         r"opt_model|t5_model|llama|vicuna|qwen_model)\.(named_)?parameters\(|(^|\.)(llama_model|language_model|llm|"
                         r"llm_model|lang_model|lang_encoder|text_decoder|opt_model|t5_model|qwen_model)$")


def _frozen_llm(f: Facts, train: Any) -> list[Any]:
    """Unconditional freezes of the language model in the training path's files: ``param.requires_grad = False`` over
    ``self.llama_model.named_parameters()``, or ``self.language_model.requires_grad_(False)`` (a model's constructor
    included: that is where a multimodal model fixes its LLM)."""
    out: list[Any] = [a for a in f.attr_assigns("requires_grad") if truthy(a.value) is False and a.loop and not a.guard
                      and a.path in train and _FROZEN_LLM.search(a.loop)]
    out += [c for c in _live(f, f.calls("requires_grad_")) if truthy(_grad_arg(c)) is False and not c.guard and c.path in train
            and _FROZEN_LLM.search(_receiver(c))]
    return sorted(out, key=lambda x: (x.path, x.line))


#: the n/a reason of G4 and G5 when the run trains only parameters it adds to a frozen model (see :func:`_frozen_base`)
FROZEN_BASE = "every pretrained weight is frozen"
#: a wrapper's hold on the model it wraps: OmniQuant's ``lm = LMClass(args)`` keeps the HF model as ``lm.model``
_WRAPPED_WHOLE = frozenset({"lm.model"})


def _whole_or_wrapped(expr: str) -> bool:
    return _is_whole(expr) or module_of(expr) in _WRAPPED_WHOLE


#: the names a launched script gives the model it trains (not ``module``/``net``: loop variables over a list of parts, as
#: Megatron-LM's MIMO provider freezes ``for module in modules_to_freeze: for param in module.parameters()``)
_TRAINED_MODEL = frozenset({"model", "self.model", "lm.model", "model.module", "base_model", "pretrained_model", "hf_model", "llm"})


#: ``key in name``: a parameter chosen by its name in a ``named_parameters()`` loop
_IN_NAME = lazy_compile(r"^\s*(?:(['\"])(\w+)\1|(\w+))\s+in\s+\w*name\s*$")
#: the names of the modules a parameter-efficient method adds (adapters, LoRA, prefixes, prompts, IA3 vectors)
_PEFT_PART = lazy_compile(r"(?i)^(adapter|lora|prefix|prompt|ia3|adaption)\w*$")


def _trained_by_name(f: Facts, train: Any) -> tuple[Any, list[str]] | None:
    """A training-path loop that lets only the parameters whose names contain an added module's key train and freezes
    the rest (LaVIN's ``mm_adaptation.py``: ``for name, param in llama.named_parameters(): for key in learnable_keys: if key
    in name: param.requires_grad = True else: param.requires_grad = False`` with ``learnable_keys=['adapter']``): (the
    switch-on, the keys), or None."""
    # the switch-offs, by file, function and condition: the ``else`` of a switch-on is the same test negated
    offs = {(b.path, b.func, (b.guard or "").replace(" ", "")) for b in f.attr_assigns("requires_grad") if truthy(b.value) is False}
    for a in f.attr_assigns("requires_grad"):
        if truthy(a.value) is not True or a.path not in train or not a.guard:
            continue
        m = _IN_NAME.match(a.guard)
        if m is None:
            continue
        if m.group(2):
            keys = [m.group(2)]
        else:  # a loop variable over a list of literal keys assigned in the same function
            lists = [x.value for x in f.files[a.path].assigns if x.name == a.loop and x.func == a.func
                     and isinstance(x.value, tuple) and x.value and all(isinstance(v, str) for v in x.value)]
            keys = list(lists[0]) if lists else []
        if not keys or not all(_PEFT_PART.match(k) for k in keys):
            continue
        if (a.path, a.func, f"not({a.guard})".replace(" ", "")) in offs:
            return a, keys
    return None


def _frozen_base(f: Facts, train: Any) -> list[Any]:
    """Unconditional freezes of the whole trained model in the training path's files, with nothing of it switched back on
    in the same function: SpinQuant's ``for param in model.parameters(): param.requires_grad = False`` before it adds the
    R1/R2 rotations it trains, OmniQuant's loop over ``lm.model.parameters()`` before it trains per-layer clipping and
    smoothing factors. Every pretrained weight is fixed and only parameters the project adds train: neither full
    fine-tuning (G4) nor a choice of layers to freeze (G5). Not a helper named for freezing (called on a sub-module), an
    auxiliary or copied model, a module put in eval mode, or a function nothing calls."""
    unf = _unfreezes(f)
    out: list[Any] = []
    # in a script a launch or documented command runs (SpinQuant's ``optimize_rotation.py``, OmniQuant's ``main.py``): the
    # run's own model, not a part frozen in one example's model provider
    launched = {p for x in (*f.launches(), *f.records("doc_launches")) if x.script and (p := resolve_file(f, str(x.script)))}

    def keep(x: Any, scope: str) -> bool:
        func = str(getattr(x, "func", "") or "").lower()
        return (x.path in train and x.path in launched and module_of(scope) in _TRAINED_MODEL and not getattr(x, "guard", None)
                and not unf.get((x.path, x.func))
                and not any(w in func for w in ("freeze", "frozen", "fix")) and not _AUX_MODEL.search(scope.split("(")[0])
                and not _not_layer_freezing(x, scope) and not _frozen_copy(f, x) and not _never_called(f, x))

    out += [a for a in f.attr_assigns("requires_grad") if truthy(a.value) is False and a.loop and keep(a, a.loop)]
    out += [c for c in _live(f, f.calls("requires_grad_")) if truthy(_grad_arg(c)) is False and not isinstance(_grad_arg(c), Expr)
            and keep(c, _receiver(c)) and not _put_in_eval(f, c, _receiver(c))]
    return sorted(out, key=lambda x: (x.path, x.line))


def freeze_sites(f: Facts) -> list[Any]:
    """Code that freezes a subset of a trained model's parameters."""
    unf = _unfreezes(f)
    out: list[Any] = []
    for a in f.attr_assigns("requires_grad"):
        if truthy(a.value) is not False:
            continue
        scope = a.loop or a.target.rsplit(".requires_grad", 1)[0]
        if _AUX_MODEL.search(scope.split("(")[0]) or _not_layer_freezing(a, scope) or _frozen_copy(f, a):
            continue
        if a.loop and "named_parameters" in a.loop:
            out.append(a)
        elif _whole_or_wrapped(scope) or (not a.loop and a.target.startswith("?")):
            if unf.get((a.path, a.func)):
                out.append(a)  # freeze everything, then unfreeze a part
        else:
            out.append(a)
    for c in _live(f, f.calls("requires_grad_")):
        if truthy(_grad_arg(c)) is not False or isinstance(_grad_arg(c), Expr):
            continue  # ``requires_grad_(tensor.requires_grad)`` copies a flag: it freezes nothing by itself
        recv = _receiver(c)
        if _AUX_MODEL.search(recv.split("(")[0]) or _not_layer_freezing(c, recv) or _put_in_eval(f, c, recv) or _frozen_copy(f, c):
            continue
        if recv and any(_receiver(u) == recv and u.line > c.line for u in unf.get((c.path, c.func), []) if isinstance(u, Call)):
            continue  # ``inputs_embeds.requires_grad_(False)`` ... ``.requires_grad_(True)`` again: a toggle around an in-place op
        if _whole_or_wrapped(recv):
            if unf.get((c.path, c.func)):
                out.append(c)
        elif recv:
            out.append(c)
    return [x for x in out if not _never_called(f, x)] + _freezer_calls(f)


def _uncalled_freeze(called: bool) -> dict[str, str]:
    """Megatron-DeepSpeed-shaped: a vision backbone defines ``freeze_pretrained_layers``; the training script calls it
    (``called``) or not."""
    return {
        "megatron/model/vision/swin_backbone.py": (
            "import torch\n\n\nclass SwinTransformer(torch.nn.Module):\n"
            "    def freeze_pretrained_layers(self, frozen_layers=[]):\n        for name, module in self.named_modules():\n"
            "            if name.split('.')[0] in frozen_layers:\n                for _name, param in module.named_parameters():\n"
            "                    param.requires_grad = False\n"),
        "tasks/vision/finetune_classification.py": (
            "from megatron.model.vision.swin_backbone import SwinTransformer\n\n\ndef model_provider():\n"
            "    model = SwinTransformer()\n"
            + ("    model.freeze_pretrained_layers(['patch_embed', 'layers.0'])\n" if called else "")
            + "    return model\n\n\nfor batch in loader:\n    loss = model_provider()(batch).loss\n    loss.backward()\n"),
    }


def _never_called(f: Facts, site: Any) -> bool:
    """A freeze inside a function or method that nothing in the project calls or passes on (Megatron-DeepSpeed's
    ``SwinTransformer.freeze_pretrained_layers``, ``MixVisionTransformer.freeze_patch_emb``): support code the run never
    reaches. Functions a framework calls by name (``forward``, ``training_step``, ``setup``, dunders) are reached."""
    func = getattr(site, "func", None)
    if not func or _FRAMEWORK_CALLED.match(func) or func.startswith("_"):
        return False  # (a private helper is reached through its public caller, which the facts may not name)
    if class_at(f, site.path, site.line) is None:
        return False  # a library's module-level function (TRL ``create_reference_model``) is API its users call
    callers = [c for c in f.calls(func) if c.short == func and c.func != func and not _TESTS_PATH.search(c.path)]
    if callers:
        return False
    return not any(r.name.rsplit(".", 1)[-1] == func for r in f.refs(f"*.{func}", func))


def _freezer_calls(f: Facts) -> list[Call]:
    """``freezer.freeze()`` on an object of the project's own freezing tool: a class whose ``freeze`` method (defined in
    the project, in a file that sets ``requires_grad``) freezes layer groups (pytorch-accelerated's ``ModelFreezer``:
    ``freeze(from_index=0, to_index=-2)`` sets ``param.requires_grad = value`` through a helper, a value no literal shows).
    An unconditional call outside that file is a run freezing layers; LoRA/adapter code is G4's."""
    files = {x.path for x in f.attr_assigns("requires_grad")} | {x.path for x in f.calls("requires_grad_")}
    defined = {p for p in f._defining("freeze") if p in files and not _ADAPTER_CODE.search(p)}
    if not defined:
        return []
    # (an unconditional call: ``if self.freeze_language_model or ...: model.freeze(...)`` follows those switches, read as keys)
    return [c for c in f.calls("freeze") if c.short == "freeze" and "." in c.name and c.path not in defined and c.func != "freeze"
            and not c.guard and not _ADAPTER_CODE.search(c.path) and not _AUX_MODEL.search(_receiver(c).split("(")[0])]


def _recipe_file(s: Setting) -> bool:
    return s.source == "config" and s.path.endswith((".yaml", ".yml", ".json"))


def _freeze_minority(f: Facts, settings: list[Setting]) -> dict[str, tuple[list[Setting], str]]:
    """Freeze keys that only a minority of three or more recipe files turn on: key -> (the recipes that set it, the
    distribution). A list-valued key counts as on when it names something (``freeze_modules: ["visual"]`` in 3 of
    13 lmms-engine recipes, ``null`` in the other 10): the recipes are judged by the majority, not by the few that differ."""
    by_key: dict[str, dict[bool, dict[str, Setting]]] = {}
    for x in settings:
        if not _recipe_file(x) or _TUNE_KEY.match(x.name):
            continue
        on = bool(x.value) if isinstance(x.value, tuple) or x.value is None else truthy(x.value)
        if on is None:
            continue
        by_key.setdefault(x.name, {}).setdefault(on, {})[x.path] = x
    out: dict[str, tuple[list[Setting], str]] = {}
    for key, split in by_key.items():
        on_, off_ = split.get(True, {}), split.get(False, {})
        total = len(set(on_) | set(off_))
        if on_ and total >= 3 and len(on_) * 2 < total:
            out[key] = (list(on_.values()), f"{key} set in {len(on_)} of {total} recipes, unset or off in {len(off_)} (judged by the majority)")
    return out


def _site_guard(f: Facts, x: Any) -> str | None:
    """The ``if`` conditions a freeze site runs under: a call's own guard; for ``param.requires_grad = False`` in
    ``for param in cls.parameters():`` the guard of that loop's call."""
    if isinstance(x, Call):
        return x.guard
    loop = getattr(x, "loop", None)
    if not loop:
        return None
    for c in f.calls(loop.split("(", 1)[0].rsplit(".", 1)[-1]):
        if c.path == x.path and c.func == x.func and c.line < x.line and loop.startswith(c.name + "("):
            return c.guard
    return None


#: ms-swift 3.8: LISA's callback freezes every layer when built (and again on each step), built only when
#: ``lisa_activated_layers > 0`` (default 0)
_LISA_CALLBACK = {
    "swift/llm/argument/tuner_args.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass TunerArguments:\n    lisa_activated_layers: int = 0\n"
        "    lisa_step_interval: int = 20\n"),
    "swift/llm/train/callback.py": (
        "import numpy as np\nfrom transformers import TrainerCallback\n\n\n"
        "class DynamicLayerActivationCallback(TrainerCallback):\n    def __init__(self, n_layers, step_interval, model):\n"
        "        super().__init__()\n        self.n_layers = n_layers\n        self.step_interval = step_interval\n"
        "        self.model = model\n        self.layers = model.model.layers\n        self.freeze_all_layers()\n\n"
        "    def freeze_all_layers(self):\n        for layer in self.layers:\n            for param in layer.parameters():\n"
        "                param.requires_grad = False\n\n"
        "    def on_step_begin(self, args, state, control, **kwargs):\n        if state.global_step % self.step_interval == 0:\n"
        "            self.switch_active_layers()\n\n"
        "    def switch_active_layers(self):\n        self.freeze_all_layers()\n"
        "        for idx in np.random.choice(len(self.layers), self.n_layers, replace=False):\n"
        "            for param in self.layers[idx].parameters():\n                param.requires_grad = True\n"),
    "swift/llm/train/sft.py": (
        "from transformers import Trainer\n\nfrom .callback import DynamicLayerActivationCallback\n\n\n"
        "def train(args, model, dataset):\n    callbacks = []\n    if args.lisa_activated_layers > 0:\n"
        "        callbacks.append(DynamicLayerActivationCallback(n_layers=args.lisa_activated_layers,\n"
        "                                                        step_interval=args.lisa_step_interval, model=model))\n"
        "    Trainer(model=model, args=args, train_dataset=dataset, callbacks=callbacks).train()\n"),
    "swift/cli/sft.py": "from swift.llm.train.sft import train\n\nif __name__ == '__main__':\n    train(*build())\n",
}

@register
class G5LayerFreezing(Check):
    id = "G5"
    title = "Layer freezing"
    title_zh = "层冻结"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMPUTE)
    priority = Priority.LOW
    benefit = "no gradients or optimizer state for frozen layers; frozen bottom layers also skip their weight-gradient GEMMs"
    what = (
        "Whether fine-tuning freezes part of the model: `requires_grad_(False)` / `p.requires_grad = False` on a sub-module or "
        "a filtered `named_parameters()` loop, 'freeze all then unfreeze a part', `freeze_*: true` keys (e.g. `freeze_llm`, "
        "`freeze_vision_tower`), `tune_mm_*: false`, LLaMA-Factory `finetuning_type: freeze`. Freezing a whole reference/"
        "teacher/reward model is not layer freezing; LoRA's implicit freezing of the base is G4, not this check."
    )
    why = (
        "Each frozen parameter saves its gradient and two Adam moments (12 of the ~16 bytes/parameter of mixed-precision "
        "training); freezing the bottom half of a network also removes half of the weight-gradient matmuls (~1/3 of the "
        "backward FLOPs). LLaMA-Factory's freeze tuning and LLaVA's stage-1 (projector only) rely on this."
    )
    fix = "When full fine-tuning, freeze the embeddings and lower layers (e.g. LLaMA-Factory `finetuning_type: freeze` with `freeze_trainable_layers: 8`, or `layer.requires_grad_(False)` for the bottom blocks)."
    fix_zh = "全量微调时冻结 embedding 与底层（例如 LLaMA-Factory `finetuning_type: freeze` 配合 `freeze_trainable_layers: 8`，或对底部若干层调用 `requires_grad_(False)`）。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://llamafactory.readthedocs.io/en/latest/getting_started/sft.html", "https://arxiv.org/abs/1911.03090")
    snippets = {
        "hf-yaml": "finetuning_type: freeze\nfreeze_trainable_layers: 8\nfreeze_trainable_modules: all\n",
        "python": (
            "model.get_input_embeddings().requires_grad_(False)\n"
            "for layer in model.model.layers[: len(model.model.layers) // 2]:\n"
            "    layer.requires_grad_(False)\n"
        ),
    }
    examples = (
        Example(_uncalled_freeze(False), N, "a backbone's freeze method that nothing in the project calls"),
        Example(_uncalled_freeze(True), U, "the same method called by the training script"),
        Example(_LISA_CALLBACK, N, "a layer-activation callback that freezes layers, built only when its layer count (0) is set"),
        Example({**_LISA_CALLBACK, "examples/train/lisa.sh": (
            "NPROC_PER_NODE=8 torchrun --nproc_per_node 8 swift/cli/sft.py --model Qwen/Qwen2.5-7B-Instruct --train_type full \\\n"
            "    --lisa_activated_layers 2 --lisa_step_interval 20\n")}, U, "a launch sets the layer count"),
        Example({  # verl: Megatron's MoE router frozen for routing stability; LoRA's own freeze keys with LoRA off
            "verl/models/mcore/bridge.py": (
                "def freeze_moe_router(model):\n    for model_chunk in model:\n"
                "        for layer in model_chunk.decoder.layers:\n            if hasattr(layer.mlp, 'router'):\n"
                "                layer.mlp.router.weight.requires_grad = False\n"
                "            if hasattr(layer.mlp, 'shared_experts'):\n"
                "                layer.mlp.shared_experts.gate_weight.requires_grad = False\n    return model\n"),
            "verl/trainer/config/model/hf_model.yaml": (
                "path: ~/models/deepseek-llm-7b-chat\nlora_rank: 0\nlora_alpha: 16\n"
                "lora:\n  freeze_vision_model: True\n  freeze_language_model: True\n"),
            "verl/workers/engine/fsdp/transformer_impl.py": (
                "import torch\nfrom transformers import AutoModelForCausalLM\n\n"
                "def train(config, loader):\n    model = AutoModelForCausalLM.from_pretrained(config.path)\n"
                "    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)\n    for batch in loader:\n"
                "        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n"),
        }, N, "MoE router freeze and LoRA-section freeze keys with LoRA off"),
        Example({
            "train.py": (
                "def freeze_lower_layers(model, n):\n    for layer in model.model.layers[:n]:\n"
                "        for p in layer.parameters():\n            p.requires_grad = False\n\n"
                "import torch\nfrom transformers import AutoModelForCausalLM\n"
                "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2-7B')\nfreeze_lower_layers(model, 8)\n"
                "optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)\n"
                "for batch in loader:\n    model(**batch).loss.backward()\n    optimizer.step()\n"),
        }, U, "lower decoder layers frozen"),
        Example({"train.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('gpt2')\n"
                 "for layer in model.transformer.h[:6]:\n    for p in layer.parameters():\n        p.requires_grad = False\n"},
                U, "bottom layers frozen"),
        Example({"configs/neox.yml": (  # GPT-NeoX: a 1-bit Adam's warm-up, before compression starts, is no layer freezing
            '{\n  "optimizer": {\n    "type": "OneBitAdam",\n    "params": {"lr": 0.0006, "freeze_step": 400}\n  },\n'
            '  "train_micro_batch_size_per_gpu": 4\n}\n'),
            "train.py": ("import deepspeed\nfrom transformers import AutoModelForCausalLM\n\n"
                         "model = AutoModelForCausalLM.from_pretrained('EleutherAI/pythia-1b')\n"
                         "engine, *_ = deepspeed.initialize(model=model, config='configs/neox.yml')\nengine.backward(loss)\n")},
            N, "1-bit Adam freeze_step"),
        Example({"examples/freeze_sft.yaml": "model_name_or_path: meta-llama/Meta-Llama-3-8B\nstage: sft\nfinetuning_type: freeze\n"
                 "freeze_trainable_layers: 8\ntemplate: llama3\n"}, U, "llamafactory freeze"),
        Example({"llava/train/train.py": "from transformers import AutoModelForCausalLM\n"
                 "def train():\n    model = AutoModelForCausalLM.from_pretrained(path)\n    if model_args.tune_mm_mlp_adapter:\n"
                 "        model.requires_grad_(False)\n        for p in model.get_model().mm_projector.parameters():\n"
                 "            p.requires_grad = True\n"}, U, "freeze all, unfreeze projector"),
        Example({"run.sh": "torchrun --nproc_per_node 8 internvl_chat_finetune.py --freeze_llm True --freeze_backbone True "
                 "--freeze_mlp False --model_name_or_path OpenGVLab/InternVL2-8B\n"}, U, "freeze flags"),
        Example({"train.py": "from peft import LoraConfig, get_peft_model\nmodel = get_peft_model(model, LoraConfig(r=8))\n"},
                N, "LoRA only: base frozen by G4, no layer freezing"),
        Example({"dpo.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "ref_model = AutoModelForCausalLM.from_pretrained(p)\nref_model.requires_grad_(False)\n"
                 "for p in ref_model.parameters():\n    p.requires_grad = False\n"}, N, "only the reference model is frozen"),
        Example({"run.sh": "torchrun --nproc_per_node 8 finetune.py --freeze_llm False --freeze_backbone False "
                 "--model_name_or_path OpenGVLab/InternVL2-8B\n"}, N, "freeze flags off"),
        Example({"train.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('gpt2')\n"
                 "# for p in model.transformer.h[:6].parameters(): p.requires_grad = False\n"}, N, "commented out"),
        Example({  # llama-recipes: the freezing helper runs only under --freeze_layers, False by default
            "src/llama_recipes/configs/training.py": (
                "from dataclasses import dataclass\n\n@dataclass\nclass train_config:\n"
                "    model_name: str = 'meta-llama/Llama-3.1-8B'\n    freeze_layers: bool = False\n    num_freeze_layers: int = 1\n"),
            "src/llama_recipes/utils/train_utils.py": (
                "def freeze_transformer_layers(model, num_layer):\n    for i, layer in enumerate(model.model.layers):\n"
                "        if i < num_layer:\n            for param in layer.parameters():\n                param.requires_grad = False\n"),
            "src/llama_recipes/finetuning.py": (
                "from transformers import AutoModelForCausalLM\nfrom llama_recipes.configs import train_config\n"
                "from llama_recipes.utils.train_utils import freeze_transformer_layers, train\n\n"
                "def main(**kwargs):\n    model = AutoModelForCausalLM.from_pretrained(train_config.model_name)\n"
                "    if train_config.freeze_layers:\n        freeze_transformer_layers(model, train_config.num_freeze_layers)\n"
                "    train(model)\n"),
        }, N, "freezing helper behind a switch that is off"),
        Example({
            "scripts/finetune_frozen.sh": "torchrun --nproc_per_node 8 finetuning.py --model_name meta-llama/Llama-3.1-8B --freeze_layers True --num_freeze_layers 16\n",
            "utils.py": (
                "def freeze_transformer_layers(model, num_layer):\n    for i, layer in enumerate(model.model.layers):\n"
                "        if i < num_layer:\n            for param in layer.parameters():\n                param.requires_grad = False\n"),
            "finetuning.py": (
                "import argparse\nfrom transformers import AutoModelForCausalLM\nfrom utils import freeze_transformer_layers\n"
                "parser = argparse.ArgumentParser()\nparser.add_argument('--freeze_layers', type=bool, default=False)\n"
                "parser.add_argument('--num_freeze_layers', type=int, default=1)\nargs = parser.parse_args()\n"
                "model = AutoModelForCausalLM.from_pretrained(args.model_name)\n"
                "if args.freeze_layers:\n    freeze_transformer_layers(model, args.num_freeze_layers)\n"),
        }, U, "freezing helper switched on by the launch"),
        Example({  # torchtitan: LoRA's converter freezes the base (G4), a flag is copied, FLUX's text encoder is fixed
            "torchtitan/components/lora.py": (
                "import torch.nn as nn\nclass LoRAConverter:\n    def __init__(self, config):\n        self.rank = config.rank\n"
                "    def convert(self, model: nn.Module):\n        for param in model.parameters():\n            param.requires_grad_(False)\n"),
            "torchtitan/components/loss.py": (
                "def chunked(hidden_states, requires_grad):\n    return [c.detach().requires_grad_(requires_grad) for c in hidden_states]\n"),
            "torchtitan/models/flux/model/hf_embedder.py": (
                "from torch import nn\nfrom transformers import T5EncoderModel\nclass FluxEmbedder(nn.Module):\n"
                "    def __init__(self, version):\n        super().__init__()\n"
                "        self.hf_module = T5EncoderModel.from_pretrained(version)\n"
                "        self.hf_module = self.hf_module.eval().requires_grad_(False)\n"),
            "torchtitan/train.py": "def main():\n    model = build_model()\n    loss = model(batch).sum()\n    loss.backward()\n",
        }, N, "adapter base, copied flag and frozen text encoder are not layer freezing"),
        Example({  # lmms-engine: the runner freezes only what freeze_modules names, set in 1 of 4 recipes
            "src/lmms_engine/train/runner.py": (
                "from functools import reduce\nfrom transformers import Qwen2_5_VLForConditionalGeneration\n\nclass TrainRunner:\n"
                "    def build(self):\n        self.model = Qwen2_5_VLForConditionalGeneration.from_pretrained(self.config.model_path)\n"
                "    def run(self):\n"
                "        if self.config.trainer_args.freeze_modules:\n"
                "            for modules in self.config.trainer_args.freeze_modules:\n"
                "                cls = reduce(lambda o, k: getattr(o, k, None), modules.split('.'), self.model)\n"
                "                if cls is not None:\n                    for param in cls.parameters():\n"
                "                        param.requires_grad = False\n"),
            "examples/qwen2_5_vl/example_config.yaml": "trainer_args:\n  freeze_modules: null\n  bf16: true\n",
            "examples/qwen3_vl/example_config.yaml": "trainer_args:\n  freeze_modules: null\n  bf16: true\n",
            "examples/llava_video/llava_video.yaml": "trainer_args:\n  freeze_modules: null\n",
            "examples/load_from_pretrained_example.yaml": "trainer_args:\n  freeze_modules: [\"visual\"]\n",
        }, N, "freeze key set by a minority of recipes"),
        Example({
            "src/lmms_engine/train/runner.py": (
                "from functools import reduce\nfrom transformers import Qwen2_5_VLForConditionalGeneration\n\nclass TrainRunner:\n"
                "    def build(self):\n        self.model = Qwen2_5_VLForConditionalGeneration.from_pretrained(self.config.model_path)\n"
                "    def run(self):\n"
                "        if self.config.trainer_args.freeze_modules:\n"
                "            for modules in self.config.trainer_args.freeze_modules:\n"
                "                cls = reduce(lambda o, k: getattr(o, k, None), modules.split('.'), self.model)\n"
                "                if cls is not None:\n                    for param in cls.parameters():\n"
                "                        param.requires_grad = False\n"),
            "examples/qwen2_5_vl/example_config.yaml": "trainer_args:\n  freeze_modules: [\"visual\"]\n  bf16: true\n",
            "examples/qwen3_vl/example_config.yaml": "trainer_args:\n  freeze_modules: [\"visual\"]\n  bf16: true\n",
            "examples/llava_video/llava_video.yaml": "trainer_args:\n  freeze_modules: null\n",
        }, U, "freeze key set by most recipes"),
        Example({  # a LoRA library: the base frozen by a name test on LoRA's weights, a k-bit preparation helper, and an
            # activation's requires_grad toggled off around an in-place multiply and back on (unsloth 2025.9 gemma.py/llama.py)
            "mylib/models/gemma.py": (
                "from peft import get_peft_model\nfrom mylib_zoo.training_utils import prepare_model_for_training\n\n"
                "def prepare_model_for_kbit_training(model, use_gradient_checkpointing=True):\n"
                "    return prepare_model_for_training(model, use_gradient_checkpointing=use_gradient_checkpointing,\n"
                "                                      train_embedding=False, train_lm_head=False)\n\n"
                "def post_patch(model, lora_config):\n    model = get_peft_model(prepare_model_for_kbit_training(model), lora_config)\n"
                "    for name, param in model.named_parameters():\n"
                "        if \".lora_A.\" in name or \".lora_B.\" in name:\n            param.requires_grad_(True)\n"
                "        else:\n            param.requires_grad_(False)\n    return model\n\n"
                "def model_forward(self, inputs_embeds):\n    inputs_requires_grad = inputs_embeds.requires_grad\n"
                "    if inputs_requires_grad:\n        inputs_embeds.requires_grad_(False)\n    inputs_embeds *= self.normalizer\n"
                "    if inputs_requires_grad:\n        inputs_embeds.requires_grad_(True)\n    return inputs_embeds\n"),
            "train.py": ("from transformers import AutoModelForCausalLM\nfrom peft import LoraConfig\nfrom mylib.models.gemma import post_patch\n"
                         "model = post_patch(AutoModelForCausalLM.from_pretrained('google/gemma-2b'), LoraConfig(r=16))\n"),
        }, N, "LoRA base freeze by a name test, k-bit preparation, a toggled activation"),
        Example({  # the same shapes freezing real layers: a name test on the embeddings, a module frozen and never re-enabled
            "mylib/models/gemma.py": (
                "def post_patch(model):\n"
                "    for name, param in model.named_parameters():\n"
                "        if \"embed_tokens\" in name or \"layers.0.\" in name:\n            param.requires_grad_(False)\n"
                "    model.lm_head.requires_grad_(False)\n    model.model.norm.requires_grad_(True)\n    return model\n"),
            "train.py": ("from transformers import AutoModelForCausalLM\nfrom mylib.models.gemma import post_patch\n"
                         "model = post_patch(AutoModelForCausalLM.from_pretrained('google/gemma-2b'))\n"),
        }, U, "embeddings and first block frozen by a name test"),
        Example({  # Megatron-LM megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py: CPU copies without a gradient
            "megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py": (
                "import torch\n\n\nclass HybridDeviceOptimizer(torch.optim.Optimizer):\n    def _sync_gpu_grads_to_cpu(self):\n"
                "        for optimizer in self.cpu_optimizers:\n            for param in _param_generator(optimizer):\n"
                "                gpu_param = self.cpu_copys_map_gpu_param[param]\n                if gpu_param.grad is None:\n"
                "                    param.requires_grad = False\n                    continue\n"
                "                param.requires_grad = False\n"),
            "megatron/training/training.py": "def train_step(model, optimizer, data_iterator):\n    loss = model(next(data_iterator))\n    loss.backward()\n    optimizer.step()\n",
            "examples/sft/finetune.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --finetune --load ckpt/ --bf16\n",
        }, N, "an optimizer's CPU copies without a gradient are not frozen layers"),
        Example({"mylib/utils.py": _EMA_COPY, "train.py": _EMA_TRAIN}, N, "an EMA deep copy frozen whole is not layer freezing"),
        Example({"mylib/finetuning.py": _FREEZER, "train.py": _FREEZER_RUN.format(call="freezer.freeze()\n")}, U,
                "the project's ModelFreezer freezes the backbone before the first epochs"),
        Example({"mylib/finetuning.py": _FREEZER, "train.py": _FREEZER_RUN.format(call="")}, N,
                "the same freezing tool built but never asked to freeze"),
        Example({"mylib/utils.py": _EMA_COPY.replace("for p in self.module.parameters():", "for p in model.bert.embeddings.parameters():"),
                 "train.py": _EMA_TRAIN}, U, "the same loop over the trained model's backbone freezes layers"),
        Example({"mylib/arguments.py": _FIX_POS_ARGS.format(default="False"), "mylib/runner.py": _FIX_POS_RUNNER}, N,
                "position embeddings frozen only under a TrainingArguments field that defaults to False"),
        Example({"mylib/arguments.py": _FIX_POS_ARGS.format(default="True"), "mylib/runner.py": _FIX_POS_RUNNER}, U,
                "the same freeze with the field on by default"),
    )

    def not_applicable(self, ctx: Context) -> str | None:
        return _pretrain_only(ctx)

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list[Any] = []
        off: list[Any] = []
        all_settings = _all_freeze_settings(f)
        minority = _freeze_minority(f, all_settings)
        dist = "; ".join(text for _, text in minority.values())
        for x in freeze_sites(f):
            # a freezing helper whose every call is switched off (llama-recipes ``freeze_transformer_layers`` only under
            # ``if not use_peft and freeze_layers``, ``freeze_layers=False``) freezes nothing; so does one reached only
            # through methods that hand it on (OpenCLIP ``TimmModel.lock`` <- ``CLIP.lock_image_tower`` <- ``if
            # args.lock_image:`` in the training script, a store_true flag)
            gated = callers_off(f, x) or callers_off_chain(f, x) or constructions_off(f, x)
            if not gated and not isinstance(x, Call):
                # ``for k, v in model.named_parameters(): ... v.requires_grad = False`` under ``if
                # self.training_args.fix_position_embedding:``, a TrainingArguments field defaulting to False: the
                # assignment's own branch is off (``requires_grad_(False)`` calls are already read through ``_live``)
                gated = guard_off(f, x)
            if not gated:  # the branch of a freeze key that only a minority of recipes sets (lmms-engine runner.py:195)
                gated = [m for name, neg in guard_flags(_site_guard(f, x)) if not neg and name in minority for m in minority[name][0]]
            if gated:
                off += [g for g in gated if g not in off]
            else:
                used.append(x)
        mm_model = bool(set(ctx.project.model_families) & _MULTIMODAL_FAMILIES)
        adapters_on = bool(_lora_scan(f)[0])  # G4's reading (the overview's adapter_training follows the checks)
        for s in all_settings:
            if s.name in minority and _recipe_file(s):
                if s in minority[s.name][0] and s not in off:
                    off.append(s)
                continue
            if _FREEZE_EXCLUDE.match(s.name):
                continue
            if _ADAPTER_SECTION.search(s.key) and not adapters_on:
                continue  # LoRA's own freeze options with LoRA off (lora_rank: 0) freeze nothing
            if _ADAPTER_CODE.search(_setting_func(f, s)):
                continue  # ``prepare_model_for_training(train_embedding=False)`` inside ``prepare_model_for_kbit_training``: QLoRA's base freeze (G4)
            if _MM_KEY.search(s.name) and (not ctx.project.multimodal or (s.rank == 0 and not mm_model)):
                continue  # LLaMA-Factory's freeze_vision_tower default in a text-only run freezes nothing
            is_tune = bool(_TUNE_KEY.match(s.name))
            if s.name.lower() == "tune_mm_mlp_adapter":
                if truthy(s.value):
                    used.append(s)  # LLaVA stage 1: only the projector trains, LLM and ViT are frozen
                continue
            if _PROJECTOR_TUNE.match(s.name) and truthy(s.value):
                continue  # training the projector says nothing about the other parts
            t = truthy(s.value)
            n = as_number(s.value)
            if is_tune and n == 0 and not isinstance(s.value, bool) and str(s.value).strip().lower() not in ("true", "false"):
                continue  # a count of layers to unfreeze (InternVL ``unfreeze_vit_layers: int = 0``): none, which freezes nothing
            if isinstance(s.value, tuple):
                t = bool(s.value)
            elif t is None and n is not None:
                t = n > 0
            if t is None:
                continue
            frozen = (not t) if is_tune else t
            (used if frozen else off).append(s)
        for s in f.effective("finetuning_type", "train_type", "tuner_type"):
            if isinstance(s.value, str) and s.value.strip().lower() == "freeze":
                used.append(s)
        for s in f.effective("mm_tunable_parts"):
            if isinstance(s.value, str) and not all(p in s.value for p in ("mm_vision_tower", "mm_mlp_adapter", "mm_language_model")):
                used.append(s)
        # ``p.requires_grad = False`` in the branch of a part that launches/configs switch explicitly (Qwen-VL's
        # ``set_model``: ``if model_args.tune_mm_llm: ... else: ... = False``) follows those switches, not the code
        explicit = {part for x in used + off if isinstance(x, Setting) and x.source in ("launcher", "config")
                    for part, rx in _PARTS.items() if rx.search(x.name)}
        used = [x for x in used if isinstance(x, Setting) or not any(
            _PARTS[part].search(getattr(x, "loop", None) or getattr(x, "target", "") or "") for part in explicit)]
        if used:
            return Outcome(U, evs(used), "part of the model is frozen", {"layer_freezing": True})
        lora, _, _ = _lora_scan(f)
        if lora:
            return Outcome(N, evs(off), "no layers frozen beyond the base weights LoRA/PEFT already freezes (G4): no advice for an "
                           "adapter run", {"layer_freezing": "lora"})
        prefix = _prefix_tuning_runs(f)
        if prefix is not None and prefix.status == U:
            # (ChatGLM's P-Tuning v2 launches: the base weights are frozen and only the prefix encoder trains)
            return Outcome(N, prefix.evidence, "no layers frozen beyond the base weights prefix tuning already freezes (G4): "
                           "no advice for a P-Tuning run", {"layer_freezing": "lora"})
        base = _frozen_base(f, ctx.project.training_files)
        if base and not off:
            x = base[0]
            return Outcome(Status.NA, evs(base[:3]), f"{FROZEN_BASE} ({x.path}:{x.line}); only the parameters the project adds train, "
                           "so no layers are left to choose", {"layer_freezing": "frozen-base"})
        detail = "freezing switches are off" if off else "no layer freezing found"
        return Outcome(N, evs(off), f"{detail}; {dist}" if dist else detail, {"layer_freezing": False})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status == U or outcome.values.get("layer_freezing") in ("lora", "frozen-base"):
            return None
        return self.priority


_HF_WARMUP_KNOBS = frozenset({"warmup_ratio", "warmup_steps"})


def _hf_constant_ignores(r: Any) -> bool:
    """Every schedule the run names is transformers' plain ``"constant"`` and every warmup seen is a ``TrainingArguments``
    warmup knob, which that schedule does not read."""
    names = [x for x in r.constant if isinstance(x, Setting) and x.name == "lr_scheduler_type"]
    return bool(names) and len(names) == len(r.constant) and all(str(x.value).strip().lower() == "constant" for x in names) \
        and all(isinstance(x, Setting) and x.name in _HF_WARMUP_KNOBS for x in r.warm)


def _setting_func(f: Facts, s: Setting) -> str:
    """The function that holds a call-keyword setting (``""`` for other settings or module level)."""
    if s.source != "call":
        return ""
    ff = f.files.get(s.path)
    for c in (ff.calls if ff else ()):
        if c.func and s.name in c.kwargs and (c.line == s.line or c.kw_line(s.name) == s.line):
            return c.func
    return ""


def _all_freeze_settings(f: Facts) -> list[Setting]:
    """Effective settings of every ``freeze_*`` / ``tune_*`` key the repository mentions."""
    names: set[str] = set()
    for e in f.records("configs"):
        k = e.key
        if _FREEZE_KEY.match(k) or _TUNE_KEY.match(k):
            names.add(k)
    for launch in f.launches():
        for k in (*launch.script_args, *launch.launcher_args):
            if _FREEZE_KEY.match(k) or _TUNE_KEY.match(k):
                names.add(k)
    for src in (f.records("arg_options"), f.records("fields")):
        for x in src:
            k = getattr(x, "dest", None) or getattr(x, "name", "")
            if _FREEZE_KEY.match(k) or _TUNE_KEY.match(k):
                names.add(k)
    for kw in f.call_keywords():  # a keyword matches only if its normalised (lower-case) form does, or is not ASCII
        if kw.isascii() and not (_FREEZE_KEY.match(kw) or _TUNE_KEY.match(kw)):
            continue
        for c in f.calls_with_kw(kw):
            names.update(k for k in c.kwargs if k.strip().lower().replace("-", "_") == kw and (_FREEZE_KEY.match(k) or _TUNE_KEY.match(k)))
    names = {n for n in names if not _FREEZE_EXCLUDE.match(n) and n.lower() not in {"fix", "freeze", "frozen"}}
    return f.effective(*sorted(names)) if names else []


# --------------------------------------------------------------------------------------
# G6 fused alignment / distillation losses
# --------------------------------------------------------------------------------------

_LIGER_LOSSES = (
    "LigerFusedLinearDPOLoss", "LigerFusedLinearORPOLoss", "LigerFusedLinearSimPOLoss", "LigerFusedLinearCPOLoss",
    "LigerFusedLinearKTOLoss", "LigerFusedLinearJSD", "LigerFusedLinearJSDLoss", "LigerKLDIVLoss", "LigerJSD",
    "LigerFusedLinearGRPOLoss", "LigerFusedLinearPPOLoss", "LigerFusedLinearDistillationBase", "LigerFusedLinearPreferenceBase",
    "LigerFusedLinearCosineSimilarityLoss", "LigerORPOTrainer", "liger_kernel.chunked_loss.*",
)
_TRL_ALIGN = (
    *(t for t in HF_TRAINERS if t not in ("transformers.Trainer", "Seq2SeqTrainer", "SFTTrainer")),
    "DPOConfig", "ORPOConfig", "KTOConfig", "CPOConfig", "GRPOConfig", "GKDConfig", "PPOConfig", "RLOOConfig", "OnlineDPOConfig",
)


_ALIGN_RUN = lazy_compile(r"(?i)(dpo|orpo|kto|simpo|cpo|grpo|ppo|rloo|gkd|distill|rlhf|preference|align)")
_ALIGN_CONFIGS = ("DPOConfig", "ORPOConfig", "KTOConfig", "CPOConfig", "GRPOConfig", "GKDConfig", "PPOConfig", "RLOOConfig",
                  "OnlineDPOConfig")


_LOGPROB_CALLS = ("log_softmax", "logsumexp", "cross_entropy")
#: an autograd Function named for a chunked or fused LM-head loss (``ChunkedLogProbFunction``, ``FusedLinearCrossEntropyFunction``)
_FUSED_FN = lazy_compile(r"(?i)(chunk|fused).*(logprob|log_prob|linear|cross_?entropy|loss)")


def _chunked_head_logprobs(f: Facts) -> tuple[list[Call], list[Call]]:
    """A project's own fused LM-head log-prob (verl's ``FusedLinearForPPO``, oat-llm's ``FusedLinear``): a function that
    computes ``log_softmax``/``logsumexp``/``cross_entropy``, called inside a loop over chunks with the hidden states and
    the head weight as its operands, so each chunk's logits exist only inside the loop. Returns the chunk-loop calls and
    the calls from other modules that use that module (``FusedLinear(compute_entropy=True)(hidden, lm_head.weight, ids)``).
    A loop over rows of logits already computed (TRL ``selective_log_softmax``) takes no weight: not this."""
    sites: list[Call] = []
    for path, func in sorted({(c.path, c.func) for c in f.calls(*_LOGPROB_CALLS) if c.func}):
        for c in f.calls(func):
            if c.path != path or not c.loop or "chunk" not in c.loop.lower():
                continue
            operands = " ".join([*c.kwargs, *(a.text for a in c.args if isinstance(a, Expr))]).lower()
            if "hidden" in operands and "weight" in operands:
                sites.append(c)
    # a chunked/fused log-prob kernel packaged as an autograd Function and applied to the hidden states and the head weight
    # (TRL 1.16 ``_ChunkedLogProbFunction.apply(hidden_states[mask], weight, bias, labels, ...)`` in the forward that
    # ``add_fused_lm_head`` installs): the users are the callers of the function that applies it, not every call into its
    # module (a large utils module)
    applied = [c for c in f.calls("apply") if _FUSED_FN.search(c.name.rsplit(".", 1)[0].rsplit(".", 1)[-1]) and c.func
               and "hidden" in (ops := " ".join(a.text for a in c.args if isinstance(a, Expr)).lower()) and "weight" in ops]
    users: list[Call] = []
    for c in applied:
        stem, entry = c.path.removesuffix(".py").rsplit("/", 1)[-1], c.outer or c.func
        # ``add_fused_lm_head(model)`` or ``.utils.add_fused_lm_head`` / ``trl.trainer.utils.add_fused_lm_head``
        users += [u for u in f.calls(entry) if u.path != c.path and (u.name == entry or u.name.endswith(f"{stem}.{entry}"))]
    sites += applied
    sites.sort(key=lambda c: (c.path, c.line))
    for path in sorted({c.path for c in sites if c not in applied}):
        module = path.removesuffix(".py").replace("/", ".")
        users += [c for c in f.calls(f"{module}.*") if c.path != path and c.name.startswith(module + ".")]
        # an object built and applied in one expression (``FusedLinear(compute_entropy=True)(hidden, weight, ids)``) is
        # recorded as the outer call only, with no name: its text starts the imported class's construction
        for imp in f.imports(module):
            if imp.name and imp.path != path:
                built = re.compile(rf"(?<![\w.]){re.escape(imp.name)}\(.*\)\s*\(")
                ff = f.files.get(imp.path)
                users += [c for c in (ff.calls if ff else ()) if c.name == "?" and built.search(c.text)]
    return sites, users


def _alignment_run(f: Facts, s: Setting) -> bool:
    """Whether a ``use_liger_kernel`` setting belongs to a preference/RL/distillation run (TRL fuses that loss),
    not to an SFT recipe of the same repository (where it only patches the model)."""
    if s.source == "call":
        return s.key.split("(", 1)[0] in _ALIGN_CONFIGS
    if s.source == "field-default":
        return any(c in s.key for c in _ALIGN_CONFIGS)
    if _ALIGN_RUN.search(s.path) or _ALIGN_RUN.search(s.text if s.source == "launcher" else ""):
        return True
    ff = f.files.get(s.path)
    keys = {str(e.keys[0]) for e in ff.configs if e.keys} if ff else set()
    return bool(keys & {"beta", "num_generations", "rpo_alpha", "loss_type", "max_prompt_length", "reward_funcs", "lmbda"})


#: oat-llm 0.2.4 ``utils/lm_head.py`` (adapted from verl): log-probs of the LM head computed 512 tokens at a time in an
#: autograd Function, applied by the RL learner under ``use_fused_lm_head`` (``{default}``)
_CHUNKED_HEAD = {
    "myrl/utils/lm_head.py": (
        "import torch\n\n\ndef _fused_linear_fwd(hidden_states, vocab_weights, input_ids, temperature=1.0):\n"
        "    logits = (hidden_states @ vocab_weights.t()) / temperature\n"
        "    log_probs = logits.float().log_softmax(dim=-1)\n"
        "    return log_probs.gather(-1, input_ids.unsqueeze(-1)).squeeze(-1)\n\n\n"
        "class FusedLinearFunction(torch.autograd.Function):\n    @staticmethod\n"
        "    def forward(ctx, hidden_states, vocab_weights, input_ids, temperature=1.0, chunk_size=512):\n"
        "        T = hidden_states.shape[0]\n        log_probs = hidden_states.new_zeros(T)\n"
        "        for chunk_start in range(0, T, chunk_size):\n            chunk_end = min(chunk_start + chunk_size, T)\n"
        "            log_probs[chunk_start:chunk_end] = _fused_linear_fwd(\n"
        "                hidden_states=hidden_states[chunk_start:chunk_end], vocab_weights=vocab_weights,\n"
        "                input_ids=input_ids[chunk_start:chunk_end], temperature=temperature)\n"
        "        ctx.save_for_backward(hidden_states, vocab_weights, input_ids)\n        return log_probs\n\n\n"
        "class FusedLinear(torch.nn.Module):\n    def forward(self, hidden_states, vocab_weights, input_ids, temperature=1.0):\n"
        "        return FusedLinearFunction.apply(hidden_states, vocab_weights, input_ids, temperature)\n"),
    "myrl/args.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass Args:\n    algo: str = 'PPO'\n    use_fused_lm_head: bool = {default}\n",
    "myrl/ppo.py": (
        "from myrl.utils.lm_head import FusedLinear\n\n\nclass PPOLearner:\n"
        "    def get_batch_logps(self, model, input_ids, att_mask):\n        if self.args.use_fused_lm_head:\n"
        "            hidden = model.model(input_ids, attention_mask=att_mask).last_hidden_state[:, :-1]\n"
        "            return FusedLinear()(hidden, model.lm_head.weight, input_ids[:, 1:])\n"
        "        logits = model(input_ids, attention_mask=att_mask).logits[:, :-1].float()\n"
        "        return logits.log_softmax(-1).gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)\n"),
}


def _fused_head_patch(installed: bool) -> dict[str, str]:
    """TRL 1.16's shape: a chunked log-prob autograd Function applied to the hidden states and the head weight inside the
    forward that ``add_fused_lm_head`` installs; the DPO trainer calls it (or not), and ``use_liger_kernel`` stays False."""
    init = "        add_fused_lm_head(self.model)\n" if installed else "        self.model = model\n"
    return {
        "mypo/kernels.py": (
            "import torch\n\n\nclass ChunkedLogProbFunction(torch.autograd.Function):\n    @staticmethod\n"
            "    def forward(ctx, hidden, weight, labels, chunk_size):\n        out = []\n"
            "        for h, y in zip(hidden.split(chunk_size), labels.split(chunk_size)):\n"
            "            out.append((h @ weight.t()).float().log_softmax(-1).gather(-1, y[:, None]).squeeze(-1))\n"
            "        ctx.save_for_backward(hidden, weight, labels)\n        return torch.cat(out)\n"),
        "mypo/utils.py": (
            "import types\n\nfrom .kernels import ChunkedLogProbFunction as _ChunkedLogProbFunction\n\n\n"
            "def add_fused_lm_head(model):\n    original_forward = model.forward\n\n"
            "    def _fused_forward(self, *args, fused_lm_head=False, labels=None, **kwargs):\n"
            "        if not fused_lm_head:\n            return original_forward(*args, labels=labels, **kwargs)\n"
            "        hidden_states = self.model(*args, **kwargs).last_hidden_state[:, :-1]\n"
            "        mask = labels[:, 1:] != -100\n        weight = self.get_output_embeddings().weight\n"
            "        return _ChunkedLogProbFunction.apply(hidden_states[mask], weight, labels[:, 1:][mask], 4096)\n\n"
            "    model.forward = types.MethodType(_fused_forward, model)\n"),
        "mypo/dpo_config.py": (
            "from dataclasses import dataclass\n\nfrom transformers import TrainingArguments\n\n\n@dataclass\n"
            "class DPOConfig(TrainingArguments):\n    beta: float = 0.1\n    use_liger_kernel: bool = False\n"),
        "mypo/dpo_trainer.py": (
            "from transformers import Trainer\n\nfrom .utils import add_fused_lm_head\n\n\nclass DPOTrainer(Trainer):\n"
            "    def __init__(self, model, args, train_dataset):\n        super().__init__(model=model, args=args, train_dataset=train_dataset)\n"
            + init),
    }


def _liger_grpo(value: str) -> dict[str, str]:
    """2U1/Qwen2-VL-Finetune's shape: a GRPO trainer copied from TRL builds Liger's fused loss only ``if
    self.use_liger_loss:``, read from its arguments; the entry script assigns that argument a constant."""
    return {
        "src/trainer/grpo_trainer.py": (
            "from liger_kernel.chunked_loss import LigerFusedLinearGRPOLoss\nfrom transformers import Trainer\n\n\n"
            "class QwenGRPOTrainer(Trainer):\n    def __init__(self, model, args, **kwargs):\n"
            "        super().__init__(model=model, args=args, **kwargs)\n        self.use_liger_loss = args.use_liger_loss\n"
            "        if self.use_liger_loss:\n            self.liger_grpo_loss = LigerFusedLinearGRPOLoss(beta=0.04)\n\n"
            "    def compute_loss(self, model, inputs):\n        if self.use_liger_loss:\n"
            "            return self.liger_grpo_loss(inputs)\n        return model(**inputs).loss\n"),
        "src/train/train_grpo.py": (
            "from trl import GRPOConfig\nfrom transformers import HfArgumentParser\nfrom src.trainer.grpo_trainer import QwenGRPOTrainer\n\n\n"
            "def train():\n    parser = HfArgumentParser((GRPOConfig,))\n    (training_args,) = parser.parse_args_into_dataclasses()\n"
            f"    training_args.use_liger_loss = {value}\n"
            "    trainer = QwenGRPOTrainer(model=model, args=training_args, reward_funcs=[accuracy])\n    trainer.train()\n"),
    }


#: SPIN's shape: a ``transformers.Trainer`` subclass computes a DPO-family loss from policy and reference log-ratios
_SELF_PLAY_TRAINER = {
    "spin/trainer.py": (
        "import torch.nn.functional as F\nfrom transformers import Trainer\n\n\nclass SPINTrainer(Trainer):\n"
        "    def spin_loss(self, policy_real_logps, policy_generated_logps, opponent_real_logps, opponent_generated_logps):\n"
        "        pi_logratios = policy_real_logps - policy_generated_logps\n"
        "        ref_logratios = opponent_real_logps - opponent_generated_logps\n"
        "        logits = pi_logratios - ref_logratios\n"
        "        losses = -F.logsigmoid(self.beta * logits)\n        return losses\n\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n"
        "        losses = self.spin_loss(*self.concatenated_forward(model, inputs))\n        return losses.mean()\n"),
}


@register
class G6FusedAlignmentLoss(Check):
    id = "G6"
    title = "Fused alignment / distillation losses"
    title_zh = "对齐训练 Loss 优化"
    bottlenecks = (Bottleneck.MEMORY,)
    priority = Priority.MEDIUM
    benefit = "up to ~80 % less memory for the preference/distillation loss by never materialising the full logits"
    what = (
        "Whether DPO/ORPO/KTO/SimPO/CPO/GRPO or distillation training computes its loss fused with the LM head, chunk by chunk: "
        "Liger `LigerFusedLinearDPOLoss` ... `LigerFusedLinearJSD`/`LigerKLDIVLoss`, TRL `use_liger_loss: true` or "
        "`use_liger_kernel: true` in a TRL preference/RL/distillation trainer, verl `use_fused_kernels: true`. Liger layer "
        "patching alone (LLaMA-Factory `enable_liger_kernel`) does not fuse the preference loss."
    )
    why = (
        "Preference and distillation losses need log-probabilities over a 128k-256k vocabulary for chosen, rejected (and "
        "reference or teacher) sequences; materialising those logits dominates memory. Liger's chunked fused-linear losses "
        "cut that memory by up to 80 % (LinkedIn, Liger-Kernel paper and README, e.g. ORPO/DPO on LLaMA-3-8B)."
    )
    fix = "Use a fused alignment loss: TRL `use_liger_kernel: true` (older TRL: `use_liger_loss: true`) in the DPO/KTO/GRPO/GKD config, or Liger `LigerFusedLinearDPOLoss` in a custom trainer."
    fix_zh = "使用融合的对齐损失：在 TRL 的 DPO/KTO/GRPO/GKD 配置中设置 `use_liger_kernel: true`（旧版 TRL 为 `use_liger_loss: true`），或在自定义训练器中使用 Liger 的 `LigerFusedLinearDPOLoss`。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://github.com/linkedin/Liger-Kernel", "https://arxiv.org/abs/2410.10989",
                  "https://huggingface.co/docs/trl/liger_kernel_integration")
    snippets = {
        "hf-yaml": "use_liger_kernel: true\nloss_type: sigmoid\n",
        "python": (
            "from liger_kernel.chunked_loss import LigerFusedLinearDPOLoss\n\n"
            "dpo_loss = LigerFusedLinearDPOLoss(beta=0.1, use_ref_model=True)\n"
            "loss, *aux = dpo_loss(lm_head.weight, hidden, labels, ref_input=ref_hidden, ref_weight=ref_lm_head.weight)\n"
        ),
    }
    examples = (
        Example(_liger_grpo("False"), N, "the entry script sets training_args.use_liger_loss = False before building the trainer"),
        Example(_liger_grpo("True"), U, "the same script setting it to True"),
        Example({"dpo.py": "from trl import DPOConfig, DPOTrainer\n"
                 "args = DPOConfig(output_dir='out', beta=0.1, use_liger_loss=True, bf16=True)\n"
                 "trainer = DPOTrainer(model=model, args=args, train_dataset=ds)\n"}, U, "trl use_liger_loss"),
        Example({"distill.py": "from liger_kernel.chunked_loss import LigerFusedLinearJSDLoss\nfrom trl import GKDTrainer\n"
                 "jsd = LigerFusedLinearJSDLoss(beta=0.5)\nloss = jsd(student_hidden, student_head.weight, teacher_hidden, "
                 "teacher_head.weight, labels)\n"}, U, "liger jsd distillation"),
        Example({"recipes/dpo.yaml": "model_name_or_path: Qwen/Qwen2.5-7B\nuse_liger_kernel: true\nbeta: 0.05\n",
                 "run_dpo.py": "from trl import DPOConfig, DPOTrainer, TrlParser\nparser = TrlParser((DPOConfig,))\n"
                 "trainer = DPOTrainer(model, args=training_args)\n"}, U, "trl use_liger_kernel in a DPO run"),
        Example({"examples/qwen_dpo.yaml": "model_name_or_path: Qwen/Qwen2.5-7B\nstage: dpo\nfinetuning_type: full\n"
                 "enable_liger_kernel: true\ntemplate: qwen\n"}, N, "liger layer patching only (llamafactory dpo)"),
        Example({"dpo.py": "from trl import DPOConfig, DPOTrainer\nargs = DPOConfig(output_dir='out', beta=0.1)\n"
                 "trainer = DPOTrainer(model=model, args=args)\n"}, N, "plain dpo"),
        Example({"dpo.py": "from trl import DPOConfig, DPOTrainer\nargs = DPOConfig(output_dir='out', use_liger_loss=False)\n"
                 "trainer = DPOTrainer(model=model, args=args)\n"}, N, "explicitly off"),
        Example({"train.py": "from transformers import Trainer\ntrainer = Trainer(model=model)\n"}, Status.NA, "no alignment"),
        Example(_SELF_PLAY_TRAINER, N, "a DPO-family loss written in a Trainer subclass (SPIN): logsigmoid of a beta-scaled margin"),
        Example({"src/clip/loss.py": _SELF_PLAY_TRAINER["spin/trainer.py"].replace("self.beta * logits", "labels * logits")}, Status.NA,
                "a sigmoid contrastive loss (SigLIP's logsigmoid(labels * logits)) is no preference training"),
        Example({  # realhf 0.3.0: the project's own PPO experiment config (a quickstart command) and a PPO loss over full logits
            "pkg/experiments/ppo_exp.py": (
                "import dataclasses\n\nfrom pkg.api.entrypoint import register_quickstart_exp\n\n\n@dataclasses.dataclass\n"
                "class PPOConfig:\n    ppo_n_minibatches: int = 4\n    kl_ctl: float = 0.1\n    eps_clip: float = 0.2\n\n\n"
                "register_quickstart_exp('ppo', PPOConfig)\n"),
            "pkg/interface/ppo_interface.py": (
                "from pkg.utils.functional import gather_packed_shifted_log_probs\n\n\n"
                "def actor_loss(logits, input_, old_logp, advantages, eps_clip):\n"
                "    logprobs = gather_packed_shifted_log_probs(logits, input_['cu_seqlens'], input_['input_ids'])\n"
                "    ratio = (logprobs - old_logp).exp()\n    return -(ratio.clamp(1 - eps_clip, 1 + eps_clip) * advantages).mean()\n"),
            "pkg/backend/train.py": "def train_batch(model, batch, loss_fn, optim):\n    loss_fn(model(batch).logits, batch).backward()\n    optim.step()\n",
        }, N, "the project's own PPO experiment config: alignment training over full logits"),
        Example({k: v.replace("{default}", "True") for k, v in _CHUNKED_HEAD.items()}, U,
                "RL log-probs from the project's own chunked LM-head function (algo: PPO), switched on"),
        Example({k: v.replace("{default}", "False") for k, v in _CHUNKED_HEAD.items()}, N,
                "the same chunked LM head behind a switch that is off: full logits"),
        Example(_fused_head_patch(True), U, "the DPO trainer patches its model with a chunked log-prob head (Liger off)"),
        Example(_fused_head_patch(False), N, "the chunked log-prob head is defined but no trainer installs it; Liger off"),
    )

    def not_applicable(self, ctx: Context) -> str | None:
        if not ctx.project.alignment:
            return "no alignment (DPO/ORPO/KTO/PPO/GRPO...) or distillation training"
        return None

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        calls = f.calls(*_LIGER_LOSSES)
        live = _live(f, calls)
        dead = {(c.path, c.line) for c in calls if c not in live}
        used: list[Any] = [*live, *(r for r in f.refs(*_LIGER_LOSSES) if (r.path, r.line) not in dead)]
        off: list[Any] = []
        trl_align = bool(f.calls(*_TRL_ALIGN) or f.imports(*(f"trl.{t}" for t in _TRL_ALIGN if "." not in t)))
        for s in f.effective("use_liger_loss"):
            (used if truthy(s.value) else off).append(s)
        for s in f.effective("use_liger_kernel", "use_liger"):
            t = truthy(s.value)
            if t and trl_align and s.name == "use_liger_kernel" and _alignment_run(f, s):
                used.append(s)
            elif t is False:
                off.append(s)
        own_off: list[Any] = []
        for s in f.effective("use_fused_kernels", "use_fused_loss"):
            (used if truthy(s.value) else own_off).append(s)
        off += own_off
        # a project's own chunked LM-head log-prob, unless its own fused-loss switch is off (verl ``use_fused_kernels: false``
        # leaves its ``FusedLinearForPPO`` patches uninstalled); Liger switched off says nothing about it (TRL 1.16 keeps
        # ``use_liger_kernel=False`` and patches every preference/RL model with its own chunked head, ``add_fused_lm_head``)
        chunked, users = _chunked_head_logprobs(f) if not used and not own_off else ([], [])
        live_users = _live(f, users)
        if live_users:
            used += [*live_users, *chunked[:1]]
        elif users:
            off += users
        if used:
            return Outcome(U, evs(used), "a fused (chunked) alignment/distillation loss is used", {"fused_alignment_loss": True})
        patched: list[Any] = [s for s in f.effective("enable_liger_kernel", "use_liger_kernel", "use_liger",
                                                     "liger_fused_linear_cross_entropy") if truthy(s.value)]
        patched += _live(f, f.calls("liger_kernel.transformers.*"))
        if patched:
            return Outcome(N, evs(patched), "Liger kernels patch the model's layers, but the alignment loss is not fused",
                           {"fused_alignment_loss": False})
        if off:
            return Outcome(N, evs(off), "the alignment loss materialises the full logits (the fused loss is switched off)",
                           {"fused_alignment_loss": False})
        # where the alignment or distillation run is: its trainer, or the setting that selects it (``stage: dpo``)
        sites: list[Any] = list(f.calls(*_ALIGN_TRAINERS))
        sites += [s for s in f.settings("stage", "rl", "rlhf_type", "training_type", "train_type", "task")
                  if isinstance(s.value, str) and _ALIGN_WORDS.match(s.value)]
        sites += f.settings("dpo_beta", "beta_dpo", "teacher_model", "teacher_model_name_or_path", "kd_temperature", "adv_estimator")
        # a launch distilling from a teacher (Megatron-DeepSpeed ``--kd ... --load-teacher``)
        sites += [x for x in f.settings("kd", "load_teacher") if x.source == "launcher" and (x.name == "load_teacher" or truthy(x.value))]
        # the project's own trainer module for the algorithm (NeMo-Aligner ``algorithms/dpo.py``): its optimizer step
        sites += alignment_steps(f)
        # a trainer, then a recipe's setting, then anything else (a data script's ``"task": "dpo"``)
        # (a reward model's trainer last: its model scores with a scalar head, no full-vocabulary logits; BELLE's DPO run,
        # not its RewardTrainer, is the one whose loss a fused kernel would change)
        sites.sort(key=lambda x: (isinstance(x, Call) and x.short == "RewardTrainer",
                                  0 if isinstance(x, Call) else 1 if x.path.endswith((".yml", ".yaml", ".json", ".toml")) else 2))
        # then a DPO-family loss the project writes itself (SPIN's ``-F.logsigmoid(self.beta * logits)`` in its Trainer
        # subclass): the run's trainer or setting, when there is one, comes first
        losses = preference_losses(f)
        sites += losses
        if sites and all(isinstance(x, Call) and x.short == "RewardTrainer" for x in sites):
            # reward-model training only (RLHF-Reward-Modeling's Bradley-Terry recipes: ``AutoModelForSequenceClassification(...,
            # num_labels=1)`` under its own ``RewardTrainer``): a scalar score head, no vocabulary logits a fused loss would spare
            x = sites[0]
            return Outcome(Status.NA, evs(sites[:5]), f"reward-model training only ({x.short} at {x.path}:{x.line}): its loss is "
                           "over a scalar score head, with no vocabulary-sized logits for a fused loss to spare", {})
        if sites and sites[0] in losses:
            x = sites[0]
            return Outcome(N, evs(sites[:5]), f"the preference loss at {x.path}:{x.line} (`{x.text}`) is computed from log-probabilities "
                           "of the full logits: no fused or chunked loss was seen", {"fused_alignment_loss": False})
        if sites:
            x = sites[0]
            return Outcome(N, evs(sites[:5]), f"the alignment/distillation run selected at {x.path}:{x.line} computes its loss "
                           "over the full logits: no fused or chunked loss was seen", {"fused_alignment_loss": False})
        return Outcome(N, [], "the alignment or distillation loss materialises the full logits: no fused or chunked loss was seen",
                       {"fused_alignment_loss": False})


__all__ = ["freeze_sites", "global_batch"]
