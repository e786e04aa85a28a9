"""Build small audits for report tests: fake check declarations and hand-made results."""

from __future__ import annotations

from checks.base import Check
from checks.engine import Audit, build_facts
from checks.model import Bottleneck, CheckResult, Evidence, FixSafety, Priority, Project, Status
from checks.source import ReadStats


def fake_check(cid: str, *, priority: Priority = Priority.MEDIUM, bottlenecks: tuple[Bottleneck, ...] = (),
               snippets: dict[str, str] | None = None, title: str | None = None) -> Check:
    """A check declaration that is not registered (the registry stays as the rules made it)."""
    attrs = {
        "id": cid,
        "title": title or f"Practice {cid}",
        "title_zh": f"实践 {cid}",
        "priority": priority,
        "bottlenecks": bottlenecks,
        "benefit": f"benefit of {cid}",
        "what": f"what {cid} checks",
        "why": f"why {cid} matters",
        "fix": f"fix {cid}",
        "fix_zh": f"修复 {cid}",
        "fix_safety": FixSafety.SAFE,
        "snippets": snippets or {},
    }
    return type(f"Fake{cid}", (Check,), attrs)()


def result(cid: str, status: Status, priority: Priority | None = None, evidence: list[Evidence] | None = None,
           findings: list[Evidence] | None = None, detail: str | None = None) -> CheckResult:
    return CheckResult(
        id=cid, category=cid[0], title=f"Practice {cid}", status=status, evidence=evidence or [], detail=detail,
        values={}, findings=findings or [], priority=priority, recommendation=f"fix {cid}" if priority else None,
    )


def make_audit(results: list[CheckResult], project: Project | None = None, files: dict[str, str] | None = None, root: str = "repo") -> Audit:
    facts = build_facts((p, t.encode()) for p, t in (files or {}).items())
    return Audit(root, project or Project(), results, ReadStats(), facts)
