"""Shapes the review produces; the bot posts them, ``accel-audit pr`` prints them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Change:
    """A regression or an improvement between the base and head audits.

    The contract the autofix (``autofix/``) reads to revert a regression:

    - ``check``: check ID; ``kind``: "regression" | "improvement";
    - ``path``/``line``/``side``: where the comment goes (``side`` "RIGHT": the head line that sets
      ``after``; "LEFT": the removed base line that set ``before``);
    - ``key``: the setting as written at that line: a YAML/JSON key path (``save_steps``,
      ``zero_optimization.stage``), a call keyword (``DataLoader(num_workers=)``) or a launcher flag
      as the line spells it (``--num-workers``);
    - ``before``/``after``: the base and head values (canonical: precision "bf16"/"fp32", numbers,
      booleans); for a new site ``before`` is the repository's prevailing value or the threshold;
    - ``base_path``/``base_line``/``base_key``/``base_raw``: where base set it and the value as written
      there (None for a new site); ``head_path``/``head_line``/``head_raw`` likewise for head;
    - ``site``: the run configuration (``configs/a.yaml``, ``scripts/run.sh::torchrun pretrain_gpt.py#0``,
      ``train.py::DataLoader@main#0``); ``sites``: every site the change applies to (a shared defaults
      file changes all recipes that inherit it); ``new_site``: the PR adds that site;
    - ``placed``: the line is in the diff (an inline comment can target it);
    - ``suppressed_by_pr``: the PR marked the regressed line ``# accel-ignore`` (still counted by the gate).
    """

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
    site: str | None = None  # per-site comparison: the run configuration (see the class docstring)
    sites: list[str] = field(default_factory=list)
    new_site: bool = False
    base_path: str | None = None
    base_line: int | None = None
    base_key: str | None = None
    base_raw: Any = None
    head_path: str | None = None
    head_line: int | None = None
    head_raw: Any = None
    placed: bool = False
    suppressed_by_pr: bool = False


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
    suppressed_by_pr: list[Change] = field(default_factory=list)  # regressions the PR silenced with ``accel-ignore`` (still counted)
    sites_compared: int = 0

    @property
    def has_regression(self) -> bool:
        return bool(self.regressions)
