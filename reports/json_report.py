"""The JSON report of ``../shared/spec/check-ids.md`` (``schema_version`` 1)."""

from __future__ import annotations

from typing import Any

from checks.engine import Audit
from checks.model import Priority

from .scoring import category_scores, overall

SCHEMA_VERSION = 1


def recommendations(audit: Audit) -> list[dict[str, Any]]:
    recs = [r for r in audit.results if r.priority is not None and r.recommendation]
    recs.sort(key=lambda r: (r.priority.rank if isinstance(r.priority, Priority) else 9, r.id[0], int(r.id[1:])))
    return [{"check": r.id, "priority": r.priority.value, "text": r.recommendation, "snippet": None} for r in recs if r.priority]


def to_json(audit: Audit) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "project": audit.project.to_json(),
        "checks": [r.to_json() for r in audit.results],
        "categories": [c.to_json() for c in category_scores(audit.results)],
        "score": overall(audit.results).to_json(),
        "recommendations": recommendations(audit),
        "scan": {
            "files_read": audit.stats.files_read,
            "bytes_read": audit.stats.bytes_read,
            "skipped": [{"path": s.path, "reason": s.reason} for s in audit.stats.skipped],
            "parse_errors": [{"path": p, "error": e} for p, e in audit.parse_errors],
            "ignored_checks": audit.ignored,
        },
    }
