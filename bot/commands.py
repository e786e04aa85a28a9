"""The ``/accel`` commands in PR conversation comments: parsing and the words of the replies."""

from __future__ import annotations

import re

COMMANDS = ("help", "rescan", "fix")
_LINE = re.compile(r"^\s*/accel\b(?:\s+(\S+))?(.*)$", re.I)
TRUSTED = {"OWNER", "MEMBER", "COLLABORATOR"}

HELP = """\
**accel-audit commands** (write them as a comment on a pull request):

| command | what it does |
|---|---|
| `/accel help` | this list |
| `/accel rescan` | audit the pull request's head again and update the `Accel Audit` check run (the PR's author, owners, members and collaborators) |
| `/accel fix [ID ...] [--dry-run]` | open a follow-up pull request with verified fixes (this PR's regressions first; unsafe fixes only for the IDs named), or reply with the diff (`--dry-run`, fork PRs); people with write access |

The audit runs by itself on every push; its settings live in `.github/accel-audit.yml` on the base branch."""

FIX_NOT_AVAILABLE = """\
`/accel fix` is not available yet: this accel-audit service cannot change code or open fix branches, so nothing \
was changed. The `Accel Audit` check run lists each recommendation with the file and line to edit."""

NOT_A_PR = "`/accel {command}` works on pull requests only."
NOT_ALLOWED = "`/accel rescan` can be asked for by the pull request's author or by the repository's owners, members and collaborators."


def parse_command(body: str) -> tuple[str, list[str]] | None:
    """The first ``/accel`` line of a comment: ``(command, args)``; ``("help", [])`` for a bare ``/accel``.

    Lines inside fenced code blocks and quoted lines are not commands.
    """
    fenced = False
    for line in body.splitlines():
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fenced = not fenced
            continue
        if fenced or stripped.startswith(">"):
            continue
        m = _LINE.match(line)
        if m:
            name = (m.group(1) or "help").lower()
            args = m.group(2).split()
            return name, args
    return None


def unknown_reply(name: str) -> str:
    return f"Unknown command `/accel {name}`.\n\n{HELP}"
