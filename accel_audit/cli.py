"""``accel-audit`` command line.

:func:`main` runs one command and returns its exit code (tests call it in-process). The console
script is :func:`entry`: after a command that asks for it (``scan``: one audit, then the process
ends), it leaves with ``os._exit`` once its output is flushed and the ``atexit`` handlers have run,
instead of letting the interpreter free every object one by one (the facts of a large repository:
0.15-0.2 s, an eighth of a warm re-scan).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
import threading
from typing import NoReturn

from . import __version__
from .commands import COMMANDS


def _command_in(argv: list[str]) -> str | None:
    """The sub-command ``argv`` names (its first argument that is not an option), when it is one of :data:`COMMANDS`."""
    for a in argv:
        if a == "--":
            return None
        if not a.startswith("-"):
            return a if a in COMMANDS else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or with ``only`` the parser of that one command (its module alone is imported:
    ``scan`` does not load the App's HTTP clients; its options, help and errors are the same)."""
    parser = argparse.ArgumentParser(prog="accel-audit", description="Training-acceleration audit for LLM/MLLM repositories")
    parser.add_argument("--version", action="version", version=f"accel-audit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in (only,) if only else COMMANDS:
        try:
            mod = importlib.import_module(f"accel_audit.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"accel_audit.commands.{name}":
                raise
            continue
        mod.add_parser(sub)
    return parser


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader went away


def run(argv: list[str] | None) -> tuple[int, argparse.Namespace | None]:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(_command_in(argv)).parse_args(argv)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader stopped early (``accel-audit scan . | head``): no traceback, and no second error
        # when the interpreter flushes standard output at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE, args
    return code, args


def main(argv: list[str] | None = None) -> int:
    code, args = run(argv)
    _restore_gc(args)  # the process goes on: the collector the command paused runs again
    return code


def _restore_gc(args: argparse.Namespace | None) -> None:
    """Switch the cyclic collector back on where a ``fast_exit`` command left it off for a process that ends next
    (``scan``: its first pass would walk every object of the audit only to find nothing to free)."""
    if args is not None and getattr(args, "restore_gc", False):
        args.restore_gc = False
        gc.enable()


def leave(code: int) -> NoReturn:
    """End the process with ``code`` without freeing its objects: standard output and error are flushed and the
    ``atexit`` handlers run (worker pools, temporary directories, ``weakref.finalize``), then ``os._exit``.
    With another thread still running, the interpreter's own exit runs instead (it waits for that thread)."""
    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # as the interpreter's own exit does when it cannot flush: status 120
            code = code or 120
    os._exit(code)


def entry() -> NoReturn:
    """The ``accel-audit`` console script: :func:`main`, then :func:`leave` for commands that ask for it."""
    code, args = run(None)
    if getattr(args, "fast_exit", False):
        leave(code)
    _restore_gc(args)
    sys.exit(code)


if __name__ == "__main__":
    entry()
