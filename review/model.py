"""Shapes the review produces; the bot posts them, ``accel-audit pr`` prints them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Change:
    """A regression or an improvement between the base and head audits."""

    check: str  # check ID, e.g. "I3"
    kind: str  # "regression" | "improvement"
    what: str  # e.g. "save_steps 500 -> 1"
    why: str  # why it costs, with the expected impact ("500x more checkpoint writes")
    path: str | None = None  # where the head (or base, for removals) sets it
    line: int | None = None
    side: str = "RIGHT"  # "RIGHT" for added/changed lines, "LEFT" for removed lines
    key: str | None = None  # setting key / call site, for suggestions and autofix
    before: Any = None
    after: Any = None
    suggestion: str | None = None  # replacement text for the commented line, when the fix is an edit of it
    fingerprint: str = ""  # stable: check ID + path + finding
    finding: str = ""  # what the finding is about: a value name ("save_steps"), "status", an NCCL variable, a finding key
    what_zh: str = ""  # Chinese wording of ``what`` / ``why`` (empty: the English text is used)
    why_zh: str = ""


@dataclass(slots=True)
class InlineComment:
    path: str
    line: int
    side: str  # "RIGHT" | "LEFT"
    body: str  # markdown, ends with the hidden fingerprint marker
    fingerprint: str
    start_line: int | None = None
    start_side: str | None = None
    also: list[str] = field(default_factory=list)  # fingerprints of further findings on the same line, folded into this comment


@dataclass(slots=True)
class PRReview:
    regressions: list[Change] = field(default_factory=list)
    improvements: list[Change] = field(default_factory=list)
    comments: list[InlineComment] = field(default_factory=list)  # validated against the diff's hunks
    unplaced: list[Change] = field(default_factory=list)  # causes not in the diff, or over max_inline: check run only
    category_delta: dict[str, float] = field(default_factory=dict)  # "C": -1.0
    summary_md: str = ""  # the "Changes in this PR" section of the check run

    @property
    def has_regression(self) -> bool:
        return bool(self.regressions)
