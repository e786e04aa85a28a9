"""Run configurations ("sites") of one audited tree, each with its effective training settings.

A site is one place that configures a training run, identified the same way in base and head:

* ``recipe``: a YAML/JSON/TOML config file that sets at least one known training setting
  (``path``); values it inherits through ``defaults:`` / ``_base_`` / ``base_config:`` or a
  referenced DeepSpeed/accelerate file count at a lower precedence than its own;
* ``launch``: a launcher command in a script (``path::torchrun pretrain_gpt.py#0``: launcher,
  script and the occurrence of that pair in the file), with every flag at its own line;
* ``call``: a ``TrainingArguments(...)``, ``DataLoader(...)``, ``from_pretrained(...)`` ... call
  (``path::DataLoader@main#0``: callee, enclosing function, occurrence);
* ``globals``: module-level settings of a Python config file (nanoGPT's ``config/*.py``).

Each setting is stored under its canonical name (``save_steps`` for ``--save-interval``,
``precision`` for ``bf16: true`` / ``--fp16`` / ``mixed_precision: bf16``) with the raw key,
value, path and line that set it. Only parsed facts are read: nothing is executed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from checks.facts import as_number, truthy
from checks.facts.types import Container, Expr, FileFacts

from .rules import ALIASES, norm_attention, norm_precision

__all__ = ["CANON_CHECK", "Site", "SiteValue", "canonical", "model_of", "sites_of"]

#: canonical setting -> the check it belongs to
CANON_CHECK: dict[str, str] = {
    "precision": "C1", "attn_implementation": "D1", "torch_compile": "D2", "gradient_checkpointing": "C3",
    "offload_optimizer": "C4", "offload_param": "C4", "zero_stage": "A3", "num_workers": "F1", "prefetch_factor": "F2",
    "pin_memory": "F3", "save_steps": "I3", "logging_steps": "I4", "eval_steps": "I5", "use_liger_kernel": "D5",
    "fused_optimizer": "D6", "kernel_fusion": "D6", "gradient_accumulation_steps": "C5", "micro_batch_size": "C5",
    "global_batch_size": "C5", "comm_overlap": "E2",
}

_PRECISION_KEYS = {"bf16", "fp16", "pure_bf16", "half", "amp", "use_amp", "mixed_precision", "precision", "torch_dtype", "dtype",
                   "bf16.enabled", "fp16.enabled", "params_dtype"}
_EXTRA: dict[str, tuple[str, ...]] = {
    "use_liger_kernel": ("use_liger_kernel", "enable_liger_kernel", "use_liger", "liger_kernel", "liger_rms_norm", "liger_glu_activation",
                         "liger_rope", "liger_layer_norm", "liger_fused_linear_cross_entropy", "liger_cross_entropy"),  # axolotl's switches
    "fused_optimizer": ("optim", "optimizer", "optimizer_type"),
    "micro_batch_size": ("per_device_train_batch_size", "micro_batch_size", "train_micro_batch_size_per_gpu", "micro_batch_size_per_gpu",
                         "batch_size"),
    "global_batch_size": ("global_batch_size", "train_batch_size", "global_train_batch_size", "total_batch_size"),
    "comm_overlap": ("overlap_grad_reduce", "overlap_param_gather", "overlap_comm", "zero_optimization.overlap_comm", "encoder_ddp_overlap"),
}
_CANON_OF: dict[str, str] = {}
for _canon, _aliases in {**ALIASES, **_EXTRA}.items():
    if _canon in ("save_interval", "checkpoint_interval", "log_interval", "dataloader_num_workers"):
        continue
    for _a in _aliases:
        _CANON_OF.setdefault(_a.lower(), _canon)
for _k in _PRECISION_KEYS:
    _CANON_OF[_k] = "precision"
_CANON_OF.update({"recompute_method": "gradient_checkpointing", "use_flash_attn": "attn_implementation",
                  "use_flash_attention_2": "attn_implementation"})

#: keys that make a recipe inherit another file's settings (hydra, mmengine, axolotl-style)
_INHERIT_KEYS = {"defaults", "_base_", "base", "base_config", "extends", "inherit", "inherit_from", "__base__"}
#: keys whose value names a file whose settings apply to this run (DeepSpeed, accelerate, FSDP configs)
_REF_KEYS = {"deepspeed", "deepspeed_config", "deepspeed_config_file", "config_file", "accelerate_config", "fsdp_config", "ds_config"}
_RECIPE_KINDS = {"yaml", "json", "toml"}
_CALLS = {"TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "GRPOConfig", "ORPOConfig", "KTOConfig",
          "RewardConfig", "PPOConfig", "DataLoader", "StatefulDataLoader", "from_pretrained", "Accelerator", "Trainer", "TrainerConfig",
          "Fabric", "compile"}
_MODEL_KEYS = ("model_name_or_path", "base_model", "pretrained_model_name_or_path", "model_name", "model_id", "model", "model_path",
               "init_from", "hf_model")
_SEQ_KEYS = ("cutoff_len", "max_seq_length", "max_seq_len", "sequence_len", "seq_length", "max_length", "block_size", "max_position_embeddings")
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bBmM])(?![a-zA-Z0-9])")
_SKIP_DIRS = (".github/", "tests/", "test/", "docs/")


@dataclass(frozen=True, slots=True)
class SiteValue:
    """One effective setting of a site: the canonical name, the key as written, its value and where it is set."""

    canon: str
    key: str  # as written: "save_steps", "zero_optimization.stage", "--num-workers", "DataLoader(num_workers=)"
    value: Any  # canonical value: precision "bf16"/"fp16"/"fp32"..., numbers, booleans, strings
    raw: Any  # the value as written at that line (what a suggestion rewrites)
    path: str
    line: int
    text: str = ""
    inherited: bool = False  # set by a file this site inherits or references, not by the site itself


@dataclass(slots=True)
class Site:
    id: str  # stable across base and head (see the module docstring)
    path: str
    kind: str  # "recipe" | "launch" | "call" | "globals"
    label: str  # how a comment names it: "`configs/a.yaml`", "`torchrun pretrain_gpt.py` in `scripts/run.sh`"
    line: int = 1
    values: dict[str, SiteValue] = field(default_factory=dict)  # canonical name -> effective value
    own: dict[str, SiteValue] = field(default_factory=dict)  # what the site sets itself
    refs: list[str] = field(default_factory=list)  # files whose settings it inherits or references
    raw: dict[str, Any] = field(default_factory=dict)  # every scalar key of the site (normalised) -> value, for the model lookup
    unknown: set[str] = field(default_factory=set)  # settings the site sets to something not statically known (an expression)

    @property
    def absence_known(self) -> bool:
        """Whether a setting missing here is really unset: module globals record constants only (``dtype = 'bf16' if x else ...``)."""
        return self.kind != "globals"


def canonical(key: str) -> str | None:
    """The canonical setting a key is about (``--save-interval`` -> ``save_steps``), or None."""
    k = key.strip().lstrip("-").lower().replace("-", "_")
    m = re.match(r"^[\w.]*\((\w+)=\)$", k)
    if m:
        k = m.group(1)
    if k in _CANON_OF:
        return _CANON_OF[k]
    if k.endswith(".enabled") and k[: -len(".enabled")].rsplit(".", 1)[-1] in ("bf16", "fp16"):
        return "precision"
    last = k.rsplit(".", 1)[-1]
    if "." in k and k in ("zero_optimization.stage",):
        return "zero_stage"
    if last == "stage" and k.startswith("zero_optimization"):
        return "zero_stage"
    if "." in k and k.split(".")[-2:-1] in (["offload_optimizer"], ["offload_param"]) and last == "device":
        return k.split(".")[-2]
    if last.startswith("no_") and "fusion" in last:
        return "kernel_fusion"
    if last in _CANON_OF and "." in k and last not in ("enabled", "stage", "device", "model", "batch_size", "dtype"):
        return _CANON_OF[last]
    return None


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


def _precision_of(key: str, value: Any) -> str | None:
    k = key.strip().lstrip("-").lower().replace("-", "_")
    k = re.sub(r"^[\w.]*\((\w+)=\)$", r"\1", k)
    if k.endswith(".enabled"):
        k = k[: -len(".enabled")].rsplit(".", 1)[-1]
    if k in ("bf16", "pure_bf16", "fp16", "half", "amp", "use_amp"):
        t = truthy(value)
        if t is None:
            return None
        if not t:
            return "off"  # this key is off: the precision comes from another key or is fp32
        return "bf16" if "bf16" in k else "fp16"
    return norm_precision(value)


def _fused(value: Any) -> bool | None:
    if not isinstance(value, str):
        return None
    s = value.lower()
    if "fused" in s or "apex" in s or s in ("adamw_torch_fused", "fusedadam", "fused_adam"):
        return True
    if "adam" in s or "sgd" in s or "lamb" in s or "lion" in s:
        return False
    return None


def _canon_value(canon: str, key: str, value: Any) -> Any:
    """The value rules compare: precision names, attention names, numbers, booleans."""
    if canon == "precision":
        return _precision_of(key, value)
    if canon == "attn_implementation":
        if isinstance(value, bool) or key.lstrip("-").replace("-", "_") in ("use_flash_attn", "use_flash_attention_2", "flash_attn"):
            t = truthy(value)
            return ("flash_attention_2" if t else None) if t is not None else None
        return norm_attention(value)
    if canon == "fused_optimizer":
        return _fused(value)
    if canon == "kernel_fusion":
        t = truthy(value)
        return None if t is None else not t  # --no-masked-softmax-fusion: fusion off
    if canon == "gradient_checkpointing" and isinstance(value, str) and value.lower() in ("full", "selective", "true", "unsloth"):
        return True
    if canon in ("offload_optimizer", "offload_param") and isinstance(value, str):
        return value.strip().lower() in ("cpu", "nvme")
    if canon == "zero_stage":
        return as_number(value)
    if canon == "comm_overlap":
        return truthy(value)
    if isinstance(value, bool):
        return value
    n = as_number(value)
    if n is not None and canon not in ("use_liger_kernel", "torch_compile", "gradient_checkpointing", "pin_memory"):
        return n
    t = truthy(value)
    return t if t is not None else value


def _add(values: dict[str, SiteValue], key: str, raw: Any, path: str, line: int, text: str, inherited: bool = False,
         unknown: set[str] | None = None) -> None:
    canon = canonical(key)
    if canon is None:
        return
    if not _scalar(raw) or isinstance(raw, Expr):
        if unknown is not None:
            unknown.add(canon)
        return
    v = _canon_value(canon, key, raw)
    if v is None:
        return
    sv = SiteValue(canon, key, v, raw, path, line, text, inherited)
    if canon in ("use_liger_kernel", "comm_overlap") and canon in values and values[canon].value:
        return  # several switches of one feature (axolotl's liger_*): the first one that is on speaks for it
    if canon == "precision":
        old = values.get("precision")
        if v == "off":
            if old is None:
                values["precision"] = SiteValue(canon, key, "fp32", raw, path, line, text, inherited)
            return
        if old is not None and old.value not in ("fp32",):
            return  # the first enabled precision wins (bf16 over a later fp16: false)
    values[canon] = sv


def _recipe(ff: FileFacts) -> Site | None:
    site = Site(ff.path, ff.path, "recipe", f"`{ff.path}`")
    for e in ff.configs:
        if e.fmt not in _RECIPE_KINDS or isinstance(e.value, Container):
            if isinstance(e.value, Container) and e.key.lower() in _INHERIT_KEYS | _REF_KEYS:
                continue
            if isinstance(e.value, Container):
                continue
        dotted = ".".join(str(k) for k in e.keys)
        top = str(e.keys[0]).lower() if e.keys else ""
        if top in _INHERIT_KEYS or (e.key.lower() in _REF_KEYS and isinstance(e.value, str)):
            if isinstance(e.value, str):
                site.refs.append(e.value)
            elif isinstance(e.value, tuple):
                site.refs.extend(str(x) for x in e.value if isinstance(x, str))
            continue
        if _scalar(e.value):
            site.raw.setdefault(e.key.lower(), e.value)
        _add(site.own, dotted, e.value, e.path, e.line, e.text, unknown=site.unknown)
    return site  # even without a known setting: a key the PR removes must still compare with base


def _launch_sites(ff: FileFacts) -> list[Site]:
    out: list[Site] = []
    seen: dict[str, int] = {}
    for la in ff.launches:
        name = f"{la.launcher} {(la.script or '').rsplit('/', 1)[-1]}".strip()  # ``${MEGATRON}/pretrain_gpt.py``: the file name
        n = seen.get(name, 0)
        seen[name] = n + 1
        site = Site(f"{ff.path}::{name}#{n}", ff.path, "launch", f"`{name}` in `{ff.path}`", la.line)
        for k, v in {**la.launcher_args, **la.script_args}.items():
            if _scalar(v):
                site.raw.setdefault(k.lower(), v)
            line = la.arg_line(k)
            _add(site.own, f"--{k}", v, la.path, line, la.text, unknown=site.unknown)
            if k.lower() in _REF_KEYS and isinstance(v, str):
                site.refs.append(v)
        if la.script and la.script.endswith((".yaml", ".yml", ".json")):
            site.refs.append(la.script)
        out.append(site)
    return out


def _call_sites(ff: FileFacts) -> list[Site]:
    out: list[Site] = []
    seen: dict[str, int] = {}
    for c in ff.calls:
        short = c.short
        if short not in _CALLS:
            continue
        name = f"{short}@{c.func or '<module>'}"
        n = seen.get(name, 0)
        seen[name] = n + 1
        site = Site(f"{ff.path}::{name}#{n}", ff.path, "call", f"`{short}(...)` in `{ff.path}`", c.line)
        if short == "compile":
            site.own["torch_compile"] = SiteValue("torch_compile", f"{c.name}()", True, True, c.path, c.line, c.text)
        for k, v in c.kwargs.items():
            if _scalar(v):
                site.raw.setdefault(k.lower(), v)
            _add(site.own, f"{short}({k}=)", v, c.path, c.kw_line(k), c.text, unknown=site.unknown)
        out.append(site)
    return out


def _globals_site(ff: FileFacts) -> Site | None:
    if not ff.assigns:
        return None
    site = Site(f"{ff.path}::globals", ff.path, "globals", f"`{ff.path}`")
    for a in ff.assigns:
        if _scalar(a.value):
            site.raw.setdefault(a.name.lower(), a.value)
        _add(site.own, a.name, a.value, a.path, a.line, a.text)
    return site if site.own else None


def _sites_of_file(ff: FileFacts) -> list[Site]:
    if ff.path.startswith(_SKIP_DIRS) or "/tests/" in ff.path:
        return []
    out: list[Site] = []
    if ff.kind in _RECIPE_KINDS:
        r = _recipe(ff)
        if r is not None:
            out.append(r)
    out += _launch_sites(ff)
    if ff.kind == "python":
        out += _call_sites(ff)
        g = _globals_site(ff)
        if g is not None:
            out.append(g)
    return out


def _resolve(ref: str, from_path: str, files: dict[str, FileFacts]) -> str | None:
    ref = ref.strip()
    if not ref or "://" in ref or "$" in ref:
        return None
    base_dir = posixpath.dirname(from_path)
    cands = []
    for root in (base_dir, ""):
        p = posixpath.normpath(posixpath.join(root, ref.lstrip("./") if root == "" else ref))
        cands += [p, p + ".yaml", p + ".yml", p + ".json"]
    for p in cands:
        if p in files:
            return p
    return None


def sites_of(files: dict[str, FileFacts], paths: Iterable[str] | None = None) -> dict[str, Site]:
    """The sites of ``files`` (all, or only those in ``paths`` and the recipes that inherit from them), by id.

    Effective values: a site's own values over those of the files it inherits or references
    (one level of references, then their own inheritance, at most 4 deep).
    """
    wanted = set(paths) if paths is not None else None
    own_sites: dict[str, list[Site]] = {}

    def of(path: str) -> list[Site]:
        if path not in own_sites:
            ff = files.get(path)
            own_sites[path] = _sites_of_file(ff) if ff is not None and not ff.error else []
        return own_sites[path]

    def chain(site: Site, depth: int = 0) -> list[SiteValue]:
        vals: list[SiteValue] = []
        if depth > 4:
            return vals
        for ref in site.refs:
            p = _resolve(ref, site.path, files)
            if p is None or p == site.path:
                continue
            for s in of(p):
                if s.kind == "recipe":
                    vals += chain(s, depth + 1)
                    vals += [_inherit(v) for v in s.own.values()]
        return vals

    if wanted is None:
        candidates = list(files)
    else:
        # a touched shared file changes every recipe that inherits from it
        candidates = sorted(wanted)
        for path, ff in files.items():
            if path in wanted or ff.kind not in _RECIPE_KINDS:
                continue
            if any(str(e.keys[0]).lower() in _INHERIT_KEYS or e.key.lower() in _REF_KEYS for e in ff.configs if e.keys):
                s = of(path)
                if s and any(_resolve(r, path, files) in wanted for r in s[0].refs):
                    candidates.append(path)
    out: dict[str, Site] = {}
    for path in candidates:
        for s in of(path):
            eff: dict[str, SiteValue] = {}
            for v in chain(s):
                eff[v.canon] = v
            eff.update(s.own)
            s.values = eff
            out[s.id] = s
    return out


def _inherit(v: SiteValue) -> SiteValue:
    return SiteValue(v.canon, v.key, v.value, v.raw, v.path, v.line, v.text, True)


def model_of(site: Site) -> tuple[str | None, float | None, bool, int | None]:
    """(model name, parameters in billions, trains adapters only, LoRA rank) of the model this site trains.

    Only the site's own keys count (never the largest model a registry lists). A Megatron
    launch without a name gets its size from ``--num-layers``/``--hidden-size``/vocabulary.
    """
    raw = site.raw
    name = next((str(raw[k]) for k in _MODEL_KEYS if isinstance(raw.get(k), str) and raw.get(k)), None)
    ft = str(raw.get("finetuning_type") or raw.get("adapter") or raw.get("peft_type") or "").lower()
    lora = ft in ("lora", "qlora", "dora", "oft", "ia3") or truthy(raw.get("use_peft")) is True or truthy(raw.get("use_lora")) is True
    rank = as_number(raw.get("lora_rank", raw.get("lora_r", raw.get("r") if lora else None)))
    if rank is not None and not lora and ("lora_rank" in raw or "lora_r" in raw) and ft in ("", "lora"):
        lora = ft == "lora"
    params: float | None = None
    if name:
        base = name.rsplit("/", 1)[-1]
        moe = re.search(r"(\d+(?:\.\d+)?)[bB]-A\d+(?:\.\d+)?[bB]", base)
        m = moe or _SIZE.search(base.replace("_", "-"))
        if m:
            x = float(m.group(1))
            unit = "b" if moe else m.group(2).lower()
            params = x if unit == "b" else x / 1000
    if params is None:
        layers, hidden = as_number(raw.get("num_layers")), as_number(raw.get("hidden_size"))
        if layers and hidden:
            ffn = as_number(raw.get("ffn_hidden_size")) or 4 * hidden
            vocab = as_number(raw.get("padded_vocab_size")) or as_number(raw.get("vocab_size")) or 50257
            mlp = (3 if truthy(raw.get("swiglu")) else 2) * hidden * ffn
            params = (layers * (4 * hidden * hidden + mlp) + vocab * hidden) / 1e9
            name = name or f"{int(layers)} layers × hidden {int(hidden)}"
    return name, params, lora, int(rank) if rank else None


def seq_of(site: Site) -> int | None:
    for k in _SEQ_KEYS:
        n = as_number(site.raw.get(k))
        if n and n > 0:
            return int(n)
    return None


def gpus_of(site: Site) -> int | None:
    per = as_number(site.raw.get("nproc_per_node") or site.raw.get("num_gpus") or site.raw.get("gpus_per_node"))
    nodes = as_number(site.raw.get("nnodes") or site.raw.get("num_nodes")) or 1
    return int(per * nodes) if per else None
