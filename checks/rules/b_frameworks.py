"""B. Training frameworks (训练框架): B1-B6.

A framework is ``used`` when it really drives training: its engine/launcher/strategy is called or
configured (``deepspeed.initialize``, a DeepSpeed config handed to a trainer or launcher,
``Accelerator().prepare``, Megatron's ``pretrain``/``megatron.core`` modules, a ColossalAI
``Booster`` plugin, FSDP wrapping, veScale DTensor APIs).

Decisions: a framework that is imported but never called is ``partial`` (the code is wired for
it, nothing runs it); a dependency entry alone is ``unused`` (it drives nothing). For DeepSpeed,
a dependency next to an HF/TRL trainer is ``partial`` (one ``--deepspeed`` flag away), and a
DeepSpeed config shipped in the repository that nothing visible passes is ``partial`` unless an
HF trainer (which takes ``--deepspeed``) is there to receive it. Accelerate used only for helpers
(``Accelerator()`` without ``prepare``/``backward``) is ``partial``.
"""

from __future__ import annotations

import re
from typing import Any

from ..base import Check, Context, register
from ..facts import Call, Facts, truthy
from ..lazyre import lazy_compile
from ..model import Bottleneck, Example, FixSafety, Outcome, Priority, Status
from ..project import _INFER_PATH, availability_probe, deepspeed_utility_only, megatron_launch
from ._helpers import (
    HF_TRAINERS,
    all_arms,
    backend_unselected,
    class_at,
    guard_off,
    hf_trainer_subclasses,
    trainer_train_paths,
    uses_hf_trainer,
)
from .a_parallelism import (
    DS_REF_NAMES,
    FAIRSEQ2_DP,
    SKYRL_BACKENDS,
    _dead_fsdp,
    _gated,
    _switch_text,
    _uncalled_sites,
    calls_under,
    ds_config_refs,
    fsdp_sites,
    is_lightning,
    manual_fsdp_wrap,
    resolve_file,
    strategy_registry,
)
from .d_compute import dep_version

U, P, N = Status.USED, Status.PARTIAL, Status.UNUSED

_TEST_PATH = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_test\.py$", re.I)


def _ev(x: Any, key: str | None = None) -> Any:
    return Facts.ev(x, key=key)


def _real(items: list[Any]) -> list[Any]:
    return [x for x in items if not _TEST_PATH.search(getattr(x, "path", ""))]


def _infers_only(path: str, backward: set[str]) -> bool:
    """A file named or filed for inference (``inference/``, ``generate.py``, ``*_demo.py``) that runs no backward pass."""
    return path not in backward and bool(_INFER_PATH.search(path))


def _imports_only(f: Facts, *modules: str) -> list[Any]:
    return _real(f.imports(*modules))


def _framework_outcome(name: str, used: list[Any], how: str, imported: list[Any], deps: list[Any], values_key: str,
                       partial: list[Any] | None = None, partial_why: str = "") -> Outcome:
    if used:
        return Outcome(U, [_ev(x) for x in used], f"{name} drives training ({how})", {values_key: True})
    if partial:
        return Outcome(P, [_ev(x) for x in partial], partial_why, {values_key: "partial"})
    if imported:
        return Outcome(P, [_ev(x) for x in imported], f"{name} is imported but nothing in the code calls its training API", {values_key: "imported"})
    if deps:
        return Outcome(N, [_ev(x) for x in deps], f"{name} is only a dependency; it does not drive training", {values_key: False})
    return Outcome(N, [], f"no use of {name} found", {values_key: False})


def _alternative(f: Facts, family: str, name: str, sites: list[Any]) -> Outcome | None:
    """A framework whose code and configs serve a backend the project's backend option does not pick (skyrl-train ships
    DeepSpeed and Megatron workers beside ``trainer.strategy: fsdp2``): an alternative, not what training runs on."""
    sel = backend_unselected(f, family)
    if not sel or not sites:
        return None
    s0 = sel[0]
    return Outcome(N, [_ev(s0), *(_ev(x) for x in sites[:5])],
                   f"{name} is an alternative backend that no run picks: `{s0.name}` is {s0.value!r} ({s0.path}:{s0.line}); "
                   f"its code ({_where(sites[0])}) runs only when a run selects it", {family: False})


def _where(x: Any) -> str:
    return f"{x.path}:{x.line}"


def deepspeed_sites(f: Facts) -> tuple[list[Any], list[Any]]:
    """(sites where DeepSpeed drives training, DeepSpeed configs shipped but not visibly passed)."""
    used: list[Any] = []
    used += _real(f.calls("deepspeed.initialize", "deepspeed.zero.Init", "deepspeed.pipe.PipelineModule",
                          "deepspeed.runtime.pipe.module.PipelineModule"))
    # (a DeepSpeed MoE layer built only under a switch that is off, TinyChart's ``getattr(config, 'load_moe_mm_projector',
    # False)``, drives nothing)
    used += [c for c in _real(f.calls("deepspeed.moe.layer.MoE")) if not (c.guard and guard_off(f, c))]
    used += _real(f.launches("deepspeed"))
    refs = ds_config_refs(f)
    used += refs
    for s in f.effective("deepspeed", "use_deepspeed"):
        if truthy(s.value) is True and s.rank > 0 and not isinstance(s.value, str) and not _TEST_PATH.search(s.path):
            used.append(s)  # Megatron-DeepSpeed ``--deepspeed``, accelerate ``--use_deepspeed``
    for e in f.config("distributed_type"):
        if str(e.value).upper() == "DEEPSPEED":
            used.append(e)
    used += _real(f.calls("DeepSpeedPlugin"))
    used += [c for c in _real(f.calls("DeepSpeedStrategy")) if is_lightning(c) or c.name == "DeepSpeedStrategy"]
    for s in f.effective("strategy"):
        if isinstance(s.value, str) and s.value.lower().startswith("deepspeed") and not _TEST_PATH.search(s.path):
            used.append(s)
    # ``strategy = "deepspeed_stage_2_offload" if cond else "deepspeed_stage_2"``: DeepSpeed whichever arm the run takes
    used += [s for s in all_arms(f.alternatives("strategy"), lambda v: isinstance(v, str) and v.lower().startswith("deepspeed"))
             if not _TEST_PATH.search(s.path)]
    # DeepSpeed JSON configs in the repository
    shipped: list[Any] = []
    ref_paths = {resolve_file(f, s.value) for s in refs if isinstance(s.value, str)}
    seen: set[str] = set()
    for e in f.config("zero_optimization", "train_micro_batch_size_per_gpu", "steps_per_print"):
        if e.path in seen or _TEST_PATH.search(e.path) or len(e.keys) != 1 or e.fmt not in {"json", "yaml"}:
            continue
        seen.add(e.path)
        if e.path not in ref_paths:
            shipped.append(e)
    return used, shipped


@register
class B1DeepSpeed(Check):
    id = "B1"
    title = "DeepSpeed"
    title_zh = "DeepSpeed"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMMUNICATION)
    priority = Priority.MEDIUM
    benefit = "ZeRO sharding, CPU/NVMe offload, fused optimizers and MoE/pipeline engines from one JSON config"
    what = (
        "Whether DeepSpeed drives training: `deepspeed.initialize`, the `deepspeed` launcher, a DeepSpeed config handed to "
        "a trainer (`--deepspeed ds.json`, `TrainingArguments(deepspeed=...)`, YAML `deepspeed:`), accelerate "
        "`distributed_type: DEEPSPEED`/`DeepSpeedPlugin`, Lightning `DeepSpeedStrategy`. A dependency entry alone is unused."
    )
    why = (
        "DeepSpeed's ZeRO-Offload trains a 13B model on a single V100 and ZeRO-Infinity 1T+ parameters on one DGX-2 node "
        "(Ren et al., 2021; Rajbhandari et al., 2021); its HF integration needs only a JSON config, so a project training "
        "multi-billion-parameter models without it (or FSDP/Megatron) usually runs out of memory or under-uses its GPUs."
    )
    fix = "Add a DeepSpeed config (ZeRO stage 2/3, bf16) and pass it to the trainer: `--deepspeed configs/ds_z2.json` (HF/TRL/LLaMA-Factory/axolotl) or `deepspeed.initialize(model=..., config=...)` in a custom loop."
    fix_zh = "添加 DeepSpeed 配置（ZeRO stage 2/3、bf16）并传给训练器：`--deepspeed configs/ds_z2.json`（HF/TRL/LLaMA-Factory/axolotl），或在自定义循环中调用 `deepspeed.initialize(model=..., config=...)`。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://www.deepspeed.ai/getting-started/", "https://huggingface.co/docs/transformers/deepspeed")
    snippets = {
        "deepspeed-json": '{\n  "train_micro_batch_size_per_gpu": "auto",\n  "bf16": {"enabled": "auto"},\n  "zero_optimization": {"stage": 2, "overlap_comm": true}\n}\n',
        "hf-yaml": "deepspeed: configs/ds_z2.json\n",
        "shell": "deepspeed --num_gpus 8 train.py --deepspeed configs/ds_z2.json\n",
        "python": "import deepspeed\n\nengine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=\"ds_config.json\")\n",
    }
    examples = (
        Example({"train.py": "import deepspeed\nengine, opt, _, _ = deepspeed.initialize(model=model, config=cfg)\nengine.backward(loss)\n"}, U, "initialize"),
        Example({"run.sh": "torchrun --nproc_per_node 8 train.py --deepspeed ds_config.json --bf16 True\n",
                 "ds_config.json": '{\n  "zero_optimization": {"stage": 2}\n}\n'}, U, "hf --deepspeed"),
        Example({"train.yaml": "model_name_or_path: Qwen/Qwen2-7B\ndeepspeed: examples/deepspeed/ds_z3_config.json\n"}, U, "llamafactory yaml"),
        Example({"requirements.txt": "torch\ndeepspeed>=0.14\n", "train.py": "import torch\nloss.backward()\n"}, N, "dependency only"),
        Example({"train.py": "import torch\n# import deepspeed\n# engine, *_ = deepspeed.initialize(model=model)\n"}, N, "commented out"),
        Example({  # based: a Lightning project whose FLOPs-count callback borrows DeepSpeed's profiler
            "train/utils/flops.py": ("from deepspeed.profiling.flops_profiler import get_model_profile\n\n\n"
                                     "def profile_deepspeed(model, input_size=(1, 2048)):\n"
                                     "    return get_model_profile(model=model, input_shape=input_size, print_profile=False)\n"),
            "train/run.py": ("import pytorch_lightning as pl\n\n\ndef main(model, datamodule):\n"
                             "    pl.Trainer(devices=8, strategy='ddp', precision='bf16').fit(model, datamodule=datamodule)\n"),
        }, N, "only DeepSpeed's FLOPs profiler is imported"),
        Example({"train.yaml": "deepspeed: null\nbf16: true\n"}, N, "deepspeed null"),
        Example({"requirements.txt": "transformers\ndeepspeed\n",
                 "train.py": "from transformers import Trainer, TrainingArguments\ntrainer = Trainer(model=m, args=TrainingArguments(output_dir='o'))\n"}, P, "dependency + HF trainer"),
        Example(SKYRL_BACKENDS, N, "DeepSpeed workers and configs of a backend the strategy does not pick"),
        Example(strategy_registry(), N, "DeepSpeed plugin of a strategy class the name registry never returns"),
        Example(strategy_registry(lookup="config.backend.strategy"), U, "the registry name comes from the run's config"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used, shipped = deepspeed_sites(f)
        alt = _alternative(f, "deepspeed", "DeepSpeed", used + shipped)
        if alt is not None:
            return alt
        # Lightning's strategy built only under a branch the run leaves off (lit-llama ``DeepSpeedStrategy(config=ds_config) if
        # devices > 1 else "auto"`` with ``devices = 1`` in that script): DeepSpeed is the multi-GPU option, not the run
        # ... or ``deepspeed.initialize`` only under a switch that is off by default (h2o-llmstudio: ``if
        # cfg.environment.use_deepspeed and not cfg.training.lora:`` with ``use_deepspeed: bool = False``)
        off = {id(c): g for c in used if isinstance(c, Call) and c.short in ("DeepSpeedStrategy", "initialize") and (g := guard_off(f, c))}
        if off and len(off) == len(used):
            c0 = next(c for c in used if id(c) in off)
            g0 = off[id(c0)][0]
            return Outcome(N, [_ev(c0), _ev(g0)], f"DeepSpeed only under a branch the run leaves off: `{c0.guard}` "
                           f"({c0.path}:{c0.line}) with {getattr(g0, 'name', '') or getattr(g0, 'key', '')} = "
                           f"{getattr(g0, 'value', None)!r} at {g0.path}:{g0.line}", {"deepspeed": False})
        hf = uses_hf_trainer(f)
        # A config shipped for the HF trainer's --deepspeed that no launch script, config or code passes is partial,
        # as C4 (offload JSON) and B3 (accelerate config) judge an unwired config: a README command is not use.
        partial = shipped or ([*_real(f.deps("deepspeed")), *hf[:1]] if hf and f.deps("deepspeed") else [])
        why = "a DeepSpeed config is shipped but nothing visible passes it" if shipped else "DeepSpeed is installed next to an HF trainer but no config is passed"
        doc = next((h for h in f.records("doc_hints") if h.kind == "command_flag" and h.value in ("deepspeed", "deepspeed_config")), None)
        if shipped and doc is not None:
            # starcoder chat/README.md ``torchrun ... train.py config.yaml --deepspeed=deepspeed_z3_config_bf16.json``
            why = (f"a DeepSpeed config is shipped and only a documented command passes it ({doc.path}:{doc.line}); no launch "
                   "script or config of the repository does")
        imported = _imports_only(f, "deepspeed")
        utility = deepspeed_utility_only(f) if imported and not used and not partial else []
        if utility:
            # only DeepSpeed's FLOPs profiler or checkpoint converters are imported (based: a callback's
            # ``from deepspeed.profiling.flops_profiler import get_model_profile``): a tool, not the training framework
            return Outcome(N, [_ev(x) for x in imported[:3]], f"DeepSpeed is imported only for its utilities ({utility[0]}: "
                           f"{imported[0].full}), not to train", {"deepspeed": False})
        return _framework_outcome("DeepSpeed", used, "engine/launcher/config", imported, _real(f.deps("deepspeed")), "deepspeed",
                                  partial, why)

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status not in (Status.UNUSED, Status.PARTIAL) or _scale_framework_used(ctx.facts, exclude="deepspeed"):
            return None
        b = ctx.project.params_billions
        if b is not None and b < 1:
            return None
        return Priority.MEDIUM if uses_hf_trainer(ctx.facts) or ctx.facts.deps("deepspeed") else None


def _scale_framework_used(f: Facts, exclude: str) -> bool:
    """Whether a framework that shards/parallelises training (other than ``exclude``) already runs."""
    checks = {
        "deepspeed": lambda: bool(deepspeed_sites(f)[0]),
        "megatron": lambda: bool(megatron_sites(f)),
        "fsdp": lambda: bool(fsdp_sites(f)),
        "colossalai": lambda: bool(colossal_sites(f)),
        "vescale": lambda: bool(vescale_sites(f)),
    }
    return any(fn() for name, fn in checks.items() if name != exclude)


def megatron_sites(f: Facts) -> list[Any]:
    sites: list[Any] = _real(calls_under(f, "megatron"))
    sites += [c for c in _real(calls_under(f, "nemo")) if "megatron" in c.name.lower() or ".llm." in c.name]
    sites += [launch for launch in _real(f.launches()) if megatron_launch(launch)]
    for e in f.config("distributed_type"):
        if str(e.value).upper() == "MEGATRON_LM":
            sites.append(e)
    sites += _real(f.calls("MegatronLMPlugin"))
    return sites


@register
class B2Megatron(Check):
    id = "B2"
    title = "Megatron-LM"
    title_zh = "Megatron-LM"
    bottlenecks = (Bottleneck.COMMUNICATION, Bottleneck.COMPUTE)
    priority = Priority.LOW
    benefit = "3D parallelism (TP/PP/DP + SP/CP/EP) with fused kernels: the reference stack for large-scale pretraining"
    what = (
        "Whether Megatron-LM / Megatron-Core drives training: calls into `megatron.*` (`pretrain(...)`, `megatron.core` models "
        "and `parallel_state`), Megatron launch scripts (`pretrain_gpt.py` with its flags), NeMo's Megatron models, or "
        "accelerate `distributed_type: MEGATRON_LM`. Imports alone are partial; a dependency alone is unused."
    )
    why = (
        "Megatron-LM reached 502 PFLOPS (52 % of peak) training a 1T-parameter GPT on 3072 A100s by combining tensor, "
        "pipeline and data parallelism (Narayanan et al., SC'21); Megatron-Core's MFU on H100 for GPT-3 175B is ~47 % "
        "(NVIDIA, 2024). It matters for pretraining at tens of billions of parameters; fine-tuning rarely needs it."
    )
    fix = "For pretraining >= 30B parameters or many nodes, run on Megatron-Core (directly, via NeMo, or Pai-Megatron-Patch) with TP within a node and PP across nodes."
    fix_zh = "预训练 30B 以上或多机大规模训练时，基于 Megatron-Core（直接使用、NeMo 或 Pai-Megatron-Patch）训练：节点内 TP、跨节点 PP。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://github.com/NVIDIA/Megatron-LM", "https://arxiv.org/abs/2104.04473")
    snippets = {"shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --use-mcore-models --bf16\n"}
    examples = (
        Example({"pretrain_llama.py": "from megatron.training import pretrain\nfrom megatron.core.enums import ModelType\n"
                 "pretrain(train_valid_test_datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step)\n"}, U, "pretrain"),
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 4 --num-layers 24\n"}, U, "launch script"),
        Example({"model.py": "from megatron.core import parallel_state\nrank = parallel_state.get_tensor_model_parallel_rank()\n"}, U, "megatron.core api"),
        Example({"requirements.txt": "megatron-core==0.8.0\ntorch\n"}, N, "dependency only"),
        Example({"train.py": "from transformers import MegatronBertModel\nm = MegatronBertModel.from_pretrained('nvidia/megatron-bert-cased-345m')\n"}, N, "hf megatron-bert model"),
        Example({"train.py": "# from megatron.training import pretrain\nimport torch\n"}, N, "commented out"),
        Example({"utils.py": "from megatron.core import parallel_state\n"}, P, "import only"),
        Example(SKYRL_BACKENDS, N, "Megatron workers of a backend the strategy does not pick"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        sites = megatron_sites(f)
        alt = _alternative(f, "megatron", "Megatron-LM", sites)
        if alt is not None:
            return alt
        imported = _imports_only(f, "megatron")
        return _framework_outcome("Megatron-LM", sites, "Megatron API or launcher", imported,
                                  _real(f.deps("megatron-core", "megatron-lm")), "megatron")

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status != Status.UNUSED:
            return None
        b = ctx.project.params_billions
        return Priority.LOW if ctx.project.pretrains and b is not None and b >= 30 else None


@register
class B3Accelerate(Check):
    id = "B3"
    title = "HF Accelerate"
    title_zh = "HuggingFace Accelerate"
    bottlenecks = (Bottleneck.COMMUNICATION,)
    priority = Priority.LOW
    benefit = "one training loop runs single-GPU, DDP, FSDP or DeepSpeed by changing a config, not code"
    what = (
        "Whether Accelerate drives training: an `Accelerator()` whose `prepare`/`backward` run the loop, `accelerate launch`, "
        "an accelerate config (`distributed_type:`) passed with `--config_file`, or `notebook_launcher`. Helpers alone "
        "(`init_empty_weights`, `set_seed`) are not use; an `Accelerator()` used without `prepare`/`backward` is partial. "
        "Training through transformers' `Trainer` or a TRL trainer (or a subclass) is use: from transformers 4.30 the Trainer "
        "runs on an Accelerator (unless the requirements keep transformers below 4.30)."
    )
    why = (
        "Accelerate wraps DDP/FSDP/DeepSpeed/mixed precision behind ~5 lines in a raw PyTorch loop (HF docs), so a custom "
        "loop gains multi-GPU scaling and BF16 without hand-written process-group code; the HF Trainer already runs on it."
    )
    fix = "In a custom loop: `accelerator = Accelerator(mixed_precision=\"bf16\")`, `model, opt, dl = accelerator.prepare(model, opt, dl)`, `accelerator.backward(loss)`; launch with `accelerate launch --config_file cfg.yaml train.py`."
    fix_zh = "自定义训练循环中：`accelerator = Accelerator(mixed_precision=\"bf16\")`，`model, opt, dl = accelerator.prepare(model, opt, dl)`，`accelerator.backward(loss)`；用 `accelerate launch --config_file cfg.yaml train.py` 启动。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://huggingface.co/docs/accelerate/index",)
    snippets = {
        "python": (
            "from accelerate import Accelerator\n\n"
            "accelerator = Accelerator(mixed_precision=\"bf16\", gradient_accumulation_steps=4)\n"
            "model, optimizer, loader = accelerator.prepare(model, optimizer, loader)\n"
            "for batch in loader:\n"
            "    with accelerator.accumulate(model):\n"
            "        loss = model(**batch).loss\n"
            "        accelerator.backward(loss)\n"
            "        optimizer.step()\n"
            "        optimizer.zero_grad()\n"
        ),
        "accelerate-yaml": "distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n",
        "shell": "accelerate launch --config_file accelerate.yaml train.py\n",
    }
    examples = (
        Example({"train.py": "from accelerate import Accelerator\naccelerator = Accelerator(mixed_precision='bf16')\n"
                 "model, opt, dl = accelerator.prepare(model, opt, dl)\naccelerator.backward(loss)\n"}, U, "accelerator loop"),
        Example({"run.sh": "accelerate launch --num_processes 8 train.py --config cfg.yaml\n"}, U, "accelerate launch"),
        Example({"getting-started/inference/local_inference/multi_modal_infer.py": (  # llama-cookbook: device from Accelerate
            "import torch\nfrom accelerate import Accelerator\nfrom transformers import MllamaForConditionalGeneration\n\n"
            "accelerator = Accelerator()\ndevice = accelerator.device\n\n\ndef load_model(name):\n"
            "    model = MllamaForConditionalGeneration.from_pretrained(name, torch_dtype=torch.bfloat16)\n"
            "    model, processor = accelerator.prepare(model, processor)\n    return model\n"),
                 "src/finetuning.py": "import torch\nloss = model(**batch).loss\nloss.backward()\noptimizer.step()\n"},
                N, "an inference script's Accelerator (device and prepare, no backward) does not drive training"),
        Example({"mylib/trainer.py": (  # sentence-transformers 6.3: the Trainer subclass prepares its own train loader
            "from torch.utils.data import DataLoader\nfrom transformers import Trainer\n\n\n"
            "class EmbeddingTrainer(Trainer):\n"
            "    def get_train_dataloader(self):\n"
            "        self.accelerator.even_batches = False\n"
            "        loader = DataLoader(self.train_dataset, batch_size=self.args.train_batch_size, collate_fn=self.data_collator)\n"
            "        self._train_dataloader = self.accelerator.prepare(loader)\n"
            "        return self._train_dataloader\n"),
            "pyproject.toml": "[project]\nname = 'mylib'\ndependencies = ['transformers>=5']\n\n"
                              "[project.optional-dependencies]\ntrain = ['datasets', 'accelerate>=1.3.0']\n"},
            U, "a transformers Trainer subclass preparing its loader with the Trainer's Accelerator"),
        Example({"mylib/loops.py": (
            "class EvalLoop:\n"
            "    def run(self, loader):\n"
            "        loader = self.accelerator.prepare(loader)\n"
            "        return [self.model(**batch) for batch in loader]\n"),
            "pyproject.toml": "[project]\nname = 'mylib'\ndependencies = ['accelerate>=1.3.0']\n"},
            N, "self.accelerator.prepare in a class that is no Trainer and builds no Accelerator: not shown to drive training"),
        Example({"train.py": (  # Stanford Alpaca / FastChat: a script around transformers' Trainer, launched by torchrun
            "import transformers\nfrom transformers import Trainer\n\n\n"
            "def train():\n"
            "    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))\n"
            "    model_args, data_args, training_args = parser.parse_args_into_dataclasses()\n"
            "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
            "    trainer = Trainer(model=model, tokenizer=tokenizer, args=training_args, **data_module)\n"
            "    trainer.train()\n"),
            "requirements.txt": "transformers>=4.41\ntorch\n"},
            U, "training through transformers' Trainer, which runs on Accelerate"),
        Example({"mylib/sft.py": (  # fms-hf-tuning: the trainer class is picked into a variable, then built
            "from trl import SFTConfig, SFTTrainer\n\n\n"
            "def train(model, args, data, sum_loss=False):\n"
            "    if sum_loss:\n"
            "        TrainerClass = SumLossTrainer\n"
            "    else:\n"
            "        TrainerClass = SFTTrainer\n"
            "    trainer = TrainerClass(model=model, args=args, train_dataset=data)\n"
            "    trainer.train()\n")},
            U, "a TRL trainer picked into a variable and built from it"),
        Example({"train.py": (
            "from transformers import Trainer\n\ntrainer = Trainer(model=model, args=args, train_dataset=ds)\ntrainer.train()\n"),
            "requirements.txt": "transformers==4.28.1\naccelerate\n"},
            N, "transformers pinned to 4.28, whose Trainer ran its own DDP code: Accelerate is only a dependency"),
        Example({"mylib/cli/train_sft.py": (  # OpenRLHF: its own DeepSpeed trainer, named like TRL's
            "from mylib.trainer import SFTTrainer\n\n\n"
            "def train(args, model, strategy, loader):\n"
            "    trainer = SFTTrainer(model=model, strategy=strategy, train_dataloader=loader)\n"
            "    trainer.fit(args)\n"),
            "mylib/trainer/__init__.py": "from .sft_trainer import SFTTrainer\n",
            "mylib/trainer/sft_trainer.py": "class SFTTrainer:\n    def fit(self, args):\n        self.strategy.backward(self.loss, self.model, self.optimizer)\n",
            "requirements.txt": "deepspeed\ntransformers\n"},
            N, "the framework's own trainer named like TRL's: not the HF Trainer"),
        Example({"train.py": "from accelerate import init_empty_weights\nwith init_empty_weights():\n    model = build()\n"}, N, "helper only"),
        Example({"requirements.txt": "accelerate>=0.30\n"}, N, "dependency only"),
        Example({"train.py": "# from accelerate import Accelerator\n# accelerator = Accelerator()\nimport torch\n"}, N, "commented out"),
        Example({"train.py": "from accelerate import Accelerator\naccelerator = Accelerator()\nif accelerator.is_main_process:\n    print('hi')\n"}, P, "accelerator without prepare"),
        Example({"mylib/models/hg/factory.py": (  # fairseq2 0.8.1: a probe before asking an HF loader for device_map="auto"
            "import logging\n\nfrom transformers import AutoModelForCausalLM\n\nlog = logging.getLogger(__name__)\n\n\n"
            "def load_hg_model(name, device):\n    kwargs = {}\n    if device == 'auto':\n        try:\n"
            "            import accelerate  # noqa: F401\n\n            kwargs['device_map'] = 'auto'\n        except ImportError:\n"
            "            log.warning('accelerate library not found. Cannot use device_map=auto.')\n"
            "    return AutoModelForCausalLM.from_pretrained(name, **kwargs)\n")}, N,
                "an import that only probes whether accelerate is installed"),
        Example({"mylib/train.py": (
            "try:\n    import accelerate\nexcept ImportError:\n    accelerate = None\n\n\n"
            "def main():\n    accelerator = accelerate.Accelerator(mixed_precision='bf16')\n    if accelerator.is_main_process:\n"
            "        print('ready')\n")}, P, "an optional import whose module is then used: the Accelerator is built"),
        Example({"mylib/cli/launcher.py": (  # TRL 1.16's CLI: the training script is re-launched through accelerate's own launcher
            "from accelerate.commands.launch import launch_command, launch_command_parser\n\n\n"
            "def launch_training_script(script, launch_args, script_args, launch_command_fn=launch_command,\n"
            "                           launch_parser_fn=launch_command_parser):\n"
            "    launch_command_fn(launch_parser_fn().parse_args(launch_args + [script] + script_args))\n"),
            "mylib/accelerate_configs/multi_gpu.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 8\n"},
            U, "a CLI that launches its scripts through accelerate's launch_command"),
        Example({"mylib/accelerate_configs/multi_gpu.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 8\n",
                 "mylib/cli/launcher.py": "from accelerate.commands.launch import launch_command_parser\n\nparser = launch_command_parser()\n"},
                P, "an accelerate config and accelerate's launch parser only: nothing launches"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        # an inference script that takes its device from an Accelerator and ``prepare``s a model to generate with
        # (llama-cookbook ``getting-started/inference/local_inference/multi_modal_infer.py``) trains nothing
        backward = {c.path for c in f.calls("backward")}
        accs = [c for c in _real(f.calls("Accelerator")) if c.name.startswith("accelerate") and not _infers_only(c.path, backward)]
        drive = [c for c in _real(f.calls("prepare", "backward", "accumulate", "prepare_model"))
                 if "accelerator" in c.text.lower() and not _infers_only(c.path, backward)]
        used: list[Any] = []
        if accs and drive:
            used += accs + drive[:3]
        used += _real(f.launches("accelerate"))
        used += _real(f.calls("notebook_launcher"))
        # a launch built in Python: accelerate's own ``launch_command`` called, or handed to the runner that calls it
        # (TRL's CLI: ``launch_command_fn=launch_command`` -> ``launch_command_fn(launch_command_parser().parse_args(...))``)
        used += [x for x in _real([*f.calls("accelerate.commands.launch.launch_command"),
                                   *f.refs("accelerate.commands.launch.launch_command")])
                 if x.name == "accelerate.commands.launch.launch_command"]
        # a subclass of transformers' Trainer handing its own loop's pieces to the Trainer's Accelerator
        # (``self._train_dataloader = self.accelerator.prepare(self._build_dataloader(...))``): the HF Trainer runs on
        # Accelerate, and this subclass drives it itself
        subclasses = hf_trainer_subclasses(f) if drive and not used else set()
        # (not ``prepare_model(ref_model, evaluation_mode=True)``: a frozen reference/reward/teacher model for inference)
        used += [c for c in drive if c.name.startswith("self.accelerator.") and c.short in ("prepare", "backward", "accumulate")
                 and "evaluation_mode" not in c.kwargs and class_at(f, c.path, c.line) in subclasses][:3]
        partial: list[Any] = []
        # ``device_map={"": Accelerator().process_index}`` (StarCoder ``finetune/finetune.py``): an Accelerator built to read
        # the process index and dropped is a helper, as ``PartialState`` is; it drives nothing
        helper = [c for c in accs if _ACC_HELPER.search(c.text)]
        if accs and not drive and not used and len(helper) == len(accs):
            if (hf := _hf_trainer_on_accelerate(f)) is not None:
                return hf
            c0 = helper[0]
            attr = _ACC_HELPER.search(c0.text).group(1)
            return Outcome(N, [_ev(x) for x in helper[:3]],
                           f"Accelerate only supplies the {attr.replace('_', ' ')} (`Accelerator().{attr}` at {_where(c0)}); "
                           "the object is dropped at once, so it drives nothing of training", {"accelerate": "helper"})
        if accs and not drive:
            partial = accs
        else:
            cfgs = [e for e in f.config("distributed_type") if len(e.keys) == 1 and f.config("compute_environment")]
            if not used:
                partial = [e for e in cfgs if not _TEST_PATH.search(e.path)]
        why = ("Accelerator() is created but the loop does not run through prepare/backward" if accs
               else "an accelerate config is shipped but nothing visible launches with it")
        if not used:
            hf = _hf_trainer_on_accelerate(f)
            if hf is not None:
                return hf
        imported = [i for i in _imports_only(f, "accelerate") if i.name in (None, "Accelerator", "*") and not availability_probe(f, i)
                    and not _infers_only(i.path, backward)]
        return _framework_outcome("Accelerate", used, "Accelerator/launcher", imported, _real(f.deps("accelerate")), "accelerate", partial, why)

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        return None


#: an Accelerator built only to read one of its process facts, then dropped (``Accelerator().process_index``)
_ACC_HELPER = lazy_compile(r"Accelerator\([^()]*\)\.(process_index|local_process_index|device|is_main_process|"
                         r"is_local_main_process|num_processes)\b")

_HF_TRAINER_HOMES = ("transformers", "trl")
_CLASS_OR_PICK = lazy_compile(r"class\s+\w+\s*\(|(?:self\.)?[A-Z]\w*\s*=\s*[\w.]+\s*$")

#: the transformers release whose Trainer runs on an ``Accelerator`` (the migration of May 2023: it prepares the model
#: and optimizer, runs backward and gradient accumulation; 4.29 needed Accelerate only for its ``PartialState``)
_TRAINER_ON_ACCELERATE = (4, 30)


def _hf_trainers(f: Facts) -> list[Any]:
    """Where training runs through transformers'/TRL's trainer: a call of one (or of the project's subclass of one) in a
    script that runs a trainer's ``train()``; else the project's class statements deriving from one and assignments that
    pick one as a class (``TrainerClass = SFTTrainer``: the run builds it through a variable or a factory; a config
    module's ``trainer = Trainer`` value is not that), then the other calls. A framework's own trainer of the same name
    (OpenRLHF's ``SFTTrainer``, a DeepSpeed loop) is none of these."""
    subs = hf_trainer_subclasses(f)
    calls = sorted((c for c in _real(f.calls(*HF_TRAINERS, *subs)) if c.name.split(".", 1)[0] in _HF_TRAINER_HOMES or c.short in subs),
                   key=lambda c: (c.path, c.line))  # the order of the names asked (a set) must not pick the site cited
    runs = trainer_train_paths(f)
    first = [c for c in calls if c.path in runs]
    if first:
        return first
    refs = [r for r in _real(f.refs(*HF_TRAINERS)) if r.name.split(".", 1)[0] in _HF_TRAINER_HOMES]
    picked = [r for r in refs if _CLASS_OR_PICK.match(r.text.strip())]
    return picked + calls


def _hf_trainer_on_accelerate(f: Facts) -> Outcome | None:
    """``used`` when training runs through transformers' Trainer (or a TRL trainer or a subclass of either) on a
    transformers release that runs it on Accelerate; ``None`` when no such trainer is seen or the requirements keep
    transformers below that release (the old Trainer ran its own DDP/apex code)."""
    sites = _hf_trainers(f)
    if not sites:
        return None
    lo, hi, deps = dep_version(f, "transformers")
    if hi is not None and hi < _TRAINER_ON_ACCELERATE:
        return None
    s0 = sites[0]
    more = f" (+{len(sites) - 1})" if len(sites) > 1 else ""
    older = (f"; the requirements also allow transformers {'.'.join(map(str, lo))}, whose Trainer ran its own DDP code"
             if lo is not None and lo < _TRAINER_ON_ACCELERATE else "")
    return Outcome(U, [_ev(x) for x in sites[:3]] + [_ev(x) for x in _real(deps)[:1]],
                   f"training runs through the HF Trainer ({_where(s0)}{more}), which runs on Accelerate (transformers >= 4.30): "
                   f"its Accelerator prepares the model and optimizer and runs backward and gradient accumulation{older}",
                   {"accelerate": True, "accelerate_via": "hf-trainer"})


def colossal_sites(f: Facts) -> list[Any]:
    names = ("Booster", "GeminiPlugin", "LowLevelZeroPlugin", "HybridParallelPlugin", "MoeHybridParallelPlugin", "TorchDDPPlugin",
             "TorchFSDPPlugin", "launch_from_torch", "launch", "initialize")
    sites = [c for c in _real(calls_under(f, "colossalai")) if c.short in names]
    sites += _real(f.launches("colossalai"))
    return sites


@register
class B4ColossalAI(Check):
    id = "B4"
    title = "ColossalAI"
    title_zh = "ColossalAI"
    bottlenecks = (Bottleneck.MEMORY,)
    priority = Priority.LOW
    benefit = "Gemini heterogeneous memory and one-line hybrid parallel plugins (ZeRO, TP, PP, SP)"
    what = (
        "Whether ColossalAI drives training: `colossalai.launch_from_torch`/`launch`, a `Booster` with a plugin (`GeminiPlugin`, "
        "`LowLevelZeroPlugin`, `HybridParallelPlugin`, ...), or the `colossalai run` launcher. Imports alone are partial; "
        "a dependency alone is unused."
    )
    why = (
        "ColossalAI's Gemini chunk-based memory manager moves parameters between CPU and GPU and, in the authors' "
        "benchmarks, trains models several times larger than PyTorch DDP on the same GPUs (Bian et al., 2021; Fang et al., "
        "PatrickStar); it is one alternative to DeepSpeed/FSDP, not an addition to them."
    )
    fix = "Optional alternative to DeepSpeed/FSDP: `booster = Booster(plugin=GeminiPlugin(precision=\"bf16\"))`, then `model, optimizer, *_ = booster.boost(model, optimizer)`; launch with `colossalai run --nproc_per_node 8 train.py`."
    fix_zh = "可作为 DeepSpeed/FSDP 的替代：`booster = Booster(plugin=GeminiPlugin(precision=\"bf16\"))`，再 `model, optimizer, *_ = booster.boost(model, optimizer)`，用 `colossalai run --nproc_per_node 8 train.py` 启动。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://colossalai.org/docs/basics/booster_api", "https://arxiv.org/abs/2110.14883")
    snippets = {"python": (
        "import colossalai\nfrom colossalai.booster import Booster\nfrom colossalai.booster.plugin import GeminiPlugin\n\n"
        "colossalai.launch_from_torch()\nbooster = Booster(plugin=GeminiPlugin(precision=\"bf16\"))\n"
        "model, optimizer, _, dataloader, _ = booster.boost(model, optimizer, dataloader=dataloader)\n"
    )}
    examples = (
        Example({"train.py": "import colossalai\nfrom colossalai.booster import Booster\nfrom colossalai.booster.plugin import GeminiPlugin\n"
                 "colossalai.launch_from_torch()\nbooster = Booster(plugin=GeminiPlugin())\n"}, U, "booster"),
        Example({"run.sh": "colossalai run --nproc_per_node 8 train.py --plugin gemini\n"}, U, "launcher"),
        Example({"requirements.txt": "colossalai==0.4.0\n"}, N, "dependency only"),
        Example({"train.py": "# import colossalai\nimport torch\n"}, N, "commented out"),
        Example({"train.py": "from colossalai.nn.optimizer import HybridAdam\n"}, P, "import only"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        return _framework_outcome("ColossalAI", colossal_sites(f), "launch/Booster plugin", _imports_only(f, "colossalai"),
                                  _real(f.deps("colossalai")), "colossalai")

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        return None


@register
class B5PyTorchFSDP(Check):
    id = "B5"
    title = "PyTorch FSDP"
    title_zh = "PyTorch FSDP"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMMUNICATION)
    priority = Priority.MEDIUM
    benefit = "native PyTorch sharding (FSDP1/FSDP2) with no extra dependency, usable from HF, accelerate, Lightning and torchtune"
    what = (
        "Whether PyTorch FSDP drives training through any route: `FullyShardedDataParallel`/`fully_shard` in code, HF "
        "`fsdp:`, accelerate `distributed_type: FSDP`, Lightning `FSDPStrategy`, torchtune distributed recipes, torchtitan. "
        "Any sharding strategy counts here (A2 judges NO_SHARD); an import alone is not use."
    )
    why = (
        "FSDP is PyTorch's built-in ZeRO-3 equivalent: Meta reports near-linear TFLOPS scaling to 512 A100s for "
        "models up to 175B (Zhao et al., VLDB 2023), and FSDP2 adds per-parameter DTensor sharding with lower memory "
        "than FSDP1 (torchtitan, Liang et al., 2024). It needs no framework beyond torch."
    )
    fix = "Shard with native FSDP: FSDP2 `fully_shard(block)` per transformer block then `fully_shard(model)`, or HF/accelerate `fsdp: \"full_shard auto_wrap\"`."
    fix_zh = "使用原生 FSDP 分片：FSDP2 对每个 transformer block 调用 `fully_shard(block)` 后再 `fully_shard(model)`，或在 HF/accelerate 中配置 `fsdp: \"full_shard auto_wrap\"`。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://pytorch.org/docs/stable/distributed.fsdp.fully_shard.html", "https://arxiv.org/abs/2304.11277")
    snippets = {
        "python": "from torch.distributed.fsdp import fully_shard\n\nfor block in model.layers:\n    fully_shard(block)\nfully_shard(model)\n",
        "hf-yaml": "fsdp: \"full_shard auto_wrap\"\n",
    }
    examples = (
        Example({"train.py": "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nmodel = FSDP(model, auto_wrap_policy=policy)\n"}, U, "fsdp1"),
        Example({"fsdp.yaml": "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: NO_SHARD\n"}, U, "accelerate fsdp (even NO_SHARD)"),
        Example({"train.py": "from fairscale.nn import FullyShardedDataParallel as FSDP\nmodel = FSDP(model)\n"}, N, "fairscale FSDP is not PyTorch's"),
        Example({"train.py": "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nif isinstance(model, FSDP):\n    pass\n"}, N, "import only"),
        Example({"train.yaml": "fsdp: ''\n"}, N, "fsdp empty"),
        Example(FAIRSEQ2_DP, N, "library FSDP wrapper, the data-parallel selector defaults to DDP"),
        Example(strategy_registry(), N, "FSDP plugin of a strategy class the name registry never returns"),
        Example(strategy_registry('"fsdp"'), U, "a backend picks the fsdp strategy by name"),
        Example(manual_fsdp_wrap(False), N, "enable_wrap(wrapper_cls=FSDP) only under a --fsdp flag the launch does not pass"),
        Example(manual_fsdp_wrap(True), U, "the launch passes --fsdp"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        sites = [s for s in fsdp_sites(f) if s.native]
        sites, dead = _uncalled_sites(f, sites)
        if dead and not sites:
            return _dead_fsdp(dead)
        # wrapping code that runs only under a switch that is off (OpenFlamingo's ``model.wrap_fsdp(...)`` under ``if
        # args.fsdp:``, a store_true flag) does not drive the run: A2's reading of the same sites
        live, offs = _gated(f, [s.fact for s in sites])
        if offs and not live:
            return Outcome(N, [_ev(x) for x in offs], "FSDP wrapping code exists behind a switch that is off: " + _switch_text(offs),
                           {"fsdp": False})
        sites = [s for s in sites if any(s.fact is x for x in live)]
        if sites:
            return Outcome(U, [_ev(s.fact, key=s.how) for s in sites], f"PyTorch FSDP drives training ({sites[0].how})", {"fsdp": True})
        chosen = backend_unselected(f, "fsdp")
        if chosen:
            d0 = chosen[0]
            return Outcome(N, [_ev(x) for x in chosen], f"FSDP is an option of `{d0.name}` that no run picks: runs use "
                           f"'{d0.value}' ({d0.path}:{d0.line})", {"fsdp": False})
        imported = _imports_only(f, "torch.distributed.fsdp", "torch.distributed._composable.fsdp")
        detail = "FSDP is imported but no model is wrapped" if imported else "no PyTorch FSDP found"
        return Outcome(N, [], detail, {"fsdp": False})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status != Status.UNUSED or _scale_framework_used(ctx.facts, exclude="fsdp") or uses_hf_trainer(ctx.facts):
            return None
        b = ctx.project.params_billions
        return Priority.MEDIUM if b is None or b >= 1 else None


def vescale_sites(f: Facts) -> list[Any]:
    return _real(calls_under(f, "vescale"))


@register
class B6VeScale(Check):
    id = "B6"
    title = "veScale"
    title_zh = "veScale"
    bottlenecks = (Bottleneck.COMMUNICATION,)
    priority = Priority.LOW
    benefit = "PyTorch-native auto-parallelism on veScale DTensor: single-device code, nD-parallel execution"
    what = (
        "Whether ByteDance veScale drives training: veScale DTensor/DModule APIs (`vescale.dtensor`, `parallelize_module` "
        "from `vescale.dmodule`, `VeDeviceMesh`, veScale's `DistributedOptimizer`). PyTorch's own DTensor is not veScale; "
        "imports alone are partial, a dependency alone is unused."
    )
    why = (
        "veScale keeps single-device PyTorch model code and parallelises it with DTensor-based plans, with bit-wise "
        "consistency to single-device runs (veScale docs, 2024); it is an alternative to Megatron/FSDP rather than a "
        "missing speed-up when those are already used."
    )
    fix = "Optional: only if you want DTensor-based nD parallelism without rewriting the model; otherwise FSDP2/Megatron cover the same ground."
    fix_zh = "可选：仅在希望不改写模型即可获得基于 DTensor 的多维并行时使用；否则 FSDP2/Megatron 已覆盖同样的能力。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://github.com/volcengine/veScale",)
    snippets = {"python": (
        "from vescale.dmodule.api import parallelize_module\nfrom vescale.devicemesh_api import VESCALE_DEVICE_MESH\n\n"
        "VESCALE_DEVICE_MESH.init_device_mesh(\"cuda\", mesh_shape=(2, 4), mesh_dim_names=(\"DP\", \"TP\"))\n"
        "model = parallelize_module(model, VESCALE_DEVICE_MESH[\"TP\"], sharding_plan)\n"
    )}
    examples = (
        Example({"train.py": "from vescale.dmodule.api import parallelize_module\nmodel = parallelize_module(model, mesh, plan)\n"}, U, "dmodule"),
        Example({"train.py": "from vescale.dtensor.api import distribute_tensor\nx = distribute_tensor(t, mesh, [Shard(0)])\n"}, U, "dtensor"),
        Example({"train.py": "from torch.distributed.tensor import distribute_tensor\nx = distribute_tensor(t, mesh, [Shard(0)])\n"}, N, "torch DTensor is not veScale"),
        Example({"requirements.txt": "vescale\n"}, N, "dependency only"),
        Example({"train.py": "# from vescale.dmodule.api import parallelize_module\nimport torch\n"}, N, "commented out"),
        Example({"train.py": "import vescale\n"}, P, "import only"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        return _framework_outcome("veScale", vescale_sites(f), "DTensor/DModule API", _imports_only(f, "vescale"), _real(f.deps("vescale")), "vescale")

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        return None


__all__ = ["DS_REF_NAMES", "colossal_sites", "deepspeed_sites", "megatron_sites", "vescale_sites"]
