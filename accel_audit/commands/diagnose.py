"""``accel-audit diagnose PATH...``: read profiler traces and logs, measure where the time goes, name the bottleneck.

Exit codes: 0 done; 1 ``--max-step-time-regression`` was given with ``--baseline`` and the step time grew by more
than that; 2 a path is missing, a settings file or the ``--audit`` report is unreadable, or no input was recognised.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

FORMATS = ("md", "json", "html")


def _pct(text: str) -> float:
    from diagnose.settings import SettingsError, parse_percent

    try:
        return parse_percent(text, "value")
    except SettingsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diagnose", help="diagnose profiler traces and logs (Kineto, nvidia-smi, Nsight, memory, NCCL, training logs)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or directories (walked; each file detected by content, gzip or plain)")
    p.add_argument("--format", choices=FORMATS, default="md", help="report format (default: md)")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the Markdown/HTML report")
    p.add_argument("--baseline", nargs="+", metavar="PATH", help="a second set to compare against (step time, breakdown, overlap)")
    p.add_argument("--max-step-time-regression", type=_pct, metavar="PERCENT",
                   help="with --baseline: exit 1 when the step time grew by more than PERCENT")
    p.add_argument("--config", metavar="FILE", help="read thresholds from this accel-audit.yml's profiles: section "
                                                     "(default: .github/accel-audit.yml under the current directory, if any)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override one threshold (repeatable), e.g. idle_high_pct=15")
    p.add_argument("--audit", metavar="REPORT.json", help="a static audit report (scan --format json): recommendations say which checks it found unused")
    p.add_argument("--output", "-o", help="write the report here instead of standard output")
    p.set_defaults(func=run)


def _value(text: str) -> Any:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            continue
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def load_settings(args: argparse.Namespace) -> dict[str, Any]:
    from diagnose.config import profiles_settings

    cfg_path = Path(args.config) if args.config else Path(".github/accel-audit.yml")
    layers: dict[str, Any] = {}
    if args.config or cfg_path.is_file():
        layers.update(profiles_settings(cfg_path.read_text(encoding="utf-8"), str(cfg_path)).thresholds)
    for item in args.set:
        key, sep, val = item.partition("=")
        if not sep:
            raise ValueError(f"--set expects KEY=VALUE, got {item!r}")
        layers[key.strip()] = _value(val.strip())
    if args.max_step_time_regression is not None:
        layers["max_step_time_regression_pct"] = args.max_step_time_regression
    from diagnose.settings import merged

    merged(layers)  # unknown keys fail here, with the list of known ones
    return layers


def run(args: argparse.Namespace) -> int:
    from diagnose.compare import compare
    from diagnose.core import diagnose
    from diagnose.settings import SettingsError

    for p in list(args.paths) + list(args.baseline or []):
        if not Path(p).exists():
            print(f"accel-audit diagnose: {p}: no such file or directory", file=sys.stderr)
            return 2
    try:
        settings = load_settings(args)
        audit = json.loads(Path(args.audit).read_text(encoding="utf-8")) if args.audit else None
    except (OSError, ValueError, SettingsError) as exc:
        print(f"accel-audit diagnose: {exc}", file=sys.stderr)
        return 2
    report = diagnose(args.paths, settings, audit=audit)
    if all(i.get("skipped") for i in report["inputs"]):
        print("accel-audit diagnose: no input was recognised as a profile or log:", file=sys.stderr)
        for i in report["inputs"]:
            print(f"  {i['path']}: {i.get('skipped')}", file=sys.stderr)
        return 2
    cmp = None
    if args.baseline:
        base = diagnose(args.baseline, settings, audit=audit)
        cmp = compare(base, report, report["settings"].get("max_step_time_regression_pct"))
        report["baseline"] = {"inputs": base["inputs"], "bottleneck": base["verdict"]["bottleneck"], **cmp}
    text = render(report, args.format, args.lang, cmp)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 1 if cmp and (cmp.get("gate") or {}).get("failed") else 0


def render(report: dict[str, Any], fmt: str, lang: str = "en", cmp: dict[str, Any] | None = None) -> str:
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if fmt == "html":
        from diagnose.render_html import render as html

        return html(report, lang, cmp)
    from diagnose.render_md import render as md

    return md(report, lang, cmp)
