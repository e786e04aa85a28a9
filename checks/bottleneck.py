"""Step zero of the seed: a preliminary guess of the primary bottleneck, from code features alone.

Without a profile the audit can only weigh what the code says: model scale, sequence length,
where the data comes from, how the loader is set up, the parallel layout and the number of
nodes, the precision, and whether the project trains or only serves. Each feature that
points at a bottleneck type adds a weighted signal with a human reason. The type with the
strongest evidence wins only when it is clearly ahead (a score of at least
:data:`MIN_SCORE` and :data:`MIN_MARGIN` ahead of the runner-up); otherwise the honest
answer is ``needs-profiling``, with the competing signals as its reasons.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .facts import Facts, as_number
from .model import Bottleneck, CheckResult, Project, Status

MIN_SCORE = 3
MIN_MARGIN = 2

_REMOTE = ("s3://", "hdfs://", "gs://", "oss://", "cos://", "cfs://", "abfs://", "wasbs://")
_SLOW_FS = ("/cfs", "/hdfs", "/mdfs", "/nfs", "cfs-", "/mnt/nas", "/juicefs")


@dataclass(frozen=True, slots=True)
class Signal:
    """One code feature that points at a bottleneck type."""

    kind: Bottleneck
    weight: int
    en: str
    zh: str


@dataclass(frozen=True, slots=True)
class Verdict:
    bottleneck: Bottleneck
    reasons: list[str]
    reasons_zh: list[str]
    scores: dict[str, int]


class _Status:
    def __init__(self, results: Iterable[CheckResult]) -> None:
        self.results = {r.id: r for r in results}
        self._by_id = {cid: r.status for cid, r in self.results.items()}

    def evidence(self, check_id: str) -> list:
        r = self.results.get(check_id)
        return list(r.evidence) if r is not None else []

    def __call__(self, check_id: str) -> Status | None:
        """The check's status, or None when the check did not run (not registered, ignored)."""
        return self._by_id.get(check_id)

    def missing(self, check_id: str) -> bool:
        return self._by_id.get(check_id) == Status.UNUSED

    def used(self, check_id: str) -> bool:
        return self._by_id.get(check_id) in (Status.USED, Status.PARTIAL)


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


_NOT_DATA = ("output", "save", "checkpoint", "ckpt", "log", "cache", "model", "tokenizer", "deepspeed", "config")


def _data_locations(facts: Facts) -> list[_Place]:
    """String values that name where training data is read from (not outputs, checkpoints or models)."""
    out: list[_Place] = []
    for x in facts.path_literals():
        if not any(w in x.text.lower() for w in _NOT_DATA):
            out.append(_Place(x.path, x.line, x.value))
    for ff in facts.files.values():
        for e in ff.configs:
            key = e.key.lower()
            if isinstance(e.value, str) and ("data" in key or "train_file" in key or "path" in key) and not any(w in key for w in _NOT_DATA):
                out.append(_Place(e.path, e.line, e.value))
    return out


def _inference_signals(facts: Facts, st: _Status) -> list[Signal]:
    engine = facts.imports("vllm", "sglang", "tensorrt_llm", "lmdeploy") or facts.launches("vllm") or st.used("J5")
    if engine:
        return [Signal(
            Bottleneck.MEMORY, 3,
            "inference-only project served by an engine: decode reads all weights and the KV cache for every token, so HBM bandwidth bounds it",
            "纯推理项目且使用推理引擎：decode 每生成一个 token 都要读取全部权重和 KV Cache，受显存带宽约束",
        )]
    gen = facts.calls("generate")
    where = f" ({_loc(gen)})" if gen else ""
    return [Signal(
        Bottleneck.LATENCY, 3,
        f"inference-only project decoding in eager PyTorch{where}: one token per forward pass, hundreds of small kernels and CPU dispatch per token",
        f"纯推理项目在 PyTorch eager 模式下逐 token 解码{where}：每个 token 一次前向，大量小 kernel 与 CPU 调度开销",
    )]


def _data_signals(facts: Facts, p: Project, st: _Status) -> list[Signal]:
    out: list[Signal] = []
    workers = [(n, s) for s in facts.effective("num_workers", "dataloader_num_workers") if (n := as_number(s.value)) is not None]
    zero = [s for n, s in workers if n == 0]
    if st.missing("F1") or (st("F1") is None and zero and not [n for n, _ in workers if n > 0]):
        where = f" at {_loc(zero)}" if zero else ""
        where_zh = f"，{_loc(zero)}" if zero else ""
        out.append(Signal(
            Bottleneck.DATA_IO, 2,
            f"batches are loaded in the training process (num_workers = 0{where}): the GPU waits while the CPU reads and collates",
            f"数据在训练主进程中加载（num_workers = 0{where_zh}）：CPU 读取与拼 batch 时 GPU 空等",
        ))
        if p.multimodal:
            out.append(Signal(
                Bottleneck.DATA_IO, 1,
                "multimodal inputs: image decoding and resizing run on the CPU for every sample",
                "多模态输入：每个样本的图像解码与缩放都在 CPU 上完成",
            ))
    elif st("F1") == Status.PARTIAL:
        out.append(Signal(Bottleneck.DATA_IO, 1, "only 1-3 DataLoader workers feed each GPU", "每张 GPU 仅有 1~3 个 DataLoader worker 供数"))
    places = _data_locations(facts)
    remote = [x for x in places if x.value.lower().startswith(_REMOTE)]
    slow = [x for x in places if any(t in x.value.lower() for t in _SLOW_FS)]
    # a storage verdict counts only with a location: "no data path visible" is not slow storage
    remote = remote or (st.evidence("I1") if st.missing("I1") else [])
    slow = slow or (st.evidence("I2") if st.missing("I2") else [])
    if remote:
        where = f" ({_loc(remote)})"
        out.append(Signal(
            Bottleneck.DATA_IO, 2,
            f"training data is read from remote object storage{where}: every epoch pays network latency and bandwidth",
            f"训练数据从远程对象存储读取{where}：每个 epoch 都要承担网络延迟与带宽开销",
        ))
    elif slow:
        where = f" ({_loc(slow)})"
        out.append(Signal(
            Bottleneck.DATA_IO, 2,
            f"training data sits on a slow shared file system{where}",
            f"训练数据位于较慢的共享文件系统{where}",
        ))
    if st.missing("F6"):
        out.append(Signal(
            Bottleneck.DATA_IO, 1,
            "tokenization or feature extraction runs online, inside the training input pipeline",
            "分词或特征提取在训练输入管线中在线执行",
        ))
    return out


def _comm_signals(facts: Facts, p: Project, st: _Status) -> list[Signal]:
    out: list[Signal] = []
    if p.multi_node:
        n = p.num_nodes or 2
        out.append(Signal(
            Bottleneck.COMMUNICATION, 2,
            f"training spans {n} nodes: gradient and parameter collectives cross the inter-node network",
            f"训练跨 {n} 个节点：梯度与参数集合通信需经过节点间网络",
        ))
        if st.missing("E1"):
            out.append(Signal(
                Bottleneck.COMMUNICATION, 1,
                "no GPUDirect RDMA / InfiniBand settings for the multi-node job",
                "多机训练未见 GPUDirect RDMA / InfiniBand 相关配置",
            ))
        stage3 = [e for e in facts.config("zero_optimization.stage") if as_number(e.value) == 3]
        full = [s for s in facts.effective("sharding_strategy", "fsdp", "fsdp_sharding_strategy")
                if isinstance(s.value, str) and "full_shard" in s.value.lower().replace("-", "_")]
        if stage3 or full:
            out.append(Signal(
                Bottleneck.COMMUNICATION, 1,
                f"parameters are fully sharded across nodes (ZeRO-3 / FULL_SHARD, {_loc(stage3 or full)}): every layer is all-gathered over the network",
                f"参数跨节点全分片（ZeRO-3 / FULL_SHARD，{_loc(stage3 or full)}）：每层都要跨网络 AllGather",
            ))
        if st.missing("E2"):
            out.append(Signal(
                Bottleneck.COMMUNICATION, 1,
                "gradient communication is not overlapped with the backward pass",
                "梯度通信未与反向计算重叠",
            ))
    multi_gpu = p.multi_node or (p.num_gpus or 0) > 1
    offload = [e for e in facts.config("offload_optimizer.device", "offload_param.device") if isinstance(e.value, str) and e.value.lower() in ("cpu", "nvme")]
    if offload:
        out.append(Signal(
            Bottleneck.COMMUNICATION, 1,
            f"optimizer or parameter states are offloaded ({_loc(offload)}): every step moves them over PCIe",
            f"优化器或参数状态被卸载（{_loc(offload)}）：每步都要经 PCIe 搬运",
        ))
    if p.moe and multi_gpu:
        out.append(Signal(
            Bottleneck.COMMUNICATION, 1,
            "mixture-of-experts model on several GPUs: token routing needs all-to-all exchanges every layer",
            "多卡训练 MoE 模型：每层的 token 路由需要 AllToAll 通信",
        ))
    return out


def _training_signals(facts: Facts, p: Project, st: _Status) -> list[Signal]:
    out: list[Signal] = []
    b = p.params_billions
    seq = p.max_seq_len
    if st.missing("C1"):
        out.append(Signal(
            Bottleneck.COMPUTE, 3,
            "training runs in FP32: matmuls miss the Tensor Cores (A100: 19.5 FP32 vs 312 BF16 dense TFLOPS)",
            "以 FP32 训练：矩阵乘未命中 Tensor Core（A100：FP32 19.5 vs BF16 312 TFLOPS）",
        ))
    d7 = st.results.get("D7")
    if st.missing("D7") and d7 is not None and d7.values.get("aligned") is False:  # not when no dimension is visible at all
        out.append(Signal(
            Bottleneck.COMPUTE, 1,
            "some matmul dimensions are not multiples of 8, so Tensor Core tiles are padded or skipped",
            "部分矩阵维度不是 8 的倍数，Tensor Core 需要填充或无法命中",
        ))
    if b is not None and b >= 6 and st.used("C1") and st.used("D1"):
        out.append(Signal(
            Bottleneck.COMPUTE, 2,
            f"large dense model (~{_fmt_b(b)}) in mixed precision with fused attention: step time is dominated by GEMMs",
            f"大规模稠密模型（约 {_fmt_b(b)}），已用混合精度与融合 Attention：单步耗时以 GEMM 为主",
        ))
    if st.missing("D1") and seq and seq >= 2048:
        out.append(Signal(
            Bottleneck.MEMORY, 2 if seq < 8192 else 3,
            f"sequences of {seq} tokens without fused attention: the S×S score matrix is written to and read from HBM in every layer",
            f"序列长度 {seq} 且未使用融合 Attention：每层的 S×S 注意力矩阵都要写入并读出显存",
        ))
    if st.missing("D2") and st.missing("D5") and st.missing("D6"):
        out.append(Signal(
            Bottleneck.MEMORY, 1,
            "no kernel fusion (torch.compile, Liger, fused optimizers): norms, activations, RoPE and the loss each make a round trip through HBM",
            "未做算子融合（torch.compile、Liger、融合优化器）：Norm、激活、RoPE 与 loss 各自往返显存",
        ))
    vocab = max((n for s in facts.settings("vocab_size", "padded_vocab_size") if (n := as_number(s.value))), default=0)
    if vocab >= 100_000 and st.missing("D5"):
        out.append(Signal(
            Bottleneck.MEMORY, 1,
            f"a {int(vocab):,}-token vocabulary: the logits tensor and its softmax dominate activation traffic without a fused linear cross-entropy",
            f"词表 {int(vocab):,}：未使用 fused linear cross-entropy 时，logits 及其 softmax 主导激活显存流量",
        ))
    if b is not None and b < 0.5 and not (st.used("D2") or st.used("D4")):
        out.append(Signal(
            Bottleneck.LAUNCH, 3 if b < 0.2 else 2,
            f"a small model (~{_fmt_b(b)}): each kernel is short, so launch overhead and Python dispatch take a large share of the step",
            f"小模型（约 {_fmt_b(b)}）：每个 kernel 都很短，kernel launch 与 Python 调度开销占比高",
        ))
    loop_files = {c.path for c in facts.calls("backward")}
    syncs = [c for c in facts.calls("item", "torch.cuda.synchronize", "cpu", "tolist") if c.path in loop_files]
    if syncs:
        out.append(Signal(
            Bottleneck.LATENCY, 1 if len(syncs) < 3 else 2,
            f"{len(syncs)} CPU-GPU synchronisation point(s) in the training loop ({_loc(syncs)}): the CPU stalls until the GPU drains its queue",
            f"训练循环中有 {len(syncs)} 处 CPU-GPU 同步点（{_loc(syncs)}）：CPU 需等待 GPU 队列清空",
        ))
    return out


def signals(facts: Facts, project: Project, results: Iterable[CheckResult]) -> list[Signal]:
    """Every code feature that points at a bottleneck type, strongest first."""
    st = _Status(results)
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


def classify(facts: Facts, project: Project, results: Iterable[CheckResult]) -> Verdict:
    sigs = signals(facts, project, results)
    scores: dict[str, int] = {}
    for s in sigs:
        scores[s.kind.value] = scores.get(s.kind.value, 0) + s.weight
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if not ranked:
        if not (project.does_training or project.does_inference):
            return Verdict(Bottleneck.UNKNOWN, ["no training or inference code was recognised"], ["未识别到训练或推理代码"], scores)
        return Verdict(
            Bottleneck.UNKNOWN,
            ["no code feature points at a particular bottleneck; profile a few steps (nsys, torch.profiler) to classify it"],
            ["代码特征不足以判断瓶颈类型；请先 Profiling 若干步（nsys、torch.profiler）"],
            scores,
        )
    top_kind, top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0
    if top >= MIN_SCORE and top - second >= MIN_MARGIN:
        win = [s for s in sigs if s.kind.value == top_kind]
        return Verdict(Bottleneck(top_kind), [s.en for s in win], [s.zh for s in win], scores)
    if top < MIN_SCORE:
        lead_en = "the code signals are weak"
        lead_zh = "代码信号较弱"
    else:
        rivals = [k for k, v in ranked if top - v < MIN_MARGIN]
        lead_en = "the code signals point at " + (", ".join(rivals[:-1]) + " and " + rivals[-1]) + " about equally"
        lead_zh = "代码信号同时指向 " + "、".join(rivals) + "，强度相近"
    reasons = [f"{lead_en}; profile a few steps (nsys, torch.profiler) to decide"] + [f"{s.kind.value}: {s.en}" for s in sigs]
    reasons_zh = [f"{lead_zh}；请先 Profiling 若干步（nsys、torch.profiler）再判断"] + [f"{s.kind.value}：{s.zh}" for s in sigs]
    return Verdict(Bottleneck.UNKNOWN, reasons, reasons_zh, scores)


def classify_bottleneck(facts: Facts, project: Project, results: Iterable[CheckResult]) -> Bottleneck:
    """Classify and write ``project.bottleneck`` and its reasons (English; Chinese in ``project.notes``)."""
    v = classify(facts, project, list(results))
    project.bottleneck = v.bottleneck
    project.bottleneck_reasons = v.reasons
    project.notes["bottleneck_reasons_zh"] = v.reasons_zh
    project.notes["bottleneck_scores"] = v.scores
    return v.bottleneck


__all__ = ["MIN_MARGIN", "MIN_SCORE", "Signal", "Verdict", "classify", "classify_bottleneck", "signals"]
