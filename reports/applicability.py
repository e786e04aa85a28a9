"""Whether a piece of advice applies to this project, beyond the check's own ``recommendation_priority``.

A check decides whether its practice is missing; these rules decide whether recommending it
makes sense here: no sharding advice to a model that fits one GPU, no Liger advice for a model
family Liger has no kernels for, no FP8 advice for a GPU without FP8 Tensor Cores, nothing
that an alternative already in use covers. Each rule gives its reason (English, Chinese), which
the report lists under "not recommended for this project".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from checks.lazyre import lazy_compile
from checks.model import CheckResult, Project, Status
from checks.workload import inference_only

from .resources import data

#: below this size (billions of parameters) a model and its Adam states fit one 40-80 GB GPU
SHARDING_MIN_B = 1.5
#: frozen BF16 weights of a LoRA base up to this size (GB) leave room on one 80 GB GPU for activations and adapters
ADAPTER_FITS_GB = 40.0
#: below this size no layer and no model needs tensor or pipeline parallelism to fit
MODEL_PARALLEL_MIN_B = 13.0
#: below this sequence length attention memory does not need sequence parallelism
SEQUENCE_PARALLEL_MIN_LEN = 16384
#: below this size full fine-tuning is cheap enough that LoRA saves little; recomputation rarely pays
SMALL_MODEL_B = 1.0
LONG_SEQ = 8192

_MULTI_GPU_ONLY = ("A1", "A2", "A3", "A4", "A5", "A6", "A7", "E2", "E3", "E4")
_FRAMEWORKS = ("B1", "B2", "B3", "B4", "B5", "B6")


@dataclass(frozen=True, slots=True)
class GPU:
    key: str
    name: str
    arch: str
    bf16: bool
    tf32: bool
    fp8: bool
    flash_attn2: bool


def gpu(hardware: str | None) -> GPU | None:
    """Capabilities of the configured GPU (``"A100-SXM4-80GB"``, ``"h100"``), or None when unknown."""
    if not hardware:
        return None
    norm = re.sub(r"[\s_\-]+", "", hardware.lower()).replace("nvidia", "").replace("tesla", "").replace("geforce", "")
    table: dict[str, dict] = data("hardware")["gpus"]
    best = max((k for k in table if norm.startswith(k)), key=len, default=None)
    if best is None:
        return None
    g = table[best]
    return GPU(best, g["name"], g["arch"], g["bf16"], g["tf32"], g["fp8"], g["flash_attn2"])


def _b(b: float) -> str:
    return f"{b:.0f}B" if b >= 1 else f"{b * 1000:.0f}M"


_DEMO_SCRIPT = lazy_compile(r"(^|/)(sample|samples|sampling|demo|generate_samples?)\w*\.py$", re.I)
_ENGINES = frozenset({"vllm", "sglang", "tensorrt-llm"})


def _sampling_demo(p: Project, results: Mapping[str, CheckResult]) -> str | None:
    """``path:line`` of the generation when every J finding sits in a sampling/demo script and no serving engine or
    RL rollout is part of the project; None otherwise."""
    if _ENGINES & set(p.frameworks) or p.alignment:
        return None
    ev = [e for cid, r in results.items() if cid.startswith("J") for e in (*r.evidence, *r.findings)]
    if not ev or not all(_DEMO_SCRIPT.search(e.path) for e in ev):
        return None
    return f"{ev[0].path}:{ev[0].line}"


def withhold_reason(
    result: CheckResult, project: Project, results: Mapping[str, CheckResult], hw: GPU | None
) -> tuple[str, str] | None:
    """(English, Chinese) reason not to recommend this check's practice here, or None."""
    cid = result.id
    p = project

    def used(*ids: str) -> list[CheckResult]:
        return [results[i] for i in ids if i in results and results[i].status in (Status.USED, Status.PARTIAL) and i != cid]

    # generation only in a sampling demo of a training project (nanoGPT's sample.py): not a serving or rollout workload
    if cid.startswith("J") and p.does_training and (demo := _sampling_demo(p, results)):
        return (f"generation here is a sampling demo of the trained model ({demo}), not a serving or rollout workload: "
                "inference-throughput advice does not speed up this project's training",
                f"此处的生成只是训练后模型的采样演示（{demo}），不是推理服务或 RL rollout：推理吞吐类优化不会加快本项目的训练")

    # an alternative already in use covers the need
    if cid in ("A2", "A3", "B5") and (alt := used("A2", "A3")):
        return (f"parameters are already sharded ({alt[0].id} {alt[0].title})", f"已在使用参数分片（{alt[0].id} {alt[0].title}）")
    if cid in _FRAMEWORKS and (alt := used(*_FRAMEWORKS)):
        names = ", ".join(r.title for r in alt)
        return (f"a training framework is already in place ({names})", f"已在使用训练框架（{names}）")
    if cid == "D3" and (alt := used("D5")):
        return ("Liger Kernel already brings fused Triton kernels", "Liger Kernel 已提供融合的 Triton 算子")

    # one GPU: no collectives to shard, overlap or tune
    single_gpu = p.num_gpus == 1 and not p.multi_node
    if single_gpu and cid in _MULTI_GPU_ONLY:
        return ("the project trains on a single GPU: there is no inter-GPU communication to parallelise or tune",
                "项目为单卡训练：不存在可并行化或调优的多卡通信")
    # one verdict on nodes for the whole report: E1's (a launch, a config, RDMA settings or documentation that spans nodes)
    e1 = results.get("E1")
    # (an inference-only project's E1 is n/a as training practice: its generation's nodes are the overview's)
    single_node = ((e1.status is Status.NA and (e1.detail or "").startswith("single-node")) if e1 is not None and not inference_only(p)
                   else not p.multi_node)
    if cid == "E3" and single_node:
        return ("single-node training: intra-node bandwidth rarely limits gradient all-reduce enough for compression to pay off",
                "单机训练：机内带宽很少成为梯度 AllReduce 的瓶颈，梯度压缩得不偿失")
    if cid == "E4" and single_node:
        return ("no multi-node launch was seen: within one node NCCL picks NVLink or PCIe P2P by itself; binding it to the network "
                "fabric (NCCL_IB_HCA, NCCL_SOCKET_IFNAME) and tuning its algorithms pay off across nodes",
                "未见多机启动：单机内 NCCL 会自行选择 NVLink 或 PCIe P2P；绑定网络（NCCL_IB_HCA、NCCL_SOCKET_IFNAME）与调优算法在多机时才有收益")

    # token ids already cached as a saved Arrow dataset (F6: ``save_to_disk``/``load_from_disk`` or datasets' own map
    # cache, Chinese-LLaMA-Alpaca-2): memory-mapped and read without tokenization; a flat token file adds little
    f6 = results.get("F6")
    if cid == "F10" and f6 is not None and f6.status is Status.USED and f6.values.get("preprocessing") == "offline":
        # (not always Arrow: anole's ``data_tokenization.py`` writes its ids to JSON lines that train.py reads)
        return ("the token ids are already saved ahead of training (F6) and read back without tokenizing: a flat token file "
                "would save little more",
                "token id 已在训练前保存（F6），训练时直接读回、无需再分词：再转为扁平 token 文件收益很小")
    if cid == "F10" and f6 is not None and f6.status is Status.USED and f6.values.get("preprocessing") == "mapped":
        return ("the data is tokenized once by datasets.map before the first step (F6), and datasets reads the mapped token ids "
                "back from its memory-mapped Arrow cache: a flat token file would save little more",
                "数据在第一步之前由 datasets.map 一次性分词（F6），datasets 从内存映射的 Arrow 缓存读回 token id："
                "再转为扁平 token 文件收益很小")
    # a hand-written loader of pre-tokenized token ids into pinned memory (nanoGPT's get_batch, modded-nanogpt's
    # shard reader): no DataLoader at all, so workers, prefetch_factor, a memory map or a side-stream prefetcher add
    # nothing to a byte-range copy
    d6 = results.get("D6")
    if cid == "D6" and d6 is not None and isinstance(d6.values.get("own_optimizer"), str):
        name = d6.values["own_optimizer"]
        return (f"the runs train with the project's own optimizer ({name}): a fused torch or DeepSpeed AdamW would change the "
                "algorithm, not speed it up; fuse inside its update step instead (torch.compile of the step, or a Triton kernel)",
                f"训练使用项目自己的优化器（{name}）：换成融合版 torch 或 DeepSpeed AdamW 会改变算法本身，而不是加速它；"
                "应在其更新步骤内部做融合（对 step 使用 torch.compile，或编写 Triton kernel）")
    f3 = results.get("F3")
    if cid in ("F1", "F2") and "F1" in results and not results["F1"].evidence and used("F10") \
            and f3 is not None and f3.values.get("loader") == "token-reader":
        # the same reader without pinning (llm.c ``DistributedDataLoader``): pinning is F3's advice; workers still add nothing
        return ("the training path slices batches from pre-tokenized token ids it reads by hand (F10), without a DataLoader: "
                "there is no per-sample decoding or collation for loader workers or prefetch to take off the step",
                "训练路径从手写读取的预分词 token id 中切出 batch（F10），不经 DataLoader：没有逐样本解码或拼 batch 可交给 worker 或预取")
    if cid in ("F1", "F2", "F8", "F11") and "F1" in results and not results["F1"].evidence \
            and used("F10") and used("F3"):
        return ("the training path reads pre-tokenized token ids into pinned memory by hand (F10, F3), without a DataLoader: "
                "there is no per-sample decoding or collation for loader workers, prefetch or a memory map to take off the step",
                "训练路径手写读取预分词的 token id 到锁页内存（F10、F3），不经 DataLoader：没有逐样本解码或拼 batch 可交给 worker、预取或内存映射")

    # model scale: the trained size, or the largest of the sizes the entry points train when they differ
    rng = p.notes.get("params_range_billions")
    b = p.params_billions if p.params_billions is not None else (rng[1] if rng else None)
    g4 = results.get("G4")
    bits = g4.values.get("base_bits") if g4 is not None else None
    # bytes per frozen weight: BF16, or the k-bit base G4 found (Platypus ``load_in_8bit=True``: int8; QLoRA: 4-bit NF4)
    per, store, store_zh = {8: (1.0, "in int8", "以 int8"), 4: (0.5, "in 4-bit", "以 4-bit")}.get(bits, (2.0, "in BF16", "以 BF16"))
    if b is not None and p.adapter_training and cid in ("A2", "A3", "B1", "B5", "C4") and b * per <= ADAPTER_FITS_GB and not p.multi_node:
        # LoRA: the base is frozen (no gradients or Adam states); only the adapters are trained
        gb = max(b * per, 1)
        return (f"LoRA trains adapters: the frozen ~{_b(b)} base takes ~{gb:.0f} GB {store} and only the adapters carry gradients and Adam states; it fits one GPU without sharding",
                f"LoRA 只训练适配器：冻结的约 {_b(b)} 基座{store_zh}存储约 {gb:.0f} GB，只有适配器需要梯度与 Adam 状态；单卡即可放下，无需分片")
    if b is not None:
        if cid in ("A2", "A3", "B1", "B5", "C4") and b < SHARDING_MIN_B and not p.multi_node:
            gb = b * 16
            return (f"a ~{_b(b)}-parameter model fits one GPU with its Adam states (~{gb:.0f} GB at 16 bytes/parameter); sharding or offload only adds communication",
                    f"约 {_b(b)} 参数的模型连同 Adam 状态（约 {gb:.0f} GB，按每参数 16 字节）可放入单卡；分片或卸载只会增加通信")
        if cid in ("A4", "A5") and b < MODEL_PARALLEL_MIN_B:
            return (f"tensor/pipeline parallelism pays off when a layer or the model does not fit one GPU; ~{_b(b)} fits with FSDP/ZeRO",
                    f"张量/流水并行适用于单层或整个模型放不进单卡的情况；约 {_b(b)} 的模型用 FSDP/ZeRO 即可")
        if cid == "G4" and b < SMALL_MODEL_B:
            return (f"full fine-tuning of a ~{_b(b)} model is cheap; LoRA would save little", f"约 {_b(b)} 的模型全量微调成本不高，LoRA 收益有限")
        if cid == "C3" and b < SMALL_MODEL_B and (p.max_seq_len or 0) < LONG_SEQ:
            return (f"recomputation costs about a third more compute; a ~{_b(b)} model at this sequence length rarely needs the memory",
                    f"激活重计算约增加三分之一计算量；约 {_b(b)} 的模型在此序列长度下很少需要省这部分显存")
    if cid == "A6" and p.max_seq_len is not None and p.max_seq_len < SEQUENCE_PARALLEL_MIN_LEN:
        return (f"sequence parallelism is for very long contexts; {p.max_seq_len} tokens fit one GPU's attention memory with Flash Attention",
                f"序列并行适用于超长上下文；{p.max_seq_len} 个 token 配合 Flash Attention 可放入单卡")

    # Liger Kernel patches Hugging Face model classes (seed: "for HF models")
    if cid == "D5" and not {"transformers", "trl", "peft", "axolotl", "llamafactory", "unsloth"} & set(p.frameworks):
        return ("Liger Kernel patches Hugging Face Transformers model classes; this project does not train an HF model",
                "Liger Kernel 通过替换 Hugging Face Transformers 模型类生效；本项目训练的不是 HF 模型")
    # Megatron trains its own GPTModel; transformers there loads tokenizers or converts checkpoints
    if cid == "D5" and "megatron" in p.frameworks and not {"trl", "peft", "axolotl", "llamafactory", "unsloth"} & set(p.frameworks):
        return ("Megatron-LM has its own fused kernels; Liger targets Hugging Face models", "Megatron-LM 自带融合算子；Liger 面向 Hugging Face 模型")

    # model family: Liger has kernels for some architectures only
    if cid == "D5" and p.model_families:
        table = data("liger")
        fams = set(p.model_families)
        if fams <= set(table["unsupported"]):
            names = ", ".join(sorted(fams))
            return (f"Liger Kernel has no kernels for this model family ({names})", f"Liger Kernel 不支持该模型系列（{names}）")

    # hardware the repository configured
    if hw is not None and cid == "C2" and not hw.fp8:
        return (f"{hw.name} ({hw.arch}) has no FP8 Tensor Cores; FP8 training needs Ada, Hopper (H100/H200) or Blackwell (B200)",
                f"{hw.name}（{hw.arch}）没有 FP8 Tensor Core；FP8 训练需要 Ada、Hopper（H100/H200）或 Blackwell（B200）")
    return None


#: advice text that changes with the hardware: (check, missing capability) -> (English, Chinese)
HARDWARE_TEXT: dict[tuple[str, str], tuple[str, str]] = {
    ("C1", "bf16"): (
        "Enable FP16 mixed precision with dynamic loss scaling (a GradScaler, or DeepSpeed `fp16` with `loss_scale: 0`): {gpu} has no BF16.",
        "启用 FP16 混合精度并使用动态 loss scaling（GradScaler，或 DeepSpeed `fp16` 配合 `loss_scale: 0`）：{gpu} 不支持 BF16。",
    ),
    ("D1", "flash_attn2"): (
        "Use PyTorch SDPA attention (`attn_implementation: sdpa`, memory-efficient kernel): FlashAttention-2 needs Ampere or newer and {gpu} is older.",
        "使用 PyTorch SDPA（`attn_implementation: sdpa`，memory-efficient kernel）：FlashAttention-2 需要 Ampere 及更新架构，{gpu} 不支持。",
    ),
}


def hardware_text(check_id: str, hw: GPU | None) -> tuple[str, str] | None:
    if hw is None:
        return None
    for (cid, cap), (en, zh) in HARDWARE_TEXT.items():
        if cid == check_id and not getattr(hw, cap):
            return en.format(gpu=hw.name), zh.format(gpu=hw.name)
    return None


#: advice for an input pipeline that is not a PyTorch DataLoader: (check, ``values["loader"]``) -> (English, Chinese,
#: Python snippet). Grain (torchtitan, MaxText) has no ``num_workers``; its worker processes come from ``mp_prefetch``
LOADER_TEXT: dict[tuple[str, str], tuple[str, str, str]] = {
    # gradients already reduced in bf16/fp16 by DeepSpeed (``communication_data_type`` unset): setting it to bf16 is no change
    ("E3", "deepspeed-half"): (
        "For bandwidth-bound multi-node training: gradients already travel in the training precision (DeepSpeed reduces in "
        "bf16/fp16 when `communication_data_type` is unset), so setting it changes nothing; less traffic takes quantized "
        "communication: ZeRO++ (`zero_quantized_gradients`, `zero_hpz_partition_size` = GPUs per node), which needs ZeRO "
        "stage 3; validate convergence against a baseline run.",
        "跨节点带宽受限时：梯度已按训练精度通信（未设置 `communication_data_type` 时 DeepSpeed 以 bf16/fp16 归约），再设置它不会带来变化；"
        "要进一步减少通信量需量化通信：ZeRO++（`zero_quantized_gradients`、`zero_hpz_partition_size` 设为单机 GPU 数），需 ZeRO-3；"
        "并与基线对比验证收敛。",
        '{\n  "zero_optimization": {\n    "stage": 3,\n    "zero_quantized_gradients": true,\n    "zero_hpz_partition_size": 8\n  }\n}\n',
    ),
    # a loop that steps every N micro-batches with N under the project's own name (MiniGPT-4/Video-LLaMA's LAVIS runner:
    # ``if (i + 1) % accum_grad_iters == 0`` with ``run_cfg.get("accum_grad_iters", 1)``): the advice names that setting
    ("C5", "own-key"): (
        "When the per-GPU micro-batch is memory-limited, keep it at the largest size that fits and raise `{flag}` (the count "
        "the loop's optimizer-step guard reads; every visible setting leaves it at 1) so that micro-batch x GPUs x `{flag}` "
        "reaches the target global batch (rescale the learning rate if the global batch changes).",
        "当单卡 micro-batch 受显存限制时，保持能放下的最大 micro-batch，并调大 `{flag}`（训练循环中优化器步进条件读取的累积步数，"
        "目前所见配置均为 1），使 micro-batch × GPU 数 × `{flag}` 达到目标全局 batch（全局 batch 变化时相应调整学习率）。",
        "{flag}: 4  # in the run section of the training recipe\n",
    ),
    # a project that ships its own sequence-length curriculum (OLMo-core ``VSLCurriculumConfig``): turn that on
    ("G3", "own-curriculum"): (
        "For pre-training, use the project's own sequence-length curriculum, `{flag}`, with a growing schedule (short "
        "sequences first, then the full length) in a pre-training recipe's dataset config, rather than adding another.",
        "预训练时使用项目自带的序列长度渐进 `{flag}`，在预训练 recipe 的数据集配置中选择递增的调度（先短序列，再到完整长度），"
        "而不是另外引入一套。",
        "# in a pre-training recipe's dataset config: {flag} with its growing schedule (short sequences first)\n",
    ),
    # a dataset whose ``__getitem__`` copies each sample to the GPU (CogVLM2's ``peft_lora.py``): workers first need CPU samples
    ("F1", "gpu-samples"): (
        "First return CPU tensors from the dataset's `__getitem__` and copy each batch to the GPU in the training loop "
        "(`batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}`): worker processes cannot use CUDA once "
        "forked. Then give the DataLoader `num_workers=4` (4-8 per GPU) with `persistent_workers=True`.",
        "先让数据集的 `__getitem__` 返回 CPU 张量，在训练循环中再把每个 batch 拷到 GPU"
        "（`batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}`）：fork 出的 worker 进程无法使用 CUDA。"
        "然后为 DataLoader 设置 `num_workers=4`（每卡 4-8）并开启 `persistent_workers=True`。",
        "# in __getitem__: return CPU tensors (no .to(device) there); in the training loop:\n"
        "loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4, persistent_workers=True, pin_memory=True)\n"
        "for batch in loader:\n    batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}\n",
    ),
    ("F3", "gpu-samples"): (
        "First return CPU tensors from the dataset's `__getitem__` (CUDA tensors cannot be pinned), then pass "
        "`pin_memory=True` to the DataLoader and copy each batch with `.to(device, non_blocking=True)` in the training loop.",
        "先让数据集的 `__getitem__` 返回 CPU 张量（CUDA 张量无法锁页），再为 DataLoader 设置 `pin_memory=True`，"
        "并在训练循环中用 `.to(device, non_blocking=True)` 拷贝每个 batch。",
        "# in __getitem__: return CPU tensors (no .to(device) there); in the training loop:\n"
        "loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4, pin_memory=True)\n"
        "for batch in loader:\n    batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}\n",
    ),
    ("F1", "grain"): (
        "Give the Grain pipeline worker processes: end it with `dataset.mp_prefetch(grain.MultiprocessingOptions(num_workers=4))` "
        "(per-sample tokenization and packing then run outside the training process); keep its state checkpointable.",
        "为 Grain 输入管线增加 worker 进程：在管线末尾调用 `dataset.mp_prefetch(grain.MultiprocessingOptions(num_workers=4))`"
        "（逐样本分词与打包移出训练进程），并保持其状态可被 checkpoint。",
        "import grain\n\ndataset = dataset.mp_prefetch(grain.MultiprocessingOptions(num_workers=4, per_worker_buffer_size=2))\n",
    ),
    # text-only training (alpaca-lora, Qwen's finetune.py: one JSON file or a Hub dataset): no image files to pack
    ("F4", "text"): (
        "Keep the training text in a few large columnar or sharded files read sequentially: `datasets` Arrow "
        "(`save_to_disk`/`load_from_disk`) or Parquet, MosaicML MDS or WebDataset shards, rather than many small files or one "
        "JSON parsed whole by every rank at start-up.",
        "将训练文本保存为少量大的列式或分片文件并顺序读取：`datasets` Arrow（`save_to_disk`/`load_from_disk`）或 Parquet、"
        "MosaicML MDS、WebDataset 分片，而不是大量小文件或每个 rank 启动时整体解析的单个 JSON。",
        "from datasets import load_dataset\n\nds = load_dataset(\"json\", data_files=\"data/train.json\", split=\"train\")\n"
        "ds.save_to_disk(\"data/train_arrow\")  # once; training then calls datasets.load_from_disk(\"data/train_arrow\")\n",
    ),
    # the DeepSpeed config's own scheduler replaces the HF Trainer's (dolly: ``"scheduler": {"type": "WarmupLR"}``, warmup then
    # constant): ``lr_scheduler_type`` changes nothing while that section is there
    ("G1", "ds-scheduler"): (
        "Give the DeepSpeed config a decaying scheduler: `\"type\": \"WarmupDecayLR\"` (linear decay; HF fills the `auto` "
        "values, `total_num_steps` included) or `WarmupCosineLR`; or delete its `scheduler` section and set the Trainer's "
        "`lr_scheduler_type: cosine` with `warmup_ratio: 0.03`. While the section is there, `lr_scheduler_type` is ignored, "
        "and its `auto` warmup steps are the Trainer's `warmup_steps`/`warmup_ratio` (neither set: 0).",
        "为 DeepSpeed 配置换用带衰减的调度器：`\"type\": \"WarmupDecayLR\"`（线性衰减；HF 会填充 `auto` 值，包括 "
        "`total_num_steps`）或 `WarmupCosineLR`；或删除其 `scheduler` 段，并为 Trainer 设置 `lr_scheduler_type: cosine` 与 "
        "`warmup_ratio: 0.03`。该段存在时 `lr_scheduler_type` 不起作用，其 `auto` 预热步数取自 Trainer 的 "
        "`warmup_steps`/`warmup_ratio`（都未设置时为 0）。",
        '{\n  "scheduler": {\n    "type": "WarmupDecayLR",\n    "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto", '
        '"warmup_num_steps": "auto", "total_num_steps": "auto"}\n  }\n}\n',
    ),
    # a hand-written reader of token shards that copies each batch from pageable memory (llm.c ``next_batch`` then
    # ``x.to(device)``): no DataLoader to pass pin_memory to; pin the batch (nanoGPT's get_batch) and copy asynchronously
    ("F3", "token-reader"): (
        "Pin the batch the hand-written reader slices and copy it asynchronously: `x, y = x.pin_memory().to(device, "
        "non_blocking=True), y.pin_memory().to(device, non_blocking=True)` (as nanoGPT's `get_batch` does), or read each shard "
        "once into a pinned buffer (`torch.empty(n, dtype=torch.uint16, pin_memory=True)`) and slice from it.",
        "将手写读取器切出的 batch 放入锁页内存并异步拷贝：`x, y = x.pin_memory().to(device, non_blocking=True), "
        "y.pin_memory().to(device, non_blocking=True)`（与 nanoGPT 的 `get_batch` 相同），或把每个分片一次读入锁页缓冲区"
        "（`torch.empty(n, dtype=torch.uint16, pin_memory=True)`）再从中切片。",
        "x, y = train_loader.next_batch()\n"
        "x = x.pin_memory().to(device, non_blocking=True)\ny = y.pin_memory().to(device, non_blocking=True)\n",
    ),
    # a script around transformers' Trainer (alpaca-lora, qlora, Qwen's finetune.py): TRL/LLaMA-Factory/axolotl flags do
    # not exist there; transformers' own padding-free collator does (4.44+, with FlashAttention-2)
    ("F7", "hf-trainer"): (
        "Pack without padding in transformers' Trainer: pass `data_collator=DataCollatorWithFlattening()` (transformers >= "
        "4.44) with `attn_implementation=\"flash_attention_2\"`, so each batch is one sequence with per-sample position ids "
        "and no attention across samples; at least set `group_by_length=True` so batches hold samples of similar length.",
        "在 transformers Trainer 中无 padding 打包：传入 `data_collator=DataCollatorWithFlattening()`（transformers >= 4.44），"
        "并使用 `attn_implementation=\"flash_attention_2\"`，每个 batch 拼成一条序列、按样本重置 position ids、样本之间不做注意力；"
        "至少设置 `group_by_length=True`，让同一 batch 内样本长度相近。",
        "from transformers import DataCollatorWithFlattening\n\n"
        "trainer = Trainer(model=model, args=args, train_dataset=train_data, data_collator=DataCollatorWithFlattening())\n",
    ),
    # every sample padded to the full length by the tokenizer (baize, ToolBench, FinGPT's DeepSpeed-Chat copy:
    # ``tokenizer(..., padding="max_length")``): batches cost the full length, and grouping by length changes nothing
    ("F7", "max-length-padding"): (
        "Every sample is padded to the full `max_length` before batching, so each batch costs the whole sequence length "
        "whatever its samples hold: drop `padding=\"max_length\"` and pad per batch instead (`DataCollatorForSeq2Seq(tokenizer, "
        "padding=True, pad_to_multiple_of=8)`), so a batch costs its longest sample; then pack (transformers >= 4.44: "
        "`DataCollatorWithFlattening()` with `attn_implementation=\"flash_attention_2\"`). Grouping by length does nothing while "
        "every sample has the same padded length.",
        "每个样本在组 batch 前都被补齐到完整的 `max_length`，因此无论样本长短，每个 batch 都按整条序列长度计算：去掉 "
        "`padding=\"max_length\"`，改为按 batch 补齐（`DataCollatorForSeq2Seq(tokenizer, padding=True, pad_to_multiple_of=8)`），"
        "使 batch 的开销取决于其中最长的样本；再做打包（transformers >= 4.44：`DataCollatorWithFlattening()` 配合 "
        "`attn_implementation=\"flash_attention_2\"`）。在所有样本补齐长度相同时，按长度分组不起作用。",
        "from transformers import DataCollatorForSeq2Seq\n\n"
        "# tokenize without padding=\"max_length\"; pad each batch to its longest sample instead\n"
        "collator = DataCollatorForSeq2Seq(tokenizer, padding=True, pad_to_multiple_of=8)\n"
        "trainer = Trainer(model=model, args=args, train_dataset=train_data, data_collator=collator)\n",
    ),
    # the training script already passes its own FlashAttention-2 switch to from_pretrained (Chinese-LLaMA-Alpaca-2:
    # ``use_flash_attention_2=training_args.use_flash_attention_2``), which the launches leave off
    ("D1", "project-flag"): (
        "The training script already passes the project's own `{flag}` option to `from_pretrained`: add `--{flag} True` to "
        "the launches (FlashAttention-2 needs Ampere or newer, fp16/bf16 weights and the `flash-attn` package), and compare a "
        "few steps' loss and throughput with and without it.",
        "训练脚本已把项目自己的 `{flag}` 选项传给 `from_pretrained`：在启动命令中加上 `--{flag} True`（FlashAttention-2 需要 "
        "Ampere 或更新的 GPU、fp16/bf16 权重以及 `flash-attn` 包），并对比开启前后几步的损失与吞吐。",
        "--{flag} True\n",
    ),
    # the project's own choice of attention implementation, left at "auto" (h2o-llmstudio ``attention_implementation``)
    ("D1", "project-option"): (
        "The project has its own `{flag}` option, left at \"auto\" (transformers' default attention): set it to "
        "`flash_attention_2` in the experiment's config (FlashAttention-2 needs Ampere or newer, fp16/bf16 weights and the "
        "`flash-attn` package), or to `sdpa`, and compare a few steps' loss and throughput with and without it.",
        "项目有自己的 `{flag}` 选项，当前为 \"auto\"（即 transformers 的默认注意力）：在实验配置中把它设为 `flash_attention_2`"
        "（FlashAttention-2 需要 Ampere 或更新的 GPU、fp16/bf16 权重以及 `flash-attn` 包）或 `sdpa`，并对比开启前后几步的损失与吞吐。",
        "{flag}: flash_attention_2  # in the experiment config, in the section that holds it\n",
    ),
    # the requirements hold transformers below 4.36, which has no ``attn_implementation``: 4.34-4.35 take
    # ``use_flash_attention_2=True`` (read off the released wheels), older releases have no FlashAttention-2 switch at all
    ("D1", "own-attention"): (
        "The model class is the project's own copy of the architecture, so transformers' `attn_implementation` does not reach "
        "it: in its attention, replace the matmul-softmax-matmul with `torch.nn.functional.scaled_dot_product_attention(q, k, v, "
        "attn_mask=mask, is_causal=mask is None)` (PyTorch 2.0 or later: FlashAttention and memory-efficient kernels), or load "
        "the upstream transformers class with `attn_implementation=\"sdpa\"`; compare the outputs on a few batches.",
        "模型类是项目自己复制的结构代码，transformers 的 `attn_implementation` 对它不起作用：在其注意力实现中把 matmul-softmax-matmul "
        "换成 `torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None)`（PyTorch 2.0 及以上，"
        "使用 FlashAttention 与 memory-efficient kernel），或改为加载 transformers 上游的类并设置 `attn_implementation=\"sdpa\"`；"
        "并在几个 batch 上核对输出。",
        "import torch.nn.functional as F\n\n# in the attention's forward, instead of softmax(q @ k.transpose(-2, -1) / sqrt(d)) @ v:\n"
        "attn_output = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask, dropout_p=0.0, is_causal=attention_mask is None)\n",
    ),
    # the remote-code model's own attention calls FlashAttention only where the package imports (Nanbeige's
    # ``modeling_nanbeige.py``: ``try: from flash_attn import flash_attn_func ... except: flash_attn_func = None``)
    ("D1", "optional-kernel"): (
        "The model's own attention already calls FlashAttention when the `flash-attn` package imports, and falls back to "
        "eager attention without it: install `flash-attn` in the training environment (declare it beside the other "
        "requirements, at the version its import check expects) and look for the fallback warning in the first log lines.",
        "模型自带的注意力实现在 `flash-attn` 包可导入时已调用 FlashAttention，否则退回 eager 注意力：在训练环境中安装 "
        "`flash-attn`（与其他依赖一起声明，版本满足其导入检查），并在日志开头确认没有回退警告。",
        "flash-attn>=2.1  # requirements: the model's attention imports it if present\n",
    ),
    # the training script already hands its own ``streaming`` option to ``load_dataset`` (Llama-Chinese ``pretrain_clm.py``),
    # which every launch leaves off
    # a recipe that discards the framework's tokenization cache (LLaMA-Factory ``overwrite_cache: true``, DISC-LawLLM)
    ("F6", "overwrite-cache"): (
        "Keep the tokenized dataset between launches: drop `overwrite_cache` (the recipe key or the `--overwrite_cache` flag) "
        "so that `datasets.map` reads back the Arrow cache it wrote last time, or tokenize once and point `tokenized_path` at "
        "the saved set (LLaMA-Factory saves it there on the first run and loads it on later ones; older `llmtuner` copies call "
        "it `cache_path`).",
        "在两次启动之间保留已分词的数据：去掉 `overwrite_cache`（配方中的键或 `--overwrite_cache` 参数），让 `datasets.map` "
        "读回上次写入的 Arrow 缓存；或只分词一次，并用 `tokenized_path` 指向保存的数据集（LLaMA-Factory 首次运行时保存到该目录，"
        "之后直接加载；较早的 `llmtuner` 副本中该参数名为 `cache_path`）。",
        "overwrite_cache: false\n",
    ),
    ("F9", "script-option"): (
        "The training script already streams when its `streaming` option is on (`load_dataset(..., streaming=...)`): for a "
        "corpus larger than local disk or RAM, pass `--streaming True` with `--max_steps` (a streamed dataset has no length, so "
        "epochs cannot be counted), and check what the script does after loading (its shuffle buffer, grouping into blocks) "
        "on the first steps.",
        "训练脚本在其 `streaming` 选项打开时已会流式读取（`load_dataset(..., streaming=...)`）：语料超过本地磁盘或内存时，"
        "传入 `--streaming True` 并设置 `--max_steps`（流式数据集没有长度，无法按 epoch 计数），并在最初几步检查脚本加载后的处理"
        "（shuffle 缓冲、分块）。",
        "--streaming True --max_steps 100000\n",
    ),
    # HF-Trainer pre-training (Llama-Chinese's Atom): DeepSpeed's seqlen curriculum passes ``curriculum_seqlen`` to the model's
    # forward, which an HF model rejects; the Trainer has no curriculum of its own
    ("G3", "hf-trainer"): (
        "The HF Trainer has no sequence-length curriculum, and DeepSpeed's `curriculum_learning` hands a `curriculum_seqlen` "
        "argument to the model's forward, which HF models do not accept: run the pre-training in stages instead: the first "
        "~10-20 % of the tokens with a short block size (e.g. `--block_size 512`), then resume from that checkpoint at the "
        "full length, and compare the loss curve with a single-stage run.",
        "HF Trainer 没有序列长度渐进，DeepSpeed 的 `curriculum_learning` 会向模型 forward 传入 `curriculum_seqlen` 参数，"
        "HF 模型不接受该参数：改为分阶段预训练：前约 10-20% 的 token 用较短的块长（如 `--block_size 512`），再从该检查点以完整长度"
        "继续训练，并与单阶段训练的 loss 曲线对比。",
        "# stage 1: short blocks for the first ~15 % of the tokens\n--block_size 512 --max_steps 15000\n"
        "# stage 2: full length, resumed from stage 1's output\n--block_size 4096 --model_name_or_path <stage-1 output>\n",
    ),
    # frozen whole only in the stages that pre-train the projector (CuMo: ``--tune_mm_mlp_adapter True`` in two of six
    # launches), trained in the others
    ("H1", "staged"): (
        "The vision encoder is frozen only in the stages that pre-train the projector; the later stages train it. If those "
        "stages do not need to adapt the tower, freeze it there too (`requires_grad_(False)` on the vision tower once the "
        "model is built, before the optimizer is created) and compare the evaluation scores with and without: a trained "
        "tower costs its gradients, optimizer state and backward GEMMs in every step.",
        "视觉编码器只在预训练投影层的阶段被冻结，后续阶段会训练它。如果这些阶段不需要调整视觉塔，也可在其中冻结"
        "（模型构建后、创建优化器前对视觉塔调用 `requires_grad_(False)`），并对比冻结前后的评测分数：训练视觉塔在每一步都要付出"
        "其梯度、优化器状态与反向 GEMM 的开销。",
        "# after the model is built, before the optimizer: the stages that need not adapt the tower\n"
        "model.get_model().get_vision_tower().requires_grad_(False)\n",
    ),
    ("D1", "transformers<4.36"): (
        "The pinned transformers predates `attn_implementation` (4.36): pass `use_flash_attention_2=True` to `from_pretrained` "
        "(transformers 4.34-4.35, with the `flash-attn` package and fp16/bf16 weights on Ampere or newer), or raise the pin to "
        "4.36+ and use `attn_implementation=\"flash_attention_2\"` (or `\"sdpa\"`).",
        "所固定的 transformers 版本早于 `attn_implementation`（4.36 引入）：在 `from_pretrained` 中传入 `use_flash_attention_2=True`"
        "（transformers 4.34-4.35，需安装 `flash-attn` 且在 Ampere 及以上 GPU 上使用 fp16/bf16 权重），或将版本提升到 4.36+ 后使用 "
        "`attn_implementation=\"flash_attention_2\"`（或 `\"sdpa\"`）。",
        "model = AutoModelForCausalLM.from_pretrained(\n    model_name, torch_dtype=torch.float16, use_flash_attention_2=True\n)\n",
    ),
    ("D1", "transformers<4.34"): (
        "The pinned transformers has no FlashAttention-2 or SDPA switch for its models (`use_flash_attention_2` arrived in 4.34, "
        "`attn_implementation` in 4.36): raise the pin to 4.36 or later and load with `attn_implementation=\"flash_attention_2\"` "
        "(or `\"sdpa\"`), after checking the training scripts against the newer release.",
        "所固定的 transformers 版本没有为模型提供 FlashAttention-2 或 SDPA 开关（`use_flash_attention_2` 于 4.34 引入，"
        "`attn_implementation` 于 4.36 引入）：将版本提升到 4.36 及以上，并以 `attn_implementation=\"flash_attention_2\"`"
        "（或 `\"sdpa\"`）加载模型；升级前先用新版本核对训练脚本。",
        "transformers>=4.36\n",
    ),
    # the project's trainers already call Liger under their own switch (InternVL: ``if model_args.use_liger:``), which most
    # launches leave off: the change is that switch, not another library's key
    ("D5", "project-flag"): (
        "The training scripts already apply Liger's kernels under the project's own `{flag}` switch: pass `--{flag} True` in "
        "the launches that leave it off (for a supported HF model family), and check the loss against a run without it on a "
        "few batches.",
        "训练脚本已在项目自己的 `{flag}` 开关下应用 Liger 内核：在未开启它的启动命令中传入 `--{flag} True`（适用于受支持的 HF "
        "模型族），并在几个 batch 上与未开启时核对损失。",
        "--{flag} True\n",
    ),
    # HF TrainingArguments' own switch, passed true by a minority of the launches (Mantis)
    ("D5", "hf-flag"): (
        "Some launches already turn on Liger's kernels with the HF Trainer's `--{flag} True`: pass it in the launches that "
        "leave it off (for a supported HF model family), and check the loss against a run without it on a few batches.",
        "部分启动命令已用 HF Trainer 的 `--{flag} True` 开启 Liger 内核：在未开启的启动命令中也传入它（适用于受支持的 HF 模型族），"
        "并在几个 batch 上与未开启时核对损失。",
        "--{flag} True\n",
    ),
}


#: advice for a model the project writes itself (``values["model_code"] == "own"``): Liger's one-line patches
#: (``apply_liger_kernel_to_*``, ``AutoLigerKernelForCausalLM``) replace the layers of HF model classes only
OWN_MODEL_TEXT: dict[str, tuple[str, str, str]] = {
    "D5": (
        "The trained model is the project's own architecture, which Liger's one-line patches (`apply_liger_kernel_to_*`, "
        "`AutoLigerKernelForCausalLM`) do not reach: use Liger's modules in the model code: `LigerRMSNorm` for RMSNorm, "
        "`LigerSwiGLUMLP` for a gated MLP, and `LigerFusedLinearCrossEntropyLoss` on the LM head's weight and the final hidden "
        "states (the logits are never materialised); check the loss against the eager version on a few batches.",
        "训练的是项目自己的模型结构，Liger 的一行补丁（`apply_liger_kernel_to_*`、`AutoLigerKernelForCausalLM`）作用不到："
        "在模型代码中直接使用 Liger 的模块：RMSNorm 换成 `LigerRMSNorm`，门控 MLP 换成 `LigerSwiGLUMLP`，"
        "损失用 `LigerFusedLinearCrossEntropyLoss` 直接作用于 LM head 权重和最后一层隐藏状态（不再物化 logits）；"
        "并在几个 batch 上与原实现核对损失。",
        "from liger_kernel.transformers import LigerFusedLinearCrossEntropyLoss, LigerRMSNorm\n\n"
        "# in the model: self.norm = LigerRMSNorm(hidden_size, eps=rms_norm_eps)\n"
        "loss_fn = LigerFusedLinearCrossEntropyLoss(ignore_index=-100)\n"
        "hidden = model.model(input_ids).last_hidden_state[:, :-1]  # the final hidden states, before the LM head\n"
        "loss = loss_fn(model.lm_head.weight, hidden.reshape(-1, hidden.size(-1)), labels[:, 1:].reshape(-1))\n",
    ),
}

#: advice for a hub model loaded as remote code (``values["model_code"] == "remote"``: ``trust_remote_code=True``, a model
#: type Liger has no patch for): ``use_liger_kernel`` and ``AutoLigerKernelForCausalLM`` patch transformers' own classes only
REMOTE_MODEL_TEXT: dict[str, tuple[str, str, str]] = {
    "D5": (
        "The trained model is remote code (loaded with `trust_remote_code=True`) of a family Liger has no patch for, so "
        "the Trainer's Liger switch and `AutoLigerKernelForCausalLM` leave it unchanged: to use Liger, edit the modeling file the "
        "checkpoint ships: `LigerRMSNorm` for its RMSNorm, `LigerSwiGLUMLP` for a gated MLP, and "
        "`LigerFusedLinearCrossEntropyLoss` on the LM head's weight and the final hidden states; check the loss against the "
        "original on a few batches. Expect less than the published LLaMA figures until each module is swapped.",
        "训练的模型是远程代码（以 `trust_remote_code=True` 加载），属于 Liger 没有补丁的模型族，Trainer 的 Liger 开关与 "
        "`AutoLigerKernelForCausalLM` 都不会改动它：如要使用 Liger，需修改检查点附带的建模文件：RMSNorm 换成 `LigerRMSNorm`，"
        "门控 MLP 换成 `LigerSwiGLUMLP`，损失用 `LigerFusedLinearCrossEntropyLoss` 作用于 LM head 权重与最后一层隐藏状态；"
        "并在几个 batch 上与原实现核对损失。在逐个替换模块之前，收益达不到 LLaMA 上公布的数字。",
        "from liger_kernel.transformers import LigerFusedLinearCrossEntropyLoss, LigerRMSNorm\n\n"
        "# in the checkpoint's modeling_<family>.py: self.norm = LigerRMSNorm(config.hidden_size, eps=config.rms_norm_eps)\n"
        "loss_fn = LigerFusedLinearCrossEntropyLoss(ignore_index=-100)\n"
        "loss = loss_fn(self.lm_head.weight, hidden_states[:, :-1].reshape(-1, hidden_states.size(-1)), labels[:, 1:].reshape(-1))\n",
    ),
}


#: advice on a JAX training path (``Project.notes["jax_training"]``, checks.stack) for the checks it still judges whose
#: usual advice names PyTorch mechanisms (a trainer's ``bf16: true``, ``attn_implementation``, DeepSpeed's curriculum)
JAX_TEXT: dict[str, tuple[str, str, str]] = {
    "C1": (
        "Compute in BF16 and keep FP32 parameters for the update: give the model's modules a bfloat16 compute `dtype` and a "
        "float32 `param_dtype` (Flax `nn.Dense(..., dtype=jnp.bfloat16, param_dtype=jnp.float32)`, or the project's own dtype "
        "option); keep the loss and the optimizer state in float32.",
        "以 BF16 计算、以 FP32 保存参数用于更新：模型各模块的计算 `dtype` 设为 bfloat16、`param_dtype` 设为 float32"
        "（Flax `nn.Dense(..., dtype=jnp.bfloat16, param_dtype=jnp.float32)`，或项目自己的 dtype 选项）；损失与优化器状态保持 float32。",
        "import jax.numpy as jnp\n\n"
        "# compute in bfloat16; parameters (and the optimizer state built from them) stay float32\n"
        "model = MyFlaxModel(config, dtype=jnp.bfloat16, param_dtype=jnp.float32)\n",
    ),
    "D1": (
        "Use a fused attention kernel: on GPU `jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation=\"cudnn\")` "
        "(cuDNN flash attention, BF16/FP16 inputs); on TPU the Pallas flash or splash attention kernels "
        "(`jax.experimental.pallas.ops.tpu`); or switch on a blockwise attention the model already offers.",
        "使用融合的注意力 kernel：GPU 上用 `jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation=\"cudnn\")`"
        "（cuDNN flash attention，输入为 BF16/FP16）；TPU 上用 Pallas 的 flash 或 splash attention kernel"
        "（`jax.experimental.pallas.ops.tpu`）；或打开模型已提供的分块（blockwise）注意力。",
        "import jax\n\n"
        "# q, k, v: [batch, seq_len, num_heads, head_dim] in bfloat16\n"
        "out = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation=\"cudnn\")\n",
    ),
    "G3": (
        "For pre-training, start with shorter sequences and lengthen them in stages: the data pipeline's sequence length per "
        "stage (for example 512, then 1024, then the full length), holding the tokens per batch constant; compare the loss "
        "curve with a fixed-length run.",
        "预训练时先用较短序列，再分阶段加长：按阶段设置数据管道的序列长度（例如先 512、再 1024、最后全长），保持每个 batch 的 token 数不变；"
        "并与固定长度的训练对比损失曲线。",
        "",
    ),
}


def jax_text(check_id: str, project: Project) -> tuple[str, str, str] | None:
    """The advice for this check on a JAX training path, when its usual advice is PyTorch's (:data:`JAX_TEXT`)."""
    return JAX_TEXT.get(check_id) if project.notes.get("jax_training") else None


#: the expected benefit of the advice that :data:`LOADER_TEXT` gives in place of a check's own, where the check's own
#: benefit does not hold (gradients already reduced in bf16 gain nothing from a bf16 all-reduce)
LOADER_BENEFIT: dict[tuple[str, str], tuple[str, str]] = {
    ("F6", "overwrite-cache"): (
        "no re-tokenization of the whole dataset at every launch: the start-up time before the first step",
        "每次启动不再重新分词整个数据集：省去第一步之前的启动时间",
    ),
    ("E3", "deepspeed-half"): (
        "about 4x less gradient traffic than the bf16 reduction already in place (ZeRO++ int4 quantized gradients; 4x less "
        "communication and up to 2.16x throughput at 384 GPUs, Wang et al., 2023) on bandwidth-limited links",
        "在带宽受限的链路上，梯度流量比现有的 bf16 归约再减少约 4 倍（ZeRO++ int4 量化梯度；Wang 等，2023：通信量减少 4 倍，"
        "384 卡上吞吐最高提升 2.16 倍）",
    ),
}


def loader_benefit(check_id: str, values: dict[str, object]) -> tuple[str, str] | None:
    """The expected benefit that goes with :func:`loader_text`'s advice, when it differs from the check's own."""
    kind = values.get("advice_for")
    return LOADER_BENEFIT.get((check_id, kind)) if isinstance(kind, str) else None


def loader_text(check_id: str, values: dict[str, object]) -> tuple[str, str, str] | None:
    """The advice for this check on the project's own kind of input pipeline, when it is not a PyTorch DataLoader, or on
    the project's own model code (:data:`OWN_MODEL_TEXT`)."""
    for key in ("loader", "advice_for"):
        kind = values.get(key)
        if isinstance(kind, str) and (check_id, kind) in LOADER_TEXT:
            flag = values.get("flag")
            en, zh, snippet = LOADER_TEXT[(check_id, kind)]
            if isinstance(flag, str):  # the project's own switch, named in the advice
                en, zh, snippet = (t.replace("{flag}", flag) for t in (en, zh, snippet))
            return en, zh, snippet
    code = values.get("model_code")
    return OWN_MODEL_TEXT.get(check_id) if code == "own" else REMOTE_MODEL_TEXT.get(check_id) if code == "remote" else None
