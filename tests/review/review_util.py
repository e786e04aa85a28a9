"""Helpers for the review tests: synthetic audits, and real ones from in-memory trees in a temp git repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from checks.engine import Audit, audit_files, build_facts
from checks.model import CheckResult, Evidence, Project, Status
from checks.source import ReadStats

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null",
       "-c", "init.defaultBranch=main", "-c", "core.autocrlf=false"]


def result(check: str, status: Status, evidence: list[Evidence] | None = None, values: dict[str, Any] | None = None,
           findings: list[Evidence] | None = None, title: str = "") -> CheckResult:
    return CheckResult(check, check[0], title or f"check {check}", status, evidence or [], None, values or {}, findings or [])


def synthetic(results: list[CheckResult], files: dict[str, str] | None = None, project: Project | None = None) -> Audit:
    facts = build_facts((p, t.encode()) for p, t in (files or {}).items())
    return Audit(".", project or Project(), results, ReadStats(), facts)


def audit_tree(files: dict[str, str | bytes]) -> Audit:
    return audit_files((p, t if isinstance(t, bytes) else t.encode()) for p, t in files.items())


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True, env=env).stdout.decode()


def write_tree(repo: Path, files: dict[str, str | bytes]) -> None:
    for child in repo.iterdir():
        if child.name != ".git":
            subprocess.run(["rm", "-rf", str(child)], check=True)
    for p, t in files.items():
        f = repo / p
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(t if isinstance(t, bytes) else t.encode())


def make_repo(tmp: Path, base: dict[str, str | bytes], head: dict[str, str | bytes]) -> Path:
    """A repository with ``base`` on ``main`` and ``head`` on branch ``pr``."""
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write_tree(repo, base)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "pr")
    write_tree(repo, head)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "head")
    return repo


def diff_of(tmp: Path, base: dict[str, str | bytes], head: dict[str, str | bytes]) -> str:
    from review.gitlocal import git_diff

    repo = make_repo(tmp, base, head)
    return git_diff(str(repo), "main", "pr")
