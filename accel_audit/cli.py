"""``accel-audit`` command line."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from . import __version__
from .commands import COMMANDS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="accel-audit", description="Training-acceleration audit for LLM/MLLM repositories")
    parser.add_argument("--version", action="version", version=f"accel-audit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"accel_audit.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"accel_audit.commands.{name}":
                raise
            continue
        mod.add_parser(sub)
    return parser


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader went away


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader stopped early (``accel-audit scan . | head``): no traceback, and no second error
        # when the interpreter flushes standard output at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return code


if __name__ == "__main__":
    sys.exit(main())
