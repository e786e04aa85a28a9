"""Prioritized recommendations, ordered by the seed's fourth-step rules.

Order: priority (high > 30 % expected speed-up or a scaling prerequisite, medium 10-30 %,
low < 10 %); within a priority, advice for the project's bottleneck type first; then the order
of the seed's fourth-step lists, then appendix A's scenario order (training or inference), then
the checklist order. A recommendation exists only where the check's own
``recommendation_priority`` gave one, for a practice that is missing or partial, and where
:mod:`reports.applicability` finds it applicable; each carries its expected benefit, the evidence
that triggered it, and a snippet fitted to the repository.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from checks.base import REGISTRY, Check, all_checks
from checks.engine import Audit
from checks.model import Bottleneck, CheckResult, Evidence, FixSafety, Priority, Status

from .applicability import GPU, gpu, hardware_text, jax_text, loader_benefit, loader_text, withhold_reason
from .prereq import torch_cap, torch_first, transformers_cap, transformers_first
from .resources import data
from .snippets import Snippet, fit, repo_style

#: how many recommendations get a snippet in the Markdown report (the seed: "top 3")
SNIPPET_COUNT = 3


@dataclass(slots=True)
class Recommendation:
    check: str
    category: str
    title: str
    title_zh: str
    priority: Priority
    status: Status
    text: str
    text_zh: str
    benefit: str
    benefit_zh: str
    evidence: list[Evidence]
    findings: list[Evidence]
    detail: str | None
    matches_bottleneck: bool
    fix_safety: FixSafety
    snippet: Snippet | None = None
    detail_zh: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "priority": self.priority.value,
            "text": self.text,
            "snippet": self.snippet.code if self.snippet else None,
            "title": self.title,
            "status": self.status.value,
            "benefit": self.benefit,
            "detail": self.detail,
            "evidence": [e.to_json() for e in (self.findings or self.evidence)],
            "matches_bottleneck": self.matches_bottleneck,
            "fix_safety": self.fix_safety.value,
            "snippet_target": self.snippet.target if self.snippet else None,
            "snippet_where": self.snippet.where if self.snippet else None,
        }


@dataclass(frozen=True, slots=True)
class Withheld:
    check: str
    title: str
    reason: str
    reason_zh: str

    def to_json(self) -> dict[str, str]:
        return {"check": self.check, "title": self.title, "reason": self.reason}


@dataclass(slots=True)
class Plan:
    recommendations: list[Recommendation] = field(default_factory=list)
    withheld: list[Withheld] = field(default_factory=list)

    def get(self, check_id: str) -> Recommendation | None:
        return next((r for r in self.recommendations if r.check == check_id), None)



def _own_snippet(code: str, r: Any, style: Any) -> Snippet:
    """The snippet of advice written for the project's own pipeline or switch: launcher flags (``--use_liger True``) go
    into the training command, a requirements line into the requirements file, Python into the file the check cites."""
    at = f"{r.evidence[0].path}:{r.evidence[0].line}" if r.evidence else None
    if code.startswith("--"):
        launch = style.where.get("hf-flags") or style.where.get("shell")
        return Snippet("hf-flags", "bash", f"# append to the training command in {launch}\n{code}" if launch else code, launch, True)
    if re.match(r"^[A-Za-z][\w.-]*[<>=]=?", code):
        req = next((e for e in r.evidence if e.path.endswith((".txt", ".toml", ".cfg", ".py")) and "requirements" in e.path), None)
        return Snippet("requirements", "text", code, f"{req.path}:{req.line}" if req else None, True)
    if re.match(r"^\w+: \S", code) and "(" not in code:  # a recipe key (``accum_grad_iters: 4``)
        return Snippet("yaml", "yaml", code, style.where.get("yaml"), True)
    if code.startswith("{"):  # a DeepSpeed config section, for the config the check cites
        return Snippet("deepspeed-json", "json", code, at, True)
    py = next((e for e in r.evidence if e.path.endswith(".py")), None)  # Python goes into a Python file the check cites
    return Snippet("python", "python", code, f"{py.path}:{py.line}" if py else style.where.get("python"), True)

def _order_key(rec: Recommendation, seed_pos: Mapping[str, int], inference_only: bool) -> tuple:
    order = data("priority_order")
    fourth = order["fourth_step"]
    scenario = order["scenario_inference" if inference_only else "scenario_training"]
    f = fourth.index(rec.check) if rec.check in fourth else len(fourth)
    s = scenario.index(rec.check) if rec.check in scenario else len(scenario)
    lists = (s, f) if inference_only else (f, s)
    # a project that trains gets its training advice first: inference advice (J) follows training advice of the same
    # priority (nanochat's chat engine put three J items above every training recommendation); an inference-only
    # project is ordered by scenario B
    inference_later = 1 if not inference_only and rec.category == "J" else 0
    return (rec.priority.rank, inference_later, 0 if rec.matches_bottleneck else 1, *lists, seed_pos.get(rec.check, 999))


def _seed_order(checks: Mapping[str, Check]) -> dict[str, int]:
    ids = sorted(checks, key=lambda i: (i[0], int(i[1:]) if i[1:].isdigit() else 0))
    return {cid: n for n, cid in enumerate(ids)}


def build_plan(audit: Audit, checks: Mapping[str, Check] | None = None) -> Plan:
    """The ordered recommendations and the advice withheld for this project.

    ``checks`` maps IDs to declarations (default: the registry); tests pass their own.
    """
    if checks is None:
        all_checks()
        checks = REGISTRY
    p = audit.project
    if not audit.training_code_found:  # nothing was audited: no advice (the report says "no training code found")
        return Plan()
    hw: GPU | None = gpu(p.hardware)
    by_id: dict[str, CheckResult] = {r.id: r for r in audit.results}
    style = audit.derived.get("style") or repo_style(audit.facts, p, audit.roles.by_path)  # kept by a recorded audit
    plan = Plan()
    cap = audit.derived["torch_cap"] if "torch_cap" in audit.derived else torch_cap(audit)  # kept by a recorded audit
    hf_cap = audit.derived["hf_cap"] if "hf_cap" in audit.derived else transformers_cap(audit)
    for r in audit.results:
        decl = checks.get(r.id)
        if decl is None or r.priority is None or r.status not in (Status.UNUSED, Status.PARTIAL):
            continue
        why_not = withhold_reason(r, p, by_id, hw)
        if why_not:
            plan.withheld.append(Withheld(r.id, r.title, *why_not))
            continue
        own_loader = jax_text(r.id, p) or loader_text(r.id, r.values)
        text, text_zh = hardware_text(r.id, hw) or (own_loader[:2] if own_loader else None) or (r.recommendation or decl.fix, decl.fix_zh)
        if first := transformers_first(r.id, hf_cap, text):
            text, text_zh = first[0] + text, first[1] + (text_zh or "")
        if first := torch_first(r.id, cap):
            text, text_zh = first[0] + text, first[1] + (text_zh or "")
        priority = r.priority
        if r.id == "G4" and not p.adapter_training and (p.finetunes or p.alignment):
            # seed: LoRA is an option to weigh for a full fine-tune or RL/preference run (quality vs memory), not an
            # acceleration must-do
            priority = Priority.LOW
        if r.category == "J" and p.does_training and priority is Priority.HIGH:
            # in a repository that trains, serving throughput is secondary to the training step: at most Medium
            priority = Priority.MEDIUM
        plan.recommendations.append(
            Recommendation(
                check=r.id,
                category=r.category,
                title=r.title,
                title_zh=decl.title_zh,
                priority=priority,
                status=r.status,
                text=text,
                text_zh=text_zh,
                benefit=own_benefit[0] if (own_benefit := loader_benefit(r.id, r.values)) else decl.benefit,
                benefit_zh=own_benefit[1] if own_benefit else
                getattr(decl, "benefit_zh", "") or data("benefits_zh").get(r.id) or decl.benefit,
                evidence=list(r.evidence),
                findings=list(r.findings),
                detail=r.detail,
                matches_bottleneck=p.bottleneck != Bottleneck.UNKNOWN and p.bottleneck in decl.bottlenecks,
                fix_safety=decl.fix_safety,
                # the pipeline's own file: where the check found it
                snippet=((_own_snippet(own_loader[2], r, style) if own_loader[2] else None) if own_loader else fit(decl, style, hw)),
            )
        )
    seed_pos = _seed_order(checks)
    inference_only = p.does_inference and not p.does_training
    plan.recommendations.sort(key=lambda rec: _order_key(rec, seed_pos, inference_only))
    _one_per_change(plan, p)
    _dedupe_places(plan)
    return plan


#: checks whose advice is one underlying change: shard parameters and optimizer state (FSDP, ZeRO-3, or the
#: framework that brings it), or move to another training framework; only the best-placed one is recommended
ALTERNATIVES: tuple[tuple[str, ...], ...] = (
    ("A2", "A3", "B1", "B5"), ("B2", "B3", "B4", "B6"),
    # tokenize once offline into a file read at training time: Arrow ``save_to_disk`` / ``tokenized_path`` /
    # Megatron's ``preprocess_data.py`` / a ``.bin`` of token ids are each both F6 and F10
    ("F6", "F10"),
    # ``prefetch_factor`` only works with loader workers: setting the workers is the change
    ("F1", "F2"),
    # ``torch.compile(mode="reduce-overhead")`` is D4's CUDA graphs through D2's compile
    ("D2", "D4"),
    # a side-stream prefetcher starts with pinned batches and non-blocking copies
    ("F3", "F11"),
)


def _preferred(group: tuple[str, ...], frameworks: set[str]) -> list[str]:
    """The group in the order that fits the project: ZeRO where DeepSpeed is set up, FSDP where accelerate/FSDP is."""
    if group[0] == "A2":
        if "deepspeed" in frameworks:
            return ["A3", "B1", "A2", "B5"]
        return ["A2", "B5", "A3", "B1"]
    if group == ("F6", "F10") and "megatron" in frameworks and not {"llamafactory", "axolotl", "trl", "peft"} & frameworks:
        return ["F10", "F6"]  # Megatron reads indexed .bin/.idx files written by tools/preprocess_data.py
    return list(group)


def _one_per_change(plan: Plan, p: Any) -> None:
    fw = set(p.frameworks)
    for group in ALTERNATIVES:
        present = {r.check: r for r in plan.recommendations if r.check in group}
        if len(present) < 2:
            continue
        keep = next(c for c in _preferred(group, fw) if c in present)
        kept = present[keep]
        for cid, rec in present.items():
            if cid == keep:
                continue
            plan.recommendations.remove(rec)
            plan.withheld.append(Withheld(cid, rec.title, f"the same change as {keep} ({kept.title}): one choice, recommended there",
                                          f"与 {keep}（{kept.title_zh}）是同一项改动，二选一，见该建议"))
            kept.priority = min(kept.priority, rec.priority, key=lambda x: x.rank)


def _dedupe_places(plan: Plan) -> None:
    """A line that triggers several recommendations (I4 and I5 on one ``logging_steps``) is listed once, under the first."""
    seen: dict[tuple[str, int], str] = {}
    for rec in plan.recommendations:
        trigger = rec.findings or rec.evidence
        fresh = [e for e in trigger if (e.path, e.line) not in seen]
        shared = sorted({seen[(e.path, e.line)] for e in trigger if (e.path, e.line) in seen})
        if shared and len(fresh) < len(trigger):
            if rec.findings:
                rec.findings = fresh
            else:
                rec.evidence = fresh
            if not fresh:
                rec.detail = f"same place(s) as {', '.join(shared)}"
                rec.detail_zh = f"与 {'、'.join(shared)} 相同的位置"
        for e in trigger:
            seen.setdefault((e.path, e.line), rec.check)
