"""Run one check of G/H/J on a tiny in-memory repository."""

from __future__ import annotations

from checks.base import REGISTRY, all_checks
from checks.engine import AuditOptions, build_facts, run_checks
from checks.model import CheckResult, Project
from checks.project import detect_project


def audit(files: dict[str, str], check_id: str) -> tuple[CheckResult, Project]:
    all_checks()
    facts = build_facts((path, text.encode()) for path, text in files.items())
    project = detect_project(facts)
    [result], _ = run_checks(facts, project, AuditOptions(), [REGISTRY[check_id]])
    return result, project


def status(files: dict[str, str], check_id: str) -> str:
    return audit(files, check_id)[0].status.value
