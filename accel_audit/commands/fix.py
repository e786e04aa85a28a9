"""``accel-audit fix PATH``: apply the verified, round-trip-preserving fixes of the audit in place.

``--dry-run`` prints the unified diff (``a/``/``b/`` paths relative to PATH) and writes nothing; ``--format json``
lists the edits (check, path, line, safety, before, after) and the score before/after. Unsafe fixes (numerics or
memory change) only with ``--unsafe-fixes``, as in Ruff. Exit 0 on success or nothing to fix, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from checks.engine import AuditOptions, audit_path
from checks.source import SourceError

_ID = re.compile(r"^[A-Ja-j]\d{1,2}$")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fix", help="apply the audit's safe fixes in place (round-trip-preserving edits)")
    p.add_argument("path", help="repository directory")
    p.add_argument("--only", nargs="+", metavar="ID", default=[], help="fix only these checks (e.g. --only I3 F3)")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that change numerics or memory (bf16, compile, ...)")
    p.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    p.add_argument("--format", choices=("diff", "json"), default="diff", help="output: unified diff (default) or JSON")
    p.add_argument("--hardware", help="target GPU (e.g. h100, a100)")
    p.set_defaults(func=run)


def _reader(root: Path):
    base = root.resolve()

    def read(rel: str) -> str | None:
        p = (base / rel)
        try:
            if p.is_symlink() or not p.resolve().is_relative_to(base) or not p.is_file():
                return None
            return p.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return read


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    tmp = p.with_name(f".{p.name}.accel-fix.tmp")
    mode = p.stat().st_mode & 0o7777
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, p)


def run(args: argparse.Namespace) -> int:
    root = Path(args.path)
    if not root.is_dir():
        print(f"accel-audit: not a directory: {args.path}", file=sys.stderr)
        return 2
    bad = [x for x in args.only if not _ID.match(x)]
    if bad:
        print(f"accel-audit: not a check ID: {', '.join(bad)} (IDs look like C1, I3)", file=sys.stderr)
        return 2
    try:
        from accel_audit.localconfig import config_in, options_for

        local = config_in(root)  # the repository's own .github/accel-audit.yml: its roles decide what may be edited
        if local.loaded.errors:
            print(f"accel-audit: {local.loaded.errors[0]}", file=sys.stderr)
            return 2
        audit = audit_path(root, options_for(local.config, AuditOptions(hardware=args.hardware)))
    except SourceError as exc:
        print(f"accel-audit: {exc}", file=sys.stderr)
        return 2
    from autofix import plan_fixes

    plan = plan_fixes(audit, _reader(root), only=[x.upper() for x in args.only], unsafe=args.unsafe_fixes)
    if args.format == "json":
        doc = plan.to_json()
        doc["applied"] = bool(plan.edits) and not args.dry_run
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(plan.diff())
    if not args.dry_run:
        for rel, text in plan.files.items():
            _write(root, rel, text)
    if args.format != "json":
        n = len(plan.edits)
        verb = "would apply" if args.dry_run else "applied"
        msg = f"accel-audit: {verb} {n} fix(es) in {len(plan.files)} file(s); score {plan.score_before}% -> {plan.score_after}%" if n else "accel-audit: nothing to fix"
        print(msg, file=sys.stderr)
        for d in plan.dropped:
            print(f"  not fixed: {d.check} {d.path}:{d.line}: {d.reason}", file=sys.stderr)
    return 0
