"""Who may ask the bot to act: the commenter's permission on the repository, as GitHub reports it.

``author_association`` in a webhook says how a user relates to the repository, not what they may do
there: a read-only or triage collaborator is a ``COLLABORATOR`` too. Commands that spend audits or
write code (``/accel rescan``, ``/accel fix``, the check run's "Apply fixes" button) ask GitHub instead:
``GET /repos/{owner}/{repo}/collaborators/{username}/permission``.
"""

from __future__ import annotations

from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

WRITE_LEVELS = frozenset({"admin", "maintain", "write"})
_KNOWN = frozenset({"admin", "maintain", "write", "triage", "read", "none"})


async def permission_of(gh: GitHub[Any], owner: str, repo: str, username: str) -> str:
    """The user's role on the repository: ``admin``, ``maintain``, ``write``, ``triage``, ``read`` or ``none``.

    ``role_name`` carries ``maintain``/``triage`` (``permission`` folds them into ``write``/``read``).
    A user GitHub does not know (404) has ``none``; any other failure propagates (retry, never guess).
    """
    try:
        resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/collaborators/{username}/permission")
    except RequestFailed as exc:
        if exc.response.status_code == 404:
            return "none"
        raise
    data = resp.json()
    role = str(data.get("role_name") or "").lower()
    if role in _KNOWN:
        return role
    return str(data.get("permission") or "none").lower()  # a custom role: its base permission


async def can_write(gh: GitHub[Any], owner: str, repo: str, username: str) -> bool:
    """Write, maintain or admin on the repository."""
    return await permission_of(gh, owner, repo, username) in WRITE_LEVELS


__all__ = ["WRITE_LEVELS", "can_write", "permission_of"]
