"""SARIF 2.1.0 for GitHub code scanning.

One rule per registered check (help text from its declaration). Results: every recommendation
of high priority (a missing or partial practice worth > 30 % or a scaling prerequisite), and
every finding of I3-I5 (too-frequent checkpointing, logging, progress reporting) at its line.
A result sits at its first evidence location; without evidence it sits at the project's training
entry point (GitHub shows a result only with a location). ``partialFingerprints`` hash the rule,
the file and the evidence key or text, not the line number, so an alert survives edits above it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from accel_audit import __version__
from checks.base import REGISTRY, Check, all_checks
from checks.engine import Audit
from checks.model import CATEGORIES, Evidence, Priority

from .advice import Plan, Recommendation, build_plan

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINDING_CHECKS = ("I3", "I4", "I5")
FINGERPRINT_KEY = "accelAudit/v1"
MAX_LOCATIONS = 1  # GitHub: one location unless every location must change


def _rule_name(title: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", title)
    return "".join(w[:1].upper() + w[1:] for w in words) or "Check"


def _rule(check: Check) -> dict[str, Any]:
    help_md = (
        f"**{check.id} {check.title}**\n\n{check.what}\n\n**Why it matters.** {check.why}\n\n**Fix.** {check.fix}"
        + (f"\n\n**Expected benefit.** {check.benefit}" if check.benefit else "")
        + ("\n\n" + "\n".join(f"- {r}" for r in check.references) if check.references else "")
    )
    help_text = f"{check.what}\n\nWhy it matters: {check.why}\n\nFix: {check.fix}"
    level = "warning" if check.priority == Priority.HIGH else "note"
    return {
        "id": check.id,
        "name": _rule_name(check.title),
        "shortDescription": {"text": f"{check.id} {check.title}"},
        "fullDescription": {"text": check.what},
        "help": {"text": help_text, "markdown": help_md},
        "defaultConfiguration": {"level": level},
        "properties": {
            "tags": ["performance", "training-acceleration", CATEGORIES[check.category][0].lower()],
            "precision": "medium",
            "priority": check.priority.value,
            "fix_safety": check.fix_safety.value,
        },
    }


def _entry_point(audit: Audit) -> str | None:
    if audit.roles.entry_points:  # a missing practice is attached to the training entry point (checks.roles)
        return audit.roles.entry_points[0]
    f = audit.facts
    for group in (f.launches(), f.calls("backward"), f.calls("Trainer", "SFTTrainer", "TrainingArguments")):
        if group:
            return sorted(group, key=lambda x: (x.path, x.line))[0].path
    py = sorted(f.files_of_kind("python"))
    return py[0] if py else None


def _location(path: str, line: int) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": quote(path, safe="/")}, "region": {"startLine": max(1, line)}}}


def _fingerprint(rule: str, path: str, anchor: str) -> str:
    return hashlib.sha256(f"{rule}\0{path}\0{' '.join(anchor.split())}".encode()).hexdigest()[:32]


def _result(rule_index: dict[str, int], rec: Recommendation, where: Evidence | None, entry: str | None, message: str, level: str) -> dict[str, Any] | None:
    out: dict[str, Any] = {"ruleId": rec.check, "level": level, "message": {"text": message}}
    if rec.check in rule_index:
        out["ruleIndex"] = rule_index[rec.check]
    if where is not None:
        out["locations"] = [_location(where.path, where.line)]
        out["partialFingerprints"] = {FINGERPRINT_KEY: _fingerprint(rec.check, where.path, where.key or where.snippet)}
    elif entry is not None:
        out["locations"] = [_location(entry, 1)]
        out["partialFingerprints"] = {FINGERPRINT_KEY: _fingerprint(rec.check, entry, "missing")}
    else:
        return None  # nothing in the repository to attach it to
    out["properties"] = {"priority": rec.priority.value, "status": rec.status.value}
    return out


def to_sarif(audit: Audit, plan: Plan | None = None, checks: Mapping[str, Check] | None = None) -> dict[str, Any]:
    """The SARIF log. ``checks`` maps IDs to declarations (default: the registry); tests pass their own."""
    if checks is None:
        all_checks()
        checks = REGISTRY
    plan = plan if plan is not None else build_plan(audit, checks)
    rules = [_rule(checks[r.id]) for r in audit.results if r.id in checks]
    rule_index = {r["id"]: n for n, r in enumerate(rules)}
    entry = _entry_point(audit)
    results: list[dict[str, Any]] = []
    for rec in plan.recommendations:
        base = f"{rec.check} {rec.title}: {rec.text}" + (f" Expected benefit: {rec.benefit}." if rec.benefit else "")
        if rec.check in FINDING_CHECKS and rec.findings:
            for e in rec.findings:
                msg = f"{rec.check} {rec.title}: `{' '.join(e.snippet.split())}` is too frequent. {rec.text}"
                r = _result(rule_index, rec, e, entry, msg, "warning" if rec.priority == Priority.HIGH else "note")
                if r:
                    results.append(r)
            continue
        if rec.priority != Priority.HIGH:
            continue
        ev = rec.evidence[0] if rec.evidence else None
        detail = f" Found: {rec.detail}." if rec.detail else ""
        r = _result(rule_index, rec, ev, entry, base + detail, "warning")
        if r:
            results.append(r)
    for r in audit.results:  # I3-I5 findings whose advice is not in the plan (in use, but with a too-frequent setting)
        if r.id in FINDING_CHECKS and r.findings and plan.get(r.id) is None and r.id in checks:
            decl = checks[r.id]
            for e in r.findings:
                results.append({
                    "ruleId": r.id,
                    "ruleIndex": rule_index[r.id],
                    "level": "note",
                    "message": {"text": f"{r.id} {r.title}: `{' '.join(e.snippet.split())}` is too frequent. {decl.fix}"},
                    "locations": [_location(e.path, e.line)],
                    "partialFingerprints": {FINGERPRINT_KEY: _fingerprint(r.id, e.path, e.key or e.snippet)},
                    "properties": {"status": r.status.value},
                })
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "accel-audit", "version": __version__, "semanticVersion": __version__, "rules": rules}},
            "results": results,
            "columnKind": "unicodeCodePoints",
            "properties": {"bottleneck": audit.project.bottleneck.value},
        }],
    }
