"""Step zero of the seed: a preliminary guess of the primary bottleneck, from code features alone.

Without a profile the audit can only weigh what the code says: model scale, sequence length,
where the data comes from, how the loader is set up, the parallel layout and the number of
nodes, the precision, and whether the project trains or only serves. Each feature that
points at a bottleneck type adds a weighted signal with a human reason. The type with the
strongest evidence wins only when it is clearly ahead (a score of at least
:data:`MIN_SCORE` and :data:`MIN_MARGIN` ahead of the runner-up) and at least one of its
signals is positive evidence at a cited ``path:line`` (a setting seen, not a practice missed);
otherwise the honest answer is ``needs-profiling``, with the competing signals as its reasons
and the measurements that would decide it (seed 001: GPU-utilisation shape, a synthetic-data
A/B run, kernel time share). Only files in scope (:mod:`checks.roles`) are read here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .facts import Facts, as_number, truthy
from .lazyre import lazy_compile
from .model import Bottleneck, CheckResult, Project, Status
from .project import launch_runs_no_training, multi_node_folders
from .roles import GUIDE, IN_SCOPE, ds_config_ref
from .rules._helpers import (
    HF_STEP_HOOKS,
    class_at,
    comparison_off,
    deepspeed_alternative_files,
    hf_trainer_subclasses,
    hook_fed_loaders,
    resolve_file,
)
from .rules.a_parallelism import EP_NAMES
from .rules.j_inference import compiled_decode

MIN_SCORE = 3
MIN_MARGIN = 2

_REMOTE = ("s3://", "hdfs://", "gs://", "oss://", "cos://", "cfs://", "abfs://", "wasbs://")
# a remote URL that names a bucket and a path (``s3://bucket/corpus``), not a bare scheme constant (``S3_PREFIX = "s3://"``)
_REMOTE_URL = lazy_compile(r"^(s3|hdfs|gs|oss|cos|cfs|abfs|wasbs)://[\w.\-@]+/\S*", re.I)
#: a bucket's root alone (``gs://ai2-llm``, which a path is joined to): read as remote only beside a mounted alternative
_BUCKET_ROOT = lazy_compile(r"^(s3|gs|oss|cos|abfs|wasbs)://[\w.\-@]+/?$", re.I)
#: an absolute path on a mounted data file system (``/weka/oe-training-default/ai2-llm``, ``/fsx/...``, ``/lustre/...``)
_MOUNTED = lazy_compile(r"^/(weka|fsx|lustre|gpfs|mnt|data|scratch|nfs|cfs|ceph|ssd|nvme|raid|datasets?)(/|$)")
_SLOW_FS = ("/cfs/", "/hdfs/", "/mdfs/", "/nfs/", "/mnt/nas", "/juicefs/")
# a string that only talks about a location (an error message, a prefix test) is not where data is read from
#: a literal that is no read of it: an error or log message, a test of a path's form, and a prefix or suffix a string helper
#: strips or swaps (cambrian ``def remove_prefix(text, prefix='gs://us-central2-storage/')``, applied to checkpoint paths)
#: ... and where something is written or made (CodeGeeX's MindSpore run uploads its profiler graphs after training:
#: ``mox.file.make_dirs("s3://wudao-1/yyf/graphs_" + jobid)``, ``copy_parallel(src_url=..., dst_url="s3://...")``)
_NOT_A_READ = lazy_compile(r"(raise |Error\(|startswith\(|endswith\(|require|print\(|warn|log(ger)?\.|help=|\bif\b"
                         r"|\b(prefix|suffix)\s*=|\.replace\(|\.removeprefix\(|\.removesuffix\("
                         r"|\b(dst|dst_url|dst_path|dest|dest_path|destination|upload_path)\s*=|make_?dirs\(|mkdir\(|\bupload)", re.I)

PROFILE_HINT = ("decide it with three measurements: the GPU-utilisation shape in `nvidia-smi dmon -s u` (flat near 100% or dips to 0), "
                "an A/B run with synthetic on-GPU data in place of the DataLoader, and the kernel and NCCL time share in `nsys profile`")
PROFILE_HINT_ZH = ("用三项测量判断：`nvidia-smi dmon -s u` 的 GPU 利用率形态（持续接近 100% 还是周期性跌到 0）、"
                   "用 GPU 上的合成数据替代 DataLoader 做 A/B 对比、`nsys profile` 中 kernel 与 NCCL 的时间占比")
#: the same measurements, each with how to read it (JSON ``project.profile_steps``)
PROFILE_STEPS = (
    "`nvidia-smi dmon -s u` while it trains: utilisation flat near 100% points at compute or memory bandwidth, "
    "regular dips to 0% at the GPU waiting for input or for a sync",
    "an A/B run with synthetic data (random token tensors already on the GPU instead of the DataLoader): "
    "a clearly faster step means data I/O-bound",
    "`nsys profile` over a few steps: the share of wall time in GPU kernels (low: launch/CPU overhead) and in NCCL "
    "kernels (high: communication-bound)",
)
PROFILE_STEPS_ZH = (
    "训练时运行 `nvidia-smi dmon -s u`：利用率持续接近 100% 说明受计算或显存带宽约束，周期性跌到 0% 说明 GPU 在等数据或同步",
    "用合成数据做 A/B 对比（用已在 GPU 上的随机 token 张量替代 DataLoader）：单步明显变快即为数据 I/O 瓶颈",
    "用 `nsys profile` 采样若干步：GPU kernel 占墙钟时间的比例（偏低说明 kernel launch/CPU 开销）以及 NCCL kernel 的占比（偏高说明通信瓶颈）",
)

#: the same measurements for a JAX training path (``Project.notes["jax_training"]``), which nsys and nvidia-smi do not
#: see on a TPU: a ``jax.profiler`` trace read in XProf/TensorBoard
JAX_PROFILE_HINT = ("decide it with three measurements: a `jax.profiler` trace of a few steps viewed in XProf or TensorBoard "
                    "(device busy time against idle gaps between steps), an A/B run with synthetic batches already on the devices "
                    "in place of the loader, and the share of the step's device time in collectives (all-gather, reduce-scatter, "
                    "all-reduce)")
JAX_PROFILE_HINT_ZH = ("用三项测量判断：对若干训练步采集 `jax.profiler` trace 并在 XProf 或 TensorBoard 中查看（设备忙碌时间与步间空闲）、"
                       "用已在设备上的合成 batch 替代数据加载做 A/B 对比、训练步设备时间中集合通信（all-gather、reduce-scatter、all-reduce）的占比")
JAX_PROFILE_STEPS = (
    "a `jax.profiler` trace of a few steps (`jax.profiler.start_trace(dir)` ... `stop_trace()`, viewed in XProf or TensorBoard): "
    "devices busy end to end point at compute or memory bandwidth, idle gaps between steps at the host (input or dispatch)",
    "an A/B run with synthetic batches already on the devices in place of the loader: a clearly faster step means data "
    "I/O-bound",
    "the same trace's op breakdown: the share of device time in collectives (high: communication-bound) and in the largest "
    "fusions and matmuls",
)
JAX_PROFILE_STEPS_ZH = (
    "对若干训练步采集 `jax.profiler` trace（`jax.profiler.start_trace(dir)` ... `stop_trace()`，在 XProf 或 TensorBoard 中查看）："
    "设备始终忙碌说明受计算或显存带宽约束，步间出现空闲说明在等主机（输入或派发）",
    "用已在设备上的合成 batch 替代数据加载做 A/B 对比：单步明显变快即为数据 I/O 瓶颈",
    "同一 trace 的算子分解：集合通信占设备时间的比例（偏高说明通信瓶颈）以及最大的融合算子与矩阵乘的占比",
)


def profile_hint(project: Project) -> tuple[str, str]:
    """(English, Chinese) measurements that decide the bottleneck, in the tools of the project's framework."""
    return (JAX_PROFILE_HINT, JAX_PROFILE_HINT_ZH) if project.notes.get("jax_training") else (PROFILE_HINT, PROFILE_HINT_ZH)


@dataclass(frozen=True, slots=True)
class Signal:
    """One code feature that points at a bottleneck type."""

    kind: Bottleneck
    weight: int
    en: str
    zh: str
    positive: bool = True  # False: inferred from a practice not seen, which alone never decides a verdict
    # a setting to remove whatever the verdict (a debugging switch in a good share of the training launches): named under
    # another verdict too
    named_anyway: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    bottleneck: Bottleneck
    reasons: list[str]
    reasons_zh: list[str]
    scores: dict[str, int]


class _Status:
    def __init__(self, results: Iterable[CheckResult], roles: Mapping[str, str] | None = None,
                 recipes: frozenset[str] = frozenset()) -> None:
        self.results = {r.id: r for r in results}
        self._by_id = {cid: r.status for cid, r in self.results.items()}
        self.roles = roles or {}
        # with a recognised training path, evidence in other project code (a stats script, a converter) is not cited
        self.strict = any(r == "training" for r in self.roles.values())
        # Python recipe files (mmengine configs read by ``Config.fromfile``, nanoGPT-style config modules) are the training
        # path's configs, as YAML recipes are, whatever role their folder got (xtuner: 555 of 594 configs are plain code)
        self.recipes = recipes

    def on_path(self, path: str) -> bool:
        return not self.strict or path in self.recipes or self.roles.get(path, "training") != "code"

    def evidence(self, check_id: str) -> list:
        r = self.results.get(check_id)
        return [e for e in r.evidence if self.on_path(e.path)] if r is not None else []

    def __call__(self, check_id: str) -> Status | None:
        """The check's status, or None when the check did not run (not registered, ignored)."""
        return self._by_id.get(check_id)

    def missing(self, check_id: str) -> bool:
        return self._by_id.get(check_id) == Status.UNUSED

    def used(self, check_id: str) -> bool:
        return self._by_id.get(check_id) in (Status.USED, Status.PARTIAL)

    def fully(self, check_id: str) -> bool:
        return self._by_id.get(check_id) == Status.USED


def _fmt_b(b: float) -> str:
    return f"{b:.0f}B" if b >= 1 else f"{b * 1000:.0f}M"


def _loc(items: list) -> str:
    x = items[0]
    more = f" (+{len(items) - 1})" if len(items) > 1 else ""
    return f"`{x.path}:{x.line}`{more}"


@dataclass(frozen=True, slots=True)
class _Place:
    path: str
    line: int
    value: str
    target: str | None = None  # ``return`` or the name the line assigns (``read_location=``), when it is one of those


_NOT_DATA = ("output", "save", "checkpoint", "ckpt", "log", "cache", "model", "tokenizer", "deepspeed", "config", "upload")
#: a section a config key sits under that holds where a run writes, not what it reads (``trainer.checkpointer.base_path:
#: gs://.../checkpoints/`` is the checkpoint store, not training data; nanotron ``s3_upload.upload_s3_path`` is where
#: checkpoints are uploaded)
_WRITE_SECTION = ("output", "save", "checkpoint", "ckpt", "upload")


def _alternative_roots(places: list[_Place]) -> tuple[list[_Place], list[_Place]]:
    """(the remote and mounted places that are alternatives of one choice, the mounted ones among them): a remote URL or
    bucket root and a mounted path that are both returned, or both assigned to one name, within a few lines of each other
    in the same file (``return "/weka/..."`` / ``return "gs://ai2-llm"``; ``read_location = "s3://ai2-llm"`` / ``read_location
    = "/weka/..."``), not a copy from one to the other."""
    remote = [x for x in places if _REMOTE_URL.match(x.value.strip()) or _BUCKET_ROOT.match(x.value.strip())]
    mounted = [x for x in places if _MOUNTED.match(x.value)]
    paired: list[_Place] = []
    mounts: list[_Place] = []
    for r in remote:
        for m in mounted:
            if m.path == r.path and abs(m.line - r.line) <= 6 and r.target is not None and r.target == m.target:
                paired += [x for x in (r, m) if x not in paired]
                mounts += [m] if m not in mounts else []
    return paired, mounts


def _data_locations(facts: Facts) -> list[_Place]:
    """String values that name where training data is read from (not outputs, checkpoints or models)."""
    out: list[_Place] = []
    for x in facts.path_literals():
        if not any(w in x.text.lower() for w in _NOT_DATA) and not _NOT_A_READ.search(x.text):
            m = re.match(r"\s*(return\b|[\w.]+\s*=)", x.text)
            out.append(_Place(x.path, x.line, x.value, m.group(1).replace(" ", "") if m else None))
    for ff in facts.files.values():
        for e in ff.configs:
            key = e.key.lower()
            # a list of data files (OLMo ``data: {paths: [gs://ai2-llm/preprocessed/.../part-0-00000.npy, ...]}``): its first entries
            values = [e.value] if isinstance(e.value, str) else []
            if isinstance(e.value, tuple) and ("data" in key or (key in ("paths", "files", "urls") and "data" in e.dotted.lower())):
                values = [v for v in e.value[:3] if isinstance(v, str)]  # (not ``pythonpath = ["src", "tests"]``)
            if values and ("data" in key or "train_file" in key or "path" in key or (key in ("files", "urls") and "data" in e.dotted.lower())) \
                    and not any(w in key for w in _NOT_DATA) \
                    and not any(isinstance(k, str) and any(w in k.lower() for w in _WRITE_SECTION) for k in e.keys[:-1]) \
                    and not _RESUME_KEY.match(key):
                out += [_Place(e.path, e.line, v) for v in values if not _CHECKPOINT_VALUE.search(v)]
    return out


#: a key naming weights to start or resume from (OLMo ``load_path: gs://ai2-llm/checkpoints/OLMo-small/peteish1/step1907359``)
_RESUME_KEY = lazy_compile(r"^(load|resume|restore|init|initial|start|base)(_from)?(_path|_dir|_checkpoint|_ckpt)?$")
#: a value that is a checkpoint's location (a ``checkpoints/`` or ``ckpt`` folder, a ``step1907359`` directory)
_CHECKPOINT_VALUE = lazy_compile(r"(?i)(^|/)(checkpoints?|ckpts?)(/|$)|/step\d+/?$|\.(pt|pth|safetensors|ckpt)$")


def _inference_signals(facts: Facts, st: _Status) -> list[Signal]:
    # a debugging switch left in a generation launch (UltraFeedback's ``run_vllm.sh``: ``export CUDA_LAUNCH_BLOCKING=1``)
    # serialises every kernel launch, whatever the engine
    blocking = [e for e in facts.envs("CUDA_LAUNCH_BLOCKING") if e.source != "python" and truthy(e.value.strip().strip("'\""))
                is True and st.on_path(e.path)]
    debug = [Signal(
        Bottleneck.LAUNCH, 6,
        f"CUDA_LAUNCH_BLOCKING=1 in the generation launch ({_loc(blocking)}): every kernel launch waits until the kernel has "
        "finished, so the CPU never queues work ahead of the GPU; it is a debugging switch, remove it",
        f"推理启动命令设置了 CUDA_LAUNCH_BLOCKING=1（{_loc(blocking)}）：每次 kernel 启动都要等 kernel 执行完毕，CPU 无法提前排队；"
        "这是调试开关，应删除",
    )] if blocking else []
    return debug + _inference_workload_signals(facts, st)


def _inference_workload_signals(facts: Facts, st: _Status) -> list[Signal]:
    engine = facts.imports("vllm", "sglang", "tensorrt_llm", "lmdeploy") or facts.launches("vllm") or st.used("J5")
    if engine:
        return [Signal(
            Bottleneck.MEMORY, 3,
            "inference-only project served by an engine: decode reads all weights and the KV cache for every token, so HBM bandwidth bounds it",
            "纯推理项目且使用推理引擎：decode 每生成一个 token 都要读取全部权重和 KV Cache，受显存带宽约束",
        )]
    # ``generate`` calls, else a hand-written decode loop's per-token forward (StreamingLLM ``model(input_ids=...,
    # past_key_values=past_key_values, use_cache=True)`` in a ``for`` loop)
    gen = facts.calls("generate") or [c for c in facts.calls_with_kw("past_key_values") if c.loop is not None]
    where = f" ({_loc(gen)})" if gen else ""
    graphs = compiled_decode(facts)
    how, how_zh = "is compiled into CUDA graphs", "已编译为 CUDA Graph"
    if not graphs:  # (Chameleon captures its decode forward with ``torch.cuda.graph`` by hand: J6's evidence)
        graphs = st.evidence("J6")
        how, how_zh = "runs as CUDA graphs", "以 CUDA Graph 运行"
    if graphs and st.used("J6"):
        # (pytorch-labs/gpt-fast: the decode step compiled with ``mode="reduce-overhead"``: no per-kernel launch cost left,
        # the step reads every weight and the KV cache for one token)
        at = _loc(graphs)
        return [Signal(
            Bottleneck.MEMORY, 3,
            f"inference-only project whose decode step {how} ({at}): launch overhead is gone, and "
            "each token reads all weights and the KV cache, so HBM bandwidth bounds it",
            f"纯推理项目，decode 步骤{how_zh}（{at}）：kernel 启动开销已消除，每个 token 都要读取全部权重和 KV Cache，受显存带宽约束",
        )]
    return [Signal(
        Bottleneck.LATENCY, 3,
        f"inference-only project decoding in eager PyTorch{where}: one token per forward pass, hundreds of small kernels and CPU dispatch per token",
        f"纯推理项目在 PyTorch eager 模式下逐 token 解码{where}：每个 token 一次前向，大量小 kernel 与 CPU 调度开销",
    )]


# a loader that is not the training loader: evaluation, a reference-model or embedding pre-pass, generation
_NOT_TRAIN_LOADER = lazy_compile(r"(eval|valid|test|predict|infer|generat|embed|precompute|reference|\bref_|_ref\b|bench|profile|calib)", re.I)
# a DataLoader over rollouts already in memory (PPO's replay buffer) reads no files
# (or over a mock/synthetic dataset, or tensors already in memory) reads no files
_IN_MEMORY = lazy_compile(r"(replay_buffer|experience|rollout|TensorDataset|mock|dummy|fake|synthetic)", re.I)
_LOADER_TEXT = lazy_compile(r"(num_workers|DataLoader|dataloader)", re.I)
_IMAGE_CALL = lazy_compile(r"(Image\.open|imread|read_image|decode_image|decode_jpeg|load_image|fetch_image|get_mm_inputs|"
                         r"process_images?|preprocess_images?|image_processor|(^|\.)processor)$", re.I)
_PER_BATCH_FUNC = lazy_compile(r"(collat|__getitem__|__call__|getitem)", re.I)


def _enclosing(facts: Facts, path: str, line: int) -> tuple[str, str, str]:
    """(function, guard, text of its arguments) of the DataLoader a setting at ``path:line`` feeds: the loader built
    on that line or just below it (a ``dataloader_params`` dict passed to ``DataLoader(ds, **params)``), else the
    nearest call above it."""
    ff = facts.files.get(path)
    calls = list(ff.calls) if ff is not None else []
    # a keyword of the loader call itself (``num_workers=0`` on its own line), else a loader just below the setting
    loaders = [c for c in calls if c.short.endswith("DataLoader") and (line in c.kw_lines.values() or line <= c.line <= line + 15)]
    if loaders:
        c = min(loaders, key=lambda c: abs(c.line - line))
        args = " ".join(str(getattr(a, "text", a)) for a in (*c.args, *c.kwargs.values()))
        # the dataset built just above the loader (``dataset = TensorDataset(...)``, ``MockGPTDataset``)
        above = [b for b in calls if c.line - 5 <= b.line < c.line and b.func == c.func]
        args += " " + " ".join(b.text + " " + " ".join(str(getattr(a, "text", a)) for a in b.args) for b in above)
        return c.func or "", c.guard or "", args
    above = [c for c in calls if c.line <= line]
    if not above:
        return "", "", ""
    c = max(above, key=lambda c: c.line)
    return c.func or "", c.guard or "", ""


def _holds_loader_setting(x: object) -> bool:
    """The cited line shows a loader setting (``num_workers=0``, ``DataLoader(``, an ``add_argument`` of a workers
    flag), not an unrelated call that a check attributed a default to (``PPOConfig(``)."""
    text = str(getattr(x, "text", "") or getattr(x, "snippet", ""))
    key = str(getattr(x, "key", "") or "")
    return bool(_LOADER_TEXT.search(text) or ("add_argument" in text and "num_workers" in key))


#: settings only an image-text recipe has
_IMAGE_KEYS = ("image_folder", "image_processor", "visual_encoder", "vision_tower", "image_dir", "image_root", "image_path",
               "vision_encoder", "image_aspect_ratio", "max_pixels", "image_folders", "freeze_visual_encoder", "freeze_vision_tower")


def _image_recipe_share(facts: Facts) -> tuple[int, int] | None:
    """(recipes that train on images, recipes) when image-text recipes are a minority of three or more Python config
    recipes (xtuner: 58 LLaVA/InternVL configs among 594): the per-image work then serves those recipes only."""
    recipes = facts.config_modules() | frozenset(facts.recipe_modules())
    if len(recipes) < 3:
        return None
    mm = {s.path for s in facts.settings(*_IMAGE_KEYS) if s.path in recipes}
    return (len(mm), len(recipes)) if mm and len(mm) * 2 < len(recipes) else None


def _training_loader_sites(facts: Facts, st: _Status, sites: list) -> list:
    """The sites that set the training DataLoader's workers: on the training path, holding a loader setting on the
    cited line, and not an evaluation, reference-model pre-pass or in-memory rollout loader."""
    out = []
    for x in sites:
        if not st.on_path(x.path) or _EVAL_PATH.search(x.path) or not _holds_loader_setting(x):
            continue
        func, guard, args = _enclosing(facts, x.path, x.line)
        if _NOT_TRAIN_LOADER.search(func) or _NOT_TRAIN_LOADER.search(guard) or _IN_MEMORY.search(args):
            continue
        out.append(x)
    return out


def _image_work(facts: Facts, st: _Status) -> list:
    """Images decoded or processed per batch on the training path (in a collator or a Dataset's ``__getitem__``)."""
    return [c for c in facts.records("calls")
            if _IMAGE_CALL.search(c.name) and _PER_BATCH_FUNC.search(c.func or "") and st.on_path(c.path)
            and st.roles.get(c.path, "training") in ("training", "code") and not _EVAL_PATH.search(c.path)]


_SIZE_LABEL = lazy_compile(r"^(\d+(?:\.\d+)?)([MB])$")
#: a model name that states its active parameters after its total (``Qwen3-30B-A3B``, ``Qwen3-235B-A22B``): a mixture of experts
_ACTIVE_IN_NAME = lazy_compile(r"\d(?:\.\d+)?[Bb]-A(\d+(?:\.\d+)?)[Bb](?![A-Za-z0-9])")


def _active_billions(p: Project) -> float | None:
    """The active parameters per token of a mixture-of-experts model, in billions: from its config (``active_params``) or
    from a model name that states them (``Qwen/Qwen3-30B-A3B-Instruct-2507`` -> 3.0); None for a dense or unknown model."""
    label = p.notes.get("active_params")
    if isinstance(label, str) and (m := _SIZE_LABEL.match(label)):
        return float(m.group(1)) * (0.001 if m.group(2) == "M" else 1)
    if p.notes.get("params_source") == "model name" and p.notes.get("params_named"):
        if m := _ACTIVE_IN_NAME.search(str(p.notes["params_named"][0]).rsplit("/", 1)[-1]):
            return float(m.group(1))
    return None


def _smallest_model(p: Project) -> tuple[float, str, str] | None:
    """The smallest model the training path trains, in billions of parameters, with where that is known from (English,
    Chinese): the one size it trains, the low end of the sizes its configs span, or the smallest size its recipes name."""
    if p.params_billions is not None:
        b, src = p.params_billions, p.notes.get("params_source")
        if src == "model name" and p.notes.get("params_named"):
            name, where = p.notes["params_named"]
            return b, f"~{_fmt_b(b)}, from the model name `{name}` at `{where}`", f"约 {_fmt_b(b)}，来自模型名 `{name}`（`{where}`）"
        where = f", `{src}`" if src and src != "model name" else ""
        return b, f"~{_fmt_b(b)}{where}", f"约 {_fmt_b(b)}{where.replace(', ', '，', 1)}"
    rng = p.notes.get("params_range_billions")
    if rng:
        return rng[0], f"{p.notes.get('params_range')} across its configs", f"其配置覆盖 {p.notes.get('params_range')}"
    dist = p.notes.get("params_distribution") or {}
    sizes = [float(m.group(1)) * (0.001 if m.group(2) == "M" else 1) for k in dist if (m := _SIZE_LABEL.match(str(k)))]
    if sizes and len(sizes) == len(dist):
        n = sum(dist.values())
        return min(sizes), f"the smallest of the sizes {n} recipes name", f"{n} 个配方所列规模中的最小值"
    return None


def _data_signals(facts: Facts, p: Project, st: _Status) -> list[Signal]:
    out: list[Signal] = []
    workers = [(n, s) for s in facts.effective("num_workers", "dataloader_num_workers") if (n := as_number(s.value)) is not None]
    zero = _training_loader_sites(facts, st, [s for n, s in workers if n == 0])
    f1 = _training_loader_sites(facts, st, st.evidence("F1"))
    # batches of tokens tokenized ahead (F6) or stored pre-tokenized (F10) are cheap to collate: loading them in the
    # training process is a weak signal, and no DataLoader at all is no signal. Memory-mapped files (F8) are cheap to
    # read, not to tokenize: they count only when tokenization is not seen running online (F6 unused would contradict)
    cheap_by = [(cid, en, zh) for cid, en, zh in (("F6", "the data is tokenized ahead", "数据已提前分词"),
                                                  ("F10", "the data is stored pre-tokenized", "数据以预分词格式存储"),
                                                  ("F8", "the data files are memory-mapped", "数据文件经内存映射读取"))
                if st.used(cid) and st.evidence(cid) and not (cid == "F8" and st.missing("F6"))]
    weak_en = [f"{en}, {cid} at {_loc(st.evidence(cid)[:1])}" for cid, en, _ in cheap_by[:2]]
    weak_zh = [f"{zh}，{cid}，{_loc(st.evidence(cid)[:1])}" for cid, _, zh in cheap_by[:2]]
    # text batches next to a large model's step: collating (even tokenizing) a few thousand tokens takes milliseconds,
    # a step of a model of a billion parameters or more takes far longer (seed step zero: DataLoader share > 20%)
    smallest = _smallest_model(p)
    if not p.multimodal and smallest is not None and smallest[0] >= 1:
        weak_en.append(f"text batches beside a model of {_fmt_b(smallest[0])} parameters or more ({smallest[1]}), whose step is long next to collating them")
        weak_zh.append(f"文本 batch，且模型至少 {_fmt_b(smallest[0])} 参数（{smallest[2]}），单步耗时远大于拼 batch")
    cheap = bool(weak_en)
    weak_en, weak_zh = "; ".join(weak_en), "；".join(weak_zh)
    if st.missing("F1") or (st("F1") is None and zero and not [n for n, _ in workers if n > 0]):
        cited = f1 or zero  # F1's own sites first: the reason and the check cite the same loader
        # a declared setting (a config field's or a parameter's default: where a run changes it) before a loader call's
        # literal keyword, which may be an edge branch's loader (NeMo AutoModel ``dataloader_from_sample``: an empty
        # Subset's ``DataLoader(..., num_workers=0)`` when a resume starts past the end)
        cited = sorted(cited, key=lambda x: str(getattr(x, "key", "") or "").endswith("(num_workers=)"))
        f1_res = st.results.get("F1")
        grain = [x for x in st.evidence("F1") if st.on_path(x.path)] if f1_res is not None and f1_res.values.get("loader") == "grain" else []
        if grain:
            out.append(Signal(
                Bottleneck.DATA_IO, 1 if cheap else 2,
                f"the Grain input pipeline runs in the training process, with no worker processes ({_loc(grain)}): its Python "
                "work per sample shares the training process's CPU time" + (f" (weak: {weak_en})" if cheap else ""),
                f"Grain 输入管线在训练主进程中运行，没有 worker 进程（{_loc(grain)}）：逐样本的 Python 处理占用训练进程的 CPU 时间"
                + (f"（较弱：{weak_zh}）" if cheap else ""),
            ))
        elif cited:
            out.append(Signal(
                Bottleneck.DATA_IO, 1 if cheap else 2,
                f"batches are loaded in the training process (num_workers = 0 at {_loc(cited)}): the GPU waits while the CPU reads and collates"
                + (f" (weak: {weak_en})" if cheap else ""),
                f"数据在训练主进程中加载（num_workers = 0，{_loc(cited)}）：CPU 读取与拼 batch 时 GPU 空等"
                + (f"（较弱：{weak_zh}）" if cheap else ""),
            ))
        elif not cheap and not hook_fed_loaders(facts):
            # (a Trainer whose input hook builds each batch from rollouts on the device: its loader hands over prompts only)
            out.append(Signal(
                Bottleneck.DATA_IO, 1,
                "no DataLoader worker setting was seen on the training path (F1): if batches are built in the training process, the GPU waits for them",
                "训练路径上未见 DataLoader worker 设置（F1）：若 batch 在训练主进程中构建，GPU 需等待",
                positive=False,
            ))
        images = _image_work(facts, st) if p.multimodal else []
        if images:
            share = _image_recipe_share(facts)
            few_en = few_zh = ""
            if share is not None:
                mm, total = share
                few_en = f" (weak: only {mm} of the {total} recipes train on images; the others are text-only)"
                few_zh = f"（较弱：{total} 个配方中仅 {mm} 个使用图像，其余为纯文本）"
            out.append(Signal(
                Bottleneck.DATA_IO, 1,
                f"images are decoded or processed per batch in the training input pipeline ({_loc(images)}), in that same process: "
                "for image-text data the CPU does this work while the GPU waits" + few_en,
                f"图像在训练输入管线中逐 batch 解码或处理（{_loc(images)}），且在同一进程内：图文数据时 CPU 处理期间 GPU 空等" + few_zh,
            ))
    elif st("F1") == Status.PARTIAL and st.evidence("F1"):
        f1p = st.evidence("F1")
        out.append(Signal(Bottleneck.DATA_IO, 1, f"only 1-3 DataLoader workers feed each GPU ({_loc(f1p)})" + (f" (weak: {weak_en})" if cheap else ""),
                          f"每张 GPU 仅有 1~3 个 DataLoader worker 供数（{_loc(f1p)}）" + (f"（较弱：{weak_zh}）" if cheap else "")))
    # (where the training path and its configs read; a data-preparation script of other project code, smollm's
    # ``vision/data/datasets_processing_scripts/`` copying from ``s3://`` to ``/fsx``, is not the run's input)
    places = [x for x in _data_locations(facts) if st.on_path(x.path)]
    remote = [x for x in places if _REMOTE_URL.match(x.value.strip())]
    slow = [x for x in places if any(t in x.value.lower() for t in _SLOW_FS)]
    # a data root that is remote on some clusters and a mounted file system on others, as alternatives of one choice
    # (OLMo-core ``get_root_dir``: ``return "/weka/oe-training-default/ai2-llm"`` on Weka clusters, ``return "gs://ai2-llm"``
    # elsewhere; OLMo's ladder: ``read_location = "s3://ai2-llm"`` under ``if args.s3:``, else ``/weka/...``): a run's storage
    # depends on where it runs
    paired, mounted = _alternative_roots(places)
    remote = [x for x in remote if x not in paired]
    # remote reads in fewer files than mounted data paths of other files (OLMo-core: three ladder scripts hard-code
    # ``mix_base_dir="gs://ai2-llm/"``, the SFT recipes and examples read ``/weka/...``): some runs, not the project's
    remote_files = {x.path for x in remote}
    elsewhere = [x for x in places if _MOUNTED.match(x.value) and x.path not in remote_files]
    some = bool(remote) and len({x.path for x in elsewhere}) >= len(remote_files)
    if some:
        out.append(Signal(
            Bottleneck.DATA_IO, 1,
            f"some runs read training data from remote object storage ({_loc(remote)}: `{remote[0].value[:80]}`), others from "
            f"mounted file systems ({_loc(elsewhere)}: `{elsewhere[0].value[:80]}`): the remote runs pay network latency and "
            "bandwidth every epoch",
            f"部分运行从远程对象存储读取训练数据（{_loc(remote)}：`{remote[0].value[:80]}`），其他运行从挂载的文件系统读取"
            f"（{_loc(elsewhere)}：`{elsewhere[0].value[:80]}`）：远程读取的运行每个 epoch 都要承担网络延迟与带宽开销",
        ))
    elif not remote and paired:
        r0 = next(x for x in paired if not x.value.startswith("/"))
        out.append(Signal(
            Bottleneck.DATA_IO, 1,
            f"the data root is remote object storage on some clusters ({_loc([r0])}: `{r0.value[:80]}`) and a mounted file "
            f"system on others ({_loc(mounted)}: `{mounted[0].value[:80]}`): runs on the remote root pay network latency and "
            "bandwidth every epoch; check which root your cluster gets",
            f"数据根目录在部分集群上是远程对象存储（{_loc([r0])}：`{r0.value[:80]}`），在其他集群上是挂载的文件系统"
            f"（{_loc(mounted)}：`{mounted[0].value[:80]}`）：使用远程根目录的运行每个 epoch 都要承担网络延迟与带宽开销；请确认你的集群使用哪一个",
        ))
    elif remote:
        out.append(Signal(
            Bottleneck.DATA_IO, 2,
            f"training data is read from remote object storage ({_loc(remote)}: `{remote[0].value[:80]}`): every epoch pays network latency and bandwidth",
            f"训练数据从远程对象存储读取（{_loc(remote)}：`{remote[0].value[:80]}`）：每个 epoch 都要承担网络延迟与带宽开销",
        ))
    elif slow:
        out.append(Signal(
            Bottleneck.DATA_IO, 2,
            f"training data is read from a network file system ({_loc(slow)}: `{slow[0].value[:80]}`)",
            f"训练数据从网络文件系统读取（{_loc(slow)}：`{slow[0].value[:80]}`）",
        ))
    f6 = st.evidence("F6")
    f6_res = st.results.get("F6")
    # a Dataset ``__init__`` that tokenizes every sample once per launch (skyrl-train's prompt-length filter, dataset.py:60-65)
    # delays the first step; it is no work inside the input pipeline of each step, so it points at no step bottleneck
    startup = f6_res is not None and f6_res.values.get("preprocessing") == "startup"
    if st.missing("F6") and f6 and f6_res is not None and f6_res.values.get("preprocessing") == "step":
        out.append(Signal(
            Bottleneck.DATA_IO, 1,
            f"text is tokenized inside the model's forward on every training step, in the training process ({_loc(f6)})",
            f"文本在模型 forward 中于每个训练步在线分词，占用训练进程（{_loc(f6)}）",
        ))
    elif st.missing("F6") and f6 and not startup:
        out.append(Signal(
            Bottleneck.DATA_IO, 1,
            f"tokenization or feature extraction runs online, inside the training input pipeline ({_loc(f6)})",
            f"分词或特征提取在训练输入管线中在线执行（{_loc(f6)}）",
        ))
    return out


def storage_note(paths: list[str] | None = None, where: str = "") -> tuple[str, str]:
    """What to check when no data location names its storage (an unnamed medium is unknown, never "slow"). ``paths``: the
    data paths I2 read that name no medium (``./alpaca_data.json``), ``where`` the first one's place: then the note says
    so instead of "no data location"."""
    check = "check where the data path points (local NVMe, a network file system or object storage) and its read throughput"
    check_zh = "请确认数据路径指向本地 NVMe、网络文件系统还是对象存储，以及其读取吞吐"
    if paths:
        shown = ", ".join(paths[:3]) + (f"; {where}" if where else "")
        return (f"storage of the training data: unknown (the data paths ({shown}) do not name their storage medium); {check}",
                f"训练数据所在存储：未知（数据路径（{shown}）未表明存储介质）；{check_zh}")
    return (
        f"storage of the training data: unknown (no data location in a config or launch on the training path); {check}",
        f"训练数据所在存储：未知（训练路径的配置与启动命令中未出现数据位置）；{check_zh}",
    )


def _nodes(launch: object) -> float:
    args = getattr(launch, "launcher_args", {})
    for k in ("nnodes", "nnode", "num_nodes", "num_machines"):  # (torchrun takes the prefix `--nnode`: SpeechGPT)
        v = args.get(k)
        n = as_number(str(v).split(":")[-1]) if v is not None else None
        if n:
            return n
        if v is not None:
            return 2.0  # left to the environment ($NNODES) with a rendezvous: several nodes
    return 2.0 if "hostfile" in args else 1.0


def _multi_node_shard_less(facts: Facts, multi: list, cited: list) -> bool:
    """Every multi-node launch passes a DeepSpeed config, and none of them is a fully sharding one (Open-LLaVA-NeXT: its
    four 4-node recipes pass ``./scripts/zero2.json``; the ``zero3.json`` is passed only by single-node LLaVA-1.5 scripts):
    no run that spans nodes all-gathers its layers over the network."""
    if not multi:
        return False
    refs = [ds_config_ref(x) for x in multi]
    if None in refs:
        return False
    passed = {resolve_file(facts, r) for r in refs if r is not None}
    return None not in passed and not passed & {getattr(c, "path", None) for c in cited}


def _full_sharding(facts: Facts) -> tuple[list, str, str] | None:
    """Full parameter sharding (ZeRO-3 / FSDP FULL_SHARD): its sites, and "in k of n ..." when it is one choice among
    the repository's DeepSpeed configs or FSDP settings (LLaMA-Factory ships ZeRO-0/2/3 configs side by side)."""
    alt_ds = deepspeed_alternative_files(facts)
    stages = [e for e in facts.config("zero_optimization.stage") if as_number(e.value) is not None and e.path not in alt_ds]
    stage3 = [e for e in stages if as_number(e.value) == 3]
    strategies = [s for s in facts.effective("sharding_strategy", "fsdp", "fsdp_sharding_strategy") if isinstance(s.value, str)]
    full = [s for s in strategies if "full_shard" in s.value.lower().replace("-", "_")]
    if stage3:
        ds_files = ({e.path for e in facts.config("zero_optimization")} | {e.path for e in facts.config("zero_optimization.stage")}) - alt_ds
        n3, n = len({e.path for e in stage3}), len(ds_files)
        if n > n3:
            return stage3, f" in {n3} of {n} DeepSpeed configs", f"（{n} 个 DeepSpeed 配置中的 {n3} 个）"
        return stage3, "", ""
    if full:
        n_full, n = len({(s.path, s.line) for s in full}), len({(s.path, s.line) for s in strategies})
        if n > n_full:
            return full, f" in {n_full} of {n} FSDP settings", f"（{n} 处 FSDP 设置中的 {n_full} 处）"
        return full, "", ""
    return None


def _comm_signals(facts: Facts, p: Project, st: _Status) -> list[Signal]:
    out: list[Signal] = []
    if p.multi_node:
        n = p.num_nodes or 2
        src = p.notes.get("nodes_source")
        sites = p.notes.get("multi_node_sites") or []
        # (a launch file that runs no training, aguvis ``scripts/inference.sh``'s one-image CLI, is no single-node recipe)
        launches = [x for x in facts.launches() if (x.launcher in ("torchrun", "deepspeed", "accelerate", "colossalai", "python") or x.wrappers)
                    and not launch_runs_no_training(facts, x.path)]
        multi = [x for x in launches if _nodes(x) > 1]
        if len(launches) > 1 and len(multi) < len(launches) and (multi or sites):
            k = max(len(multi), len(sites))
            up_to = f"up to {n} at `{src}`" if p.num_nodes else f"at `{src}`"
            up_to_zh = f"最多 {n} 个，`{src}`" if p.num_nodes else f"`{src}`"
            en = f"{k} launch setting(s) run on several nodes ({up_to}), next to single-node ones"
            zh = f"有 {k} 处启动设置跨多个节点运行（{up_to_zh}），其余为单机"
            positive = k * 2 > len(launches)
        else:
            where = f" (`{src}`)" if src else ""
            if p.notes.get("nodes_unresolved"):  # the count is the job's (``--nnode={{ nodes }}``): several, not a number
                value = str(p.notes["nodes_unresolved"])[:60]
                en, zh = f"training spans several nodes{where}, the count set when the job starts ({value})", \
                    f"训练跨多个节点{where}，节点数在作业启动时给出（{value}）"
            else:
                en, zh = f"training spans {n} nodes{where}", f"训练跨 {n} 个节点{where}"
            positive = bool(src)
        out.append(Signal(
            Bottleneck.COMMUNICATION, 2,
            f"{en}: gradient and parameter collectives cross the inter-node network",
            f"{zh}：梯度与参数集合通信需经过节点间网络",
            positive=positive,
        ))
        spans_nodes = positive
        if st.missing("E1"):
            out.append(Signal(
                Bottleneck.COMMUNICATION, 1,
                "no GPUDirect RDMA / InfiniBand settings were seen for the multi-node job (E1)",
                "多机训练未见 GPUDirect RDMA / InfiniBand 相关配置（E1）",
                positive=False,
            ))
        sharded = _full_sharding(facts)
        if sharded is not None and _multi_node_shard_less(facts, multi, sharded[0]):
            sharded = None
        if sharded is not None:
            cited, share, share_zh = sharded
            if spans_nodes and not share:  # the runs span nodes and every sharding setting shards fully
                en = f"parameters are fully sharded across nodes (ZeRO-3 / FULL_SHARD, {_loc(cited)}): every layer is all-gathered over the network"
                zh = f"参数跨节点全分片（ZeRO-3 / FULL_SHARD，{_loc(cited)}）：每层都要跨网络 AllGather"
            else:  # one choice among several configs, or multi-node only in some launches: what it costs when they meet
                en = (f"parameters are fully sharded{share} (ZeRO-3 / FULL_SHARD, {_loc(cited)}): in a run that spans nodes "
                      "every layer is all-gathered over the network")
                zh = f"参数全分片{share_zh}（ZeRO-3 / FULL_SHARD，{_loc(cited)}）：跨节点运行时每层都要跨网络 AllGather"
            out.append(Signal(Bottleneck.COMMUNICATION, 1, en, zh, positive=spans_nodes and not share))
        if st.missing("E2"):
            out.append(Signal(
                Bottleneck.COMMUNICATION, 1,
                "no overlap of gradient communication with the backward pass was seen (E2)",
                "未见梯度通信与反向计算重叠的设置（E2）",
                positive=False,
            ))
    multi_gpu = p.multi_node or (p.num_gpus or 0) > 1
    alt_ds = deepspeed_alternative_files(facts)  # DeepSpeed configs of a backend the run does not pick (skyrl-train: fsdp2)
    offload = [e for e in facts.config("offload_optimizer.device", "offload_param.device")
               if isinstance(e.value, str) and e.value.lower() in ("cpu", "nvme") and e.path not in alt_ds]
    # C4 unused in the same report would contradict the reason; C4 partial is "an offload config is shipped, but no launch
    # script or config uses it" (ms-swift's zero2_offload.json preset, picked only by ``--deepspeed zero2_offload``): not every step
    if offload and not st.missing("C4") and st("C4") != Status.PARTIAL:
        ds_files = ({e.path for e in facts.config("zero_optimization")} | {e.path for e in facts.config("zero_optimization.stage")}) - alt_ds
        # recipes that shard with FSDP instead are choices too (oumi: 3 offloading DeepSpeed recipes beside 67 FSDP ones)
        fsdp_files = {s.path for s in facts.effective("sharding_strategy", "fsdp", "fsdp_sharding_strategy") if isinstance(s.value, str)}
        off_files = {e.path for e in offload}
        configs = ds_files | fsdp_files | off_files
        kind = "DeepSpeed configs" if not fsdp_files - ds_files else "DeepSpeed/FSDP configs"
        share = f" in {len(off_files)} of {len(configs)} {kind}" if len(configs) > len(off_files) else ""
        share_zh = f"（{len(configs)} 个 {kind.replace(' configs', '')} 配置中的 {len(off_files)} 个）" if share else ""
        ds_files = configs
        # LoRA/QLoRA with only the optimizer offloaded: the optimizer holds only the adapters, a small share of the model, so
        # only their states and gradients cross PCIe each step (the frozen base weights stay on the GPU): no reason
        adapter_only = p.adapter_training and all(tuple(map(str, e.keys))[-2:] == ("offload_optimizer", "device") for e in offload)
        if not adapter_only:
            out.append(Signal(
                Bottleneck.COMMUNICATION, 1,
                f"optimizer or parameter states are offloaded{share} ({_loc(offload)}): every step moves them over PCIe",
                f"优化器或参数状态被卸载{share_zh}（{_loc(offload)}）：每步都要经 PCIe 搬运",
                positive=not share or len(off_files) * 2 > len(ds_files),
            ))
    if p.moe and multi_gpu and not p.notes.get("moe_option"):  # (an MoE class a model zoo offers, no run trains: no signal)
        minority = p.notes.get("moe_minority")
        some = f" (in only {minority[0]} of {minority[1]} model settings or configs)" if minority else ""
        some_zh = f"（{minority[1]} 处模型设置中仅 {minority[0]} 处）" if minority else ""
        at = f" (`{p.notes['moe_at']}`)" if p.notes.get("moe_at") else ""
        a2a = _all_to_all(facts, st)
        if a2a:
            cite = (st.evidence("A7") if st("A7") == Status.USED else []) or a2a  # the expert-parallel setting A7 judged
            out.append(Signal(
                Bottleneck.COMMUNICATION, 1,
                f"mixture-of-experts model{at}{some} on several GPUs: token routing needs all-to-all exchanges every layer "
                f"({_loc(cite[:3])})",
                f"多卡训练 MoE 模型{at}{some_zh}：每层的 token 路由需要 AllToAll 通信（{_loc(cite[:3])}）",
                positive=False,
            ))
        elif st("A7") == Status.USED:
            # experts split over the ranks without an all-to-all (LLaMA2-Accessory's Mixtral: every rank runs its own experts on
            # all tokens, combined by an all-reduce over the model-parallel group): an exchange per MoE layer, not all-to-all
            out.append(Signal(
                Bottleneck.COMMUNICATION, 1,
                f"mixture-of-experts model{at}{some} with its experts split over the GPUs (A7): every MoE layer exchanges "
                "activations between them (no all-to-all call or expert-parallel size was seen)",
                f"MoE 模型{at}{some_zh}的专家分布在多张 GPU 上（A7）：每个 MoE 层都要在它们之间交换激活（未见 AllToAll 调用或专家并行度设置）",
                positive=False,
            ))
        # (experts replicated on every GPU, no expert parallelism: no exchange per layer, no signal)
    return out


#: expert-parallel sizes (MegaBlocks' ``moe_world_size`` too) and all-to-all collectives
_EP_SIZES = (*EP_NAMES, "moe_world_size")
_A2A_CALLS = ("all_to_all", "all_to_all_single", "alltoall", "all_to_all_v", "AllToAll", "_AllToAll")


def _all_to_all(facts: Facts, st: _Status) -> list:
    """Where the training path exchanges tokens all-to-all between experts: an expert-parallel size above 1 that it sets
    (Megatron ``--expert-model-parallel-size 8``, DeepSpeed MoE ``ep_size``), MegaBlocks' ``moe_expert_model_parallelism``
    switched on, or an all-to-all collective in its MoE code (not a sequence-parallel one: Ulysses' all-to-all of heads)."""
    sizes = [s for s in facts.effective(*_EP_SIZES) if (as_number(s.value) or 0) > 1 and st.on_path(s.path)]
    sizes += [s for s in facts.effective("moe_expert_model_parallelism") if truthy(s.value) and st.on_path(s.path)]
    calls = [c for c in facts.calls(*_A2A_CALLS) if _MOE_CODE.search(f"{c.path} {c.func or ''}") and st.on_path(c.path)]
    return [*sizes, *calls][:3]


_MOE_CODE = lazy_compile(r"moe|expert|token_dispatch|router|routing", re.I)


_PERIODIC = lazy_compile(r"(%|\blast_step\b|\bval\w*|\beval\w*|\blog\w*_(every|interval|steps)|\bshould_log)", re.I)
_EVAL_FUNC = lazy_compile(r"(eval|estimate|valid|test|sample|generat|predict|infer|benchmark|profile)", re.I)
#: a kernel warm-up run once before training (``_prewarm_mamba_ssd_end_to_end``: a few forward/backward passes over the
#: shapes to come, with ``torch.cuda.synchronize``): its syncs are paid once, not every step
_WARMUP_FUNC = lazy_compile(r"prewarm|^_*warm_?up$", re.I)


_EVAL_PATH = lazy_compile(r"(^|/)(eval\w*|evaluat\w*|test\w*|bench\w*|infer\w*|generat\w*|sample\w*)(\.py$|/)", re.I)


_FLAG = lazy_compile(r"^(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)$")


def _off_by_default(facts: Facts, guard: str | None) -> bool:
    """The branch runs only under an option that is off unless a run turns it on (``if train_config.save_metrics:``
    with ``save_metrics: bool = False`` and nothing setting it): not the default training step."""
    for part in (guard or "").split(" and "):
        m = _FLAG.match(part.strip().strip("()"))
        if not m:
            continue
        name = m.group(1)
        # an option the project declares with a default (a dataclass field, an argparse flag), not any ``training=``
        # keyword of a call
        if not any(s.source in ("field-default", "argparse-default") for s in facts.settings(name)):
            continue
        values = [truthy(s.value) for s in facts.effective(name)]
        if values and all(v is False for v in values):
            return True
    return False


def _train_sites(calls: list, st: _Status) -> list:
    """Calls of the training step: on the training path, not in an evaluation/generation file or function."""
    return [c for c in calls if st.on_path(c.path) and not _EVAL_PATH.search(c.path) and not _EVAL_FUNC.search(c.func or "")]


#: torch dtype names as step zero writes them
_DTYPE_NAMES = {"float32": "FP32", "bfloat16": "BF16", "float16": "FP16", "half": "FP16"}


def _four_bit_how(values: dict[str, Any]) -> tuple[str, str]:
    """How a 4-bit base computes, in the words of step zero: the data type and compute dtype G4 read from the load, the
    defaults of a bare ``load_in_4bit=True`` named as such (FP4 computing in float32), else what every 4-bit load does."""
    qt, dt = values.get("base_quant_type"), values.get("base_compute_dtype")
    if values.get("base_quant_defaults"):
        return ("4-bit (FP4, the default of a bare `load_in_4bit=True`): each matmul first dequantizes the weights to FP32, "
                "bnb_4bit_compute_dtype being left at float32",
                "4-bit（FP4，裸 `load_in_4bit=True` 的默认值）：每次矩阵乘先把权重反量化为 FP32（bnb_4bit_compute_dtype 保持 float32）")
    kind = f" ({qt.upper()})" if qt else ""
    named = _DTYPE_NAMES.get(str(dt))
    to, to_zh = (named, named) if named else ("the compute dtype", "计算精度")
    return (f"4-bit{kind}: each matmul first dequantizes the weights to {to}", f"4-bit{kind.replace(' (', '（').replace(')', '）')}"
            f"：每次矩阵乘先把权重反量化为 {to_zh}")


def _loop_site(facts: Facts, st: _Status) -> tuple[str, str]:
    """Where the training step is (for reasons about a practice that was not seen there), English and Chinese;
    an evaluation command (``llmfoundry/command_utils/eval.py``) is not the training step."""
    sites = _train_sites(facts.calls("backward"), st) or _train_sites(facts.calls("Trainer", "SFTTrainer", "fit", "pretrain"), st)
    return (f" (training step at {_loc(sites)})", f"（训练步位于 {_loc(sites)}）") if sites else ("", "")


# a size rounded up to a multiple (``8 * math.ceil(n / 8.0)``, ``multiple_of * ceil(...)``, ``pad_to_multiple_of=``)
_PADDED = lazy_compile(r"(\*\s*(math\.)?ceil\(|ceil\([^)]*/|multiple_of|//\s*\d+\s*\)?\s*\*|%\s*\d+)", re.I)
_INT = lazy_compile(r"(?<![\w.])(\d{2,})(?![\w.])")


def _misaligned(facts: Facts, evidence: list) -> list:
    """The D7 sites that show a dimension known not to be a multiple of 8 (``vocab_size: 32001``): a number on the
    cited line. A size computed at run time (``resize_token_embeddings(len(tokenizer))``) is not known to be
    misaligned, and one rounded up to a multiple (``8 * math.ceil(len(tokenizer) / 8.0)``) is aligned."""
    out = []
    for e in evidence:
        text = str(getattr(e, "snippet", "") or "")
        # the arguments of a call cited by its first line (``resize_token_embeddings(`` above its padded size)
        args = " ".join(str(getattr(a, "text", a)) for c in facts.files[e.path].calls if c.line == e.line
                        for a in (*c.args, *c.kwargs.values())) if e.path in facts.files else ""
        if _PADDED.search(text) or _PADDED.search(args):
            continue
        n = as_number(getattr(e, "value", None))
        nums = [n] if n is not None else [float(x) for x in _INT.findall(text.split("#", 1)[0])]
        if any(x >= 8 and int(x) == x and int(x) % 8 for x in nums):
            out.append(e)
    return out


# evidence that applies to the whole model (``torch.compile(model)``, autocast, the weights' dtype), not one helper
_MODEL_WIDE = lazy_compile(r"(\bmodel\b|autocast|\.weight\b|\bdtype\b)")


#: below this many billion parameters a compiled model's step is not shown compute-bound by elimination (see _addressed)
TINY_BILLIONS = 0.05


def _addressed(facts: Facts, p: Project, st: _Status) -> Signal | None:
    """Compute-bound by positive evidence: the code itself rules out the other bottleneck types.

    Mixed precision (C1) puts the matmuls on Tensor Cores; fused attention (D1) removes the S×S traffic of
    attention; torch.compile or CUDA graphs (D2/D4) fuse the element-wise kernels and cut launch and Python
    dispatch overhead; pre-tokenized binary data (F10) leaves the input pipeline a memcpy of token ids; one node
    without offload keeps collectives on NVLink. What is left of the step is the model's GEMMs (seed 000,
    compute-bound: optimise with precision, Tensor Core alignment, fusion). Every part must be cited on the
    training path; anything missing or any multi-node/offload/MoE/remote-data feature and there is no such signal.
    """
    if p.multi_node or p.moe or not p.does_training:
        return None
    parts = [("C1", "mixed precision", "混合精度"), ("D1", "fused attention", "融合 Attention"),
             ("D2", "torch.compile", "torch.compile") if st.used("D2") else ("D4", "CUDA graphs", "CUDA Graph"),
             ("F10", "pre-tokenized binary data", "预分词二进制数据")]
    cited: list[tuple[str, str, str]] = []
    for cid, en, zh in parts:
        ev = st.evidence(cid) if st.used(cid) else []
        if not ev:
            return None
        best = [e for e in ev if _MODEL_WIDE.search(e.snippet or "")] or ev  # the model's own setting, not a helper's
        cited.append((cid, en, zh, _loc(best[:1])))  # type: ignore[arg-type]
    alt_ds = deepspeed_alternative_files(facts)  # DeepSpeed configs of a backend the run does not pick (skyrl-train: fsdp2)
    offload = [e for e in facts.config("offload_optimizer.device", "offload_param.device")
               if isinstance(e.value, str) and e.value.lower() in ("cpu", "nvme") and e.path not in alt_ds]
    if offload or any(_REMOTE_URL.match(x.value.strip()) or any(t in x.value.lower() for t in _SLOW_FS) for x in _data_locations(facts)):
        return None
    listed = ", ".join(f"{en} ({cid} at {where})" for cid, en, zh, where in cited)  # type: ignore[misc]
    listed_zh = "、".join(f"{zh}（{cid}，{where}）" for cid, en, zh, where in cited)  # type: ignore[misc]
    gpus, gpus_zh = _gpus_text(p)
    # multi-node training documented in prose only (E1 applies without a multi-node launch): the launches are single-node
    documented = bool(_doc_multi_node(facts, st))
    node_en = "in single-node launches" if documented else "on a single node"
    node_zh = "单机启动" if documented else "单机训练"
    # seed step zero infers from model scale and data source first: elimination proves nothing when the training path
    # trains any size its presets list, or its data loader also streams from object storage
    unknown_en: list[str] = []
    unknown_zh: list[str] = []
    if p.params_billions is None and not p.notes.get("params_range_billions"):
        unknown_en.append("the model size is not fixed by the training path (it trains whichever model a run names)")
        unknown_zh.append("训练路径未确定模型规模（训练哪个模型由运行参数决定）")
    b = p.params_billions
    tiny = b is not None and b < TINY_BILLIONS and not st.used("D4")
    if tiny and b is not None:
        # karpathy/llama2.c's default run: a 15M model (dim 288, 6 layers), compiled. Its GEMMs are too narrow to keep the
        # Tensor Cores busy and its kernels last microseconds; Inductor's default mode fuses them but still launches each
        # one from the CPU. What bounds such a step is a profile's question, not the elimination's
        src = p.notes.get("params_source")
        where = f" at {src}" if src and src != "model name" else ""
        unknown_en.append(f"the model is tiny (~{_fmt_b(b)}{where}): its matmuls are too narrow to fill the Tensor Cores, and "
                          "torch.compile without CUDA graphs still launches each short kernel from the CPU")
        unknown_zh.append(f"模型很小（约 {_fmt_b(b)}{'，' + src if where else ''}）：矩阵乘过窄，难以占满 Tensor Core；"
                          "未启用 CUDA Graph 的 torch.compile 仍由 CPU 逐个 launch 短 kernel")
    remote = _remote_capable(facts, st)
    if remote:
        unknown_en.append(f"its data loader also reads from object storage ({_loc(remote)}: `{remote[0].text[:80]}`), so the data source is the run's choice")
        unknown_zh.append(f"其数据加载也支持从对象存储读取（{_loc(remote)}：`{remote[0].text[:80]}`），数据来源取决于运行配置")
    if unknown_en:
        return Signal(
            Bottleneck.COMPUTE, 2,
            f"{listed} {node_en}{gpus} address the {'' if tiny else 'launch, '}memory-traffic and input overheads of seed step zero, but "
            + "; ".join(unknown_en) + ": a compute-bound step is likely only for a large model reading local data",
            f"{listed_zh}，且为{node_zh}{gpus_zh}，已处理{'' if tiny else ' kernel launch、'}显存流量与数据输入开销；但" + "；".join(unknown_zh)
            + "：仅当模型较大且读取本地数据时才可能受计算约束",
            positive=False,
        )
    return Signal(
        Bottleneck.COMPUTE, 3,
        f"{listed} {node_en}{gpus}: the launch, memory-traffic, input and network overheads of seed step zero are each "
        "addressed in the code, so the step time left is the model's matmuls on the Tensor Cores",
        f"{listed_zh}，且为{node_zh}{gpus_zh}：kernel launch、显存流量、数据输入与网络通信的开销在代码中均已处理，单步耗时主要是 Tensor Core 上的矩阵乘",
    )


def _gpus_text(p: Project) -> tuple[str, str]:
    """How many GPUs a node trains on: a launcher's count, every GPU of the node (``devices="auto"``), or nothing."""
    if p.num_gpus:
        n = p.num_gpus
        return f" ({n} GPU{'' if n == 1 else 's'})", f"（{n} 张 GPU）"
    auto = p.notes.get("gpus_auto")
    if auto:
        return f" (every GPU of the node, `devices=\"auto\"` at `{auto}`)", f"（使用节点上的全部 GPU，`devices=\"auto\"`，`{auto}`）"
    return "", ""




_DATA_CODE = lazy_compile(r"(data|dataset|loader|corpus|shard)", re.I)


def _remote_capable(facts: Facts, st: _Status) -> list:
    """Training-path data code that reads object storage when a run points it there: a test for a remote scheme
    (``if str(self.data_path).startswith("s3://")``) in data code, or a streaming dataset (LitData, MosaicML)."""
    out: list = []
    for x in facts.path_literals():
        v = x.value.strip().lower()
        if not (any(v == r or v.startswith(r) for r in _REMOTE) and st.on_path(x.path)) or _EVAL_PATH.search(x.path):
            continue
        if any(w in x.text.lower() for w in ("output", "save", "checkpoint", "ckpt", "log", "model", "tokenizer")):
            continue
        if _DATA_CODE.search(x.path) or _DATA_CODE.search(x.text):  # data code (``litgpt/data/tinyllama.py``), not a checkpoint util
            out.append(x)
    if not out:
        # a data loader that streams shards from object storage or a local folder (LitData, MosaicML streaming)
        out = [c for c in facts.calls("StreamingDataset") if c.name.split(".", 1)[0] in ("litdata", "streaming")
               and st.on_path(c.path) and not _EVAL_PATH.search(c.path)]
    return out


def _doc_multi_node(facts: Facts, st: _Status) -> list:
    """Multi-node launches the project's own README or training guides document, or keeps in a multi-node folder (in
    scope: docs under ``docs/`` and the docs of tests or vendored copies are context and never feed step zero)."""
    return [h for h in facts.records("doc_hints") if h.kind == "multi_node" and st.roles.get(h.path, GUIDE) in IN_SCOPE
            and not re.search(r"(^|/)tests?/", h.path)] + [
        h for h in multi_node_folders(facts) if st.roles.get(h.path, GUIDE) in IN_SCOPE]


def _documented_multi_node(facts: Facts, p: Project, st: _Status) -> Signal | None:
    """Multi-node training the docs describe without a multi-node launch in the code."""
    docs = [] if p.multi_node else _doc_multi_node(facts, st)
    if not docs:
        return None
    where = f"`{docs[0].path}:{docs[0].line}`: `{docs[0].value}`" + (f" (+{len(docs) - 1})" if len(docs) > 1 else "")
    return Signal(
        Bottleneck.COMMUNICATION, 1,
        f"multi-node training is documented ({where}) but not configured by a launch: across nodes the gradient "
        "all-reduce crosses the network, so a multi-node run may be communication-bound",
        f"文档中描述了多机训练（{where}），但启动命令未配置：跨节点时梯度 AllReduce 经过网络，多机运行可能受通信约束",
        positive=False,
    )


#: a comment that says a setting is kept on purpose (a workaround), not left on by accident
#: (not a bare "needed": ``# needed for readable stack traces`` is the debugging use the advice is about)
_KEPT_ON_PURPOSE = lazy_compile(r"(?i)\b(do\s*n[o']t\s+remove|workaround|work\s+around|hangs?\b|deadlock|"
                                r"or\s+(the\s+)?(training|job|run)\s+(will\s+)?(crash|fail))")


def _debug_env_signals(facts: Facts, st: _Status) -> list[Signal]:
    """Debugging switches a training launch leaves on (LongVU's four launches: ``CUDA_LAUNCH_BLOCKING=1
    TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun ...``): every kernel launch waits until the kernel has run, so the CPU never runs
    ahead of the GPU and no collective overlaps compute; ``DETAIL`` checks every collective's shapes across ranks first. Each is
    a setting, not an inference: a positive signal, decisive where most training launches set it. Launches that run no
    training are left out, and what is out of scope (tests) is not read."""
    def sites(name: str, on: Callable[[str], bool]) -> list[Any]:
        # (set by a launch, not by Python: HF's ``enable_full_determinism`` sets it only when a run asks for determinism)
        return [e for e in facts.envs(name) if e.source != "python" and on(e.value.strip().strip("'\"")) and st.on_path(e.path)
                and not launch_runs_no_training(facts, e.path)]
    runs = {x.path for x in facts.launches() if st.on_path(x.path) and not launch_runs_no_training(facts, x.path)}
    out: list[Signal] = []
    blocking = sites("CUDA_LAUNCH_BLOCKING", lambda v: truthy(v) is True)
    if blocking:
        at = _loc(blocking)
        # every step serialised, whatever else the code shows: decisive where most training launches set it; one example
        # script among many (Pai-Megatron-Patch's Mistral recipe) is that recipe's problem
        most = len({e.path for e in blocking} & runs) * 2 > len(runs)
        share = "" if most or not runs else f" ({len({e.path for e in blocking} & runs)} of {len(runs)} launch files)"
        # (a quarter of the launches or more: LongLLaVA's Align.sh, one of three stages; not Pai-Megatron-Patch's one recipe
        # among 107)
        named = len({e.path for e in blocking} & runs) * 4 >= len(runs)
        # the authors' own reason for keeping it (octopack's BigScience-style launches: ``# do not remove or the training will
        # hang and nodes will be lost w/o this workaround``): a workaround, not a forgotten debugging switch
        kept = next((e for e in blocking if e.comment and _KEPT_ON_PURPOSE.search(e.comment)), None)
        if kept is not None:
            said = kept.comment if len(kept.comment) <= 64 else kept.comment[:63].rstrip() + "…"
            advice = (f"; kept as a workaround (`# {said}`): find what it hides (`NCCL_DEBUG=INFO`, NCCL and driver versions) "
                      "and time a run without it")
            advice_zh = (f"；启动脚本有意保留它作为规避手段（`# {said}`）：应查明它掩盖的问题（`NCCL_DEBUG=INFO`、NCCL 与驱动版本），"
                         "再对比去掉它后的运行时间")
        else:
            advice, advice_zh = "; it is a debugging switch, remove it", "；这是调试开关，应删除"
        out.append(Signal(
            Bottleneck.LAUNCH, 6 if most else 1,
            f"CUDA_LAUNCH_BLOCKING=1 in the training launch ({at}){share}: every kernel launch waits until the kernel has finished, "
            "so the CPU never queues work ahead of the GPU, " + ("" if kept else "Python dispatch shows in every step ")
            + f"and no communication overlaps compute{advice}",
            f"训练启动命令设置了 CUDA_LAUNCH_BLOCKING=1（{at}）{share}：每次 kernel 启动都要等 kernel 执行完毕，CPU 无法提前排队，"
            f"Python 调度开销计入每一步，通信也无法与计算重叠{advice_zh}",
            named_anyway=named,
        ))
    detail = sites("TORCH_DISTRIBUTED_DEBUG", lambda v: v.upper() == "DETAIL")
    if detail:
        at = _loc(detail)
        most = len({e.path for e in detail} & runs) * 2 > len(runs)
        out.append(Signal(
            Bottleneck.COMMUNICATION, 2 if most else 1,
            f"TORCH_DISTRIBUTED_DEBUG=DETAIL in the training launch ({at}): every collective is wrapped with a cross-rank "
            "check of its shapes and types before it runs; it is a debugging switch, remove it",
            f"训练启动命令设置了 TORCH_DISTRIBUTED_DEBUG=DETAIL（{at}）：每次集合通信前都要跨 rank 校验形状与类型；这是调试开关，应删除",
            named_anyway=len({e.path for e in detail} & runs) * 4 >= len(runs),
        ))
    return out


def _training_signals(facts: Facts, p: Project, st: _Status) -> list[Signal]:
    out: list[Signal] = []
    done = _addressed(facts, p, st)
    if done is not None:
        out.append(done)
    doc = _documented_multi_node(facts, p, st)
    if doc is not None:
        out.append(doc)
    out += _debug_env_signals(facts, st)
    b = p.params_billions
    seq = p.max_seq_len
    src = p.notes.get("params_source")
    size_where = f", {src}" if src and src != "model name" else ""
    size_where_zh = f"，{src}" if src and src != "model name" else ""
    if src == "model name" and p.notes.get("params_named"):
        name, where = p.notes["params_named"]
        size_where = f", from the model name `{name}` at `{where}`"
        size_where_zh = f"，来自模型名 `{name}`（`{where}`）"
    if st.missing("C1"):
        off = [e for e in st.evidence("C1") if e.value is False or str(e.value).lower() in ("false", "fp32", "float32", "torch.float32", "32", "32-true")]
        if off and p.notes.get("jax_training"):
            # JAX runs float32 matmuls at its default precision, already on the matrix units: BF16 passes on TPU, TF32 on
            # Ampere and newer GPUs; what FP32 costs there is memory and HBM traffic
            out.append(Signal(
                Bottleneck.MEMORY, 2,
                f"training runs in FP32 ({_loc(off)}): weights and activations take twice the memory and HBM traffic of BF16 "
                "(JAX runs FP32 matmuls at its default precision: BF16 passes on TPU, TF32 on Ampere or newer GPUs)",
                f"以 FP32 训练（{_loc(off)}）：权重与激活占用的显存和 HBM 流量是 BF16 的两倍"
                "（JAX 以默认精度执行 FP32 矩阵乘：TPU 上为 BF16 多遍计算，Ampere 及更新 GPU 上为 TF32）",
            ))
        elif off:
            out.append(Signal(
                Bottleneck.COMPUTE, 3,
                f"training runs in FP32 ({_loc(off)}): matmuls miss the Tensor Cores (A100: 19.5 FP32 vs 312 BF16 dense TFLOPS)",
                f"以 FP32 训练（{_loc(off)}）：矩阵乘未命中 Tensor Core（A100：FP32 19.5 vs BF16 312 TFLOPS）",
            ))
        else:
            site, site_zh = _loop_site(facts, st)
            out.append(Signal(
                Bottleneck.COMPUTE, 2,
                f"no BF16/FP16 mixed-precision setting was seen on the training path (C1){site}: if it runs in FP32, matmuls miss the Tensor Cores",
                f"训练路径上未见 BF16/FP16 混合精度设置（C1）{site_zh}：若以 FP32 训练，矩阵乘无法命中 Tensor Core",
                positive=False,
            ))
    d7 = st.results.get("D7")
    d7_ev = _misaligned(facts, st.evidence("D7"))
    if st.missing("D7") and d7 is not None and d7.values.get("aligned") is False and d7_ev:  # not when no dimension is visible at all
        out.append(Signal(
            Bottleneck.COMPUTE, 1,
            f"some matmul dimensions are not multiples of 8 ({_loc(d7_ev)}), so Tensor Core tiles are padded or skipped",
            f"部分矩阵维度不是 8 的倍数（{_loc(d7_ev)}），Tensor Core 需要填充或无法命中",
        ))
    g4 = st.results.get("G4")
    bits = g4.values.get("base_bits") if g4 is not None and st.used("G4") else None
    # the training code's own k-bit load, or the one recipe that asks for it; not one of a framework's many example recipes
    # (axolotl's ``examples/*/qlora.yaml``): which of those a user runs is theirs to choose
    own = g4 is not None and (str(g4.values.get("base_quant_at", "")).split(":")[0].endswith(".py") or g4.values.get("base_quant_sites") == 1)
    if bits in (4, 8) and own:
        # a k-bit base under adapters: bitsandbytes stores the frozen weights in 8 or 4 bits and pays for it in every matmul
        # (medAlpaca's README times one epoch at 77:30 with an 8-bit base against 14:30 with LoRA in fp16)
        where = g4.values.get("base_quant_at", "")  # type: ignore[union-attr]
        how, how_zh = (("8-bit (LLM.int8): each matmul splits out its outlier columns into an FP16 product and runs the rest "
                        "in int8", "8-bit（LLM.int8）：每次矩阵乘把离群列拆出做 FP16 乘法，其余以 int8 计算") if bits == 8 else
                       _four_bit_how(g4.values))  # type: ignore[union-attr]
        out.append(Signal(  # one sign among others: an adapter recipe may be one run of several (ChatDoctor's full FSDP run)
            Bottleneck.COMPUTE, 1,
            f"the frozen base is loaded in bitsandbytes {how} ({where}), forward and backward, slower than plain BF16/FP16 "
            "GEMMs: if the base fits in 16 bit, time a step without quantization",
            f"冻结的基座以 bitsandbytes {how_zh}（{where}），前向与反向皆如此，慢于直接的 BF16/FP16 GEMM：若基座以 16 位可放下，"
            "对比一次不量化的单步耗时",
        ))
    active = _active_billions(p)
    # (fused attention where D1 is used outright, or where the requirements hold transformers at 4.36+, whose default is
    # SDPA; not alpaca-lora's "transformers >= 4.28", which may run eager attention)
    d1 = st.results.get("D1")
    fused = st.fully("D1") or bool(st.used("D1") and d1 is not None and d1.values.get("sdpa_default"))
    if b is not None and b >= 6 and st.used("C1") and fused and active is None:
        out.append(Signal(
            Bottleneck.COMPUTE, 2,
            f"large dense model (~{_fmt_b(b)}{size_where}) in mixed precision with fused attention: step time is dominated by GEMMs",
            f"大规模稠密模型（约 {_fmt_b(b)}{size_where_zh}），已用混合精度与融合 Attention：单步耗时以 GEMM 为主",
        ))
    elif b is not None and active is not None and active >= 6 and st.used("C1") and fused:
        # a mixture of experts: each token runs through its active parameters only, so those size the GEMMs
        out.append(Signal(
            Bottleneck.COMPUTE, 2,
            f"large mixture-of-experts model (~{_fmt_b(b)} total, ~{_fmt_b(active)} active per token{size_where}) in mixed "
            "precision with fused attention: step time is dominated by GEMMs",
            f"大规模混合专家模型（总计约 {_fmt_b(b)}，每个 token 激活约 {_fmt_b(active)}{size_where_zh}），已用混合精度与融合 "
            "Attention：单步耗时以 GEMM 为主",
        ))
    if st.missing("D1") and seq and seq >= 2048:
        out.append(Signal(
            Bottleneck.MEMORY, 2 if seq < 8192 else 3,
            f"sequences of {seq} tokens without fused attention (D1 not seen): the S×S score matrix is written to and read from HBM in every layer",
            f"序列长度 {seq} 且未见融合 Attention（D1）：每层的 S×S 注意力矩阵都要写入并读出显存",
        ))
    if st.missing("D2") and st.missing("D5") and st.missing("D6") and p.model_type == "unknown":
        # no language model is known to be trained (a general trainer whose examples are CNNs, an MLP, a BERT classifier):
        # Liger's LLM kernels and rotary embeddings are not the point, the unfused element-wise ops are
        out.append(Signal(
            Bottleneck.MEMORY, 1,
            "no kernel fusion was seen (D2 torch.compile, D6 fused optimizers): norms, activations, the loss and the optimizer "
            "update would each make a round trip through HBM",
            "未见算子融合（D2 torch.compile、D6 融合优化器）：Norm、激活、loss 与优化器更新将各自往返显存",
            positive=False,
        ))
    elif st.missing("D2") and st.missing("D5") and st.missing("D6"):
        out.append(Signal(
            Bottleneck.MEMORY, 1,
            "no kernel fusion was seen (D2 torch.compile, D5 Liger, D6 fused optimizers): norms, activations, RoPE and the loss would each make a round trip through HBM",
            "未见算子融合（D2 torch.compile、D5 Liger、D6 融合优化器）：Norm、激活、RoPE 与 loss 将各自往返显存",
            positive=False,
        ))
    # a file that sets several vocabularies is a table of model presets (litgpt's config.py): not the trained model's
    per_file: dict[str, set[float]] = {}
    for s in facts.settings("vocab_size", "padded_vocab_size"):
        if (v := as_number(s.value)) is not None:
            per_file.setdefault(s.path, set()).add(v)
    fused_ce = any(truthy(s.value) for s in facts.effective("cross_entropy_loss_fusion", "use_liger_kernel", "liger_kernel"))
    # ``partial(get_model_tokenizer_mplug_owl2, vocab_size=151851, ...)`` in a ``register_model(...)`` entry (ms-swift) pre-binds
    # one registered loader's argument: a preset among many, not the trained model's
    vocab_sites = [s for s in facts.settings("vocab_size", "padded_vocab_size")
                   if (as_number(s.value) or 0) >= 100_000 and st.on_path(s.path) and len(per_file.get(s.path, ())) == 1
                   and not (s.source == "call" and s.key.startswith(("partial(", "functools.partial(")))] if not fused_ce else []
    # a large vocabulary in a minority of the model configs (open_clip: 24 of 144, the multilingual SigLIP presets) is one
    # preset among many, not the trained model's
    with_vocab = {path for path in per_file if st.on_path(path)}
    if vocab_sites and len({s.path for s in vocab_sites}) * 2 < len(with_vocab):
        vocab_sites = []
    if vocab_sites and st.missing("D5"):
        # the figure is the largest site's: cite that site first, or the line shown says another number
        vocab_sites.sort(key=lambda s: -(as_number(s.value) or 0))
        vocab = as_number(vocab_sites[0].value) or 0
        low = min(as_number(s.value) or 0 for s in vocab_sites)
        # model configs of several sizes (torchtitan's llama3, qwen3, deepseek_v3, gpt_oss): the run trains one of them,
        # so the claim is the range they span, not the largest as if it were the trained model's
        what = (f"a {int(vocab):,}-token vocabulary" if low == vocab else
                f"vocabularies of {int(low):,} to {int(vocab):,} tokens in {len({s.path for s in vocab_sites})} model configs (the run trains one)")
        what_zh = (f"词表 {int(vocab):,}" if low == vocab else
                   f"{len({s.path for s in vocab_sites})} 个模型配置的词表为 {int(low):,} 至 {int(vocab):,}（运行时训练其中之一）")
        out.append(Signal(
            Bottleneck.MEMORY, 1,
            f"{what} ({_loc(vocab_sites)}): the logits tensor and its softmax dominate activation traffic without a fused linear cross-entropy",
            f"{what_zh}（{_loc(vocab_sites)}）：未使用 fused linear cross-entropy 时，logits 及其 softmax 主导激活显存流量",
        ))
    rng = p.notes.get("params_range_billions")
    if b is None and rng and rng[1] < 0.5:  # entry points train different sizes, all of them small
        b = rng[1]
        size_where = f" at most, {p.notes.get('params_range')} across `{'`, `'.join(p.notes.get('params_range_sources') or [])}`"
        size_where_zh = f" 以内，{p.notes.get('params_range')}，见 `{'`、`'.join(p.notes.get('params_range_sources') or [])}`"
    # dimensions with no vocabulary beside them (a tabular model's ``combiner: {hidden_size: 64, num_layers: 3}``) are not a
    # language model's config: the size rests on an assumed 32,000-token vocabulary and names no model the run trains
    vocab_assumed = bool(p.notes.get("params_note")) and src not in (None, "model name") and not rng
    if b is not None and b < 0.5 and not (st.used("D2") or st.used("D4")) and not vocab_assumed:
        if b < TINY_BILLIONS:
            out.append(Signal(
                Bottleneck.LAUNCH, 3,
                f"a small model (~{_fmt_b(b)}{size_where}): each kernel is short, so launch overhead and Python dispatch take a large share of the step",
                f"小模型（约 {_fmt_b(b)}{size_where_zh}）：每个 kernel 都很短，kernel launch 与 Python 调度开销占比高",
            ))
        else:
            # a GPT-2-sized model (karpathy/build-nanogpt: 124M, 64 x 1024 tokens per micro-batch) runs matmuls of a
            # millisecond each at a large micro-batch: short kernels are a small-batch effect, which the code alone does not decide
            out.append(Signal(
                Bottleneck.LAUNCH, 2,
                f"a small model (~{_fmt_b(b)}{size_where}) without torch.compile or CUDA graphs: at small micro-batches each kernel is "
                "short and launch overhead and Python dispatch take a large share of the step; the tokens per micro-batch decide it",
                f"小模型（约 {_fmt_b(b)}{size_where_zh}），未使用 torch.compile 或 CUDA Graph：micro-batch 较小时每个 kernel 都很短，"
                "kernel launch 与 Python 调度开销占比高；是否如此取决于每个 micro-batch 的 token 数",
                positive=False,
            ))
    # the loop that runs the step: a sync there is paid every step; one in another loop (summing token counts after
    # training) or in a periodic branch (``if step % log_every == 0``, the validation pass) is not
    step_loops = {(c.path, c.func, c.loop) for c in facts.calls("backward") if st.on_path(c.path) and c.loop}
    syncs = [c for c in facts.calls("item", "torch.cuda.synchronize", "cpu", "tolist")
             if (c.path, c.func, c.loop) in step_loops and not _EVAL_FUNC.search(c.func or "") and not _PERIODIC.search(c.guard or "")
             and not _WARMUP_FUNC.search(c.func or "")
             and not _off_by_default(facts, c.guard)
             # (nor one under a comparison the settings make false: open_lm ``if args.moe_freq > 0:`` with ``--moe-freq`` 0)
             and not comparison_off(facts, c)]
    # ... and the hooks an HF Trainer runs on every micro-batch, overridden by the project's one Trainer subclass (Medusa's
    # ``compute_loss`` takes ``.item()`` of each head's loss and top-k accuracies to log them). A library of several trainer
    # classes (TRL's OnlineDPOTrainer beside SFT/DPO/...; lmms-engine's HF and dLLM trainers beside its FSDP2 loop) runs one
    # of them: another's hook is not the run's step
    subclasses = hf_trainer_subclasses(facts)
    syncs += [c for c in facts.calls("item", "torch.cuda.synchronize", "cpu", "tolist")
              if len(subclasses) == 1 and c.func in HF_STEP_HOOKS and st.on_path(c.path) and not _PERIODIC.search(c.guard or "")
              and not _off_by_default(facts, c.guard) and c not in syncs and class_at(facts, c.path, c.line) in subclasses]
    if syncs:
        # a few syncs per step next to the step of a model of a billion parameters or more (openchat's two ``.item()`` per
        # step of a 7B model over 80k packed tokens): the stall is a small share of a long step, so not a sign on its own
        big = p.params_billions is not None and p.params_billions >= 1 and len(syncs) < 3
        out.append(Signal(
            Bottleneck.LATENCY, 1 if len(syncs) < 3 else 2,
            f"{len(syncs)} CPU-GPU synchronisation point(s) inside loops of the training files ({_loc(syncs)}): the CPU stalls until the GPU drains its queue"
            + (f"; next to the step of a ~{_fmt_b(p.params_billions)} model that stall is a small share, so it matters only when "
               "steps are short" if big else ""),
            f"训练文件的循环中有 {len(syncs)} 处 CPU-GPU 同步点（{_loc(syncs)}）：CPU 需等待 GPU 队列清空"
            + (f"；相对约 {_fmt_b(p.params_billions)} 模型的一步，这一等待占比很小，只在单步很短时才重要" if big else ""),
            positive=not big,
        ))
    return out


def signals(facts: Facts, project: Project, results: Iterable[CheckResult], roles: Mapping[str, str] | None = None) -> list[Signal]:
    """Every code feature that points at a bottleneck type, strongest first (``roles``: path -> role, see checks.roles)."""
    st = _Status(results, roles, facts.config_modules() | frozenset(facts.recipe_modules()))
    p = project
    out: list[Signal] = []
    if p.does_inference and not p.does_training:
        out += _inference_signals(facts, st)
    elif p.does_training:
        out += _training_signals(facts, p, st)
        out += _data_signals(facts, p, st)
        out += _comm_signals(facts, p, st)
    out.sort(key=lambda s: -s.weight)
    return out


def classify(facts: Facts, project: Project, results: Iterable[CheckResult], roles: Mapping[str, str] | None = None) -> Verdict:
    results = list(results)
    sigs = signals(facts, project, results, roles)
    scores: dict[str, int] = {}
    for s in sigs:
        scores[s.kind.value] = scores.get(s.kind.value, 0) + s.weight
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    storage: tuple[str, str] | None = None
    if project.does_training and not any(s.kind == Bottleneck.DATA_IO and s.positive and ("storage" in s.en or "file system" in s.en) for s in sigs) \
            and not _data_locations(facts):
        # the paths I2 read (a launch's ``--data_path ./alpaca_data.json``) that name no medium: the note must not deny them
        # (the paths in the order of I2's evidence, so the site cited is the first path's: Osprey's ``stage2.json:4`` holds
        # ``./data/coco/...``, not the ``Osprey-724K`` files sorting first)
        i2 = next((r for r in results if r.id == "I2" and r.values.get("data_paths")), None)
        if i2 is not None:
            shown = [e for e in i2.evidence if isinstance(e.value, str) and e.value in i2.values["data_paths"]]
            paths = list(dict.fromkeys([e.value for e in shown] + list(i2.values["data_paths"])))
            first = shown[0] if shown else (i2.evidence[0] if i2.evidence else None)
            storage = storage_note(paths, f"{first.path}:{first.line}" if first is not None else "")
        else:
            storage = storage_note()
    hint, hint_zh = profile_hint(project)
    if not ranked:
        if not (project.does_training or project.does_inference):
            return Verdict(Bottleneck.UNKNOWN, ["no training or inference code was recognised"], ["未识别到训练或推理代码"], scores)
        return Verdict(
            Bottleneck.UNKNOWN,
            [f"needs profiling: no code feature points at a particular bottleneck; {hint}"] + ([storage[0]] if storage else []),
            [f"待 Profiling：代码特征不足以判断瓶颈类型；{hint_zh}"] + ([storage[1]] if storage else []),
            scores,
        )
    top_kind, top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0
    win = [s for s in sigs if s.kind.value == top_kind]
    if top >= MIN_SCORE and top - second >= MIN_MARGIN and any(s.positive for s in win):
        reasons = [s.en for s in win] + ([storage[0]] if storage and top_kind == Bottleneck.DATA_IO.value else [])
        reasons_zh = [s.zh for s in win] + ([storage[1]] if storage and top_kind == Bottleneck.DATA_IO.value else [])
        # a debugging switch some launch leaves on, under another verdict (LongLLaVA: CUDA_LAUNCH_BLOCKING=1 in Align.sh, one
        # of three launches, beside a multi-node communication verdict): a setting to remove whatever the verdict, so named
        debug = [s for s in sigs if s.kind.value != top_kind and s.named_anyway]
        reasons += [f"also {s.kind.value}: {s.en}" for s in debug]
        reasons_zh += [f"另见 {s.kind.value}：{s.zh}" for s in debug]
        return Verdict(Bottleneck(top_kind), reasons, reasons_zh, scores)
    if top < MIN_SCORE:
        lead_en = "the code signals are weak"
        lead_zh = "代码信号较弱"
    elif top - second >= MIN_MARGIN:
        lead_en = (f"the signals for {top_kind} are practices that were not seen or settings that only some recipes use, "
                   "none a setting that proves it for the project's runs")
        lead_zh = f"指向 {top_kind} 的信号仅来自未检测到的实践或部分配方的设置，缺少对项目训练运行的直接证据"
    else:
        rivals = [k for k, v in ranked if top - v < MIN_MARGIN]
        lead_en = "the code signals point at " + (", ".join(rivals[:-1]) + " and " + rivals[-1]) + " about equally"
        lead_zh = "代码信号同时指向 " + "、".join(rivals) + "，强度相近"
    reasons = [f"needs profiling: {lead_en}; {hint}"] + [f"{s.kind.value}: {s.en}" for s in sigs]
    reasons_zh = [f"待 Profiling：{lead_zh}；{hint_zh}"] + [f"{s.kind.value}：{s.zh}" for s in sigs]
    if storage:
        reasons.append(storage[0])
        reasons_zh.append(storage[1])
    return Verdict(Bottleneck.UNKNOWN, reasons, reasons_zh, scores)


def classify_bottleneck(facts: Facts, project: Project, results: Iterable[CheckResult], roles: Mapping[str, str] | None = None) -> Bottleneck:
    """Classify and write ``project.bottleneck`` and its reasons (English; Chinese in ``project.notes``)."""
    v = classify(facts, project, list(results), roles)
    project.bottleneck = v.bottleneck
    project.bottleneck_reasons = v.reasons
    project.notes["bottleneck_reasons_zh"] = v.reasons_zh
    project.notes["bottleneck_scores"] = v.scores
    if v.bottleneck == Bottleneck.UNKNOWN and (project.does_training or project.does_inference):
        jax = bool(project.notes.get("jax_training"))
        project.notes["profile_steps"] = list(JAX_PROFILE_STEPS if jax else PROFILE_STEPS)
        project.notes["profile_steps_zh"] = list(JAX_PROFILE_STEPS_ZH if jax else PROFILE_STEPS_ZH)
    return v.bottleneck


__all__ = ["MIN_MARGIN", "MIN_SCORE", "PROFILE_HINT", "PROFILE_STEPS", "Signal", "Verdict", "classify", "classify_bottleneck", "signals"]
