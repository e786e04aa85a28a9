"""``accel-audit scan PATH``: audit a directory or a .tar.gz and write the report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from checks.engine import AuditOptions, audit_path
from checks.source import SourceError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scan", help="audit a repository directory or .tar.gz archive")
    p.add_argument("path", help="directory or .tar.gz archive (GitHub tarball layout)")
    p.add_argument("--format", choices=("json", "md"), default="md")
    p.add_argument("--output", "-o", help="write the report here instead of standard output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        audit = audit_path(args.path, AuditOptions())
    except SourceError as exc:
        print(f"accel-audit: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        from reports.json_report import to_json

        text = json.dumps(to_json(audit), indent=2, ensure_ascii=False) + "\n"
    else:
        from reports.markdown import render_markdown

        text = render_markdown(audit)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
