"""Which files a fix may edit: the training path only (never tests, CI, vendored, archived code or docs).

The engine's file roles (``checks/roles.py``) decide first: a file out of the project's scope (tests, CI, dev
tooling, docs, benchmarks, evaluation harnesses, archives, vendored code) is never edited. The path patterns
below stay as a second guard for callers without an audit (restoring a PR's regressions).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checks.roles import Roles

_EXCLUDED_DIRS = frozenset({
    "tests", "test", "testing", ".github", "third_party", "third-party", "vendor", "vendored", "records", "archive",
    "archived", "docs", "doc", "benchmarks", "node_modules", ".git", "site-packages",
})
_EXCLUDED_FILE = re.compile(r"^(test_.*|.*_test\.py|conftest\.py|setup\.py|noxfile\.py)$")
_SAFE_PATH = re.compile(r"^[A-Za-z0-9_.\-/ +@]+$")


def editable(path: str, roles: Roles | None = None) -> str | None:
    """None when ``path`` is on the training path and may be edited, else the reason it may not."""
    if roles is not None and path in roles.by_path and not roles.in_scope(path):
        why = roles.why.get(path)
        return f"{roles.role(path)} file{f' ({why})' if why else ''}: out of the project's training scope, never edited"
    if not path or path.startswith("/") or "\\" in path or not _SAFE_PATH.match(path):
        return "not a plain relative path"
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "not a normalised path inside the repository"
    if path.startswith(".github/"):
        return "CI configuration (.github/) is never edited"
    for d in parts[:-1]:
        if d.lower() in _EXCLUDED_DIRS:
            return f"under {d}/ (tests, CI, vendored, archived code or docs are never edited)"
    if _EXCLUDED_FILE.match(parts[-1]):
        return "a test or packaging file is never edited"
    return None
