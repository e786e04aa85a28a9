"""F. Data and I/O (数据与 I/O 优化): F1-F11.

F1-F3 judge the training data loaders: every ``torch.utils.data.DataLoader`` (and loader
wrappers that take ``num_workers``), the HF Trainer's loader (``dataloader_*`` arguments and
their defaults), and Megatron-LM's loader (``--num-workers``, pinned). Loaders that only serve
evaluation are judged only when no training loader exists.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..base import Check, Context, register
from ..facts import Call, Expr, Facts, Launch, Setting, as_number, register_vote_bands, truthy
from ..facts.types import RETURNED_DICT
from ..lazyre import lazy_compile
from ..model import Bottleneck, Evidence, Example, FixSafety, Outcome, Priority, Status, filled
from ..project import _INFERENCE_ENGINES, _SERVE_PATH, _absolute_module, _library_demo_lines, recipe_files
from ._helpers import (
    HF_DEFAULTS,
    INFERENCE_PATH,
    _module_names,
    callers_off,
    class_at,
    class_span_at,
    flag_state,
    guard_flags,
    guard_off,
    hf_framework_call,
    hook_built_batches,
    hook_fed_loaders,
    inputs_replaced,
    launched_paths,
    main_block_only,
    parse_expr,
    resolve_file,
    unreached_note,
    unreached_sites,
    uses_hf_trainer,
)
from .d_compute import attention_sites
from .e_comm import megatron_launches

U, P, N = Status.USED, Status.PARTIAL, Status.UNUSED

_TESTS = lazy_compile(r"(^|/)(tests?|testing|unittests?)/|(^|/)test_[^/]*\.py$|_tests?\.py$")
_EVAL = lazy_compile(r"(?:^|[^a-z])(val|valid|validation|eval|evaluate|evaluation|evaluators?|test|testing|dev|predict|prediction|infer|inference|calib|calibration|benchmark)(?:[^a-z]|$)", re.I)
_TRAIN = lazy_compile(r"train", re.I)
#: a loader built in a generation helper (``def generate(self, *, texts=None, dataset=None, batch_size=1)`` of a model
#: wrapper: ``DataLoader(dataset, shuffle=False, collate_fn=...)`` fed to ``model.generate`` under ``torch.no_grad()``)
#: feeds inference, unless the same name says training (``generate_train_loader``)
_GENERATE = lazy_compile(r"(?:^|[^a-z])(generate|generation)(?:[^a-z]|$)", re.I)


def _in_tests(path: str) -> bool:
    return bool(_TESTS.search(path))


def _text(v: Any) -> str:
    if isinstance(v, Expr):
        return v.dotted or v.text
    return str(v)


def _ev(x: Any, key: str | None = None, value: Any = None) -> Evidence:
    return Facts.ev(x, key=key, value=value)


def _at(ev: list[Evidence]) -> str:
    """``key at path:line (+n)`` of the first of these sites."""
    e = ev[0]
    return f"{e.key + ' at ' if e.key else ''}{e.path}:{e.line}" + (f", +{len(ev) - 1}" if len(ev) > 1 else "")


def _unique_ev(items: Iterable[Evidence]) -> list[Evidence]:
    seen: set[tuple[str, int]] = set()
    out: list[Evidence] = []
    for e in items:
        if (e.path, e.line) not in seen:
            seen.add((e.path, e.line))
            out.append(e)
    return out


# ---------------------------------------------------------------------------------------
# Training data loaders (F1-F3)
# ---------------------------------------------------------------------------------------

_REAL_LOADERS = ("torch.utils.data.DataLoader", "DataLoader", "StatefulDataLoader", "WebLoader")
#: torch DataLoader positional parameters
_POS = {"num_workers": 5, "pin_memory": 7}
_DEFAULTS = {"num_workers": 0, "pin_memory": False, "prefetch_factor": None}
_UNKNOWN = object()


@dataclass
class _Value:
    value: Any  # number / bool / None / Expr (not resolvable) / _UNKNOWN
    ev: Evidence
    explicit: bool


@dataclass
class _Loader:
    site: Any
    kind: str  # "torch" | "wrapper" | "hf" | "megatron" | "deepspeed" | "config" | "tf"
    train: bool
    props: dict[str, list[_Value]] = field(default_factory=dict)


def _is_train(c: Call) -> bool:
    """A loader call that serves training; unknown roles count as training.

    The most specific hint decides: the assigned name or the dataset argument (``val_loader = ...``,
    ``DataLoader(eval_ds)``), then the enclosing function (``val_dataloader``), then the file name (``eval.py``).
    """
    return _role_hint(c) is not False


def _role_hint(c: Call) -> bool | None:
    """True/False when a name around the call says training/evaluation (:func:`_is_train`), None when nothing does."""
    idx = c.text.find(c.short)
    prefix = c.text[:idx] if idx >= 0 else ""
    target = prefix.split("=")[0] if "=" in prefix else ""
    first = c.args[0] if c.args else c.kwargs.get("dataset")
    levels = [[target, _text(first) if first is not None else ""], [c.func or ""], [c.path.rsplit("/", 1)[-1]]]
    for hints in levels:
        if any(_EVAL.search(h) or (_GENERATE.search(h) and not _TRAIN.search(h)) for h in hints):
            return False
        if any(_TRAIN.search(h) for h in hints):
            return True
    return None


def _serves_evaluation_only(f: Facts, c: Call) -> bool:
    """A loader built in a helper with no role of its own (InternEvo's ``get_dpsampler_dataloader(..., pin_memory=False)``)
    whose every call outside tests builds an evaluation loader (``val_dls[name] = get_dpsampler_dataloader(...)`` in
    ``build_valid_loader_with_data_type``): its settings are not the training loader's."""
    if not c.func or c.func.startswith("__") or _role_hint(c) is not None:
        return False
    callers = [x for x in f.calls(c.func) if x.short == c.func and x.func != c.func and not _in_tests(x.path)]
    return bool(callers) and all(_role_hint(x) is False for x in callers)


#: a trainer fed by another process through files both map with ``torch.from_file(..., shared=True)``: the backend packs a
#: step's rows, maps the files writable and copies the rows in; the trainer process maps the same files to read them
_SHARED_HANDOFF = {"mylib/preprocessing/pack.py": (
    "import torch\n\n\ndef packed_tensors_from_dir(dir: str, num_sequences: int, sequence_length: int) -> dict:\n"
    "    return {\n        key: torch.from_file(f\"{dir}/{key}.pt\", shared=True, size=num_sequences * sequence_length,\n"
    "                             dtype=dtype).view(num_sequences, sequence_length)\n"
    "        for key, dtype in {\"tokens\": torch.long, \"advantages\": torch.float32, \"weights\": torch.float32}.items()\n    }\n\n\n"
    "def packed_tensors_to_dir(tensors: dict, dir: str) -> dict:\n"
    "    disk = {\"dir\": dir, \"num_sequences\": tensors[\"tokens\"].shape[0], \"sequence_length\": tensors[\"tokens\"].shape[1]}\n"
    "    for key, tensor in packed_tensors_from_dir(**disk).items():\n        tensor.copy_(tensors[key])\n    return disk\n"),
    "mylib/train.py": (
    "import torch\nfrom mylib.preprocessing.pack import packed_tensors_from_dir\n\n\n"
    "def train_step(model, optimizer, disk):\n    packed = packed_tensors_from_dir(**disk)\n"
    "    for offset in range(packed[\"tokens\"].shape[0]):\n        tokens = packed[\"tokens\"][offset:offset + 1].to(\"cuda\")\n"
    "        loss = model(tokens).loss\n        loss.backward()\n        optimizer.step()\n        optimizer.zero_grad()\n")}


#: a TRL trainer over a placeholder dataset whose input hook is replaced on the instance: each step's rows come from a queue
#: the backend fills, copied to the GPU with a plain ``.to()``
_QUEUE_FED_TRAINER = {"mylib/train.py": (
    "import asyncio\n\nimport torch\nfrom datasets import Dataset\nfrom trl import GRPOConfig, GRPOTrainer\n\n\n"
    "def create_train_context(model, tokenizer, trainer_args: dict):\n"
    "    trainer = GRPOTrainer(\n        model=model,\n        reward_funcs=[],\n        args=GRPOConfig(**trainer_args),\n"
    "        train_dataset=Dataset.from_list([{\"prompt\": \"\"} for _ in range(10_000_000)]),\n"
    "        processing_class=tokenizer,\n    )\n    inputs_queue: asyncio.Queue = asyncio.Queue()\n\n"
    "    def _async_prepare_inputs(*_, **__):\n        async def get_inputs():\n            return await inputs_queue.get()\n\n"
    "        return asyncio.run(get_inputs())\n\n    trainer._prepare_inputs = _async_prepare_inputs\n"
    "    return trainer, inputs_queue\n\n\n"
    "def compute_loss(trainer, model, inputs):\n"
    "    inputs = {key: tensor.to(trainer.accelerator.device) for key, tensor in inputs.items()}\n"
    "    return model(input_ids=inputs[\"tokens\"]).loss\n")}


#: an online-RL Trainer subclass (verifiers' async GRPOTrainer): its overridden get_train_dataloader hands prompt rows through
#: an identity collator, and its own ``_prepare_inputs`` builds each step's tensors on the device from the rollouts' token lists
_HOOK_FED_TRAINER = {"mylib/trainers/grpo_trainer.py": (
    "import torch\nfrom torch.utils.data import DataLoader\nfrom transformers import Trainer\nfrom trl.trainer.utils import pad\n\n\n"
    "class GRPOTrainer(Trainer):\n    def __init__(self, model, env, args, processing_class):\n        self.env = env\n\n"
    "        def data_collator(features):\n            return features\n\n"
    "        super().__init__(model=model, args=args, data_collator=data_collator, train_dataset=env.get_dataset(),\n"
    "                         processing_class=processing_class)\n\n"
    "    def get_train_dataloader(self):\n        dataloader_params = {\n"
    "            \"batch_size\": self._train_batch_size * self.args.gradient_accumulation_steps,\n"
    "            \"collate_fn\": self.data_collator,\n            \"num_workers\": self.args.dataloader_num_workers,\n"
    "            \"pin_memory\": self.args.dataloader_pin_memory,\n        }\n"
    "        dataloader = DataLoader(self.train_dataset, **dataloader_params)\n"
    "        return self.accelerator.prepare(dataloader)\n\n"
    "    def _prepare_inputs(self, inputs):\n        results = self.env.generate([x[\"prompt\"] for x in inputs])\n"
    "        device = self.accelerator.device\n"
    "        ids = [torch.tensor(p + c, device=device) for p, c in zip(results.prompt_ids, results.completion_ids)]\n"
    "        mask = [torch.tensor(p + c, device=device) for p, c in zip(results.prompt_mask, results.completion_mask)]\n"
    "        return {\"input_ids\": pad(ids, padding_value=0), \"attention_mask\": pad(mask, padding_value=0),\n"
    "                \"advantages\": torch.tensor(results.rewards, device=device)}\n")}
#: the same Trainer when its hook hands the loader's own batch to HF's ``_prepare_inputs`` (moved to the device from it)
_LOADER_FED_TRAINER = {"mylib/trainers/grpo_trainer.py": _HOOK_FED_TRAINER["mylib/trainers/grpo_trainer.py"].replace(
    "    def _prepare_inputs(self, inputs):\n",
    "    def _prepare_inputs(self, inputs):\n        inputs = super()._prepare_inputs(inputs)\n")}


#: modded-nanogpt's shard reader (a header read with torch.from_file, tokens read into a pinned buffer)
_MODDED_READER = (
    "from pathlib import Path\nimport torch\n"
    "def _load_data_shard(file: Path):\n"
    "    header = torch.from_file(str(file), False, 256, dtype=torch.int32)  # header is 256 int32\n"
    "    assert header[0] == 20240520, 'magic number mismatch in the data .bin file'\n"
    "    num_tokens = int(header[2])\n"
    "    with file.open('rb', buffering=0) as f:\n"
    "        tokens = torch.empty(num_tokens, dtype=torch.uint16, pin_memory=True)\n"
    "        f.seek(256 * 4)\n"
    "        nbytes = f.readinto(tokens.numpy())\n"
    "        assert nbytes == 2 * num_tokens, 'number of tokens read does not match header'\n"
    "    return tokens\n"
    "def distributed_data_generator(filename_pattern: str, batch_size: int, rank: int, world_size: int):\n"
    "    files = sorted(Path.cwd().glob(filename_pattern))\n"
    "    file_iter = iter(files)\n"
    "    tokens, pos = _load_data_shard(next(file_iter)), 0\n"
    "    while True:\n"
    "        buf = tokens[pos + rank * batch_size:][:batch_size + 1]\n"
    "        inputs = buf[:-1].to(device='cuda', dtype=torch.int32, non_blocking=True)\n"
    "        targets = buf[1:].to(device='cuda', dtype=torch.int64, non_blocking=True)\n"
    "        pos += batch_size * world_size\n"
    "        yield inputs, targets\n"
)
#: llm.c's shard writer (dev/data/data_common.py)
_LLMC_WRITER = (
    "import numpy as np\n"
    "def write_datafile(filename, toks, model_desc='gpt-2'):\n"
    "    assert len(toks) < 2**31, 'token count too large'\n"
    "    header = np.zeros(256, dtype=np.int32)\n"
    "    header[0] = 20240520\n    header[1] = 1\n    header[2] = len(toks)\n"
    "    toks_np = np.array(toks, dtype=np.uint16)\n"
    "    with open(filename, 'wb') as f:\n"
    "        f.write(header.tobytes())\n"
    "        f.write(toks_np.tobytes())\n"
)


_SIDE_FLAG = lazy_compile(r"(^|_)(debug|debugging|test|testing|smoke|dry_?run|sanity|profil\w*|cpu|mock|fake|dummy|overfit)(_|$)", re.I)
_MOCK = lazy_compile(r"(^|[^a-z])(mock|dummy|fake|synthetic|random)(_|[^a-z]|$)", re.I)


_PREP_PATH = lazy_compile(r"(^|/)(data_prep|preprocess\w*|prepare\w*)/|(^|/)(convert|preprocess|prepare|pre_?tokeniz)\w*\.py$", re.I)
_COUNTING_FUNC = lazy_compile(r"(calc|calculate|estimate|count|compute|get)_?\w*(num_steps|total_steps|steps|len|length)$|^num_\w*steps$", re.I)


_MOCK_CLASS = lazy_compile(r"^(Mock|Dummy|Fake|Synthetic|Random)[A-Z0-9_]")


def _mock_dataset_arg(c: Call) -> bool:
    """The call's first argument is a synthetic-data class or helper (``MockGPTDataset``, ``mock_dataset``)."""
    first = c.args[0] if c.args else None
    if first is None:
        return False
    last = _text(first).rsplit(".", 1)[-1]
    return bool(_MOCK_CLASS.match(last) or _MOCK.search(last))


def _side_loader(c: Call) -> bool:
    """A loader that is not the training setting: in a debug/test/CPU branch (``if args.debug:``), over a mock
    dataset (``DataLoader(MockDataset(...), num_workers=0)``), or built only to count batches
    (axolotl's ``calculate_total_num_steps``: ``len(DataLoader(ds, batch_sampler=sampler))``)."""
    if any(not neg and _SIDE_FLAG.search(name) for name, neg in guard_flags(c.guard)):
        return True
    if c.func and _COUNTING_FUNC.search(c.func):
        return True
    if _PREP_PATH.search(c.path):
        return True  # a loader of a preprocessing/conversion script (llm-foundry data_prep/convert_dataset_hf.py) feeds a writer
    first = c.args[0] if c.args else c.kwargs.get("dataset")
    target = c.text.split("=", 1)[0] if "=" in c.text.split("(", 1)[0] else ""
    # (or built by a mock-data helper: Megatron-LM's ``get_mock_vlm_dataloader(..., num_workers=0)`` in ``data/mock.py``)
    return bool(_MOCK.search(_text(first) if first is not None else "") or _MOCK.search(target) or _MOCK.search(c.func or "")
                or _MOCK.search(c.path.rsplit("/", 1)[-1][:-3] if c.path.endswith(".py") else ""))


def _loader_calls(f: Facts) -> list[Call]:
    real = [c for c in f.calls(*_REAL_LOADERS) if not _in_tests(c.path)]
    seen = {id(c) for c in real}
    wrappers = [
        c for c in f.calls_with_kw("num_workers")
        # (torchdata's ``MultiProcessingReadingService(num_workers=...)`` gives ``DataLoader2`` its worker processes)
        if id(c) not in seen and ("loader" in c.short.lower() or c.short == "MultiProcessingReadingService") and not _in_tests(c.path)
    ]
    # a project's loader subclass (picotron ``class MicroBatchDataLoader(DataLoader)``) is the loader its
    # ``super().__init__(...)`` builds, recorded as a real loader call in ``__init__``: its constructions are not another
    inits = {c.path for c in real if c.func == "__init__"}
    if inits and wrappers:
        subclasses = {x.owner for x in f.records("fields") if x.path in inits}
        wrappers = [c for c in wrappers if c.short not in subclasses]
    # a library module's ``if __name__ == "__main__":`` self-demo (LAVIS ``laion_dataset.py`` printing one batch of
    # ``DataLoader(dataset.inner_dataset, batch_size=2)``) builds no loader a run trains with
    demo = _library_demo_lines(f)
    calls = [c for c in real + wrappers if (c.path, c.line) not in demo]
    main = [c for c in calls if not _side_loader(c)]
    return main or calls


_CONFIG_CLASS = lazy_compile(r"(Config|Configs|Args|Arguments|Params)$")

#: calls whose ``num_workers=`` sizes a preprocessing pool (LitData ``optimize``, ``datasets.map``), not a loader
_PREP_CALLS = {"optimize", "map", "filter", "DataProcessor", "Pool", "ProcessPoolExecutor", "ThreadPoolExecutor", "process_map",
               "load_dataset", "thread_map", "Parallel"}


#: a key of the same name that sets another subsystem (DeepSpeed's ``zero_optimization.offload_optimizer.pin_memory``
#: pins offloaded optimizer states, not loader batches)
_OTHER_KNOB = lazy_compile(r"(^|\.)(zero_optimization|offload_optimizer|offload_param|offload_\w+|fsdp_config|ray_init_kwargs)\.")

#: a keyword of a tensor allocation or of an offload hook/policy (VeOmni ``torch.empty_strided(..., pin_memory=...)`` for
#: its activation-offload buffers, ``custom_save_on_cpu(pin_memory=False)``, ``CPUOffloadPolicy(pin_memory=...)``): it
#: pins (or not) that buffer, not the batches a loader's ``pin_memory=pin_memory`` hands on
_BUFFER_KNOB = lazy_compile(r"(^|\.)(empty|empty_strided|empty_like|zeros|zeros_like|ones|ones_like|full|full_like|tensor|as_tensor"
                          r"|\w*save_on_cpu\w*|\w*[Oo]ffload\w*)\(")

#: a keyword of a sharding or data-parallel config or call (OLMo-core ``TransformerDataParallelConfig(prefetch_factor=1)``,
#: ``model.apply_fsdp(prefetch_factor=...)``: how many blocks FSDP all-gathers ahead in the forward pass, not the batches
#: a loader's ``prefetch_factor=self.prefetch_factor`` queues)
_SHARDING_KNOB = lazy_compile(r"(^|\.)\w*(DataParallel|Fsdp|FSDP|fsdp|FullyShard|fully_shard|Sharding|ZeRO|Zero)\w*\(")


def _overridden_default(f: Facts, s: Any) -> bool:
    """A config class's field default (``NumpyDataLoaderConfig.num_workers: int = 0``) that no run gets: every construction of
    the class outside tests passes the field (``NumpyDataLoaderConfig(..., num_workers=4)`` in each shipped builder), and no
    other field builds the class by default (``field(default_factory=NumpyDataLoaderConfig)``)."""
    if s.source != "field-default" or "." not in s.key:
        return False
    owner, name = s.key.rsplit(".", 1)
    built = [c for c in f.calls(owner) if c.short == owner and not _in_tests(c.path)]
    if not built or not all(name in c.kwargs and not c.star_kwargs for c in built):
        return False
    return not any(owner in str(getattr(x.default, "text", x.default)) for x in f.records("fields"))


#: ``self.args.dataloader_num_workers``, ``training_args.dataloader_pin_memory``: a field of HF ``TrainingArguments``
_HF_ARGS_READ = lazy_compile(r"^(self\.)?(args|training_args|train_args)\.\w+$")


def _resolve(f: Facts, c: Call, name: str, value: Any, skip: set[tuple[str, int]]) -> list[_Value]:
    """``x=args.x`` -> the effective values of ``x`` (launcher flag, config, argparse default...)."""
    key = f"{c.short}({name}=)"
    line = c.kw_line(name)
    here = Evidence(c.path, line, c.text, key, value if not isinstance(value, Expr) else value.text)
    default = _unpassed_default(f, c, name)
    if default is not None:
        return [default]
    if isinstance(value, Expr) and not value.ref and (arm := _with_workers_arm(value)) is not None:
        value = arm
    if isinstance(value, Expr) and value.ref:
        found = [
            s for s in f.effective(value.ref, near=c.path)
            if not (s.source == "call" and (s.path, s.line) in skip) and s.value is not None and not _in_tests(s.path)
            and not (s.source == "call" and s.key.split("(", 1)[0].rsplit(".", 1)[-1] in _PREP_CALLS)
            and not _OTHER_KNOB.search(s.key) and not _overridden_default(f, s)
            and not (s.source == "call" and (_BUFFER_KNOB.match(s.key) or _SHARDING_KNOB.match(s.key)))
            and not _hydra_target_elsewhere(f, s, c.path)
        ]  # a test that builds the data module with num_workers=0, or a preprocessing pool's size, is not the loader's setting
        # a caller's keyword forwarding a config value (nanotron: ``dataloader_num_workers=config.data.num_loading_workers``)
        # is followed one hop to that value; another loader's keyword forwarding its own config is not a value
        hop = [t for s in found if s.source == "call" and isinstance(s.value, Expr) and (r := _loader_ref(s.value, name)) and r != value.ref
               for t in f.effective(r, near=c.path) if not isinstance(t.value, Expr) and t.value is not None and not _in_tests(t.path)]
        concrete = [s for s in found if not (s.source == "call" and isinstance(s.value, Expr))] + hop
        found = concrete or found
        if found:
            return [_Value(s.value, f.ev(s), True) for s in found]
        if value.ref in HF_DEFAULTS and _HF_ARGS_READ.search(value.text or "") and uses_hf_trainer(f):
            # a Trainer subclass's own loader (Tevatron ``DataLoader(..., num_workers=self.args.dataloader_num_workers)``)
            # with nothing in the project setting that field: HF ``TrainingArguments``' default
            d = HF_DEFAULTS[value.ref]
            return [_Value(d, Evidence(c.path, line, c.text, key, d), False)]
    return [_Value(value, here, True)]


def _hydra_target_elsewhere(f: Facts, s: Setting, loader_path: str) -> bool:
    """A config value that Hydra hands to another class of the project: its YAML section names ``_target_:
    pkg.module.Class``, and ``pkg/module.py`` is another file of the tree that builds its own loaders (based: every
    ``datamodule/*.yaml`` sets ``num_workers: 64  # For preprocessing only`` beside ``_target_:
    train.datamodules.language_modeling_hf.LMDataModule``, whose loaders pass ``num_workers=1``; the ImageNet data
    module's ``DataLoader(num_workers=self.num_workers)`` gets none of them), or a module of the project's own package
    that the tree does not hold."""
    if s.source != "config" or not s.path.endswith((".yaml", ".yml")):
        return False
    section = s.key.split(".")[:-1]
    target = next((e.value for e in f.config("_target_") if e.path == s.path and e.keys and e.keys[-1] == "_target_"
                   and [str(k) for k in e.keys[:-1]] == section and isinstance(e.value, str)), None)
    if not target or "." not in target:
        return False
    module = target.rsplit(".", 1)[0].replace(".", "/")
    here = next((p for p in (f"{module}.py", f"{module}/__init__.py") if p in f.files), None)
    if here is None:
        # a module of the project's own package that the tree does not hold (based's ``scrolls.yaml``:
        # ``train.datamodules.scrolls.ScrollsDataModule`` beside ``train/datamodules/*.py``): nothing can build it
        package = module.rsplit("/", 1)[0] + "/" if "/" in module else None
        return package is not None and any(p.startswith(package) and p.endswith(".py") for p in f.files)
    return here != loader_path and any(c.path == here for c in f.calls("DataLoader"))


def _olmo_loader(factor: int) -> dict[str, str]:
    """OLMo 0.6-shaped: the loader passes ``prefetch_factor`` only when it has workers, from a config field that defaults
    to None; the recipe sets both."""
    return {
        "olmo/config.py": (
            "from dataclasses import dataclass\nfrom typing import Optional\n\n\n@dataclass\nclass DataConfig:\n"
            "    num_workers: int = 0\n    pin_memory: bool = False\n    prefetch_factor: Optional[int] = None\n"),
        "olmo/data/__init__.py": (
            "from torch.utils.data import DataLoader\n\n\ndef build_train_dataloader(train_config, dataset, collator):\n"
            "    return DataLoader(\n        dataset,\n        batch_size=train_config.device_train_batch_size,\n"
            "        collate_fn=collator,\n        num_workers=train_config.data.num_workers,\n"
            "        pin_memory=train_config.data.pin_memory,\n"
            "        prefetch_factor=None if train_config.data.num_workers == 0 else train_config.data.prefetch_factor,\n    )\n"),
        "configs/official/OLMo-7B.yaml": (
            "run_name: OLMo-7B\ndata:\n  pad_direction: right\n  num_workers: 32\n  drop_last: true\n  pin_memory: true\n"
            f"  prefetch_factor: {factor}\n  persistent_workers: true\n"),
    }


def _with_workers_arm(value: Expr) -> Expr | None:
    """The arm that holds when the loader has workers, of a setting that PyTorch refuses without them (OLMo
    ``prefetch_factor=None if train_config.data.num_workers == 0 else train_config.data.prefetch_factor``): the config
    attribute, read like a plain ``x.prefetch_factor``. None for any other expression."""
    node = parse_expr(value.text)
    if not isinstance(node, ast.IfExp) or "workers" not in ast.unparse(node.test):
        return None
    arms = [a for a in (node.body, node.orelse) if not (isinstance(a, ast.Constant) and a.value in (None, 0, False))]
    if len(arms) != 1 or not isinstance(arms[0], ast.Attribute):
        return None
    return Expr(ast.unparse(arms[0]), None, arms[0].attr)


#: a loader setting read from a config object whose holder the facts do not know as one (nanotron ``run_train.py``:
#: ``dataloader_num_workers=data.num_loading_workers``, ``data`` a ``DataArgs``): the attribute, by its loader-setting name
_LOADER_ATTR = {"num_workers": lazy_compile(r"^(num_)?(data_?)?(loading_|loader_|dataloader_)?(num_)?workers$|^num_(data_)?(loading|loader)_workers$"),
                "pin_memory": lazy_compile(r"^(dataloader_)?pin_memory$"), "prefetch_factor": lazy_compile(r"^(dataloader_)?prefetch_factor$")}


def _loader_ref(v: Expr, name: str) -> str | None:
    """The setting an expression reads: its recorded reference, else the attribute of ``x.y.num_loading_workers`` when
    the attribute is named for the loader setting ``name``."""
    if v.ref:
        return v.ref
    m = re.fullmatch(r"(?:\w+\.)+(\w+)", v.text or "")
    return m.group(1) if m and name in _LOADER_ATTR and _LOADER_ATTR[name].match(m.group(1)) else None


def _unpassed_default(f: Facts, c: Call, name: str) -> _Value | None:
    """``DataLoader(num_workers=num_workers)`` in ``def prepare_dataloader(self, dataset, batch_size, num_workers=0)``
    whose every call in the project (outside tests) leaves ``num_workers`` out, or that nothing in the project calls, registers
    or can feed from a run setting of that name (a library's public helper): the loader gets the parameter's default, not the same-named keyword of some other call
    in the package (Colossal-AI's ``Chunk(..., pin_memory=...)``). None when a caller passes the parameter (by keyword,
    by position or through ``**kwargs``), when it has no constant default, or when the keyword is not a parameter."""
    fw = (c.forwarded or {}).get(name)
    if fw is None or not fw[1] or fw[2] is None or not c.func or c.func.startswith("__"):
        return None  # (a constructor's callers build its class: the loader-subclass reading of ``__init__`` stays)
    pos, _, default, def_line, def_text = fw
    param = c.kwargs[name].text if isinstance(c.kwargs.get(name), Expr) else name
    callers = [x for x in f.calls(c.func) if x.short == c.func and x.func != c.func and not _in_tests(x.path)]
    for x in callers:
        if param in x.kwargs or x.star_kwargs or (pos is not None and len(x.args) > pos) or any(isinstance(a, Expr) and a.text.startswith("*") for a in x.args):
            return None
    if not callers and (_reached_by_reference(f, c.func) or any(s.source != "call" for s in f.settings(param, name))):
        # nothing calls it by name, but it is registered (VeOmni's ``@DATALOADER_REGISTRY.register("native") def
        # build_native_dataloader(..., num_workers=8)``, built through ``build_dataloader(**kwargs)``) or the project has a run
        # setting of that name (a config key, an option, a dataclass field) that such plumbing can carry: not the default
        return None
    return _Value(default, Evidence(c.path, def_line, def_text, f"{c.func}({param}=)", default), False)


#: a decorator that files the function away to be called by name (``@DATALOADER_REGISTRY.register("native")``,
#: ``@register_loader``), unlike ``@abstractmethod``/``@staticmethod``/``@torch.no_grad()`` on a method called directly
_REGISTERING = lazy_compile(r"regist|\(\s*['\"]", re.I)


def _reached_by_reference(f: Facts, func: str) -> bool:
    """Is ``func`` reached other than by a call of its name: registered by a decorator (:data:`_REGISTERING`), imported by name (to be registered or
    handed on elsewhere), put in a dict or registry (``{"native": build_native_dataloader}``) or passed as an argument
    (``register(build_dit_dataloader)``, ``partial(build_dit_dataloader, ...)``)? Then its callers pass what they pass."""
    key = ("reached_by_reference", func)
    memo = f._s.setdefault("_f_data_memo", {})
    if key not in memo:
        def names(v: Any) -> bool:
            return isinstance(v, Expr) and (v.text == func or v.text.endswith("." + func))
        memo[key] = (any(d.target == func and _REGISTERING.search(f"{d.name} {d.text}") for d in f.records("decorators"))
                     or any(names(e.value) for e in f.records("configs"))
                     or any(any(map(names, x.args)) or any(map(names, x.kwargs.values())) for x in f.records("calls")))
    return memo[key]


def _call_prop(f: Facts, c: Call, name: str, real: bool, skip: set[tuple[str, int]]) -> list[_Value]:
    if name in c.kwargs:
        return _resolve(f, c, name, c.kwargs[name], skip)
    pos = _POS.get(name)
    if real and pos is not None and len(c.args) > pos:
        return _resolve(f, c, name, c.args[pos], skip)
    if real and not c.star_kwargs:
        default = _DEFAULTS[name]
        return [_Value(default, _ev(c, key=f"{c.short}({name}=)", value=default), False)]
    if real and c.star_kwargs:
        found = _params_dict_value(f, c, name)
        if found:
            return found
        if not _spelled(f, name):
            # ``DataLoader(ds, ..., **kwargs)`` in a loader factory, and no code, config or launch of the project names the
            # setting at all: nothing the project passes through ``**kwargs`` can carry it, so PyTorch's default applies
            default = _DEFAULTS[name]
            return [_Value(default, _ev(c, key=f"{c.short}({name}=)", value=default), False)]
    return [_Value(_UNKNOWN, _ev(c, key=f"{c.short}({name}=)"), False)]


def _spelled(f: Facts, name: str) -> bool:
    """Does any code, config or launch in scope name ``name`` (a keyword, a dict or YAML key, a field, an option, a variable)?"""
    return bool(f.effective(name) or f.calls_with_kw(name) or f.config(name))


def _params_dict_value(f: Facts, c: Call, name: str) -> list[_Value]:
    """``DataLoader(ds, **dataloader_params)`` with ``dataloader_params = {"pin_memory": self.args.dataloader_pin_memory, ...}``
    a few lines above (the HF Trainer's own idiom, copied by TRL and axolotl): the dict's value, followed to its setting or
    to the HF ``TrainingArguments`` default it reads."""
    entries = [e for e in f.config(name) if e.path == c.path and e.fmt == "python" and 0 <= c.line - e.line <= 40
               and (len(e.keys) == 1 or (len(e.keys) == 2 and f"**{e.keys[0]}" in c.text))]
    if not entries:
        entries = [e for e in f.config(name) if e.path == c.path and e.fmt == "python" and len(e.keys) == 2
                   and f"**{e.keys[0]}" in c.text and 40 < c.line - e.line <= _SAME_BODY_LINES and _same_body(f, c, e.line)]
    if not entries:
        entries = _helper_dict_entries(f, c, name)
    if not entries:
        return []
    e = max(entries, key=lambda x: x.line)
    v = e.value
    ref = v.ref if isinstance(v, Expr) else None
    if ref:
        found = [s for s in f.effective(ref, near=c.path) if s.value is not None and not _in_tests(s.path) and not isinstance(s.value, Expr)]
        if found:
            return [_Value(s.value, f.ev(s), True) for s in found]
        # the project fills the field at run time (axolotl's config validator: ``data["dataloader_num_workers"] =
        # data.get("capabilities").get("n_gpu", 1)`` when no loader option is set): that value, not HF's default
        filled = [s for s in f.effective(ref, near=c.path) if isinstance(s.value, Expr) and s.source not in ("call", "field-default")
                  and not _in_tests(s.path)]
        if filled:
            return [_Value(s.value, f.ev(s), True) for s in filled]
        if ref in HF_DEFAULTS:
            return [_Value(HF_DEFAULTS[ref], _ev(e, key=e.dotted, value=HF_DEFAULTS[ref]), False)]
        return [_Value(v, _ev(e, key=e.dotted, value=v.text), True)]
    return [_Value(v, _ev(e, key=e.dotted, value=v), True)]


#: how far above ``DataLoader(ds, **params)`` the ``params = {...}`` dict of the same function body may sit (sentence-transformers
#: 6.3 ``_build_dataloader``: the dict, then 60 lines of sampler branches that add ``batch_sampler``, then the loader)
_SAME_BODY_LINES = 150


def _same_body(f: Facts, c: Call, line: int) -> bool:
    """Whether ``line`` lies in the body of the function that makes call ``c``: a call of that function sits at or above
    ``line`` and every call between ``line`` and ``c`` is made by that same function (no other ``def`` in between)."""
    if not c.func:
        return False
    calls = f.calls_in([c.path])
    # the nearest call at or above ``line`` is the function's own (axolotl ``_get_dataloader``: its first calls sit 20
    # lines above the ``dataloader_params = {...}`` dict, which holds none)
    above = max((x for x in calls if x.line <= line + 1), key=lambda x: x.line, default=None)
    return (above is not None and above.func == c.func
            and all(x.func == c.func for x in calls if line <= x.line <= c.line))


def _helper_dict_entries(f: Facts, c: Call, name: str) -> list[Any]:
    """``DataLoader(ds, **self._train_dl_kwargs)`` in ``create_train_dataloader`` after ``kwargs =
    self.get_default_train_dl_kwargs(batch_size)`` (pytorch-accelerated's Trainer): the ``name`` entry of the dict literal
    that helper returns (``return {"pin_memory": True, ...}``, filed under the helper's name), when the loader's own function
    calls the helper of this file before building the loader. Entries a caller's dict adds on top (``kwargs.update(...)``)
    are the caller's: a run that passes none gets the helper's."""
    ff = f.files.get(c.path)
    if not c.func or ff is None:
        return []
    return [e for e in ff.configs if e.fmt == RETURNED_DICT and len(e.keys) == 2 and e.keys[1] == name
            and isinstance(e.keys[0], str) and e.keys[0] != c.func
            and any(x.short == e.keys[0] and x.path == c.path and x.func == c.func and x.line <= c.line for x in f.calls(e.keys[0]))]


def _framework_launches(f: Facts) -> list[Any]:
    """LLaMA-Factory / axolotl runs (``llamafactory-cli train``, ``accelerate launch -m axolotl.cli.train``).

    A YAML-only project (recipes run with the CLI from the README) counts by its recipe files.
    """
    out: list[Any] = list(f.launches("llamafactory", "axolotl"))
    for launch in f.launches("python", "torchrun", "accelerate", "deepspeed"):
        if launch.script and re.match(r"^(axolotl|llamafactory|llmtuner)\b", launch.script):
            out.append(launch)
    if not out:
        out = [e for entries in recipe_files(f).values() for e in entries if not _in_tests(e.path)]
    return out


def _hf_sites(f: Facts) -> list[Any]:
    """Where an HF-Trainer-based training is configured (own code, or LLaMA-Factory / axolotl launches)."""
    # (a trainer a launch or a documented command runs first, in file order otherwise: Magicoder's ``-m magicoder.train``,
    # not its ablation script)
    sites = uses_hf_trainer(f)
    launched = launched_paths(f, {x.path for x in sites})
    return [*sorted(sites, key=lambda x: x.path not in launched), *_framework_launches(f)]


def _hf_prop(f: Facts, site: Any, name: str) -> list[_Value]:
    found = [s for s in f.effective(name) if s.value is not None]
    if found:
        return [_Value(s.value, f.ev(s), True) for s in found]
    default = HF_DEFAULTS.get(name)
    return [_Value(default, _ev(site, key=name, value=default), False)]


_CPU_PER_GPU = "max(os.cpu_count() // torch.cuda.device_count(), 1)"
#: pytorch-accelerated's Trainer: the training DataLoader unpacks the dict its default-kwargs helper returns, below it in the file
_HELPER_DL_KWARGS = (
    "import os\n\nimport torch\nfrom torch.utils.data import DataLoader\n\n\nclass Trainer:\n"
    "    def create_train_dataloader(self, batch_size, train_dl_kwargs=None):\n"
    "        default_train_dl_kwargs = self.get_default_train_dl_kwargs(batch_size)\n"
    "        if train_dl_kwargs is not None:\n            default_train_dl_kwargs.update(train_dl_kwargs)\n"
    "        self._train_dl_kwargs = default_train_dl_kwargs\n"
    "        return DataLoader(dataset=self.train_dataset, collate_fn=self.collate_fn, **self._train_dl_kwargs)\n\n"
    "    def get_default_train_dl_kwargs(self, batch_size):\n"
    "        return {{\n            \"shuffle\": True,\n            \"pin_memory\": {pin},\n"
    "            \"batch_size\": batch_size,\n            \"num_workers\": {workers},\n        }}\n"
)


#: F1/F3 detail when the Trainer's own input hook builds each batch (see ``hook_built_batches``)
_HOOK_FED = ("no data loader feeds the training batches: the Trainer's input hook (`_prepare_inputs`) builds each batch on the "
             "device from host lists (e.g. rollout token ids); its DataLoader only hands it raw rows (prompts)")


def _built_for_train_hook(f: Facts, c: Call) -> bool:
    """Loader call ``c`` sits in a helper of its file that the file's ``get_train_dataloader`` calls (``self.helper(...)``)."""
    return bool(c.func) and c.func != "get_train_dataloader" and any(
        x.path == c.path and x.func == "get_train_dataloader" and x.name in (c.func, f"self.{c.func}") for x in f.calls(c.func))


def training_loaders(ctx: Context) -> list[_Loader]:
    """The data loaders that feed training (or every loader when none is clearly a training one)."""
    f = ctx.facts
    out: list[_Loader] = []
    calls = _loader_calls(f)
    # another loader's own keyword is not a value of this one (on the keyword's line: a call may span lines); a config
    # class built with the loader settings (``NumpyDataLoaderConfig(..., num_workers=4)``) is what the loader reads
    skip = {(c.path, ln) for c in calls if not _CONFIG_CLASS.search(c.short)
            for ln in (c.line, *(c.kw_line(k) for k in ("num_workers", "pin_memory", "prefetch_factor") if k in c.kwargs))}
    real_ids = {id(c) for c in f.calls(*_REAL_LOADERS)}
    # the Trainer subclass builds its train loader itself: in ``get_train_dataloader`` or in the helper it calls
    # (sentence-transformers ``get_train_dataloader`` -> ``self._build_dataloader(...)`` -> ``DataLoader(...)``)
    overrides_hf = any(c.func == "get_train_dataloader" or _built_for_train_hook(f, c) for c in calls)
    fed: list[Call] = []  # loaders that only hand raw rows to a Trainer hook building the batches on the device
    for c in calls:
        if c.func == "get_train_dataloader" and hook_built_batches(f, c.path):
            fed.append(c)  # the Trainer's input hook builds each batch on the device: this loader hands it raw rows (prompts)
            continue
        real = id(c) in real_ids
        props = {n: _call_prop(f, c, n, real, skip) for n in ("num_workers", "pin_memory", "prefetch_factor")}
        out.append(_Loader(c, "torch" if real else "wrapper", _is_train(c) and not _serves_evaluation_only(f, c), props))
    hf = [h for h in _hf_sites(f) if not inputs_replaced(f, h)]
    if hf and not overrides_hf:
        site = next((h for h in hf if h.path in ctx.project.training_files), hf[0])  # not an inference script's Trainer
        props = {
            "num_workers": _hf_prop(f, site, "dataloader_num_workers"),
            "pin_memory": _hf_prop(f, site, "dataloader_pin_memory"),
            "prefetch_factor": _hf_prop(f, site, "dataloader_prefetch_factor"),
        }
        out.append(_Loader(site, "hf", True, props))
    for launch in megatron_launches(f):
        if not _megatron_loader(launch):
            continue  # Megatron's model flags from a driver that feeds its own data (slime: RL rollouts, ``--prompt-data``)
        w = launch.script_args.get("num_workers")
        # (SwissArmyTransformer takes Megatron's flags with defaults of its own, ``--num-workers`` 1 and ``--prefetch-factor``
        # 4, handed to a pinned DataLoader: VisualGLM's finetune scripts)
        sat = _sat_script(f, launch)
        default = 1 if sat else 2
        workers = _Value(w, _ev(launch, key="--num-workers", value=w), True) if w is not None else \
            _Value(default, _ev(launch, key="--num-workers", value=default), False)
        pf = launch.script_args.get("prefetch_factor")
        prefetch = _Value(pf, _ev(launch, key="--prefetch-factor", value=pf), True) if pf is not None else \
            _Value(4, _ev(launch, key="--prefetch-factor", value=4), False) if sat else _Value(None, _ev(launch, key="prefetch_factor"), False)
        props = {
            "num_workers": [workers],
            "pin_memory": [_Value(True, _ev(launch, key="pin_memory", value=True), False)],
            "prefetch_factor": [prefetch],
        }
        out.append(_Loader(launch, "megatron", True, props))
    for c in _deepspeed_built_loaders(f):
        # ``deepspeed.initialize(..., training_data=ds)``: the engine builds the training loader itself (``deepspeed_io``:
        # pin_memory=True, ``num_local_io_workers`` None, so 2 workers per rank in DeepSpeedDataLoader)
        props = {
            "num_workers": [_Value(2, _ev(c, key=_DS_LOADER, value=2), False)],
            "pin_memory": [_Value(True, _ev(c, key=_DS_LOADER, value=True), False)],
            "prefetch_factor": [_Value(None, _ev(c, key="prefetch_factor"), False)],
        }
        out.append(_Loader(c, "deepspeed", True, props))
    if not out:
        for e in f.config("num_workers", "dataloader_num_workers"):
            if any(e.path == c.path and 0 <= c.line - e.line <= 40 for c in fed):
                continue  # the settings dict of a loader that feeds only raw rows to the input hook (above)
            if e.value is not None and not _in_tests(e.path) and not _worker_scaling(f, e):
                out.append(_Loader(e, "config", True, {"num_workers": [_Value(e.value, _ev(e, key=e.dotted, value=e.value), True)]}))
    train = [x for x in out if x.train]
    # a loader in a branch the run leaves off (``else:`` of ``if self.env_type == 'pytorch':`` in a multi-backend trainer's
    # ``get_dataloader``, with the env type defaulting to 'pytorch') is not the run's, when a loader of the run remains
    live = [x for x in train if not (isinstance(x.site, Call) and guard_off(f, x.site))]
    train = live or train
    if not train and ctx.project.notes.get("library_learner"):
        return []  # the learner's training loader is the library's; the project's own feed evaluation (see checks.learner_library)
    return _on_training_path(train or out, ctx.project.training_files)


#: the evidence key of the training loader DeepSpeed's engine builds (see :func:`_deepspeed_built_loaders`)
_DS_LOADER = "deepspeed.initialize(training_data=)"


def _deepspeed_built_loaders(f: Facts) -> list[Call]:
    """``deepspeed.initialize`` calls handed a dataset (``training_data=``, not None): the engine's own training loader."""
    return [c for c in f.calls("deepspeed.initialize") if "training_data" in c.kwargs
            and c.kwargs["training_data"] is not None and not (isinstance(c.kwargs["training_data"], Expr)
                                                               and c.kwargs["training_data"].text == "None")]


#: keys that sit beside ``num_workers`` only in a distributed trainer's scaling config (Ray Train ``ScalingConfig(
#: num_workers=, use_gpu=, resources_per_worker=)``): there it counts training processes (one per GPU), not loader workers
_SCALING_KEYS = ("use_gpu", "resources_per_worker")


def _worker_scaling(f: Facts, e: Any) -> bool:
    """A ``num_workers`` item of a mapping that also holds ``use_gpu``/``resources_per_worker`` (``{"num_workers":
    num_gpus, "use_gpu": use_gpu, "resources_per_worker": {...}}``): the training-worker count of a scaling config."""
    parent = e.keys[:-1]
    return any(s.path == e.path and s.keys[:-1] == parent and abs(s.line - e.line) <= 10
               for s in f.config(*_SCALING_KEYS))


def _on_training_path(loaders: list[_Loader], training: frozenset[str]) -> list[_Loader]:
    """With a known training path, a loader in code it never reaches (LLaMA-Factory's ``scripts/stat_utils/cal_lr.py``
    counting tokens with a bare ``DataLoader``) is not the training setting, as long as one loader is on the path
    (a DataLoader in a training file, the HF Trainer's, a Megatron launch or a config key)."""
    if not training:
        return loaders
    kept = [x for x in loaders if x.kind not in ("torch", "wrapper") or x.site.path in training]
    return kept or loaders


def _literal(text: str | None) -> Any:
    """A value the store keeps as its ``repr`` (``'2'``, ``'8.0'``) back as the value; None when there is none."""
    if text is None:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def _workers(v: Any) -> float | None:
    """Worker count of a value; ``os.cpu_count()``-style expressions count as plenty (8)."""
    if isinstance(v, Expr):
        return 8.0 if re.search(r"cpu_count|sched_getaffinity|num_cpus|multiprocessing", v.text) else None
    if v is _UNKNOWN:
        return None
    n = as_number(v)
    if n is None and isinstance(v, str) and v.strip().lower() == "auto":
        return 8.0
    return n


def _tf_fed_zero_loaders(f: Facts, vals: list[tuple[_Value, _Loader]]) -> list[_Value]:
    """The zero ``num_workers`` of training DataLoaders that can only be iterating a dataset (no ``shuffle=True``, no
    sampler), in a project whose IterableDataset iterates a tf.data pipeline (``for batch in
    self.dataset.as_numpy_iterator(): yield ...`` in ``__iter__``): the pipeline's own threads load the data."""
    if not any(c.func == "__iter__" for c in f.calls("as_numpy_iterator", "tfds.as_numpy")):
        return []
    out: list[_Value] = []
    for v, ld in vals:
        c = ld.site
        if ld.kind != "torch" or not ld.train or _workers(v.value) != 0 or not isinstance(c, Call):
            continue
        sampler = c.kwargs.get("sampler")
        if truthy(c.kwargs.get("shuffle")) is True or (sampler is not None and not (isinstance(sampler, Expr) and sampler.text == "None")):
            continue
        out.append(v)
    return out


def _tf_parallel(f: Facts) -> list[tuple[float, Evidence]]:
    out = []
    for kw in ("num_parallel_calls", "num_parallel_reads"):
        for c in f.calls_with_kw(kw):
            v = c.kwargs[kw]
            n = 8.0 if isinstance(v, Expr) and "AUTOTUNE" in v.text.upper() else as_number(v)
            if n is not None:
                out.append((n, _ev(c, key=f"{c.short}({kw}=)", value=_text(v))))
    return out


# ---------------------------------------------------------------------------------------
# Data formats and pipelines (F4-F10)
# ---------------------------------------------------------------------------------------

_SHARD_CALLS = (
    "webdataset.WebDataset", "webdataset.ShardWriter", "webdataset.TarWriter", "webdataset.ResampledShards",
    "webdataset.SimpleShardList", "webdataset.WebLoader", "tf.data.TFRecordDataset", "tensorflow.data.TFRecordDataset",
    "tf.io.TFRecordWriter", "tensorflow.io.TFRecordWriter", "tfrecord.*", "streaming.StreamingDataset", "streaming.MDSWriter",
    "litdata.StreamingDataset", "litdata.optimize", "MMapIndexedDataset", "IndexedDataset", "make_indexed_dataset",
    "IndexedDatasetBuilder", "indexed_dataset.make_builder", "MMapIndexedDatasetBuilder", "save_to_disk", "load_from_disk",
    "h5py.File", "lmdb.open", "ffcv.writer.DatasetWriter", "ffcv.loader.Loader", "pyarrow.parquet.read_table",
    "pyarrow.parquet.ParquetFile", "pyarrow.parquet.ParquetDataset", "pandas.read_parquet", "fn.readers.tfrecord",
    "fn.readers.webdataset",
)
_HUB_DATASET = lazy_compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$(?<!\.json)(?<!\.jsonl)(?<!\.csv)(?<!\.txt)(?<!\.parquet)")
_ARROW_CLASSES = {"datasets", "Dataset", "DatasetDict", "IterableDataset", "IterableDatasetDict"}


def _other_disk_io(f: Facts) -> set[tuple[str, int, str]]:
    """``save_to_disk``/``load_from_disk`` calls that are not Hugging Face datasets' Arrow I/O: a class method of the project's
    own (verl ``DataProto.load_from_disk`` of a rollout dump in ``utils/skip/rollout_skip.py``), and the ``save_to_disk``
    calls of a file whose every ``load_from_disk`` is such a method (the same dump written back)."""
    loads = f.calls("load_from_disk")
    own = [c for c in loads if (owner := c.name.rsplit(".", 2)[-2] if "." in c.name else "")[:1].isupper()
           and owner not in _ARROW_CLASSES and not c.name.startswith("datasets.")]
    # (a method of the project's own dataset class: Firefly-LLaMA2-Chinese's ``self.load_from_disk(cache_file)``, which
    # unpickles a token list into memory)
    own += [c for c in loads if c.name == "self.load_from_disk" and not any(
        b.rsplit(".", 1)[-1] in _ARROW_CLASSES for b in getattr(class_span_at(f, c.path, c.line), "bases", ()))]
    files = {c.path for c in own} - {c.path for c in loads if not any(c is o for o in own)}
    return {(c.path, c.line, c.name) for c in [*own, *(c for c in f.calls("save_to_disk") if c.path in files)]}


_SHARD_FILES = lazy_compile(r"\{\d+\.\.\d+\}\.tar|\.tar$|\.tfrecords?$|\.parquet$|\.arrow$|\.mds$|\.beton$|\.lmdb$|\.h5$|\.hdf5$", re.I)
_PER_SAMPLE = (
    "PIL.Image.open", "Image.open", "cv2.imread", "torchvision.io.read_image", "torchvision.io.decode_image",
    "imageio.imread", "imageio.v3.imread", "skimage.io.imread", "decord.VideoReader", "av.open", "torchaudio.load",
    "librosa.load", "soundfile.read", "json.load", "numpy.load", "torch.load", "open", "load_image", "load_video",
    "read_video", "torchvision.io.read_video", "cv2.VideoCapture", "process_vision_info", "fetch_image", "fetch_video",
)
#: per-sample opens of an image/video/audio file: the payload of a multimodal sample
_MEDIA_OPENS = {"imread", "read_image", "decode_image", "VideoReader", "load_image", "load_video", "read_video", "VideoCapture",
                "fetch_image", "fetch_video", "process_vision_info"}
_MEDIA_NAMES = ("Image.open", "av.open", "torchaudio.load", "librosa.load", "soundfile.read")


#: decoders that take whatever a sample holds (image object, bytes, base64, URL or path): qwen-vl-utils
_ANY_FORM_DECODERS = {"fetch_image", "fetch_video", "process_vision_info"}


def _embedded_media(f: Facts) -> list[Call]:
    """Image/audio decoded from bytes held in memory (``Image.open(BytesIO(image["bytes"]))``) outside tests: media stored
    inside the dataset's rows."""
    return [c for c in f.calls("PIL.Image.open", "Image.open", "soundfile.read", "torchaudio.load") if c.args
            and re.search(r"BytesIO", _text(c.args[0])) and not _in_tests(c.path)]


def _is_media(c: Call) -> bool:
    return c.short in _MEDIA_OPENS or c.name.endswith(_MEDIA_NAMES)
#: merged-store evidence that is a table of records (HF datasets Arrow, Parquet), which may hold only annotations
#: (a project that writes the table itself, ``save_to_disk``, stores its prepared samples there: not only annotations)
_TABLE_KEYS = {"load_from_disk", "load_dataset", "read_table"}
_PER_SAMPLE_FUNCS = lazy_compile(r"^(__getitem__|__getitems__|_?get_item|_?load_image|_?load_video|_?read_image|_?process_image|_?get_image|fetch_image|process_vision_info)$")
#: a sample decoded from bytes already in memory, a URL, or a member of an archive/database is not a small-file read
_NOT_A_FILE = lazy_compile(r"BytesIO|requests|urlopen|http|\.read\(\)|base64|extractfile|zip|\bzf\.|\btar(file)?\b|\.tar\b|archive|lmdb|\btxn\b|\.get\(b['\"]", re.I)
_OPENERS = {"open", "io.open", "PIL.Image.open", "Image.open", "av.open"}


_GETITEM = lazy_compile(r"^(__getitem__|__getitems__|_?get_item)$")


def _reached_from(f: Facts, func: str | None, start: re.Pattern[str], memo: dict[Any, bool], depth: int = 0, path: str | None = None) -> bool:
    """Whether ``func`` runs inside a function named like ``start`` (through the calls between functions, by name). With
    ``path`` (the file ``func`` is in), callers are those that may call it (:func:`_may_call`), and a ``__getitem__`` of a
    class that materialises itself into Arrow before training (:func:`_materialised_files`) is not a loader's start."""
    if func is None:
        return False
    if start.match(func):
        return path is None or path not in _materialised_files(f)
    if depth > 5:
        return False
    key = (path, func) if path is not None else func
    if key not in memo:
        memo[key] = False  # breaks recursion
        memo[key] = any(_reached_from(f, c.func, start, memo, depth + 1, c.path if path is not None else None) for c in f.calls(func)
                        if c.func != func and not _lazy_once(c) and (path is None or _may_call(f, c, path, func)))
    return memo[key]


#: a lazy initialisation: ``if self.shuffle_index is None:`` (the first call loads, later calls reuse the attribute)
_LAZY_INIT = lazy_compile(r"(^|\band\s+)self\.\w+\s+is\s+None\s*$|^self\.\w+\s+is\s+None\b")


def _lazy_once(c: Call) -> bool:
    """A call under a lazy-initialisation test of an attribute (Megatron-LM ``GPTDataset``: ``if self.shuffle_index is None:
    self.shuffle_index = safe_numpy_load(path, mmap_mode='r')`` inside the per-sample query): it runs once per dataset
    object, not once per sample."""
    return bool(c.guard) and _LAZY_INIT.search(c.guard) is not None


def _bytes_sibling(f: Facts, c: Call) -> bool:
    """A path open under a type test (``if isinstance(image, str): image = Image.open(image)``) in a function whose other
    branch opens the same kind of payload from bytes (``elif isinstance(image, dict): Image.open(BytesIO(image["bytes"]))``,
    EasyR1's ``process_image``): the dataset's rows decide whether files are read per sample (image paths) or the images
    travel inside the shards (embedded bytes, as in the parquet datasets its examples train on)."""
    if not c.guard or "isinstance" not in c.guard or not c.func:
        return False
    ff = f.files.get(c.path)
    return ff is not None and any(x.func == c.func and x.short == c.short and x is not c and "BytesIO" in x.text for x in ff.calls)


#: a file handle kept on the object (``self.data_file = open(path, "rb", buffering=0)``), opened once, not per sample
_KEPT_HANDLE = lazy_compile(r"^\s*self\.\w+\s*=\s*open\(")


def _byte_range_funcs(f: Facts) -> set[tuple[str, str | None]]:
    """Functions that read a byte range of one big file (``f.seek(off); f.readinto(buf)``, ``os.pread``,
    ``np.memmap(path, offset=)``): opening that file per sample is a positioned read, not small-file I/O."""
    out = {(c.path, c.func) for c in f.calls("seek", "readinto", "os.pread", "pread")}
    out |= {(c.path, c.func) for c in f.calls("numpy.memmap", "np.memmap") if "offset" in c.kwargs or len(c.args) >= 4}
    return out


def _per_sample_reads(f: Facts) -> list[Call]:
    """Per-sample file opens under ``__getitem__`` (LLaVA style ``Image.open(os.path.join(folder, file))``)."""
    out = []
    memo: dict[str, bool] = {}
    ranged = _byte_range_funcs(f)
    ranged_files = {p for p, _ in ranged}
    for c in f.calls(*_PER_SAMPLE):
        if (c.path, c.func) in ranged and c.short == "open":
            continue
        if c.short == "open" and c.path in ranged_files and _KEPT_HANDLE.match(c.text or ""):
            continue  # GPT-NeoX ``IndexedDataset.read_data``: ``self.data_file = open(bin, "rb")`` once, then seek/readinto per sample
        if _bytes_sibling(f, c):
            continue  # one branch of a reader that also takes the image's bytes (EasyR1 ``process_image``): the data decides
        if _in_tests(c.path) or not c.func or _lazy_once(c):
            continue
        if _fed_no_files(f, c.func):
            continue
        if (c.func == "__getitem__" and c.path in _materialised_files(f)) or not (
                _PER_SAMPLE_FUNCS.match(c.func) or _reached_from(f, c.func, _GETITEM, memo, path=c.path)):
            continue
        if not _GETITEM.match(c.func) and not _reached_from(f, c.func, _GETITEM, memo, path=c.path) and not _helper_called(f, c):
            continue  # a ``load_image`` helper by its name alone, which nothing in the project calls (a serving utility)
        if c.short == "open" and (c.name not in _OPENERS or not c.args):
            continue
        args = " ".join(_text(a) for a in c.args) + " " + " ".join(_text(v) for v in c.kwargs.values())
        if _NOT_A_FILE.search(args) or c.name.startswith("?"):
            continue
        if c.short in {"load", "imread", "open"} and re.search(r"(mmap_mode|\.bin|shard)", args):
            continue
        out.append(c)
    return out


def _not_a_file_caller(x: Call) -> bool:
    """A call into a reader that serves requests, or hands it a base64 string, bytes or a URL (FastChat's conversation
    template: ``load_image(image.base64_str)``; its sglang worker): no file read per training sample."""
    return bool(_SERVE_PATH.search(x.path) or (x.args and all(_NOT_A_FILE.search(_text(a)) for a in x.args)))


def _fed_no_files(f: Facts, func: str) -> bool:
    """Every project call of the reader ``func`` (outside tests) is a :func:`_not_a_file_caller`."""
    callers = [x for x in f.calls(func) if x.short == func and x.func != func and not _in_tests(x.path)]
    return bool(callers) and all(_not_a_file_caller(x) for x in callers)


def _helper_called(f: Facts, c: Call) -> bool:
    """Whether the function ``c`` sits in (a reader named like ``load_image``) is called from outside itself: by its bare name,
    or by a dotted name that ends in its own module (``fastchat.utils.load_image``), not a library's function of the same
    name (``sglang.srt.utils.load_image``). Tests do not count."""
    func = c.func or ""
    parts = c.path[:-3].split("/") if c.path.endswith(".py") else []
    mods = {".".join(parts[k:]) for k in range(len(parts))}
    for x in f.calls(func):
        if x.short != func or x.func == func or _in_tests(x.path):
            continue
        if _not_a_file_caller(x):
            continue
        owner = x.name.rsplit(".", 1)[0] if "." in x.name else ""
        if not owner or owner.startswith("?") or owner in mods or "." not in owner or owner.split(".", 1)[0] in ("self", "cls"):
            return True
    return False


def _data_path_ev(f: Facts) -> list[Evidence]:
    """Each Megatron launch's data flag, cited at the line that holds it."""
    out = []
    for x in _megatron_data(f):
        k = next((k for k in ("data_path", "train_data_path", "data_args_path", "per_split_data_args_path", *_MEGATRON_LISTED_DATA,
                              "data_impl", "dataset_impl") if k in x.script_args), "data_path")
        out.append(_ev(x, key="--" + k.replace("_", "-"), value=x.script_args.get(k)))
    return out


#: Megatron-LM's own data arguments: a launch passing one reads its data through Megatron's loader
_MEGATRON_DATA_FLAGS = frozenset({"data_path", "train_data_path", "data_args_path", "per_split_data_args_path", "mock_data",
                                  "data_cache_path", "split", "num_workers"})


def _sat_script(f: Facts, launch: Any) -> bool:
    """The launch runs a SwissArmyTransformer (``sat``) trainer: its script imports ``sat`` (VisualGLM's
    ``finetune_visualglm.py``: ``from sat.training.deepspeed_training import training_main``)."""
    path = resolve_file(f, launch.script) if launch.script else None
    ff = f.files.get(path) if path else None
    return ff is not None and any(i.module == "sat" or (i.module or "").startswith("sat.") for i in ff.imports)


def _megatron_loader(launch: Any) -> bool:
    """A Megatron launch whose data comes through Megatron's data loader (its 2 workers, pinned batches by default): a
    ``pretrain_*.py`` entry, or a launch passing Megatron's data arguments. A driver that hands Megatron only model and
    parallelism flags and feeds it rollouts (slime's ``train.py --prompt-data ...``) does not."""
    script = (launch.script or "").rsplit("/", 1)[-1]
    return script.startswith("pretrain_") or bool(set(launch.script_args) & _MEGATRON_DATA_FLAGS)


#: Megatron-DeepSpeed's data arguments that name a list of indexed ``.bin/.idx`` prefixes (with weights and splits)
_MEGATRON_LISTED_DATA = ("train_weighted_split_paths_path", "valid_weighted_split_paths_path", "train_weighted_split_paths")


def _megatron_data(f: Facts) -> list[Any]:
    """Megatron launches reading indexed ``.bin/.idx`` data (``--data-path prefix_text_document``)."""
    out = []
    for launch in megatron_launches(f):
        # (Megatron-DeepSpeed's multitask fine-tuning names a text file that lists the indexed prefixes with their weights:
        # octopack ``--train-weighted-split-paths-path $WEIGHTS_TRAIN``; its ``--data-impl mmap`` is the indexed format)
        if any(launch.script_args.get(k) is not None and launch.script_args.get(k) is not True for k in _MEGATRON_LISTED_DATA) \
                or str(launch.script_args.get("data_impl", launch.script_args.get("dataset_impl", ""))).strip() in ("mmap", "lazy", "cached"):
            out.append(launch)
            continue
        for k in ("data_path", "train_data_path", "data_args_path", "per_split_data_args_path"):
            v = launch.script_args.get(k)
            if v is not None and v is not True and not str(v).endswith((".json", ".jsonl", ".parquet", ".csv", ".txt")):
                out.append(launch)
                break
    for launch in f.launches("python", "torchrun"):
        v = launch.script_args.get("data_path")
        if isinstance(v, str) and re.search(r"_(text|content)_(document|sentence)$", v):
            out.append(launch)
    return out


def _memmap_calls(f: Facts) -> list[Call]:
    """``np.memmap`` calls outside tests and outside a class nothing builds (LongQLoRA's ``EvalDataset`` in
    ``component/dataset.py``: ``train.py`` imports that module's ``PretrainDataset`` and ``VicunaSFTDataset``, never it)."""
    out = []
    for c in f.calls("numpy.memmap", "np.memmap"):
        k = class_span_at(f, c.path, c.line) if not _in_tests(c.path) else None
        if not _in_tests(c.path) and (k is None or not _class_never_built(f, k.path, k.line, k.name)):
            out.append(c)
    return out


#: an offset past a file's own header, as written (``offset=HDR_SIZE``, ``offset=header_bytes``)
_HEADER_OFFSET = lazy_compile(r"\boffset\s*=\s*[\w.]*(HDR|header)", re.I)
#: a stream of token ids (nanoGPT's ``train.bin``, build-nanogpt's ``load_tokens`` shards): windows are cut across documents
_TOKEN_STREAM = lazy_compile(r"\.bin\b|uint16|uint32|int32|\btoks?\b|toks_|_toks|tokens|shard", re.I)
#: token ids stored ahead in binary: a stream, or an array of rows (LongAlign ``input_ids = torch.from_numpy(np.load(...
#: 'inputs.npy'))``, one padded or packed sample per row)
_TOKENISH = lazy_compile(_TOKEN_STREAM.pattern + r"|\binput_ids\b", re.I)


def _token_bins(f: Facts) -> list[Call]:
    """Hand-written pre-tokenized binary token streams and their writers.

    Readers: ``np.memmap('train.bin', dtype=np.uint16)`` (nanoGPT, also with ``offset=`` past a header), ``np.frombuffer``
    of token ids at an offset into a memmapped byte buffer,
    ``torch.from_file(shard, ...)`` (modded-nanogpt's header read), ``f.readinto(tokens.numpy())`` into a
    preallocated tensor, LitData's ``TokensLoader``. Writers: ``arr.tofile('train.bin')``, a header and tokens written
    with ``f.write(x.tobytes())`` (llm.c ``write_datafile``), ``np.save(shard_path, tokens)``.
    """
    out = []
    for c in _memmap_calls(f):
        text = " ".join(_text(a) for a in c.args) + " " + " ".join(_text(v) for v in c.kwargs.values()) + " " + c.text
        # not an index beside the data (OLMo-core's ``np.memmap(self._global_indices_file, dtype=np.uint32)``: a shuffled
        # order of instances, or document boundaries and lengths): those hold positions, not token ids
        if re.search(r"\.bin\b|uint16|uint32|int32|token", text) and not _INDEX_FILE.search(text):
            out.append(c)
        elif "offset" in c.kwargs and _HEADER_OFFSET.search(c.text) and not _INDEX_FILE.search(text):
            # a chunk file read past its own header, the dtype taken from that header (lit-llama's PackedDataset:
            # ``np.memmap(filename, mode="r", order="C", offset=HDR_SIZE)`` over chunks written as ``HDR_MAGIC`` + tokens)
            out.append(c)
    for c in f.calls("tofile"):
        if re.search(r"\.bin\b|bin_path|filename", " ".join(_text(a) for a in c.args) + c.text):
            out.append(c)
    for c in f.calls("numpy.frombuffer", "np.frombuffer"):
        # a typed window read out of a byte buffer at an offset (``tokens = np.frombuffer(buffer=self.data, dtype=uint16,
        # count=n, offset=start)`` over the memmap of a packed token file, modalities' ``.pbin``): token ids read directly
        if not _in_tests(c.path) and ("offset" in c.kwargs or len(c.args) >= 4) and _TOKENISH.search(f"{c.text} {c.func or ''}"):
            out.append(c)
        # a typed slice of a flat array read as a byte range (OLMo ``_read_chunk_from_memmap``: ``buffer =
        # get_bytes_range(path, bytes_start, num_bytes)`` then ``np.frombuffer(buffer, dtype=dtype)``): the
        # arrays hold token ids written ahead, read in place by offset
        elif not _in_tests(c.path) and c.func and any(
                x.func == c.func and (x.short in _BYTE_RANGE_READS or x.name == "os.pread") for x in f.files[c.path].calls):
            out.append(c)
        # the rest of a token shard read after its header (llm.c ``_load_data_shard``: ``header = np.frombuffer(f.read(256*4),
        # dtype=np.int32)`` then ``tokens = np.frombuffer(f.read(), dtype=np.uint16)``): a file's bytes read as 16/32-bit ids
        elif not _in_tests(c.path) and c.args and _text(c.args[0]).endswith(".read()") and re.search(r"uint16|uint32", c.text):
            out.append(c)
    # a ``.npy`` token shard loaded whole (karpathy/build-nanogpt ``def load_tokens(filename): npt = np.load(filename)``, the
    # shards ``fineweb.py`` wrote with ``np.save``): token ids stored ahead in a binary array, read back as they are
    for c in f.calls("numpy.load", "np.load"):
        # (not counts, lengths, offsets or split points loaded beside the ids: xtuner ``num_tokens = np.load(...)``,
        # BingBertGlue ``self.tokens_split = np.load(...)``)
        if not _in_tests(c.path) and _TOKENISH.search(f"{c.text} {c.func or ''}") and not _INDEX_SAVE.search(c.text) \
                and not re.search(r"split", c.text, re.I):
            out.append(c)
    scope = [c for c in f.calls("torch.from_file", "readinto", "tobytes", "numpy.save", "np.save", "TokensLoader") if not _in_tests(c.path)]
    for c in scope:
        where = f"{c.text} {c.func or ''}"
        if c.short == "TokensLoader" or (c.name == "torch.from_file" and not _shared_mapping(c)) or (c.short == "readinto" and _TOKENISH.search(where)):
            out.append(c)
        elif c.short == "tobytes" and ".write(" in c.text and _TOKENISH.search(where) and not _HOST_COPY.search(c.text):
            out.append(c)
        elif c.short == "save" and _TOKENISH.search(where) and not _INDEX_SAVE.search(" ".join(_text(a) for a in c.args)):
            out.append(c)
    return out


#: a tensor copied off the device (``x.cpu().numpy()``): the run's own tensors dumped (llm.c's ``write_state`` writes a batch,
#: its logits and gradients for the C port's test), not token ids prepared ahead
_HOST_COPY = lazy_compile(r"\.(cpu|detach)\(\)")


_READER_SHORTS = frozenset({"memmap", "frombuffer", "from_file", "readinto", "TokensLoader", "load"})


def token_readers(f: Facts) -> list[Call]:
    """The readers among :func:`_token_bins` (a memory map, a typed read of a shard, a ``readinto`` buffer), not the writers
    of the data preparation."""
    return [c for c in _token_bins(f) if c.short in _READER_SHORTS]


def _shared_mapping(c: Call) -> bool:
    """``torch.from_file(path, shared=True, ...)`` (or ``shared`` as the second positional argument): a writable mapping whose
    writes go to the file, the form a process uses to hand tensors it fills to another process (openpipe-art's packed
    rows: ``packed_tensors_to_dir`` maps the files and ``copy_``s the step's tensors in, the trainer process maps them
    again). Such a file is written by the run itself, step by step, not token data prepared ahead; a reader of a token
    shard maps it read-only (modded-nanogpt's ``torch.from_file(str(file), False, 256, dtype=torch.int32)``)."""
    shared = c.kwargs.get("shared", c.args[1] if len(c.args) > 1 else None)
    return truthy(shared) is True


_CHUNK_FUNC = lazy_compile(r"chunk|window|block", re.I)
_WEIGHT_FUNC = lazy_compile(r"weight|param|ckpt|checkpoint|state_dict|offload", re.I)
#: a module of a KV cache (``kv_cache.py``, ``paged_kvcache.py``) and a function of the inference path (``update_inference_inputs``,
#: ``generate_step``, ``_generation_loop``)
_KV_MODULE = lazy_compile(r"kv_?cache", re.I)
_INFER_FUNC = lazy_compile(r"inference|generate|generation", re.I)
#: reads of a byte range of a file (local or remote): ``get_bytes_range(path, start, n)``, ``f.seek(o)`` + ``f.read(n)``
_BYTE_RANGE_READS = frozenset({"get_bytes_range", "pread", "read_range", "get_range", "readinto"})
_INDEX_FILE = lazy_compile(r"indices|_index\b|\bindex_|offsets?_|lengths?_|_meta\b", re.I)
#: ``np.save`` of an index or a length table next to the data (xtuner ``np.save(save_path, num_tokens)`` into
#: ``num_tokens.npy``, ``np.save(open(f"{filename}.bin.meta", "wb"), train_meta)``): sample lengths and offsets, not token ids
_INDEX_SAVE = lazy_compile(r"\.meta\b|_meta\b|\bmeta\b|num_tokens|lengths?\b|offsets?\b|\bindex\b", re.I)


def _bin_key(c: Call) -> str:
    return "np.memmap" if c.short == "memmap" else f"{c.short}()"


def _streaming_files(f: Facts) -> set[str]:
    """Files that load a dataset with ``streaming=True``: a ``.map`` there tokenizes on the fly while training reads.
    Per file, so one streaming path (axolotl's ``pretraining_dataset``) does not make every other map online."""
    return {c.path for c in f.calls("load_dataset") if truthy(c.kwargs.get("streaming"))}


# -- tokenization: offline, up-front (once per run) or online (per sample) ----------------

_TOKENIZE_SHORT = {"encode_plus", "batch_encode_plus", "apply_chat_template", "tokenizer_image_token", "encode_ordinary",
                   "encode_ordinary_batch", "encode_batch", "processor", "encode",
                   # ChatGLM's remote tokenizer: ``tokenizer.build_single_message(role, "", content)`` returns token ids
                   "build_single_message", "build_chat_input"}
#: a module of collator classes (``instruction_collator.py``, ``data_collator.py``, ``collate.py``): their ``__call__`` is
#: the DataLoader's ``collate_fn``, run per batch
_COLLATOR_FILE = lazy_compile(r"collat", re.I)
#: a callable object that turns one sample into model inputs (torchtitan ``TextProcessor(SampleProcessor)``, whose
#: ``__call__(sample, rng)`` the Grain pipeline maps lazily over the stream), in a data module
_SAMPLE_PROCESSOR = lazy_compile(r"(Sample\w*Processor|Transform)$")
_DATA_MODULE = lazy_compile(r"(?i)(^|/)\w*(data|dataset)s?\w*(/|\.py$)")


def _fed_to_loader(f: Facts, path: str) -> bool:
    """A training entry point that builds its own DataLoader (``train_loader = DataLoader(train_dataset, ...)``)."""
    return f.entry_point(path) and path in f.files and any(c.short == "DataLoader" for c in f.files[path].calls)


def _imports_any(f: Facts, path: str, targets: set[str]) -> bool:
    """Whether ``path`` imports one of the files ``targets`` (nanoVLM ``train.py`` wraps what it loads in
    ``data.datasets.VQADataset``, which tokenizes each sample)."""
    return bool(_import_graph(f).get(path, set()) & targets)


def _imported_module(f: Facts, path: str) -> bool:
    """Whether another file imports ``path`` and no launch runs it: a module of the project, not a script of its own."""
    return not f.entry_point(path) and any(path in targets for p, targets in _import_graph(f).items() if p != path)


def _built_by_dataset(f: Facts, path: str, line: int, datasets: set[str] | frozenset[str]) -> bool:
    """Whether the class a line sits in is instantiated in the ``__init__`` of a dataset module's class."""
    k = class_span_at(f, path, line)
    return k is not None and any(c.func == "__init__" and c.path in datasets for c in f.calls(k.name))


def _sample_processor(f: Facts, path: str, line: int) -> bool:
    """Whether the class a line sits in is a per-sample processor or transform, by its name or a base's."""
    k = class_span_at(f, path, line)
    return k is not None and any(_SAMPLE_PROCESSOR.search(n.rsplit(".", 1)[-1]) for n in (k.name, *k.bases))


_ONLINE_FUNCS = lazy_compile(r"^(__getitem__|__getitems__|__iter__|__next__|_?get_item|.*collate.*)$", re.I)
#: a hand-written streaming loader (nanochat's ``tokenizing_distributed_data_loader``, a generator that reads parquet row
#: groups and tokenizes them batch by batch while training consumes it): its tokenization runs in the input pipeline, not
#: once at start-up; a function that builds or returns a loader (``build_dataloader``, ``get_data_loader``) is set-up code
#: (Lightning's ``train_dataloader()`` hook returns a loader too: set-up)
_STREAM_LOADER = lazy_compile(r"^(?!_*(build|get|create|make|prepare|setup|init|load|save|log|eval|train|val|test)_)"
                            r"(?!.*(^|_)(from|for|of|to|with|in|on)_(data_?loader|data_?generator|batch_?generator))"
                            r".*(data_?loader|data_?generator|batch_?generator)", re.I)
#: (not a module of a model's input stems: ImageBind's ``models/multimodal_preprocessors.py`` patchifies inside forward)
_OFFLINE_PATH = lazy_compile(r"^(?!(.*/)?models?/|.*preprocessors?\.py$)"
                           r"(.*/)?[^/]*(preprocess|prepare|pre_?tokeniz|tokenize_(data|dataset|corpus|shuffle)|build_(data|dataset)|make_dataset|process_data"
                           # (open_lm/dclm ``tokenize_shuffle.py`` writing webdataset shards; HuatuoGPT-II ``data_process.py``,
                           # whose packed rows the trainer reads with ``load_from_disk``)
                           # (anole's ``training/data_tokenization.py``, run by ``prepare_data.sh``, writes the token ids train.py reads)
                           r"|data_prep|data_process(?!or)|data_tokeniz)[^/]*\.py$", re.I)
_HF_MAP_KW = {"batched", "num_proc", "remove_columns", "fn_kwargs", "desc", "load_from_cache_file", "batch_size", "cache_file_name"}


#: operations on a tokenizer object (serialising it for an RPC, type checks, wrapping), not tokenization of text
_TOKENIZER_OBJECT_OP = lazy_compile(r"^_*(is|archive|unarchive|serialize|deserialize|from|to|pickle|unpickle|copy|wrap|check|validate|"
                                  r"patch|set|create|make|configure|update|resize|register)_(\w+_)?tokenizers?$")
#: a function that handles the tokenizer itself, not text (``load_tokenizer``, fairseq2's ``load_custom_tokenizer``,
#: ``_download_tokenizer``, ``_register_tokenizer_families``, ``_log_tokenizer``)
#: a factory named noun-first that builds a tokenizer object (``model_config.model_tokenizer_create(path)``, a
#: ``partial(AutoTokenizer.from_pretrained, use_fast=True)`` kept in a model registry; ``tokenizer_builder(cfg)``)
_TOKENIZER_FACTORY = lazy_compile(r"^_*(\w+_)?tokenizers?_(create|build|load|init|make|factory|builder|loader|getter|cls|class|fn|ctor)$")
_TOKENIZER_ADMIN = lazy_compile(r"^((maybe|try)_)?(get|load|build|init|train|save|download|register|log|create|make|setup|set|resolve|infer|add|check|"
                              r"validate|is|has)_(\w+_)?tokenizers?(_\w+)?$")


#: a reader of data tokenized ahead (llm-foundry ``_read_binary_tokenized_sample``, ``load_tokenized_dataset``)
_READS_TOKENIZED = lazy_compile(r"^(read|load|get|fetch|iter)(_\w+)?_(pre_?)?tokenized(_|$)", re.I)


def _tokenizer_calls(f: Facts) -> list[Call]:
    shorts = {c.short for c in f.calls_where(lambda s: "tokeniz" in s.lower() or s in _TOKENIZE_SHORT)}
    out = []
    for c in f.calls(*sorted(shorts)) if shorts else []:
        if _in_tests(c.path):
            continue
        receiver = c.name.rsplit(".", 1)[0].lower() if "." in c.name else ""
        bare = c.short.lstrip("_")  # a private helper (``_load_tokenizer``) is named like its public form
        low = bare.lower()
        if low == "encode" and (not re.search(r"tok|enc|sp_model|spm|bpe", receiver)
                                or ("encoder" in receiver and "tok" not in receiver)):
            continue  # ``text_encoder.encode(prompt)`` runs a model (hidden states), it does not tokenize
        if _READS_TOKENIZED.match(low):
            continue  # ``_read_binary_tokenized_sample(idx)`` reads tokens written ahead; it tokenizes nothing
        if "detokeniz" in low or "untokeniz" in low:
            continue  # token ids back to text (GPT-NeoX's CharCounter measuring characters per token): the reverse direction
        if bare[:1].isupper() and bare.endswith(("Config", "Args", "Arguments")):
            continue  # ``PreTokenizedDatasetWrapperConfig(...)``: a configuration, not tokenization
        if low.endswith(("_args", "_arguments", "_json", "_yaml", "_config")):
            continue  # dclm's ``add_tokenize_shuffle_args(parser)``, ``generate_tokenized_dataset_json(...)``: options and records
        if low == "processor" and "text" not in c.kwargs and not c.args:
            continue
        if low == "apply_chat_template" and truthy(c.kwargs.get("tokenize", True)) is False:
            continue
        if "tokeniz" in low and low.endswith(("tokenizer", "tokenizers")) and not (c.args or c.kwargs):
            continue
        if _TOKENIZER_ADMIN.match(low) or _TOKENIZER_FACTORY.match(low):
            continue
        if "resize" in low:
            continue  # Stanford Alpaca's ``smart_tokenizer_and_embedding_resize``: adds special tokens, resizes the embeddings
        if _TOKENIZER_OBJECT_OP.match(low):
            continue  # handles the tokenizer object (AReaL's RPC ``cls._archive_tokenizer(tokenizer)``, ``_is_tokenizer(value)``)
        if c.name.endswith(("from_pretrained", "Tokenizer")) or "AutoTokenizer" in c.name:
            continue
        # a class named for the tool builds a tokenizer, its config or an accessor (fairseq2 ``get_llama_tokenizer_hub =
        # TokenizerHubAccessor(LLAMA_FAMILY, kls=LlamaTokenizer, ...)`` at module level), it tokenizes no text; a class
        # named for its output (``TokenizedDataset(ds, tokenizer)``) may
        if bare[:1].isupper() and "Tokenizer" in bare:
            continue
        if bare[:1].isupper() and "Tokenized" in bare and not any(
                _TOKENIZER_RECV.search(t) and not _TOKENIZED_SOURCE.search(t) for a in (*c.args, *c.kwargs.values()) if (t := _arg_text(a))):
            # a class named for tokenized data built from a cache it wraps (``TokenizedDocumentCache(cache, flatten_docs=...)``)
            # or from the file of ids it reads (anole's ``TokenizedDataset(DATASET_TOKENIZED_PATH)``: ``torch.tensor(obj[
            # 'text_tokens'] + obj['image_tokens'])`` per JSON line, written by its ``data_tokenization.py``)
            continue
        if c.args and all(isinstance(a, str) for a in c.args) and not c.kwargs.keys() - {"add_special_tokens", "return_tensors"}:
            continue  # a probe of the tokenizer on a literal (``tokenizer("hi there")["input_ids"]`` to see if it appends eos)
        if low not in {"tokenizer", "tokenizers"} and low.endswith(("_tokenizer", "_tokenizers", "_tokenizer_parallelism")) and c.args \
                and _TOKENIZER_OBJECT_ARG.match(_arg_text(c.args[0])) and not c.kwargs.keys() & _TEXT_TOKENIZER_KW:
            continue  # a helper handed the tokenizer object (``num_cpus_used_by_tokenizer(tokenizer)``), not text to tokenize
        if _wrapper_delegation(f, c):
            continue
        out.append(c)
    # the entry point of a tokenization pipeline the project runs from a library (dclm ``from open_lm.datapreprocess.ray import
    # tokenize_shuffle`` then ``tokenize_shuffle.main(tokenize_shuffle_args)``): the module is named for it
    for c in f.calls("main", "run"):
        module = c.name.rsplit(".", 1)[0].rsplit(".", 1)[-1].lower() if "." in c.name else ""
        if "tokeniz" in module and "detokeniz" not in module and not _in_tests(c.path) and c not in out:
            out.append(c)
    return out


#: the methods of a tokenizer's own interface (a wrapper class implements them by calling the tokenizer it wraps)
_TOKENIZER_API = lazy_compile(r"^_?(encode\w*|decode\w*|tokenize\w*|__call__|batch_encode\w*|encode_batch\w*|apply_chat_template)$")


def _wrapper_delegation(f: Facts, c: Call) -> bool:
    """A tokenizer class's own ``encode``/``__call__`` that forwards to the tokenizer it wraps (torchtitan
    ``HuggingFaceTokenizer.encode``: ``token_ids = self.tokenizer.encode(text).ids``): the wrapper's implementation, not a
    place the data is tokenized; the wrapper's callers in the data pipeline are those places."""
    if not c.func or not _TOKENIZER_API.match(c.func):
        return False
    owner = class_at(f, c.path, c.line)
    return owner is not None and "Tokenizer" in owner


#: an argument that is the tokenizer object itself (``tokenizer``, ``self.tokenizer``, ``args.tok``)
_TOKENIZER_OBJECT_ARG = lazy_compile(r"^(\w+\.)*\w*(tok|processor)\w*$", re.I)


def _arg_text(a: object) -> str:
    """The source text of a recorded call argument (an expression or a constant)."""
    return str(getattr(a, "text", a) or "")


#: ChatGLM3 ``finetune_demo/finetune_hf.py``: the data manager maps the callback its caller hands it
_CHATGLM_DATA = (
    "import functools\n\nfrom datasets import load_dataset\n\n\nclass DataManager:\n"
    "    def __init__(self, data_dir, num_proc=16):\n        self._num_proc = num_proc\n"
    "        self._dataset_dct = load_dataset(data_dir)\n\n"
    "    def get_dataset(self, split, process_fn, batched=True):\n        orig_dataset = self._dataset_dct[split]\n"
    "        return orig_dataset.map(\n            process_fn,\n            batched=batched,\n"
    "            remove_columns=orig_dataset.column_names,\n            num_proc=self._num_proc,\n        )\n\n\n"
    "def process_batch(batch, tokenizer):\n    input_ids = []\n    for conv in batch['conversations']:\n"
    "        for message in conv:\n            input_ids += tokenizer.build_single_message(message['role'], '', message['content'])\n"
    "    return {{'input_ids': input_ids}}\n\n\n"
    "def main(data_dir, model_dir):\n    tokenizer = AutoTokenizer.from_pretrained(model_dir, trust_remote_code=True)\n"
    "    data_manager = DataManager(data_dir)\n"
    "    train_dataset = data_manager.get_dataset('train', {callback}, batched=True)\n"
    "    trainer = Seq2SeqTrainer(model=model, train_dataset=train_dataset)\n    trainer.train()\n"
)


def _map_callback(f: Facts, c: Call) -> str:
    """The text of a ``.map`` call's callback, through a local name bound to ``functools.partial`` in the same function
    (picotron: ``tokenizer_func = partial(self.tokenizer_group_text, ...)`` then ``dataset.map(tokenizer_func, ...)``)."""
    return _map_callback_text(f, c, c.args[0]) if c.args else ""


def _map_callback_text(f: Facts, c: Call, arg: Any) -> str:
    """The text of the callback ``arg`` handed to the call ``c``, through a ``functools.partial`` bound to that name in the
    same function (see :func:`_map_callback`)."""
    text = _text(arg)
    if not re.fullmatch(r"[A-Za-z_]\w*", text) or c.path not in f.files:
        return text
    bind = re.compile(r"^\s*" + re.escape(text) + r"\s*=\s*(functools\.)?partial\(")
    for x in f.files[c.path].calls:
        if x.func == c.func and x.short == "partial" and x.args and bind.match(x.text):
            return f"{text} {_text(x.args[0])}"
    # a parameter of the enclosing method (ChatGLM3's ``DataManager.get_dataset(split, process_fn)`` maps ``process_fn``):
    # the callbacks its callers in the same file hand it (``functools.partial(process_batch, tokenizer=tokenizer, ...)``)
    if c.func and c.func != "<module>":
        handed = [_text(a) for x in f.files[c.path].calls if x.short == c.func and x is not c
                  for a in (*x.args, x.kwargs.get(text)) if a is not None and "partial(" in _text(a)]
        if handed:
            return " ".join([text, *handed])
    return text


def _mapped_funcs(f: Facts) -> tuple[set[str], set[str], set[str]]:
    """Function names handed to ``datasets.map`` (cached), to an uncached map, and to ``set_transform``/``collate_fn`` (online)."""
    cached: set[str] = set()
    uncached: set[str] = set()
    online: set[str] = set()
    streaming = _streaming_files(f)
    # WebDataset pipeline stages (``wds.map(preprocess_fn)``, ``wds.map_tuple(image_fn, text_fn)`` in a ``wds.DataPipeline``)
    # run per sample in the loader's workers on every pass: online, whatever the data files hold
    for c in f.calls("webdataset.map", "webdataset.map_tuple", "webdataset.map_dict"):
        for a in list(c.args) + [v for k, v in c.kwargs.items() if k != "handler"]:
            online.update(re.findall(r"[A-Za-z_]\w*", _map_callback_text(f, c, a)))
    for c in f.calls("map"):
        if "." not in c.name or not c.args or c.name.startswith("webdataset."):
            continue
        if not (_HF_MAP_KW & set(c.kwargs) or re.search(r"(data|ds|set)", c.name.rsplit(".", 1)[0], re.I)):
            continue
        names = set(re.findall(r"[A-Za-z_]\w*", _map_callback(f, c)))
        no_cache = truthy(c.kwargs.get("load_from_cache_file", True)) is False or truthy(c.kwargs.get("keep_in_memory", False)) is True
        (online if c.path in streaming else uncached if no_cache else cached).update(names)
    for c in f.calls("set_transform", "with_transform"):
        for a in list(c.args) + list(c.kwargs.values()):
            online.update(re.findall(r"[A-Za-z_]\w*", _text(a)))
    for c in f.calls_with_kw("collate_fn"):
        online.update(re.findall(r"[A-Za-z_]\w*", _text(c.kwargs["collate_fn"])))
    return cached, uncached, online


_NOT_TRAINING = lazy_compile(r"(infer|serve|server|generat|chat|demo|predict|deploy|api|app|eval|bench|export|convert_|quantiz)", re.I)


#: methods that run the model for generation or evaluation (Composer's ``Generate.generate`` callback tokenizes its fixed
#: prompts there): exact names, so that a data helper such as ``generate_and_tokenize_prompt`` is still followed
#: a folder of serving or inference code (Megatron-LM ``megatron/core/inference/text_generation_server/``)
_SERVING_DIR = lazy_compile(r"(^|/)(\w*inference\w*|serving|\w*_server|server)/", re.I)
#: an evaluation harness's folder (GPT-NeoX ``eval_tasks/eval_adapter.py``: lm-eval-harness requests tokenized in its ``_collate``)
_EVAL_DIR = lazy_compile(r"(^|/)(eval|evals|eval_tasks|evaluation|evaluations|lm_eval\w*)/", re.I)
#: (and an RL trainer's rollout: Open-Reasoner-Zero / OpenRLHF ``make_experience`` tokenize the prompts with the responses
#: the policy just generated, on every step: the rollout's work, not the input pipeline's)
_SIDE_FUNC = lazy_compile(r"^_?(generate|infer|inference|predict|chat|evaluate|eval|eval_forward|eval_step|generate_step"
                        r"|make_experience(_list)?|generate_vllm|(generate_)?rollouts?)$")


def _not_training_file(path: str) -> bool:
    """Generation, serving, evaluation or conversion scripts and configs (judged by the file name)."""
    return bool(_NOT_TRAINING.search(path.rsplit("/", 1)[-1].rsplit(".", 1)[0]))


def _dataset_files(f: Facts) -> set[str]:
    return {p for p, ff in f.files.items() if any(c.func in {"__getitem__", "__len__", "__iter__"} for c in ff.calls)}


def _materialised_files(f: Facts) -> set[str]:
    """Files of a map-style Dataset class that writes itself into an Arrow dataset before training: ``datasets.Dataset.
    from_generator(self.as_generator, ...)`` over its own samples (oumi ``BaseMapDataset.to_hf()``: every ``self[idx]``,
    tokenization included, runs once, with ``num_proc`` workers, into Arrow files the loader then reads). Its
    ``__getitem__`` is up-front work, not per-sample work in the loader. ``IterableDataset.from_generator`` streams: online."""
    if ("materialised",) in f._memo:
        return f._memo[("materialised",)]  # type: ignore[return-value]
    out: set[str] = set()
    for c in f.calls("Dataset.from_generator"):
        if "IterableDataset" in c.name or _in_tests(c.path) or not c.args:
            continue
        if re.fullmatch(r"self\.\w+", _text(c.args[0]).strip()) and any(x.func == "__getitem__" for x in f.files[c.path].calls):
            out.add(c.path)
    f._memo[("materialised",)] = out  # type: ignore[assignment]
    return out


def _materialising_calls(f: Facts) -> list[Call]:
    """The ``Dataset.from_generator(self.<generator>)`` calls of :func:`_materialised_files`."""
    files = _materialised_files(f)
    return [c for c in f.calls("Dataset.from_generator") if c.path in files and "IterableDataset" not in c.name
            and c.args and re.fullmatch(r"self\.\w+", _text(c.args[0]).strip())]


#: a call into a tokenizer or processor object (``self.tokenizer.encode(...)``), not into a project function of that name
_TOKENIZER_RECV = lazy_compile(r"(tok|processor|enc\b|encoder|sp_model|spm|bpe)", re.I)
#: an argument that names data already tokenized or where it is (``DATASET_TOKENIZED_PATH``, ``tokenized_file``), not a tokenizer
_TOKENIZED_SOURCE = lazy_compile(r"tokenized|path|file|dir", re.I)


def _import_graph(f: Facts) -> dict[str, set[str]]:
    """Project file -> the project files it imports from (``from oumi.core.datasets.base_map_dataset import BaseMapDataset``,
    ``from .huggingface import process_hf_dataset``). Memoised per scan."""
    memo = f._memo
    if ("import-graph",) in memo:
        return memo[("import-graph",)]  # type: ignore[return-value]
    by_module: dict[str, str] = {}
    for p, ff in f.files.items():
        if ff.kind == "python" and p.endswith(".py"):
            mod = p[:-3].replace("/", ".")
            mod = mod[: -len(".__init__")] if mod.endswith(".__init__") else mod
            parts = mod.split(".")
            for i in range(len(parts)):
                by_module.setdefault(".".join(parts[i:]), p)
    def resolve(p: str, mod: str) -> str | None:
        if mod.startswith("."):
            pkg = p.rsplit("/", 1)[0].replace("/", ".") if "/" in p else ""
            up = len(mod) - len(mod.lstrip("."))
            base = pkg.split(".")[: len(pkg.split(".")) - (up - 1)] if pkg else []
            mod = ".".join([*base, mod.lstrip(".")]) if mod.lstrip(".") else ".".join(base)
        return by_module.get(mod)

    graph: dict[str, set[str]] = {}
    for p, ff in f.files.items():
        for imp in ff.imports:
            target = resolve(p, imp.module)
            if target and target.endswith("__init__.py"):
                # ``from oumi.core.datasets import BaseSftDataset``: the module the package re-exports the name from; a package
                # itself is not followed (its re-exports would link every file to every other)
                init = f.files.get(target)
                again = [resolve(target, i.module) for i in (init.imports if init else ()) if imp.name and i.name == imp.name]
                target = next((t for t in again if t), None)
            if target and target != p and not target.endswith("__init__.py"):
                graph.setdefault(p, set()).add(target)
    memo[("import-graph",)] = graph  # type: ignore[assignment]
    return graph


def _linked(f: Facts, a: str, b: str, hops: int = 3) -> bool:
    """Whether one of two files imports the other, directly or through up to ``hops`` project files."""
    graph = _import_graph(f)

    def reaches(src: str, dst: str) -> bool:
        seen, frontier = {src}, {src}
        for _ in range(hops):
            frontier = {n for x in frontier for n in graph.get(x, ()) if n not in seen}
            if dst in frontier:
                return True
            seen |= frontier
        return False

    return reaches(a, b) or reaches(b, a)


def _minority_note(f: Facts, minor: list[Call], what: str) -> str:
    """``; samples are read one file at a time only in loaders 58 of the 587 Python config files use (llava.py:111, ...)``."""
    if not minor:
        return ""
    share, total, noun = _recipe_share(f) or ({}, 0, "recipes")
    roots = sorted({r for c in minor for r in _loader_roots(f, c.path, c.func, _ONLINE_FUNCS if "token" in what else _GETITEM)})
    shown = ", ".join(f"{c.path}:{c.line}" for c in minor[:3]) + (f" (+{len(minor) - 3})" if len(minor) > 3 else "")
    uses = ", ".join(f"{r.rsplit('/', 1)[-1]} in {share.get(r, 0)}" for r in roots[:4])
    return f"; {what} only in loaders that a minority of the {total} {noun} use ({uses}): {shown}"


def _recipe_arrow_loads(f: Facts) -> list[Evidence]:
    """Python config files (mmengine recipes) whose dataset is built by ``datasets.load_dataset``/``load_from_disk``
    (``dataset=dict(type=load_dataset, path=data_path)``): an Arrow table, when more than half of the config files do so."""
    configs = f.config_modules()
    if len(configs) < 3:
        return []
    hits = [c for c in f.calls_with_kw("type") if c.path in configs and isinstance(c.kwargs["type"], Expr)
            and re.search(r"(^|\.)(load_dataset|load_from_disk)$", c.kwargs["type"].dotted or c.kwargs["type"].text)]
    files = {c.path for c in hits}
    if len(files) * 2 <= len(configs):
        return []
    first = hits[0]
    return [_ev(first, key=f"type=load_dataset in {len(files)} of {len(configs)} Python config files", value=_text(first.kwargs["type"]))]


def _loader_roots(f: Facts, path: str, func: str | None, start: re.Pattern[str], depth: int = 0, seen: set[tuple[str, str]] | None = None) -> set[str]:
    """Files of the loader functions (``__getitem__``, ``__iter__``, a collate function: ``start``) that reach ``func`` of
    ``path`` through calls that may call it (:func:`_may_call`)."""
    if func is None or depth > 5:
        return set()
    if start.match(func):
        return {path}
    seen = seen if seen is not None else set()
    if (path, func) in seen:
        return set()
    seen.add((path, func))
    out: set[str] = set()
    for c in f.calls(func):
        if c.func != func and _may_call(f, c, path, func):
            out |= _loader_roots(f, c.path, c.func, start, depth + 1, seen)
    return out


_REGISTER = lazy_compile(r"""@[\w.]*register\w*\(\s*["']([^"']+)["']""")


def _recipe_units(f: Facts) -> tuple[list[set[str]], str] | None:
    """The recipes and the project files each one starts from, to attribute loaders to recipes: each Python config file
    (:meth:`Facts.config_modules`, mmengine) starts from itself; each YAML/JSON recipe that names registered datasets
    (oumi ``dataset_name: yahma/alpaca-cleaned`` -> ``@register_dataset("yahma/alpaca-cleaned")`` on a class in
    ``datasets/sft/alpaca.py``) starts from the files of those classes. None with fewer than three such recipes."""
    memo = f._memo
    if ("recipe-units",) in memo:
        return memo[("recipe-units",)]  # type: ignore[return-value]
    out: tuple[list[set[str]], str] | None = None
    configs = f.config_modules()
    if len(configs) >= 3:
        out = ([{p} for p in sorted(configs)], "Python config files")
    else:
        registered: dict[str, str] = {}
        for d in f.records("decorators"):
            m = _REGISTER.match(d.text.strip())
            if m and "dataset" in (d.name + d.path).lower() and not _in_tests(d.path):
                registered[m.group(1)] = d.path
        by_recipe: dict[str, set[str]] = {}
        for st in f.settings("dataset_name", "dataset") if registered else []:
            if st.source == "config" and st.path.endswith((".yaml", ".yml", ".json")) and isinstance(st.value, str) and st.value in registered:
                by_recipe.setdefault(st.path, set()).add(registered[st.value])
        if len(by_recipe) >= 3:
            out = (list(by_recipe.values()), "recipes that name a registered dataset")
    memo[("recipe-units",)] = out  # type: ignore[assignment]
    return out


def _recipe_share(f: Facts) -> tuple[dict[str, int], int, str] | None:
    """(project file -> how many recipes reach it through their imports (:func:`_recipe_units`: the dataset classes and
    builders a recipe names, ``train_dataset = dict(type=LLaVADataset, ...)``, and what those import, up to three
    hops), the number of recipes, what they are). None without three recipes to attribute."""
    memo = f._memo
    if ("recipe-share",) in memo:
        return memo[("recipe-share",)]  # type: ignore[return-value]
    units = _recipe_units(f)
    out = None
    if units is not None:
        graph = _import_graph(f)
        share: dict[str, int] = {}
        closures: dict[frozenset[str], set[str]] = {}
        for entry in units[0]:
            key = frozenset(entry)
            if key not in closures:
                seen, frontier = set(entry), set(entry)
                for _ in range(3):
                    frontier = {n for x in frontier for n in graph.get(x, ()) if n not in seen}
                    seen |= frontier
                closures[key] = seen
            for t in closures[key]:
                share[t] = share.get(t, 0) + 1
        out = (share, len(units[0]), units[1])
    memo[("recipe-share",)] = out  # type: ignore[assignment]
    return out


def _minority_sites(f: Facts, sites: list[Call], start: re.Pattern[str]) -> tuple[list[Call], list[Call]]:
    """(sites on the recipes' majority path, sites only in loaders that a minority of the recipes use): a site is the
    minority's when every loader file it runs in (its own file for a loader function, else the loaders that reach it) is
    reached by fewer than half of the recipes (:func:`_recipe_share`; xtuner: LLaVA/InternVL datasets in 54 of 587 config
    files, the ``_lite`` library in none; oumi: the pretraining datasets' ``__iter__`` in the few recipes that name them).
    Without recipes to attribute, every site is the majority's."""
    got = _recipe_share(f)
    if got is None:
        return sites, []
    share, total, _ = got
    major: list[Call] = []
    minor: list[Call] = []
    for c in sites:
        roots = _loader_roots(f, c.path, c.func, start)
        if not roots and not start.match(c.func or "") and any(x.func != c.func and _may_call(f, x, c.path, c.func or "") for x in f.calls(c.func or "")):
            continue  # a helper named like a loader (``load_image``) whose callers are no loader (an evaluation hook's set-up)
        (minor if roots and all(share.get(r, 0) * 2 < total for r in roots) else major).append(c)
    return major, minor


#: methods of the built-in str/list/dict/file types: called on a local object, they are those, not a project function
_BUILTIN_METHODS = frozenset({
    "split", "rsplit", "splitlines", "strip", "lstrip", "rstrip", "join", "replace", "format", "lower", "upper", "startswith",
    "endswith", "find", "get", "items", "keys", "values", "append", "extend", "insert", "pop", "update", "copy", "count",
    "index", "sort", "read", "readline", "readlines", "write", "close", "setdefault",
})


def _import_roots(f: Facts, path: str) -> set[str]:
    """The top-level names the imports of ``path`` bind (dotted call names are resolved through them)."""
    memo = f._memo.setdefault(("import-roots",), {})  # type: ignore[arg-type]
    found: set[str] | None = memo.get(path)  # type: ignore[attr-defined]
    if found is None:
        found = memo[path] = {i.module.split(".", 1)[0] for i in f.files[path].imports}  # type: ignore[index]
    return found


def _may_call(f: Facts, c: Call, path: str, func: str) -> bool:
    """Whether ``c`` may call the function ``func`` defined in ``path`` (callers are found by name): not a tokenizer's own
    method (``self.tokenizer.encode()`` does not call xtuner's ``RewardModelClient.encode``), and not a bare ``process(...)``
    in another file that defines its own ``process`` (a sampler's nested helper is not the dataset builder's)."""
    if "." in c.name:
        recv = c.name.rsplit(".", 1)[0]
        root = recv.split(".", 1)[0]
        if root not in ("self", "cls", "super()") and not recv.startswith(".") and c.path in f.files:
            if root in _import_roots(f, c.path):
                # a call through an imported module or class (``torch.load``, ``numpy.split``) calls ``func`` of ``path`` only
                # when that is the module ``path`` is, a class in it, or a package that holds it (Megatron-LM: a token
                # dataset's ``numpy.split`` was read as a checkpoint converter's ``def split``, and ``torch.load`` as
                # ``dist_checkpointing.load``, linking ``__getitem__`` to checkpoint-config reads)
                mods = _module_names(path)
                if mods and not any(recv == m or recv.startswith(m + ".") or m.startswith(recv + ".") for m in mods):
                    return False
            elif c.short in _BUILTIN_METHODS:
                return False  # ``img_file.split("_")`` on a local object is str.split, not a project function ``split``
        if (root == "self" and recv != "self" and c.short in _BUILTIN_METHODS and c.path != path and c.path in f.files
                and path in f.files and not _linked(f, c.path, path)):
            # ``self.indexed_dataset.append(...)`` on an attribute, in a file that does not import ``path``: a list's append,
            # not another module's class method named ``append``
            return False
        if recv == "self" and c.path != path and c.path in f.files and path in f.files:
            # a method called on ``self`` in another file runs there only in a subclass or a base class: files linked by an
            # import (oumi ``BaseSftDataset(BaseMapDataset)``), not a sibling class with a method of the same name
            return _linked(f, c.path, path)
        if c.path != path and c.path in f.files and func in _calling_funcs(f, c.path):
            # ``self._prefetch_buffer.get(idx)`` in a file whose own class defines ``get`` (AReaL ``RDataset.__getitem__``
            # -> ``_PrefetchBuffer.get``) calls that method, not another file's ``get`` (a name-resolve store opening a file)
            return False
        return not (c.short in _TOKENIZE_SHORT and recv not in {"self", "cls", "super()"} and _TOKENIZER_RECV.search(recv.rsplit(".", 1)[-1]))
    if c.path != path and c.path in f.files and func in _calling_funcs(f, c.path):
        return False
    return True


#: writers of a columnar or flat token file: pyarrow ``parquet.write_table``/``feather.write_feather``, pandas
#: ``to_parquet``, numpy ``tofile``, MDS/WebDataset/TFRecord shard writers
_TABLE_WRITES = frozenset({"write_table", "write_feather", "to_parquet", "tofile", "MDSWriter", "ShardWriter", "TFRecordWriter"})


def _table_writers(f: Facts) -> dict[tuple[str, str], Call]:
    """Functions that write a data file, outside any Dataset class: (path, function) -> the first write."""
    if ("table_writers",) in f._memo:
        return f._memo[("table_writers",)]  # type: ignore[return-value]
    datasets = _dataset_files(f)
    out: dict[tuple[str, str], Call] = {}
    for c in f.calls(*sorted(_TABLE_WRITES)):
        if c.func is None or c.path in datasets or _in_tests(c.path):
            continue
        out.setdefault((c.path, c.func), c)
    f._memo[("table_writers",)] = out  # type: ignore[assignment]
    return out


def _written_by(f: Facts, c: Call) -> Call | None:
    """The write of a data file that stores what ``c`` tokenizes: in the same function, or in a function of the same file
    that calls ``c``'s function (directly or as a Ray task, ``convert_conversation_batch.remote(...)``): a preprocessing
    script (OpenChat's ``ochat/data/generate_dataset.py``: Ray tasks tokenize the conversations, then
    ``parquet.write_table(...)`` writes the epoch's token ids that the trainer reads), whatever the file is called."""
    writers = _table_writers(f)
    if c.func is None or not writers:
        return None
    w = writers.get((c.path, c.func))
    if w is not None:
        return w
    for x in f.files[c.path].calls:
        if x.func is not None and (c.path, x.func) in writers and x.func != c.func and (
                x.short == c.func or x.name.endswith(f"{c.func}.remote")):
            return writers[(c.path, x.func)]
    return None


def _owner_class(f: Facts, path: str, line: int) -> str | None:
    """The class a method's line sits in: the last ``class X(Base):`` statement above it in its file (the facts keep a class
    statement through the reference to its base; a method is always inside some class)."""
    ff = f.files.get(path)
    best: tuple[int, str] | None = None
    for r in ff.refs if ff else ():
        if r.line <= line and r.text.startswith("class ") and (best is None or r.line > best[0]):
            m = re.match(r"class\s+(\w+)", r.text)
            if m:
                best = (r.line, m.group(1))
    return best[1] if best else None


def _unbuilt_dataset_method(f: Facts, c: Call) -> bool:
    """A call in a dataset's ``__getitem__``/``__iter__`` whose class the project builds only under a switch that is off:
    ``dataset_cls = LazySupervisedDataset if data_args.lazy_preprocess else SupervisedDataset`` with ``lazy_preprocess: bool =
    False`` (FastChat ``train.py``; the facts record ``dataset_cls(...)`` as a call of each class under its condition). Its
    per-sample work does not run; a class built unconditionally anywhere, or never seen built, keeps it."""
    if not c.func or not _ONLINE_FUNCS.match(c.func) or "collate" in c.func.lower():
        return False
    memo = f._memo
    key = ("f-unbuilt", c.path, c.line)
    if key not in memo:
        cls = _owner_class(f, c.path, c.line)
        built = [x for x in f.calls(cls) if x.short == cls and not _in_tests(x.path)] if cls else []
        # every construction is the choice of a conditional expression (recorded under the local's name: the line does not
        # spell the class), and each choice's switch is off; a class built directly is judged as before
        memo[key] = bool(built) and all(f"{cls}(" not in x.text and guard_off(f, x) for x in built)  # type: ignore[assignment]
    return bool(memo[key])


def _calling_funcs(f: Facts, path: str) -> set[str | None]:
    """The functions of ``path`` that make a call (each call's ``func``), kept in the check's view: :func:`_may_call` asks
    this of the same files for thousands of callers (it scanned the file's calls each time: 1.4 million steps on
    Megatron-LM)."""
    memo = f._memo.setdefault(("calling-funcs",), {})  # type: ignore[arg-type]
    found: set[str | None] | None = memo.get(path)  # type: ignore[attr-defined]
    if found is None:
        found = memo[path] = {x.func for x in f.files[path].calls}  # type: ignore[index]
    return found


#: a start-up tokenizer call whose ids are kept: the call is the value assigned (``ids = tokenizer(text, ...)["input_ids"]``,
#: ``tokenized, last = self.tokenize(item)``), not a length measured and dropped (``len(tokenizer(...))``) or a bare call
_KEPT_TOKENS = lazy_compile(r"^[\w.\[\]'\"]+(\s*,\s*[\w.\[\]'\"]+)*\s*(\+)?=\s*\[?\s*(?!len\()[\w.]+\(")


def _counts_tokens(c: Call) -> bool:
    """A tokenization whose result is only counted, ``len(tokenizer.tokenize(text))``: a length, not token ids to train on."""
    return re.search(r"\blen\(\s*" + re.escape(c.name) + r"\s*\(", c.text) is not None


def _classify_tokenization(f: Facts) -> dict[str, list[Call]]:
    """Tokenization sites of the training data pipeline by where they run.

    ``online``: reached (through the calls between functions) from ``__getitem__``/``__iter__``/a collate function
    or a ``set_transform`` callback. ``mapped``: a ``datasets.map`` callback (its Arrow cache is reused across runs).
    ``startup``: a Dataset's ``__init__`` or the top level of a training script (redone every run, nothing saved).
    ``step``: a model's ``forward`` (BLIP-2 tokenizes the batch's captions there on every step).
    ``offline``: a preprocessing script. Tokenization elsewhere (generation, chat, evaluation) is not judged.
    """
    cached_cb, uncached_cb, online_cb = _mapped_funcs(f)
    datasets = _dataset_files(f)
    materialised = _materialised_files(f)
    memo: dict[tuple[str, str | None], str] = {}
    rank = {"online": 5, "collator": 4, "step": 3, "mapped": 2, "startup": 1, "other": 0}

    def where(path: str, func: str | None, depth: int, line: int) -> str:
        if _SERVING_DIR.search(path) or _EVAL_DIR.search(path):
            return "other"  # an inference engine's, server's or evaluation harness's tokenization, not the training input
        if func is None or func in {"main", "__main__"}:
            return "other" if _not_training_file(path) else "startup"
        if func in {"__getitem__", "__getitems__"} and path in materialised:
            return "mapped"  # the class turns itself into an Arrow dataset before training (Dataset.from_generator)
        if _ONLINE_FUNCS.match(func) or func in online_cb or _STREAM_LOADER.search(func):
            return "online"
        if func == "__call__" and (_COLLATOR_FILE.search(path.rsplit("/", 1)[-1]) or _COLLATOR_FILE.search(class_at(f, path, line) or "")):
            # a collator class's ``__call__`` (xTuring ``preprocessors/instruction_collator.py``; MetaMath's
            # ``DataCollatorForSupervisedDataset`` in ``train_math.py``, which tokenizes each batch): per batch
            return "collator"
        if func in cached_cb:
            return "mapped"
        if func in uncached_cb:
            return "startup"
        if func == "__call__" and _DATA_MODULE.search(path) and (_sample_processor(f, path, line) or _built_by_dataset(f, path, line, datasets)):
            # a per-sample processor object the loader applies lazily (torchtitan ``TextProcessor`` in Grain), or one a Dataset
            # builds in its ``__init__`` to call on each sample (TinyLLaVA: ``self.text_preprocess = TextPreprocess(...)``,
            # then ``self.text_preprocess(...)`` in ``__getitem__``)
            return "online"
        if func == "__init__":
            return "startup" if path in datasets else "other"
        if _SIDE_FUNC.match(func):
            return "other"  # a model's or callback's generate/evaluate method tokenizes prompts to sample from it: not the input pipeline
        if func == "forward" and path not in datasets:
            # a model's forward that tokenizes itself: the batch is tokenized again on every training step; a helper reached
            # from some forward through a generic name (axolotl's strategy ``load`` functions) is not known to run there
            return "step" if depth == 0 else "other"
        if depth > 5:
            return "other"
        key = (path, func)
        if key in memo:
            return memo[key]
        memo[key] = "other"  # breaks recursion
        found = {where(c.path, c.func, depth + 1, c.line) for c in f.calls(func) if c.func != func and _may_call(f, c, path, func)
                 and not _unbuilt_dataset_method(f, c)}
        result = max(found, key=rank.__getitem__) if found else "other"
        memo[key] = result
        return result

    out: dict[str, list[Call]] = {"offline": [], "mapped": [], "startup": [], "online": [], "step": [], "collator": []}
    weight_tools: dict[str, bool] = {}
    for c in _tokenizer_calls(f):
        if _unbuilt_dataset_method(f, c):
            continue
        kind = "offline" if _written_by(f, c) is not None else where(c.path, c.func, 0, c.line)
        if kind in ("mapped", "offline") and _counts_tokens(c):
            continue  # ``len(tokenizer.tokenize(...))`` in a ``map`` of a statistics script (gritlm's compute_target_len.py): no ids kept
        if kind != "offline" and _OFFLINE_PATH.search(c.path) and not (kind == "online" and _imported_module(f, c.path)):
            # a preparation script by its name; but a module named for preprocessing that the project imports, whose code a
            # dataset's ``__getitem__`` calls per sample (TinyLLaVA ``tinyllava/data/image_preprocess.py``:
            # ``ImagePreprocess.__call__`` runs the image processor on every sample the loader reads), is the loader's work
            kind = "offline"
        if kind == "offline":
            if c.path not in weight_tools:
                weight_tools[c.path] = _prepares_weights(f, c.path)
            if weight_tools[c.path]:
                continue  # a script preparing a model's initial weights runs the processor on a test input: not data preprocessing
        if kind == "step" and not set(c.kwargs) & _TEXT_TOKENIZER_KW:
            continue  # a model's own tokenizer module (a visual tokenizer over pixel values) is a layer, not text tokenization
        if kind in out:
            out[kind].append(c)
    # a collator class's tokenization (``collator``) is the pipeline's only when nothing tokenizes the dataset ahead: beside
    # a ``datasets.map``/offline pass it is a side collator (a vision-language collator running the processor on images and
    # text of a multimodal path), not the text path's tokenization; F6 counts it on the training path only
    if out["mapped"] or out["offline"]:
        out["collator"] = []
    return out


#: keywords of a text tokenizer's call (``tok(text, return_tensors='pt', padding='longest', truncation=True, max_length=32)``)
_TEXT_TOKENIZER_KW = frozenset({"return_tensors", "padding", "truncation", "max_length", "add_special_tokens"})


_DATA_WRITES = {"save_to_disk", "to_parquet", "to_json", "to_csv", "write_table", "tofile", "save", "dump", "write", "optimize",
                "MDSWriter", "ShardWriter", "TarWriter", "add_item", "savez", "to_arrow", "push_to_hub"}


def _prepares_weights(f: Facts, path: str) -> bool:
    """A ``prepare_*.py`` script that writes only a model (``model.save_pretrained(out)``, ``processor.save_pretrained``) and
    no data (lmms-engine ``tools/prepare_init_weight/prepare_aero_omni.py``): it prepares initial weights, not a dataset."""
    ff = f.files.get(path)
    if ff is None:
        return False
    shorts = {c.short for c in ff.calls}
    return "save_pretrained" in shorts and not (shorts & _DATA_WRITES)


def _offline_outputs(f: Facts) -> list[Evidence]:
    """Saved results of an offline preprocessing step, or the step's launch."""
    out: list[Evidence] = []
    other = _other_disk_io(f)
    out += [_ev(c, key=c.short) for c in f.calls("save_to_disk", "load_from_disk")
            if not _in_tests(c.path) and (c.path, c.line, c.name) not in other]
    out += [_ev(c, key=c.short) for c in f.calls("streaming.MDSWriter", "webdataset.ShardWriter", "litdata.optimize", "tf.io.TFRecordWriter",
                                                  "IndexedDatasetBuilder", "MMapIndexedDatasetBuilder", "indexed_dataset.make_builder")]
    for s in f.effective("tokenized_path", "dataset_prepared_path"):
        if isinstance(s.value, str) and s.value.strip():
            out.append(f.ev(s))
    for launch in f.launches():
        script = (launch.script or "").rsplit("/", 1)[-1]
        if _OFFLINE_PATH.search(script) or (launch.launcher == "axolotl" and launch.launcher_args.get("command") == "preprocess"):
            out.append(_ev(launch, key=script or launch.launcher))
    out += _data_path_ev(f)
    out += [_ev(c, key=_bin_key(c)) for c in _token_bins(f)]
    return _unique_ev(out)


class _DataCheck(Check):
    """F checks advise on the training data pipeline: nothing to advise for a project that does not train."""

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if not ctx.project.does_training:
            return None
        return super().recommendation_priority(ctx, outcome)


# ---------------------------------------------------------------------------------------
# F1
# ---------------------------------------------------------------------------------------


def _oumi_map_dataset(generator: str) -> dict[str, str]:
    """oumi's map-style datasets: ``to_hf()`` writes every ``self[idx]`` (transform and tokenization included) into Arrow
    with ``datasets.Dataset.from_generator`` before training (``IterableDataset.from_generator`` would stream it)."""
    return {
        "src/oumi/core/datasets/base_map_dataset.py": (
            "import datasets\nfrom PIL import Image\nfrom torch.utils.data import Dataset\n\nclass BaseMapDataset(Dataset):\n"
            "    def __getitem__(self, idx):\n        sample = self._data.iloc[idx]\n        return self.transform(sample)\n"
            "    def __len__(self):\n        return len(self._data)\n"
            "    def as_generator(self):\n        for idx in range(len(self)):\n            yield self[idx]\n"
            "    def to_hf(self, num_proc=8):\n"
            f"        return {generator}(self.as_generator, keep_in_memory=False, num_proc=num_proc)\n"),
        "src/oumi/core/datasets/base_sft_dataset.py": (
            "from oumi.core.datasets.base_map_dataset import BaseMapDataset\n\nclass BaseSftDataset(BaseMapDataset):\n"
            "    def transform(self, sample):\n        conversation = self.transform_conversation(sample)\n"
            "        return self.tokenize(conversation)\n"
            "    def tokenize(self, conversation):\n"
            "        return self._tokenizer.apply_chat_template(conversation.messages, tokenize=True, return_dict=True)\n"
            "    def transform_conversation(self, sample):\n        image = Image.open(sample['image_path']).convert('RGB')\n"
            "        return self.to_conversation(sample, image)\n"),
        "src/oumi/builders/data.py": (
            "def build_dataset(dataset_class, params, tokenizer):\n"
            "    dataset = dataset_class(dataset_name=params.dataset_name, tokenizer=tokenizer)\n    return dataset.to_hf()\n"),
    }


def _oumi_registry(recipes: dict[str, str]) -> dict[str, str]:
    """oumi's registered datasets: SFT map datasets written into Arrow before training, a pretraining iterable dataset that
    tokenizes each document in ``__iter__``; recipes name them by ``dataset_name``."""
    return {
        **_oumi_map_dataset("datasets.Dataset.from_generator"),
        "src/oumi/core/datasets/base_pretraining_dataset.py": (
            "from torch.utils.data import IterableDataset\n\nclass BasePretrainingDataset(IterableDataset):\n"
            "    def __iter__(self):\n        for document in self._data:\n            yield self.tokenize(document['text'])\n"
            "    def tokenize(self, text):\n        return self._tokenizer.encode(text, add_special_tokens=False)\n"),
        "src/oumi/datasets/sft/alpaca.py": (
            "from oumi.core.datasets.base_sft_dataset import BaseSftDataset\nfrom oumi.core.registry import register_dataset\n\n"
            "@register_dataset('yahma/alpaca-cleaned')\nclass AlpacaDataset(BaseSftDataset):\n    default_dataset = 'yahma/alpaca-cleaned'\n"),
        "src/oumi/datasets/pretraining/fineweb_edu.py": (
            "from oumi.core.datasets.base_pretraining_dataset import BasePretrainingDataset\nfrom oumi.core.registry import register_dataset\n\n"
            "@register_dataset('HuggingFaceFW/fineweb-edu')\nclass FineWebEduDataset(BasePretrainingDataset):\n"
            "    default_dataset = 'HuggingFaceFW/fineweb-edu'\n"),
        **{f"configs/recipes/{name}/train.yaml": (
            f"data:\n  train:\n    datasets:\n      - dataset_name: {ds}\ntraining:\n  trainer_type: TRL_SFT\n  logging_steps: 100\n")
           for name, ds in recipes.items()},
    }


def _mm_data_config(dataset: str, workers: int = 0) -> str:
    """An mmengine Python config whose training dataset is either an HF dataset tokenized by ``datasets.map``
    (``process_hf_dataset``) or a LLaVA-style dataset that reads and tokenizes each sample in ``__getitem__``."""
    if dataset == "hf":
        data = ("from datasets import load_dataset\nfrom xtuner.dataset import process_hf_dataset\n"
                "train_dataset = dict(type=process_hf_dataset, dataset=dict(type=load_dataset, path=data_path),\n"
                "                     tokenizer=tokenizer, max_length=max_length)\n")
    else:
        data = ("from xtuner.dataset import LLaVADataset\n"
                "train_dataset = dict(type=LLaVADataset, data_path=data_path, image_folder='./data/llava_images',\n"
                "                     tokenizer=tokenizer, max_length=max_length)\n")
    return (f"data_path = 'tatsu-lab/alpaca'\nmax_length = 2048\nbatch_size = 1\ndataloader_num_workers = {workers}\n"
            "tokenizer = dict(type='AutoTokenizer')\n" + data +
            "train_dataloader = dict(batch_size=batch_size, num_workers=dataloader_num_workers, dataset=train_dataset)\n")


#: xtuner's dataset package: an HF dataset tokenized once by ``datasets.map``, and a LLaVA dataset that opens an image
#: file and tokenizes per sample
_MM_DATASETS = {
    "xtuner/tools/train.py": ("from mmengine.config import Config\nfrom mmengine.runner import Runner\n\n"
                              "def main(args):\n    cfg = Config.fromfile(args.config)\n    Runner.from_cfg(cfg).train()\n"),
    "xtuner/dataset/__init__.py": "from .huggingface import process_hf_dataset\nfrom .llava import LLaVADataset\n",
    "xtuner/dataset/huggingface.py": (
        "from functools import partial\nfrom .utils import encode_fn\n\n"
        "def process_hf_dataset(dataset, tokenizer, max_length, map_num_proc=32):\n"
        "    return dataset.map(partial(encode_fn, tokenizer=tokenizer, max_length=max_length), num_proc=map_num_proc)\n"),
    "xtuner/dataset/utils.py": (
        "def encode_fn(example, tokenizer, max_length):\n"
        "    input_ids = tokenizer.encode(example['input'], add_special_tokens=False)[:max_length]\n    return {'input_ids': input_ids}\n"),
    "xtuner/dataset/llava.py": (
        "import os\nfrom PIL import Image\nfrom torch.utils.data import Dataset\n\nclass LLaVADataset(Dataset):\n"
        "    def __len__(self):\n        return len(self.data)\n"
        "    def __getitem__(self, i):\n        item = self.data[i]\n"
        "        image = Image.open(os.path.join(self.image_folder, item['image'])).convert('RGB')\n"
        "        input_ids = self.tokenizer.encode(item['conversation'], add_special_tokens=False)\n"
        "        return {'pixel_values': self.image_processor(image), 'input_ids': input_ids}\n"),
}


#: ms-swift ``TrainArgumentsMixin``: the loader-worker count is left None and filled in ``__post_init__`` per host OS
_FILLED_WORKERS = (
    "import platform\nfrom dataclasses import dataclass\nfrom typing import Optional\n\n\n@dataclass\nclass TrainArgumentsMixin:\n"
    "    dataloader_num_workers: Optional[int] = None\n\n    def __post_init__(self):\n"
    "        if self.dataloader_num_workers is None:\n            if platform.system() == 'Windows':\n"
    "                self.dataloader_num_workers = 0\n            else:\n                self.dataloader_num_workers = {n}\n")
_ARGS_LOADER = (
    "from torch.utils.data import DataLoader\n\n\nclass Trainer:\n    def get_train_dataloader(self):\n        args = self.args\n"
    "        params = {'num_workers': args.dataloader_num_workers, 'pin_memory': True}\n"
    "        return DataLoader(self.train_dataset, batch_size=8, **params)\n")


#: a library's loader config (OLMo-core's ``NumpyDataLoaderConfig`` shape): 0 workers unless the builder passes more
_CFG_LOADER = (
    "from dataclasses import dataclass\nfrom typing import Optional\nimport torch\n\n"
    "class TokenDataLoader:\n"
    "    def __init__(self, dataset, num_workers: int = 0, prefetch_factor: Optional[int] = None):\n"
    "        self.dataset = dataset\n        self.num_workers = num_workers\n        self.prefetch_factor = prefetch_factor\n\n"
    "    def _iter_batches(self):\n"
    "        return iter(torch.utils.data.DataLoader(self.dataset, batch_size=None, num_workers=self.num_workers,\n"
    "                                                pin_memory=self.num_workers > 0, prefetch_factor=self.prefetch_factor))\n\n"
    "@dataclass\nclass TokenDataLoaderConfig:\n    global_batch_size: int\n    seed: int\n"
    "    num_workers: int = 0\n    prefetch_factor: Optional[int] = None\n\n"
    "    def build(self, dataset):\n"
    "        return TokenDataLoader(dataset, num_workers=self.num_workers, prefetch_factor=self.prefetch_factor)\n"
)
#: the builder that constructs it with 4 workers (OLMo-core ``internal/experiment.py``)
_CFG_BUILDER = (
    "from mylib.data.data_loader import TokenDataLoaderConfig\n\n"
    "def build_common_components(global_batch_size: int):\n"
    "    return TokenDataLoaderConfig(global_batch_size=global_batch_size, seed=34521, num_workers=4)\n"
)


#: a recipe library (one function per model and task) whose README quickstart runs one pretraining recipe: that recipe's
#: ``cfg.dataset.num_workers = 8`` decides, not the SFT helpers' 1 worker that most recipes in the library use
_QUICKSTART = (
    "## Quickstart\n\n```python\nfrom mylib.recipes.llama.h100 import llama_1b_pretrain_config\n"
    "from mylib.training.pretrain import pretrain\nfrom mylib.training.gpt_step import forward_step\n\n"
    "cfg = llama_1b_pretrain_config()\ncfg.train.train_iters = 10\npretrain(cfg, forward_step)\n```\n"
)
_RECIPE_LIBRARY = {
    "mylib/recipes/common.py": (
        "from mylib.training.config import ConfigContainer, DatasetConfig, SFTDatasetConfig\n\n"
        "def _pretrain_common():\n    return ConfigContainer(dataset=DatasetConfig(seq_length=4096, num_workers=2))\n\n"
        "def _sft_common():\n    return ConfigContainer(dataset=SFTDatasetConfig(seq_length=2048, num_workers=1))\n"),
    "mylib/recipes/llama/h100/llama3.py": (
        "from mylib.recipes.common import _pretrain_common, _sft_common\n\n"
        "def llama_1b_pretrain_config():\n    cfg = _pretrain_common()\n    cfg.dataset.num_workers = 8\n"
        "    cfg.dataset.seq_length = 8192\n    return cfg\n\n"
        + "".join(f"def llama_{m}_sft_config():\n    cfg = _sft_common()\n    cfg.dataset = SFTDatasetConfig(seq_length=2048, num_workers=1)\n"
                  "    return cfg\n\n" for m in ("1b", "3b", "8b", "70b"))),
    "mylib/data/loaders.py": (
        "from torch.utils.data import DataLoader\n\n"
        "def build_train_loader(cfg, train_ds):\n"
        "    return DataLoader(train_ds, batch_size=cfg.train.micro_batch_size, num_workers=cfg.dataset.num_workers, pin_memory=True)\n"),
}



def _kwargs_factory(args: str) -> dict[str, str]:
    """realhf 0.3.0-shaped: a registry of loader factories, ``PackedDataLoader(dataset, *args, **kwargs)`` returning
    ``torch.utils.data.DataLoader(dataset, *args, batch_size=512, shuffle=True, **kwargs)``, built by ``make_dataloader``
    from a ``DataLoaderAbstraction`` whose ``args`` are ``args``."""
    return {
        "pkg/api/config.py": ("import dataclasses\nfrom typing import Any, Dict\n\n\n@dataclasses.dataclass\nclass DataLoaderAbstraction:\n"
                              "    type_: str\n    args: Dict[str, Any] = dataclasses.field(default_factory=dict)\n"),
        "pkg/api/data_api.py": (
            "import torch\n\nALL_DATALOADER_CLASSES = {}\n\n\ndef make_dataloader(cfg, dataset):\n"
            "    return ALL_DATALOADER_CLASSES[cfg.type_](dataset, **cfg.args)\n\n\n"
            "def PackedDataLoader(dataset, *args, **kwargs):\n"
            "    return torch.utils.data.DataLoader(dataset, *args, batch_size=512, shuffle=True, **kwargs)\n\n\n"
            "ALL_DATALOADER_CLASSES['packed'] = PackedDataLoader\n"),
        "pkg/system/model_worker.py": (
            "from pkg.api import data_api\nfrom pkg.api.config import DataLoaderAbstraction\n\n\n"
            "def setup(dataset, model, optimizer):\n"
            f"    loader = data_api.make_dataloader(DataLoaderAbstraction('packed', args=dict({args})), dataset)\n"
            "    for batch in loader:\n        model(batch).loss.backward()\n        optimizer.step()\n"),
    }

def _ray_scaling(extra: str) -> dict[str, str]:
    """Ludwig-like: the local trainer slices batches from in-memory arrays (no DataLoader); the Ray backend's defaults hold
    ``num_workers`` = one training worker per GPU beside ``use_gpu`` and ``resources_per_worker`` (a ScalingConfig)."""
    return {
        "mylib/backend/ray.py": (
            "import ray\n\n\ndef get_trainer_kwargs(**kwargs):\n"
            "    use_gpu = kwargs.get(\"use_gpu\", int(ray.cluster_resources().get(\"GPU\", 0)) > 0)\n"
            "    num_workers = int(ray.cluster_resources().get(\"GPU\", 0)) if use_gpu else 1\n"
            "    defaults = {\n        \"num_workers\": num_workers,\n        " + extra + "    }\n"
            "    return {**defaults, **kwargs}\n"),
        "mylib/trainers/trainer.py": (
            "import numpy as np\nimport torch\n\n\nclass Trainer:\n    def _train_loop(self, batcher):\n"
            "        while not batcher.last_batch():\n            batch = batcher.next_batch()\n"
            "            inputs = torch.from_numpy(np.array(batch['x'], copy=True)).to(self.device)\n"
            "            loss = self.model(inputs).mean()\n            loss.backward()\n"
            "            self.optimizer.step()\n            self.optimizer.zero_grad()\n"),
    }


#: Colossal-AI's plugin loader helper: ``num_workers``/``pin_memory`` are parameters defaulting to 0/False that no call in the
#: package passes (the docstring's ``plugin.prepare_dataloader(train_dataset, batch_size=8)``), beside a ZeRO chunk that pins
#: its CPU copy of a parameter shard (``self.cpu_shard = torch.empty(self.shard_size, ..., pin_memory=self.pin_memory)``) and a
#: plugin forcing its chunks' ``pin_memory = True``, and a checkpoint helper pinning state copies: none is the loader's setting
_PLUGIN_LOADER = {
    "mylib/booster/plugin/dp_plugin.py": (
        "from torch.utils.data import DataLoader, DistributedSampler\n\n\n"
        "class DPPlugin:\n"
        "    def __init__(self, enable_async_reduce: bool = True, pin_memory: bool = False):\n"
        "        if enable_async_reduce and not pin_memory:\n"
        "            pin_memory = True\n"
        "        self.chunk_config = dict(pin_memory=pin_memory)\n\n"
        "    def prepare_dataloader(self, dataset, batch_size, shuffle=False, drop_last=False, pin_memory=False, num_workers=0, **kwargs):\n"
        "        sampler = DistributedSampler(dataset, shuffle=shuffle)\n"
        "        return DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=drop_last,\n"
        "                          pin_memory=pin_memory, num_workers=num_workers, **kwargs)\n"),
    "mylib/zero/chunk.py": (
        "import torch\n\n\n"
        "class Chunk:\n"
        "    def __init__(self, chunk_size, dtype, pin_memory=False):\n"
        "        self.shard_size = chunk_size\n        self.dtype = dtype\n        self.pin_memory = pin_memory\n\n"
        "    def shard_move(self, device):\n"
        "        if self.pin_memory:\n"
        "            self.cpu_shard = torch.empty(self.shard_size, dtype=self.dtype, pin_memory=self.pin_memory)\n"
        "            self.cpu_shard.copy_(self.cuda_shard)\n\n\n"
        "def init_grad_chunk(chunk):\n"
        "    return Chunk(chunk.shard_size, chunk.dtype, pin_memory=True)\n"),
    "mylib/checkpoint_io/utils.py": (
        "import torch\n\n\n"
        "def _pin_tensor(tensor, empty=True):\n"
        "    if empty:\n        return torch.empty_like(tensor, pin_memory=True, device='cpu')\n"
        "    return tensor.pin_memory()\n"),
    "mylib/booster/booster.py": (
        "class Booster:\n"
        "    def __init__(self, plugin=None):\n        self.plugin = plugin\n\n"
        "    def backward(self, loss, optimizer):\n        loss.backward()\n"),
}
#: a user script of the same library that passes the loader settings
_PLUGIN_LOADER_CALL = (
    "from mylib.booster.booster import Booster\nfrom mylib.booster.plugin.dp_plugin import DPPlugin\n\n"
    "plugin = DPPlugin()\nbooster = Booster(plugin=plugin)\n"
    "loader = plugin.prepare_dataloader(train_ds, batch_size=8, num_workers=8, pin_memory=True)\n"
    "for batch in loader:\n    booster.backward(model(**batch).loss, optimizer)\n"
)


# a package that keeps a copied HF-Trainer script in a sub-package its pyproject.toml leaves out (round 14: OpenChat's
# ``ochat/experimental/train_alpaca.py``), beside the run the README launches
_UNSHIPPED_COPY = {
    "pyproject.toml": '[project]\nname = "chatpkg"\n\n[tool.setuptools.packages.find]\nexclude = ["assets*", "chatpkg/experimental*"]\n',
    "README.md": "## Training\n\n```bash\ndeepspeed --num_gpus=8 --module chatpkg.training.train --deepspeed\n```\n",
    "chatpkg/training/train.py": (
        "import deepspeed\nfrom torch.utils.data import DataLoader\n\n"
        "def train(args, model, dataset):\n"
        "    loader = DataLoader(dataset, batch_size=None, num_workers=1, prefetch_factor=8, pin_memory=True)\n"
        "    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())\n"
        "    for batch in loader:\n        engine.backward(engine(**batch).loss)\n        engine.step()\n"),
    "chatpkg/experimental/train_alpaca.py": (
        "import transformers\nimport utils\nfrom transformers import Trainer\n\n"
        "def train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
        "    (training_args,) = parser.parse_args_into_dataclasses()\n"
        "    model = transformers.AutoModelForCausalLM.from_pretrained('facebook/opt-125m')\n"
        "    Trainer(model=model, args=training_args, train_dataset=utils.load()).train()\n"),
}


#: xTuring 0.1.8's shape: a Lightning module's ``train_dataloader`` and a model wrapper whose ``generate`` batches a dataset
#: through its own DataLoader (PyTorch's defaults) for ``model.generate`` under ``torch.no_grad()``
def _wrapper_with_generate(gen_func: str = "generate") -> dict[str, str]:
    return {
        "mylib/trainers/lightning_trainer.py": (
            "import pytorch_lightning as pl\nimport torch\n\n\nclass TuringLightningModule(pl.LightningModule):\n"
            "    def train_dataloader(self):\n        return torch.utils.data.DataLoader(\n"
            "            self.train_dataset, collate_fn=self.preprocessor, shuffle=True, num_workers=4, pin_memory=True,\n"
            "            batch_size=self.batch_size,\n        )\n\n"
            "    def training_step(self, batch, batch_idx):\n        return self.model_engine.training_step(batch)\n"),
        "mylib/models/causal.py": (
            "import torch\nfrom torch.utils.data import DataLoader\n\n\nclass CausalModel:\n"
            f"    def {gen_func}(self, *, texts=None, dataset=None, batch_size=1):\n"
            "        dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=False, collate_fn=self.collate_fn)\n"
            "        outputs = []\n        for batch in dataloader:\n            with torch.no_grad():\n"
            "                outputs.append(self.engine.model.generate(input_ids=batch['input_ids']))\n        return outputs\n"),
    }


#: Tevatron 0.1: ``DenseTrainer`` overrides ``get_train_dataloader`` and passes ``self.args.dataloader_num_workers`` on
_TRAINER_OWN_LOADER = {
    "tevlib/trainer.py": (
        "from torch.utils.data import DataLoader\nfrom transformers.trainer import Trainer\n\n\nclass DenseTrainer(Trainer):\n"
        "    def get_train_dataloader(self) -> DataLoader:\n        train_sampler = self._get_train_sampler()\n"
        "        return DataLoader(\n            self.train_dataset,\n            batch_size=self.args.train_batch_size,\n"
        "            sampler=train_sampler,\n            collate_fn=self.data_collator,\n            drop_last=True,\n"
        "            num_workers=self.args.dataloader_num_workers,\n        )\n"),
    "tevlib/driver/train.py": (
        "from transformers import HfArgumentParser, TrainingArguments\n\nfrom tevlib.trainer import DenseTrainer\n\n\n"
        "def main():\n    (training_args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n"
        "    trainer = DenseTrainer(model=build_model(), args=training_args, train_dataset=build_dataset())\n"
        "    trainer.train()\n\n\nif __name__ == '__main__':\n    main()\n"),
}


def _axolotl_loaders(validator: bool = True) -> dict[str, str]:
    """axolotl 0.13: the config validator fills ``dataloader_num_workers`` with the GPU count when no loader option is set;
    the Trainer's ``_get_dataloader`` reads it through the HF idiom's ``dataloader_params`` dict, 40-odd lines above the
    loader; the async GRPO trainer loads prompts in the main process."""
    fill = ("    @model_validator(mode=\"before\")\n    @classmethod\n    def default_dataloader_opts(cls, data):\n"
            "        if data.get(\"dataloader_num_workers\") is None and data.get(\"dataloader_pin_memory\") is None:\n"
            "            data[\"dataloader_num_workers\"] = data.get(\"capabilities\").get(\"n_gpu\", 1)\n"
            "            data[\"dataloader_pin_memory\"] = True\n        return data\n") if validator else ""
    branches = "".join(f"        if self.args.option_{i}:\n            dataset = self._step_{i}(dataset)\n" for i in range(22))
    return {
        "src/mylib/utils/schemas/config.py": (
            "from pydantic import BaseModel, model_validator\n\n\nclass InputConfig(BaseModel):\n"
            "    dataloader_num_workers: int | None = None\n    dataloader_pin_memory: bool | None = None\n\n" + fill),
        "src/mylib/core/trainers/base.py": (
            "from torch.utils.data import DataLoader\nfrom transformers import Trainer\n\n\nclass MyTrainer(Trainer):\n"
            "    def _get_dataloader(self, dataset, batch_size):\n        data_collator = self._collator(self.data_collator)\n\n"
            "        dataloader_params = {\n            \"batch_size\": batch_size,\n            \"collate_fn\": data_collator,\n"
            "            \"num_workers\": self.args.dataloader_num_workers,\n"
            "            \"pin_memory\": self.args.dataloader_pin_memory,\n        }\n\n" + branches
            + "        dataloader = DataLoader(dataset, **dataloader_params)\n        return self.accelerator.prepare(dataloader)\n\n"
            "    def get_train_dataloader(self):\n        return self._get_dataloader(self.train_dataset, self._train_batch_size)\n"),
        "src/mylib/core/trainers/grpo/async_trainer.py": (
            "from torch.utils.data import DataLoader\n\n\nclass AsyncGRPOTrainer:\n    def _setup_async(self, sampler, gen_batch_size):\n"
            "        self._prompt_dataloader = DataLoader(\n            self.train_dataset,\n            batch_size=gen_batch_size,\n"
            "            sampler=sampler,\n            collate_fn=self.data_collator,\n            num_workers=0,\n        )\n"
            "        self._prompt_iter = iter(self._prompt_dataloader)\n"),
    }


#: Grain (torchtitan's loader since 2026, MaxText's): worker processes come from ``dataset.mp_prefetch(MultiprocessingOptions(
#: num_workers=N))`` or ``grain.DataLoader(worker_count=N)``; ``ThreadPrefetchIterDataset`` prefetches on a thread of the
#: training process
_GRAIN_MP = ("mp_prefetch", "MultiprocessingOptions", "MultiprocessPrefetchIterDataset")


def _grain_file(f: Facts, path: str) -> bool:
    ff = f.files.get(path)
    return ff is not None and any(c.name.startswith("grain.") for c in ff.calls)


def grain_pipeline(f: Facts) -> tuple[list[tuple[Call, float | None]], list[tuple[Call, float | None]]]:
    """(worker-process sites with their worker count, thread-prefetch sites with their buffer depth) of Grain input
    pipelines outside tests; counts read through the run's settings where the keyword names one (None when unknown)."""
    def count(c: Call, *kws: str) -> float | None:
        for kw in kws:
            if kw in c.kwargs:
                v = c.kwargs[kw]
                if isinstance(v, Expr) and v.ref:
                    found = [as_number(s.value) for s in f.effective(v.ref, near=c.path) if as_number(s.value) is not None]
                    return min(found) if found else None  # type: ignore[type-var]
                return as_number(v)
        return None

    mp = [(c, count(c, "num_workers", "worker_count")) for c in f.calls(*_GRAIN_MP, "DataLoader")
          if not _in_tests(c.path) and _grain_file(f, c.path)
          and (c.short != "DataLoader" or (c.name.startswith("grain.") and "worker_count" in c.kwargs))]
    threads = [(c, count(c, "prefetch_buffer_size")) for c in f.calls("ThreadPrefetchIterDataset")
               if c.name.startswith("grain.") and not _in_tests(c.path)]
    return mp, threads


def _grain_loader(extra: str) -> dict[str, str]:
    """torchtitan HEAD ``components/data/loader.py``: a Grain dataset graph, batched, prefetched by a thread."""
    return {"torchtitan/components/data/loader.py": (
        "from dataclasses import dataclass\n\nimport grain.python as grain\nfrom grain import experimental as grain_experimental\n\n\n"
        "class GrainDataLoader:\n    @dataclass(kw_only=True, slots=True)\n    class Config:\n"
        "        num_prefetch_batches: int = 2\n        num_workers: int = 8\n\n"
        "    def __init__(self, config, dataset, collator):\n"
        "        dataset = dataset.batch(collator.num_rows_per_batch(), drop_remainder=True, batch_fn=collator)\n" + extra
        + "        dataset = grain_experimental.ThreadPrefetchIterDataset(\n"
        "            dataset, prefetch_buffer_size=config.num_prefetch_batches\n        )\n        self._iterator = iter(dataset)\n\n"
        "    def __iter__(self):\n        return self._iterator\n")}


def _nanotron_loaders(workers: str) -> dict[str, str]:
    """nanotron: ``get_train_dataloader(..., dataloader_num_workers=data.num_loading_workers)`` with ``data`` a ``DataArgs``
    read from the run's YAML; one example script builds its own loader with 0 workers."""
    cfg = "data_stages:\n- data:\n    num_loading_workers: {w}\n    seed: 42\n  name: Stable Training Stage\n  start_training_step: 1\n"
    return {
        "src/nanotron/data/dataloader.py": (
            "from torch.utils.data import DataLoader\n\n\ndef get_train_dataloader(train_dataset, micro_batch_size, "
            "dataloader_num_workers, dataloader_pin_memory=True):\n    return DataLoader(\n        train_dataset,\n"
            "        batch_size=micro_batch_size,\n        num_workers=dataloader_num_workers,\n"
            "        pin_memory=dataloader_pin_memory,\n    )\n"),
        "run_train.py": (
            "from nanotron.data.dataloader import get_train_dataloader\n\n\ndef get_dataloader_from_data_stage(trainer, data):\n"
            "    return get_train_dataloader(\n        train_dataset=trainer.dataset,\n        micro_batch_size=trainer.micro_batch_size,\n"
            "        dataloader_num_workers=data.num_loading_workers,\n    )\n"),
        **{f"examples/config_{n}.yaml": cfg.format(w=workers) for n in ("tiny_llama", "qwen", "nanoset")},
        "examples/custom-dataloader/run_train.py": (
            "from torch.utils.data import DataLoader\n\n\ndef get_dataloader_from_data_stage(trainer, data):\n"
            "    return DataLoader(trainer.dataset, batch_size=trainer.micro_batch_size, num_workers=0, pin_memory=True)\n"),
    }


#: a ``.to(...)`` argument that names the GPU itself (``.to("cuda")``, ``.to(torch.device("cuda", rank))``); a device held
#: in a variable (``.to(self.device)``) may be the CPU (nemo-automodel's diffusion dataset: ``device: str = "cpu"``)
_GPU_ARG = lazy_compile(r"(?i)cuda")


def _gpu_samples(f: Facts, train: frozenset[str]) -> Call | None:
    """A copy to the GPU inside a dataset's ``__getitem__`` on the training path (CogVLM2's ``peft_lora.py`` copies each
    sample ``.to(self.device)`` with ``device='cuda'``; only a copy that names CUDA itself is read), or None."""
    for c in f.calls("to", "cuda"):
        if c.func != "__getitem__" or _in_tests(c.path) or (train and c.path not in train):
            continue
        if c.short == "cuda" or (c.args and _GPU_ARG.search(_text(c.args[0]))):
            return c
    return None


def _gpu_samples_note(ctx: Context, outcome: Outcome, check_id: str) -> Outcome:
    """F1/F3 advice where the dataset hands out GPU tensors: worker processes cannot use CUDA once forked and CUDA
    tensors cannot be pinned, so the copy leaves ``__getitem__`` first (the advice says so, not only "add workers")."""
    if outcome.status != Status.UNUSED:
        return outcome
    c = _gpu_samples(ctx.facts, ctx.project.training_files)
    if c is None:
        return outcome
    why = "worker processes cannot use CUDA once forked" if check_id == "F1" else "CUDA tensors cannot be pinned"
    detail = f"{outcome.detail}; the dataset moves each sample to the GPU in __getitem__ ({c.path}:{c.line}): {why}"
    return Outcome(outcome.status, [*outcome.evidence, _ev(c, key=f"{c.short}() in __getitem__")], detail,
                   {**outcome.values, "advice_for": "gpu-samples"}, outcome.findings)


@register
class F1NumWorkers(_DataCheck):
    id = "F1"
    title = "Multi-process loading (num_workers)"
    title_zh = "多进程并行加载"
    bottlenecks = (Bottleneck.DATA_IO,)
    priority = Priority.MEDIUM
    benefit = "data loading and collation in parallel worker processes instead of on the training process"
    what = (
        "The number of loader worker processes of the training data loaders: `DataLoader(num_workers=)` (resolved through "
        "argparse/configs/launch flags), HF `dataloader_num_workers` (default 0), Megatron `--num-workers` (default 2), "
        "tf.data `num_parallel_calls`/`num_parallel_reads`. 0 is unused, 1-3 partial, 4 or more (or `os.cpu_count()`) used; "
        "the minimum across training loaders counts."
    )
    why = (
        "With `num_workers=0` the training process itself reads, decodes, tokenizes and collates every batch while the "
        "GPU waits; the PyTorch performance tuning guide recommends `num_workers > 0` for exactly this reason. For "
        "image-text (MLLM) pipelines the decode cost alone can leave GPUs idle 20-50 % of the time; 4-8 workers per GPU "
        "usually hide it."
    )
    fix = "Set `num_workers` to 4-8 per GPU (HF: `dataloader_num_workers: 8`), with `persistent_workers=True` so workers survive epochs."
    fix_zh = "将 `num_workers` 设为每卡 4~8（HF：`dataloader_num_workers: 8`），并设置 `persistent_workers=True` 避免每个 epoch 重建进程。"
    fix_safety = FixSafety.SAFE
    references = ("https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html", "https://pytorch.org/docs/stable/data.html#multi-process-data-loading")
    snippets = {
        "hf-yaml": "dataloader_num_workers: 8\ndataloader_persistent_workers: true\n",
        "python": "loader = DataLoader(train_ds, batch_size=8, shuffle=True, num_workers=8, persistent_workers=True, pin_memory=True)\n",
        "lightning": "def train_dataloader(self):\n    return DataLoader(self.train_ds, batch_size=8, num_workers=8, persistent_workers=True)\n",
    }
    examples = (
        Example({**_MM_DATASETS, **{f"xtuner/configs/{m}.py": _mm_data_config("hf", 0 if m == "llama2_7b" else 4)
                                    for m in ("llama2_7b", "qwen_7b", "internlm2_7b", "mistral_7b")}},
                U, "mmengine configs: 3 of 4 train_dataloaders with 4 workers"),
        Example({**_MM_DATASETS, **{f"xtuner/configs/{m}.py": _mm_data_config("hf", 4 if m == "llama2_7b" else 0)
                                    for m in ("llama2_7b", "qwen_7b", "internlm2_7b", "mistral_7b")}},
                N, "mmengine configs: 3 of 4 train_dataloaders in the main process"),
        Example({"train.py": "from torch.utils.data import DataLoader\ntrain_loader = DataLoader(train_ds, batch_size=32, shuffle=True, num_workers=8)\n"}, U, "constant"),
        Example(_wrapper_with_generate(), U, "the Lightning train_dataloader's 4 workers; the loader of the wrapper's generate() feeds inference"),
        Example(_wrapper_with_generate("generate_train_batches"), N,
                "the same loader in a function whose name says it builds training batches: its 0 workers count"),
        Example(_PLUGIN_LOADER, N, "a library helper's num_workers parameter defaults to 0 and no caller passes it"),
        Example({**_PLUGIN_LOADER, "train.py": _PLUGIN_LOADER_CALL}, U, "the helper's caller passes num_workers=8"),
        Example({**_RECIPE_LIBRARY, "README.md": _QUICKSTART}, U, "the recipe the README's quickstart runs sets 8 workers"),
        Example(_RECIPE_LIBRARY, P, "a recipe library without a documented run: most recipes use 1 worker"),
        Example(_TRAINER_OWN_LOADER, N, "a Trainer subclass's own loader reading TrainingArguments' workers, left at HF's 0"),
        Example({**_TRAINER_OWN_LOADER, "scripts/train.sh": (
            "torchrun --nproc_per_node 8 -m tevlib.driver.train --output_dir out --dataloader_num_workers 8\n")}, U,
                "the launch raises them to 8"),
        Example(_UNSHIPPED_COPY, P, "the run's 1 worker; a copied HF-Trainer script in a sub-package the packaging excludes is not the run"),
        Example({**_UNSHIPPED_COPY, "pyproject.toml": '[project]\nname = "chatpkg"\n'}, N,
                "the same copy, shipped with the package: its Trainer's default 0 workers counts"),
        Example({  # a config class defaults to 0 workers; every builder that constructs it passes 4
            "mylib/data/data_loader.py": _CFG_LOADER,
            "mylib/internal/experiment.py": _CFG_BUILDER,
            "mylib/train/callbacks/evaluator_callback.py": (  # a downstream-eval loader, not the training loader
                "from torch.utils.data import DataLoader\n\nclass DownstreamEvaluator:\n"
                "    def __init__(self, task, batch_size):\n"
                "        data_loader = DataLoader(task, batch_size=batch_size, collate_fn=task.collate_fn, drop_last=False,\n"
                "                                 shuffle=False, num_workers=0)\n"),
        }, U, "config default overridden by every construction; evaluator loader ignored"),
        Example({"train.py": "import argparse\nfrom torch.utils.data import DataLoader\np = argparse.ArgumentParser()\np.add_argument('--num_workers', type=int, default=0)\n"
                 "args = p.parse_args()\nloader = DataLoader(ds, batch_size=4, num_workers=args.num_workers)\n",
                 "run.sh": "python train.py --num_workers 16\n"}, U, "launcher flag over argparse default"),
        Example({"sft.yaml": "model_name_or_path: Qwen/Qwen2-7B\nstage: sft\ndataloader_num_workers: 4\n",
                 "run.sh": "llamafactory-cli train sft.yaml\n"}, U, "llamafactory yaml"),
        Example({"train.py": "import os\nfrom torch.utils.data import DataLoader\ndl = DataLoader(ds, batch_size=8, num_workers=os.cpu_count() // 2)\n"}, U, "cpu_count"),
        Example({"train.py": "from torch.utils.data import DataLoader\ntrain_loader = DataLoader(train_ds, batch_size=32, num_workers=0)\n"}, N, "zero workers"),
        Example(_ray_scaling('"use_gpu": use_gpu,\n        "resources_per_worker": {"CPU": 0 if use_gpu else 1, "GPU": 1 if use_gpu else 0},\n'), N,
                "num_workers of a Ray Train scaling config counts training processes; batches are sliced in-process"),
        Example(_ray_scaling('"batch_size": 32,\n'), U, "the same mapping without the scaling keys: loader workers"),
        Example({  # the builder that constructs the config leaves num_workers at its default 0
            "mylib/data/data_loader.py": (
                "from dataclasses import dataclass\nimport torch\n\n"
                "class TokenDataLoader:\n"
                "    def __init__(self, dataset, num_workers: int = 0):\n"
                "        self.dataset = dataset\n        self.num_workers = num_workers\n\n"
                "    def _iter_batches(self):\n"
                "        return iter(torch.utils.data.DataLoader(self.dataset, batch_size=None, num_workers=self.num_workers))\n\n"
                "@dataclass\nclass TokenDataLoaderConfig:\n    global_batch_size: int\n    num_workers: int = 0\n\n"
                "    def build(self, dataset):\n        return TokenDataLoader(dataset, num_workers=self.num_workers)\n"),
            "mylib/internal/experiment.py": (
                "from mylib.data.data_loader import TokenDataLoaderConfig\n\n"
                "def build_common_components(global_batch_size: int):\n"
                "    return TokenDataLoaderConfig(global_batch_size=global_batch_size)\n\n"
                "def build_ladder_loader(global_batch_size: int):\n"
                "    return TokenDataLoaderConfig(global_batch_size=global_batch_size, num_workers=4)\n"),
        }, N, "config default kept by one construction"),
        Example({"train.py": "from transformers import Trainer, TrainingArguments\nargs = TrainingArguments(output_dir='out', bf16=True)\n"
                 "trainer = Trainer(model=model, args=args, train_dataset=ds)\n"}, N, "hf default 0"),
        Example({"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=16, shuffle=True)\n"
                 "# loader = DataLoader(ds, batch_size=16, num_workers=8)\n"}, N, "default and commented"),
        Example({"train.py": "from torch.utils.data import DataLoader\ntrain_loader = DataLoader(train_ds, batch_size=32, num_workers=2)\n"
                 "val_loader = DataLoader(val_ds, batch_size=32, num_workers=0)\n"}, P, "two workers, eval loader ignored"),
        Example({"pretrain.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 4 --data-path /data/c4_text_document\n"}, P, "megatron default 2"),
        Example({"scripts/run.sh": ("ray job submit --address=\"http://127.0.0.1:8265\" -- python3 train.py --actor-num-gpus-per-node 8 "
                                    "--tensor-model-parallel-size 2 --micro-batch-size 1 --prompt-data /root/dapo-math-17k.jsonl\n"),
                 "train.py": "def train(args):\n    for rollout_id in range(args.num_rollout):\n        actor_model.train(rollout_id)\n"},
                N, "slime: Megatron's model flags from a driver that feeds rollouts, not Megatron's data loader"),
        Example({  # Megatron-LM: the launches set --num-workers; one RL helper's DataLoader is left at torch's default 0
            "examples/gpt3/train_gpt3_175b.sh": (
                "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 1 --num-workers 8 --data-path $DATA_PATH\n"),
            "examples/llama/train_llama3_8b.sh": (
                "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2 --num-workers 8 --seq-length 8192\n"),
            "examples/mixtral/train_mixtral_8x7b.sh": (
                "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 1 --num-workers 6 --num-experts 8\n"),
            "megatron/rl/rl_utils.py": (
                "from torch.utils.data import DataLoader\n\ndef get_rollout_loader(dataset, args):\n"
                "    return DataLoader(dataset, batch_size=args.micro_batch_size)\n"),
        }, U, "launches set workers, one helper loader at 0 (majority)"),
        Example({
            "train.py": "from torch.utils.data import DataLoader\ntrain_loader = DataLoader(train_ds, batch_size=32, num_workers=0)\n",
            "train_dpo.py": "from torch.utils.data import DataLoader\ntrain_loader = DataLoader(pairs, batch_size=8)\n",
            "train_rm.py": "from torch.utils.data import DataLoader\ntrain_loader = DataLoader(pairs, batch_size=8, num_workers=4)\n",
        }, N, "most training loaders at 0"),
        Example({"train.py": (  # the debug branch and the mock loader are not the training setting
            "from torch.utils.data import DataLoader\n"
            "if args.debug:\n    train_loader = DataLoader(train_ds, batch_size=2, num_workers=0)\n"
            "else:\n    train_loader = DataLoader(train_ds, batch_size=32, num_workers=8, pin_memory=True)\n"
            "mock_loader = DataLoader(MockDataset(1024), batch_size=32, num_workers=0)\n")}, U, "debug branch and mock loader ignored"),
        Example({  # Megatron-LM's MIMO example: a mock-data helper whose num_workers parameter defaults to 0
            "examples/mimo/data/mock.py": (
                "from torch.utils.data import DataLoader\n\n\n"
                "def get_mock_vlm_dataloader(batch_size: int = 8, dataset_size: int = 100, num_workers: int = 0) -> DataLoader:\n"
                "    dataset = MockVLMDataset(size=dataset_size)\n"
                "    dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=num_workers)\n"
                "    return dataloader\n"),
            "examples/mimo/train.py": (
                "from torch.utils.data import DataLoader\n\nfrom examples.mimo.data.mock import get_mock_vlm_dataloader\n\n\n"
                "def build_train_loader(train_ds, args):\n"
                "    return DataLoader(train_ds, batch_size=args.micro_batch_size, num_workers=8, pin_memory=True)\n\n\n"
                "def build_mock_loader(args):\n    return get_mock_vlm_dataloader(batch_size=args.micro_batch_size)\n"),
        }, U, "a mock-data helper's loader is not the training setting"),
        Example({"src/nanotron/dataloader.py": (  # a parameter set to 0 only on ranks that take no input is not the setting
            "from torch.utils.data import DataLoader\n"
            "def get_train_dataloader(train_dataset, input_pp_rank, dataloader_num_workers: int, dataloader_pin_memory: bool = True):\n"
            "    if dist.get_rank(parallel_context.pp_pg) not in [input_pp_rank]:\n"
            "        train_dataset = EmptyInfiniteDataset(length=len(train_dataset))\n        dataloader_num_workers = 0\n"
            "    return DataLoader(train_dataset, batch_size=micro_batch_size, num_workers=dataloader_num_workers,\n"
            "                      pin_memory=dataloader_pin_memory)\n"),
            "src/nanotron/config/config.py": "from dataclasses import dataclass\n@dataclass\nclass DataArgs:\n    seed: int = 42\n    num_loading_workers: int = 8\n",
        }, U, "zero only on pipeline ranks without input"),
        Example({  # nanotron: the loader's worker count comes from DataArgs.num_loading_workers, which defaults to 1
            "src/nanotron/dataloader.py": (
                "from torch.utils.data import DataLoader\n"
                "def get_train_dataloader(train_dataset, micro_batch_size, dataloader_num_workers: int, dataloader_pin_memory: bool = True):\n"
                "    return DataLoader(train_dataset, batch_size=micro_batch_size, num_workers=dataloader_num_workers,\n"
                "                      pin_memory=dataloader_pin_memory)\n"),
            "src/nanotron/config/config.py": (
                "from dataclasses import dataclass\nfrom typing import Optional\n@dataclass\nclass DataArgs:\n"
                "    seed: Optional[int]\n    num_loading_workers: Optional[int] = 1\n"),
        }, P, "loader workers from a config default of 1"),
        Example({"train.py": (
            "from torch.utils.data import DataLoader\n"
            "if args.debug:\n    train_loader = DataLoader(train_ds, batch_size=2, num_workers=8)\n"
            "else:\n    train_loader = DataLoader(train_ds, batch_size=32, num_workers=0)\n")}, N, "zero workers outside the debug branch"),
        Example({  # litgpt: a test builds the data module with num_workers=0; optimize() sizes a preprocessing pool
            "litgpt/data/alpaca.py": (
                "from dataclasses import dataclass\nfrom torch.utils.data import DataLoader\n"
                "@dataclass\nclass Alpaca:\n    batch_size: int = 1\n    num_workers: int = 4\n"
                "    def prepare_data(self):\n        optimize(fn=tokenize, inputs=files, output_dir='data/alpaca', num_workers=1)\n"
                "    def train_dataloader(self):\n"
                "        return DataLoader(self.train_dataset, batch_size=self.batch_size, shuffle=True, num_workers=self.num_workers)\n"),
            "tests/test_lora.py": "from litgpt.data import Alpaca\ndef test_lora_script():\n    data = Alpaca(num_workers=0)\n",
        }, U, "test and preprocessing pool are not the loader setting"),
        Example({"src/axolotl/utils/trainer.py": (  # a loader built only to count the batches of an epoch
            "import math\nfrom torch.utils.data import DataLoader\n"
            "def calculate_total_num_steps(cfg, train_dataset):\n"
            "    data_loader = DataLoader(train_dataset.remove_columns(['length']), batch_sampler=sampler)\n"
            "    return int(math.floor(len(data_loader) * cfg.num_epochs))\n"
            "def build_loader(train_dataset, collator):\n"
            "    return DataLoader(train_dataset, batch_size=8, collate_fn=collator, num_workers=8, pin_memory=True)\n")}, U,
            "a step-counting loader is not the training loader"),
        Example({  # LLaMA-Factory: a statistics script off the training path counts tokens with a bare DataLoader
            "train.py": ("from transformers import Trainer, TrainingArguments\n"
                         "args = TrainingArguments(output_dir='out', bf16=True, dataloader_num_workers=8)\n"
                         "Trainer(model=model, args=args, train_dataset=train_ds).train()\n"),
            "scripts/stat_utils/cal_lr.py": (
                "from torch.utils.data import DataLoader\n"
                "def calculate_lr(trainset, batch_size, data_collator):\n"
                "    dataloader = DataLoader(trainset, batch_size, shuffle=False, collate_fn=data_collator, pin_memory=True)\n"
                "    valid_tokens = 0\n"
                "    for batch in dataloader:\n"
                "        valid_tokens += (batch['labels'] != -100).sum().item()\n"
                "    return valid_tokens\n"),
        }, U, "a loader in a script off the training path is not the training setting"),
        Example({  # lmms-engine-like: loaders built in several trainer modules, most with 4 or more workers
            "train.py": ("from torch.utils.data import DataLoader\n"
                         "from trainers import sft, dpo, pretrain, rm\n"
                         "loader = sft.build(ds)\n"),
            "trainers/sft.py": "from torch.utils.data import DataLoader\ndef build(ds):\n    return DataLoader(ds, batch_size=8, num_workers=8)\n",
            "trainers/pretrain.py": "from torch.utils.data import DataLoader\ndef build(ds):\n    return DataLoader(ds, batch_size=8, num_workers=4)\n",
            "trainers/dpo.py": "from torch.utils.data import DataLoader\ndef build(ds):\n    return DataLoader(ds, batch_size=8, num_workers=6)\n",
            "trainers/rm.py": "from torch.utils.data import DataLoader\ndef build(ds):\n    return DataLoader(ds, batch_size=8, num_workers=2)\n",
        }, U, "most training loaders have 4 or more workers: judged by that majority"),
        Example({"mylib/arguments.py": _FILLED_WORKERS.format(n=1), "mylib/trainer.py": _ARGS_LOADER}, P,
                "num_workers left None and filled in __post_init__: 1 on Linux (0 only on Windows)"),
        Example({"mylib/arguments.py": _FILLED_WORKERS.format(n=8), "mylib/trainer.py": _ARGS_LOADER}, U,
                "num_workers left None and filled in __post_init__: 8 on Linux"),
        Example({  # AReaL: the loader reads num_workers from its _DatasetConfig argument, default 0; a data service has its own 4
            "pkg/api/cli_args.py": ("from dataclasses import dataclass, field\n\n@dataclass\nclass _DatasetConfig:\n"
                                    "    batch_size: int = 1\n    num_workers: int = field(default=0, metadata={'help': 'loader workers'})\n"),
            "pkg/service/config.py": "from dataclasses import dataclass\n\n@dataclass\nclass DataWorkerConfig:\n    dataloader_num_workers: int = 4\n",
            "pkg/utils/dataloader.py": ("from torchdata.stateful_dataloader import StatefulDataLoader\nfrom pkg.api.cli_args import _DatasetConfig\n\n"
                                        "def create_dataloader(dataset, dataset_config: _DatasetConfig):\n"
                                        "    return StatefulDataLoader(dataset, batch_size=dataset_config.batch_size,\n"
                                        "                              num_workers=dataset_config.num_workers)\n"),
            "train.py": "from pkg.utils.dataloader import create_dataloader\nloader = create_dataloader(ds, cfg.train_dataset)\n",
        }, N, "num_workers read from a config argument named after its class, default 0"),
        Example(_kwargs_factory(""), N, "a loader factory forwards **kwargs, and nothing in the project names num_workers"),
        Example(_kwargs_factory("num_workers=8"), U, "the factory's args name num_workers (not a static value here)"),
        Example({"mylib/trainer.py": _HELPER_DL_KWARGS.format(pin="True", workers=_CPU_PER_GPU)}, U,
                "loader kwargs from the trainer's default-kwargs helper: the CPU cores of each GPU"),
        Example({"mylib/trainer.py": _HELPER_DL_KWARGS.format(pin="True", workers="0")}, N,
                "the same helper loading in the main process"),
        Example(_axolotl_loaders(), U, "the main loader's num_workers filled at run time with the GPU count; an RL prompt loader's 0 "
                "is not the main loader's"),
        Example(_axolotl_loaders(validator=False), N, "without the validator the main loader runs with HF's default 0"),
        Example(_nanotron_loaders("1"), P, "the caller hands the loader data.num_loading_workers, 1 in the run configs; an example's 0 "
                "is a minority"),
        Example(_nanotron_loaders("4"), U, "the same, 4 in the run configs"),
        Example(_grain_loader(""), N, "torchtitan's Grain pipeline: a prefetch thread, no worker processes"),
        Example(_grain_loader("        dataset = dataset.mp_prefetch(grain.MultiprocessingOptions(num_workers=config.num_workers))\n"), U,
                "the same pipeline handed to Grain worker processes (num_workers 8 in its config)"),
    )

    def detect(self, ctx: Context) -> Outcome:
        return _gpu_samples_note(ctx, self._judge(ctx), "F1")

    def _judge(self, ctx: Context) -> Outcome:
        loaders = training_loaders(ctx)
        vals = [(v, ld) for ld in loaders for v in ld.props.get("num_workers", [])]
        known = [(n, v) for v, _ in vals if (n := _workers(v.value)) is not None]
        tf_par = _tf_parallel(ctx.facts)
        known += [(n, _Value(n, e, True)) for n, e in tf_par]
        fed = _tf_fed_zero_loaders(ctx.facts, vals) if tf_par else []
        if fed:
            # a DataLoader left at 0 workers over an IterableDataset that iterates a tf.data pipeline (openvla: "Set
            # `num_workers` to 0; RLDS loader handles parallelism!"): tf.data reads and decodes in its own threads
            # (``num_parallel_calls=16``), which the count above holds; torch workers would each replay the whole stream
            gone = {id(v) for v in fed}
            vals = [(v, ld) for v, ld in vals if id(v) not in gone]
            known = [(n, v) for n, v in known if id(v) not in gone]
        fed_note = (f"; the DataLoader at num_workers=0 ({fed[0].ev.path}:{fed[0].ev.line}"
                    + (f", +{len(fed) - 1}" if len(fed) > 1 else "") + ") iterates a tf.data pipeline, which reads and "
                    "decodes in its own threads") if fed else ""
        # mmengine recipes: each Python config file builds its loader from ``train_dataloader = dict(num_workers=...)``
        # (the runner calls DataLoader inside the framework); their values, voted as recipes by the store, are the loaders'
        configs = ctx.facts.config_modules()
        if len(configs) >= 3:
            cfg_loaders = [(w, s) for s in ctx.facts.effective("num_workers") if s.path in configs and (w := _workers(s.value)) is not None]
            known = [(w, _Value(s.value, ctx.facts.ev(s), True)) for w, s in cfg_loaders] + known
        if not vals and not known:
            built = hook_fed_loaders(ctx.facts)
            if built:
                return Outcome(N, [_ev(c, key=f"{c.name}(device=)") for c in built[:3]], _HOOK_FED, {})
            mp, threads = grain_pipeline(ctx.facts)
            procs = [(c, n) for c, n in mp if n is None or n > 0]
            if procs:
                n = min((x for _, x in procs if x is not None), default=None)
                return Outcome(U if n is None or n >= 4 else P, [_ev(c, key=c.short) for c, _ in procs],
                               "the Grain input pipeline runs in worker processes" + (f" ({int(n)})" if n is not None else ""),
                               {"loader": "grain", **({"num_workers": int(n)} if n is not None else {})})
            if threads or mp:
                c = (threads or mp)[0][0]
                return Outcome(N, [_ev(x, key=x.short) for x, _ in threads or mp],
                               f"the Grain input pipeline runs in the training process: no worker processes (Grain's "
                               f"mp_prefetch/MultiprocessingOptions), only a prefetch thread ({c.short} at {c.path}:{c.line})",
                               {"loader": "grain", "num_workers": 0})
            return Outcome(N, [], "no multi-process data loader found", {})
        cfg_note = fed_note
        if not known:
            typed = [r for v, _ in vals if (r := _receiver_class_default(ctx.facts, v.value)) is not None]
            if typed and len(typed) == len(vals):
                known = [(n, _Value(n, Facts.ev(x, key=f"{x.owner}.{x.name}", value=x.default), True)) for n, x in typed]
                x0 = typed[0][1]
                cfg_note = (f" (the loader reads {x0.name} from its {x0.owner} argument, whose default is {x0.default} at "
                            f"{x0.path}:{x0.line})")
        if not known:
            cfg = _config_worker_defaults(ctx.facts)
            if not cfg:
                return Outcome(U, [v.ev for v, _ in vals], "num_workers is set from a value that is not static", {})
            known = [(n, _Value(n, Facts.ev(x, key=f"{x.owner}.{x.name}", value=x.default), True)) for n, x in cfg]
            x0 = cfg[0][1]
            cfg_note = (f" (the loader's num_workers is passed in from the run config; the config's loader-worker setting "
                        f"{x0.owner}.{x0.name} defaults to {x0.default} at {x0.path}:{x0.line})")
        # most launches compute their worker count when they start (Mantis: ``WORKERS=$((COUNT_NODE * NGPU_PER_NODE * 4))``,
        # capped at 112, in 19 of 20 scripts; one sets 1): judged by those, the literal ones listed
        dynamic = {(v.ev.path, v.ev.line): v for v, _ in vals if _workers(v.value) is None and str(v.ev.key or "").startswith("--")}
        static = {(v.ev.path, v.ev.line) for _, v in known}
        if len(dynamic) >= 3 and len(dynamic) > 2 * len(static):
            d0 = next(iter(dynamic.values()))
            others = ", ".join(f"{v.ev.path}:{v.ev.line} ({int(n)})" for n, v in known[:3]) + (f" (+{len(known) - 3})" if len(known) > 3 else "")
            return Outcome(U, [v.ev for v in dynamic.values()], f"num_workers is computed when the launch starts in {len(dynamic)} of "
                           f"{len(dynamic) + len(static)} launches ({d0.ev.path}:{d0.ev.line}: `{str(d0.value)[:80]}`)"
                           + (f"; the others set it: {others}" if others else ""), {"num_workers_runtime": str(d0.value)[:80]})
        # launch recipes that disagree on --num-workers are judged as the store judges every recipe (its majority, else
        # the documented default; the distribution goes to the detail): the launches holding other values are left out
        ctx.facts.effective("num_workers")
        judged = as_number(_literal(ctx.facts.judged_value("num_workers")))
        if judged is not None:  # launches vote by verdict band (0 / 1-3 / 4+), as the store counts them
            voted = [(n, v) for n, v in known if not (v.ev.key == "--num-workers" and _grade(n) != _grade(judged))]
            known = voted or known
        majority_note = ""
        by_site = {(v.ev.path, v.ev.line, n): (n, v) for n, v in known}  # one loader resolved through several settings: once
        groups: dict[int, list[tuple[float, _Value]]] = {}
        for n, v in by_site.values():
            groups.setdefault(_grade(n), []).append((n, v))
        top = max(groups, key=lambda g: (len(groups[g]), g)) if groups else 0
        if len(groups) > 1 and len(by_site) >= 3 and len(groups[top]) * 2 > len(by_site):
            # loaders that differ are judged by the verdict most of them get, not the worst (Megatron-LM: 39 launches with
            # --num-workers or its default 2, against 6 DataLoader() calls of RL/example modules left at 0; lmms-engine: 4 or 8
            # workers in 19 of 27 recipes, 0 or 2 in the others); the others are listed in the detail
            others = [(n, v) for g, items in groups.items() if g != top for n, v in items]
            sites = ", ".join(f"{v.ev.path}:{v.ev.line} ({int(n)})" for n, v in others[:3]) + (f" (+{len(others) - 3})" if len(others) > 3 else "")
            majority_note = (f"; {len(groups[top])} of {len(by_site)} training loaders or launches have {_GRADE_TEXT[top]}, "
                             f"judged by the majority (the others: {sites})")
            known = [(n, v) for n, v in known if _grade(n) == top]
        low = min(n for n, _ in known)
        values = {"num_workers": int(low)}
        worst = [v.ev for n, v in known if n == low] + ([v.ev for v, _ in vals] if cfg_note else [])
        cfg_note += majority_note
        if low == 0:
            runtime = _runtime_workers(vals)
            if runtime:
                r = runtime[0]
                what = " (the GPU count of the node)" if _GPU_COUNT.search(r.value.text) else ""
                zeros = ", ".join(f"{e.path}:{e.line}" for e in worst[:3]) + (f" (+{len(worst) - 3})" if len(worst) > 3 else "")
                return Outcome(U, [r.ev for r in runtime] + worst, f"num_workers of the main training loader is set at run time: "
                               f"{r.value.text}{what} at {r.ev.path}:{r.ev.line}; {zeros} load{'s' if len(worst) == 1 else ''} in the "
                               "main process (num_workers=0)", {"num_workers_runtime": r.value.text})
            return Outcome(N, worst, "the training data loader runs in the main process (num_workers=0)", values)
        if low < 4:
            # the count most of those loaders or launches run with (Megatron-DeepSpeed: the default 2 of 37 launches, not a
            # data-analysis job's 1): the headline of a majority is its most common value
            counts = Counter(n for n, _ in by_site.values() if _grade(n) == _grade(low))
            shown = max(counts, key=lambda n: (counts[n], -n)) if counts else low
            ev = [v.ev for n, v in known if n == shown] + [e for e in worst if all(e is not v.ev for n, v in known if n == shown)]
            if all(e.key == _DS_LOADER for e in ev):
                cfg_note += " (DeepSpeed's default for the loader `deepspeed.initialize(training_data=...)` builds: 2 per rank)"
            return Outcome(P, ev, f"only {int(shown)} loader worker(s) for training{cfg_note}", values)
        many = [(n, v) for n, v in known if n > _MAX_WORKERS and not (isinstance(v.value, Expr))]
        if many:
            top = int(max(n for n, _ in many))
            findings = [v.ev for _, v in many]
            return Outcome(U, [v.ev for _, v in known], f"num_workers={top} per training process: far above the CPU cores a GPU "
                           f"usually has ({_MAX_WORKERS} on a DGX A100), so workers contend for CPU and each holds its own "
                           "prefetched batches in RAM; 4-8 per GPU is usual", {**values, "max_num_workers": top}, findings=findings)
        return Outcome(U, [v.ev for _, v in known], f"{int(low)}+ loader workers{cfg_note}", values)


#: a worker count that follows the machine's GPUs (axolotl ``data.get("capabilities").get("n_gpu", 1)``)
_GPU_COUNT = lazy_compile(r"n_gpus?\b|num_gpus|gpu_count|device_count")


def _runtime_workers(vals: list[tuple[_Value, _Loader]]) -> list[_Value]:
    """Training loaders whose num_workers the project fills at run time: a config validator or an assignment sets HF's
    ``dataloader_num_workers`` field, which the loader reads, to an expression. Their value is not static, so no other
    loader's 0 is theirs. A loader's own keyword left unresolved (``DataLoader(num_workers=trainer.args.dataloader_num_workers)``)
    or a helper's conditional fill of its own ``args["num_workers"]`` (atorch: kept when the caller passes one) is not such a setting."""
    return [v for v, ld in vals if ld.train and isinstance(v.value, Expr) and v.explicit
            and str(v.ev.key or "").rsplit(".", 1)[-1] == "dataloader_num_workers" and (v.ev.path, v.ev.line) != (ld.site.path, ld.site.line)]


def _grade(n: float) -> int:
    """F1's verdict of one loader's worker count: 0 unused, 1-3 partial, 4 or more used."""
    return 0 if n == 0 else (1 if n < 4 else 2)


_GRADE_TEXT = {0: "no worker process", 1: "1-3 worker processes", 2: "4 or more worker processes"}
_GRADE_BAND = {0: "0 workers", 1: "1-3 workers", 2: "4 or more workers"}
# recipes that disagree on a loader-worker count vote by F1's verdict: 4 and 8 workers are one "4 or more" majority
register_vote_bands(r"(^|_)workers$", lambda n: _GRADE_BAND[_grade(n)])


_LOADER_WORKERS_FIELD = lazy_compile(r"^(num_)?(data_?)?(loading_|loader_|dataloader_)?(num_)?workers$|^num_(data_)?(loading|loader)_workers$", re.I)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name.lstrip("_")).lower()


def _receiver_class_default(f: Facts, value: Any) -> tuple[float, Any] | None:
    """``num_workers=dataset_config.num_workers``: the receiver named as the snake case of a config class that declares the
    field (AReaL ``dataset_config: _DatasetConfig`` with ``num_workers: int = field(default=0)``) takes that field's default,
    when exactly one such class exists and nothing outside tests declares it otherwise."""
    if not isinstance(value, Expr):
        return None
    m = re.fullmatch(r"(?:\w+\.)*(\w+)\.(\w+)", value.text)
    if m is None:
        return None
    recv, name = m.groups()
    hits = [(n, x) for x in f.records("fields") if x.name == name and _snake(x.owner) == recv and not _in_tests(x.path)
            and (n := _workers(x.default)) is not None]
    return hits[0] if len(hits) == 1 else None


def _config_worker_defaults(f: Facts) -> list[tuple[float, Any]]:
    """Config-class defaults of the project's loader-worker count (nanotron ``DataArgs.num_loading_workers: int = 1``), for a
    DataLoader whose ``num_workers`` is a parameter filled from the run config by code the release does not ship: the
    value a run gets unless its config overrides it. Only when every such field agrees; tests aside."""
    out: list[tuple[float, Any]] = []
    for x in f.records("fields"):
        if not _LOADER_WORKERS_FIELD.match(x.name) or _in_tests(x.path) or re.search(r"preprocess|tokeni|map", x.owner, re.I):
            continue
        n = _workers(x.default)
        if n is None:
            continue
        out.append((n, x))
    return out if out and len({n for n, _ in out}) == 1 else []


# ---------------------------------------------------------------------------------------
# F2
# ---------------------------------------------------------------------------------------


_NANOGPT_LOOP = (
    "import numpy as np\nimport torch\n"
    "def get_batch(split):\n"
    "    data = np.memmap('data/train.bin', dtype=np.uint16, mode='r')\n"
    "    x = torch.stack([torch.from_numpy(data[i:i + 1024].astype(np.int64)) for i in ix])\n"
    "    return x.pin_memory().to('cuda', non_blocking=True)\n"
    "X, Y = get_batch('train')\n"
    "for micro_step in range(grad_accum):\n"
    "    logits, loss = model(X, Y)\n"
    "    X, Y = get_batch('train')\n"
    "    loss.backward()\n"
)


#: sentence-transformers 6.3-shaped: a Trainer subclass builds its loaders from a ``dataloader_params`` dict that reads the HF
#: ``TrainingArguments`` fields, then spends 60 lines choosing a batch sampler before ``DataLoader(dataset, **dataloader_params)``
_FAR_PARAMS_TRAINER = (
    "import torch\nfrom datasets import Dataset, DatasetDict, IterableDataset\n"
    "from torch.utils.data import BatchSampler, ConcatDataset, DataLoader, RandomSampler, SequentialSampler\n"
    "from transformers import Trainer\n\n\n"
    "class EmbeddingTrainer(Trainer):\n"
    "    def _build_dataloader(self, dataset, batch_size, dataset_kind):\n"
    "        generator = torch.Generator()\n"
    "        if self.args.seed is not None:\n"
    "            generator.manual_seed(self.args.seed)\n\n"
    "        dataloader_params = {\n"
    "            'collate_fn': self.data_collator,\n"
    "            'num_workers': {workers},\n"
    "            'pin_memory': self.args.dataloader_pin_memory,\n"
    "            'persistent_workers': self.args.dataloader_persistent_workers,\n"
    "            'prefetch_factor': self.args.dataloader_prefetch_factor,\n"
    "        }\n\n"
    "        if isinstance(dataset, IterableDataset):\n"
    "            dataloader_params.update(\n"
    "                {\n"
    "                    'batch_size': batch_size,\n"
    "                    'drop_last': self.args.dataloader_drop_last,\n"
    "                }\n"
    "            )\n"
    "        elif isinstance(dataset, DatasetDict):\n"
    "            samplers = []\n"
    "            for sub_dataset in dataset.values():\n"
    "                sampler = RandomSampler(sub_dataset, generator=generator)\n"
    "                samplers.append(\n"
    "                    BatchSampler(\n"
    "                        sampler,\n"
    "                        batch_size=batch_size,\n"
    "                        drop_last=self.args.dataloader_drop_last,\n"
    "                    )\n"
    "                )\n"
    "            dataset = ConcatDataset(dataset.values())\n"
    "            dataloader_params['batch_sampler'] = self.get_multi_dataset_batch_sampler(\n"
    "                dataset=dataset,\n"
    "                batch_samplers=samplers,\n"
    "                generator=generator,\n"
    "                seed=self.args.seed,\n"
    "            )\n"
    "        elif isinstance(dataset, Dataset):\n"
    "            if dataset_kind == 'train':\n"
    "                sampler = RandomSampler(dataset, generator=generator)\n"
    "            else:\n"
    "                sampler = SequentialSampler(dataset)\n"
    "            dataloader_params['batch_sampler'] = BatchSampler(\n"
    "                sampler,\n"
    "                batch_size=batch_size,\n"
    "                drop_last=self.args.dataloader_drop_last,\n"
    "            )\n"
    "        else:\n"
    "            raise ValueError(\n"
    "                f'Unsupported `{{dataset_kind}}_dataset` type. '\n"
    "                'Use a Dataset, DatasetDict, or IterableDataset.'\n"
    "            )\n\n"
    "        return DataLoader(dataset, **dataloader_params)\n\n"
    "    def get_train_dataloader(self):\n"
    "        if self.train_dataset is None:\n"
    "            raise ValueError('Training requires a train_dataset.')\n"
    "        return self.accelerator.prepare(\n"
    "            self._build_dataloader(self.train_dataset, self.args.train_batch_size, dataset_kind='train')\n"
    "        )\n"
)


def _far_params_trainer(workers: str = "self.args.dataloader_num_workers") -> dict[str, str]:
    return {"mylib/trainer.py": _FAR_PARAMS_TRAINER.replace("{workers}", workers)}


@register
class F2Prefetch(_DataCheck):
    id = "F2"
    title = "Prefetch (prefetch_factor)"
    title_zh = "数据预取 (Prefetch)"
    bottlenecks = (Bottleneck.DATA_IO,)
    priority = Priority.MEDIUM
    benefit = "the next batches are prepared while the GPU computes the current one"
    what = (
        "Whether batches are prefetched ahead of the GPU: `DataLoader(prefetch_factor=)` with `num_workers > 0`, HF "
        "`dataloader_prefetch_factor`, tf.data `.prefetch(tf.data.AUTOTUNE)`, DALI `prefetch_queue_depth`. A multi-worker "
        "DataLoader without an explicit value prefetches with PyTorch's default `prefetch_factor=2` (in the advised 2-4 "
        "range); with `num_workers=0` nothing is prefetched, and `prefetch_factor=1` is partial."
    )
    why = (
        "Prefetching overlaps CPU-side loading with GPU compute; the seed recommends 2-4 batches per worker. It only "
        "helps when workers exist (PyTorch rejects `prefetch_factor` with `num_workers=0`) and a larger factor absorbs "
        "jitter from slow samples (long documents, large images) at the cost of host memory."
    )
    fix = "Keep `num_workers > 0` and set `prefetch_factor` to 2-4 explicitly (HF: `dataloader_prefetch_factor: 4`); in tf.data end the pipeline with `.prefetch(tf.data.AUTOTUNE)`."
    fix_zh = "保持 `num_workers > 0`，并显式设置 `prefetch_factor` 为 2~4（HF：`dataloader_prefetch_factor: 4`）；tf.data 管道末尾加 `.prefetch(tf.data.AUTOTUNE)`。"
    fix_safety = FixSafety.SAFE
    references = ("https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader", "https://www.tensorflow.org/guide/data_performance#prefetching")
    snippets = {
        "hf-yaml": "dataloader_num_workers: 8\ndataloader_prefetch_factor: 4\n",
        "python": "loader = DataLoader(train_ds, batch_size=8, num_workers=8, prefetch_factor=4, pin_memory=True)\n",
    }
    examples = (
        Example(_grain_loader(""), P, "torchtitan's Grain pipeline: a thread prefetches 2 batches, no worker processes"),
        Example({  # torchtitan 0.3.0: the loader's kwargs come from its Config, whose num_workers default is 0
            "torchtitan/components/dataloader.py": (
                "from dataclasses import dataclass\n"
                "from torchdata.stateful_dataloader import StatefulDataLoader\n"
                "class ParallelAwareDataloader(StatefulDataLoader):\n"
                "    @dataclass(kw_only=True, slots=True)\n"
                "    class Config:\n"
                "        num_workers: int = 0\n"
                "        prefetch_factor: int | None = None\n"
                "    def __init__(self, dataset, dp_rank, dp_world_size, **kwargs):\n"
                "        if kwargs.get('num_workers', 0) == 0:\n"
                "            kwargs.pop('prefetch_factor', None)\n"
                "        super().__init__(dataset, **kwargs)\n"),
            "torchtitan/hf_datasets/text_datasets.py": (
                "from torchtitan.components.dataloader import ParallelAwareDataloader\n"
                "def build_text_dataloader(dataset, config, dp_rank, dp_world_size):\n"
                "    dataloader_kwargs = {'num_workers': config.num_workers, 'prefetch_factor': config.prefetch_factor, 'batch_size': 8}\n"
                "    return ParallelAwareDataloader(dataset, dp_rank=dp_rank, dp_world_size=dp_world_size, **dataloader_kwargs)\n"),
        }, N, "loader kwargs from a config whose num_workers default is 0: nothing is prefetched"),
        Example({  # torchtitan 0.3.0: the loader's kwargs come from its Config, whose num_workers default is 4
            "torchtitan/components/dataloader.py": (
                "from dataclasses import dataclass\n"
                "from torchdata.stateful_dataloader import StatefulDataLoader\n"
                "class ParallelAwareDataloader(StatefulDataLoader):\n"
                "    @dataclass(kw_only=True, slots=True)\n"
                "    class Config:\n"
                "        num_workers: int = 4\n"
                "        prefetch_factor: int | None = None\n"
                "    def __init__(self, dataset, dp_rank, dp_world_size, **kwargs):\n"
                "        if kwargs.get('num_workers', 0) == 0:\n"
                "            kwargs.pop('prefetch_factor', None)\n"
                "        super().__init__(dataset, **kwargs)\n"),
            "torchtitan/hf_datasets/text_datasets.py": (
                "from torchtitan.components.dataloader import ParallelAwareDataloader\n"
                "def build_text_dataloader(dataset, config, dp_rank, dp_world_size):\n"
                "    dataloader_kwargs = {'num_workers': config.num_workers, 'prefetch_factor': config.prefetch_factor, 'batch_size': 8}\n"
                "    return ParallelAwareDataloader(dataset, dp_rank=dp_rank, dp_world_size=dp_world_size, **dataloader_kwargs)\n"),
        }, U, "loader kwargs from a config whose num_workers default is 4: PyTorch's default prefetch"),
        Example(_far_params_trainer(), N, "a Trainer subclass's loader dict, 60 lines above its DataLoader, reads the HF "
                "dataloader_num_workers (default 0): nothing is prefetched"),
        Example(_far_params_trainer("4"), U, "the same loader dict with four workers: PyTorch's default prefetch"),
        Example({"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=8, prefetch_factor=4)\n"}, U, "explicit"),
        Example({"train.yaml": "dataloader_num_workers: 8\ndataloader_prefetch_factor: 2\n", "train.py": "from transformers import Trainer\ntrainer = Trainer(model=m, args=a)\n"}, U, "hf yaml"),
        Example({"input.py": "import tensorflow as tf\nds = tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE)\nds = ds.batch(64).prefetch(tf.data.AUTOTUNE)\n"}, U, "tf.data"),
        Example({"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=0)\n"}, N, "no workers"),
        Example({"train.py": "from transformers import Trainer, TrainingArguments\nargs = TrainingArguments(output_dir='o', dataloader_num_workers=0)\ntrainer = Trainer(model=m, args=args)\n"}, N, "hf zero workers"),
        Example({"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=8)\n"}, U, "default factor with workers"),
        Example({"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=4, prefetch_factor=1)\n"}, P, "factor 1"),
        Example(_olmo_loader(8), U, "prefetch_factor chosen by an if/else on the workers, its value from the recipe"),
        Example(_olmo_loader(1), P, "the same loader with a recipe's prefetch_factor 1"),
        Example({"train.py": _NANOGPT_LOOP}, P, "nanoGPT: next batch fetched ahead by hand"),
        Example({"train.py": _NANOGPT_LOOP.replace("X, Y = get_batch('train')\nfor", "for")}, N, "batch fetched only in the loop"),
        Example({"train.py": _NANOGPT_LOOP.replace(".pin_memory()", "")}, N, "no pinned memory"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        loaders = training_loaders(ctx)
        kinds: list[str] = []
        ev: list[Evidence] = []
        factors: list[float] = []
        defaults: list[_Loader] = []
        cfg_workers: list[tuple[float, Any]] | None = None
        for ld in loaders:
            workers = [_workers(v.value) for v in ld.props.get("num_workers", [])]
            typed = [r for v in ld.props.get("num_workers", []) if (r := _receiver_class_default(f, v.value)) is not None]
            if workers and all(w is None for w in workers) and typed and len(typed) == len(workers):
                workers = [n for n, _ in typed]  # as F1: ``dataset_config.num_workers`` of ``_DatasetConfig`` (default 0)
            if workers and all(w is None for w in workers):
                # num_workers passed in from the run config (torchtitan: ``num_workers=config.num_workers``): as F1 does, the
                # config's loader-worker default decides when every such field agrees (0 there: nothing is prefetched)
                cfg_workers = _config_worker_defaults(f) if cfg_workers is None else cfg_workers
                if cfg_workers and all(n == 0 for n, _ in cfg_workers):
                    kinds.append("none")
                    ev += [Facts.ev(x, key=f"{x.owner}.{x.name}", value=x.default) for _, x in cfg_workers]
                    factors.append(0)
                    continue
            if workers and all(w == 0 for w in workers):
                kinds.append("none")
                ev += [v.ev for v in ld.props["num_workers"]]
                factors.append(0)
                continue
            explicit = [(as_number(v.value), v) for v in ld.props.get("prefetch_factor", []) if v.explicit and v.value is not _UNKNOWN]
            # (or a framework's own default: SwissArmyTransformer's ``--prefetch-factor`` 4)
            explicit = explicit or [(n, v) for v in ld.props.get("prefetch_factor", []) if (n := as_number(v.value)) is not None]
            if explicit and all(n is not None for n, _ in explicit):
                low = min(n for n, _ in explicit if n is not None)
                kinds.append("used" if low >= 2 else "weak")
                ev += [v.ev for _, v in explicit]
                factors.append(low)
            else:
                kinds.append("used")  # PyTorch prefetches prefetch_factor=2 batches per worker by default
                defaults.append(ld)
                ev += [v.ev for v in ld.props.get("num_workers", [])] or [_ev(ld.site)]
                factors.append(2)
        for c in f.calls("prefetch"):
            if "." in c.name and f.imports("tensorflow") and any(i.path == c.path for i in f.imports("tensorflow")):
                kinds.append("used")
                ev.append(_ev(c, key=".prefetch()", value=_text(c.args[0]) if c.args else None))
        for c in f.calls_with_kw("prefetch_queue_depth"):
            if (as_number(c.kwargs["prefetch_queue_depth"]) or 0) >= 2:
                kinds.append("used")
                ev.append(_ev(c, key=f"{c.short}(prefetch_queue_depth=)", value=c.kwargs["prefetch_queue_depth"]))
        values = {"prefetch_factor": int(min(factors))} if factors else {}
        if not kinds:
            mp, threads = grain_pipeline(f)
            if threads and not [1 for _, n in mp if n is None or n > 0]:
                c, depth = threads[0]
                shown = f"{int(depth)} batches" if depth is not None else "its buffer"
                return Outcome(P, [_ev(x, key=x.short, value=int(d) if d is not None else None) for x, d in threads],
                               f"a thread of the training process prefetches {shown} (Grain {c.short} at {c.path}:{c.line}): "
                               "loading overlaps the step, but not in worker processes", values)
            ahead = _fetched_ahead(f)
            if ahead:
                return Outcome(P, ahead, "the next batch is fetched ahead by hand (pinned, non_blocking copy) in the training "
                               "process: one batch deep, and loading itself is not overlapped by worker processes", values)
            return Outcome(N, [], "no multi-process data loader found", values)
        explicit_vals = sorted({int(x) for x in factors if x not in (0, 2)} | ({2} if len(defaults) < len([k for k in kinds if k == "used"]) and 2 in factors else set()))
        huge = [(n, v) for ld in loaders for v in ld.props.get("prefetch_factor", [])
                if v.explicit and (n := as_number(v.value)) is not None and n > _MAX_PREFETCH]
        if huge:
            worst = max(n for n, _ in huge)
            findings = [v.ev for _, v in huge]
            return Outcome(U, _unique_ev(ev), f"prefetch_factor={int(worst)}: each worker keeps {int(worst)} batches in host RAM "
                           f"(more than {_MAX_PREFETCH} buys no overlap and costs memory; 2-4 is usual)", values, findings=findings)
        if all(k == "used" for k in kinds):
            if explicit_vals and defaults:
                detail = (f"worker processes prefetch batches (prefetch_factor={', '.join(map(str, explicit_vals))} where set, "
                          "PyTorch's default 2 elsewhere)")
            elif explicit_vals:
                detail = f"batches prefetched with prefetch_factor={', '.join(map(str, explicit_vals))}"
            elif loaders and all(isinstance(ld.site, Call) and ld.site.short == "MultiProcessingReadingService" for ld in loaders):
                # torchdata's reading service has no prefetch_factor: each worker and the main process prefetch their own
                detail = ("worker processes prefetch batches (torchdata >= 0.6 MultiProcessingReadingService defaults: "
                          "worker_prefetch_cnt=10, main_prefetch_cnt=10)")
            else:
                detail = "worker processes prefetch batches (PyTorch's default prefetch_factor=2)"
            return Outcome(U, _unique_ev(ev), detail, values)
        if all(k == "none" for k in kinds):
            return Outcome(N, _unique_ev(ev), "num_workers=0: nothing is prefetched", values)
        return Outcome(P, _unique_ev(ev), "prefetching only for some training loaders, or with a factor below 2", values)


#: a prefetch depth above this keeps many batches per worker in host RAM for no added overlap
_MAX_PREFETCH = 8
#: loader workers per training process above this exceed the CPU cores a GPU usually has (DGX A100: 128 cores / 8 GPUs)
_MAX_WORKERS = 16


def _fetched_ahead(f: Facts) -> list[Evidence]:
    """A hand-written batch function that copies pinned tensors with ``non_blocking=True`` and is called once before
    the training loop and again inside it (nanoGPT's ``X, Y = get_batch('train')`` before ``backward()``): the next
    batch is on its way to the GPU while the current one computes."""
    async_copies = [c for c in f.calls_with_kw("non_blocking") if c.func and truthy(c.kwargs["non_blocking"]) is True]
    pinned = {(c.path, c.func) for c in f.calls("pin_memory") if c.func}
    for copy in async_copies:
        if (copy.path, copy.func) not in pinned:
            continue
        sites = [c for c in f.calls(copy.func) if c.path == copy.path and c.func != copy.func and not _in_tests(c.path)]
        first = min((c.line for c in sites if not c.loop), default=None)
        ahead = [c for c in sites if c.loop and first is not None and c.line > first]
        if ahead:
            return [_ev(ahead[0], key=f"{copy.func}()"), _ev(copy, key="non_blocking", value=True)]
    return []


# ---------------------------------------------------------------------------------------
# F3
# ---------------------------------------------------------------------------------------

#: a project's DataLoader subclass (picotron ``picotron/data.py``): its ``__init__`` defaults are the loader's settings
_LOADER_SUBCLASS = (
    "from torch.utils.data import DataLoader, DistributedSampler\n\n\n"
    "class MicroBatchDataLoader(DataLoader):\n"
    "    def __init__(self, micro_batch_size, seq_length, dataset_name, num_workers, split=\"train\", pin_memory=True):\n"
    "        self.dataset = load_dataset(dataset_name, split=split)\n"
    "        self.sampler = DistributedSampler(self.dataset, shuffle=False)\n"
    "        super().__init__(\n            self.dataset,\n            batch_size=micro_batch_size,\n"
    "            pin_memory=pin_memory,\n            num_workers=num_workers,\n            sampler=self.sampler,\n        )\n"
)
_LOADER_SUBCLASS_CALL = (
    "from picotron.data import MicroBatchDataLoader\n\n"
    "data_loader = MicroBatchDataLoader(\n    micro_batch_size=4,\n    seq_length=1024,\n"
    "    dataset_name=\"roneneldan/TinyStories\",\n    num_workers=4,\n)\n"
)

_PIN_FUNCS = lazy_compile(r"(collate|__iter__|__next__|preload|prefetch|get_batch|load_batch|to_device|_pin)", re.I)
#: pinning of optimizer/parameter state for offloaded optimizer steps (AReaL ``PerLayerOptimWrapper._pin_states``:
#: ``state[key] = tensor.pin_memory()`` in fsdp_utils/optimizer.py), or of checkpoint copies (Colossal-AI ``_pin_tensor``
#: in checkpoint_io/utils.py: the file's folder counts too): not the training batches
_STATE_PIN = lazy_compile(r"(?i)(optim|_states?\b|param|offload|checkpoint|ckpt)")


#: LAVIS: the runner's loaders pin memory; ``laion_dataset.py``'s ``__main__`` self-demo builds an unpinned one to print a batch
_LDL_RUNNER = (
    "from torch.utils.data import DataLoader\n\n\n"
    "class RunnerBase:\n"
    "    def create_loaders(self, dataset, num_workers, bsz):\n"
    "        return DataLoader(dataset, batch_size=bsz, num_workers=num_workers, pin_memory=True, shuffle=True, drop_last=True)\n\n"
    "    def train(self):\n"
    "        loader = self.create_loaders(self.dataset, self.config.run_cfg.num_workers, 16)\n"
    "        for samples in loader:\n"
    "            self.model(samples)['loss'].backward()\n"
)
_LDL_LAION = (
    "import webdataset as wds\nfrom lavis.datasets.base_dataset import BaseDataset\n\n\n"
    "class LaionDataset(BaseDataset):\n"
    "    def __init__(self, vis_processor, text_processor, location):\n"
    "        self.inner_dataset = wds.DataPipeline(wds.ResampledShards(location), wds.tarfile_to_samples())\n\n\n"
    'if __name__ == "__main__":\n'
    "    import torch\n\n"
    '    dataset = LaionDataset(vis_processor=None, text_processor=lambda x: x, location="/export/laion/{00000..01743}.tar")\n'
    "    loader = torch.utils.data.DataLoader(dataset.inner_dataset, batch_size=2)\n"
    '    print(next(iter(loader))["text_input"])\n'
)
_LDL_BUILDERS = "from lavis.datasets.laion_dataset import LaionDataset\n\n_LDL_BUILDERS = {'laion2B_multi': LaionDataset}\n"
_LDL_RECIPE = "run:\n  num_workers: 4\n  batch_size_train: 16\n"
_LIB_DEMO_LOADER = {"lavis/runners/runner_base.py": _LDL_RUNNER, "lavis/datasets/laion_dataset.py": _LDL_LAION,
                    "lavis/datasets/builders.py": _LDL_BUILDERS, "lavis/projects/blip2/train/pretrain_stage2.yaml": _LDL_RECIPE}

#: a batch class with the ``pin_memory()`` hook a pinning DataLoader calls (skyrl-train ``Experience``), and a loader
#: whose ``pin_memory`` keyword is ``{pin}``
_PIN_HOOK = ("import torch\nfrom dataclasses import dataclass\n\n\ndef pin_memory(tensor):\n    if isinstance(tensor, list):\n"
             "        return [pin_memory(t) for t in tensor]\n    return tensor.pin_memory()\n\n\n@dataclass\nclass Experience:\n"
             "    sequences: torch.Tensor\n    attention_mask: torch.Tensor\n\n    def pin_memory(self):\n"
             "        self.sequences = pin_memory(self.sequences)\n        self.attention_mask = self.attention_mask.pin_memory()\n"
             "        return self\n")
_PIN_HOOK_LOADER = ("from torchdata.stateful_dataloader import StatefulDataLoader\n\n\ndef build_dataloader(cfg, dataset):\n"
                    "    return StatefulDataLoader(dataset, batch_size=cfg.trainer.train_batch_size, shuffle=True, num_workers=8{pin})\n")


# VeOmni: the loader hands on ``pin_memory=pin_memory`` from its config (True); the activation-offload hooks and host
# buffers have ``pin_memory=False`` keywords of their own, which are not the loader's
_OFFLOAD_PIN = {
    "pkg/arguments.py": (
        "from dataclasses import dataclass, field\n\n\n@dataclass\nclass DataloaderConfig:\n"
        "    num_workers: int = field(default=8)\n    pin_memory: bool = field(default=True)\n"),
    "pkg/data_loader.py": (
        "from torch.utils.data import DataLoader\n\n\ndef build_dataloader(dataset, num_workers, pin_memory):\n"
        "    return DataLoader(dataset, batch_size=1, num_workers=num_workers, pin_memory=pin_memory)\n"),
    "pkg/offloading.py": (
        "import torch\nfrom torch.autograd.graph import saved_tensors_hooks\n\n\nclass custom_save_on_cpu(saved_tensors_hooks):\n"
        "    def __init__(self, gpu_limit_in_gb=0.0, pin_memory=False):\n        self.pin_memory = pin_memory\n\n\n"
        "def build_activation_offloading_context(enable, limit):\n    if enable:\n"
        "        return custom_save_on_cpu(gpu_limit_in_gb=limit, pin_memory=False)\n\n\n"
        "def host_buffer(size, stride, dtype):\n    return torch.empty_strided(size, stride, dtype=dtype, device=\"cpu\", pin_memory=False)\n"),
}

def _env_loaders(run: str = "") -> dict[str, str]:
    """A multi-backend trainer's loader factory (FlagAI ``get_dataloader``): the single-process 'pytorch' backend, the
    default, pins its batches; the distributed backends' loader (``else``) does not."""
    files = {
        "mylib/env_args.py": (
            "import argparse\n\nclass EnvArgs:\n    def __init__(self, env_type='pytorch', batch_size=1, num_gpus=1):\n"
            "        self.parser = argparse.ArgumentParser()\n"
            "        self.parser.add_argument('--env_type', default=env_type)\n"),
        "mylib/env_trainer.py": (
            "import torch\n\nclass EnvTrainer:\n    def __init__(self, env_args):\n"
            "        self.env_type = env_args.env_type\n        self.batch_size = env_args.batch_size\n\n"
            "    def get_dataloader(self, dataset, collate_fn, shuffle=False):\n"
            "        if self.env_type == 'pytorch':\n"
            "            return torch.utils.data.DataLoader(dataset, batch_size=self.batch_size, collate_fn=collate_fn,\n"
            "                                               num_workers=4, prefetch_factor=4, pin_memory=True, shuffle=shuffle)\n"
            "        else:\n"
            "            sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=shuffle)\n"
            "            return torch.utils.data.DataLoader(dataset, batch_size=self.batch_size, sampler=sampler,\n"
            "                                               num_workers=4, pin_memory=False, prefetch_factor=4, collate_fn=collate_fn)\n\n"
            "    def train(self, model, optimizer, train_dataset, collate_fn=None):\n"
            "        train_dataloader = self.get_dataloader(train_dataset, collate_fn, True)\n"
            "        for batch in train_dataloader:\n            loss = model(**batch)['loss']\n            loss.backward()\n"
            "            optimizer.step()\n"),
    }
    if run:
        files["examples/train.py"] = "from mylib.env_args import EnvArgs\n" + run
    return files


#: openpipe-art: a ``_pin*`` helper of a checkpoint-bridge module pins the weights its callers cache; ``{caller}`` is where
#: it is called from (a weight loader, or a collate function of the data module)
def _pin_helper(caller: str) -> dict[str, str]:
    files = {
        "mylib/runtime/bridge_runtime.py": (
            "import torch\n\n\ndef _pin_cpu_tensor(tensor):\n    if tensor.device.type != 'cpu' or not torch.cuda.is_available():\n"
            "        return tensor\n    return tensor if tensor.is_pinned() else tensor.pin_memory()\n\n\n"
            "def load_hf_weights_once(source, keys):\n    cache = {}\n    for key in keys:\n"
            "        cache[key] = _pin_cpu_tensor(source.get_tensor(key))\n    return cache\n"),
        "mylib/train.py": (
            "def train_step(model, optimizer, rows, device):\n    for row in rows:\n"
            "        loss = model(row.to(device)).loss\n        loss.backward()\n        optimizer.step()\n"),
    }
    if caller == "collate":
        files["mylib/data/collate.py"] = (
            "import torch\nfrom mylib.runtime.bridge_runtime import _pin_cpu_tensor\n\n\n"
            "def collate(rows):\n    return _pin_cpu_tensor(torch.stack(rows))\n")
    return files


@register
class F3PinMemory(_DataCheck):
    id = "F3"
    title = "pin_memory"
    title_zh = "共享内存 Pin Memory"
    bottlenecks = (Bottleneck.DATA_IO,)
    priority = Priority.MEDIUM
    benefit = "page-locked host batches: faster host-to-device copies that can run asynchronously"
    what = (
        "Whether training batches are staged in pinned (page-locked) host memory: `DataLoader(pin_memory=True)` "
        "(PyTorch default False), HF `dataloader_pin_memory` (default True), Megatron (always pinned), or explicit "
        "`.pin_memory()` in a loader/prefetcher. `pin_memory=False` is not use."
    )
    why = (
        "Copies from pageable memory go through an extra staging buffer and block the host; pinned memory roughly "
        "doubles effective H2D bandwidth on PCIe (NVIDIA's 'How to Optimize Data Transfers in CUDA C/C++') and is a "
        "precondition for `non_blocking=True` copies to overlap with compute."
    )
    fix = "Pass `pin_memory=True` to the training DataLoader (HF: leave `dataloader_pin_memory` at its default true) and copy with `non_blocking=True`."
    fix_zh = "为训练 DataLoader 设置 `pin_memory=True`（HF：保持 `dataloader_pin_memory` 默认 true），并用 `non_blocking=True` 拷贝。"
    fix_safety = FixSafety.SAFE
    references = ("https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html", "https://developer.nvidia.com/blog/how-optimize-data-transfers-cuda-cc/")
    snippets = {
        "python": "loader = DataLoader(train_ds, batch_size=8, num_workers=8, pin_memory=True)\n",
        "hf-yaml": "dataloader_pin_memory: true\n",
    }
    examples = (
        Example({"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=4, pin_memory=True)\n"}, U, "explicit"),
        Example({"train.py": "from transformers import Trainer, TrainingArguments\nargs = TrainingArguments(output_dir='o')\ntrainer = Trainer(model=m, args=args)\n"}, U, "hf default true"),
        # a YAML-only axolotl project: the HF Trainer underneath pins unless dataloader_pin_memory turns it off
        Example({"examples/llama-3/lora-1b.yml": (
            "base_model: NousResearch/Llama-3.2-1B\ndatasets:\n  - path: teknium/GPT4-LLM-Cleaned\n    type: alpaca\n"
            "adapter: lora\nsequence_len: 2048\nsample_packing: true\nmicro_batch_size: 2\nbf16: auto\n")}, U, "axolotl recipe, hf default"),
        Example({"examples/llama-3/lora-1b.yml": (
            "base_model: NousResearch/Llama-3.2-1B\nadapter: lora\nsequence_len: 2048\nmicro_batch_size: 2\n"
            "dataloader_pin_memory: false\n")}, N, "axolotl recipe, pinning off"),
        Example({"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=4, pin_memory=False)\n"}, N, "false"),
        Example({"nanochat/dataloader.py": (  # a pinned staging buffer whose pinning follows the device (nanochat)
            "import torch\n\ndef tokenizing_distributed_data_loader(tokenizer, B, T, split, device=\"cuda\"):\n"
            "    use_cuda = device == \"cuda\"\n    row_buffer = torch.empty((B, T + 1), dtype=torch.long)\n"
            "    cpu_buffer = torch.empty(2 * B * T, dtype=torch.long, pin_memory=use_cuda)\n"
            "    gpu_buffer = torch.empty(2 * B * T, dtype=torch.long, device=device)\n    while True:\n"
            "        cpu_buffer[:B * T].copy_(row_buffer[:, :-1].flatten())\n"
            "        gpu_buffer.copy_(cpu_buffer, non_blocking=use_cuda)\n        yield gpu_buffer\n")}, U, "pinned staging buffer, pinning by device"),
        Example({"nanochat/dataloader.py": (
            "import torch\n\ndef tokenizing_distributed_data_loader(tokenizer, B, T, split, device=\"cuda\"):\n"
            "    cpu_buffer = torch.empty(2 * B * T, dtype=torch.long, pin_memory=False)\n"
            "    gpu_buffer = torch.empty(2 * B * T, dtype=torch.long, device=device)\n    while True:\n"
            "        gpu_buffer.copy_(cpu_buffer)\n        yield gpu_buffer\n")}, N, "staging buffer not pinned"),
        Example({"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=4)\n"}, N, "torch default false"),
        Example({"cfg.yaml": "dataloader_pin_memory: false\n", "train.py": "from transformers import Trainer\nt = Trainer(model=m, args=a)\n"}, N, "hf disabled"),
        Example({"train.py": "from torch.utils.data import DataLoader\ntrain_dl = DataLoader(train_ds, batch_size=8, pin_memory=True)\n",
                 "finetune.py": "from torch.utils.data import DataLoader\ntrain_loader = DataLoader(sft_ds, batch_size=4)\n"}, P, "one of two training loaders"),
        Example({  # LLaMA-Factory v1: the loader's pin_memory attribute; the DeepSpeed offload's pin_memory is another knob
            "src/trainer/batching.py": (
                "from torchdata.stateful_dataloader import StatefulDataLoader\n"
                "class BatchGenerator:\n"
                "    def __init__(self, dataset, batch_size, pin_memory=True):\n"
                "        self.pin_memory = pin_memory\n"
                "        self._data_provider = StatefulDataLoader(dataset, batch_size=batch_size, num_workers=4,\n"
                "                                                 pin_memory=self.pin_memory)\n"),
            "examples/deepspeed/ds_z3_config.json": (
                '{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "none", "pin_memory": false}}}\n'),
        }, U, "a DeepSpeed offload pin_memory is not the loader's"),
        Example({"train_gpt.py": _MODDED_READER}, U, "tokens read into a pinned buffer"),
        # a project's DataLoader subclass whose __init__ defaults to pinning (picotron's MicroBatchDataLoader), built without it
        Example({"picotron/data.py": _LOADER_SUBCLASS, "train.py": _LOADER_SUBCLASS_CALL}, U, "loader subclass, pin_memory default true"),
        Example({"picotron/data.py": _LOADER_SUBCLASS.replace("pin_memory=True):", "pin_memory=False):"),
                 "train.py": _LOADER_SUBCLASS_CALL}, N, "loader subclass, pin_memory default false"),
        Example({"train.py": (
            "import torch\nscratch = torch.empty(1 << 20, dtype=torch.float32)\n"
            "for step in range(steps):\n    x = torch.from_numpy(next_batch()).cuda()\n")}, N, "unpinned scratch tensor"),
        # a library shipping a subclass of TRL's trainer for its users' scripts (unsloth 2025.9 trainer.py): the HF loader pins
        Example({"mylib/trainer.py": "from trl import SFTTrainer\n\nclass FastTrainer(SFTTrainer):\n    def create_optimizer(self):\n        return super().create_optimizer()\n"}, U, "library subclass of TRL's trainer, hf default true"),
        Example({"mylib/trainer.py": "class SFTTrainer:\n    def train(self):\n        pass\n\nclass FastTrainer(SFTTrainer):\n    pass\n"}, N, "own trainer class, no loader"),
        Example({  # AReaL: optimizer states pinned for a per-layer offloaded optimizer step; the batches are not pinned
            "pkg/engine/optimizer.py": ("class PerLayerOptimWrapper:\n    def _pin_states(self):\n        for p in self.params:\n"
                                        "            state = self.optimizer.state[p]\n            for key in ('exp_avg', 'exp_avg_sq'):\n"
                                        "                state[key] = state[key].pin_memory()\n"),
            "train.py": ("from torch.utils.data import DataLoader\nfrom pkg.engine.optimizer import PerLayerOptimWrapper\n"
                         "loader = DataLoader(dataset, batch_size=8, num_workers=4, pin_memory=False)\n"),
        }, N, "pinned optimizer states are not pinned batches"),
        Example(_LIB_DEMO_LOADER, U, "the runner pins; a library module's __main__ demo loader does not count"),
        Example({"src/open_clip_train/data.py": (  # open_clip 3.3.0: the CSV loader pins, the webdataset loader (a DataLoader) does not
            "import webdataset as wds\nfrom torch.utils.data import DataLoader\n\n\ndef get_csv_dataset(args, dataset):\n"
            "    return DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers, pin_memory=True,\n"
            "                      drop_last=True)\n\n\ndef get_wds_dataset(args, pipeline):\n"
            "    dataset = wds.DataPipeline(*pipeline)\n"
            "    return wds.WebLoader(dataset, batch_size=None, shuffle=False, num_workers=args.workers,\n"
            "                         persistent_workers=args.workers > 0)\n")}, P, "webdataset's WebLoader keeps DataLoader's unpinned default"),
        Example({"myrl/dataset/replay_buffer.py": _PIN_HOOK, "myrl/trainer_utils.py": _PIN_HOOK_LOADER.format(pin="")}, N,
                "a batch class's pin_memory() hook with no loader that pins"),
        Example({"myrl/dataset/replay_buffer.py": _PIN_HOOK, "myrl/trainer_utils.py": _PIN_HOOK_LOADER.format(pin=", pin_memory=True")},
                U, "a batch class's pin_memory() hook called by a pinning loader"),
        Example(_OFFLOAD_PIN, U, "a loader's pin_memory handed on from its config; offload buffers' pin_memory=False is not the loader's"),
        Example(_PLUGIN_LOADER, N, "a library helper's pin_memory parameter defaults to False and no caller passes it; pinned parameter chunks are not batches"),
        Example({**_PLUGIN_LOADER, "train.py": _PLUGIN_LOADER_CALL}, U, "the helper's caller passes pin_memory=True"),
        Example({  # InternEvo: the generic loader helper that pins nothing serves only the validation loaders
            "internlm/data/tokenized/batch_sampler.py": (
                "from torch.utils.data import DataLoader\n\n\n"
                "def get_dpsampler_dataloader(dataset, shuffle=False, seed=1024, drop_last=False, pin_memory=False, num_workers=0, **kwargs):\n"
                "    return DataLoader(dataset, shuffle=shuffle, drop_last=drop_last, pin_memory=pin_memory,\n"
                "                      num_workers=num_workers, **kwargs)\n"),
            "internlm/data/build_dataloader.py": (
                "from torch.utils.data import DataLoader\n\nfrom internlm.data.tokenized.batch_sampler import get_dpsampler_dataloader\n\n\n"
                "def build_train_loader_with_data_type(data_cfg, train_ds, train_sampler, train_collate_fn):\n"
                "    train_dl = DataLoader(\n        dataset=train_ds,\n        batch_sampler=train_sampler,\n"
                "        num_workers=data_cfg.get(\"num_worker\", 4),\n        pin_memory=True,\n        collate_fn=train_collate_fn,\n    )\n"
                "    return train_dl\n\n\n"
                "def build_valid_loader_with_data_type(data_cfg, val_datasets, valid_collate_fn):\n    val_dls = {}\n"
                "    for val_name, ds in val_datasets.items():\n"
                "        val_dls[val_name] = get_dpsampler_dataloader(\n            ds,\n            shuffle=False,\n"
                "            num_workers=data_cfg.get(\"num_worker\", 0),\n            collate_fn=valid_collate_fn,\n        )\n"
                "    return val_dls\n"),
        }, U, "a helper whose every caller builds a validation loader is not a training loader"),
        Example({**_OFFLOAD_PIN, "pkg/arguments.py": _OFFLOAD_PIN["pkg/arguments.py"].replace(
            "pin_memory: bool = field(default=True)", "pin_memory: bool = field(default=False)")}, N,
                "the same loader with its config's pin_memory off"),
        Example(_QUEUE_FED_TRAINER, N, "a Trainer whose _prepare_inputs is replaced pins no training batch"),
        Example(_HOOK_FED_TRAINER, N, "a Trainer whose own _prepare_inputs builds each batch on the device from rollouts"),
        Example(_LOADER_FED_TRAINER, U, "the same Trainer when its hook moves the loader's batch (HF's pin default applies)"),
        Example(_env_loaders(), U, "the pinned loader of the default 'pytorch' backend; the other backends' loader is off"),
        Example(_pin_helper("weights"), N, "a _pin helper of a checkpoint bridge pins the weights its loader caches, not batches"),
        Example(_pin_helper("collate"), U, "the same helper called by the data module's collate function pins each batch"),
        Example({"mylib/trainer.py": _HELPER_DL_KWARGS.format(pin="True if torch.cuda.is_available() else False", workers=_CPU_PER_GPU)}, U,
                "loader kwargs from the trainer's default-kwargs helper: pinned on CUDA"),
        Example({"mylib/trainer.py": _HELPER_DL_KWARGS.format(pin="False", workers=_CPU_PER_GPU)}, N, "the same helper with pin_memory False"),
        Example(_env_loaders("env_args = EnvArgs(env_type='pytorchDDP', num_gpus=8)\n"), P,
                "the same trainer when a run script also picks the distributed backend"),
    )

    def detect(self, ctx: Context) -> Outcome:
        return _gpu_samples_note(ctx, self._judge(ctx), "F3")

    def _judge(self, ctx: Context) -> Outcome:
        f = ctx.facts
        pinned: list[Evidence] = []
        unpinned: list[Evidence] = []
        for ld in training_loaders(ctx):
            for v in ld.props.get("pin_memory", []):
                t = truthy(v.value) if v.value is not _UNKNOWN else None
                if t is True or (t is None and isinstance(v.value, Expr)):
                    pinned.append(v.ev)
                elif t is False:
                    unpinned.append(v.ev)
        manual = [c for c in f.calls("pin_memory") if "." in c.name and not c.kwargs and not _in_tests(c.path)
                  and (_PIN_FUNCS.search(c.func or "") or "data" in c.path.lower()) and not _STATE_PIN.search(f"{c.func or ''} {'/'.join(c.path.rsplit('/', 2)[-2:])}")]
        # a batch class's own ``def pin_memory(self)`` (and the helper it recurses into) is the hook a DataLoader built with
        # ``pin_memory=True`` calls on each batch: it pins only when such a loader exists (skyrl-train ``Experience.pin_memory``,
        # replay_buffer.py:95, with no pinned loader and no caller)
        if not pinned:
            manual = [c for c in manual if c.func != "pin_memory"]
        manual = [c for c in manual if not _weight_pin_helper(f, c)]
        pinned += [_ev(c, key=".pin_memory()") for c in manual]
        # a pinned host buffer the data is read into (modded-nanogpt: ``torch.empty(n, dtype=torch.uint16, pin_memory=True)``
        # then ``f.readinto(tokens.numpy())`` and ``tokens.cuda(non_blocking=True)``)
        # (a token-ish name alone is not enough: a parameter chunk's ``self.cpu_shard = torch.empty(self.shard_size, ...,
        # pin_memory=self.pin_memory)`` in ZeRO code is a shard of weights; the data buffer is read from a file where it is made)
        readers = _file_read_funcs(f)
        buffers = [c for c in f.calls("torch.empty", "torch.zeros", "torch.ones", "torch.empty_strided")
                   if _pinned_kw(c.kwargs.get("pin_memory")) and not _in_tests(c.path)
                   and (_PIN_FUNCS.search(c.func or "") or "data" in c.path.lower()
                        or (_TOKENISH.search(f"{c.text} {c.func or ''}") and (c.path, c.func) in readers))]
        pinned += [_ev(c, key=f"{c.name}(pin_memory=)", value=True) for c in buffers]
        if pinned and not unpinned:
            return Outcome(U, _unique_ev(pinned), "training batches are pinned", {"pin_memory": True})
        if pinned:
            return Outcome(P, _unique_ev(pinned + unpinned), "only some training loaders pin memory", {"pin_memory": False})
        if unpinned:
            return Outcome(N, _unique_ev(unpinned), "training loader without pin_memory", {"pin_memory": False})
        built = hook_fed_loaders(f)
        if built:
            return Outcome(N, [_ev(c, key=f"{c.name}(device=)") for c in built[:3]], _HOOK_FED + ": nothing is pinned", {})
        readers = token_readers(f)
        if readers:
            # a hand-written reader of token shards (llm.c ``_load_data_shard`` + ``next_batch``, then ``x.to(device)``):
            # no DataLoader to pass pin_memory=True to; the batch tensors themselves can be pinned
            return Outcome(N, [_ev(c, key=_bin_key(c)) for c in readers[:2]],
                           "batches are sliced from token ids read by hand and copied from pageable memory: nothing is pinned",
                           {"loader": "token-reader"})
        return Outcome(N, [], "no data loader found to pin", {})


#: the data-side names of :data:`_PIN_FUNCS` (a function that builds or hands on batches), without the bare ``_pin`` prefix
_BATCH_PIN_FUNCS = lazy_compile(r"(collate|__iter__|__next__|preload|prefetch|get_batch|load_batch|to_device|batch|loader|data)", re.I)


def _weight_pin_helper(f: Facts, c: Call) -> bool:
    """A ``.pin_memory()`` kept only because its function is a ``_pin*`` helper (openpipe-art ``_pin_cpu_tensor`` in
    megatron/runtime/bridge_runtime.py), outside any data module, whose every caller is outside the data path too
    (``cache[key] = _pin_cpu_tensor(...)`` in ``_materialize_hf_weight_source``, ``load_unique_hf_keys_once``): it pins
    weights or state read from a checkpoint, not the training batches. A helper nothing calls by name is left as it is."""
    func = c.func or ""
    if not func or _BATCH_PIN_FUNCS.search(func) or "data" in c.path.lower() or "loader" in c.path.lower():
        return False
    callers = [x for x in f.calls(func) if x.short == func and x.func != func and not _in_tests(x.path)]
    return bool(callers) and not any(
        _BATCH_PIN_FUNCS.search(x.func or "") or "data" in x.path.lower() or "loader" in x.path.lower() for x in callers)


def _file_read_funcs(f: Facts) -> set[tuple[str, str | None]]:
    """Functions that read file bytes into memory (``f.readinto(tokens.numpy())``, ``np.fromfile``, ``torch.from_file``,
    ``np.memmap``, ``os.pread``): where a token buffer is filled, unlike a parameter shard copied between devices."""
    return {(c.path, c.func) for c in f.calls("readinto", "pread", "os.pread", "fromfile", "numpy.fromfile", "np.fromfile",
                                              "torch.from_file", "numpy.memmap", "np.memmap", "frombuffer")}


def _pinned_kw(v: Any) -> bool:
    """``pin_memory=True``, or an expression such as ``pin_memory=use_cuda`` (nanochat: pinned whenever the device is
    CUDA), read as the loaders' ``pin_memory=`` expressions are; a literal false or a missing keyword is not."""
    t = truthy(v)
    return t is True or (t is None and isinstance(v, Expr))


# ---------------------------------------------------------------------------------------
# F4
# ---------------------------------------------------------------------------------------


def _unpassed_param(f: Facts, c: Call, kw: str) -> bool:
    """``np.load(f, mmap_mode=mmap_mode)`` in a helper whose parameter no caller passes (LAVIS ``load_file(filename,
    mmap_mode=None, ...)``, called nowhere with ``mmap_mode``): the keyword forwards a default, not a choice."""
    v = c.kwargs.get(kw)
    if not (isinstance(v, Expr) and v.text.isidentifier() and c.func):
        return False
    callers = [x for x in f.calls(c.func) if x.func != c.func]
    return not any(v.text in x.kwargs or x.star_kwargs or len(x.args) > 1 for x in callers)


#: MosaicML's and LitData's streaming datasets, as a project's own dataset class names its base
_STREAMING_BASES = frozenset({"streaming.StreamingDataset", "streaming.base.dataset.StreamingDataset", "streaming.base.StreamingDataset",
                              "litdata.StreamingDataset", "litdata.streaming.StreamingDataset",
                              "litdata.streaming.dataset.StreamingDataset"})


def streaming_subclass_calls(f: Facts) -> list[Call]:
    """Constructions of the project's own subclasses of a :data:`_STREAMING_BASES` class (LLM-Shearing ``class
    TextStreamingDataset(StreamingDataset)`` over MDS shards, ``streaming.base.dataset.StreamingDataset``, built in
    ``load_text_dataloader.py``): a streaming dataset over shards, as the class itself is; tests left out."""
    names = {k.name for k in f.records("classes") if any(b in _STREAMING_BASES for b in k.bases)}
    return [c for c in f.calls(*sorted(names)) if c.short in names and not _in_tests(c.path)] if names else []


def _shard_evidence(f: Facts) -> list[Evidence]:
    out: list[Evidence] = []
    other = _other_disk_io(f)
    for c in f.calls(*_SHARD_CALLS):
        if _in_tests(c.path) or (c.path, c.line, c.name) in other:
            continue
        out.append(_ev(c, key=c.short))
    out += [_ev(c, key=c.short) for c in streaming_subclass_calls(f)]
    for c in f.calls("load_dataset"):
        first = c.args[0] if c.args else c.kwargs.get("path")
        files = " ".join(_text(v) for v in c.kwargs.values())
        if (isinstance(first, str) and first in {"parquet", "arrow", "webdataset"}) or _SHARD_FILES.search(files):
            out.append(_ev(c, key="load_dataset", value=first if isinstance(first, str) else None))
    out += _data_path_ev(f)
    out += [_ev(c, key=_bin_key(c)) for c in _token_bins(f)]
    # positioned reads of one big file per sample (``f.seek(off); f.readinto(buf)`` in ``__getitem__``): merged storage
    seeks = {(c.path, c.func) for c in f.calls("seek")}
    for c in f.calls("readinto", "os.pread"):
        if not _in_tests(c.path) and (c.name == "os.pread" or (c.path, c.func) in seeks) and (
                _GETITEM.match(c.func or "") or _TOKENISH.search(f"{c.text} {c.func or ''} {c.path}") or "data" in c.path.lower()):
            out.append(_ev(c, key="byte-range read"))
    for s in f.settings("data_path", "train_data", "dataset_path", "train_shards", "urls", "shards", "data_files", "train_data_path"):
        if isinstance(s.value, str) and _SHARD_FILES.search(s.value):
            out.append(f.ev(s))
    return _unique_ev(out)


def _unused_image_helper(called: bool) -> dict[str, str]:
    """A utils module the trainer imports for one helper (FastChat ``fastchat/utils.py``, reached through the model adapter's
    ``get_gpu_memory``) that also holds the serving API's ``load_image``; ``called``: the training collate function uses it."""
    collate = ("def collate(batch):\n    return [load_image(x['image']) for x in batch]\n\n" if called else "")
    return {
        "pkg/utils.py": ("import torch\nfrom PIL import Image\n\n\ndef get_gpu_memory(num_gpus):\n"
                         "    return [torch.cuda.get_device_properties(i).total_memory for i in range(num_gpus)]\n\n\n"
                         "def load_image(image_file):\n    image = Image.open(image_file)\n    return image\n"),
        "scripts/prepare_data.py": ("from datasets import load_dataset\nds = load_dataset('json', data_files='raw.jsonl')\n"
                                    "ds.save_to_disk('/data/arrow/train')\n"),
        "pkg/train.py": ("from datasets import load_from_disk\nfrom torch.utils.data import DataLoader\n"
                         "from pkg.utils import get_gpu_memory, load_image\n\n" + collate +
                         "ds = load_from_disk('/data/arrow/train')\nloader = DataLoader(ds, batch_size=8)\n"
                         "for batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n"),
    }


@register
class F4SmallFileMerging(_DataCheck):
    id = "F4"
    title = "Small-file merging (WebDataset, TFRecord, tar, indexed)"
    title_zh = "小文件合并"
    bottlenecks = (Bottleneck.DATA_IO,)
    priority = Priority.MEDIUM
    benefit = "sequential reads of large shards instead of one open/seek per sample"
    what = (
        "Whether training data is stored in merged shard formats (WebDataset tar shards, TFRecord, MosaicML MDS, "
        "LitData, Megatron indexed `.bin/.idx`, Arrow/Parquet via `save_to_disk`/`load_from_disk`, LMDB, HDF5) rather than "
        "read as one file per sample in `__getitem__` (`Image.open(os.path.join(image_folder, f))`, which is unused, with that line)."
    )
    why = (
        "Opening millions of small files costs a metadata lookup and a random read each: on network filesystems "
        "(NFS, Lustre, CephFS) per-file latency of 1-10 ms caps a loader at a few hundred samples/s per worker. "
        "WebDataset/TFRecord shards turn this into large sequential reads; the WebDataset authors report "
        "order-of-magnitude higher I/O throughput for ImageNet-scale training from object storage."
    )
    fix = (
        "Pack samples (image + caption/conversation) into shards of ~100 MB-1 GB: WebDataset tar shards "
        "(`wds.ShardWriter`), MosaicML MDS (`MDSWriter`) or Parquet/Arrow (`save_to_disk`), and read them sequentially."
    )
    fix_zh = "将样本（图片+标注）打包成 100 MB~1 GB 的分片：WebDataset tar（`wds.ShardWriter`）、MosaicML MDS（`MDSWriter`）或 Parquet/Arrow（`save_to_disk`），训练时顺序读取。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://github.com/webdataset/webdataset", "https://docs.mosaicml.com/projects/streaming/en/stable/")
    snippets = {
        "python": (
            "import webdataset as wds\n\n"
            "with wds.ShardWriter(\"shards/train-%06d.tar\", maxsize=1 << 30) as sink:\n"
            "    for i, (image_bytes, text) in enumerate(samples):\n"
            "        sink.write({\"__key__\": f\"{i:09d}\", \"jpg\": image_bytes, \"txt\": text})\n\n"
            "dataset = wds.WebDataset(\"shards/train-{000000..000099}.tar\").decode(\"pil\").to_tuple(\"jpg\", \"txt\")\n"
        ),
    }
    examples = (
        Example({"torchtitan/hf_datasets/text_datasets.py": (  # a Hub corpus streamed as its Parquet shards
            "from datasets import load_dataset\nfrom torch.utils.data import IterableDataset\n\n"
            "def _load_c4_dataset(dataset_path: str, split: str):\n"
            "    return load_dataset(dataset_path, name=\"en\", split=split, streaming=True)\n\n"
            "class HuggingFaceTextDataset(IterableDataset):\n    def __init__(self, dataset_path, tokenizer, seq_len=2048):\n"
            "        self._data = _load_c4_dataset(dataset_path, 'train')\n"
            "    def __iter__(self):\n        for sample in self._data:\n            yield self._tokenizer.encode(sample['text'])\n"),
            "torchtitan/train.py": ("from torchtitan.hf_datasets.text_datasets import HuggingFaceTextDataset\n\n"
                                    "ds = HuggingFaceTextDataset('allenai/c4', tokenizer)\nloss.backward()\n")}, U, "hub corpus streamed as shards"),
        Example({  # verl: prompts in parquet tables; image bytes stored in the rows, decoded per sample
            "verl/utils/dataset/rl_dataset.py": (
                "import datasets\nfrom io import BytesIO\nfrom PIL import Image\nfrom torch.utils.data import Dataset\n\n"
                "class RLHFDataset(Dataset):\n    def __init__(self, parquet_files):\n"
                "        self.dataframe = datasets.load_dataset('parquet', data_files=parquet_files)['train']\n\n"
                "    def __getitem__(self, item):\n        row = self.dataframe[item]\n"
                "        images = [Image.open(BytesIO(x['bytes'])) for x in row.get('images', [])]\n"
                "        return row, images\n\n"
                "    def process_vision_info(self, messages):\n        from qwen_vl_utils import process_vision_info\n"
                "        return process_vision_info(messages)\n"),
        }, U, "parquet tables holding the image bytes"),
        Example({
            "data/vl_dataset.py": (
                "import datasets\nfrom torch.utils.data import Dataset\nfrom qwen_vl_utils import fetch_image\n\n"
                "class VLDataset(Dataset):\n    def __init__(self, path):\n"
                "        self.rows = datasets.load_dataset('json', data_files=path)['train']\n\n"
                "    def __getitem__(self, i):\n        row = self.rows[i]\n"
                "        return fetch_image({'image': row['image_path']})\n"),
        }, N, "records name image files decoded one at a time"),
        Example({"data.py": "import webdataset as wds\nds = wds.WebDataset('s3://bucket/train-{000000..000999}.tar').shuffle(1000).decode('pil')\n"}, U, "webdataset"),
        Example({"pretrain.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 4 --data-path /data/pile_text_document\n"}, U, "megatron indexed"),
        Example({"prep.py": "from datasets import load_dataset\nds = load_dataset('json', data_files='raw.jsonl')\nds.save_to_disk('/data/arrow/train')\n",
                 "train.py": "from datasets import load_from_disk\nds = load_from_disk('/data/arrow/train')\n"}, U, "arrow shards"),
        Example({  # AReaL: the dataset pops prefetched rows from its own buffer's get(); a name-resolve store's get() opens a file
            "pkg/name_resolve.py": ("import os\n\nclass NfsNameRecordRepository:\n    def get(self, name):\n"
                                    "        with open(os.path.join(self.root, name)) as f:\n            return f.read().strip()\n"),
            "pkg/rdataset.py": ("from torch.utils.data import Dataset\n\nclass _PrefetchBuffer:\n    def get(self, idx):\n"
                                "        return self._cache.pop(idx)\n\nclass RDataset(Dataset):\n    def __init__(self):\n"
                                "        self._prefetch_buffer = _PrefetchBuffer()\n    def __getitem__(self, idx):\n"
                                "        return self._prefetch_buffer.get(idx)\n"),
            "train.py": ("from datasets import load_from_disk\nfrom pkg.name_resolve import NfsNameRecordRepository\n"
                         "from pkg.rdataset import RDataset\nds = load_from_disk('/data/arrow/train')\n"),
        }, U, "a dataset's own buffer get() is not another module's file-opening get()"),
        Example({"llava/dataset.py": "import os\nfrom PIL import Image\nfrom torch.utils.data import Dataset\n\nclass LazySupervisedDataset(Dataset):\n"
                 "    def __getitem__(self, i):\n        image_file = self.list_data_dict[i]['image']\n"
                 "        image = Image.open(os.path.join(self.image_folder, image_file)).convert('RGB')\n        return image\n"}, N, "per-sample image files"),
        Example({"train.py": "from datasets import load_dataset\nds = load_dataset('json', data_files='train.jsonl')\n# wds.WebDataset('x-{0..9}.tar')\n"}, N, "single json, commented"),
        Example(_unused_image_helper(called=False), U, "Arrow shards; a serving image helper in a shared utils module nothing calls"),
        Example(_unused_image_helper(called=True), N, "Arrow records; the collate function opens an image file per sample"),
        Example({"ds.py": "import webdataset as wds\nfrom PIL import Image\nshards = wds.WebDataset('cc3m-{00000..00331}.tar')\n"
                 "class Extra:\n    def __getitem__(self, i):\n        return Image.open(self.paths[i])\n"}, P, "shards plus per-sample files"),
        Example({"train_gpt.py": _MODDED_READER}, U, "fixed-size .bin token shards"),
        Example({"data/dataset.py": (  # one big token file read by byte range per sample: not small-file I/O
            "import numpy as np\nfrom torch.utils.data import Dataset\n"
            "class TokenWindows(Dataset):\n"
            "    def __init__(self, path, seq_len):\n        self.path, self.seq_len = path, seq_len\n"
            "    def __getitem__(self, i):\n"
            "        buf = np.empty(self.seq_len + 1, dtype=np.uint16)\n"
            "        with open(self.path, 'rb') as f:\n"
            "            f.seek(i * self.seq_len * 2)\n            f.readinto(buf)\n"
            "        return buf\n")}, U, "byte-range reads of one token file"),
        Example({  # Megatron-LM: numpy.split in the token dataset, and a checkpoint converter that defines its own ``split``
            "pkg/data/gpt_dataset.py": (
                "import numpy\nfrom torch.utils.data import Dataset\n\n\nclass GPTDataset(Dataset):\n"
                "    def __init__(self, path_prefix):\n        self.path_prefix = path_prefix\n        self.sample_index = None\n"
                "        self.tokens = numpy.memmap(path_prefix + '.bin', dtype=numpy.uint16, mode='r')\n\n"
                "    def __getitem__(self, idx):\n        if self.sample_index is None:\n"
                "            self.sample_index = numpy.load(self.path_prefix + '_sample_index.npy', allow_pickle=True)\n"
                "        start, end = self.sample_index[idx], self.sample_index[idx + 1]\n"
                "        text, labels = numpy.split(self.tokens[start:end + 1], [end - start])\n        return text, labels\n"),
            "examples/nvlm/pp_checkpoint_converter.py": (
                "import os\n\nimport torch\n\n\ndef split(input_dir, output_dir, pp_size):\n"
                "    state = torch.load(os.path.join(input_dir, 'model_optim_rng.pt'))\n"
                "    for rank in range(pp_size):\n        torch.save(state, os.path.join(output_dir, f'mp_rank_{rank:02d}.pt'))\n"),
        }, U, "a token memmap; a library's numpy.split and a lazily loaded index are no per-sample file reads"),
        Example({
            "pkg/data/gpt_dataset.py": (
                "import numpy\nfrom torch.utils.data import Dataset\n\n\nclass GPTDataset(Dataset):\n"
                "    def __init__(self, path_prefix):\n        self.path_prefix = path_prefix\n"
                "        self.tokens = numpy.memmap(path_prefix + '.bin', dtype=numpy.uint16, mode='r')\n\n"
                "    def __getitem__(self, idx):\n"
                "        sample_index = numpy.load(self.path_prefix + f'_sample_{idx}.npy', allow_pickle=True)\n"
                "        return self.tokens[sample_index[0]:sample_index[1]]\n"),
        }, P, "the same memmap with an index file loaded on every sample"),
        Example({"src/lmms_engine/datasets/naive/multimodal_dataset.py": (  # lmms-engine: Arrow records name image files
            "import os\nfrom datasets import load_from_disk\nfrom PIL import Image\nfrom torch.utils.data import Dataset\n\n"
            "class MultiModalDataset(Dataset):\n    def __init__(self, config):\n"
            "        self.data_list = load_from_disk(config.dataset_path)\n        self.data_folder = config.data_folder\n"
            "    def __getitem__(self, i):\n        images_list = self.data_list[i]['images']\n"
            "        images = [Image.open(os.path.join(self.data_folder, image)) for image in images_list]\n"
            "        return self.processor(images=images, messages=self.data_list[i]['messages'])\n")}, N,
            "Arrow annotations naming per-sample image files"),
        Example({"data/multimodal.py": (  # the images themselves inside the Arrow table: merged storage
            "import io\nfrom datasets import load_from_disk\nfrom PIL import Image\nfrom torch.utils.data import Dataset\n\n"
            "class MultiModalDataset(Dataset):\n    def __init__(self, path):\n        self.data_list = load_from_disk(path)\n"
            "    def __getitem__(self, i):\n        image = Image.open(io.BytesIO(self.data_list[i]['image_bytes']))\n"
            "        return self.processor(images=[image], text=self.data_list[i]['text'])\n")}, U, "images stored inside the Arrow table"),
        Example(_oumi_map_dataset("datasets.Dataset.from_generator"), U, "a map dataset written into Arrow before training"),
        Example({**_MM_DATASETS, **{f"xtuner/configs/{m}.py": _mm_data_config("llava" if m == "llava_7b" else "hf")
                                    for m in ("llama2_7b_qlora_alpaca", "qwen_7b_qlora_alpaca", "internlm2_7b_qlora_alpaca", "llava_7b")}},
                U, "mmengine configs: 3 of 4 build an HF Arrow dataset; per-image files only in the LLaVA one"),
        Example({**_MM_DATASETS, **{f"xtuner/configs/{m}.py": _mm_data_config("hf" if m == "llama2_7b_qlora_alpaca" else "llava")
                                    for m in ("llama2_7b_qlora_alpaca", "llava_7b", "llava_13b", "llava_34b")}},
                N, "mmengine configs: 3 of 4 read one image file per sample"),
    )

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status == Status.UNUSED and not outcome.evidence:
            return Priority.LOW  # nothing shows many small files: advice, not a finding
        return super().recommendation_priority(ctx, outcome)

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        merged = _recipe_arrow_loads(f) + _shard_evidence(f)
        merged += [_ev(c, key="Dataset.from_generator (the whole dataset into Arrow before training)") for c in _materialising_calls(f)]
        train = ctx.project.training_files
        if train:  # the training path's code decides, as for the per-sample reads below (configs and launches always count)
            merged = [e for e in merged if not e.path.endswith(".py") or e.path in train]
        # a Hub dataset, streamed or downloaded, arrives as the dataset's Parquet/Arrow shards (torchtitan
        # ``load_dataset(dataset_path, name="en", split=split, streaming=True)`` for C4): large files, not one per sample
        seen = {(e.path, e.line) for e in merged}
        merged += [_ev(c, key="load_dataset", value="streaming" if truthy(c.kwargs.get("streaming")) is True else c.args[0])
                   for c in f.calls("datasets.load_dataset") if (c.path, c.line) not in seen and not _in_tests(c.path)
                   and (not train or c.path in train) and (truthy(c.kwargs.get("streaming")) is True
                                                           or (c.args and isinstance(c.args[0], str) and _HUB_DATASET.match(c.args[0])))]
        # per-sample reads on the training path: an inference helper (LLaVA's Cog ``predict.py`` and ``serve/cli.py``
        # ``load_image``) opens one image per request, not per training sample
        reads, minor = _minority_sites(f, [c for c in _per_sample_reads(f) if not train or c.path in train], _GETITEM)
        note = _minority_note(f, minor, "samples are read one file at a time")
        embedded = _embedded_media(f)
        if merged and embedded and any(e.key in _TABLE_KEYS for e in merged):
            # the tables carry the media themselves: the project decodes image bytes stored in the rows (verl
            # ``Image.open(BytesIO(image["bytes"]))``), and qwen-vl-utils' decoders take whatever a row holds (an image
            # object, bytes, base64, a URL or a path): they do not show one file per sample
            any_form = [c for c in reads if c.short in _ANY_FORM_DECODERS]
            if any_form:
                reads = [c for c in reads if c not in any_form]
                e0 = embedded[0]
                note += (f"; media decoded from the rows (image bytes at {e0.path}:{e0.line}); {any_form[0].short}() "
                         f"({any_form[0].path}:{any_form[0].line}) decodes whatever a row holds, a file only when a dataset names one")
        small = [_ev(c, key=f"{'.'.join(c.name.split('.')[-2:])}() in {c.func}") for c in reads]
        media = [c for c in reads if _is_media(c)]
        # (not a table a training script feeds straight to its DataLoader without opening any media: LongVA's text-extension
        # stage, ``load_from_disk`` of pre-tokenized text beside the MLLM stages that open images per sample)
        media_files = {c.path for c in media}
        fed = [e for e in merged if e.key == "load_from_disk" and _fed_to_loader(f, e.path)
               and e.path not in media_files and not _imports_any(f, e.path, media_files)]
        if merged and media and all(e.key in _TABLE_KEYS for e in merged) and not fed:
            # the Arrow/Parquet tables the project only loads hold the annotations (paths, conversations); the images/videos
            # they name are each a file opened per sample (lmms-engine: load_from_disk of the records,
            # Image.open(os.path.join(data_folder, path)))
            m = merged[0]
            return Outcome(N, [_ev(c, key=f"{'.'.join(c.name.split('.')[-2:])}() in {c.func}") for c in media] + merged,
                           f"samples' media are read one file at a time ({'.'.join(media[0].name.split('.')[-2:])}() at {media[0].path}:{media[0].line}"
                           f"{f' (+{len(media) - 1})' if len(media) > 1 else ''}); the Arrow/Parquet tables ({m.key} at {m.path}:{m.line}) "
                           "hold only the records that name those files", {"sharded": False})
        if merged and small:
            # the per-file reads are why it is partial: the detail cites the first (the evidence keeps the shards first, which
            # step zero cites as the data's storage)
            return Outcome(P, merged + small, f"sharded data, but some samples are still read one file at a time ({_at(small)})" + note,
                           {"sharded": True})
        if merged:
            return Outcome(U, merged, "training data stored in merged shards / indexed files" + note, {"sharded": True})
        if small:
            return Outcome(N, small, "samples are read one file at a time in __getitem__", {"sharded": False})
        # (text-only training: the advice is about the text records, not image + caption shards)
        return Outcome(N, [], "no sharded or indexed data format found",
                       {"sharded": False, **({} if ctx.project.multimodal else {"advice_for": "text"})})


# ---------------------------------------------------------------------------------------
# F5
# ---------------------------------------------------------------------------------------

_BATCH_KEYS = ("per_device_train_batch_size", "train_micro_batch_size_per_gpu", "micro_batch_size", "micro_batch_size_per_gpu",
               "train_batch_size", "global_batch_size", "batch_size", "train_batch_size_per_device", "batch_size_per_gpu")
_WHOLE_LOAD = ("torch.load", "numpy.load", "pickle.load", "joblib.load")


@register
class F5Minibatch(_DataCheck):
    id = "F5"
    title = "Minibatch processing"
    title_zh = "Minibatch 分批处理"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.DATA_IO)
    priority = Priority.MEDIUM
    benefit = "bounded host/GPU memory and steady I/O: data read and fed batch by batch"
    what = (
        "Whether data is consumed in minibatches (DataLoader batch sizes, HF `per_device_train_batch_size`, DeepSpeed "
        "`train_micro_batch_size_per_gpu`, Megatron `--micro-batch-size`, tf `.batch()`), and whether a Dataset loads the "
        "whole data file into memory in `__init__` (`torch.load`/`np.load`/`pickle.load`: partial)."
    )
    why = (
        "Loading a whole corpus into RAM (or onto the GPU) at start-up multiplies host memory by the number of ranks, "
        "stalls start-up on large files and fails outright at TB scale; batching with lazy or memory-mapped reads "
        "keeps memory flat regardless of dataset size."
    )
    fix = "Read samples lazily (memory-mapped arrays, Arrow datasets, streaming) and feed the model through a DataLoader with an explicit batch size."
    fix_zh = "按需读取样本（内存映射、Arrow 数据集或流式加载），通过 DataLoader 以明确的 batch size 分批送入模型，避免一次性加载全部数据。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://pytorch.org/docs/stable/data.html",)
    snippets = {"python": "import numpy as np\n\ndata = np.load(\"tokens.npy\", mmap_mode=\"r\")  # lazy\nloader = DataLoader(ds, batch_size=8, shuffle=True, num_workers=4)\n"}
    examples = (
        Example({"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=16, shuffle=True)\n"}, U, "dataloader"),
        Example({"ds_config.json": '{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8\n}\n'}, U, "deepspeed micro batch"),
        Example({"train.py": "from transformers import Trainer, TrainingArguments\nargs = TrainingArguments(output_dir='o')\nTrainer(model=m, args=args).train()\n"}, U, "hf default batch"),
        Example({"train.py": "import torch\nX, y = torch.load('all_data.pt')\nfor epoch in range(10):\n    loss = loss_fn(model(X.cuda()), y.cuda())\n    loss.backward()\n"}, N, "full batch"),
        Example({"train.py": "import torch\n# loader = DataLoader(ds, batch_size=16)\nfor x in samples:\n    loss = model(x).loss\n    loss.backward()\n"}, N, "commented loader"),
        Example({"data.py": "import torch\nfrom torch.utils.data import Dataset\nclass TokenDataset(Dataset):\n    def __init__(self, path):\n        self.data = torch.load(path)\n"
                 "    def __len__(self):\n        return len(self.data)\n    def __getitem__(self, i):\n        return self.data[i]\n",
                 "train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(TokenDataset('tokens.pt'), batch_size=8)\n"}, P, "batched, whole file in memory"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        batch: list[Evidence] = []
        batch += [_ev(c, key=f"{c.short}(batch_size=)", value=c.kwargs.get("batch_size")) for c in f.calls(*_REAL_LOADERS) if not _in_tests(c.path)]
        for s in f.effective(*_BATCH_KEYS):
            if _KV_MODULE.search(s.path.rsplit("/", 1)[-1]):
                continue  # a KV cache's batch (Medusa ``batch_size = 1`` in kv_cache.py) is the decoding batch, not the data's
            if (as_number(s.value) or 0) >= 1 or (isinstance(s.value, str) and s.value == "auto"):
                batch.append(f.ev(s))
        if _hf_sites(f) and not batch:
            site = _hf_sites(f)[0]
            batch.append(_ev(site, key="per_device_train_batch_size", value=8))
        batch += [_ev(x, key="--micro-batch-size", value=1) for x in megatron_launches(f)]
        for c in f.calls("batch"):
            if "." in c.name and c.args and (as_number(c.args[0]) or isinstance(c.args[0], Expr)):
                batch.append(_ev(c, key=".batch()"))
        if not batch and token_readers(f):
            # the project's own loader over pre-tokenized shards, built with a micro-batch size (karpathy/build-nanogpt
            # ``DataLoaderLite(B=B, T=T, ...)``, whose ``next_batch`` returns ``buf[:-1].view(B, T)``)
            batch += [_ev(c, key=f"{c.short}({k}=)", value=_text(c.kwargs[k])) for c in f.calls_where(lambda n: bool(_OWN_LOADER.match(n)))
                      if not _in_tests(c.path) for k in ("B", "batch_size", "micro_batch_size") if k in c.kwargs][:3]
        whole = self._whole_loads(f)
        if batch and whole:
            return Outcome(P, _unique_ev(batch[:5] + whole), "batched, but a Dataset loads its whole data file into memory", {"minibatch": True})
        if batch:
            return Outcome(U, _unique_ev(batch), "data consumed in minibatches", {"minibatch": True})
        return Outcome(N, whole, "no minibatch loading found", {"minibatch": False})

    @staticmethod
    def _whole_loads(f: Facts) -> list[Evidence]:
        dataset_files = {p for p, ff in f.files.items() if any(c.func in {"__getitem__", "__len__"} for c in ff.calls)}
        out = []
        for c in f.calls(*_WHOLE_LOAD):
            if c.path not in dataset_files or c.func != "__init__" or _in_tests(c.path):
                continue
            if c.kwargs.get("mmap_mode") is not None or truthy(c.kwargs.get("mmap")):
                continue
            out.append(_ev(c, key=f"{c.short}() in __init__"))
        return out


# ---------------------------------------------------------------------------------------
# F6
# ---------------------------------------------------------------------------------------


#: BLIP-2 (LAVIS ``blip2_opt.py``): the dataset returns raw captions and the model's ``forward`` tokenizes them every step
_MODEL_FORWARD_TOKENIZES = {
    "lavis/models/blip2_opt.py": (
        "import torch\nfrom torch import nn\nfrom transformers import AutoTokenizer\n\n\nclass Blip2OPT(nn.Module):\n"
        "    def __init__(self, opt_model='facebook/opt-2.7b'):\n        super().__init__()\n"
        "        self.opt_tokenizer = AutoTokenizer.from_pretrained(opt_model, use_fast=False)\n\n"
        "    def forward(self, samples):\n        image = samples['image']\n"
        "        text = [t + '\\n' for t in samples['text_input']]\n"
        "        opt_tokens = self.opt_tokenizer(text, return_tensors='pt', padding='longest', truncation=True,\n"
        "                                        max_length=self.max_txt_len).to(image.device)\n"
        "        return {'loss': self.opt_model(input_ids=opt_tokens.input_ids, labels=opt_tokens.input_ids).loss}\n"),
    "lavis/datasets/caption_datasets.py": (
        "import os\nfrom PIL import Image\nfrom torch.utils.data import Dataset\n\n\nclass CaptionDataset(Dataset):\n"
        "    def __getitem__(self, index):\n        ann = self.annotation[index]\n"
        "        image = Image.open(os.path.join(self.vis_root, ann['image'])).convert('RGB')\n"
        "        return {'image': self.vis_processor(image), 'text_input': self.text_processor(ann['caption'])}\n"),
}


# OpenChat's pre-tokenization (round 14): Ray tasks chat-template and tokenize conversations, the epoch's token ids go to
# parquet; the trainer reads them; the tokenizer built by a registry factory at save time tokenizes nothing
_PRETOKENIZE_SCRIPT = {
    "chatpkg/data/generate_dataset.py": (
        "import orjson\nimport pyarrow as pa\nimport ray\nfrom pyarrow import parquet\n\n"
        "@ray.remote\ndef convert_conversation_batch(model_type, model_path, batch, schema):\n"
        "    from chatpkg.config import MODEL_CONFIG_MAP\n"
        "    tokenizer = MODEL_CONFIG_MAP[model_type].model_tokenizer_create(model_path)\n"
        "    conv_template = MODEL_CONFIG_MAP[model_type].conversation_template(tokenizer=tokenizer)\n"
        "    tokens_list, weights_list = conv_template.tokenize_conversations([orjson.loads(x) for x in batch], inference=False)\n"
        "    return pa.Table.from_pydict({'nz_input_ids': tokens_list, 'weights': weights_list}, schema=schema)\n\n"
        "def generate_epoch(model_type, model_path, in_filename, out_filename, schema):\n"
        "    with open(in_filename, 'rb') as f:\n        batches = f.readlines()\n"
        "    handles = [convert_conversation_batch.remote(model_type, model_path, b, schema) for b in batches]\n"
        "    parquet.write_table(pa.concat_tables(ray.get(handles)), out_filename)\n"),
    "chatpkg/training/train.py": (
        "import pyarrow.parquet as pq\nfrom chatpkg.config import MODEL_CONFIG_MAP\n\n"
        "def save_tokenizer(args, save_path):\n"
        "    tokenizer = MODEL_CONFIG_MAP[args.model_type].model_tokenizer_create(args.model_path)\n"
        "    tokenizer.save_pretrained(save_path)\n\n"
        "def train(args, engine):\n    table = pq.read_table(f'{args.data_prefix}.0.parquet', memory_map=True)\n"
        "    for batch in batches(table):\n        engine.backward(engine(**batch).loss)\n        engine.step()\n"
        "    save_tokenizer(args, args.save_path)\n\n"
        "if __name__ == '__main__':\n    train(parse_args(), build())\n"),
}
#: levanter's shape (``data/text.py``): the dataset is tokenized once by a batched ``datasets.map`` into a cache; the training
#: iterator reads it back through ``TokenizedDocumentCache(cache, flatten_docs=...)`` (a class named for its tokenized
#: contents, built from the cache: no tokenizer) and a processor probes the tokenizer on a literal at construction
_TOKENIZED_CACHE_READER = {
    "prep_data.py": (
        "from datasets import load_dataset\nfrom transformers import AutoTokenizer\n\ndef main(args):\n"
        "    tok = AutoTokenizer.from_pretrained(args.tokenizer)\n    ds = load_dataset('json', data_files=args.data)['train']\n"
        "    ds = ds.map(lambda x: tok(x['text']), batched=True, num_proc=16)\n    ds.save_to_disk(args.out)\n"),
    "mylm/data/text.py": (
        "from datasets import load_from_disk\nfrom torch.utils.data import IterableDataset\n\n"
        "class TokenizedDocumentCache:\n    def __init__(self, cache, flatten_docs=True):\n        self.cache = cache\n"
        "        self.flatten_docs = flatten_docs\n\n    @staticmethod\n    def load(cache_dir, flatten_docs=True):\n"
        "        cache = load_from_disk(cache_dir)\n        return TokenizedDocumentCache(cache, flatten_docs=flatten_docs)\n\n"
        "class EosChecker:\n    def __init__(self, tokenizer):\n        ids = tokenizer('hi there')['input_ids']\n"
        "        self.append_eos = ids[-1] != tokenizer.eos_token_id\n\n"
        "class TokenSeqDataset(IterableDataset):\n    def __init__(self, cache_dir, seq_len):\n        self.cache_dir = cache_dir\n"
        "        self.seq_len = seq_len\n\n    def __iter__(self):\n"
        "        for doc in TokenizedDocumentCache.load(self.cache_dir).cache:\n            yield doc['input_ids'][: self.seq_len]\n"),
}


def _lazy_dataset_switch(lazy: str) -> dict[str, str]:
    """FastChat's shape (``train.py``): ``dataset_cls = LazySupervisedDataset if data_args.lazy_preprocess else
    SupervisedDataset`` with ``lazy_preprocess: bool = <lazy>``; here the eager class reads a dataset a preparation script
    tokenized and saved, the lazy one tokenizes raw conversations in ``__getitem__``."""
    return {
        "scripts/prepare_data.py": (
            "from datasets import load_dataset\nfrom transformers import AutoTokenizer\n\n\ndef main(model, data, out):\n"
            "    tok = AutoTokenizer.from_pretrained(model)\n    ds = load_dataset('json', data_files=data)['train']\n"
            "    ds = ds.map(lambda x: tok(x['text']), batched=True, num_proc=16)\n    ds.save_to_disk(out)\n"),
        "pkg/train.py": (
            "import json\nfrom dataclasses import dataclass\n\nimport transformers\nfrom datasets import load_from_disk\n"
            "from torch.utils.data import Dataset\n\n\n@dataclass\nclass DataArguments:\n    data_path: str = 'data/tokenized'\n"
            f"    lazy_preprocess: bool = {lazy}\n\n\n"
            "class SupervisedDataset(Dataset):\n    def __init__(self, path, tokenizer):\n        self.rows = load_from_disk(path)\n\n"
            "    def __getitem__(self, i):\n        return self.rows[i]\n\n\n"
            "class LazySupervisedDataset(Dataset):\n    def __init__(self, path, tokenizer):\n        self.tokenizer = tokenizer\n"
            "        self.raw = json.load(open(path))\n\n"
            "    def __getitem__(self, i):\n        return self.tokenizer(self.raw[i]['text'], truncation=True, max_length=2048)\n\n\n"
            "def make_data_module(tokenizer, data_args):\n"
            "    dataset_cls = LazySupervisedDataset if data_args.lazy_preprocess else SupervisedDataset\n"
            "    return dict(train_dataset=dataset_cls(data_args.data_path, tokenizer))\n\n\n"
            "def train():\n    (data_args,) = transformers.HfArgumentParser((DataArguments,)).parse_args_into_dataclasses()\n"
            "    tokenizer = transformers.AutoTokenizer.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
            "    model = transformers.AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
            "    trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(output_dir='out'),\n"
            "                                   **make_data_module(tokenizer, data_args))\n    trainer.train()\n"),
    }


#: OpenFlamingo 2.0.1's shape: raw image-text tar shards, decoded and tokenized by the stages of a ``wds.DataPipeline``
_WDS_PIPELINE = {
    "train/data.py": (
        "import functools\n\nimport webdataset as wds\n\n\n"
        "def preprocess_text(sample, tokenizer, max_tokens=256):\n"
        "    text = tokenizer(sample, max_length=max_tokens, truncation=True, padding='max_length', return_tensors='pt')\n"
        "    return text['input_ids'], text['attention_mask']\n\n\n"
        "def get_dataset(args, image_processor, tokenizer):\n"
        "    preprocess_fn = functools.partial(preprocess_text, tokenizer=tokenizer)\n"
        "    pipeline = [wds.ResampledShards(args.shards), wds.tarfile_to_samples(), wds.shuffle(1000),\n"
        "                wds.to_tuple('txt'), wds.map(preprocess_fn), wds.batched(args.batch_size)]\n"
        "    dataset = wds.DataPipeline(*pipeline)\n"
        "    return wds.WebLoader(dataset, batch_size=None, num_workers=args.workers)\n"),
}


#: xTuring 0.1.8's shape: an instruction dataset of raw Arrow records (``load_from_disk``, and ``save`` writing them back out)
#: whose collator class tokenizes each sample of a batch in ``__call__``
_RAW_ARROW_COLLATOR = {
    "mylib/datasets/instruction_dataset.py": (
        "from datasets import load_from_disk\n\n\nclass InstructionDataset:\n    def __init__(self, path):\n"
        "        self.data = load_from_disk(str(path))\n\n    def __getitem__(self, idx):\n        return self.data['train'][idx]\n\n"
        "    def save(self, path):\n        return self.data['train'].save_to_disk(path)\n"),
    "mylib/preprocessors/instruction_collator.py": (
        "import torch\n\n\nclass InstructionDataCollator:\n    def __init__(self, tokenizer, max_length=None):\n"
        "        self.tokenizer = tokenizer\n        self.max_length = max_length\n\n    def __call__(self, batches):\n"
        "        samples = []\n        for sample in batches:\n            input_text = self.tokenizer(sample['text'])\n"
        "            input_target = self.tokenizer(sample['target'])\n"
        "            ids = (input_text['input_ids'] + input_target['input_ids'])[: self.max_length]\n"
        "            samples.append({'input_ids': torch.tensor(ids)})\n"
        "        return self.tokenizer.pad(samples, padding=True, return_tensors='pt')\n"),
}
_TOKENIZED_ARROW_COLLATOR = {
    **_RAW_ARROW_COLLATOR,
    "mylib/datasets/instruction_dataset.py": _RAW_ARROW_COLLATOR["mylib/datasets/instruction_dataset.py"].replace(
        "    def save(self, path):\n        return self.data['train'].save_to_disk(path)\n",
        "    def save(self, path, tokenizer):\n"
        "        ds = self.data['train'].map(lambda x: tokenizer(x['text']), batched=True)\n        return ds.save_to_disk(path)\n"),
}


def _megatron_like(extra: bool) -> dict[str, str]:
    """Megatron-LM-shaped: ``tools/preprocess_data.py`` tokenizes the corpus into an indexed ``.bin``/``.idx`` pair; with
    ``extra``, a mock dataset tokenizes made-up text and the inference server tokenizes each request batch."""
    files = {
        "tools/preprocess_data.py": (
            "import json\n\nfrom pkg.data import indexed_dataset\n\n\ndef main(args, tokenizer):\n"
            "    builder = indexed_dataset.IndexedDatasetBuilder(args.output_prefix + '.bin')\n"
            "    for line in open(args.input):\n        ids = tokenizer.tokenize(json.loads(line)['text'])\n"
            "        builder.add_document(ids, [len(ids)])\n    builder.finalize(args.output_prefix + '.idx')\n"),
        "pkg/data/gpt_dataset.py": (
            "import numpy\nfrom torch.utils.data import Dataset\n\n\nclass GPTDataset(Dataset):\n"
            "    def __init__(self, prefix):\n        self.tokens = numpy.memmap(prefix + '.bin', dtype=numpy.uint16, mode='r')\n\n"
            "    def __getitem__(self, idx):\n        return self.tokens[idx * 2048:(idx + 1) * 2048 + 1]\n"),
        "pretrain_gpt.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --data-path /data/my_text_document --split 949,50,1\n",
    }
    if extra:
        files["pkg/data/mock.py"] = (
            "from torch.utils.data import Dataset\n\n\nclass MockDataset(Dataset):\n    def __init__(self, tokenizer):\n"
            "        self.tokenizer = tokenizer\n\n    def _mock_tokenize(self, text):\n"
            "        return self.tokenizer(text, return_tensors='pt', truncation=True, max_length=512)\n\n"
            "    def __getitem__(self, idx):\n        return self._mock_tokenize(f'mock sample {idx}')\n")
        files["pkg/inference/text_generation_server/tokenization.py"] = (
            "def tokenize_prompts(tokenizer, prompts):\n    return [tokenizer.tokenize(p) for p in prompts]\n\n\n"
            "def collate_requests(tokenizer, requests):\n    return tokenize_prompts(tokenizer, [r['prompt'] for r in requests])\n")
    return files


#: a mock or synthetic dataset's file or function
_MOCK_DATA = lazy_compile(r"(^|[/_])(mock|dummy|fake|synthetic)([/_.]|$)", re.I)


#: a training entry point and a dataset module that tokenizes everything in its ``__init__`` (veomni's shape: the
#: start-up tokenizer sits in a model family's captioning module that the LLM entry point never imports)
_STARTUP_MODULE = {
    "mylib/data/captions.py": ("import json\n\nfrom torch.utils.data import Dataset\n\n\nclass CaptionDataset(Dataset):\n"
                               "    def __init__(self, path, tokenizer):\n        rows = json.load(open(path))\n"
                               "        self.input_ids = [tokenizer(r['caption']).input_ids for r in rows]\n\n"
                               "    def __len__(self):\n        return len(self.input_ids)\n"),
    "mylib/train.py": ("{imports}import torch\n\n\ndef main():\n    data = torch.load('data/tokens.pt')\n"
                       "    for batch in data:\n        loss = model(batch).loss\n        loss.backward()\n        optimizer.step()\n\n\n"
                       "if __name__ == '__main__':\n    main()\n"),
    "scripts/train.sh": "torchrun --nproc_per_node 8 mylib/train.py\n",
}


def _startup_module(imports: str) -> dict[str, str]:
    return filled(_STARTUP_MODULE, "imports", imports)


@register
class F6OfflinePreprocessing(_DataCheck):
    id = "F6"
    title = "Offline preprocessing"
    title_zh = "数据预处理离线化"
    bottlenecks = (Bottleneck.DATA_IO,)
    priority = Priority.MEDIUM
    benefit = "tokenization done once, offline, instead of on every sample of every epoch"
    what = (
        "Where tokenization happens. Used: offline with saved results (`save_to_disk`/`load_from_disk`, LLaMA-Factory "
        "`tokenized_path`, axolotl `dataset_prepared_path`, Megatron `preprocess_data.py` -> `.bin/.idx`, nanoGPT "
        "`prepare.py` -> `train.bin`) or `datasets.map(tokenize, batched=True)` whose Arrow cache is reused across runs. "
        "Partial: left to the framework (TRL `SFTTrainer`, LLaMA-Factory without `tokenized_path`), or the whole dataset "
        "tokenized once at start-up (a Dataset `__init__`) and kept in memory, redone on every run (with that line). Unused: "
        "per sample in `__getitem__`/a collate function, or a start-up pass that keeps no token ids (a length filter)."
    )
    why = (
        "Tokenizing (and templating) inside `__getitem__`/collate repeats the same CPU work every epoch on every rank and "
        "competes with decoding for loader workers; with fast GPUs and short sequences the loader becomes the bottleneck. "
        "Tokenizing everything in a Dataset `__init__` moves the cost to start-up, where every rank of every run pays it "
        "again; an offline step (or a reused `datasets` cache) pays it once."
    )
    fix = (
        "Tokenize once in a preprocessing job and save the result (`dataset.map(tokenize, batched=True, num_proc=N)` then "
        "`save_to_disk`, LLaMA-Factory `tokenized_path`, axolotl `preprocess` + `dataset_prepared_path`, Megatron "
        "`tools/preprocess_data.py`); load it at training time."
    )
    fix_zh = (
        "用单独的预处理任务一次性完成分词并保存结果（`dataset.map(tokenize, batched=True, num_proc=N)` 后 `save_to_disk`、"
        "LLaMA-Factory `tokenized_path`、axolotl `preprocess` + `dataset_prepared_path`、Megatron `tools/preprocess_data.py`），训练时直接加载。"
    )
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://huggingface.co/docs/datasets/process#map", "https://github.com/NVIDIA/Megatron-LM/tree/main/tools")
    snippets = {
        "python": (
            "from datasets import load_dataset\n\n"
            "raw = load_dataset(\"json\", data_files=\"train.jsonl\", split=\"train\")\n"
            "tok = raw.map(lambda b: tokenizer(b[\"text\"], truncation=True, max_length=4096), batched=True, num_proc=32, remove_columns=raw.column_names)\n"
            "tok.save_to_disk(\"/data/tokenized/train\")\n"
        ),
        "hf-yaml": "tokenized_path: /data/tokenized/sft_qwen2\n",
    }
    examples = (
        Example({"data/prepare.py": "import numpy as np\nimport tiktoken\nenc = tiktoken.get_encoding('gpt2')\ndef process(example):\n    ids = enc.encode_ordinary(example['text'])\n    return {'ids': ids}\n"
                 "tokenized = split_dataset.map(process, remove_columns=['text'], num_proc=8)\narr = np.memmap('train.bin', dtype=np.uint16, mode='w+', shape=(n,))\n",
                 "train.py": "import numpy as np\ndata = np.memmap('data/train.bin', dtype=np.uint16, mode='r')\n"}, U, "nanogpt prepare"),
        Example({"sft.yaml": "stage: sft\ndataset: alpaca_en\ntokenized_path: /cache/tokenized/alpaca\n", "run.sh": "llamafactory-cli train sft.yaml\n"}, U, "llamafactory tokenized_path"),
        Example({"dataset.py": "from torch.utils.data import Dataset\n\ndef preprocess(sources, tokenizer):\n    return tokenizer(sources, return_tensors='pt')\n\n"
                 "class LazySupervisedDataset(Dataset):\n    def __getitem__(self, i):\n        return preprocess([self.data[i]], self.tokenizer)\n"}, N, "tokenize in __getitem__"),
        Example({"collate.py": "def collate_fn(batch):\n    return tokenizer([b['text'] for b in batch], padding=True, return_tensors='pt')\n"}, N, "tokenize in collate_fn"),
        Example({"finetune_demo/finetune_hf.py": _CHATGLM_DATA.format(callback="functools.partial(process_batch, tokenizer=tokenizer)")},
                U, "ChatGLM3: datasets.map of a callback the caller hands the data manager"),
        Example({"finetune_demo/finetune_hf.py": _CHATGLM_DATA.format(callback="None")}, N,
                "the same data manager, handed no tokenizing callback"),
        Example({"sft.yaml": "stage: sft\n# tokenized_path: /cache/tok\n", "train.py": "x = 1\n"}, N, "commented out, nothing else"),
        Example({"run_clm.py": "from datasets import load_dataset\nraw = load_dataset('json', data_files='train.jsonl')\n"
                 "def tokenize_function(examples):\n    return tokenizer(examples['text'])\n"
                 "tokenized = raw.map(tokenize_function, batched=True, num_proc=8, remove_columns=['text'])\n"}, U, "cached datasets.map"),
        Example({"train.py": "import json\nfrom torch.utils.data import Dataset\n\nclass SupervisedDataset(Dataset):\n    def __init__(self, path, tokenizer):\n"
                 "        rows = json.load(open(path))\n        self.input_ids = [tokenizer(r['text']).input_ids for r in rows]\n"
                 "    def __len__(self):\n        return len(self.input_ids)\n"}, P, "whole dataset tokenized in __init__, kept in memory"),
        Example(_startup_module(""), N, "a whole-dataset start-up tokenizer in a module the training entry never imports"),
        Example(_startup_module("from mylib.data.captions import CaptionDataset\n"), P, "the training entry imports that dataset"),
        Example({"train.py": "import json\nfrom torch.utils.data import Dataset\n\nclass PromptDataset(Dataset):\n"
                 "    def __init__(self, path, tokenizer, max_len):\n        rows = json.load(open(path))\n"
                 "        self.prompts = [r['prompt'] for r in rows\n"
                 "                        if len(tokenizer.apply_chat_template(r['prompt'], add_generation_prompt=True)) <= max_len]\n"
                 "    def __len__(self):\n        return len(self.prompts)\n"}, N, "prompts tokenized at start-up only to filter by length"),
        Example({"train.py": "from trl import SFTTrainer, SFTConfig\ntrainer = SFTTrainer(model=model, args=SFTConfig(output_dir='o'), train_dataset=ds)\n"}, P, "trl default"),
        # a library shipping a subclass of TRL's trainer for its users' scripts (unsloth 2025.9 trainer.py): TRL tokenizes
        Example({"mylib/trainer.py": "from trl import SFTTrainer\n\nclass FastTrainer(SFTTrainer):\n    def create_optimizer(self):\n        return super().create_optimizer()\n"}, P, "library subclass of TRL's SFTTrainer"),
        Example({"mylib/trainer.py": "class SFTTrainer:\n    def train(self):\n        pass\n\nclass FastTrainer(SFTTrainer):\n    pass\n"}, N, "a project's own class named SFTTrainer"),
        Example({"dev/data/data_common.py": _LLMC_WRITER,
                 "dev/data/fineweb.py": (
                     "import tiktoken\nenc = tiktoken.get_encoding('gpt2')\n"
                     "def tokenize(doc):\n    tokens = [enc._special_tokens['<|endoftext|>']]\n"
                     "    tokens.extend(enc.encode_ordinary(doc['text']))\n    return tokens\n")}, U, "llm.c shards written offline"),
        Example({  # axolotl: one optional path streams pretraining data; the SFT path maps and saves before training
            "src/axolotl/utils/data/pretraining.py": (
                "from datasets import load_dataset\n"
                "def load_pretraining_dataset(path, split='train'):\n    return load_dataset(path, streaming=True, split=split)\n"),
            "src/axolotl/datasets.py": (
                "class TokenizedPromptDataset:\n    def process(self, dataset):\n"
                "        return dataset.map(self.prompt_tokenizer.tokenize_prompt, num_proc=8, desc='Tokenizing Prompts')\n"),
            "src/axolotl/prompt_tokenizers.py": (
                "class InstructionPromptTokenizingStrategy:\n    def tokenize_prompt(self, prompt):\n"
                "        return self.tokenizer(prompt['instruction'], truncation=True, max_length=2048)\n"),
            "src/axolotl/utils/data/sft.py": (
                "def load_prepare_datasets(cfg, dataset):\n    dataset.save_to_disk(str(cfg.dataset_prepared_path))\n    return dataset\n"),
        }, U, "a streaming path elsewhere does not make the SFT map online"),
        Example({  # lmms-engine: Arrow records loaded as one input format, processed per sample; a weight-preparation tool
            "src/lmms_engine/datasets/naive/multimodal_dataset.py": (
                "from datasets import load_from_disk\nfrom torch.utils.data import Dataset\n\nclass MultiModalDataset(Dataset):\n"
                "    def load_data(self):\n        if self.config.dataset_format == 'arrow':\n"
                "            self.data_list = load_from_disk(self.config.dataset_path)\n"
                "    def __getitem__(self, i):\n        messages = self.data_list[i]['messages']\n"
                "        text = self.processor.apply_chat_template(messages, tokenize=False)\n"
                "        return self.processor(text=[text], images=self.load_images(i), return_tensors='pt')\n"),
            "tools/prepare_init_weight/prepare_aero_omni.py": (
                "from transformers import AutoProcessor\n\ndef main(args):\n    processor = AutoProcessor.from_pretrained(args.base)\n"
                "    text = processor.apply_chat_template(messages)\n    inputs = processor(text=text, return_tensors='pt')\n"
                "    model.save_pretrained(args.output_dir)\n    processor.save_pretrained(args.output_dir)\n"),
        }, N, "loaded Arrow records processed per sample; a weight-preparation tool"),
        Example({  # a preparation script saves the tokenized dataset that training loads
            "scripts/prepare_dataset.py": (
                "from datasets import load_dataset\nfrom transformers import AutoTokenizer\n\ndef main(args):\n"
                "    tok = AutoTokenizer.from_pretrained(args.model)\n    ds = load_dataset('json', data_files=args.data)['train']\n"
                "    ds = ds.map(lambda x: tok(x['text']), batched=True, num_proc=16)\n    ds.save_to_disk(args.out)\n"),
            "train.py": "from datasets import load_from_disk\nds = load_from_disk('data/tokenized')\n",
        }, U, "tokenized dataset saved by a preparation script, loaded by training"),
        Example(_oumi_map_dataset("datasets.Dataset.from_generator"), U, "a map dataset tokenized into Arrow before training"),
        Example(_oumi_map_dataset("datasets.IterableDataset.from_generator"), N, "a map dataset streamed: tokenized per sample"),
        Example({**_MM_DATASETS, **{f"xtuner/configs/{m}.py": _mm_data_config("llava" if m == "llava_7b" else "hf")
                                    for m in ("llama2_7b_qlora_alpaca", "qwen_7b_qlora_alpaca", "internlm2_7b_qlora_alpaca", "llava_7b")}},
                U, "mmengine configs: 3 of 4 tokenize with datasets.map; per-sample only in the LLaVA one"),
        Example({**_MM_DATASETS, **{f"xtuner/configs/{m}.py": _mm_data_config("hf" if m == "llama2_7b_qlora_alpaca" else "llava")
                                    for m in ("llama2_7b_qlora_alpaca", "llava_7b", "llava_13b", "llava_34b")}},
                P, "mmengine configs: 3 of 4 tokenize per sample"),
        Example(_oumi_registry({"llama3_1/sft/8b_full": "yahma/alpaca-cleaned", "qwen3/sft/8b_full": "yahma/alpaca-cleaned",
                                "phi3/sft/lora": "yahma/alpaca-cleaned", "fineweb/pretrain": "HuggingFaceFW/fineweb-edu"}), U,
                "registered datasets: 3 of 4 recipes train on a dataset written into Arrow ahead"),
        Example(_oumi_registry({"llama3_1/pretrain": "HuggingFaceFW/fineweb-edu", "qwen3/pretrain": "HuggingFaceFW/fineweb-edu",
                                "phi3/pretrain": "HuggingFaceFW/fineweb-edu", "llama3_1/sft/8b_full": "yahma/alpaca-cleaned"}), P,
                "registered datasets: 3 of 4 recipes tokenize per document while training"),
        Example(_MODEL_FORWARD_TOKENIZES, N, "captions tokenized in the model's forward on every step (BLIP-2)"),
        Example({  # dclm: shards tokenized by open_lm's pipeline, run from the project's own script; training reads the shards
            "ray_processing/tokenize_shuffle.py": (
                "import argparse\nfrom open_lm.datapreprocess.ray import tokenize_shuffle\n\n\ndef add_tokenize_shuffle_args(parser):\n"
                "    parser.add_argument('--readable_name')\n    return parser\n\n\ndef main(args):\n"
                "    tokenize_shuffle.main(['--input', args.input, '--output', args.output, '--seqlen', '2049'])\n\n\n"
                "if __name__ == '__main__':\n    parser = add_tokenize_shuffle_args(argparse.ArgumentParser())\n    main(parser.parse_args())\n"),
            "training/train.py": "import torch\nfrom open_lm.main import main\n\nmain(['--dataset-manifest', 's3://bucket/manifest.jsonl'])\n"},
            U, "a library's tokenization pipeline run by the project's script"),
        Example(_PRETOKENIZE_SCRIPT, U, "a script (named generate_dataset.py) tokenizes with Ray tasks and writes parquet that training reads"),
        Example({**_PRETOKENIZE_SCRIPT, "chatpkg/data/generate_dataset.py": _PRETOKENIZE_SCRIPT["chatpkg/data/generate_dataset.py"].replace(
            "    parquet.write_table(pa.concat_tables(ray.get(handles)), out_filename)\n", "    return ray.get(handles)\n"),
                 "chatpkg/training/dataset.py": (
                     "import pyarrow.parquet as pq\nfrom torch.utils.data import Dataset\n\nclass ChatDataset(Dataset):\n"
                     "    def __init__(self, path, template):\n        self.rows = pq.read_table(path).to_pylist()\n        self.template = template\n"
                     "    def __getitem__(self, i):\n        return self.template.tokenize_conversations([self.rows[i]])\n")},
                N, "the same tokenization returned, not written: the Dataset tokenizes per sample"),
        Example(_lazy_dataset_switch("False"), U, "the per-sample tokenizing dataset is chosen only by a switch that is off"),
        Example(_TOKENIZED_CACHE_READER, U, "a loader reading back a tokenized cache (a class named for tokenized data, a tokenizer probe)"),
        Example(_lazy_dataset_switch("True"), P, "the per-sample tokenizing dataset is chosen by a switch that is on"),
        Example(_WDS_PIPELINE, N, "captions tokenized by a wds.map stage of a WebDataset pipeline, per sample in the loader workers"),
        Example(_RAW_ARROW_COLLATOR, N, "raw Arrow records loaded and saved back; a collator class's __call__ tokenizes every batch"),
        Example(_TOKENIZED_ARROW_COLLATOR, P, "the same collator, but the dataset is tokenized with datasets.map before it is saved"),
        Example(_megatron_like(extra=True), U,
                "tokens written by a preprocessing tool; a mock dataset and an inference server's request batching tokenize too"),
        Example({**_megatron_like(extra=True), "pkg/data/sft_dataset.py": (
            "from torch.utils.data import Dataset\n\n\nclass SFTDataset(Dataset):\n    def __init__(self, rows, tokenizer):\n"
            "        self.rows, self.tokenizer = rows, tokenizer\n\n    def __getitem__(self, idx):\n"
            "        return self.tokenizer.apply_chat_template(self.rows[idx]['messages'], tokenize=True)\n")}, P,
                "the same project with an SFT dataset that tokenizes every conversation when it is read"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        sites = _classify_tokenization(f)
        offline = _offline_outputs(f) + [_ev(c, key=c.short) for c in sites["offline"]]
        writes = [w for w in (_written_by(f, c) for c in sites["offline"]) if w is not None]
        offline += [_ev(w, key=w.short) for i, w in enumerate(writes) if w not in writes[:i]]
        offline += [_ev(c, key="Dataset.from_generator (the whole dataset into Arrow before training)") for c in _materialising_calls(f)]
        offline += [_ev(c, key=f"{c.short}() in datasets.map" if c.path not in _materialised_files(f) else
                        f"{c.short}() in {c.func}, run by Dataset.from_generator before training") for c in sites["mapped"]]
        # an Arrow save in a file that tokenizes nothing and maps no tokenizing function, off the training path and outside a
        # preparation script, writes raw records back out (Magicoder's ``minhash_deduplication.py``: the deduplicated
        # instruction text): no token ids saved. (The training path's own save stores what its pipeline prepared: axolotl's
        # ``utils/data/shared.py`` saves the tokenized dataset its other modules built.)
        training = ctx.project.training_files
        # (a file that builds or imports a tokenizer, ``tok = AutoTokenizer.from_pretrained(...)`` then ``ds.map(lambda x:
        # tok(x['text']))``, tokenizes whatever its callables are named)
        tokenizes = {c.path for c in _tokenizer_calls(f)} | {c.path for c in sites["offline"] + sites["mapped"]} | set(training) \
            | {p for p, ff in f.files.items() if any("Tokenizer" in (i.name or i.module) for i in ff.imports)}
        offline = [e for e in offline if not (e.key == "save_to_disk" and e.path not in tokenizes and not _OFFLINE_PATH.search(e.path))]
        collated = [c for c in sites["collator"] if not training or c.path in training]
        # a mock dataset tokenizes the fake text it makes up (Megatron-LM ``examples/mimo/data/mock.py``: ``_mock_tokenize``
        # in ``__getitem__``): no run's data
        # ... nor the model interface an evaluation harness calls (OmniQuant's ``LMClass(BaseLM).tok_encode``, lm-eval's API)
        real = [c for c in sites["online"] + collated
                if not (_MOCK_DATA.search(c.path) or _MOCK_DATA.search(c.func or "") or _MOCK_DATA.search(c.short))
                and (c.func or "").rsplit(".", 1)[-1] not in _EVAL_HARNESS_METHODS]
        on_sites, minor = _minority_sites(f, real, _ONLINE_FUNCS)
        note = _minority_note(f, minor, "tokenization runs per sample")
        online = [_ev(c, key=f"{c.short}() in {c.func}") for c in on_sites]
        # a model's own text encoder tokenizing its prompts (a diffusion model family's ``captioning.py``) in a module no
        # training entry point reaches is no data pipeline of the run
        away = set(map(id, unreached_sites(ctx, sites["startup"] + sites["step"])))
        at_start = [c for c in sites["startup"] if id(c) not in away]
        startup = [_ev(c, key=f"{c.short}() at start-up") for c in at_start]
        in_step = [_ev(c, key=f"{c.short}() in {c.func}") for c in sites["step"] if id(c) not in away]
        # the Arrow I/O of raw records: load_from_disk, and save_to_disk in a dataset module that neither tokenizes nor maps
        # (xTuring's ``InstructionDataset.save`` writes its instruction/text/target columns back out), not a preparation script
        tokenizing = {c.path for c in _tokenizer_calls(f)} | {c.path for c in f.calls("map")}
        loads = [e for e in offline if e.key == "load_from_disk" or (
            e.key == "save_to_disk" and e.path not in tokenizing and not _OFFLINE_PATH.search(e.path))]
        # ... unless a training script feeds what it loads straight to its DataLoader, with no tokenizer of its own (LongVA's
        # ``text_extend/text_extend_train.py``: ``load_from_disk(args.dataset)`` of a pre-tokenized corpus): that stage's
        # data is tokenized ahead, whatever the other stages do per sample
        fed = [e for e in loads if e.key == "load_from_disk" and e.path not in tokenizing and _fed_to_loader(f, e.path)
               and not _imports_any(f, e.path, tokenizing)]
        if online and loads and len(loads) == len(offline) and not fed:
            # an Arrow dataset the project only loads (nothing saves one, no prepared/tokenized path) while every sample is
            # tokenized in the loader: one input format of the raw records (lmms-engine: json / jsonl / arrow / parquet
            # records of messages and image paths), not a preprocessed dataset
            first = next((e for e in loads if e.key == "load_from_disk"), loads[0])
            return Outcome(N, _unique_ev(online + loads), "tokenization runs per sample in the data loader; the Arrow datasets "
                           f"it loads ({first.key} at {first.path}:{first.line}) are the raw records: nothing in the "
                           "project saves a tokenized dataset", {"preprocessing": "online"})
        if online and offline:
            return Outcome(P, _unique_ev(offline + online), f"data is preprocessed ahead, but some tokenization still runs per sample "
                           f"({_at(_unique_ev(online))})" + note,
                           {"preprocessing": "mixed"})
        if online:
            return Outcome(N, _unique_ev(online), "tokenization runs per sample in the data loader" + note, {"preprocessing": "online"})
        if in_step and offline:
            return Outcome(P, _unique_ev(offline + in_step), "data is preprocessed ahead, but the model's forward still tokenizes "
                           "text on every training step", {"preprocessing": "mixed"})
        if in_step:
            return Outcome(N, _unique_ev(in_step), "text is tokenized inside the model's forward on every training step (per batch, "
                           "in the training process); nothing is tokenized ahead", {"preprocessing": "step"})
        # ``overwrite_cache: true`` (LLaMA-Factory's recipes, DISC-LawLLM; ``--overwrite_cache`` in the README runs of its
        # vendored ``llmtuner`` copies, Aurora, CareGPT) makes ``datasets.map`` skip the cache it wrote last time: every
        # launch tokenizes the whole dataset again before the first step
        redo = [s for s in f.effective("overwrite_cache") if truthy(s.value) is True and s.source in ("config", "launcher")]
        if redo and offline and training and all(e.path in training for e in offline):
            return self._redone(redo, offline, "the training job tokenizes the data before the first step")
        if offline and len(offline) == len(sites["mapped"]) and not any(_OFFLINE_PATH.search(c.path) for c in sites["mapped"]) \
                and not _materialised_files(f) & {c.path for c in sites["mapped"]}:
            # only a tokenizing function handed to ``datasets.map`` by the training job itself (Nanbeige's ``dataloader.
            # create_dataset`` from ``main.py``): tokenized once before the first step, not in a separate preparation run;
            # datasets keeps the mapped rows in its Arrow cache, so a later run with the same inputs reads them back
            c = sites["mapped"][0]
            return Outcome(U, _unique_ev(offline), f"data tokenized once before the first step by datasets.map ({c.short}() in "
                           f"{c.func} at {c.path}:{c.line}), in the training job rather than a separate preparation run; datasets "
                           "caches the mapped rows in Arrow files, so a later run with the same inputs reads them back" + note,
                           {"preprocessing": "mapped"})
        if offline:
            return Outcome(U, _unique_ev(offline), "data tokenized ahead of training and saved/cached for reuse" + note, {"preprocessing": "offline"})
        cache = _disk_cache(f, training) if startup else []
        if cache:
            save, load = cache[0]
            return Outcome(U, _unique_ev([_ev(save, key=f"{save.name} (cache)"), _ev(load, key=f"{load.name} (cache)")]), f"the data is tokenized once and cached to disk: {save.name}() at "
                           f"{save.path}:{save.line} writes it, and a later run loads it ({load.path}:{load.line}) instead of "
                           "tokenizing again", {"preprocessing": "cached"})
        if startup:
            kept = [c for c in at_start if _KEPT_TOKENS.match(c.text)]
            if kept:
                # tokenized once, before the first step, and the ids kept for training (an in-memory dataset): not per sample
                # per epoch, but redone on every run (the settled reading of autotrain's in-memory map and realhf's prompts)
                return Outcome(P, _unique_ev([_ev(c, key=f"{c.short}() at start-up") for c in kept]),
                               "the whole dataset is tokenized in-process at start-up and kept in memory for training; nothing "
                               "is saved, so every run tokenizes it again", {"preprocessing": "startup"})
            # the start-up pass keeps no ids (a length filter, ``len(tokenizer.apply_chat_template(...))``): tokenized again later
            return Outcome(N, _unique_ev(startup), "the whole dataset is tokenized in-process at start-up on every run; nothing is saved", {"preprocessing": "startup"})
        framework = self._framework_upfront(ctx, False)
        if framework:
            # ``overwrite_cache: true`` in a LLaMA-Factory recipe (DISC-LawLLM's two recipes) makes ``datasets.map`` skip
            # the cache it wrote last time: every launch tokenizes the whole dataset again before the first step
            if redo:
                return self._redone(redo, framework, "the training framework tokenizes before training")
            return Outcome(P, _unique_ev(framework), "the training framework tokenizes before training (datasets cache), not a saved prepared dataset", {"preprocessing": "framework"})
        gone = [c for c in sites["startup"] + sites["step"] if id(c) in away]
        return Outcome(N, [], "no offline preprocessing found" + ("; " + unreached_note(f, gone, "tokenizer calls") if gone else ""),
                       {"preprocessing": None})

    @staticmethod
    def _redone(redo: list[Any], sites: list[Evidence], who: str) -> Outcome:
        """Partial: tokenized before training, but ``overwrite_cache`` throws the cache away at every launch."""
        s0 = redo[0]
        more = f" (+{len(redo) - 1})" if len(redo) > 1 else ""
        return Outcome(P, _unique_ev([*(_ev(s) for s in redo[:3]), *sites]),
                       f"{who}, and overwrite_cache: true ({s0.path}:{s0.line}{more}) discards its datasets cache, so every "
                       "launch tokenizes the whole dataset again; drop it, or save the tokenized set (tokenized_path)",
                       {"preprocessing": "redone", "overwrite_cache": True, "advice_for": "overwrite-cache"})

    @staticmethod
    def _framework_upfront(ctx: Context, has_offline: bool) -> list[Evidence]:
        f = ctx.facts
        if has_offline:
            return []
        out: list[Evidence] = []
        trl_trainers = ("SFTTrainer", "DPOTrainer", "ORPOTrainer", "KTOTrainer", "CPOTrainer", "RewardTrainer")
        for c in f.calls(*trl_trainers):
            if not hf_framework_call(f, c):
                continue  # the project's own trainer of that name (self-rewarding-lm-pytorch's ``SFTTrainer``)
            kw = c.kwargs.get("dataset_kwargs")
            if not (isinstance(kw, dict) and truthy(kw.get("skip_prepare_dataset"))):
                out.append(_ev(c, key=c.short))
        if not out:  # a library shipping a subclass of TRL's trainer (``class UnslothTrainer(SFTTrainer):``) for its users to build
            out += [_ev(r, key=r.name.rsplit(".", 1)[-1]) for r in f.refs(*trl_trainers)
                    if r.name.startswith("trl.") and re.match(r"class\s+\w+\s*\(", r.text.strip()) and not _in_tests(r.path)]
        out += [_ev(x, key=x.script or x.launcher) if isinstance(x, Launch) else _ev(x, key=x.dotted) for x in _framework_launches(f)]
        return out


# ---------------------------------------------------------------------------------------
# F7
# ---------------------------------------------------------------------------------------

_PACK_KEYS = ("packing", "sample_packing", "neat_packing", "pack_sequences", "packed_sequence", "concat_tokens",
              "eval_sample_packing", "group_texts", "pretraining_sample_concatenation",
              "use_sequence_packing")  # ROLL's worker config: sequences concatenated into one packed sequence
_MEGATRON_DEMO = (
    "from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder\n"
    "from megatron.core.datasets.gpt_dataset import GPTDatasetConfig, {cls}\n\n\n"
    "def build_data_iterator(cfg):\n"
    "    datasets = BlendedMegatronDatasetBuilder({cls}, [1000, None, None], lambda: True, cfg).build()\n"
    "    return iter(DataLoader(datasets[0], batch_size=8, shuffle=True))\n"
)


def _megatron_style_datasets(f: Facts) -> list[Call]:
    """Constructions of a project's own dataset class whose file builds Megatron's sample index (``_build_index_mappings``,
    ``helpers.build_sample_idx``): GPT-NeoX's ``GPT2Dataset`` concatenates the tokenized documents and cuts them into
    ``seq_length`` samples, as Megatron-LM's ``GPTDataset`` does."""
    files = {c.path for c in f.calls("_build_index_mappings", "build_sample_idx", "build_sample_idx_int32", "build_sample_idx_int64")
             if not _in_tests(c.path)}
    if not files:
        return []
    classes = {k.name for k in f.records("classes") if k.path in files and k.name.endswith("Dataset")}
    return [c for c in f.calls(*sorted(classes)) if c.short in classes and not _in_tests(c.path) and not _mock_dataset_arg(c)] if classes else []


_PACK_CALLS = ("ConstantLengthDataset", "pack_dataset", "PackedDataset", "GPTDataset",
               "BlendedMegatronDatasetBuilder", "ConcatTokensDataset", "PackingDataset")

#: a packing dataset class or builder, with a variant suffix (InternEvo ``PackedDatasetWithCut``,
#: ``get_packed_dataset_without_short_length``)
_PACK_CLASS = lazy_compile(r"(?i)(^|\.)\w*(concat|pack)\w*dataset(_?with\w*)?$")
_CHUNK_KWARGS = {"chunk_size", "max_seq_len", "max_seq_length", "seq_len", "seq_length", "block_size", "max_length",
                 "context_length", "max_tokens", "packed_length", "pack_length"}
_PACK_STRATEGIES = ("packing", "packed", "pack", "padding_free", "sequence_packing")


def _packs(strategy: str) -> bool:
    return strategy in _PACK_STRATEGIES or strategy.endswith(("_packing", "padding_free"))
_STRATEGY_KEYS = ("batching_strategy", "batch_strategy", "collate_strategy", "collation_strategy", "padding_strategy",
                  "batch_method", "batching_method")  # (LongAlign ``--batch_method "pack"`` / "sort" / "naive")


#: a packed token file read out of a memmapped byte buffer (modalities' ``.pbin``): documents are one token stream, the
#: base class returns one document per index, the windowed subclass fixed ``block_size`` windows across documents
_PBIN_DATASET = (
    "import numpy as np\nfrom torch.utils.data import Dataset\n\n\n"
    "class PackedMemMapDatasetBase(Dataset):\n"
    "    np_dtype_of_tokens_on_disk_from_bytes = {2: np.dtype(np.uint16).newbyteorder('<'), 4: np.dtype(np.uint32).newbyteorder('<')}\n\n"
    "    def __init__(self, raw_data_path, sample_key):\n"
    "        self._data = np.memmap(raw_data_path, mode='r', offset=16)\n"
    "        self._token_dtype_on_disk = self.np_dtype_of_tokens_on_disk_from_bytes[2]\n"
    "        self._index = self._generate_packing_index()\n\n"
    "    def __getitem__(self, idx):\n"
    "        offset_in_bytes, length_in_bytes = self._index[idx]\n"
    "        tokens = np.frombuffer(\n            buffer=self._data,\n            dtype=self._token_dtype_on_disk,\n"
    "            count=length_in_bytes // 2,\n            offset=offset_in_bytes,\n        )\n"
    "        return {self.sample_key: tokens.astype(np.int32)}\n\n\n"
    "class PackedMemMapDatasetContinuous(PackedMemMapDatasetBase):\n"
    "    def __init__(self, raw_data_path, sample_key, block_size):\n"
    "        self.block_size = block_size\n        super().__init__(raw_data_path, sample_key)\n"
)
_PBIN_FACTORY_WINDOWS = (
    "from pkg.dataloader.dataset import PackedMemMapDatasetContinuous\n\n\n"
    "def get_packed_mem_map_dataset_continuous(raw_data_path, sequence_length, sample_key):\n"
    "    return PackedMemMapDatasetContinuous(raw_data_path=raw_data_path, block_size=sequence_length + 1, sample_key=sample_key)\n"
)
_PBIN_FACTORY_DOCS = (
    "from pkg.dataloader.dataset import PackedMemMapDatasetBase\n\n\n"
    "def get_packed_mem_map_dataset(raw_data_path, sample_key):\n"
    "    return PackedMemMapDatasetBase(raw_data_path=raw_data_path, sample_key=sample_key)\n"
)


#: picotron's data module: documents tokenized and cut into fixed chunks by a ``datasets.map`` whose callback is a partial
_PICOTRON_DATA = {"picotron/data.py": (
    "from functools import partial\nimport numpy as np\nfrom datasets import load_dataset\nfrom torch.utils.data import DataLoader\n\n"
    "class MicroBatchDataLoader(DataLoader):\n    def __init__(self, seq_length, dataset_name, tokenizer, num_proc):\n"
    "        self.dataset = load_dataset(dataset_name, split='train')\n"
    "        self.tokenized_dataset = self.tokenize_dataset(self.dataset, 'text', seq_length, num_proc)\n"
    "        super().__init__(self.tokenized_dataset, batch_size=1, num_workers=1)\n\n"
    "    @staticmethod\n    def tokenizer_group_text(examples, tokenizer, sequence_length):\n"
    "        tokenized = tokenizer.batch_encode_plus(examples, return_attention_mask=False, return_tensors='np')\n"
    "        tokens = np.concatenate(tokenized['input_ids'])\n"
    "        return {'input_ids': [tokens[i:i + sequence_length + 1] for i in range(0, len(tokens) - sequence_length, sequence_length)]}\n\n"
    "    def tokenize_dataset(self, dataset, text_column_name, sequence_length, num_proc):\n"
    "        tokenizer_func = partial(self.tokenizer_group_text, tokenizer=self.tokenizer, sequence_length=sequence_length)\n"
    "        return dataset.map(tokenizer_func, input_columns=text_column_name, remove_columns=dataset.column_names,\n"
    "                           batched=True, num_proc=num_proc, load_from_cache_file=True)\n"),
    "train.py": "from picotron.data import MicroBatchDataLoader\nloader = MicroBatchDataLoader(1024, 'roneneldan/TinyStories', tok, 8)\nloss.backward()\n",
}

#: OLMo's MemMapDataset: fixed-size chunks of the concatenated token arrays, each read as a byte range
_OLMO_CHUNK_READER = {"olmo/data/memmap_dataset.py": (  # fixed-size chunks of a flat token array read as byte ranges
    "import numpy as np\nimport torch\nfrom torch.utils.data import Dataset\nfrom ..util import get_bytes_range\n\n"
    "class MemMapDataset(Dataset):\n    def _read_chunk_from_memmap(self, path, index, dtype=None):\n"
    "        dtype = dtype or self.dtype\n        item_size = dtype(0).itemsize\n"
    "        bytes_start = index * item_size * self._chunk_size\n        num_bytes = item_size * self._chunk_size\n"
    "        buffer = get_bytes_range(path, bytes_start, num_bytes)\n        array = np.frombuffer(buffer, dtype=dtype)\n"
    "        return torch.tensor(array.astype(np.int_), dtype=torch.long)\n\n"
    "    def __getitem__(self, index):\n        return {\"input_ids\": self._read_chunk_from_memmap(self._paths[0], index)}\n")}


#: an RL framework's model wrapper (skyrl-train ``HFModelWrapper.forward``): with ``use_sample_packing`` each micro-batch
#: of token ids is unpadded into one varlen row for flash-attention; ``{on}`` is the config value
_UNPAD_WRAPPER = {
    "myrl/config/ppo_base_config.yaml": "trainer:\n  micro_train_batch_size_per_gpu: 1\n  use_sample_packing: {on}\n  flash_attn: true\n",
    "myrl/model_wrapper.py": (
        "import torch.nn as nn\nfrom flash_attn.bert_padding import pad_input, unpad_input\n\n\n"
        "class HFModelWrapper(nn.Module):\n    def __init__(self, model, use_sample_packing: bool = False):\n        super().__init__()\n"
        "        self.model = model\n        self.use_sample_packing = use_sample_packing\n\n"
        "    def forward(self, sequences, attention_mask):\n        position_ids = attention_mask.long().cumsum(-1) - 1\n"
        "        if self.use_sample_packing:\n"
        "            sequences_fwd, nnz_indices, _, _, _ = unpad_input(sequences.unsqueeze(-1), attention_mask=attention_mask)\n"
        "            position_ids_fwd, _, _, _, _ = unpad_input(position_ids.unsqueeze(-1), attention_mask)\n"
        "            return self.model(sequences_fwd.transpose(0, 1), attention_mask=None, position_ids=position_ids_fwd.transpose(0, 1))\n"
        "        return self.model(sequences, attention_mask=attention_mask, position_ids=position_ids)\n"),
    "myrl/workers/fsdp_worker.py": (
        "from myrl.model_wrapper import HFModelWrapper\n\n\nclass PolicyWorker:\n    def init_model(self, model):\n"
        "        self.model = HFModelWrapper(model, use_sample_packing=self.cfg.trainer.use_sample_packing)\n"),
}

# VeOmni: ``dyn_bsz`` (default True) fills each micro-batch with samples up to ``micro_batch_size * max_seq_len`` tokens;
# the collator concatenates them and takes cu_seqlens from the per-sample position ids
_DYN_PACKING = {
    "pkg/arguments.py": (
        "from dataclasses import dataclass, field\n\n\n@dataclass\nclass TrainingArguments:\n"
        "    dyn_bsz: bool = field(default=True)\n    micro_batch_size: int = field(default=1)\n"),
    "pkg/data_collator.py": (
        "import torch\nfrom transformers.modeling_flash_attention_utils import prepare_fa_kwargs_from_position_ids\n\n\n"
        "class PackingCollator:\n    def __call__(self, features):\n"
        "        batch = {k: torch.cat([f[k] for f in features], dim=-1).unsqueeze(0) for k in features[0]}\n"
        "        (cu_q, cu_k), (max_q, max_k) = prepare_fa_kwargs_from_position_ids(batch[\"position_ids\"])\n"
        "        batch[\"cu_seq_lens_q\"], batch[\"cu_seq_lens_k\"] = cu_q, cu_k\n        return batch\n"),
    "pkg/data_loader.py": (
        "from pkg.dynamic_batching import DynamicBatchSizeDataLoader, TextBatchingStrategy\n\n\n"
        "def build_dataloader(loader, micro_batch_size, max_seq_len, collate_fn, dyn_bsz=True):\n    if dyn_bsz:\n"
        "        strategy = TextBatchingStrategy(token_micro_bsz=micro_batch_size * max_seq_len)\n"
        "        return DynamicBatchSizeDataLoader(loader, batching_strategy=strategy, collate_fn=collate_fn)\n"
        "    return loader\n"),
}

# OpenChat's multipack (round 14): a sampler bin-packs whole samples into batches of up to ``batch_max_length`` tokens,
# each batch is concatenated into one row with ``cu_seqlens`` and the model's attention is flash-attn varlen
_BUDGET_PACKING = {
    "pkg/dataset.py": (
        "import numpy as np\nimport torch\nfrom torch.utils.data import IterableDataset\n"
        "from pkg.multipack_sampler import MultipackDistributedSampler\n\n\n"
        "class PackedDataset(IterableDataset):\n"
        "    def __init__(self, data, batch_max_length, rank, num_replicas):\n        self.data = data\n"
        "        self.sampler = MultipackDistributedSampler(lengths=data['total_length'], numseqs=data['num_seqs'],\n"
        "                                                   batch_max_length=batch_max_length, rank=rank, num_replicas=num_replicas, seed=0)\n\n"
        "    def __iter__(self):\n        for indices in self.sampler.iter(0):\n"
        "            ids = np.concatenate(self.data['input_ids'][indices])\n"
        "            seqlens = torch.tensor(self.data['total_length'][indices], dtype=torch.int32)\n"
        "            yield {'input_ids': torch.from_numpy(ids), 'cu_seqlens': torch.nn.functional.pad(seqlens.cumsum(-1, dtype=torch.int32), (1, 0)),\n"
        "                   'max_seqlen': int(seqlens.max())}\n"),
    "pkg/model.py": (
        "from flash_attn.flash_attn_interface import flash_attn_varlen_func\n\n\n"
        "def attention(q, k, v, cu_seqlens, max_seqlen):\n"
        "    return flash_attn_varlen_func(q=q, k=k, v=v, cu_seqlens_q=cu_seqlens, cu_seqlens_k=cu_seqlens,\n"
        "                                  max_seqlen_q=max_seqlen, max_seqlen_k=max_seqlen, causal=True)\n"),
}


#: a decoder model file vendored into the project (FlagEmbedding 1.4.2's ``modeling_minicpm_reranker.py``): transformers'
#: ``_get_unpad_data`` helper, called by the flash-attention class's ``_upad_input`` on q/k/v; ``{caller}`` may move the call
_VENDORED_FA2 = {
    "mylib/finetune/modeling_minicpm.py": (
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nfrom flash_attn import flash_attn_varlen_func\n"
        "from flash_attn.bert_padding import index_first_axis, pad_input\n\n\n"
        "def _get_unpad_data(attention_mask):\n    seqlens_in_batch = attention_mask.sum(dim=-1, dtype=torch.int32)\n"
        "    indices = torch.nonzero(attention_mask.flatten(), as_tuple=False).flatten()\n"
        "    max_seqlen_in_batch = seqlens_in_batch.max().item()\n"
        "    cu_seqlens = F.pad(torch.cumsum(seqlens_in_batch, dim=0, dtype=torch.int32), (1, 0))\n"
        "    return indices, cu_seqlens, max_seqlen_in_batch\n\n\n"
        "class MiniCPMFlashAttention2(nn.Module):\n"
        "    def _upad_input(self, query_layer, key_layer, value_layer, attention_mask, query_length):\n"
        "        indices_k, cu_seqlens_k, max_seqlen_in_batch_k = _get_unpad_data(attention_mask)\n"
        "        key_layer = index_first_axis(key_layer, indices_k)\n        return key_layer, cu_seqlens_k, max_seqlen_in_batch_k\n\n"
        "    def forward(self, q, k, v, attention_mask):\n        k, cu, mx = self._upad_input(q, k, v, attention_mask, q.shape[1])\n"
        "        return flash_attn_varlen_func(q, k, v, cu, cu, mx, mx)\n"
        "{caller}"),
    "mylib/finetune/runner.py": (
        "from transformers import Trainer\n\n\ndef run(model, args, dataset, collator):\n"
        "    Trainer(model=model, args=args, train_dataset=dataset, data_collator=collator).train()\n"),
}


def _vendored_fa2(caller: str = "") -> dict[str, str]:
    return filled(_VENDORED_FA2, "caller", caller)


#: lingua ``lingua/data.py``: documents are tokenized in a generator and ``{packer}`` yields sequences of seq_len tokens
_LINGUA_PACK = (
    "import numpy as np\n\n\ndef tokenize(iterator, tokenizer):\n    for doc in iterator:\n"
    "        yield tokenizer.encode(doc['text'], add_bos=True, add_eos=True)\n\n\n"
    "def {packer}(iterator, output_seq_len):\n{body}\n\n"
    "def build_dataloader(jsonl_iterator, tokenizer, seq_len, batch_size):\n"
    "    sequences = {packer}(tokenize(jsonl_iterator, tokenizer), seq_len)\n"
    "    batch = []\n    for seq in sequences:\n        batch.append(seq)\n        if len(batch) == batch_size:\n"
    "            yield np.stack(batch)\n            batch = []\n"
)
_LINGUA_PACKER = ("    buffer = []\n    n_views = 2\n    buffer_size = output_seq_len + n_views - 1\n"
                  "    for tokens in iterator:\n        start_token = 0\n        while start_token < len(tokens):\n"
                  "            free_space = buffer_size - len(buffer)\n            seq_len = min(free_space, len(tokens) - start_token)\n"
                  "            buffer.extend(tokens[start_token:start_token + seq_len])\n            start_token += seq_len\n"
                  "            if len(buffer) == buffer_size:\n"
                  "                yield np.lib.stride_tricks.sliding_window_view(np.array(buffer), n_views, axis=0)\n"
                  "                buffer = buffer[output_seq_len:]\n")
_LINGUA_PADDER = ("    for tokens in iterator:\n        yield np.array((tokens + [0] * output_seq_len)[:output_seq_len])\n")
_LINGUA_TRAIN = (
    "import torch\nfrom lingua.data import build_dataloader\n\n\ndef train(args, model, optimizer):\n"
    "    for batch in build_dataloader(read_jsonl(args.data.root_dir), tokenizer, args.data.seq_len, args.data.batch_size):\n"
    "        loss = model(torch.from_numpy(batch).cuda())\n        loss.backward()\n        optimizer.step()\n"
)


#: TRL 1.16-shaped: ``pack_dataset`` (a library function mapping a packer over the dataset) called by the trainer only under
#: ``if packing:``, with ``packing`` handed down from a config field that defaults to False
_PACK_HELPER = {
    "mylib/data_utils.py": (
        "def _pack_bfd(examples, seq_length):\n    return examples\n\n\n"
        "def pack_dataset(dataset, seq_length, map_kwargs):\n"
        "    return dataset.map(_pack_bfd, batched=True, fn_kwargs={'seq_length': seq_length}, **map_kwargs)\n"),
    "mylib/sft_config.py": (
        "from dataclasses import dataclass, field\nfrom transformers import TrainingArguments\n\n\n@dataclass\n"
        "class SFTConfig(TrainingArguments):\n    max_length: int = field(default=1024)\n    packing: bool = field(default=False)\n"),
    "mylib/sft_trainer.py": (
        "from transformers import Trainer\nfrom .data_utils import pack_dataset\n\n\nclass SFTTrainer(Trainer):\n"
        "    def __init__(self, model, args, train_dataset):\n"
        "        train_dataset = self._prepare_dataset(train_dataset, args, args.packing)\n"
        "        super().__init__(model=model, args=args, train_dataset=train_dataset)\n\n"
        "    def _prepare_dataset(self, dataset, args, packing):\n"
        "        if packing:\n            dataset = pack_dataset(dataset, args.max_length, {})\n        return dataset\n"),
}


#: sentence-transformers 6.3-shaped: the input module flattens text batches with ``DataCollatorWithFlattening`` only after an early
#: return unless FlashAttention-2 was requested; ``{attn}`` is the ``model_kwargs`` the trainer's model is loaded with
_FLASH_GATED_FLATTEN = {
    "mylib/modules/transformer.py": (
        "from torch import nn\nfrom transformers import AutoModel, DataCollatorWithFlattening\n\n\n"
        "class Transformer(nn.Module):\n"
        "    def __init__(self, model_name_or_path, model_kwargs=None):\n"
        "        super().__init__()\n"
        "        self.auto_model = AutoModel.from_pretrained(model_name_or_path, **(model_kwargs or {}))\n"
        "        self.config = self.auto_model.config\n"
        "        self.data_collator = None\n"
        "        self.can_flatten_inputs = self._can_flatten_inputs()\n\n"
        "    def _is_flash_attention_requested(self):\n"
        "        return getattr(self.config, '_attn_implementation', None) == 'flash_attention_2'\n\n"
        "    def _can_flatten_inputs(self):\n"
        "        if not self._is_flash_attention_requested():\n"
        "            return False\n"
        "        self.data_collator = DataCollatorWithFlattening(return_flash_attn_kwargs=True, return_position_ids=True)\n"
        "        return True\n\n"
        "    def tokenize(self, texts):\n"
        "        if self.can_flatten_inputs:\n"
        "            return self.data_collator([self.tokenizer(t) for t in texts])\n"
        "        return self.tokenizer(texts, padding=True, truncation='longest_first', return_tensors='pt')\n"),
    "mylib/train.py": (
        "from transformers import Trainer\nfrom mylib.modules.transformer import Transformer\n\n\n"
        "def train(args, dataset):\n"
        "    model = Transformer('BAAI/bge-base-en-v1.5'{attn})\n"
        "    Trainer(model=model, args=args, train_dataset=dataset).train()\n"),
}


def _flash_gated_flatten(attn: str = "") -> dict[str, str]:
    return filled(_FLASH_GATED_FLATTEN, "attn", attn)


#: levanter 1.1's ``TokenSeqDataset``: cached document batches concatenated and cut into ``seq_len`` blocks
def _grouped_stream(switch: bool) -> str:
    """The dataset module; ``switch``: the grouping only under ``if self.config.pack:``, a config field defaulting to False."""
    body = "            yield from concatenate_and_group_texts(doc, self.config.seq_len, drop_remainder=False)\n"
    if switch:
        body = "            if self.config.pack:\n    " + body + "            else:\n                yield doc\n"
    return ("from dataclasses import dataclass\nfrom itertools import chain\n\nimport numpy as np\n\n\n"
            "@dataclass\nclass TextDataConfig:\n    seq_len: int = 2048\n"
            + ("    pack: bool = False\n" if switch else "") + "\n\n"
            "def concatenate_and_group_texts(encoding, seq_len, drop_remainder=True):\n"
            "    concatenated = {k: np.array(list(chain(*v))) for k, v in encoding.items()}\n"
            "    total = len(concatenated['input_ids'])\n    for start in range(0, total, seq_len):\n"
            "        yield {k: v[start:start + seq_len] for k, v in concatenated.items()}\n\n\n"
            "class TokenSeqDataset:\n    def __init__(self, doc_cache, config: TextDataConfig):\n"
            "        self.doc_cache = doc_cache\n        self.config = config\n\n"
            "    def __iter__(self):\n        for doc in self.doc_cache:\n" + body)


#: ``dataset_kwargs = {"skip_prepare_dataset": True}`` (TRL's SFTTrainer then leaves the dataset as it is given)
_SKIP_PREPARE = lazy_compile(r"""['"]?skip_prepare_dataset['"]?\s*[:=]\s*True""")


def _skipped_preparation(f: Facts) -> Any | None:
    """Where a run tells TRL's SFTTrainer to skip its dataset preparation, the step that packs (R1-V ``sft.py:253``:
    ``training_args.dataset_kwargs = {"skip_prepare_dataset": True}`` with a collator of its own): a ``packing: true``
    beside it packs nothing. None when no such setting is seen."""
    for a in f.records("attr_assigns"):
        if str(a.target).endswith("dataset_kwargs") and _SKIP_PREPARE.search(str(a.value)) and not _in_tests(a.path):
            return a
    for s in f.effective("skip_prepare_dataset"):
        if truthy(s.value) is True and not _in_tests(s.path):
            return s
    return None


@register
class F7SequencePacking(_DataCheck):
    id = "F7"
    title = "Sequence packing"
    title_zh = "数据打包 (Packing)"
    bottlenecks = (Bottleneck.COMPUTE,)
    priority = Priority.MEDIUM
    benefit = "no FLOPs wasted on padding: short samples concatenated up to the sequence length"
    what = (
        "Whether short samples are packed into full-length sequences: TRL `packing=True`, LLaMA-Factory `packing`/"
        "`neat_packing` (on by default for `stage: pt`), axolotl `sample_packing`, torchtune `dataset.packed`, "
        "`group_texts`, `ConstantLengthDataset`, Megatron GPT datasets and nanoGPT-style token streams. Padding removal "
        "without packing (`DataCollatorWithFlattening`, TRL `padding_free=True` without `packing`, verl/lmms-engine "
        "`use_remove_padding`/`use_rmpad`) is partial: no FLOPs on padding, but each batch holds a fixed number of samples "
        "rather than being filled up to the sequence length. `group_by_length` only trims padding and `packing: false` "
        "is off: neither is packing."
    )
    why = (
        "SFT datasets are dominated by short samples: with per-batch padding to a 2-4k context, 50 % or more of the tokens "
        "processed can be padding. Packing raises useful tokens per step; Hugging Face reports up to 2x training "
        "throughput with padding-free packing via `DataCollatorWithFlattening` and flash-attention (2024 blog, "
        "Llama/Mistral SFT), and axolotl/LLaMA-Factory document similar gains for multipack."
    )
    fix = (
        "Enable packing: TRL `SFTConfig(packing=True)` (with `padding_free=True` and flash-attention, packed rows need no "
        "padding either; `padding_free` alone only removes padding), LLaMA-Factory "
        "`packing: true` / `neat_packing: true`, axolotl `sample_packing: true`; keep cross-sample attention masked "
        "(neat packing / flash-attn varlen) for SFT."
    )
    fix_zh = (
        "开启序列打包：TRL `SFTConfig(packing=True)`（配合 flash-attention 与 `padding_free=True` 时打包后的序列也无需 padding；"
        "单独的 `padding_free` 只去除 padding），LLaMA-Factory "
        "`packing: true` / `neat_packing: true`，axolotl `sample_packing: true`；SFT 场景注意屏蔽跨样本注意力（neat packing / flash-attn varlen）。"
    )
    fix_safety = FixSafety.UNSAFE
    references = ("https://huggingface.co/blog/packing-with-FA2", "https://huggingface.co/docs/trl/sft_trainer#packing-dataset")
    snippets = {
        "hf-yaml": "packing: true\nneat_packing: true\n",
        "python": "from trl import SFTConfig\n\nargs = SFTConfig(output_dir=\"out\", packing=True, max_length=4096)\n",
    }
    examples = (
        Example({"model/transformer.py": (  # mistral-finetune: samples concatenated to seq_len, masked per sample
            "import torch\nfrom xformers.ops.fmha.attn_bias import BlockDiagonalCausalMask\n\n\n"
            "class Transformer(torch.nn.Module):\n    def forward(self, input_ids, seqlens):\n"
            "        att_mask = BlockDiagonalCausalMask.from_seqlens(seqlens)\n"
            "        return self.layers(self.tok_embeddings(input_ids), att_mask)\n"),
                 "train.py": ("from model.transformer import Transformer\n\nmodel = Transformer()\nfor batch in loader:\n"
                              "    loss = model(batch.x, seqlens=batch.sizes).sum()\n    loss.backward()\n")},
                U, "xformers block-diagonal causal mask over concatenated samples"),
        Example({"models/mistral.py": (  # Unsloth: equal rows cut into blocks for sliding-window attention, not packing
            "import torch\nimport xformers.ops.fmha as xformers\n\n\n"
            "def forward(hidden_states, q_len, bsz, sliding_window):\n"
            "    causal_mask = xformers.attn_bias.BlockDiagonalCausalMask.from_seqlens([q_len] * bsz).make_local_attention(window_size=sliding_window)\n"
            "    return attention(hidden_states, causal_mask)\n")}, N, "a block-diagonal mask of equal rows: local attention, not packing"),
        Example({"train.py": "from trl import SFTConfig, SFTTrainer\nargs = SFTConfig(output_dir='o', packing=True, max_seq_length=2048)\n"}, U, "trl packing"),
        Example({"axolotl.yml": "base_model: meta-llama/Meta-Llama-3-8B\nsequence_len: 4096\nsample_packing: true\n"}, U, "axolotl"),
        Example({"pt.yaml": "stage: pt\nmodel_name_or_path: Qwen/Qwen2-1.5B\ncutoff_len: 2048\n", "run.sh": "llamafactory-cli train pt.yaml\n"}, U, "llamafactory pt default"),
        Example({"run_clm.py": "def group_texts(examples):\n    concatenated = {k: sum(examples[k], []) for k in examples}\n    return concatenated\n"
                 "lm_datasets = tokenized.map(group_texts, batched=True, num_proc=8)\n"}, U, "group_texts"),
        Example({"mylib/data/text.py": _grouped_stream(False)}, U,
                "a token-sequence dataset runs each document batch through its own concatenate_and_group_texts"),
        Example({"mylib/data/text.py": _grouped_stream(True)}, N,
                "the same grouping only when a pack switch that defaults to False is set"),
        Example({"sft.yaml": "stage: sft\npacking: false\ncutoff_len: 4096\n"}, N, "packing false"),
        Example({"pkg/dataloader/dataset.py": _PBIN_DATASET, "pkg/dataloader/dataset_factory.py": _PBIN_FACTORY_WINDOWS}, U,
                "fixed windows cut from a packed token file"),
        Example(_SHARED_HANDOFF, N, "rows handed to the trainer through shared torch.from_file mappings are not a token stream"),
        Example({"pkg/dataloader/dataset.py": _PBIN_DATASET, "pkg/dataloader/dataset_factory.py": _PBIN_FACTORY_DOCS}, N,
                "one document per index from a packed token file"),
        Example({"train.py": "from trl import SFTTrainer\ntrainer = SFTTrainer(model=m, train_dataset=ds)\n# packing=True\n"}, N, "default off, commented"),
        Example({"train.sh": "deepspeed train.py --group_by_modality_length True --bf16 True\n"}, N, "length grouping is not packing"),
        Example({  # torchtune: the builder packs only when a config sets packed: True; its recipes leave it off
            "torchtune/datasets/_alpaca.py": (
                "from torchtune.datasets._packed import PackedDataset\n"
                "def alpaca_dataset(tokenizer, *, source='tatsu-lab/alpaca', packed: bool = False, split='train'):\n"
                "    ds = SFTDataset(source=source, split=split)\n"
                "    if packed:\n        return PackedDataset(ds, max_seq_len=tokenizer.max_seq_len)\n    return ds\n"),
            "recipes/configs/llama3_1/8B_lora.yaml": (
                "dataset:\n  _component_: torchtune.datasets.alpaca_cleaned_dataset\n  packed: False  # True increases speed\n"
                "batch_size: 2\n"),
        }, N, "packing switch off in every recipe"),
        Example({  # llama-recipes: samples are concatenated and cut into context-length chunks unless padding is chosen
            "src/llama_recipes/configs/training.py": (
                "from dataclasses import dataclass\n\n@dataclass\nclass train_config:\n"
                "    batching_strategy: str = \"packing\"  # alternative: padding\n    context_length: int = 4096\n"),
            "src/llama_recipes/finetuning.py": (
                "import torch\nfrom llama_recipes.data.concatenator import ConcatDataset\n\n"
                "def main(train_config, dataset_train):\n"
                "    if train_config.batching_strategy == \"packing\":\n"
                "        dataset_train = ConcatDataset(dataset_train, chunk_size=train_config.context_length)\n"
                "    return torch.utils.data.DataLoader(dataset_train, batch_size=4, num_workers=1)\n"),
        }, U, "batching strategy packing"),
        Example({  # instructlab-training: one row per minibatch, position_ids restart per sample (flash-attention varlen)
            "src/instructlab/training/sampler.py": (
                "import torch\n\ndef mb_collate_fn(minibatch):\n    input_ids, labels, position_ids = [], [], []\n"
                "    for item in minibatch:\n        item_len = len(item[\"input_ids\"])\n"
                "        input_ids.extend(item[\"input_ids\"])\n        labels.extend(item[\"labels\"])\n"
                "        position_ids.extend(range(item_len))\n"
                "    return {\"input_ids\": torch.tensor([input_ids]), \"labels\": torch.tensor([labels]),\n"
                "            \"position_ids\": torch.tensor([position_ids])}\n"),
        }, U, "padding-free collator"),
        Example({  # arctic-training: the SFT factory packs only when its pydantic config turns pack_samples on
            "arctic_training/data/sft_factory.py": (
                "from pydantic import BaseModel\n\nclass SFTDataConfig(BaseModel):\n    max_length: int = 8192\n"
                "    pack_samples: bool = False\n\n"
                "def pack_dataset(self, dataset):\n    if not self.config.pack_samples:\n        return dataset\n"
                "    dataset = dataset.shuffle(seed=self.config.seed)\n"
                "    dataset = dataset.map(lambda x: pack_sft_batch(x, max_length=self.config.max_length), batched=True)\n"
                "    return dataset\n"),
        }, N, "packing map after an early return on a switch that is off"),
        Example({
            "data/sft_factory.py": (
                "from pydantic import BaseModel\n\nclass SFTDataConfig(BaseModel):\n    max_length: int = 8192\n"
                "    pack_samples: bool = True\n\n"
                "def pack_dataset(self, dataset):\n    if not self.config.pack_samples:\n        return dataset\n"
                "    return dataset.map(lambda x: pack_sft_batch(x, max_length=self.config.max_length), batched=True)\n"),
        }, U, "packing map after an early return on a switch that is on"),
        Example({  # LLaMA-Factory v1: a padding-free batcher is a plugin; the batching strategy defaults to normal
            "src/llamafactory/v1/config/training_args.py": (
                "from dataclasses import dataclass, field\nfrom enum import Enum\n\n"
                "class BatchingStrategy(str, Enum):\n    NORMAL = \"normal\"\n    PADDING_FREE = \"padding_free\"\n\n"
                "@dataclass\nclass TrainingArguments:\n"
                "    batching_strategy: BatchingStrategy = field(default=BatchingStrategy.NORMAL)\n"),
            "src/llamafactory/v1/plugins/trainer_plugins/batching.py": (
                "import torch\n\ndef _pack_padding_free_samples(samples, cutoff_len):\n    input_ids, position_ids = [], []\n"
                "    for sample in samples:\n        n = min(len(sample['input_ids']), cutoff_len)\n"
                "        input_ids.extend(sample['input_ids'][:n])\n        position_ids.extend(range(n))\n"
                "    return {'input_ids': torch.tensor([input_ids]), 'position_ids': torch.tensor([position_ids])}\n"),
        }, N, "padding-free batcher not the default strategy"),
        Example({  # torch's ConcatDataset joins two datasets; it does not pack samples
            "train.py": (
                "import torch\nfrom torch.utils.data import ConcatDataset, DataLoader\n"
                "train_ds = ConcatDataset([alpaca_ds, dolly_ds])\n"
                "loader = DataLoader(train_ds, batch_size=8, collate_fn=DataCollatorForSeq2Seq(tokenizer, padding=True))\n"),
        }, N, "torch ConcatDataset of two datasets"),
        Example({  # InternEvo internlm/data/build_dataloader.py: the tokenized folder is read into packed_length rows
            "internlm/data/build_dataloader.py": (
                "from internlm.data.tokenized.dataset import get_packed_dataset_without_short_length\n\n\n"
                "def get_tokenized_train_loader_items(data_cfg):\n"
                "    train_ds = get_packed_dataset_without_short_length(\n        folder=data_cfg.train_folder,\n"
                "        packed_length=data_cfg.packed_length,\n        max_length_per_sample=data_cfg.seq_len,\n"
                "        min_length=data_cfg.get(\"min_length\", 0),\n    )\n    return train_ds\n"),
        }, U, "packing dataset builder with a packed_length"),
        Example({  # a dataset builder named for packing, switched off by the only config
            "data/build.py": (
                "from data.packed import PackedDatasetWithCut\n\n\n"
                "def build_train_dataset(ds, cfg):\n    if cfg.pack_samples:\n"
                "        return PackedDatasetWithCut(ds, max_length_per_sample=cfg.seq_len, packed_length=cfg.packed_length)\n"
                "    return ds\n"),
            "configs/sft.yaml": "seq_len: 4096\npack_samples: false\n",
        }, N, "packing dataset behind a switch that is off"),
        Example({
            "configs/training.py": (
                "from dataclasses import dataclass\n\n@dataclass\nclass train_config:\n    batching_strategy: str = \"packing\"\n"),
            "scripts/finetune.sh": "torchrun --nproc_per_node 4 finetuning.py --batching_strategy padding --context_length 4096\n",
        }, N, "padding chosen by the launch"),
        Example({"train_gpt.py": (  # modded-nanogpt: shards of token ids read into one pinned buffer, cut into windows
            "import torch\nfrom pathlib import Path\n\ndef _load_data_shard(file: Path):\n"
            "    header = torch.from_file(str(file), False, 256, dtype=torch.int32)  # header is 256 int32\n"
            "    num_tokens = int(header[2])\n    with file.open('rb', buffering=0) as f:\n"
            "        tokens = torch.empty(num_tokens, dtype=torch.uint16, pin_memory=True)\n        f.seek(256 * 4)\n"
            "        nbytes = f.readinto(tokens.numpy())\n    return tokens\n")}, U, "token-stream shards"),
        Example({"torchtitan/hf_datasets/text_datasets.py": (  # torchtitan: documents appended to a token buffer, cut into seq_len
            "import torch\nfrom torch.utils.data import IterableDataset\n\nclass HuggingFaceTextDataset(IterableDataset):\n"
            "    def __iter__(self):\n        for sample in self._get_data_iter():\n"
            "            sample_tokens = self._tokenizer.encode(self._text_processor(sample), add_bos=True, add_eos=True)\n"
            "            self._inputs_buffer.extend(sample_tokens[:-1])\n            self._labels_buffer.extend(sample_tokens[1:])\n"
            "            while len(self._inputs_buffer) >= self.seq_len:\n"
            "                input_ids = torch.LongTensor(self._inputs_buffer[: self.seq_len])\n"
            "                label_ids = torch.LongTensor(self._labels_buffer[: self.seq_len])\n"
            "                self._inputs_buffer = self._inputs_buffer[self.seq_len :]\n"
            "                self._labels_buffer = self._labels_buffer[self.seq_len :]\n"
            "                yield {'input': input_ids}, label_ids\n")}, U, "token buffer cut into seq_len samples"),
        Example({"train.py": (  # Baichuan-7B: each line's ids extended onto a buffer whose head is kept once it holds a batch
            "import torch\n\n\nclass DataEngine:\n    def load_data(self):\n        for file_path in self.local_input_paths:\n"
            "            data = []\n            with open(file_path) as f:\n                for line in f:\n"
            "                    cc = self.sp.EncodeAsIds(line.strip()) + [self.EOS_TOKEN_ID]\n                    data.extend(cc)\n"
            "                    if len(data) >= self.micro_batch_size * (self.max_length + 1):\n"
            "                        index = self.micro_batch_size * (self.max_length + 1)\n"
            "                        self.data.append(data[:index])\n                        data = []\n")}, U,
            "documents concatenated until a fixed-length sample's worth, its head kept"),
        Example({"train.py": (  # the same test ending the read: the first document truncated, nothing concatenated
            "import torch\n\n\nclass DataEngine:\n    def load_data(self):\n        for file_path in self.local_input_paths:\n"
            "            data = []\n            with open(file_path) as f:\n                for line in f:\n"
            "                    data.extend(self.sp.EncodeAsIds(line.strip()))\n"
            "                    if len(data) >= self.max_length:\n                        break\n"
            "            self.data.append(torch.tensor(data))\n")}, N,
            "a buffer read until max_length and then stopped: truncation"),
        Example({"data/sft_dataset.py": (  # one sample per document, truncated and padded to seq_len: no packing
            "import torch\nfrom torch.utils.data import IterableDataset\n\nclass SFTDataset(IterableDataset):\n"
            "    def __iter__(self):\n        for sample in self._get_data_iter():\n            tokens = []\n"
            "            tokens.extend(self._tokenizer.encode(sample['text']))\n"
            "            if len(tokens) < self.seq_len:\n                tokens.extend([self.pad_id] * (self.seq_len - len(tokens)))\n"
            "            yield torch.LongTensor(tokens[: self.seq_len])\n")}, N,
            "per-document truncation and padding"),
        Example({  # lmms-engine: packing on in a minority of the example recipes; most unpad their batches (use_rmpad)
            **{f"examples/{m}/example_config.yaml": (
                f"dataset_config:\n  dataset_type: vision_iterable\n  packing: {'true' if m in ('bagel', 'qwen3_5') else 'false'}\n"
                "model_config:\n  load_from_pretrained_path: Qwen/Qwen2.5-VL-7B-Instruct\n"
                "trainer_args:\n  per_device_train_batch_size: 1\n  use_rmpad: true\n  bf16: true\n")
               for m in ("bagel", "qwen3_5", "qwen2_5_vl", "qwen3_vl", "qwen2_5_omni", "aero", "llava_video")},
        }, P, "padding removed by most recipes, packing only in a minority"),
        Example({
            **{f"examples/{m}/example_config.yaml": (
                "dataset_config:\n  dataset_type: vision_iterable\n  packing: true\n  packing_length: 16384\n"
                "trainer_args:\n  per_device_train_batch_size: 1\n  use_rmpad: true\n")
               for m in ("bagel", "qwen3_5", "qwen2_5_vl", "qwen3_vl")},
            "examples/aero/example_config.yaml": "dataset_config:\n  packing: false\ntrainer_args:\n  use_rmpad: true\n",
        }, U, "packing on in most recipes"),
        Example({  # oumi: packing turned on by 1 of 4 SFT recipes (the others leave it at the default, off); the pretraining
            # datasets' own token buffer serves only the recipes that train on them
            **{f"configs/recipes/{m}/sft/train.yaml": (
                "model:\n  model_name: meta-llama/Llama-3.1-8B-Instruct\n  torch_dtype_str: bfloat16\n"
                "data:\n  train:\n    datasets:\n      - dataset_name: yahma/alpaca-cleaned\n"
                "training:\n  trainer_type: TRL_SFT\n  logging_steps: 100\n" + ("  trainer_kwargs:\n    packing: True\n" if m == "aya" else ""))
               for m in ("aya", "llama3_1", "qwen3", "phi3")},
            "src/oumi/core/datasets/base_pretraining_dataset.py": (
                "import torch\nfrom torch.utils.data import IterableDataset\n\nclass BasePretrainingDataset(IterableDataset):\n"
                "    def __iter__(self):\n        buffer = []\n        for document in self.data:\n"
                "            document_tokens = self.tokenizer.encode(document['text'])\n            buffer.extend(document_tokens)\n"
                "            while len(buffer) >= self.seq_len:\n                yield torch.tensor(buffer[: self.seq_len])\n"
                "                buffer = buffer[self.seq_len :]\n"),
        }, N, "packing in one recipe of four, unset in the others; a pretraining token buffer"),
        Example({  # the same recipes, three of four packing
            **{f"configs/recipes/{m}/sft/train.yaml": (
                "model:\n  model_name: meta-llama/Llama-3.1-8B-Instruct\n  torch_dtype_str: bfloat16\n"
                "data:\n  train:\n    datasets:\n      - dataset_name: yahma/alpaca-cleaned\n"
                "training:\n  trainer_type: TRL_SFT\n  logging_steps: 100\n" + ("" if m == "phi3" else "  trainer_kwargs:\n    packing: True\n"))
               for m in ("aya", "llama3_1", "qwen3", "phi3")},
        }, U, "packing in three recipes of four"),
        Example({"torchtune/modules/tokenizers/_utils.py": (  # torchtune: messages tokenized until max_seq_len, then truncated
            "def tokenize_messages_no_special_tokens(tokenizer, messages, *, eos_id=None, max_seq_len=None):\n"
            "    tokenized_messages = []\n    for message in messages:\n        tokens = tokenizer.encode(message.text)\n"
            "        tokenized_messages.extend(tokens)\n"
            "        if max_seq_len is not None and len(tokenized_messages) >= max_seq_len:\n            break\n"
            "    if max_seq_len is not None:\n        tokenized_messages = truncate(tokenized_messages, max_seq_len, eos_id)\n"
            "    return tokenized_messages\n")}, N, "messages truncated at max_seq_len"),
        Example(_OLMO_CHUNK_READER, U, "fixed-size chunks of the concatenated token arrays"),
        Example(_PICOTRON_DATA, U, "group_texts through a functools.partial map callback"),
        Example({"lingua/data.py": _LINGUA_PACK.format(packer="pack_tokens", body=_LINGUA_PACKER),
                 "apps/main/train.py": _LINGUA_TRAIN}, U,
                "lingua: the token stream's own pack_tokens fills fixed-length sequences across documents"),
        Example({"lingua/data.py": _LINGUA_PACK.format(packer="pad_tokens", body=_LINGUA_PADDER),
                 "apps/main/train.py": _LINGUA_TRAIN}, N, "the same stream padding each document instead"),
        Example({"nanochat/dataloader.py": (  # nanochat: documents packed into B rows of T + 1 tokens by best fit, no padding
            "import torch\n\ndef tokenizing_distributed_data_loader_bos_bestfit(tokenizer, B, T, split, device=\"cuda\"):\n"
            "    row_capacity = T + 1\n    doc_buffer = []\n    row_buffer = torch.empty((B, row_capacity), dtype=torch.long)\n"
            "    while True:\n        for row_idx in range(B):\n            pos = 0\n            while pos < row_capacity:\n"
            "                remaining = row_capacity - pos\n                best_idx = _largest_fitting(doc_buffer, remaining)\n"
            "                if best_idx >= 0:\n                    doc = doc_buffer.pop(best_idx)\n                    doc_len = len(doc)\n"
            "                    row_buffer[row_idx, pos:pos + doc_len] = torch.tensor(doc, dtype=torch.long)\n"
            "                    pos += doc_len\n                else:\n                    doc = doc_buffer.pop(0)\n"
            "                    row_buffer[row_idx, pos:pos + remaining] = torch.tensor(doc[:remaining], dtype=torch.long)\n"
            "                    pos += remaining\n        yield row_buffer[:, :-1], row_buffer[:, 1:]\n")}, U, "rows filled with documents by hand"),
        Example({"src/llamafactory/data/mm_plugin.py": (  # one sample per row at a padding offset (left padding): no packing
            "import torch\n\ndef _pad_ids(input_ids, padding_side):\n    max_text_len = max(len(t) for t in input_ids)\n"
            "    out = torch.full((len(input_ids), max_text_len), -1, dtype=torch.long)\n"
            "    for batch_index, token_ids in enumerate(input_ids):\n        seq_len = len(token_ids)\n"
            "        pos = max_text_len - seq_len if padding_side == \"left\" else 0\n"
            "        out[batch_index, pos : pos + seq_len] = torch.tensor(token_ids, dtype=torch.long)\n    return out\n")}, N,
            "one sample per row at a padding offset"),
        Example({"data/collate.py": (  # one sample per row, right-padded: no packing
            "import torch\n\ndef collate(batch, pad_id, max_len):\n    out = torch.full((len(batch), max_len), pad_id, dtype=torch.long)\n"
            "    for i, ids in enumerate(batch):\n        out[i, :len(ids)] = torch.tensor(ids, dtype=torch.long)\n    return out\n")}, N,
            "one sample per padded row"),
        Example({"sft.py": (  # HF's padding-free collator: each batch flattened into one row, not filled up to the length
            "from transformers import AutoModelForCausalLM, DataCollatorWithFlattening, Trainer, TrainingArguments\n\n"
            "model = AutoModelForCausalLM.from_pretrained(args.model, attn_implementation=\"flash_attention_2\")\n"
            "collator = DataCollatorWithFlattening()\n"
            "trainer = Trainer(model=model, args=TrainingArguments(output_dir=\"out\", per_device_train_batch_size=8),\n"
            "                  train_dataset=train_ds, data_collator=collator)\ntrainer.train()\n")}, P,
            "DataCollatorWithFlattening: padding removed, samples not packed"),
        Example({"mm/train.py": (  # VideoLLaMA3: its own flattening collator, chosen by a switch that is on by default
            "import torch\nfrom dataclasses import dataclass, field\nfrom transformers import Trainer\n\n\n@dataclass\nclass DataArguments:\n"
            "    use_batch_flattening: bool = field(default=True)\n\n\n"
            "class DataCollatorWithFlatteningForSupervisedDataset(object):\n    def __call__(self, instances):\n"
            "        input_ids = torch.cat([x['input_ids'] for x in instances])\n"
            "        position_ids = torch.cat([torch.arange(len(x['input_ids'])) for x in instances])\n"
            "        return {'input_ids': input_ids[None], 'position_ids': position_ids[None]}\n\n\n"
            "def train(model, ds, args, data_args):\n    if data_args.use_batch_flattening:\n"
            "        collator = DataCollatorWithFlatteningForSupervisedDataset()\n"
            "    Trainer(model=model, args=args, train_dataset=ds, data_collator=collator).train()\n")},
            P, "a project's own flattening collator: padding removed, samples not packed"),
        Example(_flash_gated_flatten(), N, "the flattening collator is built only when FlashAttention-2 was requested, and no "
                "model asks for it (SDPA): batches stay padded"),
        Example(_flash_gated_flatten(", model_kwargs={'attn_implementation': 'flash_attention_2'}"), P,
                "the same flattening collator with the model loaded for FlashAttention-2: padding removed"),
        Example({p: t.format(on="true") for p, t in _UNPAD_WRAPPER.items()}, P,
                "flash-attn unpad_input on the token ids of each micro-batch: padding removed, not packed"),
        Example({p: t.format(on="false") for p, t in _UNPAD_WRAPPER.items()}, N, "unpad_input behind a switch that is off"),
        Example({"model/attention.py": (  # inside attention only: the MLPs still run on the padding
            "from flash_attn import flash_attn_varlen_func\nfrom flash_attn.bert_padding import pad_input, unpad_input\n\n\n"
            "def attention(q, k, v, attention_mask):\n    q_unpad, indices_q, cu_q, max_q = unpad_input(q, attention_mask)\n"
            "    k_unpad, _, cu_k, max_k = unpad_input(k, attention_mask)\n    v_unpad, _, _, _ = unpad_input(v, attention_mask)\n"
            "    return flash_attn_varlen_func(q_unpad, k_unpad, v_unpad, cu_q, cu_k, max_q, max_k)\n")}, N,
            "unpad_input on q/k/v inside attention is not padding removal of the batch"),
        Example(_vendored_fa2(), N, "transformers' _get_unpad_data in a vendored model, called only inside its flash-attention class"),
        Example(_vendored_fa2(
            "\n\ndef unpad_batch(batch):\n    indices, cu_seqlens, max_len = _get_unpad_data(batch['attention_mask'])\n"
            "    return {'input_ids': batch['input_ids'].flatten()[indices], 'cu_seqlens': cu_seqlens, 'max_seqlen': max_len}\n"),
            P, "the same helper also unpads each batch before the model"),
        Example({"sft.py": (
            "from trl import SFTConfig, SFTTrainer\n\n"
            "config = SFTConfig(output_dir=\"out\", padding_free=True, per_device_train_batch_size=8, max_length=4096)\n"
            "SFTTrainer(model=\"Qwen/Qwen2.5-7B\", args=config, train_dataset=ds).train()\n")}, P, "TRL padding_free without packing"),
        Example({  # AReaL: each padded micro-batch is packed into one varlen sequence by the project's own helper
            "pkg/utils/data.py": ("import torch\n\ndef pack_tensor_dict(data):\n    attention_mask = data['attention_mask']\n"
                                  "    lens = attention_mask.sum(dim=-1, dtype=torch.int32)\n"
                                  "    cu_seqlens = torch.cumsum(lens, dim=0, dtype=torch.int32)\n"
                                  "    input_ids = data['input_ids'][attention_mask.bool()]\n"
                                  "    return {'input_ids': input_ids, 'cu_seqlens': torch.nn.functional.pad(cu_seqlens, (1, 0))}\n"),
            "pkg/engine.py": ("from pkg.utils.data import pack_tensor_dict\n\nclass Engine:\n    def train_batch(self, mb_list):\n"
                              "        for mb in mb_list:\n            loss = self.model(**pack_tensor_dict(mb)).loss\n"
                              "            loss.backward()\n        self.optimizer.step()\n"),
        }, P, "the project's own helper unpads each batch into one varlen sequence"),
        Example({  # realhf 0.3.0: the training step builds cu_seqlens from the packed sequences' lengths
            "pkg/backend/megatron.py": (
                "import torch\n\n\nclass Engine:\n    def train_batch(self, input_, loss_fn):\n"
                "        input_lens = torch.tensor(input_.seqlens, dtype=torch.int32, device='cuda')\n"
                "        cu_seqlens = torch.nn.functional.pad(input_lens.cumsum(0), (1, 0)).int()\n"
                "        logits = self.ddp(packed_input_ids=input_.input_ids, cu_seqlens=cu_seqlens, max_seqlen=int(max(input_lens))).logits\n"
                "        loss_fn(logits, input_).backward()\n        self.optim.step()\n"),
        }, P, "the training step feeds the model one varlen batch with cu_seqlens"),
        Example({"sft.py": (
            "from trl import SFTConfig, SFTTrainer\n\n"
            "config = SFTConfig(output_dir=\"out\", packing=True, padding_free=True, max_length=4096)\n"
            "SFTTrainer(model=\"Qwen/Qwen2.5-7B\", args=config, train_dataset=ds).train()\n")}, U, "TRL packing with padding_free"),
        Example(_DYN_PACKING, U, "token-budget micro-batches concatenated into one varlen row"),
        Example({**_DYN_PACKING, "pkg/arguments.py": _DYN_PACKING["pkg/arguments.py"].replace(
            "dyn_bsz: bool = field(default=True)", "dyn_bsz: bool = field(default=False)")}, N,
                "the same collator with dynamic batching off"),
        Example(_BUDGET_PACKING, U, "samples bin-packed into token-budget batches, one varlen row for flash-attn"),
        Example({**_BUDGET_PACKING, "pkg/model.py": (
            "import torch.nn.functional as F\n\n\ndef attention(q, k, v, mask):\n"
            "    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)\n")}, N,
                "the same token-budget sampler feeding padded batches: no varlen attention"),
        # a Megatron-Core demo on synthetic data: nothing real is packed
        Example({"examples/megatron/run_demo.py": _MEGATRON_DEMO.format(cls="MockGPTDataset")}, N,
                "Megatron dataset builder over MockGPTDataset"),
        Example({"examples/megatron/run_demo.py": _MEGATRON_DEMO.format(cls="GPTDataset")}, U,
                "the same builder over GPTDataset: documents concatenated into seq_length samples"),
        Example(_PACK_HELPER, N, "a library packing helper whose only caller packs under a config switch that defaults to False"),
        Example({**_PACK_HELPER, "mylib/sft_config.py": _PACK_HELPER["mylib/sft_config.py"].replace("default=False", "default=True")}, U,
                "the same helper with packing on by default"),
    )

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if ctx.project.notes.get("dual_encoder_only"):
            # a contrastive image-text dual encoder embeds each caption on its own and matches it to its image: packing
            # several captions into one sequence would merge the texts the loss tells apart
            return None
        return super().recommendation_priority(ctx, outcome)

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list[Evidence] = []
        off: list[Evidence] = []
        pack_settings = f.effective(*_PACK_KEYS)
        minority = _minority_recipes(pack_settings, f)
        skipped = _skipped_preparation(f)
        inert: list[Evidence] = []  # TRL ``packing: true`` that a ``skip_prepare_dataset`` keeps from running
        for s in pack_settings:
            t = truthy(s.value)
            if t is True or (s.name == "concat_tokens" and (as_number(s.value) or 0) > 0):
                if (s.rank > 0 or s.source == "argparse-default") and s.path not in minority:
                    (inert if skipped is not None and s.name == "packing" else used).append(f.ev(s))
            elif t is False and s.rank > 0:
                off.append(f.ev(s))
        minority_note = ""
        if minority:
            on_n, set_n = minority[next(iter(minority))]
            shown = ", ".join(sorted(minority)[:3]) + (f" (+{len(minority) - 3})" if len(minority) > 3 else "")
            minority_note = (f"; packing is on in {on_n} of the {set_n} recipes of that family ({shown}), not the majority "
                             "(a recipe that leaves it unset runs without packing)")
        for e in f.config("dataset.packed"):
            (used if truthy(e.value) else off).append(_ev(e, key=e.dotted, value=e.value))
        # a packing dataset behind a switch every config leaves off (torchtune: ``if packed: return PackedDataset(...)``
        # with ``packed: False`` in its recipes) is library support, not packing
        # (a builder over a synthetic dataset, Megatron's ``BlendedMegatronDatasetBuilder(MockGPTDataset, ...)`` in a
        # demo script, packs no real samples)
        packers = [c for c in f.calls(*_PACK_CALLS) if not _in_tests(c.path) and not _mock_dataset_arg(c)]
        # a project's own packing dataset: ``ConcatDataset(dataset, chunk_size=context_length)`` (llama-recipes) cuts the
        # concatenated samples into fixed-length chunks; torch's ``ConcatDataset([a, b])`` joins datasets and has no length
        packers += [c for c in f.calls_where(lambda n: bool(_PACK_CLASS.search(n))) if set(c.kwargs) & _CHUNK_KWARGS
                    and not _in_tests(c.path) and c not in packers]
        packers += [c for c in _megatron_style_datasets(f) if c not in packers]
        gated = [c for c in packers if guard_off(f, c)]
        used += [_ev(c, key=c.short) for c in packers if c not in gated]
        # a strategy option whose value names packing (llama-recipes ``batching_strategy: str = "packing"``)
        strategies: list[str] = []
        strategy_ev: list[Evidence] = []
        for s in f.effective(*_STRATEGY_KEYS):
            # a string, or an enum member (LLaMA-Factory v1 ``batching_strategy = BatchingStrategy.NORMAL``)
            v = (s.value.text.rsplit(".", 1)[-1] if isinstance(s.value, Expr) else s.value) if s.value is not None else None
            if not isinstance(v, str) or (isinstance(s.value, Expr) and not re.fullmatch(r"[\w.]+", s.value.text)):
                continue
            v = v.strip().lower().replace("-", "_")
            strategies.append(v)
            if _packs(v):
                strategy_ev.append(f.ev(s))
            elif v in ("padding", "pad") and s.rank > 0:
                off.append(f.ev(s))
        # recipes that each demonstrate one strategy (LLaMA-Factory v1: normal, dynamic_batching, padding_free,
        # dynamic_padding_free) are judged by their majority, like other switches
        packing_on = len(strategy_ev) * 2 > len(strategies)
        strategy_note = "" if packing_on or not strategy_ev else \
            f"; a packing batching strategy in {len(strategy_ev)} of {len(strategies)} settings (not the majority)"
        if packing_on:
            used += strategy_ev
        # padding-free packing written by hand: a collator that concatenates a minibatch into one row and restarts
        # ``position_ids`` per sample (``position_ids.extend(range(len(item)))``, instructlab-training's
        # ``mb_collate_fn``), the ``DataCollatorWithFlattening`` pattern for flash-attention varlen kernels; not when a
        # batching-strategy option picks something else by default (then that collator is one option among several)
        hand_packers = not strategies or packing_on
        for c in f.calls("extend") if hand_packers else ():
            if (c.name.rsplit(".", 1)[0].endswith("position_ids") and c.loop and c.args and not _in_tests(c.path)
                    and re.match(r"(list\()?(range|torch\.arange)\(", _text(c.args[0]))):
                used.append(_ev(c, key="position_ids", value=_text(c.args[0])))
        buffers = _token_buffers(f) + _row_fillers(f)
        if minority and buffers:
            # the recipes vote packing off; a hand-written token buffer no switch turns on (oumi's pretraining datasets
            # concatenate documents into seq_len windows) serves the few recipes that use those datasets: context, not the runs
            b = buffers[0]
            minority_note += (f"; a token-buffer packer exists at {b.path}:{b.line}"
                              f"{f' (+{len(buffers) - 1})' if len(buffers) > 1 else ''} for the datasets that use it")
        else:
            used += buffers
        # a packing ``.map`` after an early return on a switch that is off (``if not self.config.pack_samples: return
        # dataset`` with ``pack_samples: bool = False``) is an option, not the run's packing
        # (a callback named only for concatenation must see a batch to join samples: MiniCPM's AWQ calibration
        # ``data.map(concatenate_data)`` joins one sample's instruction and output into its text; ``group_texts`` runs batched)
        maps = [c for c in f.calls("map") if "." in c.name and c.args and not _in_tests(c.path) and _packing_map(f, c)]
        maps_off = [c for c in maps if guard_off(f, c) or callers_off(f, c, hops=2)]
        train_files = ctx.project.training_files
        off_path: list[Any] = []
        for c in maps:
            if c in maps_off:
                continue
            # when the training path's own packing is switched off, a packing ``.map`` in a module no entry point reaches
            # (arctic-training's ``causal_factory.py`` for ``type: causal`` while the trainer defaults to SFT) is another
            # mode's data path, not this run's
            if train_files and c.path not in train_files and any(x.path in train_files for x in maps_off):
                off_path.append(c)
                continue
            used.append(_ev(c, key=".map()", value=_text(c.args[0])))
        # the same grouping called directly (levanter's ``TokenSeqDataset.__iter__`` runs each cached document batch through
        # ``concatenate_and_group_texts(doc, self.seq_len, ...)`` and carries the remainder into the next one)
        grouped = [c for c in f.calls(*_GROUP_TEXTS) if _GROUP_TEXTS_NAME.match(c.short) and not _in_tests(c.path)
                   and not guard_off(f, c) and not callers_off(f, c, hops=2)]
        used += [_ev(c, key=f"{c.short}()") for c in grouped[:5]]
        # a token stream's own packer (lingua ``lingua/data.py``: ``pack_tokens`` fills a buffer of ``output_seq_len`` tokens
        # across documents and yields it whole)
        packers = [c for c in f.calls(*_PACK_FUNCS) if not _in_tests(c.path) and not guard_off(f, c) and not callers_off(f, c, hops=2)]
        used += [_ev(c, key=f"{c.short}()") for c in packers[:5]]
        map_note = ""
        if maps_off:
            c = maps_off[0]
            map_note = f"; packing at {c.path}:{c.line} is behind a switch that is off"
            if off_path:
                map_note += f", and {off_path[0].path}:{off_path[0].line} packs in a module the training path does not reach"
        if "llamafactory" in ctx.project.frameworks and not f.effective("packing"):
            used += [_ev(e, key=e.dotted, value=e.value) for e in f.config("stage") if e.value == "pt"]
        used += _data_path_ev(f)
        # a pre-tokenized token stream read as one contiguous sequence (nanoGPT's memmap, modded-nanogpt's
        # ``torch.from_file`` header + ``readinto`` of a shard) is packed by construction: windows cut across documents
        # (also fixed-size chunks read by byte range out of the concatenated arrays: OLMo ``_read_chunk_from_memmap``)
        # (and a whole shard read as one array of ids, llm.c ``np.frombuffer(f.read(), dtype=np.uint16)`` sliced B*T+1 at a time)
        # (and a ``.npy`` shard of ids loaded whole, build-nanogpt ``load_tokens``, sliced the same way)
        # (not one sample's own file loaded in ``__getitem__``: AnyGPT's SoundStorm ``tokens = torch.from_numpy(np.load(file))``)
        used += [_ev(c, key=_bin_key(c)) for c in _token_bins(f)
                 if (c.short in ("memmap", "from_file", "readinto", "load") and not (c.short == "load" and c.func == "__getitem__")
                     # (an array of rows loaded whole, LongAlign's ``input_ids = ... np.load('inputs.npy')``, is indexed one sample
                     # per row: packed only if its preparation packed it)
                     and not (c.short == "load" and not _TOKEN_STREAM.search(f"{c.text} {c.func or ''}")))
                 or (c.short == "frombuffer" and (_CHUNK_FUNC.search(c.func or "") or (c.args and _text(c.args[0]).endswith(".read()"))))]
        used += _token_windows(f)
        if not used:
            used += _dynamic_packing(f)
        if not used:
            used += _budget_packing(f)
        if not used:
            # samples concatenated into one row with xformers' block-diagonal causal mask from their lengths (mistral-finetune
            # ``BlockDiagonalCausalMask.from_seqlens(seqlens)``): packed, with attention kept inside each sample
            # (not ``from_seqlens([q_len] * bsz)``: equal rows cut into blocks for local attention, Unsloth's sliding window)
            used += [_ev(c, key=c.short) for c in f.calls(*_BLOCK_DIAG) if not _in_tests(c.path) and not guard_off(f, c)
                     and (not ctx.project.training_files or c.path in ctx.project.training_files)
                     and c.args and not re.search(r"\]\s*\*", _text(c.args[0]))]
        if used:
            return Outcome(U, _unique_ev(used), "short samples packed into full-length sequences" + minority_note, {"packing": True})
        if inert and skipped is not None:
            x = inert[0]
            return Outcome(N, [*inert, _ev(skipped, key="dataset_kwargs", value="skip_prepare_dataset")],
                           f"packing is set ({x.path}:{x.line}) but does not run: dataset_kwargs skip_prepare_dataset "
                           f"({skipped.path}:{skipped.line}) makes TRL's SFTTrainer skip the dataset preparation where it packs, "
                           "so the collator's padded batches are what trains", {"packing": False})
        minority_note += map_note
        # padding removed without packing (lmms-engine / verl ``use_rmpad: true``: each batch unpadded into one varlen sequence
        # for flash attention): no FLOPs on padding, but samples are not concatenated up to the sequence length, so the tokens
        # per step vary with the samples drawn
        unpad = [s for s in f.effective(*_UNPAD_KEYS) if s.rank > 0 and not _in_tests(s.path)]
        unpad_on = [s for s in unpad if truthy(s.value) is True]
        unpad_few = _minority_recipes(unpad, f)
        if unpad_few:
            # padding removal in a few recipes of a family whose other recipes leave it unset (alignment-handbook:
            # ``padding_free: true`` in one DPO recipe of 22): an option those recipes take, not the project's runs
            on_n, set_n = unpad_few[next(iter(unpad_few))]
            minority_note += f"; padding removal ({unpad_on[0].key.lstrip('-')}) is on in {on_n} of the {set_n} recipes of that family, not the majority"
            unpad_on = []
        if unpad_on and len(unpad_on) * 2 > len(unpad):
            return Outcome(P, [f.ev(s) for s in unpad_on] + off,
                           f"padding removed ({unpad_on[0].key.lstrip('-')}: true in {len({s.path for s in unpad_on})} of {len({s.path for s in unpad})} "
                           f"settings: unpadded varlen batches) but samples are not packed up to the sequence length" + minority_note,
                           {"packing": False, "remove_padding": True})
        # ``DataCollatorWithFlattening`` concatenates each batch into one row for flash-attention varlen kernels: the same
        # padding removal, with as many samples per batch as the batch size says
        # (and a project's own collator named for it: VideoLLaMA3 ``DataCollatorWithFlatteningForSupervisedDataset``, chosen by
        # ``use_batch_flattening: bool = True``, concatenates a batch and restarts ``position_ids`` per sample)
        flatten = [c for c in [*f.calls(*_UNPAD_CALLS), *f.calls_where(lambda n: "WithFlattening" in n and n not in _UNPAD_CALLS)]
                   if not _in_tests(c.path) and not guard_off(f, c) and not _needs_unchosen_flash(f, c)]
        # flash-attn's ``unpad_input`` applied to the token ids before the model runs (``sequences_fwd, ... =
        # unpad_input(sequences.unsqueeze(-1), attention_mask=attention_mask)`` then ``self.model(sequences_fwd,
        # position_ids=...)``): the whole forward skips padding; on q/k/v inside an attention layer it does not
        # ...when the model's forward does it unconditionally or under switches that are on (a helper behind a flag whose
        # value cannot be read, such as an argparse default reached through ``strategy.args.ds.packing_samples``, is not
        # claimed)
        flatten += [c for c in f.calls("unpad_input") if c.args and _TOKEN_IDS_ARG.match(_text(c.args[0])) and not _in_tests(c.path)
                    and not callers_off(f, c) and _switched_on(f, c)]
        if flatten:
            c = flatten[0]
            return Outcome(P, [_ev(x, key=x.short) for x in flatten] + off,
                           f"padding removed ({c.short} at {c.path}:{c.line} flattens each batch into one varlen row) but "
                           "samples are not packed up to the sequence length" + minority_note,
                           {"packing": False, "remove_padding": True})
        varlen = _own_unpadding(f)
        if varlen:
            c = varlen[0]
            return Outcome(P, [_ev(x, key=f"{x.func}() -> cu_seqlens") for x in varlen] + off,
                           f"padding removed ({c.func}() at {c.path}:{c.line} packs each padded batch into one varlen sequence with "
                           "cu_seqlens) but samples are not packed up to the sequence length" + minority_note,
                           {"packing": False, "remove_padding": True})
        values: dict[str, object] = {"packing": False}
        if uses_hf_trainer(f) and not {"trl", "llamafactory", "axolotl", "unsloth"} & set(ctx.project.frameworks):
            values["advice_for"] = "hf-trainer"  # a script around transformers' Trainer: its own collator, not TRL's flags
        # every sample padded to the full length by the training path's tokenizer (baize ``tokenizer(prompt, truncation=True,
        # max_length=CUTOFF_LEN + 1, padding="max_length")``): no packing, and the padding itself is the cost
        training = ctx.project.training_files
        padded = [c for c in _tokenizer_calls(f) if c.kwargs.get("padding") == "max_length" and (not training or c.path in training)
                  and not guard_off(f, c)]
        if padded:
            # (cited at the keyword's own line of a call written over several lines)
            cited = [Evidence(x.path, x.kw_line("padding"), 'padding="max_length"', "padding", "max_length") for x in padded[:5]]
            values["advice_for"] = "max-length-padding"
            values["padding"] = "max_length"
            more = f" (+{len(padded) - 1})" if len(padded) > 1 else ""
            return Outcome(N, off + cited,
                           f"no sequence packing, and every sample is padded to the full max_length (padding=\"max_length\" at "
                           f"{cited[0].path}:{cited[0].line}{more}): each batch costs the whole sequence length" + minority_note, values)
        grouped = [f.ev(s) for s in f.effective("group_by_length", "group_by_modality_length") if truthy(s.value) and s.rank > 0]
        if grouped:
            return Outcome(N, off + grouped, "batches are grouped by length, which trims padding but does not pack samples", values)
        return Outcome(N, off, ("packing explicitly disabled" if off else "no sequence packing found") + strategy_note + minority_note,
                       values)


_ASSIGNED = lazy_compile(r"^(\w+)\s*=")


def _taken_into_lists(f: Facts, c: Call) -> bool:
    """``ds = load_dataset(..., streaming=True)`` whose only reads in that function copy its first rows into Python lists
    before training (trlx ``[pair["translation"]["en"] for pair in train_dataset.take(20000)]``): no streaming at training
    time."""
    m = _ASSIGNED.match(c.text)
    ff = f.files.get(c.path)
    if not m or ff is None:
        return False
    name = m.group(1)
    later = [x for x in ff.calls if x.func == c.func and x.line > c.line]
    takes = [x for x in later if x.name.endswith(f"{name}.take")]
    # every read is a list comprehension over ``take(n)``, and the dataset itself is handed to no call (a trainer, a loader)
    return bool(takes) and all(re.search(rf"\[.*\bfor\b.*\bin\s+{name}\.take\(", x.text) for x in takes) and not any(
        getattr(v, "text", None) == name for x in later for v in (*x.args, *x.kwargs.values()))


_UNPAD_KEYS = ("use_rmpad", "rmpad", "remove_padding", "use_remove_padding", "padding_free")
#: a project's own helper that turns a padded batch into one varlen sequence (AReaL ``pack_tensor_dict``:
#: ``cu_seqlens = torch.cumsum(lens, dim=0, dtype=torch.int32)`` from the attention mask's row sums)
_UNPAD_FUNC = lazy_compile(r"(?i)(^|_)(un)?pack(ed)?(_|$)|unpad|flatten|rmpad|remove_pad|varlen")


#: a function of an attention layer: named for attention, transformers' ``_upad_input`` (q/k/v unpadding of its
#: flash-attention classes), or one that calls the varlen kernel or gathers q/k/v rows itself
_ATTENTION_SCOPE = lazy_compile(r"(?i)attention|attn|^_upad_input$")
_ATTENTION_CALLS = ("flash_attn_varlen_func", "flash_attn_varlen_qkvpacked_func", "flash_attn_varlen_kvpacked_func", "index_first_axis")


def _in_attention(f: Facts, c: Call) -> bool:
    """A call made inside an attention layer (see :data:`_ATTENTION_SCOPE`)."""
    if _ATTENTION_SCOPE.search(c.func or ""):
        return True
    return bool(c.func) and any(x.path == c.path and x.func == c.func for x in f.calls(*_ATTENTION_CALLS))


def _own_unpadding(f: Facts) -> list[Call]:
    """``cu_seqlens = ...cumsum(...)`` inside a project function named for packing/unpadding that code outside tests calls:
    padding removal by the project itself (the same partial as ``use_rmpad``), cited at the cumsum."""
    out = []
    for c in f.calls("torch.cumsum", "cumsum"):
        if not (c.func and _UNPAD_FUNC.search(c.func) and re.match(r"\s*cu_seqlens\w*\s*=", c.text) and not _in_tests(c.path)):
            continue
        callers = [x for x in f.calls(c.func) if x.func != c.func and not _in_tests(x.path)]
        # transformers' ``_get_unpad_data(attention_mask)`` copied into a model file, called only by its flash-attention
        # class's ``_upad_input`` on q/k/v: unpadding inside attention, the other layers still run on padded tokens
        if callers and not all(_in_attention(f, x) for x in callers):
            out.append(c)
    if out:
        return out
    # the training step itself builds ``cu_seqlens`` from the sequence lengths and hands the model one varlen batch (realhf
    # ``train_batch``: ``cu_seqlens = pad(input_lens.cumsum(0), (1, 0))`` then ``self.engine.ddp(packed_input_ids=...,
    # cu_seqlens=cu_seqlens, max_seqlen=max_seqlen)`` before ``loss.backward()``), cited at the model call
    steps = {(c.path, c.func) for c in f.calls("backward") if c.func and not _in_tests(c.path)}
    sums = {(c.path, c.func) for c in f.calls("torch.cumsum", "cumsum") if (c.path, c.func) in steps}
    return [c for c in f.calls_with_kw("cu_seqlens") if (c.path, c.func) in sums]
#: collators that flatten each batch into one varlen row (no padding) without filling it up to the sequence length
_UNPAD_CALLS = ("DataCollatorWithFlattening",)
#: token-budget batching switches: each micro-batch is filled with samples up to ``micro_batch_size * max_seq_len`` tokens
_DYN_BSZ_KEYS = ("dyn_bsz", "use_dynamic_bsz", "dynamic_batching", "use_dynamic_batching")
#: padding-free concatenation of a batch into one varlen row, with cu_seqlens taken from the per-sample position ids
_FLAT_FA_CALLS = ("prepare_fa_kwargs_from_position_ids", "DataCollatorWithFlattening")


#: a test of whether FlashAttention was asked for (``self._is_flash_attention_requested()``, ``is_flash_attn_enabled(config)``)
_FLASH_TEST = lazy_compile(r"(?i)(^|[._])(is_|uses?_)?_?flash_?(attn|attention)\w*$")


def _needs_unchosen_flash(f: Facts, c: Call) -> bool:
    """Call ``c`` runs only when a FlashAttention test passes (its guard, early returns included, requires
    ``self._is_flash_attention_requested()``: sentence-transformers 6.3 builds ``DataCollatorWithFlattening`` only then) and
    nothing in the project chooses a FlashAttention kernel (D1's attention sites find no ``flash_attention_2/3``)."""
    node = parse_expr(c.guard) if c.guard else None
    if node is None:
        return False
    needs = False
    for t in node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]:
        neg = False
        while isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            neg, t = not neg, t.operand
        if neg or not isinstance(t, ast.Call):
            continue
        fn = t.func.attr if isinstance(t.func, ast.Attribute) else t.func.id if isinstance(t.func, ast.Name) else ""
        needs = needs or bool(_FLASH_TEST.search(fn))
    return needs and not ({"flash_attention_2", "flash_attention_3"} & attention_sites(f)[2])


def _dynamic_packing(f: Facts) -> list[Evidence]:
    """Dynamic (token-budget) batching that is on, together with a padding-free collation that concatenates each
    micro-batch into one varlen row (VeOmni ``dyn_bsz: bool = field(default=True)``: micro-batches filled up to
    ``micro_batch_size * max_seq_len`` tokens, then ``PackingCollator`` concatenates them and computes ``cu_seq_lens``
    with transformers' ``prepare_fa_kwargs_from_position_ids``): samples packed up to a token budget, without padding.
    Either half alone is not packing: token-budget batches padded to the longest sample, or varlen rows of a fixed
    number of samples (the partial padding removal below)."""
    dyn = [s for s in f.effective(*_DYN_BSZ_KEYS) if not _in_tests(s.path)]
    if not dyn or not all(truthy(s.value) is True for s in dyn):
        return []
    flat = [c for c in f.calls(*_FLAT_FA_CALLS) if not _in_tests(c.path) and not guard_off(f, c) and not callers_off(f, c)]
    if not flat:
        return []
    return [f.ev(dyn[0]), _ev(flat[0], key=flat[0].short)]
#: a batch sampler built from the samples' lengths and a tokens-per-batch budget (OpenChat/axolotl multipack:
#: ``MultipackDistributedSampler(lengths=..., batch_max_length=...)`` bin-packs whole samples first-fit-decreasing)
_LENGTHS_KW = frozenset({"lengths", "seq_lens", "seqlens", "sample_lengths", "seq_lengths"})
_TOKEN_BUDGET_KW = frozenset({"batch_max_length", "batch_max_len", "max_batch_tokens", "batch_max_tokens", "max_tokens_per_batch",
                              "tokens_per_batch", "token_budget", "batch_token_budget"})
#: xformers' attention bias for samples concatenated into one row (built from their lengths)
_BLOCK_DIAG = ("BlockDiagonalCausalMask.from_seqlens", "BlockDiagonalMask.from_seqlens",
               "xformers.ops.fmha.attn_bias.BlockDiagonalCausalMask.from_seqlens", "xformers.ops.fmha.BlockDiagonalCausalMask.from_seqlens")
#: varlen attention kernels that take the packed row's sample boundaries
_VARLEN_ATTN = ("flash_attn_varlen_func", "flash_attn_varlen_qkvpacked_func", "flash_attn_varlen_kvpacked_func")


def _budget_packing(f: Facts) -> list[Evidence]:
    """Samples bin-packed into token-budget batches by a sampler built from their lengths, with varlen attention over the
    concatenated batch (OpenChat: ``MultipackDistributedSampler(lengths=self.dataset["total_length"], ...,
    batch_max_length=batch_max_length)``, the batch concatenated into one row with ``cu_seqlens`` for
    ``flash_attn_varlen_func``): packed up to a token budget, without padding. Either half alone is not packing: a
    length-bucketing sampler pads its batches; varlen attention over a fixed number of samples is padding removal."""
    samplers = [c for k in sorted(_TOKEN_BUDGET_KW) for c in f.calls_with_kw(k) if set(c.kwargs) & _LENGTHS_KW
                and not _in_tests(c.path) and not guard_off(f, c) and not callers_off(f, c)]
    if not samplers:
        return []
    varlen = [c for c in f.calls(*_VARLEN_ATTN) if not _in_tests(c.path) and not guard_off(f, c)
              and any(k.startswith("cu_seqlens") for k in c.kwargs)]
    if not varlen:
        return []
    c = samplers[0]
    budget = next(k for k in c.kwargs if k in _TOKEN_BUDGET_KW)
    return [_ev(c, key=f"{c.short}({budget}=)", value=_text(c.kwargs[budget]))] + [_ev(v, key=v.short) for v in varlen[:3]]


def _switched_on(f: Facts, c: Call, hops: int = 1) -> bool:
    """The call runs: under ``if`` flags that are all known to be on (``if self.use_sample_packing:`` with
    ``use_sample_packing: true``), or unguarded in a model's ``forward``, or (``hops``) unguarded in a helper whose every
    caller runs it so."""
    flags = guard_flags(c.guard)
    if not c.guard:
        if c.func == "forward" or not hops or not c.func or c.func.startswith("_"):
            return c.func == "forward"
        # a helper (OpenRLHF ``unpad_and_slice_tensor``) every caller of which runs it: in a ``forward`` under
        # ``if self.packing_samples:``, the flag on in the launches
        callers = [x for x in f.calls(c.func) if x.func != c.func and not _in_tests(x.path)]
        return bool(callers) and all(_switched_on(f, x, hops - 1) for x in callers)
    return bool(flags) and all(flag_state(f, name) is (not neg) for name, neg in flags)


#: the first argument of ``unpad_input`` when it unpads the token ids of a batch (not q/k/v inside attention)
_TOKEN_IDS_ARG = lazy_compile(r"^(input_ids|sequences|tokens|token_ids)\b")
_WINDOW_KWARGS = ("block_size", "seq_len", "seq_length", "sequence_length", "max_seq_len")


#: transformers' ``run_clm`` grouping and its relatives: concatenate a batch of documents and cut it into fixed-length
#: blocks (``group_texts``, ``concatenate_and_group_texts``)
_GROUP_TEXTS = ("group_texts", "concatenate_and_group_texts")
_GROUP_TEXTS_NAME = lazy_compile(r"^(concatenate_and_)?group_texts$")
#: a pre-training token stream's packer, named for what it does: documents' tokens concatenated into fixed-length
#: sequences. (``pack_sequences`` is left out: ludwig's and RLinf's pack samples only in an opt-in mode that the call
#: graph does not show as off)
_PACK_FUNCS = ("pack_tokens",)


def _packing_map(f: Facts, c: Call) -> bool:
    """A ``.map`` whose callback packs samples: ``group_texts``/``pack*``, or a ``concat*`` callback run ``batched=`` (one
    example at a time it can only join one sample's own fields)."""
    cb = _map_callback(f, c)
    if re.search(r"group_texts?|pack", cb, re.I):
        return True
    batched = c.kwargs.get("batched")
    return bool(re.search(r"concat", cb, re.I)) and (truthy(batched) is True or isinstance(batched, Expr))


#: a project's own batch loader class (``DataLoaderLite``, ``DistributedDataLoader``), not torch's ``DataLoader``
_OWN_LOADER = lazy_compile(r"^\w+(DataLoader|Loader)\w*$|^\w*(DataLoader|Loader)\w+$")


def _token_windows(f: Facts) -> list[Evidence]:
    """A dataset class of a module that reads token ids out of a byte buffer (``np.frombuffer`` at an offset), built with a
    window length (modalities ``PackedMemMapDatasetContinuous(raw_data_path=..., block_size=sequence_length + 1)``): fixed
    windows cut from the token stream across documents, packed by construction. A reader of whole documents by index
    (built without a window length) is not."""
    mods: tuple[str, ...] = ()
    for c in _token_bins(f):
        if c.short == "frombuffer":
            parts = c.path[:-3].split("/") if c.path.endswith(".py") else []
            mods += tuple(".".join(parts[i:]) + "." for i in range(len(parts) - 1))
    if not mods:
        return []
    return [_ev(c, key=f"{c.short}({k}=)", value=_text(c.kwargs[k])) for c in f.records("calls")
            if c.name.startswith(mods) and not _in_tests(c.path) for k in _WINDOW_KWARGS if k in c.kwargs][:5]


def _minority_recipes(settings: list[Any], f: Facts | None = None) -> dict[str, tuple[int, int]]:
    """Recipe files (YAML/JSON) that turn a packing switch on when most recipes that set it turn it off (lmms-engine: ``packing:
    true`` in 7 of 21 example configs): path -> (recipes on, recipes that set it). Such a switch is an option a few recipes
    demonstrate, not how the project's runs go; at least three recipes must turn it off. Empty otherwise."""
    on: set[str] = set()
    off: set[str] = set()
    for s in settings:
        # a launch script that passes the switch (verl: ``actor_rollout_ref.model.use_remove_padding=True`` in 83 of its
        # 126 example launches) is a recipe as well
        if not (s.source == "launcher" or (s.source == "config" and s.path.endswith((".yaml", ".yml", ".json")))) or _in_tests(s.path):
            continue
        t = truthy(s.value)
        if t is True:
            on.add(s.path)
        elif t is False:
            off.add(s.path)
    off -= on
    if on and f is not None:
        # recipes of the same family that leave the switch unset run with it off: packing is off by default in every trainer
        # (TRL ``packing``, axolotl ``sample_packing``, LLaMA-Factory ``packing``; oumi: ``packing: True`` in 1 of 159 recipes)
        off |= set(f.sibling_recipes({p for p in on | off if p.endswith((".yaml", ".yml", ".json"))})) - on
    if not on or len(off) < 3 or len(on) * 2 > len(on) + len(off):
        return {}
    return {p: (len(on), len(on) + len(off)) for p in on}


_SEQ_LEN = r"[\w.]*(seq_len|seq_length|max_len|max_length|max_seq_len|max_seq_length|block_size|context_len\w*|chunk_size|sequence_length|n_ctx)"


def _token_buffers(f: Facts) -> list[Evidence]:
    """Packing written by hand as a token buffer (torchtitan ``HuggingFaceTextDataset.__iter__``): every document's tokens
    are appended to one buffer in the sample loop (``self._inputs_buffer.extend(sample_tokens)``) and full ``seq_len``
    samples are cut from its head while it holds one (``while len(self._inputs_buffer) >= self.seq_len:``), the remainder
    carried over, so samples are concatenated across documents with no padding. The ``extend`` line is the evidence."""
    out: list[Evidence] = []
    # each file's ``len(...)`` and ``append(...)`` calls by function, gathered in one pass over a file that extends in a loop
    by_file: dict[str, dict[str | None, list[Call]]] = {}
    for c in f.calls("extend"):
        buf = c.name.rsplit(".", 1)[0]
        if c.loop is None or _in_tests(c.path) or buf == c.name:
            continue
        funcs = by_file.get(c.path)
        if funcs is None:
            funcs = by_file[c.path] = {}
            for x in f.files[c.path].calls:
                if x.short in ("len", "append"):
                    funcs.setdefault(x.func, []).append(x)
        here = funcs.get(c.func, [])
        if not any(x.short == "len" and buf in x.text for x in here):
            continue  # no length test on this buffer: nothing is cut from it
        named = re.search(r"(?i)buf|token|ids", buf.rsplit(".", 1)[-1])
        # the buffer is cut while it holds a full sample, the remainder carried to the next document: not per-document truncation
        # (``while``: full samples cut off repeatedly; ``if len(tokens) >= max_seq_len: break`` is truncation)
        site = next((x for x in here if x.short == "len" and (m := _BUF_WHILE.search(x.text)) and m.group(1) == buf), None) \
            if named else None
        if site is None:
            # or, whatever its name, once it holds a full sample its head is kept as one (Baichuan-7B ``data.extend(cc)`` then
            # ``if len(data) >= self.micro_batch_size * (self.max_length + 1): self.data.append(data[:index])``): documents
            # concatenated into fixed-length samples, the test and the kept head both after the extend
            site = next((x for x in here if x.line > c.line and x.short == "len" and (m := _BUF_IF.search(x.text))
                         and m.group(1) == buf), None)
            if site is not None and not any(x.short == "append" and x.line > site.line and x.args
                                            and (m := _BUF_HEAD.match(_text(x.args[0]))) and m.group(1) == buf for x in here):
                site = None
        if site is not None:
            out.append(_ev(c, key="token buffer", value=f"{buf} cut into {_SEQ_LEN_NAME.search(site.text).group(0)} samples at line {site.line}"))
    return out


_SEQ_LEN_NAME = lazy_compile(_SEQ_LEN + r"\w*")
#: ``while len(buf) >= seq_len``, ``if len(buf) >= micro_batch_size * (max_length + 1)``, ``buf[:n]`` (the buffer's name in
#: group 1: one compiled pattern for every buffer)
_BUF_WHILE = lazy_compile(r"^\s*while\s+\(?\s*len\(\s*([\w.]+)\s*\)\s*>=?\s*" + _SEQ_LEN)
_BUF_IF = lazy_compile(r"^\s*if\s+\(?\s*len\(\s*([\w.]+)\s*\)\s*>=?\s*[^:#]*?" + _SEQ_LEN)
_BUF_HEAD = lazy_compile(r"^([\w.]+)\[\s*:")

#: ``row[i, pos:pos + n] = torch.tensor(doc)``: a document's tokens written into a row at a running offset
_ROW_FILL = lazy_compile(r"\[[^\]=]*?\b((?:pos|position|offset|cursor|cur|ptr|fill)\w*)\s*:\s*\1\s*\+\s*\w+\s*\]\s*=(?!=)[^#]*"
                       r"\b(doc|tokens?|ids|sample)", re.I)


def _row_fillers(f: Facts) -> list[Evidence]:
    """Packing written by hand as rows filled document after document (nanochat's BOS-aligned best-fit loader:
    ``row_buffer[row_idx, pos:pos + doc_len] = torch.tensor(doc)`` then ``pos += doc_len`` until the row holds ``T + 1``
    tokens): documents share a fixed-length row with no padding. The write at a running offset, in a streaming loader
    or a data module, is the evidence."""
    out: list[Evidence] = []
    for c in f.calls("torch.tensor", "torch.as_tensor", "torch.from_numpy", "numpy.array", "numpy.asarray"):
        if _in_tests(c.path) or not _ROW_FILL.search(c.text):
            continue
        # the documents are drawn one after another from a buffer or a stream (``doc_buffer.pop(i)``, ``next(docs)``) in the
        # same function, not one sample per row written at a padding offset (LLaMA-Factory's left padding: ``start:start + n``)
        draws = any(x.func == c.func and (x.short == "pop" or x.name == "next") for x in f.files[c.path].calls)
        if draws and (_STREAM_LOADER.search(c.func or "") or _ONLINE_FUNCS.match(c.func or "") or "data" in c.path.lower()):
            out.append(_ev(c, key="documents written into fixed-length rows"))
    return out


# ---------------------------------------------------------------------------------------
# F8
# ---------------------------------------------------------------------------------------


@register
class F8MemoryMappedData(_DataCheck):
    id = "F8"
    title = "Memory-mapped data"
    title_zh = "内存映射数据"
    bottlenecks = (Bottleneck.DATA_IO, Bottleneck.MEMORY)
    priority = Priority.LOW
    benefit = "large data files paged in on demand and shared between loader workers instead of copied into each process"
    what = (
        "Whether large data files are memory-mapped: `np.memmap`, `np.load(mmap_mode=)`, `mmap.mmap`, "
        "`torch.load(mmap=True)`, Megatron `MMapIndexedDataset` / indexed `--data-path`, `load_from_disk`/Arrow memory "
        "maps (also `datasets.load_dataset` on the training path, whose Arrow cache is memory-mapped, unless streamed, "
        "loaded with `keep_in_memory=True` or copied out with `.to_pandas()`), safetensors read in `__getitem__`. Loading a whole file into memory (`np.load` without `mmap_mode`, "
        "`json.load`) is not use."
    )
    why = (
        "Reading a multi-GB corpus into Python objects costs start-up time and host RAM on every rank and every worker "
        "(fork copy-on-write breaks on Python refcounts). Memory-mapped files are shared through the page cache: HF "
        "datasets documents loading the 18 GB English Wikipedia with about 9 MB of RAM thanks to Arrow memory mapping."
    )
    fix = ("Store token ids in a flat binary or Arrow file and open it with `np.memmap(path, dtype=np.uint32, mode='r')` (`np.uint16` "
           "only for a vocabulary under 65,536 tokens: Llama-3's 128K and GLM-4's 151K ids do not fit), `np.load(path, "
           "mmap_mode='r')` for `.npy` arrays, `load_from_disk`, or an indexed dataset.")
    fix_zh = ("将 token id 存为扁平二进制或 Arrow 文件，用 `np.memmap(path, dtype=np.uint32, mode='r')`（仅当词表小于 65,536 时才可用 "
              "`np.uint16`：Llama-3 的 128K、GLM-4 的 151K 词表放不下）、`.npy` 数组用 `np.load(path, mmap_mode='r')`、"
              "`load_from_disk` 或索引数据集按需读取。")
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://huggingface.co/docs/datasets/about_arrow", "https://numpy.org/doc/stable/reference/generated/numpy.memmap.html")
    snippets = {"python": ("import numpy as np\n\n# uint16 only when every token id is below 65,536 (GPT-2's 50K vocabulary, not Llama-3's 128K)\n"
                           "tokens = np.memmap(\"train.bin\", dtype=np.uint32, mode=\"r\")\n")}
    examples = (
        Example({"train.py": "import numpy as np\ndata = np.memmap('data/train.bin', dtype=np.uint16, mode='r')\n"}, U, "np.memmap"),
        Example({"ds.py": "import numpy as np\ntokens = np.load('tokens.npy', mmap_mode='r')\n"}, U, "mmap_mode"),
        Example({"train.py": "from datasets import load_from_disk\nds = load_from_disk('/data/tokenized')\n"}, U, "arrow load_from_disk"),
        Example({"verl/utils/dataset/rl_dataset.py": (  # HF datasets memory-map their Arrow cache
            "import datasets\n\ndef _read_files(data_files):\n    frames = []\n    for parquet_file in data_files:\n"
            "        frames.append(datasets.load_dataset(\"parquet\", data_files=parquet_file)[\"train\"])\n"
            "    return datasets.concatenate_datasets(frames)\n")}, U, "load_dataset: Arrow cache"),
        Example({"data.py": (
            "from datasets import load_dataset\n\nrows = load_dataset('json', data_files='train.jsonl', split='train').to_pandas()\n"
            "stream = load_dataset('HuggingFaceFW/fineweb', split='train', streaming=True)\n")}, N, "copied to pandas; streamed"),
        Example({"data/fineweb.py": (  # modded-nanogpt: a download-and-tokenize script off the training path writes .bin shards
            "import numpy as np\nfrom datasets import load_dataset\n\nfw = load_dataset('HuggingFaceFW/fineweb', name='sample-10BT', split='train')\n"
            "np.array(tokens, dtype=np.uint16).tofile('fineweb_train_000001.bin')\n"),
            "train_gpt.py": (
            "import torch\n\ndef _load_data_shard(file):\n    header = torch.from_file(str(file), False, 256, dtype=torch.int32)\n"
            "    with file.open('rb', buffering=0) as f:\n        tokens = torch.empty(int(header[2]), dtype=torch.uint16, pin_memory=True)\n"
            "        f.seek(256 * 4)\n        f.readinto(tokens.numpy())\n    return tokens\n\nloss.backward()\n")}, N,
            "a preparation script's load_dataset is not the training's read"),
        Example({"ds.py": "import numpy as np\ntokens = np.load('tokens.npy')\n"}, N, "np.load into memory"),
        Example({"myrl/dataset/dataset.py": (  # skyrl-train's prompt dataset: the parquet table is copied into RAM
            "import datasets\n\nclass PromptDataset:\n    def __init__(self, source):\n"
            "        self.dataframe = datasets.load_dataset(\"parquet\", data_files=source, keep_in_memory=True)[\"train\"]\n")},
            N, "load_dataset(keep_in_memory=True): held in RAM, not memory-mapped"),
        Example({"ds.py": "import numpy as np\ntokens = np.load('tokens.npy', mmap_mode=None)\n# np.memmap('x.bin')\n"}, N, "mmap_mode None, commented"),
        Example({"lavis/common/utils.py": (  # LAVIS 1.0.2: a generic loader whose mmap_mode no caller passes
            "import numpy as np\n\n\ndef load_file(filename, mmap_mode=None, verbose=True, allow_pickle=False):\n"
            "    if filename.endswith('.npy'):\n        if mmap_mode:\n"
            "            return np.load(filename, allow_pickle=allow_pickle, encoding='latin1', mmap_mode=mmap_mode)\n"
            "        return np.load(filename, allow_pickle=allow_pickle, encoding='latin1')\n"),
                 "lavis/datasets/builder.py": "from lavis.common.utils import load_file\n\nann = load_file('annotations/train.npy')\n"},
                N, "mmap_mode forwarded by a helper no caller asks to map"),

        Example({"swift/tuners/utils.py": (  # a weight spilled to disk through a memmap opened to write
            "import numpy as np\n\ndef offload_weight(weight, weight_name, offload_folder, index=None):\n"
            "    array = weight.cpu().numpy()\n    tensor_file = os.path.join(offload_folder, f\"{weight_name}.dat\")\n"
            "    file_array = np.memmap(tensor_file, dtype=array.dtype, mode='w+', shape=array.shape)\n"
            "    file_array[:] = array[:]\n    file_array.flush()\n    return index\n")}, N, "a memmap opened to write is not a read"),
        Example({"swift/tuners/utils.py": (  # offloaded model weights read back through a memmap: not training data
            "import numpy as np\nimport torch\n\ndef load_offloaded_weight(weight_file, weight_info):\n"
            "    shape = tuple(weight_info['shape'])\n"
            "    weight = np.memmap(weight_file, dtype=weight_info['dtype'], shape=shape, mode='r')\n    return torch.tensor(weight)\n")},
                N, "memory-mapped model weights are not data"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        # a memmap opened to write (``mode='w+'``: ms-swift's ``offload_weight`` spilling a weight to disk, a prepare script
        # writing train.bin) is not a read of data, and one that holds model weights (``load_offloaded_weight``) is not data
        used: list[Evidence] = [_ev(c, key="np.memmap") for c in _memmap_calls(f)
                                if _text(c.kwargs.get("mode", c.args[2] if len(c.args) > 2 else "r")).strip("'\"") not in ("w+", "w")
                                and not _WEIGHT_FUNC.search(c.func or "")]
        for c in f.calls("numpy.load"):
            if c.kwargs.get("mmap_mode") not in (None, "None") and not _in_tests(c.path) and not _unpassed_param(f, c, "mmap_mode"):
                used.append(_ev(c, key="np.load(mmap_mode=)", value=_text(c.kwargs["mmap_mode"])))
        for c in f.calls("torch.load"):
            if truthy(c.kwargs.get("mmap")):
                used.append(_ev(c, key="torch.load(mmap=)", value=True))
        other = _other_disk_io(f)
        used += [_ev(c, key=c.short) for c in f.calls("mmap.mmap", "MMapIndexedDataset", "IndexedDataset", "load_from_disk",
                                                          "pyarrow.memory_map", "datasets.Dataset.from_file")
                 if not _in_tests(c.path) and (c.path, c.line, c.name) not in other]
        used += [_ev(c, key=c.short) for c in f.calls("safetensors.safe_open", "safetensors.torch.load_file") if c.func in {"__getitem__", "__init__"}]
        used += _data_path_ev(f)
        # ``datasets.load_dataset`` (not streaming) writes an Arrow cache and memory-maps it (verl's parquet prompts,
        # rl_dataset.py:174); not when the rows are copied out at once (``.to_pandas()``, ``.to_list()``)
        # on the training path only: a download-and-tokenize script (modded-nanogpt ``data/fineweb.py``) writes ``.bin``
        # shards that training then reads its own way
        train = ctx.project.training_files
        # ``keep_in_memory=True`` copies the table into RAM instead of memory-mapping its cache
        arrow = [c for c in f.calls("datasets.load_dataset") if not _in_tests(c.path) and truthy(c.kwargs.get("streaming")) is not True
                 and truthy(c.kwargs.get("keep_in_memory")) is not True
                 and not re.search(r"\.(to_pandas|to_list|to_dict)\(", c.text) and (not train or c.path in train)
                 and not _OFFLINE_PATH.search(c.path)]
        used += [_ev(c, key="load_dataset (Arrow cache, memory-mapped)") for c in arrow]
        if used:
            return Outcome(U, _unique_ev(used), "data read through memory maps", {"mmap": True})
        return Outcome(N, [], "no explicit memory-mapped data access found", {"mmap": False})


# ---------------------------------------------------------------------------------------
# F9
# ---------------------------------------------------------------------------------------


# OpenChat's dataset (round 14): an IterableDataset that reads the epoch's whole parquet table in ``__init__`` and iterates
# a sampler over the in-memory arrays
_EPOCH_TABLE_DATASET = (
    "import glob\n\nimport pyarrow.parquet as pq\nfrom torch.utils.data import IterableDataset\n\n\n"
    "class EpochDataset(IterableDataset):\n    def __init__(self, dataset_filename, sampler):\n        super().__init__()\n"
    "        table = pq.read_table(dataset_filename, memory_map=True)\n"
    "        self.dataset = {k: v.to_numpy() for k, v in zip(table.column_names, table.columns)}\n"
    "        self.sampler = sampler\n        self._epoch = 0\n\n"
    "    def __iter__(self):\n"
    "        for indices in self.sampler.iter(self._epoch):\n            yield {k: v[indices] for k, v in self.dataset.items()}\n"
)


@register
class F9StreamingDatasets(_DataCheck):
    id = "F9"
    title = "Streaming datasets"
    title_zh = "流式数据集"
    bottlenecks = (Bottleneck.DATA_IO, Bottleneck.MEMORY)
    priority = Priority.LOW
    benefit = "training starts immediately and data size is not bounded by local disk or RAM"
    what = (
        "Whether data is streamed rather than materialised: `IterableDataset` subclasses, `load_dataset(..., "
        "streaming=True)`, LLaMA-Factory `streaming: true`, WebDataset, MosaicML/LitData `StreamingDataset`, tf.data "
        "record readers. `streaming: false` is not use."
    )
    why = (
        "For TB-scale pre-training corpora, downloading and converting the full dataset before step 0 takes hours and "
        "local disk the cluster may not have; streaming reads shards on demand (MosaicML reports deterministic, "
        "resumable streaming from object storage at full training throughput). For small SFT sets this matters little."
    )
    fix = "For large corpora, stream: `load_dataset(..., streaming=True)` (LLaMA-Factory `streaming: true` with `max_steps`), WebDataset shards, or MosaicML `StreamingDataset` over MDS shards."
    fix_zh = "大规模语料使用流式加载：`load_dataset(..., streaming=True)`（LLaMA-Factory 设置 `streaming: true` 并配合 `max_steps`）、WebDataset 分片，或 MosaicML `StreamingDataset` + MDS 分片。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://huggingface.co/docs/datasets/stream", "https://docs.mosaicml.com/projects/streaming/en/stable/")
    snippets = {
        "python": "from datasets import load_dataset\n\nds = load_dataset(\"HuggingFaceFW/fineweb\", split=\"train\", streaming=True)\n",
        "hf-yaml": "streaming: true\nmax_steps: 10000\n",
    }
    examples = (
        Example({"data.py": "from datasets import load_dataset\nds = load_dataset('HuggingFaceFW/fineweb', split='train', streaming=True)\n"}, U, "hf streaming"),
        Example({"data.py": "import torch\nfrom torch.utils.data import IterableDataset\n\nclass ShardStream(IterableDataset):\n    def __iter__(self):\n        yield from self.read()\n"}, U, "iterable subclass"),
        Example({"pt.yaml": "stage: pt\nstreaming: true\nmax_steps: 1000\n"}, U, "llamafactory streaming"),
        Example({"pt.yaml": "stage: pt\nstreaming: false\n"}, N, "streaming false"),
        Example({"data.py": "from torch.utils.data import IterableDataset\ndef check(ds):\n    return isinstance(ds, IterableDataset)\n"}, N, "isinstance only"),
        Example({  # LLaMA-Factory: streaming only when a run sets ``streaming: true``; the switch defaults off
            "src/llamafactory/hparams/data_args.py": (
                "from dataclasses import dataclass, field\n\n@dataclass\nclass DataArguments:\n"
                "    streaming: bool = field(default=False, metadata={\"help\": \"Enable dataset streaming.\"})\n"),
            "src/llamafactory/data/loader.py": (
                "from datasets import load_dataset\n\ndef _load_single_dataset(dataset_attr, model_args, data_args, training_args):\n"
                "    dataset = load_dataset(path=dataset_attr.dataset_name, split=dataset_attr.split,\n"
                "                           streaming=data_args.streaming and dataset_attr.load_from != \"file\")\n"
                "    if data_args.streaming and dataset_attr.load_from == \"file\":\n"
                "        dataset = dataset.to_iterable_dataset(num_shards=training_args.dataloader_num_workers)\n"
                "    return dataset\n"),
        }, N, "streaming behind a switch that defaults off"),
        Example({"examples/ppo_translation_t5.py": (  # trlx: the stream's first rows copied into lists before training
            "import trlx\nfrom datasets import load_dataset\n\n\ndef main():\n"
            "    train_dataset = load_dataset('wmt16', 'de-en', split='train', streaming=True)\n"
            "    src = [pair['translation']['en'] for pair in train_dataset.take(20000)]\n"
            "    trlx.train(prompts=src, config=config)\n\n\nif __name__ == '__main__':\n    main()\n")},
                N, "a stream's first rows taken into Python lists before training"),
        Example({"train.py": (
            "from datasets import load_dataset\nfrom torch.utils.data import DataLoader\n\n\ndef main():\n"
            "    train_dataset = load_dataset('allenai/c4', 'en', split='train', streaming=True)\n"
            "    loader = DataLoader(train_dataset.take(100000), batch_size=8)\n"
            "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n")},
                U, "a stream handed to the DataLoader"),
        Example({"src/llama_cookbook/datasets/toxicchat_dataset.py": (  # rows iterated once to write JSONL: not streaming training
            "import datasets\n\ndef get_toxicchat_dataset(dataset_config, tokenizer, split, return_jsonl=False):\n"
            "    dataset = datasets.load_dataset(\"lmsys/toxic-chat\", \"toxicchat0124\", split=split)\n"
            "    jsonl_data = []\n    for x in dataset.to_iterable_dataset():\n"
            "        jsonl_data.append({\"prompt\": x[\"user_input\"]})\n    return jsonl_data\n")}, N, "iterated to convert rows"),
        Example({"pkg/dataset.py": _EPOCH_TABLE_DATASET}, N, "an IterableDataset over a whole parquet table read in __init__"),
        Example({"pkg/dataset.py": _EPOCH_TABLE_DATASET.replace(
            "        table = pq.read_table(dataset_filename, memory_map=True)\n"
            "        self.dataset = {k: v.to_numpy() for k, v in zip(table.column_names, table.columns)}\n",
            "        self.files = sorted(glob.glob(dataset_filename))\n").replace(
            "        for indices in self.sampler.iter(self._epoch):\n            yield {k: v[indices] for k, v in self.dataset.items()}\n",
            "        for path in self.files:\n            for batch in pq.ParquetFile(path).iter_batches(batch_size=1024):\n"
            "                yield batch.to_pydict()\n")}, U, "the same class reading row groups of its shards as it iterates"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list[Evidence] = []
        # the training path's code decides (not a tokenizer-corpus script, a distillation tool or an embedding side tool), and
        # a streaming call behind a switch that is off by default is an option (LLaMA-Factory ``if data_args.streaming:``
        # ``dataset.to_iterable_dataset(...)`` with ``streaming: bool = False``)
        train = ctx.project.training_files

        def live(x: Any) -> bool:
            return not _in_tests(x.path) and (not train or x.path in train) and not (
                isinstance(x, Call) and (guard_off(f, x) or main_block_only(f, x)))

        materialised: list[Call] = []
        optional: list[Call] = []  # an IterableDataset built only behind a switch the run leaves off
        for r in f.refs("IterableDataset"):
            if _PACKING_WRAPPER.match(r.text):
                # TRL's packing wrapper, copied into many fine-tuning scripts (octopack's StarCoder ``class
                # ConstantLengthDataset(IterableDataset)`` over ``load_dataset(..., streaming=args.streaming)``): it packs the
                # samples of the dataset it wraps; whether that dataset streams is the loader's choice, read below
                continue
            if r.text.lstrip().startswith("class ") and live(r) and not _never_built(f, r):
                builds = _builds(f, r)
                if builds and all(guard_off(f, c) for c in builds):
                    optional += builds
                    continue
                load = _whole_file_init(f, r)
                if load is not None:
                    materialised.append(load)
                    continue
                used.append(_ev(r, key="IterableDataset subclass"))
        used += [_ev(c, key="load_dataset(streaming=)", value=True) for c in f.calls("load_dataset")
                 if truthy(c.kwargs.get("streaming")) and live(c) and not _taken_into_lists(f, c)]
        off: list[Evidence] = []
        for s in f.effective("streaming"):
            if _not_training_file(s.path):
                continue
            t = truthy(s.value)
            if t and s.rank > 0 and s.source != "call":
                used.append(f.ev(s))
            elif t is False and s.rank > 0 and s.source != "call":
                off.append(f.ev(s))
        # (a WebDataset pipeline, ``wds.DataPipeline(wds.SimpleShardList(urls), ...)`` in OpenCLIP's and UniTok's loaders, is an
        # IterableDataset over tar shards read as they come)
        used += [_ev(c, key=c.short) for c in f.calls("webdataset.WebDataset", "webdataset.DataPipeline", "streaming.StreamingDataset",
                                                          "litdata.StreamingDataset",
                                                          "tf.data.TFRecordDataset", "tensorflow.data.TFRecordDataset", "to_iterable_dataset",
                                                          "IterableDataset.from_generator") if live(c)
                 and not (c.short == "to_iterable_dataset" and c.text.lstrip().startswith("for "))]  # iterated to convert rows
        used += [_ev(c, key=c.short) for c in streaming_subclass_calls(f) if live(c)]
        if used:
            return Outcome(U, _unique_ev(used), "data streamed during training", {"streaming": True})
        if materialised and not off:
            c = materialised[0]
            return Outcome(N, [_ev(x, key=x.short) for x in materialised], f"the IterableDataset reads its whole data file into "
                           f"memory when it is built ({c.short} at {c.path}:{c.line}) and iterates over it: not streamed",
                           {"streaming": False})
        if optional and not off:
            c = optional[0]
            return Outcome(N, [_ev(x, key=x.short) for x in optional],
                           f"the streaming dataset ({c.short}) is built only when `{(c.guard or '').strip()}` holds "
                           f"({c.path}:{c.line}), a switch the run leaves off", {"streaming": False})
        # the training script's own ``streaming`` option, handed to ``load_dataset(streaming=data_args.streaming)`` and left at
        # its default False by every launch (Llama-Chinese ``pretrain_clm.py``: ``streaming: bool = field(default=False)``)
        switch = [c for c in f.calls("load_dataset") if isinstance(c.kwargs.get("streaming"), Expr) and live(c)]
        if switch and not off:
            ran = [s for s in f.effective("streaming") if s.rank > 0 and not _not_training_file(s.path)]
            defaults = [s for s in f.settings("streaming") if s.source in ("field-default", "argparse-default")
                        and truthy(s.value) is False and s.path in {c.path for c in switch}] if not ran else []
            if defaults:
                c, d = switch[0], defaults[0]
                return Outcome(N, [_ev(c, key="load_dataset(streaming=)"), f.ev(d)], f"streaming is an option of the training "
                               f"script (load_dataset(streaming={c.kwargs['streaming'].text}) at {c.path}:{c.line}), off by default "
                               f"({d.name}=False at {d.path}:{d.line}) and turned on by no launch", {"streaming": False,
                                                                                                     "advice_for": "script-option"})
        return Outcome(N, off, "streaming explicitly disabled" if off else "no streaming dataset found", {"streaming": False})


def _disk_cache(f: Facts, training: Any) -> list[tuple[Call, Call]]:
    """Build-once caches of the training data: ``torch.save(x, path)`` where ``not os.path.exists(path)``, beside a
    ``torch.load(path)`` where it exists, in the same function of a training-path file (OmniQuant's ``main``:
    ``cache_dataloader = f'{args.cache_dir}/dataloader_...cache'``; ``if os.path.exists(cache_dataloader): dataloader =
    torch.load(cache_dataloader)`` ... ``else: dataloader, _ = get_loaders(...); torch.save(dataloader, cache_dataloader)``).
    Not in an evaluation function (its test split's cache)."""
    out: list[tuple[Call, Call]] = []
    # (also a project's own pickle cache: Firefly-LLaMA2-Chinese's ``self.save_to_disk(data_list, cache_file)`` and
    # ``self.load_from_disk(cache_file)`` under ``os.path.exists(cache_file)``)
    loads = f.calls("torch.load", "self.load_from_disk")
    for sv in f.calls("torch.save", "self.save_to_disk"):
        if len(sv.args) < 2 or not isinstance(sv.args[1], Expr) or (training and sv.path not in training):
            continue
        if INFERENCE_PATH.search((sv.func or "") + ".py"):
            continue
        where = sv.args[1].text
        if f"os.path.exists({where})" not in (sv.guard or ""):
            continue
        for ld in loads:
            if (ld.path, ld.func) == (sv.path, sv.func) and ld.args and isinstance(ld.args[0], Expr) and ld.args[0].text == where \
                    and f"os.path.exists({where})" in (ld.guard or "").replace(f"not (os.path.exists({where}))", ""):
                out.append((sv, ld))
                break
    return out


#: the methods an evaluation harness calls on the model it scores (lm-evaluation-harness ``LM``/``BaseLM``): a tokenizer call in
#: them encodes benchmark prompts, not the training data
_EVAL_HARNESS_METHODS = frozenset({"tok_encode", "tok_batch_encode", "tok_decode", "loglikelihood", "loglikelihood_rolling",
                                   "generate_until", "greedy_until", "_loglikelihood_tokens", "_model_call", "_model_generate"})


#: a packing wrapper's class line (TRL's ``ConstantLengthDataset``)
_PACKING_WRAPPER = lazy_compile(r"\s*class\s+ConstantLength\w*Dataset\b")


def _builds(f: Facts, r: Any) -> list[Call]:
    """The calls that build the class defined at ref ``r`` (``PackedDataset(...)``), outside tests."""
    m = re.match(r"\s*class\s+(\w+)", r.text)
    return [c for c in f.calls(m.group(1)) if c.short == m.group(1) and not _in_tests(c.path)] if m else []


def _never_built(f: Facts, r: Any) -> bool:
    """An IterableDataset subclass (at ref ``r``) nothing in scope builds, names or registers: LLaVA-NeXT imports its copy of
    trl's ``trainer/utils.py`` for a collator, and that module also defines ``ConstantLengthDataset``, which only trl's
    ``SFTTrainer`` (not on the training path) builds."""
    m = re.match(r"\s*class\s+(\w+)", r.text)
    return m is not None and _class_never_built(f, r.path, r.line, m.group(1))


def _class_never_built(f: Facts, path: str, line: int, name: str) -> bool:
    """The class ``name`` defined at ``path:line`` is never built, named, subclassed or registered in scope, while the
    training path imports other names of its module (see :func:`_never_built`)."""
    # the project imports other names from that module (``from trl.trainer.utils import DPODataCollatorWithPadding``),
    # never this one: a module used for something else. A module nothing imports by name (a library's dataset classes
    # its configs build by string) is not judged this way
    mods = _module_names(path)
    # (a relative import names one module: ``from .utils import *`` in ``llava/model/quantization/`` is not VILA's
    # ``llava/trl/trainer/utils.py``)
    users = [i for i in f.records("imports") if i.name and i.path != path
             and (_absolute_module(i.module, i.path) in mods if i.module.startswith(".")
                  else any(m == i.module or m.endswith("." + i.module) for m in mods) if "." in i.module
                  # (a one-word ``from utils import *`` is a script's sibling module)
                  else i.path.rpartition("/")[0] == path.rpartition("/")[0] and path.endswith(f"/{i.module}.py"))]
    # (an import of the class by name is no use of it by itself: Firefly-LLaMA2-Chinese's ``train.py`` imports
    # ``IterableDataset`` from ``component/dataset.py`` and never builds it)
    if not users or any(i.name == "*" for i in users):
        return False
    if any(c.short == name for c in f.calls(name)):
        return False
    if any(x.line != line or x.path != path for x in f.refs(name)):
        return False
    if any(name in (b.rsplit(".", 1)[-1] for b in k.bases) and (k.path, k.line) != (path, line)
           for ff in f.files.values() for k in ff.classes):
        return False
    return not any(d.path == path and line - 3 <= d.line < line for d in f.records("decorators"))


#: reads of a whole data file into memory (a parquet/feather table, a DataFrame, a JSON document, a pickled or ``.npy`` array)
_WHOLE_FILE_READS = ("read_table", "read_parquet", "read_feather", "read_json", "read_csv", "json.load", "pickle.load", "torch.load",
                     "numpy.load")


def _whole_file_init(f: Facts, r: Any) -> Call | None:
    """The whole-file read in the ``__init__`` of the IterableDataset subclass defined at ``r`` (OpenChat's
    ``OpenchatDataset.__init__``: ``pq.read_table(dataset_filename, memory_map=True)`` then every column ``.to_numpy()``,
    iterated by a sampler): the data is materialised when the dataset is built, not streamed. The ``__init__`` is the first
    one after the class line (before the next class of the file); ``np.load(..., mmap_mode=...)`` maps, it does not read."""
    ff = f.files.get(r.path)
    if ff is None:
        return None
    inits = [c for c in ff.calls if c.func == "__init__" and c.line > r.line]
    if not inits:
        return None
    classes = [x.line for x in ff.refs if x.line > r.line and x.text.lstrip().startswith("class ")]
    end = min(classes) if classes else None
    for c in inits:
        if end is not None and c.line >= end:
            break
        if (c.short in _WHOLE_FILE_READS or c.name in _WHOLE_FILE_READS or any(c.name.endswith("." + n) for n in _WHOLE_FILE_READS)) \
                and "mmap_mode" not in c.kwargs:
            return c
    return None


# ---------------------------------------------------------------------------------------
# F10
# ---------------------------------------------------------------------------------------



@register
class F10PreTokenizedBinary(_DataCheck):
    id = "F10"
    title = "Pre-tokenized binary format"
    title_zh = "预分词二进制格式"
    bottlenecks = (Bottleneck.DATA_IO,)
    priority = Priority.LOW
    benefit = "training reads token ids directly: no text decoding or tokenization in the input pipeline"
    what = (
        "Whether training reads pre-tokenized binary data: Megatron indexed `.bin/.idx` (`--data-path ..._text_document`, "
        "`preprocess_data.py`, `MMapIndexedDataset`), nanoGPT-style `train.bin` token streams, MDS shards with token "
        "columns. Arrow/`save_to_disk` datasets are offline preprocessing (F6), not this flat token format."
    )
    why = (
        "Token ids in a flat binary file are 2-4 bytes per token and can be sliced without parsing; raw JSON text must be "
        "parsed and tokenized every time. Megatron-LM, GPT-NeoX and nanoGPT all train from pre-tokenized `.bin` files for "
        "this reason, which also makes sample boundaries and epochs deterministic across restarts."
    )
    fix = ("Tokenize the corpus once into a flat binary token format (Megatron `tools/preprocess_data.py` `.bin/.idx`, "
           "`np.memmap` uint16/uint32 token streams, MDS shards with token columns) and read token ids at training time.")
    fix_zh = "将语料一次性分词为扁平的二进制 token 格式（Megatron `tools/preprocess_data.py` 的 `.bin/.idx`、uint16/uint32 的 `np.memmap` token 流、含 token 列的 MDS 分片），训练时直接读取 token id。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://github.com/NVIDIA/Megatron-LM#data-preprocessing", "https://github.com/karpathy/nanoGPT/tree/master/data/openwebtext")
    snippets = {
        "shell": (
            "python tools/preprocess_data.py --input corpus.jsonl --output-prefix /data/corpus --tokenizer-type HuggingFaceTokenizer "
            "--tokenizer-model meta-llama/Llama-3.1-8B --workers 32 --append-eod\n"
        ),
    }
    examples = (
        Example(_OLMO_CHUNK_READER, U, "byte-range reads of a flat token array"),
        Example({"pretrain.sh": "DATA_PATH=/data/redpajama_text_document\ntorchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2 --data-path $DATA_PATH\n"}, U, "megatron prefix"),
        Example({"prep.sh": "python tools/preprocess_data.py --input data.jsonl --output-prefix /data/my --workers 16\n"}, U, "preprocess_data"),
        Example({"train.py": "import numpy as np\ntrain_data = np.memmap('data/train.bin', dtype=np.uint16, mode='r')\n"}, U, "nanogpt bin"),
        Example({"train.py": "import json\nrows = [json.loads(l) for l in open('train.jsonl')]\n"}, N, "raw jsonl"),
        Example({"sft.yaml": "stage: sft\ntokenized_path: null\n", "train.py": "import json\n# np.memmap('train.bin')\n"}, N, "tokenized_path null, commented"),
        Example({"train_gpt.py": _MODDED_READER}, U, "modded-nanogpt shard reader"),
        Example({"dev/data/data_common.py": _LLMC_WRITER}, U, "llm.c header + tobytes writer"),
        Example({"litgpt/data/tinyllama.py": (
            "from litdata.streaming import StreamingDataLoader, StreamingDataset, TokensLoader\n"
            "train_data = StreamingDataset(input_dir='data/slimpajama/train', item_loader=TokensLoader(block_size=2049), shuffle=True)\n"
            "loader = StreamingDataLoader(train_data, batch_size=8, pin_memory=True, num_workers=8, drop_last=True)\n")}, U, "litdata TokensLoader"),
        Example({"stats.py": (
            "import numpy as np\nfrom transformers import AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained('gpt2')\n"
            "lengths = np.array([len(tokenizer(t).input_ids) for t in texts])\nnp.save('tokenizer_length_stats.npy', lengths)\n")}, N,
            "tokenizer statistics saved, training data still raw"),
        Example({"xtuner/_lite/datasets/jsonl.py": (  # xtuner: a cache of each sample's token count beside JSONL text
            "import os\nimport numpy as np\nfrom torch.utils.data import Dataset\n\nclass JsonlDataset(Dataset):\n"
            "    def count_tokens(self, cache_dir=None):\n        num_tokens = np.array([len(self.tokenize_fn(d)['input_ids']) for d in self.dataset])\n"
            "        if cache_dir:\n            save_path = os.path.join(cache_dir, 'num_tokens.npy')\n            np.save(save_path, num_tokens)\n"
            "        return num_tokens\n    def __getitem__(self, i):\n        return self.tokenize_fn(self.dataset[i])\n")}, N,
            "a saved table of sample token counts, text tokenized per sample"),
        Example({"tools/tokenize_corpus.py": (  # token ids written as a flat uint32 array, with its offsets saved beside it
            "import numpy as np\n\ndef main(docs, tokenizer, out):\n    tokens = np.concatenate([tokenizer.encode(d) for d in docs]).astype(np.uint32)\n"
            "    offsets = np.cumsum([0] + [len(tokenizer.encode(d)) for d in docs])\n"
            "    np.save(f'{out}_tokens.npy', tokens)\n    np.save(f'{out}_offsets.npy', offsets)\n")}, U,
            "token ids saved with their offsets"),
        Example({"pkg/dataloader/dataset.py": _PBIN_DATASET}, U, "token ids read with np.frombuffer from a memmapped token file"),
        Example({"data/images.py": (  # raw image bytes decoded from a buffer: no token ids
            "import numpy as np\nimport cv2\n\ndef decode(raw: bytes):\n"
            "    arr = np.frombuffer(raw, dtype=np.uint8)\n    return cv2.imdecode(arr, cv2.IMREAD_COLOR)\n")}, N,
            "image bytes decoded with np.frombuffer"),
        Example({"mylib/data/data_loader.py": (  # a shuffled order of instances memory-mapped: positions, not token ids
            "import numpy as np\n\nclass NumpyDataLoader:\n    def get_global_indices(self):\n"
            "        return np.memmap(self._global_indices_file, mode=\"r\", dtype=np.uint32)\n\n"
            "    def build_and_save_global_indices(self):\n"
            "        indices = np.arange(self.total_size, dtype=np.uint32)\n        np.random.default_rng(self.seed).shuffle(indices)\n"
            "        indices.tofile(self._global_indices_file)\n")}, N, "an index file memory-mapped is not token data"),
        Example({"train_gpt.py": _MODDED_READER}, U, "a token shard mapped read-only with torch.from_file"),
        Example(_SHARED_HANDOFF, N, "files written each step through shared torch.from_file mappings are not pre-tokenized data"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list[Evidence] = _data_path_ev(f)
        for launch in f.launches():
            script = (launch.script or "").rsplit("/", 1)[-1]
            if "preprocess_data" in script or ("output_prefix" in launch.script_args and _OFFLINE_PATH.search(script)):
                used.append(_ev(launch, key=script))
        used += [_ev(c, key=c.short) for c in f.calls("MMapIndexedDataset", "IndexedDataset", "IndexedDatasetBuilder", "MMapIndexedDatasetBuilder",
                                                          "indexed_dataset.make_builder", "make_indexed_dataset") if not _in_tests(c.path)]
        used += [_ev(c, key=_bin_key(c)) for c in _token_bins(f)]
        for c in f.calls("streaming.MDSWriter"):
            cols = c.kwargs.get("columns")
            if isinstance(cols, dict) and any(re.search(r"token|input_ids|ids", k) for k in cols):
                used.append(_ev(c, key="MDSWriter(columns=)"))
        if used:
            return Outcome(U, _unique_ev(used), "training reads pre-tokenized binary data", {"pretokenized": True})
        return Outcome(N, [], "no pre-tokenized binary data found", {"pretokenized": False})


# ---------------------------------------------------------------------------------------
# F11
# ---------------------------------------------------------------------------------------


#: a helper that moves a batch to the GPU (``move_to_cuda(sample)``, ``to_device(batch, device)``, ``to_cuda``)
_MOVE_TO_DEVICE = lazy_compile(r"^(move_|copy_)?(batch_|sample_|data_)?to_(cuda|device|gpu)$", re.I)
#: LAVIS ``PrefetchLoader``: the next batch is moved by a helper inside ``with torch.cuda.stream(self.stream):`` and the
#: compute stream waits for it
_STREAM_PREFETCH_HELPER = {"lavis/datasets/dataloader_utils.py": (
    "import torch\nfrom lavis.datasets.data_utils import move_to_cuda\n\n\nclass PrefetchLoader(object):\n"
    "    def __init__(self, loader):\n        self.loader = loader\n        self.stream = torch.cuda.Stream()\n\n"
    "    def preload(self, it):\n        try:\n            self.batch = next(it)\n        except StopIteration:\n"
    "            self.batch = None\n            return\n        with torch.cuda.stream(self.stream):\n"
    "            self.batch = move_to_cuda(self.batch)\n\n"
    "    def next(self, it):\n        torch.cuda.current_stream().wait_stream(self.stream)\n        batch = self.batch\n"
    "        self.preload(it)\n        return batch\n"),
    "lavis/datasets/data_utils.py": (
        "def move_to_cuda(sample):\n    def _move_to_cuda(tensor):\n        return tensor.cuda()\n\n"
        "    return apply_to_sample(_move_to_cuda, sample)\n"),
}
_DATA_FUNC = lazy_compile(r"(prefetch|preload|load|next|iter|batch|data|fetch|input|sample)", re.I)
_DATA_FILE = lazy_compile(r"(data|loader|prefetch|input)", re.I)
#: a model's forward pass (``forward``, ``_forward``, ``__overlapped_load_forward``): copies on a side stream there move weights
_MODEL_FORWARD = lazy_compile(r"(^|_)forward$")
_NOT_DATA = lazy_compile(r"(model|module|param|optim|weight|grad|state|buffer|kv|cache|lora|offload|swap|checkpoint|ckpt|embed|layer)", re.I)


#: SpecForge: the offline capture drives SGLang's model runner (a request batch moved non_blocking before ``forward``); the
#: trainer's strategy moves each training batch with a plain ``.to(device)``
_ENGINE_CAPTURE = {
    "pkg/capture.py": (
        "from sglang.srt.managers.schedule_batch import ScheduleBatch\n"
        "from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode, ForwardBatch\n\n\n"
        "class CaptureBackend:\n    def __init__(self, model_runner):\n        self.model_runner = model_runner\n\n"
        "    def _forward_extend(self, reqs):\n        batch = ScheduleBatch.init_new(reqs=reqs, model_config=self.model_runner.model_config)\n"
        "        batch.prepare_for_extend()\n        if getattr(batch, 'prefill_input_ids_cpu', None) is not None:\n"
        "            batch.input_ids = batch.prefill_input_ids_cpu.to(batch.device, non_blocking=True)\n"
        "        forward_batch = ForwardBatch.init_new(batch, self.model_runner)\n"
        "        forward_batch.capture_hidden_mode = CaptureHiddenMode.FULL\n"
        "        return self.model_runner.forward(forward_batch)\n"),
    "pkg/strategy.py": (
        "class Strategy:\n    def __init__(self, model):\n        self.model = model\n\n"
        "    def forward_loss(self, batch, device):\n        input_ids = batch['input_ids'].to(device)\n"
        "        hidden = batch['hidden_state'].to(device)\n        return self.model(input_ids=input_ids, hidden_states=hidden)\n"),
    "pkg/trainer.py": (
        "def fit(strategy, loader, optimizer, device):\n    for batch in loader:\n"
        "        loss = strategy.forward_loss(batch, device)\n        loss.backward()\n        optimizer.step()\n"),
}

#: what a training step calls: a file with one of these trains (or drives a trainer), it does not only serve a model
_TRAIN_STEP = frozenset({"backward", "step", "fit", "train", "train_step", "training_step", "zero_grad", "clip_grad_norm_"})


def _engine_only_files(f: Facts, paths: set[str]) -> set[str]:
    """Of ``paths``, the files that drive an inference engine (import vLLM, SGLang, TensorRT-LLM...) and run no training step:
    a copy there moves an engine's request batch (``batch.input_ids = batch.prefill_input_ids_cpu.to(batch.device,
    non_blocking=True)`` before ``model_runner.forward``, in a hidden-state capture), not the training input pipeline."""
    out: set[str] = set()
    for i in f.imports(*_INFERENCE_ENGINES):
        if i.path in paths and i.path in f.files and not any(c.short in _TRAIN_STEP for c in f.files[i.path].calls):
            out.add(i.path)
    return out


#: Medusa 0.1: the decoding path reorders the GPU KV cache in place with ``copy_(..., non_blocking=True)`` (a module named for
#: the cache, a function of the inference path); training is an HF Trainer whose batch copies block
_KV_CACHE_COPIES = {
    "medusa/model/kv_cache.py": (
        "import torch\n\n\nclass KVCache:\n    def __init__(self, data, current_length):\n        self.data = data\n"
        "        self.current_length = current_length\n\n    def copy(self, indices, prev_length, dim=2):\n"
        "        tgt = self.data.index_select(dim, indices)\n        dst = self.data.narrow(dim, prev_length, tgt.shape[dim])\n"
        "        dst.copy_(tgt, non_blocking=True)\n        self.current_length.fill_(prev_length + tgt.shape[dim])\n"),
    "medusa/model/utils.py": (
        "def update_inference_inputs(input_ids, candidates, best_candidate, accept_length, retrieve_indices, outputs, logits,\n"
        "                            past_key_values_data, current_length_data):\n"
        "    prev_input_len = input_ids.shape[1]\n    select_indices = retrieve_indices[best_candidate, : accept_length + 1] + prev_input_len\n"
        "    tgt = past_key_values_data[..., select_indices, :]\n"
        "    dst = past_key_values_data[..., prev_input_len : prev_input_len + tgt.shape[-2], :]\n"
        "    dst.copy_(tgt, non_blocking=True)\n    return input_ids, logits\n"),
    "medusa/train/train.py": (
        "import transformers\nfrom transformers import Trainer\n\n\ndef train():\n"
        "    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
        "    (training_args,) = parser.parse_args_into_dataclasses()\n"
        "    trainer = Trainer(model=model, args=training_args, train_dataset=ds)\n    trainer.train()\n"),
}

#: ``name = torch.LongTensor(...)``: a tensor made from host data (the bound name in group 1)
_MADE_FROM_HOST = lazy_compile(r"^\s*(\w+)\s*=\s*torch\.(LongTensor|IntTensor|FloatTensor|tensor|as_tensor|from_numpy)\(")


@register
class F11AsyncH2D(_DataCheck):
    id = "F11"
    title = "Async H2D pipeline (non_blocking, streams)"
    title_zh = "H2D/D2H 异步流水线"
    bottlenecks = (Bottleneck.DATA_IO, Bottleneck.LATENCY)
    priority = Priority.LOW
    benefit = "host-to-device copies overlapped with compute instead of stalling each step"
    what = (
        "Whether batches move to the GPU asynchronously: `.to(device, non_blocking=True)`/`.cuda(non_blocking=True)` "
        "(partial: asynchronous but on the compute stream; so is accelerate's `non_blocking` dataloader option), or a prefetcher that copies the next batch on a separate `torch.cuda.Stream()` inside "
        "`with torch.cuda.stream(s):` (used). `non_blocking=False` is not use."
    )
    why = (
        "A blocking copy serialises PCIe transfer and compute every step. `non_blocking=True` from pinned memory lets the "
        "host run ahead; a side stream that prefetches batch N+1 while batch N computes hides the transfer entirely, as in "
        "NVIDIA's Apex/DALI data prefetchers. The gain is largest for large inputs (images, video, long contexts) and small "
        "models."
    )
    fix = "Pin loader memory and copy with `non_blocking=True`; for input-heavy workloads add a prefetcher that issues the next batch's copies on a side CUDA stream and `wait_stream`s before use."
    fix_zh = "DataLoader 开启 pin_memory，并以 `non_blocking=True` 拷贝；输入数据量大的场景增加预取器，在独立 CUDA stream 上提前拷贝下一批数据，使用前 `wait_stream` 同步。"
    fix_safety = FixSafety.SAFE
    references = ("https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html", "https://github.com/NVIDIA/apex/blob/master/examples/imagenet/main_amp.py")
    snippets = {
        "python": (
            "import torch\n\n\n"
            "class CUDAPrefetcher:\n"
            "    def __init__(self, loader):\n"
            "        self.loader = iter(loader)\n"
            "        self.stream = torch.cuda.Stream()\n"
            "        self.preload()\n\n"
            "    def preload(self):\n"
            "        self.batch = next(self.loader, None)\n"
            "        if self.batch is None:\n"
            "            return\n"
            "        with torch.cuda.stream(self.stream):\n"
            "            self.batch = {k: v.cuda(non_blocking=True) for k, v in self.batch.items()}\n\n"
            "    def next(self):\n"
            "        torch.cuda.current_stream().wait_stream(self.stream)\n"
            "        batch = self.batch\n"
            "        self.preload()\n"
            "        return batch\n"
        ),
    }
    examples = (
        Example({"prefetch.py": "import torch\n\nclass DataPrefetcher:\n    def __init__(self, loader):\n        self.loader = iter(loader)\n        self.stream = torch.cuda.Stream()\n"
                 "    def preload(self):\n        x, y = next(self.loader)\n        with torch.cuda.stream(self.stream):\n"
                 "            self.x = x.cuda(non_blocking=True)\n            self.y = y.cuda(non_blocking=True)\n"}, U, "stream prefetcher"),
        Example({"loader.py": "import torch\ns = torch.cuda.Stream()\ndef load_next(batch):\n    with torch.cuda.stream(s):\n        return batch.to('cuda', non_blocking=True)\n"}, U, "side-stream copy"),
        Example({"train.py": "for x, y in loader:\n    x = x.to(device, non_blocking=False)\n    y = y.to(device)\n"}, N, "non_blocking False"),
        Example({"train.py": "for batch in loader:\n    batch = {k: v.cuda() for k, v in batch.items()}\n    # x.cuda(non_blocking=True)\n"}, N, "blocking, commented"),
        Example({"train.py": "for x, y in loader:\n    x = x.to(device, non_blocking=True)\n    y = y.to(device, non_blocking=True)\n"}, P, "non_blocking only"),
        Example({"train.py": (  # Baichuan-7B: each batch a fresh tensor from a Python list, copied "non_blocking"
            "import numpy as np\nimport torch\n\n\nclass DataEngine:\n    def get_data(self):\n        data = self.data.pop(0)\n"
            "        seq = np.asarray(data).reshape(self.micro_batch_size, self.max_length + 1)\n        data = torch.LongTensor(seq)\n"
            "        data = data.cuda(non_blocking=True)\n        return data\n")}, N,
            "non_blocking from pageable memory: nothing pins the batch"),
        Example({"train.py": (
            "import numpy as np\nimport torch\n\n\nclass DataEngine:\n    def get_data(self):\n        data = self.data.pop(0)\n"
            "        seq = np.asarray(data).reshape(self.micro_batch_size, self.max_length + 1)\n        data = torch.LongTensor(seq).pin_memory()\n"
            "        data = data.cuda(non_blocking=True)\n        return data\n")}, P,
            "the same batch pinned first"),
        Example(_KV_CACHE_COPIES, N, "KV-cache moves at decoding (Medusa): no batch copied asynchronously; the Trainer's copies block"),
        Example({**_KV_CACHE_COPIES, "medusa/train/loader.py": (
            "def to_device(batch, device):\n    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}\n")}, P,
            "the same with a loader helper copying each batch non_blocking"),
        Example({"train.py": "import torch\ns = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    for _ in range(3):\n        model(static_x)\n"
                 "x = x.cuda(non_blocking=True)\n"}, P, "graph warm-up stream is not a prefetcher"),
        Example(_STREAM_PREFETCH_HELPER, U, "side-stream prefetcher copying through a move_to_cuda helper (LAVIS PrefetchLoader)"),
        Example({  # an RL framework: batches move with blocking copies; the async copies move parameters or a backward index
            "myrl/training_batch.py": (
                "import torch\n\n\nclass TensorBatch(dict):\n    def to(self, device=None, dtype=None, *, non_blocking: bool = False):\n"
                "        for key, value in self.items():\n            self[key] = value.to(device, dtype, non_blocking=non_blocking)\n"
                "        return self\n"),
            "myrl/workers/worker.py": (
                "import torch\n\n\ndef forward_micro_batch(model, micro_batch):\n    micro_batch.to(torch.cuda.current_device())\n"
                "    return model(micro_batch[\"sequences\"])\n"),
            "myrl/distributed/megatron_utils.py": (
                "import torch\n\n\ndef load_tensor_to_gpu(tensor, device_id):\n    tensor.data = tensor.data.to(device_id, non_blocking=True)\n\n\n"
                "class _AllGatherCP(torch.autograd.Function):\n    @staticmethod\n    def backward(ctx, grad_output):\n"
                "        index = torch.tensor([ctx.cp_rank], device=\"cpu\", pin_memory=True).cuda(non_blocking=True)\n"
                "        return grad_output.index_select(1, index)\n"),
        }, N, "blocking batch copies; async copies only of parameters and a backward index"),
        Example(_ENGINE_CAPTURE, N, "an SGLang request batch copied non_blocking in a hidden-state capture; the trainer's copy blocks"),
        Example({**_ENGINE_CAPTURE, "pkg/strategy.py": _ENGINE_CAPTURE["pkg/strategy.py"].replace(
            ".to(device)", ".to(device, non_blocking=True)")}, P, "the trainer's own batch copy is non_blocking"),
        Example({  # realhf 0.3.0: an offloaded frozen model streams its weights back on a side stream inside its forward, and
            # decoding copies the next tokens into a CUDA graph's static input buffers; batches arrive with a blocking .cuda()
            "pkg/nn/real_llm_api.py": (
                "import torch\n\n\nclass ReaLModel(torch.nn.Module):\n    def __overlapped_load_forward(self, x):\n"
                "        stream = torch.cuda.Stream()\n        with torch.cuda.stream(stream):\n"
                "            for layer in self.layers:\n                for k, v in layer.named_parameters():\n"
                "                    v.data.copy_(self._offload_buffer[self.spec[k]], non_blocking=True)\n"
                "        return self.layers(x)\n"),
            "pkg/nn/generate.py": (
                "def generate(model, input_buffers, graph, next_tokens, bs):\n"
                "    input_buffers['input_ids'][:bs].copy_(next_tokens, non_blocking=True)\n    graph.replay()\n"),
            "pkg/data_api.py": "def cuda(sample):\n    return {k: v.cuda() for k, v in sample.items()}\n",
            "pkg/train.py": "def step(model, batch, optim):\n    model(batch).loss.backward()\n    optim.step()\n",
        }, N, "side-stream weight streaming in a forward and CUDA-graph input buffers are not batch copies"),
        Example({  # layer weights streamed in on a copy stream by an offload module; each batch moves with a plain .to()
            "mylib/training/streaming_weight_offload.py": (
                "import torch\n\n\nclass StreamingWeightOffload:\n    def __init__(self):\n        self.h2d_stream = torch.cuda.Stream()\n\n"
                "    def _run_load(self, layer_state, slot):\n        with torch.cuda.stream(self.h2d_stream):\n"
                "            for group in layer_state.groups:\n                gpu_tensor = slot.gpu[group.dtype][: group.numel]\n"
                "                gpu_tensor.copy_(slot.pinned[group.dtype][: group.numel], non_blocking=True)\n"),
            "mylib/train.py": ("def train_step(model, optimizer, rows, device):\n    for row in rows:\n"
                               "        loss = model(row.to(device)).loss\n        loss.backward()\n        optimizer.step()\n"),
        }, N, "weights streamed in by an offload module are not batches"),
        Example({"mylib/train.py": (  # weights and optimizer state moved back after the GPU was lent to an inference engine
            "import torch\n\n\nclass TrainContext:\n    def reload_to_gpu(self, device=\"cuda:0\"):\n"
            "        for _, param in self.model.named_parameters():\n"
            "            gpu_tensor = torch.empty(param.shape, dtype=param.dtype, device=device)\n"
            "            gpu_tensor.copy_(param.data, non_blocking=True)\n            param.data = gpu_tensor\n"
            "        for state in self.optimizer.state.values():\n            for key, value in state.items():\n"
            "                gpu_tensor = torch.empty(value.shape, dtype=value.dtype, device=device)\n"
            "                gpu_tensor.copy_(value, non_blocking=True)\n                state[key] = gpu_tensor\n\n"
            "    def step(self, row):\n        loss = self.model(row.to(\"cuda:0\")).loss\n        loss.backward()\n        self.optimizer.step()\n")},
                N, "parameters and optimizer state copied back to the GPU are not batches"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        nb = [c for c in f.calls_with_kw("non_blocking") if self._on(f, c.kwargs["non_blocking"]) and self._data_copy(c)]
        engine = _engine_only_files(f, {c.path for c in nb})
        nb = [c for c in nb if c.path not in engine]
        streams = {c.path for c in f.calls("torch.cuda.Stream")}
        side: list[Call] = []
        for s in f.calls("torch.cuda.stream"):
            if s.path not in streams or s.func is None or not (_DATA_FUNC.search(s.func) or _DATA_FILE.search(s.path)):
                continue
            if _MODEL_FORWARD.search(s.func):
                continue  # a side stream inside a model's forward streams weights in (realhf ``__overlapped_load_forward``), not batches
            same = [c for c in nb if c.path == s.path and c.func == s.func and c.line >= s.line]
            if not same and s.path in f.files:
                # a prefetcher whose copy is a helper (``self.batch = move_to_cuda(self.batch)`` -> ``tensor.cuda()``) or a
                # plain ``.cuda()``: the copy runs on the side stream and the compute stream waits for it (``wait_stream``)
                here = f.files[s.path].calls
                if any(c.short == "wait_stream" for c in here):
                    same = [c for c in here if c.func == s.func and c.line > s.line and self._data_copy(c)
                            and (c.short == "cuda" or _MOVE_TO_DEVICE.search(c.short))]
            if same:
                side += [s, *same]
        values = {"non_blocking": bool(nb), "copy_stream": bool(side)}
        if side:
            return Outcome(U, [_ev(c, key=c.short) for c in side], "next batch copied on a side CUDA stream", values)
        partial = [_ev(c, key=f"{c.short}(non_blocking=)", value=True) for c in nb]
        partial += [_ev(e, key=e.dotted, value=e.value) for e in f.config("non_blocking") if truthy(e.value)]
        if nb and partial and all(self._built_here(f, c) for c in nb) and self._pageable(f):
            # Baichuan-7B ``data = torch.LongTensor(seq); data = data.cuda(non_blocking=True)``: from pageable memory the
            # driver stages the copy through a pinned buffer before the call returns, so the host waits as with a blocking one
            values["pageable"] = True
            c = nb[0]
            return Outcome(N, partial, f"`non_blocking=True` copies from pageable memory ({c.path}:{c.line}): nothing pins the "
                           "batches (no DataLoader, pin_memory or framework loader), so each copy is staged synchronously", values)
        if partial:
            values["non_blocking"] = True
            return Outcome(P, _unique_ev(partial), "asynchronous copies on the compute stream; no side-stream prefetch", values)
        off = [_ev(c, key=f"{c.short}(non_blocking=)", value=False) for c in f.calls_with_kw("non_blocking") if truthy(c.kwargs["non_blocking"]) is False]
        if off:
            return Outcome(N, off, "host-to-device copies are blocking (non_blocking=False)", values)
        return Outcome(N, off, "no non_blocking host-to-device copy was seen: batches are copied synchronously unless a "
                       "framework does it (check the loop's `.to(device)` calls)", values)

    @staticmethod
    def _built_here(f: Facts, c: Call) -> bool:
        """The copied tensor is made from host data just before, in the same function (``data = torch.LongTensor(seq)`` then
        ``data = data.cuda(non_blocking=True)``): a fresh tensor in pageable memory, not a batch a loader handed over."""
        receiver = c.name.rsplit(".", 1)[0] if "." in c.name else ""
        if not re.fullmatch(r"\w+", receiver) or c.path not in f.files:
            return False
        return any(x.func == c.func and x.line < c.line and (m := _MADE_FROM_HOST.match(x.text)) and m.group(1) == receiver
                   for x in f.files[c.path].calls)

    @staticmethod
    def _pageable(f: Facts) -> bool:
        """Nothing in the project could pin a batch: no DataLoader or ``deepspeed.initialize(training_data=...)`` (whose
        loader pins), no ``pin_memory`` anywhere (a keyword, a ``.pin_memory()`` call, a config key) and no HF Trainer
        (``dataloader_pin_memory`` is on by default)."""
        if any(not _in_tests(c.path) for c in f.calls("DataLoader", "torch.utils.data.DataLoader", "StatefulDataLoader")):
            return False
        if f.calls_with_kw("pin_memory") or f.calls_with_kw("training_data") or f.calls("pin_memory"):
            return False
        if f.effective("pin_memory", "dataloader_pin_memory", "pin_mem") or uses_hf_trainer(f):
            return False
        return True

    @staticmethod
    def _data_copy(c: Call) -> bool:
        """A copy of input data, not of a model, optimizer state or offloaded parameters (library internals)."""
        receiver = c.name.rsplit(".", 1)[0] if "." in c.name else ""
        if _in_tests(c.path):
            return False
        # inside a data loader a ``gpu_buffer`` is a staging buffer of batches (nanochat's
        # ``tokenizing_distributed_data_loader_with_state``), not a model's buffer or state
        if _STREAM_LOADER.search(c.func or "") or _ONLINE_FUNCS.match(c.func or ""):
            return True
        # inside an autograd Function's backward (a context-parallel index tensor) no batch is copied; rebinding a tensor's
        # storage (``tensor.data = tensor.data.to(device_id, non_blocking=True)``) moves a parameter or state, not data
        if c.func == "backward" or (receiver.endswith(".data") and re.match(rf"\s*{re.escape(receiver)}\s*=", c.text)):
            return False
        # a module named for weights or their offload (``streaming_weight_offload.py``: each layer's weights streamed in on a
        # copy stream while the previous layer computes) moves parameters, not batches
        if _WEIGHT_FUNC.search(c.path.rsplit("/", 1)[-1]):
            return False
        # a KV-cache module, or a function of the inference path (Medusa ``KVCache.copy`` in ``kv_cache.py`` and
        # ``update_inference_inputs``: ``dst.copy_(tgt, non_blocking=True)`` moves accepted tokens' keys/values inside the GPU
        # cache during decoding) copies no training batch
        if _KV_MODULE.search(c.path.rsplit("/", 1)[-1]) or _INFER_FUNC.search(c.func or ""):
            return False
        if c.short == "copy_":
            # an in-place copy writes into its receiver: a tensor's ``.data`` storage (a parameter streamed back in,
            # ``v.data.copy_(offload_buffer[...], non_blocking=True)``) or a preallocated buffer named as such (a CUDA graph's
            # ``input_buffers["input_ids"][:bs].copy_(next_tokens, ...)``, spelled before ``.copy_(`` when not a plain name)
            dest = receiver if receiver and receiver != "?" else c.text.split(".copy_(", 1)[0]
            if dest.endswith(".data") or _NOT_DATA.search(dest):
                return False
            # ... or reads a parameter or a state: ``gpu_tensor.copy_(param.data, non_blocking=True)`` over
            # ``model.named_parameters()``, ``copy_(value, ...)`` over an optimizer's ``state.items()`` (weights and optimizer
            # state moved back to the GPU after an offload), not a batch
            src = _text(c.args[0]) if c.args else ""
            if src.endswith(".data") or _NOT_DATA.search(src) or (c.loop and _NOT_DATA.search(c.loop)):
                return False
        return not (_NOT_DATA.search(receiver) or _NOT_DATA.search(c.func or ""))

    @staticmethod
    def _on(f: Facts, v: Any) -> bool:
        if isinstance(v, Expr) and v.ref:
            # a switch set somewhere is judged by its value; a local condition (nanochat ``non_blocking=use_cuda`` with
            # ``use_cuda = device == "cuda"``) is asynchronous whenever it holds, as ``pin_memory=`` expressions are read
            settings = f.effective(v.ref)
            if v.text == "non_blocking" and all(s.source == "call" for s in settings):
                # a method forwarding its own ``non_blocking`` parameter (``TensorBatch.to(..., non_blocking=False)`` ->
                # ``value.to(device, dtype, non_blocking=non_blocking)``): other calls' keywords are not its callers' values
                return False
            return any(truthy(s.value) is True for s in settings) if settings else True
        return truthy(v) is True
