"""``accel-audit scan`` end to end, as a user runs it: exit codes, messages, the JSON contract."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import jsonschema
import pytest

from accel_audit.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "repos"

_EVIDENCE = {
    "type": "object",
    "required": ["path", "line", "snippet"],
    "properties": {"path": {"type": "string", "pattern": r"^[^/]"}, "line": {"type": "integer", "minimum": 1}, "snippet": {"type": "string"}},
}
#: the contract of shared/spec/check-ids.md (extra keys allowed; these must be there with these types)
REPORT_SCHEMA = {
    "type": "object",
    "required": ["schema_version", "project", "checks", "categories", "score", "recommendations"],
    "properties": {
        "schema_version": {"const": 1},
        "project": {
            "type": "object",
            "required": ["frameworks", "model_type", "estimated_params", "bottleneck", "bottleneck_reasons"],
            "properties": {
                "frameworks": {"type": "array", "items": {"type": "string"}},
                "model_type": {"enum": ["LLM", "MLLM", "unknown"]},
                "estimated_params": {"type": ["string", "null"]},
                "bottleneck": {"type": "string"},
                "bottleneck_reasons": {"type": "array", "items": {"type": "string"}},
            },
        },
        "checks": {
            "type": "array", "minItems": 63, "maxItems": 63,
            "items": {
                "type": "object",
                "required": ["id", "category", "title", "status", "evidence", "recommendation", "priority"],
                "properties": {
                    "id": {"type": "string", "pattern": r"^[A-J]\d{1,2}$"},
                    "category": {"type": "string", "pattern": r"^[A-J]$"},
                    "title": {"type": "string", "minLength": 3},
                    "status": {"enum": ["used", "partial", "unused", "n/a"]},
                    "evidence": {"type": "array", "items": _EVIDENCE},
                    "recommendation": {"type": ["string", "null"]},
                    "priority": {"enum": ["high", "medium", "low", None]},
                },
            },
        },
        "categories": {
            "type": "array", "minItems": 10, "maxItems": 10,
            "items": {"type": "object", "required": ["id", "score", "max", "applicable"],
                      "properties": {"id": {"type": "string"}, "score": {"type": "number"}, "max": {"type": "integer"}, "applicable": {"type": "boolean"}}},
        },
        "score": {"type": "object", "required": ["points", "max", "percent"],
                  "properties": {"points": {"type": "number"}, "max": {"type": "integer"}, "percent": {"type": "number"}}},
        "recommendations": {
            "type": "array",
            "items": {"type": "object", "required": ["check", "priority", "text", "snippet"],
                      "properties": {"check": {"type": "string"}, "priority": {"enum": ["high", "medium", "low"]}, "text": {"type": "string"}}},
        },
    },
}


def _scan_json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    code = main(["scan", str(path), "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


@pytest.mark.parametrize("name", ["hf_deepspeed", "hostile", "vllm_service"])
def test_json_report_follows_the_contract(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _scan_json(FIXTURES / name, capsys)
    jsonschema.validate(doc, REPORT_SCHEMA)
    ids = [c["id"] for c in doc["checks"]]
    assert len(set(ids)) == 63 and ids[0] == "A1" and ids[-1] == "J7"
    for c in doc["checks"]:
        assert c["category"] == c["id"][0]
        for ev in c["evidence"]:
            assert (FIXTURES / name / ev["path"]).is_file(), ev
    applicable = [c for c in doc["checks"] if c["status"] != "n/a"]
    points = sum({"used": 1, "partial": 0.5}.get(c["status"], 0) for c in applicable)
    assert doc["score"]["max"] == len(applicable) and doc["score"]["points"] == points
    assert sum(cat["max"] for cat in doc["categories"]) == len(applicable)


def test_hostile_scan_reports_what_it_skipped_and_could_not_parse(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _scan_json(FIXTURES / "hostile", capsys)
    skipped = {s["path"]: s["reason"] for s in doc["scan"]["skipped"]}
    assert skipped["configs/cluster_env.yaml"] == "symlink (not followed)"
    assert skipped["configs/model_cache.json"] == "binary"
    assert skipped["generated/token_table.py"].startswith("larger than")
    errors = {e["path"] for e in doc["scan"]["parse_errors"]}
    assert {"configs/broken.yaml", "broken_syntax.py", "configs/aliases.yaml", "generated/long_expr.py"} <= errors
    assert "root:" not in json.dumps(doc)  # nothing of /etc/passwd leaked into the report


def test_scan_writes_output_file_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    assert main(["scan", str(FIXTURES / "minimal_loop"), "--format", "json", "--output", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert json.loads(out.read_text(encoding="utf-8"))["schema_version"] == 1
    assert main(["scan", str(FIXTURES / "minimal_loop")]) == 0
    assert capsys.readouterr().out.startswith("#")


def test_scan_of_a_tarball_matches_the_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = FIXTURES / "lightning_project"
    archive = tmp_path / "lit.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(src, arcname="acme-lit-sft-1a2b3c4")
    from_dir = _scan_json(src, capsys)
    from_tar = _scan_json(archive, capsys)
    assert [(c["id"], c["status"], c["evidence"]) for c in from_dir["checks"]] == [
        (c["id"], c["status"], c["evidence"]) for c in from_tar["checks"]
    ]


def test_missing_path_exits_2_with_a_clear_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(tmp_path / "no-such-repo")]) == 2
    err = capsys.readouterr().err
    assert "accel-audit:" in err and "does not exist" in err and "no-such-repo" in err


def test_unreadable_archive_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = b"import torch\n" * 5000
        ti = tarfile.TarInfo("o-r-1/train.py")
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    bad = tmp_path / "repo.tar.gz"
    bad.write_bytes(buf.getvalue()[:-30])
    assert main(["scan", str(bad), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert "unreadable archive" in captured.err and captured.out == ""


def test_console_script_process_exit_codes(tmp_path: Path) -> None:
    ok = subprocess.run([sys.executable, "-m", "accel_audit.cli", "scan", str(FIXTURES / "minimal_loop"), "--format", "json"],
                        capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["schema_version"] == 1
    bad = subprocess.run([sys.executable, "-m", "accel_audit.cli", "scan", str(tmp_path / "missing")],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert bad.returncode == 2 and "does not exist" in bad.stderr and "Traceback" not in bad.stderr


def test_scan_with_a_facts_cache_gives_the_same_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    args = ["scan", str(FIXTURES / "hf_deepspeed"), "--format", "json", "--cache", str(cache)]
    plain = _scan_json(FIXTURES / "hf_deepspeed", capsys)
    assert main(args) == 0
    cold = json.loads(capsys.readouterr().out)
    entries = {p.name: p.stat().st_ino for p in cache.rglob("*") if p.is_file()}
    assert entries and (cache.stat().st_mode & 0o777) == 0o700
    assert main(args) == 0  # every file from the cache now
    warm = json.loads(capsys.readouterr().out)
    assert cold == plain and warm == plain
    # read, not parsed again: a parse would have replaced each entry with a new file (os.replace)
    assert {p.name: p.stat().st_ino for p in cache.rglob("*") if p.is_file()} == entries


def test_scan_refuses_a_cache_directory_others_can_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert main(["scan", str(FIXTURES / "minimal_loop"), "--cache", str(shared)]) == 2
    err = capsys.readouterr().err
    assert "writable by group/others" in err and "pickled facts could run code" in err


def test_a_cache_that_cannot_be_written_does_not_fail_the_scan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    for i in range(256):  # a file where every entry's folder would go: each write fails (even as root)
        (cache / f"{i:02x}").write_text("")
    (cache / "trees").write_text("")  # and where the directory's index and pack would go
    assert main(["scan", str(FIXTURES / "minimal_loop"), "--format", "json", "--cache", str(cache)]) == 0
    assert json.loads(capsys.readouterr().out) == _scan_json(FIXTURES / "minimal_loop", capsys)
    assert not [p for p in cache.iterdir() if p.is_dir() or p.suffix == ".tmp"]
