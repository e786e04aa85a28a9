"""Python config registries: training recipes written as functions that build a config object.

torchtitan 0.3.0 replaced its TOML files with ``models/<model>/config_registry.py``: one function per run
(``llama3_8b()``, ``llama3_70b()``, ``qwen35_debugmodel_moe()``) returning ``Trainer.Config(...)`` over dataclass
defaults. Each such function is a recipe, like one YAML file of a recipe folder: a setting made inside it holds for
that run only, and a recipe named for debugging or tests is not the project's training setting.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..facts import Facts, Setting, truthy
from ..lazyre import lazy_compile

#: a file that holds recipes as functions (``config_registry.py``, ``recipes.py``, ``presets.py``)
_REGISTRY_FILE = lazy_compile(r"(^|/)\w*(config|recipe|registry|preset)\w*\.py$", re.I)
_HELPERS = lazy_compile(r"(?i)(util|helper)")
#: a recipe for debugging or tests (``qwen35_debugmodel_moe``, ``llama3_debugmodel``, ``smoke_test``)
_DEBUG = lazy_compile(r"(?i)(^|_)(debug|test|smoke|toy|dummy|mock)")
#: registries of fewer recipes are helper modules, not a recipe collection
_MIN_RECIPES = 3


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def recipes(f: Facts) -> dict[str, frozenset[str]]:
    """Registry file -> its recipe functions: public functions that construct a ``*Config``/``*.Config`` object,
    in files named for configs/recipes that hold at least three of them. Memoised per scan."""
    memo = f._memo
    key = ("registry-recipes",)
    if key not in memo:
        out: dict[str, frozenset[str]] = {}
        for path, ff in f.files.items():
            if not _REGISTRY_FILE.search(path) or _HELPERS.search(path.rsplit("/", 1)[-1]):
                continue
            found = {c.func for c in ff.calls if c.func and not c.func.startswith("_") and _short(c.name).endswith("Config")}
            if len(found) < _MIN_RECIPES:
                continue
            # a recipe derived from another (``config = rl_grpo_qwen3_5_9b_varlen()`` then ``dataclasses.replace(...)``
            # in torchtitan's ``rl_grpo_qwen3_5_9b_varlen_batch_invariant``) is a recipe too, though it builds no Config
            grew = True
            while grew:
                derived = {c.func for c in ff.calls if c.func and not c.func.startswith("_") and c.func not in found
                           and _short(c.name) in found and "." not in c.name}
                found |= derived
                grew = bool(derived)
            out[path] = frozenset(found)
        memo[key] = out  # type: ignore[assignment]
    return memo[key]  # type: ignore[return-value]


def recipe_of(f: Facts, x: Any) -> tuple[str, str] | None:
    """(file, recipe function) a call or a call-keyword setting sits in; None outside a registry recipe."""
    regs = recipes(f)
    path = getattr(x, "path", "")
    if path not in regs:
        return None
    func = getattr(x, "func", None)
    if func is None and isinstance(x, Setting) and x.source == "call":
        short = x.key.split("(", 1)[0]
        for c in f.files[path].calls:
            if _short(c.name) == short and (c.line == x.line or x.line in c.kw_lines.values()):
                func = c.func
                break
    return (path, func) if func in regs[path] else None


def debug_recipe(f: Facts, x: Any) -> bool:
    """Whether ``x`` is set inside a registry recipe named for debugging or tests."""
    r = recipe_of(f, x)
    return r is not None and bool(_DEBUG.search(r[1]))


def total_recipes(f: Facts) -> int:
    return sum(len(v) for v in recipes(f).values())


def _bases(f: Facts, path: str, func: str) -> list[str]:
    """The recipes a recipe starts from (``config = llama3_8b()`` inside ``llama3_8b_float8()``)."""
    names = recipes(f)[path]
    return [_short(c.name) for c in f.files[path].calls if c.func == func and _short(c.name) in names and _short(c.name) != func]


def recipes_on(f: Facts, settings: list[Setting]) -> tuple[list[tuple[str, str]], list[Setting]]:
    """The registry recipes that turn a switch on through ``settings`` (call keywords such as ``CompileConfig(enable=True)``),
    counting a recipe that starts from one that turns it on and does not turn it off itself, and the settings that do."""
    state: dict[tuple[str, str], bool] = {}
    cited: list[Setting] = []
    for s in settings:
        r = recipe_of(f, s)
        t = truthy(s.value)
        if r is None or t is None:
            continue
        state[r] = t
        if t:
            cited.append(s)
    on = _inherit(f, {r for r, t in state.items() if t}, set(state))  # through base recipes, to a fixed point
    return sorted(on, key=_order), sorted(cited, key=lambda x: (_order((x.path, "")), x.line))


def _inherit(f: Facts, on: set[tuple[str, str]], decided: set[tuple[str, str]]) -> set[tuple[str, str]]:
    out = set(on)
    changed = True
    while changed:
        changed = False
        for path, funcs in recipes(f).items():
            for fn in funcs:
                r = (path, fn)
                if r not in out and r not in decided and any((path, b) in out for b in _bases(f, path, fn)):
                    out.add(r)
                    changed = True
    return out


def recipes_calling(f: Facts, pattern: re.Pattern[str]) -> tuple[list[tuple[str, str]], list[Any]]:
    """The registry recipes that construct something whose name matches ``pattern`` (``Float8LinearConverter.Config`` in
    ``llama3_405b``), counting recipes that start from one of them, and those calls."""
    on: set[tuple[str, str]] = set()
    cited: list[Any] = []
    for path, funcs in recipes(f).items():
        for c in f.files[path].calls:
            if c.func in funcs and pattern.search(c.name):
                on.add((path, c.func))
                cited.append(c)
    return sorted(_inherit(f, on, set()), key=_order), sorted(cited, key=lambda x: (_order((x.path, "")), x.line))


def _order(r: tuple[str, str]) -> tuple[bool, str, str]:
    """The project's own model recipes before experiments."""
    return ("experiment" in r[0], r[0], r[1])


def split_text(what: str, on: list[tuple[str, str]], total: int) -> str:
    """``compile.enable on in 39 of 97 recipes (llama3_405b, ...)``."""
    names = ", ".join(fn for _, fn in on[:4]) + (", ..." if len(on) > 4 else "")
    return f"{what} in {len(on)} of {total} config-registry recipes" + (f" ({names})" if on else "")


@dataclass(frozen=True, slots=True)
class RecipeVote:
    """How the registry recipes run one tuning value, voted by the verdict band of each recipe's value."""

    kept: list[Any]  # the settings (call keywords, or the config-class default) of the recipes in the winning band
    counts: dict[str, int]  # value -> recipes that run with it
    unset: int  # recipes that leave it unset and run with the default
    band: str
    n: int  # recipes in the winning band
    total: int  # recipes counted (debug/test recipes are not)
    default: Any | None
    judged: str  # "majority" or "default"
    noun: str = "config-registry recipes"  # what the recipes are ("Python config files")
    aside: str = " (debug/test recipes aside)"

    def text(self, name: str) -> str:
        """``log_freq: 10 in 85 recipes, 1 in 2 recipes of the config registry (judged by the majority: ...)``."""
        counts = ", ".join(f"{v} in {n}" for v, n in sorted(self.counts.items(), key=lambda kv: -kv[1]))
        how = (f"judged by the majority: {self.band} in {self.n} of {self.total}" if self.judged == "majority"
               else f"no majority: judged by the default at {self.default.path}:{self.default.line}")
        unset = (f"; {self.unset} recipe{'s leave' if self.unset != 1 else ' leaves'} it unset and run{'' if self.unset != 1 else 's'} with "
                 f"the default {_value(self.default)} at {self.default.path}:{self.default.line}") if self.unset and self.default is not None else ""
        return f"{name} in the {self.total} {self.noun}{self.aside}: {counts} ({how}{unset})"


def _value(x: Any) -> Any:
    return x.default if hasattr(x, "default") else x.value


def recipe_vote(f: Facts, sets: list[tuple[Any, float]], default: tuple[Any, float] | None,
                band: Callable[[float], str]) -> RecipeVote | None:
    """Registry recipes that disagree on a tuning value (torchtitan ``MetricsProcessor.Config(log_freq=1)`` in two recipes
    of 97), voted like YAML recipes: each recipe that is not for debugging or tests runs with the value it sets, else the
    value of the recipe it starts from, else the config-class default (``log_freq: int = 10``) when that default is known.
    ``sets``: (call keyword setting or call, value). None when no value is set inside a registry recipe, or fewer than three
    recipes are counted."""
    own: dict[tuple[str, str], tuple[int, Any, float]] = {}
    for x, v in sets:
        r = recipe_of(f, x)
        if r is None or _DEBUG.search(r[1]):
            continue
        line = getattr(x, "line", 0)
        if r not in own or own[r][0] < line:
            own[r] = (line, x, v)
    if not own:
        return None
    value: dict[tuple[str, str], tuple[Any, float] | None] = {}

    def resolve(r: tuple[str, str], seen: frozenset[tuple[str, str]]) -> tuple[Any, float] | None:
        if r in value:
            return value[r]
        if r in own:
            out: tuple[Any, float] | None = own[r][1:]
        else:
            out = None
            for b in _bases(f, *r):
                if (r[0], b) not in seen:
                    out = resolve((r[0], b), seen | {r})
                    if out is not None:
                        break
            if out is None:
                out = default
        value[r] = out
        return out

    for path, funcs in recipes(f).items():
        for fn in sorted(funcs):  # a set's order changes with the hash seed, and the cited recipes with it
            if not _DEBUG.search(fn):
                resolve((path, fn), frozenset())
    counted = {r: xv for r, xv in value.items() if xv is not None and not _DEBUG.search(r[1])}
    if len(counted) < 3:
        return None
    counts, by_band = _by_band(counted.values(), band)
    unset = sum(1 for xv in counted.values() if default is not None and xv[0] is default[0])
    top, items = max(by_band.items(), key=lambda kv: len(kv[1]))
    judged = "majority"
    if len(items) * 2 <= len(counted):
        if default is None:
            return None
        top, items, judged = band(default[1]), by_band.get(band(default[1]), [default]), "default"
    kept: list[Any] = []
    for x, _ in items:
        if all(x is not k for k in kept):
            kept.append(x)
    return RecipeVote(kept, counts, unset, top, len(items), len(counted), default[0] if default else None, judged)


def _by_band(votes: Iterable[tuple[Any, float]], band: Callable[[float], str]) -> tuple[dict[str, int], dict[str, list[tuple[Any, float]]]]:
    """How many recipes set each value (as shown), and the (setting, value) votes grouped by verdict band."""
    counts: dict[str, int] = {}
    by_band: dict[str, list[tuple[Any, float]]] = {}
    for x, v in votes:
        shown = str(int(v)) if float(v).is_integer() else str(v)
        counts[shown] = counts.get(shown, 0) + 1
        by_band.setdefault(band(v), []).append((x, v))
    return counts, by_band


def config_file_vote(f: Facts, sets: dict[str, tuple[Any, float]], band: Callable[[float], str]) -> RecipeVote | None:
    """Python config files (:meth:`Facts.config_modules`, mmengine ``Config.fromfile`` recipes) that disagree on a tuning
    value, each file voting with the one value it runs (``sets``: file -> (setting, value)), by the verdict band of the
    value: xtuner's ``LoggerHook`` interval 10 in 550 files and 1 in 34 is a majority of "10 or more". Files that leave it
    unset are not counted (the loader's default is not in the repository). None with fewer than three files, or when no
    band has a majority (then every value is judged)."""
    configs = f.config_modules()
    return _file_vote({p: xv for p, xv in sets.items() if p in configs}, band, 3, "Python config files")


def _file_vote(own: dict[str, tuple[Any, float]], band: Callable[[float], str], least: int, noun: str,
               one_value: bool = True) -> RecipeVote | None:
    """Files that each run one value of a setting, voted by the verdict band of the value: None with fewer than ``least``
    files, when no band has a majority, or (``one_value`` False) when every file sets the same value."""
    if len(own) < least:
        return None
    counts, by_band = _by_band(own.values(), band)
    top, items = max(by_band.items(), key=lambda kv: len(kv[1]))
    if len(items) * 2 <= len(own) or (not one_value and len(counts) == 1):
        return None
    return RecipeVote([x for x, _ in items], counts, 0, top, len(items), len(own), None, "majority", noun, "")


def script_vote(f: Facts, sets: dict[str, tuple[Any, float]], band: Callable[[float], str]) -> RecipeVote | None:
    """Training scripts that each build their run in Python and disagree on a tuning value (OLMo-core: ``TrainerConfig(
    metrics_collect_interval=10)`` in 29 scripts of ``src/scripts/train``, 50 in 11, 5 in the 4 examples), each file voting
    with the one value it sets (``sets``: file -> (call keyword setting, value)), by the verdict band of the value. None with
    fewer than five files or when no band has a majority (then every value is judged)."""
    # (every script setting the same value leaves nothing to vote on)
    return _file_vote({p: xv for p, xv in sets.items() if not _DEBUG.search(p)}, band, 5, "training scripts that set it",
                      one_value=False)


def component_registry(entry: str) -> str:
    """The text of a config-driven component registry (modalities 0.5.0 ``registry/components.py``) with one more model
    component, ``entry`` (its ``ComponentEntity(...)`` lines): the shared fixture of the checks' registry examples."""
    return ("from pkg.models.model_factory import ModelFactory\n\n"
            "COMPONENTS = [\n"
            "    ComponentEntity(\"model\", \"gpt2\", GPT2ModelFactory.get_gpt2_model, GPT2LLMConfig),\n"
            "    ComponentEntity(\"model\", \"fsdp2_wrapped\", ModelFactory.get_fsdp2_wrapped_model, FSDP2WrappedModelConfig),\n"
            + entry +
            "    ComponentEntity(\"optimizer\", \"adam_w\", OptimizerFactory.get_adam_w, AdamWOptimizerConfig),\n"
            "]\n")


def copied_trainer(body: str) -> dict[str, str]:
    """A library that keeps a renamed copy of ``transformers.Trainer`` for one alternative pipeline (LMFlow 0.0.3's
    ``RaftTrainer``: the whole HF Trainer module with ``class RaftTrainer:``), beside a fine-tuning pipeline on the real
    ``transformers.Trainer``; ``body``: more lines of the copy's ``_wrap_model`` (the shared fixture of the checks' examples
    about such copies, see :func:`checks.roles.framework_copy`)."""
    plumbing = "".join(f"    def {m}(self, *args, **kwargs):\n        return self.callback_handler.call_event('{m}', args)\n\n"
                       for m in ("_get_train_sampler", "_get_eval_sampler", "_remove_unused_columns", "_set_signature_columns_if_needed",
                                 "create_optimizer_and_scheduler", "get_optimizer_cls_and_kwargs", "_load_from_checkpoint",
                                 "_load_best_model", "_load_rng_state", "_save_checkpoint", "_load_optimizer_and_scheduler",
                                 "_maybe_log_save_evaluate", "_rotate_checkpoints", "_sorted_checkpoints", "evaluation_loop",
                                 "prediction_step", "floating_point_ops", "store_flos"))
    return {
        "mylib/pipeline/utils/raft_trainer.py": (
            "import torch\nfrom torch import nn\nfrom transformers.training_args import TrainingArguments\n\n\n"
            "class RaftTrainer:\n    def __init__(self, model=None, args=None):\n        if args is None:\n"
            "            args = TrainingArguments(output_dir='tmp_trainer')\n        self.args = args\n        self.model = model\n\n"
            "    def _wrap_model(self, model, training=True):\n" + body + "        return model\n\n"
            "    def _inner_training_loop(self, batch_size=None, args=None):\n        model = self._wrap_model(self.model)\n"
            "        for step, inputs in enumerate(self.get_train_dataloader()):\n            loss = model(**inputs).loss\n"
            "            loss.backward()\n\n" + plumbing),
        "mylib/pipeline/raft_aligner.py": (
            "from mylib.pipeline.utils.raft_trainer import RaftTrainer\n\n\nclass RaftAligner:\n"
            "    def align(self, model, args):\n        return RaftTrainer(model=model, args=args)._inner_training_loop()\n"),
        "mylib/pipeline/finetuner.py": (
            "from transformers import Trainer, default_data_collator\n\n\nclass Finetuner:\n"
            "    def tune(self, model, dataset, args):\n"
            "        trainer = Trainer(model=model, args=args, train_dataset=dataset, data_collator=default_data_collator)\n"
            "        return trainer.train()\n"),
    }
