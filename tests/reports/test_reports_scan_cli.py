"""``accel-audit scan``: formats, languages, --output, and the exit codes CI relies on."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from accel_audit.cli import main

REPO = Path(__file__).parent / "repos" / "tiny_raw_loop"


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    # through the CLI's main, which switches the garbage collector back on after the scan paused it for a process that
    # ends (calling the command's function alone left it off for every later test of the session)
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_markdown_in_both_languages(capsys):
    code, out, _ = run(["scan", str(REPO)], capsys)
    assert code == 0 and out.startswith("# LLM/MLLM Training Acceleration Audit")
    code, out, _ = run(["scan", str(REPO), "--lang", "zh"], capsys)
    assert code == 0 and out.startswith("# LLM/MLLM 训练加速审计报告") and "## 审计总览" in out


def test_json_and_sarif(capsys):
    code, out, _ = run(["scan", str(REPO), "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["schema_version"] == 1 and {"project", "checks", "categories", "score", "recommendations", "scan"} <= set(doc)
    code, out, _ = run(["scan", str(REPO), "--format", "sarif"], capsys)
    assert code == 0 and json.loads(out)["version"] == "2.1.0"


def test_hardware_changes_the_advice(capsys):
    _, v100, _ = run(["scan", str(REPO), "--format", "json", "--hardware", "v100"], capsys)
    _, h100, _ = run(["scan", str(REPO), "--format", "json", "--hardware", "h100"], capsys)
    rec = {r["check"]: r for r in json.loads(v100)["recommendations"]}
    assert json.loads(v100)["project"]["hardware"] == "v100"
    if "C1" in rec:
        assert "FP16" in rec["C1"]["text"]
        assert {r["check"]: r for r in json.loads(h100)["recommendations"]}["C1"]["text"] != rec["C1"]["text"]


def test_fail_under(capsys, tmp_path):
    _, out, _ = run(["scan", str(REPO), "--format", "json"], capsys)
    pct = json.loads(out)["score"]["percent"]
    code, _, err = run(["scan", str(REPO), "--fail-under", str(pct + 0.1), "--output", str(tmp_path / "r.md")], capsys)
    assert code == 1 and "under --fail-under" in err
    assert (tmp_path / "r.md").read_text(encoding="utf-8").startswith("# LLM/MLLM")  # the report is still written
    code, _, _ = run(["scan", str(REPO), "--fail-under", str(pct), "--output", str(tmp_path / "r.md")], capsys)
    assert code == 0
    with pytest.raises(SystemExit) as exc:
        run(["scan", str(REPO), "--fail-under", "120"], capsys)
    assert exc.value.code == 2


def test_missing_path_and_broken_archive_exit_2(capsys, tmp_path):
    code, out, err = run(["scan", str(tmp_path / "nope")], capsys)
    assert code == 2 and out == "" and "does not exist" in err
    bad = tmp_path / "repo.tar.gz"
    bad.write_bytes(b"not a tarball at all")
    code, _, err = run(["scan", str(bad)], capsys)
    assert code == 2 and "not a directory or archive" in err  # garbage is not an archive, whatever its name


def test_tarball_in_github_layout(capsys, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for f in sorted(REPO.iterdir()):
            tf.add(f, arcname=f"owner-repo-abc123/{f.name}")
    archive = tmp_path / "repo.tar.gz"
    archive.write_bytes(buf.getvalue())
    code, out, _ = run(["scan", str(archive), "--format", "json"], capsys)
    _, direct, _ = run(["scan", str(REPO), "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["checks"] == json.loads(direct)["checks"]
