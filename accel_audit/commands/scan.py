"""``accel-audit scan PATH``: audit a directory or a .tar.gz and write the report.

Exit codes: 0 done; 1 the overall score is under ``--fail-under`` (for CI); 2 the path is missing,
the archive unreadable, the cache directory unusable, the repository's ``.github/accel-audit.yml``
invalid, or (under ``--fail-under``) no training code was found (with a message on standard error).

A scanned directory's ``.github/accel-audit.yml`` applies as it does in the App: ``ignore``,
``paths.exclude``, ``paths.training`` and ``hardware`` (``--hardware`` and ``--exclude`` add to it;
``_extends`` is not followed offline).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import TextIO

from checks.engine import Audit, AuditOptions, CacheDirError, DirFactsCache, audit_path
from checks.source import SourceError
from reports import json_text

FORMATS = ("md", "json", "sarif")


def _percent(text: str) -> float:
    try:
        v = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not 0 <= v <= 100:
        raise argparse.ArgumentTypeError(f"a percentage is between 0 and 100, not {v:g}")
    return v


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of processes: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError("the number of processes is 0 (one per CPU) or more")
    if n:
        return n
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1  # the CPUs this process may use


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scan", help="audit a repository directory or .tar.gz archive")
    p.add_argument("path", help="directory or .tar.gz archive (GitHub tarball layout)")
    p.add_argument("--format", choices=FORMATS, default="md", help="report format (default: md)")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the Markdown report (default: en)")
    p.add_argument("--fail-under", type=_percent, metavar="PERCENT", help="exit 1 when the overall score is under PERCENT")
    p.add_argument("--hardware", help="target GPU (e.g. h100, a100, v100): precision advice only where it runs")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="leave these paths out of the scan (repeatable; e.g. 'examples/**'), as paths.exclude does")
    p.add_argument("--no-repo-config", action="store_true", help="ignore the scanned directory's .github/accel-audit.yml")
    p.add_argument("--output", "-o", help="write the report here instead of standard output")
    p.add_argument("--jobs", "-j", type=_jobs, default=_jobs("0"), metavar="N",
                   help="parse files in N processes, this one and N-1 workers (default 0: one per CPU), the workers "
                        "started once the repository passes 2 MB of source; the report is the same")
    p.add_argument("--cache", metavar="DIR", help="keep parsed facts here by content hash, and for each scanned directory an index of its files' stat signatures with one pack of their facts, so a re-scan reads and parses only changed files (a directory only you can write; entries carry an HMAC under the key file kept there, and one that fails is parsed again)")
    p.set_defaults(func=run, fast_exit=True)  # one audit, then the process ends (see accel_audit.cli.leave)


def _document(audit: Audit, fmt: str) -> dict:
    if fmt == "json":
        from reports.json_report import to_json

        return to_json(audit)
    from reports.sarif import to_sarif

    return to_sarif(audit)


def render(audit: Audit, fmt: str, lang: str = "en") -> str:
    if fmt in ("json", "sarif"):
        return json_text.dumps(_document(audit, fmt)) + "\n"
    from reports.markdown import render_markdown

    return render_markdown(audit, lang=lang)


def write(audit: Audit, fmt: str, lang: str, out: TextIO) -> None:
    """Write the report to ``out``; JSON and SARIF are encoded as a stream (a large report's text is never held whole)."""
    if fmt in ("json", "sarif"):
        json_text.dump(_document(audit, fmt), out)
        out.write("\n")
    else:
        out.write(render(audit, fmt, lang))


def repo_options(path: str, args: argparse.Namespace) -> AuditOptions | str:
    """Options from the scanned directory's ``.github/accel-audit.yml`` and the flags, or the config's error."""
    from bot.repo_config import CONFIG_PATH, RepoConfig, parse_config

    cfg = RepoConfig()
    cfg_file = os.path.join(path, CONFIG_PATH)
    if not getattr(args, "no_repo_config", False) and os.path.isdir(path) and os.path.isfile(cfg_file):
        try:
            with open(cfg_file, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            return f"cannot read {cfg_file}: {exc}"
        loaded = parse_config(text, CONFIG_PATH)
        if loaded.errors:
            return loaded.errors[0]
        cfg = loaded.config
    excludes = tuple(cfg.exclude) + tuple(g for g in getattr(args, "exclude", []) or [] if g.strip())
    return AuditOptions(ignore=cfg.ignore, exclude=excludes, training=cfg.training,
                        hardware=getattr(args, "hardware", None) or cfg.hardware, jobs=getattr(args, "jobs", _jobs("0")))


def run(args: argparse.Namespace) -> int:
    cache_dir = getattr(args, "cache", None)
    try:
        cache = DirFactsCache(cache_dir, private=True) if cache_dir else None
    except OSError as exc:
        print(f"accel-audit: cannot use the cache directory {cache_dir}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except CacheDirError as exc:
        print(f"accel-audit: {exc}", file=sys.stderr)
        return 2
    hardware = getattr(args, "hardware", None)
    if hardware is not None:
        from checks.hardware import KNOWN_GPUS, normalize_gpu

        if normalize_gpu(hardware) is None:
            print(f"accel-audit: --hardware: unknown GPU {hardware!r} (known: {', '.join(KNOWN_GPUS)})", file=sys.stderr)
            return 2
        args.hardware = normalize_gpu(hardware)
    options = repo_options(args.path, args)  # the flag wins over the config's hardware:
    if isinstance(options, str):
        print(f"accel-audit: {options}", file=sys.stderr)
        return 2
    options.cache = cache
    # one audit, then the process ends: the cyclic collector would only walk the facts again (a full collection
    # over a million objects while the report is written, 0.1-0.2 s); what the checks leave in cycles is small
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            audit = audit_path(args.path, options)
        except SourceError as exc:
            print(f"accel-audit: {exc}", file=sys.stderr)
            return 2
        lang = getattr(args, "lang", "en")
        if args.output:
            with open(args.output, "w", encoding="utf-8") as fh:
                write(audit, args.format, lang, fh)
        else:
            write(audit, args.format, lang, sys.stdout)
    finally:
        # switched back on, the collector's next pass walks every object the audit made while it was off (0.15-0.2 s on
        # Megatron-LM): with ``fast_exit`` the caller turns it back on only if the process goes on (accel_audit.cli)
        if was_enabled and getattr(args, "fast_exit", False):
            args.restore_gc = True
        elif was_enabled:
            gc.enable()
    threshold = getattr(args, "fail_under", None)
    if threshold is not None and not audit.training_code_found:
        print(f"accel-audit: no training code found in {args.path}: nothing to score against --fail-under", file=sys.stderr)
        return 2
    if threshold is not None:
        from reports.scoring import overall

        pct = overall(audit.results).percent
        if pct < threshold:
            print(f"accel-audit: overall score {pct}% is under --fail-under {threshold:g}%", file=sys.stderr)
            return 1
    return 0
