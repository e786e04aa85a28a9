"""Ask GitHub to redeliver the webhook deliveries that failed while the service was down.

GitHub never redelivers by itself. ``GET /app/hook/deliveries`` lists the App's recent deliveries (newest
first, cursor pagination); a delivery whose every attempt failed (no answer, a timeout or a 5xx) and that the
journal never recorded is redelivered with ``POST /app/hook/deliveries/{id}/attempts``. Only the last few
hours are looked at, and one delivery is asked for at most ``max_attempts`` times. Our own 400/401 answers
are final (a redelivery would get the same answer) and are left alone.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from typing import TYPE_CHECKING, Any

from githubkit import GitHub

if TYPE_CHECKING:
    from .store import JobStore

log = logging.getLogger(__name__)

_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')
MAX_PAGES = 20


def _failed(d: dict[str, Any]) -> bool:
    code = d.get("status_code")
    return code is None or code == 0 or code >= 500 or code in (408, 429)


def _when(d: dict[str, Any]) -> float:
    try:
        return dt.datetime.fromisoformat(str(d.get("delivered_at")).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


async def redeliver_failed(gh: GitHub[Any], store: JobStore, *, window_hours: float = 6.0, max_attempts: int = 3, now: float | None = None) -> list[str]:
    """Return the GUIDs GitHub was asked to redeliver."""
    now = dt.datetime.now(dt.UTC).timestamp() if now is None else now
    oldest = now - window_hours * 3600
    by_guid: dict[str, list[dict[str, Any]]] = {}
    url: str | None = "/app/hook/deliveries"
    params: dict[str, Any] | None = {"per_page": 100}
    for _ in range(MAX_PAGES):
        if url is None:
            break
        resp = await gh.arequest("GET", url, params=params)
        page = resp.json()
        done = False
        for d in page:
            if _when(d) < oldest:
                done = True
                continue
            by_guid.setdefault(str(d.get("guid")), []).append(d)
        m = _NEXT.search(resp.headers.get("link", ""))
        if done or not page or not m:
            break
        url, params = m.group(1), None
    asked: list[str] = []
    for guid, attempts in by_guid.items():
        if not guid or any(not _failed(d) for d in attempts):
            continue  # one attempt got through
        if store.seen(guid):
            continue  # recorded: the job is ours even if the answer was lost
        latest = max(attempts, key=_when)
        if store.note_redelivery(guid) > max_attempts:
            continue
        await gh.arequest("POST", f"/app/hook/deliveries/{latest['id']}/attempts")
        log.info("asked GitHub to redeliver %s (%s %s, failed with %s)", guid, latest.get("event"), latest.get("action") or "", latest.get("status_code"))
        asked.append(guid)
    return asked
