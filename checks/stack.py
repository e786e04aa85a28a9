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
}

#: the Chinese of NOT_JUDGED
NOT_JUDGED_ZH: dict[str, str] = {
    "A2": "请确认参数与优化器状态沿 mesh 的数据轴切分（参数上的 `PartitionSpec` 或轴映射指向该轴），而不是在每个设备上复制",
    "C5": "请确认训练步是否把每个 batch 拆成 micro-batch 并累加梯度后再更新一次（`optax.MultiSteps`、对 micro-batch 的 scan）",
    "F1": "请确认 batch 是在训练线程之外构建的（后台线程或进程填充队列）以及构建它们的 worker 数",
    "F2": "请确认数据加载在训练步运行时就构建后续 batch（由后台线程填充的有界队列）",
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
