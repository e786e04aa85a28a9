"""The regressions a PR audit found, kept for ``/accel fix`` on the same head (so the fix need not audit the base).

The PR audit has both audits in hand; the fix command that usually follows it would otherwise download and audit
the merge base again only to find the same regressions. The hint is keyed by repository, PR and head SHA (a newer
push makes it stale and it is ignored), kept in Redis when the service has one (shared by every worker) or in the
data directory, and is only ever a shortcut: without it the fix job computes the regressions itself.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from review.model import Change

if TYPE_CHECKING:
    from .runtime import Runtime

TTL = 7 * 86400
_FIELDS = ("check", "kind", "what", "why", "path", "line", "side", "key", "finding")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def _key(owner: str, repo: str, number: int) -> str:
    return _SAFE.sub("_", f"{owner}__{repo}__{number}")


def _plain(v: Any) -> Any:
    return v if v is None or isinstance(v, (bool, int, float, str)) else str(v)


def save(rt: Runtime, owner: str, repo: str, number: int, head_sha: str, merge_base: str, regressions: list[Change]) -> None:
    doc = {"head": head_sha, "merge_base": merge_base,
           "regressions": [{f: _plain(getattr(c, f, None)) for f in _FIELDS} for c in regressions]}
    data = json.dumps(doc)
    try:
        if rt.redis is not None:
            rt.redis.set("accel:fixhint:" + _key(owner, repo, number), data, ex=TTL)
            return
        d = rt.settings.data_dir / "fix-hints"
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{_key(owner, repo, number)}.{os.getpid()}.tmp"
        tmp.write_text(data)
        os.replace(tmp, d / f"{_key(owner, repo, number)}.json")
    except Exception:  # a hint is an optimisation: the fix job recomputes without it
        return


def load(rt: Runtime, owner: str, repo: str, number: int, head_sha: str) -> tuple[str, list[Change]] | None:
    """(merge base, regressions) saved by the audit of this very head, or None."""
    try:
        if rt.redis is not None:
            raw = rt.redis.get("accel:fixhint:" + _key(owner, repo, number))
        else:
            p = rt.settings.data_dir / "fix-hints" / f"{_key(owner, repo, number)}.json"
            raw = p.read_text() if p.is_file() else None
        if not raw:
            return None
        doc = json.loads(raw)
        if doc.get("head") != head_sha:
            return None
        known = {f.name for f in fields(Change)}
        return str(doc["merge_base"]), [Change(**{k: v for k, v in c.items() if k in known}) for c in doc["regressions"]]
    except Exception:
        return None
