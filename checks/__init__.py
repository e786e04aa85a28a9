"""accel-audit's static audit engine: facts from a repository, 63 checks over them."""

from .engine import Audit, AuditOptions, audit_files, audit_path, audit_tarball
from .model import CheckResult, Evidence, Outcome, Project, Status
from .source import Limits, SourceError

__all__ = [
    "Audit", "AuditOptions", "CheckResult", "Evidence", "Limits", "Outcome", "Project", "SourceError", "Status",
    "audit_files", "audit_path", "audit_tarball",
]
