"""The static side of an ``Accel Profile`` run: the head commit's check statuses, audited in the sandbox.

``accel-audit diagnose --audit REPORT.json`` lets a recommendation say what the static audit found (an unused
check comes first; a used one is marked low). The App does the same: it audits the profiled commit in a child
process (:mod:`bot.sandbox`, the facts cache makes this cheap after the PR's own audit) and hands the statuses
to :func:`diagnose.core.diagnose`. A monorepo's projects are merged: a check keeps a status only when every
project agrees, since the profile does not say which project it ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from checks.engine import AuditOptions
from checks.source import Limits, SourceError

from .audit_compute import CacheSpec, Send, build_cache
from .repo_config import LoadedConfig
from .tarball import audit_project_in_archive


def merged_statuses(per_project: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """``{"checks": [...]}`` with the checks whose status is the same in every project (the first one's evidence)."""
    if not per_project:
        return {"checks": []}
    first = {c["id"]: c for c in per_project[0]}
    others = [{c["id"]: c.get("status") for c in checks} for checks in per_project[1:]]
    keep = [c for cid, c in first.items() if all(o.get(cid) == c.get("status") for o in others)]
    return {"checks": [{"id": c["id"], "status": c.get("status"), "evidence": (c.get("evidence") or [])[:1]} for c in keep]}


def compute_statuses(send: Send, archive: str, root: str, loaded: LoadedConfig, limits: Limits, cache: CacheSpec) -> None:
    """The child's target: send ``("statuses", {"checks": [...]})``, or ``("source_error", reason)``."""
    cfg = loaded.config
    options = AuditOptions(limits=limits, ignore=cfg.ignore, exclude=cfg.exclude, training=cfg.training, hardware=cfg.hardware,
                           cache=build_cache(cache))
    per_project = []
    try:
        for proj in cfg.projects:
            audit = audit_project_in_archive(Path(archive), proj.path, root, options)
            per_project.append([r.to_json() for r in audit.results])
    except SourceError as exc:
        send("source_error", str(exc))
        return
    send("statuses", merged_statuses(per_project))
