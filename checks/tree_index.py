"""What a directory scan learnt about each file, by its stat signature, so that a re-scan need not read it again.

A file whose ``lstat`` signature (size, mtime and ctime in nanoseconds, inode, device) is the one
recorded with it last time is taken as unchanged: its facts key (or the reason it was skipped as
data or binary) is reused and the file is neither opened nor hashed. Anything else is read and
hashed as on a cold scan. The rules that keep this safe:

- the signature includes ``ctime``, which no user-space call can set: writing, truncating,
  ``touch -d`` or replacing the file all change it (or the inode), even when size and mtime are
  restored;
- a file changed less than :data:`RACY_NS` before the scan started (or during it) is never
  vouched for: the filesystem's timestamp granularity could hide a second write in the same tick
  (git's "racily clean" rule), so such a file is recorded without a signature and read next time;
- the index is authenticated (:mod:`checks.cache`) and bound to the scanned directory's real path
  and to the facts' and sniff's versions; a stale or foreign index is ignored as a whole;
- a vouched file whose facts are no longer in the cache is read after all.

This module holds the in-memory logic only; :class:`checks.cache.DirFactsCache` stores it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["RACY_NS", "Signature", "TreeIndex"]

#: (size, mtime_ns, ctime_ns, inode, device) of ``os.lstat``
Signature = tuple[int, int, int, int, int]

#: files changed this recently before the scan started are re-read next time (timestamp granularity)
RACY_NS = 2_000_000_000

#: prefixes of a recorded outcome: the facts' cache key, or the reason the file was skipped
KEY, SKIP = "k:", "s:"


@dataclass(slots=True)
class TreeIndex:
    """Outcomes of one directory's files by path: ``(signature or None, outcome)``; see the module's doc.

    ``available(key)`` says whether the cache still holds a key's facts (a vouched file whose facts
    are gone is read again). ``version`` ties the index to the extractors and the sniff.
    """

    root: str
    version: str
    old: dict[str, tuple[Signature | None, str]] = field(default_factory=dict)
    new: dict[str, tuple[Signature | None, str]] = field(default_factory=dict)
    started_ns: int = field(default_factory=time.time_ns)
    pending: dict[str, Signature] = field(default_factory=dict)
    available: Callable[[str], bool] | None = None
    vouched: int = 0

    def lookup(self, rel: str, sig: Signature) -> str | None:
        """The outcome recorded for ``rel`` when its signature is unchanged and trusted, else None (read the file).

        A hit is recorded again for the next scan."""
        got = self.old.get(rel)
        if got is None or got[0] is None or got[0] != sig:
            return None
        outcome = got[1]
        if outcome.startswith(KEY) and self.available is not None and not self.available(outcome[2:]):
            return None
        self.new[rel] = got
        self.vouched += 1
        return outcome

    def _trusted(self, sig: Signature) -> Signature | None:
        return sig if max(sig[1], sig[2]) < self.started_ns - RACY_NS else None

    def skipped(self, rel: str, sig: Signature, reason: str) -> None:
        """``rel`` was read and skipped (data, binary) for ``reason``."""
        self.new[rel] = (self._trusted(sig), SKIP + reason)

    def read(self, rel: str, sig: Signature) -> None:
        """``rel`` was read; its facts key follows with :meth:`keyed`."""
        self.pending[rel] = sig

    def keyed(self, rel: str, key: str) -> None:
        sig = self.pending.pop(rel, None)
        if sig is not None:
            self.new[rel] = (self._trusted(sig), KEY + key)

    def keys(self) -> dict[str, str]:
        """Facts key by path, for every file of this scan that has facts."""
        return {rel: o[2:] for rel, (_s, o) in self.new.items() if o.startswith(KEY)}

    @property
    def changed(self) -> bool:
        return self.new != self.old
