"""Launched scripts spelt as the repository spells them.

A README written on a case-insensitive file system names its script with other capitals than the tree has (Vary's
README: ``deepspeed Vary/train/train_qwen_vary.py`` for ``Vary-master/vary/train/train_qwen_vary.py``). Every lookup of
a launched script (the roles' entry points, the flags a launch passes to a file, the documented runs) compares paths
exactly, so such a command ran nothing and its flags (``--model_max_length 4096``, ``--gradient_checkpointing True``)
were lost. Before anything reads them, a launch whose script no file matches exactly, but exactly one file matches
when capitals are ignored (the file name itself as written), is given that file's spelling.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .facts.types import FileFacts, Launch


class Respeller:
    """The repository's spelling of a launched script, from its file paths."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._by_name: dict[str, list[str]] = {}
        for p in paths:
            self._by_name.setdefault(p.rsplit("/", 1)[-1], []).append(p)

    def script(self, script: str | None) -> str | None:
        """``script`` respelt, or None when it needs no respelling (or no single file answers it)."""
        if not script or "/" not in script or "$" in script or "{" in script:
            return None
        lead = ""
        rest = script
        while rest.startswith("./"):
            lead, rest = lead + "./", rest[2:]
        if rest.startswith("/"):
            lead, rest = lead + "/", rest.lstrip("/")
        if "/" not in rest or ".." in rest.split("/"):
            return None
        named = self._by_name.get(rest.rsplit("/", 1)[-1], [])
        if any(p == rest or p.endswith("/" + rest) for p in named):
            return None  # spelt as the tree spells it
        low = rest.lower()
        found = [p for p in named if p.lower() == low or p.lower().endswith("/" + low)]
        if len(found) != 1:
            return None
        return lead + found[0][len(found[0]) - len(rest):]

    def file(self, ff: Any) -> Any:
        """``ff`` with its launches' scripts respelt (a copy; the cached facts stay as they are), or ``ff`` itself."""
        if not isinstance(ff, FileFacts) or not (ff.launches or ff.doc_launches):
            return ff
        launches = self._launches(ff.launches)
        docs = self._launches(ff.doc_launches)
        if launches is None and docs is None:
            return ff
        return replace(ff, launches=launches if launches is not None else ff.launches,
                       doc_launches=docs if docs is not None else ff.doc_launches)

    def _launches(self, launches: list[Launch]) -> list[Launch] | None:
        out: list[Launch] | None = None
        for i, x in enumerate(launches):
            s = self.script(x.script)
            if s is not None:
                if out is None:
                    out = list(launches)
                out[i] = replace(x, script=s)
        return out
