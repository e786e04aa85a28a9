"""D. Compute optimisation (计算优化): D1-D8."""

from __future__ import annotations

import ast
import posixpath
import re
from collections import Counter
from typing import Any

from ..base import Check, Context, register
from ..facts import Call, Dependency, Expr, Facts, Setting, as_number, truthy
from ..hardware import lacks_bf16_fa2
from ..lazyre import lazy_compile
from ..model import Bottleneck, Evidence, Example, FixSafety, Outcome, Priority, Status
from ..project import _SERVE_PATH, CONFIG_CALLEE, _library_demo_lines, checkpoint_tool_file, jax_jitted_steps
from ._helpers import (
    aux_model_site,
    callers_off,
    class_at,
    deepspeed_alternative_files,
    evs,
    flag_state,
    guard_flags,
    guard_off,
    in_trainer_copy,
    launches_with_train_args,
    model_load,
    orphan_sites,
    parse_expr,
    recipe_majority,
    registry_off,
    runs_file,
    set_under_off_branch,
    uncalled_function,
    unreached_note,
    unreached_sites,
    uses_hf_trainer,
    value_on,
)
from ._registry import component_registry, copied_trainer, recipes_on, split_text, total_recipes
from .c_memory import fp8_sites

U, P, N = Status.USED, Status.PARTIAL, Status.UNUSED


# --- shared -------------------------------------------------------------------

#: a serving or generation script (``examples/scripts/serve_remote_rm.sh``, ``inference/chat.py``): not a training site
_SERVING_PATH = lazy_compile(r"(^|/)(serv\w*|infer\w*|generat\w*|chat\w*|deploy\w*|api|app)(\.py|\.sh|\.ya?ml|\.json|/)", re.I)
_VERSION = lazy_compile(r"(==|>=|~=|>|<=|<|!=)\s*v?(\d+(?:\.\d+)*)")


def _vtuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(".")[:3])


def dep_version(facts: Facts, name: str) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None, list]:
    """(lowest version allowed, highest version allowed) of a dependency over its declarations; None where unbounded. A
    project that declares no requirement for it is taken at its README's install line (:func:`documented_pins`)."""
    found = facts.deps(name) or documented_pins(facts, name)
    return (*version_bounds(found), found)


def documented_pins(facts: Facts, name: str) -> list[Dependency]:
    """The releases of ``name`` the project's own README and docs/ install (PMC-LLaMA ``pip install transformers=4.28.1``,
    ``conda install pytorch==1.13.0``), as declarations; an example folder's README documents that example only."""
    return [Dependency(h.path, h.line, name, "==" + h.value.split("==", 1)[1], h.text) for h in facts.records("doc_hints")
            if h.kind == "pin" and h.value.split("==", 1)[0] == name and ("/" not in h.path or h.path.startswith("docs/"))]


def _copy_release(found: list) -> str:
    """The release a library copy in the tree declares (``__version__ = "4.42.0.dev0"``, the one declaration
    :mod:`checks.engine` keeps for a copied library), else ''."""
    return next((d.spec[2:] for d in found if d.text.startswith("__version__")), "")


#: a test folder's requirements (``tests/requirements.txt``): not the environment the project trains in
_TESTS_PATH = lazy_compile(r"(^|/)(tests?|testing)/", re.I)


def declared_cap(deps: list) -> tuple[tuple[int, ...], Any] | None:
    """(the highest release allowed, the declaration that sets it) by the project's own top-level declarations of one
    library (the shallowest requirements/environment files that name it), else None. One folder's declarations cap it
    together; the top-level folders of a monorepo are projects of their own (LMOps: ``corag/`` pins torch 2.4.0, ``dpkd/``
    2.0.1, ``minillm/`` nothing): a cap only where every one of them has the same."""
    if not deps:
        return None
    depth = min(d.path.count("/") for d in deps)
    top = [d for d in deps if d.path.count("/") == depth]
    folders: dict[str, list[Any]] = {}
    for d in top:
        folders.setdefault(d.path.rsplit("/", 1)[0] if "/" in d.path else "", []).append(d)
    # (one folder's exact pins that disagree say nothing for certain: EAGLE's ``setup.py`` pins torch 2.0.1 beside a
    # ``requirements.txt`` of torch 2.6.0)
    for ds in folders.values():
        if len({v for d in ds for op, v in _VERSION.findall(d.spec or "") if op == "=="}) > 1:
            return None
    caps = {version_bounds(ds)[1] for ds in folders.values()}
    if len(caps) != 1:
        return None
    hi = caps.pop()
    if hi is None:
        return None
    return hi, next(d for d in top if version_bounds([d])[1] == hi)


def version_bounds(found: list) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """(lowest, highest) version the given declarations of one dependency allow; None where unbounded."""
    lo: tuple[int, ...] | None = None
    hi: tuple[int, ...] | None = None
    for d in found:
        for op, ver in _VERSION.findall(d.spec or ""):
            v = _vtuple(ver)
            if op in {"==", ">=", "~=", ">"}:
                lo = max(lo, v) if lo else v
            if op in {"==", "<=", "<"}:
                hi = min(hi, v) if hi else v
    return lo, hi


#: a vendored HF T5 copy (LAVIS ``modeling_t5.py``) that swaps in apex's fused RMSNorm if apex is importable; the project
#: requires no apex and trains with torch's AdamW
_OPTIONAL_APEX_NORM = {
    "lavis/models/blip2_models/modeling_t5.py": (
        "import torch\nfrom torch import nn\n\n\nclass T5LayerNorm(nn.Module):\n    def forward(self, hidden_states):\n"
        "        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)\n"
        "        return self.weight * hidden_states * torch.rsqrt(variance + self.variance_epsilon)\n\n\n"
        "try:\n    from apex.normalization import FusedRMSNorm\n\n    T5LayerNorm = FusedRMSNorm  # noqa\n"
        "except ImportError:\n    pass\n"),
    "lavis/runners/runner_base.py": (
        "import torch\n\n\ndef build_optimizer(params, cfg):\n"
        "    return torch.optim.AdamW(params, lr=float(cfg.init_lr), weight_decay=float(cfg.weight_decay), betas=(0.9, 0.999))\n"),
    "requirements.txt": "torch>=1.10.0\ntransformers>=4.25.0,<4.27\ntimm==0.4.12\n",
}


def _optional_package(f: Facts, use: Any) -> bool:
    """A use whose package every import in its file takes in ``try: ... except ImportError:`` and that no dependency
    declaration of the project names: it runs only where someone installed the package by hand."""
    root = use.name.split(".")[0]
    ff = f.files.get(use.path)
    if ff is None or root in ("torch", "?"):
        return False
    mine = [i for i in ff.imports if i.module.split(".")[0] == root]
    return bool(mine) and all(i.optional for i in mine) and not f.deps(root)


_HF_MODEL_CLASS = lazy_compile(r"(ForCausalLM|ForConditionalGeneration|LMHeadModel|ForVision2Seq|ForImageTextToText|ForSeq2SeqLM)$")


#: the model classes Liger patches: decoder LMs and vision-language models (``AutoModelForCausalLM``, ``Qwen2VLForConditionalGeneration``),
#: or the bare ``AutoModel`` a trainer wraps; not text encoders (``CLIPTextModel``, ``T5EncoderModel``)
_LIGER_TARGET = lazy_compile(r"(ForCausalLM|ForConditionalGeneration|LMHeadModel|ForVision2Seq|ForImageTextToText|^AutoModel)$")


def _trains_hf_model(ctx: Context) -> bool:
    """Whether an HF model is what gets trained: an HF/TRL trainer, an HF fine-tuning framework, a causal-LM class loaded
    to train, a recipe naming the checkpoint. transformers imported for tokenizers, configs or checkpoint conversion
    (nanotron, torchtitan: their own model code) is not; neither is a frozen text encoder (Flux's CLIP/T5 embedder) nor a
    reward or teacher model loaded beside the project's own architecture."""
    f = ctx.facts
    training = ctx.project.training_files

    def trained(c: Call) -> bool:
        # (not a class the repository defines itself, Video-LLaMA's copied ``modeling_llama.LlamaForCausalLM``: Liger's
        # one-line patches replace transformers' classes, not the copy)
        return not (training and c.path not in training) and not aux_model_site(f, c.path, c.line, c.text) \
            and not _own_model_classes(f, [c])

    return bool(
        {"trl", "peft", "axolotl", "llamafactory"} & set(ctx.project.frameworks)
        or uses_hf_trainer(f) or [c for c in _hf_model_loads(f) if _LIGER_TARGET.search(c.name.rsplit(".", 2)[-2]) and trained(c)]
        or f.config("model_name_or_path", "base_model")
    )


def _hf_model_loads(f: Facts, generation: bool = False) -> list[Call]:
    """``from_pretrained`` calls of transformers model classes (not tokenizers, processors or configs) that load a model to
    train: not in a checkpoint converter, exporter or evaluation script (GPT-NeoX ``tools/ckpts/convert_hf_to_sequential.py``).
    With ``generation`` (a project that only generates), those that load a model to generate with: a chat or inference
    script is then the project's own path (llama3-Chinese-chat ``deploy/python/chat_demo.py``), a converter still is not."""
    out = []
    for c in f.calls("from_pretrained"):
        if generation:
            if _NOT_GENERATION_SITE.search(c.path) or (c.func and _NOT_GENERATION_FUNC.match(c.func.rsplit(".", 1)[-1])):
                continue
        elif _NOT_TRAINING_SITE.search(c.path) or (c.func and _NOT_TRAINING_FUNC.match(c.func.rsplit(".", 1)[-1])):
            continue
        owner = c.name.rsplit(".", 1)[0]
        cls = owner.rsplit(".", 1)[-1]
        if not (owner.startswith(("transformers.", "trl.")) or cls.startswith("Auto") or _HF_MODEL_CLASS.search(cls)):
            if not _passed_model_class(f, c, owner):
                continue
        elif any(x in cls for x in ("Tokenizer", "Processor", "Config", "FeatureExtractor", "ImageProcessor", "GenerationConfig")):
            continue
        out.append(c)
    return out


def _passed_model_class(f: Facts, c: Call, owner: str) -> bool:
    """``model_class.from_pretrained(...)`` in a function whose callers pass a transformers model class as that parameter
    (h2o-llmstudio: ``create_nlp_backbone(cfg, model_class=AutoModelForCausalLM)``)."""
    if "." in owner or not c.func:
        return False
    for caller in f.calls(c.func.rsplit(".", 1)[-1]):
        v = caller.kwargs.get(owner)
        name = (v.dotted or v.text) if isinstance(v, Expr) else None
        last = (name or "").rsplit(".", 1)[-1]
        if last.startswith("AutoModel") or (_HF_MODEL_CLASS.search(last) and "Config" not in last and "Tokenizer" not in last):
            return True
    return False


#: ``torch.compile(flex_attention)`` is how FlexAttention runs fused (its kernel, D1); ``torch.compile(generate_next_token)``
#: speeds up decoding: neither compiles the training step
_NOT_TRAINING_COMPILE = lazy_compile(r"^(flex_attention|create_block_mask|generate\w*|decode\w*|\w*_generate|\w*next_token\w*|sample\w*|"
                                   r"\w*_decod(e|ing)(_\w*)?)$")  # ``patched_layer_forward_decoding``; not ``decoder_layer``


def _join(detail: str, extra: str) -> str:
    return f"{detail}; {extra}" if extra else detail


#: what a compiled function is named when it is a helper kernel, not the model (``entropy_from_logits``, ``loss_fn``)
_HELPER_FN = lazy_compile(r"(loss|entropy|logits|_fn$|func$|attention|attn|norm$|rope|rotary|pos_emb|softmax|kernel|_op$|gelu|silu|swiglu|matmul|"
                        r"gemm|sampler|sample|logprob|log_prob|kl_|_kl$|topk|zeropower|newton_schulz|update)", re.I)
_MODEL_LIKE = lazy_compile(r"(model|module|net$|transformer|block|layer|encoder|decoder|backbone|policy|actor|critic|llm|unet|vit)", re.I)


def _helper_switch(s: Setting) -> bool:
    """A ``torch_compile=`` keyword of a call to a loss/kernel function (``unsloth_fused_ce_loss(..., torch_compile=True)``,
    ``patch_loss_functions(torch_compile=False)``): that helper's own compile switch, not HF's ``torch_compile`` training argument."""
    if s.source != "call":
        return False
    callee = s.key.split("(", 1)[0].rsplit(".", 1)[-1]
    return (bool(_HELPER_FN.search(callee)) and not _MODEL_LIKE.search(callee)
            and not re.search(r"(Arguments|Args|Config|Trainer|Plugin)$", callee))


def _compiles_helper(c: Call) -> bool:
    """``torch.compile(entropy_from_logits)``: a named function that is a helper kernel, not the model or a block of it."""
    target = c.args[0] if c.args else None
    text = getattr(target, "dotted", None) or getattr(target, "text", None) or ""
    last = text.rsplit(".", 1)[-1]
    return bool(last) and "(" not in text and not _MODEL_LIKE.search(last) and bool(_HELPER_FN.search(last))


_STEP_FN = lazy_compile(r"step|train", re.I)


def _compiles_closure(f: Facts, c: Call) -> bool:
    """``fused_fwd_bwd = torch.compile(fused_fwd_bwd)`` where ``fused_fwd_bwd`` is a function defined inside the calling
    function (a chunked loss's per-chunk forward/backward): a closure of that function is a helper, not the model; a
    closure named like the training step (``train_step``) is the step compiled."""
    target = c.args[0] if c.args else None
    name = getattr(target, "text", None) or ""
    if not c.func or not name.isidentifier() or _MODEL_LIKE.search(name) or _STEP_FN.search(name):
        return False
    return any(x.func == name and x.outer == c.func for x in f.calls_in([c.path]))


def _uninstalled_patch(f: Facts, c: Call) -> list:
    """``torch.compile`` inside a replacement that is installed only by a patch function nothing calls: ``def
    patch_regional_compilation(): def UnslothModuleList(...): ... torch.compile(x) ...; torch.nn.ModuleList = UnslothModuleList``
    with no call of ``patch_regional_compilation`` in the project. The install sites (``X.y = F``) when every one is such a
    function; empty when the replacement is called, installed at module level or by a function that is called."""
    func = c.func
    if not func or func.startswith("__") or any(x.func != func for x in f.calls(func) if x.short == func.rsplit(".", 1)[-1]):
        return []
    installs = [a for a in f.records("attr_assigns") if isinstance(a.value, Expr) and a.value.ref == func and a.path == c.path]
    if not installs or any(not a.func or a.func == func or f.calls(a.func) for a in installs):
        return []
    return installs


def active_compile_calls(f: Facts) -> tuple[list[Call], list]:
    """``torch.compile`` call sites that run (not ``disable=True``, not behind an ``if`` flag that is off), and the ones that do not."""
    on_: list[Call] = []
    off_: list = []
    # ``@torch.compile(fullgraph=True)`` above a ``def`` is recorded both as a decorator and as a call: it compiles that
    # function, not the model (D2 judges decorators separately)
    decorator_sites = {(d.path, d.line) for d in f.decorators("torch.compile")}
    for c in f.calls("torch.compile", "torch._dynamo.optimize"):
        if (c.path, c.line) in decorator_sites:
            continue
        if value_on(f, c.kwargs.get("disable", False)) is True:
            off_.append(c)
            continue
        target = c.args[0] if c.args else None
        target_text = getattr(target, "dotted", None) or getattr(target, "text", "") or ""
        if _NOT_TRAINING_COMPILE.search(target_text.rsplit(".", 1)[-1]):
            continue  # FlexAttention's own kernel (D1) or a decoding step (inference): not the training step compiled
        gated = guard_off(f, c) or callers_off(f, c) or registry_off(f, c) or _uninstalled_patch(f, c)
        if gated:
            off_ += gated
            continue
        on_.append(c)
    keras_files = {i.path for i in f.imports("tensorflow", "keras", "tf_keras")}
    for c in f.calls("compile"):
        recv = c.name.rsplit(".", 1)[0].lower() if "." in c.name else ""
        if (
            c.path not in keras_files
            and (re.search(r"(model|module|engine|net|block|blocks|layer|layers|decoder_layer|transformer_block)$", recv)
                 or (recv == "?" and re.search(r"(block|layer)s?\b", c.text)))  # ``for block in model.layers: block.compile()``
            and not c.args
            and set(c.kwargs) <= {"mode", "fullgraph", "dynamic", "backend", "options", "compile_kwargs", "backend_kwargs"}
            and not guard_off(f, c) and not callers_off(f, c)
        ):
            on_.append(c)
    return on_, off_


def _registry_compile(f: Facts) -> tuple[list, list, int, list] | None:
    """A compile switch that is a config-class field defaulting to off (torchtitan ``CompileConfig.enable: bool = False``,
    configs.py:292) in a project whose runs are Python config-registry recipes: (the default, the recipes that turn it on,
    the number of recipes, the settings that do). None without such a switch or registry."""
    total = total_recipes(f)
    if not total:
        return None
    defaults = [s for s in f.settings("enable", "enabled") if s.source == "field-default" and truthy(s.value) is False
                and "compile" in s.key.split(".", 1)[0].lower()]
    if not defaults:
        return None
    owners = {d.key.split(".", 1)[0] for d in defaults}
    sets = [s for s in f.settings("enable", "enabled") if s.source == "call" and s.key.split("(", 1)[0].endswith(tuple(owners))]
    on, cited = recipes_on(f, sets)
    return defaults, on, total, cited


# --- D1 Flash Attention ---------------------------------------------------------

# GPT-NeoX's per-layer ``"attention_config": [[["flash"], 24]]`` (its default ``global`` is the unfused softmax attention)
_ATTN_KEYS = ("attn_implementation", "_attn_implementation", "attention_implementation", "attn_impl", "attention_config")
#: the names of transformers' ``attn_implementation`` choice (Megatron's ``attention_backend: auto`` picks a fused kernel)
_HF_ATTN_NAMES = frozenset({"attn_implementation", "_attn_implementation", "attention_implementation"})
_ATTN_BOOL_KEYS = (
    "use_flash_attention_2", "use_flash_attn", "use_flash_attention", "flash_attention", "flash_attn", "sdp_attention",
    "xformers_attention", "flex_attention", "use_sdpa", "use_xformers", "enable_flash_attention", "flash_attn_2", "use_flash_attn_2",
    "use_flash_attention_3", "flash_attention_3",
)
#: values that pick a fused kernel (llm-foundry's ``attn_impl: triton`` is a Triton FlashAttention)
_ATTN_STR_ON = {"fa2", "fa3", "sdpa", "auto", "flash", "flash_attention_2", "flash_attention_3", "flex_attention", "flex", "xformers",
                "fused", "triton"}
_FA_FUNCS = lazy_compile(r"^flash_attn_(varlen_)?(qkvpacked_|kvpacked_)?func$|^flash_attn_with_kvcache$|^Flash(Self|Cross)Attention$|^FlashMHA$")
#: a line that names a kernel function without running it: an import, a test of whether it imported, ``__all__``
_FA_NOT_USE = lazy_compile(r"^\s*(from|import)\b|\bis\s+(not\s+)?None\b|[!=]=\s*None\b|__all__|\bhasattr\(|\bcallable\(")
#: a patch that swaps attention for a fused kernel (``replace_llama_attn_with_flash_attn``); a loader named for the kernel it
#: may pick (ms-swift ``get_model_tokenizer_with_flash_attn``, which sets the attention only from its ``attn_impl`` argument) is not
_FA_PATCH = lazy_compile(r"^(replace|patch|apply|enable|use|set)_\w*(flash_attn|flash_attention|xformers|sdpa)\w*$|"
                       r"^(?!(get|load|build|create|make|init)_)\w*_with_(flash_attn|flash_attention|xformers|sdpa)\w*$", re.I)
_SDPA = ("torch.nn.functional.scaled_dot_product_attention",)
#: (xformers' forward-only entry, ``fmha.memory_efficient_attention_forward``, dispatches to the same fused kernels: Chameleon's
#: inference transformer)
_OTHER_ATTN = ("xformers.ops.memory_efficient_attention", "xformers.ops.fmha.memory_efficient_attention",
               "xformers.ops.memory_efficient_attention_forward", "xformers.ops.fmha.memory_efficient_attention_forward",
               "torch.nn.attention.flex_attention.flex_attention", "transformer_engine.pytorch.DotProductAttention",
               "transformer_engine.pytorch.TransformerLayer", "transformer_engine.pytorch.MultiheadAttention")


_ENGINES = ("vllm.LLM", "vllm.LLMEngine.*", "vllm.AsyncLLMEngine.*", "vllm.AsyncEngineArgs", "vllm.EngineArgs", "sglang.Engine",
            "tensorrt_llm.LLM", "lmdeploy.pipeline")
_GRAPH_ENGINES = ("vllm.LLM", "vllm.LLMEngine.*", "vllm.AsyncLLMEngine.*", "vllm.AsyncEngineArgs", "vllm.EngineArgs", "sglang.Engine")


def _forwarded_switch_defaults(f: Facts) -> list[Evidence]:
    """A kernel switch that a backbone class takes with default True and hands on by name (Prismatic's
    ``LLaMa2LLMBackbone.__init__(..., use_flash_attention_2: bool = True)`` -> ``super().__init__(...,
    use_flash_attention_2=use_flash_attention_2)`` -> ``from_pretrained(use_flash_attention_2=...)``), when no construction
    of that class in the project passes it off: the parameter's default is the run's setting."""
    out: list[Evidence] = []
    for name in ("use_flash_attention_2", "use_flash_attn", "use_flash_attention", "flash_attn"):
        for c in f.calls_with_kw(name):
            v = c.kwargs.get(name)
            fw = (c.forwarded or {}).get(name)
            if not (isinstance(v, Expr) and v.text == name and fw is not None and fw[2] is True) or guard_off(f, c):
                continue
            owner = class_at(f, c.path, c.line) if c.func == "__init__" else None
            callers = f.calls(owner) if owner else f.calls(c.func) if c.func else []
            if any(name in x.kwargs and truthy(x.kwargs[name]) is False for x in callers):
                continue
            out.append(Evidence(c.path, fw[3], fw[4].strip(), f"{owner or c.func}({name}=)", True))
    return out


#: a choice between two kernels by a flag (Chinese-LLaMA-Alpaca-3 ``attn_implementation="flash_attention_2" if
#: training_args.use_flash_attention_2 else "sdpa"``)
_ATTN_CHOICE = lazy_compile(r"""^\s*(["'])([\w\-/]+)\1\s+if\s+.+?\s+else\s+(["'])([\w\-/]+)\3\s*$""", re.S)


def _attn_kind(v: object) -> str | None:
    """'flash_attention_2' / 'sdpa' / ... when a value selects an efficient attention kernel, 'eager' when it selects the slow one.
    A choice by a flag between two fused kernels selects a fused one either way: the one the flag leaves (its ``else``)."""
    if isinstance(v, Expr) and (m := _ATTN_CHOICE.match(v.text)):
        on, off = _attn_kind(m.group(2)), _attn_kind(m.group(4))
        return off if on and off and "eager" not in (on, off) and "auto" not in (on, off) else None
    if not isinstance(v, str):
        return None
    low = v.strip().lower()
    if low in {"eager", "disabled", "math", "unfused", "local", "vanilla", "global"}:
        return "eager"
    if "flash" in low or low.startswith("kernels-community/"):
        return "flash_attention_3" if "3" in low else "flash_attention_2"
    if low in _ATTN_STR_ON:
        return {"fa2": "flash_attention_2", "fa3": "flash_attention_3", "triton": "flash_attention_2", "flex": "flex_attention"}.get(low, low)
    return None


_NOT_TRAINING_SITE = lazy_compile(r"(^|/)(tests?|testing|eval\w*|evaluation|inference|serve|serving|scripts/convert\w*)/|"
                                r"(^|/)(test_\w+|\w+_test|eval\w*|infer\w*|generate\w*|chat\w*|convert\w*|export\w*|merge\w*|\w*_merge\w*)\.py$", re.I)


#: converters, exporters and tests: where a model is loaded neither to train nor to generate with
_NOT_GENERATION_SITE = lazy_compile(r"(^|/)(tests?|testing|scripts/convert\w*)/|"
                                   r"(^|/)(test_\w+|\w+_test|convert\w*|export\w*|merge\w*|\w*_merge\w*)\.py$", re.I)
_NOT_GENERATION_FUNC = lazy_compile(r"^(to_(hf|huggingface|transformers|llava|official)\w*|\w*convert\w*|export\w*|save_\w*|"
                                   r"merge_\w*)$", re.I)


# a function that builds a model only to export, convert, save or generate with it (xtuner ``to_huggingface_llava``): an
# attention choice made there is not the training run's
_NOT_TRAINING_FUNC = lazy_compile(r"^(to_(hf|huggingface|transformers|llava|official)\w*|\w*convert\w*|export\w*|save_\w*|"
                                r"merge_\w*|generate\w*|chat\w*|infer\w*|predict\w*|evaluate\w*|eval_\w*)$", re.I)


def _in_non_training_func(f: Facts, s: Any) -> bool:
    """Whether the call that holds setting ``s`` (``LlavaConfig(..., attn_implementation="eager")``) sits in a function
    named for export/conversion/generation (see ``_NOT_TRAINING_FUNC``)."""
    if getattr(s, "source", None) != "call":
        return False
    key = getattr(s, "name", "")
    ff = f.files.get(s.path)
    for c in (ff.calls if ff else ()):
        if c.func and (c.line == s.line or c.kw_line(key) == s.line) and key in c.kwargs:
            return bool(_NOT_TRAINING_FUNC.match(c.func.rsplit(".", 1)[-1]))
    return False


def _is_recipe_file(x: Any) -> bool:
    return getattr(x, "source", None) == "config" and x.path.endswith((".yaml", ".yml", ".json"))


def _eager_training_sites(f: Facts, off_: list, used: list) -> list:
    """Sites that choose eager/math attention explicitly (``attn_implementation="eager"`` in a ``from_pretrained`` of the
    training script), judged per training site: a flag turned off (``use_flash_attn: false``) or a value in a test,
    evaluation, generation or conversion script is not one, nor is a fallback: eager assigned in Python to the same
    variable that the same file also sets to a fused kernel (instructlab-training ``self.base_model_args["attn_implementation"]``
    is ``"flash_attention_2"``, and ``"eager"`` only for GPT-OSS on a pre-Hopper GPU)."""
    fused = {(getattr(u, "path", None), getattr(u, "key", None)) for u in used if isinstance(u, Setting) and u.source == "config"}
    out = []
    for s in off_:
        if not isinstance(s, Setting) or s.source not in ("call", "config", "launcher", "assign") or _attn_kind(s.value) != "eager":
            continue
        if _NOT_TRAINING_SITE.search(s.path) or _in_non_training_func(f, s):
            continue
        if s.source == "config" and s.path.endswith(".py") and (s.path, s.key) in fused:
            continue
        out.append(s)
    return out


def _patched_attention(f: Facts) -> list:
    """``LlamaAttention.forward = LlamaAttention_fast_forward``: the project replaces an attention class's ``forward`` with a
    function of its own (which calls the kernels D1 sees), so the model's ``attn_implementation`` no longer picks the path."""
    out = []
    for a in f.attr_assigns("forward"):
        parts = a.target.rsplit(".", 2)
        if len(parts) == 3 and re.search(r"Attention\w*$", parts[1]) and isinstance(a.value, Expr) and a.value.ref:
            out.append(a)
    return out


def _branch_off(f: Facts, s: Any) -> bool:
    """A Python dict entry set in an ``if`` branch that is switched off: ``kwargs["use_flash_attention_2"] = True`` under
    ``if cfg.flash_attn:`` with ``flash_attn: bool = False`` and nothing turning it on (see :func:`guard_off`)."""
    if not isinstance(s, Setting) or s.source != "config" or not s.path.endswith(".py"):
        return False
    for e in f.config(s.name):
        if e.path == s.path and e.line == s.line and e.guard:
            return bool(guard_off(f, e))
    return False


#: attention kinds named by what their sites call (a site's name or text holds the word)
_SITE_KINDS = {"xformers": ("xformers",), "flex_attention": ("flex",), "sdpa": ("scaled_dot_product", "sdpa")}


def _site_text(x: Any) -> str:
    return f"{getattr(x, 'name', '')} {getattr(x, 'text', '')} {getattr(x, 'key', '')} {getattr(x, 'value', '')}".lower()


#: calls that build or load a model (or its config), which a forwarded ``**kwargs`` may hand an attention option
_MODEL_BUILD = lazy_compile(r"(?i)from_pretrained|from_config|Config$|(load|build|create|get)_?\w*model")


def _option_unread(f: Facts, s: Setting) -> bool:
    """Whether an attention option the project declares (a dataclass field or argparse default) reaches no load: no call
    passes that keyword, no mapping or attribute is set to it, and no call in the declaring file forwards ``**kwargs`` that
    could carry it into a model's load (PiSSA: the field says ``flash_attention_2``, and ``from_pretrained(...)`` below
    never names the keyword; its ``Trainer(**data_module)`` hands on datasets)."""
    name = s.name
    if f.calls_with_kw(name) or f.attr_assigns(name, f"_{name}"):
        return False
    if any(e.path != s.path or e.line != s.line for e in f.config(name)):
        return False
    ff = f.files.get(s.path)
    return not (ff and any(c.star_kwargs and _MODEL_BUILD.search(c.short) for c in ff.calls))


def attention_sites(f: Facts) -> tuple[list, list, set[str]]:
    """(sites that select an efficient attention kernel, sites that select eager attention, kernels seen)."""
    used: list = []
    off_: list = []
    kinds: set[str] = set()
    for e in f.envs("VLLM_ATTENTION_BACKEND"):
        k = _attn_kind(e.value) or ("flash_attention_2" if e.value.upper() in {"FLASHINFER", "FLASH_ATTN", "XFORMERS", "TRITON_ATTN"} else None)
        if k and k != "eager":
            used.append(e)
            kinds.add(k)
    for s in f.effective(*_ATTN_KEYS, "attention_backend", "attention", "attn_backend"):
        k = _attn_kind(s.value)
        if s.source in ("field-default", "argparse-default") and s.name in _HF_ATTN_NAMES and _option_unread(f, s):
            continue  # PiSSA's ``attn_implementation: str = field(default="flash_attention_2")``, which no load is handed
        if k == "auto" and s.name in _HF_ATTN_NAMES:
            # transformers has no "auto" implementation: a project option left at "auto" passes nothing (h2o-llmstudio:
            # ``attention_implementation: str = "auto"``, handed on only ``if ... != "auto"``), so the model's default runs
            continue
        if k == "eager":
            off_.append(s)
        elif k:
            used.append(s)
            kinds.add(k)
    for a in f.attr_assigns("_attn_implementation", "attn_implementation"):
        k = _attn_kind(a.value)
        if k and k != "eager":
            used.append(a)
            kinds.add(k)
    for s in f.effective(*_ATTN_BOOL_KEYS):
        t = truthy(s.value)
        k = _attn_kind(s.value)
        if (t is True or (k and k != "eager")) and _branch_off(f, s):
            continue
        if t is True or (k and k != "eager"):
            used.append(s)
            kinds.add(k if k and k != "auto" else "sdpa" if "sdp" in s.name else "xformers" if "xformers" in s.name else "flash_attention_2")
        elif t is False and s.rank > 0:
            off_.append(s)
    forwarded = _forwarded_switch_defaults(f)
    if forwarded:
        used += forwarded
        kinds.add("flash_attention_2")
    for c in f.calls("flash_attn.*", "flash_attn_interface.*", "flash_attn_3.*"):
        if not _FA_FUNCS.match(c.short) or guard_off(f, c):
            continue
        used.append(c)
        kinds.add("flash_attention_3" if "interface" in c.name.split(".")[0] or c.name.startswith("flash_attn_3") else "flash_attention_2")
    # a kernel function handed to a dispatcher as a value (InternEvo ``_flash_float32_compatibility_wrapper((0),
    # _flash_varlen_qkvpacked_func, qkv, ...)`` with ``flash_attn_varlen_qkvpacked_func as _flash_varlen_qkvpacked_func``)
    # runs as surely as a direct call; an availability test (``if flash_attn_func is None``) or a re-export is not a use
    for r in f.refs("flash_attn.*", "flash_attn_interface.*", "flash_attn_3.*"):
        if _FA_FUNCS.match(r.name.rsplit(".", 1)[-1]) and not _FA_NOT_USE.search(r.text):
            used.append(r)
            kinds.add("flash_attention_3" if r.name.startswith(("flash_attn_interface", "flash_attn_3")) else "flash_attention_2")
    # Ring Attention's blockwise kernel (LWM: ``shard_map(partial(ringattention, ...))`` from the ``ringattention`` package):
    # attention computed block by block without the S x S score matrix (a Pallas flash kernel on TPU), handed on as a value
    for r in f.refs("ringattention.ringattention", "ringattention.ringattention_jax", "ringattention.blockwise_attn"):
        if not _FA_NOT_USE.search(r.text):
            used.append(r)
            kinds.add("ring attention (blockwise)")
    for c in f.calls("MHA"):
        if c.name.startswith("flash_attn") and value_on(f, c.kwargs.get("use_flash_attn")):
            used.append(c)
            kinds.add("flash_attention_2")
    for c in f.calls_where(lambda s: "flash" in s or "xformers" in s or "sdpa" in s):
        short = c.short
        if _FA_PATCH.search(short) and not short.startswith("is_") and not guard_off(f, c) and not _missing_patch_module(f, c):
            used.append(c)
            kinds.add("xformers" if "xformers" in c.short else "sdpa" if "sdpa" in c.short else "flash_attention_2")
    for c in f.calls(*_SDPA):
        if not guard_off(f, c):
            used.append(c)
            kinds.add("sdpa")
    for c in f.calls(*_OTHER_ATTN):
        if not guard_off(f, c):
            used.append(c)
            kinds.add("xformers" if "xformers" in c.name else "flex_attention" if "flex" in c.name else "transformer-engine")
    # Megatron-Core's Transformer Engine layer spec (``cfg.model.transformer_impl = "transformer_engine"``, which selects
    # ``get_gpt_layer_with_transformer_engine_spec``): attention runs in TE's DotProductAttention (flash / cuDNN fused kernels).
    # A recipe, config or launch that sets it, not an arguments class's default (ms-swift's Megatron alternative path)
    te_impl = [s for s in f.effective("transformer_impl") if s.source not in ("field-default", "argparse-default")]
    te_impl += [a for a in f.attr_assigns("transformer_impl") if a.guard is None]  # ``cfg.model.transformer_impl = ...``
    for s in te_impl:  # not in a conversion, merge or inference script (LLaMA-Factory ``scripts/megatron_merge.py``)
        if _NOT_TRAINING_SITE.search(s.path) or _in_non_training_func(f, s):
            continue
        if isinstance(s.value, str) and s.value.strip().lower() == "transformer_engine":
            used.append(s)
            kinds.add("transformer-engine")
    return used, off_, kinds


def _missing_patch_module(f: Facts, c: Call) -> bool:
    """An attention patch imported from a top-level module the repository does not hold (Nanbeige's ``finetune/main.py``:
    ``from llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn``, no such file anywhere): a copy of
    FastChat's patch the authors kept elsewhere, which this checkout cannot apply (the import fails), and which names a
    model class the run may not even train. No package of the index is named so; a dotted module (``fastchat.train.
    llama_flash_attn_monkey_patch``) is an installed library's and stays evidence."""
    mod = c.name.rpartition(".")[0]
    if not mod or "." in mod or "patch" not in mod.lower():
        return False
    return not f.paths_named(mod + ".py") and not any(p.endswith(f"{mod}/__init__.py") for p in f.paths_named("__init__.py"))


def training_launches(ctx: Context) -> tuple[Counter[str], dict[str, Any]]:
    """How many launch commands run each training entry script (``torchrun ... training.py`` in four shell scripts,
    ``training_multimodal.py`` in one), with one launch of each; only scripts on the training path count."""
    f, train = ctx.facts, ctx.project.training_files
    counts: Counter[str] = Counter()
    first: dict[str, Any] = {}
    for la in f.launches():
        s = (la.script or "").strip().strip("'\"").removeprefix("./")
        if not s.endswith(".py"):
            continue
        here = posixpath.normpath(posixpath.join(posixpath.dirname(la.path), s))
        target = here if here in train else s if s in train else None
        if target is not None:
            counts[target] += 1
            first.setdefault(target, la)
    return counts, first


def minority_entry_sites(ctx: Context, sites: list) -> tuple[set[str], str]:
    """When every site sits in training entry scripts that fewer than half of the training launches run (the one
    multimodal example among four text runs that set nothing): those scripts, and a note that says so. The run is judged
    by what most launches run, as recipes that disagree are judged by their majority."""
    counts, first = training_launches(ctx)
    total = sum(counts.values())
    paths = {x.path for x in sites}
    if total < 3 or not paths or not paths <= set(counts) or sum(counts[p] for p in paths) * 2 >= total:
        return set(), ""
    s0 = sites[0]
    la = first[s0.path]
    n = sum(counts[p] for p in paths)
    return paths, (f"fused attention is chosen only in {', '.join(sorted(paths))} ({s0.path}:{s0.line}), which {n} of {total} "
                   f"training launches run ({la.path}:{la.line}; judged by the majority)")


#: ms-swift: a model loader named for the kernel it can pick, called without an attention choice
_LOADER_NAMED_FA = (
    "from transformers import AutoConfig, AutoModelForCausalLM\n\n\n"
    "def get_model_tokenizer_with_flash_attn(model_dir, attn_impl=None):\n    config = AutoConfig.from_pretrained(model_dir)\n"
    "    if attn_impl is not None:\n        config._attn_implementation = attn_impl\n"
    "    return AutoModelForCausalLM.from_pretrained(model_dir, config=config)\n\n\n"
    "model = get_model_tokenizer_with_flash_attn('Qwen/Qwen2.5-7B-Instruct')\n")


#: xllm ``core/dependencies.py``: the loader adds the FA2 keyword only when a field of the config dataclass is on
_FA_FLAG_CONFIG = (
    "from dataclasses import dataclass, field\n\n\n@dataclass\nclass Config:\n    model_name_or_path: str = 'mistralai/Mistral-7B-v0.1'\n"
    "    {name}: bool = field(default={default}, metadata={{'help': 'use flash attention 2'}})\n")
_FA_FLAG_LOADER = (
    "from transformers import AutoModelForCausalLM, Trainer\n\n\ndef build_model(cfg):\n    kwargs = dict()\n"
    "    if cfg.{name}:\n        kwargs['use_flash_attention_2'] = True\n"
    "    return AutoModelForCausalLM.from_pretrained(cfg.model_name_or_path, **kwargs)\n\n\n"
    "def train(cfg, args, dataset):\n    Trainer(model=build_model(cfg), args=args, train_dataset=dataset).train()\n")


#: InternEvo ``internlm/model/ops/attention.py``: the kernels are imported under aliases and passed to a wrapper that calls them
_FA_DISPATCH = (
    "import torch\n\ntry:\n    from flash_attn.flash_attn_interface import (\n"
    "        flash_attn_varlen_qkvpacked_func as _flash_varlen_qkvpacked_func,\n    )\n\n"
    "    gpu_flash_attn_impl = True\nexcept (ModuleNotFoundError, ImportError):\n    gpu_flash_attn_impl = False\n\n\n"
    "def _flash_float32_compatibility_wrapper(input_idxs, flash_func, *args, **kwargs):\n"
    "    return flash_func(*args, **kwargs)\n\n\n"
    "def _flash_varlen_qkvpacked_attn(qkv, cu_seqlens, max_seqlen, dropout_p, softmax_scale=None, causal=False):\n"
    "    qkv = qkv.squeeze(dim=0)\n    output = _flash_float32_compatibility_wrapper(\n"
    "        (0), _flash_varlen_qkvpacked_func, qkv, cu_seqlens, max_seqlen, dropout_p, softmax_scale, causal\n    )\n"
    "    return output.unsqueeze(dim=0)\n")
#: the same import whose kernel is only tested for availability; attention is computed by hand
_FA_PROBED = (
    "import torch\n\ntry:\n    from flash_attn.flash_attn_interface import flash_attn_varlen_qkvpacked_func\n"
    "except ImportError:\n    flash_attn_varlen_qkvpacked_func = None\n\nHAS_FLASH = flash_attn_varlen_qkvpacked_func is not None\n\n\n"
    "def attention(q, k, v, scale):\n    return ((q @ k.transpose(-2, -1)) * scale).softmax(-1) @ v\n")


#: FlagEmbedding's shape: the embedder run loads an HF model with no attention choice; a reranker's vendored modeling file
#: (its own entry point, not this run's) picks FlashAttention-2 in its config class and calls the kernels
_UNREACHED_FA = {
    "train_embedder.py": (
        "from transformers import AutoModel, Trainer, TrainingArguments\n\n"
        "model = AutoModel.from_pretrained('BAAI/bge-multilingual-gemma2', attn_implementation=None)\n"
        "trainer = Trainer(model=model, args=TrainingArguments(output_dir='out', bf16=True), train_dataset=dataset)\n"
        "trainer.train()\n"),
    "mypkg/reranker/configuration_minicpm.py": (
        "from transformers import PretrainedConfig\n\n\nclass MiniCPMConfig(PretrainedConfig):\n"
        "    def __init__(self, hidden_size=2304, **kwargs):\n        self.hidden_size = hidden_size\n"
        "        super().__init__(**kwargs)\n        try:\n            import flash_attn  # noqa: F401\n"
        "            self._attn_implementation = \"flash_attention_2\"\n        except ImportError:\n            pass\n"),
    "mypkg/reranker/modeling_minicpm.py": (
        "import torch\nfrom flash_attn import flash_attn_func\n\n\nclass MiniCPMFlashAttention2(torch.nn.Module):\n"
        "    def forward(self, q, k, v):\n        return flash_attn_func(q, k, v, 0.0, causal=True)\n"),
    "requirements.txt": "transformers>=4.44.2\nflash-attn\n",
}


#: Liger Kernel's examples: four launch scripts run the text SFT entry point (no attention choice), one runs the
#: multimodal entry point, which asks for SDPA
def _launch_split(text_attn: str) -> dict[str, str]:
    run = "torchrun --nnodes=1 --nproc-per-node=4 {script} --bf16 --model_name {model} --fsdp 'full_shard auto_wrap'\n"
    return {
        "examples/hf/training.py": (
            "import torch\nimport transformers\nfrom trl import SFTTrainer\n\n\ndef train(args):\n"
            "    model = transformers.AutoModelForCausalLM.from_pretrained(\n"
            f"        args.model_name, use_cache=False, dtype=torch.bfloat16{text_attn}\n    )\n"
            "    SFTTrainer(model=model, args=args).train()\n"),
        "examples/hf/training_multimodal.py": (
            "import torch\nfrom transformers import Qwen2VLForConditionalGeneration, Trainer\n\n\ndef train(args):\n"
            "    model = Qwen2VLForConditionalGeneration.from_pretrained(\n"
            "        args.model_name, dtype=torch.bfloat16, attn_implementation=\"sdpa\"\n    )\n"
            "    Trainer(model=model, args=args).train()\n"),
        "examples/hf/run_llama.sh": run.format(script="training.py", model="meta-llama/Meta-Llama-3-8B"),
        "examples/hf/run_qwen.sh": run.format(script="training.py", model="Qwen/Qwen2-7B"),
        "examples/hf/run_gemma.sh": run.format(script="training.py", model="google/gemma-7b-it"),
        "examples/hf/run_qwen2_vl.sh": run.format(script="training_multimodal.py", model="Qwen/Qwen2-VL-7B-Instruct"),
        "examples/hf/requirements.txt": "transformers==4.45.2\ntrl\n",
    }


#: Qwen ``finetune.py``: a Trainer script whose model loads with ``trust_remote_code=True``
_QWEN_FINETUNE = (
    "from dataclasses import dataclass, field\n\nimport transformers\nfrom transformers import Trainer\n\n\n@dataclass\n"
    "class ModelArguments:\n    model_name_or_path: str = field(default=\"{model}\")\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
    "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(\n        model_args.model_name_or_path,\n"
    "        trust_remote_code=True,\n    )\n"
    "    trainer = Trainer(model=model, args=training_args)\n    trainer.train()\n"
)


#: the model classes of architectures without softmax attention (RWKV's time mixing, Mamba's selective scan, RetNet)
_ATTENTION_FREE = lazy_compile(r"^(RWKV|Mamba|RetNet|Hyena)\w*$")
#: ... and names of attention modules that make a model a (hybrid) transformer again (Jamba's attention layers)
_ATTENTION_CLASS = lazy_compile(r"Attention|Attn|MHA$", re.I)


def _attention_free(f: Facts, training: Any = ()) -> Any:
    """The model class of an attention-free architecture the project trains (BlinkDL/RWKV-LM ``RWKV-v7/train_temp/src/
    model.py``: ``class RWKV(pl.LightningModule)`` built from ``RWKV_Tmix_x070`` time-mixing blocks and CUDA WKV kernels),
    when nothing in scope defines an attention module, calls an attention kernel or loads a Hugging Face causal LM (a
    transformer); None otherwise."""
    classes = f.records("classes")
    free = sorted((c for c in classes if _ATTENTION_FREE.match(c.name)), key=lambda c: (c.path not in (training or ()), not any(b.endswith("Module") for b in c.bases), c.path, c.line))
    if not free or any(_ATTENTION_CLASS.search(c.name) for c in classes):
        return None
    if f.calls("MultiheadAttention", "scaled_dot_product_attention", "flash_attn_func", "flash_attn_varlen_func") \
            or f.calls_where(lambda s: s.endswith("ForCausalLM") or s.endswith("ForConditionalGeneration")):
        return None
    return free[0]


def _showui_train(mem_off: str) -> dict[str, str]:
    """ShowUI's ``train.py``: an HF model loaded with the launch's attention choice, SDPA's kernels switched for it."""
    return {
        "train.py": (
            "import argparse\nimport torch\nfrom transformers import Qwen2VLForConditionalGeneration\n\n\ndef main():\n"
            "    parser = argparse.ArgumentParser()\n"
            "    parser.add_argument('--attn_imple', choices=['eager', 'flash_attention_2', 'sdpa'], default='eager')\n"
            "    args = parser.parse_args()\n    if args.attn_imple in ['eager', 'sdpa']:\n" + mem_off +
            "        torch.backends.cuda.enable_flash_sdp(False)\n"
            "    model = Qwen2VLForConditionalGeneration.from_pretrained('Qwen/Qwen2-VL-2B-Instruct', attn_implementation=args.attn_imple)\n"
            "    for batch in []:\n        model(**batch).loss.backward()\n"),
        "run.sh": "deepspeed --include localhost:0 train.py --attn_imple=sdpa --precision=bf16\n",
    }


#: a run's attention choice that names a fused kernel of its own (FlashAttention-2/3, flex, xformers)
_FUSED_CHOICE = lazy_compile(r"(?i)flash|flex|xformers|fused")


def _sdpa_math_only(f: Facts) -> list[Call]:
    """``torch.backends.cuda.enable_flash_sdp(False)`` and ``enable_mem_efficient_sdp(False)`` both called outside tests and
    not under a switch that is off: SDPA is left with its math kernel (the two calls; empty otherwise)."""
    def off(name: str) -> list[Call]:
        return [c for c in f.calls(name) if c.args and c.args[0] is False and not _TEST_PATH.search(c.path) and not guard_off(f, c)]
    flash, mem = off("enable_flash_sdp"), off("enable_mem_efficient_sdp")
    return sorted([*mem[:1], *flash[:1]], key=lambda c: (c.path, c.line)) if flash and mem else []


@register
class D1FlashAttention(Check):
    id = "D1"
    title = "Flash Attention (incl. SDPA)"
    title_zh = "Flash Attention"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMPUTE)
    priority = Priority.HIGH
    benefit = "2-4x faster attention and memory linear instead of quadratic in sequence length"
    what = (
        "Whether attention runs in a fused IO-aware kernel: HF `attn_implementation=\"flash_attention_2\"|\"flash_attention_3\"|\"sdpa\"`, "
        "`use_flash_attention_2=True`, `flash_attn_func`/`flash_attn_varlen_func`, `F.scaled_dot_product_attention`, xformers "
        "memory-efficient attention, FlexAttention, TransformerEngine attention, Megatron `--use-flash-attn`, axolotl "
        "`flash_attention: true`, LLaMA-Factory `flash_attn: fa2|sdpa|auto`, vLLM `VLLM_ATTENTION_BACKEND`. `eager`/`disabled` is "
        "not use. An HF model loaded without `attn_implementation` is partial: transformers >= 4.36 runs SDPA by default, but "
        "nothing asks for FlashAttention-2 (with a requirements pin below 4.36 the default is eager attention, so unused)."
    )
    why = (
        "FlashAttention computes exact attention in tiles held in SRAM, so HBM traffic drops from O(N^2) to O(N): Dao et al. (2022) "
        "report 2-4x faster attention and 15 % faster BERT-large / 3x faster GPT-2 training; FlashAttention-2 reaches 50-73 % of "
        "A100 peak (Dao, 2023) and FlashAttention-3 75 % of H100 peak in BF16 (Shah et al., 2024). PyTorch SDPA dispatches to the "
        "same kernels when shapes and masks allow; eager attention materialises the full N x N score matrix."
    )
    fix = (
        "Load HF models with `attn_implementation=\"flash_attention_2\"` (install `flash-attn`; BF16/FP16, Ampere or newer) or at least "
        "`\"sdpa\"`; in custom models call `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)` instead of "
        "`softmax(q @ k.T)`; Megatron: `--use-flash-attn`."
    )
    fix_zh = (
        "加载 HF 模型时设置 `attn_implementation=\"flash_attention_2\"`（需安装 `flash-attn`，BF16/FP16，Ampere 及以上）或至少 `\"sdpa\"`；"
        "自定义模型用 `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)` 替代 `softmax(q @ k.T)`；Megatron 加 `--use-flash-attn`。"
    )
    fix_safety = FixSafety.SAFE
    references = ("https://arxiv.org/abs/2205.14135", "https://arxiv.org/abs/2307.08691", "https://arxiv.org/abs/2407.08608",
                  "https://huggingface.co/docs/transformers/perf_infer_gpu_one#flashattention")
    snippets = {
        "python": (
            "import torch\nfrom transformers import AutoModelForCausalLM\n\n"
            "model = AutoModelForCausalLM.from_pretrained(\n"
            "    model_name, torch_dtype=torch.bfloat16, attn_implementation=\"flash_attention_2\"\n)\n"
        ),
        "hf-yaml": "attn_implementation: flash_attention_2\n",
        "shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --use-flash-attn\n",
    }
    examples = (
        Example({"src/model.py": ("import pytorch_lightning as pl\nimport torch\nfrom torch import nn\n\n\nclass RWKV_Tmix_x070(nn.Module):\n"
                                  "    def forward(self, x, v_first):\n        return RUN_CUDA_RWKV7g(x, x, x, x, x, x), v_first\n\n\n"
                                  "class RWKV(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n"
                                  "        idx, targets = batch\n        return self(idx).float().mean()\n"),
                 "train.py": "import pytorch_lightning as pl\nfrom src.model import RWKV\n\ntrainer = pl.Trainer(precision='bf16')\n"
                             "trainer.fit(RWKV(args), data_loader)\n"}, Status.NA, "RWKV-7: attention-free time mixing"),
        Example({"src/model.py": ("import pytorch_lightning as pl\nimport torch\nfrom torch import nn\n\n\nclass RWKV_Tmix_x070(nn.Module):\n"
                                  "    def forward(self, x, v_first):\n        return RUN_CUDA_RWKV7g(x, x, x, x, x, x), v_first\n\n\n"
                                  "class SelfAttention(nn.Module):\n    def forward(self, q, k, v):\n"
                                  "        return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v\n\n\n"
                                  "class RWKV(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n"
                                  "        idx, targets = batch\n        return self(idx).float().mean()\n"),
                 "train.py": "import pytorch_lightning as pl\nfrom src.model import RWKV\n\ntrainer = pl.Trainer(precision='bf16')\n"
                             "trainer.fit(RWKV(args), data_loader)\n"}, N, "a hybrid with an eager softmax attention layer"),
        Example({"finetune.py": _QWEN_FINETUNE.format(model="Qwen/Qwen-7B")}, Status.NA,
                "Qwen-7B: remote code (trust_remote_code) chooses its own attention kernel"),
        Example({"finetune.py": _QWEN_FINETUNE.format(model="Qwen/Qwen2-7B")}, P,
                "Qwen2-7B, a native transformers model, loaded the same way: its attn_implementation applies"),
        Example({"configs/pythia/160M.yml": ('{\n  "num_layers": 12,\n  "hidden_size": 768,\n  "num_attention_heads": 12,\n'
                                             '  "attention_config": [[["flash"], 12]],\n  "seq_length": 2048,\n}\n'),
                 "train.py": "from megatron.training import pretrain\npretrain(neox_args)\n"}, U, "gpt-neox attention_config flash"),
        Example({"configs/125M.yml": ('{\n  "num_layers": 12,\n  "hidden_size": 768,\n  "attention_config": [[["global"], 12]],\n}\n'),
                 "train.py": "from megatron.training import pretrain\npretrain(neox_args)\n"}, N, "gpt-neox global (unfused) attention"),
        Example({"tools/ckpts/convert_hf_to_sequential.py": (
            "from transformers import GPTNeoXForCausalLM\n\n\ndef load(path):\n    return GPTNeoXForCausalLM.from_pretrained(path)\n"),
                 "train.py": "import torch\nloss = model(x)\nloss.backward()\n"}, N, "an HF load in a checkpoint converter is not the trained model"),
        Example({"train.py": (
            "import torch\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(\n"
            "    'meta-llama/Llama-3.1-8B', torch_dtype=torch.bfloat16, attn_implementation='flash_attention_2')\n")}, U, "hf flash_attention_2"),
        Example({"scripts/training/run_clm_sft_with_peft.py": (  # Chinese-LLaMA-Alpaca-3: FA2 behind a flag, SDPA otherwise
            "import torch\nfrom transformers import AutoModelForCausalLM, Trainer\n\n\ndef main(model_args, training_args, ds):\n"
            "    model = AutoModelForCausalLM.from_pretrained(\n        model_args.model_name_or_path,\n        torch_dtype=torch.bfloat16,\n"
            "        attn_implementation=\"flash_attention_2\" if training_args.use_flash_attention_2 else \"sdpa\"\n    )\n"
            "    Trainer(model=model, args=training_args, train_dataset=ds).train()\n")},
            U, "FlashAttention-2 or SDPA by a flag: fused either way"),
        Example({"model.py": (
            "import torch.nn.functional as F\nclass CausalSelfAttention:\n    def forward(self, q, k, v):\n"
            "        return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n")}, U, "sdpa call"),
        Example({"examples/train_lora/qwen_lora.yaml": "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nstage: sft\nfinetuning_type: lora\nflash_attn: fa2\n"}, U, "llamafactory fa2"),
        Example({"scripts/pretrain.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --use-flash-attn --bf16\n"}, U, "megatron flag"),
        Example({"llava/train/train_mem.py": (
            "from llava.train.llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn\n"
            "replace_llama_attn_with_flash_attn()\nfrom llava.train.train import train\nif __name__ == '__main__':\n    train()\n")}, U, "monkey patch"),
        Example({"train.py": (
            "from transformers import AutoModelForCausalLM\n"
            "model = AutoModelForCausalLM.from_pretrained('google/gemma-2-9b', attn_implementation='eager')\n")}, N, "eager"),
        Example({"axolotl.yml": "base_model: mistralai/Mistral-7B-v0.1\nflash_attention: false\nsdp_attention: false\n"}, N, "disabled flags"),
        Example({"model.py": (
            "import torch\nclass Attn(torch.nn.Module):\n    def forward(self, q, k, v):\n"
            "        att = (q @ k.transpose(-2, -1)) * self.scale\n        return att.softmax(-1) @ v\n"
            "# y = F.scaled_dot_product_attention(q, k, v)\n"),
                 "requirements.txt": "torch>=2.1\nflash-attn\n"}, N, "manual attention, flash-attn only installed"),
        Example({"train.py": (
            "from transformers import AutoModelForCausalLM, Trainer\n"
            "model = AutoModelForCausalLM.from_pretrained('mistralai/Mistral-7B-v0.1')\n"),
                 "requirements.txt": "transformers>=4.40.0\n"}, P, "hf default sdpa"),
        Example({"Dockerfile": "FROM vllm/vllm-openai:latest\nENV VLLM_ATTENTION_BACKEND=FLASHINFER\n"}, U, "vllm backend env"),
        Example({"internlm/model/ops/attention.py": _FA_DISPATCH}, U, "kernel function handed to a dispatcher"),
        Example({"internlm/model/ops/attention.py": _FA_PROBED}, N, "kernel only imported and probed"),
        Example({"train.py": (
            "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('huggyllama/llama-7b')\n"),
                 "requirements.txt": "transformers==4.31.0\n"}, N, "old transformers default eager"),
        # torchtune's recipes/configs/llama3_1/8B_lora.yaml: the builder's model calls SDPA itself
        Example({"recipes/configs/llama3_1/8B_lora.yaml": (
            "model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n  lora_attn_modules: ['q_proj', 'v_proj']\n"
            "  lora_rank: 8\noptimizer:\n  _component_: torch.optim.AdamW\n  fused: True\n  lr: 3e-4\ndtype: bf16\n")}, U, "torchtune model component"),
        Example({  # two training paths: Megatron continued pretraining with FlashAttention, HF SFT with eager attention
            "scripts/cpt_megatron.sh": (
                "srun torchrun --nnodes 2 --nproc_per_node 8 \\\n    ${MEGATRON}/pretrain_gpt.py \\\n    --num-layers 32 \\\n"
                "    --seq-length 8192 \\\n    --use-flash-attn \\\n    --bf16\n"),
            "src/sft/train.py": (
                "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
                "model = AutoModelForCausalLM.from_pretrained(\n    'meta-llama/Meta-Llama-3-8B',\n    attn_implementation=\"eager\",\n)\n"
                "trainer = Trainer(model=model, args=TrainingArguments(output_dir='out', bf16=True))\ntrainer.train()\n"),
        }, P, "eager on one training path, FlashAttention on another"),
        Example({  # eager attention only where the model is evaluated: the training path uses FlashAttention-2
            "train.py": (
                "from transformers import AutoModelForCausalLM, Trainer\n"
                "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2-7B', attn_implementation='flash_attention_2')\n"
                "trainer = Trainer(model=model)\ntrainer.train()\n"),
            "eval/eval_mmlu.py": (
                "from transformers import AutoModelForCausalLM\n"
                "model = AutoModelForCausalLM.from_pretrained('out', attn_implementation='eager')\n"),
        }, U, "eager only in an evaluation script"),
        Example({  # instructlab-training: the kwargs dict gets the kernel by key, eager only as a pre-Hopper fallback
            "src/instructlab/training/model.py": (
                "import torch\nfrom transformers import AutoModelForCausalLM\n\nclass Model:\n"
                "    def __init__(self, model_path, flash_enabled=True, is_gpt_oss=False):\n"
                "        self.base_model_args = {\"pretrained_model_name_or_path\": model_path}\n"
                "        if flash_enabled:\n            self.base_model_args[\"attn_implementation\"] = \"flash_attention_2\"\n"
                "            if is_gpt_oss and torch.cuda.get_device_capability()[0] < 9:\n"
                "                self.base_model_args[\"attn_implementation\"] = \"eager\"\n"
                "        self.model = AutoModelForCausalLM.from_pretrained(**self.base_model_args)\n"),
        }, U, "kernel set by dict key, eager fallback"),
        Example({  # xtuner 0.2.0 model/llava.py: eager only in the method that builds an HF model to save a converted checkpoint
            "xtuner/model/llava.py": (
                "from transformers import AutoConfig, LlavaConfig, LlavaForConditionalGeneration\n\n"
                "class LLaVAModel:\n"
                "    @staticmethod\n    def _prepare_for_flash_attn(cfg, llm_cfg):\n"
                "        cfg.attn_implementation = \"flash_attention_2\"\n        return cfg\n\n"
                "    def to_huggingface_llava(self, cfg, save_dir):\n"
                "        config = LlavaConfig(\n            text_config=self.llm.config,\n"
                "            vision_config=self.visual_encoder.config,\n            attn_implementation=\"eager\",\n        )\n"
                "        model = LlavaForConditionalGeneration(config)\n        model.save_pretrained(save_dir)\n"),
            "tools/train.py": "from xtuner.model.llava import LLaVAModel\nmodel = LLaVAModel()\nmodel.train()\n",
        }, U, "eager only in a conversion method"),
        Example({  # the same call in the model's own build step is the training choice
            "xtuner/model/llava.py": (
                "from transformers import LlavaConfig, LlavaForConditionalGeneration\n\n"
                "class LLaVAModel:\n"
                "    def build_llava(self):\n"
                "        config = LlavaConfig(\n            text_config=self.llm.config,\n"
                "            vision_config=self.visual_encoder.config,\n            attn_implementation=\"eager\",\n        )\n"
                "        return LlavaForConditionalGeneration(config)\n"),
            "tools/train.py": "from xtuner.model.llava import LLaVAModel\nmodel = LLaVAModel().build_llava()\nmodel.train()\n",
        }, N, "eager in the model's build method"),
        Example({
            "train.py": (
                "from transformers import AutoModelForCausalLM, Trainer\n"
                "model_kwargs = {\"torch_dtype\": \"auto\"}\nmodel_kwargs[\"attn_implementation\"] = \"eager\"\n"
                "model = AutoModelForCausalLM.from_pretrained('google/gemma-2-9b', **model_kwargs)\n"
                "trainer = Trainer(model=model)\ntrainer.train()\n"),
        }, N, "eager set by dict key"),
        Example({  # a patch library: the attention classes' forward replaced by its own (xformers/FA2/SDPA), then the HF model
            # loaded with attn_implementation="eager", which now selects nothing (unsloth 2025.9 llama.py)
            "mylib/models/llama.py": (
                "import torch\nfrom torch.nn.functional import scaled_dot_product_attention\n"
                "from transformers import AutoModelForCausalLM\nfrom transformers.models.llama.modeling_llama import LlamaAttention\n\n"
                "def LlamaAttention_fast_forward(self, hidden_states, attention_mask=None):\n"
                "    Q, K, V = self.apply_qkv(self, hidden_states)\n"
                "    A = scaled_dot_product_attention(Q, K, V, attn_mask=attention_mask, is_causal=attention_mask is None)\n"
                "    return self.apply_o(self, A)\n\n"
                "def pre_patch():\n    LlamaAttention.forward = LlamaAttention_fast_forward\n\n"
                "def from_pretrained(model_name):\n    pre_patch()\n"
                "    return AutoModelForCausalLM.from_pretrained(model_name, attn_implementation=\"eager\")\n"),
        }, U, "eager load after the attention forward is replaced"),
        Example({  # the same load without the patch: HF's eager attention runs
            "mylib/models/llama.py": (
                "import torch\nfrom torch.nn.functional import scaled_dot_product_attention\nfrom transformers import AutoModelForCausalLM\n\n"
                "def vision_pool(q, k, v):\n    return scaled_dot_product_attention(q, k, v)\n\n"
                "def from_pretrained(model_name):\n"
                "    return AutoModelForCausalLM.from_pretrained(model_name, attn_implementation=\"eager\")\n"),
        }, P, "eager load, attention forward not replaced"),
        Example({  # LLaMA-Factory: one NPU recipe disables FlashAttention, most recipes ask for it
            "examples/train_lora/llama3_lora_sft.yaml": "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\nflash_attn: fa2\n",
            "examples/train_full/qwen2_full_sft.yaml": "model_name_or_path: Qwen/Qwen2-7B\nstage: sft\nflash_attn: fa2\n",
            "examples/extras/fsdp_qlora/llama3_lora_sft.yaml": "model_name_or_path: meta-llama/Meta-Llama-3-70B\nstage: sft\nflash_attn: fa2\n",
            "examples/ascend/qwen3vlmoe_lora_sft_fsdp.yaml": "model_name_or_path: Qwen/Qwen3-VL-30B-A3B-Instruct\nstage: sft\nflash_attn: disabled\n",
        }, U, "eager in a minority of recipes"),
        Example({"mylib/model.py": _LOADER_NAMED_FA}, P, "a loader named with_flash_attn that passes no attention choice"),
        Example({  # megatron-bridge: the recipe picks Megatron-Core's Transformer Engine layer spec (TE DotProductAttention)
            "mylib/recipes/llama/llama3.py": (
                "from mylib.models.gpt_provider import GPTModelProvider\nfrom mylib.training.config import ConfigContainer\n\n\n"
                "def llama32_1b_pretrain_config():\n    cfg = ConfigContainer(model=GPTModelProvider())\n"
                "    cfg.model.transformer_impl = \"transformer_engine\"\n    cfg.model.attention_backend = None\n    return cfg\n"),
            "mylib/training/pretrain.py": (
                "def pretrain(config, forward_step):\n    model = config.model.provide()\n"
                "    for batch in config.dataset.loader():\n        forward_step(batch, model).backward()\n"),
        }, U, "Megatron-Core TE layer spec set by the recipe"),
        Example({  # ms-swift: the Megatron alternative's arguments class defaults to TE; the default run loads an HF model
            "swift/megatron/argument/megatron_args.py": (
                "from dataclasses import dataclass\n\n\n@dataclass\nclass MegatronArguments:\n"
                "    transformer_impl: str = \"transformer_engine\"\n    tensor_model_parallel_size: int = 1\n"),
            "swift/llm/train/sft.py": (
                "from transformers import AutoModelForCausalLM, Trainer\n\n\ndef main(args):\n"
                "    model = AutoModelForCausalLM.from_pretrained(args.model)\n    Trainer(model=model, args=args.training_args).train()\n"),
            "requirements.txt": "transformers>=4.40\n",
        }, P, "TE only as an alternative path's arguments default"),
        Example({"pkg/config.py": _FA_FLAG_CONFIG.format(name="flash_attn", default="False"), "requirements.txt": "transformers>=4.40\n",
                 "pkg/models.py": _FA_FLAG_LOADER.format(name="flash_attn")}, P, "FA2 keyword set only under a config flag that defaults to False"),
        Example({"pkg/config.py": _FA_FLAG_CONFIG.format(name="use_flash_attention_2", default="False"), "requirements.txt": "transformers>=4.40\n",
                 "pkg/models.py": _FA_FLAG_LOADER.format(name="use_flash_attention_2")},
                P, "a dict entry that forwards its own flag (kwargs['use_flash_attention_2'] = True under if cfg.use_flash_attention_2)"),
        Example({"pkg/config.py": _FA_FLAG_CONFIG.format(name="flash_attn", default="True"), "requirements.txt": "transformers>=4.40\n",
                 "pkg/models.py": _FA_FLAG_LOADER.format(name="flash_attn")}, U, "FA2 keyword under a config flag that defaults to True"),
        Example(_UNREACHED_FA, P, "kernels only in a vendored modeling file the training entry point never imports: HF default SDPA"),
        Example({**_UNREACHED_FA, "train_embedder.py": (
            "from transformers import Trainer, TrainingArguments\nfrom mypkg.reranker.modeling_minicpm import MiniCPMFlashAttention2\n\n"
            "model = build_reranker(attention_cls=MiniCPMFlashAttention2)\n"
            "Trainer(model=model, args=TrainingArguments(output_dir='out'), train_dataset=dataset).train()\n")},
                U, "the same modeling file imported by the training entry point"),
        Example({  # FlagAI's shape: its own trainer over a hand-written attention; a FlashAttention monkey patch of another
            # model family sits in the package and nothing on the training path imports it
            "train.py": (
                "import torch\nfrom mypkg.model import GPT\n\nmodel = GPT()\nopt = torch.optim.AdamW(model.parameters())\n"
                "for x, y in loader:\n    model(x, y).backward()\n    opt.step()\n"),
            "mypkg/model.py": (
                "import torch\n\n\nclass GPT(torch.nn.Module):\n    def attention(self, q, k, v, mask):\n"
                "        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale + mask\n"
                "        return torch.matmul(scores.softmax(-1), v)\n"),
            "mypkg/aquila2/flash_attn_monkey_patch.py": (
                "from flash_attn.flash_attn_interface import flash_attn_func\n\n\n"
                "def forward(self, q, k, v):\n    return flash_attn_func(q, k, v, 0.0, softmax_scale=None, causal=True)\n"),
        }, N, "a FlashAttention patch module the training path never imports"),
        Example(_launch_split(""), P, "SDPA asked for only by the entry point one of four launches runs: the others load with HF defaults"),
        Example(_launch_split(", attn_implementation=\"flash_attention_2\""), U, "the entry point most launches run asks for FlashAttention-2"),
        Example(_showui_train('        torch.backends.cuda.enable_mem_efficient_sdp(False)\n'), N,
                "SDPA chosen with its flash and memory-efficient kernels switched off: the math kernel runs"),
        Example(_showui_train(""), U, "SDPA with only its flash kernel switched off: the memory-efficient kernel still runs"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used, off_, kinds = attention_sites(f)
        free = _attention_free(f, ctx.project.training_files) if not used else None
        if free is not None:
            return Outcome(Status.NA, [f.ev(free)], f"not applicable: attention-free architecture ({free.name} at {free.path}:{free.line}): "
                           "its recurrent or state-space mixing replaces softmax attention, so FlashAttention/SDPA have nothing to fuse",
                           {"attention": "none"})
        unreached = unreached_sites(ctx, used)
        off_ = [x for x in off_ if not unreached_sites(ctx, [x])]  # an eager choice there is not the run's either
        loader = _remote_code_loader(ctx)
        remote = [x for x in unreached if loader is not None and _REMOTE_MODELING_FILE.search(x.path)
                  and any(p.rpartition("/")[0] == x.path.rpartition("/")[0] and _REMOTE_CONFIG_FILE.search(p) for p in f.files)]
        # modeling files kept in a ``patch/`` folder to be put in place of the installed ones (LongWriter's ``train/patch/
        # modeling_llama.py`` and ``modeling_chatglm.py``: "please replace the original modeling files with them"), for a
        # training path that loads its model with ``from_pretrained``
        hf_loader = loader or _hf_model_loader(ctx)
        patched = [x for x in unreached if x not in remote and hf_loader is not None and _REMOTE_MODELING_FILE.search(x.path)
                   and _PATCH_DIR.search(x.path)]
        if (remote or patched) and len(remote) + len(patched) == len(used):
            # the training path loads a hub model as remote code (Nanbeige ``finetune/main.py``: ``AutoModelForCausalLM.
            # from_pretrained(..., trust_remote_code=True)``) whose modeling file the repository ships a copy of: that
            # file's kernels are the run's attention, imported by transformers from the checkpoint, not by a Python import
            x = (remote + patched)[0]
            at = f"{x.path}:{x.line}"
            kernel = x.name.rsplit(".", 1)[-1]
            if x in remote:
                whose = (f"the trained model is remote code (trust_remote_code=True at {loader.path}:{loader.line}); its "
                         f"attention, shipped at {at},")
            else:
                whose = (f"the model loaded at {hf_loader.path}:{hf_loader.line} runs the modeling files the project ships in "
                         f"{x.path.rpartition('/')[0]}/ to replace the installed ones; their attention ({at})")
            remote = remote + patched
            if all(_optional_package(f, r) for r in remote if hasattr(r, "name")):
                return Outcome(P, [f.ev(r) for r in remote[:3]], f"{whose} calls {kernel} only when the optional flash_attn "
                               "package imports (a try/except around its import), and no dependency declaration names "
                               "flash-attn: without it the model runs eager attention",
                               {"attn_implementation": "remote-code", "advice_for": "optional-kernel"})
            return Outcome(U, [f.ev(r) for r in remote[:3]], f"{whose} calls {kernel}", {"attn_implementation": "remote-code"})
        note = ""
        if unreached and len(unreached) == len(used):  # every kernel site is in code the run never executes
            note = unreached_note(f, unreached, "fused-attention kernels")
            used, kinds = [], set()
        dead = orphan_sites(ctx, used) if used and not note else []
        if dead and len(dead) < len(used):
            # a kernel only a module nothing imports calls (EAGLE's ``llama_xformers_attn_monkey_patch.py`` beside the
            # FlashAttention-2 its entry point loads): not the run's kind
            used = [x for x in used if x not in dead]
            kinds = {k for k in kinds if k not in _SITE_KINDS or any(w in _site_text(x) for w in _SITE_KINDS[k] for x in used)}
        minority, why = minority_entry_sites(ctx, used)
        if minority:  # chosen only by the entry scripts a minority of the launches run
            note, used, kinds = why, [], set()
            off_ = [x for x in off_ if x.path not in minority]
        if not used:
            used += [x for x in f.launches("torchtune")]  # torchtune's models call SDPA (or FlexAttention) themselves
            used += [e for e in f.config("model._component_") if isinstance(e.value, str) and e.value.startswith("torchtune.models.")]
            kinds |= {"sdpa"} if used else set()
        if not used and not ctx.project.does_training:
            # a serving project: vLLM/SGLang/TensorRT-LLM run FlashAttention/FlashInfer kernels by default
            used += [*f.calls(*_ENGINES), *f.launches("vllm")]
            kinds |= {"flash_attention_2"} if used else set()
        math = _sdpa_math_only(f) if used and "sdpa" in kinds else []
        if math and not any(isinstance(x, Setting) and x.source in ("launcher", "config") and isinstance(x.value, str)
                            and x.value.strip().lower() != "sdpa" and _FUSED_CHOICE.search(x.value) for x in used):
            # ShowUI: every launch passes ``--attn_imple=sdpa``, and train.py switches off SDPA's flash and memory-efficient
            # kernels for it (``torch.backends.cuda.enable_flash_sdp(False)``): PyTorch runs the math kernel
            chosen = [x for x in used if isinstance(x, Setting) and isinstance(x.value, str) and x.value.strip().lower() == "sdpa"]
            at = ", ".join(f"{c.path}:{c.line}" for c in math)
            under = f" (under `{math[0].guard}`)" if math[0].guard else ""
            return Outcome(N, [f.ev(x) for x in [*math, *chosen]],
                           f"SDPA is chosen{f' ({chosen[0].path}:{chosen[0].line})' if chosen else ''}, but its flash and "
                           f"memory-efficient kernels are switched off ({at}){under}: PyTorch runs the math kernel, which "
                           "materialises the full score matrix", {"attn_implementation": "sdpa-math"})
        if used:
            order = ("flash_attention_3", "flash_attention_2", "flex_attention", "transformer-engine", "fused", "xformers", "sdpa")
            best = next((k for k in order if k in kinds), sorted(kinds)[0] if kinds else "sdpa")
            if best in ("flash_attention_2", "flash_attention_3") and lacks_bf16_fa2(ctx.project.hardware):
                fa = [x for x in used if re.search(r"flash", f"{getattr(x, 'text', '')} {getattr(x, 'name', '')} {getattr(x, 'value', '')}", re.I)] or used
                findings = [f.ev(x) for x in fa]
                return Outcome(P, findings, f"FlashAttention-2 is selected, but it needs an Ampere or newer GPU and the target is "
                               f"{ctx.project.hardware.upper()}: use PyTorch SDPA instead (attn_implementation='sdpa')",
                               {"attn_implementation": best, "hardware_supports_fa2": False}, findings=findings)
            eager = _eager_training_sites(f, off_, used)
            recipe_note = ""
            # only where the code that asks for eager also replaces the forward it would pick (unsloth's ``llama.py`` patches
            # ``LlamaAttention.forward`` and loads with ``attn_implementation="eager"``); a patch elsewhere is another model
            # family's or an opt-in hijack (LLaMA-Factory's LongLoRA ``shift_attn``, axolotl's ``xformers_attention``), and a
            # recipe's eager stays eager
            eager_files = {x.path for x in eager}
            patched = [a for a in _patched_attention(f) if a.path in eager_files] if eager else []
            if patched:  # HF's attn_implementation picks among forwards the project has replaced with its own kernels
                p0 = next((a for a in patched if a.path == eager[0].path), patched[0])
                recipe_note = (f"; attn_implementation=\"eager\" at {eager[0].path}:{eager[0].line} is bypassed: the attention "
                               f"forward is replaced ({' '.join(p0.text.split())}, {p0.path}:{p0.line})")
                eager = []
            if eager and all(_is_recipe_file(x) for x in eager):  # recipes that differ: judged by their majority
                on_recipes = {x.path for x in used if _is_recipe_file(x)}
                eager_recipes = {x.path for x in eager} - on_recipes
                if len(on_recipes) > len(eager_recipes):
                    eager = []
                    recipe_note = (f"; eager attention in {len(eager_recipes)} of {len(on_recipes) + len(eager_recipes)} recipes that set it "
                                   "(judged by the majority)")
            if eager:
                findings = [Evidence(x.path, x.line, f'{x.name}="{x.value}"', x.key, x.value) if x.source == "call" else f.ev(x)
                            for x in eager]  # a keyword below the call's first line: the line that holds it
                # the efficient site cited is a training one: a reward-model server's flag (OpenRLHF ``serve_remote_rm.sh``) is not
                e0 = eager[0]
                u0 = next((x for x in used if not _SERVING_PATH.search(x.path)), None)
                other = f"other training sites use {', '.join(sorted(kinds))} ({u0.path}:{u0.line})" if u0 is not None else \
                    f"only serving sites use {', '.join(sorted(kinds))} ({used[0].path}:{used[0].line})"
                more = f" (+{len(eager) - 1})" if len(eager) > 1 else ""
                fused_sites = len({(x.path, x.line) for x in used if not _SERVING_PATH.search(x.path)})
                return Outcome(P, findings + [f.ev(x) for x in used],
                               f"attention is set to eager at {e0.path}:{e0.line}{more}: that training path materialises the full "
                               f"score matrix, although {other}" + (f" ({fused_sites} sites choose a fused kernel)" if fused_sites > 1 else ""),
                               {"attn_implementation": "eager", "attn_implementation_elsewhere": best, "eager_sites": len(eager),
                                "fused_sites": fused_sites}, findings=findings)
            return Outcome(U, [f.ev(x) for x in used], f"efficient attention via {', '.join(sorted(kinds))}{recipe_note}",
                           {"attn_implementation": best})
        if off_:
            return Outcome(N, evs(off_), _join("attention is explicitly set to eager / flash attention disabled", note),
                           {"attn_implementation": "eager"})
        loads = _hf_model_loads(f, generation=not ctx.project.does_training)
        on_path = [c for c in loads if c.path in ctx.project.training_files]
        # with a training path, a load in other project code (a RAG labelling script, an inference experiment) is not it
        loads = (on_path if ctx.project.training_files else loads) or uses_hf_trainer(f)  # TRL trainers load a model themselves
        loads = [c for c in loads if c.path not in minority]  # the minority's loads choose their attention
        if not loads and {"axolotl", "llamafactory"} & set(ctx.project.frameworks):
            loads = f.config("base_model", "model_name_or_path")
        remote = _remote_attention(ctx, loads)
        if remote:
            return Outcome(Status.NA, evs(loads[:3]), f"not judged: {remote} loads with trust_remote_code, so the model's own code "
                           "picks its attention kernel and transformers' attn_implementation does not apply; check that code or its "
                           "config (ChatGLM3 calls PyTorch SDPA on torch 2; Qwen-7B's config has `use_flash_attn`)",
                           {"attn_implementation": "remote-code"})
        own_cls = _own_model_classes(f, loads)
        if own_cls and len(own_cls) == len(loads):
            # Video-LLaMA ``from video_llama.models.modeling_llama import LlamaForCausalLM``: a copy of the architecture whose
            # attention is the project's code (no fused call anywhere in scope, above), whatever transformers release is pinned
            c, module = own_cls[0]
            return Outcome(N, evs([x for x, _ in own_cls[:3]]),
                           _join(f"the model class is the project's own copy ({module}, loaded at {c.path}:{c.line}) and no fused "
                                 "attention call was seen in the project's code: transformers' attn_implementation does not reach it",
                                 note), {"attn_implementation": "own-code", "advice_for": "own-attention"})
        if loads and set(ctx.project.model_families) == {"t5"}:
            # lorahub fine-tunes ``google/flan-t5-large`` through ``AutoModelForSeq2SeqLM``: T5 adds a learned relative-position
            # bias to the scores, and transformers ran T5 eager-only until its 2026 attention refactor
            return Outcome(N, evs(loads[:3]), _join(
                "the trained model is T5-family, whose attention adds a learned relative-position bias: transformers runs it "
                "eager, and before its 2026 T5 refactor (huggingface/transformers#47014) attn_implementation=\"sdpa\" or "
                "\"flash_attention_2\" raises for T5; there is no FlashAttention switch to turn on here", note),
                {"attn_implementation": "eager", "advice_for": "t5"})
        if loads:
            lo, hi, deps = dep_version(f, "transformers")
            switch = _own_fa_switch(f, loads)
            own = ""
            values: dict[str, Any] = {}
            switch_ev = [f.ev(switch[1])] if switch is not None else []
            if switch is not None:
                name, default = switch
                own = (f"; FlashAttention-2 is behind the project's own `{name}` option (default False at "
                       f"{default.path}:{default.line}), which no launch turns on")
                values = {"advice_for": "project-flag", "flag": name}
            elif auto := next((s for s in f.settings(*_HF_ATTN_NAMES) if isinstance(s.value, str) and s.value.strip().lower() == "auto"
                               and not any(isinstance(t.value, str) and t.value.strip().lower() != "auto" for t in f.settings(s.name))),
                              None):
                # the project's own choice of implementation, left at "auto" (h2o-llmstudio ``attention_implementation: str =
                # "auto"``, handed to ``from_pretrained`` only when it is something else): the advice names that option
                own = (f"; the project's own `{auto.name}` option is \"auto\" ({auto.path}:{auto.line}), which passes nothing, "
                       "so the model's default runs")
                values = {"advice_for": "project-option", "flag": auto.name}
                switch_ev = [f.ev(auto)]
            if hi is not None and hi < (4, 36):
                if not values:  # the pinned release predates attn_implementation: the advice names what it has
                    values = {"advice_for": "transformers<4.34" if hi < (4, 34) else "transformers<4.36"}
                return Outcome(
                    N, evs(deps[:1]) + switch_ev,
                    _join("HF models load without attn_implementation on transformers < 4.36, whose default is eager "
                          "attention" + own, note),
                    {"attn_implementation": "eager", **values},
                )
            # transformers picks SDPA by default only on PyTorch 2.1.1 or later (``is_torch_sdpa_available``): under an older
            # pin (FireAct ``torch==2.0.1``) its default is eager attention, whatever transformers release runs
            tcap = declared_cap([d for d in (f.deps("torch", "pytorch") or documented_pins(f, "torch")) if not _TESTS_PATH.search(d.path)])
            if tcap is not None and tcap[0] < (2, 1, 1):
                thi, t0 = tcap
                return Outcome(
                    N, [f.ev(t0), *switch_ev],
                    _join(f"HF models load without attn_implementation on PyTorch {'.'.join(map(str, thi))} ({t0.path}:{t0.line}), "
                          "older than the 2.1.1 transformers needs for its SDPA default: eager attention" + own, note),
                    {"attn_implementation": "eager", **values},
                )
            pinned = ("" if not lo else f"; the project's copy of transformers is {lo_text}" if (lo_text := _copy_release(deps))
                      else f"; requirements pin transformers == {'.'.join(map(str, lo))}" if lo == hi
                      else f"; requirements allow transformers >= {'.'.join(map(str, lo))}")
            return Outcome(
                P, [*evs(loads[:5]), *evs(deps[:1]), *switch_ev],
                _join(f"HF models load without attn_implementation: transformers >= 4.36 runs its default SDPA, but nothing chooses "
                      f"FlashAttention-2{pinned}{own}", note),
                # SDPA for certain only where the requirements hold transformers at 4.36 or later
                {"attn_implementation": "default", "sdpa_default": bool(lo and lo >= (4, 36)), **values},
            )
        fa_dep = f.deps("flash-attn", "flash-attention", "xformers")
        detail = ("flash-attn is installed but nothing enables it" if fa_dep else
                  "nothing on the training path computes fused attention" if note else "no fused attention found")
        return Outcome(N, [], _join(detail, note), {"attn_implementation": "eager"})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.values.get("advice_for") == "t5":
            return None  # no attention kernel to choose for T5 on the releases that raise for it
        prio = super().recommendation_priority(ctx, outcome)
        eager, fused = outcome.values.get("eager_sites"), outcome.values.get("fused_sites")
        if prio is not None and outcome.status == Status.PARTIAL and eager and fused and eager * 4 <= fused:
            # a few training paths that ask for eager (axolotl: one DeepSeek-V4 recipe whose kernels own attention, the EBFT
            # strided trainer) beside many fused ones: worth a look, not the project's first change
            return Priority.LOW
        return prio


# --- D2 torch.compile -----------------------------------------------------------


#: a config-driven component registry (modalities 0.5.0): components a YAML selects by ``variant_key``
_COMPILE_REGISTRY = {
    "pkg/models/model_factory.py": (
        "import torch\nimport torch.nn as nn\n\n\nclass ModelFactory:\n    @staticmethod\n"
        "    def get_fsdp2_wrapped_model(model, device_mesh):\n        fully_shard(model, mesh=device_mesh)\n        return model\n\n"
        "    @staticmethod\n    def get_compiled_model(model: nn.Module, block_names: list[str], fullgraph: bool) -> nn.Module:\n"
        "        for _, module in model.named_modules():\n"
        "            if type(module).__name__ in block_names:\n"
        "                compiled = torch.compile(module, fullgraph=fullgraph)\n"
        "        return model\n"),
    "pkg/registry/components.py": component_registry(
        "    ComponentEntity(\"model\", \"compiled\", maybe_model_list(ModelFactory.get_compiled_model), CompiledModelConfig),\n"),
}


# VeOmni: decoder blocks are compiled only under ``if compile_config.enable:``; the runtime ``CompileConfig`` (enable
# False) is built by copying every field of the run's typed ``torch_compile`` section, whose ``enable`` defaults to False
# (other sections' ``enable`` default to True: the generic name alone decides nothing)
_COPIED_COMPILE = {
    "pkg/arguments.py": (
        "from dataclasses import dataclass, field\n\n\n@dataclass\nclass TorchCompileConfig:\n"
        "    enable: bool = field(default=False)\n    backend: str = field(default=\"inductor\")\n\n\n"
        "@dataclass\nclass GradientCheckpointingConfig:\n    enable: bool = field(default=True)\n\n\n"
        "@dataclass\nclass TrainingArguments:\n    torch_compile: TorchCompileConfig = field(default_factory=TorchCompileConfig)\n"
        "    gradient_checkpointing: GradientCheckpointingConfig = field(default_factory=GradientCheckpointingConfig)\n"),
    "pkg/torch_compile.py": (
        "from dataclasses import dataclass\n\nimport torch\n\n\n@dataclass\nclass CompileConfig:\n    enable: bool = False\n"
        "    backend: str = \"inductor\"\n\n\ndef compile_decoder_blocks(model, compile_config):\n"
        "    for block in model.layers:\n        block.forward = torch.compile(block.forward, backend=compile_config.backend)\n"),
    "pkg/parallelize.py": (
        "from pkg.torch_compile import CompileConfig, compile_decoder_blocks\n\n\n"
        "def parallelize_model(model, compile_config=None):\n    compile_config = compile_config or CompileConfig()\n"
        "    if compile_config.enable:\n        compile_decoder_blocks(model, compile_config)\n    return model\n"),
    "pkg/trainer.py": (
        "from dataclasses import fields\n\nfrom pkg.parallelize import parallelize_model\nfrom pkg.torch_compile import CompileConfig\n\n\n"
        "class Trainer:\n    def build(self, args):\n        self.model = parallelize_model(\n            self.model,\n"
        "            compile_config=CompileConfig(\n"
        "                **{field.name: getattr(args.train.torch_compile, field.name) for field in fields(CompileConfig)}\n"
        "            ),\n        )\n"),
}
def _schema_compile(default: str) -> dict[str, str]:
    """A declarative framework's trainer schema (Ludwig ``ECDTrainerConfig``): the field is a schema helper call whose
    ``default=`` keyword is what a run gets when its YAML leaves the key out; the trainer compiles under that field."""
    return {
        "mylib/schema/trainer.py": (
            "from mylib.schema import utils as schema_utils\n\n\nclass ECDTrainerConfig(schema_utils.BaseConfig):\n"
            f"    compile: bool = schema_utils.Boolean(\n        default={default},\n"
            "        description=\"Whether to compile the model before training.\",\n    )\n"),
        "mylib/trainers/trainer.py": (
            "import torch\n\n\nclass Trainer:\n    def __init__(self, config, model):\n        self.model = model\n"
            "        self.compiled_model = self.model\n        if config.compile:\n"
            "            self.compiled_model = torch.compile(self.model)\n"),
    }


#: Composer 0.32 ``Trainer.__init__``: torch.compile only when the keyword-only ``compile_config`` (default None) is given
_LIBRARY_TRAINER = {
    "mylib/trainer.py": (
        "from typing import Any, Optional\n\nimport torch\n\n\nclass Trainer:\n"
        "    def __init__(self, *, model, train_dataloader=None, max_duration=None,\n"
        "                 compile_config: Optional[dict[str, Any]] = None):\n"
        "        is_model_compiled = isinstance(model, torch._dynamo.OptimizedModule)\n"
        "        if not is_model_compiled and compile_config is not None:\n"
        "            compiled_model = torch.compile(model, **compile_config)\n"
        "            model.forward = compiled_model.dynamo_ctx(model.forward)\n"
        "        self.model = model\n\n"
        "    def fit(self):\n        for batch in self.train_dataloader:\n            self.model(batch).loss.backward()\n"),
}


#: Liger Kernel 0.8.5 ``LigerFusedLinearPreferenceBase.forward``: the per-chunk forward/backward closure is compiled
_CHUNK_CLOSURE = (
    "import torch\n\n\nclass FusedLinearPreferenceBase(torch.autograd.Function):\n    @staticmethod\n"
    "    def forward(ctx, _input, weight, target, compiled=True, chunk_size=1):\n"
    "        def {name}(input_chunk, target_chunk):\n"
    "            return torch.func.grad_and_value(compute_loss, argnums=(0, 1), has_aux=True)(input_chunk, weight, target_chunk)\n\n"
    "        if compiled:\n            {name} = torch.compile({name})\n"
    "        for input_chunk, target_chunk in zip(torch.chunk(_input, chunk_size), torch.chunk(target, chunk_size)):\n"
    "            {name}(input_chunk, target_chunk)\n"
)


#: a Lightning wrapper library (lightning-gpt's shape): its own package holds a LightningModule over the model of an upstream
#: repository kept as a git submodule (``upstream/.git`` links to the superproject's ``.git/modules/``); the README's
#: ``python train.py`` is a root script the release does not ship, and the only ``train.py`` is upstream's own (compiled)
_SUBMODULE_REPO = {
    "README.md": "# gptlib\n\n```shell\npython train.py\n```\n",
    "gptlib/models.py": (
        "import lightning as L\nimport upstream.model\n\n\nclass GPT(L.LightningModule):\n    def __init__(self, config):\n"
        "        super().__init__()\n        self.gpt = upstream.model.GPT(config)\n\n"
        "    def training_step(self, batch, batch_idx):\n        x, y = batch\n        _, loss = self.gpt(x, y)\n"
        "        self.log('train_loss', loss)\n        return loss\n"),
    "upstream/.git": "gitdir: ../.git/modules/upstream\n",
    "upstream/model.py": "import torch.nn as nn\n\n\nclass GPT(nn.Module):\n    def forward(self, idx, targets=None):\n        return idx, None\n",
    "upstream/train.py": (
        "import torch\nfrom model import GPT\n\ncompile = True\nmodel = GPT(config).cuda()\nif compile:\n"
        "    model = torch.compile(model)\nfor it in range(max_iters):\n    _, loss = model(x, y)\n    loss.backward()\n"
        "    optimizer.step()\n"),
}


#: SkyRL's shape: the training entry point wraps an HF model; a model-family patch module (imported by nothing on the
#: training path) compiles the rotary-embedding helper
_PATCH_COMPILE = {
    "train.py": (
        "import torch\nfrom transformers import AutoModelForCausalLM\n\n"
        "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-1.5B-Instruct', attn_implementation='flash_attention_2')\n"
        "opt = torch.optim.AdamW(model.parameters())\nfor batch in loader:\n    model(**batch).loss.backward()\n    opt.step()\n"),
    "mypkg/patches/gptoss/patch_transformers.py": (
        "import torch\n\n\ndef patch_GptOssAttention():\n"
        "    from transformers.models.gpt_oss import modeling_gpt_oss\n\n"
        "    modeling_gpt_oss.apply_rotary_pos_emb = torch.compile(modeling_gpt_oss.apply_rotary_pos_emb)\n"),
}


@register
class D2TorchCompile(Check):
    id = "D2"
    title = "torch.compile"
    title_zh = "torch.compile"
    bottlenecks = (Bottleneck.COMPUTE, Bottleneck.LAUNCH, Bottleneck.LATENCY)
    priority = Priority.MEDIUM
    benefit = "automatic kernel fusion and fewer launches: typically 1.3-2x on training steps of PyTorch 2.x models"
    what = (
        "Whether the model (or training step) is compiled: a `torch.compile(...)` call that runs (not `disable=True`, not behind a "
        "flag that is off, not in a string), `model.compile()`, HF `torch_compile: true` (or a `torch_compile_backend`/`_mode`), "
        "accelerate `dynamo_backend` other than `no`, torchtune/nanoGPT `compile: true`. Only `@torch.compile` on helper functions is partial."
    )
    why = (
        "TorchInductor fuses pointwise and reduction ops into Triton kernels and removes Python overhead: the PyTorch 2.0 "
        "release measured 1.38x (AMP) geometric-mean training speed-up over 163 HF/TIMM/TorchBench models on A100 and 1.3-2x is "
        "typical for transformer training steps; the gain is largest where many small element-wise ops dominate. Recompiles on "
        "dynamic shapes can eat the gain, so pad or mark dynamic dimensions."
    )
    fix = "Compile the model once after it is built and wrapped: `model = torch.compile(model)` (HF: `torch_compile: true`); keep shapes static or padded to a few buckets."
    fix_zh = "在模型构建并包装后编译一次：`model = torch.compile(model)`（HF 设置 `torch_compile: true`）；保持输入形状固定或按少量桶补齐。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://pytorch.org/get-started/pytorch-2.0/", "https://pytorch.org/docs/stable/generated/torch.compile.html")
    snippets = {
        "python": "import torch\n\nmodel = torch.compile(model)\n",
        "hf-yaml": "torch_compile: true\n",
        "accelerate-yaml": "dynamo_config:\n  dynamo_backend: INDUCTOR\n",
    }
    examples = (
        Example({"verl/workers/engine/fsdp/transformer_impl.py": (
            "import torch\nfrom verl.utils import torch_functional as verl_F\n\n\nclass FSDPEngine:\n    def __init__(self, config):\n"
            "        self.compute_entropy_from_logits = (\n            torch.compile(verl_F.entropy_from_logits, dynamic=True)\n"
            "            if config.use_torch_compile\n            else verl_F.entropy_from_logits\n        )\n"),
                 "train.py": ("import torch\nfrom verl.workers.engine.fsdp.transformer_impl import FSDPEngine\n"
                              "engine = FSDPEngine(config)\nloss = model(x)\nloss.backward()\n")},
                P, "only a helper function compiled with torch.compile(fn)"),
        Example({"train.py": "import torch\nmodel = build_model().cuda()\nmodel = torch.compile(model)\n"}, U, "compile call"),
        Example({"finetune.py": (  # alpaca-lora: compiled after the Trainer took the module, which it then trains as given
            "import sys\nimport torch\nimport transformers\nfrom peft import get_peft_model\n\n\ndef train(base_model: str = ''):\n"
            "    model = get_peft_model(model, config)\n    trainer = transformers.Trainer(\n        model=model,\n"
            "        train_dataset=train_data,\n        args=transformers.TrainingArguments(fp16=True, output_dir='out'),\n    )\n"
            "    if torch.__version__ >= '2' and sys.platform != 'win32':\n        model = torch.compile(model)\n\n"
            "    trainer.train(resume_from_checkpoint=None)\n    model.save_pretrained('out')\n")},
                N, "model compiled after the Trainer was built with it: training runs uncompiled"),
        Example({"finetune.py": (
            "import torch\nimport transformers\n\n\ndef train():\n    model = torch.compile(model)\n"
            "    trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(output_dir='out'))\n"
            "    trainer.train()\n")},
                U, "compiled before the Trainer is built: the trainer trains the compiled module"),
        Example(_SUBMODULE_REPO, N, "only the training script of a git submodule (an upstream repository vendored in) compiles"),
        Example({p: t for p, t in _SUBMODULE_REPO.items() if not p.endswith("/.git")}, U,
                "the same folder without its submodule link: its README-run train.py is the project's"),
        Example({"mylm/trainer.py": (  # levanter's shape: the whole step, micro-batch loop and optimizer update, under Haliax's jit
            "import equinox as eqx\nfrom haliax.partitioning import named_jit\n\n\nclass Trainer:\n    def _train_step_fn(self):\n"
            "        @named_jit(axis_resources=self.parameter_axis_mapping, donate_args=(True, True))\n"
            "        def train_step(model, opt_state, batch):\n            loss, grads = eqx.filter_value_and_grad(self.loss_fn)(model, batch)\n"
            "            updates, opt_state = self.optimizer.update(grads, opt_state, params=model)\n"
            "            return loss, eqx.apply_updates(model, updates), opt_state\n\n        return train_step\n")},
                U, "JAX: the training step compiled by XLA (named_jit)"),
        Example({"mylm/trainer.py": (
            "import jax\n\n\n@jax.jit\ndef generate_step(params, tokens):\n    return model.apply(params, tokens)\n\n\n"
            "def train_step(params, opt_state, batch):\n    grads = jax.grad(loss_fn)(params, batch)\n    return update(params, grads)\n")},
                N, "JAX: only a generation step is jitted, the training step runs op by op"),
        Example({"configs/sft.yaml": "model_name_or_path: meta-llama/Llama-3.2-1B\ntorch_compile: true\n"}, U, "hf yaml"),
        Example({"train.py": "import torch\ncompile = True\nif compile:\n    print('compiling the model...')\n    model = torch.compile(model)\n"}, U, "nanogpt flag on"),
        Example({"accelerate_config.yaml": "distributed_type: MULTI_GPU\ndynamo_config:\n  dynamo_backend: INDUCTOR\n"}, U, "accelerate dynamo"),
        Example({"train.py": (
            "import argparse\nimport torch\np = argparse.ArgumentParser()\np.add_argument('--compile', action='store_true')\n"
            "args = p.parse_args()\nif args.compile:\n    model = torch.compile(model)\n"),
                 "run.sh": "python train.py --lr 1e-3\n"}, N, "flag never passed"),
        Example({"configs/sft.yaml": "torch_compile: false\n", "train.py": "s = 'torch.compile(model)'\n"}, N, "disabled and string"),
        Example({"accelerate_config.yaml": "dynamo_config:\n  dynamo_backend: 'NO'\n"}, N, "dynamo no"),
        Example({"nemo_rl/models/generation/constants.py": 'VLLM_BACKEND = "vllm"\nSGLANG_BACKEND = "sglang"\nDYNAMO_BACKEND = "dynamo"\n',
                 "train.py": "import torch\nmodel = build()\nloss = model(x)\nloss.backward()\n"},
                N, "NeMo-RL: an upper-case constant naming a weight-sync backend is a label, not accelerate's dynamo_backend"),
        Example({"optim/muon.py": "import torch\n@torch.compile\ndef zeropower_via_newtonschulz5(G, steps=5):\n    return G\n"}, P, "helper only"),
        Example({"patches/gptoss/patch_transformers.py": (  # a model patch that compiles the rotary-embedding helper
            "import torch\n\n\ndef patch_GptOssAttention():\n"
            "    from transformers.models.gpt_oss.modeling_gpt_oss import apply_rotary_pos_emb\n"
            "    apply_rotary_pos_emb = torch.compile(apply_rotary_pos_emb)\n    return apply_rotary_pos_emb\n"),
            "train.py": "from patches.gptoss.patch_transformers import patch_GptOssAttention\npatch_GptOssAttention()\n"
                        "loss = model(x)\nloss.backward()\n"}, P, "only the rotary-embedding helper compiled"),
        Example({"optim/muon.py": (  # a decorator with arguments is still a decorated helper, not the model compiled
            "import torch\n@torch.compile(fullgraph=True, dynamic=False)\ndef zeropower_via_newtonschulz5(G, steps=5):\n    return G\n")},
            P, "helper only, decorator with arguments"),
        Example({"mylib/patches/llama.py": (  # xtuner 0.2.0 _lite/patches/llama.py:829: the generation-time decoding step
            "import torch\nfrom torch import nn\n\nclass CUDAPatchedLlamaForCausalLM(nn.Module):\n"
            "    @staticmethod\n    @torch.compile(fullgraph=True)\n"
            "    def patched_layer_forward_decoding(self, hidden_states, attention_mask=None, position_ids=None):\n"
            "        residual = hidden_states\n        hidden_states = self.mlp(self.post_attention_layernorm(hidden_states))\n"
            "        return residual + hidden_states\n")}, N, "compiled decoding step (generation), decorator with arguments"),
        Example({"torchtitan/models/llama3/parallelize.py": (  # per-block compile: each TransformerBlock compiled in place
            "import torch\n"
            "def apply_compile(model, compile_config):\n"
            "    for layer_id, transformer_block in model.layers.named_children():\n"
            "        transformer_block.compile(backend=compile_config.backend, fullgraph=True)\n")}, U, "per-block module.compile()"),
        Example({  # axolotl: the trainer compiles only when the recipe sets torch_compile; the schema default is None
            "src/axolotl/utils/config/models/input/v0_4_1/__init__.py": (
                "from typing import Optional\nfrom pydantic import BaseModel\n"
                "class AxolotlInputConfig(BaseModel):\n    torch_compile: Optional[bool] = None\n    torch_compile_backend: Optional[str] = None\n"),
            "src/axolotl/core/trainer_builder.py": (
                "import torch\n"
                "class AxolotlTrainer(Trainer):\n    def _wrap_model(self, model, training=True, dataloader=None):\n"
                "        if self.args.torch_compile:\n            model = torch.compile(model, backend=self.args.torch_compile_backend)\n"
                "        return super()._wrap_model(model, training=training, dataloader=dataloader)\n"
                "class HFCausalTrainerBuilder:\n    def build(self):\n        training_arguments_kwargs = {}\n"
                "        training_arguments_kwargs['torch_compile'] = self.cfg.torch_compile\n"),
            "examples/llama-3/lora-8b.yml": "base_model: NousResearch/Meta-Llama-3-8B\nadapter: lora\nbf16: auto\nflash_attention: true\n",
        }, N, "compile behind a recipe switch no recipe sets"),
        Example({  # nanoGPT: compile = True in train.py, switched off by the launch flag
            "train.py": (
                "import torch\ncompile = True\nexec(open('configurator.py').read())\nmodel = GPT(gptconf)\n"
                "if compile:\n    print('compiling the model...')\n    model = torch.compile(model)\n"),
            "run.sh": "python train.py config/train_shakespeare_char.py --device=mps --compile=False\n",
        }, N, "compile switched off by a later flag"),
        Example({  # torchtune: the recipe copies cfg.get("compile", False) into its own flag; every config sets False
            "recipes/lora_finetune_distributed.py": (
                "import torch\nclass LoRAFinetuneRecipeDistributed:\n    def setup(self, cfg):\n"
                "        self._compile = cfg.get('compile', False)\n"
                "        if self._compile:\n            self._loss_fn = torch.compile(self._loss_fn)\n"),
            "recipes/configs/llama3_1/8B_lora.yaml": "batch_size: 2\ncompile: False  # pytorch compile, set to true for better perf/memory\n",
        }, N, "compile flag copied from a config that turns it off"),
        Example({  # torchtune: compile: False in most recipes, True in one; the loss compile lives in a helper the recipe calls
            "recipes/full_finetune_distributed.py": (
                "import torch\nfrom torchtune import training\nclass FullFinetuneRecipeDistributed:\n    def setup(self, cfg):\n"
                "        self._compile = cfg.get('compile', False)\n"
                "        if self._compile:\n            training.compile_loss(self._loss_fn)\n"),
            "torchtune/training/_compile.py": (
                "import torch\ndef compile_loss(loss):\n    loss = torch.compile(loss, backend='inductor')\n    return loss\n"),
            "recipes/configs/llama3_1/8B_full.yaml": "batch_size: 2\ncompile: False  # pytorch compile, set to true for better perf/memory\n",
            "recipes/configs/llama3_1/8B_lora.yaml": "batch_size: 2\ncompile: False\n",
            "recipes/configs/qwen2/7B_full.yaml": "batch_size: 4\ncompile: False\n",
            "recipes/configs/mistral/7B_full_ppo_low_memory.yaml": "batch_size: 4\ncompile: True\n",
        }, N, "compile off in the majority of recipes"),
        Example({
            "recipes/full_finetune_distributed.py": (
                "import torch\nclass FullFinetuneRecipeDistributed:\n    def setup(self, cfg):\n"
                "        self._compile = cfg.get('compile', False)\n"
                "        if self._compile:\n            self._model = torch.compile(self._model)\n"),
            "recipes/configs/a.yaml": "compile: True\n", "recipes/configs/b.yaml": "compile: True\n",
            "recipes/configs/c.yaml": "compile: True\n", "recipes/configs/d.yaml": "compile: False\n",
        }, U, "compile on in the majority of recipes"),
        Example({  # lmms-engine: the one recipe that compiles also names its backend; both are that minority recipe's
            "examples/qwen2_5_vl/example_config.yaml": "trainer_args:\n  torch_compile: false\n  bf16: true\n",
            "examples/qwen3_vl/example_config.yaml": "trainer_args:\n  torch_compile: false\n  bf16: true\n",
            "examples/bagel/example_config.yaml": "trainer_args:\n  torch_compile: false\n",
            "examples/llava_video/llava_video.yaml": "trainer_args:\n  torch_compile: true\n  torch_compile_backend: inductor\n",
        }, N, "compile key of the minority recipe"),
        Example({
            "examples/qwen2_5_vl/example_config.yaml": "trainer_args:\n  torch_compile: true\n  torch_compile_backend: inductor\n",
            "examples/qwen3_vl/example_config.yaml": "trainer_args:\n  torch_compile: true\n",
            "examples/bagel/example_config.yaml": "trainer_args:\n  torch_compile: true\n",
            "examples/llava_video/llava_video.yaml": "trainer_args:\n  torch_compile: false\n",
        }, U, "compile on in most recipes, one names the backend"),
        Example({  # torchtitan 0.3.0: compile is a config-class switch, off by default, on in one of three recipes
            "torchtitan/config/configs.py": (
                "from dataclasses import dataclass\n\n@dataclass(kw_only=True, slots=True)\nclass CompileConfig:\n"
                "    enable: bool = False\n    backend: str = 'inductor'\n"),
            "torchtitan/distributed/compile.py": (
                "def apply_compile(model, *, compile_config):\n"
                "    for layer_id, transformer_block in model.layers.named_children():\n"
                "        transformer_block.compile(backend=compile_config.backend, fullgraph=True)\n"),
            "torchtitan/models/llama3/parallelize.py": (
                "from torchtitan.distributed.compile import apply_compile\n"
                "def parallelize_llama(model, compile_config):\n"
                "    model_compile_enabled = compile_config.enable and 'model' in compile_config.components\n"
                "    if model_compile_enabled:\n        apply_compile(model, compile_config=compile_config)\n"),
            "torchtitan/models/llama3/config_registry.py": (
                "from torchtitan.config import CompileConfig, TrainingConfig\nfrom torchtitan.trainer import Trainer\n\n"
                "def llama3_8b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192))\n\n"
                "def llama3_70b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192))\n\n"
                "def llama3_405b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192),\n"
                "                          compile=CompileConfig(enable=True, components=['model', 'loss']))\n"),
        }, N, "compile switch off by default, on in a minority of registry recipes"),
        Example({
            "torchtitan/config/configs.py": (
                "from dataclasses import dataclass\n\n@dataclass(kw_only=True, slots=True)\nclass CompileConfig:\n"
                "    enable: bool = False\n    backend: str = 'inductor'\n"),
            "torchtitan/distributed/compile.py": (
                "def apply_compile(model, *, compile_config):\n"
                "    for layer_id, transformer_block in model.layers.named_children():\n"
                "        transformer_block.compile(backend=compile_config.backend, fullgraph=True)\n"),
            "torchtitan/models/llama3/parallelize.py": (
                "from torchtitan.distributed.compile import apply_compile\n"
                "def parallelize_llama(model, compile_config):\n"
                "    model_compile_enabled = compile_config.enable and 'model' in compile_config.components\n"
                "    if model_compile_enabled:\n        apply_compile(model, compile_config=compile_config)\n"),
            "torchtitan/models/llama3/config_registry.py": (
                "from torchtitan.config import CompileConfig, TrainingConfig\nfrom torchtitan.trainer import Trainer\n\n"
                "def llama3_8b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192), compile=CompileConfig(enable=True))\n\n"
                "def llama3_8b_float8():\n    config = llama3_8b()\n    config.training = TrainingConfig(seq_len=4096)\n    return config\n\n"
                "def llama3_debugmodel():\n    return Trainer.Config(training=TrainingConfig(seq_len=512))\n"),
        }, U, "compile switch on in most registry recipes (one inherits it)"),
        Example({"torchtune/modules/attention_utils.py": (
            "import torch\nfrom torch.nn.attention.flex_attention import flex_attention\n"
            "flex_attention_compiled = torch.compile(flex_attention, dynamic=False)\n")}, N, "FlexAttention's kernel is not the model compiled"),
        # a config-driven component registry (modalities): the compile factory runs only when a YAML names its variant
        Example(_COMPILE_REGISTRY, N, "registered compile component that no config selects"),
        Example({**_COMPILE_REGISTRY,
            "configs/pretrain_gpt2.yaml": (
                "compiled_model:\n  component_key: model\n  variant_key: compiled\n  config:\n"
                "    model:\n      instance_key: model_raw\n      pass_type: BY_REFERENCE\n    block_names: [GPT2Block]\n    fullgraph: true\n"),
        }, U, "registered compile component selected by a config"),
        Example({  # a patch library: a loss function's own compile switch, a compiled layernorm helper, and a ModuleList
            # replacement that compiles every block but is installed only by a patch function nothing calls (unsloth 2025.9)
            "mylib/models/_utils.py": (
                "import torch\n\ndef patch_regional_compilation():\n    old_module_list = torch.nn.ModuleList\n"
                "    def FastModuleList(*args, **kwargs):\n        if len(args) == 1 and type(args[0]) is list:\n"
                "            args = [old_module_list([torch.compile(x, dynamic=True) for x in args[0]])]\n"
                "        return old_module_list(*args, **kwargs)\n    torch.nn.ModuleList = FastModuleList\n"),
            "mylib/models/llama.py": (
                "import torch\nfrom mylib_zoo.loss_utils import fused_ce_loss\n\n"
                "@torch.compile(fullgraph=False, dynamic=True)\ndef fast_layernorm_compiled(layernorm, X):\n    return layernorm(X)\n\n"
                "def causal_lm_forward(self, hidden_states, labels):\n"
                "    return fused_ce_loss(hidden_states=hidden_states, lm_head_weight=self.lm_head.weight, labels=labels,\n"
                "                         torch_compile=True)\n"),
        }, P, "helper switch, compiled helper, uninstalled patch"),
        Example({  # the same ModuleList patch installed at import: every block list built afterwards is compiled
            "mylib/models/_utils.py": (
                "import torch\n\ndef patch_regional_compilation():\n    old_module_list = torch.nn.ModuleList\n"
                "    def FastModuleList(*args, **kwargs):\n        if len(args) == 1 and type(args[0]) is list:\n"
                "            args = [old_module_list([torch.compile(x, dynamic=True) for x in args[0]])]\n"
                "        return old_module_list(*args, **kwargs)\n    torch.nn.ModuleList = FastModuleList\n"),
            "mylib/models/__init__.py": "from ._utils import patch_regional_compilation\npatch_regional_compilation()\n",
        }, U, "ModuleList patch installed at import"),
        Example(_COPIED_COMPILE, N, "per-block compile behind a runtime config copied from a section that is off"),
        Example({**_COPIED_COMPILE, "pkg/arguments.py": _COPIED_COMPILE["pkg/arguments.py"].replace(
            "enable: bool = field(default=False)\n    backend", "enable: bool = field(default=True)\n    backend")}, U,
                "the same copy from a section that is on"),
        Example(_schema_compile("False"), N, "compile under a schema helper field whose default= is False"),
        Example(_schema_compile("True"), U, "the same schema field defaulting to True"),
        Example(_LIBRARY_TRAINER, N, "a library trainer's compile behind a constructor parameter defaulting to None, never passed"),
        Example({**_LIBRARY_TRAINER, "examples/train_gpt2.py": (
            "from mylib.trainer import Trainer\n\ntrainer = Trainer(model=model, train_dataloader=loader, compile_config={})\n"
            "trainer.fit()\n")}, U, "the same trainer built with compile_config={}"),
        Example(copied_trainer("        if self.args.torch_compile:\n            model = torch.compile(model)\n"), N,
                "torch.compile only in a renamed copy of the HF Trainer (behind TrainingArguments.torch_compile)"),
        Example({"mylib/chunked_loss/fused_linear_preference.py": _CHUNK_CLOSURE.format(name="fused_fwd_bwd")}, P,
                "a chunked loss compiles its own per-chunk closure, not the model"),
        Example({"mylib/train.py": _CHUNK_CLOSURE.format(name="train_step")}, U, "a closure that is the training step compiled"),
        Example(_PATCH_COMPILE, N, "a helper compiled only in a patch module the training path never imports"),
        Example({**_PATCH_COMPILE, "train.py": "from mypkg.patches.gptoss.patch_transformers import patch_GptOssAttention\n"
                 "patch_GptOssAttention()\n" + _PATCH_COMPILE["train.py"]}, P, "the same patch imported and applied by the training entry point"),
        Example({"demo/vllm/megrez_moe.py": "from torch import nn\nfrom vllm.compilation.decorators import support_torch_compile\n\n\n"
                 "@support_torch_compile\nclass MegrezMoeModel(nn.Module):\n    pass\n",
                 "demo/vllm/infer.py": "from vllm import LLM\n\nllm = LLM(model='Infinigence/Megrez2-3x7B-A3B', trust_remote_code=True)\n"
                 "outs = llm.generate(['hi'])\n"}, U, "an inference project's vLLM model class that vLLM compiles"),
        Example({"demo/vllm/megrez_moe.py": "from torch import nn\nfrom vllm.compilation.decorators import support_torch_compile\n\n\n"
                 "@support_torch_compile\nclass MegrezMoeModel(nn.Module):\n    pass\n",
                 "demo/vllm/infer.py": "from vllm import LLM\n\nllm = LLM(model='Infinigence/Megrez2-3x7B-A3B', enforce_eager=True)\n"
                 "outs = llm.generate(['hi'])\n"}, N, "the same model class run with enforce_eager=True"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        calls, off_ = active_compile_calls(f)
        # ``torch.compile(entropy_from_logits)`` (verl) compiles a helper function, not the model
        helpers = [c for c in calls if _compiles_helper(c) or _compiles_closure(f, c)]
        calls = [c for c in calls if c not in helpers]
        # a compile in a module no training entry point reaches (a model patch of another family, an alternative backend's
        # helper) never runs in the training run
        away = unreached_sites(ctx, [*calls, *helpers])
        calls = [c for c in calls if c not in away]
        helpers = [c for c in helpers if c not in away]
        # ``model = torch.compile(model)`` after ``Trainer(model=model)`` was built (alpaca-lora): the trainer holds the
        # module it was given, so ``trainer.train()`` runs it uncompiled
        late = [(c, t) for c in calls if (t := _compiled_after_trainer(f, c)) is not None]
        calls = [c for c in calls if all(c is not x for x, _ in late)]
        reg = _registry_compile(f)
        if reg is not None and calls:
            defaults, on, total, cited = reg
            if len(on) * 2 < total:  # the compile calls run only where the config class's switch is on: a minority of recipes
                text = split_text("compile switch on", on, total)
                where = f"{defaults[0].key} = {defaults[0].value} at {defaults[0].path}:{defaults[0].line}"
                return Outcome(N, evs(defaults[:1] + cited[:10]), f"torch.compile is present but off by default ({where}); {text}",
                               {"torch_compile": False, "recipes.compile": f"on: {len(on)}, off: {total - len(on)}"})
        # a decorated decoding/generation step (``@torch.compile`` on ``patched_layer_forward_decoding``) is inference
        decorated = [d for d in f.decorators("torch.compile") if not any(c.path == d.path and c.line == d.line for c in calls)
                     and not _NOT_TRAINING_COMPILE.search(d.target)]
        away += unreached_sites(ctx, decorated)
        decorated = [d for d in decorated if d not in away]
        note = unreached_note(f, away, "torch.compile sites") if away and not (calls or helpers or decorated) else ""
        settings: list = []
        helper_settings: list = []
        for s in f.effective("torch_compile"):
            t = truthy(s.value)
            if _helper_switch(s):
                if t is True:  # ``unsloth_fused_ce_loss(..., torch_compile=True)``: a loss function compiling its own chunks
                    helper_settings.append(s)
                continue
            if t is True:
                settings.append(s)
            elif t is False:
                off_.append(s)
        for s in f.effective("torch_compile_backend", "torch_compile_mode"):
            if isinstance(s.value, str) and s.value and s.rank > 0:
                settings.append(s)
        for s in f.effective("dynamo_backend"):
            v = str(s.value).strip().lower()
            if s.source == "assign" and s.key.rsplit(".", 1)[-1].isupper() and v and v in s.key.lower():
                continue  # ``DYNAMO_BACKEND = "dynamo"`` (NeMo-RL's weight-sync backend names): a label, not a compile setting
            if v in {"no", "none", "", "false"}:
                off_.append(s)
            else:
                settings.append(s)
        for e in f.config("compile.deepcompile", "compile.enabled"):
            (settings if truthy(e.value) else off_).append(e)
        majorities = list({m.name: m for n in ("compile", "torch_compile", "use_compile", "compile_model")
                           if (m := recipe_majority(f.effective(n))) is not None}.values())
        minority = {(s.path, s.line) for n in ("compile", "torch_compile", "use_compile", "compile_model") for s in f.effective(n)
                    if any(m.name == s.key.rsplit(".", 1)[-1] and truthy(s.value) is not m.value for m in majorities)
                    and s.source == "config"}
        # a recipe judged as the minority drops with all its compile keys (``torch_compile_backend: inductor`` beside the
        # one ``torch_compile: true`` of 12 recipes): not only the switch line
        minority_files = {p for p, _ in minority}
        settings = [s for s in settings if (s.path, s.line) not in minority
                    and not (getattr(s, "source", "config") == "config" and s.path in minority_files
                             and getattr(s, "name", None) in ("torch_compile_backend", "torch_compile_mode"))]
        if not calls:
            for s in f.effective("compile", "use_compile", "compile_model"):
                if truthy(s.value) is True and s.source in {"config", "launcher"} and (s.path, s.line) not in minority:
                    settings.append(s)
        dist = "; ".join(m.text() + " (judged by the majority)" for m in majorities)
        if not calls and not settings and not ctx.project.does_training:
            # a model class of the project's own that vLLM compiles (Infini-Megrez ``demo/vllm/megrez_moe.py``:
            # ``@support_torch_compile`` above ``class MegrezMoeModel``): the engine runs it through torch.compile and
            # CUDA graphs unless the launch passes ``enforce_eager=True``
            engine = [d for d in f.decorators("support_torch_compile", "*.support_torch_compile")]
            eager = [s for s in f.effective("enforce_eager") if truthy(s.value) is True]
            if engine and not eager:
                d = engine[0]
                return Outcome(U, evs(engine[:3]), f"the inference engine compiles the project's model (vLLM "
                               f"@support_torch_compile on {d.target or 'its model class'} at {d.path}:{d.line}; no "
                               f"enforce_eager turns it off)", {"torch_compile": True})
        if calls or settings:
            mode = next((str(c.kwargs["mode"]) for c in calls if isinstance(c.kwargs.get("mode"), str)), None)
            values: dict[str, object] = {"torch_compile": True}
            if mode:
                values["torch_compile_mode"] = mode
            return Outcome(U, [f.ev(x) for x in [*settings, *calls]], _join("the model is compiled with torch.compile", dist), values)
        if decorated or helpers or helper_settings:
            helpers += helper_settings
            how = "@torch.compile" if decorated and not helpers else "torch.compile(<function>)" if helpers and not decorated else \
                "@torch.compile, torch.compile(<function>)"
            return Outcome(P, evs([*decorated, *helpers]), _join(f"only helper functions are compiled ({how}), not the model", dist),
                           {"torch_compile": False})
        # (only where the project trains with JAX alone: tevatron's JAX driver beside its HF Trainer compiles nothing of that run)
        jitted = [] if off_ or not ctx.project.notes.get("jax_training") else jax_jitted_steps(f)
        if jitted:
            # a JAX project compiles its training step whole with XLA (``@jax.jit``/``eqx.filter_jit``/Haliax ``named_jit`` on
            # ``train_step``): the analogue of compiling the model; torch.compile cannot apply to it
            return Outcome(U, evs(jitted[:5]), f"the training step is compiled by XLA ({jitted[0].name} on {jitted[0].target}): "
                           "JAX's analogue of torch.compile", {"torch_compile": False, "xla_jit": True})
        if late and not off_:
            c, t = late[0]
            return Outcome(N, evs([c, t]), f"torch.compile at {c.path}:{c.line} wraps the model after the trainer was built with "
                           f"it ({t.path}:{t.line}), so training runs the uncompiled module", {"torch_compile": False})
        registered = {id(r) for c in f.calls("torch.compile") for r in registry_off(f, c)}
        detail = ("torch.compile is present only in a registered component that no config selects" if off_ and all(id(x) in registered for x in off_)
                  else "torch.compile is present but switched off" if off_ else "nothing on the training path calls torch.compile" if note
                  else "no torch.compile found")
        values = {"torch_compile": False}
        if majorities:
            values["recipes." + majorities[0].name] = ", ".join(f"{v}: {n}" for v, n in majorities[0].counts)
        return Outcome(N, evs(off_[:20]), _join(_join(detail, dist), note), values)


#: transformers' names of bitsandbytes optimizers (``paged_adamw_32bit``, ``adamw_bnb_8bit``, ``paged_lion_8bit``, ``adamw_8bit``)
_BNB_OPTIM = lazy_compile(r"(?i)^(paged_\w+|\w+_bnb_8bit|adamw_8bit|lion_(8|32)bit|rmsprop_bnb\w*|ademamix(_8bit)?)$")
_REBIND_COMPILE = lazy_compile(r"^(\w+)\s*=\s*torch\.compile\(\s*(\w+)\s*[,)]")


#: a line that builds the trainer, whatever the class is called (``trainer = TRAINER_CLS(``)
_TRAINER_BUILT = lazy_compile(r"(?i)^\s*(self\.)?\w*trainer\s*=\s*\w+\(")


def _compiled_after_trainer(f: Facts, c: Call) -> Call | None:
    """The ``Trainer(model=<name>)`` built before ``<name> = torch.compile(<name>)`` in the same function, whose ``.train()``
    follows with no trainer built from the compiled module; None otherwise."""
    m = _REBIND_COMPILE.match(c.text)
    if not m or m.group(1) != m.group(2):
        return None
    name = m.group(1)
    same = [x for x in f.files[c.path].calls if x.func == c.func] if c.path in f.files else []

    def given(x: Call) -> bool:
        v = x.kwargs.get("model", x.args[0] if x.args else None)
        return getattr(v, "text", None) == name

    # (a trainer class chosen through a name, MoRA's ``TRAINER_CLS = OurTrainer; trainer = TRAINER_CLS(model=model, ...)``)
    trainers = [x for x in same if (x.short.endswith("Trainer") or _TRAINER_BUILT.match(x.text)) and given(x)]
    before = [x for x in trainers if x.line < c.line]
    if not before or any(x.line > c.line for x in trainers):
        return None
    if not any(x.short == "train" and x.line > c.line for x in same):
        return None
    return before[-1]


# --- D3 Triton kernels ----------------------------------------------------------

_TRITON_DECOS = ("triton.jit", "triton.autotune", "triton.heuristics")
_TRITON_LIBS = ("liger_kernel.*", "flag_gems.*", "unsloth.*")
_FA_TRITON = ("flash_attn.ops.triton.*", "flash_attn.flash_attn_triton.*", "flash_attn.ops.triton", "flash_attn.flash_attn_triton")


#: a package whose Triton kernels only its inference engine imports (Colossal-AI ``colossalai/kernel/triton/``, imported by
#: ``colossalai/inference/modeling/backends/attention_backend.py``); its training API imports none of them
_SERVED_KERNELS = {
    "mylib/kernel/triton/__init__.py": "from .flash_decoding import flash_decoding_attention\n",
    "mylib/kernel/triton/flash_decoding.py": (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def _flash_decoding_fwd_kernel(Q, K, V, O, N, BLOCK: tl.constexpr):\n"
        "    q = tl.load(Q + tl.arange(0, BLOCK))\n    tl.store(O + tl.arange(0, BLOCK), q)\n\n\n"
        "def flash_decoding_attention(q):\n    return q\n"),
    "mylib/inference/modeling/backends/attention_backend.py": (
        "from mylib.kernel.triton import flash_decoding_attention\n\n\n"
        "class AttentionBackend:\n    def decode(self, q):\n        return flash_decoding_attention(q)\n"),
    "mylib/booster/booster.py": "class Booster:\n    def backward(self, loss, optimizer):\n        loss.backward()\n        optimizer.step()\n",
}


def triton_kernels(f: Facts) -> list:
    return f.decorators(*_TRITON_DECOS)


def _served_only(f: Facts, path: str, by_package: dict[str, list[Any]] | None = None) -> list[Any]:
    """The imports of the module at ``path`` (or of its package, which re-exports it) when every one of them outside its own
    package sits in serving/generation code (Colossal-AI's ``colossalai/kernel/triton/*.py``, imported only by
    ``colossalai/inference/...``): kernels of an inference engine, not of training. Empty when anything else imports it,
    or when nothing does (a kernel library whose use cannot be told)."""
    dotted = path[:-3].replace("/", ".") if path.endswith(".py") else ""
    dotted = dotted[4:] if dotted.startswith("src.") else dotted
    if "." not in dotted:
        return []
    package = dotted.rsplit(".", 1)[0]
    home = path.rsplit("/", 1)[0] + "/"
    if by_package is None:
        by_package = {}
    if package not in by_package:  # (kernels share packages: one import lookup each, not one per kernel)
        by_package[package] = f.imports(package)
    users = [i for i in by_package[package] if not i.path.startswith(home)
             and (i.module in (dotted, package) or i.module.startswith(dotted + ".") or f"{i.module}.{i.name}" in (dotted, package))]
    return users if users and all(_SERVE_PATH.search(i.path) for i in users) else []


@register
class D3Triton(Check):
    id = "D3"
    title = "Triton kernels"
    title_zh = "Triton 自定义算子"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.LAUNCH)
    priority = Priority.LOW
    benefit = "hand-fused kernels for hot paths the compiler and libraries do not cover"
    what = (
        "Whether the repository has its own Triton kernels: `@triton.jit` (with `tl.load`/`tl.store`), `@triton.autotune`, "
        "`@triton.heuristics`. Importing triton alone is not use, and neither are kernels that come from a Triton library (Liger "
        "Kernel, FlagGems, Unsloth: D5 counts Liger); then the detail says so and nothing is recommended."
    )
    why = (
        "Triton reaches cuBLAS-level matmul and up to 2x faster fused softmax/layer-norm than PyTorch eager (Tillet et al., 2019; "
        "Triton tutorials on A100); Liger Kernel's Triton kernels give +20 % throughput and -60 % memory on LLaMA-3-8B (LinkedIn, "
        "2024). Writing kernels pays only for a profiled hot spot that torch.compile and existing libraries miss."
    )
    fix = (
        "Profile first; if a custom op dominates (e.g. a fused loss, a norm + activation chain), use a Triton library (Liger Kernel, "
        "FlagGems) or write a `@triton.jit` kernel with `triton.autotune` over block sizes, and test it against the eager version."
    )
    fix_zh = "先做 Profiling；若某个自定义算子占主导（如融合 loss、norm+激活链），优先使用 Triton 算子库（Liger Kernel、FlagGems），或编写带 `triton.autotune` 的 `@triton.jit` kernel，并与 eager 实现对比验证正确性。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://triton-lang.org/main/getting-started/tutorials/index.html", "https://github.com/linkedin/Liger-Kernel")
    snippets = {
        "python": (
            "import triton\nimport triton.language as tl\n\n\n"
            "@triton.jit\n"
            "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
            "    mask = offs < n\n"
            "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)\n"
        ),
    }
    examples = (
        Example({"kernels/rmsnorm.py": (
            "import triton\nimport triton.language as tl\n\n@triton.jit\ndef _rms_fwd(X, W, Y, N, eps, BLOCK: tl.constexpr):\n"
            "    row = tl.program_id(0)\n    cols = tl.arange(0, BLOCK)\n    x = tl.load(X + row * N + cols, mask=cols < N, other=0.0)\n"
            "    tl.store(Y + row * N + cols, x, mask=cols < N)\n")}, U, "jit kernel"),
        Example({"ops/ce.py": (
            "import triton\nimport triton.language as tl\n\n@triton.autotune(configs=[triton.Config({'BLOCK': 1024})], key=['V'])\n"
            "@triton.jit\ndef ce_kernel(logits, V, BLOCK: tl.constexpr):\n    pass\n")}, U, "autotuned kernel"),
        Example({"train.py": "import triton\nprint(triton.__version__)\n"}, N, "import only"),
        Example({"train.py": "# @triton.jit\n# def kernel(x): tl.load(x)\nimport torch\n"}, N, "commented out"),
        Example({"train.py": "from liger_kernel.transformers import apply_liger_kernel_to_llama\napply_liger_kernel_to_llama()\n"}, N, "library kernels only"),
        Example({"olmo/train.py": (  # OLMo: flash-attn's Triton cross-entropy, imported when a recipe sets fused_loss
            "import torch\n\n\nclass Trainer:\n    def __post_init__(self):\n        if self.cfg.fused_loss:\n"
            "            from flash_attn.ops.triton.cross_entropy import cross_entropy_loss\n"
            "            self.loss_fn = cross_entropy_loss\n")}, N, "flash-attn's Triton kernels: a library's, no advice"),
        # Colossal-AI: the package's Triton kernels (paged attention, flash decoding) are imported only by its inference engine
        Example(_SERVED_KERNELS, N, "kernels only the inference engine imports"),
        Example({**_SERVED_KERNELS, "mylib/shardformer/layer/norm.py": (
            "from mylib.kernel.triton import flash_decoding_attention\n\n\n"
            "class FusedNorm:\n    def forward(self, x):\n        return flash_decoding_attention(x)\n")}, U, "a training layer imports them too"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        kernels = triton_kernels(f)
        by_package: dict[str, list[Any]] = {}
        by_path = {p: _served_only(f, p, by_package) for p in sorted({d.path for d in kernels})}
        served = {d.path: by_path[d.path] for d in kernels if by_path[d.path]}
        training = [d for d in kernels if d.path not in served]
        if training:
            names = sorted({d.target for d in training})
            return Outcome(U, evs(training), f"{len(names)} Triton kernel(s): {', '.join(names[:5])}", {"triton_kernels": len(names)})
        if kernels:
            users = sorted({(i.path, i.line): i for found in served.values() for i in found}.items())
            where = ", ".join(f"{p}:{ln}" for (p, ln), _ in users[:3])
            names = sorted({d.target for d in kernels})
            return Outcome(N, evs(kernels)[:5] + evs([i for _, i in users[:3]]),
                           f"the project's {len(names)} Triton kernel(s) serve only its inference code (imported by {where}): none runs in training",
                           {"triton_kernels": 0, "inference_kernels": len(names)})
        lib = [c for c in f.calls(*_TRITON_LIBS) if not guard_off(f, c)]
        lib += [s for s in f.effective("use_liger_kernel", "enable_liger_kernel") if truthy(s.value) is True]
        if lib:
            return Outcome(N, [], "no Triton kernel of the project's own; fused Triton kernels come from a library (Liger/FlagGems/Unsloth)",
                           {"triton_kernels": 0, "triton_library": True})
        # flash-attn's Triton ops imported by the training path (OLMo's fused cross-entropy under ``fused_loss``,
        # Megatron-DeepSpeed's ``--use-flash-attn-triton`` attention): library kernels, cited where they are imported
        fa = [i for i in f.imports(*_FA_TRITON) if not ctx.project.training_files or i.path in ctx.project.training_files]
        if fa:
            i = fa[0]
            return Outcome(N, evs(fa[:3]), f"no Triton kernel of the project's own; flash-attn's Triton kernels are imported "
                           f"({i.full} at {i.path}:{i.line})", {"triton_kernels": 0, "triton_library": True})
        return Outcome(N, [], "no Triton kernel found", {"triton_kernels": 0})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status != Status.UNUSED or outcome.values.get("triton_library"):
            return None  # a Triton library is already the advice's first step
        return self.priority


# --- D4 CUDA Graph --------------------------------------------------------------

_GRAPH_CALLS = ("torch.cuda.CUDAGraph", "torch.cuda.graph", "torch.cuda.graphs.graph", "torch.cuda.make_graphed_callables",
                "torch.cuda.graphs.make_graphed_callables", "transformer_engine.pytorch.make_graphed_callables")
_GRAPH_MODES = {"reduce-overhead", "max-autotune"}
_GRAPH_KEYS = ("enable_cuda_graph", "use_cuda_graph", "cuda_graph", "cuda_graphs", "use_cuda_graphs", "enable_cuda_graphs",
               "external_cuda_graph", "cudagraphs", "use_cudagraphs", "enable_cudagraph")



def _graph_helper(default: str) -> dict[str, str]:
    """realhf 0.3.0-shaped: a CUDA-graph capture utility (``capture_func``) reached through ``maybe_capture_cudagraph`` only
    under ``if gconfig.use_cuda_graph:`` in the decode loop, with ``GenerationHyperparameters.use_cuda_graph`` defaulting to
    ``default``."""
    return {
        "pkg/api/model_api.py": ("import dataclasses\n\n\n@dataclasses.dataclass\nclass GenerationHyperparameters:\n"
                                 f"    max_new_tokens: int = 256\n    use_cuda_graph: bool = {default}\n"),
        "pkg/utils/cuda_graph.py": (
            "import torch\n\n\ndef capture_func(name, func, input_buffer):\n    graph = torch.cuda.CUDAGraph()\n"
            "    with torch.cuda.graph(graph):\n        output = func(**input_buffer)\n    return graph, input_buffer, output\n"),
        "pkg/nn/generate.py": (
            "from pkg.utils import cuda_graph\n\n\ndef maybe_capture_cudagraph(model, x):\n"
            "    return cuda_graph.capture_func('decoding', model.decode, dict(x=x))\n\n\n"
            "def generate(model, gconfig, x):\n    graph = None\n    if gconfig.use_cuda_graph:\n"
            "        graph, _, _ = maybe_capture_cudagraph(model, x)\n    while True:\n"
            "        x = graph.replay() if graph is not None else model.decode(x)\n"),
        "pkg/backend/train.py": "def train_batch(model, batch, optim):\n    loss = model(batch).loss\n    loss.backward()\n    optim.step()\n",
    }

@register
class D4CudaGraph(Check):
    id = "D4"
    title = "CUDA Graph"
    title_zh = "CUDA Graph"
    bottlenecks = (Bottleneck.LAUNCH, Bottleneck.LATENCY)
    priority = Priority.LOW
    benefit = "removes per-kernel CPU launch overhead for static-shape steps"
    what = (
        "Whether steps are captured and replayed as CUDA graphs: `torch.cuda.CUDAGraph`/`torch.cuda.graph(...)`, "
        "`make_graphed_callables`, `torch.compile(mode=\"reduce-overhead\"|\"max-autotune\")` (both use CUDA graphs), Megatron "
        "`--enable-cuda-graph`/`--external-cuda-graph`, `torch._inductor.config.triton.cudagraphs = True`, an inference engine told "
        "to capture graphs (vLLM `enforce_eager=False`, SGLang `disable_cuda_graph=False`); `enforce_eager=True` is not use."
    )
    why = (
        "A graph replays a whole step with one CPU launch: NVIDIA measured up to 1.7x for MLPerf BERT training at scale and PyTorch "
        "reported 1.12x-6x speed-ups on launch-bound steps (Accelerating PyTorch with CUDA Graphs, 2021). The gain is large only "
        "where kernels are small (small models, small micro-batches, many GPUs) and shapes are static."
    )
    fix = "For static shapes and a launch-bound step, compile with `torch.compile(model, mode=\"reduce-overhead\")` or capture with `torch.cuda.make_graphed_callables`; Megatron: `--enable-cuda-graph`."
    fix_zh = "对于形状固定且受 launch 开销限制的训练步，使用 `torch.compile(model, mode=\"reduce-overhead\")` 或 `torch.cuda.make_graphed_callables` 捕获；Megatron 可加 `--enable-cuda-graph`。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://pytorch.org/blog/accelerating-pytorch-with-cuda-graphs/", "https://pytorch.org/docs/stable/notes/cuda.html#cuda-graphs")
    snippets = {
        "python": "import torch\n\nmodel = torch.compile(model, mode=\"reduce-overhead\")\n",
        "shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --enable-cuda-graph\n",
    }
    examples = (
        Example({"src/finetuning.py": "import torch\nfor batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n    optimizer.step()\n",
                 "end-to-end-use-cases/book-character-mindmap/server/server.py": (
                     "from vllm import LLM\n\nllm = LLM(model='meta-llama/Llama-3.1-8B-Instruct', enforce_eager=False)\n")},
                N, "llama-cookbook: a demo vLLM engine's decode graphs are J6's, not graphs of the training step"),
        Example({"train.py": (
            "import torch\ng = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    static_out = model(static_in)\n"
            "for x in loader:\n    static_in.copy_(x)\n    g.replay()\n")}, U, "manual graph"),
        Example({"train.py": "import torch\nmodel = torch.compile(model, mode='reduce-overhead')\n"}, U, "reduce-overhead"),
        Example({"train.py": "import torch\nmodel = torch.cuda.make_graphed_callables(model, (sample,))\n"}, U, "graphed callables"),
        Example({"train.py": "import torch\nmodel = torch.compile(model, mode='max-autotune-no-cudagraphs')\n"}, N, "no-cudagraphs mode"),
        Example({"serve.py": "from vllm import LLM\nllm = LLM('meta-llama/Llama-3.1-8B', enforce_eager=False)\n"}, U, "vllm decode graphs"),
        Example({"serve.py": "from vllm import LLM\nllm = LLM('meta-llama/Llama-3.1-8B', enforce_eager=True)\n"}, N, "vllm eager"),
        # vLLM's own examples/offline_inference/basic: defaults only, and enforce_eager defaults to False
        Example({"examples/offline_inference/basic/basic.py": (
            "from vllm import LLM, SamplingParams\nsampling_params = SamplingParams(temperature=0.8, top_p=0.95)\n"
            "def main():\n    llm = LLM(model='facebook/opt-125m')\n    outputs = llm.generate(prompts, sampling_params)\n")}, U, "vllm default"),
        Example({"serve.sh": "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --disable-cuda-graph\n"}, N, "sglang graphs off"),
        Example({"configs/run.yaml": "enable_cuda_graph: false\n"}, N, "disabled"),
        Example({  # an RL framework's rollout engine: eager by default; graphs only for a LoRA rollout, and the rank is 0
            "myrl/config/ppo_base_config.yaml": "trainer:\n  policy:\n    model:\n      lora:\n        rank: 0\ngenerator:\n  enforce_eager: true\n",
            "myrl/entrypoints/main_base.py": (
                "def create_inference_engines(cfg):\n    engine_kwargs = {\"enforce_eager\": cfg.generator.enforce_eager}\n"
                "    if cfg.trainer.policy.model.lora.rank > 0:\n        engine_kwargs[\"enforce_eager\"] = False\n"
                "    return engine_kwargs\n"),
        }, N, "graphs only under a LoRA rank test that is off"),
        Example(_graph_helper("False"), N, "a capture helper whose only caller is behind use_cuda_graph (default False)"),
        Example(_graph_helper("True"), U, "the same helper with use_cuda_graph on by default"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list = []
        gated: list = []  # the switches that keep a capture helper from running (its every caller is behind them)
        for c in f.calls(*_GRAPH_CALLS):
            gate = guard_off(f, c) or callers_off(f, c, hops=3)
            if not gate:
                used.append(c)
            gated += [g for g in gate if g not in gated]
        calls, _ = active_compile_calls(f)
        used += [c for c in calls if c.kwargs.get("mode") in _GRAPH_MODES]
        off_: list = []
        for s in f.effective(*_GRAPH_KEYS, "cuda_graph_impl"):
            t = truthy(s.value)
            if t is True or (s.name == "cuda_graph_impl" and isinstance(s.value, str) and s.value.lower() not in {"none", ""}):
                used.append(s)
            elif t is False and s.rank > 0:
                off_.append(s)
        used += [a for a in f.attr_assigns("torch._inductor.config.triton.cudagraphs") if truthy(a.value) is True]
        engine = [s for s in f.effective("enforce_eager", "disable_cuda_graph") if not set_under_off_branch(f, s)]
        mixed = ctx.project.does_training and len({truthy(s.value) for s in engine if s.rank > 0} - {None}) > 1
        for s in engine:
            t = truthy(s.value)
            if mixed:
                break  # a training project's rollout engines eager in some recipes, graphed in others: J6 judges them
            if t is False and s.rank > 0:
                if not ctx.project.does_training:
                    used.append(s)  # a serving project: the engine's decode CUDA graphs are its step
                # in a training project an engine's decode graphs (llama-cookbook's vLLM ``LLM(enforce_eager=False)`` in a
                # RAG demo) are J6's, not graphs of the training step
            elif t is True and s.rank > 0:
                off_.append(s)
        if not used and not off_ and not ctx.project.does_training:
            # a serving project: vLLM (enforce_eager=False), SGLang and TGI (``--cuda-graphs`` defaults to batch sizes
            # 1-32 since 2.0; J6 reads it so for MathCoder's ``deploy.sh``) capture decode CUDA graphs by default
            used += [c for c in f.calls(*_GRAPH_ENGINES) if not guard_off(f, c)] + f.launches("vllm", "sglang", "text-generation-launcher")
            used += [x for x in f.launches("python") if (x.script or "").startswith(("vllm.", "sglang."))]
        if used and ctx.project.does_training:
            # (LlamaGen: ``torch.compile(mode="reduce-overhead")`` in its sampling scripts and the graph capture of its vLLM
            # engine copy, beside training scripts that compile with the default mode: generation's graphs, J6's question)
            away = {id(x) for x in unreached_sites(ctx, used)}
            if away and len(away) == len(used):
                where = list({(x.path, x.line): x for x in used}.values())
                return Outcome(N, [f.ev(x) for x in where], unreached_note(f, where, "CUDA graph captures")
                               + ": they speed up generation (J6), not the training step", {"cuda_graph": False})
            used = [x for x in used if id(x) not in away]
        if used:
            return Outcome(U, [f.ev(x) for x in used], "CUDA graphs capture the step", {"cuda_graph": True})
        if gated and not off_:
            g = gated[0]
            return Outcome(N, evs(gated), "CUDA graph capture exists only behind a switch that is off: "
                           f"{getattr(g, 'key', None) or getattr(g, 'name', '')} = {getattr(g, 'value', None)!r} at {g.path}:{g.line}",
                           {"cuda_graph": False})
        # (read through a keyword: ``enforce_eager=self.cfgs.vllm_cfgs.vllm_enforce_eager``, align-anything)
        engine_off = [s for s in off_ if str(getattr(s, "name", "") or "").endswith(("enforce_eager", "disable_cuda_graph"))]
        if off_ and len(engine_off) == len(off_) and ctx.project.does_training:
            # (axolotl's EBFT recipes: ``vllm: enforce_eager: true`` for the rollout server) the engine's decode graphs, not
            # the training step's: say which is off
            e = engine_off[0]
            more = f" (+{len(engine_off) - 1})" if len(engine_off) > 1 else ""
            shown = str(e.value).lower() if isinstance(e.value, bool) and not e.path.endswith(".py") else e.value
            return Outcome(N, evs(off_), "no CUDA graph capture of the training step found; the generation engine's decode graphs "
                           f"are switched off ({e.name}: {shown} at {e.path}:{e.line}{more})", {"cuda_graph": False})
        return Outcome(N, evs(off_), "CUDA graphs are disabled" if off_ else "no CUDA graph capture found", {"cuda_graph": False})


# --- D5 Liger Kernel ------------------------------------------------------------

#: project families Liger patches or may patch (liger_kernel.transformers.monkey_patch.MODEL_TYPE_TO_APPLY_LIGER_FN); the
#: ambiguous ones (phi: Phi-3 yes, Phi-2 no; glm: GLM-4 yes, ChatGLM no; qwen: Qwen1.5 is qwen2; deepseek: V3 and the
#: Llama-shaped ones; olmo: OLMo-2/3; falcon: Falcon-H1) still get the advice, with the family list in the fix text
_LIGER_SUPPORTED = {"llama", "mistral", "mixtral", "gemma", "qwen2", "qwen3", "qwen2_vl", "qwen2_5_vl", "llava", "mllama",
                    "paligemma", "pixtral", "internvl", "granite", "yi", "deepseek", "olmo", "phi", "glm", "qwen", "falcon"}
#: families Liger has no patch for (GPT-2, GPT-NeoX/Pythia, OPT, BLOOM, T5, Baichuan, InternLM, Qwen-VL v1, MiniCPM-V, IDEFICS)
_LIGER_UNSUPPORTED = {"gpt2", "gpt_neox", "opt", "bloom", "t5", "baichuan", "internlm", "qwen_vl", "minicpm_v", "idefics"}
_LIGER_KEYS = ("use_liger_kernel", "use_liger", "enable_liger_kernel", "liger_kernel")
_AXOLOTL_LIGER = ("liger_rope", "liger_rms_norm", "liger_glu_activation", "liger_layer_norm", "liger_cross_entropy",
                  "liger_fused_linear_cross_entropy", "liger_swiglu")


_LIGER_ARGS = ("from dataclasses import dataclass\n\n\n@dataclass\nclass TrainArgumentsMixin:\n    use_liger_kernel: bool = {on}\n"
               "    gradient_checkpointing: bool = True\n")
_LIGER_TUNER = (
    "import inspect\n\nfrom transformers import TrainingArguments\n\n\ndef apply_liger(model_type):\n"
    "    from liger_kernel.transformers import apply_liger_kernel_to_llama, apply_liger_kernel_to_qwen2\n"
    "    if model_type == 'llama':\n        apply_liger_kernel_to_llama()\n    elif model_type == 'qwen2':\n"
    "        apply_liger_kernel_to_qwen2()\n\n\ndef prepare_model(args, model):\n"
    "    if args.use_liger_kernel and 'use_liger_kernel' not in inspect.signature(TrainingArguments).parameters:\n"
    "        apply_liger(args.model_type)\n    return model\n")


def liger_sites(f: Facts) -> tuple[list, list, list]:
    """(Liger in effect, Liger half-configured, Liger switched off)."""
    used: list = []
    half: list = []
    off_: list = []
    for c in f.calls("liger_kernel.*"):
        if ".chunked_loss" in c.name or re.search(r"Liger\w*(DPO|ORPO|SimPO|CPO|KTO|JSD|KLDiv)", c.short):
            continue  # the fused alignment/distillation losses are G6
        if guard_off(f, c) or callers_off(f, c):  # a patch helper (``apply_liger(model_type)``) called only when a flag is on
            continue
        used.append(c)
    for s in f.effective(*_LIGER_KEYS):
        t = truthy(s.value)
        if t:
            used.append(s)
        elif t is False and s.rank > 0:
            off_.append(s)
    plugin = [e for e in f.config("plugins") if any(isinstance(v, str) and "liger" in v.lower()
                                                     for v in (e.value if isinstance(e.value, tuple) else (e.value,)))]
    plugin += [e for e in f.config_under("plugins") if isinstance(e.value, str) and "liger" in e.value.lower()]
    flags = [s for s in f.effective(*_AXOLOTL_LIGER) if truthy(s.value) is True]
    if plugin and flags:
        used += plugin + flags
    elif plugin or flags:
        half += plugin + flags
    return used, half, off_


def _own_model_classes(f: Facts, loads: list[Any]) -> list[tuple[Any, str]]:
    """The ``from_pretrained`` loads of a model class the repository defines itself (a copied ``modeling_llama.py``), each
    with the repository file that defines it; a class imported from transformers (or an unknown module) is none."""
    out: list[tuple[Any, str]] = []
    for c in loads:
        name = getattr(c, "name", "") or ""
        if not name.endswith(".from_pretrained") or name.startswith("transformers."):
            continue
        module = name.rsplit(".", 2)[0]
        stem = module.replace(".", "/") + ".py"
        path = next((p for p in f.files if p == stem or p.endswith("/" + stem)), None)
        if path is not None and "." in module:
            out.append((c, path))
    return out


def _own_fa_switch(f: Facts, loads: list) -> tuple[str, Any] | None:
    """The project's own FlashAttention switch that the training path's model loads pass on (Chinese-LLaMA-Alpaca-2:
    ``use_flash_attention_2: Optional[bool] = field(default=False)``, then ``from_pretrained(...,
    use_flash_attention_2=training_args.use_flash_attention_2)``) when nothing turns it on: (its name, its default)."""
    for c in (c for c in loads if isinstance(c, Call)):
        for key in ("use_flash_attention_2", "use_flash_attn", "flash_attn"):
            v = c.kwargs.get(key)
            ref = getattr(v, "ref", None) if isinstance(v, Expr) else None
            if not ref or flag_state(f, ref) is not False:
                continue
            default = next((s for s in f.settings(ref) if s.source in ("field-default", "argparse-default") and s.path == c.path), None)
            if default is not None:
                return ref, default
    return None


#: model families whose checkpoints ship their own modelling code (``trust_remote_code``), attention kernel choice included:
#: ChatGLM 1-3, Qwen 1 (``Qwen/Qwen-7B``; Qwen1.5 and later are native), Baichuan, InternLM 1-2
_REMOTE_ATTN = lazy_compile(r"chatglm|(^|/)qwen-(1_8b|7b|14b|72b)|baichuan|internlm2?(-|_|$)|minicpm|deepseek-vl", re.I)
#: names of embedding models a RAG or API demo uses beside the trained LLM (ChatGLM3's ``bge-large-zh-1.5``)
_EMBEDDING_NAME = lazy_compile(r"(^|/)(bge|e5|gte|text2vec|m3e)[-_]|embedding|sentence-transformers", re.I)


def _remote_attention(ctx: Context, loads: list) -> str | None:
    """The remote-code model the training path loads, when every model the project names is one and every load passes
    ``trust_remote_code=True`` (ChatGLM3's ``finetune_hf.py``, Qwen's ``finetune.py``): None otherwise."""
    f = ctx.facts
    calls = [c for c in loads if isinstance(c, Call)]

    def trusted(c: Call) -> bool:
        if truthy(c.kwargs.get("trust_remote_code")) is True:
            return True
        # ``AutoModel.from_pretrained(model_to_load, config=config, **config_kwargs)`` beside ``config_kwargs =
        # {"trust_remote_code": True, ...}`` in the same file (ChatGLM-Efficient-Tuning ``loader.py``)
        return c.star_kwargs and any(truthy(s.value) is True for s in f.settings("trust_remote_code") if s.path == c.path)

    # (TRL's ``AutoModelForCausalLMWithValueHead.from_pretrained(model)`` wraps a model loaded above: no load of its own)
    calls = [c for c in calls if not c.name.endswith("WithValueHead.from_pretrained")]
    if not calls or not all(trusted(c) for c in calls):
        return None
    names = [n for n in ctx.project.model_names if not _EMBEDDING_NAME.search(n)]
    if not names:
        # every launch names its checkpoint by a placeholder (``--model_name_or_path path_to_chatglm2_6b``): the model
        # options' values still say which models the runs load
        names = [v for s in f.settings("model_name_or_path", "model_path", "base_model", "pretrained_model_name_or_path")
                 if isinstance(v := s.value, str) and not _EMBEDDING_NAME.search(v)]
    # the model the runs train (named first) is a remote-code one (MiniCPM-o's fine-tuning beside the legacy OmniLMM code)
    if not names or not _REMOTE_ATTN.search(names[0]):
        return None
    # a hub name (``THUDM/chatglm-6b``) before a placeholder path (``path_to_chatglm2_6b``) or a Windows path
    hub = [n for n in names if _REMOTE_ATTN.search(n) and re.fullmatch(r"[\w.-]+/[\w.-]+", n)]
    return hub[0] if hub else next((n for n in names if not re.search(r"[\\:]", n)), names[0])


def _flag_launch_share(f: Facts, used: list) -> tuple[str, list, list] | None:
    """Liger applied only under one flag of the training scripts (InternVL: ``if model_args.use_liger:`` in its three
    trainers, a dataclass field that defaults to False) that a minority of their launches turn on (16 of 116 pass
    ``--use_liger True``): (the flag, the launches that turn it on, the launches of those scripts). None when another
    site turns Liger on, the calls sit under no single flag, or fewer than three launches run the scripts."""
    calls = [x for x in used if isinstance(x, Call)]
    flags = {fl for c in calls for fl, neg in guard_flags(c.guard) if not neg}
    if len(flags) != 1 or any(not any(fl in flags and not neg for fl, neg in guard_flags(c.guard)) for c in calls):
        return None
    flag = flags.pop()
    key = flag.lower().replace("-", "_")
    # the launches' own ``--use_liger True`` are counted below; any other setting turns Liger on by itself
    if any(not (isinstance(x, Setting) and x.source == "launcher" and x.name.lower().replace("-", "_") == key)
           for x in used if not isinstance(x, Call)):
        return None
    paths = {c.path for c in calls}
    runs = [x for x in f.launches() if any(runs_file(x.script, p) for p in paths)]
    on = [x for x in runs if any(k.lower().replace("-", "_") == key and truthy(v) is True for k, v in x.script_args.items())]
    if len(runs) < 3 or len(on) * 2 >= len(runs):
        return None
    cited = [x for x in used if not isinstance(x, Call)]  # the flag's own line in each launch that passes it
    return flag, cited or on, runs


def _hf_flag_launch_share(f: Facts, used: list) -> tuple[str, list, list] | None:
    """HF's own ``--use_liger_kernel`` passed true by a minority of the training launches (Mantis: 1 of the 30 launches that
    train, ``train_qwen2_vl_video_eval.sh``; the others leave it off or at the TrainingArguments default False): (the flag, the
    launches that turn it on, the training launches). None when any other site turns Liger on or fewer than three launches
    train."""
    if not used or any(not (isinstance(x, Setting) and x.source == "launcher" and x.name == "use_liger_kernel") for x in used):
        return None
    runs = launches_with_train_args(f)
    on = [x for x in runs if truthy(x.script_args.get("use_liger_kernel")) is True]
    if len(runs) < 3 or len(on) * 2 >= len(runs):
        return None
    return "use_liger_kernel", used, runs


#: InternVL ``internvl_chat/internvl/train/internvl_chat_finetune.py``: Liger under the trainer's own ``use_liger`` field
_LIGER_FIELD_TRAINER = (
    "from dataclasses import dataclass, field\n\nfrom liger_kernel.transformers import apply_liger_kernel_to_llama, apply_liger_kernel_to_qwen2\n"
    "from transformers import HfArgumentParser, Trainer\n\n\n@dataclass\nclass ModelArguments:\n"
    "    use_liger: bool = field(default=False, metadata={'help': 'Set to True to use the liger kernel.'})\n\n\n"
    "def main():\n    model_args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_args_into_dataclasses()\n"
    "    if model_args.use_liger:\n        apply_liger_kernel_to_llama()\n        apply_liger_kernel_to_qwen2()\n"
    "    model = InternVLChatModel.from_pretrained(model_args.model_name_or_path)\n"
    "    trainer = Trainer(model=model, args=training_args)\n    trainer.train()\n"
)


def _liger_field_launches(on: int, total: int) -> dict[str, str]:
    """``total`` stage scripts running the trainer, ``on`` of them passing ``--use_liger True``."""
    files = {"internvl/train/internvl_chat_finetune.py": _LIGER_FIELD_TRAINER}
    for i in range(total):
        flag = "  --use_liger True \\\n" if i < on else ""
        files[f"shell/stage2/internvl_{i}b_stage2.sh"] = (
            "torchrun --nproc_per_node=8 internvl/train/internvl_chat_finetune.py \\\n"
            f"  --model_name_or_path Qwen/Qwen2.5-{i + 1}B \\\n{flag}  --bf16 True \\\n  --deepspeed zero_stage3_config.json\n")
    return files


# RLinf: the log-prob helper dispatches on an op-type string; the actor hands it an attribute read from the run's config
# with a default ("flash_attn"), so the Liger branch runs only for a run that names "liger_kernel"
_LIGER_OP_UTILS = (
    "import torch.nn.functional as F\n\n\n"
    "def logprobs_from_logits_liger_kernel(logits, labels):\n"
    "    from liger_kernel.transformers.cross_entropy import LigerCrossEntropyLoss\n\n"
    "    loss_func = LigerCrossEntropyLoss(reduction=\"none\")\n    return -loss_func(logits, labels)\n\n\n"
    "def compute_logprobs_from_logits(logits, target, op_type=\"torch\"):\n"
    "    if op_type == \"liger_kernel\":\n        return logprobs_from_logits_liger_kernel(logits, target)\n"
    "    return -F.cross_entropy(logits, target, reduction=\"none\")\n")
_LIGER_OP_ACTOR = (
    "from pkg.utils import compute_logprobs_from_logits\n\n\nclass Actor:\n    def __init__(self, cfg):\n"
    "        self.cfg = cfg\n        self.entropy_op_type = cfg.algorithm.get(\"entropy_op_type\", \"flash_attn\")\n\n"
    "    def compute_logprobs(self, logits, target):\n"
    "        return compute_logprobs_from_logits(logits, target, op_type=self.entropy_op_type)\n")


# SpecForge: the Liger modules are built in closures of a loader; the blocks call the closures through a kernels object
# (unguarded), but the loader itself runs only after ``if not config.model.use_liger_kernel: return None`` (default False)
_LIGER_CLOSURE_KERNELS = (
    "from dataclasses import dataclass\nfrom typing import Callable\n\n\n@dataclass(frozen=True)\nclass Kernels:\n"
    "    make_rms_norm: Callable\n    make_mlp: Callable\n\n\n"
    "def load_liger_kernels() -> Kernels:\n    from liger_kernel.transformers import LigerRMSNorm, LigerSwiGLUMLP\n\n"
    "    def make_rms_norm(hidden_size, eps):\n        return LigerRMSNorm(hidden_size, eps=eps)\n\n"
    "    def make_mlp(config):\n        return LigerSwiGLUMLP(config)\n\n"
    "    return Kernels(make_rms_norm=make_rms_norm, make_mlp=make_mlp)\n")


def _liger_closure_lib(guarded: bool) -> dict[str, str]:
    resolve = ("def resolve_kernels(config):\n    if not config.model.use_liger_kernel:\n        return None\n"
               "    return load_liger_kernels()\n" if guarded else "def resolve_kernels(config):\n    return load_liger_kernels()\n")
    return {
        "mylib/config.py": "from pydantic import BaseModel\n\n\nclass ModelConfig(BaseModel):\n    use_liger_kernel: bool = False\n",
        "mylib/kernels.py": _LIGER_CLOSURE_KERNELS,
        "mylib/providers.py": "from mylib.kernels import load_liger_kernels\n\n\n" + resolve,
        "mylib/draft.py": (
            "import torch.nn as nn\n\n\nclass DecoderLayer(nn.Module):\n    def __init__(self, config, kernels):\n"
            "        super().__init__()\n        self.norm = kernels.make_rms_norm(config.hidden_size, eps=config.rms_norm_eps)\n"
            "        self.mlp = kernels.make_mlp(config)\n"),
    }


@register
class D5Liger(Check):
    id = "D5"
    title = "Liger Kernel"
    title_zh = "Liger Kernel"
    bottlenecks = (Bottleneck.MEMORY,)
    priority = Priority.HIGH
    benefit = "about +20 % training throughput and -60 % memory on HF LLaMA-class models (LinkedIn, 8xA100)"
    what = (
        "Whether Liger's fused Triton kernels (RMSNorm, RoPE, SwiGLU, fused linear cross-entropy) replace the HF layers: "
        "`AutoLigerKernelForCausalLM`, `apply_liger_kernel_to_*`, Liger modules, HF/TRL `use_liger_kernel: true`, LLaMA-Factory "
        "`enable_liger_kernel: true`, axolotl `LigerPlugin` with `liger_*` flags (either alone is partial). The fused alignment "
        "losses belong to G6. Where every model family in the repo is one Liger has no patch for (GPT-2, Pythia, OPT, BLOOM...), "
        "it stays unused and nothing is recommended."
    )
    why = (
        "LinkedIn's Liger Kernel reports +20 % throughput and -60 % GPU memory for LLaMA-3-8B (batch 8, BF16, FSDP, 8xA100) and "
        "lets HF training scale from 4K to 16K context before OOM; the fused linear cross-entropy avoids materialising the "
        "logits, which matters most for large vocabularies (Hsu et al., 2024, arXiv:2410.10989)."
    )
    fix = (
        "For a supported HF model family (Llama, Mistral, Mixtral, Gemma, Qwen2/3, Qwen2-VL, Phi-3, GLM-4, Granite, OLMo-2, "
        "LLaVA, InternVL, ...): `pip install liger-kernel` and set `use_liger_kernel: true` (HF/TRL), `enable_liger_kernel: true` "
        "(LLaMA-Factory), or call `apply_liger_kernel_to_<family>()` before loading the model."
    )
    fix_zh = (
        "对受支持的 HF 模型族（Llama、Mistral、Mixtral、Gemma、Qwen2/3、Qwen2-VL、Phi-3、GLM-4、Granite、OLMo-2、LLaVA、InternVL 等）："
        "`pip install liger-kernel`，并设置 `use_liger_kernel: true`（HF/TRL）、`enable_liger_kernel: true`（LLaMA-Factory），"
        "或在加载模型前调用 `apply_liger_kernel_to_<family>()`。"
    )
    fix_safety = FixSafety.SAFE
    references = ("https://github.com/linkedin/Liger-Kernel", "https://arxiv.org/abs/2410.10989")
    snippets = {
        "hf-yaml": "use_liger_kernel: true\n",
        "python": (
            "from liger_kernel.transformers import AutoLigerKernelForCausalLM\n\n"
            "model = AutoLigerKernelForCausalLM.from_pretrained(model_name, torch_dtype=\"bfloat16\")\n"
        ),
    }
    examples = (
        Example({"train.py": (
            "from liger_kernel.transformers import apply_liger_kernel_to_llama\nfrom transformers import AutoModelForCausalLM\n"
            "apply_liger_kernel_to_llama()\nmodel = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.1-8B')\n")}, U, "apply call"),
        Example({"configs/sft.yaml": "model_name_or_path: Qwen/Qwen2.5-7B\nuse_liger_kernel: true\nbf16: true\n"}, U, "hf yaml"),
        Example({"examples/llama3_full_sft.yaml": "model_name_or_path: meta-llama/Meta-Llama-3-8B\nstage: sft\nfinetuning_type: full\nenable_liger_kernel: true\n"}, U, "llamafactory"),
        Example({"axolotl.yml": (
            "base_model: meta-llama/Llama-3.1-8B\nplugins:\n  - axolotl.integrations.liger.LigerPlugin\nliger_rope: true\n"
            "liger_rms_norm: true\nliger_glu_activation: true\nliger_fused_linear_cross_entropy: true\n")}, U, "axolotl plugin"),
        Example({"configs/sft.yaml": "model_name_or_path: meta-llama/Llama-3.1-8B\nuse_liger_kernel: false\n"}, N, "disabled"),
        Example({"pkg/utils.py": _LIGER_OP_UTILS, "pkg/actor.py": _LIGER_OP_ACTOR}, N,
                "a Liger loss behind an op-type string the actor reads from the config with another default"),
        Example({"pkg/utils.py": _LIGER_OP_UTILS, "pkg/actor.py": _LIGER_OP_ACTOR,
                 "examples/grpo.yaml": "algorithm:\n  entropy_op_type: liger_kernel\n"}, U, "a recipe picks the Liger op type"),
        Example({  # ms-swift: the patch helper runs only under the argument class's use_liger_kernel, default False
            "mylib/arguments.py": _LIGER_ARGS.format(on=False), "mylib/tuner.py": _LIGER_TUNER}, N, "patch helper behind a flag that is off"),
        Example({"mylib/arguments.py": _LIGER_ARGS.format(on=True), "mylib/tuner.py": _LIGER_TUNER}, U, "patch helper behind a flag that is on"),
        Example({"openrlhf/cli/train_sft.py": (
            "import argparse\nfrom transformers import AutoModelForCausalLM\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--use_liger_kernel', action='store_true', default=False, help='Enable Liger Kernel')\n"
            "args = parser.parse_args()\nmodel = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.1-8B')\n"),
                 "examples/scripts/train_sft_llama.sh": "deepspeed --module openrlhf.cli.train_sft --pretrain meta-llama/Llama-3.1-8B --bf16\n"},
                N, "an option left at its default False"),
        Example({"train.py": (
            "from transformers import AutoModelForCausalLM, Trainer\n"
            "model = AutoModelForCausalLM.from_pretrained('mistralai/Mistral-7B-v0.1')\n# from liger_kernel.transformers import apply_liger_kernel_to_mistral\n")}, N, "hf mistral without liger"),
        Example({"axolotl.yml": "base_model: meta-llama/Llama-3.1-8B\nplugins:\n  - axolotl.integrations.liger.LigerPlugin\n"}, P, "plugin without kernels"),
        Example({"train.py": "from transformers import GPT2LMHeadModel\nmodel = GPT2LMHeadModel.from_pretrained('gpt2-medium')\n"}, N, "gpt2 unsupported"),
        Example(_liger_closure_lib(True), N, "Liger modules built in closures of a loader that runs only when use_liger_kernel (default False)"),
        Example(_liger_closure_lib(False), U, "the same closures, their loader called unconditionally"),
        Example(_liger_field_launches(1, 4), P, "InternVL: Liger under the trainer's use_liger, passed by 1 of 4 launches"),
        Example(_liger_field_launches(3, 4), U, "the same trainer, 3 of 4 launches pass --use_liger True"),
    )

    def detect(self, ctx: Context) -> Outcome:
        outcome = self._detect(ctx)
        if outcome.status is not U and not _trains_hf_model(ctx):
            outcome.values["model_code"] = "own"  # the advice: Liger's modules composed by hand (reports.applicability)
        elif outcome.status is not U and _remote_code_loader(ctx) and _unpatched_remote_family(ctx):
            # a hub model of a family Liger does not patch, loaded as remote code (Nanbeige's ``AutoModelForCausalLM.
            # from_pretrained(..., trust_remote_code=True)`` of ``Nanbeige-16b-base``, model_type "nanbeige"): the HF switch
            # and the Auto class leave it as it is; only its modeling file can take Liger's modules
            outcome.values["model_code"] = "remote"
        return outcome

    def _detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used, half, off_ = liger_sites(f)
        share = _flag_launch_share(f, used) or _hf_flag_launch_share(f, used)
        if share is not None:
            flag, on, runs = share
            scripts = sorted({(x.script or "").rsplit("/", 1)[-1] for x in runs})
            names = ", ".join(scripts[:3]) + (", ..." if len(scripts) > 3 else "")
            return Outcome(P, [f.ev(x) for x in used if isinstance(x, Call)] + evs(on[:10]),
                           f"Liger kernels patch the model only under `{flag}`: {len(on)} of {len(runs)} launches of "
                           f"{names} turn it on (judged by the majority: off)",
                           {"liger_kernel": False, "advice_for": "hf-flag" if flag == "use_liger_kernel" and not any(
                               isinstance(x, Call) for x in used) else "project-flag", "flag": flag})
        if used:
            return Outcome(U, [f.ev(x) for x in used], "Liger kernels patch the model", {"liger_kernel": True})
        if half:
            return Outcome(P, evs(half), "the axolotl Liger plugin and its liger_* kernel flags are not both set", {"liger_kernel": False})
        fams = set(ctx.project.model_families)
        if fams and fams <= _LIGER_UNSUPPORTED:
            return Outcome(N, evs(off_), f"no Liger Kernel; Liger has no patch for {', '.join(sorted(fams))}", {"liger_kernel": False})
        if dual := ctx.project.notes.get("dual_encoder_only"):
            return Outcome(N, evs(off_), f"no Liger Kernel; Liger has no patch for the image-text dual encoder trained here ({dual})",
                           {"liger_kernel": False})
        if off_:
            return Outcome(N, evs(off_), "Liger Kernel is disabled", {"liger_kernel": False})
        # an option the project has but leaves at its default False (OpenRLHF ``--ds.use_liger_kernel``): say so, cite it
        avail = [s for s in f.effective(*_LIGER_KEYS) if truthy(s.value) is False and s.rank == 0]
        if avail:
            a = avail[0]
            return Outcome(N, evs(avail), f"Liger Kernel is available but off by default ({a.name}=False at {a.path}:{a.line}); "
                           "no recipe or launch turns it on", {"liger_kernel": False, "liger_available": True})
        return Outcome(N, [], "no Liger Kernel found", {"liger_kernel": False})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status not in (Status.UNUSED, Status.PARTIAL):
            return None
        fams = set(ctx.project.model_families)
        if fams and not fams & _LIGER_SUPPORTED:
            return None  # Liger has no patch for these models
        if ctx.project.notes.get("encoder_models_only") or ctx.project.notes.get("dual_encoder_only"):
            # every named model is an encoder-only checkpoint (a BERT classifier), or the trained model is a CLIP-style
            # image-text dual encoder: Liger patches decoder LLMs (RMSNorm, RoPE, SwiGLU, the LM head's cross-entropy)
            return None
        # the seed's HIGH is for HF-model training; custom models and remote code compose Liger modules by hand
        return Priority.HIGH if _trains_hf_model(ctx) and outcome.values.get("model_code") != "remote" else Priority.LOW


# --- D6 operator fusion ---------------------------------------------------------

_OPTIMIZERS = {"Adam", "AdamW", "SGD", "Adagrad", "Adamax", "NAdam", "RAdam", "RMSprop"}
_FUSED_USES = (
    "FusedAdam", "FusedLAMB", "FusedLamb", "FusedSGD", "FusedNovoGrad", "FusedMixedPrecisionLamb", "FusedLayerNorm", "FusedRMSNorm",
    "MixedFusedLayerNorm", "MixedFusedRMSNorm", "FusedScaleMaskSoftmax", "FusedDense", "FusedMLP", "fused_layer_norm", "fused_rms_norm",
)
_FUSED_MODULES = ("apex.contrib.*", "flash_attn.ops.*", "flash_attn.losses.*", "flash_attn.layers.*", "flash_attn.modules.mlp.*", "xformers.ops.*")
_TE_FUSED = ("transformer_engine.pytorch.LayerNormLinear", "transformer_engine.pytorch.LayerNormMLP", "transformer_engine.pytorch.TransformerLayer",
             "transformer_engine.pytorch.RMSNorm", "transformer_engine.pytorch.LayerNorm")
_MEGATRON_FUSION_FLAGS = ("use_fused_rmsnorm", "use_fused_swiglu", "use_fused_rotary_pos_emb", "bias_gelu_fusion", "bias_swiglu_fusion",
                          "masked_softmax_fusion", "apply_rope_fusion", "gradient_accumulation_fusion", "cross_entropy_loss_fusion",
                          "use_fused_rotary_emb", "bias_dropout_fusion")
#: NeMo's Megatron model classes (``megatron_gpt_model.MegatronGPTModel``, ``megatron_t5_model.MegatronT5Model``)
_NEMO_MEGATRON_MODEL = lazy_compile(r"\.megatron_\w+_model\.Megatron\w*Model$")
#: NeMo's switches of those default fusions (``model.bias_activation_fusion: false``)
_NEMO_FUSION_FLAGS = ("bias_activation_fusion", "bias_dropout_add_fusion")
_MEGATRON_NO_FUSION = ("no_masked_softmax_fusion", "no_bias_gelu_fusion", "no_bias_dropout_fusion", "no_gradient_accumulation_fusion",
                       "no_bias_swiglu_fusion")


#: an optimizer config's implementation switch (torchtitan ``OptimizersContainer.Config.implementation: Literal["for-loop",
#: "foreach", "fused"] = "fused"``, turned into ``fused=True`` for torch.optim when the optimizer is built)
_OPTIM_IMPL_KEYS = ("implementation", "optimizer_implementation", "optim_implementation")
_OPTIM_FILE = lazy_compile(r"(?i)optim")


def _fused_impl_default(f: Facts) -> tuple[Setting | None, list[Setting]]:
    """The optimizer config field that defaults to the fused implementation, in an optimizer module, and the settings of
    recipes, configs or launches that choose another (``implementation="foreach"`` in one torchtitan recipe). (None, [])
    when no such default exists, or when a config file or launch (not a recipe) chooses another for the whole project."""
    sets = f.settings(*_OPTIM_IMPL_KEYS)
    default = next((s for s in sets if s.source == "field-default" and _OPTIM_FILE.search(s.path) and isinstance(s.value, str)
                    and s.value.lower().startswith("fused") and not _TEST_PATH.search(s.path)), None)
    if default is None:
        return None, []
    others = [s for s in sets if s.rank > 0 and isinstance(s.value, str) and not s.value.lower().startswith("fused")
              and not _TEST_PATH.search(s.path)]
    if any(s.source != "call" for s in others):
        return None, []  # a config file or a launch picks the implementation: the default is not what runs
    return default, others


def _aliased_calls(f: Facts, *patterns: str) -> list:
    """A fused op bound to a plain name and called through it: ``xformers_attention = xformers.memory_efficient_attention``
    (``import xformers.ops.fmha as xformers``), then ``A = xformers_attention(Q, K, V, attn_bias=causal_mask)``: the alias
    line and up to three of its calls; nothing when the alias is never called."""
    out: list = []
    for r in f.refs(*patterns):
        m = re.match(r"^(\w+)\s*=\s*[\w.]+$", r.text.strip())
        if not m:
            continue
        alias = m.group(1)
        calls = [c for c in f.calls(alias) if c.short == alias and not guard_off(f, c)]
        if calls:
            out += [r, *calls[:3]]
    return out


def _ds_fused_optimizer(f: Facts, train: frozenset[str] | set[str] = frozenset()) -> list:
    """DeepSpeed ``optimizer.type`` Adam/AdamW/Lamb build FusedAdam/FusedLamb unless ``torch_adam``; with the optimizer
    offloaded to the CPU, Adam/AdamW build DeepSpeed's vectorised CPU Adam (PandaGPT's ZeRO-2 offload config), its fused
    update on the host. A config written as a Python dict counts in a file of the training path only (TokenFlow's
    ``tokenflow/utils/deepspeed.py``: ``create_deepspeed_config(args)``, which nothing imports)."""
    out = []
    entries = f.config("optimizer.type")
    if not entries:
        return out
    # the per-file facts, queried once (not once per optimizer entry)
    ds_files = {x.path for x in f.config("zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size")}
    torch_adam = {x.path for x in f.config("optimizer.params.torch_adam") if truthy(x.value)}
    cpu = {x.path for x in f.config("offload_optimizer.device") if str(x.value).lower() in {"cpu", "nvme"}}
    unpassed = deepspeed_alternative_files(f)  # configs no run passes (MedicalGPT's zero{1,2,3}.json), or of an unpicked backend
    for e in entries:
        if not isinstance(e.value, str) or e.value.lower() not in {"adam", "adamw", "lamb", "fusedadam", "fusedlamb"}:
            continue
        if e.path not in ds_files or e.path in unpassed:
            continue  # an optimizer section of some other config system
        if train and e.fmt == "python" and e.path not in train:
            continue
        if e.path not in torch_adam and (e.path not in cpu or e.value.lower() in {"adam", "adamw"}):
            out.append(e)
    return out


#: NeMo-Aligner's DPO model: a subclass of NeMo's Megatron GPT model, trained by the package's own loop
_NEMO_DPO_MODEL = (
    "from nemo.collections.nlp.models.language_modeling.megatron_gpt_model import MegatronGPTModel\n\n\n"
    "class MegatronGPTDPOModel(MegatronGPTModel):\n    def get_loss_and_metrics(self, batch, forward_only):\n"
    "        return self.fwd_bwd_function(batch, forward_only=forward_only)\n"
)


def _torchtitan_optim() -> dict[str, str]:
    """torchtitan 0.3.0 ``components/optimizer/optimizer.py``: the implementation switch becomes torch.optim's keywords."""
    return {"torchtitan/components/optimizer/optimizer.py": (
        "from dataclasses import dataclass\nfrom typing import Any, Literal\n\nimport torch\n\n\n"
        "class OptimizersContainer:\n    @dataclass(kw_only=True, slots=True)\n    class Config:\n"
        "        name: str = \"AdamW\"\n        lr: float = 8e-4\n"
        "        implementation: Literal[\"for-loop\", \"foreach\", \"fused\"] = \"fused\"\n\n"
        "    def __init__(self, config: Config, model_parts):\n"
        "        fused = config.implementation == \"fused\"\n"
        "        kwargs: dict[str, Any] = {\"lr\": config.lr, \"fused\": fused, \"foreach\": config.implementation == \"foreach\"}\n"
        "        self.optimizers = [torch.optim.AdamW(m.parameters(), **kwargs) for m in model_parts]\n")}


@register
class D6OperatorFusion(Check):
    id = "D6"
    title = "Operator fusion (FusedAdam, fused=True, apex, xformers)"
    title_zh = "算子融合"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.LAUNCH)
    priority = Priority.LOW
    benefit = "fewer kernel launches and less intermediate memory traffic in the optimizer step and normalisation layers"
    what = (
        "Whether fused kernels replace chains of small ops: a fused optimizer (`AdamW(fused=True)`, HF `optim: adamw_torch_fused`, "
        "apex/DeepSpeed `FusedAdam`, a DeepSpeed `optimizer` section with Adam/AdamW, which DeepSpeed builds as FusedAdam), "
        "apex fused layers, xformers ops, flash-attn fused ops, TransformerEngine fused layers, Megatron fusion flags (on by default "
        "in a Megatron launch unless `--no-*-fusion`). `fused=False` or `optim: adamw_torch` is not use. Liger (D5) and torch.compile (D2) are counted there."
    )
    why = (
        "A fused AdamW updates all parameters in a handful of kernels instead of several per tensor: PyTorch measured the fused "
        "implementation as the fastest of for-loop/foreach/fused, and HF reported a few % end-to-end on T5 with "
        "`adamw_torch_fused` (transformers PR #22144, A100). Fused norm/bias-activation kernels in Megatron and apex avoid writing "
        "intermediates to HBM; each saves a memory round-trip per layer."
    )
    fix = "Use a fused optimizer: HF `optim: adamw_torch_fused`, `torch.optim.AdamW(params, fused=True)`, or a DeepSpeed `optimizer` section (FusedAdam)."
    fix_zh = "使用融合优化器：HF `optim: adamw_torch_fused`、`torch.optim.AdamW(params, fused=True)`，或在 DeepSpeed 配置中声明 `optimizer`（FusedAdam）。"
    fix_safety = FixSafety.SAFE
    references = ("https://pytorch.org/docs/stable/optim.html#algorithms", "https://github.com/huggingface/transformers/pull/22144",
                  "https://nvidia.github.io/apex/optimizers.html")
    snippets = {
        "hf-yaml": "optim: adamw_torch_fused\n",
        "python": "import torch\n\noptimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)\n",
        "deepspeed-json": '{\n  "optimizer": {"type": "AdamW", "params": {"lr": 2e-5, "weight_decay": 0.0}}\n}\n',
    }
    examples = (
        Example({"train.py": "import torch\nopt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)\n"}, U, "torch fused"),
        Example({"configs/sft.yaml": "model_name_or_path: meta-llama/Llama-3.1-8B\noptim: adamw_torch_fused\n"}, U, "hf optim"),
        Example({"nanochat/optim.py": (  # nanochat: its own AdamW step, compiled into fused kernels
            "import torch\n\n\n@torch.compile(dynamic=False, fullgraph=True)\n"
            "def adamw_step_fused(p, grad, exp_avg, exp_avg_sq, step_t, lr_t, beta1_t, beta2_t, eps_t, wd_t):\n"
            "    p.mul_(1 - lr_t * wd_t)\n    exp_avg.lerp_(grad, 1 - beta1_t)\n"
            "    exp_avg_sq.lerp_(grad.square(), 1 - beta2_t)\n    p.add_(exp_avg / (exp_avg_sq.sqrt() + eps_t), alpha=-lr_t)\n\n\n"
            "class DistAdamW(torch.optim.Optimizer):\n    @torch.no_grad()\n    def step(self):\n"
            "        for group in self.param_groups:\n            for p in group['params']:\n"
            "                st = self.state[p]\n                adamw_step_fused(p, p.grad, st['exp_avg'], st['exp_avg_sq'], *self._scalars)\n"),
            "scripts/base_train.py": "from nanochat.optim import DistAdamW\noptimizer = DistAdamW(model.parameters(), lr=3e-4)\n"},
                U, "the project's own optimizer step compiled with torch.compile"),
        Example({"optim/muon.py": "import torch\n\n\n@torch.compile\ndef zeropower_via_newtonschulz5(G, steps=5):\n    return G\n",
                 "train.py": "import torch\nopt = torch.optim.AdamW(model.parameters(), lr=3e-4)\n"},
                N, "a compiled Newton-Schulz helper is not the optimizer step; the AdamW is unfused"),
        Example({"ds_config.json": (
            '{\n  "train_micro_batch_size_per_gpu": 4,\n  "optimizer": {\n    "type": "AdamW",\n    "params": {"lr": 2e-5}\n  },\n'
            '  "zero_optimization": {"stage": 2}\n}\n')}, U, "deepspeed default fusedadam"),
        Example({"train.py": "from apex.optimizers import FusedAdam\noptimizer = FusedAdam(model.parameters(), lr=1e-4)\n"}, U, "apex"),
        Example({"model.py": "import torch\nextra_args = dict(fused=True)\noptimizer = torch.optim.AdamW(groups, lr=6e-4, **extra_args)\n"}, U, "nanogpt extra args"),
        Example({"train.py": "import torch\nopt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=False)\n"}, N, "fused false"),
        Example({"pkg/models/megatron_gpt_dpo_model.py": _NEMO_DPO_MODEL}, U, "a subclass of NeMo's MegatronGPTModel (default fusions)"),
        Example({  # slime: a Ray driver hands Megatron's own flags to Megatron-LM's argument parser (its default fusions)
            "scripts/run-qwen3-4B.sh": ("ray job submit --address=\"http://127.0.0.1:8265\" -- python3 train.py --actor-num-gpus-per-node 8 "
                                        "--tensor-model-parallel-size 2 --use-distributed-optimizer --optimizer adam --bf16\n"),
            "train.py": ("from megatron.training.arguments import parse_args\n\n\ndef train(args):\n"
                         "    model = build_model(args)\n    loss = model(batch)\n    loss.backward()\n"),
            "requirements.txt": "megatron-core\n"}, U, "Megatron-LM's flags passed through a Ray driver: its default fusions"),
        Example({"pkg/models/megatron_gpt_dpo_model.py": _NEMO_DPO_MODEL,
                 "conf/gpt_dpo.yaml": "model:\n  bias_activation_fusion: false\n  bias_dropout_add_fusion: false\n"}, N,
                "NeMo's default fusions switched off in the config"),
        Example({"configs/sft.yaml": "optim: adamw_torch\n", "notes.py": "# optim: adamw_torch_fused\n"}, N, "plain optim"),
        Example({"scripts/finetune_guanaco_7b.sh": "python qlora.py --optim paged_adamw_32bit --bf16\n",
                 "qlora.py": "import transformers\ntrainer = transformers.Seq2SeqTrainer(model=model, args=training_args)\ntrainer.train()\n"},
                U, "qlora: bitsandbytes' paged AdamW updates each tensor in one kernel"),
        Example({"ds_config.json": (
            '{\n  "train_batch_size": 64,\n  "optimizer": {"type": "AdamW", "params": {"torch_adam": true}},\n'
            '  "zero_optimization": {"stage": 2}\n}\n')}, N, "deepspeed torch_adam"),
        Example({"ds_config.json": (
            '{\n  "zero_optimization": {\n    "stage": 3,\n    "offload_optimizer": {"device": "cpu", "pin_memory": true}\n  },\n'
            '  "optimizer": {"type": "AdamW", "params": {"lr": 2e-5}},\n  "train_micro_batch_size_per_gpu": "auto"\n}\n')}, U,
                "Llama-X: AdamW offloaded to the CPU, DeepSpeed's vectorised CPU Adam (the detail says no GPU kernel is fused)"),
        Example({  # xformers' fused attention bound to a name at import and called through it (unsloth 2025.9 _utils.py/llama.py)
            "mylib/models/_utils.py": (
                "try:\n    import xformers.ops.fmha as xformers\n    xformers_attention = xformers.memory_efficient_attention\n"
                "except ImportError:\n    xformers = None\n    xformers_attention = None\n"),
            "mylib/models/llama.py": (
                "from ._utils import *\n\ndef attention_forward(self, Q, K, V, causal_mask):\n"
                "    A = xformers_attention(Q, K, V, attn_bias=causal_mask)\n    return A\n"),
        }, U, "xformers op called through an alias"),
        Example({  # the alias bound but never called
            "mylib/models/_utils.py": (
                "try:\n    import xformers.ops.fmha as xformers\n    xformers_attention = xformers.memory_efficient_attention\n"
                "except ImportError:\n    xformers_attention = None\n"),
        }, N, "xformers alias never called"),
        Example(_OPTIONAL_APEX_NORM, N, "apex's fused norm only if apex happens to be installed; plain AdamW"),
        Example(_torchtitan_optim(), U, "torchtitan: the optimizer config's implementation defaults to fused, passed as fused=True"),
        Example({**_torchtitan_optim(), "torchtitan/models/llama3/train_configs/llama3_8b.toml": (
            "[optimizer]\nname = \"AdamW\"\nlr = 3e-4\nimplementation = \"foreach\"\n")}, N,
            "the run's config file picks the foreach implementation"),
        Example({"mylib/moe/config.py": ("from dataclasses import dataclass\n\n\n@dataclass\nclass MoEConfig:\n"
                                         "    implementation: str = \"fused\"\n"),
                 "train.py": "import torch\n\nopt = torch.optim.AdamW(model.parameters(), lr=3e-4)\n"}, N,
                "a fused MoE implementation field is not the optimizer's"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list = []
        off_: list = []
        optim_fused = False
        for c in f.calls_with_kw("fused"):
            state = value_on(f, c.kwargs.get("fused"))
            nanogpt_style = c.short == "dict" and any(o.path == c.path and o.star_kwargs for o in f.calls(*_OPTIMIZERS))
            if c.short in _OPTIMIZERS or nanogpt_style:
                if state is False:
                    off_.append(c)
                else:
                    used.append(c)
                    optim_fused = True
        for s in f.effective("optim", "optimizer", "optimizer_type"):
            if isinstance(s.value, str):
                if "fused" in s.value.lower() or _BNB_OPTIM.match(s.value.strip()):
                    # (bitsandbytes' optimizers, HF ``optim: paged_adamw_32bit``, ``adamw_bnb_8bit``: each update is one CUDA
                    # kernel per tensor; qlora's paged AdamW also pages its state to CPU memory under pressure)
                    used.append(s)
                    optim_fused = True
                elif s.value.lower() in {"adamw_torch", "adamw_hf"} and s.rank > 0:  # HF/axolotl names; Megatron's "adam" is fused
                    off_.append(s)
        for e in f.config("fused"):  # torchtune/Hydra: optimizer: {_component_: torch.optim.AdamW, fused: True}
            if any(isinstance(k, str) and "optim" in k.lower() for k in e.keys[:-1]):
                t = truthy(e.value)
                if t:
                    used.append(e)
                    optim_fused = True
                elif t is False:
                    off_.append(e)
        ds = _ds_fused_optimizer(f, ctx.project.training_files)
        used += ds
        optim_fused = optim_fused or bool(ds)
        compiled = _compiled_optimizer_step(f)
        used += compiled
        optim_fused = optim_fused or bool(compiled)
        # (a copy of ``transformers.Trainer`` names apex's FusedAdam in its ``optim`` table, ChatGLM-6B ``ptuning/trainer.py``
        # ``elif args.optim == OptimizerNames.ADAMW_APEX_FUSED:``: the run's optimizer is its ``optim`` setting, read above)
        apex_like = [u for u in f.uses(*_FUSED_USES) if not guard_off(f, u) and not in_trainer_copy(f, u.path)]
        # a fused layer imported in ``try: ... except ImportError:`` from a package the project does not depend on (the
        # vendored HF T5 copy's ``T5LayerNorm = FusedRMSNorm`` when apex happens to be installed) is not in effect by default
        optional = [u for u in apex_like if _optional_package(f, u)]
        apex_like = [u for u in apex_like if u not in optional]
        # ... or bound to the plain class's name, which the fallback rebinds (LLaMA2-Accessory ``try: from apex.optimizers
        # import FusedAdam as AdamW / except ImportError: from torch.optim import AdamW``): no use resolves to apex there
        aliased = [i for i in f.imports("apex") if i.optional and i.name in _FUSED_USES and not in_trainer_copy(f, i.path)
                   and not any(u.path == i.path for u in [*optional, *apex_like])]
        if f.deps("apex"):
            apex_like += aliased  # installed with the project: the alias is the fused class
        else:
            optional += aliased
        used += apex_like
        optim_fused = optim_fused or any("Adam" in u.name or "Lamb" in u.name or "LAMB" in u.name or "SGD" in u.name for u in apex_like)
        # (not in a module nothing imports: EAGLE's ``llama_xformers_attn_monkey_patch.py``, which no script applies)
        fused_calls = [c for c in f.calls(*_FUSED_MODULES, *_TE_FUSED) if not guard_off(f, c)] + _aliased_calls(f, *_FUSED_MODULES)
        dead = orphan_sites(ctx, fused_calls)
        used += [c for c in fused_calls if c not in dead]
        for s in f.effective(*_MEGATRON_FUSION_FLAGS):
            t = truthy(s.value)
            if t is True and s.rank > 0:
                used.append(s)
            elif t is False and s.rank > 0:
                off_.append(s)
        # a Megatron launch: its ``pretrain_*.py``, or a driver passing Megatron's own flags straight to Megatron's argument
        # parser (slime ``python3 train.py --tensor-model-parallel-size 2 --use-distributed-optimizer ...``)
        # (not a checkpoint tool's launch: octopack ``python Megatron-LM/tools/checkpoint_util.py --use-distributed-optimizer``)
        megatron = [x for x in f.launches() if x.script and "megatron" in ctx.project.frameworks and not checkpoint_tool_file(x.script)
                    and (re.search(r"pretrain_\w+\.py$", x.script) or set(x.script_args) & _MEGATRON_ONLY_FLAGS)]
        megatron.sort(key=lambda x: ("example" in x.path, x.path))  # the project's own scripts before its examples
        if megatron and not used and not any(truthy(s.value) for s in f.effective(*_MEGATRON_NO_FUSION)):
            used += megatron[:1]  # Megatron fuses masked softmax, bias-GeLU and gradient accumulation by default
        # the project trains its own subclasses of NeMo's Megatron models (NeMo-Aligner ``class MegatronGPTDPOModel(
        # NLPAdapterModelMixin, MegatronGPTModel, ...)``): NeMo builds their Megatron transformer with bias-activation and
        # bias-dropout-add fusion on unless the model config says otherwise (``cfg.get('bias_activation_fusion', True)``)
        nemo = [r for r in f.refs("nemo.collections.nlp.models.language_modeling.*") if _NEMO_MEGATRON_MODEL.search(r.name)
                and r.text.lstrip().startswith("class ") and not _TEST_PATH.search(r.path)]
        if nemo and not used and not off_ and not any(truthy(s.value) is False for s in f.effective(*_NEMO_FUSION_FLAGS)):
            used += nemo[:1]
        offloaded = {x.path: x for x in f.config("offload_optimizer.device") if str(x.value).lower() in {"cpu", "nvme"}}
        if used and all(x in ds and x.path in offloaded for x in used):
            # every fused optimizer found is a DeepSpeed section whose optimizer the same config offloads (Llama-X's ZeRO-3
            # config: ``"offload_optimizer": {"device": "cpu"}`` beside ``"type": "AdamW"``): DeepSpeed builds its
            # vectorised CPU Adam, which updates on the host; no GPU kernel is fused by it
            o = offloaded[used[0].path]
            return Outcome(U, [f.ev(x) for x in used] + [f.ev(o)], f"the optimizer step runs on the CPU: {used[0].path}:{used[0].line} "
                           f"asks for {used[0].value} with the optimizer offloaded ({o.path}:{o.line}), which DeepSpeed runs as its "
                           "vectorised CPU Adam, a fused update on the host; no fused GPU kernels were found",
                           {"fused_optimizer": True, "fused_kernels": False, "optimizer_on_cpu": True})
        if used:
            # some of the DeepSpeed optimizers found are offloaded by their own config (Llama-Chinese: the pre-training's ZeRO-3
            # AdamW runs fused on the GPU, the fine-tuning's ZeRO-2 config offloads it): say which run on the host
            host = [x for x in used if x in ds and x.path in offloaded]
            paths = sorted({x.path for x in host})
            shown = ", ".join(paths[:2]) + (f" (+{len(paths) - 2})" if len(paths) > 2 else "")
            o = offloaded[paths[0]] if paths else None
            note = (f"; the optimizer of {shown} is offloaded to the CPU ({o.path}:{o.line}), where DeepSpeed runs its CPU Adam"
                    if o is not None else "")
            return Outcome(U, [f.ev(x) for x in used], "fused kernels are in use" + note, {"fused_optimizer": optim_fused, "fused_kernels": True})
        impl, others = _fused_impl_default(f)
        if impl is not None:
            other = (f"; {len(others)} setting{'s' if len(others) != 1 else ''} choose{'s' if len(others) == 1 else ''} another "
                     "implementation (" + ", ".join(f"{o.value} at {o.path}:{o.line}" for o in others[:3])
                     + (", ..." if len(others) > 3 else "") + ")") if others else ""
            return Outcome(U, evs([impl, *others]), f"fused optimizer by default: {impl.key} = \"{impl.value}\" at {impl.path}:{impl.line}, "
                           f"the optimizer config's implementation switch{other}", {"fused_optimizer": True, "fused_kernels": True})
        hf = self._hf_default_fused(ctx)
        if hf:
            return Outcome(U, evs(hf), "HF Trainer's default optim is adamw_torch_fused with transformers >= 4.54 and torch >= 2.8",
                           {"fused_optimizer": True, "fused_kernels": True})
        if optional and not off_:
            o = optional[0]
            full = f"{o.module}.{o.name}" if getattr(o, "module", None) else o.name  # an import record, or a use's dotted name
            return Outcome(N, evs(optional), f"no fused kernels by default: {full.rsplit('.', 1)[-1]} is used only when the optional "
                           f"package {full.split('.')[0]} happens to be installed (try/except ImportError at {o.path}:{o.line}), "
                           "and no requirements file of the project lists it", {"fused_optimizer": False, "fused_kernels": False})
        own, n_launch = _own_optimizer(f)
        if own and not off_:
            s0, c0 = own[0]
            return Outcome(N, evs([s0, c0]), f"no fused optimizer or fused layers found; {len(own)} of {n_launch} launches train "
                           f"with the project's own optimizer {c0.short} ({c0.path}:{c0.line}; {s0.key} {s0.value} at "
                           f"{s0.path}:{s0.line}), which a fused torch AdamW would replace, not speed up",
                           {"fused_optimizer": False, "fused_kernels": False, "own_optimizer": c0.short})
        # (Liger's fused norm/RoPE/SwiGLU/loss kernels are D5's: the layers are fused there, the optimizer here is not; aguvis
        # ``apply_liger_kernel_to_qwen2_vl()`` with HF's default ``adamw_torch``)
        liger = liger_sites(f)[0]
        layers = (f"; the fused layers come from Liger Kernel (D5, {liger[0].path}:{liger[0].line}), the optimizer step is unfused"
                  if liger else "")
        detail = "unfused optimizer explicitly chosen" if off_ else "no fused optimizer found" if liger else "no fused optimizer or fused layers found"
        return Outcome(N, evs(off_), detail + layers, {"fused_optimizer": False, "fused_kernels": bool(liger)})

    @staticmethod
    def _hf_default_fused(ctx: Context) -> list:
        f = ctx.facts
        if not uses_hf_trainer(f) or f.effective("optim"):
            return []
        t_lo, _, t_deps = dep_version(f, "transformers")
        p_lo, _, p_deps = dep_version(f, "torch")
        if t_lo and p_lo and t_lo >= (4, 54) and p_lo >= (2, 8):
            return [*t_deps[:1], *p_deps[:1]]
        return []

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        # the advice is a fused optimizer: nothing to say to a serving-only project
        return super().recommendation_priority(ctx, outcome) if ctx.project.does_training else None


_OPTIMIZER_KEYS = ("optimizer", "optim", "optimizer_name", "optimizer_type")
_OPTIM_CLASS = lazy_compile(r"(?i)adam|adafactor|sgd|lion|muon|lamb|sophia|shampoo|soap|optim")


def _norm_name(v: str) -> str:
    return re.sub(r"[^a-z0-9]", "", v.lower())


def _own_optimizer(f: Facts) -> tuple[list[tuple[Any, Call]], int]:
    """(launch setting, constructor) pairs where most launches pick an optimizer the project writes itself (GaLore:
    ``--optimizer galore_adamw`` selects ``GaLoreAdamW`` of its own ``galore_torch`` package, ``galore_adamw8bit_per_layer``
    its ``GaLoreAdamW8bit``), empty otherwise; and how many launch/config settings name an optimizer. Torch's fused AdamW
    is another algorithm there, not a faster kernel."""
    launched = [s for s in f.settings(*_OPTIMIZER_KEYS) if isinstance(s.value, str) and s.source in ("launcher", "config")]
    if not launched:
        return [], 0
    local = {p.split("/", 1)[0] for p in f.files if "/" in p} | {p[:-3] for p in f.files if p.endswith(".py") and "/" not in p}
    ctors: dict[str, Call] = {}
    for c in f.calls_where(lambda short: short[:1].isupper() and _OPTIM_CLASS.search(short) is not None):
        if c.name.split(".", 1)[0] in local and not _TEST_PATH.search(c.path):
            ctors.setdefault(_norm_name(c.short), c)
    hits = []
    for s in launched:
        v = _norm_name(s.value)
        best = max((k for k in ctors if v.startswith(k)), key=len, default=None)
        if best is not None:
            hits.append((s, ctors[best]))
    return (hits if len(hits) * 2 > len(launched) else []), len(launched)


#: a function that is an optimizer's update step (nanochat ``adamw_step_fused``, ``muon_step_fused``)
_OPT_STEP_FUNC = lazy_compile(r"(?i)(adam|muon|lion|sgd|lamb|sophia|shampoo|soap)\w*(step|update)|(step|update)\w*(adam|muon|lion|sgd)")


#: flags only Megatron-LM's argument parser takes (undotted: verl's ``...megatron.tensor_model_parallel_size=2`` override
#: configures megatron-core through its own config, with its own defaults)
_MEGATRON_ONLY_FLAGS = frozenset({"tensor_model_parallel_size", "pipeline_model_parallel_size", "use_distributed_optimizer",
                                  "recompute_granularity", "expert_model_parallel_size"})


def _compiled_optimizer_step(f: Facts) -> list[Any]:
    """An optimizer's update math compiled into fused kernels: ``@torch.compile`` on the project's own optimizer step
    function (nanochat ``@torch.compile(dynamic=False, fullgraph=True) def adamw_step_fused(...)`` in ``nanochat/optim.py``,
    called from its ``DistAdamW.step``). Inductor fuses the element-wise update of each parameter into a kernel or two,
    which is what ``fused=True`` gives a stock optimizer."""
    return [d for d in f.decorators("torch.compile", "torch._dynamo.optimize") if _OPT_STEP_FUNC.search(d.target or "")
            and not _TEST_PATH.search(d.path)]


# --- D7 Tensor Core alignment ---------------------------------------------------

_DIM_KEYS = ("hidden_size", "n_embd", "d_model", "n_embed", "embed_dim", "emb_dim", "vocab_size", "padded_vocab_size", "intermediate_size",
             "ffn_hidden_size", "n_inner", "head_dim", "kv_channels", "dim_feedforward", "ffn_dim", "moe_intermediate_size")
_PAD_KEYS = ("make_vocab_size_divisible_by", "pad_vocab_size_to", "pad_to_multiple_of", "vocab_size_multiple", "pad_vocab_size_to_multiple_of",
             "padded_vocab_multiple", "vocab_multiple_of", "pad_vocab_size_multiple", "padding_multiple")
#: settings that pad the vocabulary (the embedding/LM-head GEMM) up to a multiple: GPT-NeoX/Mamba ``pad_vocab_size_multiple``,
#: litgpt ``padding_multiple`` (``padded_vocab_size = find_multiple(vocab_size, padding_multiple)``)
_VOCAB_PAD_KEYS = {"make_vocab_size_divisible_by", "pad_vocab_size_to", "pad_vocab_size_to_multiple_of", "vocab_size_multiple",
                   "padded_vocab_multiple", "vocab_multiple_of", "pad_vocab_size_multiple", "padding_multiple"}
_TEST_PATH = lazy_compile(r"(^|/)(tests?|testing|unittests?)(/|$)|(^|/)test_[^/]*$|_test\.py$")


def _checkpoint_loaded_packages(f: Facts) -> set[str]:
    """Dotted modules whose model classes the project loads with ``from_pretrained`` (``type=DeepseekV2ForCausalLM.from_pretrained``
    in an xtuner config resolves to ``xtuner.model.transformers_models.deepseek_v2.DeepseekV2ForCausalLM.from_pretrained``):
    the module, and its parent package (a class imported from ``...deepseek_v2.modeling_deepseek``)."""
    out: set[str] = set()
    for x in [*f.refs("from_pretrained"), *f.calls("from_pretrained")]:
        parts = x.name.split(".")[:-2]  # drop the class and ``from_pretrained``
        if len(parts) >= 2 and parts[0] not in {"transformers", "peft", "?"}:
            out.add(".".join(parts))
            if len(parts) >= 3:  # never a bare top-level package: that would cover every config class of the project
                out.add(".".join(parts[:-1]))
    return out


def _checkpoint_config_defaults(f: Facts, dims: list) -> set[tuple[str, int]]:
    """``__init__`` defaults of a model-config class that only describes checkpoints: a copied hub configuration
    (``configuration_deepseek.py``: ``DeepseekV2Config(moe_intermediate_size=1407)``) whose model the project loads with
    ``from_pretrained`` and whose config class it never instantiates. The checkpoint's ``config.json`` gives the trained
    dimensions, not these defaults (llm-foundry's ``MPTConfig(**kwargs)`` is instantiated: its defaults stay). Also a
    default that every instantiation of the class overrides by its keyword."""
    cands = [s for s in dims if s.source == "field-default" and "." in s.key]
    if not cands:
        return set()
    loaded = _checkpoint_loaded_packages(f)
    # the remote code of a hub model the project loads with ``trust_remote_code=True`` (Nanbeige's ``models/
    # configuration_nanbeige.py`` beside ``modeling_nanbeige.py``; ``finetune/main.py`` loads ``Nanbeige-16b-base`` through
    # ``AutoModelForCausalLM``): the class defaults are a 7B LLaMA shape, the checkpoint's config.json sizes the model
    remote = any(_remote_model_load(c) for c in f.calls("from_pretrained"))
    out: set[tuple[str, int]] = set()
    for s in cands:
        owner = s.key.split(".", 1)[0]
        folder = s.path.rsplit("/", 1)[0].replace("/", ".") if "/" in s.path else ""
        if not folder:
            continue
        made = f.calls(owner)
        if made and all(s.name in c.kwargs or _sub_config_of(f, c) for c in made):
            # every instantiation passes the dimension itself (axolotl's ``MambaLMHeadModel.__init__``:
            # ``MambaConfig(vocab_size=vocab_size, ...)``): the default is never the model's
            out.add((s.path, s.line))
            continue
        if made:
            continue
        if any(folder == m or folder.endswith("." + m) for m in loaded) or (remote and _REMOTE_CONFIG_FILE.search(s.path)):
            out.add((s.path, s.line))
    return out


#: a hub model's configuration module, shipped for ``trust_remote_code`` (``configuration_nanbeige.py``)
_REMOTE_CONFIG_FILE = lazy_compile(r"(^|/)configuration_\w+\.py$")


#: a hub model's modeling module, shipped for ``trust_remote_code`` (``modeling_nanbeige.py``)
_REMOTE_MODELING_FILE = lazy_compile(r"(^|/)modeling_\w+\.py$")


#: a folder of modeling files a project ships to be copied over the installed ones (LongWriter ``train/patch/``)
_PATCH_DIR = lazy_compile(r"(^|/)patch(es)?/[^/]+$")


def _hf_model_loader(ctx: Context) -> Call | None:
    """A training-path ``Auto*``/``*For*`` model ``from_pretrained`` (the first), or None."""
    train = ctx.project.training_files
    return next((c for c in ctx.facts.calls("from_pretrained") if c.path in train and (
        _HF_MODEL_CLASS.search(c.name.rsplit(".", 1)[0]) or c.name.rsplit(".", 1)[0].rsplit(".", 1)[-1].startswith("AutoModel"))), None)


def _remote_code_loader(ctx: Context) -> Call | None:
    """A training-path ``from_pretrained(..., trust_remote_code=True)`` (the first), or None."""
    train = ctx.project.training_files
    return next((c for c in ctx.facts.calls("from_pretrained") if c.path in train and _remote_model_load(c)), None)


def _unpatched_remote_family(ctx: Context) -> str | None:
    """The family of a remote-code model when it is known and Liger has no patch for it: the ``model_type`` of the
    configuration class the repository ships (``configuration_nanbeige.py``: ``model_type = "nanbeige"``), or the families
    the project's model names show. None when the family is unknown (a model named by the run's arguments) or patched."""
    fams = set(ctx.project.model_families)
    shipped = {str(s.value).lower() for s in ctx.facts.settings("model_type")
               if isinstance(s.value, str) and _REMOTE_CONFIG_FILE.search(s.path)}
    known = fams | shipped
    if not known or known & _LIGER_SUPPORTED or any(k.split("_")[0] in _LIGER_SUPPORTED for k in known):
        return None
    return sorted(known)[0]


def _remote_model_load(c: Call) -> bool:
    """``from_pretrained(..., trust_remote_code=True)`` of a model (not of its tokenizer, processor or config)."""
    return truthy(c.kwargs.get("trust_remote_code")) is True and model_load(c)


def _sub_config_of(f: Facts, c: Any) -> bool:
    """``c`` builds a config from the mapping another config's ``__init__`` was given (DeepSeek-VL2's
    ``DeepseekVLV2Config.__init__``: ``self.language_config = DeepseekV2Config(**language_config)``, the ``language_config``
    section of the checkpoint's ``config.json``): the checkpoint's values, not the class defaults, size the model."""
    if not c.star_kwargs or c.func != "__init__":
        return False
    owner = class_at(f, c.path, c.line)
    return bool(owner and owner.endswith("Config"))


#: checkpoint converters (Megatron ``examples/multimodal/model_converter/siglip_converter.py``, GPT-NeoX ``tools/ckpts/``)
_CONVERTER_PATH = lazy_compile(r"(^|/)(\w*convert\w*|ckpts?|checkpoint_conversion)(/|\.py$)|(^|/)\w*(convert|converter|export)\w*\.py$", re.I)


#: a call that is one value of a dict literal keyed by a name (``"siglip": EncoderSpec(``): a registry's preset
_PRESET_ENTRY = lazy_compile(r"""^\s*["'][^"']+["']\s*:\s*[A-Za-z_][\w.]*\(""")


#: the owner of a setting that configures data, not the model (``MockPackedDatasetConfig``, ``build_packed_dataset(``)
_DATASET_OWNER = lazy_compile(r"(?i)dataset|datamodule")
#: the sub-config of a multimodal model's encoder part (a Q-Former, a vision or audio tower): no vocabulary projection there
_ENCODER_SECTION = lazy_compile(r"(^|\.)(qformer|vision|audio|speech)_config\.")


#: the model's arguments gathered in a dict before the config is built from them (nanoGPT and baby-llama2-chinese
#: ``model_args = dict(dim=dim, n_layers=n_layers, vocab_size=64793, ...)``, then ``ModelArgs(**model_args)``)
_MODEL_ARGS_DICT = lazy_compile(r"^\s*(model_args|model_kwargs|model_config|model_cfg|config_args)\s*=\s*dict\(")


def _dims(f: Facts) -> list:
    """Model-dimension settings (configs, model-config calls, dataclass/argparse defaults), tests excluded, and defaults of
    a config class that only describes checkpoints loaded with ``from_pretrained`` (:func:`_checkpoint_config_defaults`)."""
    out = []
    demo_fields = _demo_config_fields(f)
    for s in f.settings(*_DIM_KEYS):
        v = as_number(s.value)
        if v is None or v < 64 or v != int(v) or _TEST_PATH.search(s.path):
            continue
        if (s.path, s.line) in demo_fields:
            continue  # a config class only a library module's self-test builds (see _demo_config_fields)
        if _CONVERTER_PATH.search(s.path):
            continue  # a checkpoint converter's dimensions describe the model it converts, not one it trains
        head = s.key.split("(", 1)[0]
        if _DATASET_OWNER.search(head if "(" in s.key else head.rpartition(".")[0]):
            continue  # a synthetic dataset's token range (nemo-automodel ``MockPackedDatasetConfig.vocab_size: int = 100``)
        if s.name == "vocab_size" and _ENCODER_SECTION.search(s.key):
            continue  # a BLIP-2 Q-Former's BERT vocabulary (``qformer_config.vocab_size: 30522``): its queries are learned, no LM head
        if s.source == "call" and not CONFIG_CALLEE.search(s.key.split("(", 1)[0]) and not _MODEL_ARGS_DICT.match(s.text or ""):
            continue  # a keyword of some other call (a layer, a tensor op), not the model's configuration
        if s.source == "call" and (s.path, s.line) in _library_demo_lines(f):
            continue  # a library module's self-test builds that config (``if __name__ == "__main__": test()``), not the run
        if s.source == "call" and _PRESET_ENTRY.match(getattr(s, "text", "") or ""):
            # one named preset of a registry (Megatron-LM ``encoder_registry.py``: ``"siglip": EncoderSpec(..., kv_channels=72)``,
            # SigLIP's own head size): a pretrained architecture the project offers, not dimensions it chose for a run
            continue
        out.append(s)
    skip = _checkpoint_config_defaults(f, out)
    return [s for s in out if (s.path, s.line) not in skip] if skip else out


def _demo_config_fields(f: Facts) -> set[tuple[str, int]]:
    """Lines of the fields of a config class that only a library module's self-test builds: NExT-GPT's projector
    ``builder.py`` declares ``class Config: hidden_size = 768`` inside ``if __name__ == "__main__":`` and builds it there
    once to print a projector; its sizes are the test's, not the trained model's."""
    demo = _library_demo_lines(f)
    if not demo:
        return set()
    out: set[tuple[str, int]] = set()
    owners: dict[str, bool] = {}
    for s in f.settings(*_DIM_KEYS):
        if s.source != "field-default" or "." not in s.key:
            continue
        owner = s.key.split(".", 1)[0]
        if owner not in owners:
            built = [c for c in f.calls(owner) if c.short == owner]
            owners[owner] = bool(built) and all((c.path, c.line) in demo for c in built)
        if owners[owner]:
            out.add((s.path, s.line))
    return out


def _paddings(f: Facts, mult: int) -> list:
    """Padding settings of the training run: a ``pad_to_multiple_of`` inside a function named for merging, converting or
    exporting (``merge_adapter``'s ``resize_token_embeddings(..., pad_to_multiple_of=8)`` after training) is not one."""
    out = []
    for s in f.effective(*_PAD_KEYS):
        v = as_number(s.value)
        if v and v >= mult and v % mult == 0 and not _TEST_PATH.search(s.path) and not _in_non_training_func(f, s):
            out.append(s)
    return out


#: a constant the batch's token count is padded up to (OpenChat ``self.PAD_MULTIPLE = 64`` "for faster GEMM", then
#: ``_find_multiple(total_seqlen, self.PAD_MULTIPLE)``): the GEMMs' token dimension on Tensor Core tiles
_TOKEN_PAD_NAMES = ("PAD_MULTIPLE", "pad_multiple", "PAD_MULTIPLE_OF", "pad_multiple_of", "PAD_TO_MULTIPLE", "pad_to_multiple",
                    "SEQ_PAD_MULTIPLE", "seq_pad_multiple", "PADDING_MULTIPLE")


def _token_pads(f: Facts, mult: int) -> list[Any]:
    """Assignments of a padding multiple (``PAD_MULTIPLE = 64``, ``self.PAD_MULTIPLE = 64``) to a multiple of ``mult`` that a
    call of the same file reads (the padding really is applied), outside tests."""
    out: list[Any] = []
    for a in [*f.attr_assigns(*_TOKEN_PAD_NAMES), *f.assigns(*_TOKEN_PAD_NAMES)]:
        name = getattr(a, "target", None) or a.name
        if name.rsplit(".", 1)[-1] not in _TOKEN_PAD_NAMES or _TEST_PATH.search(a.path):
            continue
        v = as_number(a.value)
        if not v or v < mult or v % mult or isinstance(v, bool):
            continue
        reads = re.compile(r"(?<![\w.])" + re.escape(name) + r"(?!\w)")
        if any(c.line != a.line and reads.search(c.text) for c in f.files[a.path].calls):
            out.append(a)
    return out


def _pad_reused(f: Facts) -> bool:
    """The code reuses an existing token as padding (``tokenizer.pad_token = tokenizer.unk_token``)."""
    return any(re.search(r"(unk|eos|bos)_token", getattr(a.value, "text", "") or "") for a in f.attr_assigns("pad_token", "pad_token_id"))


def _resize_without_pad(f: Facts) -> list[Call]:
    """``resize_token_embeddings(len(tokenizer))`` after adding tokens, without ``pad_to_multiple_of``.

    Not reported when the code also reuses an existing token as padding (``tokenizer.pad_token = tokenizer.unk_token``):
    adding a token is then one branch among others (LLaVA's v0-only path), not the run's vocabulary.
    """
    if not f.calls("add_special_tokens", "add_tokens") or _pad_reused(f):
        return []
    # (not a model class's own ``resize_token_embeddings`` handing its arguments on, pad_to_multiple_of among them, to the
    # language model inside: Mantis ``modeling_llava.py``'s ``self.language_model.resize_token_embeddings(new_num_tokens,
    # pad_to_multiple_of)``; the calls that size the vocabulary are the training scripts')
    # (nor a resize in a method nothing calls: OmniLMM's ``initialize_vision_tokenizer`` and LLaSM's
    # ``initialize_audio_tokenizer``, kept from the training code of a release that only runs its checkpoints)
    return [c for c in f.calls("resize_token_embeddings") if "pad_to_multiple_of" not in c.kwargs and not c.star_kwargs
            and len(c.args) < 2 and c.func != "resize_token_embeddings" and (resize_multiple(f, c)[0] or 1) % 8
            and not uncalled_function(f, c)]


def _text(v: Any) -> str:
    return v.text if isinstance(v, Expr) else repr(v)


def _const_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return int(node.value) if node.value == int(node.value) and node.value > 1 else None
    return None


def _rounding_operand(expr: str) -> ast.expr | None:
    """The M of ``expr`` when it rounds a size up to a multiple of M (a constant or a name): ``8 * math.ceil(n / 8.0)``
    (instructlab-training), ``int(multiple_of * math.ceil(len(tokenizer) / multiple_of))`` (fms-hf-tuning),
    ``math.ceil(n / M) * M``, ``(n + M - 1) // M * M``, ``-(-n // M) * M``, ``find_multiple(n, M)`` / ``round_up(n, M)``."""
    node = parse_expr(expr)
    if node is None:
        return None
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            fn = sub.func.attr if isinstance(sub.func, ast.Attribute) else sub.func.id if isinstance(sub.func, ast.Name) else ""
            if re.fullmatch(r"(find|round_up_to|round_up|pad_to|next)_?multiple(_of)?|round_up|ceil_to|align(_up|_to)?", fn) \
                    and len(sub.args) == 2:
                return sub.args[1]
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mult):
            for m_node, other in ((sub.left, sub.right), (sub.right, sub.left)):
                if not (_const_int(m_node) or isinstance(m_node, (ast.Name, ast.Attribute))):
                    continue
                key = ast.dump(m_node)
                # the other factor divides by the same M and rounds up: ceil(n / M), (n + M - 1) // M, -(-n // M)
                rounds = any(isinstance(x, ast.Call) and getattr(x.func, "attr", getattr(x.func, "id", "")) == "ceil" for x in ast.walk(other))
                rounds = rounds or any(isinstance(x, ast.BinOp) and isinstance(x.op, ast.FloorDiv) for x in ast.walk(other))
                divides = any(isinstance(x, ast.BinOp) and isinstance(x.op, (ast.Div, ast.FloorDiv))
                              and (ast.dump(x.right) == key or (_const_int(x.right) is not None and _const_int(x.right) == _const_int(m_node)))
                              for x in ast.walk(other))
                if rounds and divides:
                    return m_node
    return None


def rounded_multiple(expr: str) -> int | None:
    """M when ``expr`` rounds a size up to a constant multiple M (see :func:`_rounding_operand`)."""
    m = _rounding_operand(expr)
    return _const_int(m) if m is not None else None


def _size_expr(f: Facts, c: Call) -> tuple[str, int] | None:
    """The expression a resize's size comes from: the argument, or the assignment of a local name it passes
    (``embedding_size = int(multiple_of * math.ceil(...))`` above ``resize_token_embeddings(embedding_size)``)."""
    if not c.args:
        return None
    arg = _text(c.args[0])
    if not re.fullmatch(r"[A-Za-z_]\w*", arg):
        return arg, c.line
    ff = f.files.get(c.path)
    pat = re.compile(rf"^\s*{arg}\s*(:[^=]+)?=\s*(.+)$")
    found = [(m.group(2).strip(), x.line) for x in (ff.calls if ff else ()) if x.func == c.func and x.line < c.line
             and (m := pat.match(x.text))]
    return max(found, key=lambda t: t[1]) if found else (arg, c.line)


def resize_multiple(f: Facts, c: Call) -> tuple[int | None, str]:
    """(the multiple a resize rounds its size up to, when known; a note on how it is rounded, for the detail)."""
    got = _size_expr(f, c)
    if got is None:
        return None, ""
    expr, line = got
    m = _rounding_operand(expr)
    if m is None:
        return None, ""
    n = _const_int(m)
    if n is not None:
        return n, ""
    name = m.attr if isinstance(m, ast.Attribute) else m.id if isinstance(m, ast.Name) else ""
    vals = [(v, x) for x in f.effective(name, near=c.path) if not _TEST_PATH.search(x.path) and (v := as_number(x.value)) is not None]
    where = f"`{expr}` ({c.path}:{line}) rounds up to a multiple of {name}"
    if vals and len({v for v, _ in vals}) == 1:
        v, x = vals[0]
        return int(v), f"{where}, which is {int(v)} ({x.key} at {x.path}:{x.line})"
    return None, where


def _padded_resizes(f: Facts, mult: int) -> list[Call]:
    """``resize_token_embeddings`` calls that round the new size up to a multiple of ``mult`` in their own argument."""
    out = []
    for c in f.calls("resize_token_embeddings"):
        m = resize_multiple(f, c)[0]
        if m and m % mult == 0 and not _TEST_PATH.search(c.path) and not _NOT_TRAINING_FUNC.match((c.func or "").rsplit(".", 1)[-1]):
            out.append(c)
    return out


# OpenChat's packed batches (round 14): the concatenated samples are padded with one dummy sequence up to a multiple of
# ``PAD_MULTIPLE`` tokens "for faster GEMM"; the model comes from a checkpoint
_PACKED_BATCH_PAD = {
    "pkg/dataset.py": (
        "import numpy as np\nfrom torch.utils.data import IterableDataset\n\n\n"
        "def _find_multiple(a, b):\n    return (-(a // -b)) * b\n\n\n"
        "class PackedDataset(IterableDataset):\n    def __init__(self, data):\n        self.data = data\n"
        "        self.PAD_ID = 0\n        self.PAD_MULTIPLE = 64\n\n"
        "    def _load_batch(self, indices):\n        ids = np.concatenate(self.data['input_ids'][indices])\n"
        "        # Pad an unused item to reach multiple of PAD_MULTIPLE, for faster GEMM\n"
        "        pad_len = _find_multiple(ids.size, self.PAD_MULTIPLE) - ids.size\n"
        "        return np.concatenate((ids, np.full(pad_len, self.PAD_ID, dtype=ids.dtype)))\n"),
    "pkg/train.py": (
        "from transformers import AutoModelForCausalLM\n\n"
        "model = AutoModelForCausalLM.from_pretrained(args.model_path)\nfor batch in loader:\n    model(**batch).loss.backward()\n"),
}
def _self_test_patch(train_extra: str) -> dict[str, str]:
    """A monkey-patch module with its own self-test (FastChat ``llama2_flash_attn_monkey_patch.py``: ``def test():`` builds a
    one-layer ``LlamaConfig`` to compare kernels, run by ``if __name__ == "__main__": test()``), imported by the training
    entry point; ``train_extra``: a model config the training script builds itself."""
    return {
        "pkg/train/flash_attn_patch.py": (
            "import torch\nfrom transformers.models.llama.configuration_llama import LlamaConfig\n"
            "from transformers.models.llama.modeling_llama import LlamaAttention, LlamaModel\n\n\n"
            "def forward(self, hidden_states, attention_mask=None, position_ids=None):\n    return self.o_proj(hidden_states), None, None\n\n\n"
            "def replace_llama_attn_with_flash_attn():\n    LlamaAttention.forward = forward\n\n\n"
            "def test():\n    config = LlamaConfig(\n        hidden_size=1024,\n        intermediate_size=128,\n"
            "        num_hidden_layers=1,\n        num_attention_heads=8,\n        max_position_embeddings=16,\n    )\n"
            "    model = LlamaModel(config)\n    attn = LlamaAttention(config).to('cuda').half()\n    print(attn)\n\n\n"
            "if __name__ == \"__main__\":\n    test()\n"),
        "pkg/train/train_mem.py": (
            "from pkg.train.flash_attn_patch import replace_llama_attn_with_flash_attn\n\nreplace_llama_attn_with_flash_attn()\n\n"
            "import transformers\nfrom transformers import LlamaConfig, Trainer\n" + train_extra +
            "model = transformers.AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
            "trainer = Trainer(model=model, args=transformers.TrainingArguments(output_dir='out'))\ntrainer.train()\n"),
    }


@register
class D7TensorCoreAlignment(Check):
    id = "D7"
    title = "Tensor Core dimension alignment"
    title_zh = "Tensor Core 维度对齐"
    bottlenecks = (Bottleneck.COMPUTE,)
    priority = Priority.MEDIUM
    benefit = "GEMMs on full Tensor Core tiles: nanoGPT measured ~25 % faster training from padding GPT-2's vocabulary 50257 -> 50304"
    what = (
        "Whether the GEMM dimensions the repo sets (`hidden_size`/`n_embd`, `intermediate_size`, `head_dim`, `vocab_size`, "
        "`padded_vocab_size`) are multiples of 8 (16 with FP8), or padding is configured (`make_vocab_size_divisible_by`, "
        "`pad_to_multiple_of`, `resize_token_embeddings(..., pad_to_multiple_of=64)`). A misaligned value is unused, with the value "
        "as evidence; adding tokens and resizing to `len(tokenizer)` unpadded is unused. When no dimension is visible (the "
        "architecture comes from a checkpoint) it is not judged (out of the score): nothing in the repo to align or to fault."
    )
    why = (
        "cuBLAS runs FP16/BF16 GEMMs on Tensor Cores at full efficiency only when M, N, K are multiples of 8 (16 for INT8/FP8), and "
        "best at multiples of 64 (NVIDIA Deep Learning Performance Guide, Matrix Multiplication). Karpathy's nanoGPT pads the GPT-2 "
        "vocabulary from 50257 to 50304 (a multiple of 64) for a ~25 % faster step; Megatron pads the vocabulary to a multiple of "
        "128 per tensor-parallel rank by default."
    )
    fix = "Pad the vocabulary (and any odd hidden/FFN size) to a multiple of 64: `model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=64)`, `vocab_size: 50304`, or Megatron `--make-vocab-size-divisible-by 128`."
    fix_zh = "将词表（以及不对齐的 hidden/FFN 维度）补齐到 64 的倍数：`model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=64)`、`vocab_size: 50304`，或 Megatron `--make-vocab-size-divisible-by 128`。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html",
                  "https://github.com/karpathy/nanoGPT/blob/master/model.py")
    snippets = {
        "python": "model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=64)\n",
        "hf-yaml": "vocab_size: 50304  # 50257 padded to a multiple of 64\n",
        "shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --make-vocab-size-divisible-by 128\n",
    }
    examples = (
        Example({"examples/multimodal/model_converter/siglip_converter.py": (
            "import torch\n\n\ndef convert(args):\n    hidden_dim = 1152\n    num_heads = 16\n    head_dim = 72\n"
            "    state_dict = torch.load(args.input)\n"),
                 "train.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --hidden-size 4096 --num-attention-heads 32 --make-vocab-size-divisible-by 128\n"},
                U, "a checkpoint converter's head_dim is not the trained model's"),
        Example({"pkg/models/vision/encoder_registry.py": (  # Megatron-LM: named presets of pretrained vision encoders
            "from dataclasses import dataclass\n\n\n@dataclass\nclass EncoderSpec:\n    name: str\n    num_layers: int\n"
            "    hidden_size: int\n    num_attention_heads: int\n    kv_channels: int | None = None\n\n\n"
            "ENCODERS = {\n    \"siglip\": EncoderSpec(\n        name=\"siglip\",\n        num_layers=27,\n        hidden_size=1152,\n"
            "        num_attention_heads=16,\n        kv_channels=72,\n    ),\n}\n"),
                 "train.sh": ("torchrun --nproc_per_node 8 pretrain_vlm.py --hidden-size 4096 --num-attention-heads 32 "
                              "--make-vocab-size-divisible-by 128 --fp8-format hybrid --transformer-impl transformer_engine\n")},
                U, "a registry's named preset (head size 72) is a pretrained architecture, not the run's FP8 choice"),
        Example({"pkg/models/vision/encoder_registry.py": (
            "from dataclasses import dataclass\n\n\n@dataclass\nclass EncoderSpec:\n    name: str\n    num_layers: int\n"
            "    hidden_size: int\n    num_attention_heads: int\n    kv_channels: int | None = None\n\n\n"
            "ENCODERS = {\n    \"siglip\": EncoderSpec(\n        name=\"siglip\",\n        num_layers=27,\n        hidden_size=1152,\n"
            "        num_attention_heads=16,\n        kv_channels=72,\n    ),\n}\n"),
                 "train.sh": ("torchrun --nproc_per_node 8 pretrain_vlm.py --hidden-size 4100 --num-attention-heads 41 "
                              "--make-vocab-size-divisible-by 128 --fp8-format hybrid --transformer-impl transformer_engine\n")},
                N, "the same registry beside a run whose own hidden size is not a multiple of 8"),
        Example({"model.py": (
            "from dataclasses import dataclass\n@dataclass\nclass GPTConfig:\n    block_size: int = 1024\n"
            "    vocab_size: int = 50304\n    n_layer: int = 12\n    n_head: int = 12\n    n_embd: int = 768\n")}, U, "nanogpt padded"),
        Example({"model.py": (  # nanoGPT: trains with 50304, keeps 50257 where the same file loads GPT-2's checkpoints
            "from dataclasses import dataclass\n\n\n@dataclass\nclass GPTConfig:\n    block_size: int = 1024\n"
            "    vocab_size: int = 50304\n    n_layer: int = 12\n    n_head: int = 12\n    n_embd: int = 768\n\n\n"
            "class GPT:\n    @classmethod\n    def from_pretrained(cls, model_type):\n"
            "        config_args = {'gpt2': dict(n_layer=12, n_head=12, n_embd=768)}[model_type]\n"
            "        config_args['vocab_size'] = 50257  # always 50257 for GPT model checkpoints\n"
            "        config = GPTConfig(**config_args)\n        return cls(config)\n")}, U,
                "nanogpt: the checkpoint loader's 50257 beside the padded 50304 of the same file"),
        Example({  # LLMs-from-scratch: the main chapter trains with 50257; only the speed chapter's own script pads
            "ch05/01_main-chapter-code/gpt_train.py": (
                "import torch\nfrom previous_chapters import GPTModel\n\n\ndef main(gpt_config, settings):\n"
                "    model = GPTModel(gpt_config)\n"
                "    optimizer = torch.optim.AdamW(model.parameters(), lr=settings[\"learning_rate\"], weight_decay=0.1)\n"
                "    train_model_simple(model, train_loader, val_loader, optimizer, num_epochs=settings[\"num_epochs\"])\n\n\n"
                "if __name__ == \"__main__\":\n    GPT_CONFIG_124M = {\n        \"vocab_size\": 50257,    # Vocabulary size\n"
                "        \"context_length\": 256,  # Shortened context length (orig: 1024)\n        \"emb_dim\": 768,\n"
                "        \"n_heads\": 12,\n        \"n_layers\": 12,\n    }\n"
                "    main(GPT_CONFIG_124M, {\"learning_rate\": 5e-4, \"num_epochs\": 10})\n"),
            "ch05/10_llm-training-speed/01_opt_single_gpu.py": (
                "import torch\n\n\nif __name__ == \"__main__\":\n    GPT_CONFIG_124M = {\n"
                "        \"vocab_size\": 50304,     # Vocabulary size\n        \"context_length\": 1024,\n        \"emb_dim\": 768,\n"
                "        \"n_heads\": 12,\n        \"n_layers\": 12,\n    }\n"
                "    model = torch.compile(GPTModel(GPT_CONFIG_124M))\n"),
        }, N, "a padded vocabulary in another script pads nothing where the main chapter trains with 50257"),
        Example({  # nemo-automodel: a synthetic dataset's token range beside the model's own aligned config
            "mylib/datasets/llm/mock_packed.py": (
                "from dataclasses import dataclass\n\n\n@dataclass\nclass MockPackedDatasetConfig:\n"
                "    num_blocks: int = 10\n    block_size: int = 128\n    vocab_size: int = 100\n"
                "    \"\"\"Vocabulary size for the synthetic tokens.\"\"\"\n"),
            "configs/llama_1b.json": '{\n  "hidden_size": 2048,\n  "intermediate_size": 8192,\n  "vocab_size": 32000\n}\n',
        }, U, "a mock dataset's vocab_size is the synthetic tokens' range, not a GEMM dimension"),
        Example({"configs/model/llama_1b.json": '{\n  "hidden_size": 2048,\n  "intermediate_size": 8192,\n  "vocab_size": 32000,\n  "num_hidden_layers": 16\n}\n'}, U, "aligned config"),
        Example({"train.py": (
            "tokenizer.add_special_tokens({'pad_token': '[PAD]'})\n"
            "model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=64)\n")}, U, "resize with padding"),
        Example({"configs/gpt2_small.yaml": "n_layer: 12\nn_embd: 768\nvocab_size: 50257\n"}, N, "gpt2 vocab"),
        Example({"train.py": (  # the only padding is the post-training adapter merge's fallback: the run resizes unpadded
            "from peft import PeftModel\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\n"
            "def merge_adapter(base_model_path, adapter_path):\n"
            "    model = AutoModelForCausalLM.from_pretrained(base_model_path)\n"
            "    tokenizer = AutoTokenizer.from_pretrained(adapter_path)\n"
            "    try:\n        model.resize_token_embeddings(len(tokenizer))\n"
            "    except RuntimeError:\n        model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=8)\n"
            "    return PeftModel.from_pretrained(model, adapter_path).merge_and_unload()\n\n"
            "def get_model(model_name, tokenizer):\n"
            "    tokenizer.add_special_tokens({'pad_token': '<pad>'})\n"
            "    model = AutoModelForCausalLM.from_pretrained(model_name)\n"
            "    model.resize_token_embeddings(len(tokenizer))\n    return model\n")}, N, "padding only in the adapter merge"),
        Example({"litgpt/config.py": (  # litgpt: the vocabulary is padded by find_multiple(vocab_size, padding_multiple)
            "from dataclasses import dataclass\nfrom typing import Optional\n"
            "@dataclass\nclass Config:\n    block_size: int = 4096\n    vocab_size: int = 50254\n    padding_multiple: int = 512\n"
            "    padded_vocab_size: Optional[int] = None\n    n_embd: int = 4096\n"
            "    def __post_init__(self):\n        if self.padded_vocab_size is None:\n"
            "            self.padded_vocab_size = find_multiple(self.vocab_size, self.padding_multiple)\n")}, U, "litgpt padding_multiple"),
        Example({"configs/official/OLMo-1B.yaml": (  # OLMo: embedding_size is the padded row count of the embedding
            "model:\n  d_model: 2048\n  n_layers: 16\n  mlp_ratio: 8\n  vocab_size: 50280\n  embedding_size: 50304\n")}, U,
            "OLMo embedding_size"),
        Example({**{f"configs/official/OLMo-{n}.yaml": (
            f"model:\n  d_model: {d}\n  n_layers: 16\n  mlp_ratio: 8\n  vocab_size: 50280\n  embedding_size: 50304\n")
            for n, d in (("1B", 2048), ("7B", 4096), ("7B-0424", 4096))},
            "configs/custom_dataset_example.yaml": (  # OLMo: one recipe's own tokenizer, its rows padded in the same file
                "model:\n  d_model: 4096\n  n_layers: 32\n  vocab_size: 32100           # depends on the tokenizer\n"
                "  embedding_size: 32128\n")}, U, "a recipe's odd vocabulary with its own padded embedding_size beside it"),
        Example({"configs/mamba-130m.json": '{\n  "d_model": 768,\n  "n_layer": 24,\n  "vocab_size": 50277,\n  "pad_vocab_size_multiple": 8\n}\n'}, U,
                "mamba pad_vocab_size_multiple"),
        Example({"train.py": (
            "special = {'pad_token': '[PAD]'}\nnum_new = tokenizer.add_special_tokens(special)\n"
            "model.resize_token_embeddings(len(tokenizer))\n")}, N, "resize to len(tokenizer)"),
        Example({"src/instructlab/training/model.py": (  # the new vocabulary size is rounded up to a multiple of 8 by hand
            "import math\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\nclass Model:\n"
            "    def reconcile_tokenizer(self):\n        if len(self.tokenizer) > self.model.config.vocab_size:\n"
            "            self.model.resize_token_embeddings(\n                int(8 * math.ceil(len(self.tokenizer) / 8.0))\n"
            "            )  # make the vocab size multiple of 8 for sharding the embedding layer\n")}, U, "resize rounded up by hand"),
        Example({"train.py": (
            "import math\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n"
            "tokenizer = AutoTokenizer.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
            "tokenizer.add_special_tokens({'pad_token': '<pad>'})\n"
            "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
            "model.resize_token_embeddings(2 * math.ceil(len(tokenizer) / 2))\n")}, N, "resize rounded to an even size only"),
        Example({  # fms-hf-tuning: the size is rounded up to a configurable multiple, 1 by default
            "tuning/config/configs.py": (
                "from dataclasses import dataclass, field\nfrom typing import Optional\n\n@dataclass\nclass ModelArguments:\n"
                "    model_name_or_path: Optional[str] = field(default='facebook/opt-125m')\n"
                "    embedding_size_multiple_of: Optional[int] = field(default=1)\n"),
            "tuning/data/tokenizer_utils.py": (
                "import math\n\ndef tokenizer_and_embedding_resize(special_tokens_dict, tokenizer, model, multiple_of=1):\n"
                "    num_new_tokens = tokenizer.add_special_tokens(special_tokens_dict)\n"
                "    embedding_size = int(multiple_of * math.ceil(len(tokenizer) / multiple_of))\n"
                "    model.resize_token_embeddings(embedding_size)\n    return num_new_tokens\n"),
            "tuning/sft_trainer.py": (
                "from tuning.data.tokenizer_utils import tokenizer_and_embedding_resize\n\ndef train(model_args, tokenizer, model):\n"
                "    tokenizer_and_embedding_resize({'pad_token': '<pad>'}, tokenizer, model,\n"
                "                                   multiple_of=model_args.embedding_size_multiple_of)\n"),
        }, N, "resize rounded to a configured multiple of 1"),
        Example({
            "tuning/config/configs.py": (
                "from dataclasses import dataclass, field\nfrom typing import Optional\n\n@dataclass\nclass ModelArguments:\n"
                "    model_name_or_path: Optional[str] = field(default='facebook/opt-125m')\n"
                "    embedding_size_multiple_of: Optional[int] = field(default=64)\n"),
            "tuning/data/tokenizer_utils.py": (
                "import math\n\ndef tokenizer_and_embedding_resize(special_tokens_dict, tokenizer, model, multiple_of=1):\n"
                "    num_new_tokens = tokenizer.add_special_tokens(special_tokens_dict)\n"
                "    embedding_size = int(multiple_of * math.ceil(len(tokenizer) / multiple_of))\n"
                "    model.resize_token_embeddings(embedding_size)\n    return num_new_tokens\n"),
            "tuning/sft_trainer.py": (
                "from tuning.data.tokenizer_utils import tokenizer_and_embedding_resize\n\ndef train(model_args, tokenizer, model):\n"
                "    tokenizer_and_embedding_resize({'pad_token': '<pad>'}, tokenizer, model,\n"
                "                                   multiple_of=model_args.embedding_size_multiple_of)\n"),
        }, U, "resize rounded to a configured multiple of 64"),
        Example({"train.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.1-8B')\n"},
                Status.NA, "dimensions from checkpoint: not judged"),
        Example({"recipes/finetuning.py": (  # llama-recipes: the one size the repository decides is the unpadded resize
            "from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer\n\n\ndef main(train_config, ds):\n"
            "    model = AutoModelForCausalLM.from_pretrained(train_config.model_name)\n"
            "    tokenizer = AutoTokenizer.from_pretrained(train_config.model_name)\n"
            "    if len(tokenizer) > model.get_input_embeddings().weight.shape[0]:\n"
            "        model.resize_token_embeddings(len(tokenizer))\n"
            "    Trainer(model=model, train_dataset=ds).train()\n")},
                N, "dimensions from checkpoint, the embedding resized to len(tokenizer) unpadded"),
        Example({"llmfoundry/models/mpt/configuration_mpt.py": (  # HF config idiom: defaults are __init__ parameters
            "from transformers import PretrainedConfig\n"
            "class MPTConfig(PretrainedConfig):\n    model_type = 'mpt'\n"
            "    def __init__(self, d_model: int = 2048, n_heads: int = 16, n_layers: int = 24, expansion_ratio: int = 4,\n"
            "                 max_seq_len: int = 2048, vocab_size: int = 50368, **kwargs):\n"
            "        self.d_model = d_model\n        self.vocab_size = vocab_size\n        super().__init__(**kwargs)\n")}, U,
            "config __init__ defaults"),
        Example({"modeling/configuration_tiny.py": (
            "from transformers import PretrainedConfig\n"
            "class TinyConfig(PretrainedConfig):\n"
            "    def __init__(self, hidden_size=1000, vocab_size=50257, num_hidden_layers=6, **kwargs):\n"
            "        super().__init__(**kwargs)\n")}, N, "config __init__ defaults not aligned"),
        Example({  # xtuner 0.2.0: a copied hub DeepseekV2Config whose model is only loaded from checkpoints
            "xtuner/model/transformers_models/deepseek_v2/__init__.py": (
                "from .configuration_deepseek import DeepseekV2Config\nfrom .modeling_deepseek import DeepseekV2ForCausalLM\n"),
            "xtuner/model/transformers_models/deepseek_v2/configuration_deepseek.py": (
                "from transformers.configuration_utils import PretrainedConfig\n\n"
                "class DeepseekV2Config(PretrainedConfig):\n    model_type = 'deepseek_v2'\n\n"
                "    def __init__(self, vocab_size=102400, hidden_size=4096, intermediate_size=11008,\n"
                "                 moe_intermediate_size=1407, num_hidden_layers=30, **kwargs):\n"
                "        self.vocab_size = vocab_size\n        self.moe_intermediate_size = moe_intermediate_size\n"
                "        super().__init__(**kwargs)\n"),
            "xtuner/model/sft.py": (
                "from transformers import AutoConfig\n\ndef smart_tokenizer_and_embedding_resize(tokenizer, model):\n"
                "    model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=64)\n"),
            "xtuner/configs/deepseek/deepseek_v2_lite_chat_full_alpaca_e3.py": (
                "from xtuner.model import SupervisedFinetune\n"
                "from xtuner.model.transformers_models.deepseek_v2 import DeepseekV2ForCausalLM\n"
                "model = dict(type=SupervisedFinetune, llm=dict(type=DeepseekV2ForCausalLM.from_pretrained,\n"
                "             pretrained_model_name_or_path='deepseek-ai/DeepSeek-V2-Lite-Chat', trust_remote_code=True))\n"),
        }, U, "config defaults of a checkpoint-loaded model, vocabulary padded on resize"),
        Example({  # the same config class instantiated to build the model from scratch: its defaults are the run's
            "mymodel/configuration_mymodel.py": (
                "from transformers import PretrainedConfig\n\nclass MyConfig(PretrainedConfig):\n"
                "    def __init__(self, hidden_size=4096, moe_intermediate_size=1407, vocab_size=32000, **kwargs):\n"
                "        self.hidden_size = hidden_size\n        super().__init__(**kwargs)\n"),
            "mymodel/modeling_mymodel.py": "from .configuration_mymodel import MyConfig\nclass MyForCausalLM:\n    config_class = MyConfig\n",
            "train.py": (
                "from mymodel.configuration_mymodel import MyConfig\nfrom mymodel.modeling_mymodel import MyForCausalLM\n"
                "model = MyForCausalLM(MyConfig())\nother = MyForCausalLM.from_pretrained('org/my-model')\n"),
        }, N, "config class instantiated from its defaults"),
        Example({  # megatron-core 0.19.2: the argparse default pads the vocabulary; a dict passes the argument on unchanged
            "megatron/training/arguments.py": (
                "def _add_network_size_args(parser):\n    group = parser.add_argument_group(title='network size')\n"
                "    group.add_argument('--make-vocab-size-divisible-by', type=int, default=128,\n"
                "                       help='Pad the vocab size to be divisible by this value.')\n    return parser\n"),
            "megatron/training/argument_utils.py": (
                "def gpt_model_kwargs(args):\n    kwargs = {}\n    kwargs[\"rotary_base\"] = args.rotary_base\n"
                "    kwargs[\"make_vocab_size_divisible_by\"] = args.make_vocab_size_divisible_by\n    return kwargs\n"),
            "megatron/core/models/audio/gpt_config.py": (
                "from dataclasses import dataclass\n\n\n@dataclass\nclass GPTConfig:\n    vocab_size: int = 50257\n"
                "    emb_dim: int = 768\n    n_heads: int = 12\n"),
        }, U, "kwargs[k] = args.<same name> passes the setting on; the argparse default pads"),
        Example({  # axolotl: the Mamba config's default vocabulary is never used, its model class passes its own
            "src/axolotl/models/mamba/configuration_mamba.py": (
                "from transformers import PretrainedConfig\n\n\nclass MambaConfig(PretrainedConfig):\n    model_type = \"mamba\"\n\n"
                "    def __init__(self, vocab_size=50280, d_model=2560, n_layer=64, pad_vocab_size_multiple=8, **kwargs):\n"
                "        self.vocab_size = vocab_size\n        self.d_model = d_model\n        super().__init__(**kwargs)\n"),
            "src/axolotl/models/mamba/modeling_mamba.py": (
                "from torch import nn\nfrom axolotl.models.mamba.configuration_mamba import MambaConfig\n\n\n"
                "class MambaLMHeadModel(nn.Module):\n    def __init__(self, d_model: int, n_layer: int, vocab_size: int):\n"
                "        super().__init__()\n        self.config = MambaConfig(vocab_size=vocab_size, d_model=d_model, n_layer=n_layer)\n"),
            "examples/llama-3/3b-fp8-fsdp2.yaml": "base_model: meta-llama/Llama-3.2-3B\nsequence_len: 2048\nfp8: true\n",
            "src/axolotl/core/builders/causal.py": (
                "from transformers import DataCollatorForSeq2Seq\n\n\ndef build_collator(tokenizer):\n"
                "    return DataCollatorForSeq2Seq(tokenizer, pad_to_multiple_of=64, return_tensors=\"pt\", padding=True)\n"),
        }, U, "a config default every instantiation overrides"),
        Example(_PACKED_BATCH_PAD, U, "every packed batch padded to a multiple of 64 tokens; the model from a checkpoint"),
        Example({**_PACKED_BATCH_PAD, "pkg/dataset.py": _PACKED_BATCH_PAD["pkg/dataset.py"].replace(
            "self.PAD_MULTIPLE = 64", "self.PAD_MULTIPLE = 1")}, Status.NA,
                "the same padding to a multiple of 1: nothing aligned, and the dimensions from a checkpoint: not judged"),
        Example(_self_test_patch(""), Status.NA, "the only config is a patch module's self-test run by its main block: not judged"),
        Example(_self_test_patch("config = LlamaConfig(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, "
                                 "num_attention_heads=32, vocab_size=32000)\n"), U,
                "the training script's own config beside a patch module's self-test"),
    )

    def _mult(self, f: Facts) -> int:
        return 16 if fp8_sites(f)[0] else 8

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        mult = self._mult(f)
        dims = _dims(f)
        pads = _paddings(f, mult)
        rounded = _padded_resizes(f, mult)
        if not dims and not pads and not rounded and not _resize_without_pad(f):
            token_pads = _token_pads(f, mult)
            if token_pads:
                a = token_pads[0]
                return Outcome(U, [Facts.ev(x, key=(getattr(x, "target", None) or x.name).rsplit(".", 1)[-1], value=int(as_number(x.value) or 0))
                                   for x in token_pads],
                               f"each batch's token count is padded to a multiple of {int(as_number(a.value) or 0)} ({a.path}:{a.line}); "
                               "the model's dimensions come from a checkpoint", {"aligned": True, "dims_visible": False})
            # "from a checkpoint" only when one is loaded: a model built from presets in code the audit does not evaluate
            # (a dict of ``dict(n_layer=12, n_embd=768)`` picked by name) or from the user's arguments is not one
            # the training path resizes the embedding to the tokenizer's length unpadded (llama-recipes ``if len(tokenizer) >
            # model.get_input_embeddings().weight.shape[0]: model.resize_token_embeddings(len(tokenizer))``): the one size the
            # repository decides, decided unaligned
            train = ctx.project.training_files
            # (not LLaVA's shape, a token added on one branch and an existing token reused as padding on the others)
            resized = [] if _pad_reused(f) and f.calls("add_special_tokens", "add_tokens") else [
                c for c in f.calls("resize_token_embeddings") if "pad_to_multiple_of" not in c.kwargs and not c.star_kwargs
                and len(c.args) == 1 and c.func != "resize_token_embeddings" and (not train or c.path in train)
                and (resize_multiple(f, c)[0] or 1) % 8 != 0 and not uncalled_function(f, c)]
            if resized:
                c = resized[0]
                return Outcome(N, [Facts.ev(x, key="resize_token_embeddings") for x in resized[:3]],
                               f"the embedding is resized to `{_text(c.args[0])}` ({c.path}:{c.line}) with no pad_to_multiple_of: the "
                               "vocabulary is aligned only if the tokenizer's size happens to be; the other dimensions come from a "
                               "checkpoint", {"dims_visible": False, "resize_unpadded": True, "aligned": False})
            # nothing in the repository to judge: an unknown, not a miss (out of the score, as I3-I5 with nothing seen)
            where = ("the architecture comes from a checkpoint" if ctx.project.finetunes
                     else "the model is built from sizes the audit cannot read")
            return Outcome(Status.NA, [], f"not judged: no model dimension or padding setting is visible ({where}); check the "
                           "hidden, FFN and vocabulary sizes of the model the run trains against multiples of 64", {"dims_visible": False})
        vocab_padded = any(s.name in _VOCAB_PAD_KEYS for s in pads) or any(
            s.name == "pad_to_multiple_of" and s.key.startswith("resize_token_embeddings") for s in pads) or bool(rounded)
        # the padded sizes by file, with the embedding row counts a model really allocates (OLMo ``embedding_size: 50304``
        # beside ``vocab_size: 50280``): nanoGPT's ``model.py`` trains with ``vocab_size: int = 50304`` and keeps 50257 only where
        # the same file loads GPT-2 checkpoints, so the repo pads; LLMs-from-scratch pads in its speed chapter's script alone,
        # while its main chapters' configs train with 50257 (a padded size in another file pads nothing there)
        padded_by_file: dict[str, list[int]] = {}
        for s in [*dims, *f.effective("embedding_size", "padded_vocab_size")]:
            if s.name in {"vocab_size", "padded_vocab_size", "embedding_size"} and not _TEST_PATH.search(s.path) \
                    and (n := as_number(s.value)) and n >= 1000 and n % 64 == 0:
                padded_by_file.setdefault(s.path, []).append(int(n))

        def padded_elsewhere(s: Setting) -> bool:
            v = int(as_number(s.value) or 0)
            return any(v < w <= v + 256 for w in padded_by_file.get(s.path, ()))

        # a recipe that sets its own padded row count beside the vocabulary (OLMo ``custom_dataset_example.yaml``:
        # ``vocab_size: 32100`` then ``embedding_size: 32128``): that recipe's embedding is padded
        rows_in = {s.path: n for s in f.settings("embedding_size", "padded_vocab_size")
                   if (n := as_number(s.value)) is not None and n >= 1000 and n % 64 == 0}
        bad = [s for s in dims if int(as_number(s.value) or 0) % mult
               and not (s.name == "vocab_size" and (vocab_padded or padded_elsewhere(s)
                                                    or rows_in.get(s.path, 0) >= (as_number(s.value) or 0)))]
        few = _minority_recipes(f, bad)
        if few:
            # a dimension only a few recipes of a family set (torchtune: a PPO recipe's reward model ``vocab_size: 32001``
            # among 100+ recipes whose models come from builders): that recipe's finding, not the project's verdict
            bad = [s for s in bad if s.path not in few[0]]
            dims = [s for s in dims if s.path not in few[0]]
            if not bad:
                note = _minority_note(few, mult)
                good = [s for s in dims if int(as_number(s.value) or 0) % mult == 0]
                if good or pads or rounded:
                    return Outcome(U, [f.ev(s) for s in [*pads, *good]] + evs(rounded),
                                   f"visible GEMM dimensions are multiples of {mult}; {note}", {"aligned": True, "minority": True})
                return Outcome(N, [f.ev(s) for s in few[2]], f"the dimensions most recipes train with are not visible (their models "
                               f"come from code or checkpoints); {note}", {"dims_visible": False, "minority": True})
        values: dict[str, object] = {s.name: int(as_number(s.value) or 0) for s in (bad or dims)}
        if bad:
            # each name=value once (llm.c sets vocab_size=50257 in the config class and again where it loads GPT-2)
            listed = ", ".join(list(dict.fromkeys(f"{s.name}={int(as_number(s.value) or 0)}" for s in bad))[:4])
            values["aligned"] = False
            return Outcome(N, [f.ev(s) for s in bad], f"not a multiple of {mult}: {listed}", values)
        resize = _resize_without_pad(f)
        # (the training path's resize first: Chinese-LLaMA-Alpaca's training scripts, not its LoRA merge script)
        resize.sort(key=lambda c: c.path not in ctx.project.training_files)
        if resize and not vocab_padded:
            arg = _text(resize[0].args[0]) if resize[0].args else "len(tokenizer)"
            how = resize_multiple(f, resize[0])[1]
            return Outcome(N, evs(resize), f"tokens are added and the embedding is resized to `{arg}` ({resize[0].path}:{resize[0].line}), "
                           f"not rounded up to a multiple of {mult} (no pad_to_multiple_of){'; ' + how if how else ''}", {"aligned": False})
        good = [s for s in dims if int(as_number(s.value) or 0) % mult == 0]
        values = {s.name: int(as_number(s.value) or 0) for s in good}
        values["aligned"] = True
        if rounded and not good and not pads:
            m = resize_multiple(f, rounded[0])[0]
            return Outcome(U, evs(rounded), f"the embedding is resized to len(tokenizer) rounded up to a multiple of {m}",
                           {"aligned": True, "vocab_multiple": m})
        return Outcome(U, [f.ev(s) for s in [*pads, *good]] + evs(rounded), f"visible GEMM dimensions are multiples of {mult}", values)

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status != Status.UNUSED:
            return None
        if outcome.values.get("minority"):
            return Priority.LOW  # one recipe's model, named with its line
        if outcome.values.get("resize_unpadded"):
            return Priority.LOW  # one keyword on the resize
        if outcome.values.get("dims_visible") is False:
            return None
        return self.priority


def _minority_recipes(f: Facts, bad: list) -> tuple[set[str], int, list] | None:
    """When every misaligned dimension is set in YAML/JSON recipes that are a minority of their family (the recipes of that
    family that leave the name unset take their model from a builder or a checkpoint): (those recipes, the family's size,
    the settings). None otherwise."""
    if not bad or any(s.source != "config" or not s.path.endswith((".yaml", ".yml", ".json")) for s in bad):
        return None
    setters = {s.path for s in bad}
    family = len(setters) + len(f.sibling_recipes(setters, share=1 / 3))
    if family < 3 or len(setters) * 2 >= family:
        return None
    return setters, family, bad


def _minority_note(few: tuple[set[str], int, list], mult: int) -> str:
    setters, family, bad = few
    listed = ", ".join(f"{s.key}={int(as_number(s.value) or 0)} ({s.path}:{s.line})" for s in bad[:3])
    return (f"not a multiple of {mult} only in {len(setters)} of {family} recipes of that family: {listed}; "
            "pad it there (a recipe's finding, not the project's)")


# --- D8 persistent kernels ------------------------------------------------------

_PERSISTENT_STEP = lazy_compile(r"num_programs|num_sms|NUM_SMS|n_sms|NUM_SM\b|num_sm\b|grid_size|NUM_PROGRAMS|NUM_CTAS", re.I)
#: (NeMo/Megatron ``persist_layer_norm: True``: apex's persistent fused LayerNorm kernel, trlx's NeMo configs)
_PERSISTENT_KEYS = ("persistent_kernel", "persistent_kernels", "use_persistent_kernel", "enable_persistent_kernel", "grid_persistent",
                    "persist_layer_norm")


def _fa3_sites(f: Facts) -> list:
    """FlashAttention-3 selected or called (its Hopper kernels run on a persistent tile scheduler)."""
    out: list = [s for s in f.effective(*_ATTN_KEYS, *_ATTN_BOOL_KEYS) if _attn_kind(s.value) == "flash_attention_3"
                 or (s.name.endswith("_3") and truthy(s.value) is True)]
    # FA3 is the top-level ``flash_attn_interface`` module (hopper build); ``flash_attn.flash_attn_interface`` is FA1/FA2
    out += [c for c in f.calls("flash_attn_interface.*", "flash_attn_3.*") if _FA_FUNCS.match(c.short) and not guard_off(f, c)
            and c.name.split(".")[0] in ("flash_attn_interface", "flash_attn_3")]
    return out


@register
class D8PersistentKernels(Check):
    id = "D8"
    title = "Persistent kernels"
    title_zh = "Persistent Kernel"
    bottlenecks = (Bottleneck.LAUNCH, Bottleneck.LATENCY)
    priority = Priority.LOW
    benefit = "one long-lived grid that loops over tiles: no relaunch or tail effect between tiles"
    what = (
        "Whether persistent-style kernels are used: a Triton kernel whose loop strides over tiles by the number of programs/SMs "
        "(`for tile in tl.range(pid, num_tiles, NUM_SMS)`), a `persistent_kernel` flag, CUTLASS persistent tile schedules, or "
        "FlashAttention-3 (whose Hopper kernels use a persistent tile scheduler). Strict: `tl.program_id` alone is an ordinary kernel."
    )
    why = (
        "A persistent kernel launches about one CTA per SM and loops over work, overlapping one tile's epilogue with the next "
        "tile's loads and removing launch gaps: Triton's persistent FP8 matmul tutorial and CUTLASS 3 warp-specialised persistent "
        "GEMMs reach the highest H100 utilisation, and FlashAttention-3 attributes part of its 1.5-2x over FA2 to this design "
        "(Shah et al., 2024). The benefit is concentrated in decode and small-kernel workloads."
    )
    fix = "Where a custom Triton kernel runs many small tiles, make it persistent (launch `NUM_SMS` programs and loop `for tile in tl.range(pid, num_tiles, NUM_SMS)`); for attention on H100 use FlashAttention-3."
    fix_zh = "若自定义 Triton kernel 处理大量小 tile，可改为 persistent 设计（启动 `NUM_SMS` 个 program 并循环 `for tile in tl.range(pid, num_tiles, NUM_SMS)`）；H100 上的注意力可使用 FlashAttention-3。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://triton-lang.org/main/getting-started/tutorials/09-persistent-matmul.html", "https://arxiv.org/abs/2407.08608")
    snippets = {
        "python": (
            "import triton\nimport triton.language as tl\n\n\n"
            "@triton.jit\n"
            "def persistent_kernel(x_ptr, n_tiles, NUM_SMS: tl.constexpr, BLOCK: tl.constexpr):\n"
            "    for tile in tl.range(tl.program_id(0), n_tiles, NUM_SMS):\n"
            "        offs = tile * BLOCK + tl.arange(0, BLOCK)\n"
            "        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)\n"
        ),
    }
    examples = (
        Example({"kernels/matmul.py": (
            "import triton\nimport triton.language as tl\n\n@triton.jit\ndef matmul_persistent(a, b, c, num_tiles, NUM_SMS: tl.constexpr):\n"
            "    start = tl.program_id(0)\n    for tile_id in tl.range(start, num_tiles, NUM_SMS, flatten=True):\n"
            "        acc = tl.load(a + tile_id)\n        tl.store(c + tile_id, acc)\n")}, U, "triton persistent loop"),
        Example({"kernels/scale.py": (
            "import triton\nimport triton.language as tl\n\n@triton.jit\ndef scale(x, n_tiles, BLOCK: tl.constexpr):\n"
            "    for t in range(tl.program_id(0), n_tiles, tl.num_programs(0)):\n        tl.store(x + t, tl.load(x + t) * 2)\n")}, U, "grid-stride loop"),
        Example({"kernels/add.py": (
            "import triton\nimport triton.language as tl\n\n@triton.jit\ndef add(x, y, n, BLOCK: tl.constexpr):\n"
            "    pid = tl.program_id(0)\n    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    tl.store(y + offs, tl.load(x + offs))\n")}, N, "ordinary kernel"),
        Example({"train.py": "# persistent_kernel = True\nloader = DataLoader(ds, persistent_workers=True, num_workers=4)\n"}, N, "persistent workers are not kernels"),
        Example({"configs/nemo_configs/megatron_20b.yaml": (  # trlx's NeMo PPO config
            "model:\n  micro_batch_size: 2\n  tensor_model_parallel_size: 4\n  hidden_size: 6144\n  num_attention_heads: 48\n"
            "  persist_layer_norm: True # Use of persistent fused layer norm kernel.\n  bias_gelu_fusion: True\n"),
            "train.py": "from nemo.collections.nlp.models.language_modeling.megatron_gpt_model import MegatronGPTModel\n"
                        "trainer.fit(MegatronGPTModel(cfg.model, trainer))\n"}, U, "NeMo persist_layer_norm"),
        Example({"configs/nemo_configs/megatron_20b.yaml": (
            "model:\n  micro_batch_size: 2\n  hidden_size: 6144\n  persist_layer_norm: False\n"),
            "train.py": "from nemo.collections.nlp.models.language_modeling.megatron_gpt_model import MegatronGPTModel\n"
                        "trainer.fit(MegatronGPTModel(cfg.model, trainer))\n"}, N, "NeMo persist_layer_norm off"),
        # LLaVA's FastChat-style monkey patch calls FlashAttention-2 through flash_attn.flash_attn_interface
        Example({"llava/train/llama_flash_attn_monkey_patch.py": (
            "from flash_attn.flash_attn_interface import flash_attn_varlen_qkvpacked_func\n"
            "def forward(self, hidden_states, attention_mask=None):\n"
            "    output = flash_attn_varlen_qkvpacked_func(qkv, cu_q_lens, max_s, 0.0, softmax_scale=None, causal=True)\n"
            "    return self.o_proj(output)\n")}, N, "flash_attn.flash_attn_interface is FA2"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        kernels = {(d.path, d.target) for d in triton_kernels(f)}
        used: list = []
        for c in f.calls("range", "triton.language.range", "triton.language.static_range"):
            if (c.path, c.func) in kernels and len(c.args) >= 3:
                step = c.args[2]
                text = step.text if isinstance(step, Expr) else str(step)
                if _PERSISTENT_STEP.search(text):
                    used.append(c)
        used += [s for s in f.effective(*_PERSISTENT_KEYS) if truthy(s.value) is True]
        used += [r for r in f.refs("cutlass.*") if "ersistent" in r.name]
        fa3 = _fa3_sites(f)
        used += fa3
        if used:
            detail = "FlashAttention-3's persistent tile scheduler" if fa3 and len(fa3) == len(used) else "persistent-style kernels"
            return Outcome(U, [f.ev(x) for x in used], detail, {"persistent_kernels": True})
        return Outcome(N, [], "no persistent kernel found", {"persistent_kernels": False})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status != Status.UNUSED:
            return None
        # worth advising only where the project writes kernels or serves decode-heavy inference
        return Priority.LOW if triton_kernels(ctx.facts) or ctx.project.does_inference else None
