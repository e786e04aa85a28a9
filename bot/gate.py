"""The check run's conclusion from the repository's gate policy.

GitHub lets a required status check pass on ``success``, ``skipped`` and ``neutral``: only ``failure`` and
``action_required`` block a merge. The default gate blocks on a regression (``fail_on_regression``, as
Codecov's and SonarCloud's default gates: it only blocks where the repository makes the check required); a
repository that turns it off gets ``neutral`` for a regression (visible, not blocking).

An audit that cannot finish on a gated repository is not a pass: :func:`gave_up` gives the gate's blocking
conclusion with the reason (``neutral`` would let a pull request switch off its own gate by crashing the audit).
"""

from __future__ import annotations

from dataclasses import dataclass

from .repo_config import Gate


@dataclass(frozen=True, slots=True)
class Verdict:
    conclusion: str
    reasons: tuple[str, ...] = ()

    @property
    def blocks(self) -> bool:
        return self.conclusion in ("failure", "action_required")


def decide(gate: Gate, percent: float, has_regression: bool) -> Verdict:
    reasons: list[str] = []
    if gate.min_score is not None and percent < gate.min_score:
        reasons.append(f"overall score {percent:g}% is under the gate's minimum of {gate.min_score:g}%")
    if gate.fail_on_regression and has_regression:
        reasons.append("this pull request makes training slower (gate.fail_on_regression is on)")
    if reasons:
        return Verdict(gate.conclusion, tuple(reasons))
    if has_regression and not gate.fail_on_regression:
        return Verdict("neutral", ("regressions found; the repository's gate does not block on them",))
    return Verdict("success")


def gave_up(gate: Gate, reason: str) -> Verdict:
    """The conclusion of an audit that could not finish: blocking on a gated repository, else ``neutral``."""
    if gate.configured:
        return Verdict(gate.conclusion, (f"the audit could not finish: {reason}",))
    return Verdict("neutral", (f"the audit could not finish: {reason}",))
