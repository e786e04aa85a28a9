"""From an audit to verified edits: collect (regressions first, then the catalog), apply, re-parse, re-audit.

A fix is proposed only when its file still parses and a re-audit of the edited tree shows its check improved
(or the site now reads the new value) while no other check got worse. A fix that fails is dropped and
reported with the reason; nothing unverified is ever written or committed.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

from checks.engine import Audit, AuditOptions, run_checks
from checks.facts import Facts, extract_file
from checks.model import CheckResult, FixSafety, Status
from reports.scoring import overall

from . import editors
from .catalog import recommend
from .diff import unified_all
from .model import Dropped, Edit, EditRefused
from .regressions import restore


@dataclass(slots=True)
class FixPlan:
    edits: list[Edit] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    originals: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # path -> new text (edited files only)
    score_before: float = 0.0
    score_after: float = 0.0
    results_after: list[CheckResult] = field(default_factory=list)
    elsewhere: int = 0  # recommendations in files the pull request does not touch (not proposed)

    def diff(self) -> str:
        return unified_all(self.originals, self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "edits": [e.to_json() for e in self.edits],
            "dropped": [d.to_json() for d in self.dropped],
            "score": {"before": self.score_before, "after": self.score_after},
            "files": sorted(self.files),
            "elsewhere": self.elsewhere,
        }


def reparses(path: str, text: str) -> str | None:
    """None when the edited file still parses, else why not."""
    low = path.lower()
    try:
        if low.endswith((".yaml", ".yml")):
            list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
        elif low.endswith(".json"):
            json.loads(text)
        elif low.endswith(".py"):
            ast.parse(text)
    except (yaml.YAMLError, ValueError, SyntaxError) as exc:
        return f"the edited file does not parse: {str(exc).splitlines()[0]}"
    return None


def reaudit(audit: Audit, changed: dict[str, str]) -> list[CheckResult]:
    """The checks of ``audit``'s tree with ``changed`` files re-parsed (every other file's facts reused)."""
    from checks.bottleneck import classify_bottleneck
    from checks.project import detect_project

    files = dict(audit.facts.files)
    for p, t in changed.items():
        files[p] = extract_file(p, t.encode("utf-8"))
    facts = Facts(files.values())
    project = detect_project(facts, hardware=audit.project.hardware)
    results, _ = run_checks(facts, project, AuditOptions(ignore=tuple(audit.ignored)))
    classify_bottleneck(facts, project, results)
    return results


def _norm(v: Any) -> str:
    return str(v).strip().strip("\"'").lower()


def _improved(edit: Edit, before: dict[str, CheckResult], after: dict[str, CheckResult]) -> bool:
    for c in edit.checks:
        b, a = before.get(c), after.get(c)
        if b is None or a is None:
            continue
        if a.status.points > b.status.points or len(a.findings) < len(b.findings):
            return True
        if b.status == Status.NA and a.status != Status.NA:
            return True
        want = _norm(edit.after if edit.raw_line is None else "")
        if edit.raw_line is None and any(e.path == edit.site.path and _norm(e.value) == want for e in a.evidence):
            return True
        if edit.raw_line is None and edit.before is not None and _site_cleared(edit, b, a):
            return True
    return False


def _site_cleared(edit: Edit, b: CheckResult, a: CheckResult) -> bool:
    """The check listed the edited site with its old value before the edit and no longer does."""
    old = _norm(edit.before)
    was = any(e.path == edit.site.path and e.line == edit.site.line and _norm(e.value) == old for e in [*b.evidence, *b.findings])
    line = edit.line_after or edit.site.line
    still = any(e.path == edit.site.path and e.line == line and _norm(e.value) == old for e in [*a.evidence, *a.findings])
    return was and not still


def _worse(before: dict[str, CheckResult], after: dict[str, CheckResult]) -> list[str]:
    out = []
    for cid, b in before.items():
        a = after.get(cid)
        if a is None:
            continue
        if a.status.points < b.status.points or (a.status != Status.NA and b.status != Status.NA and len(a.findings) > len(b.findings)):
            out.append(f"{cid} {b.status.value} -> {a.status.value}")
    return out


def _apply_all(edits: list[Edit], read: Callable[[str], str | None], plan: FixPlan) -> tuple[list[Edit], dict[str, str]]:
    """Apply edits file by file (bottom-up, so line numbers stay valid); refusals become ``dropped``."""
    by_file: dict[str, list[Edit]] = {}
    for e in edits:
        by_file.setdefault(e.site.path, []).append(e)
    kept: list[Edit] = []
    out: dict[str, str] = {}
    for path, group in by_file.items():
        text = plan.originals.get(path)
        if text is None:
            text = read(path)
            if text is None:
                for e in group:
                    plan.dropped.append(Dropped(e.check, path, e.site.line, "the file could not be read as UTF-8 text"))
                continue
            plan.originals[path] = text
        cur = text
        applied: list[Edit] = []
        for e in sorted(group, key=lambda e: -(e.insert_at + 1 if e.insert_at is not None else e.site.line)):
            try:
                new, line0 = editors.apply(cur, e)
            except EditRefused as exc:
                plan.dropped.append(Dropped(e.check, path, e.site.line, str(exc)))
                continue
            except (KeyError, IndexError) as exc:
                plan.dropped.append(Dropped(e.check, path, e.site.line, f"the site was not found ({exc})"))
                continue
            if new == cur:
                continue  # already so: idempotent
            old_lines = cur.split("\n")
            new_lines = new.split("\n")
            grew = len(new_lines) > len(old_lines)
            e.before_text = old_lines[line0].rstrip("\r") if not grew and line0 < len(old_lines) else ""
            e.after_text = new_lines[line0].rstrip("\r") if line0 < len(new_lines) else ""
            why = reparses(path, new)
            if why:
                plan.dropped.append(Dropped(e.check, path, e.site.line, why))
                continue
            cur = new
            applied.append(e)
        if applied:
            _renumber(text, cur, applied)
            out[path] = cur
            kept.extend(applied)
    return kept, out


def _renumber(old: str, new: str, edits: list[Edit]) -> None:
    """Each edit's 1-based line in the final text (found by its new line's content near where it was made)."""
    lines = new.split("\n")
    for e in edits:
        target = e.after_text
        guess = (e.insert_at if e.insert_at is not None else e.site.line - 1)
        best = None
        for d in range(0, len(lines)):
            for i in (guess + d, guess - d):
                if 0 <= i < len(lines) and lines[i].rstrip("\r") == target:
                    best = i
                    break
            if best is not None:
                break
        e.line_after = (best if best is not None else guess) + 1


def plan_fixes(
    audit: Audit,
    read: Callable[[str], str | None],
    *,
    only: Iterable[str] = (),
    unsafe: bool = False,
    regressions: Iterable[Any] = (),
    base_read: Callable[[str], str | None] | None = None,
    unsafe_regressions: bool = False,
    named_unsafe: bool = False,
    touched: set[str] | None = None,
    verify: bool = True,
) -> FixPlan:
    """Verified edits for ``audit``'s tree.

    ``only``: these checks (IDs); ``unsafe``: unsafe fixes too (the CLI's ``--unsafe-fixes``); ``named_unsafe``: a
    check named in ``only`` counts as asking for its unsafe fix (``/accel fix C1``); ``unsafe_regressions``: the
    PR's own regressions are restored whatever their grade (they return to the base's state); ``touched``: the
    files a pull request changes: recommendations elsewhere are left out (counted in ``elsewhere``).
    """
    only_set = {x.upper() for x in only}
    plan = FixPlan()
    before = {r.id: r for r in audit.results}
    plan.score_before = plan.score_after = overall(audit.results).percent
    regs = [c for c in regressions if getattr(c, "kind", "regression") == "regression"]
    edits: list[Edit] = []
    if regs and base_read is not None:
        paths = {c.path for c in regs if c.path}
        head_files = {p: t for p in paths if (t := read(p)) is not None}
        base_files = {p: t for p in paths if (t := base_read(p)) is not None}
        r_edits, r_dropped = restore(regs, base_files, head_files, only=only_set or None)
        plan.dropped += r_dropped
        for e in r_edits:
            if e.safety == FixSafety.UNSAFE and not (unsafe or unsafe_regressions or (named_unsafe and e.check in only_set)):
                plan.dropped.append(Dropped(e.check, e.site.path, e.site.line, "unsafe fix (changes numerics or memory): ask for it by ID or with --unsafe-fixes"))
                continue
            edits.append(e)
    rec, rec_dropped = recommend(audit, only_set or None)
    plan.dropped += [d for d in rec_dropped if d.path]
    taken = {(e.site.path, e.site.key) for e in edits}
    restored = {c for e in edits for c in e.checks}
    for e in rec:
        if touched is not None and e.site.path not in touched:
            plan.elsewhere += 1
            continue
        if (e.site.path, e.site.key) in taken or any(c in restored for c in e.checks):
            continue  # the regression restore already covers this check
        if e.safety == FixSafety.UNSAFE and not (unsafe or (named_unsafe and e.check in only_set)):
            plan.dropped.append(Dropped(e.check, e.site.path, e.site.line, "unsafe fix (changes numerics or memory): ask for it by ID or with --unsafe-fixes"))
            continue
        edits.append(e)
    kept, files = _apply_all(edits, read, plan)
    if not kept:
        return plan
    if not verify:
        plan.edits, plan.files = kept, files
        return plan
    after_results = reaudit(audit, files)
    after = {r.id: r for r in after_results}
    failing = [e for e in kept if not _improved(e, before, after)]
    worse = _worse(before, after)
    if not failing and not worse:
        plan.edits, plan.files, plan.results_after = kept, files, after_results
        plan.score_after = overall(after_results).percent
        return plan
    if failing and not worse:
        # only some edits did not help: drop them and confirm the rest with one more re-audit
        rest = [e for e in kept if e not in failing]
        for e in failing:
            plan.dropped.append(Dropped(e.check, e.site.path, e.site.line, "dropped after verification: the re-audit does not show the check improved"))
        if not rest:
            return plan
        sub = FixPlan(originals=plan.originals)
        final, files2 = _apply_all([_fresh(x) for x in rest], read, sub)
        res = reaudit(audit, files2)
        aft = {r.id: r for r in res}
        if len(final) == len(rest) and not _worse(before, aft) and all(_improved(e, before, aft) for e in final):
            plan.edits, plan.files, plan.results_after = final, files2, res
            plan.score_after = overall(res).percent
            return plan
        kept = rest
    # find the culprits: add the edits one at a time, keeping each that verifies
    good: list[Edit] = []
    final_results = audit.results
    for e in kept:
        trial = [*good, e]
        sub = FixPlan(originals=plan.originals)
        _, trial_files = _apply_all([_fresh(x) for x in trial], read, sub)
        res = reaudit(audit, trial_files)
        aft = {r.id: r for r in res}
        w = _worse(before, aft)
        if _improved(e, before, aft) and not w:
            good, _good_files, final_results = trial, trial_files, res
        else:
            why = f"other checks got worse ({', '.join(w)})" if w else "the re-audit does not show the check improved"
            plan.dropped.append(Dropped(e.check, e.site.path, e.site.line, f"dropped after verification: {why}"))
    if good:
        final, files2 = _apply_all([_fresh(x) for x in good], read, FixPlan(originals=plan.originals))
        plan.edits, plan.files, plan.results_after = final, files2, final_results
        plan.score_after = overall(final_results).percent
    return plan


def _fresh(e: Edit) -> Edit:
    import dataclasses

    return dataclasses.replace(e, also=list(e.also), line_after=None, before_text="", after_text="")
