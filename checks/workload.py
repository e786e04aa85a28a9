"""What an inference-only project changes (``Project.does_inference`` and not ``does_training``).

A repository that only serves or generates (Meta's llama3: model-parallel generation behind ``torchrun``, no training
step anywhere) has no training run for most of the checklist to judge: its data loaders, optimizer, gradient
communication, checkpoint intervals and training frameworks do not exist. Those checks are ``n/a`` with the reason below
(out of the score, nothing recommended), never "unused": a 2 % score over 50 training practices would say the project
does training badly. What still applies to generation is judged as usual: the inference checks (J), the compute checks
that speed up a forward pass (fused attention, compilation, Triton and persistent kernels, CUDA graphs, Tensor Core
dimensions), tensor parallelism with its NCCL settings when one model spans GPUs, and the multimodal checks that cut the
visual tokens each request carries (the seed's appendix A, scenarios B and D).
"""

from __future__ import annotations

from .model import Project

#: checks outside J that still apply to an inference-only project
INFERENCE_CHECKS = frozenset({"A4", "D1", "D2", "D3", "D4", "D7", "D8", "E4", "H2", "H3"})

INFERENCE_ONLY = "the project only runs inference (no training step on any path): training practice does not apply"
INFERENCE_ONLY_ZH = "项目仅做推理（任何路径上都没有训练步）：训练相关的实践不适用"


def inference_only(project: Project) -> bool:
    """The project generates or serves and trains nothing."""
    return project.does_inference and not project.does_training


def inference_not_applicable(check_id: str, project: Project) -> str | None:
    """The ``n/a`` reason of a training-only check on an inference-only project, else None."""
    if not inference_only(project) or check_id.startswith("J") or check_id in INFERENCE_CHECKS:
        return None
    return INFERENCE_ONLY
