"""The shapes of an autofix: where an edit goes (:class:`Site`), the edit itself (:class:`Edit`), refusals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from checks.model import FixSafety

#: file kinds an editor exists for
KINDS = ("yaml", "json", "call", "field", "argparse", "assign", "shell")


class EditRefused(Exception):
    """An edit that cannot be made without touching more than its own value (alias, template, unsupported shape)."""


@dataclass(frozen=True, slots=True)
class Site:
    """Where a value lives.

    ``kind`` picks the editor; ``key`` is what it looks for: a dotted key path (yaml/json), ``Func(kw=)`` (a call
    keyword), ``Owner.name`` (a dataclass field default), ``--dest`` (an argparse default), ``NAME`` (an assignment)
    or ``--flag`` (a launcher flag). ``line`` is 1-based: the key's line, the call's line or the launcher's line.
    """

    path: str
    line: int
    kind: str
    key: str

    def describe(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(slots=True)
class Edit:
    """One proposed change of one value (or one added key/flag/line)."""

    check: str
    site: Site
    before: Any  # the value found there (None: the key is added)
    after: Any  # the new value (None with ``remove``: the flag is removed)
    safety: FixSafety
    benefit: str
    reason: str  # "regression" | "recommendation"
    also: list[str] = field(default_factory=list)  # further checks the same edit serves
    after_key: str | None = None  # for an added key: the sibling it goes after
    raw_line: str | None = None  # a regression's removed line, restored verbatim
    insert_at: int | None = None  # 0-based line index where ``raw_line`` goes
    line_after: int | None = None  # the edited line in the new text (set when applied)
    before_text: str = ""  # the edited line(s) before
    after_text: str = ""  # ... and after
    remove: bool = False
    token: str | None = None  # the exact token to write (a regression restores the base's own spelling)

    @property
    def checks(self) -> list[str]:
        return [self.check, *self.also]

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "also": self.also,
            "path": self.site.path,
            "line": self.line_after or self.site.line,
            "key": self.site.key,
            "kind": self.site.kind,
            "safety": self.safety.value,
            "reason": self.reason,
            "before": _plain(self.before),
            "after": _plain(self.after),
            "before_line": self.before_text,
            "after_line": self.after_text,
            "benefit": self.benefit,
        }


@dataclass(slots=True)
class Dropped:
    """A fix that was considered and not proposed, with the reason (reported, never committed)."""

    check: str
    path: str
    line: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "path": self.path, "line": self.line, "reason": self.reason}


def _plain(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return repr(v)
