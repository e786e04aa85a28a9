"""A. Parallelism (并行策略): A1-A7.

The detection helpers at the top (launch sizes, FSDP sites, ZeRO sites, parallel sizes) are
also what ``b_frameworks`` reads: a framework "drives training" exactly when these sites exist.

Decisions documented here:

* A1 counts any multi-process data-parallel launch or wrapper as data parallelism, including
  FSDP and ZeRO (both are data parallel with sharded state). ``torch.nn.DataParallel`` alone is
  ``partial`` (single process, one Python thread drives every GPU). Launchers that default to
  all visible GPUs (``deepspeed`` without ``--num_gpus``, ``accelerate launch`` without a config,
  ``llamafactory-cli``/``axolotl``) count as multi-GPU; ``torchrun`` without
  ``--nproc_per_node`` starts one process (its default) and a plain ``python train.py`` is single.
* A2 ``NO_SHARD`` (or HF ``fsdp: no_shard``) is ``partial``: the FSDP machinery is wired but it
  shards nothing, so it behaves like DDP; one word turns sharding on.
* A3 ``zero_optimization.stage: 0`` is not use; a DeepSpeed config that is referenced but not in
  the repository (stage invisible) is ``partial`` unless its file name states the stage
  (``ds_z3.json``). Megatron's distributed optimizer and ``ZeroRedundancyOptimizer`` shard
  optimizer states as ZeRO-1 does, and count as stage 1.
* A4-A7 judge sizes (``> 1`` is use, ``1`` is the disabled value); settings that belong to an
  inference engine (vLLM/SGLang rollout, ``LLM(tensor_parallel_size=)``) are not training
  parallelism and are ignored.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..base import Check, Context, register
from ..facts import Call, ConfigEntry, Container, Expr, Facts, Launch, Setting, as_number, truthy
from ..lazyre import lazy_compile
from ..model import Bottleneck, Example, FixSafety, Outcome, Priority, Status
from ..project import checkpoint_tool
from . import _bmtrain as bmtrain
from ._helpers import (
    DRIVER_GPU_KEYS as _DRIVER_GPU_KEYS,
)
from ._helpers import (
    DRIVER_NODE_KEYS as _DRIVER_NODE_KEYS,
)
from ._helpers import (
    DS_CONSUMERS as _DS_CONSUMERS,
)
from ._helpers import (
    DS_REF_NAMES,
    HF_TRAINERS,
    backend_unselected,
    callers_off,
    guard_off,
    keyword_choices,
    on,
    orphan_sites,
    parse_expr,
    resolve_file,
    switched_off_ds_dicts,
    trainer_copy_off,
    uncalled_function,
    unlaunched_ds_configs,
    unreached_note,
    uses_hf_trainer,
)
from ._helpers import (
    INFERENCE_PATH as _INFERENCE_PATH,
)
from ._registry import debug_recipe, recipe_of

U, P, N, NA = Status.USED, Status.PARTIAL, Status.UNUSED, Status.NA

# --------------------------------------------------------------------------------------------
# shared detection helpers
# --------------------------------------------------------------------------------------------

_LIGHTNING = ("lightning", "pytorch_lightning", "lightning_fabric")
# a key path component that belongs to an inference engine (``actor_rollout_ref.rollout.tensor_model_parallel_size``,
# ``vllm_tensor_parallel_size``); ``actor_rollout_ref.actor`` is the training side
_INFERENCE_KEY = lazy_compile(r"(^|[.(-])(vllm|sglang|rollout|inference|infer|serving|serve|generation|generate|lmdeploy|tgi)", re.I)
_INFERENCE_CALL = lazy_compile(r"^(LLM|AsyncLLMEngine|LLMEngine|EngineArgs|AsyncEngineArgs|SamplingParams|init_inference|launch_server|ServerArgs|Engine)\(")
_TEST_PATH = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_test\.py$", re.I)


def calls_under(facts: Facts, *modules: str) -> list[Call]:
    """Calls resolved into ``modules`` (``megatron.core...``); skips the scan of every call when nothing imports them."""
    out: list[Call] = []
    for m in modules:
        if facts.imports(m):
            out += [c for c in facts.calls(f"{m}.*") if c.name.startswith(m + ".")]
    return out


def is_lightning(c: Call) -> bool:
    return c.name.startswith(_LIGHTNING)


def lightning_imported(facts: Facts) -> bool:
    """The project imports Lightning: only then is a config's ``trainer.strategy``/``trainer.devices`` a LightningCLI
    Trainer setting (a Hydra ``trainer.strategy: fsdp2`` picks a project's own backend)."""
    return any(i.module.split(".", 1)[0] in _LIGHTNING for i in facts.imports(*_LIGHTNING))


_SUBMITTED_ENGINE = lazy_compile(r"\s--\s+(\S*python\S*\s+-m\s+)?(vllm|sglang|lmdeploy|trtllm[-\w]*|text-generation-launcher|tritonserver)\b")


_ENGINE_MODULE = lazy_compile(r"(?:^|\s)-m\s+(?:vllm|sglang|lmdeploy)\.[\w.]+|(?:^|\s)vllm\s+serve\b")


#: a script named for evaluation or generation (``eval_math.py``, ``inference.py``, ``generate_responses.py``; not
#: Pai-Megatron-Patch's ``chatlearn_entrypoint.py``, which trains with ChatLearn)
_EVAL_SCRIPT = lazy_compile(r"^(eval|evaluate|evaluation|infer|inference|generate|generation|serve|server|serving|bench|benchmark|predict)"
                            r"(_\w+)?\.py$|^\w+_(eval|evaluate|evaluation|infer|inference|generate|generation|predict)\.py$", re.I)


def inference_setting(s: Setting) -> bool:
    """A setting of an inference engine (vLLM/SGLang rollout, ``LLM(...)``), not of training parallelism."""
    if _INFERENCE_KEY.search(s.key) or _INFERENCE_KEY.search(s.name):
        return True
    if s.source == "call" and _INFERENCE_CALL.match(s.key):
        return True
    # what the command runs (``python -m vllm.entrypoints.openai.api_server``, ``vllm serve``), not any of its flags: an RL
    # trainer's command also passes its rollout engine's ``--vllm.num_engines`` (OpenRLHF), and its ``--ds.zero_stage`` trains
    if s.source == "launcher" and re.search(r"\b(vllm|sglang|lmdeploy|trtllm[-\w]*|text-generation-launcher|tritonserver)\b|api_server|launch_server",
                                            f"{s.text.split(' --', 1)[0]} {s.script or ''}"):
        return True
    # ... behind an environment runner whose own options come first (GPT-NeoX ``conda run --no-capture-output -n vllm python -m
    # vllm.entrypoints.openai.api_server ... --tensor-parallel-size=4``, the rollout server of its online RL example)
    if s.source == "launcher" and _ENGINE_MODULE.search(s.text):
        return True
    # the same behind a job submitter (open-r1 ``ray job submit --no-wait -- vllm serve "$MODEL_PATH" --tensor-parallel-size 8``)
    if s.source == "launcher" and _SUBMITTED_ENGINE.search(s.text):
        return True
    # ... or an evaluation or generation script the same launch file runs after training (Step-DPO's ``python eval_math.py
    # --model outputs/$output_dir ... --tensor_parallel_size 4``, vLLM over the trained checkpoint)
    if s.source == "launcher" and s.script and _EVAL_SCRIPT.match(s.script.rsplit("/", 1)[-1]):
        return True
    return bool(_INFERENCE_PATH.search(s.path))


#: arguments only an inference engine's config takes (vLLM/SGLang engine args)
_ENGINE_ARGS = frozenset({"max_model_len", "max_num_seqs", "gpu_memory_utilization", "enforce_eager", "max_num_batched_tokens",
                          "swap_space", "kv_cache_dtype", "mem_fraction_static"})


def _engine_section(facts: Facts, s: Setting) -> bool:
    """A size in a config section beside an inference engine's own arguments (llama-cookbook's structured parser:
    ``model: {tensor_parallel_size: 4, max_model_len: 32000, max_num_seqs: 32}`` for offline vLLM): the engine's layout."""
    if s.source != "config" or s.path not in facts.files:
        return False
    parent = tuple(s.key.split(".")[:-1])
    return any(tuple(str(k) for k in e.keys[:-1]) == parent and str(e.keys[-1]) in _ENGINE_ARGS
               for e in facts.files[s.path].configs if e.keys)


_ENGINE_MODULES = frozenset({"vllm", "sglang", "lmdeploy", "tensorrt_llm"})


def _engine_module(facts: Facts, s: Setting) -> bool:
    """A size set in a Python module that drives an inference engine and trains nothing (Qwen ``examples/vllm_wrapper.py``:
    ``tensor_parallel_size = 2`` under ``__main__``, passed to its own wrapper around ``vllm.LLM``): the engine's layout.
    Also a launch flag of such a module (HALOs ``python -m train.sample $CKPT --gpu_count 4``, which
    ``train/sample.py`` hands to ``LLM(tensor_parallel_size=args.gpu_count)``)."""
    path = s.path
    if s.source == "launcher" and getattr(s, "script", None):
        script = str(s.script)
        path = next((p for p in (script, script.replace(".", "/") + ".py") if p in facts.files), path)
    ff = facts.files.get(path)
    if ff is None or ff.kind != "python" or not any(i.module.split(".")[0] in _ENGINE_MODULES for i in ff.imports):
        return False
    return not any(c.short == "backward" or c.short.endswith("Trainer") for c in ff.calls)


#: a size that is the number of GPUs the process sees, whatever it is (:func:`_sizes`)
VISIBLE_GPUS = -2.0
_VISIBLE_COUNT = lazy_compile(r"^(torch\.cuda\.device_count|torch\.accelerator\.device_count)\(\)$")


def _sizes(facts: Facts, names: Iterable[str], extra: Iterable[ConfigEntry] = (), inference: bool = False) -> list[tuple[float, Any]]:
    """(size, fact) for every parallelism size setting of ``names``; -1 means 'all remaining ranks'.

    Inference-engine settings (vLLM/SGLang, rollout workers) are skipped unless ``inference`` is set:
    for a project that does not train, the engine's layout is the project's parallelism.
    """
    out: list[tuple[float, Any]] = []
    for s in facts.effective(*names):
        if (not inference and (inference_setting(s) or _engine_section(facts, s) or _engine_module(facts, s))) \
                or _TEST_PATH.search(s.path):
            continue
        if s.source == "call" and debug_recipe(facts, s):
            continue  # a debug recipe of a Python config registry (``qwen35_debugmodel_moe``) is not the training setting
        if checkpoint_tool(facts, s):
            continue  # a converter's or a merger's layout is the checkpoint's (``--target-tensor-parallel-size 8``), not a run's
        n = as_number(s.value)
        if n is None and isinstance(s.value, Expr) and _VISIBLE_COUNT.match(s.value.text.strip()):
            # every GPU the process sees (UltraFeedback ``LLM(..., tensor_parallel_size=torch.cuda.device_count())``)
            out.append((VISIBLE_GPUS, s))
            continue
        if n is None and isinstance(s.value, Expr) and s.value.ref:
            for r in facts.effective(s.value.ref):  # the setting a keyword reads, under the same rules
                if (not inference and inference_setting(r)) or _TEST_PATH.search(r.path):
                    continue
                if (m := as_number(r.value)) is not None:
                    out.append((m, r))
            continue
        if n is not None:
            out.append((n, s))
    for e in extra:
        n = as_number(e.value)
        if n is not None and not _TEST_PATH.search(e.path):
            out.append((n, e))
    return out


def size_value(n: float) -> int:
    return int(n)


# -- launches ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LaunchSize:
    """How many processes a launch starts: ``multi`` True/False, or None for 'all visible GPUs'."""

    launch: Launch
    multi: bool | None
    procs: int | None
    nodes: int | None
    reason: str


def _count(v: Any) -> int | None:
    """A process/node count from a flag value: ``8``, ``"8"``, ``"1:4"`` (elastic range), ``"gpu"``."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, str) and ":" in v and not v.startswith("$"):
        v = v.split(":")[-1]
    n = as_number(v)
    return int(n) if n is not None else None


def _visible_devices(launch: Launch) -> int | None:
    v = launch.env.get("CUDA_VISIBLE_DEVICES") or launch.env.get("ASCEND_RT_VISIBLE_DEVICES")
    if not v or "$" in v:
        return None
    return len([x for x in v.split(",") if x.strip()])


def _include_count(spec: str) -> int | None:
    """GPUs named by deepspeed ``--include localhost:0,1``; None for a placeholder in place of the list (GeoChat's
    ``--include localhost:gpu_ids``, filled in by the user) or a host without one."""
    total = 0
    for host in spec.split("@"):
        _, _, slots = host.partition(":")
        ids = [x.strip() for x in slots.split(",") if x.strip()]
        if not ids or not all(x.isdigit() for x in ids):
            return None
        total += len(ids)
    return total or None


def accelerate_file_settings(facts: Facts, ref: str | None) -> dict[str, ConfigEntry]:
    """Top-level keys of the accelerate config that ``--config_file`` names (when it is in the repository)."""
    if not ref or not isinstance(ref, str):
        return {}
    path = resolve_file(facts, ref)
    if path is None:
        return {}
    return {str(e.keys[0]): e for e in facts.files[path].configs if len(e.keys) == 1}


#: a placeholder for a count the reader fills in (``{num_gpus}``, ``<NUM_GPUS>``, ``[gpus]``, ``NUM_GPUS``)
_PLACEHOLDER_COUNT = lazy_compile(r"^(\{\s*\w+\s*\}|<\s*\w+\s*>|\[\s*\w+\s*\]|[A-Z][A-Z0-9_]*|\w*gpus?\w*)$", re.I)


def launch_size(facts: Facts, launch: Launch) -> LaunchSize | None:
    """The process layout of a launcher command; None for launches that are not training launchers."""
    la, sa = launch.launcher_args, launch.script_args
    nodes = _count(la.get("nnodes", la.get("num_nodes", la.get("num_machines"))))
    vis = _visible_devices(launch)
    kind = launch.launcher
    if kind in ("torchrun", "colossalai"):
        raw = la.get("nproc_per_node")
        if isinstance(raw, str) and raw.lower() in {"gpu", "auto", "cuda", "xpu", "npu"}:
            return LaunchSize(launch, True, None, nodes, f"--nproc_per_node {raw}")
        if isinstance(raw, str) and ("$" in raw or (_count(raw) is None and _PLACEHOLDER_COUNT.match(raw.strip()))):
            # (also a documented command's placeholder for the reader's GPU count: Firefly-LLaMA2-Chinese's README
            # ``torchrun --nproc_per_node={num_gpus} train.py ...``)
            return LaunchSize(launch, None, None, nodes, f"--nproc_per_node {raw}")
        procs = _count(raw) if raw is not None else 1
        multi = (procs or 1) > 1 or (nodes or 1) > 1
        return LaunchSize(launch, multi, procs, nodes, f"--nproc_per_node {raw}" if raw is not None else "torchrun default: one process")
    if kind == "deepspeed":
        if "num_gpus" in la or "num_gpus_per_node" in la:
            procs = _count(la.get("num_gpus", la.get("num_gpus_per_node")))
        elif isinstance(la.get("include"), str):
            procs = _include_count(la["include"])
        else:
            procs = None
        multi = None if procs is None else (procs > 1 or (nodes or 1) > 1)
        if "hostfile" in la or (nodes or 1) > 1:
            multi = True
        inc = la.get("include")
        shown = f" --num_gpus {procs}" if procs else f" --include {inc}" if isinstance(inc, str) and inc else " (all visible GPUs)"
        return LaunchSize(launch, multi, procs, nodes, "deepspeed launcher" + shown)
    if kind == "accelerate":
        cfg = accelerate_file_settings(facts, la.get("config_file"))
        procs = _count(la.get("num_processes"))
        if procs is None and "num_processes" in cfg:
            procs = _count(cfg["num_processes"].value)
        nodes = nodes or (_count(cfg["num_machines"].value) if "num_machines" in cfg else None)
        dtype = str(la.get("distributed_type") or (cfg["distributed_type"].value if "distributed_type" in cfg else "")).upper()
        if la.get("multi_gpu") is True or la.get("use_fsdp") is True or la.get("use_deepspeed") is True:
            multi: bool | None = procs is None or procs > 1 or (nodes or 1) > 1
        elif dtype in {"NO", "XLA", "TPU"} and procs in (None, 1):
            multi = False
        elif procs is not None:
            multi = procs > 1 or (nodes or 1) > 1
        else:
            multi = None if not dtype else dtype != "NO"
        return LaunchSize(launch, multi, procs, nodes, "accelerate launch" + (f" --num_processes {procs}" if procs else ""))
    if kind == "torchtune":
        procs = _count(sa.get("nproc_per_node"))
        if procs is None:
            return LaunchSize(launch, False, 1, nodes, "tune run without --nproc_per_node")
        return LaunchSize(launch, procs > 1, procs, nodes, f"tune run --nproc_per_node {procs}")
    if kind in ("llamafactory", "axolotl"):
        if vis is not None:
            return LaunchSize(launch, vis > 1, vis, nodes, f"CUDA_VISIBLE_DEVICES with {vis} device(s)")
        n = _count(launch.env.get("NPROC_PER_NODE"))
        if n is not None:
            return LaunchSize(launch, n > 1, n, nodes, f"NPROC_PER_NODE={n}")
        return LaunchSize(launch, None, None, nodes, f"{kind} (all visible GPUs)")
    if kind == "swift":
        # ms-swift starts torchrun itself when NPROC_PER_NODE is set (NNODES for nodes); without it one process runs,
        # spreading a model too large for one GPU over the visible ones with device_map
        n = _count(launch.env.get("NPROC_PER_NODE"))
        nodes = nodes or _count(launch.env.get("NNODES"))
        if n is not None:
            return LaunchSize(launch, n > 1 or (nodes or 1) > 1, n, nodes, f"swift with NPROC_PER_NODE={n}")
        if isinstance(launch.env.get("NPROC_PER_NODE"), str):
            return LaunchSize(launch, None, None, nodes, f"swift with NPROC_PER_NODE={launch.env['NPROC_PER_NODE']}")
        return LaunchSize(launch, False, 1, nodes, "swift without NPROC_PER_NODE: one process")
    if kind == "composer":
        procs = _count(la.get("n", la.get("nproc")))
        return LaunchSize(launch, None if procs is None else procs > 1, procs, nodes, "composer launcher")
    if kind == "python":
        if "srun" in launch.wrappers or "mpirun" in launch.wrappers or "mpiexec" in launch.wrappers:
            return LaunchSize(launch, None, None, nodes, f"{launch.wrappers[0]} python")
        # a driver that places its own workers (Ray): the GPUs come from the run's arguments (slime ``ray job submit --
        # python3 train.py --actor-num-gpus-per-node 8``, verl ``trainer.n_gpus_per_node=8 trainer.nnodes=2``)
        own = {k.rsplit(".", 1)[-1]: (k, v) for k, v in sa.items()}
        g_key = next((k for k in _DRIVER_GPU_KEYS if k in own), None)
        if g_key is not None:
            gpus = _count(own[g_key][1])
            n_key = next((k for k in _DRIVER_NODE_KEYS if k in own), None)
            n = _count(own[n_key][1]) if n_key else None
            if gpus is None:
                return LaunchSize(launch, None, None, n, f"{own[g_key][0]} {own[g_key][1]}")
            return LaunchSize(launch, gpus * (n or 1) > 1, gpus, n, f"{own[g_key][0]} {own[g_key][1]}"
                              + (f", {own[n_key][0]} {own[n_key][1]}" if n_key else ""))
        if "ray" in launch.wrappers:
            return LaunchSize(launch, None, None, None, "ray job")
        ranks = _side_by_side_ranks(facts, launch)
        if ranks > 1:
            return LaunchSize(launch, True, ranks, None, f"{ranks} python processes of {launch.script} started side by side, one per --rank")
        return LaunchSize(launch, False, 1, None, "single python process")
    return None


_RANK_ARGS = ("rank", "local_rank", "global_rank", "process_rank")


def _side_by_side_ranks(facts: Facts, launch: Launch) -> int:
    """How many python launches of the same script the launch's file starts with distinct ``--rank`` values (OpenChatKit:
    ``python dist_clm_train.py $ARGS --cuda-id 0 --rank 0 & ... --rank 7 & wait``): a run of that many processes that
    join one process group by rank, as a launcher would start them. 0 when the launch passes no rank."""
    mine = next((str(launch.script_args[k]) for k in launch.script_args if str(k).replace("-", "_") in _RANK_ARGS), None)
    if mine is None:
        return 0
    ranks = set()
    for x in facts.files[launch.path].launches if launch.path in facts.files else ():
        if x.launcher == "python" and x.script == launch.script:
            ranks |= {str(x.script_args[k]) for k in x.script_args if str(k).replace("-", "_") in _RANK_ARGS}
    return len(ranks)


_GENERATION_CALLS = ("generate", "chat_completion", "text_completion", "generate_until", "run_server", "serve")
_TRAINING_CALLS = ("backward", "train", "fit", "pretrain", "step", "training_step", "run_exp", "train_model", "finetune")


def inference_script(facts: Facts, launch: Launch) -> bool:
    """A launched script of the repository that generates and never trains (``torchrun example_chat_completion.py``)."""
    path = resolve_file(facts, launch.script) if launch.script and launch.script.endswith(".py") else None
    if path is None:
        return False
    gen = [c for c in facts.calls(*_GENERATION_CALLS) if c.path == path] or [c for c in calls_under(facts, "vllm", "sglang") if c.path == path]
    train = [c for c in facts.calls(*_TRAINING_CALLS) if c.path == path]
    return bool(gen) and not train


def launch_sizes(facts: Facts) -> list[LaunchSize]:
    out = []
    for launch in facts.launches():
        if _TEST_PATH.search(launch.path) or _INFERENCE_PATH.search(launch.script or "") or (
                _INFERENCE_PATH.search(launch.path) and not _training_benchmark(facts, launch)):
            continue  # tests, evaluation and serving launches say nothing about training
        if inference_script(facts, launch):
            continue
        ls = launch_size(facts, launch)
        if ls is not None:
            out.append(ls)
    return out


_BENCH_DIR = lazy_compile(r"(^|/)bench\w*/", re.I)


def _training_benchmark(facts: Facts, launch: Launch) -> bool:
    """A launch in a folder named for the paper's benchmark runs (GaLore ``scripts/benchmark_c4/llama_1b.sh``: pre-training
    LLaMA-1B on C4 with ``torchrun --nproc_per_node 8 torchrun_main.py``) of a script that trains: the project's training
    runs, not a throughput or evaluation benchmark. Only the folder's name matched; the script is not named for inference."""
    if not _BENCH_DIR.search(launch.path) or _INFERENCE_PATH.search(_BENCH_DIR.sub("/", launch.path)):
        return False
    path = resolve_file(facts, launch.script) if launch.script and launch.script.endswith(".py") else None
    return path is not None and any(c.path == path for c in facts.calls("backward", "train", "fit", "training_step", "pretrain"))


#: a multi-process launcher flag in a documented command (``accelerate launch --num-processes 2``, ``torchrun
#: --nproc_per_node 8``, ``deepspeed --num_gpus 4``); ``--multi_gpu`` alone
_DOC_PROCS = lazy_compile(r"--(?:num[-_]processes|nproc[-_]per[-_]node|num[-_]gpus)[= ]+(\d+)|--multi[-_]gpu\b")
#: a documented command on the DeepSpeed launcher with no device count (``deepspeed ${deepspeed_args} examples/finetune.py``):
#: the launcher starts one process per visible GPU, as :func:`launch_size` reads a shipped ``deepspeed train.py``; a
#: single visible device (``CUDA_VISIBLE_DEVICES=0 deepspeed ...``) or an explicit count/host list is read elsewhere
_DOC_ALL_GPUS = lazy_compile(r"^(?:(?!CUDA_VISIBLE_DEVICES=\d+\s)[A-Za-z_]\w*=\S*\s+)*deepspeed\s(?!.*--(?:num[-_]gpus|include|exclude|num[-_]nodes|hostfile)\b)")
#: a documented ``llamafactory-cli train`` (Qwen2.5's ``FORCE_TORCHRUN=1 llamafactory-cli train qwen2-7b-full-sft.yaml``):
#: LLaMA-Factory's launcher re-runs itself under torchrun with one process per visible GPU when ``FORCE_TORCHRUN`` is set or
#: more than one GPU is visible (``llamafactory/launcher.py``); a single visible device stays one process
_DOC_LLAMAFACTORY = lazy_compile(r"^(?:(?!CUDA_VISIBLE_DEVICES=\d+\s)[A-Za-z_]\w*=\S*\s+)*llamafactory-cli\s+train\b")
#: a DeepSpeed/accelerate config file named for its ZeRO stage (``configs/zero3.yaml``, ``ds_zero2.json``, ``ds_z3_config.json``)
_ZERO_FILE = lazy_compile(r"(?:^|[/_-])(?:zero|z)[_-]?([123])(?:[_.-]|$)", re.I)


def documented_launches(f: Facts, pattern: re.Pattern[str]) -> list[Any]:
    """Training commands of the README/docs (``command`` doc hints) matching ``pattern``: a launch the docs show but the
    repository does not ship. Never evidence of use (a README is not use); a check names it so that "not found" is not read
    as "not done" when the documented run does it."""
    return [h for h in f.records("doc_hints") if h.kind in ("command", "command_file") and pattern.search(h.text or "")]


def documented_multi_process(f: Facts) -> list[Any]:
    """The README/docs training commands that start several processes (``torchrun --nproc_per_node=4 train.py ...``) of a
    repository that ships no launch of its own: that documented command is the run (A1 reads it so since round 14), and
    its processes exchange gradients."""
    if f.launches():
        return []
    return [h for h in documented_launches(f, _DOC_PROCS) if h.kind == "command"
            and any(m.group(1) is None or int(m.group(1)) > 1 for m in _DOC_PROCS.finditer(h.text or ""))] + \
        [h for h in documented_launches(f, _DOC_LLAMAFACTORY) if h.kind == "command"]


def _doc_note(hints: list[Any], what: str) -> str:
    h = hints[0]
    return (f"; the docs show {what} (`{' '.join((h.text or '').split())[:120]}`, {h.path}:{h.line}), a launch documented only "
            "in prose, which the audit does not take as use: check the run's own launch")


# -- FSDP -------------------------------------------------------------------------------------

_STRATEGY_NAMES = {
    "1": "FULL_SHARD", "2": "SHARD_GRAD_OP", "3": "NO_SHARD", "4": "HYBRID_SHARD", "5": "HYBRID_SHARD_ZERO2",
    "full_shard": "FULL_SHARD", "shard_grad_op": "SHARD_GRAD_OP", "no_shard": "NO_SHARD", "hybrid_shard": "HYBRID_SHARD",
    "hybrid_shard_zero2": "HYBRID_SHARD_ZERO2", "_hybrid_shard_zero2": "HYBRID_SHARD_ZERO2",
    "hsdp": "HYBRID_SHARD",  # the usual short name (torchtitan, fms-fsdp ``sharding_strategy: str = "hsdp"``)
}


def _strategy(v: Any) -> str | None:
    """Canonical FSDP sharding strategy name from an enum reference, a string or an accelerate integer."""
    if v is None or isinstance(v, Container):
        return None
    text = v.dotted or v.text if isinstance(v, Expr) else str(v)
    if not text:
        return None
    key = text.rsplit(".", 1)[-1].strip().strip("\"'").lower()
    return _STRATEGY_NAMES.get(key)


@dataclass(frozen=True, slots=True)
class Site:
    """One place that turns a sharding/parallel feature on; ``how`` says which route."""

    fact: Any
    how: str
    sharded: bool | None = True
    strategy: str | None = None
    native: bool = True  # PyTorch's own FSDP (not fairscale)
    stage: int | None = None
    offload: str | None = None
    where: str | None = None  # where a strategy handed on through ``**kwargs`` is set (shown in the detail)


def _hf_fsdp_options(v: Any) -> list[str] | None:
    """HF/axolotl ``fsdp`` option list; None when the value turns FSDP off."""
    if isinstance(v, bool):
        return ["full_shard"] if v else None
    if isinstance(v, tuple):
        opts = [str(x).lower() for x in v if isinstance(x, str)]
    elif isinstance(v, str):
        opts = [x for x in re.split(r"[\s,]+", v.strip().lower()) if x]
    else:
        return None
    if not opts or opts == ["false"] or opts == ["none"]:
        return None
    return opts


def _parallel_lib(builder_kwargs: str = "") -> dict[str, str]:
    """A PyTorch-native pre-training library (OLMo-core's shape): FSDP/TP applied in model methods, which ``parallelize_model``
    calls only when the train-module config's ``dp_config``/``tp_config`` (``None`` by default) is given; the shipped
    builder passes ``builder_kwargs``."""
    return {
        "mylib/nn/transformer/model.py": (
            "import torch.nn as nn\nfrom torch.distributed.fsdp import fully_shard\n"
            "from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module\n\n"
            "class Transformer(nn.Module):\n"
            "    def apply_tp(self, tp_mesh):\n"
            "        for block in self.blocks.values():\n"
            "            parallelize_module(block, tp_mesh, {'w1': ColwiseParallel(), 'w2': RowwiseParallel()})\n\n"
            "    def apply_fsdp(self, dp_mesh=None, param_dtype=None):\n"
            "        for block in self.blocks.values():\n            fully_shard(block, mesh=dp_mesh)\n"
            "        fully_shard(self, mesh=dp_mesh)\n"),
        "mylib/train/train_module/transformer/common.py": (
            "def parallelize_model(model, *, world_mesh, dp_config=None, tp_config=None):\n"
            "    if tp_config is not None:\n        model.apply_tp(world_mesh['tp'])\n"
            "    if dp_config is not None:\n        model.apply_fsdp(dp_mesh=world_mesh['dp'])\n"
            "    return model\n"),
        "mylib/train/train_module/transformer/config.py": (
            "from dataclasses import dataclass\nfrom typing import Optional\n"
            "from .common import parallelize_model\n\n"
            "@dataclass\nclass DataParallelConfig:\n    name: str = 'fsdp'\n\n"
            "@dataclass\nclass TransformerTrainModuleConfig:\n    rank_microbatch_size: int\n"
            "    dp_config: Optional[DataParallelConfig] = None\n    tp_config: Optional[DataParallelConfig] = None\n\n"
            "    def build(self, model, world_mesh):\n"
            "        return parallelize_model(model, world_mesh=world_mesh, dp_config=self.dp_config, tp_config=self.tp_config)\n"),
        "mylib/internal/experiment.py": (
            "from mylib.train.train_module.transformer.config import DataParallelConfig, TransformerTrainModuleConfig\n\n"
            "def build_train_module_config():\n"
            f"    return TransformerTrainModuleConfig(rank_microbatch_size=8192{builder_kwargs})\n\n"
            "def train(config, model, mesh):\n    module = config.build(model, mesh)\n    loss = module(batch)\n    loss.backward()\n"),
    }


def _ring_lib(builder_kwargs: str) -> dict[str, str]:
    """OLMo-core's shape: attention dispatches to ring-flash-attn only when ``self.cp_enabled``, a flag ``__init__`` sets off and
    ``apply_cp`` on; ``parallelize_model`` calls ``apply_cp`` only when ``cp_config`` (``None`` by default) is given."""
    return {
        "mylib/nn/attention/flash_attn_api.py": (
            "import ring_flash_attn\n\n"
            "def dispatch_ring_flash_attn(q, k, v, *, group, causal=True):\n"
            "    return ring_flash_attn.zigzag_ring_flash_attn_func(q, k, v, causal=causal, group=group)\n"),
        "mylib/nn/attention/__init__.py": (
            "import torch.nn as nn\nimport torch.nn.functional as F\nfrom .flash_attn_api import dispatch_ring_flash_attn\n\n"
            "class Attention(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self._cp_pg = None\n        self._cp_enabled = False\n\n"
            "    @property\n    def cp_enabled(self) -> bool:\n        return self._cp_enabled\n\n"
            "    def sdpa(self, q, k, v):\n"
            "        if self.cp_enabled:\n            att = dispatch_ring_flash_attn(q, k, v, group=self._cp_pg)\n"
            "        else:\n            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n        return att\n\n"
            "    def apply_cp(self, cp_mesh):\n        self._cp_pg = cp_mesh.get_group()\n        self._cp_enabled = True\n"),
        "mylib/train/train_module/transformer/common.py": (
            "def parallelize_model(model, *, world_mesh, cp_config=None):\n"
            "    if cp_config is not None:\n        for block in model.blocks.values():\n"
            "            block.attention.apply_cp(world_mesh['cp'])\n    return model\n"),
        "mylib/train/train_module/transformer/config.py": (
            "from dataclasses import dataclass\nfrom typing import Optional\nfrom .common import parallelize_model\n\n"
            "@dataclass\nclass ContextParallelConfig:\n    degree: int = 1\n\n"
            "@dataclass\nclass TransformerTrainModuleConfig:\n    rank_microbatch_size: int\n"
            "    cp_config: Optional[ContextParallelConfig] = None\n\n"
            "    def build(self, model, world_mesh):\n"
            "        return parallelize_model(model, world_mesh=world_mesh, cp_config=self.cp_config)\n"),
        "mylib/internal/experiment.py": (
            "from mylib.train.train_module.transformer.config import ContextParallelConfig, TransformerTrainModuleConfig\n\n"
            "def build_train_module_config():\n"
            f"    return TransformerTrainModuleConfig(rank_microbatch_size=8192{builder_kwargs})\n\n"
            "def train(config, model, mesh):\n    module = config.build(model, mesh)\n    loss = module(batch)\n    loss.backward()\n"),
    }


def _usp_lib(recipe: str = "") -> dict[str, str]:
    """SpecForge's shape: a USP attention (yunchang Ulysses all-to-all + ring flash attention) picked by ``attention_backend ==
    "usp"``, sized by ``sp_ulysses_size``/``sp_ring_size`` that the run config leaves at 1 (a recipe may raise them)."""
    files = {
        "mylib/config.py": (
            "from typing import Literal\nfrom pydantic import BaseModel, Field\n\n\nclass TrainingConfig(BaseModel):\n"
            "    attention_backend: Literal['sdpa', 'flex_attention', 'usp'] = 'flex_attention'\n"
            "    sp_ulysses_size: int = Field(default=1, gt=0)\n    sp_ring_size: int = Field(default=1, gt=0)\n"),
        "mylib/draft.py": (
            "import torch.nn as nn\nfrom yunchang.comm.all_to_all import SeqAllToAll4D\n"
            "from ring_flash_attn import ring_flash_attn_func\n\n\nclass USPAttention(nn.Module):\n"
            "    def forward(self, q, k, v, group, ring_group):\n        q = SeqAllToAll4D.apply(group, q, 2, 1)\n"
            "        return ring_flash_attn_func(q, k, v, causal=True, group=ring_group)\n\n\n"
            "def build_attention(attention_backend):\n    if attention_backend == 'usp':\n        return USPAttention()\n"
            "    return nn.MultiheadAttention(1024, 8)\n"),
        "mylib/train.py": (
            "import torch.distributed as dist\nfrom mylib.draft import build_attention\n\n\n"
            "def train(cfg, model, loader, optimizer):\n"
            "    dist.init_process_group('nccl')\n    model.attn = build_attention(cfg.training.attention_backend)\n"
            "    for batch in loader:\n        loss = model(**batch)\n        loss.backward()\n        optimizer.step()\n"),
    }
    if recipe:
        files["examples/long_context.yaml"] = recipe
    return files


def _pipeline_lib(builder_kwargs: str) -> dict[str, str]:
    """OLMo-core's shape: ``PipelineStage`` is built in a helper nested in ``split_model``, which only the pipeline train
    module's ``__init__`` calls; that module is constructed only when ``pp_config`` (``None`` by default) is given."""
    return {
        "mylib/train/train_module/transformer/config.py": (
            "import copy\nfrom dataclasses import dataclass\nfrom typing import List, Optional\n"
            "from torch.distributed.pipelining import PipelineStage\n\n"
            "@dataclass\nclass TransformerPipelineParallelConfig:\n    degree: int\n\n"
            "    def split_model(self, model, *, pp_mesh, device):\n"
            "        def build_stage(stage_idx, num_stages):\n"
            "            model_chunk = copy.deepcopy(model)\n"
            "            stage = PipelineStage(model_chunk, stage_idx, num_stages, device, group=pp_mesh.get_group('pp'))\n"
            "            return stage, model_chunk\n\n"
            "        return [build_stage(i, self.degree) for i in range(self.degree)]\n\n"
            "@dataclass\nclass TransformerTrainModuleConfig:\n    rank_microbatch_size: int\n"
            "    pp_config: Optional[TransformerPipelineParallelConfig] = None\n\n"
            "    def build(self, model, device=None):\n"
            "        from .pipeline_train_module import TransformerPipelineTrainModule\n"
            "        from .train_module import TransformerTrainModule\n\n"
            "        if self.pp_config is not None:\n"
            "            return TransformerPipelineTrainModule(model=model, pp_config=self.pp_config, device=device)\n"
            "        return TransformerTrainModule(model=model, device=device)\n"),
        "mylib/train/train_module/transformer/pipeline_train_module.py": (
            "class TransformerPipelineTrainModule:\n"
            "    def __init__(self, model, pp_config, device=None):\n"
            "        self.pp_config = pp_config\n"
            "        self.stages = self.pp_config.split_model(model, pp_mesh=self.world_mesh['pp'], device=device)\n"),
        "mylib/train/train_module/transformer/train_module.py": (
            "class TransformerTrainModule:\n    def __init__(self, model, device=None):\n        self.model = model\n\n"
            "    def train_batch(self, batch):\n        loss = self.model(batch)\n        loss.backward()\n"),
        "mylib/internal/experiment.py": (
            "from mylib.train.train_module.transformer.config import TransformerPipelineParallelConfig, TransformerTrainModuleConfig\n\n"
            "def build_train_module_config():\n"
            f"    return TransformerTrainModuleConfig(rank_microbatch_size=8192{builder_kwargs})\n"),
    }


#: SpecForge's backend: the sharding strategy reaches FSDP through ``**fsdp_kwargs``, named by a parallel config's default
def _fsdp_kwargs(strategy: str) -> dict[str, str]:
    return {"mylib/backend.py": (
        "from dataclasses import dataclass\n\nimport torch.distributed as dist\n\n\n@dataclass\nclass ParallelConfig:\n"
        "    sharding_strategy: str = 'SHARD_GRAD_OP'\n\n\n"
        "def wrap(model, pc: ParallelConfig):\n"
        "    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
        "    from torch.distributed.fsdp import ShardingStrategy\n\n"
        "    sharding = getattr(ShardingStrategy, pc.sharding_strategy)\n"
        f"    fsdp_kwargs = dict(use_orig_params=True, sharding_strategy={strategy}, process_group=dist.group.WORLD)\n"
        "    return FSDP(model, **fsdp_kwargs)\n")}

_STRATEGY_KEYS = ("sharding_strategy", "fsdp_sharding_strategy", "fsdp_sharding")


def _strategy_expr(v: Any) -> str:
    """How a sharding strategy the audit cannot resolve is chosen: ``sharding_strategy=<variable>``, or the option that
    indexes a table of strategies (LlamaGen ``{'fsdp': ShardingStrategy.FULL_SHARD, ...}[args.data_parallel]``)."""
    text = " ".join((v.text if isinstance(v, Expr) else repr(v)).split())
    node = parse_expr(text)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Dict):
        return f"a table of strategies indexed by `{ast.unparse(node.slice)[:60]}`"
    return f"sharding_strategy={text[:60]}"


def _configured_strategy(facts: Facts, path: str) -> tuple[str, str] | None:
    """The sharding strategy handed to ``FSDP(model, **kwargs)`` in ``path``: a keyword of a ``dict(...)`` built there that
    names one (``dict(sharding_strategy=ShardingStrategy.NO_SHARD)``), else the one strategy every non-call setting of the
    project's strategy options names (``sharding_strategy: str = "SHARD_GRAD_OP"`` of a parallel config, ``fsdp_sharding:
    Literal[...] = "SHARD_GRAD_OP"`` of the run config), with where it is set; None when there is none, or they disagree or do
    not resolve. (strategy, how the detail names it)."""
    settings = facts.effective(*_STRATEGY_KEYS)
    local = [s for s in settings if s.source == "call" and s.path == path and s.key.startswith("dict(") and _strategy(s.value)]
    used = local or [s for s in settings if s.source != "call"]
    found = {(_strategy(s.value), f"{s.path}:{s.line}") for s in used}
    names = {n for n, _ in found}
    if len(names) != 1 or None in names:
        return None
    where = ", ".join(sorted(w for _, w in found))
    defaults = all(s.source in ("field-default", "argparse-default") for s in used)
    return names.pop(), (f"the default at {where}" if defaults and not local else f"set at {where}")


def torchx_runner(nodes: int = 1, nproc: int = 8, log_freq: int = 50, ckpt: int = 500, wandb: bool = True,
                  launch: bool = True) -> dict[str, str]:
    """torchft 0.2.0-shaped (``examples/slurm/runner.py``): a Python runner that builds torchtitan's command line as a list of
    flag strings (``args += [...]`` for replica 0 included) and launches it with torchx's DDP component,
    ``ddp(*args, script="./torchtitan/train.py", j=f"{nodes}x{nproc}")``; the layout comes from argparse defaults.
    ``launch=False``: the same list only printed, never launched."""
    call = ("    return ddp(*args, name=f\"ft_{replica_id}\", script=\"./torchtitan/train.py\", gpu=cli_args.nproc_per_node,\n"
            "               j=f\"{cli_args.nodes}x{cli_args.nproc_per_node}\")\n") if launch else "    print(\" \".join(args))\n"
    extra = "\"--metrics.enable-wandb\", " if wandb else ""
    return {"examples/slurm/runner.py": (
        "import argparse\n\nfrom torchx.components.dist import ddp\nfrom torchx.runner import get_runner\n\n\n"
        "def make_app(replica_id, cli_args):\n"
        "    args = [\n"
        "        \"--job.config_file=./torchtitan/models/llama3/train_configs/llama3_8b.toml\",\n"
        f"        \"--metrics.log_freq={log_freq}\",\n"
        "        f\"--parallelism.data_parallel_shard_degree={cli_args.nodes * cli_args.nproc_per_node}\",\n"
        "        \"--fault_tolerance.enable\",\n"
        "    ]\n"
        "    if replica_id == 0:\n"
        f"        args += [{extra}\"--checkpoint.interval={ckpt}\"]\n"
        + call +
        "\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
        f"    parser.add_argument(\"--nodes\", type=int, default={nodes})\n"
        f"    parser.add_argument(\"--nproc-per-node\", type=int, default={nproc})\n"
        "    cli_args = parser.parse_args()\n"
        "    with get_runner() as runner:\n        runner.run(make_app(0, cli_args), scheduler=\"slurm\")\n")}


def accelerate_menu(facts: Facts) -> dict[str, str]:
    """Accelerate config files shipped as a menu -> the folder that holds them: two or more sibling configs whose
    ``distributed_type`` differ (``multi_gpu.yaml``, ``zero3.yaml``, ``fsdp2.yaml`` ...), none of them named by a shipped
    launch or a documented command (TRL's ``trl/accelerate_configs/``, picked by name with ``--accelerate_config zero3``).
    Each is an option a run may pick; none is the run's setting."""
    by_dir: dict[str, dict[str, str]] = {}
    for e in facts.config("distributed_type"):
        if not _TEST_PATH.search(e.path):
            by_dir.setdefault(e.path.rsplit("/", 1)[0] if "/" in e.path else "", {})[e.path] = str(e.value).strip("'\"").upper()
    named = " ".join(x.text for x in [*facts.records("launches"), *facts.records("doc_launches")])
    out: dict[str, str] = {}
    for folder, kinds in by_dir.items():
        if len(kinds) < 2 or len(set(kinds.values())) < 2:
            continue
        if any(re.search(rf"(?<![\w.-]){re.escape(q.rsplit('/', 1)[-1])}\b", named) for q in kinds):
            continue
        out.update(dict.fromkeys(kinds, folder))
    return out


#: the HF Trainer / Accelerate flag that the launch's accelerate config chose FSDP (``elif self.is_fsdp_enabled:``)
_LAUNCH_FSDP = lazy_compile(r"(?<!not )(?<![\w.])(?:\w+\.)*is_fsdp_enabled\b")


def follows_launch_fsdp(facts: Facts, c: Call) -> bool:
    """An FSDP wrap that runs only once the launch's accelerate config picked FSDP: under ``if self.is_fsdp_enabled`` itself,
    or in a helper (``prepare_fsdp(ref_model, accelerator)``) whose every caller is. Not a choice of FSDP by itself."""
    if c.guard and _LAUNCH_FSDP.search(c.guard):
        return True
    if not c.func or c.func.startswith("__"):
        return False
    callers = [x for x in facts.calls(c.func) if x.func != c.func and not _TEST_PATH.search(x.path)]
    return bool(callers) and all(x.guard and _LAUNCH_FSDP.search(x.guard) for x in callers)


def fsdp_offered(facts: Facts) -> list[Any]:
    """FSDP that a run may pick but the shipped setting does not: menu configs and wraps that follow the launch's choice."""
    menu = accelerate_menu(facts)
    out: list[Any] = [e for e in facts.config("distributed_type") if e.path in menu and str(e.value).strip("'\"").upper() == "FSDP"]
    return out + [c for c in facts.calls("FullyShardedDataParallel", "fully_shard") if follows_launch_fsdp(facts, c)]


def accelerate_menu_lib(launch: str = "") -> dict[str, str]:
    """TRL 1.16-shaped: a package shipping a folder of accelerate configs a run picks by name (``--accelerate_config zero3``),
    a reference-model helper that wraps with FSDP only when the launch's config chose it, and (``launch``) a run script."""
    files = {
        "mylib/accelerate_configs/multi_gpu.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: 'bf16'\nnum_processes: 8\n",
        "mylib/accelerate_configs/zero3.yaml": ("compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  offload_optimizer_device: none\n"
                                                "  zero_stage: 3\ndistributed_type: DEEPSPEED\nnum_processes: 8\n"),
        "mylib/accelerate_configs/fsdp2.yaml": ("compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n"
                                                "  fsdp_version: 2\nnum_processes: 8\n"),
        "mylib/models/utils.py": (
            "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\n\n"
            "def prepare_fsdp(model, accelerator):\n    fsdp_plugin = accelerator.state.fsdp_plugin\n"
            "    kwargs = {'sharding_strategy': fsdp_plugin.sharding_strategy, 'device_id': accelerator.device}\n"
            "    model = FSDP(model, **kwargs)\n    model.eval()\n    return model\n"),
        "mylib/trainer/dpo_trainer.py": (
            "from transformers import Trainer\nfrom ..models.utils import prepare_fsdp\n\n\nclass DPOTrainer(Trainer):\n"
            "    def __init__(self, model, ref_model, args):\n        super().__init__(model=model, args=args)\n"
            "        if self.is_deepspeed_enabled:\n            self.ref_model = prepare_deepspeed(ref_model, self.accelerator)\n"
            "        elif self.is_fsdp_enabled:\n            self.ref_model = prepare_fsdp(ref_model, self.accelerator)\n"),
    }
    if launch:
        files["run.sh"] = launch
    return files


def manual_fsdp_wrap(launch_flag: bool) -> dict[str, str]:
    """OpenFlamingo 2.0.1's shape: the model wraps its own submodules with ``wrap()`` inside ``enable_wrap(wrapper_cls=FSDP,
    **wrapper_kwargs)``; the training script calls it only under ``--fsdp`` (store_true), which the launch passes or not."""
    return {
        "mm/flamingo.py": (
            "from torch import nn\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
            "from torch.distributed.fsdp.wrap import enable_wrap, wrap\n\n\nclass Flamingo(nn.Module):\n"
            "    def wrap_fsdp(self, wrapper_kwargs, device_id):\n"
            "        with enable_wrap(wrapper_cls=FSDP, **wrapper_kwargs):\n"
            "            self.perceiver = wrap(wrap(self.perceiver))\n"
            "            self.vision_encoder = wrap(wrap(self.vision_encoder))\n"),
        "train/train.py": (
            "import argparse\n\nfrom torch.distributed.fsdp import ShardingStrategy\n"
            "from torch.nn.parallel import DistributedDataParallel as DDP\n\n\ndef main():\n"
            "    parser = argparse.ArgumentParser()\n    parser.add_argument('--fsdp', default=False, action='store_true')\n"
            "    args = parser.parse_args()\n    model = build_model()\n    if args.fsdp:\n"
            "        model.wrap_fsdp(dict(sharding_strategy=ShardingStrategy.FULL_SHARD), device_id)\n"
            "        ddp_model = model\n    else:\n        ddp_model = DDP(model.to(device_id), device_ids=[device_id])\n"),
        "README.md": "```\ntorchrun --nnodes=1 --nproc_per_node=4 train/train.py" + (" --fsdp" if launch_flag else "") + " --workers=4\n```\n",
    }


def _fsdp_subclasses(facts: Facts) -> list[str]:
    """Names of the project's classes that subclass PyTorch's ``FullyShardedDataParallel``."""
    if not facts.imports("torch.distributed.fsdp"):
        return []
    return sorted({k.name for k in facts.records("classes")
                   if any(b == "torch.distributed.fsdp.FullyShardedDataParallel" or b.rsplit(".", 1)[-1] == "FullyShardedDataParallel"
                          for b in k.bases)})


def fsdp_sites(facts: Facts) -> list[Site]:
    """Every route that wraps the model with FSDP (PyTorch FSDP1/2, HF, accelerate, Lightning, torchtune, torchtitan...)."""
    sites: list[Site] = []
    menu = accelerate_menu(facts)
    for c in facts.calls("FullyShardedDataParallel"):
        if follows_launch_fsdp(facts, c) or trainer_copy_off(facts, c):
            continue  # (a Trainer copy's FSDP branch behind ``--fsdp``, which nothing sets, is the framework's option)
        strat = _strategy(c.kwargs.get("sharding_strategy"))
        native = not c.name.startswith("fairscale")
        if not native and c.kwargs.get("reshard_after_forward") is False:
            strat = "SHARD_GRAD_OP"
        where = None
        if strat is None and "sharding_strategy" not in c.kwargs and c.star_kwargs and native:
            # ``FSDP(model, **fsdp_kwargs)``: FSDP's own default (FULL_SHARD) holds only when the keyword is absent
            strat, where = _configured_strategy(facts, c.path) or (None, "not resolved: passed through **kwargs")
        elif strat is None and c.kwargs.get("sharding_strategy") is not None and native:
            # ``sharding_strategy=sharding_strategy_policy``, a variable the code picks from the run's option (fms-fsdp:
            # ``if cfg.sharding_strategy == "hsdp": ... HYBRID_SHARD``): the option's one value, else not resolved
            strat, where = _configured_strategy(facts, c.path) or (None, f"not resolved: {_strategy_expr(c.kwargs['sharding_strategy'])}")
        sites.append(Site(c, "FullyShardedDataParallel()", strat != "NO_SHARD", strat or ("" if where else "FULL_SHARD"), native,
                          where=where))
    for c in facts.calls("fully_shard"):
        if not follows_launch_fsdp(facts, c):
            sites.append(Site(c, "fully_shard()", True, "FULL_SHARD (FSDP2)"))
    # the project's own subclass of FSDP, built around the model (CoreNet ``class FullyShardedDataParallelWrapper(
    # FullyShardedDataParallel)``, whose ``__init__`` hands the model to ``super().__init__``; ``fsdp_train_eval.py`` builds it
    # with ``model=model``): each construction wraps the model
    for name in _fsdp_subclasses(facts):
        for c in facts.calls(name):
            if c.short == name and not follows_launch_fsdp(facts, c):
                strat = _strategy(c.kwargs.get("sharding_strategy"))
                sites.append(Site(c, f"{name}(), a subclass of FullyShardedDataParallel", strat != "NO_SHARD", strat or "",
                                  where=None if strat else f"not resolved: set inside {name}"))
    # ``with enable_wrap(wrapper_cls=FSDP, **wrapper_kwargs): self.perceiver = wrap(wrap(self.perceiver))`` (OpenFlamingo's
    # manual wrapping): every ``wrap()`` in the block builds an FSDP unit with those keywords
    for c in facts.calls("torch.distributed.fsdp.wrap.enable_wrap", "torch.distributed.fsdp.enable_wrap"):
        cls = str(getattr(c.kwargs.get("wrapper_cls"), "text", None) or c.kwargs.get("wrapper_cls") or "")
        if re.search(r"\b(FSDP|FullyShardedDataParallel)\b", cls) and not follows_launch_fsdp(facts, c):
            strat = _strategy(c.kwargs.get("sharding_strategy"))
            where = None if strat or "sharding_strategy" in c.kwargs or not c.star_kwargs else "not resolved: passed through **kwargs"
            sites.append(Site(c, "enable_wrap(wrapper_cls=FSDP) + wrap()", strat != "NO_SHARD", strat or ("" if where else "FULL_SHARD"),
                              where=where))
    for c in facts.calls("FullyShardedDataParallelPlugin"):
        strat = _strategy(c.kwargs.get("sharding_strategy"))
        sites.append(Site(c, "FullyShardedDataParallelPlugin()", strat != "NO_SHARD", strat or "FULL_SHARD"))
    for c in facts.calls("FSDPStrategy"):
        if c.name.startswith(_LIGHTNING) or c.name == "FSDPStrategy":
            strat = _strategy(c.kwargs.get("sharding_strategy"))
            sites.append(Site(c, "FSDPStrategy()", strat != "NO_SHARD", strat or "FULL_SHARD"))
    # HF TrainingArguments / axolotl ``fsdp``
    for s in facts.effective("fsdp"):
        if _TEST_PATH.search(s.path) or (s.source in {"argparse-default", "field-default"} and not s.value):
            continue
        if s.source in ("assign", "field-default") and isinstance(s.value, str) and s.value.strip().lower() == s.name.lower():
            continue  # an enum member naming the option (``class DataParallelType(StrEnum): fsdp = "fsdp"``), not a setting
        opts = _hf_fsdp_options(s.value)
        if opts is None:
            continue
        strat = next((_STRATEGY_NAMES[o] for o in opts if o in _STRATEGY_NAMES), None)
        sites.append(Site(s, "fsdp", strat != "NO_SHARD", strat or "FULL_SHARD"))
    # accelerate: config ``distributed_type: FSDP`` (+ fsdp_config.fsdp_sharding_strategy) or ``--use_fsdp``
    for e in facts.config("distributed_type"):
        if str(e.value).upper() == "FSDP" and e.path not in menu:
            strat = None
            for se in facts.config("fsdp_sharding_strategy"):
                if se.path == e.path:
                    strat = _strategy(se.value)
            sites.append(Site(e, "accelerate distributed_type: FSDP", strat != "NO_SHARD", strat or "FULL_SHARD"))
    for launch in facts.launches("accelerate"):
        if launch.launcher_args.get("use_fsdp") is True:
            strat = _strategy(launch.launcher_args.get("fsdp_sharding_strategy"))
            sites.append(Site(launch, "accelerate launch --use_fsdp", strat != "NO_SHARD", strat or "FULL_SHARD"))
    # Lightning / verl / LightningCLI ``strategy: fsdp``
    for s in facts.effective("strategy"):
        if isinstance(s.value, str) and s.value.lower().startswith("fsdp") and not _TEST_PATH.search(s.path):
            sites.append(Site(s, f"strategy: {s.value}", True, "FULL_SHARD"))
    # llm-foundry / Composer ``fsdp_config.sharding_strategy``
    for e in facts.config("fsdp_config.sharding_strategy"):
        strat = _strategy(e.value)
        if strat:
            sites.append(Site(e, "fsdp_config.sharding_strategy", strat != "NO_SHARD", strat))
    # torchtitan ``data_parallel_shard_degree`` (-1: all remaining ranks)
    for n, s in _sizes(facts, ("data_parallel_shard_degree", "dp_shard", "dp_shard_size")):
        if n == -1 or n > 1:
            sites.append(Site(s, "data_parallel_shard_degree", True, "FULL_SHARD (FSDP2)"))
    # Megatron-LM's PyTorch FSDP2 / Megatron-FSDP
    for s in facts.effective("use_torch_fsdp2", "use_custom_fsdp", "use_megatron_fsdp"):
        if truthy(s.value) and s.rank > 0:
            sites.append(Site(s, f"--{s.name}", True, "FULL_SHARD"))
    # torchtune distributed recipes shard with FSDP2
    for launch in facts.launches("torchtune"):
        if re.search(r"\b\w+_distributed\b", launch.text):
            sites.append(Site(launch, "torchtune distributed recipe", True, "FULL_SHARD (FSDP2)"))
    sites = [s for s in sites if not _TEST_PATH.search(getattr(s.fact, "path", ""))]
    if backend_unselected(facts, "fsdp"):  # wrapping code that a data-parallel selector left at DDP does not run
        sites = [s for s in sites if not isinstance(s.fact, Call)]
    return sites


def fsdp_sites_off(facts: Facts) -> list[Any]:
    """Places that set FSDP explicitly off (``fsdp: ""``/false, ``distributed_type: NO``)."""
    out: list[Any] = []
    for s in facts.effective("fsdp"):
        # a reference is no setting (a name registry's ``"fsdp": load_accelerate`` entry, ``fsdp=args.fsdp``): unknown, not off
        if s.rank > 0 and not isinstance(s.value, Expr) and _hf_fsdp_options(s.value) is None:
            out.append(s)
    return out


# -- ZeRO -------------------------------------------------------------------------------------

_STAGE_IN_NAME = lazy_compile(r"(?:zero|ds_z|_z|stage)[_-]?([0-3])(?![0-9])", re.I)


def _stage(v: Any, facts: Facts) -> int | None:
    n = as_number(v)
    if n is None and isinstance(v, Expr) and v.ref:
        nums = [m for s in facts.effective(v.ref) if (m := as_number(s.value)) is not None]
        n = max(nums) if nums else None
    return int(n) if n is not None and 0 <= n <= 3 else None


def _offload(facts: Facts, path: str, section: str) -> str | None:
    for e in facts.config(f"{section}.device", f"{section}_device"):
        if e.path == path and isinstance(e.value, str) and e.value.lower() in {"cpu", "nvme"}:
            return e.value.lower()
    return None


def ds_config_refs(facts: Facts) -> list[Setting]:
    """Settings that hand a DeepSpeed config (file path or dict) to a trainer or launcher."""
    out: list[Setting] = []
    for s in facts.effective(*DS_REF_NAMES):
        if _TEST_PATH.search(s.path) or s.source in {"argparse-default", "field-default"}:
            continue
        v = s.value
        if isinstance(v, str) and v.strip() and v.strip().lower() not in {"none", "null", "false", "no"}:
            out.append(s)
        elif isinstance(v, Expr) and s.source == "call" and v.text.startswith("{"):
            out.append(s)
    return out


def absent_ds_configs(f: Facts) -> list[Any]:
    """The DeepSpeed configs launches or recipes pass (``--deepspeed ./scripts/zero3.json``; Valley's ``deepspeed:
    valley/configs/deepspeed/config_zero2.json`` in its experiment YAMLs, whose ``*json`` its ``.gitignore`` keeps out) that
    no file of the repository answers."""
    return [s for s in ds_config_refs(f) if s.source in ("launcher", "config") and isinstance(s.value, str) and "$" not in s.value
            and s.value.strip("'\"").endswith(".json") and not resolve_file(f, s.value)]


def zero_sites(facts: Facts, keep_alternatives: bool = False) -> list[Site]:
    """Every place that sets a ZeRO stage, with the stage (0 = off) and optimizer offload; not the DeepSpeed configs that
    nothing passes where every passed one is known (:func:`unlaunched_ds_configs`)."""
    sites: list[Site] = []
    dict_off = switched_off_ds_dicts(facts)
    unlaunched = unlaunched_ds_configs(facts) | dict_off
    # a config the training launch passes is the run's, whatever its name (CogVLM ``--deepspeed_config test_config_bf16.json``)
    passed = {p for s in ds_config_refs(facts) if isinstance(s.value, str) and (p := resolve_file(facts, s.value))}

    def test_only(path: str) -> bool:
        return bool(_TEST_PATH.search(path)) and path not in passed

    for e in facts.config("zero_optimization.stage"):
        st = _stage(e.value, facts)
        if st is not None and not test_only(e.path) and e.path not in unlaunched:
            sites.append(Site(e, "zero_optimization.stage", st > 0, stage=st, offload=_offload(facts, e.path, "offload_optimizer")))
    staged = {e.path for e in facts.config("zero_optimization.stage")}
    for e in facts.config("zero_optimization"):
        if isinstance(e.value, Container) and e.path not in staged and not test_only(e.path) and e.path not in unlaunched:
            sites.append(Site(e, "zero_optimization (no stage: DeepSpeed default 0)", False, stage=0))
    menu = accelerate_menu(facts)
    for s in facts.effective("zero_stage"):
        if _TEST_PATH.search(s.path) or inference_setting(s) or (s.source == "config" and (s.path in menu or s.path in unlaunched)):
            continue
        st = _stage(s.value, facts)
        if st is not None:
            off = _offload(facts, s.path, "offload_optimizer") if s.source == "config" else None
            sites.append(Site(s, "zero_stage", st > 0, stage=st, offload=off))
    for c in facts.calls("DeepSpeedPlugin"):
        st = _stage(c.kwargs.get("zero_stage", 2), facts)
        if st is not None:
            sites.append(Site(c, "DeepSpeedPlugin(zero_stage=)", st > 0, stage=st))
    for c in facts.calls("DeepSpeedStrategy"):
        st = _stage(c.kwargs.get("stage", 2), facts)
        off = "cpu" if truthy(c.kwargs.get("offload_optimizer")) else None
        if st is not None and not (c.path in dict_off and guard_off(facts, c)):
            sites.append(Site(c, "DeepSpeedStrategy(stage=)", st > 0, stage=st, offload=off))
    for s in facts.effective("strategy"):
        m = re.match(r"deepspeed(?:_stage_([123]))?(_offload)?", str(s.value).lower()) if isinstance(s.value, str) else None
        if m and not _TEST_PATH.search(s.path):
            st = int(m.group(1) or 2)
            sites.append(Site(s, f"strategy: {s.value}", True, stage=st, offload="cpu" if m.group(2) else None))
    # an undecided ``strategy = "deepspeed_stage_2_offload" if cond else "deepspeed_stage_2"``: ZeRO whichever arm runs;
    # offload only when every arm offloads
    for g in facts.alternatives("strategy"):
        ms = [re.match(r"deepspeed(?:_stage_([123]))?(_offload)?", x.value.lower()) if isinstance(x.value, str) else None for x in g]
        if all(ms) and not _TEST_PATH.search(g[0].path):
            offload = "cpu" if all(m.group(2) for m in ms if m) else None
            for x, m in zip(g, ms, strict=True):
                if m and (offload or not m.group(2)):
                    sites.append(Site(x, f"strategy: {x.value} (when {x.guard})", True, stage=int(m.group(1) or 2), offload=offload))
    for c in facts.calls("LowLevelZeroPlugin"):
        st = _stage(c.kwargs.get("stage", 1), facts)
        sites.append(Site(c, "LowLevelZeroPlugin()", bool(st), stage=st))
    for c in facts.calls("GeminiPlugin"):
        sites.append(Site(c, "GeminiPlugin() (ZeRO-3-style chunks)", True, stage=3))
    for c in facts.calls("HybridParallelPlugin", "MoeHybridParallelPlugin"):
        st = _stage(c.kwargs.get("zero_stage", 0), facts)
        if st:
            sites.append(Site(c, f"{c.short}(zero_stage=)", True, stage=st))
    for c in facts.calls("ZeroRedundancyOptimizer"):
        sites.append(Site(c, "ZeroRedundancyOptimizer (ZeRO-1)", True, stage=1))
    # BMTrain's partitioned parameters and blocks (ModelCenter's ``bmt.DistributedParameter`` weights in ``bmt.CheckpointBlock``s)
    for c, st in bmtrain.sharded_sites(facts):
        sites.append(Site(c, f"BMTrain {bmtrain.what(c)} (ZeRO-{st} partitioning)", True, stage=st))
    for s in facts.effective("use_distributed_optimizer"):
        # (not a flag of a checkpoint tool: octopack ``python Megatron-LM/tools/checkpoint_util.py --use-distributed-optimizer``)
        if truthy(s.value) and s.rank > 0 and not _TEST_PATH.search(s.path) and not checkpoint_tool(facts, s):
            sites.append(Site(s, "Megatron distributed optimizer (ZeRO-1)", True, stage=1))
    # a NeMo recipe's optimizer by name (NeMo-Aligner ``model.optim.name: distributed_fused_adam``): Apex's
    # DistributedFusedAdam, "the ZeRO-2 algorithm, which distributes the optimizer state and gradients between parallel
    # processes"; ``mcore_distributed_optim`` is Megatron-Core's distributed optimizer
    for e in facts.config("optim.name"):
        if isinstance(e.value, str) and not _TEST_PATH.search(e.path):
            if e.value.strip() == "distributed_fused_adam":
                sites.append(Site(e, "Apex DistributedFusedAdam (ZeRO-2: optimizer state and gradients sharded)", True, stage=2))
            elif e.value.strip() == "mcore_distributed_optim":
                sites.append(Site(e, "Megatron-Core distributed optimizer (ZeRO-1)", True, stage=1))
    # referenced DeepSpeed configs that are not in the repository: the stage may show in the name
    for s in ds_config_refs(facts):
        if not isinstance(s.value, str) or resolve_file(facts, s.value):
            continue
        m = _STAGE_IN_NAME.search(s.value.rsplit("/", 1)[-1])
        if m:
            st = int(m.group(1))
            sites.append(Site(s, f"DeepSpeed config {s.value}", st > 0, stage=st))
        else:
            sites.append(Site(s, f"DeepSpeed config {s.value} (not in the repository)", None, stage=None))
    return sites if keep_alternatives else [s for s in sites if not _alternative_backend(facts, s)]


_DS_ROUTES = ("zero_optimization", "zero_stage", "DeepSpeed")


def _alternative_backend(facts: Facts, s: Site) -> bool:
    """A ZeRO route of a backend that the project's backend option does not pick (skyrl-train: DeepSpeed ZeRO-3 configs and
    Megatron's distributed optimizer beside ``trainer.strategy: fsdp2``)."""
    if s.how.startswith(_DS_ROUTES):
        return bool(backend_unselected(facts, "deepspeed"))
    if s.how.startswith("Megatron"):
        return bool(backend_unselected(facts, "megatron"))
    return False


#: frameworks that shard model states themselves: their collectives are the framework's, switched by its own options
_SHARDING_FRAMEWORKS = {"megatron", "deepspeed", "fsdp", "torchtitan", "nanotron", "colossalai", "lightning", "accelerate",
                        "torchtune", "transformers", "verl", "openrlhf"}


def hand_sharded_optimizer(facts: Facts, project: Any) -> list[Call]:
    """A sharded optimizer written by hand in a raw-PyTorch project (nanochat's ``MuonAdamW``, modded-nanogpt's
    ``NorMuonAndAdam``): gradients are reduce-scattered so each rank updates, and keeps optimizer state for, only its
    slice, and the updated slices are all-gathered back: ZeRO-2 without DeepSpeed. The gradient ``reduce_scatter`` calls
    on the training path are the evidence, when the same file all-gathers; not in a project that uses a framework which
    shards by itself (Megatron's distributed optimizer does the same under its own switch)."""
    if _SHARDING_FRAMEWORKS & set(project.frameworks):
        return []
    train = project.training_files
    gathers = {c.path for c in facts.calls("torch.distributed.all_gather_into_tensor", "torch.distributed.all_gather")}
    return [c for c in facts.calls("torch.distributed.reduce_scatter_tensor", "torch.distributed.reduce_scatter")
            if c.path in gathers and (not train or c.path in train) and not _TEST_PATH.search(c.path)
            and "grad" in " ".join([c.text, *(str(getattr(a, "text", a)) for a in c.args)])]


#: a ZeRO optimizer class by its name (InternEvo ``HybridZeroOptimizer``, ColossalAI ``LowLevelZeroOptimizer``); PyTorch's
#: ``ZeroRedundancyOptimizer`` is read with the framework sites
_ZERO_CLASS = lazy_compile(r"^\w*Zero\w*Optimi[sz]er$")


def zero_optimizer_class(facts: Facts, project: Any) -> list[Call]:
    """A ZeRO optimizer wrapper built directly (InternEvo ``optimizer = HybridZeroOptimizer(naive_optimizer,
    zero_cfg=zero_cfg, ...)`` in ``internlm/train/pipeline.py``): it shards at least the optimizer states across the
    data-parallel ranks. Not in tests, not in a branch that is switched off; on the training path when one is known
    there (a framework whose package ships no entry point builds it in library code)."""
    built = [c for c in facts.calls_where(lambda s: "Zero" in s and bool(_ZERO_CLASS.match(s)))
             if c.short != "ZeroRedundancyOptimizer" and not _TEST_PATH.search(c.path) and not guard_off(facts, c)]
    return [c for c in built if c.path in project.training_files] or built


#: InternEvo ``internlm/train/pipeline.py``: the optimizer is wrapped in the project's own ZeRO-1 optimizer
_ZERO_WRAPPER = (
    "import torch\n\nfrom internlm.solver.optimizer import FSDPadaptOptimizer, HybridZeroOptimizer\n\n\n"
    "def initialize_optimizer(model, zero_cfg, grad_scal_cfg, use_fsdp=False):\n"
    "    naive_optimizer = torch.optim.AdamW(params=model.parameters(), lr=1e-4, betas=(0.9, 0.95), eps=1e-8)\n"
    "    if not use_fsdp:\n"
    "        optimizer = HybridZeroOptimizer(\n            naive_optimizer,\n            grad_scal_cfg=grad_scal_cfg,\n"
    "            zero_cfg=zero_cfg,\n        )\n"
    "    else:\n        optimizer = FSDPadaptOptimizer(naive_optimizer, grad_scal_cfg=grad_scal_cfg, zero_cfg=zero_cfg)\n"
    "    return optimizer\n")


#: fairseq2 0.8.1: the trainer section picks the data-parallel wrapper by name; the library holds both wrappers
FAIRSEQ2_DP = {
    "fairseq2/recipe/config.py": (
        "from dataclasses import dataclass\nfrom typing import Literal\n\n\n@dataclass(kw_only=True)\nclass TrainerSection:\n"
        "    data_parallelism: Literal[\"ddp\", \"fsdp\"] = \"ddp\"\n    \"\"\"The data parallelism API to use.\"\"\"\n"),
    "fairseq2/nn/fsdp/fsdp2.py": (
        "from torch.distributed.fsdp import fully_shard\n\n\ndef to_fsdp2(module, dp_gang, *, reshard_after_forward=True):\n"
        "    for layer in module.layers:\n        fully_shard(layer, mesh=dp_gang.device_mesh, reshard_after_forward=reshard_after_forward)\n"
        "    fully_shard(module, mesh=dp_gang.device_mesh)\n    return module\n"),
    "fairseq2/nn/ddp.py": (
        "from typing import TypeAlias\n\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\nDDPModule: TypeAlias = DDP\n\n\n"
        "def to_ddp(module, dp_gang):\n    return DDPModule(module, broadcast_buffers=False, process_group=dp_gang.as_process_group())\n"),
}


def strategy_registry(lookup: str = '"local"', extra: dict[str, str] | None = None) -> dict[str, str]:
    """A library whose distributed strategy is chosen by name through a dict registry (a declarative framework's shape):
    ``"fsdp"``/``"deepspeed"``/``"ddp"`` all load an accelerate strategy whose FSDP/DeepSpeed plugins are built only when
    its constructor is given their configs; the backend initialises the strategy with ``lookup``."""
    return {
        "mylib/distributed/__init__.py": (
            "from mylib.distributed.base import LocalStrategy\n\n\ndef load_local():\n    return LocalStrategy\n\n\n"
            "def load_accelerate():\n    from mylib.distributed.accelerate import AccelerateStrategy\n\n    return AccelerateStrategy\n\n\n"
            "STRATEGIES = {\n    \"accelerate\": load_accelerate,\n    \"local\": load_local,\n    \"ddp\": load_accelerate,\n"
            "    \"fsdp\": load_accelerate,\n    \"deepspeed\": load_accelerate,\n}\n\n\n"
            "def init_dist_strategy(strategy, **kwargs):\n    return STRATEGIES[strategy]()(**kwargs)\n"),
        "mylib/distributed/base.py": (
            "class LocalStrategy:\n    def prepare(self, model, optimizer):\n        return model, optimizer\n"),
        "mylib/distributed/accelerate.py": (
            "from accelerate import Accelerator\n\n\nclass AccelerateStrategy:\n"
            "    def __init__(self, mixed_precision=None, fsdp_config=None, deepspeed_config=None):\n        kwargs = {}\n"
            "        if fsdp_config:\n            from accelerate import FullyShardedDataParallelPlugin\n\n"
            "            kwargs[\"fsdp_plugin\"] = FullyShardedDataParallelPlugin(**fsdp_config)\n"
            "        if deepspeed_config:\n            from accelerate import DeepSpeedPlugin\n\n"
            "            kwargs[\"deepspeed_plugin\"] = DeepSpeedPlugin(hf_ds_config=deepspeed_config)\n"
            "        self.accelerator = Accelerator(**kwargs)\n"),
        "mylib/backend/base.py": (
            "from mylib.distributed import init_dist_strategy\n\n\nclass LocalBackend:\n    def initialize(self, config):\n"
            f"        init_dist_strategy({lookup})\n"),
        **(extra or {}),
    }


#: skyrl-train 0.3.1: Hydra composes the DeepSpeed configs into every run; the strategy picks the workers that read them
SKYRL_BACKENDS = {
    "skyrl_train/config/ppo_base_config.yaml": (
        "defaults:\n  - _self_\n  - deepspeed_config@deepspeed_config.train: train\n\ntrainer:\n  strategy: fsdp2\n"
        "  policy:\n    deepspeed_config: ${deepspeed_config.train}\n    model:\n      path: Qwen/Qwen2.5-1.5B-Instruct\n"),
    "skyrl_train/config/deepspeed_config/train.yaml": (
        "zero_optimization:\n  stage: 3\n  overlap_comm: true\n  offload_optimizer:\n    device: none\n"),
    "skyrl_train/entrypoints/main_base.py": (
        "def get_worker_classes(cfg):\n    if cfg.trainer.strategy == \"deepspeed\":\n"
        "        from skyrl_train.workers.deepspeed.deepspeed_worker import PolicyWorker\n"
        "    elif cfg.trainer.strategy in (\"fsdp\", \"fsdp2\"):\n        from skyrl_train.workers.fsdp.fsdp_worker import PolicyWorker\n"
        "    return PolicyWorker\n"),
    "skyrl_train/distributed/deepspeed_strategy.py": (
        "import deepspeed\n\n\nclass DeepspeedStrategy:\n    def prepare(self, model, optim, ds_config):\n"
        "        engine, optim, _, _ = deepspeed.initialize(model=model, optimizer=optim, config=ds_config)\n        return engine\n"),
    "skyrl_train/distributed/megatron/megatron_strategy.py": (
        "from megatron.core import mpu\n\n\nclass MegatronStrategy:\n    def setup_distributed(self, tp, pp):\n"
        "        mpu.initialize_model_parallel(tensor_model_parallel_size=tp, pipeline_model_parallel_size=pp)\n"),
    "skyrl_train/distributed/fsdp_utils.py": (
        "from torch.distributed.fsdp import fully_shard\n\n\ndef apply_fsdp2(model, mesh):\n"
        "    for layer in model.model.layers:\n        fully_shard(layer, mesh=mesh)\n    fully_shard(model, mesh=mesh)\n    return model\n"),
}


def lightning_deepspeed(facts: Facts, key: str) -> list[Site]:
    """The ZeRO sites (stage 2 or 3) of Lightning's DeepSpeedStrategy left at its own default of ``key`` (``overlap_comm``,
    ``contiguous_gradients``): a registered strategy name (``Trainer(strategy="deepspeed_stage_2")``, built by Lightning's
    strategy registry as ``DeepSpeedStrategy(stage=2)``, also when every arm of an undecided choice names one), or a
    ``DeepSpeedStrategy(...)`` built without ``config=`` and without ``key=False``. Lightning's
    ``DeepSpeedStrategy.__init__`` defaults ``contiguous_gradients=True`` and ``overlap_comm=True`` and writes them into
    the ``zero_optimization`` section of the config it builds when no ``config`` is given (``_create_default_config``;
    ``lightning/pytorch/strategies/deepspeed.py``, the same in ``pytorch_lightning/strategies/deepspeed.py``). Only in a
    project that imports Lightning (a ``strategy`` setting of another framework is not Lightning's)."""
    if not lightning_imported(facts):
        return []
    out: list[Site] = []
    for site in zero_sites(facts):
        if not site.stage or site.stage < 2:
            continue
        if site.how.startswith("strategy: deepspeed"):
            out.append(site)
        elif site.how == "DeepSpeedStrategy(stage=)" and isinstance(site.fact, Call) and (is_lightning(site.fact) or site.fact.name == "DeepSpeedStrategy") \
                and "config" not in site.fact.kwargs and not site.fact.star_kwargs and truthy(site.fact.kwargs.get(key, True)) is not False:
            out.append(site)
    return out


# --------------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------------


def _ev(x: Any, key: str | None = None, value: Any = None) -> Any:
    return Facts.ev(x, key=key, value=value)


def _lightning_layout(facts: Facts) -> tuple[list[Any], list[Any], list[Any]]:
    """(multi-GPU, single-GPU, DataParallel) evidence from Lightning Trainer/Fabric calls and LightningCLI YAML."""
    multi: list[Any] = []
    single: list[Any] = []
    dp: list[Any] = []
    for c in facts.calls("Trainer", "Fabric"):
        if not is_lightning(c):
            continue
        strat = c.kwargs.get("strategy")
        sv = strat.lower() if isinstance(strat, str) else ""
        dev = c.kwargs.get("devices", c.kwargs.get("gpus"))
        n = _devices(dev)
        # ``strategy=strategy`` after ``strategy = "deepspeed_stage_2_offload" if ... else "deepspeed_stage_2"``: a local
        # whose every value (or every arm of an undecided choice) is a multi-process strategy
        local = [g for g in keyword_choices(facts, c, "strategy") if isinstance(strat, Expr)
                 and all(isinstance(v, str) and v.lower().startswith(("ddp", "fsdp", "deepspeed")) for v, _ in g)]
        if sv == "dp":
            dp.append(c)
        elif sv.startswith(("ddp", "fsdp", "deepspeed")) or (n is not None and (n > 1 or n == -1)):
            multi.append(c)
        elif local and n is None:
            multi.append(c)
        elif n == 1 or sv in {"single_device"}:
            single.append(c)
    for c in facts.calls("DDPStrategy"):
        if is_lightning(c) or c.name == "DDPStrategy":
            multi.append(c)
    # LightningCLI YAML ``trainer.strategy: fsdp``; a Hydra config of a project that does not use Lightning
    # (``trainer.strategy: fsdp2`` picking the project's own backend) is not a Lightning Trainer
    for e in facts.config("trainer.strategy") if lightning_imported(facts) else ():
        if isinstance(e.value, str) and e.value.lower().startswith(("ddp", "fsdp", "deepspeed")):
            multi.append(e)
    for e in facts.config("trainer.devices", "trainer.gpus"):
        n = _devices(e.value)
        if n is not None and (n > 1 or n == -1):
            multi.append(e)
        elif n == 1:
            single.append(e)
    return multi, single, dp


def _devices(v: Any) -> int | None:
    if isinstance(v, tuple):
        return len(v)
    if isinstance(v, str):
        if v.strip().lower() in {"-1", "auto"}:
            return -1  # every visible GPU (an explicit "auto"; the unset default is not judged)
        if "," in v:
            return len([x for x in v.split(",") if x.strip()])
    n = as_number(v)
    return int(n) if n is not None else None


#: CoLLiE 1.0.7's shape: the library joins the process group of the user's torchrun/slurm launch itself and its trainer always
#: trains through a DeepSpeed engine; no launch ships
_DS_LIBRARY = {
    "mylib/utils/dist_utils.py": (
        "import os\n\nimport deepspeed\nfrom deepspeed.runtime.engine import DeepSpeedEngine\n\n\n"
        "def setup_distribution(config):\n    deepspeed.init_distributed(dist_backend='nccl', world_size=int(os.environ['WORLD_SIZE']),\n"
        "                               rank=int(os.environ['RANK']))\n\n\n"
        "def setup_ds_engine(model, optimizer, ds_config):\n"
        "    return DeepSpeedEngine(args=None, model=model, optimizer=optimizer, config=ds_config)\n"),
    "mylib/trainer.py": (
        "from mylib.utils.dist_utils import setup_ds_engine\n\n\nclass Trainer:\n    def __init__(self, model, optimizer, ds_config):\n"
        "        self.engine = setup_ds_engine(model, optimizer, ds_config)\n\n    def train(self, loader):\n"
        "        for batch in loader:\n            loss = self.engine(**batch)['loss']\n            self.engine.backward(loss)\n"
        "            self.engine.step()\n"),
}


def accelerate_library(readme: str = "accelerate launch --config_file accelerate_config.yaml train.py") -> dict[str, str]:
    """A pytorch-accelerated-like training-loop library: its Trainer prepares everything through a bare ``Accelerator()``;
    no launch ships, the README shows the run's command inline."""
    return {
        "README.md": ("## Quickstart\n\nTo launch training, first run\n\n`accelerate config --config_file accelerate_config.yaml`\n\n"
                      f"and answer the questions asked. Then run:\n\n`{readme}`\n"),
        "mylib/trainer.py": (
            "from accelerate import Accelerator\nfrom torch.utils.data import DataLoader\n\n\nclass Trainer:\n"
            "    def __init__(self, model, loss_func, optimizer):\n        self.model, self.loss_func, self.optimizer = model, loss_func, optimizer\n"
            "        self._accelerator = Accelerator()\n\n"
            "    def train(self, train_dataset, num_epochs, per_device_batch_size=8):\n"
            "        loader = DataLoader(train_dataset, batch_size=per_device_batch_size, shuffle=True)\n"
            "        self.model, self.optimizer, loader = self._accelerator.prepare(self.model, self.optimizer, loader)\n"
            "        for _ in range(num_epochs):\n            for xb, yb in loader:\n"
            "                loss = self.loss_func(self.model(xb), yb)\n                self._accelerator.backward(loss)\n"
            "                self.optimizer.step()\n                self.optimizer.zero_grad()\n"),
    }


def _env_trainer(run: str = "") -> dict[str, str]:
    """A multi-backend trainer (FlagAI's EnvTrainer): the env type is an argument whose default is the single-process
    'pytorch' backend; DDP wraps the model only in the 'pytorchDDP' branch."""
    files = {
        "mylib/env_args.py": (
            "import argparse\n\nclass EnvArgs:\n    def __init__(self, env_type='pytorch', batch_size=1, num_gpus=1):\n"
            "        self.parser = argparse.ArgumentParser()\n"
            "        self.parser.add_argument('--env_type', default=env_type)\n"
            "        self.parser.add_argument('--batch_size', default=batch_size, type=int)\n"),
        "mylib/env_trainer.py": (
            "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\nclass EnvTrainer:\n"
            "    def __init__(self, env_args):\n        self.env_type = env_args.env_type\n        self.local_rank = 0\n\n"
            "    def train(self, model, loader, optimizer):\n"
            "        if self.env_type == 'pytorchDDP':\n            model.to(torch.device('cuda', self.local_rank))\n"
            "            model = DDP(model, device_ids=[self.local_rank])\n"
            "        elif self.env_type == 'pytorch':\n            model.to('cuda')\n"
            "        for batch in loader:\n            loss = model(**batch)['loss']\n            loss.backward()\n"
            "            optimizer.step()\n"),
    }
    if run:
        files["examples/train.py"] = "from mylib.env_args import EnvArgs\n" + run
    return files


def _ray_job(workers: str = "config.ray.num_workers", loop: str = "training_function") -> dict[str, str]:
    """A config-driven job library (lm-buddy-like): ``run_finetuning`` hands Ray Train's ``TorchTrainer`` a per-worker
    function that builds and trains an HF/TRL trainer; the worker count comes from ``ScalingConfig``."""
    return {
        "jobs/finetuning.py": (
            "from ray.train import RunConfig, ScalingConfig\nfrom ray.train.huggingface.transformers import prepare_trainer\n"
            "from ray.train.torch import TorchTrainer\nfrom transformers import TrainingArguments\nfrom trl import SFTTrainer\n\n"
            "from jobs.config import FinetuningJobConfig\n\n\n"
            "def load_and_train(config):\n    model = load_model(config.model)\n"
            "    args = TrainingArguments(output_dir='out', **config.trainer.training_args())\n"
            "    trainer = SFTTrainer(model=model, args=args, train_dataset=load_dataset(config.dataset))\n"
            "    trainer = prepare_trainer(trainer)\n    trainer.train()\n\n\n"
            "def training_function(config_data):\n    config = FinetuningJobConfig(**config_data)\n    load_and_train(config)\n\n\n"
            "def run_finetuning(config, train_loop=training_function):\n"
            f"    scaling_config = ScalingConfig(use_gpu=config.ray.use_gpu, num_workers={workers})\n"
            f"    trainer = TorchTrainer(train_loop_per_worker={loop}, train_loop_config=config.model_dump(),\n"
            "                           scaling_config=scaling_config, run_config=RunConfig(name=config.name))\n"
            "    return trainer.fit()\n"),
    }


def _ray_driver(gpus: int) -> dict[str, str]:
    """slime's launch shape: flags kept in bash arrays, the training driver submitted as a Ray job (``ray job submit ...
    -- python3 train.py``), its workers placed by its own ``--actor-num-gpus-per-node``."""
    return {
        "scripts/run-qwen3-4B.sh": (
            "set -ex\n\nNUM_GPUS=${NUM_GPUS:-8}\nsource \"${SCRIPT_DIR}/models/qwen3-4B.sh\"\n\n"
            "PERF_ARGS=(\n   --tensor-model-parallel-size 2\n   --sequence-parallel\n   --use-dynamic-batch-size\n)\n\n"
            "ray start --head --node-ip-address ${MASTER_ADDR} --num-gpus ${NUM_GPUS} --disable-usage-stats\n\n"
            "ray job submit --address=\"http://127.0.0.1:8265\" \\\n   -- python3 train.py \\\n"
            f"   --actor-num-nodes 1 \\\n   --actor-num-gpus-per-node {gpus} \\\n   --colocate \\\n"
            "   ${MODEL_ARGS[@]} \\\n   ${PERF_ARGS[@]}\n"),
        "train.py": ("from slime.ray.placement_group import create_placement_groups\n\n\ndef train(args):\n"
                     "    pgs = create_placement_groups(args)\n    actor_model = create_training_models(args, pgs)\n"
                     "    for rollout_id in range(args.num_rollout):\n        actor_model.train(rollout_id)\n"),
    }


def _one_process_zero(procs: int) -> dict[str, str]:
    """Chinese-LLaMA-Alpaca-2's shape: an HF Trainer script run by ``torchrun`` with a DeepSpeed ZeRO-2 config."""
    return {
        "scripts/training/run_clm_pt_with_peft.py": (
            "from transformers import HfArgumentParser, Trainer, TrainingArguments\n\n\ndef main():\n"
            "    parser = HfArgumentParser((ModelArguments, TrainingArguments))\n"
            "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
            "    trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset)\n    trainer.train()\n"),
        "scripts/training/run_pt.sh": (
            f"torchrun --nnodes 1 --nproc_per_node {procs} run_clm_pt_with_peft.py \\\n"
            "    --deepspeed ds_zero2_no_offload.json \\\n    --per_device_train_batch_size 1 \\\n    --fp16\n"),
        "scripts/training/ds_zero2_no_offload.json": (
            '{\n  "fp16": {"enabled": "auto"},\n  "zero_optimization": {\n    "stage": 2,\n    "overlap_comm": true\n  },\n'
            '  "train_micro_batch_size_per_gpu": "auto"\n}\n'),
    }


def _auto_device_map(f: Facts, training: frozenset[str] | set[str]) -> Any:
    """A ``from_pretrained(..., device_map="auto")`` of the training path, given literally or through a local that holds
    ``"auto"`` (alpaca-lora's ``device_map = "auto"``, replaced by one device per rank only under DDP), else None."""
    for c in f.calls("from_pretrained"):
        if c.path not in training:
            continue
        v = c.kwargs.get("device_map")
        if v == "auto" or (isinstance(v, Expr) and v.ref and any(a.path == c.path and a.value == "auto" for a in f.assigns(v.ref))):
            return c
    return None

@register
class A1DataParallel(Check):
    id = "A1"
    title = "Data parallel (DDP)"
    title_zh = "数据并行 (DDP)"
    bottlenecks = (Bottleneck.COMPUTE, Bottleneck.COMMUNICATION)
    priority = Priority.HIGH
    benefit = "near-linear throughput scaling with the number of GPUs (each GPU trains on its own shard of the batch)"
    what = (
        "Whether training runs data-parallel over several processes: `DistributedDataParallel` wrapping, a multi-process "
        "launch (`torchrun --nproc_per_node>1`, `deepspeed`, `accelerate launch --multi_gpu`/`num_processes>1`, "
        "`tune run --nproc_per_node>1`), an accelerate config with `distributed_type: MULTI_GPU/FSDP/DEEPSPEED`, or Lightning "
        "`strategy='ddp'`/`devices>1`. FSDP and ZeRO count (sharded data parallelism). A single-process launch is not DDP; "
        "`torch.nn.DataParallel` is partial."
    )
    why = (
        "DDP runs one process per GPU and overlaps the gradient all-reduce with the backward pass, reaching ~90 % scaling "
        "efficiency on 8 V100s for ResNet-50/BERT in the PyTorch DDP paper (Li et al., VLDB 2020); `nn.DataParallel` drives "
        "every GPU from one Python thread, re-scatters the model each step and is slower than DDP even on one node "
        "(PyTorch docs recommend DDP instead). Without a multi-process launch only one GPU trains."
    )
    fix = "Launch one process per GPU: `torchrun --nproc_per_node=8 train.py` (HF Trainer/accelerate then use DDP automatically), or wrap the model in `DistributedDataParallel` in a custom loop."
    fix_zh = "每张 GPU 启动一个进程：`torchrun --nproc_per_node=8 train.py`（HF Trainer / accelerate 会自动使用 DDP），自定义训练循环中用 `DistributedDataParallel` 包装模型。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://pytorch.org/docs/stable/notes/ddp.html", "https://arxiv.org/abs/2006.15704")
    snippets = {
        "shell": "torchrun --nproc_per_node=8 train.py --config configs/train.yaml\n",
        "python": (
            "import torch.distributed as dist\n"
            "from torch.nn.parallel import DistributedDataParallel as DDP\n\n"
            "dist.init_process_group(\"nccl\")\n"
            "model = DDP(model.to(local_rank), device_ids=[local_rank])\n"
        ),
        "accelerate-yaml": "distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n",
        "lightning": "trainer = L.Trainer(accelerator=\"gpu\", devices=8, strategy=\"ddp\")\n",
    }
    examples = (
        Example(_one_process_zero(1), P, "Chinese-LLaMA-Alpaca-2: a ZeRO-2 config under torchrun --nproc_per_node 1"),
        Example(_one_process_zero(8), U, "the same config under torchrun --nproc_per_node 8"),
        Example(_ray_driver(8), U, "slime: a Ray job whose trainer places its actors on 8 GPUs per node"),
        Example(_ray_driver(1), N, "the same Ray job on one GPU"),
        Example({"run.sh": "torchrun --nproc_per_node 8 train.py --bf16 True\n",
                 "train.py": "from transformers import Trainer, TrainingArguments\ntrainer = Trainer(model=model, args=TrainingArguments(output_dir='o'))\ntrainer.train()\n"},
                U, "HF Trainer under torchrun"),
        Example({"train.py": (
            "import torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
            "dist.init_process_group('nccl')\nmodel = DDP(model, device_ids=[local_rank])\n")}, U, "DDP wrapper"),
        Example({"cfg/accelerate.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 4\n",
                 "run.sh": "accelerate launch --config_file cfg/accelerate.yaml train.py\n"}, U, "accelerate multi-GPU"),
        Example({"train.py": "import lightning as L\ntrainer = L.Trainer(accelerator='gpu', devices=4, strategy='ddp')\ntrainer.fit(model)\n"}, U, "lightning ddp"),
        Example({"run.sh": "deepspeed train.py --deepspeed ds_config.json\n"}, U, "deepspeed launcher, all GPUs"),
        Example({"run.sh": "torchrun --nproc_per_node=1 train.py\n",
                 "train.py": "from transformers import Trainer\ntrainer = Trainer(model=model)\ntrainer.train()\n"}, N, "one process"),
        Example({"run.sh": "python train.py --lr 1e-4\n", "train.py": "import torch\nmodel = model.cuda()\nloss.backward()\n"}, N, "single python process"),
        Example({"cfg.yaml": "distributed_type: 'NO'\nnum_processes: 1\n", "run.sh": "accelerate launch --config_file cfg.yaml train.py\n"}, N, "accelerate NO"),
        Example({"train.py": "import torch\n# model = torch.nn.parallel.DistributedDataParallel(model)\nmodel = model.cuda()\n"}, N, "commented out"),
        Example({"run.sh": "torchrun --nproc_per_node 8 example_chat_completion.py --ckpt_dir llama-2-70b-chat/\n",
                 "example_chat_completion.py": "from llama import Llama\ngenerator = Llama.build(ckpt_dir=ckpt_dir)\n"
                                               "results = generator.chat_completion(dialogs, max_gen_len=512)\n"}, N, "multi-GPU inference launch"),
        Example({"train.py": "import torch\nmodel = torch.nn.DataParallel(model).cuda()\nloss.backward()\n"}, P, "nn.DataParallel"),
        Example(FAIRSEQ2_DP, U, "DDP through a module-level alias of the class (DDPModule: TypeAlias = DDP)"),
        Example({"internlm/train/pipeline.py": _ZERO_WRAPPER}, U, "ZeRO optimizer wrapper: sharded data parallel (InternEvo)"),
        Example(_env_trainer(), N, "DDP only in the 'pytorchDDP' branch of a trainer whose env type defaults to 'pytorch'"),
        Example(_env_trainer("env_args = EnvArgs(env_type='pytorchDDP', num_gpus=8)\n"), U,
                "the same trainer, a run script choosing 'pytorchDDP'"),
        Example(strategy_registry(), N, "FSDP/DeepSpeed plugins of a strategy class the name registry never returns"),
        Example(torchx_runner(), U, "a Python runner launches torchtitan with torchx's ddp component, j=1x8"),
        Example(torchx_runner(nodes=1, nproc=1), N, "the same runner, j=1x1: one process"),
        Example(strategy_registry('"deepspeed"'), U, "a backend picks the deepspeed strategy by name"),
        Example({"README.md": ("## Training\n\n```bash\nCUDA_VISIBLE_DEVICES=0,1 accelerate launch --num-processes 2 \\\n"
                               "    --config-file configs/zero3.yaml examples/train_grpo.py\n```\n"),
                 "rllib/trainer.py": "from transformers import Trainer\n\n\nclass GRPOTrainer(Trainer):\n    pass\n"}, U,
                "a library that ships no launch; its README's training command runs two processes"),
        Example({"README.md": "## Training\n\n```bash\naccelerate launch --num-processes 1 examples/train_grpo.py\n```\n",
                 "rllib/trainer.py": "from transformers import Trainer\n\n\nclass GRPOTrainer(Trainer):\n    pass\n"}, N,
                "the README's training command runs one process"),
        Example({"README.md": ("## Finetuning\n\n```sh\ndeepspeed ${deepspeed_args} \\\n  examples/finetune.py \\\n"
                               "    --deepspeed configs/ds_config_zero3.json \\\n    --bf16 \\\n    --do_train\n```\n"),
                 "mylib/pipeline/finetuner.py": "from transformers import Trainer\n\n\nclass Finetuner:\n    trainer_cls = Trainer\n"}, U,
                "a library that ships no launch; its README runs the DeepSpeed launcher on every visible GPU"),
        Example({"README.md": ("## Finetuning\n\n```sh\nCUDA_VISIBLE_DEVICES=0 deepspeed examples/finetune.py \\\n"
                               "    --deepspeed configs/ds_config_zero3.json --do_train\n```\n"),
                 "mylib/pipeline/finetuner.py": "from transformers import Trainer\n\n\nclass Finetuner:\n    trainer_cls = Trainer\n"}, N,
                "the README's DeepSpeed launch sees one GPU"),
        Example(_DS_LIBRARY, U, "a library that ships no launch: its trainer builds a DeepSpeed engine in a process group it joins"),
        Example(_ray_job(), U, "Ray Train workers run the package's HF training function; the worker count is the job config's"),
        Example(_ray_job("8"), U, "the same Ray Train job with eight workers"),
        Example(_ray_job("1"), N, "the same Ray Train job with one worker"),
        Example(_ray_job(loop="train_loop"), N, "a Ray Train trainer handed a loop by its caller: which loop it runs is not visible"),
        Example({**_DS_LIBRARY, "scripts/train.sh": "torchrun --nproc_per_node=1 examples/train.py\n",
                 "examples/train.py": "from mylib.trainer import Trainer\n\nTrainer(model, optimizer, {}).train(loader)\n"}, N,
                "the same library shipping a one-process launch"),
        Example({k: v for k, v in bmtrain.model_files().items() if k != "scripts/finetune.sh"}, U,
                "a BMTrain library that ships no launch: its partitioned parameters are sharded over the ranks of any launch"),
        Example({k: v for k, v in bmtrain.model_files(layers="torch.nn.ModuleList([TransformerBlock(dim) for _ in range(num_layers)])",
                                                      param="torch.nn.Parameter").items() if k != "scripts/finetune.sh"}, N,
                "the same library with plain torch parameters and no launch: one process"),
        Example(accelerate_library(), NA, "an Accelerate trainer whose documented launch reads an accelerate config the repository does not ship"),
        Example({**accelerate_library(), "accelerate_config.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 4\n"},
                U, "the same library shipping that config: four processes"),
        Example(accelerate_library("python train.py"), N, "the same library documented with a plain python launch"),
        Example({"mylib/utils/train_script_utils.py": (
            "from nemo.collections.nlp.parts.megatron_trainer_builder import MegatronTrainerBuilder\nfrom omegaconf import OmegaConf\n\n\n"
            "def resolve_and_create_trainer(cfg):\n    OmegaConf.resolve(cfg)\n    return MegatronTrainerBuilder(cfg).create_trainer()\n"),
            "mylib/algorithms/dpo.py": ("class DPOTrainer:\n    def train_single_step(self, batch):\n        self.optimizer.zero_grad()\n"
                                        "        loss, metrics = self.model.get_loss_and_metrics(batch=batch, forward_only=False)\n"
                                        "        self.optimizer.step()\n")}, NA,
                "NeMo's Megatron trainer built from a trainer config the package does not ship"),
        Example({"mylib/utils/train_script_utils.py": (
            "from nemo.collections.nlp.parts.megatron_trainer_builder import MegatronTrainerBuilder\nfrom omegaconf import OmegaConf\n\n\n"
            "def resolve_and_create_trainer(cfg):\n    OmegaConf.resolve(cfg)\n    return MegatronTrainerBuilder(cfg).create_trainer()\n"),
            "conf/gpt_dpo.yaml": "trainer:\n  num_nodes: 1\n  devices: 1\n  precision: bf16\n"}, N,
                "the same trainer with its config shipped: one device"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list[Any] = []
        kinds: list[str] = []
        ddp = [c for c in f.calls("DistributedDataParallel") if not _TEST_PATH.search(c.path)]
        # a wrapper in a branch of a backend switch the run leaves off (``if self.env_type == 'pytorchDDP':`` with the
        # env type defaulting to 'pytorch', a multi-backend trainer): not the run's data parallelism
        ddp_off = {id(c): guard_off(f, c) for c in ddp}
        ddp_off = {k: v for k, v in ddp_off.items() if v}
        ddp = [c for c in ddp if id(c) not in ddp_off]
        if ddp:
            used += ddp
            kinds.append("ddp")
        sizes = launch_sizes(f)
        multi = [ls for ls in sizes if (ls.multi is not False and ls.launch.launcher != "python") or ls.multi is True]
        single = [ls for ls in sizes if ls.multi is False]
        if multi:
            used += [ls.launch for ls in multi]
            kinds.append("multi-process launch")
        acc_multi, acc_single = [], []
        for e in f.config("distributed_type"):
            if len(e.keys) != 1:
                continue
            v = str(e.value).upper()
            procs = [x for x in f.config("num_processes") if x.path == e.path and len(x.keys) == 1]
            n = _count(procs[0].value) if procs else None
            if v in {"NO", "TPU", "XLA"} or (n == 1 and v != "MULTI_GPU"):
                acc_single.append(e)
            elif v.startswith(("MULTI_", "FSDP", "DEEPSPEED", "MEGATRON")):
                acc_multi.append(e)
        if acc_multi:
            used += acc_multi
            kinds.append("accelerate config")
        lt_multi, lt_single, lt_dp = _lightning_layout(f)
        if lt_multi:
            used += lt_multi
            kinds.append("lightning")
        # (FSDP wrapping in a module nothing imports is dead code: A2's reading)
        sharded = [s.fact for s in fsdp_sites(f) if s.sharded and not (isinstance(s.fact, Call) and orphan_sites(ctx, [s.fact]))] \
            + [s.fact for s in zero_sites(f) if s.sharded and s.stage]
        if not sharded and not used:  # a ZeRO optimizer built directly (InternEvo ``HybridZeroOptimizer``) shards over the DP ranks
            sharded = zero_optimizer_class(f, ctx.project)
        # (every launch a distributed launcher told to start one process: a plain ``python train.py`` says nothing of the
        # layout, and a Dockerfile's or CI's command is no recipe)
        one = [ls for ls in single if ls.launch.launcher != "python" and ls.procs == 1 and (ls.nodes or 1) == 1]
        if sharded and not used and one and len(one) == len(sizes):
            # a ZeRO/FSDP config under launches that each start one process (Chinese-LLaMA-Alpaca-2: ``torchrun --nnodes 1
            # --nproc_per_node 1`` with ``ds_zero2_no_offload.json``): nothing is sharded or averaged as shipped
            s0 = one[0]
            return Outcome(P, [_ev(x) for x in sharded[:3]] + [_ev(ls.launch) for ls in one[:3]],
                           f"a sharded data-parallel config is in place, but every training launch starts one process ({s0.reason} "
                           f"at {s0.launch.path}:{s0.launch.line}): no data parallelism as shipped; it takes effect with one "
                           "process per GPU", {"data_parallel": False, "nproc_per_node": 1})
        if sharded and not used:
            used += sharded
            kinds.append("sharded data parallel (FSDP/ZeRO)")
        ray = ray_train_workers(f) if not used else []
        if any(r.multi for r in ray):
            # the package's training loop runs in Ray Train workers, one process per GPU in one process group: the HF
            # Trainer (or ``ray.train.torch.prepare_model``) wraps the model in DDP and shards the batches over the workers
            r = next(r for r in ray if r.multi)
            count = getattr(r.workers, "text", None)
            n = as_number(r.workers)
            where = f"{r.scaling.path}:{r.scaling.kw_line('num_workers')}" if r.scaling is not None else ""
            workers = f"{int(n)} workers" + (f" ({where})" if where else "") if n is not None else \
                f"num_workers={count} workers" + (f" ({where}: a count the run's config sets)" if where else "")
            vals: dict[str, Any] = {"data_parallel": True}
            if n is not None:
                vals["nproc_per_node"] = int(n)
            evidence = [_ev(r.trainer)] + ([_ev(r.scaling, "num_workers", count if n is None else int(n))] if r.scaling is not None else [])
            return Outcome(U, evidence, f"data-parallel training via Ray Train: {r.trainer.short}() at {r.trainer.path}:{r.trainer.line} "
                           f"runs the package's training loop ({r.loop}) in {workers}, which Ray's Torch backend joins into "
                           "one process group", vals)
        procs = [ls.procs for ls in multi if ls.procs]
        nodes = [ls.nodes for ls in sizes if ls.nodes]
        values: dict[str, Any] = {}
        if procs:
            values["nproc_per_node"] = max(procs)
        if nodes:
            values["nnodes"] = max(nodes)
        if used:
            values["data_parallel"] = True
            how = ", ".join(kinds)
            return Outcome(U, [_ev(x) for x in used], f"data-parallel training via {how}", values)
        dp = [c for c in f.calls("torch.nn.DataParallel", "torch.nn.parallel.DataParallel") if not _TEST_PATH.search(c.path)] + lt_dp
        if dp:
            values["data_parallel"] = "DataParallel"
            return Outcome(P, [_ev(x) for x in dp], "single-process nn.DataParallel instead of one DDP process per GPU", values)
        off = [ls.launch for ls in single if ls.launch.launcher != "python"] + acc_single + lt_single
        values["data_parallel"] = False
        one_worker = [r for r in ray if r.multi is False and r.scaling is not None]
        if one_worker and not off:
            r = one_worker[0]
            return Outcome(N, [_ev(r.scaling, "num_workers", as_number(r.workers))],
                           f"Ray Train runs the training loop ({r.loop}) in one worker (ScalingConfig(num_workers="
                           f"{r.workers}) at {r.scaling.path}:{r.scaling.kw_line('num_workers')}): a single training process", values)
        if off:
            return Outcome(N, [_ev(x) for x in off], "every launch starts a single training process", values)
        detail = "single-process launches only" if single else "no multi-GPU launch or DDP wrapper found"
        if ddp_off:
            offs = [x for v in ddp_off.values() for x in v]
            x = offs[0]
            detail += (f"; DistributedDataParallel is wrapped only in a branch that is off by default "
                       f"(`{getattr(x, 'text', '').strip()[:80]}`, {x.path}:{x.line})")
        naive = [(a.target, a.path, a.line) for a in f.records("attr_assigns")
                 if a.target.endswith((".model_parallel", ".is_parallelizable")) and a.value is True and not _TEST_PATH.search(a.path)]
        # (qlora writes them with ``setattr(model, 'model_parallel', True)``)
        naive += [(f"{c.args[0].text}.{c.args[1]}", c.path, c.line) for c in f.calls("setattr") if len(c.args) == 3
                  and isinstance(c.args[0], Expr) and c.args[1] in ("model_parallel", "is_parallelizable") and c.args[2] is True
                  and not _TEST_PATH.search(c.path)]
        if single and uses_hf_trainer(f) and naive:
            # alpaca-lora/qlora: ``model.is_parallelizable = True; model.model_parallel = True`` keeps the Trainer from
            # DataParallel, and ``device_map="auto"`` has already spread the layers over the GPUs: they take turns
            target, path, line = naive[0]
            detail += (f" (with several visible GPUs the model's layers are split across them, {target} = True at "
                       f"{path}:{line}: the GPUs run one after another, not in parallel)")
        elif single and uses_hf_trainer(f) and (auto := _auto_device_map(f, ctx.project.training_files)) is not None:
            # baize: ``device_map = "auto"`` then ``from_pretrained(..., device_map=device_map)``: the Trainer sees a model spread
            # over several GPUs (``hf_device_map``), counts it as model parallel and wraps no DataParallel around it
            detail += (f" (with several visible GPUs device_map=\"auto\" at {auto.path}:{auto.line} splits the model's layers "
                       "across them: the GPUs run one after another, not in parallel)")
        elif single and uses_hf_trainer(f):
            detail += " (with several visible GPUs the HF Trainer would fall back to nn.DataParallel)"
        if not single:
            docs = [h for h in documented_launches(f, _DOC_PROCS) if h.kind == "command"
                    and any(m.group(1) is None or int(m.group(1)) > 1 for m in _DOC_PROCS.finditer(h.text or ""))]
            # (only for a script the repository does not ship either: then the README command is all there is of the run)
            docs = docs or [h for h in documented_launches(f, _DOC_ALL_GPUS) if h.kind == "command" and resolve_file(f, h.value) is None]
            docs = docs or [h for h in documented_launches(f, _DOC_LLAMAFACTORY) if h.kind == "command"]
            if docs:
                # the repository ships no launch and the README's training command is the run (the issue's training path
                # includes what a README command reaches): one process per GPU is data parallel, whatever wraps the model
                h = docs[0]
                n = max((int(m.group(1)) for m in _DOC_PROCS.finditer(h.text or "") if m.group(1)), default=None)
                values["data_parallel"] = True
                if n:
                    values["nproc_per_node"] = n
                how = ("the multi-process launch" if _DOC_PROCS.search(h.text or "") else
                       "LLaMA-Factory's launcher (`llamafactory-cli train` runs torchrun with one process per visible GPU)"
                       if _DOC_LLAMAFACTORY.search(h.text or "") else "the DeepSpeed launcher (one process per visible GPU)")
                return Outcome(U, [_ev(h)], f"data-parallel training via {how} the docs show "
                               f"(`{' '.join((h.text or '').split())[:120]}`, {h.path}:{h.line}); the repository ships no launch of its own", values)
        if not sizes and not ddp_off:
            engine = deepspeed_engine_run(f)
            if engine is not None:
                # a library whose trainer always builds a DeepSpeed engine in a process group it joins itself (CoLLiE's
                # ``Trainer`` -> ``DeepSpeedEngine(...)`` after ``deepspeed.init_distributed(world_size=...)``): the engine
                # all-reduces gradients over every process the user's launch starts; the package ships no launch
                built, joined = engine
                values["data_parallel"] = True
                return Outcome(U, [_ev(built), _ev(joined)],
                               f"data-parallel training via a DeepSpeed engine ({built.short}() at {built.path}:{built.line}) in the "
                               f"process group the package joins ({joined.name}() at {joined.path}:{joined.line}): gradients are "
                               "all-reduced over every launched process; no launch was found in the package, so the process "
                               "count is the launch's (torchrun, slurm or the DeepSpeed launcher)", values)
            acc = accelerate_config_run(f)
            if acc is not None:
                values["data_parallel"] = None
                return Outcome(NA, [_ev(acc[1]), _ev(acc[2])], accelerate_config_note(acc), values)
            nemo = nemo_megatron_trainer(f)
            if nemo is not None:
                values["data_parallel"] = None
                return Outcome(NA, [_ev(nemo)], f"not judged: the package builds NeMo's Megatron trainer ({nemo.short}(...) at "
                               f"{nemo.path}:{nemo.line}), whose NLPDDPStrategy trains data parallel over trainer.devices x "
                               "trainer.num_nodes processes; that trainer config is not in the repository: check its devices", values)
        return Outcome(N, [], detail, values)


_DS_ENGINES = ("deepspeed.initialize", "DeepSpeedEngine", "PipelineEngine")
_PROCESS_GROUP = ("deepspeed.init_distributed", "deepspeed.comm.init_distributed", "torch.distributed.init_process_group")


def deepspeed_engine_run(f: Facts) -> tuple[Call, Call] | None:
    """(the DeepSpeed engine the training code builds, the process-group join it makes) when code outside tests builds a
    DeepSpeed engine (``deepspeed.initialize``, ``DeepSpeedEngine(...)``) that no switch turns off and joins the process
    group itself (``deepspeed.init_distributed``, ``torch.distributed.init_process_group``), unswitched too; None otherwise."""
    def live(c: Call) -> bool:
        return not _TEST_PATH.search(c.path) and not guard_off(f, c) and not callers_off(f, c)

    built = [c for c in f.calls(*_DS_ENGINES) if c.name.startswith("deepspeed") and live(c)]
    # the trained model's engine first, not a frozen reference/teacher copy's (``self.ref_model, *_ = deepspeed.initialize(...)``)
    built.sort(key=lambda c: bool(_AUX_ENGINE.match(c.text)))
    joined = [c for c in f.calls(*_PROCESS_GROUP) if c.name in _PROCESS_GROUP and live(c)]
    return (built[0], joined[0]) if built and joined else None


#: a documented ``accelerate launch`` that takes its settings from a config file (``--config_file accelerate_config.yaml``)
_ACC_CONFIG_LAUNCH = lazy_compile(r"(?:^|\s)accelerate\s+launch\b.*?--config[-_]file[= ]+(\S+)")


def accelerate_config_run(f: Facts) -> tuple[Any, Call, Call] | None:
    """(the documented command, the ``Accelerator()``, its ``prepare``) when the package trains through Accelerate and its
    documented run is ``accelerate launch --config_file X`` with X not in the repository and no process count of its own
    (pytorch-accelerated: ``Accelerator()`` in its Trainer, ``self._accelerator.prepare(*components)``, and the README's
    "`accelerate launch --config_file accelerate_config.yaml train.py`" after "`accelerate config --config_file
    accelerate_config.yaml`"): Accelerate wraps the model in DistributedDataParallel when that config starts several
    processes, and the config is the user's answers to ``accelerate config``, so the process count is not visible. None
    when a launch ships, when a backend selector picks a non-distributed backend (Ludwig's strategies all looked up as
    "local"), or when the Accelerator or its ``prepare`` sits behind a switch that is off."""
    if f.launches() or backend_unselected(f, "ddp"):
        return None
    docs = [h for h in f.records("doc_hints") if h.kind in ("command", "inline_command")
            and (m := _ACC_CONFIG_LAUNCH.search(h.text or "")) and resolve_file(f, m.group(1).strip("'\"")) is None
            and not _DOC_PROCS.search(h.text or "")]
    if not docs:
        return None

    def live(c: Call) -> bool:
        return not _TEST_PATH.search(c.path) and not guard_off(f, c) and not callers_off(f, c)

    built = [c for c in f.calls("Accelerator") if c.name.startswith("accelerate") and live(c)]
    prepared = [c for c in f.calls("prepare") if "accelerator" in c.text.lower() and live(c)]
    return (docs[0], built[0], prepared[0]) if built and prepared else None


def nemo_megatron_trainer(f: Facts) -> Call | None:
    """NeMo's ``MegatronTrainerBuilder(cfg).create_trainer()`` (NeMo-Aligner's ``resolve_and_create_trainer``) in a package
    that ships no launch and no trainer config: the Lightning Trainer it builds runs NeMo's NLPDDPStrategy (Megatron data
    parallel, NLPFSDPStrategy when the config asks) over ``trainer.devices`` x ``trainer.num_nodes`` processes, a count the
    unshipped config holds. Outside tests and switches that are off."""
    if f.launches() or f.config("trainer.devices", "trainer.num_nodes"):
        return None
    built = [c for c in f.calls("MegatronTrainerBuilder") if c.name.startswith("nemo.") and not _TEST_PATH.search(c.path)
             and not guard_off(f, c)]
    return built[0] if built else None


def accelerate_config_note(acc: tuple[Any, Call, Call]) -> str:
    h, built, prepared = acc
    cfg = _ACC_CONFIG_LAUNCH.search(h.text or "")
    return (f"not judged: training runs through Accelerate ({built.short}() at {built.path}:{built.line}, prepare at "
            f"{prepared.path}:{prepared.line}), which wraps the model in DistributedDataParallel and shards the loaders when the "
            f"launch starts several processes; the documented run (`{' '.join((h.text or '').split())[:120]}`, {h.path}:{h.line}) "
            f"takes its process count from {cfg.group(1) if cfg else 'its config'}, an accelerate config the repository does not "
            "ship (the user's `accelerate config` answers): check its num_processes / distributed_type")


#: Ray Train's data-parallel trainers: each of ``ScalingConfig(num_workers=...)`` workers is a process (one GPU each with
#: ``use_gpu``) that Ray's Torch backend joins into one torch.distributed process group before running the training loop
_RAY_TRAINERS = (
    "ray.train.torch.TorchTrainer", "ray.train.huggingface.TransformersTrainer", "ray.train.huggingface.transformers.TransformersTrainer",
    "ray.train.lightning.LightningTrainer", "ray.train.data_parallel_trainer.DataParallelTrainer", "ray.train.DataParallelTrainer",
)
#: calls that are the training step itself inside a worker loop: a backward pass or an HF/TRL trainer
_STEP_CALLS = ("backward", *HF_TRAINERS)


@dataclass(frozen=True)
class RayWorkers:
    """A Ray Train trainer that runs the package's own training loop in its workers."""
    trainer: Call  # ``TorchTrainer(train_loop_per_worker=..., scaling_config=...)``
    loop: str  # the package's function handed to it as the per-worker loop
    scaling: Call | None  # the ``ScalingConfig(...)`` it is given, when found in the same function
    workers: Any  # ``num_workers``: a number, an Expr (read from a config at run time), or None when not given

    @property
    def multi(self) -> bool | None:
        """True: several workers (or a count the config decides); False: one; None: no count visible."""
        if self.workers is None:
            return None
        n = as_number(self.workers)
        if n is None:
            return True if isinstance(self.workers, Expr) else None
        return n > 1


def _loop_functions(f: Facts, path: str, name: str) -> set[str]:
    """``name`` and the functions of the same file it calls, transitively (a function is known by the calls in its body)."""
    calls = f.calls_in([path])
    defined = {c.func for c in calls if c.func}
    if name not in defined:
        return set()
    funcs = {name}
    while True:
        more = {c.short for c in calls if c.func in funcs and "." not in c.name and c.short in defined} - funcs
        if not more:
            return funcs
        funcs |= more


def ray_train_workers(f: Facts) -> list[RayWorkers]:
    """The Ray Train trainers (``TorchTrainer`` and kin) outside tests whose per-worker loop is a function of the package
    that runs the training step itself (lm-buddy: ``TorchTrainer(train_loop_per_worker=training_function, scaling_config=
    ScalingConfig(num_workers=config.ray.num_workers))`` with ``training_function`` -> ``load_and_train`` building TRL's
    ``SFTTrainer``). A trainer handed a loop from its caller (Ludwig's Ray backend ``run_train_remote(train_loop, ...)``,
    one alternative of a backend the run picks at run time) is not counted: which loop it runs is not visible there."""
    out: list[RayWorkers] = []
    for c in f.calls(*_RAY_TRAINERS):
        if not c.name.startswith("ray.") or _TEST_PATH.search(c.path) or guard_off(f, c) or callers_off(f, c):
            continue
        loop = c.kwargs.get("train_loop_per_worker", c.args[0] if c.args else None)
        name = getattr(loop, "ref", None) or getattr(loop, "text", None)
        if not isinstance(name, str) or not name.isidentifier():
            continue
        funcs = _loop_functions(f, c.path, name)
        if not funcs or not any(s.func in funcs for s in f.calls(*_STEP_CALLS) if s.path == c.path):
            continue
        sc = c.kwargs.get("scaling_config")
        text = getattr(sc, "text", "") or ""
        scaling = [s for s in f.calls("ScalingConfig") if s.path == c.path and s.name.startswith("ray.")
                   and ((text.startswith("ScalingConfig(") and s.line == c.kw_line("scaling_config"))
                        or (s.func == c.func and s.line <= c.line))]
        sc_call = scaling[-1] if scaling else None
        workers = sc_call.kwargs.get("num_workers") if sc_call is not None else None
        out.append(RayWorkers(c, name, sc_call, workers))
    return out


_AUX_ENGINE = lazy_compile(r"(?i)\s*[\w.]*\b(ref|reference|teacher|reward|critic|ema)(_?model)?\w*\s*[,=]")


def _sharding_rec(ctx: Context, other_used: bool) -> Priority | None:
    """FSDP/ZeRO advice: none when the other one is in use, the model is small or every launch is one process; high for 7B+."""
    if other_used:
        return None
    sizes = launch_sizes(ctx.facts)
    if sizes and all(ls.multi is False for ls in sizes) and not ctx.facts.calls("DistributedDataParallel"):
        return None  # one GPU: there is nothing to shard across
    b = ctx.project.params_billions
    if b is not None and b < 1:
        return None
    if b is not None and b >= 7:
        return Priority.HIGH
    return Priority.MEDIUM


def _jax_trainer(field_line: str) -> dict[str, str]:
    """A JAX trainer (levanter-like): a jitted ``train_step`` and a config dataclass holding the sharding setting."""
    return {"mylm/trainer.py": (
        "from dataclasses import dataclass\nfrom typing import List, Optional, Union\n\nimport equinox as eqx\nimport jax\n"
        "import optax\n\n\n@dataclass\nclass TrainerConfig:\n    batch_axis: Optional[str] = \"batch\"\n"
        f"    {field_line}\n\n\n@eqx.filter_jit\ndef train_step(model, opt_state, batch):\n"
        "    loss, grads = eqx.filter_value_and_grad(loss_fn)(model, batch)\n"
        "    updates, opt_state = optimizer.update(grads, opt_state, model)\n"
        "    return eqx.apply_updates(model, updates), opt_state, loss\n")}


#: JAX's FSDP: the axis of each parameter sharded over the data mesh axis (levanter ``fsdp_axis``), or the size of an
#: ``fsdp`` mesh axis (MaxText ``ici_fsdp_parallelism`` / ``dcn_fsdp_parallelism``, -1 for every device)
_JAX_FSDP_AXIS = ("fsdp_axis", "fsdp_axes")
_JAX_FSDP_SIZE = ("ici_fsdp_parallelism", "dcn_fsdp_parallelism")


#: a JAX device mesh given by the sizes of its named axes (axlearn ``mesh_shape_from_axes(data=-1, fsdp=8)``,
#: ``mesh_shape_from_axes(fsdp=-1, expert=16, model=8)``): -1 is every device left
_MESH_CALLS = frozenset({"mesh_shape_from_axes"})


def jax_mesh_axis(ctx: Context, *axes: str) -> tuple[list[Setting], list[Setting]]:
    """(sizes that give one of the mesh ``axes`` several devices, sizes that give it one) in the device-mesh shapes of a
    JAX training path; both empty on any other."""
    if not ctx.project.notes.get("jax_training"):
        return [], []
    wide: list[Setting] = []
    one: list[Setting] = []
    sized = [s for s in ctx.facts.settings(*axes)
             if s.source == "call" and s.key.split("(", 1)[0].rsplit(".", 1)[-1] in _MESH_CALLS]
    # ... or a config's size of that axis (levanter ``model_axis_size: 1``, MaxText ``ici_tensor_parallelism: 4``)
    sized += ctx.facts.effective(*(k for a in axes for k in _MESH_SIZE_KEYS.get(a, ())))
    for s in sized:
        if _TEST_PATH.search(s.path):
            continue
        n = as_number(s.value)
        if n is not None and n == int(n):
            (wide if n > 1 or n == -1 else one).append(s)
    return wide, one


#: the settings that size one named axis of a JAX device mesh
_MESH_SIZE_KEYS: dict[str, tuple[str, ...]] = {
    "model": ("model_axis_size", "ici_tensor_parallelism", "dcn_tensor_parallelism"),
    "expert": ("ici_expert_parallelism", "dcn_expert_parallelism"),
}


def _mesh_outcome(ctx: Context, axis: str, what: str, value_key: str) -> Outcome | None:
    """A check's answer from the size of one mesh axis of a JAX run (see :func:`jax_mesh_axis`), or None."""
    wide, one = jax_mesh_axis(ctx, axis)
    if wide:
        s = wide[0]
        more = f" (+{len(wide) - 1} more mesh shapes)" if len(wide) > 1 else ""
        return Outcome(U, [_ev(x, key=x.key, value=x.value) for x in wide[:6]],
                       f"JAX {what}: the device mesh's `{axis}` axis spans several devices ({axis}={s.value} at {s.path}:{s.line}{more})",
                       {value_key: int(as_number(s.value) or 0), "jax": True})
    if one:
        s = one[0]
        return Outcome(N, [_ev(x, key=x.key, value=x.value) for x in one[:6]],
                       f"JAX: the device mesh's `{axis}` axis has one device ({s.path}:{s.line}): no {what}", {value_key: 1, "jax": True})
    return None


def _jax_fsdp(ctx: Context) -> Outcome | None:
    """A2 on a JAX training path (``Project.notes["jax_training"]``): parameters and optimizer state sharded over the data
    axis of the mesh, from the run's sharding settings; None when none is set (checks.stack then says not judged)."""
    if not ctx.project.notes.get("jax_training"):
        return None
    f = ctx.facts
    axes = [s for s in f.effective(*_JAX_FSDP_AXIS) if s.value not in (None, "", [], "None")]
    sizes = [(as_number(s.value), s) for s in f.effective(*_JAX_FSDP_SIZE)]
    wide, one = jax_mesh_axis(ctx, "fsdp")
    sizes += [(as_number(s.value), s) for s in wide + one]
    on = axes + [s for n, s in sizes if isinstance(n, int | float) and (n > 1 or n == -1)]
    if on:
        s = on[0]
        return Outcome(U, [_ev(x, key=x.name, value=x.value) for x in on[:6]],
                       f"JAX FSDP: parameters and optimizer state sharded over the data axis of the device mesh ({s.name} = "
                       f"{s.value!r} at {s.path}:{s.line})", {"fsdp": True, "jax": True})
    off = [s for n, s in sizes if n == 1]
    if off:
        s = off[0]
        return Outcome(N, [_ev(x, key=x.name, value=x.value) for x in off[:6]],
                       f"JAX: the fsdp axis of the device mesh has size 1 ({s.name} at {s.path}:{s.line}): parameters are replicated",
                       {"fsdp": False, "jax": True})
    return None


#: an mmengine-style Python config (shikra's ``config/_base_/train/shikra_fsdp.py``) and the pipeline that reads it
MMENGINE_CONFIG = {
    # shikra: an mmengine Python config whose ``_base_`` holds the trainer's arguments as a module-level dict
    "config/_base_/train/shikra_fsdp.py": (
        "training_args = dict(\n    output_dir=None,  # required. must be filled by derived configs.\n    do_train=True,\n"
        "    per_device_train_batch_size=8,\n    num_train_epochs=5,\n    learning_rate=2e-5,\n"
        "    lr_scheduler_type='cosine',\n    warmup_ratio=0.03,\n\n    # train ddp\n    bf16=True,\n"
        "    fsdp=\"full_shard auto_wrap\",\n    fsdp_transformer_layer_cls_to_wrap='LlamaDecoderLayer',\n)\n"),
    "config/shikra_stage2.py": (
        "_base_ = ['_base_/train/shikra_fsdp.py']\n\n"
        "training_args = dict(output_dir='./exp/{{fileBasenameNoExtension}}')\n"),
    "mllm/pipeline/finetune.py": (
        "import sys\n\nfrom mmengine.config import Config\n"
        "from transformers import AutoModelForCausalLM, Seq2SeqTrainer, Seq2SeqTrainingArguments\n\n\n"
        "def main():\n    cfg = Config.fromfile(sys.argv[1])\n"
        "    training_args = Seq2SeqTrainingArguments(**cfg.training_args)\n"
        "    model = AutoModelForCausalLM.from_pretrained(cfg.model_args.model_name_or_path)\n"
        "    trainer = Seq2SeqTrainer(model=model, args=training_args, train_dataset=cfg.train_dataset)\n"
        "    trainer.train()\n\n\nif __name__ == '__main__':\n    main()\n"),
    "scripts/train.sh": "accelerate launch --num_processes 4 mllm/pipeline/finetune.py config/shikra_stage2.py\n",
}


@register
class A2FSDP(Check):
    id = "A2"
    title = "FSDP"
    title_zh = "全分片数据并行 (FSDP)"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMMUNICATION)
    priority = Priority.HIGH
    benefit = "parameters, gradients and optimizer states sharded across GPUs: per-GPU model-state memory drops ~N-fold"
    what = (
        "Whether the model is wrapped with PyTorch FSDP with real sharding: `FullyShardedDataParallel`/`fully_shard`, HF "
        "`fsdp: \"full_shard auto_wrap\"`, accelerate `distributed_type: FSDP`, Lightning `strategy=\"fsdp\"`/`FSDPStrategy`, "
        "torchtitan `data_parallel_shard_degree`, torchtune distributed recipes. `fsdp: \"\"` is off; `NO_SHARD` is partial "
        "(FSDP wiring without sharding behaves like DDP)."
    )
    why = (
        "Mixed-precision Adam keeps ~16 bytes of model state per parameter (ZeRO paper, Rajbhandari et al., SC'20): 112 GB "
        "for a 7B model, more than one 80 GB GPU. FULL_SHARD divides that by the number of GPUs; Meta reports training "
        "models up to 1T parameters with FSDP and 84 TFLOPS/GPU on 175B GPT on A100s (Zhao et al., VLDB 2023)."
    )
    fix = "Shard with FSDP: HF `fsdp: \"full_shard auto_wrap\"` with `fsdp_config.transformer_layer_cls_to_wrap`, or an accelerate config with `distributed_type: FSDP` and `fsdp_sharding_strategy: FULL_SHARD`."
    fix_zh = "启用 FSDP 分片：HF 配置 `fsdp: \"full_shard auto_wrap\"` 并设置 `fsdp_config.transformer_layer_cls_to_wrap`，或在 accelerate 配置中使用 `distributed_type: FSDP`、`fsdp_sharding_strategy: FULL_SHARD`。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://pytorch.org/docs/stable/fsdp.html", "https://arxiv.org/abs/2304.11277", "https://huggingface.co/docs/transformers/fsdp")
    snippets = {
        "hf-yaml": "fsdp: \"full_shard auto_wrap\"\nfsdp_config:\n  backward_prefetch: backward_pre\n  use_orig_params: true\n",
        "accelerate-yaml": (
            "distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n"
            "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_backward_prefetch: BACKWARD_PRE\n  fsdp_use_orig_params: true\n"
        ),
        "python": (
            "from torch.distributed.fsdp import fully_shard\n\n"
            "for block in model.model.layers:\n"
            "    fully_shard(block)\n"
            "fully_shard(model)\n"
        ),
        "lightning": "trainer = L.Trainer(devices=8, strategy=\"fsdp\")\n",
    }
    examples = (
        Example(MMENGINE_CONFIG, U, "shikra: fsdp=\"full_shard auto_wrap\" in the module-level dict of an mmengine config "
                "the launched recipe's _base_ lists: a declared setting, not an FSDP call in a module nothing imports"),
        Example({"pyproject.toml": ("[project]\nname = \"nemo-rl\"\n\n[project.optional-dependencies]\n"
                                    "fsdp = [\n  \"flash-attn==2.8.1\",\n  \"mamba-ssm\",\n]\n"),
                 "train.py": "import torch\nloss = model(x)\nloss.backward()\n"},
                N, "NeMo-RL: an optional-dependencies group named fsdp is packaging, not a setting"),
        Example({"nemo_rl/models/dtensor/parallelize.py": (
                     "from torch.distributed.fsdp import fully_shard\n\n\ndef _parallelize_model(model, dp_mesh):\n"
                     "    for layer in model.model.layers:\n        fully_shard(layer, mesh=dp_mesh)\n    return fully_shard(model, mesh=dp_mesh)\n"),
                 "nemo_rl/models/policy/workers/dtensor_policy_worker.py": (
                     "from nemo_rl.models.dtensor.parallelize import _parallelize_model\n\n\nclass DTensorPolicyWorker:\n"
                     "    def __init__(self, model, mesh):\n        self.model = _parallelize_model(model, mesh)\n\n"
                     "    def train(self, batch):\n        loss = self.model(batch).loss\n        loss.backward()\n"),
                 "tools/refit_verifier.py": ("def make_configs(args):\n    megatron_config = {\n        \"model_name\": args.model_name,\n"
                                             "        \"training_backend\": \"megatron\",\n    }\n    return megatron_config\n")},
                U, "a verification tool's dict naming the megatron backend does not unselect the package's FSDP2"),
        Example({"train.py": (
            "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy\n"
            "model = FSDP(model, sharding_strategy=ShardingStrategy.FULL_SHARD, auto_wrap_policy=policy)\n")}, U, "torch FSDP"),
        Example({"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nfsdp: full_shard auto_wrap\nfsdp_config:\n  backward_prefetch: backward_pre\n"}, U, "hf fsdp option"),
        Example({"fsdp.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\nnum_processes: 8\n"}, U, "accelerate fsdp"),
        Example({"train.py": "from torch.distributed.fsdp import fully_shard\nfor layer in model.layers:\n    fully_shard(layer)\nfully_shard(model)\n"}, U, "fsdp2"),
        Example({"run.sh": "tune run --nproc_per_node 8 full_finetune_distributed --config llama3_1/8B_full\n"}, U, "torchtune distributed recipe"),
        Example({"train.yaml": "fsdp: ''\nbf16: true\n"}, N, "fsdp empty"),
        Example({"train.py": "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nif isinstance(model, FSDP):\n    pass\n"}, N, "import and isinstance only"),
        Example(_parallel_lib(), N, "FSDP code only under a dp_config that defaults to None"),
        Example(_parallel_lib(", dp_config=DataParallelConfig(name='fsdp')"), U, "the builder passes a dp_config"),
        Example({"train.py": "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model)\n"}, N, "plain DDP"),
        Example({"train.py": (
            "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy\n"
            "model = FSDP(model, sharding_strategy=ShardingStrategy.NO_SHARD)\n")}, P, "NO_SHARD"),
        Example(FAIRSEQ2_DP, N, "library FSDP wrapper, the data-parallel selector defaults to DDP"),
        Example({**FAIRSEQ2_DP, "recipes/llama3_8b_sft.yaml": "trainer:\n  data_parallelism: fsdp\n  mixed_precision:\n    dtype: bfloat16\n"},
                U, "a recipe picks FSDP"),
        Example(_fsdp_kwargs("ShardingStrategy.NO_SHARD"), P, "NO_SHARD handed through **fsdp_kwargs"),
        Example(_fsdp_kwargs("sharding"), U, "a strategy the parallel config defaults to SHARD_GRAD_OP, through **fsdp_kwargs"),
        Example(strategy_registry(), N, "FSDP plugin of a strategy class the name registry never returns: every lookup passes 'local'"),
        Example(strategy_registry('"fsdp"'), U, "the backend looks the registry up with 'fsdp'"),
        Example(strategy_registry("config.strategy", {"configs/train.yaml": "trainer:\n  strategy: fsdp\n"}), U,
                "the registry name comes from a config that a recipe sets to fsdp"),
        Example(torchx_runner(), U, "torchtitan launched from a Python runner with --parallelism.data_parallel_shard_degree=nodes*nproc"),
        Example(accelerate_menu_lib(), N, "FSDP only in accelerate configs offered by name and in a wrap that follows the launch's config"),
        Example(accelerate_menu_lib("accelerate launch --config_file mylib/accelerate_configs/fsdp2.yaml train.py\n"), U,
                "a launch picks the FSDP config of the menu"),
        Example(torchx_runner(launch=False), N, "the same flag list only printed: no launch runs it"),
        Example(manual_fsdp_wrap(False), N, "wrap() under enable_wrap(wrapper_cls=FSDP) only under a --fsdp flag the launch does not pass"),
        Example(manual_fsdp_wrap(True), U, "the launch passes --fsdp: the manual enable_wrap/wrap units shard"),
        Example(_jax_trainer('fsdp_axis: Optional[Union[str, List[str]]] = "embed"  # Axis/Axes to use for FSDP'), U,
                "JAX: parameters sharded along their embed axis over the data mesh axis (levanter's fsdp_axis)"),
        Example(_jax_trainer("fsdp_axis: Optional[str] = None"), Status.NA, "JAX: no fsdp axis, nothing PyTorch either: not judged"),
        Example(_jax_trainer("ici_fsdp_parallelism: int = -1  # -1: every device of the slice"), U,
                "JAX: MaxText-style fsdp mesh axis over all devices"),
        Example(_jax_trainer("ici_fsdp_parallelism: int = 1"), N, "JAX: fsdp mesh axis of size 1"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        jax = _jax_fsdp(ctx)
        if jax is not None:
            return jax
        sites = fsdp_sites(f)
        sites, dead = _uncalled_sites(f, sites)
        if dead and not sites:
            return _dead_fsdp(dead)
        live, offs = _gated(f, [s.fact for s in sites])
        gated = bool(offs) and not live
        sites = [s for s in sites if any(s.fact is x for x in live)]
        away = orphan_sites(ctx, [s.fact for s in sites])
        if sites and len(away) == len(sites):
            # OpenChatKit: fairscale FSDP in ``modules/dist_gpt_fsdp_module.py``, which nothing in the repository imports
            return Outcome(N, [_ev(x) for x in away], unreached_note(f, away, "FSDP wrapping calls"), {"fsdp": False})
        sharded = [s for s in sites if s.sharded]
        if sharded:
            first = next((s for s in sharded if s.strategy or s.where), None)
            strat = first.strategy if first is not None else "FULL_SHARD"
            shown = ", ".join(x for x in (strat, first.where if first is not None else None) if x)
            return Outcome(U, [_ev(s.fact, key=s.how) for s in sharded], f"FSDP sharding ({shown}) via {sharded[0].how}",
                           {"fsdp": True, "sharding_strategy": strat or None})
        if sites:
            return Outcome(P, [_ev(s.fact, key=s.how) for s in sites], "FSDP with NO_SHARD: wired but shards nothing (behaves like DDP)",
                           {"fsdp": True, "sharding_strategy": "NO_SHARD"})
        off = fsdp_sites_off(f)
        if off:
            return Outcome(N, [_ev(s) for s in off], "FSDP is configured off", {"fsdp": False})
        if gated:
            return Outcome(N, [_ev(x) for x in offs], "FSDP wrapping code exists behind a switch that is off: " + _switch_text(offs),
                           {"fsdp": False})
        chosen = backend_unselected(f, "fsdp")
        if chosen:
            d0 = chosen[0]
            return Outcome(N, [_ev(x) for x in chosen], f"FSDP is an option of `{d0.name}` that no run picks: runs use "
                           f"'{d0.value}' ({d0.path}:{d0.line})", {"fsdp": False})
        offered = fsdp_offered(f)
        if offered:
            cfgs = [x for x in offered if not isinstance(x, Call)]
            wraps = [x for x in offered if isinstance(x, Call)]
            parts = ([f"accelerate configs shipped as options that no launch names ({', '.join(f'{x.path}:{x.line}' for x in cfgs[:3])})"]
                     if cfgs else []) + ([f"wrapping that runs only when the launch's accelerate config picks FSDP ({wraps[0].path}:{wraps[0].line})"]
                                         if wraps else [])
            return Outcome(N, [_ev(x) for x in offered], "FSDP only if a run picks it: " + "; ".join(parts), {"fsdp": False})
        detail = "FSDP is imported but no model is wrapped" if f.imports("torch.distributed.fsdp") else "no FSDP wrapping found"
        return Outcome(N, [], detail, {"fsdp": False})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status not in (Status.UNUSED, Status.PARTIAL) or outcome.values.get("documented_zero_stage"):
            return None  # the documented run's config, named for a ZeRO stage, is not shipped: no advice to add one
        return _sharding_rec(ctx, any(s.sharded for s in zero_sites(ctx.facts)) or bool(_tp_pp_used(ctx.facts))
                             or bool(hand_sharded_optimizer(ctx.facts, ctx.project)))


#: xllm ``core/deepspeed_configs.py`` + ``Config.deepspeed``: ZeRO configs as Python dicts in a mapping, one picked by a
#: config field (None by default: no DeepSpeed unless a run passes ``--zero_preset``)
_DS_MENU = {
    "mylib/presets.py": (
        "ZERO_1 = {\n    'bf16': {'enabled': 'auto'},\n    'zero_optimization': {'stage': 1, 'overlap_comm': True},\n}\n"
        "ZERO_2 = {\n    'bf16': {'enabled': 'auto'},\n    'zero_optimization': {\n        'stage': 2,\n        'overlap_comm': True,\n"
        "        'offload_optimizer': {'device': 'cpu'},\n    },\n}\n"
        "ZERO_3 = {\n    'bf16': {'enabled': 'auto'},\n    'zero_optimization': {'stage': 3, 'offload_param': {'device': 'cpu'}},\n}\n\n"
        "ZERO_PRESETS = {'1': ZERO_1, '2': ZERO_2, '3': ZERO_3}\n"),
    "mylib/config.py": (
        "from dataclasses import dataclass\nfrom typing import Optional\n\nfrom .presets import ZERO_PRESETS\n\n\n@dataclass\n"
        "class RunConfig:\n    model_name: str = 'mistralai/Mistral-7B-v0.1'\n    zero_preset: Optional[str] = None\n\n"
        "    @property\n    def deepspeed(self):\n        if self.zero_preset is None:\n            return None\n"
        "        return ZERO_PRESETS.get(self.zero_preset, None)\n"),
    "mylib/train.py": (
        "from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments\n\nfrom mylib.config import RunConfig\n\n\n"
        "def main():\n    cfg = HfArgumentParser(RunConfig).parse_args_into_dataclasses()[0]\n"
        "    args = TrainingArguments(output_dir='out', bf16=True, deepspeed=cfg.deepspeed)\n"
        "    Trainer(model=AutoModelForCausalLM.from_pretrained(cfg.model_name), args=args).train()\n\n\n"
        "if __name__ == '__main__':\n    main()\n"),
}


def _nemo_optim(name: str) -> dict[str, str]:
    """NeMo-Aligner ``examples/nlp/gpt/conf/gpt_sft.yaml``: the optimizer chosen by name in the model's ``optim`` section."""
    return {
        "examples/nlp/gpt/conf/gpt_sft.yaml": (
            "trainer:\n  num_nodes: 1\n  devices: 8\n  accelerator: gpu\n  precision: bf16\n\n"
            "model:\n  micro_batch_size: 1\n  global_batch_size: 128\n  megatron_amp_O2: True\n\n"
            "  optim:\n    name: " + name + "\n    lr: 3e-5\n    weight_decay: 0.01\n    betas:\n    - 0.9\n    - 0.98\n"),
        "examples/nlp/gpt/train_gpt_sft.py": (
            "from nemo.core.config import hydra_runner\nfrom nemo_aligner.algorithms.supervised import SupervisedTrainer\n\n\n"
            "@hydra_runner(config_path=\"conf\", config_name=\"gpt_sft\")\ndef main(cfg) -> None:\n"
            "    sft_trainer = SupervisedTrainer(cfg=cfg.trainer.sft, model=ptl_model)\n    sft_trainer.fit()\n\n\n"
            "if __name__ == \"__main__\":\n    main()\n"),
    }


@register
class A3ZeRO(Check):
    id = "A3"
    title = "DeepSpeed ZeRO"
    title_zh = "DeepSpeed ZeRO"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMMUNICATION)
    priority = Priority.HIGH
    benefit = "optimizer states (stage 1), gradients (2) and parameters (3) partitioned across GPUs: up to N-fold less model-state memory"
    what = (
        "Whether ZeRO partitioning is on: DeepSpeed `zero_optimization.stage` 1/2/3 (0 is off), an HF/TRL `deepspeed=` config, "
        "accelerate `deepspeed_config.zero_stage`, Lightning `\"deepspeed_stage_2\"`/`DeepSpeedStrategy(stage=)`, ColossalAI "
        "`LowLevelZeroPlugin`/`GeminiPlugin`, and the ZeRO-1 equivalents `ZeroRedundancyOptimizer` and Megatron's "
        "`--use-distributed-optimizer`. Records the stage and optimizer offload."
    )
    why = (
        "ZeRO removes the data-parallel replication of model states: with 64 GPUs, stage 1/2/3 cut the 16 bytes/parameter "
        "of mixed-precision Adam to ~4.2/~2.1/~0.25 bytes, and ZeRO trained 100B-parameter models at 15 PFLOPS on 400 V100s "
        "(Rajbhandari et al., SC'20). Stage 2 costs no more communication than DDP; stage 3 adds ~50 %."
    )
    fix = "Add a DeepSpeed config with `\"zero_optimization\": {\"stage\": 2}` (stage 3 when the parameters themselves do not fit) and pass it with `--deepspeed ds_config.json`."
    fix_zh = "添加 DeepSpeed 配置 `\"zero_optimization\": {\"stage\": 2}`（参数本身放不下时用 stage 3），并通过 `--deepspeed ds_config.json` 传入。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://arxiv.org/abs/1910.02054", "https://www.deepspeed.ai/tutorials/zero/")
    snippets = {
        "deepspeed-json": (
            '{\n  "train_micro_batch_size_per_gpu": "auto",\n  "gradient_accumulation_steps": "auto",\n  "bf16": {"enabled": "auto"},\n'
            '  "zero_optimization": {\n    "stage": 2,\n    "overlap_comm": true,\n    "contiguous_gradients": true,\n'
            '    "reduce_bucket_size": "auto"\n  }\n}\n'
        ),
        "hf-yaml": "deepspeed: configs/ds_z2_config.json\n",
        "accelerate-yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n  offload_optimizer_device: none\n",
        "lightning": "trainer = L.Trainer(devices=8, strategy=\"deepspeed_stage_2\")\n",
    }
    examples = (
        Example(_nemo_optim("distributed_fused_adam"), U, "NeMo-Aligner: optim.name distributed_fused_adam is Apex's ZeRO-2 optimizer"),
        Example(_nemo_optim("fused_adam"), N, "the same recipe with Apex's FusedAdam shards nothing"),
        Example({"ds_config.json": '{\n  "train_batch_size": 64,\n  "zero_optimization": {\n    "stage": 2,\n    "overlap_comm": true\n  }\n}\n'}, U, "ds json stage 2"),
        Example({"ds_z3.json": '{\n  "zero_optimization": {\n    "stage": 3,\n    "offload_optimizer": {"device": "cpu"}\n  }\n}\n',
                 "run.sh": "deepspeed train.py --deepspeed ds_z3.json\n"}, U, "stage 3 offload"),
        Example({"acc.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n  offload_optimizer_device: none\n"}, U, "accelerate"),
        Example({"train.py": "import lightning as L\ntrainer = L.Trainer(devices=8, strategy='deepspeed_stage_3')\n"}, U, "lightning strategy"),
        Example({"train.yaml": "deepspeed: examples/deepspeed/ds_z3_config.json\nbf16: true\n"}, U, "referenced config named z3"),
        Example({"ds_config.json": '{\n  "zero_optimization": {\n    "stage": 0\n  }\n}\n'}, N, "stage 0"),
        Example({"train.py": "import deepspeed\n# model, opt, _, _ = deepspeed.initialize(model=model, config='ds.json')\n"}, N, "commented out"),
        Example({"train.py": "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model)\n"}, N, "ddp only"),
        Example({"run.sh": "deepspeed train.py --deepspeed configs/my_ds.json\n"}, P, "config outside the repo"),
        Example({**_DS_MENU, "run.sh": "deepspeed --num_gpus 8 mylib/train.py --zero_preset 2\n"}, U,
                "a menu of DeepSpeed dicts, the launch picks stage 2"),
        Example(_DS_MENU, N, "a menu of DeepSpeed dicts looked up by a config field that defaults to None"),
        Example({"internlm/train/pipeline.py": _ZERO_WRAPPER}, U, "ZeRO optimizer wrapper built directly (InternEvo)"),
        Example(SKYRL_BACKENDS, N, "ZeRO-3 configs of a DeepSpeed backend the strategy does not pick"),
        Example(accelerate_menu_lib(), N, "ZeRO only in a menu of accelerate configs that no launch names"),
        Example(accelerate_menu_lib("accelerate launch --config_file mylib/accelerate_configs/zero3.yaml train.py\n"), U,
                "a launch picks the ZeRO-3 config of the menu"),
        Example(strategy_registry(), N, "DeepSpeed plugin of a strategy class the name registry never returns: every lookup passes 'local'"),
        Example(strategy_registry('"deepspeed"'), U, "the backend looks the registry up with 'deepspeed'"),
        Example({**SKYRL_BACKENDS, "examples/gsm8k/deepspeed_grpo.yaml": "trainer:\n  strategy: deepspeed\n  epochs: 20\n"}, U,
                "a recipe picks the DeepSpeed strategy"),
        Example({"internlm/train/pipeline.py": _ZERO_WRAPPER.replace("if not use_fsdp:", "if use_zero:"),
                 "configs/7B_sft.py": "use_zero = False\nuse_fsdp = False\n"}, N, "ZeRO wrapper behind a switch that is off"),
        Example({"nanochat/optim.py": (  # a raw-PyTorch optimizer that shards its states (nanochat's MuonAdamW)
            "import torch\nimport torch.distributed as dist\n\n\nclass DistAdamW(torch.optim.Optimizer):\n"
            "    def _reduce(self, group, world_size):\n        infos = {}\n        for p in group['params']:\n"
            "            grad = p.grad\n            rank_size = grad.shape[0] // world_size\n"
            "            grad_slice = torch.empty_like(grad[:rank_size])\n"
            "            future = dist.reduce_scatter_tensor(grad_slice, grad, op=dist.ReduceOp.AVG, async_op=True).get_future()\n"
            "            infos[p] = (future, grad_slice)\n        return infos\n\n"
            "    def _gather(self, p, p_slice):\n        return dist.all_gather_into_tensor(p, p_slice, async_op=True).get_future()\n"),
            "scripts/base_train.py": "from nanochat.optim import DistAdamW\n\noptimizer = DistAdamW(param_groups)\nloss.backward()\noptimizer.step()\n",
            "runs/speedrun.sh": "torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=20\n"}, U,
            "hand-written ZeRO-2 optimizer"),
        Example({"megatron/core/distributed/param_and_grad_buffer.py": (  # a framework's own sharding, behind its own switch
            "import torch\nfrom megatron.core import parallel_state\n\n\nclass _ParamAndGradBucketGroup:\n"
            "    def start_grad_sync(self):\n        if self.ddp_config.use_distributed_optimizer:\n"
            "            torch.distributed.reduce_scatter_tensor(local_data_view, bucket.grad_data, group=self.dp_group, async_op=True)\n\n"
            "    def start_param_sync(self):\n        torch.distributed.all_gather_into_tensor(bucket.param_data, local_data_view, group=self.dp_group)\n"),
            "pretrain_gpt.py": "from megatron.training import pretrain\n\npretrain(train_valid_test_datasets_provider, model_provider)\n"}, N,
            "framework's distributed optimizer code, switch not set"),
        Example(bmtrain.model_files(), U, "BMTrain: DistributedParameter weights in CheckpointBlocks, partitioned over the ranks (ZeRO-3)"),
        Example(bmtrain.model_files(layers="bmt.TransformerBlockList([bmt.CheckpointBlock(TransformerBlock(dim), zero_level=2) for _ in range(num_layers)])",
                                    param="torch.nn.Parameter"), U, "BMTrain blocks at zero_level=2: ZeRO-2"),
        Example(bmtrain.model_files(layers="torch.nn.ModuleList([TransformerBlock(dim) for _ in range(num_layers)])",
                                    param="torch.nn.Parameter"), N, "bmtrain imported for its optimizer only: plain torch parameters, nothing partitioned"),
        Example(bmtrain.multi_backend_files(), N, "BMTrain layers of a trainer whose BMTrain backend is an option left off"),
    )

    def detect(self, ctx: Context) -> Outcome:
        sites = zero_sites(ctx.facts)
        on = [s for s in sites if s.sharded and s.stage]
        if on:
            top = max(on, key=lambda s: s.stage or 0)
            values: dict[str, Any] = {"zero_stage": top.stage}
            offs = sorted({s.offload for s in on if s.offload})
            if offs:
                values["offload_optimizer"] = offs[0]
            if len({s.stage for s in on}) > 1:
                values["zero_stages"] = sorted({s.stage for s in on if s.stage is not None})
            return Outcome(U, [_ev(s.fact, key=s.how, value=s.stage) for s in on], f"ZeRO stage {top.stage} via {top.how}", values)
        hand = hand_sharded_optimizer(ctx.facts, ctx.project)
        if hand:
            c = hand[0]
            return Outcome(U, [_ev(x, key="reduce_scatter of gradients") for x in hand],
                           f"ZeRO-2 style sharding written by hand: gradients reduce-scattered in the optimizer ({c.path}:{c.line}), "
                           "each rank updates and keeps optimizer state for its slice, updated slices all-gathered", {"zero_stage": 2, "hand_written": True})
        wrapped = zero_optimizer_class(ctx.facts, ctx.project)
        if wrapped:
            c = wrapped[0]
            return Outcome(U, [_ev(x, key=x.short) for x in wrapped],
                           f"ZeRO through {c.short} ({c.path}:{c.line}): it shards at least the optimizer states across the "
                           "data-parallel ranks; its stage and group size come from the optimizer's own config", {"zero_stage": 1})
        unknown = [s for s in sites if s.sharded is None]
        if unknown:
            return Outcome(P, [_ev(s.fact, key=s.how) for s in unknown],
                           "a DeepSpeed config is passed but is not in the repository: the ZeRO stage is not visible", {"zero_stage": None})
        off = [s for s in sites if s.stage == 0]
        if off:
            return Outcome(N, [_ev(s.fact, key=s.how, value=0) for s in off], "ZeRO stage 0 (partitioning off)", {"zero_stage": 0})
        alt = [s for s in zero_sites(ctx.facts, keep_alternatives=True) if s.sharded and _alternative_backend(ctx.facts, s)]
        if alt:
            family = "deepspeed" if alt[0].how.startswith(_DS_ROUTES) else "megatron"
            sel = backend_unselected(ctx.facts, family)[0]
            return Outcome(N, [_ev(sel), *(_ev(s.fact, key=s.how, value=s.stage) for s in alt)],
                           f"ZeRO is configured only for the {family} backend ({alt[0].how} at {alt[0].fact.path}:{alt[0].fact.line}), "
                           f"which no run picks: `{sel.name}` is {sel.value!r} ({sel.path}:{sel.line})", {"zero_stage": 0})
        docs = [h for h in documented_launches(ctx.facts, _ZERO_FILE) if h.kind == "command_file"
                and _ZERO_FILE.search(h.value.rsplit("/", 1)[-1]) and resolve_file(ctx.facts, h.value) is None]
        if docs:
            stage = _ZERO_FILE.search(docs[0].value.rsplit('/', 1)[-1]).group(1)
            return Outcome(N, [], "no ZeRO configuration in the repository" + _doc_note(
                docs, f"a launch with `{docs[0].value}` (not in the repository), a config named for ZeRO stage {stage}"),
                {"zero_stage": 0, "documented_zero_stage": int(stage)})
        unpassed = unlaunched_ds_configs(ctx.facts)
        shipped = [e for e in ctx.facts.config("zero_optimization.stage") if e.path in unpassed and (_stage(e.value, ctx.facts) or 0) > 0]
        if shipped:
            # MedicalGPT: scripts/zero{1,2,3}.json beside launches that pass none of them (B1: "shipped but nothing visible
            # passes it"); a documented ``--deepspeed zero2.json`` is an option offered, not the run
            return Outcome(N, [_ev(e, key=e.dotted, value=e.value) for e in shipped],
                           "ZeRO only if a run passes it: DeepSpeed configs shipped as options ("
                           + ", ".join(f"stage {e.value} at {e.path}:{e.line}" for e in shipped[:3])
                           + ") that no launch, recipe or code passes", {"zero_stage": 0})
        menu = accelerate_menu(ctx.facts)
        offered = [x for x in ctx.facts.effective("zero_stage") if x.source == "config" and x.path in menu]
        if offered:
            return Outcome(N, [_ev(x, key="zero_stage", value=x.value) for x in offered],
                           "ZeRO only if a run picks it: accelerate configs shipped as options that no launch names ("
                           + ", ".join(f"{x.path}:{x.line}" for x in offered[:3]) + ")", {"zero_stage": 0})
        # DeepSpeed dicts of a Python menu the run picks none of (``DS_CONFIG_MAPPER.get(self.deepspeed_stage)`` with
        # ``deepspeed_stage: Optional[str] = None`` and no launch setting it: see Facts.menu_unselected)
        unpicked = ctx.facts.menu_unselected()
        stages = [e for e in ctx.facts.records("configs") if (e.path, e.keys[0] if e.keys else None) in unpicked
                  and [str(k) for k in e.keys[1:]] == ["zero_optimization", "stage"]]
        if stages:
            look = unpicked[(stages[0].path, stages[0].keys[0])]
            key = look.args[0].text if look.args and isinstance(look.args[0], Expr) else "its key"
            return Outcome(N, [], "ZeRO only if a run picks it: DeepSpeed configs shipped as a menu ("
                           + ", ".join(f"stage {e.value} at {e.path}:{e.line}" for e in stages[:3])
                           + f") looked up by `{key}` ({look.path}:{look.line}), which no run sets to one of its keys", {"zero_stage": 0})
        dict_off = sorted(switched_off_ds_dicts(ctx.facts))
        if dict_off:
            e = next(e for e in ctx.facts.config("zero_optimization.stage", "zero_optimization") if e.path == dict_off[0])
            c = next(c for c in ctx.facts.calls(*_DS_CONSUMERS) if c.path == dict_off[0])
            return Outcome(N, [Facts.ev(e), Facts.ev(c)], f"ZeRO is configured ({e.path}:{e.line}) only for DeepSpeed under "
                           f"`{c.guard}` ({c.path}:{c.line}), a branch the run leaves off", {"zero_stage": 0})
        return Outcome(N, [], "no ZeRO configuration found", {"zero_stage": 0})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status not in (Status.UNUSED, Status.PARTIAL) or outcome.values.get("documented_zero_stage"):
            return None  # the documented run's config, named for a ZeRO stage, is not shipped: no advice to add one
        return _sharding_rec(ctx, any(s.sharded for s in fsdp_sites(ctx.facts)) or bool(_tp_pp_used(ctx.facts)))


# -- model parallelism: TP / PP / SP / EP ------------------------------------------------------

TP_NAMES = ("tensor_model_parallel_size", "tensor_parallel_size", "tp_size", "tensor_parallel_degree", "tp_degree",
            "model_parallel_size", "autotp_size")
PP_NAMES = ("pipeline_model_parallel_size", "pipeline_parallel_size", "pp_size", "pipeline_parallel_degree", "pp_degree",
            "pipe_parallel_size",
            "pipeline_group_size")  # OpenChatKit's GPipe launches: ``--pipeline-group-size 8 --data-group-size 1 --pp-mode gpipe``
CP_NAMES = ("context_parallel_size", "context_parallel_degree", "cp_size", "cp_degree", "sequence_parallel_size", "sp_size",
            "sp_degree", "ulysses_sequence_parallel_size", "ulysses_degree", "ulysses_size", "ring_attn_size", "ring_degree",
            "sequence_parallel_degree",
            # USP (yunchang ``set_seq_parallel_pg(sp_ulysses_degree, sp_ring_degree, ...)``): the Ulysses x ring split
            "sp_ulysses_degree", "sp_ring_degree", "sp_ulysses_size", "sp_ring_size")
#: boolean switches that shard the experts over the data-parallel ranks (megablocks ``--moe-expert-model-parallelism``)
_EP_SWITCHES = ("moe_expert_model_parallelism", "expert_model_parallelism")
EP_NAMES = ("expert_model_parallel_size", "expert_parallel_size", "ep_size", "moe_expert_parallel_size", "expert_parallel_degree",
            "ep_degree", "moe_ep_size")


def _nanotron(facts: Facts, key: str) -> list[ConfigEntry]:
    """nanotron's ``parallelism: {dp, tp, pp, expert_parallel_size}`` short keys."""
    return [e for e in facts.config(f"parallelism.{key}") if not isinstance(e.value, Container)]


def _degree_configs(facts: Facts, kind: str) -> list[tuple[float, Any]]:
    """(degree, call) for each live ``<kind>Parallel...Config(degree=N)`` a recipe builds (OLMo-core
    ``ep_config=TransformerExpertParallelConfig(degree=-1)`` in ``src/scripts/train/OLMoE2-large.py``,
    ``pp_config=TransformerPipelineParallelConfig(degree=2, ...)``): the size that recipe runs with."""
    pat = re.compile(rf"{kind}Parallel\w*Config$")
    out: list[tuple[float, Any]] = []
    for c in facts.calls_where(pat.search):
        n = as_number(c.kwargs.get("degree"))
        if n is not None and not _TEST_PATH.search(c.path) and not guard_off(facts, c) and not uncalled_function(facts, c):
            out.append((n, c))
    return out


def tp_sizes(facts: Facts, inference: bool = False) -> list[tuple[float, Any]]:
    return _sizes(facts, TP_NAMES, _nanotron(facts, "tp"), inference) + _degree_configs(facts, "Tensor")


def pp_sizes(facts: Facts, inference: bool = False) -> list[tuple[float, Any]]:
    return _sizes(facts, PP_NAMES, _nanotron(facts, "pp"), inference) + _degree_configs(facts, "Pipeline")


def _torch_tp_calls(facts: Facts) -> list[Call]:
    return [c for c in facts.calls("parallelize_module", "ColwiseParallel", "RowwiseParallel")
            if "torch.distributed" in c.name or "vescale" in c.name] + _fairscale_tp_layers(facts) + _own_tp_layers(facts) \
        + _own_tp_apply(facts)


#: a project's own function that shards a model for tensor parallelism (pytorch-labs/gpt-fast ``tp.apply_tp(model)``)
_OWN_TP_FUNC = lazy_compile(r"^_?apply_(tp|tensor_parallel(ism)?)$")


def _own_tp_apply(facts: Facts) -> list[Call]:
    """Calls of the project's own tensor-parallel sharding function, defined in a file that runs a collective (gpt-fast's
    ``tp.py``: ``apply_tp`` splits each linear's weight by the world size and all-reduces the outputs with
    ``funcol.all_reduce``), from outside it: the entry point's ``apply_tp(model)``."""
    paths = {c.path for c in facts.calls_where(_COLLECTIVE_SET.__contains__)}  # (each file once: Megatron-LM has 153 collectives)
    if not any(p in facts.files and any(x.func and _OWN_TP_FUNC.match(x.func) for x in facts.files[p].calls) for p in paths):
        return []
    return [c for c in facts.calls_where(_OWN_TP_FUNC.match) if not (c.func and _OWN_TP_FUNC.match(c.func))]


_COLLECTIVE = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor")
_COLLECTIVE_SET = frozenset(_COLLECTIVE)


def _own_tp_layers(facts: Facts) -> list[Call]:
    """The project's own column/row-parallel layers, built in its model: classes named ``ColumnParallelLinear`` or
    ``RowParallelLinear`` in a file that runs a collective (DeepSeek-V3's ``inference/model.py`` splits each weight by the
    world size and all-reduces the row-parallel output)."""
    own = {(k.path, k.name) for k in facts.records("classes") if k.name in _FAIRSCALE_TP[:2]}
    if not own:
        return []
    files = {p for p, _ in own if any(c.short in _COLLECTIVE for c in facts.files[p].calls)}
    names = {n for p, n in own if p in files}
    return [c for c in facts.calls(*sorted(names)) if c.name in names and c.path in files] if names else []


_FAIRSCALE_TP = ("ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding", "ParallelEmbedding")


def _fairscale_tp_layers(facts: Facts) -> list[Call]:
    """fairscale's model-parallel layers, split over the group ``initialize_model_parallel(n)`` makes (Meta's llama3 builds
    its attention and MLP from them, with ``n`` the launch's world size); none when every such call passes 1."""
    layers = [c for c in facts.calls(*_FAIRSCALE_TP) if c.name.startswith("fairscale.nn.model_parallel")]
    inits = [c for c in facts.calls("initialize_model_parallel") if c.name.startswith("fairscale.")]
    if layers and inits and all(c.args and c.args[0] == 1 for c in inits):
        return []
    return layers


def _tp_pp_used(facts: Facts) -> list[Any]:
    return [x for n, x in tp_sizes(facts) + pp_sizes(facts) if n > 1] + _torch_tp_calls(facts)


def _size_outcome(sizes: list[tuple[float, Any]], label: str, value_key: str, code_sites: list[Any], code_what: str) -> Outcome:
    """Sizes decide; code that can apply the parallelism counts only when no size is stated (it is gated by the size)."""
    visible = [(n, x) for n, x in sizes if n == VISIBLE_GPUS]
    sizes = [(n, x) for n, x in sizes if n != VISIBLE_GPUS]
    big = [(n, x) for n, x in sizes if n > 1 or n == -1]
    if visible and not big:
        x = visible[0][1]
        return Outcome(U, [_ev(y) for _, y in visible] + [_ev(c) for c in code_sites],
                       f"{label} over every GPU the process sees (`{x.name}={x.value.text}` at {x.path}:{x.line}; one GPU "
                       "means no split)", {value_key: None, f"{value_key}_visible_gpus": True})
    if big:
        top = max(int(n) for n, _ in big)
        # (-1 alone: the size is whatever the other dimensions leave of the world, OLMo-core ``degree=-1``)
        what = f"{label} size {top}" if top != -1 else f"{label} over the ranks the other dimensions leave (size -1)"
        spread = Counter(int(n) for n, _ in sizes)
        if top != -1 and len(spread) > 1:
            # recipes that differ (LLaMA2-Accessory: size 1 in 26 launches, 2 in 8, 8 in 4, 4 in 2): the largest is not the
            # project's size, each recipe's model picks its own
            what = (f"{label} size up to {top}: " + ", ".join(f"{k} in {v} setting{'s' if v > 1 else ''}"
                                                              for k, v in sorted(spread.items(), key=lambda t: (-t[1], t[0]))))
        return Outcome(U, [_ev(x, value=int(n)) for n, x in big] + [_ev(c) for c in code_sites], what, {value_key: top})
    if sizes:
        return Outcome(N, [_ev(x, value=int(n)) for n, x in sizes], f"{label} size 1 ({label} off)", {value_key: 1})
    if code_sites:
        return Outcome(U, [_ev(c) for c in code_sites], f"{label} through {code_what}", {value_key: None})
    return Outcome(N, [], f"no {label} configuration found", {value_key: 1})


def _gated(f: Facts, sites: Iterable[Any]) -> tuple[list[Any], list[Any]]:
    """(code sites that can run, the settings that switch the others off): a call under an ``if`` whose switch is off, or in a
    helper whose every caller is (``m.apply_tp(tp_mesh)`` only under ``if tp_config is not None:`` with ``tp_config = None``
    by default and nothing setting it)."""
    on_: list[Any] = []
    offs: list[Any] = []
    for c in sites:
        gate = (guard_off(f, c) or callers_off(f, c, hops=4)) if isinstance(c, Call) else []
        if gate:
            offs += [g for g in gate if g not in offs]
        else:
            on_.append(c)
    return on_, offs


def _uncalled_sites(f: Facts, sites: list[Any]) -> tuple[list[Any], list[tuple[Any, str]]]:
    """(sites that some code reaches, (site, function) for those in a function nothing in the project calls)."""
    live: list[Any] = []
    dead: list[tuple[Any, str]] = []
    for s in sites:
        func = uncalled_function(f, s.fact) if isinstance(s.fact, Call) else None
        if func:
            dead.append((s, func))
        else:
            live.append(s)
    return live, dead


def _dead_fsdp(dead: list[tuple[Any, str]]) -> Outcome:
    s0, func = dead[0]
    return Outcome(N, [_ev(s.fact, key=s.how) for s, _ in dead],
                   f"FSDP wrapping code exists only in {func}() ({s0.fact.path}:{s0.fact.line}), which nothing in the repository "
                   "calls: it wraps no model of the project's runs", {"fsdp": False})


def _switch_text(offs: list[Any]) -> str:
    x = offs[0]
    key = getattr(x, "key", None) or getattr(x, "name", "")
    return f"{key} = {getattr(x, 'value', None)} at {x.path}:{x.line}"


_ADAPTERS = {"lora", "qlora", "dora", "ia3", "adalora", "loha", "lokr"}


def _model_parallel_rec(ctx: Context, min_billions: float) -> Priority | None:
    """TP/PP advice only for very large full-parameter training that does not already shard with FSDP or ZeRO-3."""
    b = ctx.project.params_billions
    if b is None or b < min_billions:
        return None
    f = ctx.facts
    adapters = any(isinstance(s.value, str) and s.value.lower() in _ADAPTERS for s in f.effective("finetuning_type", "adapter", "peft_type"))
    if adapters or f.calls("get_peft_model", "LoraConfig"):
        return None
    if any(s.sharded for s in fsdp_sites(f)) or any((s.stage or 0) >= 3 for s in zero_sites(f)):
        return None
    return Priority.MEDIUM


#: an inference-only script on one GPU (DeepSeek-VL's ``inference.py``), and the same with a 70B model spread by accelerate
ONE_GPU_INFERENCE = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\nmodel_path = \"deepseek-ai/deepseek-vl-7b-chat\"\n"
    "vl_gpt = AutoModelForCausalLM.from_pretrained(model_path, trust_remote_code=True)\n"
    "vl_gpt = vl_gpt.to(torch.bfloat16).cuda().eval()\n"
    "outputs = vl_gpt.generate(inputs_embeds=inputs_embeds, max_new_tokens=512, do_sample=False, use_cache=True)\n")
SPREAD_INFERENCE = ONE_GPU_INFERENCE.replace('"deepseek-ai/deepseek-vl-7b-chat"', '"meta-llama/Llama-2-70b-chat-hf"').replace(
    "trust_remote_code=True)", 'device_map="auto", torch_dtype=torch.float16)')


@register
class A4TensorParallel(Check):
    id = "A4"
    title = "Tensor parallel"
    title_zh = "张量并行 (TP)"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMMUNICATION)
    priority = Priority.MEDIUM
    benefit = "splits each layer's weights and activations over GPUs of a node when one layer no longer fits"
    what = (
        "Whether tensor (intra-layer) model parallelism is on for training: Megatron `--tensor-model-parallel-size` > 1, "
        "nanotron `parallelism.tp`, torchtitan `tensor_parallel_degree`, ColossalAI `tp_size`, DeepSpeed AutoTP "
        "`autotp_size`, PyTorch `parallelize_module` with `ColwiseParallel`/`RowwiseParallel`. Size 1 is off; inference-engine "
        "settings (vLLM `tensor_parallel_size`, rollout TP) are not training TP."
    )
    why = (
        "Megatron-LM's TP splits attention and MLP GEMMs across GPUs with two all-reduces per layer; it reached 76 % "
        "scaling efficiency for an 8.3B model on 512 V100s (Shoeybi et al., 2019) and is what lets a 70B+ layer fit. Over "
        "NVLink within one node it costs little; across nodes it is communication-bound, so TP stays <= GPUs per node."
    )
    fix = "For models whose layers or activations do not fit even with ZeRO-3/FSDP (typically 70B+ or very long sequences), set `--tensor-model-parallel-size 2..8` within a node (Megatron) or `tensor_parallel_degree` (torchtitan)."
    fix_zh = "当模型单层或激活在 ZeRO-3/FSDP 下仍放不下时（通常 70B 以上或超长序列），在节点内设置 `--tensor-model-parallel-size 2..8`（Megatron）或 `tensor_parallel_degree`（torchtitan）。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://arxiv.org/abs/1909.08053", "https://pytorch.org/docs/stable/distributed.tensor.parallel.html")
    snippets = {"shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --sequence-parallel\n"}
    examples = (
        Example({"end-to-end-use-cases/structured_parser/src/config.yaml": (
                     "model:\n  backend: openai-compat\n  path: /path/to/checkpoint\n  tensor_parallel_size: 4\n"
                     "  max_model_len: 32000\n  max_num_seqs: 32\n"),
                 "src/finetuning.py": "import torch\nloss = model(batch).loss\nloss.backward()\n"},
                N, "llama-cookbook: a tensor_parallel_size beside vLLM engine args is the engine's, not training TP"),
        Example({"slurm/serve_r1_vllm.slurm": (  # open-r1: a vLLM server submitted as a Ray job: the engine's layout
            "#!/bin/bash\n#SBATCH --nodes=4\nray job submit --no-wait --job-id vllm-server \\\n    -- vllm serve \"$MODEL_PATH\" \\\n"
            "        --tensor-parallel-size 8 \\\n        --pipeline-parallel-size 4 \\\n        --distributed-executor-backend ray\n"),
                 "src/open_r1/sft.py": ("from trl import SFTConfig, SFTTrainer\n\n\ndef main(args):\n"
                                        "    trainer = SFTTrainer(model=args.model, args=SFTConfig(output_dir='out'))\n    trainer.train()\n")},
                N, "a serving engine's tensor parallelism behind ray job submit is not the training's"),
        Example({"verl/trainer/config/rollout/rollout.yaml": "name: vllm\nmode: async\ntensor_model_parallel_size: 2\ngpu_memory_utilization: 0.5\n",
                 "verl/trainer/config/engine/megatron.yaml": "tensor_model_parallel_size: 1\npipeline_model_parallel_size: 1\nsequence_parallel: true\n",
                 "verl/workers/megatron_workers.py": ("from megatron.core import parallel_state as mpu\n\n\ndef init(config):\n"
                                                      "    mpu.initialize_model_parallel(tensor_model_parallel_size=config.tensor_model_parallel_size)\n"),
                 "verl/trainer/main_ppo.py": "import torch\nloss.backward()\n"},
                N, "rollout engine TP in its own config group; training TP 1"),
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --num-layers 32\n"}, U, "megatron tp 4"),
        Example({"config.yaml": "parallelism:\n  dp: 2\n  tp: 4\n  pp: 1\n"}, U, "nanotron"),
        Example({"train.py": (
            "from torch.distributed.tensor.parallel import parallelize_module, ColwiseParallel, RowwiseParallel\n"
            "parallelize_module(block, mesh['tp'], {'w1': ColwiseParallel(), 'w2': RowwiseParallel()})\n")}, U, "torch TP"),
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 1 --num-layers 24\n"}, N, "tp size 1"),
        Example({"serve.py": "from vllm import LLM\nllm = LLM(model='meta-llama/Llama-2-70b-hf', tensor_parallel_size=4)\n",
                 "train.py": "from transformers import Trainer\ntrainer = Trainer(model=model)\ntrainer.train()\n"}, N, "vllm TP in a training repo"),
        Example({"serve.py": "from vllm import LLM\nllm = LLM(model='meta-llama/Llama-2-70b-hf', tensor_parallel_size=4)\n"}, U, "inference-only project: engine TP"),
        Example({"examples/vllm_wrapper.py": (  # Qwen: its own wrapper around vllm.LLM, run from the module's __main__
            "import torch\n\n\nclass vLLMWrapper:\n    def __init__(self, model_dir, tensor_parallel_size=1):\n"
            "        from vllm import LLM\n        self.model = LLM(model=model_dir, tensor_parallel_size=tensor_parallel_size)\n\n\n"
            "if __name__ == '__main__':\n    model_dir = 'Qwen/Qwen-72B-Chat'\n    tensor_parallel_size = 2\n"
            "    model = vLLMWrapper(model_dir, tensor_parallel_size=tensor_parallel_size)\n"),
                 "finetune.py": "from transformers import Trainer\ntrainer = Trainer(model=model)\ntrainer.train()\n"},
                N, "a size in a module that drives vLLM and trains nothing is the engine's"),
        Example({"train.yaml": "# tensor_model_parallel_size: 4\nlr: 1e-4\n"}, N, "commented out"),
        Example({  # TencentPretrain: the converters' defaults are a checkpoint's layout; the trainer's own default is 1
            "scripts/convert_llama_from_megatron_checkpoint_to_pytorch_checkpoint.py": (
                "import argparse\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument('--tensor_model_parallel_size', type=int, default=4)\nargs = parser.parse_args()\n"),
            "tencentpretrain/opts.py": (
                "def mp_opts(parser):\n    parser.add_argument('--tensor_model_parallel_size', type=int, default=1)\n"),
            "pretrain.py": "from tencentpretrain.opts import mp_opts\nfrom tencentpretrain.trainer import train_and_validate\n",
            "README.md": "```\npython3 pretrain.py --dataset_path dataset.pt --world_size 8 --gpu_ranks 0 1 2 3 4 5 6 7\n```\n"},
            N, "tensor parallel sizes only in checkpoint converters"),
        Example({"parallelize.py": (
            "from torch.distributed.tensor.parallel import parallelize_module, ColwiseParallel\n"
            "parallelize_module(block, tp_mesh, {'wq': ColwiseParallel()})\n"),
            "llama3_8b.toml": "[parallelism]\ntensor_parallel_degree = 1\n"}, N, "TP code gated by degree 1"),
        Example(_parallel_lib(", dp_config=DataParallelConfig(name='fsdp')"), N, "TP code only under a tp_config that defaults to None"),
        Example(_parallel_lib(", tp_config=DataParallelConfig(name='tp')"), U, "the builder passes a tp_config"),
        Example({"ppo.yaml": "actor_rollout_ref:\n  actor:\n    strategy: fsdp\n  rollout:\n    name: vllm\n    tensor_model_parallel_size: 2\n",
                 "actor.py": "def update_policy(self, batch):\n    loss = self.compute_loss(batch)\n    loss.backward()\n    self.actor_optimizer.step()\n"},
                N, "rollout TP is inference"),
        Example({"examples/gpt3/train_gpt3_175b_distributed.sh": (  # TP 16 on 8-GPU nodes: TP all-reduces cross nodes
            "GPUS_PER_NODE=8\nNUM_NODES=16\n"
            "torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py --tensor-model-parallel-size 16 "
            "--pipeline-model-parallel-size 8 --num-layers 96 --bf16\n")}, U, "TP larger than a node (a finding)"),
        Example({"inference.py": ONE_GPU_INFERENCE}, NA, "inference only, on one GPU: no layer to split"),
        Example({"inference.py": SPREAD_INFERENCE}, N, "inference only, a 70B model spread over the GPUs by device_map"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        if (mesh := _mesh_outcome(ctx, "model", "tensor parallel", "tp_size")) is not None:
            return mesh
        sizes = tp_sizes(f, not ctx.project.does_training)
        raw = _torch_tp_calls(f)
        code, offs = _gated(f, raw)
        what = ("the project's own tensor-parallel sharding (`apply_tp`): weights split by the world size, outputs joined by all-reduce"
                if code and all(_OWN_TP_FUNC.match(c.short) for c in code) else
                "PyTorch parallelize_module" if any("." in c.name and not c.name.startswith("fairscale.") for c in code) else
                "fairscale's model-parallel layers (`ColumnParallelLinear`, `RowParallelLinear`), split over its model-parallel group"
                if any(c.name.startswith("fairscale.") for c in code) else
                "the project's own `ColumnParallelLinear`/`RowParallelLinear` layers, split by the world size and joined by collectives")
        out = _size_outcome(sizes, "tensor parallel", "tp_size", code, what)
        if not sizes and not code and offs:
            return Outcome(N, [_ev(x) for x in offs], "tensor parallel code (parallelize_module) exists behind a switch that is off: "
                           + _switch_text(offs), {"tp_size": 1})
        if out.status == Status.UNUSED and not sizes and not raw:  # (model-parallel layers sized 1 stay judged: llama3 on one GPU)
            from .e_comm import one_gpu_generation  # (e_comm builds on this module: read when the check runs)

            if reason := one_gpu_generation(ctx):
                return Outcome(Status.NA, detail=reason)
            if spread := [] if ctx.project.does_training else _spread_loads(f):
                # an inference project that splits its model over the visible GPUs layer by layer (YuLan-Chat's
                # ``load_checkpoint_and_dispatch(..., device_map="auto")``): the GPUs take turns, one active at a time
                c = spread[0]
                out.evidence = [_ev(x) for x in spread[:3]]
                out.detail = (f"{out.detail}; the model is spread layer by layer over the visible GPUs (device_map="
                              f"\"{c.kwargs['device_map']}\" at {c.path}:{c.kw_line('device_map')}): the GPUs run one after "
                              "another, so tensor parallelism in an engine would let them work on each token together")
        if out.status == Status.USED and ctx.project.does_training:
            wide = [(n, x, per) for n, x in sizes if n > 1 and (per := _node_gpus(f, x)) is not None and n > per]
            if wide:
                n, _x, per = max(wide, key=lambda t: t[0])
                out.findings = [_ev(y, value=int(m)) for m, y, _ in wide]
                out.detail = (f"tensor parallel size {int(n)} is larger than the {int(per)} GPUs of one node, so TP all-reduces "
                              "cross the inter-node network twice per layer; keep TP within a node (NVLink) and use pipeline "
                              "parallelism across nodes")
                out.values["tp_exceeds_node"] = True
        return out

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        return _model_parallel_rec(ctx, 65) if outcome.status == Status.UNUSED else None


def _spread_loads(f: Facts) -> list[Call]:
    """Model loads that place layers over every visible GPU (``device_map="auto"`` and its balanced variants)."""
    from .e_comm import _SPREAD_MAPS  # (e_comm builds on this module: read when the check runs)

    return [c for c in f.calls_with_kw("device_map")
            if isinstance(c.kwargs.get("device_map"), str) and c.kwargs["device_map"].strip() in _SPREAD_MAPS]


#: the largest NVLink domain of a common training server (8 GPUs per HGX/DGX node)
_NODE_GPUS_DEFAULT = 8


def _node_gpus(f: Facts, x: Any) -> float | None:
    """GPUs per node for a TP size: the launch that sets it (``--nproc_per_node``, ``$GPUS_PER_NODE`` in its script), else 8
    (a TP size above 8 leaves an HGX/DGX node whatever the launch)."""
    if getattr(x, "source", None) == "launcher":
        for launch in f.launches():
            # the launch that holds the flag (a flag's line is its own physical line in a continued command)
            if launch.path == x.path and (launch.line == x.line or launch.text == getattr(x, "text", None)):
                for k in ("nproc_per_node", "num_gpus", "num_processes", "gpus"):
                    v = launch.launcher_args.get(k)
                    n = as_number(v)
                    if n is None and isinstance(v, str) and (m := re.fullmatch(r"\$\{?(\w+)\}?", v.strip())):
                        vals = [as_number(e.value) for e in f.records("envs") if e.path == launch.path and e.name == m.group(1)]
                        n = next((v_ for v_ in vals if v_), None)
                    if n:
                        return n
    return _NODE_GPUS_DEFAULT


def _cost_model_lib(field: str) -> dict[str, str]:
    """realhf 0.3.0-shaped: an experiment config whose multi-node layout sets ``pipeline_parallel_size=self.n_nodes`` (the
    class field ``n_nodes: int = 1``) and a search engine's cost model whose ``example()`` sizes a profile run with local
    ``n_nodes = 8`` per model size. ``field`` replaces the default of ``n_nodes``."""
    return {
        "pkg/experiments/common.py": (
            "import dataclasses\n\nfrom pkg.quickstart.model import ParallelismConfig\n\n\n@dataclasses.dataclass\nclass ExperimentConfig:\n"
            + (field or "    n_nodes: int = 1\n") + "    n_gpus_per_node: int = 8\n\n"
            "    def allocation(self):\n"
            "        return ParallelismConfig(data_parallel_size=2, pipeline_parallel_size=self.n_nodes, model_parallel_size=4)\n"),
        "pkg/quickstart/model.py": (
            "import dataclasses\n\n\n@dataclasses.dataclass\nclass ParallelismConfig:\n    model_parallel_size: int = 1\n"
            "    pipeline_parallel_size: int = 1\n    data_parallel_size: int = 1\n"),
        "pkg/search_engine/estimate.py": (
            "def example(model_size):\n    if model_size == 7:\n        n_nodes = 1\n    elif model_size == 70:\n        n_nodes = 8\n"
            "    return f'profile-s{model_size}p{n_nodes}m1d8'\n"),
        "pkg/backend/train.py": "def train_batch(model, batch, optim):\n    loss = model(batch).loss\n    loss.backward()\n    optim.step()\n",
    }


@register
class A5PipelineParallel(Check):
    id = "A5"
    title = "Pipeline parallel"
    title_zh = "流水线并行 (PP)"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMMUNICATION)
    priority = Priority.MEDIUM
    benefit = "places groups of layers on different GPUs/nodes with only point-to-point activation traffic"
    what = (
        "Whether pipeline parallelism is on: Megatron `--pipeline-model-parallel-size` > 1, nanotron `parallelism.pp`, "
        "torchtitan `pipeline_parallel_degree`, GPT-NeoX `pipe_parallel_size`, DeepSpeed `PipelineModule`, "
        "`torch.distributed.pipelining` stages and schedules. Size 1 is off; inference-engine settings are ignored."
    )
    why = (
        "PP only sends activations between neighbouring stages, so it scales across nodes where TP cannot; with "
        "interleaved 1F1B and micro-batches >> stages the bubble stays under ~10 %, which let Megatron-LM train 1T "
        "parameters at 502 PFLOPS on 3072 A100s (Narayanan et al., SC'21)."
    )
    fix = "For models too deep for one node even with TP, set `--pipeline-model-parallel-size` (Megatron) with enough micro-batches (global batch / micro batch >= 4x stages) and optionally `--num-layers-per-virtual-pipeline-stage`."
    fix_zh = "模型层数过多、单节点放不下时设置 `--pipeline-model-parallel-size`（Megatron），保证 micro-batch 数 >= 4 倍流水线级数，并可用 `--num-layers-per-virtual-pipeline-stage` 交错调度降低 bubble。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://arxiv.org/abs/2104.04473", "https://pytorch.org/docs/stable/distributed.pipelining.html")
    snippets = {"shell": "torchrun --nnodes 4 --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4\n"}
    examples = (
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4\n"}, U, "megatron pp"),
        Example({"model.py": "from deepspeed.pipe import PipelineModule\nnet = PipelineModule(layers=layers, num_stages=4, loss_fn=loss_fn)\n"}, U, "deepspeed pipe"),
        Example({"train.py": "from torch.distributed.pipelining import pipeline, ScheduleGPipe\npipe = pipeline(model, mb_args=(x,))\nschedule = ScheduleGPipe(stage, n_microbatches=8)\n"}, U, "torch pipelining"),
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 1\n"}, N, "pp size 1"),
        Example({"model.py": "from deepspeed.pipe import PipelineModule\nnet = PipelineModule(layers=layers, num_stages=1)\n"}, N, "one stage"),
        Example({"serve.sh": "python -m vllm.entrypoints.openai.api_server --model m --pipeline-parallel-size 2\n",
                 "run.sh": "torchrun --nproc_per_node 8 train.py\n", "train.py": "loss.backward()\noptimizer.step()\n"}, N, "vllm PP in a training repo"),
        Example({  # torchtitan 0.3.0: PP 2 only in a debug recipe of the config registry; the default is 1
            "torchtitan/config/configs.py": (
                "from dataclasses import dataclass\n\n@dataclass(kw_only=True, slots=True)\nclass ParallelismConfig:\n"
                "    pipeline_parallel_degree: int = 1\n    tensor_parallel_degree: int = 1\n"),
            "torchtitan/models/qwen3_5/config_registry.py": (
                "from torchtitan.config import ParallelismConfig, TrainingConfig\nfrom torchtitan.trainer import Trainer\n\n"
                "def qwen35_debugmodel_moe():\n    return Trainer.Config(training=TrainingConfig(seq_len=512, steps=10),\n"
                "                          parallelism=ParallelismConfig(pipeline_parallel_degree=2))\n\n"
                "def qwen35_0_8b():\n    return Trainer.Config(training=TrainingConfig(seq_len=4096))\n\n"
                "def qwen35_9b():\n    return Trainer.Config(training=TrainingConfig(seq_len=4096))\n"),
            "torchtitan/distributed/pipeline_parallel.py": (
                "from torch.distributed.pipelining import PipelineStage\ndef build(model, pp_mesh):\n"
                "    stage = PipelineStage(model, 0, 2, 'cuda')\n    return stage\n"),
        }, N, "PP only in a debug recipe"),
        Example(_pipeline_lib(""), N, "pipeline stages built only by a train module constructed when pp_config (None by default) is given"),
        Example(_pipeline_lib(", pp_config=TransformerPipelineParallelConfig(degree=2)"), U, "the builder passes a pp_config"),
        Example({
            "torchtitan/config/configs.py": (
                "from dataclasses import dataclass\n\n@dataclass(kw_only=True, slots=True)\nclass ParallelismConfig:\n"
                "    pipeline_parallel_degree: int = 1\n    tensor_parallel_degree: int = 1\n"),
            "torchtitan/models/llama3/config_registry.py": (
                "from torchtitan.config import ParallelismConfig, TrainingConfig\nfrom torchtitan.trainer import Trainer\n\n"
                "def llama3_debugmodel():\n    return Trainer.Config(training=TrainingConfig(seq_len=512, steps=10))\n\n"
                "def llama3_8b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192))\n\n"
                "def llama3_405b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192),\n"
                "                          parallelism=ParallelismConfig(pipeline_parallel_degree=8))\n"),
        }, U, "PP in a full-size recipe"),
        Example(_cost_model_lib(""), N, "n_nodes = 8 is a local of another file's cost-model function, not the config's field"),
        Example(_cost_model_lib("    n_nodes: int = 2\n"), U, "the config's own n_nodes field is 2"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        sizes = pp_sizes(f, not ctx.project.does_training)
        code: list[Any] = []
        for c in f.calls("PipelineModule"):
            n = as_number(c.kwargs.get("num_stages"))
            if n is not None:
                sizes.append((n, c))
            else:
                code.append(c)
        code += [c for c in [*calls_under(f, "torch.distributed.pipelining"), *f.calls("torchgpipe.GPipe", "fairscale.nn.Pipe")]
                 if c.short in {"pipeline", "PipelineStage", "ScheduleGPipe", "Schedule1F1B", "ScheduleInterleaved1F1B",
                                "ScheduleLoopedBFS", "ScheduleInterleavedZeroBubble", "GPipe", "Pipe", "build_stage"}]
        code, offs = _gated(f, code)
        out = _size_outcome(sizes, "pipeline parallel", "pp_size", code, "pipeline stages in code")
        if not sizes and not code and offs:
            out = Outcome(N, [_ev(x) for x in offs], "pipeline-parallel code (PipelineStage) exists behind a switch that is off: "
                          + _switch_text(offs), {"pp_size": 1})
        debug = [s for s in f.effective(*PP_NAMES) if s.source == "call" and (as_number(s.value) or 0) > 1 and debug_recipe(f, s)]
        if out.status == N and debug:
            where = ", ".join(sorted({f"{s.path}:{s.line}" for s in debug}))
            out.detail = f"{out.detail}; raised only in debug recipes ({where}), not a training setting"
        vpp = _sizes(f, ("virtual_pipeline_model_parallel_size", "num_layers_per_virtual_pipeline_stage"))
        if out.status == U and vpp:
            out.values["virtual_pipeline"] = int(max(n for n, _ in vpp))
        return out

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status != Status.UNUSED:
            return None
        return _model_parallel_rec(ctx, 100) if ctx.project.multi_node else None


#: a setting that picks how attention is split across ranks (EasyContext ``--parallel_mode``), and the values that split it
_SP_MODE_KEYS = ("parallel_mode", "sp_mode", "sequence_parallel_mode", "sequence_parallel_type", "cp_mode", "context_parallel_mode")
_RING_MODE = lazy_compile(r"(?i)ring|ulysses|usp|dist_flash|context_parallel|zigzag|striped")

_SP_SWITCHES = ("enable_sequence_parallel", "sequence_parallel", "enable_sequence_parallelism")


def _nanotron_sp(f: Facts) -> list[Any]:
    """nanotron's ``parallelism.tp_mode: REDUCE_SCATTER`` ("reduce_scatter activate sequence parallelism") in a config whose
    own ``parallelism.tp`` is above 1: Megatron-style sequence parallelism for that run (with tp 1 it splits nothing)."""
    tp = {e.path: as_number(e.value) for e in _nanotron(f, "tp")}
    return [e for e in f.config("parallelism.tp_mode") if isinstance(e.value, str) and e.value.strip().upper() == "REDUCE_SCATTER"
            and (tp.get(e.path) or 0) > 1 and not _TEST_PATH.search(e.path)]


def _sp_by_default(f: Facts) -> list[Any]:
    """Sequence parallelism that rides on tensor parallelism by default: a config class field ``enable_sequence_parallel:
    bool = True`` (torchtitan configs.py:160) with TP > 1 in a recipe that does not switch it off. The default and the
    TP sizes that put it in effect; empty when no such default exists, no TP > 1 is set, or every TP > 1 recipe turns SP off."""
    defaults = [s for s in f.settings(*_SP_SWITCHES) if s.source == "field-default" and truthy(s.value) is True
                and not inference_setting(s) and not _TEST_PATH.search(s.path)]
    if not defaults:
        return []
    off = [s for s in f.settings(*_SP_SWITCHES) if s.rank > 0 and truthy(s.value) is False and not inference_setting(s)]
    off_recipes = {r for s in off if (r := recipe_of(f, s)) is not None}
    if any(recipe_of(f, s) is None for s in off):
        return []  # a config file or launch turns it off: not judged from the default
    wide = [x for n, x in tp_sizes(f) if n > 1 and (recipe_of(f, x) is None or recipe_of(f, x) not in off_recipes)]
    return [*defaults, *wide] if wide else []


@register
class A6SequenceParallel(Check):
    id = "A6"
    title = "Sequence parallel"
    title_zh = "序列并行 (SP)"
    bottlenecks = (Bottleneck.MEMORY,)
    priority = Priority.MEDIUM
    benefit = "splits activations along the sequence so long contexts fit: per-GPU attention/activation memory divided by the SP size"
    what = (
        "Whether the sequence dimension is split: Megatron `--sequence-parallel` (only effective with TP > 1) or "
        "`--context-parallel-size` > 1, DeepSpeed-Ulysses (`DistributedAttention`, `sequence_parallel_size`), ring attention "
        "(`ring_flash_attn`, `ring_attn_size`), torchtitan `context_parallel_degree`, axolotl `sequence_parallel_degree`, "
        "nanotron `tp_mode: REDUCE_SCATTER` with `tp` > 1, "
        "ColossalAI `enable_sequence_parallelism`, PyTorch `SequenceParallel()`/`context_parallel`."
    )
    why = (
        "Megatron sequence parallelism with selective recomputation cut activation memory 5x and recomputation overhead "
        "~90 % on a 530B model (Korthikanti et al., 2022); DeepSpeed-Ulysses trains 1M-token sequences with 4x longer "
        "context and 2.5x throughput over Megatron-SP (Jacobs et al., 2023). Below ~32K tokens it rarely pays."
    )
    fix = "For long-context training (>= 32K tokens): enable `--sequence-parallel` with TP, or context parallelism (`--context-parallel-size 2..8`, DeepSpeed-Ulysses `sequence_parallel_size`, ring-flash-attn)."
    fix_zh = "长序列训练（>= 32K tokens）时：在 TP 下开启 `--sequence-parallel`，或使用上下文并行（`--context-parallel-size 2..8`、DeepSpeed-Ulysses `sequence_parallel_size`、ring-flash-attn）。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://arxiv.org/abs/2205.05198", "https://arxiv.org/abs/2309.14509", "https://arxiv.org/abs/2310.01889")
    snippets = {"shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --sequence-parallel --context-parallel-size 2\n"}
    examples = (
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --sequence-parallel\n"}, U, "megatron sp"),
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --context-parallel-size 2\n"}, U, "context parallel"),
        Example({"attn.py": "from deepspeed.sequence.layer import DistributedAttention\nattn = DistributedAttention(local_attn, sp_group)\n"}, U, "ulysses"),
        Example({"axolotl.yaml": "base_model: meta-llama/Llama-3.1-8B\nsequence_parallel_degree: 4\n"}, U, "axolotl ring attention"),
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 1 --sequence-parallel\n"}, N, "sp with tp 1 (disabled by Megatron)"),
        Example({"config.yaml": "model:\n  sequence_parallel: false\n  tensor_model_parallel_size: 2\n"}, N, "sp false"),
        Example({"train.py": "# from ring_flash_attn import substitute_hf_flash_attn\nmodel = build()\n"}, N, "commented out"),
        Example({"parallelize.py": (
            "from torch.distributed.tensor.parallel import parallelize_module, SequenceParallel\n"
            "parallelize_module(model, tp_mesh, {'norm': SequenceParallel()})\n"),
            "llama3_8b.toml": "[parallelism]\ntensor_parallel_degree = 1\ncontext_parallel_degree = 1\n"}, N, "torchtitan plan with degrees 1"),
        Example({  # torchtitan 0.3.0: SP is the config default, in effect where a recipe sets TP > 1
            "torchtitan/config/configs.py": (
                "from dataclasses import dataclass\n\n@dataclass(kw_only=True, slots=True)\nclass ParallelismConfig:\n"
                "    tensor_parallel_degree: int = 1\n    enable_sequence_parallel: bool = True\n    context_parallel_degree: int = 1\n"),
            "torchtitan/models/llama3/config_registry.py": (
                "from torchtitan.config import ParallelismConfig, TrainingConfig\nfrom torchtitan.trainer import Trainer\n\n"
                "def llama3_8b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192))\n\n"
                "def llama3_70b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192),\n"
                "                          parallelism=ParallelismConfig(tensor_parallel_degree=8))\n\n"
                "def llama3_405b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192),\n"
                "                          parallelism=ParallelismConfig(tensor_parallel_degree=8))\n"),
        }, U, "SP on by default with TP 8 recipes"),
        Example({
            "torchtitan/config/configs.py": (
                "from dataclasses import dataclass\n\n@dataclass(kw_only=True, slots=True)\nclass ParallelismConfig:\n"
                "    tensor_parallel_degree: int = 1\n    enable_sequence_parallel: bool = True\n    context_parallel_degree: int = 1\n"),
            "torchtitan/models/llama3/config_registry.py": (
                "from torchtitan.config import ParallelismConfig, TrainingConfig\nfrom torchtitan.trainer import Trainer\n\n"
                "def llama3_8b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192))\n\n"
                "def llama3_70b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192),\n"
                "                          parallelism=ParallelismConfig(tensor_parallel_degree=8, enable_sequence_parallel=False))\n\n"
                "def llama3_405b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192))\n"),
        }, N, "SP default switched off where TP is on"),
        Example({  # torchtitan's batch-invariant RL recipes: derived from another recipe, SP off for that run only
            "torchtitan/config/configs.py": (
                "from dataclasses import dataclass\n\n@dataclass(kw_only=True, slots=True)\nclass ParallelismConfig:\n"
                "    tensor_parallel_degree: int = 1\n    enable_sequence_parallel: bool = True\n    context_parallel_degree: int = 1\n"),
            "torchtitan/models/llama3/config_registry.py": (
                "import dataclasses\n\nfrom torchtitan.config import ParallelismConfig, TrainingConfig\nfrom torchtitan.trainer import Trainer\n\n"
                "def llama3_8b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192))\n\n"
                "def llama3_70b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192),\n"
                "                          parallelism=ParallelismConfig(tensor_parallel_degree=8))\n\n"
                "def llama3_405b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192),\n"
                "                          parallelism=ParallelismConfig(tensor_parallel_degree=8))\n\n"
                "def llama3_70b_batch_invariant():\n    config = llama3_70b()\n"
                "    config.parallelism = dataclasses.replace(\n        config.parallelism,\n        enable_sequence_parallel=False,\n    )\n"
                "    return config\n"),
        }, U, "SP switched off only in a recipe derived from another: the TP 8 recipe keeps the default"),
        Example({"examples/config_tiny_llama.yaml": (  # nanotron: reduce_scatter TP mode is its sequence parallelism
            "parallelism:\n  dp: 4\n  pp: 1\n  tp: 2\n  tp_linear_async_communication: true\n  tp_mode: REDUCE_SCATTER\n"),
            "run_train.py": "from nanotron.trainer import DistributedTrainer\n\ntrainer = DistributedTrainer(config_file)\ntrainer.train()\n"},
            U, "nanotron tp_mode REDUCE_SCATTER with tp 2"),
        Example({"examples/config_qwen_with_moe.yaml": "parallelism:\n  dp: 2\n  pp: 1\n  tp: 1\n  tp_mode: REDUCE_SCATTER\n",
                 "run_train.py": "from nanotron.trainer import DistributedTrainer\n\ntrainer = DistributedTrainer(config_file)\ntrainer.train()\n"},
                N, "nanotron REDUCE_SCATTER with tp 1 splits nothing"),
        Example({"configs/nemo_configs/megatron_1.3b.yaml": (  # trlx: sequence_parallel beside its own TP 1
            "trainer:\n  devices: 8\nmodel:\n  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 1\n"
            "  sequence_parallel: True\n"),
            "configs/nemo_configs/megatron_20b.yaml": (
            "trainer:\n  devices: 8\nmodel:\n  tensor_model_parallel_size: 4\n  pipeline_model_parallel_size: 1\n"
            "  sequence_parallel: False\n"),
            "train.py": "from nemo.collections.nlp.models.language_modeling.megatron_gpt_model import MegatronGPTModel\n"
                        "trainer.fit(MegatronGPTModel(cfg.model, trainer))\n"},
            N, "NeMo: sequence_parallel only in the config whose own tensor parallel size is 1"),
        Example(_ring_lib(""), N, "ring attention only after apply_cp, called when cp_config (None by default) is given"),
        Example(_ring_lib(", cp_config=ContextParallelConfig(degree=2)"), U, "the builder passes a cp_config"),
        Example(_usp_lib(), N, "USP (Ulysses x ring) attention implemented, sp_ulysses_size/sp_ring_size left at 1"),
        Example(_usp_lib("training:\n  attention_backend: usp\n  sp_ulysses_size: 4\n  sp_ring_size: 2\n"), U,
                "a recipe raises the Ulysses and ring sizes"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        cp = _sizes(f, CP_NAMES, _nanotron(f, "cp"))
        big = [(n, x) for n, x in cp if n > 1]
        tp = [n for n, _ in tp_sizes(f)]
        tp_off = bool(tp) and max(tp) <= 1
        # code paths are gated by their size: they count only when no size says "off"
        code: list[Any] = []
        if not cp:
            code += [c for c in [*f.calls("DistributedAttention", "LongContextAttention", "torch.distributed.tensor.experimental.context_parallel"),
                                 *calls_under(f, "ring_flash_attn", "yunchang")]
                     if c.name.startswith(("deepspeed", "ring_flash_attn", "yunchang", "torch.distributed"))]
        if not tp_off:
            code += [c for c in f.calls("SequenceParallel") if c.name.startswith("torch.distributed")]
        flags: list[Any] = []
        disabled_by_tp: list[Any] = []
        if not tp_off:
            flags += _sp_by_default(f)
        flags += _nanotron_sp(f)
        # (a config file's own tensor-parallel sizes: trlx's ``megatron_1.3b.yaml`` sets ``sequence_parallel: True`` beside
        # ``tensor_model_parallel_size: 1``, where it splits nothing, while its 20b config runs TP 4)
        tp_in: dict[str, list[float]] = {}
        for n, x in tp_sizes(f):
            tp_in.setdefault(x.path, []).append(n)
        for s in f.effective("sequence_parallel", "enable_sequence_parallelism"):
            if inference_setting(s) or _TEST_PATH.search(s.path) or truthy(s.value) is not True or s.rank == 0 or checkpoint_tool(f, s):
                continue
            if s.name == "sequence_parallel" and (tp_off or (s.source == "config" and s.path in tp_in and max(tp_in[s.path]) <= 1)):
                disabled_by_tp.append(s)
            else:
                flags.append(s)
        values: dict[str, Any] = {}
        if big:
            values["cp_size"] = int(max(n for n, _ in big))
        if flags:
            values["sequence_parallel"] = True
        code, code_offs = _gated(f, code)
        if big or flags or code:
            ev = [_ev(x, value=int(n)) for n, x in big] + [_ev(s) for s in flags] + [_ev(c) for c in code]
            what = "context/Ulysses/ring" if big or code else "Megatron-style"
            default = next((s for s in flags if getattr(s, "source", None) == "field-default"), None)
            extra = (f" (on by default: {default.key} = True at {default.path}:{default.line}, in effect with tensor parallel > 1)"
                     if default is not None and not big and not code else "")
            return Outcome(U, ev, f"{what} sequence parallelism{extra}", values)
        # (no size or switch turns it on) launches that pick a ring/Ulysses attention mode by name (EasyContext
        # ``--parallel_mode zigzag_ring_attn`` in 11 of its 16 launches; ``ring_degree`` defaults to 1 and sizes only the
        # ``usp_attn`` mode): the sequence is split over the launch's GPUs
        modes = [s for s in f.effective(*_SP_MODE_KEYS) if s.rank > 0 and not inference_setting(s) and not _TEST_PATH.search(s.path)]
        ring = [s for s in modes if isinstance(s.value, str) and _RING_MODE.search(s.value)]
        if ring and len(ring) * 2 > len(modes):
            vals = Counter(str(s.value) for s in modes)
            dist = ", ".join(f"{v} in {n}" for v, n in vals.most_common())
            return Outcome(U, [_ev(s) for s in ring], f"ring/Ulysses sequence parallelism chosen by "
                           f"{ring[0].name} ({dist} of {len(modes)} settings)", {"sequence_parallel": True, "sp_mode": str(ring[0].value)})
        if disabled_by_tp:
            return Outcome(N, [_ev(s) for s in disabled_by_tp], "--sequence-parallel with tensor parallel size 1: Megatron turns it off", {"sequence_parallel": False})
        off = [s for s in f.effective("sequence_parallel") if truthy(s.value) is False and s.rank > 0] + [x for n, x in cp if n == 1]
        if not off and code_offs:
            return Outcome(N, [_ev(x) for x in code_offs], "context-parallel (ring attention) code exists behind a switch that is off: "
                           + _switch_text(code_offs), {"sequence_parallel": False})
        return Outcome(N, [_ev(x) for x in off], "sequence parallelism is off" if off else "no sequence/context parallelism found", {"sequence_parallel": False})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status != Status.UNUSED:
            return None
        return Priority.MEDIUM if (ctx.project.max_seq_len or 0) >= 32_768 else None


#: the expert indices one rank of a parallel group builds (LLaMA2-Accessory ``model/LLM/mixtral.py``:
#: ``range(n_local_experts*mp_rank, n_local_experts*(mp_rank+1))`` with ``n_local_experts = num_experts // mp_size``)
_RANK_EXPERTS = lazy_compile(r"\w*experts\w*\s*\*\s*\(?\s*\w*rank\b|\w*rank\w*\s*\*\s*\w*experts", re.I)


def _rank_split_experts(f: Facts) -> list[Call]:
    """``range(...)`` calls over a rank's share of the experts, in a file that asks a parallel group's world size."""
    out = []
    for c in f.calls("range"):
        if len(c.args) == 2 and all(isinstance(a, Expr) and _RANK_EXPERTS.search(a.text) for a in c.args):
            ff = f.files.get(c.path)
            if ff is not None and any(x.short.endswith("world_size") for x in ff.calls):
                out.append(c)
    return out


def _megablocks_dmoe(flag: str) -> dict[str, str]:
    """megablocks' exp/dmoe launch of Megatron-LM with its own MoE arguments (a boolean switch shards the experts)."""
    return {
        "megablocks/layers/arguments.py": (
            "import dataclasses\nfrom typing import Optional\n\nimport torch.distributed as dist\n\n\n@dataclasses.dataclass\n"
            "class Arguments:\n    hidden_size: int = 1024\n    moe_num_experts: int = 1\n    moe_top_k: int = 1\n"
            "    moe_expert_model_parallelism: bool = False\n    expert_parallel_group: Optional[dist.ProcessGroup] = None\n"),
        "exp/dmoe/dmoe_125m_8gpu.sh": (
            "#!/bin/bash\nEXP_DIR=$1\n\nDISTRIBUTED_ARGUMENTS=\"--nproc_per_node 8 --nnodes 1 --node_rank 0 --master_addr localhost\"\n\n"
            "torchrun ${DISTRIBUTED_ARGUMENTS} \\\n    third_party/Megatron-LM/pretrain_gpt.py \\\n    --moe-num-experts 64 \\\n"
            "    --moe-top-k 1 \\\n    --num-layers 12 \\\n    --hidden-size 768 \\\n    --bf16" + flag + "\n"),
    }


@register
class A7ExpertParallel(Check):
    id = "A7"
    title = "Expert parallel"
    title_zh = "专家并行"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.COMMUNICATION)
    priority = Priority.HIGH
    benefit = "distributes MoE experts over GPUs so expert weights are not replicated and each GPU runs fewer experts"
    what = (
        "For MoE models, whether experts are spread over GPUs: Megatron `--expert-model-parallel-size` > 1, DeepSpeed "
        "`MoE(ep_size=)`, nanotron `expert_parallel_size`, torchtitan `expert_parallel_degree`, ColossalAI `ep_size`. "
        "Not applicable to dense models."
    )
    why = (
        "Without EP every data-parallel rank holds all experts: a Mixtral-8x7B keeps ~47B parameters per replica instead of "
        "~13B active. DeepSpeed-MoE's expert parallelism trained MoE models with 5x less cost than dense quality-equivalents "
        "(Rajbhandari et al., ICML 2022), and GShard scaled to 600B parameters on 2048 TPUs with experts sharded (Lepikhin et al., 2020)."
    )
    fix = "Set the expert-parallel size to a divisor of the data-parallel size (e.g. `--expert-model-parallel-size 8` in Megatron, `ep_size` in DeepSpeed MoE) so each GPU hosts a subset of experts."
    fix_zh = "将专家并行度设为数据并行度的约数（如 Megatron `--expert-model-parallel-size 8`、DeepSpeed MoE 的 `ep_size`），让每张 GPU 只承载部分专家。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://arxiv.org/abs/2201.05596", "https://arxiv.org/abs/2006.16668")
    snippets = {
        "shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8\n",
        "python": "from deepspeed.moe.layer import MoE\n\nmoe = MoE(hidden_size=4096, expert=mlp, num_experts=8, ep_size=8, k=2)\n",
    }
    examples = (
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --num-experts 8 --expert-model-parallel-size 4\n"}, U, "megatron ep"),
        Example({"moe.py": "from deepspeed.moe.layer import MoE\nlayer = MoE(hidden_size=1024, expert=mlp, num_experts=16, ep_size=8, k=2)\n"}, U, "deepspeed moe"),
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --num-experts 8 --expert-model-parallel-size 1\n"}, N, "ep size 1"),
        Example({"train.yaml": "model_name_or_path: mistralai/Mixtral-8x7B-v0.1\nbf16: true\n"}, N, "moe without ep"),
        Example({"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nbf16: true\n"}, NA, "dense model"),
        Example({  # a kernel library patches Mixtral's forward for its users; its own example trains a dense Llama
            "mylib/monkey_patch.py": (
                "from transformers.models.mixtral import modeling_mixtral\n\nfrom mylib.model.mixtral import lce_forward\n\n\n"
                "def apply_kernels_to_mixtral(fused_linear_cross_entropy=True):\n    if fused_linear_cross_entropy:\n"
                "        modeling_mixtral.MixtralForCausalLM.forward = lce_forward\n"),
            "examples/train.py": (
                "import transformers\n\nmodel = transformers.AutoModelForCausalLM.from_pretrained('meta-llama/Meta-Llama-3-8B')\n"
                "trainer = transformers.Trainer(model=model, args=args, train_dataset=ds)\ntrainer.train()\n"),
        }, NA, "an MoE class only patched in place by a kernel library: dense model trained"),
        Example({  # control: the project builds the MoE model itself
            "train.py": (
                "from transformers import MixtralConfig, MixtralForCausalLM\n\nmodel = MixtralForCausalLM(MixtralConfig())\n"
                "trainer = Trainer(model=model, args=args, train_dataset=ds)\ntrainer.train()\n"),
        }, N, "an MoE model built by the run, no expert parallelism"),
        Example(_megablocks_dmoe(" \\\n    --moe-expert-model-parallelism"), U, "megablocks dMoE launch sharding its experts"),
        Example(_megablocks_dmoe(""), N, "the same dMoE launch without the switch"),
    )

    def not_applicable(self, ctx: Context) -> str | None:
        return None if ctx.project.moe else "dense (non-MoE) model: no experts to distribute"

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        if (mesh := _mesh_outcome(ctx, "expert", "expert parallel", "ep_size")) is not None:
            return mesh
        out = _size_outcome(_sizes(f, EP_NAMES) + _degree_configs(f, "Expert"), "expert parallel", "ep_size", [], "")
        split = _rank_split_experts(f) if out.status != Status.USED else []
        wide = [(n, x) for n, x in tp_sizes(f) if n > 1] if split else []
        if split and wide:
            c = split[0]
            stem = c.path.rsplit("/", 1)[-1].removesuffix(".py").split("_")[0].lower()
            wide.sort(key=lambda t: stem not in t[1].path.lower())  # the recipes named for that model first
            return Outcome(U, [_ev(c)] + [_ev(x, value=int(n)) for n, x in wide[:3]],
                           f"experts are split over the model-parallel ranks: each rank builds only its own share "
                           f"(`range({', '.join(a.text if isinstance(a, Expr) else str(a) for a in c.args)})` at {c.path}:{c.line}), "
                           f"and {len(wide)} launch setting(s) run a model-parallel size above 1", {"ep_size": None, "ep_via": "model-parallel"})
        # (launches and config files; a Python assignment is code that may sit under its own condition: llm-foundry sets
        # ``ffn_config['moe_expert_model_parallelism'] = True`` only ``if moe_world_size > 1``)
        switched = [s for s in on(f.effective(*_EP_SWITCHES))
                    if s.source == "launcher" or (s.source == "config" and not s.path.endswith(".py"))] \
            if out.status != Status.USED else []
        if switched:
            # a boolean switch that shards the experts over the data-parallel ranks (megablocks' dMoE launches:
            # ``--moe-expert-model-parallelism``, its ``Arguments.moe_expert_model_parallelism: bool = False``)
            s0 = switched[0]
            return Outcome(U, [_ev(x, key=x.name, value=x.value) for x in switched[:6]],
                           f"experts are sharded over the data-parallel ranks: {s0.name} is on at {s0.path}:{s0.line}"
                           + (f" (+{len(switched) - 1} more)" if len(switched) > 1 else ""), {"ep_size": None, "ep_via": s0.name})
        minority = ctx.project.notes.get("moe_minority")
        option = ctx.project.notes.get("moe_option")
        if minority and out.status != Status.USED:
            k, n, which = minority
            out.detail = (f"{out.detail}; a mixture-of-experts model is in only {k} of {n} model settings or configs "
                          f"({', '.join(which)}): expert parallelism matters for those runs")
        elif option and out.status != Status.USED:
            at, n, which = option
            out.detail = (f"{out.detail}; a mixture-of-experts architecture is offered ({at}), but none of the {n} models the "
                          f"launches and recipes name is one ({', '.join(which)}, ...): expert parallelism matters only for such a run")
        return out

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        prio = super().recommendation_priority(ctx, outcome)
        if prio is not None and (ctx.project.notes.get("moe_minority") or ctx.project.notes.get("moe_option")):
            return Priority.LOW  # one recipe's model, not the project's: an option to weigh, not a must-do
        return prio
