"""The JSON report of ``../shared/spec/check-ids.md`` (``schema_version`` 1), plus a ``scan`` block.

Per-check ``recommendation``/``priority`` and the ``recommendations`` list come from the same
plan as the Markdown report: advice withheld for this project (see :mod:`reports.applicability`)
is null there and listed under ``withheld``.
"""

from __future__ import annotations

from typing import Any

from checks.engine import Audit

from .advice import Plan, build_plan
from .scoring import category_scores, overall

SCHEMA_VERSION = 1


def recommendations(audit: Audit, plan: Plan | None = None) -> list[dict[str, Any]]:
    plan = plan if plan is not None else build_plan(audit)
    return [r.to_json() for r in plan.recommendations]


def _check(result_json: dict[str, Any], plan: Plan) -> dict[str, Any]:
    rec = plan.get(result_json["id"])
    result_json["recommendation"] = rec.text if rec else None
    result_json["priority"] = rec.priority.value if rec else None
    return result_json


def to_json(audit: Audit) -> dict[str, Any]:
    plan = build_plan(audit)
    project = audit.project.to_json()
    project["bottleneck_reasons_zh"] = list(audit.project.notes.get("bottleneck_reasons_zh", []))
    project["hardware"] = audit.project.hardware
    project["training_code_found"] = audit.training_code_found
    return {
        "schema_version": SCHEMA_VERSION,
        "project": project,
        "checks": [_check(r.to_json(), plan) for r in audit.results],
        "categories": [c.to_json() for c in category_scores(audit.results)],
        "score": overall(audit.results).to_json(),
        "recommendations": [r.to_json() for r in plan.recommendations],
        "withheld": [w.to_json() for w in plan.withheld],
        "scan": {
            "files_read": audit.stats.files_read,
            "bytes_read": audit.stats.bytes_read,
            "skipped": [{"path": s.path, "reason": s.reason} for s in audit.stats.skipped],
            "parse_errors": [{"path": p, "error": e} for p, e in audit.parse_errors],
            "ignored_checks": audit.ignored,
            "roles": audit.roles.counts(),
            "entry_points": audit.roles.entry_points,
        },
        # every scanned file's role: only in-scope files decide statuses and step zero (checks.roles)
        "files": audit.roles.to_json(),
    }
