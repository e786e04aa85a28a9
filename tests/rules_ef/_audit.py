"""Run selected checks on an in-memory repository (shared by the E/F rule tests)."""

from __future__ import annotations

from checks.base import all_checks
from checks.engine import AuditOptions, build_facts, run_checks
from checks.model import CheckResult, Project
from checks.project import detect_project


def audit(files: dict[str, str], *ids: str) -> tuple[dict[str, CheckResult], Project]:
    facts = build_facts((path, text.encode()) for path, text in files.items())
    project = detect_project(facts)
    checks = [c for c in all_checks() if c.id in ids]
    results, _ = run_checks(facts, project, AuditOptions(), checks)
    return {r.id: r for r in results}, project
