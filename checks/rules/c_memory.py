"""C. Memory optimisation (显存优化): C1-C6."""

from __future__ import annotations

import ast
import math
import re
from collections import Counter
from pathlib import PurePosixPath
from typing import Any, NamedTuple

from ..base import Check, Context, register
from ..facts import Call, ConfigEntry, Expr, Facts, Field, Setting, as_number, truthy
from ..facts.types import ParamDefault
from ..hardware import lacks_bf16_fa2
from ..lazyre import lazy_compile
from ..model import Bottleneck, Evidence, Example, FixSafety, Outcome, Priority, Status, filled
from ..project import _SERVE_PATH, CONFIG_CALLEE, jax_jitted_steps, launch_runs_no_training, recipe_files
from . import _bmtrain as bmtrain
from ._helpers import (
    _FRAMEWORK_CALLED,
    DS_REF_NAMES,
    HF_DEFAULTS,
    PARTIAL_BINDING,
    aux_model_site,
    backend_unselected,
    callers_off,
    checkpoint_gather,
    class_at,
    deepspeed_alternative_files,
    ds_builder_entries,
    evs,
    flag_state,
    guard_flags,
    guard_off,
    helper_callers_off,
    in_trainer_copy,
    launched_paths,
    launches_with_train_args,
    off,
    off_detail,
    on,
    parse_expr,
    patch_installed_off,
    referenced_configs,
    registry_off,
    unlaunched_ds_configs,
    unreached_note,
    unreached_sites,
    uses_hf_trainer,
    value_on,
)
from ._helpers import (
    DRIVER_GPU_KEYS as _DRIVER_GPU_KEYS,
)
from ._helpers import (
    DRIVER_NODE_KEYS as _DRIVER_NODE_KEYS,
)
from ._registry import component_registry, copied_trainer, recipes_calling, split_text, total_recipes
from .a_parallelism import absent_ds_configs, lightning_deepspeed

U, P, N = Status.USED, Status.PARTIAL, Status.UNUSED

_LOW_DTYPES = ("bfloat16", "float16", "half", "bf16", "fp16")
#: a rotary-embedding table cast to the activations' half dtype (ChatGLM ``inv_freq = inv_freq.half()``, ``cos_cached =
#: cos_cached.bfloat16()`` under ``if self.precision == torch.bfloat16:``, ``cache = cache.bfloat16() if dtype ==
#: torch.bfloat16 else cache.half()``): a buffer following the model's dtype, not a choice of training precision
_ROPE_TABLE = lazy_compile(r"(?i)\s*(self\.)?(inv_freq|freqs(_cis)?|(cos|sin)(_cached)?|cache|\w*(rope|rotary)\w*)\s*=")
_LIGHTNING_MIXED = {"bf16", "bf16-mixed", "bf16-true", "16", "16-mixed", "16-true", "fp16", "half", "transformer-engine", "transformer-engine-float16"}


def _branch_off(f: Facts, s: object) -> bool:
    """A Python ``args["bf16"] = True`` in an ``if`` branch that no setting takes (``if config.mixed_precision == "bf16":``
    with ``mixed_precision`` None by default and "fp16" where a preset sets it)."""
    if not isinstance(s, Setting) or s.source != "config" or not s.path.endswith(".py"):
        return False
    return any(e.guard and e.path == s.path and e.line == s.line and guard_off(f, e) for e in f.config(s.name))


def _is_low_dtype(v: object) -> str | None:
    text = v.dotted or v.text if isinstance(v, Expr) else str(v)
    if not text:
        return None
    low = text.lower()
    if "bfloat16" in low or low in {"bf16", "bf16-mixed", "bf16-true", "amp_bf16"}:  # Composer: precision='amp_bf16'
        return "bf16"
    if "float16" in low or low in {"fp16", "half", "16", "16-mixed", "16-true", "amp_fp16"}:
        return "fp16"
    if low == "amp_fp8":
        return "bf16"
    if low == "fp8" or low.startswith("transformer-engine"):
        return "bf16"  # FP8 recipes (accelerate, Lightning TE) run the non-GEMM ops in BF16 autocast
    return None


_FP16_TEST = lazy_compile(r"==\s*['\"]?(torch\.)?(float16|fp16|half)\b|\b(float16|fp16)['\"]?\s*==")


def _fp16_branch(c: Call) -> bool:
    """A GradScaler enabled, or built, only when the dtype is FP16 (``enabled=(dtype == 'float16')``, ``... if COMPUTE_DTYPE ==
    torch.float16 else None``)."""
    enabled = c.kwargs.get("enabled")
    text = f"{enabled.text if isinstance(enabled, Expr) else ''} {c.guard or ''}"
    return bool(_FP16_TEST.search(text))


def _call_gated(f: Facts, s: Setting) -> bool:
    """Whether the call a keyword setting comes from sits in a branch that is off (a comparison with the run's
    ``--precision`` default, a flag that is off)."""
    short = s.key.split("(", 1)[0]
    kw = s.key.split("(", 1)[1].rstrip("=)") if "(" in s.key else ""
    site = next((c for c in f.calls(short) if c.path == s.path and s.line in (c.line, c.kw_line(kw))), None)
    return site is not None and bool(guard_off(f, site))


#: a cast of a tensor already copied to the host (llm.c ``write_model``: ``t = tensor.detach().cpu().to(torch.bfloat16)`` to
#: write the weights for the C trainer; ``state_dict[k].cpu().half()`` when saving): an export's dtype, not the training's
_HOST_CAST = lazy_compile(r"\.cpu\(\)\s*\.\s*(to\(|half\(|bfloat16\()")

#: calls whose ``dtype=`` makes a tensor, not the training precision (``torch.zeros(..., dtype=torch.bfloat16)``)
#: products whose ``precision=`` is how one matmul accumulates, not the run's training precision
_MATMUL_OPS = frozenset({"dot", "dot_general", "einsum", "matmul", "conv_general_dilated", "batch_matmul", "tensordot"})
#: the calls whose ``dtype="float32"`` keyword sets the run's precision (a model built or loaded in FP32, an autocast or
#: trainer set to it); on any other call the keyword types one tensor or input
_FP32_DTYPE_CALLS = frozenset({"from_pretrained", "from_config", "autocast", "Trainer", "TrainingArguments", "Fabric", "Accelerator",
                               "MixedPrecision", "MixedPrecisionPolicy", "set_default_dtype", "set_dtype", "amp_guard",
                               "auto_cast", "decorate", "to"})
_TENSOR_FACTORIES = {
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "tensor", "as_tensor", "arange", "linspace", "eye",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "array", "asarray", "frombuffer",
    "from_numpy", "astype", "normal", "finfo", "iinfo", "get_autocast_dtype",
}



#: LAVIS: the task loop's ``amp`` switch (``amp: True`` in the recipe) runs FP16 autocast with a GradScaler; the FlanT5 model
#: casts its frozen LLM to BF16 and autocasts to BF16 in its own forward
_AMP_LOOP_BF16_MODEL = {
    "lavis/projects/blip2/train/pretrain_stage2.yaml": "model:\n  arch: blip2_opt\nrun:\n  amp: True\n  num_workers: 4\n",
    "lavis/runners/runner_base.py": (
        "import torch\n\n\nclass RunnerBase:\n    @property\n    def scaler(self):\n"
        "        if self.config.run_cfg.get('amp', False):\n            if self._scaler is None:\n"
        "                self._scaler = torch.cuda.amp.GradScaler()\n        return self._scaler\n"),
    "lavis/tasks/base_task.py": (
        "import torch\n\n\ndef train_inner_loop(model, data_loader, optimizer, scaler=None):\n    use_amp = scaler is not None\n"
        "    for samples in data_loader:\n        with torch.cuda.amp.autocast(enabled=use_amp):\n            loss = model(samples)['loss']\n"
        "        scaler.scale(loss).backward()\n        scaler.step(optimizer)\n        scaler.update()\n"),
    "lavis/models/blip2_t5.py": (
        "import contextlib\nimport torch\nfrom torch import nn\n\n\nclass Blip2T5(nn.Module):\n"
        "    def maybe_autocast(self, dtype=torch.float16):\n        return torch.cuda.amp.autocast(dtype=dtype)\n\n"
        "    def __init__(self, t5_model):\n        super().__init__()\n        for name, param in t5_model.named_parameters():\n"
        "            param.requires_grad = False\n            param.data = param.data.bfloat16()\n\n"
        "    def forward(self, samples):\n        with self.maybe_autocast(dtype=torch.bfloat16):\n"
        "            return {'loss': self.t5_model(inputs_embeds=samples['embeds']).loss}\n"),
}


def _autocast_lib(builder_kwargs: str) -> dict[str, str]:
    """OLMo-core's shape: the train module enters ``torch.autocast`` only when ``autocast_precision`` is set (``None`` by
    default, converted on its way through ``build()``); a grouped-GEMM kernel casts its operands to BF16 inline."""
    return {
        "mylib/train/train_module/transformer/config.py": (
            "from dataclasses import dataclass\nfrom typing import Optional, cast\nfrom mylib.config import DType\n"
            "from .train_module import TransformerTrainModule\n\n"
            "@dataclass\nclass TransformerTrainModuleConfig:\n    rank_microbatch_size: int\n"
            "    autocast_precision: Optional[DType] = None\n\n"
            "    def build(self, model):\n        kwargs = dict(rank_microbatch_size=self.rank_microbatch_size)\n"
            "        if (autocast_precision := self.autocast_precision) is not None:\n"
            "            kwargs['autocast_precision'] = cast(DType, autocast_precision).as_pt()\n"
            "        return TransformerTrainModule(model=model, **kwargs)\n"),
        "mylib/train/train_module/transformer/train_module.py": (
            "import contextlib\nimport torch\n\nclass TransformerTrainModule:\n"
            "    def __init__(self, model, rank_microbatch_size, autocast_precision=None):\n"
            "        self.model = model\n        self.autocast_precision = autocast_precision\n\n"
            "    @contextlib.contextmanager\n    def _model_forward_context(self):\n"
            "        with contextlib.ExitStack() as stack:\n"
            "            if self.autocast_precision is not None:\n"
            "                stack.enter_context(torch.autocast('cuda', dtype=self.autocast_precision))\n"
            "            yield\n\n"
            "    def train_batch(self, batch):\n        with self._model_forward_context():\n            loss = self.model(batch)\n"
            "        loss.backward()\n"),
        "mylib/nn/moe/mlp.py": (
            "import torch\n\nclass DroplessMoEMLP(torch.nn.Module):\n"
            "    def gmm(self, x, w, batch_sizes, trans_b=False):\n"
            "        return self._gmm(x.to(torch.bfloat16), w.to(torch.bfloat16), batch_sizes, trans_b=trans_b)\n"),
        "mylib/internal/experiment.py": (
            "from mylib.config import DType\n"
            "from mylib.train.train_module.transformer.config import TransformerTrainModuleConfig\n\n"
            "def build_train_module_config():\n"
            f"    return TransformerTrainModuleConfig(rank_microbatch_size=8192{builder_kwargs})\n"),
    }

#: LMFlow 0.0.3: the fine-tuning run keeps HF's fp32 default; bf16 is only the evaluator's field default and a cast inside a
#: flash-attn patch installed only under ``use_flash_attention`` (default False)
_SERVING_ARGS_FILES = {
    "mylib/args.py": (
        "from dataclasses import dataclass, field\nfrom typing import Optional\n\n\n@dataclass\nclass ModelArguments:\n"
        "    use_flash_attention: bool = field(default=False)\n\n\n@dataclass\nclass EvaluatorArguments:\n"
        "    mixed_precision: Optional[str] = field(default=\"bf16\", metadata={\"choices\": [\"bf16\", \"fp16\"]})\n"),
    "mylib/pipeline/finetuner.py": (
        "from transformers import Trainer\n\n\ndef tune(model, dataset, training_args):\n"
        "    return Trainer(model=model, args=training_args, train_dataset=dataset).train()\n"),
    "mylib/utils/flash_attention/gpt_neo_flash_attention.py": (
        "import torch\nimport transformers\n\n\ndef _attn(self, query, key, value, attention_mask=None):\n"
        "    query = query.to(torch.bfloat16)\n    key = key.to(torch.bfloat16)\n    return query @ key.transpose(-1, -2)\n\n\n"
        "def forward(self, hidden_states, attention_mask=None):\n    return self._attn(hidden_states, hidden_states, hidden_states)\n\n\n"
        "def replace_gpt_neo_attn_with_flash_attn():\n"
        "    transformers.models.gpt_neo.modeling_gpt_neo.GPTNeoSelfAttention._attn = _attn\n"
        "    transformers.models.gpt_neo.modeling_gpt_neo.GPTNeoSelfAttention.forward = forward\n"),
    "mylib/models/hf_decoder_model.py": (
        "from transformers import AutoModelForCausalLM\n\n\ndef load(model_args):\n    if model_args.use_flash_attention:\n"
        "        from mylib.utils.flash_attention.gpt_neo_flash_attention import replace_gpt_neo_attn_with_flash_attn\n"
        "        replace_gpt_neo_attn_with_flash_attn()\n    return AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"),
}

#: argument/config classes of an evaluation, inference or serving pipeline (LMFlow ``EvaluatorArguments``/``InferencerArguments``)
_SERVING_ARGS = lazy_compile(r"(?:Eval|Evaluat|Infer|Inferenc|Generat|Serv|Serving|Chat|Deploy|Predict)\w*(?:Arguments|Args|Config)$")


def _serving_field(s: Setting) -> bool:
    """A dataclass field default of an evaluation/inference pipeline's arguments class: not the training run's setting."""
    return s.source == "field-default" and bool(_SERVING_ARGS.match(s.key.split(".", 1)[0]))


#: calls that make a file a training file: its model loads are the run's, whatever folder it sits in
_TRAIN_STEP_CALLS = lazy_compile(r"^(backward|train|fit|step|training_step|\w*Trainer)$")


#: FlagAI ``flagai/model/predictor/predictor.py``: a predictor samples from a trained model (``with autocast():`` around a
#: diffusion decoder), it does not train
_PREDICT_PATH = lazy_compile(r"(?:^|/)predict(?:or|ors|ion)?(?:/|\.py$)", re.I)


def _inference_file(f: Facts, path: str) -> bool:
    """A serving/inference module that trains nothing (a reranker class in ``inference/reranker/base.py`` loading
    ``AutoModelForCausalLM.from_pretrained(..., torch_dtype=torch.bfloat16 if use_bf16 else torch.float32)``, then
    ``if self.use_fp16: self.model.half()``, and scoring under ``@torch.no_grad()``): the dtypes and casts there are the
    precision the model is served in (J4's), not the training run's."""
    if not (_SERVE_PATH.search(path) or _PREDICT_PATH.search(path)):
        return False
    ff = f.files.get(path)
    return ff is not None and not any(_TRAIN_STEP_CALLS.match(c.short) for c in ff.calls)


#: transformers ``TrainingArguments`` switches of mixed precision (both default False)
_HF_PRECISION_FLAGS = ("fp16", "bf16")


def _chosen_arm(f: Facts, s: Setting) -> str | None:
    """The arm of a conditional dtype (``torch_dtype=(torch.bfloat16 if training_args.bf16 else None)``, LLaVA's
    ``train.py``) that the settings choose: its text, or None when the condition's state is unknown. The condition is read
    as an ``if`` guard is (a flag that is off, an HF ``TrainingArguments`` precision switch that nothing sets)."""
    node = parse_expr(s.value.text) if isinstance(s.value, Expr) and s.value.text else None
    if not isinstance(node, ast.IfExp):
        return None
    test = ast.unparse(node.test)
    if guard_off(f, _GuardAt(s.path, s.line, test)) or _hf_precision_flag_off(f, _GuardAt(s.path, s.line, test)):
        return ast.unparse(node.orelse)
    if guard_off(f, _GuardAt(s.path, s.line, f"not ({test})")):
        return ast.unparse(node.body)
    return None


class _GuardAt(NamedTuple):
    """A condition read as the guard of a site: what :func:`guard_off` needs of a call."""

    path: str
    line: int
    guard: str


def _hf_precision_flag_off(f: Facts, c: Any) -> list[Any]:
    """An autocast/GradScaler under an HF ``TrainingArguments`` precision switch that nothing sets (``with
    torch.cuda.amp.autocast() if training_args.fp16 else nullcontext():``, ``if self.args.bf16:``): transformers' default
    False applies, when the project builds its arguments from ``TrainingArguments`` (an ``HfArgumentParser``, an HF args
    class or trainer: :func:`uses_hf_trainer`) and no launch flag, config key, call keyword or field of its own gives the
    name a value (a call forwarding the same attribute, ``GradCache(fp16=self.args.fp16)``, is no value). The guard must
    read the attribute of an arguments object (``X.fp16``), as the whole condition or one and-term, not negated; a bare
    local name is the project's own variable. The default as a setting at the call's line."""
    node = parse_expr(c.guard) if getattr(c, "guard", None) else None
    if node is None:
        return []
    terms = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]
    for t in terms:
        if not (isinstance(t, ast.Attribute) and t.attr in _HF_PRECISION_FLAGS):
            continue
        name = t.attr
        valued = [s for s in f.effective(name) if not (isinstance(s.value, Expr) and s.value.ref == name)]
        if valued or f.config(name) or any(x.name == name for x in f.fields(name)) or not uses_hf_trainer(f):
            continue
        return [Setting(name, HF_DEFAULTS[name], c.path, c.line, "field-default", c.guard, f"TrainingArguments.{name}", 0)]
    return []


#: Tevatron 0.1.0's shape: a retrieval toolkit's drivers parse transformers' ``TrainingArguments`` (a subclass) with
#: ``HfArgumentParser``; the training driver runs the HF Trainer, the encoding driver autocasts only under ``fp16``, which nothing
#: in the package sets (a GradCache trainer forwards ``fp16=self.args.fp16``): FP32 training at transformers' defaults
_HF_FP16_DRIVERS = {
    "mylib/arguments.py": ("from dataclasses import dataclass, field\n\nfrom transformers import TrainingArguments\n\n\n"
                           "@dataclass\nclass DenseTrainingArguments(TrainingArguments):\n"
                           "    grad_cache: bool = field(default=False)\n"),
    "mylib/driver/encode.py": ("from contextlib import nullcontext\n\nimport torch\nfrom transformers import HfArgumentParser\n\n"
                               "from mylib.arguments import DenseTrainingArguments\n\n\n"
                               "def main():\n    (training_args,) = HfArgumentParser((DenseTrainingArguments,)).parse_args_into_dataclasses()\n"
                               "    for batch in loader:\n"
                               "        with torch.cuda.amp.autocast() if training_args.fp16 else nullcontext():\n"
                               "            with torch.no_grad():\n                reps.append(model(**batch).cpu())\n"),
    "mylib/driver/train.py": ("from transformers import HfArgumentParser\n\nfrom mylib.arguments import DenseTrainingArguments\n"
                              "from mylib.trainer import DenseTrainer, GCTrainer\n\n\n"
                              "def main():\n    parser = HfArgumentParser((DenseTrainingArguments,))\n"
                              "    (training_args,) = parser.parse_args_into_dataclasses()\n"
                              "    trainer_cls = GCTrainer if training_args.grad_cache else DenseTrainer\n"
                              "    trainer = trainer_cls(model=build_model(), args=training_args, train_dataset=load_data())\n"
                              "    trainer.train()\n"),
    "mylib/trainer.py": ("from grad_cache import GradCache\nfrom transformers import Trainer\n\n\nclass DenseTrainer(Trainer):\n"
                         "    def compute_loss(self, model, inputs):\n        return model(**inputs).loss\n\n\n"
                         "class GCTrainer(DenseTrainer):\n"
                         "    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n"
                         "        self.gc = GradCache(models=[self.model], chunk_sizes=[4], fp16=self.args.fp16, scaler=self.scaler)\n"),
}


#: the autocast context managers, called or handed on as a value
_AUTOCASTS = ("torch.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast")
_NO_KW: dict[str, Any] = {}


#: OpenFlamingo 2.0.1's shape: a helper picks the autocast from a precision string, one dtype per ``elif`` whose test is an
#: ``or`` of spellings; the training script's ``--precision`` defaults to ``fp32`` and the loop calls the helper with it
_PRECISION_HELPER = {
    "train/train_utils.py": ("from contextlib import suppress\n\nimport torch\n\n\n"
                             "def get_autocast(precision, cache_enabled=True):\n    if precision == 'amp':\n"
                             "        return torch.cuda.amp.autocast(cache_enabled=cache_enabled)\n"
                             "    elif precision == 'amp_bfloat16' or precision == 'amp_bf16':\n"
                             "        return lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16, cache_enabled=cache_enabled)\n"
                             "    else:\n        return suppress\n\n\n"
                             "def train_one_epoch(args, model, loader, optimizer):\n    autocast = get_autocast(args.precision)\n"
                             "    for batch in loader:\n        with autocast():\n            loss = model(batch)[0]\n"
                             "        loss.backward()\n        optimizer.step()\n"),
    "train/train.py": ("import argparse\n\nfrom train_utils import train_one_epoch\n\n\ndef main():\n"
                       "    parser = argparse.ArgumentParser()\n"
                       "    parser.add_argument('--precision', choices=['amp_bf16', 'amp_bfloat16', 'bf16', 'fp16', 'fp32'], default='{default}')\n"
                       "    args = parser.parse_args()\n    train_one_epoch(args, model, loader, optimizer)\n"),
}


def _precision_helper(default: str, handed_on: bool = False) -> dict[str, str]:
    """``handed_on``: Multimodal-GPT's copy of the helper returns ``torch.cuda.amp.autocast`` itself, uncalled, for ``amp``."""
    files = filled(_PRECISION_HELPER, "default", default)
    if handed_on:
        files["train/train_utils.py"] = files["train/train_utils.py"].replace("torch.cuda.amp.autocast(cache_enabled=cache_enabled)\n",
                                                                            "torch.cuda.amp.autocast\n")
    return files


def _inference_load(f: Facts, s: Setting) -> bool:
    """A dtype passed to a call of an inference module (see :func:`_inference_file`)."""
    return s.source == "call" and _inference_file(f, s.path)


#: FlagEmbedding 1.4.2's shape: the package's inference reranker loads its model in BF16 on an option and casts it to FP16 on
#: another, scoring under ``no_grad``; the fine-tuning loader next to it leaves the dtype at FP32 and nothing sets bf16/fp16
_INFERENCE_RERANKER = {
    "mylib/inference/reranker/decoder_only/base.py": (
        "import torch\nfrom transformers import AutoModelForCausalLM\n\n\nclass BaseLLMReranker:\n"
        "    def __init__(self, model_name_or_path, use_fp16=False, use_bf16=False, **kwargs):\n"
        "        self.use_fp16 = use_fp16\n"
        "        self.model = AutoModelForCausalLM.from_pretrained(\n            model_name_or_path,\n"
        "            torch_dtype=torch.bfloat16 if use_bf16 else torch.float32\n        )\n\n"
        "    @torch.no_grad()\n    def compute_score(self, inputs, device='cuda'):\n"
        "        if self.use_fp16: self.model.half()\n        self.model.to(device)\n"
        "        return self.model(**inputs, return_dict=True).logits[:, -1]\n"),
    "mylib/finetune/reranker/load_model.py": (
        "from transformers import AutoModelForCausalLM\n\n\ndef get_model(model_args):\n"
        "    return AutoModelForCausalLM.from_pretrained(\n        model_args.model_name_or_path,\n"
        "        {dtype}\n        use_cache=False,\n    )\n"),
    "mylib/finetune/reranker/runner.py": (
        "from transformers import Trainer\nfrom .load_model import get_model\n\n\ndef run(model_args, training_args, dataset):\n"
        "    trainer = Trainer(model=get_model(model_args), args=training_args, train_dataset=dataset)\n    trainer.train()\n"),
}


def _inference_reranker(dtype: str) -> dict[str, str]:
    return filled(_INFERENCE_RERANKER, "dtype", dtype)


#: Stanford Alpaca's shape: an HfArgumentParser script, configured only by the README's training command
ALPACA_TRAIN = """\
import transformers
from transformers import Trainer


def train():
    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, transformers.TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    trainer = Trainer(model=model, args=training_args, **make_supervised_data_module(data_args))
    trainer.train()


if __name__ == "__main__":
    train()
"""
ALPACA_README = """\
## Fine-tuning

```bash
torchrun --nproc_per_node=4 --master_port=<your_random_port> train.py \\
    --model_name_or_path <your_path_to_hf_converted_llama_ckpt_and_tokenizer> \\
    --data_path ./alpaca_data.json \\
    --bf16 True \\
    --output_dir <your_output_dir> \\
    --gradient_accumulation_steps 8 \\
    --logging_steps 1 \\
    --fsdp "full_shard auto_wrap"
```
"""


#: sentence-transformers 6.3-shaped: a public model class keeps its pre-v3 training loop as ``old_fit(..., use_amp=False)``, which
#: nothing in the package calls; the documented path is the HF Trainer subclass with the default (fp32) TrainingArguments
_LEGACY_FIT = {
    "mylib/fit_mixin.py": (
        "import torch\nfrom torch import nn\n\n\n"
        "class FitMixin:\n"
        "    def old_fit(self, train_objectives, epochs: int = 1, optimizer_class=torch.optim.AdamW, use_amp: bool = False):\n"
        "        if use_amp:\n"
        "            scaler = torch.amp.GradScaler('cuda')\n"
        "        self.to(self.device)\n"
        "        optimizers = [optimizer_class(loss.parameters(), lr=2e-5) for _, loss in train_objectives]\n"
        "        for epoch in range(epochs):\n"
        "            for (loader, loss_model), optimizer in zip(train_objectives, optimizers):\n"
        "                for features, labels in loader:\n"
        "                    if use_amp:\n"
        "                        with torch.autocast(device_type=self.device.type):\n"
        "                            loss_value = loss_model(features, labels)\n"
        "                        scaler.scale(loss_value).backward()\n"
        "                        scaler.step(optimizer)\n"
        "                        scaler.update()\n"
        "                    else:\n"
        "                        loss_model(features, labels).backward()\n"
        "                        optimizer.step()\n"
        "                    optimizer.zero_grad()\n"),
    "mylib/trainer.py": (
        "from transformers import Trainer\n\n\n"
        "class EmbeddingTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):\n"
        "        return self.loss(*self.collect_features(inputs))\n"),
}


#: LLaVA 1.2 ``llava/train/train.py``: the LLM's load dtype follows transformers' ``bf16`` switch (False by default)
_HF_CONDITIONAL_DTYPE = (
    "from dataclasses import dataclass, field\n\nimport torch\nimport transformers\n\n\n@dataclass\nclass ModelArguments:\n"
    "    model_name_or_path: str = field(default='lmsys/vicuna-7b-v1.5')\n\n\ndef train():\n"
    "    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
    "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.LlamaForCausalLM.from_pretrained(\n        model_args.model_name_or_path,\n"
    "        cache_dir=training_args.cache_dir,\n        torch_dtype=(torch.bfloat16 if training_args.bf16 else None),\n    )\n"
    "    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=make_dataset())\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    train()\n")

#: FlagAI 1.8: the Trainer wraps the model in ``FP16_Module`` only when ``fp16`` (False by default); the predictor's
#: ``autocast()`` runs a diffusion decoder at sampling time
_FP32_TRAINER_WITH_PREDICTOR = {
    "pkg/fp16/fp16.py": (
        "from torch import nn\n\n\nclass FP16_Module(nn.Module):\n    def __init__(self, module):\n"
        "        super().__init__()\n        self.add_module('module', module.half())\n\n"
        "    def forward(self, *inputs, **kwargs):\n        return self.module(*inputs, **kwargs)\n"),
    "pkg/predictor/predictor.py": (
        "import torch\nfrom torch.cuda.amp import autocast\n\n\nclass Predictor:\n    def __init__(self, model):\n"
        "        self.model = model\n\n    @torch.no_grad()\n    def predict_generate_images(self, prompt):\n"
        "        samples = self.model.sample(prompt)\n        with autocast():\n"
        "            return self.model.decode_first_stage(samples)\n"),
    "pkg/trainer.py": (
        "import argparse\n\nfrom pkg.fp16.fp16 import FP16_Module\n\n\nclass Trainer:\n    def __init__(self, model, fp16=False):\n"
        "        self.fp16 = fp16\n        self.model = FP16_Module(model) if fp16 else model\n\n"
        "    def train(self, loader, optimizer):\n        for batch in loader:\n            loss = self.model(**batch).loss\n"
        "            loss.backward()\n            optimizer.step()\n            optimizer.zero_grad()\n\n\n"
        "if __name__ == '__main__':\n    p = argparse.ArgumentParser()\n    p.add_argument('--fp16', action='store_true')\n"
        "    args = p.parse_args()\n    Trainer(build_model(), fp16=args.fp16).train(build_loader(), build_optimizer())\n"),
}

#: LLaVA 1.2's shape: the training script loads at transformers' default FP32; the inference builder and the weight tools
#: beside it load in FP16, and the training path imports neither
_INFERENCE_BUILDER = {
    "mylib/train/train.py": _HF_CONDITIONAL_DTYPE,
    "mylib/model/builder.py": (
        "import torch\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\n\n"
        "def load_pretrained_model(model_path, load_8bit=False, device_map='auto'):\n    kwargs = {'device_map': device_map}\n"
        "    if load_8bit:\n        kwargs['load_in_8bit'] = True\n    else:\n        kwargs['torch_dtype'] = torch.float16\n"
        "    model = AutoModelForCausalLM.from_pretrained(model_path, low_cpu_mem_usage=True, **kwargs)\n"
        "    vision_tower = model.get_vision_tower()\n    vision_tower.to(device=device_map, dtype=torch.float16)\n"
        "    return AutoTokenizer.from_pretrained(model_path), model\n"),
    "mylib/model/apply_delta.py": (
        "import argparse\n\nimport torch\nfrom transformers import AutoModelForCausalLM\n\n\n"
        "def apply_delta(base_model_path, target_model_path, delta_path):\n"
        "    base = AutoModelForCausalLM.from_pretrained(base_model_path, torch_dtype=torch.float16, low_cpu_mem_usage=True)\n"
        "    delta = AutoModelForCausalLM.from_pretrained(delta_path, torch_dtype=torch.float16, low_cpu_mem_usage=True)\n"
        "    for name, param in delta.state_dict().items():\n        param.data += base.state_dict()[name]\n"
        "    delta.save_pretrained(target_model_path)\n"),
    "scripts/finetune.sh": "deepspeed mylib/train/train.py --model_name_or_path lmsys/vicuna-7b-v1.5 --output_dir ./checkpoints\n",
}


def _builder_on_path() -> dict[str, str]:
    """The same, with the training script loading its model through the builder."""
    train = _HF_CONDITIONAL_DTYPE.replace("import transformers\n", "import transformers\n\nfrom mylib.model.builder import load_pretrained_model\n", 1)
    train = train.replace("    model = transformers.LlamaForCausalLM.from_pretrained(\n        model_args.model_name_or_path,\n"
                          "        cache_dir=training_args.cache_dir,\n        torch_dtype=(torch.bfloat16 if training_args.bf16 else None),\n    )\n",
                          "    _, model = load_pretrained_model(model_args.model_name_or_path)\n", 1)
    assert "load_pretrained_model(model_args" in train
    return {**_INFERENCE_BUILDER, "mylib/train/train.py": train}


def _policy_dtype_setting(f: Facts, c: Call) -> tuple[list[Setting], list[Any], int] | None:
    """For an FSDP mixed-precision policy whose dtype comes from a setting that every config leaves null
    (``MixedPrecision(param_dtype=mp_dtype, ...)`` with ``mp_dtype = getattr(torch, config.model.fsdp_policy_mp) if
    config.model.fsdp_policy_mp is not None else None`` earlier in the same function, and ``fsdp_policy_mp: null`` in
    every model config: eric-mitchell/direct-preference-optimization): (the null settings, the launches or documented runs
    that set it (``model.fsdp_policy_mp=bfloat16``), the number of launches and documented runs of the project's
    training). None when the dtype is a literal or resolved, or a config sets it."""
    dtype = c.kwargs.get("param_dtype")
    if not (isinstance(dtype, Expr) and dtype.ref and dtype.dotted is None and dtype.text == dtype.ref):
        return None  # a literal dtype, or one the facts resolve: read as before
    ff = f.files.get(c.path)
    src = next((g for g in (ff.calls if ff else ()) if g.short == "getattr" and g.func == c.func and g.line <= c.line
                and len(g.args) == 2 and isinstance(g.args[0], Expr) and g.args[0].dotted == "torch"
                and isinstance(g.args[1], Expr) and g.args[1].ref), None)
    if src is None:
        return None
    name = src.args[1].ref  # type: ignore[union-attr]
    settings = f.effective(name)
    if not settings or any(s.value is not None for s in settings):
        return None
    runs = list({(x.path, x.line): x for x in (*f.launches(), *f.documented_runs())}.values())
    # (a run sets it under its dotted Hydra name: ``model.fsdp_policy_mp=bfloat16``)
    setters = [x for x in runs if any(str(k).lstrip("-").rsplit(".", 1)[-1] == name for k in x.script_args)]
    return settings, setters, len(runs)


@register
class C1MixedPrecision(Check):
    id = "C1"
    title = "Mixed precision (BF16/FP16)"
    title_zh = "混合精度训练 (FP16/BF16)"
    bottlenecks = (Bottleneck.COMPUTE, Bottleneck.MEMORY)
    priority = Priority.HIGH
    benefit = "~2x matmul throughput on Tensor Cores and about half the activation memory versus FP32"
    what = (
        "Whether training runs in BF16 or FP16 mixed precision: HF `bf16`/`fp16`, DeepSpeed `bf16.enabled`, "
        "accelerate `mixed_precision`, Lightning `precision=`, `torch.autocast`, FSDP `MixedPrecision`, or a "
        "`GradScaler` loop. A value set to false, a flag that defaults off and is never passed, or a commented line is not use."
    )
    why = (
        "FP32 training doubles activation memory and leaves Tensor Cores idle: on A100/H100, BF16 matmuls run at "
        "312/989 dense TFLOPS against 19.5/67 TFLOPS for FP32 (NVIDIA datasheets), and mixed-precision training "
        "typically gives 1.5-3x end-to-end speed-ups (Micikevicius et al., 2018). FP16 without loss scaling can "
        "underflow gradients, so a custom FP16 loop needs a `GradScaler`."
    )
    fix = "Enable BF16 (Ampere or newer) or FP16 with a GradScaler (older GPUs): `bf16: true` in the trainer config or DeepSpeed `\"bf16\": {\"enabled\": true}`."
    fix_zh = "启用 BF16（A100/H100 等 Ampere 及更新架构）或 FP16+GradScaler（较老 GPU）：在训练配置中设置 `bf16: true`，或在 DeepSpeed 配置中设置 `\"bf16\": {\"enabled\": true}`。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://arxiv.org/abs/1710.03740", "https://pytorch.org/docs/stable/amp.html")
    snippets = {
        "hf-yaml": "bf16: true\ntf32: true\n",
        "deepspeed-json": '{\n  "bf16": {"enabled": true}\n}\n',
        "accelerate-yaml": "mixed_precision: bf16\n",
        "python": (
            "import torch\n\n"
            "with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):\n"
            "    loss = model(**batch).loss\n"
            "loss.backward()\n"
        ),
        "lightning": "trainer = L.Trainer(precision=\"bf16-mixed\")\n",
    }
    examples = (
        Example({"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nbf16: true\n"}, U, "hf yaml"),
        Example(_FP32_TRAINER_WITH_PREDICTOR, N, "autocast only in a predictor that samples, FP16_Module built only under an off flag"),
        Example({"train.py": _HF_CONDITIONAL_DTYPE}, N, "a conditional torch_dtype whose HF bf16 switch nothing sets: loaded in FP32"),
        Example({"train.py": _HF_CONDITIONAL_DTYPE, "scripts/finetune.sh": "torchrun --nproc_per_node 8 train.py --bf16 True --output_dir out\n"},
                U, "the launch sets --bf16 True"),
        Example(_INFERENCE_BUILDER, N, "FP16 only in the inference builder and a weight tool that the training path never imports"),
        Example(_builder_on_path(), U, "the training script loads its model through that FP16 builder"),
        Example({**_FP32_TRAINER_WITH_PREDICTOR, "examples/train_glm.sh": "python pkg/trainer.py --fp16\n"}, U,
                "the launch passes the FP16 flag"),
        Example({"ds.json": '{\n  "train_batch_size": 64,\n  "bf16": {\n    "enabled": true\n  }\n}\n'}, U, "deepspeed json"),
        Example({"run.sh": "torchrun --nproc_per_node 8 train.py --bf16 True --output_dir out\n",
                 "train.py": "from transformers import HfArgumentParser, TrainingArguments\n"}, U, "launcher flag"),
        Example({"train.py": ALPACA_TRAIN, "README.md": ALPACA_README}, U,
                "a repository that ships no launch: its README's training command is the run, and passes --bf16 True"),
        Example({"train.py": ALPACA_TRAIN, "README.md": ALPACA_README, "scripts/train.sh": "torchrun --nproc_per_node=8 train.py --output_dir out\n"}, N,
                "the repository ships its own launch, without --bf16: a README command is not use"),
        Example({"train.py": "import lightning as L\ntrainer = L.Trainer(precision='bf16-mixed', devices=8)\n"}, U, "lightning"),
        Example({"train.py": "import torch\nscaler = torch.cuda.amp.GradScaler()\nwith torch.autocast('cuda', dtype=torch.float16):\n    loss = model(x)\n"}, U, "amp loop"),
        Example({"train.yaml": "bf16: false\nfp16: false\n"}, N, "disabled values"),
        Example({"train.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--bf16', action='store_true')\n",
                 "run.sh": "python train.py --lr 1e-4\n"}, N, "flag never passed"),
        Example({"train.yaml": "# bf16: true\nlr: 0.001\n"}, N, "commented out"),
        Example({"train.py": '"""We should try bf16 one day."""\nprint("fp16")\n'}, N, "keyword in strings"),
        Example({"train.py": "import torch\nmask = torch.full((8, 8), float('-inf'), dtype=torch.bfloat16)\nloss = model(x)\nloss.backward()\n"}, N, "tensor dtype is not training precision"),
        Example({"accelerate_config.yaml": "distributed_type: MULTI_GPU\nmixed_precision: fp8\n"}, U, "fp8 recipe runs bf16 autocast"),
        Example({"train.py": "import torch\nwith torch.autocast('cuda', dtype=torch.float16):\n    loss = model(x)\nloss.backward()\n"}, P, "fp16 without scaler"),
        Example({"examples/extras/pure_bf16/qwen2_full_sft.yaml": (
            "model_name_or_path: Qwen/Qwen2-1.5B-Instruct\nstage: sft\ndo_train: true\nfinetuning_type: full\n"
            "pure_bf16: true\nlearning_rate: 1.0e-5\n")}, U, "LLaMA-Factory pure_bf16"),
        Example({
            "examples/train_full/llama3_full_sft.yaml": (
                "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\nfinetuning_type: full\n"
                "deepspeed: examples/deepspeed/ds_z3_config.json\nbf16: true\n"),
            "examples/deepspeed/ds_z3_config.json": (
                '{\n  "train_batch_size": "auto",\n  "bf16": {\n    "enabled": false\n  },\n'
                '  "zero_optimization": {"stage": 3}\n}\n'),
        }, P, "recipe bf16 vs DeepSpeed bf16.enabled false"),
        Example({  # litgpt: the run's precision falls back to what the GPU supports
            "litgpt/utils.py": (
                "import torch\ndef get_default_supported_precision(training: bool) -> str:\n"
                "    if torch.cuda.is_available() and not torch.cuda.is_bf16_supported():\n"
                "        return '16-mixed' if training else '16-true'\n"
                "    return 'bf16-mixed' if training else 'bf16-true'\n"),
            "litgpt/pretrain.py": (
                "import lightning as L\nfrom litgpt.utils import get_default_supported_precision\n"
                "def setup(model_name: str, precision: Optional[str] = None, devices: int = 1):\n"
                "    precision = precision or get_default_supported_precision(training=True)\n"
                "    fabric = L.Fabric(devices=devices, precision=precision)\n    fabric.launch(main)\n"),
        }, U, "framework's default precision resolver"),
        Example({  # llm-foundry: the train config's precision defaults to Composer's amp_bf16
            "llmfoundry/utils/config_utils.py": (
                "from dataclasses import dataclass\n@dataclass\nclass TrainConfig:\n    max_duration: str = '1ep'\n"
                "    precision: str = 'amp_bf16'\n"),
            "llmfoundry/command_utils/train.py": (
                "from composer import Trainer\ndef train(train_cfg):\n"
                "    trainer = Trainer(model=model, max_duration=train_cfg.max_duration, precision=train_cfg.precision)\n    trainer.fit()\n"),
        }, U, "Composer amp_bf16 default"),
        Example({  # nanotron: ModelArgs.dtype defaults to None and __post_init__ fills it with bfloat16
            "src/nanotron/config/config.py": (
                "import torch\nfrom dataclasses import dataclass\nfrom typing import Optional\n"
                "@dataclass\nclass ModelArgs:\n    model_config: dict\n    dtype: Optional[torch.dtype] = None\n"
                "    def __post_init__(self):\n        if self.dtype is None:\n            self.dtype = torch.bfloat16\n"),
            "src/nanotron/trainer.py": (
                "from nanotron.models import build_model\nclass DistributedTrainer:\n    def init_model(self, config):\n"
                "        return build_model(model_builder=self.builder, dtype=config.model.dtype, parallel_context=self.pc)\n"),
        }, U, "config dataclass default dtype bf16"),
        Example({  # the resolver used only for generation (training=False) says nothing about training
            "litgpt/generate/base.py": (
                "import lightning as L\nfrom litgpt.utils import get_default_supported_precision\n"
                "def main(precision=None):\n    precision = precision or get_default_supported_precision(training=False)\n"
                "    fabric = L.Fabric(devices=1, precision=precision)\n"),
            "litgpt/pretrain.py": "import torch\ndef fit(model, batch):\n    loss = model(batch)\n    loss.backward()\n",
        }, N, "precision resolver only for generation"),
        Example({  # a dataclass that fills an unset dtype with float32 is FP32 training
            "config.py": (
                "import torch\nfrom dataclasses import dataclass\nfrom typing import Optional\n"
                "@dataclass\nclass ModelArgs:\n    dtype: Optional[torch.dtype] = None\n"
                "    def __post_init__(self):\n        if self.dtype is None:\n            self.dtype = torch.float32\n"),
            "trainer.py": "def init_model(config):\n    return build_model(dtype=config.model.dtype)\n",
        }, N, "config dataclass default dtype fp32"),
        Example({  # training arguments built as a dict; each precision only in its branch, and the default asks for bf16
            "llm/params.py": ("from typing import Optional\nfrom pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                              "    mixed_precision: Optional[str] = Field('bf16', title='fp16, bf16 or None')\n"),
            "llm/utils.py": ("def configure_training_args(config):\n    training_args = dict(output_dir='out', learning_rate=3e-5)\n"
                             "    if config.mixed_precision == 'fp16':\n        training_args['fp16'] = True\n"
                             "    if config.mixed_precision == 'bf16':\n        training_args['bf16'] = True\n    return training_args\n"),
        }, U, "precision branch the default takes"),
        Example({  # the same branches with no mixed precision by default: FP32 unless a run sets it
            "llm/params.py": ("from typing import Optional\nfrom pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                              "    mixed_precision: Optional[str] = Field(None, title='fp16, bf16 or None')\n"),
            "llm/utils.py": ("import torch\n\ndef configure_training_args(config):\n    training_args = dict(output_dir='out', learning_rate=3e-5)\n"
                             "    if config.mixed_precision == 'fp16':\n        training_args['fp16'] = True\n"
                             "    if config.mixed_precision == 'bf16':\n        training_args['bf16'] = True\n    return training_args\n\n"
                             "def cast(config, model):\n    for name, module in model.named_modules():\n"
                             "        if config.mixed_precision == 'bf16':\n            module = module.to(torch.bfloat16)\n"),
        }, N, "precision branches no setting takes"),
        Example(_autocast_lib(""), N, "autocast only when autocast_precision (None by default) is given"),
        Example(_autocast_lib(", autocast_precision=DType.bfloat16"), U, "the builder passes autocast_precision"),
        Example(_AMP_LOOP_BF16_MODEL, U, "FP16 amp loop with a GradScaler; one model autocasts to BF16 in its forward"),
        Example(_LEGACY_FIT, N, "autocast and GradScaler only under use_amp=False of a public legacy fit method nothing calls"),
        Example({**_LEGACY_FIT, "scripts/train_nli.py": (
            "from mylib.model import EmbeddingModel\n\nmodel = EmbeddingModel('bert-base-uncased')\n"
            "model.old_fit(train_objectives=[(loader, loss)], epochs=1, use_amp=True)\n")},
                U, "the same legacy loop called by a shipped script with use_amp=True"),
        Example({  # trinity-rft 0.6.0 utils/stream_saver.py: bytes per element of each safetensors dtype
            "myrl/utils/stream_saver.py": 'DTYPE_ELEMENT_SIZE: dict[str, int] = {\n    "F16": 2,\n    "BF16": 2,\n    "F32": 4,\n}\n',
            "myrl/train.py": "for batch in loader:\n    loss = model(batch)\n    loss.backward()\n    optimizer.step()\n",
        }, N, "a table of dtype sizes keyed BF16 is no precision switch"),
        Example(_SERVING_ARGS_FILES, N, "bf16 only in the evaluator's arguments and a flash-attn patch installed under an off flag"),
        Example({**_SERVING_ARGS_FILES, "mylib/args.py": _SERVING_ARGS_FILES["mylib/args.py"].replace("EvaluatorArguments", "TrainingConfig")}, U,
                "the same bf16 field default in the training config"),
        Example(_inference_reranker("# torch_dtype=torch.bfloat16,"), N,
                "bf16/fp16 only in the inference package's reranker (a model served under no_grad), the fine-tuning loader stays FP32"),
        Example(_inference_reranker("torch_dtype=torch.bfloat16,"), U, "the fine-tuning loader itself loads the model in BF16"),
        Example(_precision_helper("fp32"), N, "BF16 autocast only in an elif of an `or` of precision spellings; --precision defaults to fp32"),
        Example(_precision_helper("amp_bf16"), U, "the same helper with --precision defaulting to amp_bf16"),
        Example(_precision_helper("amp", handed_on=True), U,
                "the helper hands torch.cuda.amp.autocast on uncalled, for --precision's default amp: FP16 autocast"),
        Example(_precision_helper("fp32", handed_on=True), N, "the same helper, --precision defaulting to fp32"),
        Example(_HF_FP16_DRIVERS, N, "autocast only under the HF fp16 switch, which keeps transformers' default False"),
        Example({**_HF_FP16_DRIVERS, "scripts/train.sh": "torchrun --nproc_per_node 8 -m mylib.driver.train --fp16 --output_dir out\n"},
                U, "the launch turns the HF fp16 switch on"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list = []
        kinds: set[str] = set()
        disabled: list = []
        # a cast or a dtype keyword in a module no training entry point reaches (LLaVA's inference ``builder.py`` loading
        # in FP16, its ``apply_delta.py`` weight tool) is that code's precision, not the run's. Not an autocast, a scaler or
        # a mixed-precision policy: a training loop a task registry builds by name (LAVIS ``tasks/base_task.py``) is off
        # the import path and still the run's loop
        away: list = []

        def reached(xs: list) -> list:
            gone = unreached_sites(ctx, xs)
            away.extend(x for x in gone if x not in away)
            return [x for x in xs if x not in gone]

        # LLaMA-Factory ``pure_bf16: true``: the model is loaded and trained in BF16 (no fp32 master weights)
        for name in ("bf16", "fp16", "bf16_full_eval", "half", "amp", "use_amp", "mixed_precision_training", "pure_bf16"):
            # a count under that name is no switch (trinity-rft ``DTYPE_ELEMENT_SIZE = {"F16": 2, "BF16": 2, "F32": 4}``: bytes)
            eff = [s for s in f.effective(name) if not (isinstance(s.value, (int, float)) and not isinstance(s.value, bool)
                                                      and s.value not in (0, 1))]
            hits = reached([h for h in on(eff) if not _branch_off(f, h)])
            if hits:
                used += hits
                kinds.add("fp16" if name in ("fp16", "half") else "bf16" if "bf16" in name else "amp")
            disabled += off(eff)
            if name in ("bf16", "fp16"):  # axolotl `bf16: auto`: BF16 whenever the GPU has it
                autos = [s for s in eff if s.source == "config" and isinstance(s.value, str) and s.value.lower() == "auto" and "." not in s.key]
                used += autos
                kinds |= {name} if autos else set()
        for e in [*f.config("bf16.enabled", "fp16.enabled", "amp.enabled"), *ds_builder_entries(f, "bf16.enabled", "fp16.enabled")]:
            t = truthy(e.value)
            if t:
                used.append(e)
                kinds.add(e.keys[-2] if isinstance(e.keys[-2], str) else "amp")
            elif t is False:
                disabled.append(e)
        call_kinds: set[str] = set()
        # (HALOs ``policy_dtype: bfloat16``: the trained policy's parameters and optimizer state)
        for s in f.effective("mixed_precision", "precision", "dtype", "torch_dtype", "compute_dtype", "param_dtype", "mixed_precision_dtype",
                             "policy_dtype"):
            if s.source == "call" and s.key.split("(", 1)[0] in _TENSOR_FACTORIES:
                continue
            if s.source == "call" and s.key.split("(", 1)[0].rsplit(".", 1)[-1] in _MATMUL_OPS:
                continue  # one product's accumulation precision (axlearn's kernel: ``jax.lax.dot(..., precision="float32")``)
            if s.source == "config" and _AUX_SECTION.search(s.key):
                continue  # HALOs ``reward_model: {dtype: float32}``: an auxiliary scorer's weights, not the policy's training
            if _serving_field(s) or _inference_load(f, s):
                continue  # ``EvaluatorArguments.mixed_precision = "bf16"``: the evaluation/inference pipeline's precision (J4's)
            if s.source == "call" and aux_model_site(f, s.path, s.line, s.text):
                continue  # ``reward_model = LMForRewardModel(path, dtype=torch.float16)``: a frozen scorer's weights, not the run's
            low = _is_low_dtype(s.value)
            arm = _chosen_arm(f, s) if low and isinstance(s.value, Expr) else None
            if arm is not None:
                low = _is_low_dtype(arm)  # ``torch.bfloat16 if training_args.bf16 else None`` with bf16 off: None, FP32
            if low and s.source == "call" and _call_gated(f, s):
                continue  # open_clip ``convert_weights_to_lp(model, dtype=torch.bfloat16)`` under ``if precision == 'bf16':``
            if low and not reached([s]):
                continue
            if low:
                used.append(s)
                # a dtype passed to a call (``self.maybe_autocast(dtype=torch.bfloat16)`` in one model's forward) is that
                # call's choice; it names the run's precision only when the loop's own autocast does not
                (call_kinds if s.source == "call" else kinds).add(low)
            elif isinstance(s.value, str) and s.value.lower() in {"no", "fp32", "32", "32-true", "float32"}:
                if s.source == "call" and s.name == "dtype" and s.key.split("(", 1)[0].rsplit(".", 1)[-1] not in _FP32_DTYPE_CALLS:
                    # a tensor's or an input's dtype (MAP-NEO's bundled PaddleOCR: ``paddle.cast(mask, dtype='float32')``,
                    # ``InputSpec([None, 3, 32, 100], dtype='float32')``), not the run's precision
                    continue
                disabled.append(s)
        defaults = _default_precision(f)
        if defaults:
            used += defaults
            kinds.add("bf16")
        if ctx.project.notes.get("jax_training"):
            # a JAX trainer's compute dtype set on its config object (axlearn ``cfg.train_dtype = STEP_DTYPE`` with
            # ``STEP_DTYPE = jnp.bfloat16``): the step runs in it over float32 parameters
            for a in f.attr_assigns("train_dtype", "compute_dtype"):
                if (low := _is_low_dtype(a.value)) and not _TEST_FILE.search(a.path):
                    used.append(a)
                    kinds.add(low)
        for c in f.calls("Trainer", "Fabric", "Accelerator"):
            v = c.kwargs.get("precision", c.kwargs.get("mixed_precision"))
            if v is not None and (str(v).lower() in _LIGHTNING_MIXED or _is_low_dtype(v)):
                used.append(c)
                kinds.add(_is_low_dtype(v) or "fp16")
        # autocast / FSDP mixed-precision policies under a switch that is off (``if self.autocast_precision is not None:``
        # with ``autocast_precision = None``; ``MixedPrecisionPolicy`` inside an ``apply_fsdp`` only called when
        # ``dp_config is not None``) are not in effect
        gated: list = []

        def live(c: Any) -> bool:
            gate = guard_off(f, c) or callers_off(f, c, hops=3) or _hf_precision_flag_off(f, c)
            gated.extend(g for g in gate if g not in gated)
            return not gate

        autocast = [c for c in f.calls(*_AUTOCASTS)
                    if truthy(c.kwargs.get("enabled", True)) is not False and not _inference_file(f, c.path) and live(c)]
        # the autocast handed on uncalled, for the caller to enter (Multimodal-GPT ``get_autocast``: ``if precision == "amp":
        # return torch.cuda.amp.autocast``, then ``with autocast():`` in the loop), read like a call without keywords
        autocast += [r for r in f.refs(*_AUTOCASTS) if not _inference_file(f, r.path) and live(r)]
        # a GradScaler under an off switch (``if use_amp: scaler = torch.amp.GradScaler()`` with ``use_amp: bool = False``) is not
        # in effect either when no autocast is left in effect; beside a live autocast it belongs to that FP16 loop (LAVIS
        # ``if amp:`` read off by the recipe vote while ``autocast(enabled=use_amp)`` runs)
        scaler = f.calls("GradScaler", "ShardedGradScaler")
        if not autocast:
            scaler = [c for c in scaler if live(c)]
        mp_policy = [c for c in f.calls("MixedPrecision", "MixedPrecisionPolicy") if live(c)]
        # a policy whose dtype comes from a setting that every config leaves null and no launch sets (the DPO reference's
        # ``mp_dtype = getattr(torch, config.model.fsdp_policy_mp) if ... else None`` with ``fsdp_policy_mp: null``): FP32
        from_setting = {id(c): x for c in mp_policy if (x := _policy_dtype_setting(f, c))}
        mp_null = {id(c): x[0] for c in mp_policy if id(c) in from_setting and not from_setting[id(c)][1]}
        mp_policy = [c for c in mp_policy if id(c) not in mp_null]
        # ... that only some runs set (2 of the DPO README's 6 commands pass ``model.fsdp_policy_mp=bfloat16``)
        mp_some = [(c, from_setting[id(c)]) for c in mp_policy if id(c) in from_setting]
        halves = reached([c for c in f.calls("half", "bfloat16") if (c.name.startswith("?") or "." in c.name) and not guard_off(f, c)
                          and not _inference_file(f, c.path) and not _ROPE_TABLE.match(c.text) and not callers_off(f, c, hops=3)
                          and not _HOST_CAST.search(c.text)])
        # ``module.to(torch.bfloat16)`` under ``if config.mixed_precision == "bf16":`` runs only when a setting takes that branch
        to_low = reached([c for c in f.calls("to") if (any(_is_low_dtype(a) for a in c.args if isinstance(a, Expr)) or _is_low_dtype(c.kwargs.get("dtype", "")))
                          and not guard_off(f, c) and not _operand_cast(c) and not patch_installed_off(f, c) and not _inference_file(f, c.path)
                          and not _HOST_CAST.search(c.text)])
        for c in autocast:
            kw = getattr(c, "kwargs", _NO_KW)
            if "dtype" in kw:  # a dtype from a variable (``autocast(dtype=dtype)``) says nothing by itself
                kind = _is_low_dtype(kw.get("dtype", "")) or ("" if isinstance(kw.get("dtype"), Expr) else "bf16")
            else:  # no dtype: float16 on CUDA (``torch.cuda.amp.autocast(enabled=use_amp)``), bfloat16 on CPU
                args = getattr(c, "args", ())
                device = kw.get("device_type", args[0] if args else "cuda")
                kind = "bf16" if c.name.startswith("torch.cpu.") or device == "cpu" else "fp16"
            if kind:
                kinds.add(kind)
        used += autocast + scaler + mp_policy + halves + to_low
        if mp_policy:
            kinds.add("bf16")
        # casts of weights or tensors (``param.data = param.data.bfloat16()`` for one frozen model, ``.to(torch.float16)``
        # after an fp32 softmax) are those modules' choices, like a call's dtype: ``.half()`` is FP16, ``.bfloat16()`` BF16
        call_kinds |= {"bf16" if c.short == "bfloat16" else "fp16" for c in halves}
        for c in to_low:
            call_kinds.add(next((k for a in c.args if isinstance(a, Expr) and (k := _is_low_dtype(a))), None)
                           or _is_low_dtype(c.kwargs.get("dtype", "")) or "bf16")
        # a scaler built only for the FP16 branch (nanoGPT ``GradScaler(enabled=(dtype == 'float16'))`` beside ``dtype =
        # 'bfloat16' if torch.cuda.is_bf16_supported() else 'float16'``; nanochat ``GradScaler() if COMPUTE_DTYPE ==
        # torch.float16 else None``) is the fallback for GPUs without BF16: the loop's precision is BF16 where it can be
        firm = [c for c in scaler if not _fp16_branch(c)]
        if firm:
            kinds.add("fp16")
        elif scaler and not kinds & {"bf16", "fp16"} and not call_kinds - {"bf16"}:
            kinds.add("bf16")
        loop_kinds = set(kinds)
        if not (firm and "fp16" in kinds and "bf16" not in kinds):
            kinds |= call_kinds  # a GradScaler with an FP16 autocast is an FP16 loop, whatever dtype one model's code casts to
        if mp_some and all(x in mp_policy for x in used):  # that policy is the only mixed precision in sight
            c, (nulls, setters, runs) = mp_some[0]
            x, y = nulls[0], setters[0]
            where = f"{y.path}:{y.line}" + (f" (+{len(setters) - 1})" if len(setters) > 1 else "")
            keys = [next(str(k) for k in y.script_args if str(k).lstrip("-").rsplit(".", 1)[-1] == x.name) for y in setters[:3]]
            cited = [Facts.ev(y, key=k if k.startswith("-") else "--" + k, value=y.script_args[k]) for y, k in zip(setters, keys)]
            return Outcome(P, [*evs([c]), *cited, *evs(nulls[:2])],
                           f"BF16 only in the {len(setters)} of {runs} runs that set `{x.name}` ({where}): FSDP's {c.short}() at "
                           f"{c.path}:{c.line} takes its dtype from it, and every config leaves it null ({x.path}:{x.line}), "
                           "so the other runs train in FP32", {"precision": "bf16", "recipes.precision": f"bf16: {len(setters)}, fp32: {runs - len(setters)}"})
        if not used and mp_null and not disabled:
            c, nulls = next((c, mp_null[id(c)]) for c in f.calls("MixedPrecision", "MixedPrecisionPolicy") if id(c) in mp_null)
            x = nulls[0]
            return Outcome(N, evs([c, *nulls[:3]]), f"FSDP's {c.short}() at {c.path}:{c.line} takes its dtype from "
                           f"`{x.name}`, which every config leaves null ({x.path}:{x.line}"
                           f"{f' (+{len(nulls) - 1})' if len(nulls) > 1 else ''}) and no launch sets: FP32 unless a run "
                           f"passes `{x.name}=bfloat16`", {"precision": "fp32"})
        if not used and not disabled and not gated:
            # an ``Accelerator()`` that leaves the precision to how it is launched (Lemur's ``xchat/train/train.py``, an
            # accelerate ``no_trainer`` script): ``accelerate launch --mixed_precision`` or the machine's ``accelerate config``
            # decide it, and the repository ships no launch, or only ``accelerate launch`` without either
            # (a script's own loop, the one the user runs, backward through the accelerator; not a library's trainer class,
            # whose default the library's users keep unless they set it: pytorch_accelerated, lm-buddy)
            accel = [c for c in f.calls("Accelerator") if "mixed_precision" not in c.kwargs and c.path in ctx.project.training_files
                     and f.entry_point(c.path) and not class_at(f, c.path, c.line)
                     and any(b.path == c.path and "accelerator" in b.name.lower() for b in f.calls("backward"))]
            launches = f.launches()
            if accel and all(x.launcher == "accelerate" and not {"mixed_precision", "config_file"} & set(x.launcher_args) for x in launches):
                c = accel[0]
                how = ("the repository ships no launch" if not launches else
                       "its `accelerate launch` commands pass neither `--mixed_precision` nor `--config_file`")
                return Outcome(Status.NA, evs([c]), f"not judged: Accelerator() at {c.path}:{c.line} takes its precision from "
                               f"how it is launched, and {how}: check the run's `--mixed_precision` (or the `mixed_precision` of "
                               "the accelerate config on the training machine)", {"precision": None})
        if not used:
            detail = off_detail(disabled, "mixed precision") if disabled else "no BF16/FP16 training setting found"
            if away and not disabled and not gated:
                detail += "; " + unreached_note(f, away, "half-precision casts and dtype keywords")
            if not disabled and gated:
                x = gated[0]
                detail = (f"mixed-precision code (autocast / FSDP MixedPrecisionPolicy) runs only under a switch that is off: "
                          f"{getattr(x, 'key', None) or getattr(x, 'name', '')} = {getattr(x, 'value', None)} at {x.path}:{x.line}"
                          + (f" (a parameter of {x.func}() that nothing in the project passes)" if isinstance(x, ParamDefault) else "")
                          + (" (transformers' default; nothing in the project sets it)"
                             if isinstance(x, Setting) and x.key.startswith("TrainingArguments.") and x.rank == 0 else ""))
                return Outcome(N, evs(gated), detail, {"precision": "fp32"})
            # a precision switch left at transformers' default beside an explicit fp32 setting: both are the evidence
            hf_off = [x for x in gated if isinstance(x, Setting) and x.key.startswith("TrainingArguments.") and x.rank == 0]
            return Outcome(N, evs(disabled + hf_off), detail, {"precision": "fp32"})
        only_manual_fp16 = autocast and not scaler and all(_is_low_dtype(getattr(c, "kwargs", _NO_KW).get("dtype", "")) == "fp16"
                                                           for c in autocast) and not (
            on(f.effective("fp16", "bf16")) or f.config("fp16.enabled", "bf16.enabled") or mp_policy
        )
        precision = "bf16" if "bf16" in kinds else "fp16"
        if only_manual_fp16:
            return Outcome(P, evs(autocast), "FP16 autocast without a GradScaler: gradients may underflow", {"precision": "fp16"})
        if precision == "bf16" and lacks_bf16_fa2(ctx.project.hardware):
            bf = [x for x in used if "bf16" in str(getattr(x, "key", "")).lower() or "bf16" in str(getattr(x, "value", "")).lower()
                  or "bfloat16" in getattr(x, "text", "")] or used
            findings = [f.ev(x) for x in bf]
            return Outcome(P, findings, f"BF16 is set, but the target GPU ({ctx.project.hardware.upper()}) has no BF16 Tensor Cores: "
                           "it runs emulated and slow, or fails; use FP16 with loss scaling instead (fp16: true / GradScaler)",
                           {"precision": "bf16", "hardware_supports_bf16": False}, findings=findings)
        clash = _ds_precision_clash(f)
        if clash:
            recipe, ds = clash[0]
            findings = [f.ev(recipe), f.ev(ds)]
            return Outcome(P, findings, f"{recipe.path} sets {recipe.key}: true but its DeepSpeed config {ds.path} has "
                           f"{ds.dotted}: false; the HF Trainer refuses this mismatch at launch", {"precision": precision}, findings=findings)
        if defaults and len(used) == len(defaults):
            d = defaults[0]
            how = (f"`{d.text}` resolves the precision from the GPU when the run does not set one (BF16 mixed where the GPU "
                   "supports it, FP16 mixed otherwise)" if isinstance(d, Call) else
                   f"the config dataclass fills an unset dtype with BF16 (`{d.text}`)")
            return Outcome(U, [f.ev(x) for x in used], f"BF16 mixed precision by default: {how} ({d.path}:{d.line})",
                           {"precision": "bf16", "precision_default": True})
        if firm and {"bf16", "fp16"} <= loop_kinds:
            picked = _launched_precisions(used)
            if picked == {"bf16"}:
                # the launches and recipes all ask for BF16 (InternVL's 20+ scripts pass ``--bf16 True``); the FP16 loop with
                # its GradScaler is another sub-project's (its image-classification trainer)
                g = firm[0]
                return Outcome(U, [f.ev(x) for x in used], f"BF16 mixed precision (every launch or recipe that sets a precision "
                               f"sets BF16; an FP16 loop with a GradScaler also exists at {g.path}:{g.line})", {"precision": "bf16"})
            # an FP16 loop with its GradScaler beside BF16 autocast (Composer's ``get_precision_context``: ``amp_fp16`` ->
            # ``autocast('cuda')``, ``amp_bf16`` -> ``autocast(dtype=torch.bfloat16)``): which one runs is the run's choice
            return Outcome(U, [f.ev(x) for x in used], "mixed precision: an FP16 path with a GradScaler and a BF16 path are both "
                           "in the code; the run's precision setting picks one", {"precision": precision})
        by_kind = _precision_files(used)
        if len(by_kind.get("bf16", ())) and len(by_kind.get("fp16", ())):
            # the launches differ (TinyLLaVA: ``--fp16 True`` in 11 scripts, the README's among them, ``--bf16 True`` in the two
            # Qwen2 ones): the precision most of them run, and the others named
            major, minor = ("fp16", "bf16") if len(by_kind["fp16"]) > len(by_kind["bf16"]) else ("bf16", "fp16")
            n_major, n_minor = len(by_kind[major]), len(by_kind[minor])
            names = ", ".join(sorted(by_kind[minor])[:3]) + (", ..." if n_minor > 3 else "")
            first = [x for x in used if getattr(x, "path", None) in by_kind[major]]
            return Outcome(U, [f.ev(x) for x in first + [x for x in used if x not in first]],
                           f"{major.upper()} mixed precision in {n_major} of {n_major + n_minor} launches or recipes that set one "
                           f"({minor.upper()} in {n_minor}: {names})", {"precision": major})
        launched = [x for x in used if _launched_precisions([x]) == {"fp16"}]
        bf16_code = [x for x in used if x not in launched and (_is_low_dtype(getattr(x, "value", None)) == "bf16" or any(
            w in str(getattr(x, "text", "")).lower() for w in ("bf16", "bfloat16")))]
        if precision == "bf16" and _launched_precisions(used) == {"fp16"} and bf16_code and all(
                isinstance(x, Setting) and x.name.rsplit(".", 1)[-1] in ("torch_dtype", "dtype") for x in bf16_code):
            # the launches ask for FP16 (LLM-Blender's ``train_ranker.sh``: ``fp16=True`` ... ``--fp16 ${fp16}``) and BF16 is
            # only a dtype in code (its fuser's ``GenFuserConfig.torch_dtype = "bfloat16"`` field default): the run's is FP16.
            # (Not beside a precision the code itself chooses: EAGLE's ``Accelerator(mixed_precision='bf16')``.)
            code = bf16_code[0]
            where = f"; BF16 appears only as a dtype in code ({code.path}:{code.line})"
            return Outcome(U, [f.ev(x) for x in launched + [x for x in used if x not in launched]],
                           f"FP16 mixed precision (every launch or recipe that sets a precision sets FP16{where})", {"precision": "fp16"})
        return Outcome(U, [f.ev(x) for x in used], f"{precision.upper()} mixed precision", {"precision": precision})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if not ctx.project.does_training:
            return None  # a serving-only project: inference precision is J4's and the engine's business
        return super().recommendation_priority(ctx, outcome)


#: a checkpoint converter's script (Pai-Megatron-Patch ``toolkits/model_checkpoints_convertor/.../hf2mcore_convertor.sh``):
#: the precision it writes weights in, not a training run's
_CONVERTER_SCRIPT = lazy_compile(r"(?i)convert")


def _precision_files(used: list[Any]) -> dict[str, set[str]]:
    """The launch scripts and recipe files among ``used`` by the one precision each turns on ("bf16" or "fp16"); a file
    that turns on both, or sets it otherwise, is left out."""
    kinds: dict[str, set[str]] = {}
    for x in used:
        k: str | None = None
        if isinstance(x, ConfigEntry) and len(x.keys) >= 2 and x.keys[-1] == "enabled" and x.keys[-2] in ("bf16", "fp16"):
            k = str(x.keys[-2]) if truthy(x.value) is True else None  # a DeepSpeed config's ``"bf16": {"enabled": true}``
        elif isinstance(x, Setting) and x.source in ("launcher", "config"):
            # (axolotl's ``bf16: auto``: BF16 wherever the GPU has it)
            on = truthy(x.value) is True or (x.name == "bf16" and str(x.value).strip().lower() == "auto")
            k = ("fp16" if x.name in ("fp16", "half") else "bf16" if x.name == "bf16" else None) if on else None
        if k is not None and not _CONVERTER_SCRIPT.search(x.path):
            kinds.setdefault(x.path, set()).add(k)
    out: dict[str, set[str]] = {}
    for path, ks in kinds.items():
        if len(ks) == 1:
            out.setdefault(next(iter(ks)), set()).add(path)
    return out


def _launched_precisions(used: list[Any]) -> set[str]:
    """The precisions that launch flags and recipe files among ``used`` ask for ("bf16", "fp16"): empty when none does."""
    out: set[str] = set()
    for x in used:
        if isinstance(x, ConfigEntry) and len(x.keys) >= 2 and x.keys[-1] == "enabled" and x.keys[-2] in ("bf16", "fp16"):
            out.add(str(x.keys[-2]))  # a DeepSpeed config's ``"fp16": {"enabled": true}``
            continue
        if not (isinstance(x, Setting) and x.source in ("launcher", "config")):
            continue
        if x.name in ("fp16", "half"):
            out.add("fp16")
        elif "bf16" in x.name:
            out.add("bf16")
        elif (k := _is_low_dtype(x.value)) in ("bf16", "fp16"):
            out.add(k)
    return out


#: a framework's resolver of the default training precision (litgpt ``get_default_supported_precision(training=True)``:
#: "bf16-mixed" where the GPU supports BF16, "16-mixed" otherwise)
_PRECISION_RESOLVER = lazy_compile(r"(default|supported)\w*precision|precision\w*(default|supported)|supported\w*dtype", re.I)
_PRECISION_TARGET = lazy_compile(r"^\s*(self\.)?\w*(precision|dtype)\w*\s*(:[^=]+)?=[^=]")
#: a config section of a model the run does not train (a reward model, the reference policy, a critic's scorer, a teacher)
_AUX_SECTION = lazy_compile(r"(^|\.)(reward_model|reward|rm|ref_model|reference_model|reference|teacher|judge|scorer)\.", re.I)
_DTYPE_NAMES = ("dtype", "torch_dtype", "param_dtype", "compute_dtype", "precision", "mixed_precision")


def _default_precision(f: Facts) -> list[Any]:
    """Where the training precision defaults to BF16/FP16 mixed although no run config names it:

    * a precision resolver assigned to the run's precision (``precision = precision or
      get_default_supported_precision(training=True)``); ``training=False`` (generation) is not training;
    * a config dataclass that fills an unset dtype in ``__post_init__`` (nanotron ``ModelArgs``: ``dtype: Optional[torch.dtype]
      = None``, then ``if self.dtype is None: self.dtype = torch.bfloat16``), read by a call of the project
      (``dtype=config.model.dtype``).
    """
    out: list[Any] = []
    for c in f.calls_where(lambda s: bool(_PRECISION_RESOLVER.search(s))):
        if c.name.startswith("torch.") or truthy(c.kwargs.get("training", True)) is False:
            continue
        if _PRECISION_TARGET.match(c.text) and not _TEST_FILE.search(c.path):
            out.append(c)
    for name in _DTYPE_NAMES:
        for a in f.attr_assigns(name):
            if a.func != "__post_init__" or a.target != f"self.{name}" or not _is_low_dtype(a.value) or _TEST_FILE.search(a.path):
                continue
            if not any(x.path == a.path and x.default is None for x in f.fields(name)):
                continue  # not the default of this class's own field
            readers = [c for c in f.calls_with_kw(name) if isinstance(c.kwargs.get(name), Expr) and c.kwargs[name].ref == name
                       and c.func != "__post_init__" and not _TEST_FILE.search(c.path)]
            if readers:
                out.append(a)
    return out


_TEST_FILE = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$")


def _ds_precision_clash(f: Facts) -> list[tuple[Any, Any]]:
    """(recipe setting, DeepSpeed entry) where a YAML recipe turns ``bf16``/``fp16`` on and names (``deepspeed: ds.json``)
    a DeepSpeed JSON whose ``bf16.enabled``/``fp16.enabled`` is false: HF fills ``"auto"`` from the recipe but raises
    on an explicit value that contradicts it."""
    out: list[tuple[Any, Any]] = []
    for ref in f.config("deepspeed"):
        if not isinstance(ref.value, str) or not ref.value.endswith(".json"):
            continue
        base = ref.value.rsplit("/", 1)[-1]
        targets = [p for p in f.paths_named(base) if ref.value.endswith(p) or p.endswith(ref.value.lstrip("./"))] or f.paths_named(base)
        if len(targets) != 1:
            continue  # several files of that name: which one the launch reads is not known
        for name in ("bf16", "fp16"):
            recipe = [e for e in f.config(name) if e.path == ref.path and truthy(e.value) is True and len(e.keys) == 1]
            ds = [e for e in f.config(f"{name}.enabled") if e.path == targets[0] and truthy(e.value) is False]
            if recipe and ds:
                out.append((recipe[0], ds[0]))
    return out


# --- C2 FP8 -------------------------------------------------------------------

#: GPUs without FP8 Tensor Cores (FP8 needs Ada sm_89 or Hopper sm_90 and newer)
_NO_FP8_GPU = lazy_compile(r"\b(v100|a100|a800|a10g?|a30|a40|a16|a2|a6000|a5000|a4000|rtx\s*a\d+|t4|p100|p40|p4|k80|m60|3090|3080|2080|titan\w*|mi100|mi210|mi250x?)\b", re.I)
_FP8_GPU = lazy_compile(r"\b(h100|h200|h800|h20|gh200|b100|b200|gb200|b300|l4|l40s?|4090|rtx\s*6000\s*ada|mi300x?|mi325x?|mi355x?)\b", re.I)
_FP8_FORMATS = {"e4m3", "hybrid", "e5m2", "fp8", "mxfp8", "float8"}
_TE_AUTOCAST = ("fp8_autocast", "autocast")
#: a converter/config a registry recipe lists to train in FP8 (``Float8LinearConverter.Config``, ``MXFP8LinearConverter.Config``)
_FP8_RECIPE = lazy_compile(r"(?i)(float8|fp8)\w*\.?\w*$")


def _te_helper(recipe: str = "") -> dict[str, str]:
    """NeMo AutoModel 0.7: a TE FP8 context built in a config helper the recipe enters only when its ``te_fp8`` is set."""
    files = {
        "pkg/config.py": ("from dataclasses import dataclass\n\nimport transformer_engine.pytorch as te\n\n\n@dataclass\n"
                          "class TEFp8Config:\n    recipe: str = 'tensorwise'\n\n    def maybe_te_autocast(self):\n"
                          "        return te.fp8_autocast(enabled=True)\n\n\n@dataclass\nclass BackendConfig:\n"
                          "    attn: str = 'sdpa'\n    te_fp8: TEFp8Config | None = None\n"),
        "pkg/recipe.py": ("import contextlib\nfrom pkg.config import BackendConfig, TEFp8Config\n\n\nclass Recipe:\n"
                          "    def __init__(self, backend: BackendConfig):\n        self.te_fp8 = backend.te_fp8\n\n"
                          "    def _forward_backward_step(self, model, batch):\n"
                          "        ctx = self.te_fp8.maybe_te_autocast() if self.te_fp8 is not None else contextlib.nullcontext()\n"
                          "        with ctx:\n            loss = model(**batch).loss\n        loss.backward()\n"),
    }
    if recipe:
        files["examples/llama_fp8.yaml"] = recipe
    return files


def _float8_lib(builder_kwargs: str) -> dict[str, str]:
    """OLMo-core's shape: ``convert_to_float8_training`` two calls below ``parallelize_model``, which runs it only when the
    train-module config's ``float8_config`` (``None`` by default) is given; the shipped builder passes ``builder_kwargs``."""
    return {
        "mylib/float8/__init__.py": (
            "from dataclasses import dataclass\nfrom torchao.float8 import convert_to_float8_training\n\n"
            "@dataclass\nclass Float8Config:\n    enabled: bool = True\n\n"
            "    def apply_float8_linear(self, model):\n        convert_to_float8_training(model)\n"),
        "mylib/nn/transformer/model.py": (
            "import torch.nn as nn\n\nclass Transformer(nn.Module):\n"
            "    def apply_fp8(self, float8_config):\n        float8_config.apply_float8_linear(self)\n"),
        "mylib/train/train_module/transformer/common.py": (
            "def parallelize_model(model, *, float8_config=None):\n"
            "    if float8_config is not None and float8_config.enabled:\n        model.apply_fp8(float8_config)\n"
            "    return model\n"),
        "mylib/train/train_module/transformer/config.py": (
            "from dataclasses import dataclass\nfrom typing import Optional\nfrom mylib.float8 import Float8Config\n"
            "from .common import parallelize_model\n\n"
            "@dataclass\nclass TransformerTrainModuleConfig:\n    rank_microbatch_size: int\n"
            "    float8_config: Optional[Float8Config] = None\n\n"
            "    def build(self, model):\n        return parallelize_model(model, float8_config=self.float8_config)\n"),
        "mylib/internal/experiment.py": (
            "from mylib.float8 import Float8Config\n"
            "from mylib.train.train_module.transformer.config import TransformerTrainModuleConfig\n\n"
            "def build_train_module_config():\n"
            f"    return TransformerTrainModuleConfig(rank_microbatch_size=8192{builder_kwargs})\n"),
    }


_MODEL_NAME = lazy_compile(r"(^|\.)(model|models|module|net|network|policy|actor|critic|transformer|llm|lm|backbone|encoder|decoder|unet|self)$", re.I)


def _operand_cast(c: Any) -> bool:
    """``self._gmm(x.to(torch.bfloat16), w.to(torch.bfloat16), ...)``: a tensor cast inline as another call's argument feeds one
    kernel its operand dtype; it is not the training precision (``model = model.to(torch.bfloat16)`` is)."""
    recv = c.name[:-3].lstrip("?") if c.name.endswith(".to") else ""
    if not recv or _MODEL_NAME.search(recv):
        return False
    return re.search(rf"[(,]\s*{re.escape(recv)}\.to\(", c.text or "") is not None


def _derived_fp8(flag: str) -> dict[str, str]:
    """Megatron-DeepSpeed-shaped: the transformer's ``self.use_fp8`` is ``args.fp8_e4m3 or args.fp8_hybrid`` (store_true
    options) and gates TransformerEngine's ``fp8_autocast``; the launch passes ``flag``."""
    return {
        "megatron/arguments.py": (
            "import argparse\n\n\ndef _add_training_args(parser):\n    group = parser.add_argument_group(title='training')\n"
            "    group.add_argument('--fp8-e4m3', action='store_true', help='E4M3 TransformerLayer', dest='fp8_e4m3')\n"
            "    group.add_argument('--fp8-hybrid', action='store_true', help='Hybrid FP8 TransformerLayer', dest='fp8_hybrid')\n"
            "    return parser\n"),
        "megatron/model/transformer.py": (
            "from contextlib import nullcontext\n\nimport torch\nimport transformer_engine\n\nfrom megatron import get_args\n\n\n"
            "class ParallelTransformer(torch.nn.Module):\n    def __init__(self, config):\n        super().__init__()\n"
            "        args = get_args()\n        self.use_fp8 = args.fp8_e4m3 or args.fp8_hybrid\n\n"
            "    def forward(self, hidden_states):\n        with transformer_engine.pytorch.fp8_autocast(\n"
            "            enabled=self.use_fp8,\n            fp8_recipe=self.fp8_recipe,\n        ) if self.use_fp8 else nullcontext():\n"
            "            for layer in self.layers:\n                hidden_states = layer(hidden_states)\n        return hidden_states\n"),
        "examples/pretrain_gpt.sh": (
            "deepspeed pretrain_gpt.py --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 --bf16"
            f"{flag}\n"),
    }


#: the number formats a lookup table is keyed by (LLMs-from-scratch ``DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}``)
_FORMAT_KEYS = ("fp32", "float32", "bf16", "bfloat16", "fp16", "float16", "int8", "int4", "fp64")


def _dtype_table(f: Facts, s: Setting) -> bool:
    """An entry of a mapping whose other keys are number formats too (a memory estimator's bytes per element): the key
    names a format the table describes, and its value (``1`` byte) is no switch."""
    owner, dot, _ = s.key.rpartition(".")
    if not dot or s.source not in ("config", "assign"):
        return False
    return any(x.path == s.path and x.key.rpartition(".")[0] == owner for x in f.settings(*_FORMAT_KEYS))


def fp8_sites(f: Facts) -> tuple[list, list, set[str]]:
    """(sites that turn FP8 training on, sites that turn it off, backends)."""
    used: list = []
    off_: list = []
    kinds: set[str] = set()
    for c in f.calls("transformer_engine.*"):
        if c.short not in _TE_AUTOCAST:
            continue
        state = value_on(f, c.kwargs["enabled"]) if "enabled" in c.kwargs else True  # TE >= 1.0 defaults to enabled
        # as for torchao below: a context built in a helper only called under a switch that is off (NeMo AutoModel's
        # ``TEFp8Config.maybe_te_autocast()``, entered only ``if self.te_fp8 is not None:``, ``te_fp8`` None by default)
        if state is False or guard_off(f, c) or helper_callers_off(f, c, hops=3):
            off_.append(c)
        else:
            used.append(c)
            kinds.add("transformer-engine")
    for s in f.effective("mixed_precision", "precision", "mixed_precision_dtype"):
        v = str(s.value).lower() if isinstance(s.value, str) else ""
        if v == "fp8" or v.startswith("transformer-engine"):
            used.append(s)
            kinds.add("accelerate" if s.name == "mixed_precision" else "transformer-engine")
    for c in f.calls("Trainer", "Fabric", "Accelerator"):
        v = c.kwargs.get("precision", c.kwargs.get("mixed_precision"))
        if isinstance(v, str) and (v.lower() == "fp8" or v.lower().startswith("transformer-engine")):
            used.append(c)
            kinds.add("transformer-engine")
    for s in f.effective("fp8", "fp8_format", "fp8_e4m3", "fp8_hybrid", "use_fp8", "enable_fp8", "fp8_training", "use_fp8_training"):
        v = s.value
        if s.source in ("assign", "field-default") and isinstance(v, str) and v.lower() == s.name.lower():
            continue  # ``FP8 = "fp8"``: an enum member or constant naming the value, not a choice of it
        if _dtype_table(f, s):
            continue  # ``DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp8": 1}``: a table keyed by number format, not a switch
        if (isinstance(v, str) and v.lower() in _FP8_FORMATS) or truthy(v) is True:
            used.append(s)
            # (a launch flag is Megatron's ``--fp8-format`` only in a Megatron project: nanochat's ``--fp8`` is its own)
            kinds.add(("megatron" if f.imports("megatron") else "launch flag") if s.source == "launcher" else "config")
        elif truthy(v) is False and s.rank > 0:
            off_.append(s)
    for s in f.effective("converters", "model.converters"):
        vals = s.value if isinstance(s.value, tuple) else (s.value,)
        if any(isinstance(x, str) and "float8" in x.lower() for x in vals):
            used.append(s)
            kinds.add("torchao")
    for c in f.calls("convert_to_float8_training", "torchao.float8.*", "msamp.initialize", "torch._scaled_mm"):
        # a call under a switch that is off, or in a helper only called under one (``m.apply_fp8(...)`` only when
        # ``float8_config is not None``, ``float8_config = None`` by default), is not FP8 training
        # the scale precompute after an optimizer step presupposes Float8 modules; it does not convert any
        if (c.short in {"Float8LinearConfig", "ScalingType", "CastConfig"} or c.short.startswith("precompute_float8")
                or guard_off(f, c) or callers_off(f, c, hops=3)):
            continue
        used.append(c)
        kinds.add("msamp" if c.name.startswith("msamp") else "torchao" if "float8" in c.name else "scaled_mm")
    return used, off_, kinds


#: a library of model and recipe families (one folder per family under ``models/`` and ``recipes/``) whose README quickstart
#: builds its run from the Llama recipe: FLUX's FP8 context and Qwen-Omni's checkpointing call are other models' options
_ZOO_README = (
    "## Training quickstart\n\n```python\nfrom mylib.recipes.llama.llama3 import llama32_1b_pretrain_config\n"
    "from mylib.training.pretrain import pretrain\nfrom mylib.training.gpt_step import forward_step\n\n"
    "cfg = llama32_1b_pretrain_config()\npretrain(cfg, forward_step)\n```\n"
)
_MODEL_ZOO = {
    "mylib/training/pretrain.py": (
        "from mylib.training.config import ConfigContainer\n\n\ndef pretrain(config: ConfigContainer, forward_step):\n"
        "    model = config.model.provide()\n    for batch in config.dataset.loader():\n"
        "        loss = forward_step(batch, model)\n        loss.backward()\n"),
    "mylib/training/config.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass ConfigContainer:\n    model: object = None\n"
        "    dataset: object = None\n    mixed_precision: str = 'bf16_mixed'\n"),
    "mylib/models/gpt_provider.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass GPTModelProvider:\n    num_layers: int = 16\n"
        "    hidden_size: int = 2048\n    recompute_granularity: str | None = None\n"),
    "mylib/models/llama/llama_provider.py": (
        "from dataclasses import dataclass\nfrom mylib.models.gpt_provider import GPTModelProvider\n\n\n"
        "@dataclass\nclass Llama32ModelProvider1B(GPTModelProvider):\n    num_layers: int = 16\n    hidden_size: int = 2048\n"),
    "mylib/models/gemma/gemma_provider.py": (
        "from dataclasses import dataclass\nfrom mylib.models.gpt_provider import GPTModelProvider\n\n\n"
        "@dataclass\nclass Gemma2ModelProvider(GPTModelProvider):\n    num_layers: int = 26\n    hidden_size: int = 2304\n"),
    "mylib/models/qwen_omni/thinker_model.py": (
        "import torch\n\n\nclass Qwen3OmniThinkerModel(torch.nn.Module):\n"
        "    def __init__(self, language_model):\n        super().__init__()\n        self.language_model = language_model\n"
        "        self.language_model.gradient_checkpointing_enable()\n"),
    "mylib/models/flux/flux_model.py": (
        "import torch\nimport transformer_engine.pytorch as te\nfrom transformer_engine.common.recipe import DelayedScaling\n\n\n"
        "class Flux(torch.nn.Module):\n    def get_fp8_context(self):\n"
        "        return te.fp8_autocast(enabled=True, fp8_recipe=DelayedScaling())\n\n"
        "    def forward(self, img, txt):\n        with self.get_fp8_context():\n            return self.blocks(img, txt)\n"),
    "mylib/recipes/llama/llama3.py": (
        "from mylib.models.llama.llama_provider import Llama32ModelProvider1B\nfrom mylib.training.config import ConfigContainer\n\n\n"
        "def llama32_1b_pretrain_config():\n    cfg = ConfigContainer(model=Llama32ModelProvider1B())\n"
        "    cfg.mixed_precision = 'bf16_mixed'\n    cfg.model.recompute_granularity = None\n    return cfg\n"),
    "mylib/recipes/gemma/gemma2.py": (
        "from mylib.models.gemma.gemma_provider import Gemma2ModelProvider\nfrom mylib.training.config import ConfigContainer\n\n\n"
        "def gemma2_2b_pretrain_config():\n    return ConfigContainer(model=Gemma2ModelProvider())\n"),
    "mylib/recipes/qwen_omni/qwen3_omni.py": (
        "from mylib.models.qwen_omni.thinker_model import Qwen3OmniThinkerModel\nfrom mylib.training.config import ConfigContainer\n\n\n"
        "def qwen3_omni_sft_config(language_model):\n    return ConfigContainer(model=Qwen3OmniThinkerModel(language_model))\n"),
    "mylib/recipes/flux/flux.py": (
        "from mylib.models.flux.flux_model import Flux\nfrom mylib.training.config import ConfigContainer\n\n\n"
        "def flux_12b_pretrain_config():\n    return ConfigContainer(model=Flux(), mixed_precision='bf16_mixed')\n"),
}


def model_zoo_library(readme: bool = True) -> dict[str, str]:
    """The model-zoo library above, with the README quickstart that picks the Llama recipe (or without: no run is named)."""
    return {**_MODEL_ZOO, **({"README.md": _ZOO_README} if readme else {})}


@register
class C2FP8(Check):
    id = "C2"
    title = "FP8 training"
    title_zh = "FP8 训练"
    bottlenecks = (Bottleneck.COMPUTE, Bottleneck.MEMORY)
    priority = Priority.MEDIUM
    benefit = "up to ~1.3-1.5x GEMM-bound training throughput over BF16 on H100/H200"
    what = (
        "Whether GEMMs run in FP8: TransformerEngine `fp8_autocast`/`autocast` (enabled), accelerate `mixed_precision: fp8`, "
        "Lightning `precision=\"transformer-engine\"`, torchao `convert_to_float8_training`, MS-AMP `msamp.initialize`, "
        "Megatron `--fp8-format`, or an `fp8: true` trainer key. `enabled=False`, `fp8: false` or an FP8 dtype that is only "
        "imported is not use. Not applicable when the declared GPU has no FP8 Tensor Cores (pre-Ada/Hopper)."
    )
    why = (
        "H100 SXM delivers 1,979 dense FP8 TFLOPS against 989 for BF16 (NVIDIA datasheet). End to end, NVIDIA reports about "
        "1.3-1.5x faster GPT-style pretraining with TransformerEngine FP8 over BF16 on H100 for models of several billion "
        "parameters, and torchao float8 reports up to 1.5x on Llama-3 70B pretraining with torchtitan (H100, FSDP2). Small "
        "models see little gain because casting overhead dominates; A100/V100 have no FP8 units at all."
    )
    fix = (
        "On H100/H200 (or Ada) GPUs, enable FP8 for the large GEMMs: accelerate `mixed_precision: fp8` (TransformerEngine "
        "or torchao backend), Megatron `--fp8-format hybrid`, or torchao `convert_to_float8_training(model)`; keep BF16 for the rest "
        "and compare the loss curve with a BF16 run."
    )
    fix_zh = (
        "在 H100/H200（或 Ada）GPU 上为大矩阵乘启用 FP8：accelerate `mixed_precision: fp8`（TransformerEngine 或 torchao 后端）、"
        "Megatron `--fp8-format hybrid`，或 torchao `convert_to_float8_training(model)`；其余部分保持 BF16，并与 BF16 训练的 loss 曲线对比验证。"
    )
    fix_safety = FixSafety.UNSAFE
    references = (
        "https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/examples/fp8_primer.html",
        "https://github.com/pytorch/ao/tree/main/torchao/float8",
        "https://huggingface.co/docs/accelerate/usage_guides/low_precision_training",
    )
    snippets = {
        "accelerate-yaml": "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  fp8_format: HYBRID\n",
        "python": (
            "import transformer_engine.pytorch as te\n"
            "from transformer_engine.common.recipe import DelayedScaling, Format\n\n"
            "recipe = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16, amax_compute_algo=\"max\")\n"
            "with te.fp8_autocast(enabled=True, fp8_recipe=recipe):\n"
            "    loss = model(**batch).loss\n"
            "loss.backward()\n"
        ),
        "shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --bf16 --fp8-format hybrid --fp8-amax-history-len 1024\n",
    }
    examples = (
        Example({"train.py": (
            "import transformer_engine.pytorch as te\nfrom transformer_engine.common.recipe import DelayedScaling\n"
            "recipe = DelayedScaling()\nfor batch in loader:\n    with te.fp8_autocast(enabled=True, fp8_recipe=recipe):\n"
            "        out = model(batch)\n    out.sum().backward()\n")}, U, "transformer engine"),
        Example({"accelerate_fp8.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp8\nnum_processes: 8\n"}, U, "accelerate fp8"),
        Example(_derived_fp8(""), N, "TE fp8_autocast under a switch derived from two FP8 flags, both off by default"),
        Example(_derived_fp8(" --fp8-hybrid"), U, "the same switch with a launch passing --fp8-hybrid"),
        Example({"scripts/pretrain.sh": (
            "GPUS_PER_NODE=8\ntorchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py \\\n  --num-layers 32 --hidden-size 4096 \\\n"
            "  --bf16 --fp8-format hybrid --fp8-amax-history-len 1024\n")}, U, "megatron flag"),
        Example({"train.py": "from torchao.float8 import convert_to_float8_training\nconvert_to_float8_training(model, module_filter_fn=lambda m, n: n != 'lm_head')\n"}, U, "torchao"),
        Example({"train.py": "import transformer_engine.pytorch as te\nwith te.fp8_autocast(enabled=False):\n    out = model(x)\n"}, N, "autocast disabled"),
        Example({"configs/sft.yaml": "model_name_or_path: Qwen/Qwen2.5-7B\nbf16: true\nfp8: false\n"}, N, "fp8 false"),
        Example({"train.py": "import argparse\nimport transformer_engine.pytorch as te\np = argparse.ArgumentParser()\np.add_argument('--fp8', action='store_true')\n"
                 "args = p.parse_args()\nwith te.fp8_autocast(enabled=args.fp8):\n    out = model(x)\n",
                 "run.sh": "python train.py --lr 3e-4\n"}, N, "flag never passed"),
        Example({"train.py": "import torch\n# x = x.to(torch.float8_e4m3fn)\nprint('fp8 is future work')\n"}, N, "comment and string"),
        Example({  # torchtitan 0.3.0: the float8 converter applies only in the recipes that list it (405B of three)
            "torchtitan/components/quantization/float8.py": (
                "from torchao.float8 import Float8LinearConfig, convert_to_float8_training\n\nclass Float8LinearConverter:\n"
                "    def __init__(self, config):\n        self.config = Float8LinearConfig.from_recipe_name(config.recipe_name)\n"
                "    def convert(self, model):\n        convert_to_float8_training(model, config=self.config)\n"),
            "torchtitan/models/llama3/config_registry.py": (
                "from torchtitan.components.quantization import Float8LinearConverter\nfrom torchtitan.config import TrainingConfig\n"
                "from torchtitan.trainer import Trainer\n\n"
                "def llama3_8b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192))\n\n"
                "def llama3_70b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192))\n\n"
                "def llama3_405b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192),\n"
                "                          converters=[Float8LinearConverter.Config(recipe_name='rowwise')])\n"),
        }, N, "FP8 converter listed by a minority of registry recipes"),
        Example({
            "torchtitan/components/quantization/float8.py": (
                "from torchao.float8 import Float8LinearConfig, convert_to_float8_training\n\nclass Float8LinearConverter:\n"
                "    def __init__(self, config):\n        self.config = Float8LinearConfig.from_recipe_name(config.recipe_name)\n"
                "    def convert(self, model):\n        convert_to_float8_training(model, config=self.config)\n"),
            "torchtitan/models/llama3/config_registry.py": (
                "from torchtitan.components.quantization import Float8LinearConverter\nfrom torchtitan.config import TrainingConfig\n"
                "from torchtitan.trainer import Trainer\n\n"
                "def llama3_8b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192),\n"
                "                          converters=[Float8LinearConverter.Config(recipe_name='rowwise')])\n\n"
                "def llama3_70b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192),\n"
                "                          converters=[Float8LinearConverter.Config(recipe_name='rowwise')])\n\n"
                "def llama3_debugmodel():\n    return Trainer.Config(training=TrainingConfig(seq_len=512))\n"),
        }, U, "FP8 converter listed by most registry recipes"),
        Example(_float8_lib(""), N, "float8 conversion only under a float8_config that defaults to None"),
        Example(_float8_lib(", float8_config=Float8Config(enabled=True)"), U, "the builder passes a float8_config"),
        Example(_te_helper(), N, "a TE FP8 context in a helper entered only when a section defaulting to None is set"),
        Example(_te_helper("backend:\n  te_fp8:\n    recipe: tensorwise\n"), U, "a shipped recipe sets that section"),
        Example(model_zoo_library(readme=False), U, "a model library's FP8 context, no documented run"),
        Example(model_zoo_library(), N, "another model's FP8 context, the documented run builds the Llama recipe"),
        Example({  # oumi: a serving API's precision enum names FP8; training runs in BF16
            "src/mylib/deploy/fireworks_api.py": (
                "from enum import Enum\n\n\nclass DeploymentPrecision(str, Enum):\n"
                "    PRECISION_UNSPECIFIED = \"PRECISION_UNSPECIFIED\"\n    FP16 = \"FP16\"\n    FP8 = \"FP8\"\n    FP8_KV = \"FP8_KV\"\n"),
            "src/mylib/train.py": (
                "from transformers import Trainer, TrainingArguments\n\n"
                "args = TrainingArguments(output_dir=\"out\", bf16=True)\nTrainer(model=model, args=args).train()\n"),
        }, N, "an enum member naming FP8 is not a choice of it"),
        Example({  # LLMs-from-scratch ch04/04_gqa/memory_estimator_gqa.py: bytes per element, keyed by number format
            "ch04/04_gqa/memory_estimator_gqa.py": (
                "import argparse\n\nDTYPE_BYTES = {\n    \"fp32\": 4,\n    \"bf16\": 2,\n    \"fp16\": 2,\n    \"fp8\": 1,\n"
                "    \"int8\": 1,\n}\n\n\ndef bytes_convert(n):\n    gb = n / (1000 ** 3)\n    return f\"{gb:,.2f} GB\"\n\n\n"
                "def calc_kv_bytes_total(batch, context_length, emb_dim, n_heads, n_kv_heads, n_layers, bytes_per_elem):\n"
                "    head_dim = emb_dim // n_heads\n"
                "    return batch * context_length * head_dim * n_kv_heads * 2 * n_layers * bytes_per_elem\n\n\n"
                "def main():\n    p = argparse.ArgumentParser()\n"
                "    p.add_argument(\"--dtype\", choices=DTYPE_BYTES.keys(), default=\"fp16\")\n    args = p.parse_args()\n"
                "    print(bytes_convert(calc_kv_bytes_total(1, 1024, 4096, 32, 8, 32, DTYPE_BYTES[args.dtype])))\n"),
            "ch05/gpt_train.py": (
                "import torch\n\n\ndef train(model, loader, optimizer):\n    for input_batch, target_batch in loader:\n"
                "        optimizer.zero_grad()\n        loss = torch.nn.functional.cross_entropy(model(input_batch).flatten(0, 1), "
                "target_batch.flatten())\n        loss.backward()\n        optimizer.step()\n"),
        }, N, "a table of bytes per element keyed by number format names FP8 without choosing it"),
        Example({  # the same name given a format in a training config is one
            "mylib/config.py": (
                "from dataclasses import dataclass\n\n\n@dataclass\nclass TrainingConfig:\n    bf16: bool = True\n"
                "    fp8: str = \"hybrid\"\n    fp8_amax_history_len: int = 1024\n"),
            "train.py": (
                "from mylib.config import TrainingConfig\n\ncfg = TrainingConfig()\nfor batch in loader:\n"
                "    loss = model(batch)\n    loss.backward()\n"),
        }, U, "an FP8 format chosen in a training config"),
    )

    def not_applicable(self, ctx: Context) -> str | None:
        hw = ctx.project.hardware or ""
        if hw and _NO_FP8_GPU.search(hw) and not _FP8_GPU.search(hw):
            used, _, _ = fp8_sites(ctx.facts)
            where = f" (FP8 is configured at {used[0].path}:{used[0].line}, which this GPU cannot run)" if used else ""
            return f"the declared GPU ({hw}) has no FP8 Tensor Cores; FP8 needs Ada or Hopper and newer{where}"
        return None

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used, off_, kinds = fp8_sites(f)
        total = total_recipes(f)
        if used and total and all(isinstance(x, Call) for x in used):
            # FP8 converter code that Python config-registry recipes opt into (torchtitan ``Float8LinearConverter`` in
            # ``converters=[...]`` of llama3_405b): judged by how many recipes list it, not by the converter's own code
            on_, cited = recipes_calling(f, _FP8_RECIPE)
            if on_ and len(on_) * 2 < total:
                code = used[0]
                return Outcome(N, evs(cited[:10]), f"FP8 converter code exists ({code.path}:{code.line}) but applies only where a "
                               f"recipe lists it: {split_text('listed', on_, total)}", {"fp8": False, "recipes.fp8": f"on: {len(on_)}, off: {total - len(on_)}"})
        if used:
            backend = sorted(kinds)[0] if len(kinds) == 1 else "+".join(sorted(kinds))
            return Outcome(U, [f.ev(x) for x in used], f"FP8 training via {backend}", {"fp8": True, "fp8_backend": backend})
        # a recipe that swaps in the project's FP8 model through its own quantization option (VILA
        # ``scripts/fp8training/sft_qwen_fp8.sh``: ``--quantize_model "fp8Linear_qwen2"``, COAT's FP8 linear layers)
        # (not a serving engine's weight quantization: FlagScale's ``conf/serve/270b.yaml`` ``engine_args_specific.sglang.
        # quantization: fp8``)
        named = [s for s in f.settings(*_FP8_MODEL_KEYS) if s.source in ("launcher", "config") and isinstance(s.value, str)
                 and "fp8" in s.value.lower() and not _TEST_FILE.search(s.path)
                 and not _SERVING_FP8.search(f"{s.path} {s.key}")]
        if named:
            runs = launches_with_train_args(f)
            s0 = named[0]
            share = f"{len(named)} of {len(runs)} training launches" if len(runs) > len(named) else "its training launches"
            return Outcome(P if len(named) * 2 < len(runs) else U, evs(named[:10]),
                           f"FP8 training through the project's own option in {share} ({s0.path}:{s0.line}: "
                           f"{s0.key} {s0.value!r})", {"fp8": len(named) * 2 >= len(runs), "fp8_backend": str(s0.value)})
        # a layer's local ``te.fp8_autocast(enabled=False)`` or a builder's ``fp8=False`` keyword turns FP8 off in that
        # code only: "explicitly disabled" needs a setting of the run (config, launch flag, assignment, argument default)
        setting_off = [x for x in off_ if not isinstance(x, Call) and getattr(x, "source", "") != "call"]
        if setting_off:
            detail = "FP8 is explicitly disabled"
        elif off_:
            detail = "no FP8 training setting found (FP8 is turned off locally in the calls cited)"
        else:
            detail = "no FP8 training setting found"
        return Outcome(N, evs(off_), detail, {"fp8": False})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status not in (Status.UNUSED, Status.PARTIAL) or not ctx.project.does_training:
            return None  # FP8 inference is J4
        p = ctx.project
        if p.params_billions is not None and p.params_billions < 1:
            return None  # casting overhead outweighs the GEMM gain on small models
        if p.hardware and _FP8_GPU.search(p.hardware):
            return Priority.MEDIUM
        return Priority.LOW


def _offload_launch_minority(f: Facts, used: list[Any]) -> str | None:
    """The detail when offload is only a few launches' flag (OpenRLHF: ``--ds.adam_offload`` in 1 of its 11 training
    launches): a choice some runs make, not the project's; None when a config or code turns it on, or most launches do."""
    if not used or not all(isinstance(x, Setting) and x.source == "launcher" for x in used):
        return None
    runs = [x for x in f.launches() if not launch_runs_no_training(f, x.path)]
    on = sorted({x.path for x in used})
    runs_on = [x for x in runs if x.path in on]
    if len(runs) < 3 or len(runs_on) * 2 >= len(runs):
        return None
    return (f"CPU offload in {len(runs_on)} of {len(runs)} training launches ({', '.join(on[:3])}); the others keep the optimizer "
            "states and weights on the GPU")


# --- C3 activation checkpointing ------------------------------------------------

#: a project's own switch that picks a quantized (FP8) model class for training
_FP8_MODEL_KEYS = ("quantize_model", "quantization", "quant_type", "quantize", "quant_mode")
#: a serving engine's config or launch: its ``quantization: fp8`` quantizes weights for inference, it trains nothing in FP8
_SERVING_FP8 = lazy_compile(r"(?i)(^|/)(serve|serving|server|inference|infer|deploy\w*)(/|\.)|\b(sglang|vllm|engine_args\w*|lmdeploy|"
                            r"tensorrt_llm|trtllm)\b")

_GC_BOOL_KEYS = (
    "gradient_checkpointing", "enable_activation_checkpointing", "activation_checkpointing", "use_gradient_checkpointing",
    "grad_checkpoint", "gradient_checkpoint", "use_activation_checkpointing", "checkpoint_activations", "recompute_activations",
    "fsdp_activation_checkpointing", "use_checkpointing", "grad_checkpointing",
)
_GC_MODE_KEYS = ("recompute_granularity", "activations_checkpoint_granularity", "activations_checkpoint_method", "activation_checkpoint_mode")
#: open_clip 3.3.0: the text tower's setter enables HF checkpointing; the training script calls it only under a flag
_GC_SETTER = {
    "src/open_clip/hf_model.py": (
        "import torch\nfrom torch import nn\n\n\nclass HFTextEncoder(nn.Module):\n    @torch.jit.ignore\n"
        "    def set_grad_checkpointing(self, enable=True):\n        self.transformer.gradient_checkpointing_enable()\n"),
    "src/open_clip_train/params.py": (
        "import argparse\n\n\ndef parse_args(args):\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument(\n        \"--grad-checkpointing\",\n        default=False,\n        action='store_true',\n"
        "        help=\"Enable gradient checkpointing.\",\n    )\n    return parser.parse_args(args)\n"),
    "src/open_clip_train/main.py": (
        "from open_clip_train.params import parse_args\n\n\ndef main(args):\n    args = parse_args(args)\n"
        "    model = create_model(args.model)\n    if args.grad_checkpointing:\n        model.set_grad_checkpointing()\n"
        "    loss = model(batch)\n    loss.backward()\n"),
}
_GC_CALLS = (
    "torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential", "deepspeed.checkpointing.checkpoint",
    "deepspeed.runtime.activation_checkpointing.checkpointing.checkpoint", "tensor_parallel.checkpoint", "tensor_parallel.random.checkpoint",
    "checkpoint_wrapper", "apply_activation_checkpointing", "torch.distributed._composable.checkpoint",
    "torch.distributed._composable.checkpoint_activation.checkpoint", "fairscale.nn.checkpoint.checkpoint_wrapper",
    # JAX: a block (or function) rematerialised in the backward pass (EasyLM ``nn.remat(FlaxLLaMABlock, policy=...)``)
    "jax.checkpoint", "jax.remat", "flax.linen.remat", "flax.linen.checkpoint", "flax.nnx.remat", "equinox.filter_checkpoint",
)
_GC_FLAG = lazy_compile(r"checkpoint|recompute|ckpt", re.I)
_GC_HELPER = lazy_compile(r"^(apply|enable|set|use|add|setup|wrap)_\w*(activation|gradient|grad|fsdp|act)_?\w*checkpoint", re.I)
_NONE_STR = {"none", "null", "", "false", "no", "off", "disable", "disabled"}


def _gc_on(v: object) -> bool | None:
    """``gradient_checkpointing`` values: booleans, or modes like "unsloth"/"offload"/"full"/"selective"."""
    t = truthy(v)
    if t is not None:
        return t
    if isinstance(v, str):
        return v.strip().lower() not in _NONE_STR
    return None


def _unset_default(s: Setting) -> bool:
    """An optional field that defaults to None (lm-buddy ``gradient_checkpointing: bool | None = None``, dropped by
    ``model_dump(exclude_none=True)`` before it reaches ``TrainingArguments``; OLMo's ``activation_checkpointing:
    Optional[...] = None``): off by default, but not an explicit off."""
    return s.source == "field-default" and s.value is None


_NEGATED = lazy_compile(r"^\s*not\s+(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*)\s*$")


def _negated_switch(f: Facts, text: str) -> bool | None:
    """``gradient_checkpointing=not config.disable_gradient_checkpointing``: the opposite of that switch's state (on when
    every setting of ``disable_gradient_checkpointing`` is False, e.g. its ``Field(False)`` default); None when unknown."""
    m = _NEGATED.match(text)
    st = flag_state(f, m.group(1)) if m else None
    return None if st is None else not st


#: peft's helpers that enable gradient checkpointing for a k-bit model (``use_gradient_checkpointing=True`` by default); a
#: project that vendors peft (FlagAI ``flagai/model/tools/peft``, xTuring ``lora_engine/lora.py``) ships their bodies too
_KBIT_PREP = ("prepare_model_for_kbit_training", "prepare_model_for_int8_training")


def _key_rename(s: Setting) -> bool:
    """A checkpointing key whose value is a checkpointing key's name: an entry of a table renaming config keys
    (FlagAI ``trans_key = {..., "checkpoint_activations": "checkpoint_activations"}``, mapping an OPT config onto its own),
    not a mode such as ``"full"``."""
    return isinstance(s.value, str) and s.value.strip().lower() in _GC_BOOL_KEYS


def _partial_wrapper(default: str) -> dict[str, str]:
    """mistral-finetune-shaped: each block wrapped through ``partial(torch_ckpt.checkpoint_wrapper, ...)`` when the model
    is built with ``checkpoint=args.checkpoint``, whose dataclass default is ``default``."""
    return {
        "model/transformer.py": (
            "from functools import partial\n\nimport torch\n"
            "import torch.distributed.algorithms._checkpoint.checkpoint_wrapper as torch_ckpt\n\n\n"
            "class Transformer(torch.nn.Module):\n    def __init__(self, args, checkpoint: bool = False):\n        super().__init__()\n"
            "        self.layers = torch.nn.ModuleList()\n        for _ in range(args.n_layers):\n"
            "            block = TransformerBlock(args=args)\n            if checkpoint:\n"
            "                non_reentrant_wrapper = partial(\n                    torch_ckpt.checkpoint_wrapper,\n"
            "                    checkpoint_impl=torch_ckpt.CheckpointImpl.NO_REENTRANT,\n                )\n"
            "                block = non_reentrant_wrapper(block)\n            self.layers.append(block)\n"),
        "finetune/args.py": (
            "from dataclasses import dataclass\n\n\n@dataclass\nclass TrainArgs:\n    seq_len: int = 2048\n"
            f"    # Determines whether gradient checkpointing should be utilized or not during the training process.\n"
            f"    checkpoint: bool = {default}\n"),
        "train.py": (
            "from finetune.args import TrainArgs\nfrom model.transformer import Transformer\n\n\ndef train(args: TrainArgs):\n"
            "    model = Transformer(args=model_args, checkpoint=args.checkpoint)\n    loss = model(batch).sum()\n    loss.backward()\n"),
    }


def _gc_partials(f: Facts) -> list[Call]:
    """A checkpoint wrapper bound with ``functools.partial`` and applied through the partial (mistral-finetune
    ``non_reentrant_wrapper = partial(torch_ckpt.checkpoint_wrapper, checkpoint_impl=...)`` then ``block =
    non_reentrant_wrapper(block)``): the ``partial`` call stands for the wrapper's, under the same guard."""
    out = []
    for c in f.calls("functools.partial", "partial"):
        first = c.args[0] if c.args else None
        name = (first.dotted or first.text) if isinstance(first, Expr) else None
        if name and any(name == g or name.endswith("." + g.rsplit(".", 1)[-1]) for g in _GC_CALLS if "checkpoint" in g.rsplit(".", 1)[-1]):
            out.append(c)
    return out


def _gc_call_active(f: Facts, c: Call) -> bool:
    """A checkpoint call counts unless it is model-library support code: behind a checkpointing flag or setting that nothing
    turns on (``if self.gradient_checkpointing and self.training:``, Megatron's ``if config.recompute_method == "uniform":``),
    or inside a helper named for checkpointing (``_checkpointed_forward``) that only such a setting calls, or inside a helper
    whose every caller sits behind a switch that is off (Composer's ``apply_ac``, called only under ``if
    config.activation_checkpointing or config.activation_cpu_offload:``, both False by default)."""
    if guard_off(f, c) or registry_off(f, c) or helper_callers_off(f, c):
        return False
    if c.short == "partial" and (m := PARTIAL_BINDING.match(c.text)):
        # a wrapper bound to a name counts where the name is applied (``block = non_reentrant_wrapper(block)``); bound and
        # only handed to another call as a value (fms-fsdp ``apply_activation_checkpointing(model,
        # checkpoint_wrapper_fn=non_reentrant_wrapper, ...)``), the receiving call is the one judged
        applied = [x for x in f.calls(m.group(1)) if x.short == m.group(1)]
        return any(_gc_call_active(f, x) for x in applied if x is not c)
    if _LOSS_MODULE.search(c.path):
        return False  # a chunked loss recomputing its own logits chunk by chunk: the layers' activations are all kept
    for name, neg in guard_flags(c.guard):
        if not neg and _GC_FLAG.search(name):
            state = flag_state(f, name)
            return state is True or (state is None and _launches_mostly_on(f, name))
    if c.guard and _GC_FLAG.search(c.guard):
        return False
    if c.func and _GC_FLAG.search(c.func) and not _GC_HELPER.search(c.short):
        return False
    if c.func and not c.func.startswith("__") and not _FRAMEWORK_CALLED.match(c.func):
        # a private helper that only checkpointing helpers call (NeMo AutoModel ``_wrap_first_existing_attr``, called by
        # ``apply_submodule_checkpointing``): support code like its callers, on only when they are
        callers = [x for x in f.calls(c.func) if x.func != c.func]
        if callers and all(x.path == c.path and x.func and _GC_FLAG.search(x.func) for x in callers):
            return False
    return True


def _launches_mostly_on(f: Facts, name: str) -> bool:
    """A store-true switch that most launches of its scripts pass (LLaMA2-Accessory: ``--checkpointing`` in 36 of the 40
    launches of ``main_finetune.py``/``main_pretrain.py``; the others run at the option's default, off)."""
    on = [s for s in f.effective(name) if s.source == "launcher" and s.script and truthy(s.value) is True]
    if not on:
        return False
    scripts = {s.script.lstrip("./") for s in on}
    runs = [x for x in f.launches() if (x.script or "").lstrip("./") in scripts]
    return len({(s.path, s.line) for s in on}) * 2 > len(runs)


#: a loss module (``components/loss/dllm_loss.py``, ``losses.py``): a ``checkpoint`` call there recomputes a chunk of the
#: loss (logits over the vocabulary) in backward, a chunked-loss memory saving; the model's activations are untouched
_LOSS_MODULE = lazy_compile(r"(^|/)(loss|losses)(/|\.py$)|(^|/)\w*_loss\.py$")


def _gc_helpers(f: Facts) -> list[Call]:
    """Calls of the project's own ``apply_fsdp_checkpointing(model)``-style helpers, behind a flag that is on or unconditional."""

    def helper(short: str) -> bool:
        return "checkpoint" in short and bool(_GC_HELPER.search(short)) and short != "apply_activation_checkpointing"

    out = []
    for c in f.calls_where(helper):
        # a setter forwarding its argument to each block (OLMo: ``set_activation_checkpointing(self, strategy)`` calling
        # ``block.set_activation_checkpointing(strategy)``) is the model's support code, not a choice to checkpoint
        if c.func and (c.func == c.short or helper(c.func)):
            continue
        if not c.name.startswith(("torch.", "deepspeed.")) and _gc_call_active(f, c) and not _handed_switch_off(f, c):
            out.append(c)
    return out


#: ``cfg.get("distributed.activation_checkpointing", False)``: a config read whose default leaves it off
_GET_KEY = lazy_compile(r"""\.get\(\s*['"]([\w.]+)['"]\s*(?:,\s*(?:False|None|0)\s*)?\)$""")


def _handed_switch_off(f: Facts, c: Call) -> bool:
    """A checkpointing helper handed its on/off switch as an argument that is off (NeMo AutoModel
    ``apply_draft_activation_checkpointing(self.draft_model, self.cfg.get("distributed.activation_checkpointing", False))``
    with no setting turning ``activation_checkpointing`` on): the helper returns without wrapping anything."""
    for v in list(c.args[1:]) + list(c.kwargs.values()):
        text = v.text if isinstance(v, Expr) else ""
        if not text or not _GC_FLAG.search(text):
            continue
        if value_on(f, v) is False:
            return True
        m = _GET_KEY.search(text)
        if m:
            leaf = m.group(1).rsplit(".", 1)[-1]
            if flag_state(f, leaf) is not True and not any(truthy(s.value) for s in f.settings(leaf)):
                return True
    return False


def _llamafactory_entry(f: Facts, frameworks: list[str]) -> list[ConfigEntry]:
    """LLaMA-Factory training configs (it enables gradient checkpointing unless ``disable_gradient_checkpointing``)."""
    if "llamafactory" not in frameworks:
        return []
    return [e for e in f.config("finetuning_type") if e.fmt in {"yaml", "json"} and len(e.keys) == 1]


#: a config-driven component registry (modalities 0.5.0): components a YAML selects by ``variant_key``
_AC_REGISTRY = {
    "pkg/training/activation_checkpointing.py": (
        "import torch.nn as nn\n"
        "from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper as ptd_checkpoint_wrapper\n\n\n"
        "class ActivationCheckpointing:\n    @staticmethod\n"
        "    def apply_activation_checkpointing_(model: nn.Module, layers_fqn: str, ac_variant: str) -> None:\n"
        "        apply_ac_fun = ActivationCheckpointing._apply_full_ac\n"
        "        layers = model.get_submodule(layers_fqn)\n"
        "        for layer_id, transformer_block in layers.named_children():\n"
        "            layers.register_module(layer_id, apply_ac_fun(transformer_block))\n\n"
        "    @staticmethod\n    def _apply_full_ac(module: nn.Module) -> nn.Module:\n"
        "        module_aced = ptd_checkpoint_wrapper(module, preserve_rng_state=False)\n        return module_aced\n"),
    "pkg/models/model_factory.py": (
        "from pkg.training.activation_checkpointing import ActivationCheckpointing\n\n\nclass ModelFactory:\n"
        "    @staticmethod\n    def get_activation_checkpointed_model_(ac_variant, layers_fqn, model):\n"
        "        ActivationCheckpointing.apply_activation_checkpointing_(model=model, layers_fqn=layers_fqn, ac_variant=ac_variant)\n"
        "        return model\n"),
    "pkg/registry/components.py": component_registry(
        "    ComponentEntity(\n        \"model\",\n        \"activation_checkpointed\",\n"
        "        maybe_model_list(ModelFactory.get_activation_checkpointed_model_),\n        ActivationCheckpointedModelConfig,\n    ),\n"),
}


# NeMo AutoModel: the YAML's ``activation_checkpointing`` reaches the parallelizer through two objects; the dataclass
# default is False and no shipped config sets it
_AC_HANDED_ON = {
    "pkg/distributed/config.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass DistributedSetup:\n    activation_checkpointing: bool = False\n"),
    "pkg/distributed/mesh.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass MeshContext:\n    activation_checkpointing: bool = False\n\n\n"
        "def build_mesh_context(setup):\n    return MeshContext(activation_checkpointing=setup.activation_checkpointing)\n"),
    "pkg/distributed/parallelizer.py": (
        "def parallelize_model(model, mesh_context):\n    if mesh_context.activation_checkpointing:\n"
        "        model.gradient_checkpointing_enable()\n    return model\n"),
}
# NeMo AutoModel's EAGLE-3 drafter recipe: ``recipe_cfg.get("draft_gradient_checkpointing", False)``
#: a declarative framework's trainer schema (Ludwig ``ECDTrainerConfig``): every field is a schema helper call whose
#: ``default=`` keyword is the value a run gets when its YAML leaves the key out; the trainer reads the field
_SCHEMA_GC = {
    "mylib/schema/trainer.py": (
        "from mylib.schema import utils as schema_utils\n\n\nclass ECDTrainerConfig(schema_utils.BaseConfig):\n"
        "    compile: bool = schema_utils.Boolean(\n        default=False,\n"
        "        description=\"Whether to compile the model before training.\",\n    )\n\n"
        "    enable_gradient_checkpointing: bool = schema_utils.Boolean(\n        default={gc},\n"
        "        description=\"Whether to enable gradient checkpointing, which trades compute for memory.\",\n    )\n"),
    "mylib/trainers/trainer.py": (
        "import torch\n\n\nclass Trainer:\n    def __init__(self, config, model):\n        self.config = config\n"
        "        self.model = model\n        if config.compile:\n            self.model = torch.compile(self.model)\n\n"
        "    def prepare(self):\n        if self.config.enable_gradient_checkpointing:\n"
        "            self.model.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={{\"use_reentrant\": True}})\n"
        "            self.model.model.config.use_cache = False\n"),
}


def _schema_gc(gc: str) -> dict[str, str]:
    return {k: v.format(gc=gc) for k, v in _SCHEMA_GC.items()}


_DRAFT_GC = {
    "pkg/recipes/train_eagle3.py": (
        "class Eagle3Recipe:\n    def setup(self, recipe_cfg):\n        self.draft_model = build_draft(recipe_cfg)\n"
        "        if recipe_cfg.get(\"draft_gradient_checkpointing\", False):\n"
        "            self.draft_model.gradient_checkpointing_enable()\n"),
}


#: NeMo AutoModel ``components/loss/dllm_loss.py``: the loss recomputes each vocabulary chunk in backward
_CHUNKED_LOSS = {
    "pkg/loss/dllm_loss.py": (
        "import torch\nimport torch.utils.checkpoint\n\n\nclass MaskedDiffusionLoss(torch.nn.Module):\n"
        "    def __init__(self, chunk_size: int | None = 1024):\n        super().__init__()\n        self.chunk_size = chunk_size\n\n"
        "    def _terms(self, logits, target):\n        return torch.nn.functional.cross_entropy(logits.float(), target, reduction='none')\n\n"
        "    def forward(self, logits, target):\n        parts = []\n"
        "        for start in range(0, logits.size(0), self.chunk_size):\n            end = start + self.chunk_size\n"
        "            parts.append(torch.utils.checkpoint.checkpoint(self._terms, logits[start:end], target[start:end], use_reentrant=False))\n"
        "        return torch.cat(parts).mean()\n"),
    "pkg/train.py": ("from pkg.loss.dllm_loss import MaskedDiffusionLoss\n\nloss_fn = MaskedDiffusionLoss()\n"
                     "loss = loss_fn(model(batch).logits, batch['labels'])\nloss.backward()\n"),
}

#: NeMo AutoModel ``components/distributed/activation_checkpointing.py``: ``_wrap_first_existing_attr`` does the wrapping
#: for ``apply_submodule_checkpointing``, which runs only under the strategy's switch (False by default)
_AC_SUBMODULES = {
    "pkg/distributed/activation_checkpointing.py": (
        "from torch import nn\n"
        "from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper\n\n\n"
        "def _wrap_first_existing_attr(module: nn.Module, attr_names: tuple[str, ...]) -> int:\n"
        "    for attr in attr_names:\n        child = getattr(module, attr, None)\n        if isinstance(child, nn.Module):\n"
        "            setattr(module, attr, checkpoint_wrapper(child))\n            return 1\n    return 0\n\n\n"
        "def apply_submodule_checkpointing(layers: list[nn.Module]) -> int:\n"
        "    return sum(_wrap_first_existing_attr(layer, ('mlp', 'feed_forward')) for layer in layers)\n"),
    "pkg/distributed/config.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass FSDP2Config:\n    activation_checkpointing: bool = False\n"),
    "pkg/distributed/parallelizer.py": (
        "from pkg.distributed.activation_checkpointing import apply_submodule_checkpointing\n\n\n"
        "def parallelize(model, config):\n    if config.activation_checkpointing:\n"
        "        apply_submodule_checkpointing(model.layers)\n    return model\n"),
}

#: NeMo AutoModel ``recipes/llm/train_dflash.py``: the draft model's checkpointing helper takes the recipe's switch
_DRAFT_AC_HELPER = {
    "pkg/ac.py": (
        "from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper\n\n\n"
        "def apply_full_layer_checkpointing(model, layers):\n    for i, layer in enumerate(layers):\n"
        "        model.layers[i] = checkpoint_wrapper(layer)\n\n\n"
        "def apply_draft_activation_checkpointing(model, enabled):\n    if not enabled:\n        return\n"
        "    apply_full_layer_checkpointing(model, list(model.layers))\n"),
    "pkg/recipes/train_draft.py": (
        "from pkg.ac import apply_draft_activation_checkpointing\n\n\nclass DraftRecipe:\n    def setup(self):\n"
        "        self.draft = build_draft(self.cfg)\n        apply_draft_activation_checkpointing(\n"
        "            self.draft, self.cfg.get(\"distributed.activation_checkpointing\", False)\n        )\n"),
}


#: Composer 0.32: activation checkpointing is applied by a helper whose only caller waits for either of two config switches
def _ac_either(default: str) -> dict[str, str]:
    return {
        "pkg/utils/parallelism.py": ("from dataclasses import dataclass\n\n\n@dataclass\nclass FSDP2Config:\n"
                                     f"    activation_checkpointing: bool = {default}\n    activation_cpu_offload: bool = False\n"
                                     "    reshard_after_forward: bool = True\n"),
        "pkg/distributed/activation_checkpointing.py": (
            "from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing, checkpoint_wrapper\n\n\n"
            "def apply_ac(model, activation_checkpointing, activation_cpu_offload, check_fn=None):\n"
            "    wrapper = checkpoint_wrapper if activation_checkpointing else (lambda m: m)\n"
            "    apply_activation_checkpointing(model, checkpoint_wrapper_fn=wrapper, check_fn=check_fn)\n"),
        "pkg/distributed/prepare_distributed.py": (
            "from pkg.distributed.activation_checkpointing import apply_ac\n\n\n"
            "def parallelize_model(model, config, check_fn=None):\n"
            "    if config.activation_checkpointing or config.activation_cpu_offload:\n"
            "        apply_ac(model, config.activation_checkpointing, config.activation_cpu_offload, check_fn)\n"
            "    return model\n"),
    }


#: FlagAI 1.8.4: a table mapping an OPT config's keys onto the model's, and a vendored copy of peft's k-bit helper
_RENAME_AND_VENDORED_PEFT = {
    "pkg/model/opt_model.py": (
        "def trans_opt_config(opt_config_json):\n    trans_key = {\n        'hidden_size': 'hidden_size',\n"
        "        'checkpoint_activations': 'checkpoint_activations',\n        'num_hidden_layers': 'n_layer',\n    }\n"
        "    return {trans_key[k]: v for k, v in opt_config_json.items() if k in trans_key}\n"),
    "pkg/tools/peft/utils/other.py": (
        "import warnings\n\n\ndef prepare_model_for_kbit_training(model, use_gradient_checkpointing=True):\n"
        "    loaded_in_kbit = getattr(model, 'is_loaded_in_8bit', False) or getattr(model, 'is_loaded_in_4bit', False)\n"
        "    if loaded_in_kbit and use_gradient_checkpointing:\n        model.gradient_checkpointing_enable()\n    return model\n\n\n"
        "def prepare_model_for_int8_training(*args, **kwargs):\n"
        "    warnings.warn('deprecated, use prepare_model_for_kbit_training', FutureWarning)\n"
        "    return prepare_model_for_kbit_training(*args, **kwargs)\n"),
    "pkg/trainer.py": (
        "class Trainer:\n    def __init__(self, checkpoint_activations=False):\n"
        "        self.checkpoint_activations = checkpoint_activations\n\n"
        "    def train(self, model, loader):\n        for batch in loader:\n            model(**batch).loss.backward()\n"),
}


@register
class C3ActivationCheckpointing(Check):
    id = "C3"
    title = "Activation checkpointing"
    title_zh = "激活重计算 (Activation Checkpointing)"
    bottlenecks = (Bottleneck.MEMORY,)
    priority = Priority.HIGH
    benefit = "activation memory drops from O(layers) to about one layer's worth, enabling longer sequences or larger micro-batches"
    what = (
        "Whether activations are recomputed in the backward pass: HF `gradient_checkpointing: true` or "
        "`model.gradient_checkpointing_enable()`, `torch.utils.checkpoint.checkpoint(...)`, FSDP `apply_activation_checkpointing`, "
        "accelerate `fsdp_activation_checkpointing`, Megatron `--recompute-granularity`/`--recompute-activations`, torchtune "
        "`enable_activation_checkpointing`, LLaMA-Factory (on unless `disable_gradient_checkpointing`). `false`, a flag never "
        "turned on, or checkpoint calls in model code behind a `self.gradient_checkpointing` flag nobody sets are not use; "
        "a DeepSpeed `activation_checkpointing` section alone is partial (it configures, but does not turn on, recomputation)."
    )
    why = (
        "Storing every layer's activations dominates memory for long sequences: Chen et al. (2016) show O(sqrt(n)) memory for about "
        "one extra forward pass (~20-33 % more compute), and Korthikanti et al. (2022) report selective recomputation cutting "
        "activation memory 5x on GPT-3 175B with ~2-4 % overhead (Megatron-LM, A100). The memory freed usually buys a larger "
        "micro-batch or a longer context, which more than pays back the recompute on memory-bound runs."
    )
    fix = (
        "Turn on activation checkpointing where memory limits the batch or sequence length: `gradient_checkpointing: true` "
        "(HF/TRL/axolotl), `model.gradient_checkpointing_enable()`, or Megatron `--recompute-granularity selective`; prefer "
        "selective recompute when only attention activations are the problem."
    )
    fix_zh = (
        "在显存限制 batch 或序列长度时启用激活重计算：`gradient_checkpointing: true`（HF/TRL/axolotl）、"
        "`model.gradient_checkpointing_enable()`，或 Megatron `--recompute-granularity selective`；仅注意力激活占用过大时优先使用选择性重计算。"
    )
    fix_safety = FixSafety.UNSAFE
    references = (
        "https://arxiv.org/abs/1604.06174",
        "https://arxiv.org/abs/2205.05198",
        "https://pytorch.org/docs/stable/checkpoint.html",
    )
    snippets = {
        "hf-yaml": "gradient_checkpointing: true\ngradient_checkpointing_kwargs:\n  use_reentrant: false\n",
        "python": "model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={\"use_reentrant\": False})\nmodel.config.use_cache = False\n",
        "accelerate-yaml": "distributed_type: FSDP\nfsdp_config:\n  fsdp_activation_checkpointing: true\n",
        "shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --recompute-granularity selective\n",
    }
    examples = (
        Example({"mylm/model.py": (
            "import flax.linen as nn\n\n\nclass BlockCollection(nn.Module):\n    config: dict\n\n    @nn.compact\n"
            "    def __call__(self, x):\n        block = nn.remat(Block, prevent_cse=True)\n"
            "        for i in range(self.config['num_hidden_layers']):\n            x = block(self.config, name=str(i))(x)\n"
            "        return x\n"), "mylm/train.py": "from mylm.model import BlockCollection\nloss = step(BlockCollection(cfg), batch)\n"},
                U, "Flax nn.remat over each transformer block (JAX)"),
        Example({"configs/sft.yaml": "model_name_or_path: meta-llama/Llama-3.1-8B\ngradient_checkpointing: true\nbf16: true\n"}, U, "hf yaml"),
        Example(_partial_wrapper("True"), U, "checkpoint_wrapper bound with functools.partial, on by the run's default"),
        Example(_partial_wrapper("False"), N, "the same wrapper with the run's checkpoint option off by default"),
        Example({"train.py": (
            "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-7B')\n"
            "model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={'use_reentrant': False})\n")}, U, "enable call"),
        Example({"model.py": (
            "import torch\nfrom torch.utils.checkpoint import checkpoint\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
            "        for blk in self.blocks:\n            x = checkpoint(blk, x, use_reentrant=False)\n        return x\n")}, U, "torch checkpoint"),
        Example({"examples/pretrain_llama.sh": (
            "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 \\\n  --recompute-granularity full --recompute-method uniform --recompute-num-layers 1\n")}, U, "megatron"),
        Example({"train.py": (
            "from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing, checkpoint_wrapper\n"
            "apply_activation_checkpointing(model, checkpoint_wrapper_fn=checkpoint_wrapper, check_fn=lambda m: isinstance(m, Block))\n")}, U, "fsdp"),
        Example({"examples/train_lora/llama3_lora_sft.yaml": (
            "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\ndo_train: true\nfinetuning_type: lora\ntemplate: llama3\n"),
                 "run.sh": "llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml\n"}, U, "llamafactory default"),
        # a YAML-only LLaMA-Factory project (recipes run from the README): the recipe keys identify the framework
        Example({"examples/train_lora/qwen3_lora_sft.yaml": (
            "model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\nstage: sft\ndo_train: true\nfinetuning_type: lora\nlora_target: all\n"
            "template: qwen3_nothink\ncutoff_len: 2048\nbf16: true\n")}, U, "llamafactory recipe without a launch script"),
        Example({"examples/train_full/qwen3_full_sft.yaml": (
            "model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\nstage: sft\nfinetuning_type: full\ntemplate: qwen3_nothink\n"
            "disable_gradient_checkpointing: true\n")}, N, "llamafactory recipe with checkpointing disabled"),
        Example({"configs/sft.yaml": "gradient_checkpointing: false\nbf16: true\n"}, N, "disabled"),
        Example({"modeling_custom.py": (
            "import torch\nimport torch.utils.checkpoint\nclass Model(torch.nn.Module):\n    def __init__(self):\n"
            "        self.gradient_checkpointing = False\n    def forward(self, x):\n        for layer in self.layers:\n"
            "            if self.gradient_checkpointing and self.training:\n"
            "                x = torch.utils.checkpoint.checkpoint(layer, x)\n            else:\n                x = layer(x)\n        return x\n"),
                 "train.py": "from transformers import Trainer, TrainingArguments\nargs = TrainingArguments(output_dir='out', bf16=True)\n"}, N, "vendored model support only"),
        Example({"train.py": "# model.gradient_checkpointing_enable()\nmodel.train()\n"}, N, "commented out"),
        Example({"ds_config.json": (
            '{\n  "train_micro_batch_size_per_gpu": 4,\n  "activation_checkpointing": {\n    "partition_activations": true,\n'
            '    "contiguous_memory_optimization": true\n  }\n}\n')}, P, "deepspeed section only"),
        Example({"olmo/model.py": (  # the model's setter forwards a strategy to every block; nothing in the project calls it
            "import torch.nn as nn\n"
            "class OLMo(nn.Module):\n"
            "    def set_activation_checkpointing(self, strategy, checkpoint_func=None):\n"
            "        self.activation_checkpointing_strategy = strategy\n"
            "        for block in self.transformer.blocks:\n"
            "            block.set_activation_checkpointing(strategy, checkpoint_func=checkpoint_func)\n")}, N,
            "a forwarding setter is support code"),
        Example({"openrlhf/cli/train_sft.py": (  # dotted argparse options read as args.model.<name>, off by default
            "import argparse\n"
            "def train(args):\n    model = Actor(args.pretrain)\n"
            "    if args.model.gradient_checkpointing_enable:\n"
            "        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={'use_reentrant': False})\n"
            "parser = argparse.ArgumentParser()\n"
            "parser.add_argument('--model.gradient_checkpointing_enable', action='store_true', default=False)\n")}, N,
            "dotted argparse switch left off"),
        # a config-driven component registry (modalities): the wrapper runs only when a YAML names its variant
        Example(_AC_REGISTRY, N, "registered checkpointing component that no config selects"),
        Example({**_AC_REGISTRY,
            "configs/pretrain_gpt2_7b.yaml": (
                "activation_checkpointed_model:\n  component_key: model\n  variant_key: activation_checkpointed\n  config:\n"
                "    ac_variant: full_activation_checkpointing\n    layers_fqn: transformer.h\n"),
        }, U, "registered checkpointing component selected by a config"),
        Example({  # checkpointing on unless a run sets the disable switch, whose pydantic default is False
            "llm/params.py": ("from pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                              "    disable_gradient_checkpointing: bool = Field(False, title='Disable gradient checkpointing')\n"),
            "llm/utils.py": ("from transformers import TrainingArguments\n\ndef configure_training_args(config):\n"
                             "    return TrainingArguments(output_dir='out', gradient_checkpointing=not config.disable_gradient_checkpointing)\n"),
        }, U, "negated disable switch, off by default"),
        Example({
            "llm/params.py": ("from pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                              "    disable_gradient_checkpointing: bool = Field(True, title='Disable gradient checkpointing')\n"),
            "llm/utils.py": ("from transformers import TrainingArguments\n\ndef configure_training_args(config):\n"
                             "    return TrainingArguments(output_dir='out', gradient_checkpointing=not config.disable_gradient_checkpointing)\n"),
        }, N, "negated disable switch, on by default"),
        Example({  # AReaL: Megatron's recompute granularity defaults to "full" but applies only when gradient_checkpointing is on
            "pkg/api/cli_args.py": ("from dataclasses import dataclass, field\n\n@dataclass\nclass MegatronEngineConfig:\n"
                                    "    # Gradient checkpointing options, only effective when gradient_checkpointing=True\n"
                                    "    recompute_granularity: str | None = 'full'\n    recompute_method: str | None = 'uniform'\n\n"
                                    "@dataclass\nclass TrainEngineConfig:\n"
                                    "    gradient_checkpointing: bool = field(default=False, metadata={'help': 'Enable gradient checkpointing'})\n"),
            "pkg/engine.py": ("class Engine:\n    def build(self, model):\n        if self.config.gradient_checkpointing:\n"
                              "            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={'use_reentrant': False})\n"),
        }, N, "a recompute granularity default beside a checkpointing switch that is off"),
        Example(_GC_SETTER, N, "a model's checkpointing setter called only under a flag that is off"),
        Example({**_GC_SETTER, "scripts/train_vit_b32.sh": (
            "torchrun --nproc_per_node 8 -m open_clip_train.main \\\n    --model ViT-B-32 \\\n    --grad-checkpointing \\\n"
            "    --precision amp\n")}, U, "the launch turns the flag on"),
        Example(_AC_HANDED_ON, N, "a strategy-config switch that defaults off, handed on from object to object"),
        Example({**_AC_HANDED_ON, "examples/llama_8b.yaml": "distributed:\n  strategy: fsdp2\n  activation_checkpointing: true\n"},
                U, "a shipped recipe turns the handed-on switch on"),
        Example(_DRAFT_GC, N, "a recipe key read with .get(key, False) that nothing sets"),
        Example(_CHUNKED_LOSS, N, "a chunked loss recomputing its logits chunks (the layers keep their activations)"),
        Example({**_CHUNKED_LOSS, "pkg/model.py": (
            "import torch\nfrom torch.utils.checkpoint import checkpoint\n\n\nclass Net(torch.nn.Module):\n"
            "    def forward(self, x):\n        for blk in self.blocks:\n            x = checkpoint(blk, x, use_reentrant=False)\n"
            "        return x\n")}, U, "the same loss beside a model that checkpoints its blocks"),
        Example(_AC_SUBMODULES, N, "a private helper that only a switched-off checkpointing helper calls"),
        Example(_DRAFT_AC_HELPER, N, "a checkpointing helper handed a .get switch that nothing sets"),
        Example({**_DRAFT_AC_HELPER, "examples/draft.yaml": "distributed:\n  activation_checkpointing: true\n"}, U,
                "the same helper with a recipe turning the switch on"),
        Example({**_DRAFT_GC, "examples/eagle3_llama.yaml": "recipe_args:\n  draft_gradient_checkpointing: true\n"}, U,
                "a shipped recipe sets the .get key"),
        Example(model_zoo_library(readme=False), U, "a model library's checkpointing call, no documented run"),
        Example(model_zoo_library(), N, "another model's checkpointing call, the documented run's recipe sets none"),
        Example(_schema_gc("False"), N, "a schema helper field whose default= is False, read by the trainer"),
        Example(_schema_gc("True"), U, "the same schema field defaulting to True"),
        Example(copied_trainer("        if self.args.gradient_checkpointing:\n            self.model.gradient_checkpointing_enable()\n"), N,
                "gradient checkpointing only in a renamed copy of the HF Trainer (behind TrainingArguments.gradient_checkpointing)"),
        Example(_ac_either("False"), N, "a checkpointing helper called only when either of two switches is on, both off by default"),
        Example(_ac_either("True"), U, "the same helper with one of the switches on by default"),
        Example({"pkg/model.py": (  # the only explicit ``.forward(`` call sits under a switch that is off; ``model(x)`` runs it
            "import torch\nfrom torch.utils.checkpoint import checkpoint\n\n\nclass Net(torch.nn.Module):\n"
            "    def forward(self, x):\n        for blk in self.blocks:\n            x = checkpoint(blk, x, use_reentrant=False)\n"
            "        return x\n"),
                 "pkg/train.py": ("import argparse\nfrom pkg.model import Net\n\np = argparse.ArgumentParser()\n"
                                  "p.add_argument('--debug_forward', action='store_true')\nargs = p.parse_args()\nmodel = Net()\n"
                                  "if args.debug_forward:\n    model.forward(x)\nloss = model(x).sum()\nloss.backward()\n")}, U,
                "a checkpointing forward: its callers are the framework's, not the explicit calls of that name"),
        Example(_RENAME_AND_VENDORED_PEFT, N, "a key-renaming table, and a vendored peft k-bit helper nothing calls"),
        Example({**_RENAME_AND_VENDORED_PEFT, "pkg/finetune.py": (
            "from pkg.tools.peft.utils.other import prepare_model_for_int8_training\n\n\ndef load(model):\n"
            "    return prepare_model_for_int8_training(model)\n")}, U, "the vendored helper called through its deprecated alias"),
        Example(bmtrain.model_files(), U, "BMTrain CheckpointBlock (recomputes each block in backward by default)"),
        Example(bmtrain.model_files(layers="bmt.TransformerBlockList([bmt.CheckpointBlock(TransformerBlock(dim), use_checkpoint=False) for _ in range(num_layers)])"),
                N, "BMTrain blocks built with use_checkpoint=False"),
        Example(bmtrain.multi_backend_files(), N, "BMTrain CheckpointBlocks of a backend option the run leaves off"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list = []
        disabled: list = []
        for s in f.effective(*_GC_BOOL_KEYS):
            if _key_rename(s):
                continue
            state = _gc_on(s.value)
            if state is None and isinstance(s.value, Expr):
                state = _negated_switch(f, s.value.text)
            if state:
                used.append(s)
            elif state is False and (s.rank > 0 or s.source == "field-default"):
                disabled.append(s)
        switch_off = [s for s in disabled if s.source == "field-default"]
        for s in f.effective(*_GC_MODE_KEYS):
            if s.source == "field-default" and switch_off and not any(isinstance(u, Setting) for u in used):
                # a granularity default beside a switch that defaults off (AReaL ``recompute_granularity: str | None = "full"``,
                # "only effective when gradient_checkpointing=True", with ``gradient_checkpointing: bool = False``) is a mode
                continue
            if isinstance(s.value, str) and s.value.strip().lower() not in _NONE_STR:
                used.append(s)
        for e in f.config("activation_checkpoint.mode"):
            if isinstance(e.value, str) and e.value.lower() not in _NONE_STR:
                used.append(e)
        for c in f.calls("gradient_checkpointing_enable"):
            if c.func == "gradient_checkpointing_enable":
                continue  # an override delegating to the parent class
            if c.func in _KBIT_PREP:
                continue  # a vendored copy of peft's helper: its callers decide (below)
            gate = guard_off(f, c)
            if not gate and c.func and _GC_FLAG.search(c.func):
                # a model's checkpointing setter (open_clip ``def set_grad_checkpointing(self, enable=True):
                # self.transformer.gradient_checkpointing_enable()``): on only when a run calls it, and its callers decide
                gate = callers_off(f, c)
                if not gate and not any(x.func != c.func for x in f.calls(c.func)):
                    continue  # a setter nothing calls is support code for the users of a library
                if gate:
                    disabled += [g for g in gate if g not in disabled]  # the switch its callers wait for
                    continue
            if gate:
                # cite the switch that keeps it off (``if cfg.activation_checkpointing:`` with the field's default False),
                # so the detail says "off by default" rather than calling the enable call a disabling setting
                disabled += [x for x in _off_switches(gate, c) if x not in disabled]
            else:
                used.append(c)
        active = [c for c in f.calls(*_GC_CALLS) if _gc_call_active(f, c)]
        used += active
        # the launches that pass the switch such a call waits for (``--checkpointing``), cited beside it
        flags = {n for c in active for n, neg in guard_flags(c.guard) if not neg and _GC_FLAG.search(n) and flag_state(f, n) is None}
        used += [s for n in sorted(flags) for s in f.effective(n) if s.source == "launcher" and truthy(s.value) is True and s not in used]
        used += [c for c in _gc_partials(f) if _gc_call_active(f, c)]
        used += _gc_helpers(f)
        for c in f.calls(*_KBIT_PREP):
            if c.func in _KBIT_PREP:
                continue  # peft's deprecated alias handing its arguments to the new name: the alias's callers count
            v = c.kwargs.get("use_gradient_checkpointing", True)  # peft's default is True
            if value_on(f, v) is not False and not guard_off(f, c):
                used.append(c)
        for c in f.calls("FSDPStrategy", "ModelParallelStrategy"):
            if any(c.kwargs.get(k) is not None for k in ("activation_checkpointing", "activation_checkpointing_policy")):
                used.append(c)
        used += bmtrain.checkpointed_blocks(f)  # BMTrain's ``bmt.CheckpointBlock(block)``: recomputed in backward by default
        lf_off = [s for s in f.effective("disable_gradient_checkpointing") if truthy(s.value) is True]
        if not used and not lf_off:
            used += _llamafactory_entry(f, ctx.project.frameworks)
        disabled += lf_off
        if used:
            return Outcome(U, [f.ev(x) for x in used], "activation checkpointing is enabled", {"gradient_checkpointing": True})
        ds = [e for e in f.config_under("activation_checkpointing")
              if e.key in {"partition_activations", "contiguous_memory_optimization", "cpu_checkpointing"} and truthy(e.value)]
        if ds:
            return Outcome(
                P, evs(ds), "a DeepSpeed activation_checkpointing section is configured, but nothing turns recomputation on",
                {"gradient_checkpointing": False},
            )
        support = [c for c in [*f.calls(*_GC_CALLS), *_gc_partials(f)] if not _gc_call_active(f, c)]
        if disabled and all(isinstance(s, Setting) and _unset_default(s) for s in disabled):
            s0 = disabled[0]
            detail = (f"activation checkpointing is off by default: {s0.key} defaults to None ({s0.path}:{s0.line}) "
                      "and nothing sets it")
        elif disabled:
            detail = off_detail(disabled, "activation checkpointing")
        elif support and (regs := [r for c in support for r in registry_off(f, c)]):
            # ``ComponentEntity("model", "activation_checkpointed", ...)`` with no config naming ``activation_checkpointed``
            detail = "activation checkpointing exists only as a registered component that no config selects"
            disabled = list({(r.path, r.line): r for r in regs}.values())
        elif support:
            detail = "checkpointing code exists behind a flag that no config or launch turns on"
        else:
            detail = "no activation checkpointing found"
        return Outcome(N, evs(disabled), detail, {"gradient_checkpointing": False})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status not in (Status.UNUSED, Status.PARTIAL) or not ctx.project.does_training:
            return None
        p = ctx.project
        if p.max_seq_len and p.max_seq_len >= 4096:
            return Priority.HIGH  # the seed: long sequences without recomputation
        if p.params_billions and p.params_billions >= 7:
            return Priority.MEDIUM
        return Priority.LOW


# --- C4 CPU/NVMe offload --------------------------------------------------------

_OFFLOAD_DEVICES = {"cpu", "nvme"}
_OFFLOAD_STRATEGIES = lazy_compile(r"deepspeed_stage_[23]_offload", re.I)


# NeMo AutoModel: the YAML's ``distributed:`` block becomes ``strategy_kwargs``; FSDP2Config's offload policy defaults to None
_OFFLOAD_KEY = {
    "pkg/distributed/config.py": (
        "from dataclasses import dataclass\nfrom torch.distributed.fsdp import CPUOffloadPolicy\n\n\n@dataclass\n"
        "class FSDP2Config:\n    offload_policy: CPUOffloadPolicy | None = None\n    activation_checkpointing: bool = False\n"),
    "pkg/recipes/dist_utils.py": (
        "from torch.distributed.fsdp import CPUOffloadPolicy\n\n\ndef parse_distributed_section(cfg):\n"
        "    strategy_kwargs = dict(cfg)\n    if \"offload_policy\" in strategy_kwargs:\n"
        "        op_raw = strategy_kwargs[\"offload_policy\"]\n        if isinstance(op_raw, dict):\n"
        "            strategy_kwargs[\"offload_policy\"] = CPUOffloadPolicy(**op_raw)\n    return strategy_kwargs\n"),
}


# VeOmni: the FSDP2 helper takes its offload switch out of **kwargs (``kwargs.pop("enable_fsdp_offload", False)``); the
# only caller hands it the ``offload`` field of the run's typed ``fsdp_config`` section, which defaults to False
_POPPED_OFFLOAD = {
    "pkg/arguments.py": (
        "from dataclasses import dataclass, field\n\n\n@dataclass\nclass FSDPConfig:\n"
        "    offload: bool = field(default=False)\n    reshard_after_forward: bool = field(default=True)\n\n\n"
        "@dataclass\nclass AcceleratorConfig:\n    fsdp_config: FSDPConfig = field(default_factory=FSDPConfig)\n"),
    "pkg/parallelize.py": (
        "from torch.distributed.fsdp import CPUOffloadPolicy, fully_shard\n\n\n"
        "def parallelize_model_fsdp2(model, **kwargs):\n    fsdp_kwargs = {}\n"
        "    enable_fsdp_cpu_offload = kwargs.pop(\"enable_fsdp_offload\", False)\n    if enable_fsdp_cpu_offload:\n"
        "        fsdp_kwargs[\"offload_policy\"] = CPUOffloadPolicy(pin_memory=True)\n"
        "    for layer in model.layers:\n        fully_shard(layer, **fsdp_kwargs)\n    fully_shard(model, **fsdp_kwargs)\n"
        "    return model\n"),
    "pkg/trainer.py": (
        "from pkg.parallelize import parallelize_model_fsdp2\n\n\nclass Trainer:\n    def build(self, args):\n"
        "        self.model = parallelize_model_fsdp2(\n            self.model,\n"
        "            enable_fsdp_offload=args.train.accelerator.fsdp_config.offload,\n        )\n"),
}

# RLinf: the config validation fills each unset key of the run's OmegaConf section with its default
# (``cfg.fsdp_config.cpu_offload = cfg.fsdp_config.get("cpu_offload", False)``); the FSDP2 wrapper builds its offload policy
# in a conditional expression on that key
_DEFAULTED_OFFLOAD = {
    "pkg/config.py": (
        "from omegaconf import DictConfig, open_dict\n\n\ndef validate_fsdp_cfg(cfg: DictConfig) -> DictConfig:\n"
        "    with open_dict(cfg):\n"
        "        cfg.fsdp_config.strategy = cfg.fsdp_config.get(\"strategy\", \"fsdp2\")\n"
        "        cfg.fsdp_config.cpu_offload = cfg.fsdp_config.get(\"cpu_offload\", False)\n"
        "        cfg.fsdp_config.offload_pin_memory = cfg.fsdp_config.get(\"offload_pin_memory\", False)\n"
        "    return cfg\n"),
    "pkg/fsdp2.py": (
        "from torch.distributed.fsdp import CPUOffloadPolicy, OffloadPolicy, fully_shard\n\n\nclass FSDP2Strategy:\n"
        "    def wrap_model(self, model, device_mesh):\n        offload_policy = (\n"
        "            CPUOffloadPolicy(pin_memory=self.cfg.fsdp_config.offload_pin_memory)\n"
        "            if self.cfg.fsdp_config.cpu_offload\n            else OffloadPolicy()\n        )\n"
        "        for layer in model.model.layers:\n"
        "            fully_shard(layer, mesh=device_mesh, offload_policy=offload_policy)\n"
        "        return fully_shard(model, mesh=device_mesh, offload_policy=offload_policy)\n"),
}

#: AReaL's Archon engine: ``apply_fsdp(..., cpu_offload=False)`` builds ``CPUOffloadPolicy()`` under ``if cpu_offload:``; the
#: engine hands it the config's ``offload_params`` (False); its checkpoint code gathers state dicts with
#: ``StateDictOptions(cpu_offload=True)``, a keyword of the same name that is not training offload
_FSDP_OFFLOAD_SWITCH = {
    "pkg/api/cli_args.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass EngineConfig:\n    offload_params: bool = False\n"),
    "pkg/models/parallelize.py": (
        "from torch.distributed.fsdp import CPUOffloadPolicy, fully_shard\n\n\n"
        "def apply_fsdp(model, dp_mesh, cpu_offload: bool = False):\n    fsdp_config = {'mesh': dp_mesh}\n"
        "    if cpu_offload:\n        fsdp_config['offload_policy'] = CPUOffloadPolicy()\n"
        "    for block in model.layers:\n        fully_shard(block, **fsdp_config)\n    fully_shard(model, **fsdp_config)\n\n\n"
        "def parallelize(model, dp_mesh, cpu_offload: bool = False):\n    apply_fsdp(model, dp_mesh, cpu_offload=cpu_offload)\n"
        "    return model\n"),
    "pkg/engine/engine.py": (
        "from pkg.models.parallelize import parallelize\n\n\nclass Engine:\n    def initialize(self, model, mesh):\n"
        "        self.model = parallelize(model, mesh, cpu_offload=self.config.offload_params)\n"),
    "pkg/engine/checkpoint.py": (
        "import torch.distributed.checkpoint as dcp\n"
        "from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict\n\n\n"
        "def save(model, path):\n    options = StateDictOptions(full_state_dict=False, cpu_offload=True)\n"
        "    dcp.save(get_model_state_dict(model, options=options), checkpoint_id=path)\n"),
}

#: Composer 0.32: ``get_cpu_offload`` returns ``CPUOffload(offload_params=True)`` only when handed ``FSDPConfig.cpu_offload``
#: (False); ``CheckpointLoadOptions.cpu_offload`` (True) gathers a loaded state dict on the CPU, another switch
_FSDP1_OFFLOAD_HELPER = {
    "pkg/utils/parallelism.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass FSDPConfig:\n    cpu_offload: bool = False\n"
        "    sharding_strategy: str = 'FULL_SHARD'\n"),
    "pkg/checkpoint/load.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass CheckpointLoadOptions:\n    load_model: bool = True\n"
        "    cpu_offload: bool = True\n"),
    "pkg/distributed/strategy.py": (
        "from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel\n\n\n"
        "def get_cpu_offload(cpu_offload=False):\n    return CPUOffload(offload_params=True) if cpu_offload else None\n\n\n"
        "def prepare_fsdp_module(model, fsdp_config):\n    cpu_offload = get_cpu_offload(cpu_offload=fsdp_config.cpu_offload)\n"
        "    return FullyShardedDataParallel(model, cpu_offload=cpu_offload)\n"),
}


def _off_switches(gate: list[Any], c: Call) -> list[Any]:
    """What to cite for offload code that a switch keeps off: the switch's off settings (``FSDPConfig.cpu_offload: bool =
    False``), so the detail says "off by default" when they are defaults; the code itself when the gate is no setting."""
    return [g for g in gate if isinstance(g, Setting) and truthy(g.value) is False] or [c]

def _paged_optimizers(f: Facts) -> list:
    """bitsandbytes' paged optimizers: HF ``optim: paged_adamw_32bit`` (QLoRA's default) or ``bnb.optim.PagedAdamW(...)``."""
    named = [s for s in f.effective("optim") if isinstance(s.value, str)]
    out: list = [s for s in named if s.value.lower().startswith("paged_")]
    if len(out) * 2 <= len(named):
        out = []  # a few recipes among many (unsloth's studio defaults: 2 of 78 set paged_adamw_8bit, 73 adamw_8bit)
    out += [c for c in f.calls_where(lambda short: short.startswith("Paged")) if "optim" in c.name or "bnb" in c.name]
    return out


@register
class C4Offload(Check):
    id = "C4"
    title = "CPU/NVMe offload"
    title_zh = "CPU/NVMe 卸载"
    bottlenecks = (Bottleneck.MEMORY,)
    priority = Priority.LOW
    benefit = "fits optimizer states (and parameters) that do not fit in GPU memory, at a throughput cost"
    what = (
        "Whether optimizer states or parameters are offloaded to CPU or NVMe: DeepSpeed `offload_optimizer`/`offload_param` with "
        "`device: cpu|nvme` (`none` is not use), accelerate `offload_optimizer_device`/`fsdp_offload_params`, FSDP "
        "`CPUOffload(offload_params=True)`, Lightning `deepspeed_stage_3_offload`, ColossalAI Gemini placement, Megatron "
        "`--optimizer-cpu-offload`. A DataLoader `pin_memory` is F3, not offload. An offload config that no launch script uses is partial."
    )
    why = (
        "ZeRO-Offload trains a 13B model on a single V100 32GB (10x the no-offload size) at ~40 TFLOPS (Ren et al., 2021), and "
        "ZeRO-Infinity's NVMe offload reaches trillion-parameter scale on 512 GPUs (Rajbhandari et al., 2021). Offload trades "
        "PCIe traffic for memory: it slows a run that already fits, so it is the tool for memory-starved setups only."
    )
    fix = (
        "Only when a model does not fit even with ZeRO-3/FSDP and activation checkpointing: offload optimizer states to CPU with "
        "DeepSpeed `\"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": true}` (parameters too with `offload_param` under ZeRO-3)."
    )
    fix_zh = (
        "仅在 ZeRO-3/FSDP 加激活重计算后仍放不下模型时使用：用 DeepSpeed `\"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": true}` "
        "把优化器状态卸载到 CPU（ZeRO-3 下可再用 `offload_param` 卸载参数）。"
    )
    fix_safety = FixSafety.UNSAFE
    references = ("https://arxiv.org/abs/2101.06840", "https://arxiv.org/abs/2104.07857", "https://www.deepspeed.ai/docs/config-json/#zero-optimizations-for-fp16-training")
    snippets = {
        "deepspeed-json": (
            '{\n  "zero_optimization": {\n    "stage": 3,\n    "offload_optimizer": {"device": "cpu", "pin_memory": true},\n'
            '    "offload_param": {"device": "cpu", "pin_memory": true}\n  }\n}\n'
        ),
        "accelerate-yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: cpu\n  offload_param_device: cpu\n",
        "python": (
            "from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel as FSDP\n\n"
            "model = FSDP(model, cpu_offload=CPUOffload(offload_params=True))\n"
        ),
    }
    examples = (
        Example({"qlora.py": (  # artidoro/qlora: the paged optimizer is the TrainingArguments default of every recipe
            "from dataclasses import dataclass, field\n\nimport transformers\n\n\n@dataclass\n"
            "class TrainingArguments(transformers.Seq2SeqTrainingArguments):\n"
            "    optim: str = field(default='paged_adamw_32bit', metadata={\"help\": 'The optimizer to be used'})\n\n\n"
            "def train():\n    hfparser = transformers.HfArgumentParser((TrainingArguments,))\n"
            "    (training_args,) = hfparser.parse_args_into_dataclasses()\n"
            "    trainer = transformers.Seq2SeqTrainer(model=model, args=training_args)\n    trainer.train()\n")},
            P, "paged optimizer"),
        Example({"train.py": "import bitsandbytes as bnb\n\noptimizer = bnb.optim.AdamW8bit(model.parameters(), lr=1e-4)\n"
                 "for batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n    optimizer.step()\n"},
                N, "8-bit optimizer, not paged"),
        Example(_FSDP_OFFLOAD_SWITCH, N, "an FSDP offload switch handed on from a field that is off, beside state-dict CPU gathering"),
        Example({**_FSDP_OFFLOAD_SWITCH, "examples/grpo.yaml": "actor:\n  offload_params: true\n"}, U,
                "a recipe turns the handed-on switch on"),
        Example(_FSDP1_OFFLOAD_HELPER, N, "FSDP's CPUOffload built by a helper only when the config's switch (False) is on"),
        Example({**_FSDP1_OFFLOAD_HELPER, "yamls/llama_7b.yaml": "fsdp_config:\n  cpu_offload: true\n"}, U,
                "a recipe turns that switch on"),
        Example({"megatron/training/arguments.py": (
            "import argparse\n\n\ndef _add_optimizer_args(parser):\n    group = parser.add_argument_group(title='optimizer')\n"
            "    group.add_argument('--optimizer-cpu-offload', action='store_true', help='Offload optimizer state to CPU')\n"
            "    return parser\n"),
                 "megatron/core/extensions/transformer_engine.py": "def linear(config):\n    cpu_offload = None\n    return cpu_offload\n",
                 "train.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --bf16 --micro-batch-size 1\n"},
                N, "an offload option left at its default; a library's local None"),
        Example({"ds_z3_offload.json": (
            '{\n  "zero_optimization": {\n    "stage": 3,\n    "offload_optimizer": {\n      "device": "cpu",\n      "pin_memory": true\n    },\n'
            '    "offload_param": {\n      "device": "cpu"\n    }\n  }\n}\n'),
                 "run.sh": "deepspeed train.py --deepspeed ds_z3_offload.json --bf16 True\n"}, U, "deepspeed cpu offload"),
        Example({"accelerate_config.yaml": (
            "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n  offload_optimizer_device: nvme\n  offload_param_device: none\n"),
                 "launch.sh": "accelerate launch --config_file accelerate_config.yaml train.py\n"}, U, "accelerate nvme"),
        Example({"examples/llama-3/fft-8b-fsdp.yaml": (
            "base_model: NousResearch/Meta-Llama-3.1-8B\nsequence_len: 4096\nmicro_batch_size: 1\nfsdp:\n  - full_shard\n"
            "  - auto_wrap\nfsdp_config:\n  fsdp_offload_params: true\n  fsdp_state_dict_type: FULL_STATE_DICT\n")},
                U, "axolotl recipe run by its CLI"),
        Example({"train.py": (
            "from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel as FSDP\n"
            "model = FSDP(model, cpu_offload=CPUOffload(offload_params=True), device_id=rank)\n")}, U, "fsdp"),
        Example({"ds_config.json": '{\n  "zero_optimization": {\n    "stage": 2,\n    "offload_optimizer": {\n      "device": "none"\n    }\n  }\n}\n'}, N, "device none"),
        Example({"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=4, pin_memory=True)\n"}, N, "pin_memory is not offload"),
        Example({"train.py": "from torch.distributed.fsdp import CPUOffload\ncpu_offload = CPUOffload(offload_params=False)\n"}, N, "fsdp offload off"),
        Example({"scripts/zero3.json": '{\n  "zero_optimization": {"stage": 3}\n}\n',
                 "scripts/zero3_offload.json": '{\n  "zero_optimization": {\n    "stage": 3,\n    "offload_optimizer": {"device": "cpu"}\n  }\n}\n',
                 "scripts/finetune.sh": "deepspeed llava/train/train_mem.py --deepspeed ./scripts/zero3.json --bf16 True\n"}, P, "offload config shipped but unused"),
        Example({  # AReaL: a checkpoint's sharded state dict is gathered to CPU for the writer; training keeps states on the GPU
            "pkg/checkpoint.py": ("from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict\n\n"
                                  "def state_for_save(model):\n    # cpu_offload=True ensures tensors are on CPU for the filesystem writer\n"
                                  "    options = StateDictOptions(full_state_dict=False, cpu_offload=True)\n"
                                  "    return get_model_state_dict(model, options=options)\n"),
            "train.py": ("from torch.distributed.fsdp import fully_shard\nfrom pkg.checkpoint import state_for_save\n"
                         "for block in model.layers:\n    fully_shard(block)\nfully_shard(model)\n"),
        }, N, "a state dict gathered to CPU for a checkpoint is not offload"),
        Example(_OFFLOAD_KEY, N, "an offload policy built only when the run's mapping names a key that defaults to None"),
        Example(_POPPED_OFFLOAD, N, "an offload policy behind a keyword the caller fills from a section field defaulting to False"),
        Example({**_POPPED_OFFLOAD, "pkg/arguments.py": _POPPED_OFFLOAD["pkg/arguments.py"].replace(
            "offload: bool = field(default=False)", "offload: bool = field(default=True)")}, U,
                "the same keyword with the section's offload on by default"),
        Example(_DEFAULTED_OFFLOAD, N, "an offload policy chosen on a section key the config validation defaults to False"),
        Example({**_DEFAULTED_OFFLOAD, "examples/grpo_fsdp.yaml": (
            "actor:\n  fsdp_config:\n    strategy: fsdp2\n    cpu_offload: true\n")}, U,
                "a shipped recipe turns the section key on"),
        Example({**_OFFLOAD_KEY, "examples/llama_8b_offload.yaml": (
            "distributed:\n  strategy: fsdp2\n  offload_policy:\n    pin_memory: true\n")}, U,
                "a shipped recipe names the key"),
        Example(bmtrain.model_files(), U, "BMTrain AdamOffloadOptimizer: Adam states and the step on the CPU"),
        Example(bmtrain.model_files(optimizer="bmt.optim.AdamOptimizer"), N, "BMTrain's GPU AdamOptimizer"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list = []
        disabled: list = []
        values: dict[str, object] = {}
        # a DeepSpeed JSON whose ``offload_optimizer`` sits beside ``zero_optimization``, not in it (CogVLM
        # ``finetune_demo/test_config_bf16.json``): DeepSpeed reads offload only inside the ZeRO section
        zero_files = {e.path for e in f.config("zero_optimization.stage") if e.keys[0] == "zero_optimization"}
        # ZeRO stages below 3 ignore ``offload_param`` (DeepSpeed: "valid only with stage 3"; Llama-Chinese's
        # ``train/sft/ds_config_zero2.json`` carries one beside its optimizer offload)
        below_3 = {e.path for e in f.config("zero_optimization.stage") if e.keys[0] == "zero_optimization"
                   and as_number(e.value) is not None and (as_number(e.value) or 0) < 3}
        misplaced: list = []
        for key, name in (("offload_optimizer.device", "offload_optimizer"), ("offload_param.device", "offload_param")):
            for e in f.config(key):
                dev = str(e.value).lower()
                if e.path in zero_files and len(e.keys) == 2 and e.keys[0] == name:
                    misplaced.append(e)
                    continue
                if name == "offload_param" and e.path in below_3 and e.keys[0] == "zero_optimization":
                    continue
                if dev in _OFFLOAD_DEVICES:
                    used.append(e)
                    values.setdefault(name, dev)
                elif dev in {"none", "null", "false"}:
                    disabled.append(e)
        for e in f.config("zero_optimization.cpu_offload", "zero_optimization.cpu_offload_params"):
            (used if truthy(e.value) else disabled).append(e)
            if truthy(e.value):
                values.setdefault("offload_optimizer", "cpu")
        for s in f.effective("offload_optimizer_device", "offload_param_device"):
            dev = str(s.value).lower()
            name = "offload_optimizer" if "optimizer" in s.name else "offload_param"
            if dev in _OFFLOAD_DEVICES:
                used.append(s)
                values.setdefault(name, dev)
            elif dev == "none" and s.rank > 0:
                disabled.append(s)
        flags = ("fsdp_offload_params", "fsdp_cpu_offload", "cpu_offload", "optimizer_cpu_offload", "cpu_offloading",
                 "enable_activation_offloading", "offload_optimizer", "offload_parameters", "offload_params", "adam_offload")
        for s in f.effective(*flags, "offload"):
            if s.name == "offload" and s.source not in {"launcher", "config"}:
                continue  # DeepSpeed-Chat's `--offload` flag counts where a launch passes it, not as a bare argparse option
            if checkpoint_gather(s, s.name, f):
                continue  # ``StateDictOptions(cpu_offload=True)``: a checkpoint's state dict gathered to CPU, not training offload
            t = truthy(s.value)
            if t and s.source == "call" and _call_gated(f, s):
                continue  # ``CPUOffload(offload_params=True) if cpu_offload else None`` with the switch off: judged below
            if t:
                used.append(s)
                values.setdefault("offload", True)
            elif t is False and s.rank > 0 and s.source != "assign" and not (s.source == "call" and _call_gated(f, s)):
                # a run's setting turns it off; a library's local ``cpu_offload = None`` (Megatron's TE wrapper) does not
                disabled.append(s)
        # FSDP's offload policies, unless a data-parallel selector leaves FSDP itself unpicked (fairseq2: ``data_parallelism``
        # defaults to "ddp"; its ``to_fsdp2`` builds ``CPUOffloadPolicy()`` only for runs that choose FSDP and offload)
        fsdp_off = bool(backend_unselected(f, "fsdp"))
        for c in f.calls("CPUOffload") if not fsdp_off else ():
            v = c.kwargs.get("offload_params", c.args[0] if c.args else False)
            if not value_on(f, v):
                if not guard_off(f, c):  # (not in a branch the run does not take: a Trainer copy's unpicked FSDP branch)
                    # the flag it reads, when off (open_lm ``CPUOffload(offload_params=args.fsdp_cpu_offload)``, an argparse
                    # default nobody changes: off by default, not explicitly disabled)
                    read = [s for s in f.effective(v.ref) if truthy(s.value) is False] if isinstance(v, Expr) and v.ref else []
                    disabled += read or [c]
            elif gate := guard_off(f, c) or callers_off(f, c):
                # (a Trainer copy's ``if FSDPOption.OFFLOAD in self.args.fsdp:`` under an FSDP branch the run does not take is
                # the framework's option, not a setting of the run)
                disabled += [] if in_trainer_copy(f, c.path) else _off_switches(gate, c)
            else:
                used.append(c)
        for c in f.calls("CPUOffloadPolicy", "OffloadPolicy"):
            if c.short == "CPUOffloadPolicy" and not fsdp_off:
                # built only under a switch that is off (``if cpu_offload:`` in a helper whose callers pass an off default)
                gate = guard_off(f, c) or callers_off(f, c)
                if gate:
                    disabled += _off_switches(gate, c)
                else:
                    used.append(c)
        for s in f.effective("strategy", "fsdp", "placement_policy"):
            v = str(s.value).lower() if isinstance(s.value, str) else ""
            if _OFFLOAD_STRATEGIES.search(v) or (s.name == "fsdp" and "offload" in v.split()) or (s.name == "placement_policy" and v in {"cpu", "auto"}):
                used.append(s)
                values.setdefault("offload", True)
        for s in f.effective("offload_optim_frac", "offload_param_frac"):
            if (as_number(s.value) or 0) > 0:
                used.append(s)
        for c in bmtrain.offload_optimizers(f):  # BMTrain's ``bmt.optim.AdamOffloadOptimizer``: Adam states on the host
            used.append(c)
            values.setdefault("offload_optimizer", "cpu")
        if not used:
            if misplaced:
                m = misplaced[0]
                return Outcome(N, evs(misplaced), f"`{m.keys[0]}` with device {m.value!r} sits at the top level of {m.path}:{m.line}, "
                               "outside `zero_optimization`, where DeepSpeed does not read it: nothing is offloaded",
                               {"offload_optimizer": "none"}, findings=evs(misplaced))
            if disabled:
                return Outcome(N, evs(disabled), off_detail(disabled, "offload"), {"offload_optimizer": "none"})
            # (after a setting that turns offload off: litgpt's bnb ``PagedAdamW`` serves only its quantized runs)
            paged = _paged_optimizers(f)
            if paged:
                x = paged[0]
                what = f"{x.name}={x.value!r}" if isinstance(x, Setting) else f"`{x.name}`"
                return Outcome(P, evs(paged[:5]), f"a paged optimizer ({what} at {x.path}:{x.line}): bitsandbytes keeps its state in "
                               "CUDA unified memory and pages it to CPU RAM only when the GPU runs short; nothing is offloaded by "
                               "plan", {"offload_optimizer": "paged"})
            # an option the project has, left at its default (Megatron ``--optimizer-cpu-offload``): say so and cite it
            avail = [s for s in f.effective(*flags) if truthy(s.value) is False and s.rank == 0
                     and s.source in ("argparse-default", "field-default")]
            if avail:
                a = avail[0]
                return Outcome(N, evs(avail[:5]), f"CPU offload is available but off by default ({a.name}=False at {a.path}:{a.line})",
                               {"offload_optimizer": "none", "offload_available": True})
            absent = absent_ds_configs(f)
            if absent and not f.config("zero_optimization"):
                # the DeepSpeed config the run is handed is not in the repository (Valley's ``*json`` is in its .gitignore):
                # the offload settings live there
                a = absent[0]
                return Outcome(Status.NA, evs(absent[:3]), f"not judged: the DeepSpeed config the launch or recipe passes "
                               f"({a.value} at {a.path}:{a.line}) is not in the repository: check its zero_optimization."
                               "offload_optimizer / offload_param", {"offload_optimizer": None})
            return Outcome(N, [], "no CPU/NVMe offload found", {"offload_optimizer": "none"})
        refs = referenced_configs(f)
        config_files = [x for x in used if getattr(x, "source", getattr(x, "fmt", "")) in {"config", "json", "yaml"}
                        and PurePosixPath(x.path).suffix in {".json", ".yaml", ".yml"}]
        # a LLaMA-Factory / axolotl recipe is itself the run's config (its CLI takes it): it needs no reference
        recipes = {e.path for entries in recipe_files(f).values() for e in entries}
        # (a config of the same name no launch passes is not: Llama-Chinese's ``train/pretrain/ds_config_zero2.json`` beside the
        # ``train/sft/ds_config_zero2.json`` its fine-tuning launches pass; the name is referenced, by the other file's launch)
        unl = unlaunched_ds_configs(f)
        launched_names = {PurePosixPath(e.path).name for e in f.config("zero_optimization") if e.path not in unl}
        active = [x for x in used if (x not in config_files or PurePosixPath(x.path).name in refs or x.path in recipes)
                  and not (x.path in unl and PurePosixPath(x.path).name in launched_names)]
        if not active:
            # the launch hands DeepSpeed a config it names only when it starts (dolly's notebook: ``--deepspeed
            # ${deepspeed_config}``, built from the GPU family): the offloading configs may be the one it runs
            picked = [s for s in f.settings(*DS_REF_NAMES) if s.source == "launcher" and isinstance(s.value, str) and "$" in s.value]
            if picked:
                p = picked[0]
                names = sorted({PurePosixPath(x.path).name for x in config_files})
                total = {e.path for e in f.config("zero_optimization") if e.path.endswith((".json", ".yaml", ".yml"))}
                return Outcome(P, [f.ev(x) for x in used] + [f.ev(p)],
                               f"{len(names)} of {max(len(total), len(names))} DeepSpeed configs offload ({', '.join(names)}); the launch "
                               f"picks its config when it starts (--{p.name} {p.value} at {p.path}:{p.line})", values)
            return Outcome(P, [f.ev(x) for x in used], "an offload config is shipped, but no launch script or config uses it", values)
        minority = _offload_launch_minority(f, active or used)
        if minority:
            return Outcome(P, [f.ev(x) for x in (active or used)], minority, values)
        return Outcome(U, [f.ev(x) for x in (active or used)], "offload to " + "/".join(sorted({str(v) for v in values.values() if isinstance(v, str)}) or {"cpu"}), values)

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status != Status.UNUSED or not ctx.project.does_training:
            return None
        # offload slows a run that fits: advise it only where a model is big enough to be memory-starved
        return Priority.LOW if (ctx.project.params_billions or 0) >= 13 else None



# --- C5 gradient accumulation ---------------------------------------------------

_GA_KEYS = (
    "gradient_accumulation_steps", "accumulate_grad_batches", "gradient_accumulation", "grad_accum_steps", "gradient_accumulation_iters",
    "accumulation_steps", "accum_steps", "grad_accum", "batch_accumulation_per_replica", "accum_iter", "grad_accumulation_steps",
    # (UniTok ``grad_accu: int = 1  # gradient accumulation``)
    "grad_accu",
    # InternEvo/InternLM ``data = dict(micro_num=4, ...)``: "the number of micro_batch contained in one gradient update"
    "micro_num",
)
#: a launch's accumulation computed in shell arithmetic from a global batch (Mantis ``gradient_accumulation_steps=$((
#: $global_batch_size / ($per_device_train_batch_size * $GPU)))``, expanded: ``$((128 / (1 * $((...)))))``)
_SHELL_RATIO = lazy_compile(r"^\$\(\(\s*(\d+)\s*/\s*\((.*)\)\s*\)\)$")


def shell_ratio(v: object) -> tuple[int, int] | None:
    """(global batch, micro-batch) of ``$((G / (m * GPUs)))`` with the micro-batch the one literal factor, in any place:
    Mantis ``$((128 / (1 * $((...)))))``, VideoLLaMA2 ``$[128/($WORLD_SIZE*$NPROC_PER_NODE*4)]`` (expanded with the
    script's defaults as ``$((128/(${1:-1}*${2:-8}*4)))``)."""
    m = _SHELL_RATIO.match(v.strip()) if isinstance(v, str) else None
    if m is None:
        return _chained_ratio(v)
    factors = [x.strip() for x in m.group(2).split("*")]
    lits = [int(x) for x in factors if x.isdigit()]
    if len(lits) != 1 or len(lits) == len(factors):
        return None
    return int(m.group(1)), lits[0]


def _chained_ratio(v: object) -> tuple[int, int] | None:
    """(global batch, micro-batch) of ``$((G / GPUs / m))`` divided in a chain, the micro-batch the one literal divisor and
    the GPU count a command or variable (deita's ``GRADACC=$(($TOTALBSZ/$NUMGPUS/$BSZPERDEV))``, expanded as
    ``$((512/$(echo ... | awk ...)/1))``). None for any other shape."""
    parts = chained_divisors(v)
    if parts is None:
        return None
    lits = [int(x) for x in parts[1:] if x.isdigit()]
    # (OpenCoder ``GRAD_ACCU=$(($BATCH_SIZE / $WORLD_SIZE / $MICRO_BATCH_SIZE / 8))``, expanded ``$((4096 / $WORLD_SIZE / 8 /
    # 8))``: the micro-batch and the GPUs per node both literal, which is which unknown: their product bounds the steps)
    return int(parts[0]), math.prod(lits)


def chained_divisors(v: object) -> list[str] | None:
    """The terms of a chained ``$((G / a / b ...))`` ratio (G first), split at the top level only, when G and at least one
    divisor are literal and at least one divisor is a variable or command; else None."""
    if not isinstance(v, str):
        return None
    t = v.strip()
    if not (t.startswith("$((") and t.endswith("))")):
        return None
    parts, depth, cur = [], 0, ""
    for ch in t[3:-2]:
        depth += (ch == "(") - (ch == ")")
        if ch == "/" and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    if len(parts) < 3 or not parts[0].isdigit():
        return None
    lits = [int(x) for x in parts[1:] if x.isdigit()]
    if not lits or 0 in lits or len(lits) == len(parts) - 1 or not all(x.isdigit() or x.startswith("$") for x in parts[1:]):
        return None
    return parts


_BATCH_PAIRS = (("global_batch_size", "micro_batch_size"), ("train_batch_size", "train_micro_batch_size_per_gpu"),
                ("global_train_batch_size", "device_train_microbatch_size"))
#: hooks registered on a tensor's or module's gradient: they run inside a ``backward()`` the loop already made
_GRAD_HOOK_CALLS = ("register_hook", "register_full_backward_hook")
_IDENT = lazy_compile(r"[A-Za-z_]\w*")


def _in_grad_hook(f: Facts, c: Call) -> bool:
    """A ``no_sync`` inside a gradient hook (``loss.register_hook(partial(_backward_hook, ...))``), or in a helper only such a
    hook calls: GradCache-style losses (sentence-transformers' ``Cached*`` losses) replay one batch's mini-batches inside the
    loss's own backward and defer DDP's all-reduce until the replay ends; that is part of one loss's backward pass, not the
    training loop accumulating micro-batches before an optimizer step."""
    hooked = {w for h in f.calls(*_GRAD_HOOK_CALLS) for a in h.args for w in _IDENT.findall(str(getattr(a, "text", a)))}
    if not hooked or not c.func:
        return False
    if c.func in hooked:
        return True
    callers = [x for x in f.calls(c.func) if x.func != c.func and x.short == c.func]
    return bool(callers) and all(x.func in hooked for x in callers)


#: sentence-transformers 6.3-shaped GradCache loss: the loss caches the embeddings' gradients, then a hook on the loss replays the
#: mini-batches inside its backward, each under DDP ``no_sync``; ``{hook}`` is how the replay is reached
_GRADCACHE_LOSS = {
    "mylib/losses/cached_mnrl.py": (
        "from contextlib import nullcontext\nfrom functools import partial\n\nimport torch\nfrom torch import nn\n"
        "from torch.nn.parallel import DistributedDataParallel\n\n\n"
        "def _backward_hook(grad_output, sentence_features, loss_obj):\n"
        "    model = loss_obj.model\n"
        "    for feature, grads in zip(sentence_features, loss_obj.cache):\n"
        "        no_sync = model.no_sync if isinstance(model, DistributedDataParallel) else nullcontext\n"
        "        for begin, grad in zip(range(0, len(feature['input_ids']), loss_obj.mini_batch_size), grads):\n"
        "            with no_sync():\n"
        "                reps = loss_obj.embed_minibatch(feature, begin)\n"
        "                torch.dot(reps.flatten(), grad.flatten()).mul(grad_output).backward()\n\n\n"
        "class CachedMultipleNegativesRankingLoss(nn.Module):\n"
        "    def __init__(self, model, mini_batch_size=32):\n"
        "        super().__init__()\n        self.model = model\n        self.mini_batch_size = mini_batch_size\n"
        "        self.cache = None\n\n"
        "    def forward(self, sentence_features, labels):\n"
        "        reps = [self.embed_all(feature) for feature in sentence_features]\n"
        "        loss = self.calculate_loss_and_cache_gradients(reps)\n"
        "{hook}"
        "        return loss\n"),
    "mylib/trainer.py": (
        "from transformers import Trainer\n\n\n"
        "class EmbeddingTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):\n"
        "        features, labels = self.collect_features(inputs)\n"
        "        return self.loss(features, labels)\n"),
}
_HOOKED = "        loss.register_hook(partial(_backward_hook, sentence_features=sentence_features, loss_obj=self))\n"
_CALLED = "        loss.backward()\n        _backward_hook(torch.ones_like(loss), sentence_features, self)\n"


def _gradcache_loss(hook: str = _HOOKED) -> dict[str, str]:
    return filled(_GRADCACHE_LOSS, "hook", hook)


#: fairseq2 0.8.1: the trainer accumulates under no_sync as many batches as its accumulation section says (1 by default)
_GA_SECTION = {
    "fairseq2/recipe/config.py": (
        "from dataclasses import dataclass\n\n\n@dataclass(kw_only=True)\nclass GradAccumulationConfig:\n"
        "    num_batches: int = 1\n    \"\"\"The number of batches to accumulate gradients before an optimizer update.\"\"\"\n\n"
        "    no_sync: bool = False\n"),
    "fairseq2/trainer.py": (
        "from contextlib import nullcontext\n\n\nclass Trainer:\n    def _run_step(self, batches):\n"
        "        for batch_nr, batch in enumerate(batches):\n"
        "            with self._maybe_no_sync(batch_nr, len(batches)):\n                loss = self._unit(batch)\n"
        "                loss.backward()\n        self._optimizer.step()\n\n"
        "    def _maybe_no_sync(self, batch_nr, num_batches):\n"
        "        if batch_nr < num_batches - 1 and self._data_parallel_module is not None:\n"
        "            return self._data_parallel_module.no_sync()\n        return nullcontext()\n"),
}
_ACCUM_NAME = lazy_compile(r"accum|micro|grad_acc|update_freq", re.I)
#: the count fields of a gradient-accumulation section (``GradAccumulationConfig.num_batches``)
_GA_COUNTS = ("num_batches", "num_steps", "steps", "num_micro_batches")
_GA_OWNER = lazy_compile(r"grad(ient)?_?accum", re.I)
_GA_SECTIONS = ("grad_accumulation", "gradient_accumulation", "grad_accum")


#: GPUs on one node, the most a single-node run can spread a global batch over when no launch says how many it uses
_NODE_GPUS = 8


def _batch_numbers(f: Facts, key: str) -> list[tuple[float, list[Any]]]:
    """The numbers ``key`` is set to, each with the settings that give it: a plain number, or the number of the one name
    it is set from (``ds_config["train_micro_batch_size_per_gpu"] = self.train_batch_size_per_device`` -> the field
    default ``train_batch_size_per_device: int = 1``: that assignment and the default)."""
    # (not a checkpoint converter's flags: Pai-Megatron-Patch ``toolkits/distributed_checkpoints_convertor/scripts/*.sh`` runs
    # ``impl/convert.py`` with a training script's arguments, ``--global-batch-size 1024`` among them, and trains nothing)
    found = [s for s in f.effective(key) if not _CONVERTER_SCRIPT.search(s.path)]
    plain = [(v, [s]) for s in found if (v := as_number(s.value))]
    if plain:
        return plain
    for s in found:
        ref = s.value.ref if isinstance(s.value, Expr) else None
        if ref and ref != key and re.fullmatch(r"(self\.)?\w+", s.value.text or ""):
            nums = [(v, t) for t in f.effective(ref) if (v := as_number(t.value))]
            if len({v for v, _ in nums}) == 1:
                return [(nums[0][0], [s, nums[0][1]])]
    return []


def _step_call(c: Call) -> bool:
    recv = c.name.rsplit(".", 1)[0].lower() if "." in c.name else ""
    return c.short in {"step", "zero_grad"} and ("optim" in recv or recv.endswith("opt") or "scaler" in recv)


def _modulus_operand(guard: str | None) -> ast.AST | None:
    """The right side of ``x % N`` in an ``if`` guard (``(step + 1) % args.accum == 0`` -> ``args.accum``).

    None when the guard holds only on the other steps: the ``else`` of ``if (step + 1) % interval == 0:``, recorded as
    ``not ((step + 1) % interval == 0)``, or ``x % N != 0`` (Composer's SAM optimizer steps its base optimizer plainly on
    the steps between its sharpness-aware ones): a step taken there is not one after N accumulated micro-batches."""
    if not guard or "%" not in guard:
        return None
    tree = parse_expr(guard)
    if tree is None:
        return None
    terms = tree.values if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And) else [tree]
    for t in terms:
        neg = False
        while isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            neg, t = not neg, t.operand
        if (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], (ast.Eq, ast.NotEq))
                and isinstance(t.left, ast.BinOp) and isinstance(t.left.op, ast.Mod)
                and isinstance(t.comparators[0], ast.Constant) and t.comparators[0].value == 0):
            if neg is isinstance(t.ops[0], ast.Eq):
                continue  # the step runs when the count is not a multiple of N
            return t.left.right
        for node in ast.walk(t):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
                return node.right
    return None


def _number_of(f: Facts, node: ast.AST | str | None) -> tuple[float | None, list]:
    """The number a name/attribute/constant stands for, with the settings that give it (None when unknown)."""
    if isinstance(node, str):
        node = parse_expr(node)
        if node is None:
            return None, []
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value), []
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    if not name:
        return None, []
    nums = [(n, s) for s in f.effective(name) if (n := as_number(s.value)) is not None]
    if not nums:
        return _get_default(f, name)
    top = max(s.rank for _, s in nums)
    best = [(n, s) for n, s in nums if s.rank == top]
    return max(n for n, _ in best), [s for _, s in best]


def _get_default(f: Facts, name: str) -> tuple[float | None, list]:
    """A count read as ``cfg.get("accum_grad_iters", 1)`` that no recipe, flag or call sets to a number (MiniGPT-4's runner:
    ``int(self.config.run_cfg.get("accum_grad_iters", 1))``, which its train configs never set; the calls in between only
    hand the variable on): the ``.get`` default. Unknown when the defaults differ or a setting holds anything but the
    variable passed on."""
    if any(not (isinstance(s.value, Expr) and s.value.ref == name) for s in f.settings(name)):
        return None, []
    gets = [c for c in f.calls("get") if len(c.args) == 2 and c.args[0] == name and as_number(c.args[1]) is not None]
    values = {as_number(c.args[1]) for c in gets}
    if len(values) != 1:
        return None, []
    return values.pop(), gets


def _range_arg(loop: str | None) -> ast.AST | None:
    """``range(accum_steps)`` -> ``accum_steps`` when the loop counts micro-steps."""
    if not loop or not _ACCUM_NAME.search(loop):
        return None
    node = parse_expr(loop)
    if node is None:
        return None
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "range" and node.args:
        return node.args[-1] if len(node.args) == 1 else node.args[1]
    return None


_OPT_STEPS = {"take_optimizer_step", "optimizer_step", "optim_step", "_optimizer_step"}
#: EasyR1 0.3 ``verl/workers/actor/dp_actor.py``: the PPO policy update over mini-batches split into micro-batches; ``{step}``
#: is the optimizer step, after the micro-batch loop (the accumulation) or inside it (none)
_PPO_ACTOR = (
    "import torch\n\n\nclass DataParallelPPOActor:\n    def update_policy(self, data):\n"
    "        for mini_batch in data.split(self.config.global_batch_size_per_device):\n"
    "            micro_batches = mini_batch.split(self.config.micro_batch_size_per_device_for_update)\n"
    "            for micro_batch in micro_batches:\n                log_probs = self._forward_micro_batch(micro_batch)\n"
    "                loss = compute_policy_loss(log_probs, micro_batch)\n                loss.backward()\n{step}"
    "        return self.metrics\n\n"
    "    def _optimizer_step(self):\n        grad_norm = torch.nn.utils.clip_grad_norm_(self.actor_module.parameters(), 1.0)\n"
    "        self.actor_optimizer.step()\n        self.actor_optimizer.zero_grad()\n        return grad_norm\n")
#: OLMo 0.6 ``olmo/train.py``: ``train_batch`` runs backward once per micro-batch of the batch it is given; ``train_step``
#: calls it, then (``{step}``) steps the optimizer once
_OLMO_TRAIN = (
    "import torch\n\n\nclass Trainer:\n    def split_batch(self, batch):\n"
    "        return [{{k: v[i:i + self.cfg.device_train_microbatch_size] for k, v in batch.items()}}\n"
    "                for i in range(0, len(batch['input_ids']), self.cfg.device_train_microbatch_size)]\n\n"
    "    def train_batch(self, batch):\n        micro_batches = self.split_batch(batch)\n"
    "        for micro_batch_idx, micro_batch in enumerate(micro_batches):\n"
    "            loss = self.model_forward(micro_batch) / len(micro_batches)\n            loss.backward()\n"
    "        return loss\n\n"
    "    def train_step(self, batch):\n        self.optim.zero_grad(set_to_none=True)\n"
    "        ce_batch_loss = self.train_batch(batch)\n"
    "        grad_norm = self.optim.clip_grads_and_collect_metrics(self.global_step)\n{step}"
    "        return ce_batch_loss\n"
)
#: the iterable of a loop over the micro-batches of a mini-batch (``for micro_batch in micro_batches:``)
_MICRO_LOOP = lazy_compile(r"\bmicro_?(batch|batches|batch_list|bs)\b|\bmicro_batches\b", re.I)


def _micro_batch_accumulation(f: Facts) -> tuple[Call, Call] | None:
    """(the backward, the optimizer step) of a policy update that runs ``loss.backward()`` inside a loop over micro-batches
    and steps the optimizer once after that loop, in the same function (EasyR1's ``DataParallelPPOActor.update_policy``:
    ``for micro_batch in micro_batches: ... loss.backward()`` then ``grad_norm = self._optimizer_step()``)."""
    for b in f.calls("backward"):
        if not b.func or not b.loop or not _MICRO_LOOP.search(b.loop) or _TEST_FILE.search(b.path) or guard_off(f, b):
            continue
        steps = [c for c in f.files[b.path].calls if c.func == b.func and c.line > b.line and c.loop != b.loop and _opt_step(c)]
        if steps:
            return b, steps[0]
        # the micro-batch loop in a function of its own, the optimizer step in the function that calls it, after the call
        # (OLMo ``Trainer.train_step``: ``ce_batch_loss, z_batch_loss = self.train_batch(batch)`` ... ``self.optim.step()``,
        # ``train_batch`` running ``loss.backward()`` per micro-batch of ``self.split_batch(batch)``)
        if b.func.startswith("__") or any(c.func == b.func and _opt_step(c) for c in f.files[b.path].calls):
            continue
        for caller in f.calls(b.func):
            cf = f.files.get(caller.path)
            if caller.func in (None, b.func) or cf is None or (caller.path != b.path and not caller.name.endswith(b.func)):
                continue
            step = next((c for c in cf.calls if c.func == caller.func and c.line > caller.line and _opt_step(c)
                         and c.loop == caller.loop), None)
            if step is not None:
                return b, step
    return None


def _opt_step(c: Call) -> bool:
    return c.short in _OPT_STEPS or _step_call(c) or (c.short == "step" and re.search(r"(accelerator|engine)$", c.name.rsplit(".", 1)[0]) is not None)


def _minibatch_accumulation(f: Facts) -> list[Call]:
    """A ``backward`` inside a loop over the minibatches of one batch, in a function that never steps the optimizer, called
    from a loop that steps once after it (instructlab-training: ``BatchLossManager.process_batch`` runs ``for mb in batch:
    ... self.accelerator.backward(loss)``, then ``accelerator.take_optimizer_step()`` in the caller's loop): the backward,
    the call and the step; empty otherwise."""
    out: list[Call] = []
    for b in f.calls("backward"):
        if not b.loop or not b.func or b.func.startswith("__") or _TEST_FILE.search(b.path):
            continue
        ff = f.files.get(b.path)
        if ff is None or any(c.func == b.func and _opt_step(c) for c in ff.calls):
            continue
        for caller in f.calls(b.func):
            cf = f.files.get(caller.path)
            if caller.func == b.func or not caller.loop or cf is None:
                continue
            step = next((c for c in cf.calls if c.func == caller.func and c.loop == caller.loop and c.line > caller.line
                         and _opt_step(c)), None)
            if step is not None:
                out += [x for x in (b, caller, step) if x not in out]
                break
    return out


#: JAX: the gradient of one update summed over micro-batches by an accumulator the step calls (levanter
#: ``accumulate_gradients_sharded``, t5x-style ``accumulate_grads_microbatched``)
_JAX_ACCUMULATOR = lazy_compile(r"^_*(accum\w*_?grad\w*|grad\w*_?accum\w*)$", re.I)
_JAX_UPDATES = ("update", "apply_updates", "apply_gradients")
_CALLEE = lazy_compile(r"([A-Za-z_]\w*)\s*\(")


def _jax_accumulation(f: Facts) -> tuple[Any, Any, Any] | None:
    """On a JAX training path: (the jitted training step, the gradient accumulator it calls, the optimizer update after it)
    when the step takes its gradients from an accumulator over micro-batches before one update; ``optax.MultiSteps``
    (every_k_schedule > 1) is the optimizer-side spelling, with the step's update as the update. None otherwise."""
    for d in jax_jitted_steps(f):
        ff = f.files.get(d.path)
        if ff is None:
            continue
        body = [c for c in ff.calls if c.func == d.target]
        for c in body:
            # ``accumulate_gradients_sharded(loss_fn, Batch, n)(model, *batch)``: the facts keep a call of what a call
            # returns as one unnamed call ("?"), whose source line names the accumulator it calls
            names = _CALLEE.findall(c.text) if c.name == "?" else [c.short]
            if not any(_JAX_ACCUMULATOR.match(n) for n in names) or guard_off(f, c):
                continue
            upd = next((u for u in body if u.short in _JAX_UPDATES and u.line > c.line), None)
            if upd is not None:
                return d, c, upd
    for m in f.calls("optax.MultiSteps"):
        k = as_number(m.kwargs.get("every_k_schedule", m.args[1] if len(m.args) > 1 else None))
        if k is not None and k > 1 and not guard_off(f, m) and not _TEST_FILE.search(m.path):
            steps = jax_jitted_steps(f)
            return (steps[0], m, m) if steps else None
    return None


def _jax_step(grads: str, optimizer: str = "optax.adamw(3e-4)") -> dict[str, str]:
    """A JAX trainer (levanter-like): a jitted ``train_step`` whose gradients come from ``grads``, then one optimizer update;
    the accumulator is the project's own (a scan over the micro-batches of each batch)."""
    return {
        "mylm/grad_accum.py": (
            "import equinox as eqx\nimport jax\nimport jax.numpy as jnp\n\n\n"
            "def accumulate_gradients_sharded(f, Batch, per_device_parallelism):\n    grad_fn = eqx.filter_value_and_grad(f)\n\n"
            "    def fn(model, batch):\n        micro = batch.reshape((-1, per_device_parallelism) + batch.shape[1:])\n\n"
            "        def step(acc, mb):\n            loss, grad = grad_fn(model, mb)\n"
            "            return (acc[0] + loss, jax.tree_util.tree_map(jnp.add, acc[1], grad)), None\n\n"
            "        zero = (jnp.zeros(()), jax.tree_util.tree_map(jnp.zeros_like, model))\n"
            "        (loss, grad), _ = jax.lax.scan(step, zero, micro)\n        return loss / micro.shape[0], grad\n\n    return fn\n"),
        "mylm/trainer.py": (
            "import equinox as eqx\nimport optax\n\nfrom mylm.grad_accum import accumulate_gradients_sharded\n\n"
            f"optimizer = {optimizer}\n\n\n@eqx.filter_jit\ndef train_step(model, opt_state, batch, config, Batch):\n"
            f"    {grads}\n    updates, opt_state = optimizer.update(grads, opt_state, model)\n"
            "    return eqx.apply_updates(model, updates), opt_state, loss\n"),
    }


#: ms-swift ``TrainArgumentsMixin``: accumulation left None, computed in ``__post_init__`` to reach a global batch of 16
_GA_FILLED = (
    "import math\nfrom dataclasses import dataclass\nfrom typing import Optional\n\nfrom mylib.utils import get_dist_setting\n\n\n"
    "@dataclass\nclass TrainArgumentsMixin:\n    per_device_train_batch_size: int = {bs}\n"
    "    gradient_accumulation_steps: Optional[int] = None\n\n    def __post_init__(self):\n"
    "        if self.gradient_accumulation_steps is None:\n            world_size = get_dist_setting()[2]\n"
    "            self.gradient_accumulation_steps = max(1, math.ceil(16 / self.per_device_train_batch_size / world_size))\n")
_GA_TRAIN = ("from transformers import Trainer\n\n\ndef train(model, args, dataset):\n"
             "    Trainer(model=model, args=args, train_dataset=dataset).train()\n")
#: names of the data-parallel size in an accumulation formula: 1 on one GPU
_DP_SIZE_NAME = lazy_compile(r"(?i)^(world_size|n_gpus?|num_gpus|ngpus|dp_size|data_parallel_size|num_processes|nproc(_per_node)?)$")
_FORMULA_FUNCS = {"max": max, "min": min, "int": int, "round": round, "ceil": None, "floor": None}


def _post_init_accumulation(f: Facts) -> tuple[Any, int | None] | None:
    """An accumulation count an arguments dataclass leaves ``None`` and computes in ``__post_init__`` from its other
    defaults and the data-parallel size (ms-swift ``gradient_accumulation_steps = max(1, math.ceil(16 /
    self.per_device_train_batch_size / world_size))``, i.e. a target global batch of 16): the assignment and its value on
    one GPU (None when the formula reads anything else); None when no such fill exists."""
    for name in _GA_KEYS:
        for a in f.attr_assigns(f"self.{name}"):
            if (a.func != "__post_init__" or a.target != f"self.{name}" or not isinstance(a.value, Expr) or a.guard is None
                    or f"self.{name} is None" not in a.guard or _TEST_FILE.search(a.path)):
                continue
            if not any(x.path == a.path and x.default is None for x in f.fields(name)):
                continue
            node = parse_expr(a.value.text)
            n = _eval_formula(f, node, a.path) if node is not None else None
            return a, (int(n) if n is not None and n >= 1 else None)
    return None


def _eval_formula(f: Facts, node: ast.expr, path: str, depth: int = 0) -> float | None:
    """The number a small formula gives with the class's own field defaults (``self.per_device_train_batch_size``) and a
    data-parallel size of 1; None for anything else."""
    if depth > 8:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name) and _DP_SIZE_NAME.match(node.id):
        return 1
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        vals = {x.default for x in f.fields(node.attr) if x.path == path}
        v = vals.pop() if len(vals) == 1 else None
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)):
        a, b = _eval_formula(f, node.left, path, depth + 1), _eval_formula(f, node.right, path, depth + 1)
        if a is None or b is None or (isinstance(node.op, (ast.Div, ast.FloorDiv)) and b == 0):
            return None
        ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
        if isinstance(node.op, ast.Div):
            return a / b
        if isinstance(node.op, ast.FloorDiv):
            return a // b
        return ops[type(node.op)]
    if isinstance(node, ast.Call) and not node.keywords:
        fn = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id if isinstance(node.func, ast.Name) else ""
        if fn not in _FORMULA_FUNCS or not node.args:
            return None
        args = [_eval_formula(f, x, path, depth + 1) for x in node.args]
        if any(x is None for x in args):
            return None
        if fn == "ceil":
            return math.ceil(args[0]) if len(args) == 1 else None  # type: ignore[arg-type]
        if fn == "floor":
            return math.floor(args[0]) if len(args) == 1 else None  # type: ignore[arg-type]
        return _FORMULA_FUNCS[fn](*args)  # type: ignore[misc]
    return None


#: an RL policy worker (skyrl-train ``PolicyWorkerBase.ppo_train``): backward per micro-batch, the worker's own
#: ``self.optim_step()`` once per mini-batch (``{guard}`` guards it); the DeepSpeed helper pins DeepSpeed's own count to 1
_RL_WORKER = (
    "class PolicyWorker:\n    def ppo_train(self, train_data):\n"
    "        dataloader = BatchIterator(train_data, sample_batch_size=self.cfg.trainer.micro_train_batch_size_per_gpu)\n"
    "        accumulation_steps = self.policy_mini_batch_size_per_gpu // self.cfg.trainer.micro_train_batch_size_per_gpu\n"
    "        for local_step, experience in enumerate(dataloader):\n"
    "            loss = self.model(experience.sequences).loss / accumulation_steps\n            loss.backward()\n"
    "{guard}            grad_norm = self.optim_step()\n\n"
    "    def optim_step(self):\n        return self.strategy.optimizer_step(self.optimizer, self.model, self.scheduler)\n")
_RL_DS_CONFIG = ("def get_ds_train_config(ds_config, micro_batch):\n"
                 "    ds_config[\"train_micro_batch_size_per_gpu\"] = micro_batch\n"
                 "    ds_config[\"gradient_accumulation_steps\"] = 1\n    return ds_config\n")

#: oat-llm 0.2.4: a DeepSpeed config built in Python from an arguments dataclass, its micro-batch set from another field
def _ds_batch_strategy(global_batch: int) -> dict[str, str]:
    return {
        "myrl/args.py": (
            "from dataclasses import dataclass\n\n\n@dataclass\nclass TrainArgs:\n"
            f"    train_batch_size: int = {global_batch}\n    train_batch_size_per_device: int = 1\n    zero_stage: int = 2\n"),
        "myrl/strategy.py": (
            "import deepspeed\n\n\nclass DeepspeedStrategy:\n    def __init__(self, args):\n        self.args = args\n"
            "        self.train_batch_size = args.train_batch_size\n"
            "        self.train_batch_size_per_device = args.train_batch_size_per_device\n\n"
            "    def get_ds_train_config(self):\n"
            "        ds_config = {\"zero_optimization\": {\"stage\": self.args.zero_stage}, \"bf16\": {\"enabled\": True}}\n"
            "        ds_config[\"train_micro_batch_size_per_gpu\"] = self.train_batch_size_per_device\n"
            "        ds_config[\"train_batch_size\"] = self.train_batch_size\n        return ds_config\n\n"
            "    def prepare(self, model, optim):\n"
            "        engine, optim, _, _ = deepspeed.initialize(model=model, optimizer=optim, config=self.get_ds_train_config())\n"
            "        return engine\n"),
    }


def _sam_optimizer(body: str) -> dict[str, str]:
    """Composer 0.32 ``algorithms/sam/sam.py``: an optimizer wrapper whose ``step`` runs the closure and steps the base
    optimizer; ``body`` is the step's branch structure."""
    return {
        "mylib/algorithms/sam.py": (
            "import torch\n\n\nclass SAMOptimizer(torch.optim.Optimizer):\n"
            "    def __init__(self, base_optimizer, interval=1):\n        self.base_optimizer = base_optimizer\n"
            "        self.interval = interval\n        self.global_step = 0\n\n"
            "    @torch.no_grad()\n    def step(self, closure=None):\n        " + body +
            "        self.global_step += 1\n        return loss\n"),
        "mylib/trainer.py": "def fit(model, loader, optimizer):\n    for b in loader:\n        optimizer.step(lambda: model(b).loss)\n",
    }


def _lavis_runner(recipe_extra: str) -> dict[str, str]:
    """MiniGPT-4's LAVIS-style runner: the task's inner loop steps every ``accum_grad_iters`` iterations, a count the
    runner reads as ``run_cfg.get("accum_grad_iters", 1)`` and hands on; ``recipe_extra`` is added to the train config."""
    return {
        "minigpt4/runners/runner_base.py": (
            "class RunnerBase:\n    @property\n    def accum_grad_iters(self):\n"
            "        return int(self.config.run_cfg.get(\"accum_grad_iters\", 1))\n\n"
            "    def train_epoch(self, epoch):\n        return self.task.train_epoch(\n            epoch=epoch,\n"
            "            model=self.model,\n            accum_grad_iters=self.accum_grad_iters,\n        )\n"),
        "minigpt4/tasks/base_task.py": (
            "class BaseTask:\n    def train_epoch(self, epoch, model, optimizer, accum_grad_iters=1):\n"
            "        return self._train_inner_loop(epoch=epoch, model=model, optimizer=optimizer, accum_grad_iters=accum_grad_iters)\n\n"
            "    def _train_inner_loop(self, epoch, model, optimizer, accum_grad_iters=1):\n"
            "        for i in range(100):\n            loss = model(next(loader))[\"loss\"]\n            loss.backward()\n"
            "            # update gradients every accum_grad_iters iterations\n"
            "            if (i + 1) % accum_grad_iters == 0:\n                optimizer.step()\n                optimizer.zero_grad()\n"),
        "train.py": "from minigpt4.runners.runner_base import RunnerBase\n\n\ndef main():\n    RunnerBase().train()\n",
        "train_configs/minigpt4_stage2_finetune.yaml": f"run:\n  task: image_text_pretrain\n  init_lr: 3e-5\n{recipe_extra}",
    }


def _ratio_strategy(global_batch: int, micro: int) -> dict[str, str]:
    """OpenRLHF's shape: the DeepSpeed strategy computes its accumulation from the run's global and micro batch, sets
    ``gradient_accumulation_steps = 1`` only in its dynamic-batch mode, and a heredoc launch passes both sizes."""
    return {
        "openrlhf/utils/deepspeed/deepspeed.py": (
            "import torch.distributed as dist\n\n\nclass DeepspeedStrategy:\n"
            "    def __init__(self, train_batch_size=1, micro_train_batch_size=1, args=None):\n"
            "        self.train_batch_size = train_batch_size\n        self.micro_train_batch_size = micro_train_batch_size\n"
            "        self.use_dynamic_batch = getattr(args.train, 'dynamic_batch_enable', False)\n\n"
            "    def setup_distributed(self):\n        self.world_size = dist.get_world_size()\n"
            "        self.accumulated_gradient = (\n            self.train_batch_size\n            // self.micro_train_batch_size\n"
            "            // self.world_size\n        )\n\n"
            "    def get_ds_train_config(self):\n        ds_config = {'zero_optimization': {'stage': 2}}\n"
            "        if self.use_dynamic_batch:\n            ds_config['train_micro_batch_size_per_gpu'] = 1\n"
            "            ds_config['gradient_accumulation_steps'] = 1\n        else:\n"
            "            ds_config['train_micro_batch_size_per_gpu'] = self.micro_train_batch_size\n"
            "            ds_config['train_batch_size'] = self.train_batch_size\n        return ds_config\n"),
        "openrlhf/cli/train_sft.py": (
            "import argparse\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--train.batch_size', type=int, default=128)\n"
            "parser.add_argument('--train.micro_batch_size', type=int, default=8)\n"
            "parser.add_argument('--train.dynamic_batch_enable', action='store_true', default=False)\nargs = parser.parse_args()\n"),
        "examples/scripts/train_sft.sh": (
            "set -x\n\nread -r -d '' training_commands <<EOF\nopenrlhf.cli.train_sft \\\n   --data.max_len 2048 \\\n"
            f"   --train.batch_size {global_batch} \\\n   --train.micro_batch_size {micro} \\\n   --ds.zero_stage 2\nEOF\n\n"
            "if [[ ${1} != \"slurm\" ]]; then\n    deepspeed --module $training_commands\nfi\n"),
    }


@register
class C5GradientAccumulation(Check):
    id = "C5"
    title = "Gradient accumulation"
    title_zh = "梯度累积"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMMUNICATION)
    priority = Priority.MEDIUM
    benefit = "a large effective batch without the memory of a large micro-batch; with `no_sync()` (DDP) or a framework's own accumulation, one gradient sync per N micro-steps"
    what = (
        "Whether gradients are accumulated over several micro-batches: `gradient_accumulation_steps` > 1 (HF, DeepSpeed, "
        "LLaMA-Factory, axolotl, torchtune, accelerate `Accelerator(...)`), Lightning `accumulate_grad_batches` > 1, Megatron "
        "`--global-batch-size` larger than micro-batch x data-parallel size, or a raw loop that steps the optimizer every N "
        "micro-steps (`if (step + 1) % accum == 0: optimizer.step()`, `for micro_step in range(accum)`); in JAX, `optax.MultiSteps` "
        "with `every_k_schedule` > 1 or a jitted training step that takes its gradients from a micro-batch accumulator "
        "(`accumulate_gradients(...)`) before one update. The HF default of 1 is not use."
    )
    why = (
        "Accumulating N micro-batches gives the optimisation behaviour of an N-times larger batch within the memory of one "
        "micro-batch, and with DDP `no_sync`/DeepSpeed it all-reduces once per N micro-steps instead of every step, cutting "
        "communication by N (PyTorch DDP docs; DeepSpeed docs). Large LLM runs rely on it to reach batch sizes of millions of "
        "tokens (e.g. GPT-3's 3.2M-token batch, Brown et al. 2020) that no single micro-batch could hold."
    )
    fix = (
        "When the per-GPU micro-batch is memory-limited, keep it at the largest size that fits and set "
        "`gradient_accumulation_steps` so that micro-batch x GPUs x steps reaches the target global batch (rescale the learning rate "
        "if the global batch changes)."
    )
    fix_zh = "当单卡 micro-batch 受显存限制时，保持其为能放下的最大值，并设置 `gradient_accumulation_steps`，使 micro-batch × GPU 数 × 累积步数达到目标全局 batch（全局 batch 变化时相应调整学习率）。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://huggingface.co/docs/transformers/perf_train_gpu_one#gradient-accumulation", "https://www.deepspeed.ai/docs/config-json/#batch-size-related-parameters")
    snippets = {
        "hf-yaml": "per_device_train_batch_size: 4\ngradient_accumulation_steps: 8\n",
        "deepspeed-json": '{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8\n}\n',
        "python": (
            "accum = 8\n"
            "for step, batch in enumerate(loader):\n"
            "    loss = model(**batch).loss / accum\n"
            "    loss.backward()\n"
            "    if (step + 1) % accum == 0:\n"
            "        optimizer.step()\n"
            "        optimizer.zero_grad(set_to_none=True)\n"
        ),
        "lightning": "trainer = L.Trainer(accumulate_grad_batches=8)\n",
    }
    examples = (
        Example({"verl/workers/actor/dp_actor.py": _PPO_ACTOR.format(step="            grad_norm = self._optimizer_step()\n")}, U,
                "EasyR1: backward per micro-batch, one optimizer step after the micro-batch loop"),
        Example({"verl/workers/actor/dp_actor.py": _PPO_ACTOR.format(step="                grad_norm = self._optimizer_step()\n")}, N,
                "the same loop stepping the optimizer on every micro-batch"),
        Example({"olmo/train.py": _OLMO_TRAIN.format(step="        self.optim.step()\n")}, U,
                "OLMo: backward per micro-batch in train_batch, one optimizer step in the train_step that calls it"),
        Example({"olmo/train.py": _OLMO_TRAIN.format(step="")}, N, "the same micro-batch loop, no optimizer step after it"),
        Example({"examples/gptoss/02_train.sh": (
            "#!/bin/bash\nGPUS_PER_NODE=8\nNUM_NODES=1\n\ntorchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \\\n"
            "    --tensor-model-parallel-size 1 \\\n    --pipeline-model-parallel-size ${WORLD_SIZE} \\\n"
            "    --micro-batch-size 1 \\\n    --global-batch-size 128 \\\n    --bf16\n")},
                N, "megatron: pipeline size left to a variable, so the accumulation is not derived"),
        Example({"examples/llama/train_llama3_8b.sh": (
            "#!/bin/bash\nGPUS_PER_NODE=8\nNUM_NODES=1\n\ntorchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \\\n"
            "    --tensor-model-parallel-size 2 \\\n    --pipeline-model-parallel-size 1 \\\n"
            "    --micro-batch-size 1 \\\n    --global-batch-size 128 \\\n    --bf16\n")},
                U, "megatron: global 128 / (micro 1 x DP 4) = 32 micro-batches per step"),
        Example({"configs/sft.yaml": "per_device_train_batch_size: 2\ngradient_accumulation_steps: 16\nlearning_rate: 2.0e-5\n"}, U, "hf yaml"),
        Example({"myrl/workers/worker.py": _RL_WORKER.format(guard="            if (local_step + 1) % accumulation_steps == 0:\n    "),
                 "myrl/distributed/deepspeed_strategy.py": _RL_DS_CONFIG}, U, "RL worker: its own optim_step once per mini-batch"),
        Example({"myrl/workers/worker.py": _RL_WORKER.format(guard=""),
                 "myrl/distributed/deepspeed_strategy.py": _RL_DS_CONFIG}, N, "RL worker: optim_step after every micro-batch"),
        Example({"train.py": "import lightning as L\ntrainer = L.Trainer(accumulate_grad_batches=4, precision='bf16-mixed')\n"}, U, "lightning"),
        Example({"train.py": (
            "import argparse\np = argparse.ArgumentParser()\np.add_argument('--grad_accum', type=int, default=1)\nargs = p.parse_args()\n"
            "for step, batch in enumerate(loader):\n    loss = model(batch) / args.grad_accum\n    loss.backward()\n"
            "    if (step + 1) % args.grad_accum == 0:\n        optimizer.step()\n        optimizer.zero_grad()\n"),
                 "run.sh": "torchrun --nproc_per_node 8 train.py --grad_accum 8\n"}, U, "raw loop with launcher value"),
        Example({"train.py": (
            "gradient_accumulation_steps = 5 * 8\nwhile True:\n    for micro_step in range(gradient_accumulation_steps):\n"
            "        loss = model(X, Y) / gradient_accumulation_steps\n        scaler.scale(loss).backward()\n    scaler.step(optimizer)\n")}, U, "nanogpt style"),
        Example({"pretrain.sh": (
            "GPUS_PER_NODE=8\ntorchrun --nproc_per_node $GPUS_PER_NODE --nnodes 1 pretrain_gpt.py \\\n"
            "  --tensor-model-parallel-size 2 --micro-batch-size 2 --global-batch-size 256\n")}, U, "megatron batch sizes"),
        Example({"configs/sft.yaml": "per_device_train_batch_size: 8\ngradient_accumulation_steps: 1\n"}, N, "explicit 1"),
        Example({"train.py": "from transformers import Trainer, TrainingArguments\nargs = TrainingArguments(output_dir='out', per_device_train_batch_size=8)\n"}, N, "hf default"),
        Example({"train.py": (
            "import argparse\np = argparse.ArgumentParser()\np.add_argument('--accum_steps', type=int, default=1)\nargs = p.parse_args()\n"
            "for step, batch in enumerate(loader):\n    loss = model(batch)\n    loss.backward()\n"
            "    if (step + 1) % args.accum_steps == 0:\n        optimizer.step()\n"),
                 "run.sh": "python train.py --lr 1e-4\n"}, N, "loop supports it, configured to 1"),
        Example({  # instructlab-training: backward per minibatch in a helper, one optimizer step per batch in the caller
            "src/instructlab/training/batch_loss_manager.py": (
                "class BatchLossManager:\n    def process_batch(self, batch):\n        total = 0.0\n"
                "        for mb in batch:\n            loss = self.model.compute_loss(mb)\n"
                "            self.accelerator.backward(loss)\n            total += loss.item()\n        return total\n"),
            "src/instructlab/training/main_ds.py": (
                "def train(args, model, accelerator, batch_loss_manager):\n    grad_accum = 1  # actual accumulation handled by minibatch loop\n"
                "    for epoch in range(args.num_epochs):\n        for batch in accelerator.train_loader:\n"
                "            loss = batch_loss_manager.process_batch(batch)\n            accelerator.take_optimizer_step()\n"),
        }, U, "minibatch loop in a helper"),
        Example({  # one backward per batch in a helper, stepped by the caller: no accumulation
            "train.py": (
                "def train_step(model, batch):\n    loss = model(**batch).loss\n    loss.backward()\n    return loss\n\n"
                "def train(model, optimizer, loader):\n    for batch in loader:\n        train_step(model, batch)\n"
                "        optimizer.step()\n        optimizer.zero_grad()\n"),
        }, N, "one backward per step in a helper"),
        Example({"mylib/arguments.py": _GA_FILLED.format(bs=1), "mylib/train.py": _GA_TRAIN}, U,
                "accumulation filled in __post_init__ from a target global batch of 16"),
        Example({"mylib/arguments.py": _GA_FILLED.format(bs=16), "mylib/train.py": _GA_TRAIN}, N,
                "the same formula with a per-device batch of 16: 1 step"),
        Example(_GA_SECTION, N, "accumulation section left at 1 batch; the loop only supports it"),
        Example({**_GA_SECTION, "recipes/llama3_8b_sft.yaml": "trainer:\n  grad_accumulation:\n    num_batches: 4\n"}, U,
                "a recipe accumulates 4 batches"),
        Example(_gradcache_loss(), N, "DDP no_sync inside a GradCache loss's backward hook (mini-batch replay within one loss), "
                "with the HF Trainer's gradient_accumulation_steps left at 1"),
        Example(_gradcache_loss(_CALLED), U, "the same no_sync replay called from the loss's forward: read as accumulation"),
        Example({  # megatron-core 0.19.2 MimoModel: a wrapper's no_sync forwards to its inner DDP modules
            "megatron/core/models/mimo/model/base.py": (
                "from contextlib import ExitStack, contextmanager\n\n\nclass MimoModel:\n    @contextmanager\n    def no_sync(self):\n"
                "        with ExitStack() as stack:\n            for module in self._active_ddp_modules():\n"
                "                stack.enter_context(module.no_sync())\n            yield\n"),
            "train.py": "for batch in loader:\n    loss = model(batch)\n    loss.backward()\n    optimizer.step()\n",
        }, N, "a wrapper's own no_sync delegating to inner modules is not an accumulation loop"),
        Example(_sam_optimizer("if (self.global_step + 1) % self.interval == 0:\n            loss = closure()\n"
                               "            self.sharpness_aware_step(closure)\n        else:\n            loss = closure()\n"
                               "            if loss:\n                self.base_optimizer.step()\n"),
                N, "an optimizer wrapper stepping plainly on the steps between its periodic ones"),
        Example({"finetune.py": ("import transformers\n\n\ndef train(batch_size: int = 128, micro_batch_size: int = 4):\n"
                                 "    gradient_accumulation_steps = batch_size // micro_batch_size\n"
                                 "    trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(\n"
                                 "        per_device_train_batch_size=micro_batch_size,\n"
                                 "        gradient_accumulation_steps=gradient_accumulation_steps,\n        output_dir='out'))\n"
                                 "    trainer.train()\n")}, Status.NA,
                "Alpaca-LoRA: the trainer is handed a count computed at run time, not HF's default of 1"),
        Example({"finetune.py": ("import transformers\n\nMICRO_BATCH_SIZE = 4\nBATCH_SIZE = 128\n"
                                 "GRADIENT_ACCUMULATION_STEPS = BATCH_SIZE // MICRO_BATCH_SIZE\n"
                                 "trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(\n"
                                 "    per_device_train_batch_size=MICRO_BATCH_SIZE,\n"
                                 "    gradient_accumulation_steps=GRADIENT_ACCUMULATION_STEPS,\n    output_dir='lora-Vicuna'))\n"
                                 "trainer.train()\n")}, U,
                "Chinese-Vicuna: the count is a quotient of the script's own constants, 128 // 4 = 32"),
        Example(_sam_optimizer("loss = closure()\n        if (self.global_step + 1) % self.accumulation == 0:\n"
                               "            self.base_optimizer.step()\n"), U, "the same wrapper stepping once every N micro-batches"),
        Example(_ds_batch_strategy(128), U,
                "DeepSpeed global batch of 128 over a micro-batch of 1 set from another field, GPU count not visible: >= 16 on one node"),
        Example(_ds_batch_strategy(8), N, "a global batch of 8 micro-batches may be one per GPU on an 8-GPU node"),
        Example({"mylib/models/gpt_dpo_model.py": (
            "from megatron.core.num_microbatches_calculator import get_num_microbatches\n"
            "from megatron.core.pipeline_parallel.schedules import get_forward_backward_func\n\n\nclass GPTDPOModel:\n"
            "    def get_loss_and_metrics(self, batch, forward_only):\n        data_iter = get_iterator_k_split(batch, get_num_microbatches())\n"
            "        fwd_bwd_function = get_forward_backward_func()\n"
            "        return fwd_bwd_function(forward_step_func=self.fwd_func, data_iterator=data_iter, model=self.model,\n"
            "                                num_microbatches=get_num_microbatches(), forward_only=forward_only)\n")}, Status.NA,
                "Megatron schedule over get_num_microbatches() with the batch sizes in an unshipped config"),
        Example({"mylib/models/gpt_dpo_model.py": (
            "from megatron.core.pipeline_parallel.schedules import get_forward_backward_func\n\n\nclass GPTDPOModel:\n"
            "    def get_loss_and_metrics(self, batch, forward_only):\n        fwd_bwd_function = get_forward_backward_func()\n"
            "        return fwd_bwd_function(forward_step_func=self.fwd_func, data_iterator=iter([batch]), model=self.model,\n"
            "                                num_microbatches=1, forward_only=forward_only)\n")}, N,
                "the same schedule over one micro-batch"),
        Example(_jax_step("loss, grads = accumulate_gradients_sharded(loss_fn, Batch, config.per_device_parallelism)(model, batch)"),
                U, "JAX: the jitted step takes its gradients from a micro-batch accumulator"),
        Example(_jax_step("loss, grads = eqx.filter_value_and_grad(loss_fn)(model, batch)", "optax.MultiSteps(optax.adamw(3e-4), every_k_schedule=4)"),
                U, "JAX: optax.MultiSteps applies the update every 4 micro-batches"),
        Example(_jax_step("loss, grads = eqx.filter_value_and_grad(loss_fn)(model, batch)", "optax.MultiSteps(optax.adamw(3e-4), every_k_schedule=1)"),
                Status.NA, "JAX: MultiSteps every 1 micro-batch, one gradient per update: not judged, nothing found"),
        Example(_jax_step("loss, grads = eqx.filter_value_and_grad(loss_fn)(model, batch)"), Status.NA,
                "JAX: one gradient per update: not judged (a PyTorch-spelling check found nothing)"),
        Example(_ratio_strategy(256, 2), U, "OpenRLHF: accumulation computed from the global and micro batch the launch passes"),
        Example(_lavis_runner(""), N, "MiniGPT-4: the loop steps every accum_grad_iters, read with .get(..., 1) and set by no recipe"),
        Example(_lavis_runner("  accum_grad_iters: 4\n"), U, "the same runner, a recipe that sets accum_grad_iters: 4"),
        Example(_ratio_strategy(8, 1), N, "the same strategy, a launch whose global batch is one micro-batch per GPU"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list = []
        ones: list = []
        any_one = False  # some effective value, a code default included, is 1
        moded = False  # a value of 1 set only in one mode (see _one_mode) was left out
        n: float | None = None
        computed: list = []  # ``$((256 / (1 * $GPUS)))``: the launch divides a global batch by micro-batch x GPUs
        unresolved: list = []  # ``--gradient_accumulation_steps $GA`` with GA set outside the script: passed, value unknown
        for s in f.effective(*_GA_KEYS):
            v = as_number(s.value)
            if v is None:
                ratio = shell_ratio(s.value)
                if ratio and ratio[0] >= 2 * ratio[1] and not _TEST_FILE.search(s.path):
                    computed.append((s, *ratio))
                elif s.source == "launcher" and isinstance(s.value, str) and "$" in s.value and not _TEST_FILE.search(s.path):
                    unresolved.append(s)
                continue
            if v > 1:
                used.append(s)
                n = max(n or 0, v)
            elif v == 1:
                any_one = True
                if (s.rank > 0 or s.source == "field-default") and not _one_mode(f, s):
                    ones.append(s)
                elif _one_mode(f, s):
                    moded = True
        if moded and not used and not ones:
            # the one-mode value shadowed the code default the run keeps (collie: ``ds_config["gradient_accumulation_steps"]
            # = 1`` only for the LOMO optimizer; ``CollieConfig.gradient_accumulation_steps`` defaults to 1)
            ones = [s for s in f.settings(*_GA_KEYS) if s.source in ("field-default", "argparse-default") and as_number(s.value) == 1
                    and not _TEST_FILE.search(s.path)]
        # a count inside an accumulation section (fairseq2 ``class GradAccumulationConfig: num_batches: int = 1``, a recipe's
        # ``grad_accumulation: {num_batches: 4}``)
        sections = [*(x for x in f.fields(*_GA_COUNTS) if _GA_OWNER.search(x.owner)),
                    *f.config(*(f"{sec}.{k}" for sec in _GA_SECTIONS for k in _GA_COUNTS))]
        for x in sections:
            v = as_number(x.default if isinstance(x, Field) else x.value)
            if v is not None and v > 1:
                used.append(x)
                n = max(n or 0, v)
            elif v == 1:
                any_one = True
                ones.append(x)
        code: list = []
        code_n: list[float | None] = []
        numbers: dict[str, tuple[float | None, list]] = {}  # one lookup per distinct operand: a repository repeats the same guard
        guard_names: list[str] = []  # the step guard's count as the code names it (MiniGPT-4's ``accum_grad_iters``)
        named_ones = bool(ones)  # settings under the usual names (gradient_accumulation_steps: 1) already left it at 1
        # the trainer's own step method under the same guard (``if (local_step + 1) % accumulation_steps == 0:
        # grad_norm = self.optim_step()``) steps the optimizer as well
        for c in f.calls("step", "zero_grad", *sorted(_OPT_STEPS)):
            operand = _modulus_operand(c.guard) if _step_call(c) or c.short in _OPT_STEPS else None
            if operand is not None:
                code.append(c)
                key = ast.dump(operand)
                name = operand.id if isinstance(operand, ast.Name) else operand.attr if isinstance(operand, ast.Attribute) else None
                if name and name not in guard_names:
                    guard_names.append(name)
                if key not in numbers:
                    numbers[key] = _number_of(f, operand)
                    if numbers[key][0] == 1:  # the settings that leave the guard's count at 1 are the evidence
                        ones += [x for x in numbers[key][1] if x not in ones]
                code_n.append(numbers[key][0])
        for c in f.calls("backward"):
            arg = _range_arg(c.loop)
            if arg is not None:
                code.append(c)
                code_n.append(_number_of(f, arg)[0])
        # DDP no_sync / Fabric no_backward_sync / accelerate accumulate exist only to accumulate
        # (not a wrapper's own ``no_sync`` delegating to its inner modules: megatron-core's MimoModel.no_sync)
        hooks = [c for c in f.calls("no_sync", "no_backward_sync", "accumulate") if (c.short != "accumulate" or "accelerator" in c.name.lower())
                 and c.func != c.short and not _in_grad_hook(f, c)]
        if computed and not used and len(computed) * 2 > len([x for x in ones if getattr(x, "source", "") == "launcher"]):
            s0, g0, m0 = computed[0]
            more = f" (+{len(computed) - 1} launches)" if len(computed) > 1 else ""
            terms = chained_divisors(s0.value) or []
            if sum(x.isdigit() for x in terms[1:]) > 1:
                # the literal divisors are the micro-batch and a GPU count, in some order: the unknown factor is named
                rest = ", ".join(sorted({x for x in terms[1:] if not x.isdigit()}))
                return Outcome(U, [f.ev(s) for s, _, _ in computed],
                               f"the launch computes the accumulation from a global batch of {g0}: `{s0.value.strip()}` at "
                               f"{s0.path}:{s0.line}{more}, more than one micro-batch per step while {rest} stays below "
                               f"{g0 // m0}", {"gradient_accumulation_steps": "computed"})
            return Outcome(U, [f.ev(s) for s, _, _ in computed],
                           f"the launch computes the accumulation as global batch / (micro-batch x GPUs): {g0} / ({m0} x GPUs) at "
                           f"{s0.path}:{s0.line}{more}, more than one "
                           f"micro-batch per step on fewer than {g0 // m0} GPUs", {"gradient_accumulation_steps": "computed"})
        # a recipe that computes the count from the global batch with a config interpolation (flash-attention's training
        # recipes: ``accumulate_grad_batches: ${div_up:${train.global_batch_size}, ${eval:${trainer.devices} *
        # ${datamodule.batch_size} * ${trainer.num_nodes}}}``), beside a reference config's ``accumulate_grad_batches: 1``
        interp = [x for x in f.effective(*_GA_KEYS) if isinstance(x.value, str) and x.value.strip().startswith("${")
                  and re.search(r"global_batch|batch_size", x.value) and not _TEST_FILE.search(x.path)]
        if interp and not used and len(interp) >= len([x for x in ones if isinstance(x, Setting) and x.source == "config"]):
            x0 = interp[0]
            return Outcome(U, [f.ev(x) for x in interp], f"the recipes compute the accumulation from the global batch: `{x0.value}` "
                           f"({x0.path}:{x0.line}{f' (+{len(interp) - 1})' if len(interp) > 1 else ''}): more than one micro-batch "
                           "per optimizer step whenever the global batch exceeds GPUs x micro-batch", {"gradient_accumulation_steps": "computed"})
        if used:
            # recipes that differ (alignment-handbook: 2, 4 and 8 with no majority) are a range, not their largest value
            counts = sorted({int(v) for x in used if (v := as_number(x.default if isinstance(x, Field) else getattr(x, "value", None)))
                             is not None and v > 1})
            span = f"{counts[0]}-{counts[-1]}" if len(counts) > 1 else f"{int(n or 0)}"
            wrap = [] if hooks or not code else _own_ddp_wrap(f, {c.path for c in code})
            # (only where the counts are that loop's own: a launch of its script, or its file; InternVL's recipes accumulate
            # through the HF Trainer, its classification loop is another run)
            wrap = [d for d in wrap if all(getattr(x, "path", "") == d.path or _launches_file(x, d.path) for x in used)]
            return Outcome(U, [f.ev(x) for x in used + code + hooks], f"gradient accumulation over {span} micro-batches"
                           + (_no_sync_note(wrap[0]) if wrap else ""),
                           {"gradient_accumulation_steps": int(n or 0)} | ({"no_sync": False} if wrap else {}),
                           [f.ev(x) for x in wrap[:1]])
        quotient = _quotient_accumulation(f)
        if quotient is not None:
            return quotient
        known = [x for x in code_n if x is not None]
        if code and (any(x > 1 for x in known) or len(known) < len(code_n)):
            big = max((x for x in known if x > 1), default=None)
            values = {"gradient_accumulation_steps": int(big)} if big else {}
            wrap = [] if hooks else _own_ddp_wrap(f, {c.path for c in code})
            if wrap:
                # (ReLoRA's ``torchrun_main.py``: ``DistributedDataParallel(model)``, then ``scaled_loss.backward()`` on every
                # micro-batch and ``optimizer.step()`` on every N-th: the reducer fires on each backward)
                return Outcome(U, evs(code), "the training loop steps the optimizer once every N micro-batches" + _no_sync_note(wrap[0]),
                               values | {"no_sync": False}, [f.ev(wrap[0])])
            return Outcome(U, evs(code), "the training loop steps the optimizer once every N micro-batches", values)
        inner = _minibatch_accumulation(f)
        if inner:
            b, caller = inner[0], inner[1]
            note = ("; the accumulation setting left at 1 (" + ", ".join(f"{x.path}:{x.line}" for x in ones[:2]) + ") is not that count"
                    if ones else "")
            return Outcome(U, evs(inner), f"gradients accumulate over the minibatches of each batch: backward per minibatch "
                           f"({b.path}:{b.line}, in {b.func}), one optimizer step after {caller.short}() ({inner[2].path}:{inner[2].line}); "
                           f"the number of minibatches is decided at run time{note}", {})
        per_launch = self._from_launches(ctx)
        if per_launch:
            found, total = per_launch
            acc = [(n, x) for n, x in found if n > 1]
            if acc and len(acc) * 2 >= len(found):
                n0, x0 = acc[0]
                # cite the line that holds --global-batch-size (a command continued over many lines)
                cited = [Evidence(x.path, x.arg_line(k), f"--global-batch-size {x.script_args[k]}", "global_batch_size", x.script_args[k])
                         for _, x in acc[:10] for k in x.script_args if k.lstrip("-").replace("-", "_").lower() == "global_batch_size"]
                line0 = cited[0].line if cited else x0.line
                return Outcome(U, cited or evs([x for _, x in acc[:10]]),
                               f"global batch / (micro-batch x data-parallel size) = {n0} micro-batches per step at {x0.path}:{line0}; "
                               f"accumulation in {len(acc)} of {len(found)} launches whose layout fits their GPUs ({total} set both batch sizes)",
                               {"gradient_accumulation_steps": n0})
        derived = self._from_batch_sizes(ctx)
        if derived and not derived[2]:
            steps, ev, _, _ = derived
            return Outcome(U, evs(ev), f"global batch / (micro-batch x data-parallel size) = {steps} micro-batches per step",
                           {"gradient_accumulation_steps": steps})
        if hooks and not any_one:
            return Outcome(U, evs(hooks), "the loop accumulates gradients (no_sync/accumulate); the number of steps is not visible", {})
        if code or hooks:
            # (a minority of recipes that accumulate, BELLE's reward model at 8 beside SFT recipes at 1: "most", not "every")
            counted = [as_number(s.value) for s in f.settings(*_GA_KEYS, *guard_names) if s.source in ("launcher", "config")]
            above = sum(1 for v in counted if v is not None and v > 1)
            some = above > 0 or any((as_number(s.value) or 0) > 1 for s in f.settings(*_GA_KEYS))
            values: dict[str, Any] = {"gradient_accumulation_steps": 1}
            own = [g for g in guard_names if g not in _GA_KEYS]
            if code and own and len(guard_names) == 1 and not named_ones:
                # the project's own name for the count (LAVIS-style runners: ``run_cfg.accum_grad_iters``): the advice names it
                values |= {"advice_for": "own-key", "flag": own[0]}
            # (recipes split with no majority, LanguageBind's ``--accum-freq`` 4 or 2 in 3 of 6 launches: the default decides,
            # and the detail says so rather than "most")
            split = above * 2 >= len([v for v in counted if v is not None]) > 0
            known = len([v for v in counted if v is not None])
            return Outcome(N, evs(ones), f"the loop supports accumulation; {above} of {known} launches or recipes accumulate, no "
                           "majority, so the default of 1 decides" if split else "the loop supports accumulation, but " + (
                               "most settings leave it at 1" if some else "every visible setting leaves it at 1"), values)
        ratio = _computed_accumulation(f) if (moded or not ones) else None
        if ratio is not None:
            return ratio
        if ones:
            return Outcome(N, evs(ones), "gradient_accumulation_steps is 1", {"gradient_accumulation_steps": 1})
        filled = _post_init_accumulation(f)
        if filled is not None:
            a, steps = filled
            if steps is None:
                return Outcome(Status.NA, [f.ev(a)], "not judged: gradient_accumulation_steps is left None and computed in "
                               f"__post_init__ ({a.path}:{a.line}) from values not known statically", {})
            if steps > 1:
                return Outcome(U, [f.ev(a)], f"gradient_accumulation_steps is left None and filled in __post_init__ "
                               f"({a.path}:{a.line}): {steps} micro-batches per optimizer step on one GPU (fewer as the "
                               "data-parallel size grows)", {"gradient_accumulation_steps": steps})
            return Outcome(N, [f.ev(a)], f"gradient_accumulation_steps is filled in __post_init__ ({a.path}:{a.line}) with 1 "
                           "on one GPU", {"gradient_accumulation_steps": 1})
        # a Composer pair is read last: a training loop of the project's own that accumulates (OLMo's loop over its
        # micro-batches) says more than a bound
        composer = bool(derived) and any(getattr(e, "name", "") == "global_train_batch_size" for e in derived[1])  # type: ignore[index]
        if derived and not composer:  # a DeepSpeed global batch of many micro-batches, the GPU count unknown: a lower bound on one node
            return _lower_bound(derived, "DeepSpeed")
        # the trainer's arguments are handed a value computed at run time (Alpaca-LoRA ``gradient_accumulation_steps=
        # gradient_accumulation_steps``, a local ``batch_size // micro_batch_size``): not the default, and not known here.
        # Not ``training_args.gradient_accumulation_steps`` (the setting passed on: effective() already looked for its value),
        # nor a keyword of any other call (a web UI's ``dict(gradient_accumulation_steps=slider)``)
        passed = [s for s in f.effective(*_GA_KEYS) if s.source == "call" and isinstance(s.value, Expr) and "." not in s.value.text
                  and CONFIG_CALLEE.search(s.key.split("(", 1)[0])]
        if passed and uses_hf_trainer(f):
            s = passed[0]
            return Outcome(Status.NA, [f.ev(s)], f"not judged: gradient_accumulation_steps is passed `{s.value.text[:60]}`, a value "
                           f"computed at run time ({s.path}:{s.line}); check what it evaluates to for the run", {})
        sched = megatron_microbatch_schedule(f)
        if unresolved and uses_hf_trainer(f) and not used and not ones and not (sched and "megatron" in ctx.project.frameworks):
            # the launch passes a value set outside the script: not HF's default, and not known here
            s = unresolved[0]
            return Outcome(Status.NA, [f.ev(s)], f"not judged: the launch passes gradient_accumulation_steps `{s.value.strip()[:60]}` "
                           f"({s.path}:{s.line}), a value set when the job starts; check what it is for the run", {})
        # (a Megatron project with an HF example beside its Megatron launches, Pai-Megatron-Patch's
        # ``run_ds_train_huggingface_baichuan.sh``, runs Megatron's schedule: the HF Trainer's default is not its setting)
        if uses_hf_trainer(f) and not (sched and "megatron" in ctx.project.frameworks):
            return Outcome(N, [], f"HF Trainer default gradient_accumulation_steps={HF_DEFAULTS['gradient_accumulation_steps']}",
                           {"gradient_accumulation_steps": 1})
        if sched:
            # (FlagScale's recipes set both batch sizes, ``global_batch_size: 256`` over ``micro_batch_size: 1``, and its
            # experiment configs the GPUs: what the pair means on one node is said, not "not visible")
            if uses_hf_trainer(f) and ctx.project.num_gpus is None and (pair := _unsized_megatron_pair(f)) is not None:
                return pair
            fwd, count = sched
            return Outcome(Status.NA, [f.ev(fwd), f.ev(count)], "not judged: the training step runs Megatron's forward/backward "
                           f"schedule ({fwd.path}:{fwd.line}) over `get_num_microbatches()` micro-batches ({count.path}:{count.line}), "
                           "global_batch_size / (micro_batch_size x data-parallel size) per optimizer step: sizes the run's config "
                           "sets, not visible in the repository", {})
        jax_acc = _jax_accumulation(f) if ctx.project.notes.get("jax_training") else None
        if jax_acc:
            step, acc, upd = jax_acc
            if acc.short == "MultiSteps":
                k = int(as_number(acc.kwargs.get("every_k_schedule", acc.args[1] if len(acc.args) > 1 else None)) or 0)
                return Outcome(U, evs([acc]), f"optax.MultiSteps ({acc.path}:{acc.line}) applies the optimizer update once "
                               f"every {k} micro-batches", {"gradient_accumulation_steps": k})
            name = next(n for n in ([acc.short] if acc.name != "?" else _CALLEE.findall(acc.text)) if _JAX_ACCUMULATOR.match(n))
            return Outcome(U, evs([acc, upd]), f"the JAX training step `{step.target}` ({step.path}:{step.line}) takes its "
                           f"gradients from `{name}(...)` ({acc.path}:{acc.line}), which sums them over micro-batches, "
                           f"before one optimizer update ({upd.path}:{upd.line}); the number of micro-batches per update is "
                           "batch size / micro-batch size, decided at run time", {})
        micro = _micro_batch_accumulation(f)
        if micro:
            bwd, step = micro
            return Outcome(U, evs([bwd, step]), f"backward runs once per micro-batch (the loop over `{bwd.loop}` at {bwd.path}:"
                           f"{bwd.line}) and the optimizer steps once after them ({step.path}:{step.line}): gradients accumulate over "
                           "the micro-batches of each mini-batch, as many as mini-batch / micro-batch size, set at run time", {})
        if derived and composer:
            return _lower_bound(derived, "Composer")
        pair = _unsized_megatron_pair(f) if ctx.project.num_gpus is None else None
        if pair is not None:
            return pair
        return Outcome(N, [], "no gradient accumulation found")

    @staticmethod
    def _from_launches(ctx: Context) -> tuple[list[tuple[int, Any]], int] | None:
        """Per launch command that sets a global and a micro batch (Megatron ``--global-batch-size 256 --micro-batch-size 2``
        with ``torchrun --nproc_per_node 8 --nnodes 2`` and TP x PP x CP): the accumulation each one implies, and how many
        such launches there are. Launches whose model-parallel layout does not divide their GPUs are left out."""
        out: list[tuple[int, Any]] = []
        total = 0
        for launch in ctx.facts.launches():
            if _CONVERTER_SCRIPT.search(launch.path):
                # a checkpoint converter runs the training entry to load and save weights (Pai-Megatron-Patch
                # ``toolkits/distributed_checkpoints_convertor/scripts/*/run_*.sh``): its batch sizes run no step
                continue
            a = {k.lstrip("-").replace("-", "_").lower(): v for k, v in launch.script_args.items()}
            g, m = as_number(a.get("global_batch_size")), as_number(a.get("micro_batch_size"))
            if not g or not m:
                continue
            total += 1
            nproc, nodes = as_number(launch.launcher_args.get("nproc_per_node")), as_number(launch.launcher_args.get("nnodes", 1))
            if not nproc:
                # a driver that places its own workers (slime ``ray job submit -- python3 train.py --actor-num-nodes 1
                # --actor-num-gpus-per-node 8``): its own arguments give the GPUs
                own = {k.rsplit(".", 1)[-1]: v for k, v in a.items()}
                nproc = next((as_number(own[k]) for k in _DRIVER_GPU_KEYS if k in own), None)
                nodes = next((as_number(own[k]) for k in _DRIVER_NODE_KEYS if k in own), 1)
            if not nproc or not nodes:
                continue
            world = nproc * nodes
            sizes = [a.get(key) for key in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size")]
            if any(v is not None and not as_number(v) for v in sizes):
                continue  # a size left to a variable (gptoss ``PP_SIZE=${WORLD_SIZE}``): the data-parallel size is unknown
            split = 1.0
            for v in sizes:
                split *= as_number(v) or 1.0
            if world % split:
                continue
            steps = g / (m * (world / split))
            if steps >= 1 and steps == int(steps):
                out.append((int(steps), launch))
        return (out, total) if out else None

    @staticmethod
    def _from_batch_sizes(ctx: Context) -> tuple[int, list, bool, str] | None:
        """Megatron/DeepSpeed/Composer: accumulation implied by global batch > micro-batch x data-parallel ranks, with
        whether the count is only a lower bound (see below).

        A size set from another name (``ds_config["train_micro_batch_size_per_gpu"] = self.train_batch_size_per_device``)
        takes that name's number. When no launch gives the GPU count of a single-node project, one node has at most
        ``_NODE_GPUS`` GPUs: a DeepSpeed ``train_batch_size`` of more than ``_NODE_GPUS`` micro-batches (oat-llm
        ``train_batch_size: 128`` over a micro-batch of 1) accumulates at least ``global / (micro x _NODE_GPUS)``
        micro-batches whatever the count (DeepSpeed derives its accumulation from exactly these; Megatron/OLMo pairs are
        left to a launch that gives the GPUs)."""
        f = ctx.facts
        p = ctx.project
        for g_key, m_key in _BATCH_PAIRS:
            g = _batch_numbers(f, g_key)
            m = _batch_numbers(f, m_key)
            if not g or not m:
                continue
            world = (p.num_gpus or 0) * (p.num_nodes or 1)
            if not world:
                # (DeepSpeed and Composer derive the accumulation from exactly this pair: Composer's ``global_train_batch_size`` /
                # ``device_train_microbatch_size``, llm-foundry's recipes)
                if g_key not in ("train_batch_size", "global_train_batch_size") or p.multi_node or p.num_nodes:
                    continue
                # recipes that set both are read file by file, by the count most of them give (llm-foundry: 256 over 16
                # in ten recipes, 1024 over 8 in three); one pair otherwise
                by_file = {ev[0].path: (v, ev) for v, ev in m}
                pairs = [(gv / (by_file[gev[0].path][0] * _NODE_GPUS), [*gev, *by_file[gev[0].path][1]])
                         for gv, gev in g if gev[0].path in by_file] or [(g[0][0] / (m[0][0] * _NODE_GPUS), [*g[0][1], *m[0][1]])]
                votes = Counter(round(low, 6) for low, _ in pairs)
                low = max(votes, key=lambda x: (votes[x], x))
                if low >= 2 and abs(low - round(low)) < 1e-6:
                    many = sum(1 for x, _ in pairs if x >= 2)
                    note = f" in {many} of {len(pairs)} recipes that set both sizes" if len(pairs) > 1 else ""
                    return round(low), next(ev for x, ev in pairs if round(x, 6) == low), True, note
                continue
            split = 1.0
            for key in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size"):
                found = f.effective(key)
                if any(s.source == "launcher" and not as_number(s.value) for s in found):
                    return None  # a size a launch leaves to a variable: the data-parallel size is unknown
                vals = [v for s in found if (v := as_number(s.value))]
                split *= max(vals) if vals else 1.0
            dp = max(world / split, 1.0)
            steps = g[0][0] / (m[0][0] * dp)
            if steps > 1 and abs(steps - round(steps)) < 1e-6:
                return round(steps), [*g[0][1], *m[0][1]], False, ""
        return None

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        return super().recommendation_priority(ctx, outcome) if ctx.project.does_training else None


def _unsized_megatron_pair(f: Facts) -> Outcome | None:
    """A Megatron-style global batch over a micro-batch with no launch that fixes the GPU count (CodeGeeX:
    ``GLOBAL_BATCH=560``, ``MICRO_BATCH=10`` under ``deepspeed --hostfile``): the accumulation is global / (micro x
    data-parallel size), decided by the GPUs the run gets; not judged, with what it would be on one node."""
    g, m = _batch_numbers(f, "global_batch_size"), _batch_numbers(f, "micro_batch_size")
    if not g or not m:
        return None
    # the pair one file sets together (CodeGeeX's fine-tuning script), not a conversion script's micro-batch of 1
    by_file = {ev[0].path: (v, ev) for v, ev in m}
    gv, gev = next(((v, ev) for v, ev in g if ev[0].path in by_file), g[0])
    mv, mev = by_file.get(gev[0].path, m[0])
    if gv <= mv:
        return None
    ev = [*gev, *mev]
    node = gv / (mv * _NODE_GPUS)
    if node <= 1:
        return None  # (OLMoE's ``megatron_dense_46m_8gpu.sh``: 512 over 64, one micro-batch per step on its 8 GPUs)
    on_node = f"{node:g} on one node of {_NODE_GPUS} GPUs"
    return Outcome(Status.NA, evs(ev), f"not judged: global batch {gv:g} over micro-batch {mv:g} ({ev[0].path}:{ev[0].line}) "
                   f"accumulates global / (micro-batch x data-parallel size) micro-batches per step: {on_node}, one (no "
                   f"accumulation) from {gv / mv:g} data-parallel GPUs on; no launch fixes the GPU count", {})


def _lower_bound(derived: tuple[int, list, bool, str], who: str) -> Outcome:
    """C5's reading of a global batch of many micro-batches when no launch gives the GPU count: a lower bound on one node."""
    steps, ev, _, note = derived
    return Outcome(U, evs(ev), f"the {who} global batch is {steps * _NODE_GPUS} micro-batches: at least {steps} "
                   f"micro-batches per optimizer step on one node of up to {_NODE_GPUS} GPUs (no launch gives the GPU count)"
                   + (f"; accumulation{note}" if note else ""), {"gradient_accumulation_steps": steps})


#: a trainer attribute holding the number of micro-batches per optimizer step
_GA_ATTRS = ("accumulated_gradient", "gradient_accumulation_steps", "grad_accum_steps", "accumulation_steps", "grad_accum",
             "num_accumulation_steps", "accumulate_steps", "gradient_accumulation")
#: ``train_batch_size * ... // micro_train_batch_size // world_size``: a global batch over the micro-batch (and ranks)
_GA_RATIO = lazy_compile(r"batch_size\b[^/]*//?[^/]*\bmicro\w*batch\w*")


#: a batch-size prefix that is not the training step's (``--rollout.batch_size``: prompts per generation round)
_NOT_TRAIN_BATCH = lazy_compile(r"(?i)(rollout|eval|val|generat|infer|sampl|reward|ref)")


def _global_and_micro(items: dict[str, Any], value: Any) -> tuple[str, Any, float, float] | None:
    """The first global batch size among ``items`` (normalised key -> item) with a micro-batch size of the same prefix
    (``train.batch_size`` and ``train.micro_batch_size``; ``train_batch_size`` and ``micro_train_batch_size``), not a
    rollout's or an evaluation's: (key, item, global, micro); ``value`` reads an item's number."""
    for k, item in items.items():
        head, _, last = k.rpartition(".")
        if last not in ("batch_size", "train_batch_size") or _NOT_TRAIN_BATCH.search(head):
            continue
        prefix = f"{head}." if head else ""
        micro = items.get(f"{prefix}micro_batch_size") or items.get(f"{prefix}micro_{last}")
        g, m = value(item), value(micro) if micro is not None else None
        if g and m and g >= m:
            return k, item, g, m
    return None


def launch_batch_pairs(f: Facts) -> list[tuple[float, float, Any, str]]:
    """(global batch, micro-batch, launch, global key) of each launch that passes both with one prefix (OpenRLHF
    ``--train.batch_size 256 --train.micro_batch_size 2``; older ``--train_batch_size 128 --micro_train_batch_size 4``)."""
    out: list[tuple[float, float, Any, str]] = []
    for launch in f.launches():
        args = {k.lstrip("-").replace("-", "_"): (k, v) for k, v in launch.script_args.items()}
        found = _global_and_micro(args, lambda item: as_number(item[1]))
        if found is not None:
            _, (raw, _v), g, m = found
            out.append((g, m, launch, raw))
    return out


def _default_batch_pairs(f: Facts) -> list[tuple[float, float, Evidence, str]]:
    """(global batch, micro-batch, evidence, key) of an argument parser whose defaults give both sizes with one prefix
    (OpenRLHF 0.11 ``--train.batch_size`` 128 and ``--train.micro_batch_size`` 8 in ``cli/train_sft.py``)."""
    out: list[tuple[float, float, Evidence, str]] = []
    by_file: dict[str, dict[str, Any]] = {}
    for a in f.arg_options("batch_size", "micro_batch_size", "train_batch_size", "micro_train_batch_size"):
        if _TEST_FILE.search(a.path):
            continue
        for flag in a.flags:
            if flag.startswith("--"):
                by_file.setdefault(a.path, {})[flag[2:].replace("-", "_")] = a
    for opts in by_file.values():
        found = _global_and_micro(opts, lambda a: None if isinstance(a.default, bool) else as_number(a.default))
        if found is not None:
            k, a, g, m = found
            out.append((g, m, f.ev(a), k))
    return out


def _launch_ranks(x: Any) -> int | None:
    """The training ranks a Ray-launched trainer's command asks for: ``--actor_num_nodes`` x ``--actor_num_gpus_per_node``
    (OpenRLHF), when both are numbers; None otherwise."""
    nodes, per = as_number(x.script_args.get("actor_num_nodes")), as_number(x.script_args.get("actor_num_gpus_per_node"))
    return int(nodes * per) if nodes and per and nodes >= 1 and per >= 1 else None


#: a quotient's term that reads a parsed option (``args.batch_size``)
_OPTION_TERM = lazy_compile(r"[A-Za-z_]\w*\.[A-Za-z_]\w*")


def _own_ddp_wrap(f: Facts, paths: set[str]) -> list[Call]:
    """The project's own ``DistributedDataParallel(...)`` wraps in the files whose loop accumulates (``paths``), outside
    tests: DDP's reducer all-reduces on every backward unless the loop skips the sync, with ``no_sync()`` or by setting
    ``model.require_backward_grad_sync`` itself (nanoGPT: ``= (micro_step == gradient_accumulation_steps - 1)``)."""
    if any(a.path in paths for a in f.attr_assigns("require_backward_grad_sync")):
        return []
    return [c for c in f.calls("torch.nn.parallel.DistributedDataParallel") if c.path in paths and not _TEST_FILE.search(c.path)]


def _launches_file(x: Any, path: str) -> bool:
    """Whether a setting is a flag of a launch that runs ``path`` (matched by the script's file name)."""
    script = str(getattr(x, "script", "") or "").strip("'\"")
    return getattr(x, "source", None) == "launcher" and bool(script) and script.rsplit("/", 1)[-1] == path.rsplit("/", 1)[-1]


def _no_sync_note(d: Call) -> str:
    return (f", but the model is wrapped in DistributedDataParallel ({d.path}:{d.line}) and nothing calls no_sync(): DDP "
            "all-reduces the gradients after every micro-batch's backward, not once per optimizer step")


def _term_number(f: Facts, term: tuple[str, Any], near: str) -> tuple[float | None, Setting | None]:
    """The number one term of a quotient is (see :class:`RatioAssign`): its own value, else, for an option the script
    reads (``args.batch_size``), the value that takes effect for that script; (None, None) when neither is known."""
    text, value = term
    if value is not None:
        return float(value), None
    if text.isidentifier():
        # a parameter of the script's entry function (Alpaca-LoRA's ``def train(batch_size: int = 128, micro_batch_size: int
        # = 4, ...)`` run through ``fire``, MoRA's ``train.py``): the value a launch of this very script passes
        for st in f.effective(text, near=near):
            v = as_number(st.value)
            if v is not None and _launches_file(st, near):
                return v, st
        return None, None
    if not _OPTION_TERM.fullmatch(text):
        return None, None
    for st in f.effective(text.rsplit(".", 1)[1], near=near):
        v = as_number(st.value)
        if v is not None:
            return v, st
    return None, None


def _quotient_accumulation(f: Facts) -> Outcome | None:
    """The trainer is handed a name the same file binds to a quotient of numbers it knows (Alpaca-LoRA's forks:
    ``GRADIENT_ACCUMULATION_STEPS = BATCH_SIZE // MICRO_BATCH_SIZE`` with ``BATCH_SIZE = 128`` and ``MICRO_BATCH_SIZE =
    4``, then ``TrainingArguments(gradient_accumulation_steps=GRADIENT_ACCUMULATION_STEPS)``; LLM-Pruner ``args.batch_size
    // args.micro_batch_size`` with the parser's or the launch's values): the count on one GPU, and the divisor the file
    applies again under DDP (``GRADIENT_ACCUMULATION_STEPS // world_size``). A launched script's first; None when no such
    name is passed or no quotient's numbers are all known."""
    ratios = [r for r in f.records("ratios") if not _TEST_FILE.search(r.path)]
    if not ratios:
        return None
    passed: list[tuple[Call, str, Expr]] = [
        (c, k, v) for k0 in _GA_KEYS for c in f.calls_with_kw(k0) if CONFIG_CALLEE.search(c.short)
        for k, v in c.kwargs.items() if k == k0 and isinstance(v, Expr) and "." not in v.text]
    launched = launched_paths(f, {c.path for c, _, _ in passed})
    passed.sort(key=lambda x: x[0].path not in launched)
    for c, k, v in passed:
        name, line = v.text, c.kw_line(k)
        recs = [r for r in ratios if r.path == c.path and r.name == name and r.line < line]
        base = next((r for r in recs if r.terms[0][0] != name), None)
        if base is None:
            continue
        known = [_term_number(f, t, c.path) for t in base.terms]
        if any(x is None or x <= 0 for x, _ in known):
            continue
        n = known[0][0] or 0.0
        for x, _ in known[1:]:
            n /= x or 1.0
        again = [r for r in recs if r.line > base.line and r.terms[0][0] == name]
        spelled = " / ".join(f"{x:g}" for x, _ in known)
        where = f"`{base.text.strip()}` at {base.path}:{base.line}" + "".join(
            f", {st.path}:{st.line}" for _, st in known if st is not None)
        per_rank = (f", divided again by {', '.join(t for r in again for t, _ in r.terms[1:])} under DDP "
                    f"({again[0].path}:{again[0].line})") if again else ""
        cited = [f.ev(base), *(f.ev(st) for _, st in known if st is not None), *(f.ev(r) for r in again[:1]),
                 Evidence(c.path, line, f"{k}={name}", k, v)]
        count = int(n)
        if count >= 2:
            scope = (f"on one GPU ({where}){per_rank}: more than one micro-batch per step on fewer than {count} GPUs" if again
                     else f"on every rank ({where})")
            return Outcome(U, cited, f"the trainer is handed {name} = {spelled} = {count:g} micro-batches per step {scope}",
                           {"gradient_accumulation_steps": count})
        return Outcome(N, cited, f"the trainer is handed {name} = {spelled} = {n:g} ({where}): one micro-batch per step",
                       {"gradient_accumulation_steps": 1})
    return None


def _computed_accumulation(f: Facts) -> Outcome | None:
    """The trainer computes its accumulation count as global batch / (micro-batch x ranks) (OpenRLHF's strategy:
    ``self.accumulated_gradient = self.train_batch_size * ... // self.micro_train_batch_size // self.world_size``, the
    DeepSpeed config given ``train_batch_size`` and ``train_micro_batch_size_per_gpu``), and the launches pass both
    sizes (or, with no launch, the argument parser's defaults give them): accumulation whenever the global batch is more
    than one micro-batch per GPU. Judged by the ratios on one node of ``_NODE_GPUS`` GPUs; None when no such
    computation or no sizes are seen."""
    sites = [a for n in _GA_ATTRS for a in f.attr_assigns(n) if isinstance(a.value, Expr) and _GA_RATIO.search(a.value.text or "")
             and not _TEST_FILE.search(a.path)]
    if not sites:
        return None
    pairs: list[tuple[float, float, Evidence, str]] = [
        (g, m, Evidence(x.path, x.arg_line(k), x.arg_text.get(k) or f"{k} {x.script_args[k]}", k, x.script_args[k]), k)
        for g, m, x, k in launch_batch_pairs(f)]
    # the training ranks a launch asks for itself (OpenRLHF's Ray launcher: ``--actor_num_nodes 2 --actor_num_gpus_per_node 8``
    # is 16), else one node of ``_NODE_GPUS``
    ranks = {(x.path, x.arg_line(k)): _launch_ranks(x) for _g, _m, x, k in launch_batch_pairs(f)}
    whose = "launches"
    if not pairs:
        pairs, whose = _default_batch_pairs(f), "argument parsers' defaults"
    if not pairs:
        return None
    a = sites[0]

    def gpus(p: tuple[float, float, Evidence, str]) -> int:
        return ranks.get((p[2].path, p[2].line)) or _NODE_GPUS
    many = [p for p in pairs if p[0] / (p[1] * gpus(p)) >= 2]
    g, m, ev, k = top = (many or pairs)[0]
    n = gpus(top)
    where = f"{k} {g:g} over a micro-batch of {m:g} at {ev.path}:{ev.line}"
    cited = [f.ev(a)] + [p[2] for p in (many or pairs)[:5]]
    how = f"the trainer accumulates global batch / (micro-batch x data-parallel ranks) micro-batches per step ({a.path}:{a.line})"
    if len(many) * 2 >= len(pairs):
        return Outcome(U, cited, f"{how}; {len(many)} of {len(pairs)} {whose} set sizes that accumulate ({where}: "
                       f"{g / (m * n):g} micro-batches per step on {n} GPUs)",
                       {"gradient_accumulation_steps": int(g // (m * n))})
    return Outcome(N, cited, f"{how}, but only {len(many)} of {len(pairs)} {whose} set a global batch of two or more "
                   f"micro-batches per GPU on {_NODE_GPUS} GPUs", {"gradient_accumulation_steps": 1})


def _one_mode(f: Facts, s: Setting) -> bool:
    """``ds_config["gradient_accumulation_steps"] = 1`` under an ``if`` the settings do not show to be on (OpenRLHF: only
    ``if self.use_dynamic_batch:``, whose token-budget batches accumulate by their own count; the ``else`` branch sets
    ``train_batch_size`` and DeepSpeed derives the accumulation from it): the value of one mode, not the run's."""
    if s.source != "config" or not s.path.endswith(".py"):
        return False
    for e in f.files[s.path].configs if s.path in f.files else ():
        if e.line == s.line and e.guard:
            flags = guard_flags(e.guard)
            return not flags or not all(flag_state(f, n) is (not neg) for n, neg in flags)
    return False


# --- C6 memory pool / buffer reuse ----------------------------------------------

_ALLOC_ENVS = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")
_ALLOC_TUNING = lazy_compile(r"expandable_segments\s*:\s*true|max_split_size_mb\s*:\s*\d+|garbage_collection_threshold\s*:\s*[\d.]+|"
                           r"roundup_power2_divisions|backend\s*:\s*cudamallocasync", re.I)
_POOL_CALLS = ("CUDAPluggableAllocator", "change_current_allocator", "torch.cuda.MemPool", "torch.cuda.memory.MemPool",
               "torch.cuda.use_mem_pool", "torch.cuda.memory.use_mem_pool", "torch.cuda.memory._set_allocator_settings")
_INPLACE_OPS = lazy_compile(r"(relu6?|leaky_relu|elu|selu|celu|silu|hardswish|hardsigmoid|hardtanh|mish|dropout\w*|threshold|rrelu)$", re.I)


#: an ``if`` that runs its body every few steps (``global_step % args.eval_step == 0``, ``step % log_every == 0``)
_PERIODIC_GUARD = lazy_compile(r"%")


def _in_hot_loop(c: Call) -> bool:
    """A call inside a ``for`` loop, or in a function that is a training/optimisation step, unless a first-step guard
    makes it run once (fairseq2 ``if self._first_iter: torch.cuda.empty_cache()`` after the first step, "to reduce
    fragmentation")."""
    if _once_guard(c.guard):
        return False
    if c.loop and _EPOCH_LOOP.search(c.loop):
        return False  # PLLaVA: ``torch.cuda.empty_cache()`` in ``for epoch in range(start_epoch, epochs):`` before its step loop
    if c.loop and _LAYER_LOOP.match(c.loop):
        return False  # OmniQuant: ``for i in range(len(layers)):`` calibrates one decoder layer, then frees the cache: per layer
    if c.func and _CHECKPOINT_FUNC.search(c.func):
        return False  # molmo ``restore_checkpoint``: a loop over ranks loading optimizer state, once per resume
    # a function that is one step (``training_step``, ``train_batch``, ``forward``) runs every step; a call in the body of
    # a whole-training function (mistral-finetune ``_train``: ``torch.cuda.empty_cache()`` before its ``while`` loop) and
    # outside any loop runs once
    return bool(c.loop) or bool(c.func and _STEP_FUNC_NAME.search(c.func))


#: a loop over a model's layers (``range(len(layers))``, ``enumerate(model.layers)``, ``tqdm(range(num_layers))``): its
#: body runs once per layer, around whatever per-layer work (quantization, calibration) it holds
_LAYER_LOOP = lazy_compile(r"(?i)^(?:tqdm\()?(?:enumerate\(|range\((?:len\()?)?(?:[\w.]+\.)?(?:layers|blocks|num_layers|n_layers?|"
                           r"num_hidden_layers)\)*(?:,[^()]*\))?$")
#: a function that loads, restores or saves a checkpoint (run once per resume or per save, not per step)
_CHECKPOINT_FUNC = lazy_compile(r"(?i)(^|_)(load|restore|save|resume|unshard)_?\w*(checkpoint|ckpt|state_dict)|checkpoint_(load|restore|save)")
#: a loop over epochs (``range(start_epoch, config.scheduler.epochs)``, ``trange(args.num_train_epochs)``): once per epoch,
#: not per step (HF's ``enumerate(epoch_iterator)`` is the step loop, not this)
_EPOCH_LOOP = lazy_compile(r"(?i)^(range|trange|tqdm)\(.*epoch")
#: only past a platform probe's early return, as HF's ``Trainer.training_step`` has it (MiniCPM-o's copy: ``if
#: is_sagemaker_mp_enabled(): ... return``, then ``torch.cuda.empty_cache()``): off that platform, every step
_PLATFORM_PROBE_OFF = lazy_compile(r"not \(is_\w+_(enabled|available)\(\)\)( and not \(is_\w+_(enabled|available)\(\)\))*")
#: a loop over the training batches (``for batch in self.train_dataloader``, ``zip(prompt_only_dataloader, ...)``)
_BATCH_LOOP = lazy_compile(r"(?i)loader|batch")


def _every_step(c: Call) -> bool:
    """A call with no condition in a loop over the training batches or in a step function: it runs on every step (not
    Megatron-Bridge's ``if train_config.empty_unused_memory_level >= 1:``, a level that defaults to 0, nor a
    checkpoint converter's loop over experts)."""
    return (c.guard is None or bool(_PLATFORM_PROBE_OFF.fullmatch(c.guard))) and (bool(c.loop and _BATCH_LOOP.search(c.loop))
                                or bool(c.func and _STEP_FUNC_NAME.search(c.func) and not _EVAL_STEP_NAME.search(c.func)))


#: a function run once per training step (not ``train``/``fit``/``_train``, which hold the whole loop)
_STEP_FUNC_NAME = lazy_compile(r"(?i)step|forward|backward|(^|_)(train|fit)_(one_)?(batch|iter|micro_?batch)")
#: ... but not an evaluation step (GLM-4's ``Seq2SeqTrainer.prediction_step``, run per evaluation batch)
_EVAL_STEP_NAME = lazy_compile(r"(?i)(predict\w*|eval\w*|valid\w*|val|test)_step")


#: a guard conjunct true on the first step only (``self._first_iter``, ``is_first_step``, ``step == 0``, ``global_step == 1``)
_ONCE_PART = lazy_compile(r"(?i)[\w.]*\b_*(is_)?first(_\w+)?|[\w.]*(step|iter|iteration|batch_?(cnt|idx|count|num))\w*\s*==\s*[01]")


def _once_guard(guard: str | None) -> bool:
    """Whether an ``and`` of guard conjuncts holds only on the first step (not ``not self._first_iter``)."""
    return any(_ONCE_PART.fullmatch(part.strip().strip("()").strip()) for part in (guard or "").split(" and "))


#: functions that build or reset state once (``__init__``, ``reset_parameters``, ``reset_non_persistent_buffers``,
#: ``_fill_sin_freq_table``, ``init_weights``, ``precompute_freqs_cis``), not the training step
_INIT_FUNC = lazy_compile(r"^(__init__|__post_init__|_*(init|initiali[sz]e|reset|fill|build|precompute|setup|make|create)(_\w*)?)$")


@register
class C6MemoryPool(Check):
    id = "C6"
    title = "Memory pool / buffer reuse"
    title_zh = "显存池化与 Buffer 复用"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.LATENCY)
    priority = Priority.LOW
    benefit = "less allocator fragmentation and fewer malloc/free round-trips; lets a near-OOM run fit"
    what = (
        "Whether allocation is managed rather than left to churn: `PYTORCH_CUDA_ALLOC_CONF` tuning (`expandable_segments:True`, "
        "`max_split_size_mb`), a pluggable allocator or `torch.cuda.MemPool`, preallocated buffers reused through `out=`, "
        "DeepSpeed `contiguous_gradients` (a pre-allocated gradient buffer) or ColossalAI Gemini chunks; partial for "
        "`inplace=True` activations alone. "
        "`torch.cuda.empty_cache()` in the training loop is an anti-pattern, reported as a finding, never as use."
    )
    why = (
        "PyTorch's caching allocator fragments under variable-length batches; `expandable_segments:True` lets segments grow "
        "instead of splitting and is the PyTorch docs' first advice for 'reserved but unallocated' memory, often recovering "
        "several GB on LLM fine-tuning. `empty_cache()` in a loop returns the pool to the driver so the next step pays "
        "cudaMalloc/cudaFree again and synchronises the device (PyTorch CUDA semantics docs)."
    )
    fix = (
        "Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` in the launch environment, reuse preallocated buffers with "
        "`out=` in hot custom code, and remove `torch.cuda.empty_cache()` from the training loop."
    )
    fix_zh = "在启动环境中设置 `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`，在热点自定义代码中用 `out=` 复用预分配 buffer，并从训练循环中移除 `torch.cuda.empty_cache()`。"
    fix_safety = FixSafety.SAFE
    references = ("https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf",
                  "https://pytorch.org/docs/stable/notes/cuda.html#memory-management")
    snippets = {
        "shell": "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\ntorchrun --nproc_per_node 8 train.py\n",
        "python": "import os\n\nos.environ.setdefault(\"PYTORCH_CUDA_ALLOC_CONF\", \"expandable_segments:True\")  # before CUDA is initialised\n",
    }
    examples = (
        Example({"scripts/train.sh": "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\ntorchrun --nproc_per_node 8 train.py --bf16 True\n"}, U, "alloc conf"),
        Example({"train.py": "import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'max_split_size_mb:512'\nimport torch\n"}, U, "python env"),
        Example({"ops.py": (
            "import torch\nbuf = torch.empty(4096, 4096, device='cuda')\ndef proj(x, w):\n"
            "    return torch.matmul(x, w, out=buf[: x.shape[0]])\n")}, U, "out= buffer"),
        Example({"model.py": "import torch.nn as nn\nact = nn.ReLU(inplace=True)\ndrop = nn.Dropout(0.1, inplace=True)\n"}, P, "inplace only"),
        Example({"ds_config.json": '{\n  "zero_optimization": {\n    "stage": 2,\n    "contiguous_gradients": true\n  }\n}\n'}, U, "deepspeed contiguous gradients"),
        Example({"train.py": (
            "import torch\nfor step, batch in enumerate(loader):\n    loss = model(**batch).loss\n    loss.backward()\n"
            "    optimizer.step()\n    torch.cuda.empty_cache()\n")}, N, "empty_cache in loop"),
        Example({"run.sh": "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False\npython train.py\n"}, N, "expandable segments off"),
        Example({"train.py": (
            "import torch\n\n\ndef train_step(model, batch, optimizer):\n    loss = model(batch).loss\n    loss.backward()\n"
            "    optimizer.step()\n    torch.cuda.empty_cache()\n")}, N, "empty_cache in a step function: every step"),
        Example({"train.py": "import torch.nn as nn\nact = nn.ReLU(inplace=False)\n# os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n"}, N, "inplace false and comment"),
        Example({"mylib/nn/position_encoder.py": (  # fairseq2 0.8.1 ``nn/position_encoder.py``, ``sdpa/relative.py``
            "import math\n\nimport torch\nfrom torch import nn\n\n\nclass SinusoidalPositionEncoder(nn.Module):\n"
            "    def __init__(self, dim, max_seq_len):\n        super().__init__()\n        self.dim, self.max_seq_len = dim, max_seq_len\n"
            "        self.register_buffer('freqs', torch.empty(max_seq_len, dim), persistent=False)\n        self.reset_parameters()\n\n"
            "    def reset_parameters(self):\n        self.reset_non_persistent_buffers()\n\n"
            "    def reset_non_persistent_buffers(self):\n        l_half = self.freqs[:, : self.dim // 2]\n"
            "        r_half = self.freqs[:, self.dim // 2 :]\n        steps = torch.arange(self.max_seq_len, dtype=torch.float32)\n"
            "        freqs = torch.exp(torch.arange(self.dim // 2) * -math.log(10000.0) / (self.dim // 2))\n"
            "        torch.outer(steps, freqs, out=l_half)\n        torch.sin(l_half, out=r_half)\n        torch.cos(l_half, out=l_half)\n\n"
            "    def forward(self, seqs):\n        return seqs + self.freqs[: seqs.size(-2)]\n")}, N,
                "a position table filled in place once, when the module is built: no buffer reused in the step"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list = []
        thin: list = []
        values: dict[str, object] = {}
        for e in f.envs(*_ALLOC_ENVS):
            if _ALLOC_TUNING.search(e.value or ""):
                used.append(e)
                values["alloc_conf"] = e.value
            elif not e.value and e.source == "python" and e.path in f.files:
                # a value the training code assembles (llm-foundry: ``if train_cfg.expandable_segments:
                # cuda_alloc_conf.append('expandable_segments:True')`` then ``os.environ['PYTORCH_CUDA_ALLOC_CONF'] =
                # ','.join(cuda_alloc_conf)``, the field defaulting to True): its tuning pieces, where their branch runs
                parts = [c for c in f.files[e.path].calls if c.line < e.line and any(isinstance(a, str) and _ALLOC_TUNING.search(a) for a in c.args)
                         and not guard_off(f, c)]
                if parts:
                    used += [e, parts[0]]
                    values["alloc_conf"] = next(a for a in parts[0].args if isinstance(a, str) and _ALLOC_TUNING.search(a))
        for launch in f.launches():
            for k, v in launch.env.items():
                if k in _ALLOC_ENVS and _ALLOC_TUNING.search(v) and "alloc_conf" not in values:
                    used.append(launch)
                    values["alloc_conf"] = v
        for c in f.calls(*_POOL_CALLS):
            if c.short == "_set_allocator_settings" and not any(isinstance(a, str) and _ALLOC_TUNING.search(a) for a in c.args):
                continue
            used.append(c)
            values.setdefault("allocator", c.short)
        for c in f.calls_with_kw("out"):
            out = c.kwargs.get("out")
            # a table filled in place once, when a module is built or reset (a sinusoidal position table's
            # ``torch.sin(freqs, out=table[:, 0::2])`` in ``reset_non_persistent_buffers``), reuses no buffer step after step
            if c.func and _INIT_FUNC.search(c.func.rsplit(".", 1)[-1]):
                continue
            if c.name.startswith("torch.") and isinstance(out, Expr) and out.text != "None" and not _fresh_out(f, c, out.text):
                used.append(c)
                values.setdefault("out_buffers", True)
        for c in f.calls_with_kw("inplace"):
            if value_on(f, c.kwargs.get("inplace")) and _INPLACE_OPS.search(c.short):
                thin.append(c)
        # DeepSpeed's pre-allocated contiguous gradient buffer and ColossalAI Gemini's chunk manager exist against fragmentation
        # (not in a DeepSpeed config the run does not pick: h2o-llmstudio's dict behind ``use_deepspeed``, off by default)
        alt_ds = deepspeed_alternative_files(f)
        framework = [e for e in f.config("contiguous_gradients") if truthy(e.value) and e.path not in alt_ds] + f.calls("GeminiPlugin")
        if not f.config("contiguous_gradients"):  # Lightning's DeepSpeedStrategy at its defaults: contiguous_gradients=True
            framework += [site.fact for site in lightning_deepspeed(f, "contiguous_gradients")]
        if framework:
            values.setdefault("framework_buffers", True)
        used += framework
        findings = [c for c in f.calls("torch.cuda.empty_cache") if _in_hot_loop(c)]
        # a loop of a tool the training path does not reach (lit-llama's ``quantize/gptq.py`` frees each layer's GPTQ
        # state as it quantizes): not the training loop
        train = ctx.project.training_files
        findings = [c for c in findings if c.path in train] if train else findings
        # ... nor one under a periodic condition (MOSS ``if global_step % args.eval_step == 0 or global_step == 1:
        # torch.cuda.empty_cache()`` before its validation pass): not every step
        findings = [c for c in findings if not _PERIODIC_GUARD.search(c.guard or "")]
        # ... nor one behind a switch that is off (Megatron ``if args.empty_unused_memory_level >= 1: torch.cuda.empty_cache()``
        # with ``--empty-unused-memory-level`` defaulting to 0 and no launch raising it)
        findings = [c for c in findings if not guard_off(f, c)]
        # ... nor one in a method that runs without autograd (MiniGPT4-video's ``@torch.no_grad() def multi_select(...)``, a
        # multiple-choice evaluation that frees memory between answers): no training step runs there
        # (an EMA update's ``@torch.no_grad() def step(...)`` that the step loop calls runs every step all the same)
        no_grad = {(d.path, d.target) for d in f.decorators("torch.no_grad", "torch.inference_mode")} if findings else set()
        findings = [c for c in findings if (c.path, c.func) not in no_grad or any(
            x.func != c.func and _in_hot_loop(x) and (not train or x.path in train) for x in f.calls(c.func or "?"))]
        findings += [s for s in f.effective("torch_empty_cache_steps") if (as_number(s.value) or 0) >= 1 and (as_number(s.value) or 0) < 50]
        fnd = [f.ev(x, key="torch.cuda.empty_cache()" if isinstance(x, Call) else None) for x in findings]
        every_step = [c for c in findings if isinstance(c, Call) and _every_step(c)]
        if used and every_step:
            # the pool is tuned or buffers are reused, and the loop hands the cache back to the driver every step
            # (align-anything: DeepSpeed ``contiguous_gradients`` with ``torch.cuda.empty_cache()`` after each ``train_step``)
            x = every_step[0]
            more = f", +{len(every_step) - 1} more" if len(every_step) > 1 else ""
            return Outcome(P, [f.ev(x) for x in used + thin], "allocator tuning, pooled or reused buffers are in place, but "
                           f"torch.cuda.empty_cache() runs in the training loop ({x.path}:{x.line}{more}): it returns the cached "
                           "blocks to the driver every step, and the next step allocates them again", values, fnd)
        if used:
            return Outcome(U, [f.ev(x) for x in used + thin], "allocator tuning, pooled or reused buffers are in place", values, fnd)
        if thin:
            return Outcome(P, evs(thin), "only in-place activations; no allocator tuning or buffer reuse", {"inplace": True}, fnd)
        detail = ("torch.cuda.empty_cache() runs in the training loop: an anti-pattern that empties the caching allocator every step"
                  if findings else "no allocator tuning or buffer reuse found")
        return Outcome(N, [], detail, {}, fnd)


_ALLOCS = {"empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "new_empty", "new_zeros",
           "new_ones", "new_full", "empty_strided"}


def _fresh_out(f: Facts, c: Call, target: str) -> bool:
    """``out=bins`` where ``bins = torch.empty_like(...)`` a few lines above in the same function (OLMo-core's MoE
    ``torch.cumsum(batch_size_per_expert, 0, out=bins)``): a buffer allocated for this call, every call, so nothing is
    reused across steps; the ``out=`` only names where the result goes."""
    if not target.isidentifier():
        return False
    ff = f.files.get(c.path)
    assign = re.compile(rf"^\s*{re.escape(target)}\s*=\s*[\w.]+\(")
    return ff is not None and any(
        a.func == c.func and 0 < c.line - a.line <= 5 and a.short in _ALLOCS and assign.match(a.text) for a in ff.calls)


def megatron_microbatch_schedule(f: Facts) -> tuple[Call, Call] | None:
    """(the ``get_forward_backward_func()`` call, the ``get_num_microbatches()`` call) of a training step that runs Megatron's
    pipeline schedule over the micro-batch calculator's count (NeMo-Aligner's DPO/SFT models: ``fwd_bwd_function =
    get_forward_backward_func()`` then ``fwd_bwd_function(..., num_microbatches=get_num_microbatches(), ...)``): one optimizer
    step per global batch of global_batch_size / (micro_batch_size x DP) micro-batches. Both in the same function, outside
    tests and switches that are off."""
    def live(c: Call) -> bool:
        return not re.search(r"(^|/)tests?/|(^|/)test_[^/]*$", c.path) and not guard_off(f, c)

    fwds = {(c.path, c.func): c for c in f.calls("get_forward_backward_func") if c.func and live(c)}
    for c in f.calls("get_num_microbatches"):
        if (c.path, c.func) in fwds and live(c):
            return fwds[(c.path, c.func)], c
    return None
