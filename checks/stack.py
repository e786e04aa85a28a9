"""What a JAX training path changes (``Project.notes["jax_training"]``, see :func:`checks.project.jax_training`).

Most of the checklist names PyTorch mechanisms. On a project that trains with JAX (a jitted ``train_step``, no PyTorch
backward pass) two kinds of check cannot give PyTorch's answer:

- ``DOES_NOT_APPLY``: the mechanism exists only in PyTorch (DeepSpeed, PyTorch FSDP, a DataLoader's pinned memory): the
  check is ``n/a``, and the reason names the JAX counterpart where there is one.
- ``NOT_JUDGED``: the practice exists in JAX but the check's recognisers read PyTorch spellings (a DataLoader's workers,
  an ``accumulate_grad_batches``): when they find nothing, "unused" would be a guess, so the check is ``n/a`` with
  "not judged" and what to look at. Anything they do find (a PyTorch DataLoader feeding the JAX step) is judged as usual.

Checks whose practice and spelling are the same in both (bf16, activation checkpointing by config, sequence packing,
logging intervals, XLA compiling the step for D2) keep their rules.
"""

from __future__ import annotations

from .model import Outcome, Project, Status

_FRAMEWORK = "a PyTorch framework; a JAX run shards and parallelises through its device mesh (A2, A4-A6)"

#: check id -> the sentence after "<mechanism> is ..." for a JAX run
DOES_NOT_APPLY: dict[str, str] = {
    "A3": "DeepSpeed ZeRO (or a PyTorch ZeRO optimizer) is PyTorch's; in JAX, sharding parameters and optimizer state over the "
          "data axis is A2's question",
    "B1": "DeepSpeed is " + _FRAMEWORK,
    "B2": "Megatron-LM is " + _FRAMEWORK,
    "B3": "Accelerate is " + _FRAMEWORK,
    "B4": "ColossalAI is " + _FRAMEWORK,
    "B5": "PyTorch FSDP is PyTorch's; its JAX counterpart, parameters sharded over the data axis of the mesh, is A2's question",
    "B6": "veScale is " + _FRAMEWORK,
    "D5": "Liger Kernel is a set of Triton kernels patched into PyTorch (Hugging Face) models",
    "F3": "pinned memory is a PyTorch DataLoader option; a JAX loader places host batches with `jax.device_put` or "
          "`jax.make_array_from_callback`",
    "C6": "PyTorch's caching-allocator settings (`PYTORCH_CUDA_ALLOC_CONF`, `empty_cache`) do not reach JAX, whose XLA client "
          "allocates from its own pool, preallocated at start-up (`XLA_PYTHON_CLIENT_PREALLOCATE`, `XLA_PYTHON_CLIENT_MEM_FRACTION`)",
    "D4": "CUDA graph capture (`torch.cuda.graph`, `mode=\"reduce-overhead\"`) is PyTorch's; XLA compiles the whole step into one "
          "program and on GPU decides graph (command buffer) use itself (`--xla_gpu_enable_command_buffer` in `XLA_FLAGS`)",
    "D6": "fused optimizer classes (apex, `fused=True`, DeepSpeed FusedAdam) are PyTorch's; the optimizer update runs inside the "
          "jitted step, where XLA fuses its element-wise operations",
    "D8": "persistent kernels are hand-written Triton or CUDA kernels launched from PyTorch; XLA schedules the step's kernels "
          "itself (a Pallas kernel is the JAX place for one)",
    "E3": "DDP communication hooks (PowerSGD, FP16/BF16 gradient compression) are PyTorch's; in a jitted JAX step the gradient "
          "reduction is a collective XLA emits in the gradients' own dtype",
    "F11": "`non_blocking=True` copies and side CUDA streams are PyTorch's; JAX dispatches host-to-device transfers "
           "asynchronously (`jax.device_put` returns before the copy ends)",
}

#: check id -> what to check on a JAX run when the PyTorch recognisers find nothing
NOT_JUDGED: dict[str, str] = {
    "A2": "check that the parameters and optimizer state are sharded over the data axis of the mesh (a `PartitionSpec` or "
          "axis mapping naming it on the parameters), not replicated on every device",
    "C5": "check whether the step splits each batch into micro-batches and sums their gradients before one update "
          "(`optax.MultiSteps`, a scan over micro-batches)",
    "F1": "check that batches are built off the training thread (a background thread or process filling a queue) and how many "
          "workers build them",
    "F2": "check that the loader builds the next batches while the step runs (a bounded queue filled by a background thread)",
    "A1": "check that the batch is sharded over the data axis of the device mesh (a `PartitionSpec` naming that axis on the "
          "batch, a data or fsdp axis larger than 1) and that every host runs the script (`jax.distributed.initialize`)",
    "C2": "check the dtype the large matmuls run in: FP8 in JAX goes through Transformer Engine's JAX API or an FP8 "
          "`dot_general` (Flax `Fp8DotGeneralOp`), on GPUs with FP8 Tensor Cores (Ada, Hopper and newer)",
    "D3": "check for Pallas kernels (`jax.experimental.pallas`), JAX's counterpart of Triton, on the hot custom operations",
    "E2": "XLA overlaps the step's collectives with compute through its latency-hiding scheduler: check the run's `XLA_FLAGS` "
          "(GPU: `--xla_gpu_enable_latency_hiding_scheduler=true`) or `LIBTPU_INIT_ARGS` on TPU",
    # (axlearn: ``mesh_shape_from_axes(data=-1, fsdp=8, model=4)``; ``PipelinedTransformerLayer(num_stages=2)``)
    "A4": "check the device mesh's model (tensor) axis: its size, and the weights' `PartitionSpec` along it",
    "A5": "check whether the layers are staged over a pipeline axis of the mesh (a pipelined layer stack with its stages and "
          "microbatches)",
    "A7": "check the device mesh's expert axis and whether the MoE layers' expert weights are partitioned along it",
    # (LWM: ``--mesh_dim='!1,-1,2,2'``, the dp, fsdp, tp and sp axes of its mesh, with ring attention over sp)
    "A6": "check the device mesh's sequence axis (an `sp`/`seq` axis, ring or blockwise attention sharded over it)",
    "C3": "check for rematerialisation around the layers (`jax.checkpoint` / `jax.remat`, Flax `nn.remat` or "
          "`nn_partitioning.remat`, and its `policy`)",
    "E4": "on GPUs XLA's collectives run over NCCL (the same `NCCL_*` variables apply); on TPUs the interconnect settings "
          "go in `LIBTPU_INIT_ARGS`: check which hardware the run uses and its settings there",
}


_FRAMEWORK_ZH = " PyTorch 框架；JAX 训练通过设备 mesh 做切分与并行（见 A2、A4-A6）"

#: the Chinese of DOES_NOT_APPLY, for the zh report
DOES_NOT_APPLY_ZH: dict[str, str] = {
    "A3": "DeepSpeed ZeRO（及 PyTorch 的 ZeRO 优化器）属于 PyTorch；JAX 中参数与优化器状态沿数据轴切分属于 A2",
    "B1": "DeepSpeed 是" + _FRAMEWORK_ZH,
    "B2": "Megatron-LM 是" + _FRAMEWORK_ZH,
    "B3": "Accelerate 是" + _FRAMEWORK_ZH,
    "B4": "ColossalAI 是" + _FRAMEWORK_ZH,
    "B5": "PyTorch FSDP 属于 PyTorch；JAX 中对应的做法（参数沿 mesh 的数据轴切分）属于 A2",
    "B6": "veScale 是" + _FRAMEWORK_ZH,
    "D5": "Liger Kernel 是打补丁到 PyTorch（Hugging Face）模型上的 Triton kernel",
    "F3": "Pin Memory 是 PyTorch DataLoader 的选项；JAX 数据加载用 `jax.device_put` 或 `jax.make_array_from_callback` 放置主机上的 batch",
    "C6": "PyTorch 缓存分配器的设置（`PYTORCH_CUDA_ALLOC_CONF`、`empty_cache`）对 JAX 不起作用；JAX 的 XLA 客户端从自己的内存池分配，"
          "启动时预分配（`XLA_PYTHON_CLIENT_PREALLOCATE`、`XLA_PYTHON_CLIENT_MEM_FRACTION`）",
    "D4": "CUDA Graph 捕获（`torch.cuda.graph`、`mode=\"reduce-overhead\"`）属于 PyTorch；XLA 把整个训练步编译为一个程序，"
          "在 GPU 上自行决定是否使用 CUDA Graph（command buffer，`XLA_FLAGS` 中的 `--xla_gpu_enable_command_buffer`）",
    "D6": "融合优化器类（apex、`fused=True`、DeepSpeed FusedAdam）属于 PyTorch；优化器更新在 jit 编译的训练步内执行，由 XLA 融合其逐元素运算",
    "D8": "持久化 kernel 是从 PyTorch 启动的手写 Triton 或 CUDA kernel；XLA 自行调度训练步的 kernel（JAX 中对应的位置是 Pallas kernel）",
    "E3": "DDP 通信 hook（PowerSGD、FP16/BF16 梯度压缩）属于 PyTorch；在 jit 编译的 JAX 训练步中，梯度规约是 XLA 按梯度自身 dtype 生成的集合通信",
    "F11": "`non_blocking=True` 拷贝与 CUDA 侧流属于 PyTorch；JAX 的主机到设备传输本身是异步派发的（`jax.device_put` 在拷贝完成前即返回）",
}

#: the Chinese of NOT_JUDGED
NOT_JUDGED_ZH: dict[str, str] = {
    "A2": "请确认参数与优化器状态沿 mesh 的数据轴切分（参数上的 `PartitionSpec` 或轴映射指向该轴），而不是在每个设备上复制",
    "C5": "请确认训练步是否把每个 batch 拆成 micro-batch 并累加梯度后再更新一次（`optax.MultiSteps`、对 micro-batch 的 scan）",
    "F1": "请确认 batch 是在训练线程之外构建的（后台线程或进程填充队列）以及构建它们的 worker 数",
    "F2": "请确认数据加载在训练步运行时就构建后续 batch（由后台线程填充的有界队列）",
    "A1": "请确认 batch 沿设备 mesh 的数据轴切分（batch 上的 `PartitionSpec` 指向该轴，数据轴或 fsdp 轴大于 1），并且每台主机都运行该脚本"
          "（`jax.distributed.initialize`）",
    "C2": "请确认大矩阵乘法所用的 dtype：JAX 中的 FP8 通过 Transformer Engine 的 JAX 接口或 FP8 `dot_general`（Flax `Fp8DotGeneralOp`）实现，"
          "需要带 FP8 Tensor Core 的 GPU（Ada、Hopper 及更新）",
    "D3": "请确认热点自定义算子是否使用 Pallas kernel（`jax.experimental.pallas`，JAX 中对应 Triton 的工具）",
    "E2": "XLA 通过 latency-hiding scheduler 让训练步的集合通信与计算重叠：请检查运行时的 `XLA_FLAGS`"
          "（GPU：`--xla_gpu_enable_latency_hiding_scheduler=true`）或 TPU 上的 `LIBTPU_INIT_ARGS`",
    "A4": "请确认设备 mesh 的 model（张量并行）轴的大小，以及权重沿该轴的 `PartitionSpec`",
    "A5": "请确认各层是否沿 mesh 的流水线轴分段（分段的层栈及其 stage 数与 microbatch 数）",
    "A7": "请确认设备 mesh 的 expert 轴，以及 MoE 层的专家权重是否沿该轴切分",
    "A6": "请确认设备 mesh 的序列轴（`sp`/`seq` 轴，以及沿该轴切分的 ring 或 blockwise attention）",
    "C3": "请确认各层外是否做了重计算（`jax.checkpoint` / `jax.remat`、Flax `nn.remat` 或 `nn_partitioning.remat`，及其 `policy`）",
    "E4": "在 GPU 上 XLA 的集合通信走 NCCL（同样的 `NCCL_*` 变量适用）；在 TPU 上互联设置写在 `LIBTPU_INIT_ARGS` 中：请确认运行所用的硬件及其设置",
}


def jax_reason_zh(check_id: str, detail: str | None) -> str | None:
    """The Chinese of a reason written by this module, or None for any other detail."""
    d = detail or ""
    if d.startswith("JAX training path") and check_id in DOES_NOT_APPLY_ZH:
        return "JAX 训练路径（训练步由 JAX jit 编译，没有 PyTorch 反向传播）：" + DOES_NOT_APPLY_ZH[check_id]
    if d.startswith("not judged: the training path is JAX") and check_id in NOT_JUDGED_ZH:
        return "训练路径是 JAX，本检查只识别 PyTorch 的写法且未找到任何写法；" + NOT_JUDGED_ZH[check_id]
    return None


def jax_not_applicable(check_id: str, project: Project) -> str | None:
    """The ``n/a`` reason of a PyTorch-only check on a JAX training path, else None."""
    where = project.notes.get("jax_training")
    if not where or check_id not in DOES_NOT_APPLY:
        return None
    return f"JAX training path (training step compiled by {where}; no PyTorch backward pass): {DOES_NOT_APPLY[check_id]}"


def jax_not_judged(check_id: str, project: Project, outcome: Outcome) -> Outcome:
    """``outcome``, or "not judged" when a check that reads PyTorch spellings found nothing at all on a JAX training path."""
    where = project.notes.get("jax_training")
    if not where or check_id not in NOT_JUDGED or outcome.status is not Status.UNUSED or outcome.evidence:
        return outcome
    return Outcome(Status.NA, detail=f"not judged: the training path is JAX (training step compiled by {where}) and this check "
                   f"reads PyTorch spellings ({outcome.detail}); {NOT_JUDGED[check_id]}")
