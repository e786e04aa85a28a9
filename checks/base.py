"""A check is one small class: its ID, its text, when it applies, its detection, its examples.

Fixit-style: the examples live with the check and the test suite runs every one of
them; Ruff-style: the ID is stable and ``docs/checks.md`` is generated from these
declarations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .facts import Facts
from .model import Bottleneck, Example, FixSafety, Outcome, Priority, Project, Status


@dataclass(frozen=True, slots=True)
class Context:
    """What a check sees: the facts (already filtered by ``accel-ignore`` for this check) and the overview."""

    facts: Facts
    project: Project


class Check:
    id: ClassVar[str]
    title: ClassVar[str]
    title_zh: ClassVar[str]
    bottlenecks: ClassVar[tuple[Bottleneck, ...]] = ()
    #: priority of the recommendation when the practice is missing (seed, "fourth step")
    priority: ClassVar[Priority] = Priority.MEDIUM
    #: expected benefit, as the recommendation states it ("~2x matmul throughput on A100/H100")
    benefit: ClassVar[str] = ""
    what: ClassVar[str]  # what it checks
    why: ClassVar[str]  # why it matters: published numbers and their conditions
    fix: ClassVar[str]  # what to do
    fix_zh: ClassVar[str]
    fix_safety: ClassVar[FixSafety] = FixSafety.DISPLAY_ONLY
    references: ClassVar[tuple[str, ...]] = ()
    #: ready-to-paste snippets by target: "hf-yaml", "deepspeed-json", "accelerate-yaml", "python", "shell", "lightning"
    snippets: ClassVar[dict[str, str]] = {}
    examples: ClassVar[tuple[Example, ...]] = ()

    @property
    def category(self) -> str:
        return self.id[0]

    def not_applicable(self, ctx: Context) -> str | None:
        """The reason the check does not apply to this project, or None."""
        return None

    def detect(self, ctx: Context) -> Outcome:
        raise NotImplementedError

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        """Priority of advice for this outcome; None when nothing is to be recommended."""
        if outcome.status in (Status.UNUSED, Status.PARTIAL):
            return self.priority
        return None


REGISTRY: dict[str, Check] = {}


def _sort_key(check_id: str) -> tuple[str, int]:
    return check_id[0], int(check_id[1:])


def register(cls: type[Check]) -> type[Check]:
    """Class decorator: add one instance of the check to the registry."""
    inst = cls()
    for attr in ("id", "title", "title_zh", "what", "why", "fix", "fix_zh"):
        if not getattr(cls, attr, None):
            raise TypeError(f"{cls.__name__} lacks {attr}")
    if inst.id in REGISTRY:
        raise ValueError(f"duplicate check id {inst.id}")
    REGISTRY[inst.id] = inst
    return cls


def all_checks() -> list[Check]:
    from . import rules  # noqa: F401  (imports register every check)

    return [REGISTRY[k] for k in sorted(REGISTRY, key=_sort_key)]
