"""What a training loop run by a library's learner changes (``Project.notes["library_learner"]``, set by
:func:`checks.project.detect_project` from the learner imports of the training files).

Some projects write no training loop: their entry point subclasses a learner of an online-alignment library and hands it
to the library's launcher (understand-r1-zero's ``train_zero_math.py``: ``class ZeroMathLearner(PPOLearner)`` and
``get_program(args, learner_cls=ZeroMathLearner, ...)``, Oat's DeepSpeed learners and vLLM actors). The loader, the
optimizer, the engine config, gradient accumulation and the loss live in the library, which is not scanned. A check that
reads the project's code for them and finds nothing cannot say "unused": it is ``n/a`` with "not judged" and the
library's argument to look at. Anything the checks do find (a launch flag, a setting of the project's own) is judged as
usual.
"""

from __future__ import annotations

from .model import Outcome, Project, Status

#: check id -> what to check in the library's arguments (``python <entry> --help``)
NOT_JUDGED: dict[str, str] = {
    "B1": "check whether the library's learner runs on DeepSpeed (a `--zero-stage` argument says it does)",
    "B3": "check whether the library's learner runs on Accelerate",
    "B5": "check whether the library's learner can shard with PyTorch FSDP",
    "C4": "check the library's offload arguments (optimizer, reference model, rollout engine sleep)",
    "C5": "check how the library splits its train batch: a global train batch larger than the per-device batch times the "
          "GPUs is accumulated",
    "C6": "check the library's allocator and buffer settings (`PYTORCH_CUDA_ALLOC_CONF` in the launch, DeepSpeed's "
          "`contiguous_gradients`)",
    "D2": "check whether the library compiles the policy model (a compile argument in its `--help`)",
    "D6": "check which optimizer the library's learner builds (DeepSpeed's FusedAdam, `fused=True`)",
    "E2": "check the library's DeepSpeed config for `overlap_comm` and its bucket sizes",
    "E3": "check the library's DeepSpeed config for the gradient communication dtype",
    "F1": "check the library's loader arguments for worker processes",
    "F2": "check the library's loader arguments for prefetching",
    "F3": "check the library's loader arguments for pinned memory",
    "F7": "check whether the library packs sequences in its learner (a packing argument in its `--help`)",
    "F11": "check how the library copies batches to the GPU",
    "G6": "check whether the library's loss is chunked or fused over the vocabulary",
}

#: the Chinese of NOT_JUDGED
NOT_JUDGED_ZH: dict[str, str] = {
    "B1": "请确认该库的 learner 是否基于 DeepSpeed（有 `--zero-stage` 参数即是）",
    "B3": "请确认该库的 learner 是否基于 Accelerate",
    "B5": "请确认该库的 learner 是否支持 PyTorch FSDP 分片",
    "C4": "请检查该库的 offload 参数（优化器、参考模型、推理引擎休眠）",
    "C5": "请确认该库如何拆分训练 batch：全局 batch 大于每卡 batch 乘以 GPU 数时即做梯度累积",
    "C6": "请检查该库的显存分配与缓冲设置（启动命令中的 `PYTORCH_CUDA_ALLOC_CONF`、DeepSpeed 的 `contiguous_gradients`）",
    "D2": "请确认该库是否编译策略模型（其 `--help` 中的 compile 参数）",
    "D6": "请确认该库的 learner 构建哪种优化器（DeepSpeed FusedAdam、`fused=True`）",
    "E2": "请检查该库的 DeepSpeed 配置中的 `overlap_comm` 与 bucket 大小",
    "E3": "请检查该库的 DeepSpeed 配置中梯度通信的数据类型",
    "F1": "请检查该库数据加载参数中的 worker 进程数",
    "F2": "请检查该库数据加载参数中的预取设置",
    "F3": "请检查该库数据加载参数中的锁页内存设置",
    "F7": "请确认该库的 learner 是否做序列打包（其 `--help` 中的 packing 参数）",
    "F11": "请确认该库如何把 batch 拷贝到 GPU",
    "G6": "请确认该库的损失是否对词表分块或融合计算",
}

_PREFIX = "not judged: the training loop is a library's"


def library_not_judged(check_id: str, project: Project, outcome: Outcome) -> Outcome:
    """``outcome``, or "not judged" when a check found nothing in the project's code while a library's learner runs its
    training loop."""
    where = project.notes.get("library_learner")
    if not where or check_id not in NOT_JUDGED or outcome.status is not Status.UNUSED or outcome.evidence:
        return outcome
    return Outcome(Status.NA, detail=f"{_PREFIX} ({where}), which this audit does not scan ({outcome.detail}); "
                   f"{NOT_JUDGED[check_id]}")


def library_reason_zh(check_id: str, detail: str | None) -> str | None:
    """The Chinese of a reason written by this module, or None for any other detail."""
    if (detail or "").startswith(_PREFIX) and check_id in NOT_JUDGED_ZH:
        return "训练循环由第三方库的 learner 运行（本审计不扫描该库），项目代码中未找到相关写法；" + NOT_JUDGED_ZH[check_id]
    return None
