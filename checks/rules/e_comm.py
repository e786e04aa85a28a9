"""E. Communication (通信优化): E1-E4.

E1 applies to multi-node projects only (check-ids.md). E2-E4 have no ``n/a`` rule in the
spec, so a project without any distributed training gets ``unused`` there, but no
recommendation: there is no gradient traffic to overlap, compress or tune.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from ..base import Check, Context, register
from ..facts import Expr, Facts, Setting, as_number, truthy
from ..lazyre import lazy_compile
from ..model import Bottleneck, Evidence, Example, FixSafety, Outcome, Priority, Status, filled
from ..project import checkpoint_tool, documented_multi_node, launch_runs_no_training
from ..workload import inference_only
from . import _bmtrain as bmtrain
from ._helpers import (
    backend_unselected,
    deepspeed_alternative_files,
    guard_off,
    keyword_choices,
    orphan_sites,
    referenced_configs,
    resolve_file,
    set_under_off_branch,
    uses_hf_trainer,
)
from .a_parallelism import (
    ONE_GPU_INFERENCE,
    SPREAD_INFERENCE,
    _env_trainer,
    absent_ds_configs,
    accelerate_config_note,
    accelerate_config_run,
    accelerate_library,
    deepspeed_engine_run,
    documented_multi_process,
    ds_config_refs,
    fsdp_sites,
    is_lightning,
    lightning_deepspeed,
    lightning_imported,
    pp_sizes,
    ray_train_workers,
    torchx_runner,
    tp_sizes,
    zero_sites,
)

U, P, N, NA = Status.USED, Status.PARTIAL, Status.UNUSED, Status.NA

# -- shared: is there any gradient communication at all? ------------------------------

#: launchers that start one process per GPU (Composer's ``composer train.py``: every GPU of the node unless ``-n`` says)
_MULTI_LAUNCHERS = ("torchrun", "deepspeed", "accelerate", "colossalai", "composer")
_DIST_WRAPPERS = (
    "DistributedDataParallel", "FullyShardedDataParallel", "fully_shard", "deepspeed.initialize",
    "init_process_group", "DDPStrategy", "FSDPStrategy", "DeepSpeedStrategy", "LowLevelZeroPlugin",
    "HybridParallelPlugin", "GeminiPlugin", "MoeHybridParallelPlugin", "horovod.torch.DistributedOptimizer",
)
_LIGHTNING_DIST = lazy_compile(r"^(ddp|fsdp|deepspeed)", re.I)
#: flags only Megatron-LM style launchers take (HF scripts use ``--per_device_train_batch_size`` and friends)
_MEGATRON_FLAGS = (
    "tensor_model_parallel_size", "pipeline_model_parallel_size", "use_distributed_optimizer", "overlap_grad_reduce",
    "micro_batch_size", "global_batch_size", "tokenizer_type", "train_iters", "use_mcore_models", "lr_decay_style",
    "vocab_file", "merge_file",
)


def _launch_procs(launch: Any) -> float | None:
    for k in ("nproc_per_node", "num_gpus", "num_processes", "gpus", *(("nproc", "n") if launch.launcher == "composer" else ())):
        v = launch.launcher_args.get(k)
        if v is not None:
            return as_number(v)
    return None


def megatron_launches(facts: Facts) -> list[Any]:
    """Launches of Megatron-LM training scripts (``pretrain_gpt.py ...`` or Megatron flags)."""
    out = []
    for launch in facts.launches():
        script = (launch.script or "").rsplit("/", 1)[-1]
        flags = sum(k in launch.script_args for k in _MEGATRON_FLAGS)
        if "per_device_train_batch_size" in launch.script_args:
            continue
        if (script.startswith("pretrain_") and flags >= 1) or flags >= 2:
            out.append(launch)
    return out


def distributed_sites(ctx: Context) -> list[Any]:
    """Facts that show several training processes exchanging gradients (empty for a single-GPU project)."""
    f, p = ctx.facts, ctx.project
    sites: list[Any] = []
    for launch in f.launches(*_MULTI_LAUNCHERS):
        n = _launch_procs(launch)
        if n is None or n > 1 or launch.launcher_args.get("nnodes") not in (None, 1, "1"):
            sites.append(launch)
    sites += f.calls(*_DIST_WRAPPERS)
    sites += [e for e in f.config("zero_optimization.stage", "zero_stage") if (as_number(e.value) or 0) >= 1]
    sites += [e for e in f.config("distributed_type") if str(e.value).upper() in {"MULTI_GPU", "DEEPSPEED", "FSDP", "MEGATRON_LM"}]
    sites += [e for e in f.config("num_processes") if (as_number(e.value) or 0) > 1]
    for c in f.calls("Trainer", "Fabric"):
        strategy = c.kwargs.get("strategy")
        devices = as_number(c.kwargs.get("devices"))
        if (isinstance(strategy, str) and _LIGHTNING_DIST.match(strategy)) or (devices or 0) > 1:
            sites.append(c)
        elif isinstance(strategy, Expr) and "devices" not in c.kwargs and any(
                all(isinstance(v, str) and _LIGHTNING_DIST.match(v) for v, _ in g) for g in keyword_choices(f, c, "strategy")):
            sites.append(c)  # ``strategy=strategy``: a local whose every arm is a multi-process strategy
    sites += [e for e in f.config("trainer.strategy") if isinstance(e.value, str) and _LIGHTNING_DIST.match(e.value)]
    sites += [e for e in f.config("trainer.devices") if (as_number(e.value) or 0) > 1]
    sites += megatron_launches(f)
    if not sites and (p.multi_node or (p.num_gpus or 0) > 1):
        sites += f.launches()
    if not sites:
        sites += documented_ddp(f)  # no launch ships: the README's multi-process training command is the run
    if not sites and not f.launches():
        # no launch ships and the trainer builds a DeepSpeed engine in a process group it joins itself (A1's reading)
        sites += list(deepspeed_engine_run(f) or ())
    if not sites:
        # the package's training loop runs in several Ray Train workers, one process group (A1's reading)
        sites += [r.trainer for r in ray_train_workers(f) if r.multi]
    return sites


#: ``device_map`` values with which accelerate spreads one model's layers over every visible GPU
_SPREAD_MAPS = frozenset({"auto", "balanced", "balanced_low_0", "sequential"})

#: ``DistributedDataParallel(bucket_cap_mb=)``'s default
_DDP_DEFAULT_BUCKET_MB = 25

#: the n/a reason of E2-E4 for training that runs as one process (ChatGLM-Tuning's ``python finetune.py``, its model spread
#: over the GPUs by ``device_map="auto"``): nothing exchanges gradients
ONE_PROCESS = ("not judged: no distributed training found (no multi-process launch, distributed wrapper, sharded or "
               "multi-GPU config): ")
def _one_process_judged_here(ctx: Context) -> bool:
    """Whether a one-process run's E2-E4 are "not judged" here (:data:`ONE_PROCESS`): not where the training path is JAX
    or a library's learner runs the loop, whose own "not judged" reasons say more (:mod:`checks.stack`,
    :mod:`checks.learner_library`)."""
    return not (ctx.project.notes.get("jax_training") or ctx.project.notes.get("library_learner"))


ONE_GPU_GENERATION = ("inference only, and no generation spans GPUs (no multi-process launch, model-parallel setup or "
                      "multi-GPU device map): no layer to split, no collective to tune")


def one_gpu_generation(ctx: Context) -> str | None:
    """The n/a reason of A4 (tensor parallel) and E4 (NCCL tuning) when none of their practice is seen on an
    inference-only project whose generation runs on one GPU (DeepSeek-VL's ``inference.py``, ``cli_chat.py``): nothing
    spans GPUs, so there is no layer to split and no collective to tune (:mod:`checks.workload` keeps them judged for
    generation that does: gpt-fast's 8-GPU ``torchrun``, a 70B ``device_map="auto"``). None otherwise."""
    p = ctx.project
    if not inference_only(p) or p.multi_node or (p.num_gpus or 0) > 1 or distributed_sites(ctx):
        return None
    if any(n > 1 for n, _x in (*tp_sizes(ctx.facts, True), *pp_sizes(ctx.facts, True))):
        return None  # an engine's model-parallel size (vLLM ``tensor_parallel_size=4``): its workers run NCCL collectives
    for c in ctx.facts.calls_with_kw("device_map"):
        v = c.kwargs.get("device_map")
        if not isinstance(v, str) or v.strip() in _SPREAD_MAPS:
            return None  # a device map of its own (a dict, a variable): it may place layers on several GPUs
    return ONE_GPU_GENERATION


ONE_PROCESS_GENERATION = ("inference only, in one process (no multi-process launch, process group, DataParallel or engine model "
                          "parallelism): a device_map across GPUs moves activations between them with plain device copies, so "
                          "no NCCL collective runs to tune")


def one_process_generation(ctx: Context) -> str | None:
    """E4's n/a reason for an inference-only project whose generation spreads one model over the GPUs of one process
    (Orion's demos: ``from_pretrained(..., device_map="auto")``, run as ``python cli_demo.py``): accelerate's hooks copy
    activations from device to device, and no NCCL communicator is ever built. (A4 stays judged there: tensor parallel
    would split those layers.) None otherwise."""
    p, f = ctx.project, ctx.facts
    if not inference_only(p) or p.multi_node or distributed_sites(ctx) or f.calls("DataParallel", "init_inference"):
        return None  # (``nn.DataParallel`` broadcasts through NCCL; DeepSpeed-Inference's ``mp_size`` runs collectives)
    if any(n > 1 for n, _x in (*tp_sizes(f, True), *pp_sizes(f, True))):
        return None
    return ONE_PROCESS_GENERATION


#: a documented command that hands the HF Trainer FSDP or DeepSpeed (FastChat's ``--fsdp "full_shard auto_wrap"``)
_DOC_SHARDED = lazy_compile(r"--(fsdp|deepspeed)\b|\bzero[_-]?[123]\b", re.I)


def documented_ddp(f: Facts) -> list[Any]:
    """The README's multi-process training commands of a repository that ships no launch (Medusa ``torchrun
    --nproc_per_node=4 medusa/train/train.py ...``) whose script the package ships (OLMo's README runs ``scripts/train.py``,
    left out of its sdist: how that script wraps the model is not visible) and that hand the trainer neither FSDP nor
    DeepSpeed: plain data parallel.
    A command with ``--fsdp``/``--deepspeed`` (a ``command_flag`` doc hint at its line, or in its text) is left out: its
    overlap depends on a sharding setup the rules do not read from prose."""
    sharded = {(h.path, h.line) for h in f.records("doc_hints") if h.kind == "command_flag"}
    return [h for h in documented_multi_process(f) if h.value in f.files and (h.path, h.line) not in sharded
            and not _DOC_SHARDED.search(h.text or "")]


def documented_run_note(f: Facts) -> tuple[Any, str] | None:
    """A multi-process training command that only the docs show, whose setup the repository does not hold (Qwen2.5's
    ``FORCE_TORCHRUN=1 llamafactory-cli train qwen2-7b-full-sft.yaml`` with ``deepspeed: PATH-TO-DS-CONFIG``, its
    ``torchrun $DISTRIBUTED_ARGS src/train.py --deepspeed $DS_CONFIG_PATH``): the run is distributed (A1 reads it so), so
    "no distributed training" would be false, and how it communicates is not visible: ``(hint, "not judged: ...")``."""
    docs = documented_multi_process(f)
    if not docs:
        return None
    h = docs[0]
    return h, (f"not judged: the repository ships no launch; the docs' training command (`{' '.join((h.text or '').split())[:100]}`, "
               f"{h.path}:{h.line}) starts several processes, and how they communicate is set outside the repository: ")


def _no_comm_priority(check: Check, ctx: Context, outcome: Outcome) -> Priority | None:
    if outcome.status in (Status.UNUSED, Status.PARTIAL) and not distributed_sites(ctx):
        return None
    return Check.recommendation_priority(check, ctx, outcome)


def _text(v: Any) -> str:
    if isinstance(v, Expr):
        return v.dotted or v.text
    return str(v)


def _lightning_fsdp(precision: str) -> dict[str, str]:
    """MobiLlama's ``main_mobillama.py``: Lightning Fabric with ``FSDPStrategy`` at a precision, launched on two nodes."""
    return {
        "main.py": (
            "from functools import partial\nimport lightning as L\nfrom lightning.fabric.strategies import FSDPStrategy\n"
            "from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy\nfrom transformers.models.llama.modeling_llama import "
            "LlamaDecoderLayer\n\nPRECISION = '" + precision + "'\n\n\ndef main(n_nodes=2):\n"
            "    fabric = L.Fabric(accelerator='cuda', num_nodes=n_nodes, devices=8, precision=PRECISION,\n"
            "                      strategy=FSDPStrategy(auto_wrap_policy=partial(transformer_auto_wrap_policy,\n"
            "                                            transformer_layer_cls={LlamaDecoderLayer})))\n"
            "    fabric.launch()\n    for batch in []:\n        fabric.backward(batch)\n"),
        "pretrain.sh": "#!/bin/sh\n#SBATCH --nodes=2\nsrun python main.py --n_nodes 2\n",
    }


def _hf_fsdp(precision_flag: str) -> dict[str, str]:
    """LongVU's launch: the HF Trainer with ``--fsdp "full_shard auto_wrap"`` on eight nodes."""
    return {
        "train.py": "import transformers\n\ntransformers.Trainer(model=None, args=None).train()\n",
        "train.sh": ("torchrun --nproc_per_node=8 --nnodes=8 train.py \\\n    --fsdp \"full_shard auto_wrap\" \\\n"
                     f"    {precision_flag} \\\n    --per_device_train_batch_size 1\n"),
    }


#: Lightning precisions whose FSDP plugin reduces gradients in 16 bits (``FSDPPrecision.mixed_precision_config``:
#: ``bf16-mixed`` keeps fp32 parameters and sets ``reduce_dtype = buffer_dtype = torch.bfloat16``; ``*-true`` all three)
_LIGHTNING_LOW = lazy_compile(r"^(bf16|16)(-mixed|-true)?$")


def _framework_fsdp_low_reduce(f: Facts) -> tuple[list[Evidence], str] | None:
    """FSDP wrapped by a framework that turns the run's 16-bit precision into the FSDP mixed-precision policy, reduce dtype
    included: the HF Trainer's ``--fsdp`` with ``--bf16``/``--fp16`` (accelerate's ``set_mixed_precision``:
    ``MixedPrecision(param_dtype=dtype, reduce_dtype=dtype, buffer_dtype=dtype)``; LongVU), or Lightning's ``FSDPStrategy``
    under ``precision="bf16-mixed"`` (MobiLlama's ``L.Fabric``). (evidence, what reduces in which dtype), or None."""
    sites = [s for s in fsdp_sites(f) if s.sharded]
    # (the precision of the same launch or recipe: LLaMA-Factory's one FSDP recipe is an FP8 run, whatever other launches set)
    for h in (s for s in sites if s.how == "fsdp" and isinstance(s.fact, Setting) and not _E3_TEST.search(s.fact.path)):
        low = [s for s in f.effective("bf16", "fp16") if truthy(s.value) is True and s.path == h.fact.path
               and (s.source != "launcher" or abs(s.line - h.fact.line) < 60)]
        if low:
            dtype = "bf16" if low[0].name == "bf16" else "fp16"
            return ([f.ev(h.fact), f.ev(low[0])], f"{dtype}: the HF Trainer's FSDP (`--fsdp` at {h.fact.path}:"
                    f"{h.fact.line}) takes its mixed-precision policy from `--{dtype}` ({low[0].path}:{low[0].line}), reduce dtype "
                    "included")
    launched = {resolve_file(f, x.script) for x in f.launches() if x.script}
    # (the script a launch runs first: MobiLlama's ``pretrain.sh`` runs main_mobillama.py, not the large-base variant)
    lightning = sorted((s for s in sites if s.how == "FSDPStrategy()"), key=lambda s: s.fact.path not in launched)
    for s in lightning:
        for c in f.calls("Fabric", "Trainer"):
            v = c.kwargs.get("precision")
            if c.path == s.fact.path and isinstance(v, str) and _LIGHTNING_LOW.match(v.strip().lower()):
                dtype = "bf16" if v.strip().lower().startswith("bf16") else "fp16"
                return ([f.ev(s.fact), f.ev(c, key=f"{c.short}(precision=)", value=v)],
                        f"{dtype}: Lightning's FSDP precision plugin reduces gradients in {dtype} under precision={v!r} "
                        f"({c.path}:{c.kw_line('precision')})")
    return None


# -- E1 ---------------------------------------------------------------------------------

_GDR_OFF = {"0", "loc"}
_RDMA_VARS = lazy_compile(r"^(NCCL_IB_|NCCL_NET_GDR_|NCCL_GDR|NCCL_NET$|NCCL_NET_PLUGIN$|FI_EFA_|FI_PROVIDER$|UCX_NET_DEVICES$|NCCL_COLLNET)")


def _training_envs(f: Facts, *prefixes: str) -> list[Any]:
    """The environment variables of these prefixes, except those a launch that runs no training exports (a text-generation
    server's ``export NCCL_IB_SL=1``, an inference example's ``NCCL_ALGO=Ring``): they tune that serving run."""
    return [e for e in f.envs(*prefixes) if not launch_runs_no_training(f, e.path)]


def _rdma_evidence(f: Facts) -> tuple[list[Any], list[Any]]:
    """(positive, negative) RDMA / GPUDirect facts from environment variables and k8s RDMA resources."""
    pos: list[Any] = []
    neg: list[Any] = []
    for e in _training_envs(f, "NCCL_", "FI_", "UCX_"):
        name, val = e.name, e.value.strip().strip("'\"").lower()
        if not _RDMA_VARS.match(name):
            continue
        if name == "NCCL_IB_DISABLE":
            (neg if truthy(val) else pos).append(e)
        elif name == "NCCL_NET_GDR_LEVEL":
            (neg if val in _GDR_OFF else pos).append(e)
        elif name in {"NCCL_NET_GDR_READ", "NCCL_GDRCOPY_ENABLE", "FI_EFA_USE_DEVICE_RDMA"}:
            (pos if truthy(val) is not False else neg).append(e)
        elif name == "NCCL_NET":
            (neg if val == "socket" else pos).append(e)
        elif name == "FI_PROVIDER":
            if val == "efa":
                pos.append(e)
        elif name == "UCX_NET_DEVICES":
            if "mlx" in val:
                pos.append(e)
        elif name.startswith("NCCL_IB_") or name.startswith("NCCL_COLLNET") or name == "NCCL_NET_PLUGIN":
            # a switch set to off (``NCCL_COLLNET_ENABLE="0"`` for determinism, ``NCCL_IB_CUDA_SUPPORT=0``) turns a
            # feature off: it configures no RDMA; a value (``NCCL_IB_HCA=mlx5``, ``NCCL_IB_GID_INDEX=0``) does
            if name.endswith(("_ENABLE", "_CUDA_SUPPORT")) and truthy(val) is False:
                continue
            if val:
                pos.append(e)
    for e in f.config_under("resources"):
        if isinstance(e.key, str) and e.key.startswith("rdma/") and (as_number(e.value) or 0) > 0:
            pos.append(e)
    pos += f.deps("gdrcopy", "nvidia-peermem", "nv-peer-mem")
    return pos, neg


#: settings of NCCL's own InfiniBand transport, which ``NCCL_IB_DISABLE=1`` turns off (EFA's ``FI_*`` run in a net plugin)
_IB_TRANSPORT = lazy_compile(r"^(NCCL_IB_|NCCL_NET_GDR_|NCCL_GDR|NCCL_COLLNET)")


def _inert_ib(pos: list[Any], neg: list[Any]) -> list[Any]:
    """The InfiniBand settings of a launcher that also sets ``NCCL_IB_DISABLE=1`` and never re-enables it (SEED's multi-node
    scripts export ``NCCL_IB_HCA``, ``NCCL_IB_GID_INDEX`` and ``NCCL_NET_GDR_LEVEL=2`` beside ``NCCL_IB_DISABLE=1``): NCCL
    does not use its IB transport there, so they configure nothing."""
    off = {e.path for e in neg if getattr(e, "name", "") == "NCCL_IB_DISABLE"}
    off -= {e.path for e in pos if getattr(e, "name", "") == "NCCL_IB_DISABLE"}
    return [e for e in pos if getattr(e, "path", None) in off and _IB_TRANSPORT.match(getattr(e, "name", "") or "")]



#: OLMo-core's shape: init_distributed sets NCCL variables through the project's own helper
_INIT_DISTRIBUTED = (
    "import os\nimport torch.distributed as dist\n\n"
    "def set_env_var(name: str, value: str, override: bool = False):\n"
    "    if name not in os.environ or override:\n        os.environ[name] = value\n\n"
    "def init_distributed(backend: str = 'nccl'):\n"
    "    set_env_var('TORCH_NCCL_AVOID_RECORD_STREAMS', '1')\n"
    "    if os.environ.get('BEAKER_JOB_ID'):\n"
    "{extra}"
    "        pass\n"
    "    dist.init_process_group(backend)\n"
)


def _experiment_main(set_ib: bool) -> dict[str, str]:
    """OLMo-core internal/experiment.py: ``main()`` builds its usage text, with a multi-node launch example, in a local."""
    extra = '        set_env_var("NCCL_IB_HCA", "^=mlx5_bond_0")\n' if set_ib else ""
    return {
        "mylib/internal/experiment.py": (
            "import sys\n\ndef main(*, global_batch_size: int):\n"
            "    usage = f\"\"\"\n[b]Usage:[/] python {sys.argv[0]} launch|train|dry_run RUN_NAME CLUSTER [OVERRIDES...]\n\n"
            "[b]Examples[/]\n$ python {sys.argv[0]} launch run01 ai2/pluto-cirrascale --launch.num_nodes=2\n    \"\"\".strip()\n"
            "    if len(sys.argv) < 4:\n        print(usage)\n        sys.exit(1)\n"),
        "mylib/distributed/utils.py": _INIT_DISTRIBUTED.format(extra=extra),
        "mylib/train/trainer.py": "def fit(self):\n    for batch in self.data_loader:\n        loss = self.model(batch)\n        loss.backward()\n",
    }


#: Composer 0.32 ``composer`` console script: spawns one process per local GPU and joins other nodes' processes
_LAUNCHER = {
    "mylib/cli/launcher.py": (
        "import argparse\nimport os\n\n\ndef _get_parser():\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('-n', '--nproc', type=int, help='processes on this node')\n"
        "    parser.add_argument('--world_size', type=int, help='greater than nproc: a multi-node run')\n"
        "    parser.add_argument('--node_rank', type=int, help='the rank of this node')\n"
        "    parser.add_argument('--master_addr', type=str, help='the FQDN of the node hosting rank 0')\n"
        "    parser.add_argument('--master_port', type=int)\n    return parser\n"),
    "mylib/trainer.py": "import torch\n\n\ndef fit(model, loader):\n    for b in loader:\n        model(b).loss.backward()\n",
}

#: ColossalAI 0.5.0's ``colossalai run`` (colossalai/cli/launcher/__init__.py): a click command whose host list and
#: rendezvous address start torchrun on every host over ssh
_CLICK_LAUNCHER = {
    "mylib/cli/launcher.py": (
        "import click\n\n\n@click.command(help=\"Launch distributed training on a single node or multiple nodes\")\n"
        "{hosts}"
        "@click.option(\"--nproc_per_node\", type=int, default=None, help=\"Number of GPUs to use on each node.\")\n"
        "@click.option(\"--master_port\", type=int, default=29500)\n"
        "@click.option(\"--master_addr\", type=str, default=\"127.0.0.1\", help=\"IP address of node 0\")\n"
        "@click.argument(\"user_script\", type=str)\ndef run(nproc_per_node, master_port, master_addr, user_script, **hosts):\n"
        "    launch_multi_processes(nproc_per_node, master_port, master_addr, user_script, **hosts)\n"),
    "mylib/trainer.py": "import torch\n\n\ndef fit(model, loader):\n    for b in loader:\n        model(b).loss.backward()\n",
}
_CLICK_HOSTS = ("@click.option(\"-H\", \"-host\", \"--host\", type=str, default=None, help=\"the list of hostnames: <host1>,<host2>\")\n"
                "@click.option(\"--hostfile\", type=str, default=None, help=\"a file listing each host\")\n")


@register
class E1GPUDirectRDMA(Check):
    id = "E1"
    title = "GPUDirect RDMA (multi-node)"
    title_zh = "GDRDMA 启用（多机场景）"
    bottlenecks = (Bottleneck.COMMUNICATION,)
    priority = Priority.HIGH
    benefit = "inter-node all-reduce over InfiniBand/RoCE straight from GPU memory instead of through host buffers"
    what = (
        "For a multi-node project, whether NCCL is set up for RDMA with GPUDirect: `NCCL_IB_HCA`, `NCCL_IB_GID_INDEX`, "
        "`NCCL_NET_GDR_LEVEL`, EFA's `FI_EFA_USE_DEVICE_RDMA`, RDMA device resources, gdrcopy. `NCCL_IB_DISABLE=1`, "
        "`NCCL_NET=Socket` or `NCCL_NET_GDR_LEVEL=LOC` turn it off."
    )
    why = (
        "Without RDMA, NCCL falls back to TCP sockets through the host: on a 4x200 Gb/s InfiniBand cluster the "
        "inter-node bus bandwidth drops from about 90 GB/s to a few GB/s, and data-parallel scaling beyond one node "
        "collapses. GPUDirect RDMA lets the NIC read GPU memory directly (no host bounce buffer); NVIDIA reports up to "
        "~2x lower latency and higher bandwidth for small and medium messages (nccl-tests, DGX systems)."
    )
    fix = (
        "On InfiniBand/RoCE clusters, export the HCAs NCCL should use (`NCCL_IB_HCA=mlx5_0,...`, `NCCL_IB_GID_INDEX=3` for "
        "RoCE), make sure `nvidia-peermem` is loaded and keep `NCCL_IB_DISABLE` unset; check the NCCL INFO log for "
        "`NET/IB ... GDRDMA`. On AWS, use the EFA plugin with `FI_EFA_USE_DEVICE_RDMA=1`."
    )
    fix_zh = (
        "在 InfiniBand/RoCE 集群上设置 NCCL 使用的网卡（`NCCL_IB_HCA=mlx5_0,...`，RoCE 需 `NCCL_IB_GID_INDEX=3`），确认已加载 "
        "`nvidia-peermem` 且未设置 `NCCL_IB_DISABLE=1`；用 `NCCL_DEBUG=INFO` 检查日志中是否出现 `NET/IB ... GDRDMA`。AWS 上使用 EFA 插件并设置 "
        "`FI_EFA_USE_DEVICE_RDMA=1`。"
    )
    fix_safety = FixSafety.DISPLAY_ONLY
    references = (
        "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
        "https://docs.nvidia.com/cuda/gpudirect-rdma/",
    )
    snippets = {
        "shell": (
            "export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3\n"
            "export NCCL_IB_GID_INDEX=3      # RoCE only\n"
            "export NCCL_NET_GDR_LEVEL=PHB\n"
            "export NCCL_DEBUG=INFO          # look for 'NET/IB ... GDRDMA' in the log\n"
        ),
    }
    examples = (
        Example({"run.slurm": "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --gres=gpu:8\nexport NCCL_IB_HCA=mlx5_0,mlx5_1\nexport NCCL_NET_GDR_LEVEL=PHB\n"
                 "srun torchrun --nnodes 4 --nproc_per_node 8 train.py\n"}, U, "ib + gdr level"),
        Example({"Dockerfile": "FROM nvcr.io/nvidia/pytorch:24.05-py3\nENV FI_PROVIDER=efa\nENV FI_EFA_USE_DEVICE_RDMA=1\n",
                 "launch.sh": "torchrun --nnodes 2 --nproc_per_node 8 --rdzv_endpoint $HEAD:29500 train.py\n"}, U, "aws efa"),
        Example({"train_multinode.sh": "export NCCL_IB_DISABLE=1\nexport NCCL_SOCKET_IFNAME=eth0\n"
                 "deepspeed --num_nodes 2 --num_gpus 8 --hostfile hostfile train.py --deepspeed ds.json\n"}, N, "ib disabled"),
        Example({"run.sh": "torchrun --nnodes 2 --nproc_per_node 8 --node_rank $NODE_RANK --master_addr $MASTER_ADDR train.py\n"}, N, "nothing set"),
        Example({"scripts/train_multi_node_sft.sh": (  # SEED (AILab-CVC): IB settings exported beside NCCL_IB_DISABLE=1
            "export NCCL_IB_GID_INDEX=3\nexport NCCL_IB_SL=3\nexport NCCL_IB_DISABLE=1\nexport NCCL_IB_HCA=mlx5_bond_1,mlx5_bond_5\n"
            "export NCCL_NET_GDR_LEVEL=2\n\ntorchrun --nproc_per_node=$HOST_GPU_NUM --nnodes=$HOST_NUM --node_rank=$INDEX \\\n"
            "    --master_addr=$CHIEF_IP --master_port=20008 src/train/train.py --bf16\n")}, N,
                "IB settings beside NCCL_IB_DISABLE=1 in the same launcher configure nothing"),
        Example({"scripts/multi_node_a.sh": "export NCCL_IB_DISABLE=1\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n",
                 "scripts/multi_node_b.sh": "export NCCL_IB_HCA=mlx5_0,mlx5_1\nexport NCCL_NET_GDR_LEVEL=2\n"
                                            "torchrun --nnodes 2 --nproc_per_node 8 train.py\n"}, P,
                "IB disabled in one launcher, configured in another"),
        Example({"run.sh": "# export NCCL_IB_HCA=mlx5_0\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n"}, N, "commented out"),
        Example({"run.sh": "export NCCL_IB_HCA=mlx5_0\nexport NCCL_NET_GDR_LEVEL=LOC\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n"}, P, "ib without gdr"),
        Example({"run.sh": "torchrun --nproc_per_node 8 train.py --bf16\n", "train.py": "import torch\n"}, Status.NA, "single node"),
        Example({"README.md": ("## Multi-Node Launching\n\nThere needs to be a hostfile listing each node and its GPU slots. "
                               "In your config you must pass in the path to the hostfile with `\"hostfile\": \"/path/to/hostfile\"`.\n"),
                 "deepy.py": "import deepspeed.launcher.runner\n\ndeepspeed.launcher.runner.main(args)\n",
                 "train.py": "import torch\nloss.backward()\n"}, N, "multi-node documented as a config's hostfile"),
        Example({"verl/model_merger/__main__.py": (
            '"""Merge FSDP/Megatron checkpoints into a HF model.\n\nor use distributed merge for large models:\n\n```sh\n'
            'torchrun --nproc_per_node 1 --nnodes 8 --node_rank ${RANK} -m verl.model_merger merge \\\n'
            '    --backend megatron --local_dir ./checkpoints/global_step_1/actor\n```\n"""\n\nimport argparse\n'),
                 "README.md": "Merge a big checkpoint on 8 nodes: `torchrun --nnodes 8 -m verl.model_merger merge --backend megatron`\n",
                 "verl/trainer/main_ppo.py": "import torch\nloss.backward()\n"}, Status.NA, "a multi-node checkpoint merge is not training"),
        Example({  # NeMo AutoModel: a distributed forward pass that fills an offline cache, documented in its module docstring
            "pkg/recipes/precompute_cache_dist.py": (
                '"""Distributed (multi-node) precompute of the offline target cache.\n\nLaunched with ``torchrun``::\n\n'
                '    torchrun --nnodes=4 --node-rank=0 --nproc_per_node=8 \\\\\n        --master-addr=<NODE0_IP> --master-port=29500 \\\\\n'
                '        -m pkg.recipes.precompute_cache_dist \\\\\n        -c examples/precompute.yaml\n"""\n\nimport torch\n'),
            "pkg/recipes/train_ft.py": "import torch\nloss.backward()\n"}, Status.NA,
                "a multi-node precompute, its module named on a continuation line, is not training"),
        Example({"README.md": ("## Precompute the cache\n\n```bash\ntorchrun --nnodes=4 --nproc_per_node=8 \\\n"
                               "    -m pkg.recipes.precompute_cache_dist -c examples/precompute.yaml\n```\n"),
                 "pkg/recipes/train_ft.py": "import torch\nloss.backward()\n"}, Status.NA,
                "a README's multi-node command whose continuation line runs a precompute module"),
        Example({
            "pkg/recipes/train_dist.py": (
                '"""Distributed (multi-node) fine-tuning.\n\nLaunched with ``torchrun``::\n\n'
                '    torchrun --nnodes=4 --node-rank=0 --nproc_per_node=8 \\\\\n        --master-addr=<NODE0_IP> --master-port=29500 \\\\\n'
                '        -m pkg.recipes.train_dist \\\\\n        -c examples/finetune.yaml\n"""\n\nimport torch\nloss.backward()\n')},
                N, "the same docstring launching the training module on four nodes"),
        Example({  # NeMo AutoModel: its cloud launcher builds a torchrun command that joins nodes when asked for more than one
            "pkg/launcher/cloud.py": (
                "from dataclasses import dataclass, field\n\n\n@dataclass\nclass CloudConfig:\n"
                "    num_nodes: int = field(default=1, metadata=dict(help=\"Number of nodes for distributed training\"))\n\n\n"
                "def build_command(script_path: str, job_conf_path: str, gpus_per_node: int, num_nodes: int) -> str:\n"
                "    parts = [\"torchrun\", f\"--nproc_per_node={gpus_per_node}\"]\n"
                "    if num_nodes > 1:\n"
                "        parts += [\n            \"--nnodes=$CLOUD_NUM_NODES\",\n            \"--node_rank=$CLOUD_NODE_RANK\",\n"
                "            '--master_addr=\"$(echo \"$CLOUD_NODE_IPS\" | head -n1)\"',\n            \"--master_port=12375\",\n        ]\n"
                "    parts += [script_path, \"-c\", job_conf_path]\n    return \" \".join(parts)\n"),
            "pkg/recipes/train_ft.py": "import torch\nloss.backward()\n"}, N, "the project's launcher builds a multi-node torchrun command"),
        Example({
            "pkg/launcher/local.py": (
                "def build_command(script_path: str, gpus_per_node: int) -> str:\n"
                "    parts = [\"torchrun\", f\"--nproc_per_node={gpus_per_node}\", \"--nnodes=1\", \"--node_rank=0\",\n"
                "             \"--master_addr=127.0.0.1\", script_path]\n    return \" \".join(parts)\n"),
            "pkg/recipes/train_ft.py": "import torch\nloss.backward()\n"}, Status.NA, "the same launcher fixed to one node"),
        # Megatron's 175B recipe keeps NUM_NODES=1, but TP 8 x PP 16 = 128 GPUs cannot fit on the 8 GPUs of one node
        Example({"examples/gpt3/train_gpt3_175b_distributed.sh": (
            "GPUS_PER_NODE=8\nNUM_NODES=1\nDISTRIBUTED_ARGS=(\n    --nproc_per_node $GPUS_PER_NODE\n    --nnodes $NUM_NODES\n)\n"
            "MODEL_PARALLEL_ARGS=(\n    --tensor-model-parallel-size 8\n    --pipeline-model-parallel-size 16\n)\n"
            "torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${MODEL_PARALLEL_ARGS[@]} --fp16\n")}, N, "model-parallel group spans nodes"),
        Example({"examples/gpt3/train_gpt3_857m.sh": (
            "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --bf16\n")},
                Status.NA, "model-parallel group fits one node"),
        Example({  # axolotl: the multi-node launch lives only in its docs; nothing sets up RDMA
            "docs/multi-node.qmd": (
                "---\ntitle: Multi Node\n---\n\n```yaml\ncompute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\n"
                "machine_rank: 0\nmain_process_ip: 10.0.0.4\nnum_machines: 2 # Change to the number of machines\nnum_processes: 4\n```\n"),
            "examples/llama-3/fft-8b.yaml": "base_model: NousResearch/Meta-Llama-3.1-8B\nbf16: auto\n",
        }, N, "multi-node documented only in Markdown"),
        Example({"README.md": "# Train\n\n```bash\ntorchrun --nnodes 1 --nproc_per_node 8 train.py\n```\n",
                 "train.py": "import torch\n"}, Status.NA, "README documents a one-node launch"),
        Example({  # modalities: the inline launch is one node; the README points at a multi-node Slurm batch file for more
            "README.md": ("### Model Training\n\n```sh\ntorchrun --rdzv-endpoint localhost:29515 --nnodes 1 --nproc_per_node 4 \\\n"
                          "    $(which modalities) run --config_file_path config_files/training/config_lorem_ipsum_long_fsdp2.yaml\n```\n\n"
                          "For a multinode training with slurm, see the example sbatch-file container/slurm_singularity.sbatch.\n"),
            "src/modalities/trainer.py": "import torch\nloss.backward()\n",
        }, N, "multi-node training pointed at as a Slurm batch file"),
        Example({  # AReaL: the README runs the training script on a Ray cluster with a Hydra override of the node count
            "README.md": ("## Getting Started\n\nTo run on a single node:\n\n```bash\n"
                          "python3 examples/math/gsm8k_rl.py --config examples/math/gsm8k_grpo.yaml scheduler.type=local\n```\n\n"
                          "On a Ray cluster:\n\n```bash\npython3 examples/math/gsm8k_rl.py --config examples/math/gsm8k_grpo.yaml \\\n"
                          "  cluster.n_nodes=2 cluster.n_gpus_per_node=8 \\\n  scheduler.type=ray\n```\n"),
            "pkg/trainer.py": "import torch\nloss.backward()\n",
        }, N, "multi-node run documented as a Hydra override of the node count"),
        Example({  # xtuner 0.2.0 entry_point.py:45: the console script's usage text documents the multi-node launch
            "xtuner/entry_point.py": (
                "import sys\n\nMODES = ('list-cfg', 'train', 'dist_train')\n\n"
                "CLI_HELP_MSG = f\"\"\"\n    Arguments received: {str(['xtuner'] + sys.argv[1:])}.\n\n"
                "        3-1. Fine-tune LLMs by a single GPU:\n            xtuner train $CONFIG\n"
                "        3-2. Fine-tune LLMs by multiple GPUs:\n"
                "            NPROC_PER_NODE=$NGPUS NNODES=$NNODES NODE_RANK=$NODE_RANK PORT=$PORT ADDR=$ADDR xtuner dist_train $CONFIG $GPUS\n"
                "\"\"\"\n\n\ndef cli():\n    print(CLI_HELP_MSG)\n"),
            "xtuner/tools/train.py": "from mmengine.runner import Runner\nrunner = Runner.from_cfg(cfg)\nrunner.train()\n",
        }, N, "multi-node documented in a CLI's usage text"),
        Example(_experiment_main(set_ib=True), U, "usage text built in main() documents a multi-node launch; a helper sets NCCL_IB_HCA"),
        Example(_experiment_main(set_ib=False), N, "usage text built in main() documents a multi-node launch; no RDMA setting"),
        Example({  # a usage text that documents one-node launches only; a log message naming NNODES is not usage text
            "mytool/cli.py": (
                "\"\"\"Usage:\n    NPROC_PER_NODE=8 NNODES=1 mytool train CONFIG\n\"\"\"\nimport os\n\n"
                "status = f\"NNODES={os.environ.get('NNODES', '1')}\"\n"),
            "mytool/train.py": "import torch\n",
        }, Status.NA, "usage text documents one node"),
        Example({  # torchtitan: determinism mode switches SHARP (CollNet) off; that configures no RDMA
            "README.md": "# Multi-node\n\n```bash\nsrun torchrun --nnodes 2 --nproc_per_node 8 -m torchtitan.train\n```\n",
            "torchtitan/distributed/utils.py": (
                "import os\n\ndef enable_batch_invariant_mode():\n    os.environ[\"NCCL_COLLNET_ENABLE\"] = \"0\"\n"
                "    os.environ[\"NCCL_ALGO\"] = \"Ring\"\n"),
        }, N, "a collective feature switched off is not RDMA"),
        Example({"run.slurm": "#!/bin/bash\n#SBATCH --nodes=2\nexport NCCL_COLLNET_ENABLE=1\nexport NCCL_IB_HCA=mlx5_0\nexport NCCL_NET_GDR_LEVEL=PHB\n"
                 "srun torchrun --nnodes 2 --nproc_per_node 8 train.py\n"}, U, "SHARP on over IB with GDR"),
        Example(_LAUNCHER, N, "the project's own launcher takes a node rank and a rendezvous address; no RDMA setting"),
        Example(filled(_CLICK_LAUNCHER, "hosts", _CLICK_HOSTS), N,
                "the project's click launcher takes a host list and a rendezvous address; no RDMA setting"),
        Example(filled(_CLICK_LAUNCHER, "hosts", ""), Status.NA, "a click launcher for the GPUs of one node: no host list"),
        Example({"mylib/cli/launcher.py": _LAUNCHER["mylib/cli/launcher.py"].split("    parser.add_argument('--node_rank'")[0]
                 + "    return parser\n"}, Status.NA, "a launcher for the GPUs of one node only"),
    )

    def not_applicable(self, ctx: Context) -> str | None:
        if ctx.project.multi_node or _rdma_evidence(ctx.facts)[0] or _documented_multi_node(ctx.facts) \
                or ctx.project.notes.get("multi_node_documented"):
            return None  # (also a multi-node option the overview found: an unnamed accelerate config, a node-count argument)
        ray = [r for r in ray_train_workers(ctx.facts) if r.multi and not isinstance(as_number(r.workers), float | int)]
        if ray:
            # Ray places the workers of a ``ScalingConfig`` on any node of its cluster with a free GPU; a worker count read
            # from the run's config says nothing about how many nodes that is (lm-buddy ``num_workers=config.ray.num_workers``)
            r = ray[0]
            return (f"not judged: the training processes are Ray Train workers ({r.trainer.short}() at {r.trainer.path}:"
                    f"{r.trainer.line}) whose count is the run's config and which the Ray cluster places on its nodes: if they "
                    "span nodes, check that NCCL uses the IB/RoCE fabric with GPUDirect RDMA (NCCL_DEBUG=INFO shows NET/IB ... GDR)")
        if ctx.project.notes.get("standalone_nodes"):
            return (f"single-node as written: the launch that asks for several nodes ({ctx.project.notes['standalone_nodes']}) "
                    "uses torchrun --standalone, whose rendezvous is local; once it can join nodes, GPUDirect RDMA matters")
        return "single-node project: GPUDirect RDMA only matters for inter-node communication"

    def detect(self, ctx: Context) -> Outcome:
        pos, neg = _rdma_evidence(ctx.facts)
        names = sorted({getattr(x, "name", "") for x in pos + neg if getattr(x, "name", "").isupper()})
        values: dict[str, Any] = {"rdma_vars": names}
        inert = _inert_ib(pos, neg)
        if inert and len(inert) == len(pos):
            ev = [_env_ev(x) for x in neg + inert]
            at = ", ".join(sorted({f"{x.path}:{x.line}" for x in neg if getattr(x, "name", "") == "NCCL_IB_DISABLE"}))
            return Outcome(N, ev, f"RDMA explicitly disabled for NCCL (NCCL_IB_DISABLE=1 at {at}); the InfiniBand settings "
                           f"beside it ({', '.join(sorted({x.name for x in inert}))}) have no effect while NCCL's IB transport "
                           "is off", values)
        pos = [x for x in pos if x not in inert]
        gdr_off = [x for x in neg if getattr(x, "name", "") == "NCCL_NET_GDR_LEVEL"]
        rdma_off = [x for x in neg if x not in gdr_off]
        ev = [_env_ev(x) for x in pos + neg + inert]
        if pos and not neg:
            return Outcome(U, ev, "RDMA networking configured for NCCL (GPUDirect RDMA is used over IB/EFA when the NIC can reach GPU memory)", values)
        if pos and gdr_off and not rdma_off:
            return Outcome(P, ev, "RDMA is configured but NCCL_NET_GDR_LEVEL keeps GPUDirect RDMA off", values)
        if pos:
            return Outcome(P, ev, "RDMA configured in some launchers and disabled in others", values)
        if neg:
            return Outcome(N, ev, "RDMA / GPUDirect RDMA explicitly disabled for NCCL", values)
        docs = [] if ctx.project.multi_node else _documented_multi_node(ctx.facts)
        if docs:
            d = docs[0]
            return Outcome(N, [], f"multi-node training is documented ({d.path}:{d.line}: `{d.value}`), but nothing configures "
                           "RDMA / GPUDirect RDMA for NCCL", {**values, "multi_node_documented": True})
        option = None if ctx.project.multi_node else ctx.project.notes.get("multi_node_documented")
        if option:
            return Outcome(N, [], f"multi-node training is an option ({option}), but nothing configures RDMA / GPUDirect RDMA "
                           "for NCCL", {**values, "multi_node_documented": True})
        p = ctx.project
        sites = p.notes.get("multi_node_sites") or []
        where = p.notes.get("nodes_source")
        at = f" ({p.num_nodes} nodes at {where}{f' (+{len(sites) - 1})' if len(sites) > 1 else ''})" if where and p.num_nodes else ""
        return Outcome(N, [], f"multi-node training{at} without any RDMA / GPUDirect setting for NCCL", values)

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        prio = super().recommendation_priority(ctx, outcome)
        if prio is Priority.HIGH and outcome.values.get("multi_node_documented"):
            # multi-node only in the docs (nanoGPT's README: a 2-node torchrun example): advice for those runs, not the
            # repository's own launches, so not a first must-do
            return Priority.MEDIUM
        sites = ctx.project.notes.get("multi_node_sites") or []
        if prio is Priority.HIGH and sites:
            # a few multi-node recipes among many single-node launches (TinyZero: one 4-node example of 20 launches, its own
            # run on one node): advice for those recipes, not the project's first must-do
            runs = {(x.path, x.line) for x in ctx.facts.launches() if not launch_runs_no_training(ctx.facts, x.path)}
            if len(runs) >= 4 and len(sites) * 2 < len(runs):
                return Priority.MEDIUM
        return prio


def _documented_multi_node(f: Facts) -> list[Any]:
    """Multi-node runs documented, not configured (:func:`checks.project.documented_multi_node`): memoised per scan."""
    key = ("documented-multi-node",)
    if key not in f._memo:
        f._memo[key] = documented_multi_node(f)  # type: ignore[assignment]
    return f._memo[key]  # type: ignore[return-value]


def _env_ev(x: Any) -> Evidence:
    name = getattr(x, "name", None)
    if name and hasattr(x, "value") and hasattr(x, "source"):
        return Facts.ev(x, key=name, value=x.value)
    return Facts.ev(x, key=getattr(x, "dotted", None), value=getattr(x, "value", None))


# -- E2 ---------------------------------------------------------------------------------

# A DeepSpeed config built in Python by a helper whose ``overlap_comm`` parameter defaults to False and that no caller
# passes (oat-llm's ``get_train_ds_config``, adapted from OpenRLHF): the ``if overlap_comm:`` keys are never set.
_DS_CONFIG_BUILDER = (
    "import deepspeed\n\n\n"
    "def get_train_ds_config(offload, stage=2, bf16=True, max_norm=1.0, overlap_comm=False):\n"
    "    zero_opt_dict = {\n"
    "        \"stage\": stage,\n"
    "        \"offload_param\": {\"device\": \"cpu\" if offload else \"none\"},\n"
    "        \"reduce_bucket_size\": \"auto\",\n"
    "    }\n"
    "    if overlap_comm:\n"
    "        zero_opt_dict[\"overlap_comm\"] = True\n"
    "        zero_opt_dict[\"contiguous_gradients\"] = True\n"
    "    return {\"zero_optimization\": zero_opt_dict, \"bf16\": {\"enabled\": bf16}, \"gradient_clipping\": max_norm}\n\n\n"
    "class DeepspeedStrategy:\n"
    "    def get_ds_train_config(self):\n"
    "        ds_config = get_train_ds_config(offload=self.args.model_offload, stage=self.stage, bf16=self.bf16{extra})\n"
    "        ds_config[\"train_micro_batch_size_per_gpu\"] = self.micro_batch_size\n"
    "        return ds_config\n\n"
    "    def prepare(self, model, optim):\n"
    "        engine, optim, _, _ = deepspeed.initialize(model=model, optimizer=optim, config=self.get_ds_train_config())\n"
    "        return engine, optim\n"
)


_OVERLAP_KEYS = (
    "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap", "overlap_grad_sync",
    "overlap_param_sync", "overlap_communication", "communication_overlap", "overlap_moe_expert_parallel_comm",
)
_PREFETCH_ON = lazy_compile(r"backward_(pre|post)", re.I)
_COLOSSAL_OVERLAP = ("LowLevelZeroPlugin", "HybridParallelPlugin", "MoeHybridParallelPlugin")


def _overlap_off_beside(f: Facts, s: Any) -> bool:
    """A bucket size whose own section turns the overlap off (NeMo-Aligner's ``optim:`` of ``distributed_fused_adam``:
    ``bucket_cap_mb: 200`` then ``overlap_grad_sync: False``): the optimizer reduces its buckets after backward, and a
    bucket size says nothing of overlap."""
    owner = s.key.rpartition(".")[0]
    return any(x.path == s.path and x.key.rpartition(".")[0] == owner and truthy(x.value) is False
               for x in f.effective(*_OVERLAP_KEYS))


def _switched_on(s: Any) -> bool:
    """A setting that turns a switch on where it takes effect (a library's dataclass default is not the project's choice)."""
    return truthy(s.value) is True and (s.rank > 0 or s.source == "argparse-default")


def _on_or_positive(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    n = as_number(v)
    return n > 0 if n is not None else truthy(v) is True


def _zero_stage_of(f: Facts, entry: Any) -> float | None:
    """The ZeRO stage of the DeepSpeed config that holds ``entry`` (its ``overlap_comm``): the stage key of the same file
    under the same enclosing keys, so that a module holding several config dicts (``STAGE_1 = {...}``, ``STAGE_2 = {...}``)
    gives each ``overlap_comm`` its own dict's stage, not the first one's; else the file's first stage."""
    prefix = _config_prefix(entry)
    first = None
    for e in f.config("zero_optimization.stage", "zero_stage"):
        if e.path != entry.path:
            continue
        if _config_prefix(e) == prefix:
            return as_number(e.value)
        if first is None:
            first = e
    return as_number(first.value) if first is not None else None


def _config_prefix(e: Any) -> tuple:
    """The keys above a DeepSpeed config's own (``("STAGE_2",)`` for ``STAGE_2["zero_optimization"]["overlap_comm"]``)."""
    keys = tuple(getattr(e, "keys", ()) or ())
    for i, k in enumerate(keys):
        if k in ("zero_optimization", "zero_stage", "overlap_comm"):
            return keys[:i]
    return keys[:-1]


_GRAD_COLLECTIVES = ("torch.distributed.all_reduce", "torch.distributed.reduce_scatter_tensor", "torch.distributed.reduce_scatter",
                     "torch.distributed.all_reduce_coalesced")
_GRAD_HOOKS = ("register_post_accumulate_grad_hook", "register_hook", "register_full_backward_hook", "register_comm_hook")


def _imports_module(f: Facts, importer: str, path: str) -> bool:
    """Whether ``importer`` imports the module defined by the file ``path`` (``from pkg.data_parallel.bucket import ...``)."""
    if not path.endswith(".py") or importer not in f.files:
        return False
    parts = path[:-3].split("/")
    names = {".".join(parts[i:]) for i in range(len(parts))}
    for imp in f.files[importer].imports:
        full = f"{imp.module}.{imp.name}" if imp.name else imp.module
        if imp.module in names or full in names:
            return True
    return False


def _call_text(c: Any) -> str:
    return " ".join([c.text, *(str(getattr(a, "text", a)) for a in (*c.args, *c.kwargs.values()))])


#: Medusa 0.1: a package that ships no launch; its README's training command starts 4 processes of an HF Trainer script
_DOC_TORCHRUN_FILES = {
    "README.md": (
        "## Training\n\n```bash\ntorchrun --nproc_per_node=4 medusa/train/train.py --model_name_or_path lmsys/vicuna-7b-v1.3 \\\n"
        "    --data_path ShareGPT_V4.3_unfiltered_cleaned_split.json \\\n    --bf16 True \\\n    --output_dir test \\\n"
        "    --per_device_train_batch_size 8 \\\n    --gradient_accumulation_steps 4 \\\n    --logging_steps 1\n```\n"),
    "medusa/train/train.py": (
        "import transformers\nfrom transformers import Trainer\n\n\ndef train():\n"
        "    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
        "    (training_args,) = parser.parse_args_into_dataclasses()\n"
        "    model = transformers.AutoModelForCausalLM.from_pretrained('lmsys/vicuna-7b-v1.3')\n"
        "    trainer = Trainer(model=model, args=training_args, train_dataset=ds)\n    trainer.train()\n\n\n"
        "if __name__ == '__main__':\n    train()\n"),
}


#: xllm ``core/deepspeed_configs.py``: several DeepSpeed configs as dicts of one module, each with its own stage
_DS_DICTS = (
    "ZERO_1 = {\n    'zero_optimization': {\n        'stage': 1,\n        'overlap_comm': True,\n    },\n}\n\n"
    "ZERO_2 = {\n    'zero_optimization': {\n        'stage': 2,\n        'overlap_comm': True,\n        'reduce_scatter': True,\n    },\n}\n")


def _jax_run(env: str) -> dict[str, str]:
    """A JAX trainer (EasyLM-shaped: the step compiled by a ``pjit`` call) and the launch script that sets its XLA flags."""
    return {
        "mylm/train.py": (
            "import jax\nimport optax\nfrom jax.experimental.pjit import pjit\nfrom jax.sharding import PartitionSpec as PS\n\n\n"
            "def main():\n    def train_step(state, batch):\n        loss, grads = jax.value_and_grad(loss_fn)(state.params, batch)\n"
            "        return state.apply_gradients(grads=grads), loss\n\n"
            "    sharded_train_step = pjit(train_step, in_shardings=(PS(), PS('dp')), out_shardings=(PS(), PS()))\n"
            "    for batch in loader:\n        state, loss = sharded_train_step(state, batch)\n\n\n"
            "if __name__ == '__main__':\n    main()\n"),
        "scripts/pretrain.sh": f"#!/bin/bash\n{env}python -m mylm.train --mesh_dim='-1,64,1'\n",
    }


#: XLA's scheduler that overlaps a JAX step's collectives with compute, switched in ``XLA_FLAGS`` (GPU) or
#: ``LIBTPU_INIT_ARGS`` (TPU): ``--xla_gpu_enable_latency_hiding_scheduler=true``
_XLA_OVERLAP = lazy_compile(r"--xla_(gpu|tpu)_enable_latency_hiding_scheduler(=(\w+))?")


def _xla_overlap(f: Facts) -> Outcome | None:
    """E2 on a JAX training path: the latency-hiding scheduler switched on or off in the run's XLA flags; None when the
    launches leave it unset (checks.stack then says not judged: XLA's own defaults decide)."""
    on: list[tuple[Evidence, str]] = []
    off: list[Evidence] = []
    for e in _training_envs(f, "XLA_FLAGS", "LIBTPU_INIT_ARGS"):
        for m in _XLA_OVERLAP.finditer(e.value or ""):
            flag, value = m.group(0).split("=")[0], m.group(3) or "true"
            ev = f.ev(e, key=f"{e.name}: {flag}", value=value)
            if value.lower() in ("false", "0"):
                off.append(ev)
            else:
                on.append((ev, f"{flag}={value} in {e.name} at {e.path}:{e.line}"))
    if on:
        return Outcome(U, [ev for ev, _ in on[:4]],
                       f"XLA's latency-hiding scheduler overlaps the step's collectives with compute ({on[0][1]})", {"xla": True})
    if off:
        return Outcome(N, off[:4], "XLA's latency-hiding scheduler is switched off in the run's XLA flags: collectives wait for "
                       "compute", {"xla": False})
    return None


def _nemo_dpo(sync: str) -> dict[str, str]:
    """NeMo-Aligner ``examples/nlp/gpt/conf/gpt_dpo.yaml``: Apex's distributed optimizer, its overlap set in its section."""
    return {
        "examples/nlp/gpt/conf/gpt_dpo.yaml": (
            "trainer:\n  num_nodes: 1\n  devices: 8\n  accelerator: gpu\n  precision: bf16\n\n"
            "model:\n  micro_batch_size: 1\n  global_batch_size: 64\n  megatron_amp_O2: True\n\n"
            "  optim:\n    name: distributed_fused_adam\n    bucket_cap_mb: 200\n    overlap_grad_sync: " + sync + "\n"
            "    contiguous_grad_buffer: True\n    lr: 9e-6\n    weight_decay: 0.1\n"),
        "examples/nlp/gpt/train_gpt_dpo.py": (
            "from nemo.core.config import hydra_runner\nfrom nemo_aligner.algorithms.dpo import DPOTrainer\n\n\n"
            "@hydra_runner(config_path=\"conf\", config_name=\"gpt_dpo\")\ndef main(cfg) -> None:\n"
            "    dpo_trainer = DPOTrainer(cfg=cfg.trainer.dpo, model=ptl_model)\n    dpo_trainer.fit()\n\n\n"
            "if __name__ == \"__main__\":\n    main()\n"),
    }


def _launched_off(f: Facts, ds_off: list[Any]) -> list[tuple[Any, Any]]:
    """(config entry, launch setting) for each DeepSpeed config that switches ``overlap_comm`` off and that a training
    launch passes (``--deepspeed scripts/deepspeed/zero2.json``)."""
    if not ds_off:
        return []
    passed: dict[str, Any] = {}
    for s in ds_config_refs(f):
        if s.source == "launcher" and isinstance(s.value, str) and (p := resolve_file(f, s.value)):
            passed.setdefault(p, s)
    return [(e, passed[e.path]) for e in ds_off if e.path in passed]


@register
class E2CommComputeOverlap(Check):
    id = "E2"
    title = "Comm/compute overlap"
    title_zh = "通信计算重叠"
    bottlenecks = (Bottleneck.COMMUNICATION,)
    priority = Priority.MEDIUM
    benefit = "gradient reduction and parameter gathering hidden behind backward/forward compute"
    what = (
        "Whether gradient synchronisation overlaps with backward compute: DeepSpeed `overlap_comm` (on by default only "
        "for ZeRO-3; ZeRO-1 honours it too: its optimizer registers the same reduce hooks when it is set), FSDP `backward_prefetch`/`forward_prefetch` (FSDP2 prefetches implicitly), "
        "Megatron `--overlap-grad-reduce`/`--overlap-param-gather`/`--tp-comm-overlap`, ColossalAI `overlap_communication`, "
        "DDP (its bucketed all-reduce overlaps backward by default; `bucket_cap_mb` tunes it). "
        "`overlap_comm: false`, ZeRO stage 0 beside `overlap_comm` (no ZeRO optimizer to use it) and FSDP with `NO_PREFETCH` are not "
        "full use."
    )
    why = (
        "Without overlap, every step waits for the full gradient all-reduce/reduce-scatter after backward; at 8-64 GPUs "
        "this is commonly 10-30 % of step time for billion-parameter models. DDP's bucketed overlap is why it scales "
        "near-linearly (Li et al., VLDB 2020); DeepSpeed documents `overlap_comm` as overlapping the reduction of gradients "
        "with backward computation, and Megatron-LM's `--overlap-grad-reduce`/`--overlap-param-gather` hide the "
        "distributed optimizer's communication in its reported MFU figures."
    )
    fix = (
        "DeepSpeed ZeRO-2: set `\"overlap_comm\": true` in `zero_optimization`; FSDP: `backward_prefetch=BACKWARD_PRE` "
        "(HF: `fsdp_config: {backward_prefetch: backward_pre}`) or FSDP2; Megatron: add `--overlap-grad-reduce "
        "--overlap-param-gather`; DDP: tune `bucket_cap_mb` and set `gradient_as_bucket_view=True`; collectives written by "
        "hand (a sharded optimizer that reduces gradients in `step()`): launch each gradient's `async_op=True` reduce from "
        "`param.register_post_accumulate_grad_hook` so it runs during the backward pass, and wait for it in `step()`."
    )
    fix_zh = (
        "DeepSpeed ZeRO-2：在 `zero_optimization` 中设置 `\"overlap_comm\": true`；FSDP：设置 `backward_prefetch=BACKWARD_PRE`"
        "（HF：`fsdp_config: {backward_prefetch: backward_pre}`）或改用 FSDP2；Megatron：添加 `--overlap-grad-reduce "
        "--overlap-param-gather`；DDP：调整 `bucket_cap_mb` 并设置 `gradient_as_bucket_view=True`；手写集合通信（在优化器 "
        "`step()` 中规约梯度的分片优化器）：在 `param.register_post_accumulate_grad_hook` 中为每个梯度发起 `async_op=True` 的规约，"
        "使其与反向传播并行，并在 `step()` 中等待完成。"
    )
    fix_safety = FixSafety.UNSAFE  # overlap_comm / prefetching raise peak memory
    references = (
        "https://www.deepspeed.ai/docs/config-json/#zero-optimizations-for-fp16-training",
        "https://pytorch.org/docs/stable/fsdp.html",
        "https://arxiv.org/abs/2006.15704",
    )
    snippets = {
        "deepspeed-json": '{\n  "zero_optimization": {\n    "stage": 2,\n    "overlap_comm": true,\n    "contiguous_gradients": true,\n    "reduce_bucket_size": 500000000\n  }\n}\n',
        "hf-yaml": "fsdp: full_shard auto_wrap\nfsdp_config:\n  backward_prefetch: backward_pre\n  forward_prefetch: false\n",
        "accelerate-yaml": "distributed_type: FSDP\nfsdp_config:\n  fsdp_backward_prefetch: BACKWARD_PRE\n",
        "python": (
            "from torch.nn.parallel import DistributedDataParallel as DDP\n\n"
            "model = DDP(model, device_ids=[local_rank], bucket_cap_mb=100, gradient_as_bucket_view=True)\n"
        ),
        "shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather\n",
    }
    examples = (
        Example(_nemo_dpo("False"), N, "NeMo-Aligner: bucket_cap_mb beside overlap_grad_sync: False in the same optim section "
                "(distributed_fused_adam reduces its buckets after backward)"),
        Example(_nemo_dpo("True"), U, "the same section with overlap_grad_sync: True"),
        Example({"ds_zero2.json": '{\n  "zero_optimization": {\n    "stage": 2,\n    "overlap_comm": true,\n    "contiguous_gradients": true\n  }\n}\n'}, U, "deepspeed overlap_comm"),
        Example({"ds_zero3.json": '{\n  "bf16": {"enabled": true},\n  "zero_optimization": {\n    "stage": 3,\n    "stage3_prefetch_bucket_size": "auto"\n  }\n}\n'}, U, "zero-3 default"),
        Example({"pretrain.sh": "GPT_ARGS=\"--num-layers 24 --micro-batch-size 4 --use-distributed-optimizer --overlap-grad-reduce\"\n"
                 "torchrun --nproc_per_node 8 pretrain_gpt.py $GPT_ARGS\n"}, U, "megatron flag"),
        Example({"train.py": "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, BackwardPrefetch\n"
                 "model = FSDP(model, auto_wrap_policy=policy, backward_prefetch=BackwardPrefetch.BACKWARD_PRE)\n"}, U, "fsdp prefetch"),
        Example({"ds_zero2.json": '{\n  "zero_optimization": {\n    "stage": 2,\n    "overlap_comm": false\n  }\n}\n'}, N, "overlap_comm false"),
        Example({"mylib/ds_configs.py": _DS_DICTS, "mylib/train.py": (
            "from transformers import Trainer, TrainingArguments\n\nfrom mylib.ds_configs import ZERO_2\n\n\n"
            "def train(model, data):\n    args = TrainingArguments(output_dir='out', bf16=True, deepspeed=ZERO_2)\n"
            "    Trainer(model=model, args=args, train_dataset=data).train()\n")},
                U, "two DeepSpeed dicts in one module: each overlap_comm has its own dict's stage"),
        Example({"mylib/ds_configs.py": _DS_DICTS.split("ZERO_2 =")[0], "mylib/train.py": (
            "from transformers import Trainer, TrainingArguments\n\nfrom mylib.ds_configs import ZERO_1\n\n\n"
            "def train(model, data):\n    args = TrainingArguments(output_dir='out', bf16=True, deepspeed=ZERO_1)\n"
            "    Trainer(model=model, args=args, train_dataset=data).train()\n")},
                U, "a ZeRO-1 dict with overlap_comm: reduced during backward"),
        Example({"myrl/utils/deepspeed.py": _DS_CONFIG_BUILDER.replace("{extra}", "")}, N,
                "overlap_comm set only under a builder parameter that defaults to False and no caller passes"),
        Example({"myrl/utils/deepspeed.py": _DS_CONFIG_BUILDER.replace("{extra}", ""),
                 "myrl/cli/train_sft.py": ("import argparse\n\nparser = argparse.ArgumentParser()\n"
                                           "parser.add_argument('--ds.zero_stage', type=int, default=2)\n"
                                           "parser.add_argument('--ds.overlap_comm', action='store_true', default=False)\n"),
                 "examples/scripts/train_sft_llama.sh": ("deepspeed --module myrl.cli.train_sft \\\n   --ds.zero_stage 3 \\\n"
                                                         "   --param_dtype bf16\n")}, U,
                "the same builder, launched at ZeRO-3: DeepSpeed turns overlap_comm on by default for stage 3"),
        Example({"myrl/utils/deepspeed.py": _DS_CONFIG_BUILDER.replace("{extra}", ", overlap_comm=True")}, U,
                "the same builder called with overlap_comm=True"),
        Example({"train.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 4\n"}, N, "megatron without overlap"),
        Example({"ds.json": '{\n  "zero_optimization": {\n    "stage": 2\n  }\n}\n', "cfg.yaml": "# overlap_comm: true\n"}, N, "zero-2 default, commented"),
        Example({"train.py": "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
                 "torch.distributed.init_process_group('nccl')\nmodel = DDP(model, device_ids=[rank])\n"}, U, "plain ddp"),
        Example({"ds_zero1.json": '{\n  "zero_optimization": {\n    "stage": 1,\n    "overlap_comm": true\n  }\n}\n'}, U,
                "zero-1 with overlap_comm (stage_1_and_2.py: ``if self.partition_gradients or self.overlap_comm:`` registers the hooks)"),
        Example({"train_gpt.py": (
            "import torch.distributed as dist\n\n\nclass DistAdam:\n    def step(self):\n        futures = []\n"
            "        for p in self.params:\n            chunk = torch.empty_like(p.grad[: p.grad.size(0) // self.world])\n"
            "            futures.append(dist.reduce_scatter_tensor(chunk, p.grad, op=dist.ReduceOp.AVG, async_op=True).get_future())\n"
            "        for fut in futures:\n            fut.wait()\n\n\nloss.backward()\nopt.step()\n")},
                P, "async reduce-scatter launched in the optimizer step, after backward"),
        Example({  # picotron: the DP wrapper registers gradient hooks; its bucket manager (another module) launches the all-reduce
            "picotron/data_parallel/bucket.py": (
                "import torch.distributed as dist\n\n\nclass Bucket:\n    def sync_gradient(self):\n"
                "        self.handle = dist.all_reduce(self.grad_data, group=self.process_group, async_op=True)\n\n"
                "    def mark_param_as_ready(self, param):\n        self.params_with_grad_ready.add(param)\n"
                "        if len(self.params_with_grad_ready) == len(self.params):\n            self.sync_gradient()\n"),
            "picotron/data_parallel/data_parallel.py": (
                "from torch import nn\nfrom picotron.data_parallel.bucket import BucketManager\n\n\nclass DataParallelBucket(nn.Module):\n"
                "    def register_backward_hook(self):\n        for param in self.module.parameters():\n"
                "            if param.requires_grad:\n                param_tmp = param.expand_as(param)\n"
                "                grad_acc_fn = param_tmp.grad_fn.next_functions[0][0]\n"
                "                grad_acc_fn.register_hook(self._make_param_hook(param, self.bucket_manager))\n"),
            "train.py": "from picotron.data_parallel.data_parallel import DataParallelBucket\nmodel = DataParallelBucket(model)\nloss.backward()\n",
        }, U, "bucketed all-reduce launched from gradient hooks registered in another module"),
        Example({"train_gpt.py": (
            "import torch.distributed as dist\n\n\ndef _reduce(p):\n"
            "    p._fut = dist.all_reduce(p.grad, op=dist.ReduceOp.AVG, async_op=True).get_future()\n\n\n"
            "for p in model.parameters():\n    p.register_post_accumulate_grad_hook(_reduce)\n"
            "loss.backward()\n")},
                U, "async all-reduce launched from a post-accumulate-grad hook, during backward"),
        Example({"train.yaml": "fsdp: full_shard auto_wrap\nfsdp_config:\n  backward_prefetch: no_prefetch\n",
                 "train.py": "from transformers import Trainer\n"}, P, "hf fsdp without prefetch"),
        Example({  # a project's own strategy class named like Lightning's, picked by a Hydra ``trainer.strategy``: no Lightning
            "myrl/config/ppo_base_config.yaml": "trainer:\n  strategy: fsdp2\n",
            "myrl/distributed/fsdp_strategy.py": "class FSDPStrategy:\n    def __init__(self, fsdp_config, seed=42):\n        self.fsdp_config = fsdp_config\n",
            "myrl/workers/fsdp_worker.py": ("from myrl.distributed.fsdp_strategy import FSDPStrategy\n\n\ndef init_model(cfg):\n"
                                        "    return FSDPStrategy(fsdp_config=cfg.trainer.policy.fsdp_config, seed=cfg.trainer.seed)\n"),
        }, N, "a project's own FSDPStrategy class is not Lightning's FSDP"),
        Example(_env_trainer(), N, "DDP only in the 'pytorchDDP' branch of a trainer whose env type defaults to 'pytorch'"),
        Example(_env_trainer("env_args = EnvArgs(env_type='pytorchDDP', num_gpus=8)\n"), U, "the same trainer run as 'pytorchDDP'"),
        Example(_DOC_TORCHRUN_FILES, U, "a package that ships no launch: its README's torchrun runs the HF Trainer in DDP"),
        Example(torchx_runner(), U, "torchtitan launched with data_parallel_shard_degree=8: FSDP2 prefetches implicitly"),
        Example(torchx_runner(nodes=1, nproc=1), Status.NA, "the same runner on one GPU: shard degree 1, nothing to overlap"),
        Example({"README.md": _DOC_TORCHRUN_FILES["README.md"].replace("--bf16 True", '--bf16 True --fsdp "full_shard auto_wrap"'),
                 "medusa/train/train.py": _DOC_TORCHRUN_FILES["medusa/train/train.py"]}, P,
                "the same README command handing the trainer FSDP: not read as DDP; HF's FSDP default is NO_PREFETCH"),
        Example(bmtrain.model_files(), U, "BMTrain TransformerBlockList: next block's all-gather and gradient reduce-scatter overlap compute"),
        Example(_jax_run("export LIBTPU_INIT_ARGS='--xla_enable_async_all_gather=true --xla_tpu_enable_latency_hiding_scheduler=true'\n"),
                U, "a JAX step on TPU with XLA's latency-hiding scheduler switched on in LIBTPU_INIT_ARGS"),
        Example(_jax_run("export XLA_FLAGS='--xla_gpu_enable_latency_hiding_scheduler=false'\n"), N,
                "the same step with the scheduler switched off in XLA_FLAGS"),
        Example(_jax_run(""), Status.NA, "the same step with no XLA flags: XLA's defaults decide (not judged)"),
        Example(bmtrain.model_files(layers="torch.nn.ModuleList([bmt.CheckpointBlock(TransformerBlock(dim)) for _ in range(num_layers)])"), N,
                "BMTrain CheckpointBlocks in a plain ModuleList: each block gathers its parameters and waits"),
        Example(accelerate_library(), Status.NA, "an Accelerate trainer launched with an accelerate config the repository does not ship"),
        Example(accelerate_library("python train.py"), Status.NA, "the same library documented with a plain python launch: one process"),
    )

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        return _no_comm_priority(self, ctx, outcome)

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        if ctx.project.notes.get("jax_training") and (xla := _xla_overlap(f)):
            return xla
        used: list[Evidence] = []
        partial: list[Evidence] = []
        off: list[Evidence] = []
        why: list[str] = []
        # DeepSpeed ZeRO
        overlap_files: set[str] = set()
        ds_off: list[Any] = []  # DeepSpeed configs that switch overlap_comm off
        alt_ds = deepspeed_alternative_files(f)  # configs of a DeepSpeed backend the run does not pick
        for e in f.config("zero_optimization.overlap_comm", "overlap_comm"):
            if e.guard and guard_off(f, e):  # set under ``if overlap_comm:`` in a config builder whose parameter stays False
                continue
            overlap_files.add(e.path)
            if e.path in alt_ds:
                continue
            t = truthy(e.value)
            stage = _zero_stage_of(f, e)
            if t and stage == 0:
                # (GPT-NeoX ``configs/bf16_125M.yml``: ``"stage": 0`` beside ``"overlap_comm": True``): a ZeRO optimizer's
                # option, and stage 0 builds none: the engine all-reduces the gradients after backward
                partial.append(f.ev(e, key=e.dotted, value=e.value))
                why.append("overlap_comm is set beside ZeRO stage 0, which builds no ZeRO optimizer to use it")
            elif t:
                used.append(f.ev(e, key=e.dotted, value=e.value))
                why.append("DeepSpeed overlap_comm")
            elif t is False:
                off.append(f.ev(e, key=e.dotted, value=e.value))
                ds_off.append(e)
        stages = [e for e in f.config("zero_optimization.stage", "zero_stage") if e.path not in overlap_files and e.path not in alt_ds]
        z3 = [e for e in stages if as_number(e.value) == 3]
        for e in z3:
            used.append(f.ev(e, key=e.dotted, value=e.value))
        if z3:
            # ZeRO-2 configs that leave overlap_comm unset run without it (its default is true only under ZeRO-3): when they
            # are more (trlx: zero2-bf16.yaml is the Slurm default), the reason says how many configs overlap
            z2 = [e for e in stages if as_number(e.value) in (1, 2)]
            why.append("ZeRO-3 (overlap_comm defaults to true)" if len(z2) <= len(z3) else
                       f"ZeRO-3 in {len(z3)} of {len(z3) + len(z2)} DeepSpeed configs (overlap_comm defaults to true there; "
                       "the ZeRO-1/2 configs leave it off)")
        if not overlap_files and not alt_ds:
            # the run's ZeRO stage given as a launch flag (``--ds.zero_stage 3``, read as A3 reads it) to code whose DeepSpeed
            # config leaves ``overlap_comm`` unset (or sets it only under a switch that stays off): stage 3 overlaps by default
            for site in zero_sites(f):
                if site.how == "zero_stage" and site.stage == 3 and getattr(site.fact, "source", None) == "launcher":
                    used.append(f.ev(site.fact))
                    why.append("ZeRO-3 (overlap_comm defaults to true)")
        # Lightning's DeepSpeedStrategy at its defaults (``strategy="deepspeed_stage_2"``): overlap_comm=True
        for site in lightning_deepspeed(f, "overlap_comm") if not overlap_files else ():
            used.append(f.ev(site.fact))
            why.append("Lightning DeepSpeedStrategy (overlap_comm defaults to true)")
        # Megatron / NeMo / ColossalAI / generic switches
        for s in f.effective(*_OVERLAP_KEYS):
            if _switched_on(s):
                used.append(f.ev(s))
                why.append(s.key.lstrip("-"))
            elif truthy(s.value) is False and s.rank > 0:
                off.append(f.ev(s))
        for c in f.calls(*_COLOSSAL_OVERLAP):
            if "overlap_communication" not in c.kwargs and not c.star_kwargs:
                used.append(f.ev(c, key=f"{c.short}(overlap_communication=)", value=True))
                why.append(f"{c.short} overlaps communication by default")
        for c in bmtrain.overlapping_block_lists(f):
            used.append(f.ev(c, key="bmt.TransformerBlockList"))
            why.append("BMTrain TransformerBlockList prefetches the next block's parameter all-gather and reduce-scatters gradients "
                       "on a side stream during compute")
        # FSDP (not its library wrappers when a data-parallel selector leaves it at DDP: fairseq2 ``data_parallelism``)
        fsdp_off = bool(backend_unselected(f, "fsdp"))
        for c in f.calls("FullyShardedDataParallel") if not fsdp_off else ():
            if guard_off(f, c) or orphan_sites(ctx, [c]):
                continue  # in a branch the run does not take (a Trainer copy's ``elif self.fsdp is not None:``), or a module
                # no training entry point reaches (OpenChatKit's ``dist_gpt_fsdp_module.py``: A2's reading)
            bp = c.kwargs.get("backward_prefetch", "default")
            fp = truthy(c.kwargs.get("forward_prefetch", False))
            if fp or bp == "default" or _PREFETCH_ON.search(_text(bp)):
                used.append(f.ev(c, key="FullyShardedDataParallel(backward_prefetch=)", value=_text(bp) if bp != "default" else "BACKWARD_PRE"))
                why.append("FSDP backward prefetch")
            else:
                partial.append(f.ev(c, key="FullyShardedDataParallel(backward_prefetch=)", value=_text(bp)))
                why.append("FSDP without backward prefetch")
        for c in f.calls("fully_shard") if not fsdp_off else ():
            used.append(f.ev(c, key="fully_shard"))
            why.append("FSDP2 (implicit prefetching)")
        if not fsdp_off and not f.calls("fully_shard"):
            # torchtitan's ``data_parallel_shard_degree`` when the project has no ``fully_shard`` call of its own (a runner
            # that launches torchtitan's train.py): torchtitan shards with FSDP2, which prefetches implicitly
            shard = [x for x in fsdp_sites(f) if x.how == "data_parallel_shard_degree"]
            used += [f.ev(x.fact) for x in shard]
            why += ["FSDP2 (implicit prefetching)"] if shard else []
        # Lightning's FSDPStrategy (not a project's own class of that name: skyrl-train ``skyrl_train.distributed.fsdp_strategy.FSDPStrategy``)
        for c in (c for c in f.calls("FSDPStrategy") if c.name == "FSDPStrategy" or is_lightning(c)):
            bp = c.kwargs.get("backward_prefetch", "default")
            (used if bp == "default" or _PREFETCH_ON.search(_text(bp)) else partial).append(f.ev(c, key="FSDPStrategy(backward_prefetch=)"))
            why.append("Lightning FSDP")
        hf_fsdp = self._hf_fsdp(f, used, partial, why)
        # DDP: the reducer all-reduces gradient buckets while backward is still running (on by default)
        tuned_ddp = [
            # (``gradient_as_bucket_view`` saves a gradient copy's memory; it does not change when buckets are reduced)
            s for s in f.effective("bucket_cap_mb", "ddp_bucket_cap_mb", "static_graph")
            # not a kwargs dict item set only under a flag that is off (OpenCLIP ``ddp_args['static_graph'] = True`` under
            # ``if args.ddp_static_graph:``, a store_true flag)
            if s.rank > 0 and _on_or_positive(s.value) and not set_under_off_branch(f, s) and not _overlap_off_beside(f, s)
            # (PyTorch DDP's own default bucket size tunes nothing: llm2vec's ``DistributedDataParallelKwargs(bucket_cap_mb=25)``)
            and not (s.name in ("bucket_cap_mb", "ddp_bucket_cap_mb") and as_number(s.value) == _DDP_DEFAULT_BUCKET_MB)
        ]
        for s in tuned_ddp:
            used.append(f.ev(s))
            why.append("tuned DDP buckets")
        # ``gradient_as_bucket_view: true`` (NeMo's Megatron configs) says gradients live in DDP's buckets: DDP runs, and
        # its bucketed all-reduce overlaps backward
        view = [s for s in f.effective("gradient_as_bucket_view") if s.rank > 0 and truthy(s.value) is True and not set_under_off_branch(f, s)]
        used += [f.ev(s) for s in view]
        ddp = self._ddp_sites(ctx) + self._implicit_hf_ddp(ctx, hf_fsdp, used + partial)
        for x, key in ddp:
            used.append(f.ev(x, key=key))
        if ddp:
            why.append("DDP overlaps its bucketed gradient all-reduce with backward")
        elif view:
            why.append("DDP (gradient_as_bucket_view) overlaps its bucketed gradient all-reduce with backward")
        # hand-written gradient collectives (modded-nanogpt): asynchronous ones launched from backward hooks overlap the
        # backward pass; launched after backward (in the optimizer step) they overlap only the update math
        grads = [c for c in f.calls(*_GRAD_COLLECTIVES) if truthy(c.kwargs.get("async_op")) is True and "grad" in _call_text(c)]
        if grads:
            hooked = {c.path for c in f.calls(*_GRAD_HOOKS)}
            # also from a module the hook-registering file imports (picotron: data_parallel.py registers the hooks, its
            # BucketManager in bucket.py launches the all-reduce), and inside an autograd Function's ``backward`` (a tensor-
            # parallel layer's all-reduce of its input gradient runs in the backward pass by construction)
            hooked |= {c.path for c in grads if c.path not in hooked and any(_imports_module(f, h, c.path) for h in hooked)}
            during = [c for c in grads if c.path in hooked or c.func == "backward"]
            after = [c for c in grads if c not in during]
            if during and not after:
                used += [f.ev(c, key=f"{c.short}(async_op=True)", value=True) for c in during]
                why.append("asynchronous gradient collectives launched from backward hooks")
            elif after:  # judged per training script: one that launches them after backward does not overlap backward
                partial += [f.ev(c, key=f"{c.short}(async_op=True)", value=True) for c in after + during]
                late = ", ".join(sorted({c.path for c in after})[:3])
                early = ", ".join(sorted({c.path for c in during})[:3])
                why.append(f"asynchronous gradient collectives launched after backward in {late} (in the optimizer step): they "
                           "overlap the update math, not the backward pass" + (f"; from backward hooks in {early}" if during else ""))
        if used and (stage_off := _launched_off(f, ds_off)):
            # one training stage overlaps and another turns it off (MobileVLM: ``run.sh`` pretrains with ``zero2.json``,
            # ``"overlap_comm": false``, and fine-tunes with ``zero3.json``, which overlaps)
            where = ", ".join(f"{e.path}:{e.line}" for e, _ in stage_off[:2])
            by = ", ".join(f"{s.path}:{s.line}" for _, s in stage_off[:2])
            return Outcome(P, used + partial + [f.ev(e, key=e.dotted, value=e.value) for e, _ in stage_off],
                           _summary(why) + f"; overlap_comm is off in {where}, which the launch at {by} passes", {"overlap_comm": True})
        if used:
            return Outcome(U, used + partial, _summary(why), {"overlap_comm": True})
        if partial:
            return Outcome(P, partial + off, _summary(why), {"overlap_comm": True})
        if off:
            return Outcome(N, off, "communication overlap explicitly disabled", {"overlap_comm": False})
        if not distributed_sites(ctx):
            acc = accelerate_config_run(f)
            if acc is not None:  # Accelerate's DDP would overlap; whether the run has several processes is its unshipped config's
                return Outcome(Status.NA, [f.ev(acc[1]), f.ev(acc[2])], accelerate_config_note(acc)
                               + " (with several, its DDP overlaps the bucketed gradient all-reduce with backward)", {"overlap_comm": None})
            if (doc := documented_run_note(f)) is not None:
                return Outcome(Status.NA, [f.ev(doc[0])], doc[1] + "check the overlap setting that run gets (DeepSpeed "
                               "`overlap_comm`, FSDP prefetch; plain DDP overlaps its bucketed all-reduce by default)", {"overlap_comm": None})
            if _one_process_judged_here(ctx):
                return Outcome(Status.NA, [], ONE_PROCESS + "there is no gradient communication to overlap", {"overlap_comm": None})
            return Outcome(N, [], "no distributed training found: there is no gradient communication to overlap", {"overlap_comm": False})
        if (absent := absent_ds_configs(f)) and not overlap_files:
            # the DeepSpeed config every launch passes lives elsewhere (LLaVA-pp's ``--deepspeed ./scripts/zero3.json``: the
            # scripts run inside the LLaVA checkout its README copies them into): its ``overlap_comm`` is not visible here
            s = absent[0]
            more = f" (+{len(absent) - 1} more)" if len(absent) > 1 else ""
            return Outcome(Status.NA, [f.ev(x) for x in absent[:3]],
                           f"not judged: the DeepSpeed config the launch or recipe passes ({s.value} at {s.path}:{s.line}{more}) is not in "
                           "the repository: check its zero_optimization.overlap_comm (on by default only under ZeRO-3)",
                           {"overlap_comm": None})
        return Outcome(N, [], "distributed training without communication/computation overlap", {"overlap_comm": False})

    @staticmethod
    def _hf_fsdp(f: Facts, used: list[Evidence], partial: list[Evidence], why: list[str]) -> bool:
        """HF ``fsdp_config`` / accelerate ``fsdp_config``: prefetch keys, FSDP2, or the NO_PREFETCH default."""
        found = False
        # HF ``fsdp_config`` (inline or a ``--fsdp_config fsdp.json`` file) and accelerate's ``fsdp_config`` section
        for e in f.config("backward_prefetch", "fsdp_backward_prefetch", "fsdp_backward_prefetch_policy"):
            if e.fmt == "python" and e.keys[0] in {"FullyShardedDataParallel", "FSDP"}:
                continue
            found = True
            # (a boolean is a project's own switch for it: open_lm ``fsdp-backward-prefetch: True`` sets BACKWARD_PRE)
            if _PREFETCH_ON.search(str(e.value)) or e.value is True:
                used.append(f.ev(e, key=e.dotted, value=e.value))
                why.append("FSDP backward prefetch")
            else:
                partial.append(f.ev(e, key=e.dotted, value=e.value))
                why.append("FSDP without backward prefetch")
        for e in f.config("forward_prefetch", "fsdp_forward_prefetch"):
            if e.fmt == "python" and e.keys[0] in {"FullyShardedDataParallel", "FSDP"}:
                continue
            found = True
            if truthy(e.value):
                used.append(f.ev(e, key=e.dotted, value=e.value))
                why.append("FSDP forward prefetch")
        for e in f.config("fsdp_config.version", "fsdp_version"):
            found = True
            if as_number(e.value) == 2:
                used.append(f.ev(e, key=e.dotted, value=e.value))
                why.append("FSDP2 (implicit prefetching)")
        if not found:
            hf = [s for s in f.effective("fsdp") if isinstance(s.value, str) and ("shard" in s.value.lower() or "offload" in s.value.lower())]
            hf += [e for e in f.config("distributed_type") if str(e.value).upper() == "FSDP"]
            for s in hf:
                found = True
                partial.append(Facts.ev(s))
                why.append("FSDP with the HF/accelerate default NO_PREFETCH")
        return found

    @staticmethod
    def _ddp_sites(ctx: Context) -> list[tuple[Any, str]]:
        """DDP wrappers and strategies: ``DDP(model)``, Lightning ``strategy="ddp"``/``devices>1`` (code or LightningCLI YAML)."""
        f = ctx.facts
        # a wrapper in a backend branch the run leaves off (``if self.env_type == 'pytorchDDP':``, see A1) is not the run's
        out: list[tuple[Any, str]] = [(c, f"{c.short}") for c in f.calls("DistributedDataParallel", "DDPStrategy")
                                      if not (c.short == "DistributedDataParallel" and guard_off(f, c))]
        for c in f.calls("Trainer", "Fabric"):
            strategy = str(c.kwargs.get("strategy", "")).lower()
            if strategy.startswith(("ddp", "fsdp")) or ("strategy" not in c.kwargs and (as_number(c.kwargs.get("devices")) or 0) > 1):
                out.append((c, f"{c.short}(strategy=)"))
        strategies = [e for e in f.config("trainer.strategy") if isinstance(e.value, str)] if lightning_imported(f) else []
        out += [(e, e.dotted) for e in strategies if e.value.lower().startswith(("ddp", "fsdp"))]
        if not strategies and lightning_imported(f):
            out += [(e, e.dotted) for e in f.config("trainer.devices") if (as_number(e.value) or 0) > 1]
        return out

    @staticmethod
    def _implicit_hf_ddp(ctx: Context, hf_fsdp: bool, already: list[Evidence]) -> list[tuple[Any, str]]:
        """An HF Trainer launched on several GPUs without DeepSpeed/FSDP runs DDP."""
        f = ctx.facts
        # (DeepSpeed configs that no run passes, or of a backend the run does not pick, leave the Trainer at DDP: MedicalGPT)
        unpassed = deepspeed_alternative_files(f)
        if hf_fsdp or already or any(e.path not in unpassed for e in f.config("zero_optimization", "deepspeed_config")):
            return []
        if any(isinstance(s.value, str) and s.value.strip() for s in f.effective("deepspeed")):
            return []
        if any(str(e.value).upper() not in {"MULTI_GPU", "NO"} for e in f.config("distributed_type")):
            return []
        if not uses_hf_trainer(f) and not f.calls("Accelerator"):
            return []
        out: list[tuple[Any, str]] = [(x, "DistributedDataParallel") for x in f.launches("torchrun", "accelerate") if (_launch_procs(x) or 2) > 1]
        if not out:
            # no launch ships and the README's training command starts several processes (Medusa ``torchrun
            # --nproc_per_node=4 medusa/train/train.py ...``): the HF Trainer wraps the model in DDP, unless that command
            # hands it FSDP or DeepSpeed (FastChat's ``--fsdp "full_shard auto_wrap"``)
            out = [(h, "DistributedDataParallel") for h in documented_ddp(f)]
        if not out:
            # the HF Trainer runs in several Ray Train workers that Ray's Torch backend joins into one process group (lm-buddy's
            # ``TorchTrainer(train_loop_per_worker=...)`` around ``SFTTrainer``): the Trainer sees the distributed run and wraps DDP
            out = [(r.trainer, "DistributedDataParallel") for r in ray_train_workers(f) if r.multi]
        return out


def _summary(parts: list[str]) -> str:
    seen: list[str] = []
    for p in parts:
        if p not in seen:
            seen.append(p)
    return "; ".join(seen[:4])


# -- E3 ---------------------------------------------------------------------------------

_HOOKS = lazy_compile(r"(powerSGD|fp16_compress|bf16_compress|compress_hook|compress_wrapper|quantization_pertensor|quantization_perchannel)", re.I)
_ONEBIT = lazy_compile(r"^(onebit(adam|lamb)|zerooneadam)$", re.I)
_LOW = lazy_compile(r"^(fp16|bf16|float16|bfloat16|half|fp8)$", re.I)


#: SpecForge's backend: FSDP1 ``MixedPrecision(param_dtype=pc.param_dtype, buffer_dtype=torch.float32)``, no ``reduce_dtype``,
#: ``param_dtype`` a field of the parallel config that defaults to bf16
_FSDP_CONFIGURED_DTYPE = {
    "mylib/backend.py": (
        "from dataclasses import dataclass\n\nimport torch\nimport torch.distributed as dist\n\n\n@dataclass\nclass ParallelConfig:\n"
        "    world_size: int = 1\n    param_dtype: torch.dtype = torch.bfloat16\n\n\n"
        "def wrap(model, pc: ParallelConfig):\n"
        "    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
        "    from torch.distributed.fsdp import MixedPrecision, ShardingStrategy\n\n"
        "    return FSDP(model, use_orig_params=True, sharding_strategy=ShardingStrategy.SHARD_GRAD_OP,\n"
        "                mixed_precision=MixedPrecision(param_dtype=pc.param_dtype, buffer_dtype=torch.float32),\n"
        "                process_group=dist.group.WORLD)\n"),
}


#: InternVL's segmentation sub-project: every mmseg config names ``zero_configs/adam_zero1_bf16.json``; a ZeroOneAdam
#: (1-bit) config ships beside it that nothing names
_SHIPPED_ONEBIT = {
    "configs/upernet_full_tuning.py": ("_base_ = ['./_base_/models/upernet.py']\n"
                                       "deepspeed = True\ndeepspeed_config = 'zero_configs/adam_zero1_bf16.json'\n"),
    "zero_configs/adam_zero1_bf16.json": ('{\n  "train_batch_size": 16,\n  "optimizer": {"type": "AdamW", "params": {"lr": 4e-5}},\n'
                                          '  "bf16": {"enabled": true},\n  "zero_optimization": {"stage": 1}\n}\n'),
    "zero_configs/adam_zero3_fp16.json": ('{\n  "train_batch_size": 16,\n  "optimizer": {\n    "type": "ZeroOneAdam",\n'
                                          '    "params": {"lr": 1e-3, "var_freeze_step": 1000}\n  },\n  "fp16": {"enabled": true},\n'
                                          '  "zero_optimization": {"stage": 3}\n}\n'),
    "train.sh": "deepspeed --num_gpus 8 train.py configs/upernet_full_tuning.py --launcher pytorch\n",
}


def _unreferenced_config_ev(f: Facts, found: list[Evidence]) -> list[Evidence]:
    """``found`` when every item is a key of a DeepSpeed config file that nothing in the project names by its file name
    (a launch flag, a config value, a call argument, an assignment or default) while the project does name another
    DeepSpeed config: the runs pick their configs by name, and not this one. Empty otherwise (a project that names none
    leaves the choice to a command the audit does not see)."""
    if not found or not all(PurePosixPath(e.path).suffix in (".json", ".yaml", ".yml") for e in found):
        return []
    ds_files = {e.path for e in f.config_under("zero_optimization")} | {e.path for e in f.config("optimizer.type")}
    if not all(e.path in ds_files for e in found):
        return []
    refs = referenced_configs(f)
    named = {p for p in ds_files if PurePosixPath(p).name in refs}
    if not named or any(e.path in named for e in found):
        return []
    return found


def _run_precision_flags(f: Facts, *names: str) -> list[Setting]:
    """HF's ``--bf16`` / ``--fp16`` as the training runs set them: a training launch's flag (not an export or evaluation
    script's, not a checkpoint tool's) or a recipe file's key (YAML/JSON), the launches that name a DeepSpeed config first."""
    out = [s for s in f.settings(*names)
           if (s.source == "launcher" and not launch_runs_no_training(f, s.path) and not checkpoint_tool(f, s))
           or (s.source == "config" and s.path.endswith((".yaml", ".yml", ".json")))]
    named = {x.path for x in f.launches() if "deepspeed" in x.script_args}
    return sorted(out, key=lambda s: (s.path not in named, s.source != "launcher"))


def _deepspeed_half_comm(f: Facts) -> list[Any]:
    """``fp16.enabled`` / ``bf16.enabled`` true in a DeepSpeed config the runs use, none of whose configs sets
    ``communication_data_type``: the engine then reduces gradients in that half precision."""
    if f.config("communication_data_type"):
        return []
    alt = deepspeed_alternative_files(f)
    # ``"enabled": "auto"`` takes the HF launch's ``--bf16 True`` / ``--fp16 True`` (aguvis ``scripts/zero3.json`` under
    # ``scripts/train.sh``): the precision every launch that sets one of them turns on
    flags = {n: {truthy(s.value) for s in _run_precision_flags(f, n)} for n in ("bf16", "fp16")}
    on = {n for n, values in flags.items() if True in values and False not in values}
    return [e for e in f.config("bf16.enabled", "fp16.enabled") if len(e.keys) == 2
            and (truthy(e.value) is True or (e.keys[0] in on and str(e.value).strip().lower() == "auto"))
            and e.path not in alt and not _E3_TEST.search(e.path) and not (e.guard and guard_off(f, e))]


@register
class E3GradientCompression(Check):
    id = "E3"
    title = "Gradient compression"
    title_zh = "梯度压缩"
    bottlenecks = (Bottleneck.COMMUNICATION,)
    priority = Priority.LOW
    benefit = "2x (fp16/bf16 all-reduce) to 10x+ (PowerSGD, 1-bit Adam) less gradient traffic on bandwidth-limited links"
    what = (
        "Whether gradients travel compressed or in low precision: DDP comm hooks (`powerSGD_hook`, `fp16_compress_hook`, "
        "`bf16_compress_hook`), accelerate `comm_hook`, DeepSpeed `communication_data_type`, 1-bit Adam/LAMB, ZeRO++ "
        "(`zero_quantized_weights`, `zero_quantized_gradients`, `zero_hpz_partition_size`), Megatron "
        "`--grad-reduce-in-bf16`, Horovod `Compression.fp16`. FSDP `MixedPrecision(reduce_dtype=bf16)` halves the "
        "reduction bytes (partial)."
    )
    why = (
        "When the interconnect is the bottleneck (Ethernet/RoCE between nodes), gradient bytes bound step time. "
        "1-bit Adam cuts communication volume up to 5x with the same convergence on BERT/GPT pre-training "
        "(Tang et al., 2021; up to 3.3x end-to-end on 40 Gb/s Ethernet); ZeRO++ reports 4x less communication and up "
        "to 2.16x throughput at 384 GPUs (Wang et al., 2023); PowerSGD reached 1.5-2x faster data-parallel training on "
        "16 GPUs over 10 Gb/s Ethernet (Vogels et al., NeurIPS 2019). On NVLink-only single nodes the gain is small."
    )
    fix = (
        "For bandwidth-bound multi-node training: register a DDP comm hook (`bf16_compress_hook` or PowerSGD), or set "
        "DeepSpeed `\"communication_data_type\": \"bf16\"`, or enable ZeRO++ (`zero_quantized_gradients`, "
        "`zero_hpz_partition_size` = GPUs per node) under ZeRO-3; validate convergence against a baseline run."
    )
    fix_zh = (
        "跨节点带宽受限时：为 DDP 注册通信 hook（`bf16_compress_hook` 或 PowerSGD），或在 DeepSpeed 中设置 "
        "`\"communication_data_type\": \"bf16\"`，或在 ZeRO-3 下启用 ZeRO++（`zero_quantized_gradients`、`zero_hpz_partition_size` "
        "设为单机 GPU 数）；并与基线对比验证收敛。"
    )
    fix_safety = FixSafety.UNSAFE
    references = (
        "https://pytorch.org/docs/stable/ddp_comm_hooks.html",
        "https://www.deepspeed.ai/tutorials/zeropp/",
        "https://arxiv.org/abs/2102.02888",
        "https://arxiv.org/abs/1905.13727",
    )
    snippets = {
        "python": (
            "from torch.distributed.algorithms.ddp_comm_hooks import default_hooks\n\n"
            "model.register_comm_hook(state=None, hook=default_hooks.bf16_compress_hook)\n"
        ),
        "deepspeed-json": (
            '{\n  "communication_data_type": "bf16",\n  "zero_optimization": {\n    "stage": 3,\n'
            '    "zero_quantized_gradients": true,\n    "zero_hpz_partition_size": 8\n  }\n}\n'
        ),
    }
    examples = (
        Example({"train.py": "import torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook as powerSGD\n"
                 "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model)\n"
                 "state = powerSGD.PowerSGDState(process_group=None, matrix_approximation_rank=1)\n"
                 "model.register_comm_hook(state, powerSGD.powerSGD_hook)\n"}, U, "powerSGD hook"),
        Example({"ds.json": '{\n  "communication_data_type": "bf16",\n  "zero_optimization": {"stage": 2}\n}\n'}, U, "deepspeed comm dtype"),
        Example({  # Baichuan-7B: bf16 enabled, communication_data_type unset: the engine reduces gradients in bf16
            "config/deepspeed.json": '{\n  "bf16": {\n    "enabled": true\n  },\n  "zero_optimization": {"stage": 2}\n}\n',
            "scripts/train.sh": "deepspeed --num_gpus 8 train.py --deepspeed --deepspeed_config config/deepspeed.json\n"},
            P, "deepspeed bf16: gradients reduced in bf16 by default"),
        Example({
            "config/deepspeed.json": '{\n  "bf16": {\n    "enabled": false\n  },\n  "zero_optimization": {"stage": 2}\n}\n',
            "scripts/train.sh": "deepspeed --num_gpus 8 train.py --deepspeed --deepspeed_config config/deepspeed.json\n"},
            N, "the same config in fp32"),
        Example({"ds_zeropp.json": '{\n  "zero_optimization": {\n    "stage": 3,\n    "zero_quantized_weights": true,\n    "zero_quantized_gradients": true\n  }\n}\n'}, U, "zero++"),
        Example(_SHIPPED_ONEBIT, P, "a 1-bit Adam DeepSpeed config that no config names, beside the one every run names"),
        Example({**_SHIPPED_ONEBIT, "configs/upernet_full_tuning.py": _SHIPPED_ONEBIT["configs/upernet_full_tuning.py"].replace(
            "adam_zero1_bf16.json", "adam_zero3_fp16.json")}, U, "a run's config names the 1-bit Adam config"),
        Example({"pretrain.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --bf16 --grad-reduce-in-bf16 --micro-batch-size 2\n"}, U, "megatron bf16 reduce"),
        Example({"ds.json": '{\n  "communication_data_type": "fp32",\n  "zero_optimization": {"stage": 2, "zero_quantized_gradients": false}\n}\n'}, N, "fp32 comm, qgZ off"),
        Example({"train.py": "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model)\n"
                 "# model.register_comm_hook(None, fp16_compress_hook)\n"}, N, "commented hook"),
        Example({"train.py": "import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision\n"
                 "mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16)\nmodel = FSDP(model, mixed_precision=mp)\n"}, P, "fsdp bf16 reduce"),
        Example({"train.py": "import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision\n"
                 "mp = MixedPrecision(param_dtype=torch.bfloat16)\nmodel = FSDP(model, mixed_precision=mp)\n"}, P,
                "no reduce_dtype: FSDP reduces in param_dtype (bf16)"),
        Example({"train.py": "import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision\n"
                 "mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)\nmodel = FSDP(model, mixed_precision=mp)\n"},
                N, "fp32 reduce"),
        Example(_FSDP_CONFIGURED_DTYPE, P, "param_dtype read from a parallel config whose default is bf16, no reduce_dtype"),
        Example({**_FSDP_CONFIGURED_DTYPE, "mylib/backend.py": _FSDP_CONFIGURED_DTYPE["mylib/backend.py"].replace(
            "torch.bfloat16", "torch.float32")}, N, "the config's param_dtype is fp32: nothing reduced in low precision"),
        Example(_lightning_fsdp("bf16-mixed"), P, "Lightning FSDPStrategy under bf16-mixed: its precision plugin reduces in bf16"),
        Example(_lightning_fsdp("32-true"), N, "Lightning FSDPStrategy in fp32: gradients reduced in fp32"),
        Example(_hf_fsdp("--bf16 True"), P, "HF Trainer --fsdp with --bf16: accelerate's FSDP policy reduces in bf16"),
        Example(_hf_fsdp("--tf32 True"), N, "HF Trainer --fsdp without a 16-bit precision"),
    )

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        prio = _no_comm_priority(self, ctx, outcome)
        if prio is not None and ctx.project.multi_node:
            return Priority.MEDIUM
        return prio

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list[tuple[Evidence, str]] = []
        partial: list[Evidence] = []
        off: list[Evidence] = []
        for c in f.calls("register_comm_hook"):
            hook = c.kwargs.get("hook", c.args[1] if len(c.args) > 1 else None)
            m = _HOOKS.search(_text(hook)) if hook is not None else None
            if m:
                used.append((f.ev(c, key="register_comm_hook(hook=)", value=_text(hook)), "powersgd" if "powersgd" in m.group(1).lower() else "low-precision"))
        for c in f.calls("DistributedDataParallelKwargs", "DDPStrategy"):
            hook = c.kwargs.get("comm_hook", c.kwargs.get("ddp_comm_hook"))
            if hook is not None and not _text(hook).endswith(".NO") and (_HOOKS.search(_text(hook)) or re.search(r"(FP16|BF16|POWER_SGD)$", _text(hook))):
                used.append((f.ev(c, key=f"{c.short}(comm_hook=)", value=_text(hook)), "powersgd" if "POWER" in _text(hook).upper() else "low-precision"))
        for r in f.refs("horovod.*"):
            if re.search(r"Compression\.fp16$", r.name):
                used.append((f.ev(r, key="Compression.fp16"), "low-precision"))
        for e in f.config("communication_data_type"):
            if isinstance(e.value, str) and _LOW.match(e.value.strip()):
                used.append((f.ev(e, key=e.dotted, value=e.value), "low-precision"))
            elif e.value is not None:
                off.append(f.ev(e, key=e.dotted, value=e.value))
        for e in f.config("optimizer.type"):
            if isinstance(e.value, str) and _ONEBIT.match(e.value.replace("_", "")):
                used.append((f.ev(e, key=e.dotted, value=e.value), "1-bit"))
        used += [(f.ev(c), "1-bit") for c in f.calls("OnebitAdam", "OnebitLamb", "ZeroOneAdam")]
        # (a Python config builder's ``if enable_mixed_precision_lora: zero_opt_dict["zero_quantized_nontrainable_weights"] =
        # True``, a parameter no caller passes (Yi's DeepSpeed-Chat copy): that branch never runs)
        for e in f.config("zero_quantized_weights", "zero_quantized_gradients", "zero_quantized_nontrainable_weights"):
            t = truthy(e.value)
            if t and e.guard and guard_off(f, e):
                continue
            if t:
                used.append((f.ev(e, key=e.dotted, value=e.value), "zero++"))
            elif t is False:
                off.append(f.ev(e, key=e.dotted, value=e.value))
        for e in f.config("zero_hpz_partition_size"):
            if e.guard and guard_off(f, e):
                continue
            if (as_number(e.value) or 0) > 1:
                used.append((f.ev(e, key=e.dotted, value=e.value), "zero++"))
        for s in f.effective("grad_reduce_in_bf16", "fp8_param_gather", "gradient_compression", "fp16_allreduce", "grad_compression"):
            if _switched_on(s):
                # (Megatron's ``--fp8-param-gather`` all-gathers the parameters in FP8, as ZeRO++'s quantized weights do;
                # the gradients are reduced as before)
                used.append((f.ev(s), "fp8 parameter all-gather" if s.name == "fp8_param_gather" else "low-precision"))
            elif truthy(s.value) is False and s.rank > 0:
                off.append(f.ev(s))
        for c in f.calls(*_COLOSSAL_OVERLAP, "GeminiPlugin"):
            v = c.kwargs.get("communication_dtype")
            if v is not None and re.search(r"(float16|bfloat16|half)$", _text(v)):
                used.append((f.ev(c, key=f"{c.short}(communication_dtype=)", value=_text(v)), "low-precision"))
        for c in f.calls("MixedPrecision", "MixedPrecisionPolicy"):
            v = c.kwargs.get("reduce_dtype")
            if v is not None and re.search(r"(float16|bfloat16|half)$", _text(v)):
                partial.append(f.ev(c, key=f"{c.short}(reduce_dtype=)", value=_text(v)))
            elif v is None and len(c.args) < 2 and not c.star_kwargs and c.name.startswith("torch.distributed"):
                # PyTorch: "If this is None but param_dtype is not None, then this takes on the param_dtype value, still
                # running gradient reduction in low precision" (FSDP1 MixedPrecision; FSDP2's MixedPrecisionPolicy alike)
                low = _low_param_dtype(f, c.kwargs.get("param_dtype", c.args[0] if c.args else None))
                if low:
                    partial.append(f.ev(c, key=f"{c.short}(param_dtype=)", value=f"{low} (no reduce_dtype: gradients reduced in it)"))
        if used:
            kinds = sorted({k for _, k in used})
            shipped = _unreferenced_config_ev(f, [e for e, _ in used])
            if shipped:
                # a DeepSpeed JSON that no launch, config or code names (InternVL's ``segmentation/zero_configs/
                # adam_zero3_fp16.json`` with ``ZeroOneAdam``, while every segmentation config names ``adam_zero1_bf16.json``)
                # is an option the project ships, not a run's setting; read as C4 reads a shipped offload config
                e0 = shipped[0]
                return Outcome(P, shipped, f"a config with gradient compression ({', '.join(kinds)}: {e0.key} = {e0.value} at "
                               f"{e0.path}:{e0.line}) is shipped, but no launch script, config or code uses it",
                               {"grad_compression": kinds, "grad_compression_config_used": False})
            what = "gradient communication compressed" if set(kinds) - {"fp8 parameter all-gather"} else \
                "parameter all-gathers compressed (gradients are reduced uncompressed)"
            return Outcome(U, [e for e, _ in used], f"{what} ({', '.join(kinds)})", {"grad_compression": kinds})
        # a data-parallel config class's reduce dtype, set per recipe (OLMo-core ``TransformerDataParallelConfig(...,
        # reduce_dtype=DType.bfloat16)`` in two MoE recipes, ``DType.float32`` in ~50 others)
        low_cfg: list[Any] = []
        high_cfg: list[Any] = []
        for c in f.calls_with_kw("reduce_dtype"):
            if c.short in ("MixedPrecision", "MixedPrecisionPolicy") or not c.short.endswith("Config") or _E3_TEST.search(c.path):
                continue
            t = _text(c.kwargs["reduce_dtype"])
            if re.search(r"(bfloat16|float16|half)$", t):
                low_cfg.append(c)
            elif re.search(r"float32$", t):
                high_cfg.append(c)
        if low_cfg and len(low_cfg) >= len(high_cfg):
            partial += [f.ev(c, key=f"{c.short}(reduce_dtype=)", value=_text(c.kwargs["reduce_dtype"])) for c in low_cfg]
        if partial:
            return Outcome(P, partial, "gradients reduced in bf16/fp16 through FSDP mixed precision; no compression hook", {"grad_compression": ["fsdp-reduce-dtype"]})
        ds_low = [] if off or not distributed_sites(ctx) else _deepspeed_half_comm(f)
        if ds_low:
            # DeepSpeed's engine: ``communication_data_type`` unset means fp16 when ``fp16.enabled``, bf16 when ``bf16.enabled``
            # (Baichuan-7B's and Skywork's configs): the gradient reduction already moves half the bytes of fp32
            e0 = ds_low[0]
            dtype = "fp16" if e0.keys[0] == "fp16" else "bf16"
            if len({e.keys[0] for e in ds_low}) > 1:  # launches that choose each (DB-GPT-Hub: ``--fp16`` in one, ``--bf16`` in another)
                dtype = "bf16/fp16"
            auto_flag = [s for s in _run_precision_flags(f, e0.keys[0]) if truthy(s.value) is True][:1] \
                if str(e0.value).strip().lower() == "auto" else []
            return Outcome(P, [f.ev(e, key=e.dotted, value=e.value) for e in ds_low[:3]] + [f.ev(s) for s in auto_flag],
                           f"gradients reduced in {dtype}: DeepSpeed communicates in the training precision when communication_data_type "
                           f"is unset ({e0.path}:{e0.line}"
                           + (f", `\"auto\"` filled from {auto_flag[0].name} = true at {auto_flag[0].path}:{auto_flag[0].line}" if auto_flag else "")
                           + "); no compression beyond it",
                           {"grad_compression": ["deepspeed-half"], "advice_for": "deepspeed-half"})
        framework = None if off else _framework_fsdp_low_reduce(f)
        if framework is not None:
            ev, how = framework
            return Outcome(P, ev, f"gradients reduced in {how}; no compression beyond it", {"grad_compression": ["fsdp-reduce-dtype"]})
        detail = "gradient compression explicitly off" if off else "gradients are communicated uncompressed"
        if low_cfg:
            c0 = low_cfg[0]
            detail += (f"; {len(low_cfg)} of {len(low_cfg) + len(high_cfg)} data-parallel configs reduce gradients in "
                       f"{_text(c0.kwargs['reduce_dtype']).rsplit('.', 1)[-1]} ({c0.path}:{c0.kw_line('reduce_dtype')}"
                       f"{f', +{len(low_cfg) - 1}' if len(low_cfg) > 1 else ''}), the others in float32")
        # (a DDP comm hook registered, even the plain all-reduce one, is data-parallel training wherever it is launched)
        if not off and not distributed_sites(ctx) and not f.calls("register_comm_hook"):
            if (doc := documented_run_note(f)) is not None:
                return Outcome(Status.NA, [f.ev(doc[0])], doc[1] + "check whether that run compresses its gradients (a DDP "
                               "comm hook, DeepSpeed `communication_data_type`, ZeRO++)", {"grad_compression": None})
            if _one_process_judged_here(ctx):
                return Outcome(Status.NA, [], ONE_PROCESS + "no gradient communication to compress", {"grad_compression": None})
            detail = "no distributed training found: no gradient communication to compress"
        return Outcome(N, off, detail, {"grad_compression": []})


_E3_TEST = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_test\.py$")


def _low_param_dtype(f: Facts, v: Any) -> str | None:
    """The 16-bit dtype a ``param_dtype`` argument names: a literal (``torch.bfloat16``), or an attribute or name whose every
    non-call setting in the project is one (``param_dtype=pc.param_dtype`` with ``param_dtype: torch.dtype = torch.bfloat16``
    as a config class's only default). None when it is unset, full precision or unknown."""
    if v is None:
        return None
    text = _text(v).strip()
    m = re.search(r"(bfloat16|float16|half)$", text)
    if m:
        return "bfloat16" if m.group(1) == "bfloat16" else "float16"
    name = re.fullmatch(r"(?:\w+\.)*(\w+)", text)
    if name is None:
        return None
    found: set[str] = set()
    for s in f.effective(name.group(1)):
        if s.source == "call":
            continue
        m = re.search(r"(bfloat16|float16|half)$", _text(s.value).strip())
        if m is None:
            return None
        found.add("bfloat16" if m.group(1) == "bfloat16" else "float16")
    return found.pop() if len(found) == 1 else None


# -- E4 ---------------------------------------------------------------------------------

#: NCCL_* names that are diagnostics, error handling or build paths, not performance tuning
_NOT_TUNING = {
    "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_ASYNC_ERROR_HANDLING", "NCCL_BLOCKING_WAIT", "NCCL_TIMEOUT",
    "NCCL_VERSION", "NCCL_HOME", "NCCL_ROOT", "NCCL_ROOT_DIR", "NCCL_DIR", "NCCL_LIBRARY", "NCCL_LIB_DIR", "NCCL_INCLUDE_DIR",
    "NCCL_INSTALL_DIR", "NCCL_VER", "NCCL_SET_THREAD_NAME", "NCCL_WARN_ENABLE_DEBUG_INFO", "NCCL_RAS_ENABLE",
}


#: an ``if`` that runs only where a hardware probe fails: ``not check_cuda_p2p_ib_support()``, ``not is_p2p_available()``
_CAPABILITY_PROBE = lazy_compile(r"\bnot\s+[\w.]*(support|available|capab)\w*\(", re.I)


#: memory settings of the collectives: how NCCL allocates its buffers (``NCCL_CUMEM_ENABLE=0``, which vLLM and weight-sync
#: engines set so that CUDA memory sharing works) and how PyTorch frees them (ms-swift ``TORCH_NCCL_AVOID_RECORD_STREAMS=1``):
#: neither a transport switch, a protocol, a tuning nor a diagnostic
_ALLOCATOR_COMPAT = frozenset({"NCCL_CUMEM_ENABLE", "NCCL_CUMEM_HOST_ENABLE", "TORCH_NCCL_AVOID_RECORD_STREAMS", "NCCL_GRAPH_REGISTER",
                               "NCCL_LOCAL_REGISTER"})


def _switches_off(e: Any) -> bool:
    """``NCCL_P2P_DISABLE=1`` and the like: a workaround that turns a fast transport off, not a tuning."""
    v = e.value.strip().strip("'\"")
    if e.name.endswith("_DISABLE") or e.name == "NCCL_IGNORE_DISABLED_P2P":
        # (FinGPT ``NCCL_IGNORE_DISABLED_P2P=1``: carry on without the P2P transport a consumer GPU's driver disables)
        return truthy(v) is True
    if e.name.endswith("_ENABLE"):
        return truthy(v) is False
    return e.name in {"NCCL_P2P_LEVEL", "NCCL_NET_GDR_LEVEL", "NCCL_SHM_USE_CUDA_MEMCPY"} and v.upper() in {"LOC", "0"}


#: a runner that launches its trainer with torchx's DDP component and hands it an environment built key by key
_TORCHX_ENV = ("from torchx.components.dist import ddp\n\n\ndef make_app(nodes, nproc):\n    env = {{}}\n"
               "    env[\"{var}\"] = \"{value}\"\n    env[\"LOGLEVEL\"] = \"INFO\"\n"
               "    return ddp(\"--training.steps=1000\", script=\"train.py\", j=f\"{{nodes}}x{{nproc}}\", env=env)\n")


def _simple_protocol_only(e: Any) -> bool:
    """``NCCL_PROTO=Simple``: NCCL restricted to its slowest protocol (no LL/LL128). NCCL's documentation discourages setting
    the variable except to rule a protocol out when a bug is suspected: a debugging workaround, not a tuning."""
    if e.name != "NCCL_PROTO":
        return False
    protos = {x.strip().lower() for x in e.value.strip().strip("'\"").split(",") if x.strip()}
    return protos == {"simple"}


@register
class E4NCCLTuning(Check):
    id = "E4"
    title = "NCCL tuning"
    title_zh = "NCCL 调优"
    bottlenecks = (Bottleneck.COMMUNICATION,)
    priority = Priority.LOW
    benefit = "collectives matched to the cluster's NICs and topology (right HCAs/interfaces, P2P level, algorithms)"
    what = (
        "Whether NCCL environment variables are set for the cluster's topology: `NCCL_IB_HCA`, `NCCL_SOCKET_IFNAME`, "
        "`NCCL_P2P_LEVEL`, `NCCL_ALGO`, `NCCL_PROTO`, `NCCL_BUFFSIZE`, `NCCL_MIN_NCHANNELS`, `NCCL_IB_DISABLE`... from shell "
        "exports, Dockerfile `ENV`, YAML env lists or `os.environ`. `NCCL_DEBUG`, `NCCL_ASYNC_ERROR_HANDLING` and "
        "`TORCH_NCCL_*` are diagnostics/error handling, not tuning."
    )
    why = (
        "NCCL's defaults are usually right on well-configured DGX-like nodes, but on heterogeneous clusters a wrong "
        "interface (`NCCL_SOCKET_IFNAME` picking a slow management NIC), unbound HCAs or disabled P2P can cost 2x or "
        "more in all-reduce bandwidth (nccl-tests busbw); the seed ranks this low priority (<10 %) once the basics "
        "(RDMA, overlap) are in place."
    )
    fix = (
        "Bind NCCL to the fast fabric (`NCCL_IB_HCA`, `NCCL_SOCKET_IFNAME`), keep P2P on within a node, and measure with "
        "nccl-tests before and after changing `NCCL_ALGO`/`NCCL_PROTO`/`NCCL_MIN_NCHANNELS`; keep the values in the "
        "launch script so every run uses them."
    )
    fix_zh = (
        "将 NCCL 绑定到高速网络（`NCCL_IB_HCA`、`NCCL_SOCKET_IFNAME`），节点内保持 P2P 开启；修改 `NCCL_ALGO`/`NCCL_PROTO`/"
        "`NCCL_MIN_NCHANNELS` 前后用 nccl-tests 实测，并把取值固化在启动脚本中。"
    )
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html", "https://github.com/NVIDIA/nccl-tests")
    snippets = {
        "shell": "export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3\nexport NCCL_SOCKET_IFNAME=ib0\nexport NCCL_MIN_NCHANNELS=16\n",
    }
    examples = (
        Example({"run.sh": "export NCCL_SOCKET_IFNAME=eth0\nexport NCCL_IB_HCA=mlx5_0,mlx5_1\ntorchrun --nproc_per_node 8 train.py\n"}, U, "shell exports"),
        Example({"k8s/job.yaml": "spec:\n  containers:\n  - name: trainer\n    env:\n    - name: NCCL_ALGO\n      value: Ring\n    - name: NCCL_DEBUG\n      value: WARN\n"}, U, "k8s env list"),
        Example({"train.py": "import os\nos.environ['NCCL_P2P_LEVEL'] = 'NVL'\n"}, U, "os.environ"),
        Example({"run.sh": "export NCCL_DEBUG=INFO\nexport TORCH_NCCL_ASYNC_ERROR_HANDLING=1\ntorchrun --nproc_per_node 8 train.py\n"}, N, "debug only"),
        Example({"run.sh": "# export NCCL_IB_HCA=mlx5_0\ntorchrun --nproc_per_node 8 train.py\n"}, N, "commented out"),
        Example({"Dockerfile": "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nENV NCCL_VERSION=2.18.1\n"}, N, "nccl version in image"),
        Example({  # Megatron-LM: only the inference examples and the text-generation server tune NCCL
            "examples/inference/advanced/run_prefix_cache_repro.sh": (
                "export NCCL_ALGO=Ring\ntorchrun --nproc_per_node 8 examples/inference/gpt/gpt_dynamic_inference.py --load $CKPT\n"),
            "examples/mamba/run_text_gen_server_8b.sh": (
                "export NCCL_IB_SL=1\nexport NCCL_IB_TIMEOUT=19\ntorchrun --nproc_per_node 1 tools/run_text_generation_server.py --load $CKPT\n"),
            "examples/gpt3/train_gpt3.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --bf16 --data-path $DATA\n",
            "pretrain_gpt.py": "import torch\nloss.backward()\n"}, N, "NCCL tuned only by serving and inference launches"),
        Example({
            "examples/mamba/run_text_gen_server_8b.sh": "export NCCL_IB_SL=1\ntorchrun --nproc_per_node 1 tools/run_text_generation_server.py\n",
            "examples/mamba/train.sh": "export NCCL_IB_SL=1\nexport NCCL_IB_TIMEOUT=19\ntorchrun --nproc_per_node 8 pretrain_mamba.py --bf16\n",
            "pretrain_mamba.py": "import torch\nloss.backward()\n"}, U, "the same variables exported by the training launch too"),
        Example({"finetune.sh": "export NCCL_P2P_DISABLE=1\nexport NCCL_IB_DISABLE=1\naccelerate launch --num_processes 4 train.py\n"}, P, "transports switched off only"),
        Example({"train.sh": "export NCCL_IGNORE_DISABLED_P2P=1\n\ndeepspeed --include localhost:2,3 train_lora.py --ds_config config.json\n"},
                P, "FinGPT: going on without the P2P transport a consumer GPU's driver disables is a workaround, not a tuning"),
        Example({"mylib/distributed/utils.py": _INIT_DISTRIBUTED.format(extra='        set_env_var("NCCL_IB_HCA", "^=mlx5_bond_0")\n')},
                U, "a project helper set_env_var(name, value)"),
        Example({"mylib/distributed/utils.py": _INIT_DISTRIBUTED.format(extra="")}, N, "the helper sets only TORCH_NCCL_* error handling"),
        Example({"run.sh": "export NCCL_DEBUG=INFO\nexport NCCL_PROTO=Simple\ntorchrun --nproc_per_node 8 train.py\n"}, N,
                "NCCL_PROTO=Simple beside NCCL_DEBUG: the slowest protocol forced while debugging"),
        Example({"run.sh": "export NCCL_PROTO=Simple,LL128\nexport NCCL_ALGO=Ring,Tree\ntorchrun --nproc_per_node 8 train.py\n"}, U,
                "protocols and algorithms chosen for the cluster"),
        Example({"launch/runner.py": _TORCHX_ENV.format(var="NCCL_SOCKET_IFNAME", value="ib0")}, U,
                "the environment a Python runner hands to torchx's ddp component"),
        Example({"launch/runner.py": _TORCHX_ENV.format(var="NCCL_DEBUG", value="INFO")}, N, "the same runner setting only NCCL_DEBUG"),
        Example({"src/mylib/utils/trainer.py": (  # axolotl 0.13 prepare_optim_env
            "import os\n\nfrom mylib.utils.distributed import check_cuda_p2p_ib_support\n\n\ndef prepare_optim_env(cfg):\n"
            "    if not check_cuda_p2p_ib_support():\n        if os.getenv(\"NCCL_P2P_DISABLE\") is None:\n"
            "            os.environ[\"NCCL_P2P_DISABLE\"] = \"1\"\n    if cfg.deepspeed:\n"
            "        os.environ[\"ACCELERATE_USE_DEEPSPEED\"] = \"true\"\n")}, N,
                "P2P switched off only where a probe finds it unsupported: a fallback, not a tuning"),
        Example({"inference.py": ONE_GPU_INFERENCE}, NA, "inference only, on one GPU: no collective to tune"),
        Example({"inference.py": SPREAD_INFERENCE}, NA,
                "inference only, a 70B model spread over the GPUs of one process by device_map: device copies, no NCCL"),
        Example({"inference.py": SPREAD_INFERENCE.replace("import torch\n", "import torch\nimport deepspeed\n", 1) + (
            "model = deepspeed.init_inference(model, mp_size=4, dtype=torch.float16)\n")}, N,
                "the same model under DeepSpeed-Inference with mp_size=4: its tensor-parallel ranks run collectives"),
        Example({"run.sh": "torchrun --nproc_per_node 8 generate.py --compile\n", "generate.py": ONE_GPU_INFERENCE}, N,
                "8-process generation"),
    )

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        return _no_comm_priority(self, ctx, outcome)

    def detect(self, ctx: Context) -> Outcome:
        out = self._detect(ctx)
        if out.status == N and (reason := one_gpu_generation(ctx) or (not out.evidence and one_process_generation(ctx))):
            return Outcome(Status.NA, detail=reason)
        if out.status == N and not out.evidence and ctx.project.does_training and not distributed_sites(ctx) \
                and documented_run_note(ctx.facts) is None and _one_process_judged_here(ctx):
            return Outcome(Status.NA, detail=ONE_PROCESS + "no collective to tune")
        return out

    def _detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        compat = [e for e in _training_envs(f, "NCCL_", "TORCH_NCCL_") if e.name in _ALLOCATOR_COMPAT]
        tuning = [e for e in _training_envs(f, "NCCL_") if e.name not in _NOT_TUNING and e.name not in _ALLOCATOR_COMPAT
                  and (e.value.strip() or e.source == "python") and not _simple_protocol_only(e)]
        # a transport switched off only where a probe finds no support for it (axolotl ``if not check_cuda_p2p_ib_support():
        # os.environ["NCCL_P2P_DISABLE"] = "1"``): a fallback for such machines, neither a tuning nor a finding
        fallback = [e for e in tuning if _switches_off(e) and _CAPABILITY_PROBE.search(getattr(e, "guard", None) or "")]
        tuning = [e for e in tuning if e not in fallback]
        fb_note = ("; " + ", ".join(f"{e.name}={e.value.strip()} at {e.path}:{e.line}" for e in fallback[:2])
                   + " only as a fallback where a probe finds the transport unsupported") if fallback else ""
        diag = [e for e in _training_envs(f, "NCCL_", "TORCH_NCCL_") if e not in tuning and e not in fallback and e not in compat
                and e.name not in {"NCCL_VERSION", "NCCL_HOME", "NCCL_ROOT"}]
        if compat and not diag and not tuning:
            c = compat[0]
            fb_note += (f"; {c.name}={c.value.strip()} at {c.path}:{c.line} is a memory setting of the collectives (how their "
                        "buffers are allocated and freed), neither a transport nor a tuning")
        names = sorted({e.name for e in tuning})
        findings: list[Evidence] = []
        for e in tuning:
            v = e.value.strip().strip("'\"")
            if e.name == "NCCL_P2P_DISABLE" and truthy(v):
                findings.append(Facts.ev(e, key=e.name, value=v))
            elif e.name == "NCCL_IB_DISABLE" and truthy(v) and ctx.project.multi_node:
                findings.append(Facts.ev(e, key=e.name, value=v))
        if tuning:
            ev = [Facts.ev(e, key=e.name, value=e.value) for e in tuning]
            if all(_switches_off(e) for e in tuning):
                return Outcome(P, ev, f"NCCL is configured only to switch transports off ({', '.join(names[:4])}), not tuned{fb_note}",
                               {"nccl_vars": names}, findings)
            detail = f"NCCL tuned through {', '.join(names[:6])}"
            if findings:
                detail += "; note: P2P/IB transports switched off"
            return Outcome(U, ev, detail + fb_note, {"nccl_vars": names}, findings)
        if diag:
            simple = [e for e in diag if _simple_protocol_only(e)]
            note = (f"; NCCL_PROTO={simple[0].value} ({simple[0].path}:{simple[0].line}) restricts NCCL to its Simple protocol, a "
                    "workaround for a suspected protocol bug, not a tuning") if simple else ""
            return Outcome(N, [Facts.ev(e, key=e.name, value=e.value) for e in diag], "only NCCL diagnostics/error handling set (no tuning)" + note
                           + fb_note, {"nccl_vars": []})
        if fallback or compat:
            return Outcome(N, [Facts.ev(e, key=e.name, value=e.value) for e in fallback or compat], "no NCCL tuning" + fb_note,
                           {"nccl_vars": []})
        return Outcome(N, [], "no NCCL environment variables set", {"nccl_vars": []})
