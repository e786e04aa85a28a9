"""Markdown helpers for GitHub's size limits: escape inline text, and cut only between whole blocks."""

from __future__ import annotations

import re

GITHUB_TEXT_LIMIT = 65_535  # check-run output.summary / output.text; a PR comment body allows 65,536


def clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def code(text: str, n: int = 120) -> str:
    """Inline code that survives backticks in the text."""
    t = clip(text, n)
    if not t:
        return ""
    runs = [len(m) for m in re.findall(r"`+", t)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if t.startswith("`") or t.endswith("`") or fence != "`" else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def fence(text: str) -> str:
    """A code-block fence longer than any backtick run inside ``text``."""
    runs = [len(m) for m in re.findall(r"`{3,}", text)]
    return "`" * max(3, max(runs, default=0) + 1)


def blocks(md: str) -> list[str]:
    """Top-level blocks: split at blank lines outside code fences and ``<details>`` elements."""
    out: list[str] = []
    cur: list[str] = []
    in_fence: str | None = None
    depth = 0
    for line in md.split("\n"):
        stripped = line.strip()
        if in_fence:
            if stripped.startswith(in_fence) and set(stripped) == {"`"}:
                in_fence = None
        elif stripped.startswith("```"):
            in_fence = re.match(r"`+", stripped).group(0)  # type: ignore[union-attr]
        else:
            depth += len(re.findall(r"<details\b", line)) - len(re.findall(r"</details>", line))
        if not stripped and in_fence is None and depth <= 0 and cur:
            out.append("\n".join(cur))
            cur = []
            continue
        cur.append(line)
    if cur:
        out.append("\n".join(cur))
    return out


def cut_blocks(md: str, limit: int, note: str) -> str:
    """``md`` when it fits; else its leading whole blocks and ``note`` within ``limit`` characters."""
    if len(md) <= limit:
        return md
    tail = f"\n\n{note}\n"
    kept: list[str] = []
    size = len(tail)
    for b in blocks(md):
        add = len(b) + (2 if kept else 0)
        if size + add > limit:
            break
        kept.append(b)
        size += add
    out = "\n\n".join(kept) + tail
    return out if len(out) <= limit else note[:limit]
