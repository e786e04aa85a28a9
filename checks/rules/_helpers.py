"""Small queries several checks share. Keep check-specific logic in the check."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, is_dataclass, replace
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from ..base import Context
from ..facts import AttrAssign, Call, Decorator, Expr, Facts, Ref, Setting, as_number, truthy
from ..facts.store import register_arm_judge
from ..facts.types import RETURNED_DICT, ClassSpan
from ..lazyre import lazy_compile
from ..model import Evidence

#: HF ``TrainingArguments``-like classes (transformers, TRL, and the arg dataclasses built on them)
HF_ARGS = (
    "TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "ORPOConfig", "KTOConfig", "CPOConfig",
    "GRPOConfig", "PPOConfig", "RewardConfig", "GKDConfig", "RLOOConfig", "OnlineDPOConfig",
)
HF_TRAINERS = (
    "transformers.Trainer", "transformers.trainer.Trainer", "Seq2SeqTrainer", "SFTTrainer", "DPOTrainer", "ORPOTrainer", "KTOTrainer", "CPOTrainer",
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


#: modules whose import makes a bare trainer/arguments name an HF one (the name itself is imported under another binding)
_HF_MODULES = ("transformers", "trl", "unsloth", "peft", "llamafactory", "axolotl", "swift", "openrlhf", "lmflow", "optimum")


def hf_framework_call(facts: Facts, c: Any) -> bool:
    """An HF trainer/arguments call, not a class of the same name the project defines itself: verl's own ``class
    SFTTrainer:`` called as ``SFTTrainer(config=config)`` in a file that imports neither transformers nor TRL, or
    self-rewarding-lm-pytorch's ``SFTTrainer`` and ``SFTConfig`` dataclass. A name
    imported from TRL resolves to ``trl.SFTTrainer``; a bare name counts only when its file star-imports, or imports an
    HF framework (the name reaches it some other way). A relative import's name (EasyR1's ``from .config import
    PPOConfig``, resolved as ``.config.PPOConfig``) is the project's own class, judged as a bare name."""
    if "." in c.name and not c.name.startswith("."):
        return not _own_module(facts, c.name)
    ff = facts.files.get(c.path)
    own = next((k for k in ff.classes if k.name == c.name), None) if ff is not None else None
    if own is not None:
        # a class of that name the same file defines (align-anything ``class DPOTrainer(DPOtextTrainer):``, its own
        # DeepSpeed trainer): an HF trainer only when a base is one (``transformers.Trainer``, or a bare HF name)
        return any(b.split(".", 1)[0] in ("transformers", "trl") or ("." not in b and b in (*HF_TRAINERS, *HF_ARGS))
                   for b in own.bases)
    return imports_hf(facts, c.path)


def _hf_based(facts: Facts, name: str, path: str, depth: int = 0) -> bool | None:
    """Whether class ``name``, as the file ``path`` defines it, is an HF/TRL arguments class or derives from one. None: the
    file does not define it (imported: not known here; only the file's own classes are read, not the scan's)."""
    ff = facts.files.get(path)
    ks = [k for k in ff.classes if k.name == name] if ff is not None else []
    if not ks:
        return None
    for k in ks:
        for b in k.bases:
            if b.split(".", 1)[0] in ("transformers", "trl"):
                return True
            last = b.rsplit(".", 1)[-1]
            if last in ("object", "ABC") or b.startswith(("dataclasses.", "typing.", "abc.", "enum.")):
                continue
            if depth < 3 and last != name and _hf_based(facts, last, path, depth + 1) is not False:
                return True  # (a base defined elsewhere may be HF's: kept as one)
    return False


def _own_argument_classes(facts: Facts, c: Any) -> bool:
    """An ``HfArgumentParser`` that parses only the project's own dataclasses (SEED-X's ``HfArgumentParser((ConfigPathArguments,
    TrainingArguments))``, where ``TrainingArguments`` is a plain dataclass of the same file, no HF base): no HF Trainer
    takes those arguments, so none of its defaults (workers, pinned memory, logging steps) applies."""
    names = [n.rsplit(".", 1)[-1] for a in c.args for n in re.findall(r"[A-Za-z_][\w.]*", getattr(a, "text", "") or "")]
    verdicts = [_hf_based(facts, n, c.path) for n in names]
    return bool(verdicts) and all(v is False for v in verdicts)


def _own_module(facts: Facts, dotted: str) -> bool:
    """``openrlhf.trainer.sft_trainer.SFTTrainer`` scanned inside OpenRLHF itself: the module is a file of the tree, so the
    class is the project's own (its DeepSpeed loop), not an HF trainer. A copy of transformers or TRL stays theirs."""
    mod = dotted.rsplit(".", 1)[0]
    if mod.split(".", 1)[0] in ("transformers", "trl") or "." not in mod:
        return False
    rel = mod.replace(".", "/")
    return any(p == f"{rel}.py" or p.endswith(f"/{rel}.py") for p in facts.paths_named(rel.rsplit("/", 1)[-1] + ".py")) or any(
        p == f"{rel}/__init__.py" or p.endswith(f"/{rel}/__init__.py") for p in facts.paths_named("__init__.py"))


def imports_hf(facts: Facts, path: str) -> bool:
    """Whether a file can reach a Hugging Face framework's names: it imports one, or star-imports (an unknown file: yes)."""
    ff = facts.files.get(path)
    if ff is None:
        return True
    return any(i.name == "*" or i.module.split(".", 1)[0] in _HF_MODULES for i in ff.imports)


def jax_only_file(facts: Facts, path: str) -> bool:
    """A file that imports JAX (or Flax, Equinox, optax) and not PyTorch: what it runs, XLA compiles (EasyLM's
    ``llama_serve.py`` calls a Flax model's ``generate`` inside ``pjit``), so PyTorch's eager-mode findings do not fit it."""
    ff = facts.files.get(path)
    if ff is None:
        return False
    roots = {i.module.split(".", 1)[0] for i in ff.imports}
    return bool(roots & {"jax", "flax", "equinox", "optax", "haliax"}) and "torch" not in roots


#: ``model.parameters()`` / ``model.named_parameters()``: the module a freeze loop walks is what precedes it
_PARAMS_CALL = lazy_compile(r"\.(parameters|named_parameters)\(\)$")


def module_of(expr: str) -> str:
    """The module a freeze or unfreeze loop walks (``lm.model`` of ``lm.model.parameters()``)."""
    return _PARAMS_CALL.sub("", expr.strip())


#: the parts of a checkpoint a ``from_pretrained`` may load besides the model itself
_NOT_MODEL_LOAD = ("Tokenizer", "Processor", "Config", "tokenizer", "processor")


def model_load(c: Call) -> bool:
    """A ``from_pretrained`` that loads a model, not its tokenizer, processor or config."""
    return not any(w in c.name for w in _NOT_MODEL_LOAD)


def uses_hf_trainer(facts: Facts) -> list[Any]:
    """Sites that configure an HF-style trainer (args class calls, trainer calls, HfArgumentParser)."""
    sites: list[Any] = [c for c in (*facts.calls(*HF_ARGS), *facts.calls(*HF_TRAINERS)) if hf_framework_call(facts, c)]
    for c in facts.calls("HfArgumentParser"):
        if any(isinstance(a, tuple) or getattr(a, "text", "") for a in c.args) and not _own_argument_classes(facts, c):
            sites.append(c)
    if not sites:
        # a library that ships a subclass of an HF/TRL trainer for its users' scripts to build (``class
        # UnslothTrainer(SFTTrainer):``): the HF Trainer's loop, loader and defaults are what training runs on
        sites += [r for r in facts.refs(*HF_TRAINERS) if r.name.split(".", 1)[0] in ("transformers", "trl")
                  and re.match(r"class\s+\w+\s*\(", r.text.strip()) and not _TEST_FILE.search(r.path)]
    return sites


def hf_sites_training_first(facts: Facts) -> list[Any]:
    """:func:`uses_hf_trainer`'s sites with those of a script that runs a trainer's ``train()`` (``trainer.train()``) first:
    of the ``HfArgumentParser`` calls of a package's drivers (encode, search, train), the training script's is the one
    whose defaults the run takes; the others parse the same arguments to encode or retrieve."""
    sites = uses_hf_trainer(facts)
    runs = trainer_train_paths(facts)
    # (and of two scripts that both train, the one a launch or a documented command runs: Magicoder's README runs
    # ``accelerate launch -m magicoder.train``, not the paper's ablation script ``experiments/train_comment_code_pairs.py``)
    launched = launched_paths(facts, {x.path for x in sites})
    return sorted(sites, key=lambda x: (x.path not in runs, x.path not in launched))


def launched_paths(facts: Facts, paths: set[str]) -> set[str]:
    """Those of ``paths`` that a launch or a documented command runs: its script (``train.py``, ``src/train.py``) or its
    module (``-m magicoder.train``: ``src/magicoder/train.py``), matched at the end of the path; or a module such a script
    imports (ToolBench's ``train_mem.py`` runs ``train()`` of ``toolbench/train/train.py`` after patching attention)."""
    key = ("launched-paths",)
    if key not in facts._memo:
        tails: set[str] = set()
        for x in facts.launches():
            s = (x.script or "").strip().strip("'\"")
            while s.startswith("./"):
                s = s[2:]
            if s.endswith(".py"):
                tails.add(s)
            elif re.fullmatch(r"[A-Za-z_][\w.]*", s):
                tails |= {s.replace(".", "/") + ".py", s.replace(".", "/") + "/__main__.py"}
        direct = {p for p in facts.files if p.endswith(".py") and any(p == t or p.endswith("/" + t) for t in tails)}
        imported = {i.module.replace(".", "/") + ".py" for p in direct for i in facts.files[p].imports if i.module and not i.module.startswith(".")}
        facts._memo[key] = (frozenset(direct), frozenset(imported))  # type: ignore[assignment]
    direct, imported = facts._memo[key]  # type: ignore[misc]
    return {p for p in paths if p in direct or any(p == t or p.endswith("/" + t) for t in imported)}


def trainer_train_paths(facts: Facts) -> set[str]:
    """The files that call a trainer's ``train()`` (``trainer.train()``, ``self.trainer.train(...)``)."""
    return {c.path for c in facts.calls("train") if "." in c.name and "trainer" in c.name.rsplit(".", 1)[0].lower()}


#: the HF Trainer methods it runs on every micro-batch: a subclass overriding them runs its own code there
HF_STEP_HOOKS = frozenset({"compute_loss", "training_step"})
_CLASS_STMT = lazy_compile(r"class\s+(\w+)\s*\(")


def hf_trainer_subclasses(f: Facts) -> set[str]:
    """Names of the project's classes derived from an HF/TRL trainer: a ``class X(...)`` statement whose bases name
    ``transformers.Trainer``/``trl.SFTTrainer``... (the facts keep a class statement through the reference to its imported
    base), and the project's classes derived from those (``class B(A)`` with ``A`` imported from the project)."""
    memo = f._memo
    key = ("i-hf-subclasses",)
    if key not in memo:
        names: set[str] = set()
        stmts: list[tuple[str, str]] = []  # (class, a base's short name)
        for r in f.refs(*HF_TRAINERS):
            m = _CLASS_STMT.match(r.text.strip())
            if m and r.name.split(".", 1)[0] in ("transformers", "trl") and not _TEST_FILE.search(r.path):
                names.add(m.group(1))
        if names:
            for path in f.files:
                for r in f.files[path].refs:
                    m = _CLASS_STMT.match(r.text.strip())
                    if m and not _TEST_FILE.search(path):
                        stmts.append((m.group(1), r.name.rsplit(".", 1)[-1]))
            grew = True
            while grew:
                grew = False
                for cls, base in stmts:
                    if base in names and cls not in names:
                        names.add(cls)
                        grew = True
        memo[key] = names  # type: ignore[assignment]
    return memo[key]  # type: ignore[return-value]


def class_span_at(f: Facts, path: str, line: int) -> ClassSpan | None:
    """The ``class`` statement a line sits in: the innermost one whose body holds it (a method nested in a function of
    the class still belongs to it); None at module level or in a plain function."""
    ff = f.files.get(path)
    best = None
    for k in ff.classes if ff else ():
        if k.line <= line <= k.end and (best is None or k.line > best.line):
            best = k
    return best


def class_at(f: Facts, path: str, line: int) -> str | None:
    """The name of the class a line sits in (:func:`class_span_at`)."""
    k = class_span_at(f, path, line)
    return k.name if k else None


#: a model loaded beside the one trained: a reward model, a teacher, a critic, a judge (minimind ``class LMForRewardModel``:
#: ``self.model = AutoModel.from_pretrained(model_path)``; ``reward_model = LMForRewardModel(path, dtype=torch.float16)``)
_AUX_MODEL_NAME = lazy_compile(r"(?i)reward|teacher|critic|judge|verifier|discriminator|(^|_)(ref|rm)(_|$)")


def aux_model_site(f: Facts, path: str, line: int, text: str) -> bool:
    """Whether a line builds or loads an auxiliary model (:data:`_AUX_MODEL_NAME`): named so by the class it sits in, the
    name it is assigned to or the class it calls; its dtype or weights say nothing of the model trained."""
    head = text.split("(", 1)[0]
    target, callee = head.split("=", 1) if "=" in head else ("", head)
    return bool(_AUX_MODEL_NAME.search(f"{class_at(f, path, line) or ''} {target.strip()} {callee.strip().rsplit('.', 1)[-1]}"))


#: the hooks an HF Trainer draws each step's inputs through
_INPUT_HOOKS = frozenset({"_prepare_inputs", "get_train_dataloader", "get_batch_samples"})


def inputs_replaced(f: Facts, site: Any) -> bool:
    """A Trainer built in a function that then replaces its input hook on the instance (``trainer._prepare_inputs =
    _async_prepare_inputs``, which reads each step's rows from a queue another process fills): the Trainer's own DataLoader
    iterates a placeholder dataset and its workers, pinning and prefetch touch no training batch, and an online-RL trainer
    (``GRPOTrainer``) generates no rollouts of its own."""
    ff = f.files.get(getattr(site, "path", ""))
    if ff is None:
        return False
    func = getattr(site, "func", None)
    return any(a.func == func and "." in a.target and a.target.rsplit(".", 1)[-1] in _INPUT_HOOKS for a in ff.attr_assigns)


#: tensor constructors that build a batch from host data (Python lists) straight on the device
_ON_DEVICE_BUILDERS = ("torch.tensor", "torch.as_tensor")
#: calls through which an input hook would move (or hand on) the loader's own batch: ``.to(device)``, ``.cuda()``, HF's
#: ``self._prepare_input(...)`` / ``super()._prepare_inputs(inputs)``
_BATCH_MOVES = frozenset({"to", "cuda", "_prepare_input", "_prepare_inputs"})


def hook_built_batches(f: Facts, path: str) -> list[Any]:
    """The calls with which a Trainer subclass's own input hook (``def _prepare_inputs(self, inputs)`` in ``path``) builds
    the training tensors from host lists on the device (``torch.tensor(prompt_ids + completion_ids, device=
    self.accelerator.device)``, an online-RL trainer assembling each step's batch from rollouts), when the hook never moves
    the loader's batch (no ``.to``/``.cuda``/``_prepare_input(s)`` call in it): its DataLoader only hands raw rows (prompts)
    to the hook, so that loader's workers, prefetch and pinning touch no training batch. Empty otherwise."""
    ff = f.files.get(path)
    if ff is None:
        return []
    hook = [c for c in ff.calls if c.func == "_prepare_inputs"]
    if any(c.name.rsplit(".", 1)[-1] in _BATCH_MOVES for c in hook):
        return []
    return [c for c in hook if c.name in _ON_DEVICE_BUILDERS and "device" in c.kwargs]


def hook_fed_loaders(f: Facts) -> list[Any]:
    """The on-device batch builders (:func:`hook_built_batches`) of every Trainer subclass whose overridden
    ``get_train_dataloader`` builds a ``DataLoader`` (outside tests): the loaders there feed only raw rows to the hook."""
    paths = {c.path for c in f.calls("torch.utils.data.DataLoader", "DataLoader", "StatefulDataLoader")
             if c.func == "get_train_dataloader" and not _TEST_FILE.search(c.path)}
    return [b for p in sorted(paths) for b in hook_built_batches(f, p)]


def on(settings: Iterable[Setting]) -> list[Setting]:
    """Settings whose value clearly turns the feature on."""
    return [s for s in settings if truthy(s.value) is True]


def off(settings: Iterable[Setting]) -> list[Setting]:
    return [s for s in settings if truthy(s.value) is False]


def off_detail(disabled: Iterable[Any], what: str) -> str:
    """The detail for a feature that the cited settings turn off: "explicitly disabled" only when one of them is a setting
    of the run (a launch flag, a config file, an assignment or a literal); when every one is a default in code (a dataclass
    field or argparse default, rank 0), say that it is off by default and cite the first default instead.

    tevatron ``dtype: Optional[str] = field(default="float32")`` is FP32 by default, not "mixed precision is explicitly
    disabled"."""
    items = list(disabled)
    if any(not isinstance(x, Setting) or x.rank > 0 for x in items):
        return f"{what} is explicitly disabled"
    s0 = items[0]
    more = f" (and {len(items) - 1} more default{'s' if len(items) > 2 else ''})" if len(items) > 1 else ""
    return f"{what} is off by default: {s0.key} defaults to {s0.value!r} ({s0.path}:{s0.line}){more}, and nothing sets it"


def evs(items: Iterable[Any], key: str | None = None) -> list[Evidence]:
    return [Facts.ev(x, key=key) for x in items]


@lru_cache(maxsize=4096)
def parse_expr(text: str) -> ast.expr | None:
    """The expression a guard, loop or argument text holds (None when it does not parse).

    Memoised: a repository repeats the same few thousand guards across hundreds of thousands of
    calls, and each check asks again. The tree is shared: callers read it, never change it.
    """
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


#: an object that holds the run's parsed options (``args``, ``self.args``, ``training_args``, ``cfg``, ``hparams``)
_OPTIONS_OBJECT = lazy_compile(r"^(self\.)?(args|opts?|cfg|hparams|hp|training_args|train_args|script_args|model_args|data_args|flags|FLAGS)$")


def guard_flags(guard: str | None) -> list[tuple[str, bool]]:
    """The plain flags an ``if`` guard tests: ``"args.compile and not (self.eval)"`` -> ``[("compile", False), ("eval", True)]``.

    Only names, attribute chains and ``getattr(obj, "name", default)`` (optionally negated) joined with ``and`` are read;
    comparisons, other calls and ``or`` say nothing about a single flag and are left out.
    """
    if not guard:
        return []
    node = parse_expr(guard)
    if node is None:
        return []
    terms = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]
    # (a parenthesized ``and`` inside the guard, a computed switch's own test standing for it, is more terms of the same ``and``)
    terms = [x for t in terms for x in (t.values if isinstance(t, ast.BoolOp) and isinstance(t.op, ast.And) else [t])]
    out: list[tuple[str, bool]] = []
    for t in terms:
        neg = False
        while isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            neg, t = not neg, t.operand
        if isinstance(t, ast.Name):
            out.append((t.id, neg))
        elif isinstance(t, ast.Attribute):
            out.append((t.attr, neg))
        elif (isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "getattr" and len(t.args) >= 2
              and isinstance(t.args[1], ast.Constant) and isinstance(t.args[1].value, str) and _OPTIONS_OBJECT.match(ast.unparse(t.args[0]))):
            # ``getattr(args, "torchcompile", False)``: the run's option ``args.torchcompile`` (not a model config's
            # attribute, ``getattr(self.config, "gradient_checkpointing", False)``, which no run option names)
            out.append((t.args[1].value, neg))
    return out


def _norm(k: str) -> str:
    return k.strip().lower().replace("-", "_")


#: state-dict gathering for a checkpoint (``StateDictOptions(full_state_dict=False, cpu_offload=True)``,
#: ``FullStateDictConfig(offload_to_cpu=True)``, ``get_model_state_dict(..., options=...)``): tensors copied to CPU to be
#: written, not offloaded training state
_STATE_DICT_CALL = lazy_compile(r"StateDict(Options|Config)?\(|state_dict\(", re.I)
#: the options class of a checkpoint load or save (Composer ``CheckpointLoadOptions.cpu_offload: bool = True``)
_CHECKPOINT_OPTIONS = lazy_compile(r"^(Checkpoint|Ckpt)\w*Options\.")


#: an RL trainer's buffer of rollouts (Open-Reasoner-Zero ``NaiveReplayBuffer(..., cpu_offload=True, packing_samples=True)``):
#: its ``cpu_offload`` keeps the collected experience in host memory, not the model's weights or optimizer states
_BUFFER_CALL = lazy_compile(r"\w*Buffer\(")


def checkpoint_gather(s: Any, name: str, facts: Facts | None = None) -> bool:
    """A setting of an offload switch that belongs to a checkpoint's state-dict gathering (``StateDictOptions(cpu_offload=
    True)``, ``set_model_state_dict(..., cpu_offload=...)``, a ``CheckpointLoadOptions`` field) or to an RL replay buffer
    (``NaiveReplayBuffer(cpu_offload=True)``): same name, another meaning; it does not vote on the training switch.
    With ``facts``: also a local variable that only such calls of its file read (llm-foundry's HF checkpointer
    ``cpu_offload = True`` then ``StateDictOptions(full_state_dict=True, cpu_offload=cpu_offload)``)."""
    if "offload" not in name.lower():
        return False
    if facts is not None and s.source == "assign" and s.path in facts.files:
        # (the call's keyword reads the variable, or carries its constant under the same name, as extraction folds it)
        readers = [c for c in facts.files[s.path].calls
                   if any((isinstance(v, Expr) and v.text == s.key) or k == s.key for k, v in c.kwargs.items())]
        if readers and all(_STATE_DICT_CALL.search(c.name.rsplit(".", 1)[-1] + "(") or _BUFFER_CALL.match(c.short + "(")
                           for c in readers):
            return True
    return (s.source == "call" and bool(_STATE_DICT_CALL.search(s.key) or _BUFFER_CALL.match(s.key))) or (
        s.source == "field-default" and bool(_CHECKPOINT_OPTIONS.match(s.key)))


#: a training driver's own arguments for the GPUs per node it places its workers on, and for its nodes (slime ``ray job
#: submit -- python3 train.py --actor-num-gpus-per-node 8``, verl ``trainer.n_gpus_per_node=8 trainer.nnodes=2``)
DRIVER_GPU_KEYS = ("actor_num_gpus_per_node", "n_gpus_per_node", "num_gpus_per_node", "gpus_per_node")
DRIVER_NODE_KEYS = ("actor_num_nodes", "nnodes", "num_nodes")


def _args_attr_state(facts: Facts, name: str) -> tuple[bool | None, list[Any]]:
    """A flag the entry script sets on its parsed arguments object with a constant (2U1/Qwen2-VL-Finetune
    ``train_grpo.py``: ``training_args.use_liger_loss = False`` before building the trainer, which reads
    ``self.use_liger_loss = args.use_liger_loss``): that constant, when every such assignment outside tests agrees and
    none sits under an ``if``. (None, []) otherwise; a ``self.<name> = ...`` is the object's own state, not this."""
    # the receiver is a parsed-arguments object (``training_args``, ``args``, ``script_args``), not a model's config
    # (``model.config.use_cache = False`` before training says nothing about a generation path's ``if use_cache:``)
    sites = [a for a in facts.attr_assigns(name) if a.target.endswith(f".{name}") and not a.target.startswith(("self.", "?"))
             and re.search(r"(^|\.)\w*args$", a.target[: -len(name) - 1]) and isinstance(a.value, bool) and not _TEST_FILE.search(a.path)]
    if not sites or any(a.guard for a in sites) or len({a.value for a in sites}) != 1:
        return None, []
    return sites[0].value, sites


def _keyword_of_own_branch(facts: Facts, s: Setting, name: str) -> bool:
    """A call keyword of the same name inside the branch that tests the flag (OpenRLHF ``if load_in_4bit:
    nf4_config = BitsAndBytesConfig(load_in_4bit=True, ...)``): what the branch does once the flag is on, not a setting
    of the flag."""
    if s.source != "call" or s.path not in facts.files:
        return False
    short = s.key.split("(", 1)[0].rsplit(".", 1)[-1]
    return any((c.line == s.line or (c.kw_lines and s.line in c.kw_lines.values())) and c.short == short
               and any(n == name and not neg for n, neg in guard_flags(c.guard)) for c in facts.files[s.path].calls)


def _unflagged_launch_defaults(facts: Facts, name: str, eff: list[Any]) -> list[Any]:
    """When every effective setting of a flag is a launch's and other launches of the same script leave it out (GaLore's
    ``--single_gpu`` in ``scripts/single_gpu/*.sh``, not in the 8-GPU ``scripts/benchmark_c4/*.sh``), those launches run
    at the script's own default: its default settings, to weigh beside the launches'. Empty otherwise."""
    if not eff or not all(s.source == "launcher" and s.script for s in eff):
        return []
    out: list[Any] = []
    for sc in {s.script.lstrip("./") for s in eff}:
        if any((x.script or "").lstrip("./") == sc and not any(_norm(k) == _norm(name) for k in x.script_args)
               for x in facts.launches()):
            out += [s for s in facts.settings(name) if s.source in ("argparse-default", "field-default")
                    and (s.path == sc or s.path.endswith("/" + sc))]
    return out


def flag_state(facts: Facts, name: str, _depth: int = 0) -> bool | None:
    """True/False when every effective setting of ``name`` turns it on/off; None when unset or mixed.

    A setting that only forwards another (``kwargs["torch_compile"] = self.cfg.torch_compile``) is followed: to the
    settings of that name, or, when it forwards the same name, to the concrete settings of it (axolotl's schema
    default ``torch_compile: Optional[bool] = None`` when no recipe sets it).
    """
    vals: list[bool | None] = []
    # a checkpoint's state-dict options (``StateDictOptions(cpu_offload=True)``: tensors gathered to CPU to be written)
    # share the keyword's name with the training switch, not its meaning
    eff = [s for s in facts.effective(name) if not checkpoint_gather(s, name) and not _keyword_of_own_branch(facts, s, name)]
    # a launch flag overrides the script's own module-level value (nanoGPT: ``compile = True`` in train.py, then
    # ``python train.py --compile=False``: its configurator applies the flag after the assignment)
    launched = {s.script.lstrip("./") for s in eff if s.source == "launcher" and s.script}
    # ... only when every launch of that script passes the flag: a plain ``python train.py`` keeps the script's value
    launched = {sc for sc in launched if all(
        any(_norm(k) == _norm(name) for k in launch.script_args)
        for launch in facts.launches() if (launch.script or "").lstrip("./") == sc)}
    if launched:
        eff = [s for s in eff if not (s.source in ("assign", "argparse-default", "field-default")
                                      and any(s.path == sc or s.path.endswith("/" + sc) for sc in launched))]
    if not eff and _depth < 3:
        return _derived_flag(facts, name, _depth)
    eff += _unflagged_launch_defaults(facts, name, eff)
    maj = recipe_majority(eff)
    if maj is not None:
        eff = [s for s in eff if not _is_recipe(s) or truthy(s.value) is maj.value]
    for s in eff:
        ref = getattr(s.value, "ref", None) if isinstance(s.value, Expr) else None
        if ref and ref != name and _depth < 3:
            st = flag_state(facts, ref, _depth + 1)
            if st is None and s.source == "call":  # ``compile_model=self._model_compile``: the attribute the caller's file copied
                st = _forwarded_flag(facts, ref, s.path)[0]
            vals.append(st)
        elif ref == name or (isinstance(s.value, Expr) and (_forwards_conjunct(s.value.text or "", name)
                                                              or _reads_same_name(s.value.text or "", name))):
            # (``streaming=data_args.streaming and dataset_attr.load_from != "file"``: on only when the flag itself is on;
            # ``activation_checkpointing=mesh_context.activation_checkpointing``, ``parsed["activation_checkpointing"]``,
            # ``getattr(config, "activation_checkpointing", False)``: the same name handed on from any holder)
            concrete = [x for x in facts.settings(name) if not isinstance(x.value, Expr)
                        and not checkpoint_gather(x, name) and not _keyword_of_own_branch(facts, x, name)]
            top = max((x.rank for x in concrete), default=None)
            vals += [truthy(x.value) for x in concrete if x.rank == top] or [None]
        else:
            vals.append(truthy(s.value))
    if not vals:
        return None
    if all(v is False for v in vals):
        return False
    if all(v is True for v in vals):
        return True
    return None


def _derived_flag(facts: Facts, name: str, depth: int) -> bool | None:
    """A switch no setting names, derived from others on an object (Megatron-DeepSpeed ``self.use_fp8 = args.fp8_e4m3 or
    args.fp8_hybrid``, outside tests): the ``or``/``and`` of those flags' states; None when any assignment is another
    expression or their states disagree."""
    index = facts._s.get("_attr_flag_index")
    if index is None:  # ``self.<name> = <expression>`` assignments by name, built once per facts
        index = facts._s["_attr_flag_index"] = {}
        for a in facts.records("attr_assigns"):
            if a.target.startswith("self.") and a.target.count(".") == 1 and isinstance(a.value, Expr):
                index.setdefault(a.target[5:], []).append(a)
    states = []
    for a in index.get(name, ()):
        if re.search(r"(^|/)tests?/", a.path):
            continue
        node = parse_expr(a.value.text)
        if not isinstance(node, ast.BoolOp) or not all(isinstance(v, ast.Attribute | ast.Name) for v in node.values):
            return None
        parts = [flag_state(facts, v.attr if isinstance(v, ast.Attribute) else v.id, depth + 1) for v in node.values]
        if isinstance(node.op, ast.Or):
            states.append(True if any(p is True for p in parts) else False if all(p is False for p in parts) else None)
        else:
            states.append(False if any(p is False for p in parts) else True if all(p is True for p in parts) else None)
    if states and all(x is False for x in states):
        return False
    if states and all(x is True for x in states):
        return True
    return None


@dataclass(frozen=True, slots=True)
class Majority:
    """How recipe files (YAML/JSON) set one on/off switch: the majority value and the count of files per value."""

    name: str
    value: bool
    counts: tuple[tuple[bool, int], ...]  # (value, files), the majority first

    @property
    def total(self) -> int:
        return sum(n for _, n in self.counts)

    def text(self) -> str:
        """``compile: False in 109 of 110 recipes, True in 1``."""
        (top, n), *rest = self.counts
        others = ", ".join(f"{v} in {k}" for v, k in rest)
        return f"{self.name}: {top} in {n} of {self.total} recipes" + (f", {others}" if others else "")


def _is_recipe(s: Setting) -> bool:
    return s.source == "config" and s.path.endswith((".yaml", ".yml", ".json"))


def recipe_majority(settings: Iterable[Setting]) -> Majority | None:
    """The majority of three or more recipe files that disagree on a switch (``compile: False`` in 109 of 110 torchtune
    recipes, ``True`` in one): the value more than half of them set. None when they agree, are fewer than three, or
    no value has a majority. Judging by the majority, not by the one recipe that differs (issue 9: recipes that differ
    are reported as a distribution and judged by the majority)."""
    by_value: dict[bool, set[str]] = {}
    name = ""
    for s in settings:
        t = truthy(s.value) if _is_recipe(s) and isinstance(s.value, (bool, str)) else None
        if t is not None:
            by_value.setdefault(t, set()).add(s.path)
            name = name or s.key.rsplit(".", 1)[-1]
    paths = {p for ps in by_value.values() for p in ps}
    if len(by_value) < 2 or len(paths) < 3:
        return None
    counts = sorted(((v, len(ps)) for v, ps in by_value.items()), key=lambda kv: -kv[1])
    if counts[0][1] * 2 <= len(paths):
        return None
    return Majority(name, counts[0][0], tuple(counts))


def _dead_branch(guard: str) -> bool:
    """``if False:`` / ``if 0:`` (or ``not True``) among the and-ed conditions: the branch never runs."""
    node = parse_expr(guard)
    if node is None:
        return False
    terms = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]
    for t in terms:
        neg = False
        while isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            neg, t = not neg, t.operand
        if isinstance(t, ast.Constant) and bool(t.value) is neg:
            return True
    return False


def _reads_same_name(text: str, name: str) -> bool:
    """``holder.name``, ``holder["name"]`` or ``getattr(holder, "name"[, default])``: a value that only hands on the flag of
    the same name from an object that is not a recognised config holder (``setup.activation_checkpointing``)."""
    n = re.escape(name)
    return re.fullmatch(rf"""\w+(?:\.\w+)*\.{n}|\w+(?:\.\w+)*\[["']{n}["']\]|getattr\(\s*\w+(?:\.\w+)*\s*,\s*["']{n}["']\s*(?:,[^()]*)?\)""",
                        text.strip()) is not None


def _forwards_conjunct(text: str, name: str) -> bool:
    """``x.name and <anything>``: a value that is the flag itself and-ed with more conditions, true only when the flag is."""
    head = text.split(" and ", 1)[0].strip() if " and " in text and " or " not in text else ""
    return bool(head) and re.fullmatch(r"(\w+\.)*" + re.escape(name), head) is not None


def guard_off(facts: Facts, call: Any) -> list[Any]:
    """What switches off the ``if`` branch a call sits in: the settings of a flag that is off
    (``if args.compile:`` with ``compile`` off), or the call itself under ``if False:``.

    Empty when the branch is unconditional, or its flags are unknown or on.
    """
    guard = getattr(call, "guard", None)
    if guard and (_dead_branch(guard) or _unset_get_off(facts, guard, call.path)):
        return [call]
    # (first: in a Trainer copy the framework's option is why a branch is off, not a parameter its callers pass)
    copy_off = _trainer_copy_option_off(facts, call) if guard else []
    if copy_off:
        return copy_off
    cmp_off = _comparison_off(facts, guard, call.path) if guard else []
    if cmp_off:
        return cmp_off
    if guard and _library_default_off(facts, guard):
        return [call]
    for name, neg in guard_flags(guard):
        state = flag_state(facts, name)
        sites: list[Any] = [s for s in facts.effective(name) if not _keyword_of_own_branch(facts, s, name)]
        if state is None and not sites:
            state, sites = _forwarded_flag(facts, name, call.path)
        if state is None and not sites:
            state, sites = _set_only_when_off(facts, name, call.path)
        if state is None and not sites and isinstance(call, Call):
            state, sites = _popped_flag(facts, name, call)
        if state is None and not sites:
            state, sites = _args_attr_state(facts, name)
        if state is None and not sites:
            state, sites = _trl_default_off(facts, name, call)
        if state is not None and state is neg:
            return sites
    return section_flag_off(facts, call) or param_default_off(facts, call) or or_guard_off(facts, call)


#: options of TRL's trainer configs that are off unless a run turns them on (``GRPOConfig.use_vllm``)
_TRL_OFF_BY_DEFAULT = frozenset({"use_vllm"})


def _trl_default_off(facts: Facts, name: str, call: Any) -> tuple[bool | None, list[Any]]:
    """(False, [call]) for a TRL config option off by default that the project, which imports TRL, neither defines nor
    sets to a value (R1-V's and Visual-RFT's ``if self.use_vllm: self.llm = LLM(...)`` in the vLLM GRPO trainer that
    ``trainer_cls = Qwen2VLGRPOTrainer if not training_args.use_vllm else Qwen2VLGRPOVLLMTrainer`` picks only under
    ``--use_vllm``, which no launch passes); (None, []) otherwise."""
    if name not in _TRL_OFF_BY_DEFAULT or not facts.imports("trl") or facts.fields(name) or facts.arg_options(name):
        return None, []
    if any(not isinstance(s.value, Expr) for s in facts.settings(name)):
        return None, []
    return False, [call]


def _trainer_copy_option_off(facts: Facts, call: Any) -> list[Any]:
    """A branch of a copy of ``transformers.Trainer`` kept on the training path (ChatGLM-6B ``ptuning/trainer.py``) behind
    a ``TrainingArguments`` option the project never picks: the framework's option plumbing, off at the framework's
    default. Read in a positive term of the guard: a flag ``args.X`` (``if self.args.torch_compile:``), an attribute the
    copy derives from it tested for ``None`` (``elif self.fsdp is not None:``), an enum or string choice ``args.X ==
    OptimizerNames.Y`` / ``"y"``, or a membership ``FSDPOption.OFFLOAD in self.args.X``. The call itself when that term is
    off: no setting of ``X`` outside the copy and the tests turns it on (or, for a choice, names ``y``); empty otherwise
    (or outside such a copy)."""
    guard = getattr(call, "guard", None)
    if not guard:
        return []
    copy = in_trainer_copy(facts, call.path)
    if not copy and not _in_hf_trainer_subclass(facts, call):
        return []
    node = parse_expr(guard)
    if node is None:
        return []
    for t in node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]:
        if isinstance(t, ast.UnaryOp):
            continue
        name, choice = _copy_option_term(t)
        if name is None or (not copy and (name in _COPY_DERIVED or HF_DEFAULTS.get(name, True) or choice is not None)):
            continue
        # (a copy's own settings of the option are its plumbing; a subclass's file may declare the project's default)
        sites = [s for s in facts.effective(name) if (not copy or s.path != call.path) and not _TEST_FILE.search(s.path)]
        if choice is None and not any(truthy(s.value) is not False for s in sites):
            if not copy:
                # the run's TrainingArguments leave the option at the framework's default: cite that default at the guarded
                # line, so a check says "off by default", not "explicitly disabled"
                return [Setting(name, HF_DEFAULTS[name], call.path, call.line, "field-default", call.text,
                                f"TrainingArguments.{name}", 0)]
            return [call]
        if choice is not None and not any(not isinstance(s.value, str) or s.value.strip().lower() == choice for s in sites):
            return [call]
    return []


def trainer_copy_off(facts: Facts, call: Any) -> bool:
    """Whether ``call`` sits in a branch of a ``transformers.Trainer`` copy behind an option the project never picks (see
    :func:`_trainer_copy_option_off`)."""
    return bool(getattr(call, "guard", None)) and bool(_trainer_copy_option_off(facts, call))


#: the attributes a ``transformers.Trainer`` sets from an option of the same name, None unless the run picks it
#: (``self.fsdp = ...`` when ``len(args.fsdp) > 0``): not ``self.optimizer`` or ``self.eval_dataset``, which the run fills
_COPY_DERIVED = frozenset({"fsdp", "sharded_ddp"})


def _in_hf_trainer_subclass(facts: Facts, call: Any) -> bool:
    """Whether a call sits in a class that subclasses ``transformers.Trainer`` (or one of the project's classes that does):
    there ``args`` and ``self.args`` are the run's ``TrainingArguments`` (MeZO's ``OurTrainer._inner_training_loop``, a copy
    of the 4.28 loop: ``if args.gradient_checkpointing: self.model.gradient_checkpointing_enable()``)."""
    k = class_span_at(facts, call.path, call.line)
    seen: set[str] = set()
    while k is not None and k.name not in seen:
        seen.add(k.name)
        if any(b in _HF_TRAINER_BASES for b in k.bases):
            return True
        own = [b.rsplit(".", 1)[-1] for b in k.bases]
        k = next((c for c in facts.records("classes") if c.name in own), None)
    return False


#: the HF trainer classes whose ``args`` are ``TrainingArguments``
_HF_TRAINER_BASES = frozenset({"transformers.Trainer", "transformers.Seq2SeqTrainer", "transformers.trainer.Trainer",
                               "transformers.trainer_seq2seq.Seq2SeqTrainer"})


def _copy_option_term(t: ast.expr) -> tuple[str | None, str | None]:
    """The ``TrainingArguments`` option a term of a Trainer copy's guard tests, and the choice it compares with (None for a
    flag): ``self.args.torch_compile`` -> ``("torch_compile", None)``, ``self.fsdp is not None`` -> ``("fsdp", None)``,
    ``args.optim == OptimizerNames.ADAMW_APEX_FUSED`` -> ``("optim", "adamw_apex_fused")``, ``FSDPOption.OFFLOAD in
    self.args.fsdp`` -> ``("fsdp", None)``; ``(None, None)`` for anything else."""
    def args_attr(e: ast.expr) -> str | None:
        if isinstance(e, ast.Attribute) and isinstance(e.value, (ast.Name, ast.Attribute)):
            holder = e.value.id if isinstance(e.value, ast.Name) else e.value.attr
            return e.attr if holder == "args" else None
        return None
    if isinstance(t, ast.Attribute):
        return args_attr(t), None
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1):
        return None, None
    op, left, right = t.ops[0], t.left, t.comparators[0]
    if (isinstance(op, ast.IsNot) and isinstance(right, ast.Constant) and right.value is None
            and isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name) and left.value.id == "self"):
        return (args_attr(left) or left.attr, None) if left.attr in _COPY_DERIVED else (None, None)
    if isinstance(op, ast.In):
        return args_attr(right), None
    if isinstance(op, ast.Eq) and args_attr(left):
        if isinstance(right, ast.Attribute) and isinstance(right.value, ast.Name) and right.value.id[:1].isupper():
            return args_attr(left), right.attr.lower()
        if isinstance(right, ast.Constant) and isinstance(right.value, str):
            return args_attr(left), right.value.lower()
    return None, None


def runs_file(script: str | None, path: str) -> bool:
    """Whether a launch's script (``internvl/train/internvl_chat_finetune.py``, ``-m pkg.train``) is the file at ``path``."""
    if not script:
        return False
    s = script.lstrip("./")
    if not s.endswith(".py"):
        s = s.replace(".", "/") + ".py"
    return path == s or path.endswith("/" + s)


def in_trainer_copy(facts: Facts, path: str) -> bool:
    """Whether ``path`` is a copy of ``transformers.Trainer`` (see :func:`checks.roles.framework_copy`), memoised."""
    key = ("trainer-copy", path)
    if key not in facts._memo:
        from ..roles import framework_copy  # (roles does not import the rules)
        ff = facts.files.get(path)
        facts._memo[key] = ff is not None and framework_copy(ff) is not None  # type: ignore[assignment]
    return bool(facts._memo[key])


def _arm_off(facts: Facts, arm: Any) -> bool:
    """An arm of ``x = A if cond else B`` whose condition the settings switch off (see :meth:`Facts.arm_state`): the
    same reading as a call's ``if`` branch."""
    return bool(guard_off(facts, arm))


register_arm_judge(_arm_off)


def all_arms(groups: Iterable[tuple[Setting, ...]], holds: Any) -> list[Setting]:
    """The arms of the undecided conditional expressions (:meth:`Facts.alternatives`) for which ``holds(value)`` is true
    of every arm: what the run has whichever arm it takes (``"deepspeed_stage_2_offload" if optimizer_name == "cpu_adam"
    else "deepspeed_stage_2"`` is DeepSpeed ZeRO-2 either way; CPU offload only in one arm, so not established)."""
    return [s for g in groups if all(holds(x.value) for x in g) for s in g]


def keyword_choices(facts: Facts, call: Any, key: str) -> list[tuple[tuple[Any, Any], ...]]:
    """The values a call's keyword takes, as groups of alternatives of ``(value, fact)``: a constant is one group of one
    (the call); a local name of the call's file (``Trainer(strategy=strategy)``) bound by a conditional expression of
    constants is the arm the settings choose (a group of one) or, undecided, all its arms (one group, see
    :meth:`Facts.alternatives`). A check takes a group as holding what every member holds. A plain constant assignment
    of the local is not read here: its enclosing ``if`` is not recorded (``strategy = "ddp"`` under ``elif args.strategy
    == "ddp":`` is an option, not the run's value)."""
    v = call.kwargs.get(key) if hasattr(call, "kwargs") else None
    if not isinstance(v, Expr):
        return [((v, call),)] if key in getattr(call, "kwargs", {}) else []
    if not (v.ref and v.text == v.ref and v.ref.isidentifier()):
        return []
    out: list[tuple[tuple[Any, Any], ...]] = [((s.value, s),) for s in facts.effective(v.ref)
                                              if s.path == call.path and s.source == "assign" and s.guard is not None]
    out += [tuple((s.value, s) for s in g) for g in facts.alternatives(v.ref) if g[0].path == call.path]
    return out


def _order_test(op: ast.cmpop, right: Any, neg: bool) -> Callable[[Any], bool]:
    """The test of ``<param> <op> right`` at a default; a default that does not compare gives what decides nothing."""
    def test(v: Any) -> bool:
        held = _holds(op, v, right)
        return bool(held) if held is not None else not neg
    return test


def param_default_off(facts: Facts, call: Any) -> list[Any]:
    """A branch switched off by a parameter of the enclosing function left at its default: ``if compile_config is not
    None:`` in ``Trainer.__init__(..., compile_config: Optional[dict] = None)``, ``if use_lora:`` with ``use_lora=False``,
    when the body never rebinds it, nothing in the project sets a value of that name (a config key, flag or call keyword),
    and no caller passes it: no construction of the class (for an ``__init__``) or, for a function, at least one call
    and none passing it by keyword, by position or through ``**kwargs``. A library's constructor that only its users call
    is judged at its defaults, as a default a run must change is judged as the default. That parameter's default."""
    guard = getattr(call, "guard", None)
    node = parse_expr(guard) if guard else None
    if node is None:
        return []
    for t in node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]:
        neg = False
        while isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            neg, t = not neg, t.operand
        if (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], (ast.Is, ast.IsNot))
                and isinstance(t.comparators[0], ast.Constant) and t.comparators[0].value is None):
            subject = t.left
            test = (lambda v: v is not None) if isinstance(t.ops[0], ast.IsNot) else (lambda v: v is None)
        elif (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], _ORDER) and isinstance(t.comparators[0], ast.Constant)
              and isinstance(t.comparators[0].value, (int, float)) and not isinstance(t.comparators[0].value, bool)):
            # ``if lora_rank > 0:`` in ``Actor.__init__(..., lora_rank=0, ...)`` (Open-Reasoner-Zero, whose two constructions
            # of ``Actor`` leave it out): the ordering at the default; a default that does not compare decides nothing
            subject = t.left
            test = _order_test(t.ops[0], t.comparators[0].value, neg)
        else:
            subject, test = t, bool
        if isinstance(subject, ast.Name):
            p = facts.param_default(call.path, call.line, subject.id)
        elif isinstance(subject, ast.Attribute) and isinstance(subject.value, ast.Name) and subject.value.id == "self":
            p = _init_copied_param(facts, call, subject.attr)
        else:
            continue
        if p is None or p.rebound or test(p.value) is not neg or _param_passed(facts, p):
            continue
        return [p]
    return []


_CLASS_TEST = lazy_compile(r"\b(isinstance|issubclass)\(")


def _init_copied_param(facts: Facts, call: Any, attr: str) -> Any:
    """The ``__init__`` parameter that an attribute read in a method is a copy of (``self.pack = pack`` in ``def
    __init__(self, doc_cache, pack: bool = False)``, read as ``if self.pack:`` in ``__iter__``): its :class:`ParamDefault`
    when that is the only assignment of ``self.<attr>`` in the class and the parameter defaults to None/False. None
    otherwise (another method sets it, the value is not the bare parameter, or the class is not known)."""
    ff = facts.files.get(call.path)
    cls = class_at(facts, call.path, call.line) if ff is not None else None
    if cls is None:
        return None
    target = f"self.{attr}"
    sets = [a for a in ff.attr_assigns if a.target == target and class_at(facts, a.path, a.line) == cls]
    if len(sets) != 1 or sets[0].func != "__init__":
        return None
    a = sets[0]
    v = a.value
    if not (isinstance(v, Expr) and v.ref and v.text == v.ref and v.ref.isidentifier()):
        return None
    p = facts.param_default(a.path, a.line, v.ref)
    return p if p is not None and p.owner == cls else None


def _param_passed(facts: Facts, p: Any) -> bool:
    """Whether anything may give parameter ``p`` another value than its default (see :func:`param_default_off`).

    Callers of a class are its constructions by name (re-exports included); callers of a function are the calls that
    resolve to it (its module's dotted name, or its own file's ``func(...)``/``self.func(...)``), and a function with none
    is an entry point (a CLI command, a hook) whose arguments come from elsewhere. Any call of the same name passing the
    parameter, and any reference that hands the class or function on as a value, keeps it unknown. A setting of the same
    name inside the function's own body (``zero_opt_dict["overlap_comm"] = True`` under ``if overlap_comm:``) is what the
    parameter switches, not a value given to it (the body never rebinds it)."""
    if any(not (s.path == p.path and p.start <= s.line <= p.end) for s in facts.settings(p.name)):
        return True
    short = p.owner or p.func
    loose = [c for c in facts.calls(short) if c.short == short and not _TEST_FILE.search(c.path)]
    if any(c.star_kwargs or p.name in c.kwargs or (p.index >= 0 and len(c.args) > p.index) for c in loose):
        return True
    if any(r.name.rsplit(".", 1)[-1] == short and not _CLASS_TEST.search(r.text) and not _TEST_FILE.search(r.path)
           for r in facts.refs(short)):
        return True  # handed on by reference (``return AccelerateStrategy`` from a registry loader, ``{"chat": chat_fn}``)
    if p.owner:
        return False
    module = p.path.removesuffix(".py").replace("/", ".")
    strict = [c for c in loose if (c.path == p.path and c.name in (short, f"self.{short}", f"cls.{short}"))
              or ("." in c.name and module.endswith(c.name.rsplit(".", 1)[0]) and not c.name.startswith(("self.", "?")))]
    return not strict and not _public_api_method(facts, p, loose)


#: method names a framework calls with arguments of its own (a module's ``forward``, Lightning's ``training_step``,
#: HF Trainer's ``compute_loss``, callbacks' ``on_*``): their parameters are passed even when the project shows no call
_FRAMEWORK_CALLED = lazy_compile(r"^(forward|__\w+__|\w*_step|on_\w+|compute_\w+|configure_\w+|setup|teardown|prepare_\w+|"
                               r"collate\w*|call|run|main|train|fit_\w+|hook\w*|\w+_hook)$")


def launches_with_train_args(facts: Facts) -> list[Any]:
    """The launches that start a training run: those passing a per-device batch size or a learning rate (not a data
    preparation or conversion script's ``python prepare.py``)."""
    return [x for x in facts.launches() if "per_device_train_batch_size" in x.script_args or "learning_rate" in x.script_args]


def uncalled_function(facts: Facts, c: Any) -> str | None:
    """The name of the function ``c`` sits in when nothing in the scanned project calls that function (Mantis keeps
    OpenFlamingo's ``Flamingo.wrap_fsdp``, whose ``enable_wrap(wrapper_cls=FSDP)`` no script of Mantis reaches), else None.
    Not for names a framework calls itself (``forward``, ``training_step``, ``main``, dunders) or module-level code."""
    func = getattr(c, "func", None)
    if not func or func.startswith("__") or _FRAMEWORK_CALLED.match(func):
        return None
    if facts.calls(func) or any(r.name.rsplit(".", 1)[-1] == func for r in facts.refs(func)):
        return None  # called, or handed on as a value (a registry's ``ModelFactory.get_fsdp_wrapped_model``)
    # a module-level function of a library is its public API (``wrap(model, config)``): only a method kept on a class that
    # nothing calls is dead code; but in a copy of a library kept inside the project (VILA's ``llava/trl/trainer/utils.py``
    # ``get_quantization_config``) the project is the only caller
    return func if class_at(facts, c.path, c.line) or facts.in_library_copy(c.path) else None


def main_block_only(facts: Facts, c: Any) -> str | None:
    """The function ``c`` sits in when only its own file's ``if __name__ == "__main__":`` block calls it and no launch runs
    that file (VILA's encoder imports ``get_pca_map`` from ``visualize_features.py``, whose ``main()`` streams a dataset
    for a plot when someone runs the file by hand), else None."""
    func = getattr(c, "func", None)
    if not func or facts.entry_point(c.path) or class_at(facts, c.path, c.line):
        return None
    def elsewhere(x: Any) -> bool:  # a call in another file: its own ``main()`` unless it imports this one's
        ff = facts.files.get(x.path)
        return x.name != func or ff is None or any(i.name == func for i in ff.imports)

    calls = [x for x in facts.calls(func) if x.path == c.path or elsewhere(x)]
    if not calls or any(x.path != c.path or "__main__" not in (x.guard or "") for x in calls):
        return None
    if any(r.path != c.path for r in facts.refs(func)):
        return None  # handed on as a value elsewhere
    return func


def _public_api_method(facts: Facts, p: Any, loose: list[Any]) -> bool:
    """A public method of a library class that nothing in the project calls (``SentenceTransformer.old_fit(...,
    use_amp: bool = False)``: the pre-v3 training loop kept for old scripts): only users call it, so, like a library
    constructor, it is judged at its defaults. A method: its body calls ``self.<something>``; public: no leading ``_``, not a
    name a framework calls with its own arguments, and not called anywhere in the project under any receiver."""
    name = p.func
    if name.startswith("_") or _FRAMEWORK_CALLED.match(name) or loose:
        return False
    ff = facts.files.get(p.path)
    return ff is not None and any(c.name.startswith("self.") and p.start <= c.line <= p.end for c in ff.calls)


def _popped_flag(facts: Facts, name: str, call: Call) -> tuple[bool | None, list[Any]]:
    """A local flag the guarded function takes out of its keyword arguments: ``enable_fsdp_cpu_offload =
    kwargs.pop("enable_fsdp_offload", False)``. Its state is that keyword's as the project's callers pass it, each value
    read through its config section when it is one (``enable_fsdp_offload=args.train.accelerator.fsdp_config.offload``
    -> ``FSDPConfig.offload``, see :func:`typed_field_state`), or the ``pop``/``get`` default when no caller passes it.
    Unknown when a caller passes anything else, or the callers disagree."""
    pat = re.compile(rf"""\s*{re.escape(name)}\s*=\s*[\w.]+\.(?:pop|get)\(\s*["'](\w+)["']\s*(?:,\s*(False|None|0)\s*)?\)\s*$""")
    for c in facts.calls("pop", "get"):
        if c.path != call.path or c.func != call.func:
            continue
        m = pat.match(c.text)
        if not m:
            continue
        key = m.group(1)
        states: set[bool | None] = set()
        sites: list[Any] = []
        for caller in facts.calls_with_kw(key):
            v = caller.kwargs.get(key)
            node = parse_expr(v.text) if isinstance(v, Expr) and v.text else None
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and _plain_chain(node):
                st, at = typed_field_state(facts, node.value.attr, node.attr)
            elif isinstance(v, bool):
                st, at = v, [caller]
            else:
                st, at = None, []
            states.add(st)
            sites += at
        if not states:
            return truthy(m.group(2)) if m.group(2) else False, [c]
        if len(states) == 1 and None not in states:
            return states.pop(), sites
        return None, []
    return None, []


def section_flag_off(facts: Facts, call: Any) -> list[Any]:
    """The settings that switch off a call's ``if`` branch through a typed config section alone
    (``if args.train.wandb.enable:`` with ``WandbConfig.enable`` defaulting to False; see :func:`typed_field_state`)."""
    for holder, name, neg in _typed_chain_flags(getattr(call, "guard", None)):
        state, sites = typed_field_state(facts, holder, name)
        if state is None:
            state, sites = defaulted_section_state(facts, holder, name)
        if state is None:  # a library config built with no arguments (``BitsAndBytesConfig()``: ``load_in_4bit`` False)
            value, sites = bare_section_default(facts, holder, name)
            state = value if sites and isinstance(value, bool) else None
        if state is not None and state is neg:
            return sites
    return []


def defaulted_section_state(facts: Facts, holder: str, name: str) -> tuple[bool | None, list[Any]]:
    """A flag of a config section that the project's config validation fills in with a default:
    ``cfg.fsdp_config.cpu_offload = cfg.fsdp_config.get("cpu_offload", False)`` (an OmegaConf/dict section completed
    in code, so a YAML names only what it changes). The state is that default when every assignment to
    ``<section>.<flag>`` is such a read of the same key with the same default, outside any ``if``, and no config file
    sets ``<section>.<flag>`` to another value; None otherwise."""
    assigns = facts.attr_assigns(f"{holder}.{name}")
    if not assigns:
        return None, []
    read = re.compile(rf"""\s*[\w.]*\b{re.escape(holder)}\.get\(\s*["']{re.escape(name)}["']\s*,\s*(False|None|0|True)\s*\)\s*$""")
    states: set[bool | None] = set()
    for a in assigns:
        m = read.match(a.value.text or "") if isinstance(a.value, Expr) else None
        if m is None or a.guard:
            return None, []
        states.add(truthy(m.group(1)))
    if len(states) != 1:
        return None, []
    state = states.pop()
    if state is None or any(truthy(e.value) is not state for e in facts.config(f"{holder}.{name}")):
        return None, []
    return state, list(assigns)


def _typed_chain_flags(guard: str | None) -> list[tuple[str, str, bool]]:
    """The ``and``-terms of a guard that read a flag through a named section (``args.train.wandb.enable`` ->
    ``("wandb", "enable", False)``; ``not cfg.fsdp.offload`` -> ``("fsdp", "offload", True)``; ``compile_config.enable``
    -> ``("compile_config", "enable", False)``)."""
    node = parse_expr(guard) if guard else None
    if node is None:
        return []
    terms = [(t, False) for t in (node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node])]
    out: list[tuple[str, str, bool]] = []
    while terms:
        t, neg = terms.pop(0)
        while isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            neg, t = not neg, t.operand
        if neg and isinstance(t, ast.BoolOp) and isinstance(t.op, ast.Or):
            # ``not (not metrics or not args.wandb.enable)``: every disjunct is false, i.e. an ``and`` of their negations
            terms += [(v, True) for v in t.values]
        elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Attribute) and _plain_chain(t):
            out.append((t.value.attr, t.attr, neg))
        elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id not in ("self", "cls"):
            out.append((t.value.id, t.attr, neg))  # ``compile_config.enable``: a local holder, see typed_field_state
    return out


def typed_field_state(facts: Facts, holder: str, name: str) -> tuple[bool | None, list[Any]]:
    """A flag read through a config section whose type is a class of the project: ``args.train.wandb.enable`` where
    ``wandb: WandbConfig = field(default_factory=WandbConfig)`` and ``class WandbConfig`` has ``enable: bool =
    field(default=False)``. Generic flag names (``enable``) have many settings across sections; the section's class
    decides which one is read. The state is that field's default, when every class the section may hold agrees and
    nothing sets ``<section>.<flag>`` otherwise (a config key, or an assignment to the attribute chain); None when
    the section is not a typed field, or it is set."""
    classes: set[str] = set()
    for fl in facts.fields(holder):
        d = fl.default
        if isinstance(d, Expr) and d.text and _CLASS_NAME.fullmatch(d.text):
            classes.add(d.text)
        m = re.match(rf"\s*{re.escape(holder)}\s*:\s*(?:Optional\[)?([A-Z]\w*)", fl.text or "")
        if m:
            classes.add(m.group(1))
    by_name = False
    if not classes:
        # a local holder named after its class (``compile_config: Optional[CompileConfig] = None`` -> ``CompileConfig``)
        camel = "".join(p[:1].upper() + p[1:] for p in holder.split("_") if p)
        if any(fl.owner == camel for fl in facts.fields(name)):
            classes, by_name = {camel}, True
    if not classes:
        return None, []
    flags = [fl for fl in facts.fields(name) if fl.owner in classes]
    if not flags or {fl.owner for fl in flags} != classes:
        return None, []
    states = {truthy(fl.default) if isinstance(fl.default, bool) else None for fl in flags}
    if len(states) != 1 or None in states:
        return None, []
    state = states.pop()
    if by_name and (not _constructions_keep(facts, next(iter(classes)), name, state)
                    or any(truthy(e.value) is not state for e in facts.config(name))):
        # a holder known only by its name may be filled from a config section of any name (oumi's ``model:`` YAML
        # section builds ``model_params: ModelParams``): a config key of the flag's name that differs leaves it unknown
        return None, []
    sets: list[Any] = [e for e in facts.config(f"{holder}.{name}") if truthy(e.value) is not state]
    sets += [a for a in facts.attr_assigns(f"{holder}.{name}") if not (isinstance(a.value, bool) and a.value is state)]
    if sets:
        return None, []
    at = {(fl.path, fl.line) for fl in flags}
    return state, [x for x in facts.settings(name) if (x.path, x.line) in at] or list(flags)


def _constructions_keep(facts: Facts, cls: str, name: str, state: bool) -> bool:
    """Every construction of ``cls`` in the project leaves ``name`` at ``state``: it does not pass it, passes that
    constant, passes a typed section's field of that state, or copies the fields of a typed section whose ``name`` has
    that state (VeOmni ``CompileConfig(**{field.name: getattr(args.train.torch_compile, field.name) for field in
    fields(CompileConfig)})`` with ``TorchCompileConfig.enable`` defaulting to False)."""
    for c in facts.calls(cls):
        if c.short != cls:
            continue
        if name in c.kwargs:
            v = c.kwargs[name]
            node = parse_expr(v.text) if isinstance(v, Expr) and v.text else None
            if isinstance(v, bool):
                ok = v is state
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and _plain_chain(node):
                ok = typed_field_state(facts, node.value.attr, node.attr)[0] is state
            else:
                ok = False
            if not ok:
                return False
        elif c.star_kwargs:
            copies = [x for x in (facts.files[c.path].calls if c.path in facts.files else [])
                      if c.line <= x.line <= c.line + 3 and x.short == "getattr" and x.text.lstrip().startswith("**")
                      and x.args and isinstance(x.args[0], Expr)]
            node = parse_expr(copies[0].args[0].text) if copies else None
            if not (isinstance(node, ast.Attribute) and _plain_chain(node)
                    and typed_field_state(facts, node.attr, name)[0] is state and facts.fields(node.attr)):
                return False
    return True


_CLASS_NAME = lazy_compile(r"[A-Z][A-Za-z0-9_]*")


def _plain_chain(node: ast.AST) -> bool:
    """A name or attribute chain of names (``strategy_kwargs``, ``self.cfg.distributed``), not a call's result."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _sets_key_on(x: Setting, key: str, path: str) -> bool:
    """A setting of ``key`` that may put it in a run's mapping: a truthy constant, or an expression that is neither the
    same name handed on (``root_kwargs["offload_policy"] = offload_policy``) nor built in the guarded file itself
    (``strategy_kwargs["offload_policy"] = CPUOffloadPolicy(**op_raw)`` inside that very branch)."""
    v = x.value
    if isinstance(v, Expr):
        return not (v.ref == key or _reads_same_name(v.text or "", key) or x.path == path)
    return v is not None and truthy(v) is not False  # a mapping in a YAML recipe (``offload_policy: {pin_memory: true}``) too


_GETATTR_DEFAULT = lazy_compile(r"""getattr\(\s*[\w.]+\s*,\s*["'](\w+)["']\s*,\s*(-?\d+(?:\.\d+)?|True|False|None)\s*\)|"""
                              r"""[\w.]+\.get\(\s*["'](\w+)["']\s*,\s*(-?\d+(?:\.\d+)?|True|False|None)\s*\)""")


def _getattr_default(facts: Facts, name: str) -> tuple[Any, list[Any]]:
    """``self.<name>`` copied from an arguments object that nothing sets it on (Open-Reasoner-Zero ``self.ring_attn_size =
    getattr(self.args, "ring_attn_size", 1)``, with no config class, flag or key of that name): the fallback constant
    and the assignments, when every assignment of ``self.<name>`` outside tests is such a read with the same constant
    and no setting of ``name`` exists. (None, []) otherwise."""
    sites = [a for a in facts.attr_assigns(name) if a.target == f"self.{name}" and not _TEST_FILE.search(a.path)]
    if not sites or facts.settings(name):
        return None, []
    values = set()
    for a in sites:
        m = _GETATTR_DEFAULT.fullmatch(a.value.text.strip()) if isinstance(a.value, Expr) else None
        if m is None or (m.group(1) or m.group(3)) != name:
            return None, []
        values.add(ast.literal_eval(m.group(2) or m.group(4)))
    return (values.pop(), sites) if len(values) == 1 else (None, [])


def _unset_get_off(facts: Facts, guard: str, path: str = "") -> bool:
    """An ``and``-term ``cfg.get("key", False)`` (default falsy or absent) whose key nothing in the repository sets
    (no config, launch, argparse option or code default): the branch never runs (``if recipe_cfg.get(
    "draft_gradient_checkpointing", False):`` with no config naming ``draft_gradient_checkpointing``); likewise
    ``"key" in mapping`` (a name or attribute chain) when the key is a config field whose code default leaves it off
    and nothing else in the repository sets it on."""
    node = parse_expr(guard)
    if node is None:
        return False
    terms = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]
    for t in terms:
        if _key_in_empty_section(facts, t):
            return True  # ``"monitor_config" in config.ds_config.keys()`` with ``ds_config`` defaulting to ``{}``
        if (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.In)
                and isinstance(t.left, ast.Constant) and isinstance(t.left.value, str)
                and _plain_chain(t.comparators[0])):
            # ``if "offload_policy" in strategy_kwargs:``: the branch runs only for a run that names the key; with no
            # setting of it but code defaults that leave it off (``offload_policy: CPUOffloadPolicy | None = None``), none does
            sets = [x for x in facts.settings(t.left.value) if not checkpoint_gather(x, t.left.value)]
            if (any(x.source in ("field-default", "argparse-default") for x in sets)
                    and not any(_sets_key_on(x, t.left.value, path) for x in sets)
                    and not facts.config_under(t.left.value)):  # a YAML recipe's ``offload_policy:`` section names it
                return True
            continue
        if (isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "getattr" and len(t.args) == 3
                and not t.keywords and isinstance(t.args[1], ast.Constant) and isinstance(t.args[1].value, str)
                and isinstance(t.args[2], ast.Constant) and not t.args[2].value
                and _CONFIG_RECEIVER.search(ast.unparse(t.args[0]))):
            # ``getattr(config, 'load_moe_mm_projector', False)`` (TinyChart's MoE projector) with no setting of that name
            # and nothing assigning the attribute anywhere in the repository: the branch never runs. Only on a config
            # object: a model's or a library's arguments carry attributes the library sets (``getattr(model,
            # "supports_gradient_checkpointing", False)`` is True on every HF model)
            key = t.args[1].value
            if not facts.settings(key) and not facts.attr_assigns(key):
                return True
            continue
        if not (isinstance(t, ast.Call) and isinstance(t.func, ast.Attribute) and t.func.attr == "get"
                and 1 <= len(t.args) <= 2 and not t.keywords and isinstance(t.args[0], ast.Constant)
                and isinstance(t.args[0].value, str)):
            continue
        default = t.args[1] if len(t.args) == 2 else ast.Constant(None)
        if isinstance(default, ast.Constant) and not default.value and not facts.settings(t.args[0].value):
            return True
    return False


#: a config object (``config``, ``self.config``, ``model_cfg``), as opposed to a model or an arguments object of a library
_CONFIG_RECEIVER = lazy_compile(r"(^|[._])(config|cfg|conf)$", re.I)
_EMPTY_MAPPING = lazy_compile(r"\s*(?:lambda\s*:\s*)?(?:\{\s*\}|dict\(\s*\)|dict)\s*")


def empty_section_gate(facts: Facts, guard: str | None) -> list[Any]:
    """The empty-mapping fields behind a guard's ``"key" in <section>`` term (see :func:`_key_in_empty_section`)."""
    node = parse_expr(guard) if guard else None
    if node is None:
        return []
    for t in node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]:
        fields = _key_in_empty_section(facts, t)
        if fields:
            return fields
    return []


def _key_in_empty_section(facts: Facts, t: ast.expr) -> list[Any]:
    """``"monitor_config" in config.ds_config.keys()`` (or ``in config.ds_config``) where ``ds_config`` is a dataclass field
    whose default is an empty mapping (``field(default_factory=lambda: {})``) and nothing in the repository names the key
    (no setting, config key or config section of that name): a run of what ships never has the key."""
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.In)
            and isinstance(t.left, ast.Constant) and isinstance(t.left.value, str)):
        return []
    m = t.comparators[0]
    if isinstance(m, ast.Call) and isinstance(m.func, ast.Attribute) and m.func.attr == "keys" and not m.args:
        m = m.func.value
    if not (isinstance(m, ast.Attribute) and _plain_chain(m)):
        return []
    fields = [fl for fl in facts.fields(m.attr) if fl.name == m.attr and not _TEST_FILE.search(fl.path)]
    if not fields or not all((isinstance(fl.default, Expr) and fl.default.text and _EMPTY_MAPPING.fullmatch(fl.default.text))
                             or fl.default == {} for fl in fields):
        return []
    key = t.left.value
    if facts.settings(key) or facts.config(key) or facts.config_under(key) or facts.attr_assigns(key):
        return []
    return fields


def set_under_off_branch(facts: Facts, s: Setting) -> bool:
    """A Python dict item set inside ``if`` branches whose condition is off (``engine_kwargs["enable_lora"] = True`` under
    ``if cfg.trainer.policy.model.lora.rank > 0:`` with ``rank: 0``): not a value any run gets."""
    if s.source != "config" or not s.path.endswith(".py"):
        return False
    return any(e.path == s.path and e.line == s.line and e.guard and guard_off(facts, e) for e in facts.config(s.key))


def _set_only_when_off(facts: Facts, name: str, path: str, none: bool = False) -> tuple[bool | None, list[Any]]:
    """A state flag the class starts off (``self._cp_enabled = False`` in ``__init__``, read through a ``cp_enabled``
    property) and turns on only in a method whose every caller is switched off (``apply_cp``, called only under
    ``if cp_config is not None:`` with ``cp_config = None``): off, with those switches. Same file only; memoised per scan."""
    memo = facts._memo
    key = ("set-only-when-off", name, path, none)
    if key not in memo:
        memo[key] = (None, [])  # type: ignore[assignment]
        assigns = [a for n in (name, "_" + name) for a in facts.attr_assigns(n) if a.path == path and a.target.startswith("self.")]
        if none:  # ``self._cp_load_balancer = None`` in ``__init__``, a value only in ``apply_cp``: ``is not None`` is off
            on_ = [a for a in assigns if a.value is not None]
            starts_off = any(a.value is None and a.func == "__init__" for a in assigns)
        else:
            on_ = [a for a in assigns if truthy(a.value) is True]
            starts_off = any(truthy(a.value) is False and a.func == "__init__" for a in assigns)
        out: list[Any] = []
        if on_ and starts_off and all(a.func and a.func != "__init__" for a in on_):
            for a in on_:
                gate = callers_off(facts, a, hops=3)
                if not gate:
                    out = []
                    break
                out += [g for g in gate if g not in out]
        memo[key] = (False, out) if out else (None, [])  # type: ignore[assignment]
    return memo[key]  # type: ignore[return-value]


def callers_off(f: Facts, c: Any, hops: int = 1) -> list:
    """Code inside a helper function (``compile_loss(loss)``, ``freeze_transformer_layers(model, n)``) whose every caller
    sits behind a flag that is off: those callers' switches. Empty when the helper is called unconditionally, not at all,
    or from an unknown place. ``hops`` > 1 also follows an unguarded caller up to its own callers (``convert_to_float8_training``
    in ``Float8Config.apply_float8_linear``, called by ``Transformer.apply_fp8``, called only under ``if float8_config is not
    None:``)."""
    func = getattr(c, "func", None)
    if func == "__init__" and hops > 1:
        callers = _constructions(f, c.path)
    elif not func or func.startswith("__"):
        return []
    else:
        callers = _callers(f, func) or _partial_callers(f, func)
    out: list = []
    for x in callers:
        gated = guard_off(f, x) or (callers_off(f, x, hops - 1) if hops > 1 else [])
        if not gated:
            out = []
            break
        out += [g for g in gated if g not in out]
    outer = getattr(c, "outer", None)
    if not out and outer and outer != func:
        # a closure (``def make_norm(...)`` inside ``def load_kernels():``) exists only once the function that defines it has
        # run: its callers (``kernels.make_norm(...)`` anywhere) do not matter when every caller of that function is off
        out = callers_off(f, _Site(c.path, c.line, outer), hops)
    return out


def _callers(f: Facts, func: str) -> list:
    """The calls of the project's function or method ``func`` from elsewhere: not another library's function of the same
    name (OpenCLIP's ``TrainingTask.compile`` beside ``torch.compile(...)`` and ``re.compile(...)``: a call through an
    imported module that is not a file of the tree)."""
    out = []
    for x in f.calls(func):
        if x.func == func:
            continue
        root = x.name.split(".", 1)[0]
        ff = f.files.get(x.path)
        if "." in x.name and ff is not None and any(i.module.split(".", 1)[0] == root and not i.name for i in ff.imports) \
                and not _own_module(f, x.name):
            continue
        out.append(x)
    return out


#: a ``functools.partial`` bound to a plain name (``apply_selective_ac = partial(apply_fsdp_checkpointing, block=block)``)
PARTIAL_BINDING = lazy_compile(r"^\s*([A-Za-z_]\w*)\s*=\s*(?:functools\.)?partial\(")


def _partial_callers(f: Facts, func: str) -> list:
    """The calls of the names a function is bound to with ``functools.partial`` when nothing calls it by its own name
    (fms-fsdp: ``apply_selective_ac = partial(apply_fsdp_checkpointing, block=block)``, returned to the training script,
    which calls ``apply_selective_ac(model, p=...)`` only under ``if cfg.fsdp_activation_checkpointing:``). Empty when a
    binding is not a plain name, or a bound name is called nowhere (handed on as a value: its users are not known)."""
    names: set[str] = set()
    for c in f.calls("partial"):
        first = c.args[0] if c.args else None
        if isinstance(first, Expr) and (first.ref or first.text) == func:
            m = PARTIAL_BINDING.match(c.text)
            if m is None:
                return []
            names.add(m.group(1))
    out: list = []
    for n in sorted(names):
        calls = [x for x in f.calls(n) if x.short == n]
        if not calls or _handed_on(f, n):
            return []
        out += calls
    return out


def _handed_on(f: Facts, name: str) -> bool:
    """A name passed to a call as a value (lingua ``async_iterator(args.prefetch_size, data_builder)`` beside the
    ``data_builder()`` of its other branch): its users are not known."""
    return any(isinstance(v, Expr) and (v.ref or v.text) == name for c in f.all_calls() if name in c.text
               for v in (*c.args, *c.kwargs.values()))


def constructions_off(f: Facts, c: Any) -> list:
    """Code in a method of a class that every construction in the project builds behind a switch that is off (ms-swift's
    LISA ``DynamicLayerActivationCallback``, built only under ``if args.lisa_activated_layers > 0:`` with the default 0:
    its ``freeze_all_layers``, reached from ``__init__`` and from the framework-called ``on_step_begin``, never runs): those
    switches. Empty when the site is not in a method (the function is neither ``__init__``, a name a framework calls, nor
    called on ``self`` in its file), the class is built nowhere, or it is handed on as a value or subclassed (a
    registry, ``callbacks=[Cls]``, ``class Sub(Cls):``), when its users may build it."""
    func = getattr(c, "func", None)
    ff = f.files.get(getattr(c, "path", ""))
    if not func or ff is None:
        return []
    cls = class_at(f, c.path, c.line)
    if not cls or not (func == "__init__" or _FRAMEWORK_CALLED.match(func) or any(x.name == f"self.{func}" for x in ff.calls)):
        return []
    builds = [x for x in f.calls(cls) if x.short == cls and not _TEST_FILE.search(x.path)]
    if not builds or any(r.name.rsplit(".", 1)[-1] == cls and not _CLASS_TEST.search(r.text) and not _TEST_FILE.search(r.path)
                         for r in f.refs(cls)):
        return []
    out: list = []
    for b in builds:
        gate = guard_off(f, b) or callers_off(f, b)
        if not gate:
            return []
        out += [g for g in gate if g not in out]
    return out


def callers_off_chain(f: Facts, c: Any, depth: int = 4) -> list:
    """Like :func:`callers_off`, through a chain of methods that hand the call on unguarded: code in a helper reached only
    through methods that every caller reaches behind a flag that is off (OpenCLIP: ``param.requires_grad = False`` in
    ``TimmModel.lock``, called by ``CLIP.lock_image_tower`` and by ``TextTransformer.lock`` via ``lock_text_tower``, which
    the training script calls only under ``if args.lock_image:`` / ``if args.lock_text:``, store_true flags). A function
    already on the chain adds no caller (a cycle of methods with no live entry stays off); a module-level or ``__init__``
    caller, a function nobody calls, a name called from more than eight places or a chain deeper than ``depth`` is a live
    entry. Those switches, or empty."""
    func = getattr(c, "func", None)
    if not func or func.startswith("__"):
        return []
    out = _chain_gates(f, func, depth, frozenset())
    return out or []


def _chain_gates(f: Facts, func: str, depth: int, seen: frozenset[str]) -> list | None:
    """The switches that close every way into ``func``; None when some caller reaches it with no switch off."""
    if func in seen:
        return []
    callers = _callers(f, func)
    if depth <= 0 or not callers or len(callers) > 8:
        return None
    out: list = []
    for x in callers:
        gated = guard_off(f, x)
        if not gated:
            if not x.func or x.func.startswith("__"):
                return None
            gated = _chain_gates(f, x.func, depth - 1, seen | {func})
            if gated is None:
                return None
        out += [g for g in gated if g not in out]
    return out


@dataclass(frozen=True, slots=True)
class _Site:
    """A place in a function, to ask :func:`callers_off` about the function that defines a closure."""
    path: str
    line: int
    func: str
    guard: None = None


def _constructions(f: Facts, path: str) -> list:
    """Where the classes of ``path`` are constructed: calls of a CamelCase name imported from that module
    (``.pipeline_train_module.TransformerPipelineTrainModule(...)`` for ``.../pipeline_train_module.py``), then every call of
    those class names wherever imported from (re-exports). Empty when none is found: an ``__init__`` runs when its class is
    built, and without its constructions nothing is known."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    if stem == "__init__":
        return []
    classes = {x.short for x in f.calls(stem + ".*") if x.name.rsplit(".", 2)[-2:-1] == [stem] and x.short[:1].isupper()}
    out: list = []
    for cls in sorted(classes):
        out += [x for x in f.calls(cls) if x.short == cls and not _TEST_FILE.search(x.path)]
    return out


_CMP = {ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b, ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
        ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
        ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
        # ``if self.config.peft_config is not None:`` with ``peft_config: Optional[Dict] = None`` (arctic-training)
        ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b}
_ORDER = (ast.Gt, ast.GtE, ast.Lt, ast.LtE)
#: the ``else`` of an equality/membership test with constants (a backend chosen by a string) reads as the negated test;
#: not ``is None`` (``if _patch is None: return`` after an ``except ImportError: _patch = None`` fallback) nor orderings
_NEGATED: dict[type, type] = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In}
_NEGATED_ORDER: dict[type, type] = {ast.Gt: ast.LtE, ast.GtE: ast.Lt, ast.Lt: ast.GtE, ast.LtE: ast.Gt}
_TEST_FILE = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$")
_UNKNOWN = object()


def _operand(facts: Facts, node: ast.expr) -> Any:
    """The constant a comparison's right side stands for: a literal (``0``, ``"pt"``, ``None``), a tuple/list/set of them,
    or an enum member (``PEFT_METHOD.LORA.value`` / ``PEFT_METHOD.LORA``) whose class body assigns it a constant
    (``LORA = "lora"``); ``_UNKNOWN`` otherwise."""
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool) and isinstance(node.value, (int, float, str, type(None))):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = tuple(_operand(facts, e) for e in node.elts)
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else items
    if isinstance(node, ast.Attribute):
        inner = node.value if node.attr == "value" else node
        if isinstance(inner, ast.Attribute) and isinstance(inner.value, (ast.Name, ast.Attribute)):
            owner = inner.value.attr if isinstance(inner.value, ast.Attribute) else inner.value.id
            member = [x for x in facts.settings(inner.attr) if x.source == "field-default" and x.key == f"{owner}.{inner.attr}"]
            vals = {x.value for x in member if isinstance(x.value, (int, float, str)) and not isinstance(x.value, bool)}
            if len(vals) == 1:
                return vals.pop()
    return _UNKNOWN


def _holds(op: ast.cmpop, value: Any, right: Any) -> bool | None:
    """Whether ``value <op> right`` holds; None when the types do not compare (a string against a number)."""
    if isinstance(op, _ORDER):
        n = as_number(value)
        if n is None or not isinstance(right, (int, float)):
            return None
        return _CMP[type(op)](n, right)
    if isinstance(op, (ast.In, ast.NotIn)) and not isinstance(right, tuple):
        return None
    if isinstance(op, (ast.Is, ast.IsNot)):
        if right is not None:
            return None
        if isinstance(value, str) and value.strip().lower() in ("none", "null", "~"):
            value = None
        return _CMP[type(op)](value, right)
    if isinstance(value, str) and not isinstance(right, str) and not isinstance(right, tuple):
        n = as_number(value)
        if n is None:
            return None if right is not None else _CMP[type(op)](value, right)
        value = n
    return _CMP[type(op)](value, right)


def comparison_off(facts: Facts, call: Any) -> list[Any]:
    """:func:`_comparison_off` of a call's guard: the settings that make an and-ed comparison of it false."""
    guard = getattr(call, "guard", None)
    return _comparison_off(facts, guard, call.path) if guard else []


#: Megatron-LM options whose defaults live in Megatron's own ``arguments.py``, which a project that depends on Megatron
#: (FlagScale, Pai-Megatron-Patch's submodule) does not ship: ``--empty-unused-memory-level`` defaults to 0
_MEGATRON_ARG_DEFAULTS: dict[str, Any] = {"empty_unused_memory_level": 0}


def _library_default_off(facts: Facts, guard: str) -> bool:
    """An and-ed comparison of ``args.<option>`` with a constant that the option's Megatron default makes false, in a
    project that imports Megatron and neither defines nor sets that option (FlagScale's ``if
    args.empty_unused_memory_level >= 1: torch.cuda.empty_cache()`` in its copy of Megatron's training loop)."""
    node = parse_expr(guard)
    if node is None:
        return False
    terms = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]
    for t in terms:
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and type(t.ops[0]) in _CMP and isinstance(t.left, ast.Attribute)
                and isinstance(t.left.value, ast.Name) and t.left.value.id == "args" and t.left.attr in _MEGATRON_ARG_DEFAULTS):
            continue
        right = _operand(facts, t.comparators[0])
        if right is _UNKNOWN or facts.settings(t.left.attr) or not facts.imports("megatron"):
            continue
        if _holds(t.ops[0], _MEGATRON_ARG_DEFAULTS[t.left.attr], right) is False:
            return True
    return False


def _comparison_off(facts: Facts, guard: str, path: str) -> list[Any]:
    """An and-ed comparison of a setting with constants that every effective value of that setting makes false:
    ``args.lora_dim > 0`` with ``--lora_dim`` defaulting to 0 (DeepSpeed-Chat), ``lora_rank > 0`` with ``--ds.lora.rank``
    default 0 (OpenRLHF), ``peft_method in (PEFT_METHOD.LORA.value, ...)`` / ``peft_method == "pt"`` with
    ``--peft_method`` default ``"none"`` (fms-hf-tuning), and no launch or config setting another value: those settings.
    Empty when any value is unknown, not a constant, or makes the term true."""
    node = parse_expr(guard)
    if node is None:
        return []
    terms = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]
    for t in terms:
        if isinstance(t, ast.BoolOp) and isinstance(t.op, ast.Or):
            # ``elif precision == "amp_bfloat16" or precision == "amp_bf16":`` with ``--precision`` left at ``fp32``: off
            # when every alternative is off
            alternatives = [_comparison_off(facts, ast.unparse(v), path) for v in t.values]
            if all(alternatives):
                return list(dict.fromkeys(x for a in alternatives for x in a))
            continue
        # the ``else`` of ``if self.env_type == 'pytorch':`` is recorded as ``not (self.env_type == 'pytorch')``: the
        # comparison with the negated operator
        if (isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and isinstance(t.operand, ast.Compare)
                and len(t.operand.ops) == 1 and type(t.operand.ops[0]) in _NEGATED):
            t = ast.Compare(left=t.operand.left, ops=[_NEGATED[type(t.operand.ops[0])]()], comparators=t.operand.comparators)
        elif (isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and isinstance(t.operand, ast.Compare)
                and len(t.operand.ops) == 1 and type(t.operand.ops[0]) in _NEGATED_ORDER):
            # the ``else`` of ``if train_cfg.lr_vision_backbone > 0:`` (nanoVLM's freeze branch): for the numbers compared
            # below (None values left out, as ``None > 0`` raises) it is the opposite ordering
            t = ast.Compare(left=t.operand.left, ops=[_NEGATED_ORDER[type(t.operand.ops[0])]()], comparators=t.operand.comparators)
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and type(t.ops[0]) in _CMP):
            continue
        left, op = t.left, t.ops[0]
        if isinstance(left, ast.NamedExpr):  # ``(lb := self._cp_load_balancer) is not None``
            left = left.value
        if (isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute) and left.func.attr == "get" and left.args
                and isinstance(left.args[0], ast.Constant) and isinstance(left.args[0].value, str) and left.args[0].value.isidentifier()):
            # ``self.config.model.get('lora_rank', 0) > 0`` (verl's SFT trainer): the setting read by its key
            left = ast.Attribute(value=left.func.value, attr=left.args[0].value, ctx=ast.Load())
        right = _operand(facts, t.comparators[0])
        if right is _UNKNOWN or (isinstance(op, _ORDER) and not isinstance(right, (int, float))):
            continue
        name = left.attr if isinstance(left, ast.Attribute) else left.id if isinstance(left, ast.Name) else None
        if not name:
            continue
        if isinstance(op, ast.IsNot) and right is None and isinstance(left, ast.Attribute) and not facts.effective(name):
            state, gates = _set_only_when_off(facts, name, path, none=True)
            if state is False and gates:
                return gates
        settings = _config_paths(facts, name, _through_args(facts, [x for x in facts.effective(name, near=path) if not _TEST_FILE.search(x.path)]))
        # a comparison that reads the config by its full path (``cfg.trainer.policy.model.lora.rank > 0``): that key decides
        chain = _ARGS_CHAIN.search(ast.unparse(left)) if isinstance(left, ast.Attribute) else None
        if chain is not None and "." in chain.group(1):
            exact = [x for x in settings if x.source == "config" and x.key.lower() == chain.group(1).lower()]
            settings = exact or settings
        # a value that only converts the setting itself on its way through (``kwargs["autocast_precision"] =
        # cast(DType, autocast_precision).as_pt()`` under ``is not None``) forwards it: the other settings decide
        own = re.compile(rf"\b{re.escape(name)}\b")
        forwards = [x for x in settings if isinstance(x.value, Expr) and own.search(x.value.text or "")]
        if forwards:
            rest = [x for x in settings if x not in forwards]
            # only forwards took effect: they shadowed the code defaults they carry (``autocast_precision: Optional[DType] = None``)
            settings = rest or [x for x in facts.settings(name) if x.source in ("field-default", "argparse-default")
                                and not isinstance(x.value, Expr) and not _TEST_FILE.search(x.path)]
        settings = _defaulted_attrs(facts, settings)
        if not settings and isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name) and left.value.id == "self":
            value, sites = _getattr_default(facts, name)
            if sites and _holds(op, value, right) is False:
                return sites
        if not settings and isinstance(left, ast.Attribute) and isinstance(left.value, (ast.Attribute, ast.Name)):
            # ``config.peft_config.peft_type is not None`` with ``peft_config: PeftConfig = field(default_factory=lambda:
            # PeftConfig())``: a library config built with no arguments holds that library's default
            holder = left.value.attr if isinstance(left.value, ast.Attribute) else left.value.id
            value, sites = bare_section_default(facts, holder, name)
            if sites and _holds(op, value, right) is False:
                return sites
            continue
        if not settings and isinstance(left, ast.Name):
            settings = _local_get_default(facts, left.id, path)
        if not settings or any(isinstance(x.value, (Expr, list, tuple, dict)) for x in settings):
            continue
        if isinstance(op, _ORDER) and any(x.source == "assign" and x.path == path for x in settings) and not any(
                x.source == "call" and x.path == path for x in settings):
            # a script's own variable compared by order (nanoGPT ``if iter_num > 0:`` after ``iter_num = 0`` at the top,
            # counted up by ``iter_num += 1`` in its ``while True:`` loop): a counter's start, not a setting; a module
            # constant the script also hands to a call under its own name (lit-llama ``devices = 1`` ... ``L.Fabric(
            # devices=devices, strategy=(DeepSpeedStrategy(...) if devices > 1 else "auto"))``) is the run's setting
            continue
        if isinstance(op, _ORDER) and any(x.source == "assign" and x.path == path for x in settings):
            # that file's own value, not other scripts' (finetune/full.py's 4); its assignment first
            settings = sorted((x for x in settings if x.path == path), key=lambda x: x.source != "assign")
        if isinstance(op, _ORDER) and any(x.value is None for x in settings):
            # ``None > 0`` raises: a None default (nanoVLM's ``--lr_vision_backbone`` default None, copied onto the config
            # only ``if args.lr_vision_backbone is not None``) never reaches an order comparison; the other values decide,
            # the config class's own default when the None was the nearest setting
            settings = [x for x in settings if x.value is not None] or [
                x for x in facts.effective(name) if x.value is not None and not isinstance(x.value, Expr) and not _TEST_FILE.search(x.path)]
        held = [_holds(op, x.value, right) for x in settings]
        if all(h is False for h in held) and not _section_given(facts, op, right, name) and not _launched_on(facts, settings, name, op, right):
            return settings
    return []


#: a local bound to a read of a config mapping: ``lora_r = cfg.get(``
#: (the run's config object, not a mapping the code reads from elsewhere: LLaMA-Factory's ``quant_method =
#: quantization_config.get("quant_method", "")`` reads the checkpoint's config)
_LOCAL_GET = lazy_compile(r"^\s*(\w+)\s*=\s*(self\.)?(cfg|config|conf|args|opt|opts|hparams|model_cfg|train_cfg|run_cfg|"
                          r"model_config|kwargs)(\.\w+)*\.get\(")


def _local_get_default(facts: Facts, name: str, path: str) -> list[Any]:
    """The settings a local of ``path`` takes when it is read from a config mapping with a default (ST-LLM's
    ``lora_r = cfg.get("lora_r", 0)`` above ``if lora_r > 0:``): the key's settings elsewhere (a recipe's ``lora_r: 8``),
    else the default at that line, as a code default. Empty when the local is bound otherwise or more than once."""
    ff = facts.files.get(path)
    if ff is None:
        return []
    reads = [c for c in ff.calls if c.short == "get" and (m := _LOCAL_GET.match(c.text)) is not None and m.group(1) == name]
    if len(reads) != 1 or len(reads[0].args) != 2 or any(a.name == name for a in ff.assigns):
        return []
    c = reads[0]
    key, default = c.args
    if not isinstance(key, str) or not key.isidentifier() or isinstance(default, Expr):
        return []
    others = [x for x in facts.effective(key) if not _TEST_FILE.search(x.path) and not (x.path == path and x.line == c.line)]
    if others:
        return others
    return [Setting(key, default, c.path, c.line, "argparse-default", c.text, key, 0)]


def _launched_on(facts: Facts, settings: list[Any], name: str, op: ast.cmpop, right: Any) -> bool:
    """Code defaults that decide a comparison only because the launches that set the name disagree on its value (RWKV-LM:
    ``--magic_prime 2926181`` in two launches, ``81082817`` in two others, so the recipes' vote falls back to the default of
    0), while every one of those launches makes the comparison true (``args.magic_prime > 0``): the branch runs."""
    if not settings or not all(x.source in ("argparse-default", "field-default") for x in settings):
        return False
    launched = [x for x in facts.settings(name) if x.source == "launcher" and not _TEST_FILE.search(x.path)]
    if not launched or not all(_holds(op, x.value, right) is True for x in launched):
        return False
    # ... and every launch of those scripts passes it (LLaVA: one QLoRA launch's ``--bits 4`` beside launches that keep the
    # default 16 is a minority recipe, not the run)
    scripts = {(x.script or "").lstrip("./") for x in launched}
    return all(any(_norm(k) == _norm(name) for k in launch.script_args)
               for launch in facts.launches() if (launch.script or "").lstrip("./") in scripts)


#: defaults of library config classes a project keeps as a section built with no arguments (``peft_config: PeftConfig =
#: field(default_factory=lambda: PeftConfig())``): PEFT's base ``PeftConfig`` names no adapter type, transformers'
#: ``BitsAndBytesConfig`` quantizes nothing
_LIBRARY_CONFIG_DEFAULTS: dict[tuple[str, str], Any] = {
    ("PeftConfig", "peft_type"): None,
    ("BitsAndBytesConfig", "load_in_4bit"): False,
    ("BitsAndBytesConfig", "load_in_8bit"): False,
}
_BARE_CONSTRUCTION = lazy_compile(r"\s*(?:lambda\s*:\s*)?(?:[A-Za-z_]\w*\.)*([A-Z]\w*)(?:\(\s*\))?\s*")


def bare_section_default(facts: Facts, holder: str, name: str) -> tuple[Any, list[Any]]:
    """``(value, [the section's field])`` when ``holder`` is a dataclass field whose default is a library config class
    built with no arguments (``PeftConfig()``, ``default_factory=BitsAndBytesConfig``) and that class leaves ``name`` at a
    known default (``_LIBRARY_CONFIG_DEFAULTS``), and nothing in the repository sets ``name`` (a config key, an argument,
    an assignment to ``<holder>.<name>``); ``(None, [])`` otherwise."""
    found: list[Any] = []
    values: set[Any] = set()
    for fl in facts.fields(holder):
        if fl.name != holder or _TEST_FILE.search(fl.path):
            continue
        d = fl.default
        m = _BARE_CONSTRUCTION.fullmatch(d.text) if isinstance(d, Expr) and d.text else None
        if m is None or (m.group(1), name) not in _LIBRARY_CONFIG_DEFAULTS:
            return None, []
        values.add(_LIBRARY_CONFIG_DEFAULTS[(m.group(1), name)])
        found.append(fl)
    if len(values) != 1 or facts.attr_assigns(f"{holder}.{name}"):
        return None, []
    # a run that sets the value, or hands the section another config (``Config(peft_config=LoraConfig(r=8))``)
    if any(not _TEST_FILE.search(x.path) for x in facts.settings(name)):
        return None, []
    if any(x.source != "field-default" and not _TEST_FILE.search(x.path) for x in facts.settings(holder)):
        return None, []
    return values.pop(), found


#: ``cfg.algorithm.get("entropy_op_type", "flash_attn")``: a config read with a constant default
_DEFAULTED_GET = lazy_compile(r"""\s*[\w.]+\.get\(\s*["'](\w+)["']\s*,\s*(?:"([^"]*)"|'([^']*)'|(-?\d+(?:\.\d+)?))\s*\)\s*$""")


def _defaulted_attrs(facts: Facts, settings: list[Setting]) -> list[Setting]:
    """Replace a call keyword that hands on an attribute of its own object (``op_type=self.entropy_op_type``) by that
    attribute's assignments in the same file, when every one reads a config key with a constant default outside any ``if``
    (``self.entropy_op_type = cfg.algorithm.get("entropy_op_type", "flash_attn")``) and nothing in the repository sets the
    key (no config, launch, option or code default): each stands for its default. Kept as is otherwise."""
    out: list[Setting] = []
    for x in settings:
        v = x.value
        m = re.fullmatch(r"self\.(\w+)", v.text or "") if isinstance(v, Expr) and x.source == "call" else None
        if m is None:
            out.append(x)
            continue
        attr = m.group(1)
        assigns = [a for a in facts.attr_assigns(attr) if a.path == x.path and a.target == f"self.{attr}"]
        values: list[Setting] = []
        for a in assigns:
            g = _DEFAULTED_GET.match(a.value.text or "") if isinstance(a.value, Expr) and not a.guard else None
            if g is None or facts.settings(g.group(1)) or facts.config(g.group(1)):
                values = []
                break
            num = g.group(4)
            const: Any = (float(num) if "." in num else int(num)) if num is not None else (
                g.group(2) if g.group(2) is not None else g.group(3))
            values.append(Setting(attr, const, a.path, a.line, "assign", a.text, f"{attr}", 2))
        out += values or [x]
    return out


_ARGS_CHAIN = lazy_compile(r"(?:^|\.)(?:args|cfg|config|opt|opts|hparams)\.([A-Za-z_][\w.]*)$")


def _through_args(facts: Facts, settings: list[Setting]) -> list[Setting]:
    """Replace a call keyword that reads a parsed option through another object (``lora_rank=strategy.args.ds.lora.rank``,
    OpenRLHF) by that option's effective settings: the argparse options whose flag ends with the chain after ``args.``
    (``--ds.lora.rank``), so that a plain ``rank`` (the process rank) is not taken for it. Kept as is when nothing matches."""
    out: list[Setting] = []
    for s in settings:
        m = _ARGS_CHAIN.search(s.value.text) if isinstance(s.value, Expr) and not s.value.ref and s.source == "call" else None
        tail = m.group(1).lower().replace("-", "_") if m else None
        if tail is None and s.source == "argparse-default" and "." in s.key:  # ``--ds.lora.rank``: a launch may pass it
            tail = s.key.lstrip("-").lower().replace("-", "_")
        if tail:
            launched = [x for x in facts.effective(tail) if x.source == "launcher"]
            found = launched or [x for x in facts.effective(tail.rsplit(".", 1)[-1]) if x.source in ("argparse-default", "config")
                                 and x.key.lstrip("-").lower().replace("-", "_").endswith(tail)]
            if found:
                out += [x for x in found if x not in out]
                continue
        out.append(s)
    return out


def _config_paths(facts: Facts, name: str, settings: list[Setting]) -> list[Setting]:
    """Settings of ``name`` narrowed to the config keys its call keywords read by their full path: ``lora_rank=self.cfg.
    trainer.policy.model.lora.rank`` reads the Hydra YAML's ``trainer: policy: model: lora: rank: 0``, not a ``{"rank": rank}``
    dict of a checkpoint helper that only shares the last segment. Unchanged unless every keyword passing ``name`` reads a
    config path that a config file holds."""
    tails: set[str] = set()
    for c in facts.calls_with_kw(name):
        if _TEST_FILE.search(c.path):
            continue
        for k, v in c.kwargs.items():
            if k.lower().replace("-", "_") != name.lower():
                continue
            m = _ARGS_CHAIN.search(v.text) if isinstance(v, Expr) else None
            if m is None or "." not in m.group(1):
                return settings
            tails.add(m.group(1).lower())
    keep = [s for s in settings if s.source == "config" and s.key.lower() in tails]
    return keep if keep and {s.key.lower() for s in keep} == tails else settings


_COMPARISON = lazy_compile(r"(>=?|<=?|==|!=|\bis\b|\bin\b)")
_CFG_GET = lazy_compile(r"""\.get\(\s*["'](\w+)["']\s*(?:,\s*(True|False|None|0|1)\s*)?\)""")


def _forwarded_flag(facts: Facts, name: str, path: str) -> tuple[bool | None, list[Any]]:
    """A flag the same file copies from the run config: ``self._model_compile = cfg.get("compile", False)`` (torchtune),
    ``self.use_compile = args.compile``. Its state is that key's (or the ``.get`` default when nothing sets the key).
    Memoised per scan (the facts' shared store) and file: many calls sit under the same few flags."""
    memo = facts._memo  # per view, like effective(): a view's suppressions may differ
    key = ("forwarded-flag", name, path)
    if key not in memo:
        memo[key] = (None, [])  # type: ignore[assignment]  # a flag forwarded in a cycle resolves to unknown
        memo[key] = _forwarded_flag_uncached(facts, name, path)  # type: ignore[assignment]
    return memo[key]  # type: ignore[return-value]


def _forwarded_flag_uncached(facts: Facts, name: str, path: str) -> tuple[bool | None, list[Any]]:
    for a in facts.attr_assigns(name):
        if a.path != path or not isinstance(a.value, Expr):
            continue
        # ``self._is_lora = self.model_config.lora_rank > 0`` (verl) with ``lora_rank: 0`` and nothing raising it
        off = _comparison_off(facts, a.value.text, path) if _COMPARISON.search(a.value.text) else []
        if off:
            return False, off
        m = _CFG_GET.search(a.value.text)
        key = m.group(1) if m else a.value.ref
        if not key or key == name:
            continue
        state = flag_state(facts, key)
        if state is not None:
            return state, facts.effective(key)
        if m and m.group(2) and not facts.settings(key):
            return truthy(m.group(2)), [a]
    return None, []



def value_on(facts: Facts, v: Any) -> bool | None:
    """Whether a call keyword's value turns a feature on, following ``args.x`` to the effective ``x``."""
    ref = getattr(v, "ref", None)
    if ref:
        return flag_state(facts, ref)
    text = getattr(v, "text", None)
    if text is not None:
        # ``disable=not cfg.reduce_generation_overhead`` (lingua's generator): the negation of the flag's state
        node = parse_expr(text) if text.startswith("not ") else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and isinstance(node.operand, (ast.Name, ast.Attribute)):
            name = node.operand.id if isinstance(node.operand, ast.Name) else node.operand.attr
            state = flag_state(facts, name)
            return None if state is None else not state
        return None
    return truthy(v)


# --- components a config-driven registry builds only when a config names them -----------------------------------

#: a registry table: the same callee called this many times in one file, each with string keys and a callable
_REGISTRY_MIN = 3


def _registry_tables(f: Facts) -> dict[str, list[Any]]:
    """Registry entries by callee: ``ComponentEntity("model", "compiled", maybe_model_list(ModelFactory.get_compiled_model),
    CompiledModelConfig)``, the same callee called at least three times in one file, each with string keys and a callable
    passed by reference (not called). Cached on the facts."""
    cache = f._s.setdefault("_registry_tables", {})
    if "tables" in cache:
        return cache["tables"]
    groups: dict[tuple[str, str], list[Any]] = {}
    for c in f.calls_selected("registry_shape"):  # two or more arguments, a string and a reference among them
        groups.setdefault((c.path, c.name), []).append(c)
    tables = {f"{p}::{n}": cs for (p, n), cs in groups.items() if len(cs) >= _REGISTRY_MIN}
    cache["tables"] = tables
    return tables


def _selected_names(f: Facts, registry_files: set[str]) -> set[str]:
    """Strings a run could select a registry entry by: config values (YAML/JSON/TOML), settings, and string arguments of
    calls outside the registry's own files (``build_component("compiled")``)."""
    cache = f._s.setdefault("_registry_tables", {})
    if "selected" in cache:
        return cache["selected"]
    out: set[str] = set()
    for e in f.records("configs"):
        vals = e.value if isinstance(e.value, tuple) else (e.value,)
        out.update(v for v in vals if isinstance(v, str))
    for c in f.calls_selected("string_args"):  # the calls that pass a string: the others add nothing
        if c.path not in registry_files:
            out.update(a for a in c.args if isinstance(a, str))
            out.update(v for v in c.kwargs.values() if isinstance(v, str))
    cache["selected"] = out
    return out


def _registrations(f: Facts, func: str) -> tuple[list[Any], bool]:
    """The registry entries that pass ``func`` by reference, and whether a config or call selects any of them by its name."""
    ref = re.compile(rf"(^|[.(\s,]){re.escape(func)}\b(?!\s*\()")
    tables = _registry_tables(f)
    regs: list[Any] = []
    selected = False
    names: set[str] | None = None  # built only when something is registered
    for entries in tables.values():
        for c in entries:
            if not any(isinstance(a, Expr) and ref.search(a.text) for a in c.args):
                continue
            regs.append(c)
            # the entry's name: the string column with the most distinct values (``"compiled"``, not the kind ``"model"``)
            cols = [i for i, a in enumerate(c.args) if isinstance(a, str)]
            col = max(cols, key=lambda i: len({o.args[i] for o in entries if len(o.args) > i and isinstance(o.args[i], str)}))
            if names is None:
                names = _selected_names(f, {k.split("::", 1)[0] for k in tables})
            if c.args[col] in names:
                selected = True
    return regs, selected


def _module_names(path: str) -> list[str]:
    """The dotted module names a file may be imported as (``src/pkg/a/b.py`` -> ``src.pkg.a.b``, ``pkg.a.b``, ``a.b``)."""
    parts = path[:-3].split("/") if path.endswith(".py") else []
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return [".".join(parts[i:]) for i in range(len(parts) - 1)]


def registry_off(f: Facts, c: Any, _depth: int = 0) -> list[Any]:
    """Code that runs only when a config-driven component registry builds a component that no config names: the registry
    entries (``ComponentEntity("model", "compiled", maybe_model_list(ModelFactory.get_compiled_model), ...)`` with no
    ``variant_key: compiled`` anywhere). Followed through callers (every caller must be such code or behind a flag that
    is off) and, for a function nothing calls by name, through the module: every call into it from other files must be
    such code. Empty when the code runs unconditionally, is called from module level, or nothing registers it."""
    memo = f._s.setdefault("_registry_off", {})
    key = (c.path, getattr(c, "func", None))
    if key not in memo:
        memo[key] = []  # a cycle through this function proves nothing
        found = _registry_off(f, c.path, key[1], _depth)
        # only a chain that ends in a registry entry: callers behind a flag that is off alone are ``callers_off``'s
        entries = {(e.path, e.line) for es in _registry_tables(f).values() for e in es}
        memo[key] = found if any((getattr(x, "path", None), getattr(x, "line", None)) in entries for x in found) else []
    return memo[key]


def _registry_off(f: Facts, path: str, func: str | None, depth: int) -> list[Any]:
    if func is None or depth > 6:
        return []
    callers = [x for x in f.calls(func) if x.func != func]
    if callers:
        return _every_call_off(f, callers, depth)
    regs, selected = _registrations(f, func)
    if regs:
        return [] if selected else regs
    # not called by name and not registered (a static method picked as ``fn = Cls._apply_full_ac``): the module decides
    mods = tuple(m + "." for m in _module_names(path) if "." in m)
    if not mods:
        return []
    into = [x for x in f.calls_prefixed(mods) if x.path != path]
    return _every_call_off(f, into, depth) if into else []


def _every_call_off(f: Facts, calls: list[Any], depth: int) -> list[Any]:
    """The switches or unselected registry entries that keep every one of ``calls`` from running; empty when one runs."""
    out: list[Any] = []
    for x in calls:
        gated = guard_off(f, x) or registry_off(f, x, depth + 1)
        if not gated:
            return []
        out += gated
    return out


#: an option naming the training backend or data-parallel wrapper by value (skyrl-train ``trainer.strategy: fsdp2``, verl
#: ``actor.strategy: fsdp``, fairseq2 ``data_parallelism: Literal["ddp", "fsdp"] = "ddp"``)
_BACKEND_KEYS = ("strategy", "training_backend", "train_backend", "distributed_backend", "parallel_backend",
                 "data_parallelism", "data_parallel_type", "data_parallel_mode", "dp_type", "dp_mode")


def _backend_family(v: Any) -> str | None:
    if not isinstance(v, str):
        return None
    low = v.strip().lower()
    if low.startswith("deepspeed"):
        return "deepspeed"
    if low in ("fsdp", "fsdp1", "fsdp2"):
        return "fsdp"
    return low if low in ("ddp", "megatron") else None


_TOOL_DIR = lazy_compile(r"(^|/)(tools|benchmarks?|bench)/")


def backend_unselected(facts: Facts, family: str) -> list[Setting]:
    """The backend choices when none picks ``family`` ("deepspeed", "megatron", "fsdp"): skyrl-train composes DeepSpeed
    ZeRO-3 configs into every run and ships Megatron workers, but ``trainer.strategy: fsdp2`` runs neither (the workers are
    imported only when the strategy names them); fairseq2's ``to_fsdp2`` runs only when ``data_parallelism`` is "fsdp", and it
    defaults to "ddp". Empty when no backend option exists or one of its values picks ``family``. A run's own choice (config,
    launch) is cited first, then a declared default."""
    key = ("backend-unselected", family)
    memo = facts._memo
    if key not in memo:
        # a dict item of a tool script (NeMo-RL ``tools/refit_verifier.py``: ``"training_backend": "megatron"`` to check
        # weight refit) configures that tool, not the runs
        sel = [s for s in facts.effective(*_BACKEND_KEYS) if s.source != "call" and _backend_family(s.value)
               and not _TEST_FILE.search(s.path) and not (s.source == "config" and s.path.endswith(".py") and _TOOL_DIR.search(s.path))]
        off = [] if not sel or any(_backend_family(s.value) == family for s in sel) else sel
        if not sel:
            off = _registry_unselected(facts, family)
        memo[key] = sorted(off, key=lambda s: (s.source not in ("config", "launcher"),  # type: ignore[assignment]
                                               s.source not in ("field-default", "argparse-default"), s.path, s.line))
    return list(memo[key])


@dataclass(frozen=True, slots=True)
class _NameRegistry:
    """A name -> backend registry: a dict literal whose values are callables by reference (``STRATEGIES = {"local":
    load_local, "fsdp": load_accelerate}``), or a registering decorator with a name (``@register_strategy("fsdp")`` on a
    class). ``entries``: name -> what it registers (the callable's text, or the decorated class)."""

    name: str
    files: frozenset[str]  # files of the registry itself: a call in them is plumbing, not a run's choice
    modules: tuple[str, ...]  # what other files import the registry as
    entries: dict[str, str]
    decorator: str | None = None


def _file_modules(path: str) -> tuple[str, ...]:
    """:func:`_module_names`, and a top-level file's own stem (``strategies.py`` -> ``strategies``)."""
    names = _module_names(path)
    if not names and path.endswith(".py") and "/" not in path:
        names = [path[:-3]]
    return tuple(names)


def _name_registries(f: Facts) -> list[_NameRegistry]:
    """The name registries whose names include a training backend (``"ddp"``, ``"fsdp"``, ``"deepspeed"``, ``"megatron"``),
    outside tests. Memoised per scan, in the facts' shared dict (every check view finds it: 13 checks ask, and each view's own
    memo made them again, 0.1 s of a Megatron-LM scan; the query log records the memo's reads for each)."""
    found = f._s.get("_name_registries")
    if found is None:
        out: list[_NameRegistry] = []
        groups: dict[tuple[str, str], dict[str, str]] = {}
        for e in f.records("configs"):
            if (e.fmt == "python" and len(e.keys) == 2 and isinstance(e.keys[1], str) and isinstance(e.value, Expr)
                    and re.fullmatch(r"[A-Za-z_][\w.]*", e.value.text) and not _TEST_FILE.search(e.path)):
                groups.setdefault((e.path, str(e.keys[0])), {})[e.keys[1]] = e.value.text
        for (path, name), entries in groups.items():
            if len(entries) >= 2 and any(_backend_family(k) for k in entries):
                out.append(_NameRegistry(name, frozenset({path}), _file_modules(path), entries))
        by_deco: dict[str, tuple[set[str], dict[str, str]]] = {}
        at: dict[str, dict[tuple[int, str], Any]] = {}  # a file's first call with a string argument on each (line, name)
        for d in f.records("decorators"):
            if _TEST_FILE.search(d.path):
                continue
            if d.path not in at:
                found: dict[tuple[int, str], Any] = {}
                for c in f.files[d.path].calls:
                    if c.args and isinstance(c.args[0], str):
                        found.setdefault((c.line, c.name), c)
                at[d.path] = found
            c = at[d.path].get((d.line, d.name))
            if c is not None:
                files, entries = by_deco.setdefault(d.name, (set(), {}))
                files.add(d.path)
                entries[c.args[0]] = d.target
        for deco, (files, entries) in by_deco.items():
            if len(entries) >= 2 and any(_backend_family(k) for k in entries):
                mods = (deco.rsplit(".", 1)[0],) if "." in deco else tuple(m for p in sorted(files) for m in _file_modules(p))
                out.append(_NameRegistry(deco.rsplit(".", 1)[-1], frozenset(files), mods, entries, deco))
        found = f._s["_name_registries"] = out
    return found  # type: ignore[no-any-return]


def _registry_lookups(f: Facts, reg: _NameRegistry) -> list[tuple[Call, str]] | None:
    """(call, name) for every call into the registry's module from another file (``init_dist_strategy("local")``) that
    passes a registered name as a constant. None when such a call passes anything that is not a constant (a config or CLI
    value: the choice is the run's), or when no call names an entry."""
    found: list[tuple[Call, str]] = []
    for c in f.records("calls"):
        if c.path in reg.files or c.name == reg.decorator or _TEST_FILE.search(c.path) or c.name.rsplit(".", 1)[0] not in reg.modules:
            continue
        values = [*c.args, *c.kwargs.values()]
        if c.star_kwargs or any(isinstance(v, Expr) for v in values):
            return None
        found += [(c, v) for v in values if isinstance(v, str) and v in reg.entries]
    return found or None


def _named_elsewhere(f: Facts, names: set[str]) -> bool:
    """Whether a config file, a CLI default or a config-class default outside tests holds one of ``names`` as its value."""
    for e in f.records("configs"):
        if e.fmt != "python" and isinstance(e.value, str) and e.value in names and not _TEST_FILE.search(e.path):
            return True
    return any(isinstance(x.default, str) and x.default in names and not _TEST_FILE.search(x.path)
               for kind in ("arg_options", "fields") for x in f.records(kind))


def _registry_unselected(f: Facts, family: str) -> list[Setting]:
    """The lookups of a name -> backend registry that offers ``family`` (``"fsdp": load_accelerate``) when every lookup in
    the project passes a constant naming another entry (``init_dist_strategy("local")`` everywhere, ``"local"`` ->
    ``load_local``): the backend's class is an alternative, not the run. Empty when a lookup takes its name from a config or
    CLI value, or a config/CLI default names an entry that reaches the backend."""
    out: list[Setting] = []
    for reg in _name_registries(f):
        reach = {v for k, v in reg.entries.items() if _backend_family(k) == family}
        if not reach:
            continue
        lookups = _registry_lookups(f, reg)
        names = {k for k, v in reg.entries.items() if v in reach}
        if lookups is None or _named_elsewhere(f, names) or any(reg.entries[k] in reach for _, k in lookups):
            return []
        out += [Setting(reg.name, k, c.path, c.line, "call", c.text, f"{c.short}()", 2) for c, k in lookups]
    return out


#: a file or folder of inference, serving, evaluation or benchmark code (by its name), or a Hydra config group of the
#: rollout engine (verl ``trainer/config/rollout/rollout.yaml``: its keys are the rollout's)
#: (a demo script by its suffix too: VisualGLM's ``cli_demo_mp.py`` runs the chat demo with ``model_parallel_size: 2``; not a
#: folder so named: ROLL's ``examples/agentic_demo/`` holds agentic RL training recipes)
INFERENCE_PATH = lazy_compile(r"(^|/)(infer\w*|serv\w*|deploy\w*|generat\w*|chat\w*|demo\w*|eval\w*|bench\w*|api|app|rollout\w*)"
                              r"(\.py|\.sh|\.ya?ml|\.json|/)|(^|/)[a-z]+_demo(_\w+)?\.py$", re.I)
#: a config file's name that says it is for inference (``ds_config_inference.json``, ``zero3_infer.yaml``)
_INFERENCE_CONFIG = lazy_compile(r"(^|[_-])(inference|infer)([_.-])", re.I)
#: settings that hand a DeepSpeed config (file path or dict) to a trainer or launcher
DS_REF_NAMES = ("deepspeed", "deepspeed_config", "deepspeed_config_file", "ds_config", "ds_config_path")


def resolve_file(facts: Facts, ref: str, near: str | None = None) -> str | None:
    """The repository path a config reference (``--deepspeed ds_config.json``) points at, if present. ``near``: the file
    that holds the reference; a relative path that names a file beside it is that file (Llama-Chinese's
    ``train/sft/finetune.sh`` passes ``./ds_config_zero2.json``, its own folder's, not ``train/pretrain/``'s of the same
    name)."""
    r = ref.strip().strip("\"'")
    while r.startswith("./"):
        r = r[2:]
    if not r or "$" in r or "{" in r:
        return None
    if near and "/" in near and not r.startswith(("/", "..")):
        beside = str(PurePosixPath(near).parent / r)
        if beside in facts.files:
            return beside
    for p in facts.paths_named(r.rsplit("/", 1)[-1]):  # every match ends with the reference's file name
        if p == r or p.endswith("/" + r) or r.endswith("/" + p):
            return p
    return None


#: the keys that make a returned dict a DeepSpeed config
_DS_BUILDER_KEYS = frozenset({"zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size"})


def ds_builder_entries(facts: Facts, *keys: str) -> list[Any]:
    """Entries of a DeepSpeed config that a project function builds and returns, for the calls it is handed to (Yi's
    DeepSpeed-Chat copy: ``get_train_ds_config`` returns ``{"zero_optimization": zero_opt_dict, "fp16": {"enabled": True},
    ...}`` and ``sft/main.py`` passes the result to ``deepspeed.initialize``): the entries at ``keys`` (dotted, under the
    function's name) of the functions something calls. A returned dict is kept out of the settings (see ``RETURNED_DICT``);
    this reads it only when its keys are a DeepSpeed config's."""
    want = {tuple(k.split(".")) for k in keys}
    out: list[Any] = []
    for ff in facts.files.values():
        returned = [e for e in ff.configs if e.fmt == RETURNED_DICT and len(e.keys) >= 2]
        builders = {e.keys[0] for e in returned if e.keys[1] in _DS_BUILDER_KEYS}
        for e in returned:
            if e.keys[0] in builders and tuple(e.keys[1:]) in want and facts.calls(str(e.keys[0])):
                out.append(e)
    return out


def unlaunched_ds_configs(facts: Facts) -> frozenset[str]:
    """DeepSpeed JSON configs that nothing hands to a trainer or launcher, where every reference resolves to a file of
    the repository and every reference is a launch script's (Video-LLaVA's launches pass ``zero2.json`` and
    ``zero2_offload.json``; its ``zero3.json`` and ``zero3_offload.json`` are passed by nothing). Empty when no reference
    is seen, one cannot be resolved (a ``--deepspeed $DS_CONFIG`` could name any of them), or a recipe file names one.
    Memoised per scan."""
    key = ("unlaunched-ds-configs",)
    if key in facts._memo:
        return facts._memo[key]  # type: ignore[no-any-return]
    # a ZeRO config of an inference script (DeepSpeedExamples ``inference/huggingface/zero_inference/run_model.py``: ZeRO-3
    # offload of a model that only generates) is no training run's
    serving = frozenset(e.path for e in facts.config("zero_optimization") if INFERENCE_PATH.search(e.path) and e.path.endswith(".py"))
    # a config file named for inference (BELLE ``configs/deepspeed_config_stage3_inference.json``, which only its ZeRO-3
    # inference launch passes)
    serving |= {e.path for e in facts.config("zero_optimization") if _INFERENCE_CONFIG.search(e.path.rsplit("/", 1)[-1])}
    out: frozenset[str] = serving
    refs = [s for s in facts.settings(*DS_REF_NAMES) if not _TEST_FILE.search(s.path) and s.source not in {"argparse-default", "field-default"}
            and isinstance(s.value, str) and s.value.strip().lower() not in {"", "none", "null", "false", "no", "true"}]
    named = {resolve_file(facts, s.value, s.path if s.source == "launcher" else None) for s in refs}
    # only launch scripts' choices: recipe files that name configs (axolotl's ``deepspeed: deepspeed_configs/zero2.json``)
    # sit beside a menu the README offers whole (``--deepspeed deepspeed_configs/zero1.json``)
    # (or a recipe that a launch or documented command itself passes: LongQLoRA's README runs ``deepspeed train.py
    # --train_args_file ./train_args/llama2-7b-pretrain.yaml``, whose ``deepspeed:`` key names the ZeRO-2 config; its
    # ``deepspeed_config_s3.json`` is named by nothing)
    passed = _launch_passed_files(facts) if refs and any(s.source == "config" for s in refs) else frozenset()
    offered = any(h.kind == "command_flag" and h.value in ("deepspeed", "deepspeed_config") for h in facts.records("doc_hints"))
    if refs and None not in named and all(s.source == "launcher" or (s.source == "config" and s.path in passed and not offered)
                                          for s in refs):
        configs = {e.path for e in facts.config("zero_optimization") if e.path.endswith(".json") and not _TEST_FILE.search(e.path)}
        out |= frozenset(configs - named) if configs & named else frozenset()
    elif not refs and _deepspeed_never_passed(facts):
        out |= frozenset(e.path for e in facts.config("zero_optimization") if e.path.endswith(".json") and not _TEST_FILE.search(e.path))
    out |= unlaunched_accelerate_configs(facts)  # (an accelerate config's ``deepspeed_config`` no launch picks)
    facts._memo[key] = out  # type: ignore[assignment]
    return out


def _launch_passed_files(facts: Facts) -> frozenset[str]:
    """The repository files that a launch script's or a documented command's arguments name (``--train_args_file
    ./train_args/vicuna-13b-sft.yaml``), outside tests."""
    out: set[str] = set()
    for x in (*facts.launches(), *facts.records("doc_launches")):
        if _TEST_FILE.search(x.path):
            continue
        for v in (*x.launcher_args.values(), *x.script_args.values()):
            if isinstance(v, str) and (p := resolve_file(facts, v)):
                out.add(p)
    return frozenset(out)


def unlaunched_accelerate_configs(facts: Facts) -> frozenset[str]:
    """Accelerate config files (a ``distributed_type``) beside the ones the launches name, that no launch or documented
    command names, where every ``accelerate launch`` of the repository names its ``--config_file`` and each resolves to a file
    of the repository (VL-RLHF: seventeen launches pass ``accelerate_config/zero2.yaml`` and one ``ddp.yaml``; its
    ``zero3.yaml`` is passed by nothing). Empty when a launch takes accelerate's default config or a variable, or none of the
    repository's configs is named. Memoised per scan."""
    key = ("unlaunched-accelerate-configs",)
    if key in facts._memo:
        return facts._memo[key]  # type: ignore[no-any-return]
    out: frozenset[str] = frozenset()
    runs = [x for x in [*facts.launches("accelerate"), *facts.records("doc_launches")]
            if x.launcher == "accelerate" and not _TEST_FILE.search(x.path)]
    values = [x.launcher_args.get("config_file") for x in runs]
    if runs and all(isinstance(v, str) and v.strip() for v in values):
        named = {resolve_file(facts, v) for v in values if isinstance(v, str)}
        configs = {e.path for e in facts.config("distributed_type") if e.path.endswith((".yaml", ".yml")) and not _TEST_FILE.search(e.path)}
        if None not in named and configs & named:
            out = frozenset(configs - named)
    facts._memo[key] = out  # type: ignore[assignment]
    return out


def _deepspeed_never_passed(facts: Facts) -> bool:
    """The repository's training launches run without DeepSpeed, and nothing else hands it a config: no launch, recipe or
    code default names a DeepSpeed config, no ``deepspeed`` launcher, engine, plugin or strategy, no accelerate config of
    type DEEPSPEED, no ``--use_deepspeed`` (MedicalGPT: ``scripts/zero{1,2,3}.json`` beside eleven ``run_*.sh`` launches
    that pass none of them; its docs offer ``--deepspeed zero2.json`` as an option). Its JSON configs are then options, as
    B1 reads them ("shipped but nothing visible passes it"), not the run's setting."""
    if not any(not _TEST_FILE.search(x.path) for x in facts.launches()):
        return False  # no launch of its own: a config shipped for the user's command may be the run's
    if facts.launches("deepspeed") or facts.calls(*DS_CONSUMERS, "deepspeed.zero.Init"):
        return False
    if any(isinstance(s.value, str) and s.value.strip() for s in facts.settings(*DS_REF_NAMES)):
        return False  # a default that names one (``deepspeed: str = "configs/ds.json"``) is passed on every run
    if any(str(e.value).upper() == "DEEPSPEED" for e in facts.config("distributed_type")):
        return False
    if any(h.kind == "command_flag" and h.value in ("deepspeed", "deepspeed_config") for h in facts.records("doc_hints")):
        return False  # the README's training command passes one (starcoder ``torchrun ... --deepspeed=deepspeed_z3_config_bf16.json``)
    return not any(truthy(s.value) is True for s in facts.settings("use_deepspeed", "deepspeed") if not isinstance(s.value, str))


DS_CONSUMERS = ("DeepSpeedStrategy", "deepspeed.initialize", "DeepSpeedPlugin")


def switched_off_ds_dicts(facts: Facts) -> set[str]:
    """Python files whose DeepSpeed config dict (``ds_config = {"zero_optimization": {"stage": 2}}``) only feeds DeepSpeed
    under a branch the run leaves off (lit-llama ``strategy=(DeepSpeedStrategy(config=ds_config) if devices > 1 else
    "auto")`` with ``devices = 1``): no ZeRO in that script."""
    dict_files = {e.path for e in facts.config("zero_optimization") if e.path.endswith(".py")}
    if not dict_files:
        return set()
    users: dict[str, list[Call]] = {}
    for c in facts.calls(*DS_CONSUMERS):
        if c.path in dict_files:
            users.setdefault(c.path, []).append(c)
    return {path for path, calls in users.items() if all(guard_off(facts, c) for c in calls)}


def deepspeed_alternative_files(facts: Facts) -> set[str]:
    """DeepSpeed config files (a ``zero_optimization`` section) of a project whose backend option picks another backend,
    the ones nothing passes where every passed one is known (:func:`unlaunched_ds_configs`), and Python files whose DeepSpeed
    dict feeds DeepSpeed only under a branch the run leaves off (:func:`switched_off_ds_dicts`)."""
    if not backend_unselected(facts, "deepspeed"):
        return set(unlaunched_ds_configs(facts)) | switched_off_ds_dicts(facts)
    return {e.path for e in facts.config_under("zero_optimization")}


def patch_installed_off(f: Facts, c: Any) -> list[Any]:
    """Code inside a replacement function that a monkey patch installs (``GPTNeoSelfAttention._attn = _attn`` in ``def
    replace_gpt_neo_attn_with_flash_attn():``) when every installer is called only behind a switch that is off (``if
    model_args.use_flash_attention:`` with the field's default False) or not at all: the switches' settings (or the install
    sites). Empty when the replacement is called directly, installed at module level, or installed by an unguarded call."""
    func = getattr(c, "func", None)
    if not func or func.startswith("__"):
        return []
    patched = {a.value.ref for a in f.records("attr_assigns") if isinstance(a.value, Expr) and a.value.ref and a.path == c.path}
    # a call from another replacement the same file installs (the patched ``forward`` calling ``self._attn``) is the patch itself
    if any(x.func != func and not (x.path == c.path and x.func in patched) for x in f.calls(func) if x.short == func.rsplit(".", 1)[-1]):
        return []
    installs = [a for a in f.records("attr_assigns") if isinstance(a.value, Expr) and a.value.ref == func and a.path == c.path]
    if not installs or any(not a.func or a.func == func for a in installs):
        return []
    out: list[Any] = []
    for a in installs:
        callers = [x for x in f.calls(a.func) if x.func != a.func]
        if not callers:
            out += [a] if a not in out else []
            continue
        for x in callers:
            gated = guard_off(f, x)
            if not gated:
                return []
            out += [g for g in gated if g not in out]
    return out


def or_guard_off(facts: Facts, call: Any) -> list[Any]:
    """An ``or`` among a branch's and-ed conditions whose every alternative is off on its own, each judged as a guard by
    :func:`guard_off`: ``if config.activation_checkpointing or config.activation_cpu_offload:`` with both fields of the
    config dataclass defaulting to False and nothing setting them (Composer's ``apply_ac``). The switches of every
    alternative; empty when one alternative is on or undecided."""
    guard = getattr(call, "guard", None)
    node = parse_expr(guard) if guard else None
    if node is None or not is_dataclass(call):
        return []
    for t in node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]:
        if not (isinstance(t, ast.BoolOp) and isinstance(t.op, ast.Or)):
            continue
        out: list[Any] = []
        for v in t.values:
            gated = guard_off(facts, replace(call, guard=ast.unparse(v)))  # type: ignore[type-var]
            if not gated:
                break
            out += [g for g in gated if g not in out]
        else:
            return out
    return []


def helper_callers_off(f: Facts, c: Any, hops: int = 1) -> list[Any]:
    """:func:`callers_off` for code in a helper the project calls by name; nothing for a method a framework calls with
    its own arguments (a module's ``forward``, reached through ``model(x)``, a Lightning ``training_step``): the calls
    of that name in the project are not all of its callers."""
    func = getattr(c, "func", None)
    if not func or _FRAMEWORK_CALLED.match(func):
        return []
    return callers_off(f, c, hops)


def _section_given(facts: Facts, op: ast.cmpop, right: Any, name: str) -> bool:
    """``x.te_fp8 is not None`` (or ``is None``) where a shipped config file has a section of that name (``te_fp8:`` with
    keys under it): the section makes the value a mapping, whatever the dataclass field's ``None`` default says."""
    if right is not None or not isinstance(op, (ast.Is, ast.IsNot)):
        return False
    return any(e.fmt in ("yaml", "json", "toml") and not _TEST_FILE.search(e.path) for e in facts.config_under(name))


def unreached_sites(ctx: Context, sites: list) -> list:
    """The executable sites among ``sites`` (a kernel call, a kernel handed on by reference, a call's keyword, a decorated
    function, an object setting its own attribute, an entry of a call's keyword bundle: ``kwargs['torch_dtype'] =
    torch.float16``) that sit in Python modules no training entry point reaches, in a project that has a training path:
    code the project offers (a reranker's vendored modeling file and its config class's
    ``self._attn_implementation = "flash_attention_2"``, an inference engine's layers and its
    ``ShardConfig(enable_flash_attention=False)``, a kernel library's wrappers) that the run never executes. A declared
    setting (a recipe key, an arguments default, a module constant) or a recipe function's ``cfg.model.x = ...`` is not
    one: a config registry hands it to the run by name, wherever it is declared. Nothing in the context pass (the facts of
    tests, docs and other out-of-scope files, where the training path is not: "also seen in tests")."""
    train = ctx.project.training_files
    if not train or not any(p in ctx.facts.files for p in train):
        return []
    return [x for x in sites if (isinstance(x, (Call, Ref, Decorator))
                                 or (isinstance(x, Setting) and x.source == "call" and not declared_dict(ctx.facts, x))
                                 or (isinstance(x, AttrAssign) and x.target.startswith("self."))
                                 or (isinstance(x, Setting) and x.source == "config" and _KWARGS_ITEM.match(x.text)))
            and x.path.endswith(".py") and x.path not in train]


def declared_dict(f: Facts, s: Any) -> bool:
    """A keyword of a ``dict(...)`` built at a module's top level (a Python config file in the mmengine/MMCV style:
    shikra's ``config/_base_/train/shikra_fsdp.py`` holds ``training_args = dict(lr_scheduler_type='cosine',
    warmup_ratio=0.03, fsdp="full_shard auto_wrap")``, which the launched recipe lists in its ``_base_`` and the trainer
    receives as ``Seq2SeqTrainingArguments(**training_args)``): a declared setting, as a YAML key is, not a call that runs
    only where its module is imported."""
    if not (isinstance(s, Setting) and s.source == "call" and s.key.startswith("dict(")) or s.path not in f.files:
        return False
    return any(c.name == "dict" and c.func is None and (c.line == s.line or s.line in c.kw_lines.values())
               for c in f.files[s.path].calls)


def orphan_sites(ctx: Context, sites: list) -> list:
    """The sites of :func:`unreached_sites` in modules that nothing in scope imports, by any name (OpenChatKit's
    ``modules/dist_gpt_fsdp_module.py``, which imports a ``.gpt_modules`` the repository no longer has): dead code. A module
    some file imports (a strategy a registry loads, a plugin an ``__init__`` re-exports) may be reached at run time."""
    away = unreached_sites(ctx, sites)
    if not away:
        return []
    stems = {x.path.rsplit("/", 1)[-1].removesuffix(".py") for x in away}
    imported = {stem for i in ctx.facts.records("imports") for stem in stems
                if stem in i.module.split(".") or i.name == stem or stem in (i.name or "").split(".")}
    named = _recipe_registered(ctx.facts, {x.path for x in away})
    return [x for x in away if x.path.rsplit("/", 1)[-1].removesuffix(".py") not in imported and x.path not in named]


#: the name a registry decorator files a class or function under (``@TRAIN_EVAL_PIPELINE_REGISTRY.register(
#: "fsdp_train_eval_pipeline")``, ``@register_model(name="llama")``)
_REGISTERED_AS = lazy_compile(r"""^@[\w.]*register\w*\(\s*(?:name\s*=\s*)?["']([\w.:-]+)["']""")


def _recipe_registered(f: Facts, paths: set[str]) -> set[str]:
    """Those of ``paths`` that file something in a registry under a name a YAML recipe picks (CoreNet: ``train_eval_pipeline:
    name: "fsdp_train_eval_pipeline"`` in ``openelm_3B.yaml`` selects the pipeline ``fsdp_train_eval.py`` registers; its
    registry imports every module of the folder at start-up, so no import names it)."""
    names = {m.group(1): d.path for d in f.records("decorators") if d.path in paths and (m := _REGISTERED_AS.match(d.text))}
    if not names:
        return set()
    return {names[e.value] for e in f.records("configs") if e.fmt == "yaml" and isinstance(e.value, str) and e.value in names}


#: ``kwargs['torch_dtype'] = torch.float16``, ``model_kwargs["attn_implementation"] = ...``: a keyword filled into the
#: bundle a call is then handed (``from_pretrained(path, **kwargs)``), in code
_KWARGS_ITEM = lazy_compile(r"""^\w*kwargs\[\s*['"]\w+['"]\s*\]\s*=[^=]""")


def unreached_note(f: Facts, sites: list, what: str) -> str:
    """``fused-attention kernels appear only in modules no training entry point reaches (a.py:3, +2)``."""
    s0 = sites[0]
    more = f", +{len(sites) - 1}" if len(sites) > 1 else ""
    return f"{what} appear only in modules no training entry point reaches ({s0.path}:{s0.line}{more})"


def referenced_configs(f: Facts) -> set[str]:
    """Base names of the .json/.yaml files that launch commands, configs or code point at."""
    names: set[str] = set()
    templates: list[re.Pattern[str]] = []

    def add(v: object) -> None:
        if isinstance(v, str) and v.lower().endswith((".json", ".yaml", ".yml")):
            names.add(PurePosixPath(v.strip()).name)
        elif isinstance(v, tuple):
            for x in v:
                add(x)
        elif isinstance(v, Expr) and (m := _FSTRING_CONFIG.match(v.text)):
            # a path built from the run's options (PandaGPT ``args['ds_config_path'] =
            # f'dsconfig/{args["model"]}_stage_{args["stage"]}.json'``): the configs its pattern matches
            parts = re.split(r"\{[^{}]*\}", PurePosixPath(m.group(2)).name)
            templates.append(re.compile("[^/]*".join(map(re.escape, parts)) + "$"))

    for launch in f.launches():
        add(launch.script)
        for v in (*launch.launcher_args.values(), *launch.script_args.values()):
            add(v)
    # an accelerate launcher config (``deepspeed_config: {deepspeed_config_file: scripts/zero3_offload_inference.json}``)
    # points at its DeepSpeed JSON only for the launches that name it: VILA's ``scripts/deepspeed_inference.yaml`` is named
    # only by an evaluation script (``scripts/eval/needle.sh``), out of scope
    launcher_cfgs = {e.path for e in f.records("configs") if e.key == "deepspeed_config_file"}
    for e in f.records("configs"):
        if e.path not in launcher_cfgs:
            add(e.value)
    for c in f.records("calls"):
        for vals in (c.args, c.kwargs.values()):
            for v in vals:
                if isinstance(v, (str, tuple)):  # most call values are expressions or numbers: skip the call to add()
                    add(v)
    for a in (*f.records("assigns"), *f.records("fields"), *f.records("arg_options")):
        add(getattr(a, "value", getattr(a, "default", None)))
    for e in f.records("configs"):
        if e.path in launcher_cfgs and PurePosixPath(e.path).name in names:
            add(e.value)
    if templates:
        for path in f.files:
            name = PurePosixPath(path).name
            if name.lower().endswith((".json", ".yaml", ".yml")) and any(t.match(name) for t in templates):
                names.add(name)
    return names


#: an f-string that builds a config file's path (``f'dsconfig/{args["model"]}_stage_{args["stage"]}.json'``)
_FSTRING_CONFIG = lazy_compile(r"""^[fF][rR]?(['"])(.*\.(?:json|ya?ml))\1$""")
