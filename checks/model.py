"""The neutral shapes every part of accel-audit shares.

A check produces an :class:`Outcome`; the engine wraps it into a :class:`CheckResult`;
every output (JSON, Markdown, SARIF, the check run, review comments) reads those.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    USED = "used"
    PARTIAL = "partial"
    UNUSED = "unused"
    NA = "n/a"

    @property
    def points(self) -> float:
        return {"used": 1.0, "partial": 0.5}.get(self.value, 0.0)


class Priority(StrEnum):
    HIGH = "high"  # > 30 % expected speed-up, or a scaling prerequisite
    MEDIUM = "medium"  # 10-30 %
    LOW = "low"  # < 10 %

    @property
    def rank(self) -> int:
        return {"high": 0, "medium": 1, "low": 2}[self.value]


class Bottleneck(StrEnum):
    COMPUTE = "compute-bound"
    MEMORY = "memory-bound"
    LATENCY = "latency-bound"
    LAUNCH = "launch-bound"
    COMMUNICATION = "communication-bound"
    DATA_IO = "data-io-bound"
    UNKNOWN = "needs-profiling"


class FixSafety(StrEnum):
    """How a suggested edit may be presented (Ruff's grades)."""

    SAFE = "safe"  # behaviour and numerics unchanged (e.g. pin_memory, logging interval)
    UNSAFE = "unsafe"  # changes numerics or memory behaviour (precision, ZeRO stage, LoRA)
    DISPLAY_ONLY = "display-only"  # advice that is not an edit of one line


CATEGORIES: dict[str, tuple[str, str]] = {
    # id: (English name, the seed's Chinese name)
    "A": ("Parallelism", "并行策略"),
    "B": ("Training frameworks", "训练框架"),
    "C": ("Memory optimisation", "显存优化"),
    "D": ("Compute optimisation", "计算优化"),
    "E": ("Communication", "通信优化"),
    "F": ("Data and I/O", "数据与 I/O 优化"),
    "G": ("Training strategy", "训练策略"),
    "H": ("Multimodal", "多模态专项"),
    "I": ("Infrastructure and operations", "基础设施与运维"),
    "J": ("Inference", "推理优化"),
}

CATEGORY_SIZES: dict[str, int] = {
    "A": 7, "B": 6, "C": 6, "D": 8, "E": 4, "F": 11, "G": 6, "H": 3, "I": 5, "J": 7,
}


@dataclass(frozen=True, slots=True)
class Evidence:
    """One place in the repository that proves (or disproves) a practice.

    ``key`` is what an edit needs to find the setting again: a config key path
    (``zero_optimization.stage``), a keyword of a call (``DataLoader(num_workers=)``)
    or a launcher flag (``--bf16``). ``value`` is the value found there.
    """

    path: str
    line: int
    snippet: str
    key: str | None = None
    value: Any = None
    role: str | None = None  # the file's role (checks.roles): "training", "config", ... or, for context, "test", ...

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "line": self.line, "snippet": self.snippet}
        if self.key is not None:
            out["key"] = self.key
        if self.value is not None and isinstance(self.value, (bool, int, float, str)):
            out["value"] = self.value
        if self.role is not None:
            out["role"] = self.role
        return out


@dataclass(slots=True)
class Outcome:
    """What a check's detection concluded.

    ``values`` holds the measured numbers or names that the regression review
    compares between base and head (e.g. ``{"save_steps": 1}``, ``{"precision": "bf16"}``).
    ``detail`` is one short human sentence about what was found.
    ``findings`` are problems worth a comment even when the practice is in use
    (for I3-I5: the too-frequent interval, at its line).
    """

    status: Status
    evidence: list[Evidence] = field(default_factory=list)
    detail: str | None = None
    values: dict[str, Any] = field(default_factory=dict)
    findings: list[Evidence] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Example:
    """A tiny in-memory repository and the status the check must give it."""

    files: dict[str, str]
    status: Status
    name: str = ""


def filled(files: dict[str, str], slot: str, text: str) -> dict[str, str]:
    """An example repository's files with ``{slot}`` replaced by ``text`` in each: one template, several variants."""
    return {path: body.replace("{" + slot + "}", text) for path, body in files.items()}


@dataclass(slots=True)
class CheckResult:
    id: str
    category: str
    title: str
    status: Status
    evidence: list[Evidence]
    detail: str | None
    values: dict[str, Any]
    findings: list[Evidence]
    priority: Priority | None = None  # set when a recommendation applies
    recommendation: str | None = None
    #: out-of-scope places (tests, benchmarks, archives...) that use the practice: shown, never counted
    context: list[Evidence] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "category": self.category,
            "title": self.title,
            "status": self.status.value,
            "evidence": [e.to_json() for e in self.evidence],
            "detail": self.detail,
            "findings": [e.to_json() for e in self.findings],
            "values": {k: v for k, v in self.values.items() if _jsonable(v)},
            "recommendation": self.recommendation,
            "priority": self.priority.value if self.priority else None,
        }
        if self.context:
            out["context"] = [e.to_json() for e in self.context]
        return out


def _jsonable(v: Any) -> bool:
    if isinstance(v, (bool, int, float, str)) or v is None:
        return True
    if isinstance(v, (list, tuple)):
        return all(_jsonable(x) for x in v)
    return False


@dataclass(slots=True)
class Project:
    """What the overview says about the scanned repository."""

    frameworks: list[str] = field(default_factory=list)
    model_type: str = "unknown"  # "LLM" | "MLLM" | "unknown"
    estimated_params: str | None = None  # e.g. "7B"
    params_billions: float | None = None
    model_names: list[str] = field(default_factory=list)
    model_families: list[str] = field(default_factory=list)  # e.g. ["llama", "qwen2"]
    multimodal: bool = False
    does_inference: bool = False
    does_training: bool = True
    finetunes: bool = False  # loads pretrained weights (from_pretrained) for training
    pretrains: bool = False
    alignment: bool = False  # DPO/ORPO/KTO/SimPO/PPO/GRPO or distillation
    moe: bool = False
    multi_node: bool = False
    num_gpus: int | None = None  # per node, from launchers
    num_nodes: int | None = None
    max_seq_len: int | None = None
    adapter_training: bool = False  # LoRA/QLoRA: the trained (and checkpointed) parameters are the adapters
    hardware: str | None = None  # from repo config (e.g. "h100"); None = unknown
    #: the files on the training path (checks.roles ``training``): empty when no entry point was recognised
    training_files: frozenset[str] = field(default_factory=frozenset)
    bottleneck: Bottleneck = Bottleneck.UNKNOWN
    bottleneck_reasons: list[str] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "frameworks": self.frameworks,
            "model_type": self.model_type,
            "estimated_params": self.estimated_params,
            "model_names": self.model_names,
            "multimodal": self.multimodal,
            "does_inference": self.does_inference,
            "multi_node": self.multi_node,  # configured by a launch or config; documented-only: ``multi_node_documented``
            **({"multi_node_documented": self.notes["multi_node_documented"]} if "multi_node_documented" in self.notes else {}),
            # a launch that asks for several nodes with ``--standalone`` (a local rendezvous): not multi-node as written
            **({"standalone_nodes": self.notes["standalone_nodes"]} if "standalone_nodes" in self.notes else {}),
            "moe": self.moe,
            "max_seq_len": self.max_seq_len,
            "adapter_training": self.adapter_training,
            **{k: self.notes[k] for k in ("active_params", "params_source", "params_distribution", "seq_len_distribution",
                                          "transformers_weights_only", "profile_steps", "params_note",
                                          "params_range", "params_range_sources", "missing_submodules") if k in self.notes},
            "bottleneck": self.bottleneck.value,
            "bottleneck_reasons": self.bottleneck_reasons,
        }
