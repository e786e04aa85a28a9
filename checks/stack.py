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
