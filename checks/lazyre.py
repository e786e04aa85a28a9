"""Regular expressions compiled on first use.

The checks, the extractors and the reports hold about 560 module-level patterns. Compiling them all costs 60-70 ms of
every process that imports the engine, while a re-scan that reuses most results runs only a few of them. A
:class:`LazyPattern` compiles its pattern the first time one of its methods or attributes is asked for, then serves the
compiled pattern's bound methods from its own slots: after that first use it costs what the pattern costs.

Only module-level patterns are made this way; a pattern is never passed to ``re.search(pattern, ...)`` and friends,
which accept strings and compiled patterns only (use ``pattern.search(...)``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["LazyPattern", "lazy_compile"]

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")


class LazyPattern:
    """A ``re.Pattern`` that compiles on first use (``pattern`` and ``flags`` are known before)."""

    __slots__ = ("pattern", "flags", "_compiled", *_METHODS)

    def __init__(self, pattern: Any, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[Any] | None = None

    def compiled(self) -> re.Pattern[Any]:
        """The compiled pattern (compiled now if it was not yet)."""
        p = self._compiled
        if p is None:
            p = self._compiled = re.compile(self.pattern, self.flags)
            for name in _METHODS:
                setattr(self, name, getattr(p, name))
        return p

    def __getattr__(self, name: str) -> Any:  # only for what the slots do not hold yet: the methods before first use
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __reduce__(self) -> tuple[type, tuple[Any, int]]:
        return LazyPattern, (self.pattern, self.flags)

    def __repr__(self) -> str:
        return f"lazy_compile({self.pattern!r}, {self.flags})"


def lazy_compile(pattern: Any, flags: int = 0) -> LazyPattern:
    """``re.compile(pattern, flags)``, deferred to the pattern's first use (where a bad pattern raises ``re.error``:
    ``tests/engine/test_lazyre.py`` compiles every module-level pattern of the package, so none reaches a user)."""
    if not isinstance(pattern, (str, bytes)):
        raise TypeError(f"lazy_compile takes a str or bytes pattern, not {type(pattern).__name__}")
    return LazyPattern(pattern, flags)
