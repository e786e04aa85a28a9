"""Attribute each regression to the line of the diff that caused it.

The candidates are the places the check itself cited (its evidence and findings, head
and base) whose key names the value, then the places that set the same value name with
the value the check measured (a lookup in the audit's facts); when neither exists, all
the lines the check cited. Keys compare by the setting they are about (``bf16`` in YAML,
``bf16.enabled`` in DeepSpeed JSON, ``--bf16`` on a launcher, ``TrainingArguments(bf16=)``).
A candidate counts only when its line is a changed line of the diff:

1. *changed*: an added line (RIGHT) whose key the PR also removed somewhere (``bf16: true``
   → ``bf16: false``);
2. *removed*: a removed line (LEFT) whose key no longer appears in head (``bf16: true``
   deleted);
3. *added*: an added line (RIGHT) with a new key (``attn_implementation="eager"`` added);
4. any other removed line of that key (LEFT).

A regression with no such line is left unplaced (check run only). Every placement is
validated against the hunks before it leaves this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from checks.engine import Audit
from checks.facts import as_number, truthy
from checks.model import Evidence

from .diff import LEFT, RIGHT, DiffIndex, FileDiff
from .model import Change
from .rules import ALIASES, norm_attention, norm_precision

__all__ = ["Placement", "attribute", "feature_key", "locate", "norm_key"]

_CALL_KW = re.compile(r"^[\w.]*\((\w+)=\)$")
_FLAG_KEYS = {"bf16", "fp16", "half", "amp", "use_amp", "bf16.enabled", "fp16.enabled"}


@dataclass(slots=True)
class Placement:
    """Where a regression is commented, and what a suggestion needs."""

    change: Change
    path: str  # the PR file path the comment names
    line: int
    side: str
    text: str  # the diff line's text (no end of line)
    key: str | None  # the evidence key at that line ("save_steps", "TrainingArguments(bf16=)", "--bf16")
    value: Any  # the value set at that line
    base_value: Any = None  # the base value of the same key (RIGHT placements), for a suggestion
    base_text: str | None = None  # the base line of the same key, for "restore" hints
    crlf: bool = False


@dataclass(frozen=True, slots=True)
class _Cand:
    path: str
    line: int
    raw_key: str | None
    key: str | None  # normalised
    value: Any
    own: bool  # the check's own evidence or finding (not a lookup by name)
    snippet: str = ""  # the source line the audit saw there


def norm_key(raw: str | None) -> str | None:
    """``TrainingArguments(bf16=)`` → ``bf16``; ``--save-steps`` → ``save_steps``; dotted paths stay dotted."""
    if not raw:
        return None
    k = raw.strip()
    m = _CALL_KW.match(k)
    if m:
        k = m.group(1)
    k = k.lstrip("-").lower().replace("-", "_")
    return k or None


def feature_key(key: str | None) -> str | None:
    """The setting a key is about, across file formats: ``bf16.enabled`` and ``bf16`` are both ``bf16``."""
    if key is None:
        return None
    if key.endswith(".enabled"):
        key = key[: -len(".enabled")]
    return key.rsplit(".", 1)[-1]


def _matches(key: str | None, aliases: tuple[str, ...]) -> bool:
    if not aliases:
        return True
    if key is None:
        return False
    for a in aliases:
        a = a.lower()
        if "." in a:
            if key == a or key.endswith("." + a):
                return True
        elif key.rsplit(".", 1)[-1] == a:
            return True
    return False


def _cands_of(evs: list[Evidence], own: bool) -> list[_Cand]:
    return [_Cand(e.path, e.line, e.key, norm_key(e.key), e.value, own, e.snippet) for e in evs]


def _lookup(audit: Audit, aliases: tuple[str, ...], finding: str) -> list[_Cand]:
    """Places that set the value by name, anywhere in the audited tree."""
    out: list[_Cand] = []
    facts = audit.facts
    plain = [a for a in aliases if "." not in a]
    dotted = [a for a in aliases if "." in a]
    if plain:
        out += [_Cand(s.path, s.line, s.key, norm_key(s.key), s.value, False, s.text) for s in facts.settings(*plain)]
    if dotted:
        out += [_Cand(e.path, e.line, e.dotted, norm_key(e.dotted), e.value, False, e.text) for e in facts.config(*dotted)]
    if finding.startswith("NCCL_"):
        out += [_Cand(e.path, e.line, e.name, e.name.lower(), e.value, False, e.text) for e in facts.envs(finding) if e.name == finding]
    return out


def _plausible(finding: str, key: str | None, value: Any, canonical: Any) -> bool:
    """A looked-up setting counts only when its value agrees with the value the check measured."""
    if canonical is None:
        return False
    if finding.startswith("NCCL_"):
        return True
    n = as_number(canonical)
    if n is not None and not isinstance(canonical, bool):
        return as_number(value) == n
    if finding == "precision":
        if key in _FLAG_KEYS or (key or "").endswith(".enabled"):
            t = truthy(value)
            return t is not None and t == (canonical != "fp32")
        return norm_precision(value) == canonical
    if finding == "attn_implementation":
        return norm_attention(value) == norm_attention(canonical)
    tv, tc = truthy(value), truthy(canonical)
    return tv is not None and tv == tc


def _agrees(text: str, c: _Cand) -> bool:
    """The diff's line is the one the audit saw: same source text, or it names the key.

    Guards against line numbers of another version (a base audited at the branch tip
    while the PR's diff is taken against the merge base).
    """
    t = text.strip()
    snip = (c.snippet or "").strip()
    if snip and (t == snip or (len(snip) >= 20 and t.startswith(snip[:80]))):
        return True
    low = t.lower()
    names = {n for n in (feature_key(c.key), (c.key or "").rsplit(".", 1)[-1]) if n}
    low = low.replace("-", "_")
    return any(re.search(r"(?<![a-z0-9])" + re.escape(n) + r"(?![a-z0-9])", low) for n in names)


def _launch_stops(audit: Audit, path: str) -> list[int]:
    return sorted(x.line for x in audit.facts.launches() if x.path == path)


def _changed_line(fd: FileDiff, side: str, c: _Cand, audit: Audit) -> int | None:
    """The changed line of the diff that sets ``c``: its own line, or for a launcher flag the continuation line that holds it."""
    lines = fd.added if side == RIGHT else fd.removed
    if c.line in lines:
        return c.line if _agrees(lines[c.line], c) else None
    if not c.raw_key or not c.raw_key.startswith("-"):
        return None
    stops = [x for x in _launch_stops(audit, c.path) if x > c.line]
    stop = stops[0] if stops else c.line + 60
    token = re.compile(r"(?<![\w-])" + re.escape(c.raw_key) + r"(?![\w-])")
    for ln in sorted(lines):
        if c.line < ln < stop and token.search(lines[ln]):
            # every line from the launcher's first line down to this one must continue with a backslash
            chain = [fd.text(side, x) for x in range(c.line, ln)]
            if all(t is not None and t.rstrip().endswith("\\") for t in chain):
                return ln
    return None


def _aliases(change: Change) -> tuple[str, ...]:
    f = change.finding or change.key or ""
    if f == "status":
        return ()
    if f.startswith("finding:"):
        k = norm_key(f[len("finding:"):])
        return (k,) if k else ()
    if f.startswith("NCCL_"):
        return (f.lower(),)
    return tuple(a.lower() for a in ALIASES.get(f, (f,)))


def _result(audit: Audit | None, check: str):
    if audit is None:
        return None
    for r in audit.results:
        if r.id == check:
            return r
    return None


def _candidates(change: Change, audit: Audit | None, canonical: Any) -> list[_Cand]:
    if audit is None:
        return []
    r = _result(audit, change.check)
    finding = change.finding or change.key or ""
    aliases = _aliases(change)
    own: list[_Cand] = []
    if r is not None:
        if finding.startswith("finding:"):
            own = _cands_of(r.findings, True)
        else:
            own = _cands_of(r.findings, True) + _cands_of(r.evidence, True)
    matched = [c for c in own if _matches(c.key, aliases)]
    looked: list[_Cand] = []
    if aliases and finding not in ("status",) and not finding.startswith("finding:"):
        looked = [c for c in _lookup(audit, aliases, finding) if _plausible(finding, c.key, c.value, canonical)]
    # the check's own lines, whatever their key, when nothing names the value: the check cited them for this result
    own = matched if (matched or looked) else own
    seen: set[tuple[str, int]] = set()
    out: list[_Cand] = []
    for c in own + looked:
        if (c.path, c.line) not in seen:
            seen.add((c.path, c.line))
            out.append(c)
    return out


def _place(change: Change, base: Audit | None, head: Audit, diff: DiffIndex) -> Placement | None:
    head_c = _candidates(change, head, change.after)
    base_c = _candidates(change, base, change.before)
    right: list[tuple[_Cand, FileDiff, int]] = []
    for c in head_c:
        fd = diff.head(c.path)
        if fd is not None and not fd.binary and (ln := _changed_line(fd, RIGHT, c, head)) is not None:
            right.append((c, fd, ln))
    left: list[tuple[_Cand, FileDiff, int]] = []
    for c in base_c:
        fd = diff.base(c.path)
        if fd is not None and not fd.binary and base is not None and (ln := _changed_line(fd, LEFT, c, base)) is not None:
            left.append((c, fd, ln))
    head_keys = {feature_key(c.key) for c in head_c}
    left_keys = {feature_key(c.key) for c, _, _ in left}

    def right_pl(c: _Cand, fd: FileDiff, ln: int) -> Placement:
        fk = feature_key(c.key)
        twin = (next((b for b, bfd, _ in left if feature_key(b.key) == fk and bfd is fd), None)
                or next((b for b, _, _ in left if feature_key(b.key) == fk), None))
        twin_any = twin or next((b for b in base_c if feature_key(b.key) == fk), None)
        twin_text = None
        if twin is not None:
            tfd = diff.base(twin.path)
            twin_text = tfd.removed.get(twin.line) if tfd else None
        return Placement(change, fd.path, ln, RIGHT, fd.added[ln], c.raw_key, c.value,
                         twin_any.value if twin_any is not None else None, twin_text, fd.crlf)

    def left_pl(c: _Cand, fd: FileDiff, ln: int) -> Placement:
        return Placement(change, fd.path, ln, LEFT, fd.removed[ln], c.raw_key, c.value, c.value, fd.removed[ln], fd.crlf)

    def order(items: list[tuple[_Cand, FileDiff, int]]) -> list[tuple[_Cand, FileDiff, int]]:
        return sorted(items, key=lambda t: (not t[0].own, t[1].path, t[2]))

    ranked: list[Placement] = []
    ranked += [right_pl(*t) for t in order([t for t in right if feature_key(t[0].key) in left_keys])]  # changed
    ranked += [left_pl(*t) for t in order([t for t in left if feature_key(t[0].key) not in head_keys])]  # removed
    ranked += [right_pl(*t) for t in order([t for t in right if feature_key(t[0].key) not in left_keys])]  # added
    ranked += [left_pl(*t) for t in order([t for t in left if feature_key(t[0].key) in head_keys])]  # removed here, still set elsewhere
    for p in ranked:
        if diff.valid_target(p.path, p.line, p.side):
            return p
    return None


def locate(change: Change, base: Audit | None, head: Audit) -> tuple[str | None, int | None]:
    """Where the setting lives when the PR did not touch it (for the check run's list)."""
    for audit, value in ((head, change.after), (base, change.before)):
        cands = _candidates(change, audit, value)
        if cands:
            return cands[0].path, cands[0].line
    return None, None


def attribute(changes: list[Change], base: Audit | None, head: Audit, diff: DiffIndex) -> tuple[list[Placement], list[Change]]:
    """Placements for the changes whose cause is a changed line of the diff, and the rest (unplaced)."""
    placed: list[Placement] = []
    unplaced: list[Change] = []
    taken: set[tuple[str, int, str, str]] = set()
    for ch in changes:
        p = _place(ch, base, head, diff)
        if p is not None and (p.path, p.line, p.side, ch.check) not in taken:
            taken.add((p.path, p.line, p.side, ch.check))
            ch.path, ch.line, ch.side = p.path, p.line, p.side
            if p.key:
                ch.key = p.key
            placed.append(p)
        else:
            ch.path, ch.line = locate(ch, base, head)
            unplaced.append(ch)
    return placed, unplaced
