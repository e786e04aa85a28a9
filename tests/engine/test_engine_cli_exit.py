"""The console script's fast exit (``accel_audit.cli.entry``/``leave``): nothing that must happen at exit is lost.

``scan`` leaves with ``os._exit`` once its report is flushed and the ``atexit`` handlers have run, so these
run the CLI in a child process, as a user does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from accel_audit.cli import _command_in, build_parser, main
from accel_audit.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "repos" / "megatron_pretrain"


def _py(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_console_script_prints_the_whole_report_and_exits_with_its_code(capsys: pytest.CaptureFixture[str]) -> None:
    # a JSON report of a fixture is larger than a pipe's buffer: all of it must be flushed before os._exit
    proc = subprocess.run([sys.executable, "-m", "accel_audit", "scan", str(FIXTURE), "--format", "json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert main(["scan", str(FIXTURE), "--format", "json"]) == 0
    assert proc.stdout == capsys.readouterr().out  # the same bytes as main() in-process
    assert json.loads(proc.stdout)["schema_version"] == 1
    assert proc.stderr == ""


def test_the_exit_code_survives_the_fast_exit(tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    proc = subprocess.run([sys.executable, "-m", "accel_audit.cli", "scan", str(FIXTURE), "-o", str(out), "--fail-under", "100"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "under --fail-under 100%" in proc.stderr
    assert out.read_text(encoding="utf-8").startswith("# LLM/MLLM Training Acceleration Audit")  # written and closed


def test_the_cache_is_written_before_the_fast_exit(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    args = ["scan", str(FIXTURE), "--format", "json", "--cache", str(cache)]
    first = subprocess.run([sys.executable, "-m", "accel_audit", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    idx = list((cache / "trees").glob("*.idx"))
    pack = list((cache / "trees").glob("*.pack"))
    assert len(idx) == 1 and len(pack) == 1 and idx[0].stat().st_size > 0 and pack[0].stat().st_size > 0
    again = subprocess.run([sys.executable, "-m", "accel_audit", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and again.stdout == first.stdout


def test_leave_runs_the_atexit_handlers_and_flushes(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    proc = _py(
        "import atexit, sys\n"
        "from accel_audit.cli import leave\n"
        "atexit.register(lambda: open(sys.argv[1], 'w').write('ran'))\n"
        "sys.stdout.write('unflushed')\n"
        "leave(3)\n",
        str(mark),
    )
    assert proc.returncode == 3
    assert proc.stdout == "unflushed"
    assert mark.read_text() == "ran"


def test_leave_waits_for_a_running_thread(tmp_path: Path) -> None:
    # with another thread alive, os._exit would kill it mid-work: the interpreter's own exit joins it instead
    mark = tmp_path / "mark"
    proc = _py(
        "import sys, threading, time\n"
        "from accel_audit.cli import leave\n"
        "def work():\n"
        "    time.sleep(0.3)\n"
        "    open(sys.argv[1], 'w').write('done')\n"
        "threading.Thread(target=work).start()\n"
        "leave(4)\n",
        str(mark),
    )
    assert proc.returncode == 4
    assert mark.read_text() == "done"


def test_main_returns_in_process(tmp_path: Path) -> None:
    # tests and embedders call main(): it returns its code and never ends the process
    assert main(["scan", str(FIXTURE), "-o", str(tmp_path / "r.md")]) == 0
    assert (tmp_path / "r.md").exists()


@pytest.mark.parametrize(("argv", "command"), [
    (["scan", "x"], "scan"), (["--version"], None), ([], None), (["nosuch", "x"], None), (["--", "scan"], None), (["pr", "--help"], "pr"),
])
def test_the_named_command_is_found(argv: list[str], command: str | None) -> None:
    assert _command_in(argv) == command


@pytest.mark.parametrize("name", COMMANDS)
def test_one_command_parser_parses_as_the_full_parser(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    full, alone = build_parser(), build_parser(name)
    helps = []
    for parser in (full, alone):
        with pytest.raises(SystemExit):
            parser.parse_args([name, "--help"])
        helps.append(capsys.readouterr().out)
    assert helps[0] == helps[1] and helps[0]
    if name == "scan":
        a, b = full.parse_args(["scan", "d", "-j", "1", "--format", "sarif"]), alone.parse_args(["scan", "d", "-j", "1", "--format", "sarif"])
        assert vars(a) == vars(b) and a.fast_exit is True


def test_the_collector_stays_off_to_the_fast_exit_and_comes_back_for_in_process_callers(capsys: pytest.CaptureFixture[str]) -> None:
    import gc

    from accel_audit.cli import _restore_gc, run

    assert gc.isenabled()
    code, args = run(["scan", str(FIXTURE), "--format", "json"])
    try:
        # the console script ends the process next (leave): switched on here, the collector's first pass would walk every
        # object the audit made while it was off
        assert code == 0 and args.fast_exit is True and args.restore_gc is True and not gc.isenabled()
    finally:
        _restore_gc(args)
    assert gc.isenabled() and args.restore_gc is False
    assert main(["scan", str(FIXTURE), "--format", "json"]) == 0 and gc.isenabled()  # main() is in-process: back on
    capsys.readouterr()
