"""A pull request's changes: the unified diff, or the paginated files API when GitHub refuses the diff (406)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

DIFF_MEDIA_TYPE = "application/vnd.github.diff"
FILES_PER_PAGE = 100
MAX_FILES = 3000  # the files API lists at most 3,000 files

_PLUS = re.compile(r"^\+\+\+ (?:b/)?(.+?)\s*$", re.M)
_MINUS = re.compile(r"^--- (?:a/)?(.+?)\s*$", re.M)
_GIT = re.compile(r"^diff --git a/(.+?) b/(.+?)\s*$", re.M)


@dataclass(slots=True)
class PRDiff:
    diff_text: str | None = None
    files: list[dict[str, Any]] | None = None
    changed: set[str] = field(default_factory=set)  # head paths (base paths for deleted files)

    def for_project(self, prefix: str) -> PRDiff:
        """The files under ``prefix/`` with paths relative to it (always in files-API form)."""
        if not prefix:
            return self
        pre = prefix.rstrip("/") + "/"
        files = []
        for f in self.files or split_diff(self.diff_text or ""):
            name = f.get("filename", "")
            if not name.startswith(pre):
                continue
            g = dict(f, filename=name[len(pre):])
            prev = f.get("previous_filename")
            if prev:
                g["previous_filename"] = prev[len(pre):] if prev.startswith(pre) else prev
            files.append(g)
        return PRDiff(None, files, {f["filename"] for f in files})


def changed_paths_from_diff(text: str) -> set[str]:
    out: set[str] = set()
    for block in re.split(r"(?m)^(?=diff --git )", text):
        plus = _PLUS.search(block)
        minus = _MINUS.search(block)
        if plus and plus.group(1) != "/dev/null":
            out.add(plus.group(1))
        elif minus and minus.group(1) != "/dev/null":
            out.add(minus.group(1))
        else:
            git = _GIT.search(block)
            if git:
                out.add(git.group(2))
    return out


def split_diff(text: str) -> list[dict[str, Any]]:
    """A unified diff as files-API dicts (``filename``, ``status``, ``patch``, ``previous_filename``)."""
    files: list[dict[str, Any]] = []
    for block in re.split(r"(?m)^(?=diff --git )", text):
        git = _GIT.search(block)
        if not git:
            continue
        old, new = git.group(1), git.group(2)
        status = "modified"
        if re.search(r"(?m)^new file mode", block):
            status = "added"
        elif re.search(r"(?m)^deleted file mode", block):
            status = "removed"
        elif old != new:
            status = "renamed"
        hunk = block.find("\n@@")
        patch = block[hunk + 1:] if hunk >= 0 else None
        d: dict[str, Any] = {"filename": old if status == "removed" else new, "status": status, "patch": patch}
        if status == "renamed":
            d["previous_filename"] = old
        files.append(d)
    return files


async def fetch_pr_diff(gh: GitHub[Any], owner: str, repo: str, number: int) -> PRDiff:
    try:
        resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/pulls/{number}", headers={"Accept": DIFF_MEDIA_TYPE})
        text = resp.content.decode("utf-8", errors="replace")
        return PRDiff(text, None, changed_paths_from_diff(text))
    except RequestFailed as exc:
        if exc.response.status_code != 406:  # 406: more than 300 files or 20,000 lines
            raise
    files: list[dict[str, Any]] = []
    page = 1
    while len(files) < MAX_FILES:
        resp = await gh.arequest(
            "GET", f"/repos/{owner}/{repo}/pulls/{number}/files", params={"per_page": FILES_PER_PAGE, "page": page}
        )
        batch = resp.json()
        for f in batch:
            files.append({k: f.get(k) for k in ("filename", "status", "patch", "previous_filename") if f.get(k) is not None})
        if len(batch) < FILES_PER_PAGE:
            break
        page += 1
    return PRDiff(None, files, {f["filename"] for f in files})
