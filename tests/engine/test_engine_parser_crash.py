"""A file whose parser crashes (RecursionError, MemoryError, any exception) is that file's parse error, never a
failed audit: the audit is what gates a pull request, so a crash must not be a way to switch the gate off."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from checks.facts import extract_file

DEEP_TOML = ("[project]\nname = \"x\"\ndependencies = " + "[" * 5000 + "]" * 5000 + "\n").encode()


def test_deeply_nested_toml_is_a_parse_error_entry() -> None:
    assert len(DEEP_TOML) < 11_000  # about 10 KB, as in the probe
    ff = extract_file("pyproject.toml", DEEP_TOML)
    assert ff.error is not None and "RecursionError" in ff.error
    assert ff.path == "pyproject.toml" and ff.lines == 4


def test_deeply_nested_json_and_yaml_are_parse_errors_too() -> None:
    for path, data in (("conf.json", b"[" * 100_000 + b"]" * 100_000), ("conf.yaml", b"a: " + b"[" * 50_000 + b"]" * 50_000)):
        ff = extract_file(path, data)
        assert ff.error, path


def test_scan_of_a_repo_with_a_crashing_file_finishes(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(DEEP_TOML)
    (tmp_path / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.train()\n")
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-c", "import sys; from accel_audit.cli import main; sys.exit(main())", "scan", str(tmp_path), "--format", "json", "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    data = json.loads(out.read_text())
    errors = {e["path"]: e["error"] for e in data["scan"]["parse_errors"]}
    assert "RecursionError" in errors["pyproject.toml"]
