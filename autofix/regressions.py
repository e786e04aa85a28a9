"""The pull request's own regressions, put back: each regressed site gets its base value, at that site only.

Consumes ``review.model.Change`` (check, path, line, side, key): a ``RIGHT`` change is a value the PR edited,
restored to the base's own token (``save_steps: 1`` -> ``500``, ``"eager"`` -> ``"flash_attention_2"``); a
``LEFT`` change is a line the PR removed (``bf16: true``), restored verbatim where it stood.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from checks.model import FixSafety

from . import json_edit, py_edit, shell_edit, yaml_edit
from .catalog import catalog, grade, leaf, site_for
from .model import Dropped, Edit, EditRefused
from .scope import editable

_CALL_KEY = re.compile(r"^([A-Za-z_][\w.]*)\((\w+)=\)$")


def _safety(check: str) -> FixSafety:
    rules = catalog().get(check)
    if rules:
        return grade(rules[0])
    from checks.base import REGISTRY, all_checks

    all_checks()
    c = REGISTRY.get(check)
    return FixSafety.UNSAFE if c is None or c.fix_safety != FixSafety.SAFE else FixSafety.SAFE


def _map_line(a: list[str], b: list[str], i: int) -> tuple[int, str]:
    """Where 0-based line ``i`` of ``a`` sits in ``b``: (index, opcode tag)."""
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if i1 <= i < i2 or (i1 == i2 == i):
            if tag == "equal":
                return j1 + (i - i1), tag
            return j1 + min(i - i1, max(0, j2 - j1)), tag
    return len(b), "insert"


def _token_at(kind: str, key: str, base: str, line: int) -> str | None:
    try:
        if kind == "yaml":
            return yaml_edit.locate(base, key, line).token
        if kind == "json":
            got = json_edit.get(base, key)
            return got[1] if got else None
        if kind == "call":
            m = _CALL_KEY.match(key)
            return py_edit.get_kw(base, line, m.group(1), m.group(2)) if m else None
        if kind == "shell":
            return shell_edit.get(base, line, key)
    except (KeyError, EditRefused, IndexError):
        return None
    return None


def restore(changes: Iterable[Any], base_files: dict[str, str], head_files: dict[str, str], benefit_of: dict[str, str] | None = None,
            only: set[str] | None = None) -> tuple[list[Edit], list[Dropped]]:
    """Edits that put each regressed site back to its base value."""
    edits: list[Edit] = []
    dropped: list[Dropped] = []
    by_site: dict[tuple[str, int, str], Edit] = {}
    for ch in changes:
        if getattr(ch, "kind", "regression") != "regression" or not ch.path or not ch.line or not ch.key:
            continue
        if only and ch.check not in only:
            continue
        path, key = ch.path, ch.key
        why = editable(path)
        if why:
            dropped.append(Dropped(ch.check, path, ch.line, why))
            continue
        head, base = head_files.get(path), base_files.get(path)
        benefit = (benefit_of or {}).get(ch.check) or _benefit(ch)
        if head is None or base is None:
            dropped.append(Dropped(ch.check, path, ch.line, "the file is not on both sides of the pull request"))
            continue
        blines, hlines = base.split("\n"), head.split("\n")
        if ch.side == "LEFT":
            i = ch.line - 1
            if not 0 <= i < len(blines):
                dropped.append(Dropped(ch.check, path, ch.line, "the removed line is not in the base file"))
                continue
            raw = blines[i].rstrip("\r")
            if leaf(key) not in raw.lower().replace("-", "_"):
                dropped.append(Dropped(ch.check, path, ch.line, f"the removed line does not set {key}"))
                continue
            j, _ = _map_line(blines, hlines, i)
            site = site_for(path, j + 1, key)
            if site is None:
                dropped.append(Dropped(ch.check, path, ch.line, f"no editor for {key} here"))
                continue
            if site.kind in ("yaml", "json") and _token_at(site.kind, key, head, 0) is not None:
                dropped.append(Dropped(ch.check, path, ch.line, f"{key} is set elsewhere in the head: restoring the line would duplicate it"))
                continue
            k = (path, -i - 1, leaf(key))
            if k in by_site:
                if ch.check not in by_site[k].checks:
                    by_site[k].also.append(ch.check)
                continue
            e = Edit(ch.check, site, None, raw.strip(), _safety(ch.check), benefit, "regression", raw_line=raw, insert_at=j)
            by_site[k] = e
            edits.append(e)
            continue
        i = ch.line - 1
        site = site_for(path, ch.line, key)
        if site is None:
            dropped.append(Dropped(ch.check, path, ch.line, f"no editor for {key} here"))
            continue
        j, _ = _map_line(hlines, blines, i)
        tok = _token_at(site.kind, key, base, j + 1)
        cur = _token_at(site.kind, key, head, ch.line)
        if tok is None or cur is None:
            dropped.append(Dropped(ch.check, path, ch.line, f"the base value of {key} could not be read back"))
            continue
        if tok == cur:
            continue
        k = (path, ch.line, leaf(key))
        if k in by_site:
            if ch.check not in by_site[k].checks:
                by_site[k].also.append(ch.check)
            continue
        e = Edit(ch.check, site, cur, tok, _safety(ch.check), benefit, "regression", token=tok)
        by_site[k] = e
        edits.append(e)
    return edits, dropped


def _benefit(ch: Any) -> str:
    why = str(getattr(ch, "why", "") or "").strip()
    return f"undoes this PR's regression: {why}" if why else "undoes this PR's regression (the base branch's value)"
