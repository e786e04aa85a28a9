"""``accel-audit scan`` on inputs a new user tries: a closed pipe, a cut archive, a plain file."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from accel_audit.cli import EXIT_BROKEN_PIPE, main

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "repos" / "megatron_pretrain"


def _tar(fmt: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=f"w:{fmt}" if fmt else "w") as tf:
        tf.add(FIXTURE, arcname="owner-repo-abc123")
    return buf.getvalue()


def test_a_closed_pipe_ends_quietly() -> None:
    # SARIF of a fixture is ~200 KB, more than a pipe buffer: the writer is still writing when the reader leaves
    proc = subprocess.Popen(
        [sys.executable, "-m", "accel_audit.cli", "scan", str(FIXTURE), "--format", "sarif"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(10) == b'{\n  "$sche'
    proc.stdout.close()  # what `| head -c 10` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == EXIT_BROKEN_PIPE
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert err == ""


@pytest.mark.parametrize("fmt", ["gz", ""])
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_a_truncated_archive_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, fraction: float) -> None:
    whole = _tar(fmt)
    cut = tmp_path / "repo.tar.gz"
    cut.write_bytes(whole[: int(len(whole) * fraction)])
    assert main(["scan", str(cut)]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.startswith("accel-audit: unreadable archive: ")


@pytest.mark.parametrize("blocks", [1, 2, 8])
def test_a_tar_cut_at_a_header_boundary_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], blocks: int) -> None:
    # tarfile's stream mode takes a missing header for the end: the missing end-of-archive marker tells them apart
    cut = tmp_path / "repo.tar"
    cut.write_bytes(_tar("")[: 512 * blocks])
    assert main(["scan", str(cut)]) == 2
    assert capsys.readouterr().err.startswith("accel-audit: unreadable archive: ")


@pytest.mark.parametrize("fmt", ["gz", "bz2", "xz", ""])
def test_a_whole_archive_scans_like_the_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    arc = tmp_path / "repo.tar"
    arc.write_bytes(_tar(fmt))
    assert main(["scan", str(arc), "--format", "json"]) == 0
    from_archive = json.loads(capsys.readouterr().out)
    assert main(["scan", str(FIXTURE), "--format", "json"]) == 0
    from_dir = json.loads(capsys.readouterr().out)
    # the same files and verdicts (evidence order may follow the archive's member order)
    assert from_archive["scan"]["files_read"] == from_dir["scan"]["files_read"] > 0
    assert {c["id"]: c["status"] for c in from_archive["checks"]} == {c["id"]: c["status"] for c in from_dir["checks"]}


@pytest.mark.parametrize("content", [b"import torch\n", b"", b"\x00" * 600, b"PK\x03\x04zipfile"])
def test_a_plain_file_is_not_an_archive(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes) -> None:
    f = tmp_path / "train.py"
    f.write_bytes(content)
    assert main(["scan", str(f)]) == 2
    err = capsys.readouterr().err
    assert err == f"accel-audit: not a directory or archive (.tar.gz, .tar): {f}\n"


def test_a_missing_path_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(tmp_path / "nope")]) == 2
    assert "path does not exist" in capsys.readouterr().err


def test_the_markdown_report_names_the_skipped_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "train.py").write_text("import torch\nmodel = torch.nn.Linear(8, 8)\n")
    (tmp_path / "link.py").symlink_to("train.py")
    (tmp_path / "big.py").write_text("x = 1\n" * 200_000)  # 1.2 MB, over the 1 MiB limit
    assert main(["scan", str(tmp_path)]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("- Files skipped"))
    assert line == "- Files skipped: 2: `big.py` (larger than 1048576 bytes), `link.py` (symlink (not followed))"
    assert main(["scan", str(tmp_path), "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)["scan"]["skipped"]
    assert {s["path"] for s in listed} == {"big.py", "link.py"}
