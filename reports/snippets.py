"""Fit a check's ready-to-paste snippets to what the repository uses.

A check declares snippets by target (``hf-yaml``, ``deepspeed-json``, ``accelerate-yaml``,
``lightning``, ``python``, ``shell``). The repository's style decides which target fits, and
where it goes: the HF-style YAML config (spelled the axolotl or LLaMA-Factory way when the repo
uses them), the DeepSpeed JSON, the accelerate config, a Lightning ``Trainer``, the
``TrainingArguments(...)`` call or the launcher flags of an HF script, or Python for a raw loop.
Hardware rewrites (BF16 -> FP16 on V100, FlashAttention-2 -> SDPA before Ampere) apply last.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from checks.base import Check
from checks.facts import Facts, truthy
from checks.lazyre import lazy_compile
from checks.model import Project
from checks.project import jax_jitted_steps
from checks.rules._helpers import hf_framework_call, hf_trainer_subclasses, launched_paths, model_load
from checks.rules.d_compute import dep_version

from .applicability import GPU
from .resources import data

LANG = {
    "hf-yaml": "yaml",
    "accelerate-yaml": "yaml",
    "deepspeed-json": "json",
    "python": "python",
    "lightning": "python",
    "hf-args": "python",
    "shell": "bash",
    "hf-flags": "bash",
    "megatron-flags": "bash",
}

#: Megatron-LM command-line flags per check (Megatron's own spelling: store_true flags, dashes), for a repository
#: that trains through a Megatron ``pretrain_*.py`` script; a check without an entry gets no snippet there
MEGATRON_FLAGS: dict[str, str] = {
    "A1": "--use-distributed-optimizer --overlap-grad-reduce",
    "A2": "--use-distributed-optimizer --overlap-param-gather",
    "A3": "--use-distributed-optimizer --overlap-param-gather",
    "A4": "--tensor-model-parallel-size 2 --sequence-parallel",
    "A5": "--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 2",
    "A6": "--sequence-parallel --context-parallel-size 2",
    "A7": "--expert-model-parallel-size 8 --moe-grouped-gemm",
    "C1": "--bf16",
    "C2": "--fp8-format hybrid --fp8-amax-history-len 1024 --fp8-amax-compute-algo max",
    "C3": "--recompute-granularity selective",
    "C5": "--micro-batch-size 1 --global-batch-size 512",
    "D1": "--attention-backend flash",
    "D6": "--use-fused-rmsnorm --cross-entropy-loss-fusion",
    "E2": "--overlap-grad-reduce --overlap-param-gather",
    "F1": "--num-workers 8",
    "G1": "--lr-warmup-fraction 0.01 --lr-decay-style cosine --min-lr 1e-5",
    "I3": "--save-interval 1000",
    "I4": "--log-interval 100",
    "I5": "--log-interval 100",
}
DECLARED_TARGETS = ("hf-yaml", "deepspeed-json", "accelerate-yaml", "lightning", "python", "shell")

_HF_YAML_KEYS = {
    "per_device_train_batch_size", "gradient_accumulation_steps", "learning_rate", "num_train_epochs", "output_dir",
    "logging_steps", "save_steps", "lr_scheduler_type", "warmup_ratio", "warmup_steps", "bf16", "fp16", "max_steps",
    "model_name_or_path", "micro_batch_size", "base_model", "sequence_len", "cutoff_len", "finetuning_type",
    "dataset", "datasets", "optim", "weight_decay", "gradient_checkpointing", "deepspeed", "report_to",
}
_AXOLOTL_KEYS = {"micro_batch_size", "sequence_len", "sample_packing", "base_model", "datasets", "flash_attention", "adapter"}
#: keys only a GPT-NeoX config (NeoXArgs, run through ``deepy.py train.py configs/x.yml``) has
_NEOX_KEYS = {"pipe_parallel_size", "model_parallel_size", "attention_config", "pos_emb", "no_weight_tying", "gpt_j_residual",
              "output_layer_parallelism", "scaled_upper_triang_masked_softmax_fusion", "bias_gelu_fusion", "checkpoint_factor"}
#: dialects whose configs take no Hugging Face key: an HF key without a rule leaves the snippet unfitted
_STRICT_DIALECTS = {"neox"}
_LLAMAFACTORY_KEYS = {"cutoff_len", "finetuning_type", "template", "stage", "flash_attn", "lora_target"}
#: TrainingArguments fields and the transformers release that added them: a requirements pin or bound below cannot take
#: them (lm-buddy pins transformers==4.36.2 and was offered ``use_liger_kernel=True``, a field of 4.45.0 and later)
#: (Chinese-LLaMA-Alpaca-2 pins 4.35.0 and was offered ``--dataloader_persistent_workers True``, a field of 4.36.0; read
#: off the released wheels: 4.35.2 has neither DataLoader field, 4.36.0 the first, 4.38.0 the second)
_HF_KEY_SINCE: dict[str, tuple[int, ...]] = {"use_liger_kernel": (4, 45, 0), "dataloader_persistent_workers": (4, 36, 0),
                                             "dataloader_prefetch_factor": (4, 38, 0)}
_HF_ARGS_CALLS = ("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "ORPOConfig", "KTOConfig", "GRPOConfig")


@dataclass(frozen=True, slots=True)
class Snippet:
    target: str  # what it is written for: "hf-yaml", "deepspeed-json", "hf-args", ...
    lang: str  # fence language: yaml, json, python, bash
    code: str
    where: str | None = None  # the repository file (and line) it belongs in
    fitted: bool = True  # False when the repo has no config of this kind (shown as an example)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "lang": self.lang, "code": self.code, "where": self.where, "fitted": self.fitted}


@dataclass(slots=True)
class RepoStyle:
    """The targets that fit this repository, best first, and where each goes."""

    targets: list[str] = field(default_factory=list)
    where: dict[str, str] = field(default_factory=dict)
    dialect: str | None = None  # "axolotl" | "llamafactory" | "megatron" | "neox"
    hf_args_class: str = "TrainingArguments"
    hf: bool = True  # the project trains with Hugging Face libraries (a Python snippet may use them)
    # argument names the project's own parsers take (dataclass fields, argparse options) or its launches already pass:
    # a model keyword (``attn_implementation``) is a training flag only where one of them defines it
    own_args: frozenset[str] = frozenset()
    cli_args: frozenset[str] = frozenset()  # command-line options only: argparse dests and the flags launches pass
    switch_args: frozenset[str] = frozenset()  # argparse options that take no value (``action="store_true"``)
    # the highest transformers release the requirements allow (a pin or an upper bound; None: unbounded or unknown)
    transformers_max: tuple[int, ...] | None = None
    # the project's parser reads TrainingArguments from the command line (HfArgumentParser, TRL's TrlParser): every
    # TrainingArguments field is a flag there, not only the ones its own dataclasses and options name
    hf_parser: bool = False
    argparse: bool = False  # the project defines command-line options of its own (``parser.add_argument``)
    # the Python file snippets go into builds a transformers/TRL trainer and the project has no training loop of its own:
    # the trainer starts DDP itself under a multi-process launch, so data-parallel advice is the launch, not Python
    trainer_script: bool = False
    # the per-device batch and accumulation steps the launch that flags go into already passes (None: not numbers)
    batch: tuple[int, int] | None = None
    # that launch is the string a ``bash -c '...'`` runs: flags go inside its quotes, not after them
    quoted_command: bool = False
    # an inference-only project's own model (the hub id its generation code loads: Orion's ``OrionStarAI/Orion-14B-Chat``)
    # and whether it loads as remote code: the engine snippets name it instead of an example model
    served_model: str | None = None
    served_remote: bool = False
    served_by_file: dict[str, tuple[str, bool]] = field(default_factory=dict)  # the same, per file that loads one


def _yaml_keys(code: str) -> set[str]:
    try:
        doc = yaml.safe_load(code)
    except yaml.YAMLError:
        return set()
    return set(doc) if isinstance(doc, dict) else set()


def _top_level(facts: Facts, fmt: str) -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    for path, ff in facts.files.items():
        if ff.kind != fmt:
            continue
        for e in ff.configs:
            if len(e.keys) == 1 and isinstance(e.keys[0], str):
                keys.setdefault(path, set()).add(e.keys[0])
    return keys


#: places that are not where a user edits their training run: archived paper scripts, legacy copies, mock examples
#: the script of a tool run beside training (merging adapters, converting or exporting weights, inference, evaluation)
_TOOL_SCRIPT = lazy_compile(r"merg|convert|export|infer|generat|eval|serv|quantiz|predict|download|demo", re.I)
_NOT_AN_EDIT_TARGET = lazy_compile(r"(^|/)(academic_paper_scripts|papers?|archive[sd]?|legacy|deprecated|records|old|mock\w*|tests?|ci|\.github)(/|$)"
                                 # a script that tests a documented command (FastChat ``scripts/test_readme_train.sh``)
                                 r"|(^|/)(test|smoke|debug)_[^/]*$|(^|/)[^/]*_(test|smoke|debug)\.\w+$", re.I)
#: roles (checks.roles) of the files a snippet may name as the place to edit, best first
_EDIT_ROLES = ("training", "config", "launch")


def _rank_places(paths: list[str], roles: Mapping[str, str]) -> list[str]:
    """``paths`` with the training path's own files first, archived/mock/test copies last (stable otherwise)."""
    def key(path: str) -> tuple[int, int]:
        role = roles.get(path)
        return (1 if _NOT_AN_EDIT_TARGET.search(path) else 0, _EDIT_ROLES.index(role) if role in _EDIT_ROLES else len(_EDIT_ROLES))
    return sorted(paths, key=key)


#: where multi-node advice goes (see :func:`repo_style`), and the checks whose shell snippet is that advice
MULTI_NODE_SHELL = "shell:multi-node"
_MULTI_NODE_ADVICE = {"E1", "E4"}


def _spans_nodes(launch: Any) -> bool:
    for k in ("nnodes", "num_nodes", "num_machines", "nodes"):
        v = launch.launcher_args.get(k)
        if v is None:
            continue
        tail = str(v).split(":")[-1].strip()
        return not tail.isdigit() or int(tail) > 1  # a count left to the environment ($NNODES) spans nodes
    return "hostfile" in launch.launcher_args


#: the example models the inference snippets name (``LLM(model="Qwen/Qwen2.5-7B-Instruct")``), not a checkpoint of another
#: format (``Qwen/Qwen2.5-7B-Instruct-AWQ`` stays: it is the quantized checkpoint the advice is about)
_EXAMPLE_MODEL = lazy_compile(r"(?:Qwen/Qwen2\.5-7B-Instruct|meta-llama/Llama-3\.1-8B-Instruct)(?![\w.-])")
_HUB_ID = lazy_compile(r"^[\w.-]+/[\w.-]+$")


def _served_models(facts: Facts, project: Project) -> dict[str, tuple[str, bool]]:
    """Per file, (hub id, remote code) of the model an inference-only project's code loads first there, when it names one
    literally (in scan order: the first file's is the project's default)."""
    out: dict[str, tuple[str, bool]] = {}
    if project.does_training or not project.does_inference:
        return out
    for c in facts.calls("from_pretrained"):
        if not model_load(c) or not c.args:
            continue
        if isinstance(c.args[0], str) and _HUB_ID.match(c.args[0]) and c.path not in out:
            out[c.path] = (c.args[0], truthy(c.kwargs.get("trust_remote_code")) is True)
    return out


#: where an engine snippet (``from vllm import LLM``) goes in an inference-only project that already runs vLLM somewhere
PYTHON_VLLM = "python:vllm"
#: the calls that generate text in an inference script (HF ``generate``/``chat``, an engine's ``LLM``)
_GENERATION_CALLS = ("generate", "chat", "stream_chat", "LLM", "pipeline")


def _generation_files(facts: Facts, project: Project, roles: Mapping[str, str]) -> list[str]:
    """The Python files of an inference-only project that generate, best first (scan order within a rank)."""
    if project.does_training or not project.does_inference:
        return []
    paths = [c.path for c in facts.calls(*_GENERATION_CALLS)
             if facts.files.get(c.path) is not None and facts.files[c.path].kind == "python"]
    return _rank_places(list(dict.fromkeys(paths)), roles)


def _served(code: str, style: RepoStyle, where: str | None) -> str:
    """An engine snippet with the project's own model in place of the example one (the model of the file the snippet
    goes into, else the project's first), loaded as remote code where the project loads it so (vLLM needs
    ``trust_remote_code`` for a model whose code comes from the hub)."""
    model, remote = style.served_by_file.get(where or "", (style.served_model, style.served_remote))
    if not model or not (_EXAMPLE_MODEL.search(code) or "LLM(model=path" in code):
        return code
    code = _EXAMPLE_MODEL.sub(model, code).replace("LLM(model=path", f'LLM(model="{model}"')
    if remote and "trust_remote_code" not in code and "trust-remote-code" not in code:
        code = re.sub(r'(LLM\(model="[^"]+")', r"\1, trust_remote_code=True", code)
        code = re.sub(r"^(vllm serve \S+)", r"\1 --trust-remote-code", code, flags=re.M)
    return code


def repo_style(facts: Facts, project: Project, roles: Mapping[str, str] | None = None) -> RepoStyle:
    """``roles``: path -> role (checks.roles); files of the training path are preferred as the place to edit."""
    s = RepoStyle()
    roles = roles or {}
    s.served_by_file = _served_models(facts, project)
    s.served_model, s.served_remote = next(iter(s.served_by_file.values()), (None, False))
    s.cli_args = frozenset({x.dest for x in facts.records("arg_options")}
                           | {k.replace("-", "_") for x in facts.launches() for k in x.script_args})
    s.own_args = frozenset({x.name for x in facts.records("fields")}) | s.cli_args
    actions: dict[str, set[str | None]] = {}
    for x in facts.records("arg_options"):
        actions.setdefault(x.dest, set()).add(x.action)
    s.switch_args = frozenset(d for d, a in actions.items() if a == {"store_true"})
    s.transformers_max = dep_version(facts, "transformers")[1]
    s.hf_parser = bool(facts.calls("HfArgumentParser", "TrlParser"))
    s.argparse = bool(facts.records("arg_options"))
    yaml_keys = _top_level(facts, "yaml")
    json_keys = _top_level(facts, "json")
    fw = set(project.frameworks)

    # a Megatron-LM training script takes Megatron's own flags: no HF keys, YAML or Python loop snippets there
    mega = [x for x in facts.launches() if "megatron" in fw and x.script and
            (re.search(r"(^|/)(pretrain_\w+|train_rl|finetune\w*)\.py$", x.script) or
             {"tensor_model_parallel_size", "micro_batch_size", "global_batch_size"} & set(x.script_args))]
    if mega:
        s.dialect = "megatron"
        first = _rank_places([x.path for x in mega], roles)[0]
        m = next(x for x in mega if x.path == first)
        s.where["megatron-flags"] = f"{m.path}:{m.line}"
        s.targets.append("megatron-flags")
        return s

    if "lightning" in fw:
        calls = [c for c in facts.calls("Trainer") if "lightning" in c.name or c.name.startswith("L.") or c.name == "Trainer"]
        if calls:
            s.where["lightning"] = f"{calls[0].path}:{calls[0].line}"
            s.targets.append("lightning")

    neox = sorted((p for p, k in yaml_keys.items() if len(k & _NEOX_KEYS) >= 3), key=lambda p: (p.count("/"), p))
    hf_yaml = sorted(((len(k & _HF_YAML_KEYS), p) for p, k in yaml_keys.items() if len(k & _HF_YAML_KEYS) >= 2), reverse=True)
    if neox and "megatron" in fw:
        # GPT-NeoX: NeoX arguments in YAML (``num_workers``, ``train_micro_batch_size_per_gpu``), not HF's
        s.dialect = "neox"
        s.where["hf-yaml"] = neox[0]
        s.targets.append("hf-yaml")
    elif hf_yaml:
        path = hf_yaml[0][1]
        keys = yaml_keys[path]
        if "axolotl" in fw or len(keys & _AXOLOTL_KEYS) >= 2:
            s.dialect = "axolotl"
        elif "llamafactory" in fw or len(keys & _LLAMAFACTORY_KEYS) >= 2:
            s.dialect = "llamafactory"
        s.where["hf-yaml"] = path
        s.targets.append("hf-yaml")

    # (TRL's or transformers' arguments classes, not the project's own ``SFTConfig`` dataclass: self-rewarding-lm-pytorch)
    hf_calls = [c for c in facts.calls(*_HF_ARGS_CALLS) if hf_framework_call(facts, c)]
    hf_launch = [x for x in facts.launches() if set(x.script_args) & _HF_YAML_KEYS]
    # a launch of the run, not its test; a training script, not a tool's (BELLE's ``merge_lora.sh`` runs
    # ``merge_llama_with_lora.py --model_name_or_path ...``); then the command that passes the most trainer flags
    # (a recipe the README names or links before one it does not: Open-LLaVA-NeXT's v1_6 scripts, not upstream's v1_5)
    documented = facts.documented_recipes()
    hf_launch.sort(key=lambda x: (1 if _NOT_AN_EDIT_TARGET.search(x.path) else 0,
                                  1 if _TOOL_SCRIPT.search(str(x.script or "").rsplit("/", 1)[-1]) else 0,
                                  0 if x.path in documented else 1,
                                  -len(set(x.script_args) & _HF_YAML_KEYS)))
    if hf_launch and "hf-yaml" not in s.targets:
        s.where["hf-flags"] = f"{hf_launch[0].path}:{hf_launch[0].line}"
        if "bash -c" in hf_launch[0].wrappers:
            s.quoted_command = True
        s.targets.append("hf-flags")
        args = hf_launch[0].script_args
        micro, accum = args.get("per_device_train_batch_size"), args.get("gradient_accumulation_steps", 1)
        if isinstance(micro, int) and isinstance(accum, int) and not isinstance(micro, bool) and not isinstance(accum, bool) \
                and micro > 0 and accum > 0:
            s.batch = (micro, accum)
    if hf_calls and "hf-yaml" not in s.targets:
        c = hf_calls[0]
        s.hf_args_class = c.short
        s.where["hf-args"] = f"{c.path}:{c.line}"
        s.targets.append("hf-args")

    ds = sorted(p for p, k in {**json_keys, **yaml_keys}.items() if k & {"zero_optimization", "train_micro_batch_size_per_gpu"})
    if ds:
        s.where["deepspeed-json"] = ds[0]
        s.targets.append("deepspeed-json")
    acc = sorted(p for p, k in yaml_keys.items() if k & {"distributed_type", "compute_environment"})
    if acc:
        s.where["accelerate-yaml"] = acc[0]
        s.targets.append("accelerate-yaml")

    recipe_driven = s.dialect in ("axolotl", "llamafactory")
    # a recipe-driven framework is configured in its YAML: a Python-only snippet has no file of the user's to go into
    # (the backward pass is the library's code), so it stays an unfitted example
    loop = [] if recipe_driven else _rank_places([c.path for c in facts.calls("backward")], roles)
    training = sorted(p for p, r in roles.items() if r == "training" and facts.files.get(p) is not None and facts.files[p].kind == "python")
    # no backward of the project's own: the script that builds the HF/TRL trainer (FastChat ``fastchat/train/train.py``),
    # not the first training-path module by name (``fastchat/constants.py``); a project's subclass of them too (TinyLLaVA's
    # ``LLaVATrainer`` built in ``tinyllava/train/train.py``, not ``tinyllava/data/dataset.py``)
    # (of two trainer scripts, the one a launch or a documented command runs first: Magicoder's ``-m magicoder.train``, not
    # its ablation script; _rank_places keeps that order within a rank)
    built = [c.path for c in facts.calls("Trainer", "Seq2SeqTrainer", "SFTTrainer", "DPOTrainer", "GRPOTrainer", "ORPOTrainer", "KTOTrainer",
                                         *sorted(hf_trainer_subclasses(facts)))
             if roles.get(c.path, "training") == "training"]
    launched = launched_paths(facts, set(built))
    trainer = [] if recipe_driven or loop else _rank_places(sorted(built, key=lambda p: p not in launched), roles)
    if recipe_driven:
        pass
    elif loop:
        s.where["python"] = loop[0]
    elif trainer:
        s.where["python"] = trainer[0]
        s.trainer_script = True
    elif jax_steps := (_rank_places([d.path for d in jax_jitted_steps(facts)], roles) if project.notes.get("jax_training") else []):
        s.where["python"] = jax_steps[0]  # a JAX trainer: the file of its jitted training step (no ``backward`` call)
    elif training:
        s.where["python"] = training[0]
    elif gen := _generation_files(facts, project, roles):
        # an inference-only project: the script that generates (YuLan-Chat ``inference.py``), not the first Python file by
        # name (its ``apply_delta.py`` weight merge, lawyer-llama's ``demo/decrypt.py``, DoctorGLM's web crawler)
        s.where["python"] = gen[0]
        vllm = [p for p in gen if any(i.module.split(".")[0] == "vllm" for i in facts.files[p].imports)]
        if vllm:
            s.where[PYTHON_VLLM] = vllm[0]
    elif facts.files_of_kind("python"):
        s.where["python"] = sorted(facts.files_of_kind("python"))[0]
    if not recipe_driven:
        s.targets.append("python")
    launches = [x for x in facts.launches() if x.launcher != "python" or x.script]
    if launches:
        # a launch script of the run (``run.sh``) before a Dockerfile or a README command
        order = {"launch": 0, "training": 1, "config": 2}
        ranked = _rank_places([x.path for x in launches], roles)
        s.where["shell"] = min(ranked, key=lambda p: (order.get(roles.get(p, ""), 3), ranked.index(p)))
    if project.multi_node or project.notes.get("multi_node_documented"):
        # multi-node advice (NCCL over InfiniBand) belongs in a launch that spans nodes, never in a single-node script
        # beside it (LLaMA-Factory: one multi-node accelerate config among single-node QLoRA scripts); "" when no
        # launch script of the repository spans nodes: the snippet is then shown without a file
        sites = {w.rsplit(":", 1)[0] for w in project.notes.get("multi_node_sites") or []}
        shells = set(facts.files_of_kind("shell"))
        multi = [path for path in dict.fromkeys([*(x.path for x in launches if _spans_nodes(x)), *sorted(sites)])
                 if path in shells and roles.get(path, "launch") in ("launch", "training")]
        s.where[MULTI_NODE_SHELL] = _rank_places(multi, roles)[0] if multi else ""
    s.targets.append("shell")
    s.hf = bool(_HF_LIBRARIES & set(project.frameworks))
    return s


#: checks whose fix for a transformers/TRL trainer script is how it is launched (one process per GPU), not Python
_LAUNCH_ADVICE = frozenset({"A1"})
_HF_LIBRARIES = frozenset({"transformers", "trl", "peft", "accelerate", "axolotl", "llamafactory", "unsloth"})
_HF_IMPORT = lazy_compile(r"^\s*(from|import)\s+(transformers|trl|peft|datasets|accelerate)\b|"
                        r"\.(gradient_checkpointing_enable|get_input_embeddings|generation_config|from_pretrained|resize_token_embeddings)\b", re.M)
#: a snippet that only fits Megatron-LM (its preprocessing tool or its flags)
_MEGATRON_ONLY = lazy_compile(r"tools/preprocess_data\.py|--tensor-model-parallel-size|megatron\.", re.I)
#: PyTorch-only versions of snippets whose declared Python example uses a Hugging Face library
TORCH_NATIVE: dict[str, str] = {
    # a model the project writes itself (llm.c's and nanoGPT's ``GPTConfig``): pad the vocabulary where the model is built;
    # the extra rows are never a target, so the loss is unchanged (nanoGPT trains GPT-2 with 50304)
    "D7": ("# where the model is built: round the embedding and LM-head rows up to a multiple of 64 (GPT-2: 50257 -> 50304);\n"
           "# the padded rows are never targets, so the loss is unchanged\n"
           "vocab_size = (vocab_size + 63) // 64 * 64\n"),
    "G1": (
        "from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR\n\n"
        "warmup = int(0.03 * total_steps)\n"
        "scheduler = SequentialLR(\n"
        "    optimizer,\n"
        "    [LinearLR(optimizer, start_factor=0.01, total_iters=warmup), CosineAnnealingLR(optimizer, T_max=total_steps - warmup)],\n"
        "    milestones=[warmup],\n"
        ")\n"
    ),
}


def _translate_yaml(code: str, dialect: str | None) -> str | None:
    if not dialect:
        return code
    try:
        doc = yaml.safe_load(code)
    except yaml.YAMLError:
        return code
    if not isinstance(doc, dict):
        return code
    rules = data("yaml_dialects")[dialect]
    out: dict[str, Any] = {}
    changed = False
    for k, v in doc.items():
        for r in rules:
            if r["key"] == k and ("value" not in r or r["value"] == v):
                changed = True
                if r.get("drop"):
                    pass
                elif "to" in r:
                    out.update(r["to"])
                else:
                    out[r["to_key"]] = v
                break
        else:
            if dialect in _STRICT_DIALECTS:
                return None  # an HF key the dialect has no name for: no fitted snippet
            out[k] = v
    if not out:
        return None
    return yaml.safe_dump(out, sort_keys=False, default_flow_style=False, allow_unicode=True) if changed else code


#: keys of the HF YAML snippets that are not ``TrainingArguments`` fields: a model's keyword or config value, which a
#: recipe framework (TRL's ``ModelConfig``, axolotl, LLaMA-Factory) reads from its YAML but a plain ``HfArgumentParser``
#: script rejects as an unknown flag (Stanford Alpaca's ``train.py`` parses Model/Data/TrainingArguments only)
#: keys of a recipe framework (LLaMA-Factory, LLaVA) that no HF or TRL arguments class (nor TRL's ModelConfig) has
_RECIPE_FRAMEWORK_KEYS = frozenset({
    "tokenized_path", "neat_packing", "finetuning_type", "lora_rank", "lora_target", "freeze_trainable_layers",
    "freeze_trainable_modules", "freeze_vision_tower", "freeze_multi_modal_projector", "image_aspect_ratio",
    "image_grid_pinpoints", "mm_spatial_pool_stride", "mm_spatial_pool_mode",
})
_NOT_TRAINING_ARGS = frozenset({
    "attn_implementation", "vocab_size",
    # recipe-framework keys (LLaMA-Factory, LLaVA) that no HF or TRL arguments class has: written into ``TrainingArguments(...)``
    # they raise (lm-buddy's ``TrainingArguments(**config.trainer.training_args())`` was offered ``neat_packing=True``)
    "tokenized_path", "neat_packing", "streaming", "finetuning_type", "lora_rank", "lora_target", "freeze_trainable_layers",
    "freeze_trainable_modules", "freeze_vision_tower", "freeze_multi_modal_projector", "image_aspect_ratio",
    "image_grid_pinpoints", "mm_spatial_pool_stride", "mm_spatial_pool_mode",
    # fields of one TRL config class only (below), not of ``TrainingArguments``
    "packing", "loss_type", "use_vllm", "vllm_mode",
})
#: the TRL config classes that do take some of those keys
_TRL_ARGS: dict[str, frozenset[str]] = {
    "SFTConfig": frozenset({"packing"}),
    "DPOConfig": frozenset({"loss_type"}),
    "GRPOConfig": frozenset({"loss_type", "use_vllm", "vllm_mode"}),
}


def _newer_keys(keys: Any, style: RepoStyle) -> set[str]:
    """The ``keys`` that are TrainingArguments fields newer than the transformers release the requirements allow."""
    hi = style.transformers_max
    return set() if hi is None else {k for k in keys if k in _HF_KEY_SINCE and hi < _HF_KEY_SINCE[k]}


def _without_newer(code: str, style: RepoStyle) -> str | None:
    """An HF YAML snippet without the keys the pinned transformers lacks (``dataloader_num_workers: 8`` kept, its
    ``dataloader_persistent_workers: true`` dropped under 4.35); the snippet as it is when none is too new, None when
    nothing is left."""
    newer = _newer_keys(_yaml_keys(code), style)
    if not newer:
        return code
    kept = [ln for ln in code.splitlines(keepends=True) if ln.split(":", 1)[0].strip() not in newer]
    return "".join(kept) + _left_out(newer, style) + "\n" if _yaml_keys("".join(kept)) else None


def _left_out(newer: set[str], style: RepoStyle) -> str:
    """A comment naming the fields left out of a snippet and the release they need."""
    hi = ".".join(map(str, style.transformers_max or ()))
    return "# left out: " + ", ".join(f"{k} (transformers >= {'.'.join(map(str, _HF_KEY_SINCE[k]))})" for k in sorted(newer)) + \
        f"; the requirements allow at most {hi}"


def _hf_yaml_to(target: str, code: str, style: RepoStyle) -> str | None:
    """The HF YAML keys as ``TrainingArguments`` keywords or as launcher flags; None when a key is not one the target
    takes (a model keyword is never a ``TrainingArguments`` keyword, and a flag only where the project's parser has it)."""
    try:
        doc = yaml.safe_load(code)
    except yaml.YAMLError:
        return None
    if not isinstance(doc, dict) or not all(isinstance(v, (bool, int, float, str)) for v in doc.values()):
        return None
    foreign = (_NOT_TRAINING_ARGS - _TRL_ARGS.get(style.hf_args_class, frozenset())) & set(doc)
    if foreign and (target == "hf-args" or not foreign <= style.own_args):
        return None
    newer = _newer_keys(doc, style)
    if newer:
        doc = {k: v for k, v in doc.items() if k not in newer}  # fields the pinned transformers lacks: left out
        if not doc:
            return None
    if target == "hf-flags" and style.argparse and not style.hf_parser and not set(doc) <= style.cli_args:
        # a script with its own argparse (OpenFlamingo's train.py) rejects a flag it does not define; a dataclass field of
        # its model config (llm.c ``GPTConfig.vocab_size``) is no command-line option there
        return None
    where = style.where.get(target, "")
    if target == "hf-args":
        lines = [f"# {where}", f"training_args = {style.hf_args_class}(", "    # ...your existing arguments...", *(f"    {k}={v!r}," for k, v in doc.items()), ")"]
    else:
        # a switch is passed bare: ``--use_liger_kernel True`` makes argparse refuse the stray ``True`` (OpenRLHF's
        # ``parser.add_argument("--use_liger_kernel", action="store_true")``)
        flags = " ".join(f"--{k}" if v is True and k in style.switch_args else f"--{k} {shlex.quote(str(v))}"
                         for k, v in doc.items())
        lines = [f"# {_append_to(style)} in {where}", flags]
    if newer:
        lines.append(_left_out(newer, style))
    return "\n".join(lines) + "\n"


def _append_to(style: RepoStyle) -> str:
    """Where flags go: after the training command, or inside the quoted command a ``bash -c`` runs."""
    return "add inside the quoted training command (bash -c '...')" if style.quoted_command else "append to the training command"


def _same_global_batch(batch: tuple[int, int], where: str) -> str:
    """Accumulation flags for a launch that already passes its per-device batch (Open-LLaVA-NeXT ``--per_device_train_batch_size
    16 --gradient_accumulation_steps 1``): appended flags win, so the example's fixed ``4`` and ``8`` would double the global
    batch; half the micro-batch and twice the steps keep it, and the learning rate with it."""
    micro, accum = batch
    head = f"# {where}\n"
    if micro >= 2 and micro % 2 == 0:
        return (head + f"--per_device_train_batch_size {micro // 2} --gradient_accumulation_steps {accum * 2}\n"
                f"# {micro} x {accum} = {micro // 2} x {accum * 2} sequences per GPU per optimizer step: the global batch and the\n"
                "# learning rate stay as they are; halve again while the micro-batch is what limits memory\n")
    return (head + f"--gradient_accumulation_steps {accum * 2}\n"
            f"# the micro-batch ({micro}) cannot be halved: more steps make the global batch larger, so rescale the learning rate\n")


def hardware_rewrite(check_id: str, target: str, code: str, hw: GPU | None) -> str:
    """Rewrite a snippet for hardware that lacks BF16 or FlashAttention-2."""
    if hw is None:
        return code
    table = data("hardware_rewrites")
    for cap, section in (("bf16", "no_bf16"), ("flash_attn2", "no_flash_attn2")):
        if getattr(hw, cap):
            continue
        whole = table[section]["replace"].get(check_id, {})
        if target in whole:
            code = whole[target]
            continue
        for pattern, repl in table[section]["rules"]:
            code = re.sub(pattern, repl, code)
    return code


def fit(check: Check, style: RepoStyle, hw: GPU | None = None) -> Snippet | None:
    """The check's snippet that best fits the repository, or an unfitted example, or None."""
    if style.dialect == "megatron":
        flags = MEGATRON_FLAGS.get(check.id)
        if flags is None:
            return None
        where = style.where.get("megatron-flags")
        code = f"# add to the Megatron training command in {where}\n{flags}\n"
        return Snippet("megatron-flags", LANG["megatron-flags"], hardware_rewrite(check.id, "megatron-flags", code, hw), where, True)
    declared = {k: v for k, v in check.snippets.items() if v and v.strip()}
    if not declared:
        return None
    for target in style.targets:
        code: str | None = None
        if target in ("hf-args", "hf-flags") and "hf-yaml" in declared:
            code = _hf_yaml_to(target, declared["hf-yaml"], style)
            src = "hf-yaml"
        elif target in declared:
            code = declared[target]
            src = target
            if target == "hf-yaml":
                if style.dialect is None:
                    code = _without_newer(code, style)
                    if code is None:
                        continue
                if style.dialect is None and _RECIPE_FRAMEWORK_KEYS & set(_yaml_keys(code)):
                    # a recipe framework's key (LLaMA-Factory ``tokenized_path``) in a plain HF/TRL recipe: TrlParser and
                    # HfArgumentParser refuse unknown keys at start-up (alignment-handbook's recipes)
                    continue
                code = _translate_yaml(code, style.dialect)
        if code is None:
            continue
        if target == "python" and style.trainer_script and check.id in _LAUNCH_ADVICE:
            continue  # wrapping the model in DDP by hand beside the HF Trainer (which wraps it itself under torchrun)
        if _MEGATRON_ONLY.search(code):
            continue  # Megatron's tool or flags in a project that does not launch Megatron (dialect "megatron" returned above)
        if target == "python" and not style.hf and _HF_IMPORT.search(code):
            code = TORCH_NATIVE.get(check.id)  # a raw PyTorch loop gets PyTorch, never a transformers/TRL object
            if code is None:
                return None
        if target == "shell" and style.trainer_script and check.id in _LAUNCH_ADVICE and style.where.get("python"):
            code = code.replace("train.py --config configs/train.yaml", style.where["python"])  # the project's trainer script
        if check.id == "C5" and target == "hf-flags" and style.batch is not None:
            code = _same_global_batch(style.batch, f"{_append_to(style)} in {style.where.get(target, '')}")
        code = hardware_rewrite(check.id, src, code, hw)
        where = style.where.get(target)
        if target == "python" and "from vllm" in code and style.where.get(PYTHON_VLLM):
            where = style.where[PYTHON_VLLM]
        if check.id.startswith("J"):
            code = _served(code, style, where)
        if target == "shell" and check.id in _MULTI_NODE_ADVICE and MULTI_NODE_SHELL in style.where:
            where = style.where[MULTI_NODE_SHELL] or None
        shown = style.dialect if target == "hf-yaml" and style.dialect else target
        return Snippet(shown, LANG[target], code, where, True)
    declared = {k: v for k, v in declared.items() if not _MEGATRON_ONLY.search(v)}  # Megatron's tool: only for Megatron
    if not declared:
        return None
    first = next((t for t in DECLARED_TARGETS if t in declared), next(iter(declared)))
    code = hardware_rewrite(check.id, first, declared[first], hw)
    return Snippet(first, LANG.get(first, ""), code, None, False)
