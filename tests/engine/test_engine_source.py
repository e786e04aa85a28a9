"""Sources: a local directory and a streamed GitHub-style ``.tar.gz``, with every limit and refusal."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from pathlib import Path

import pytest

from checks.engine import AuditOptions, audit_path, audit_tarball
from checks.facts import extract_file
from checks.source import Limits, ReadStats, SourceError, iter_directory, iter_tarball

TOP = "acme-llm-train-3f2c1ab"


def _tar(entries: list[tuple[str, object, str]], compress: str = "gz") -> bytes:
    """Build an archive in memory as GitHub's tarball endpoint does (pax format, one top folder)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=f"w:{compress}" if compress else "w", format=tarfile.PAX_FORMAT,
                      pax_headers={"comment": "3f2c1ab0d9e8"}) as tf:
        for name, data, kind in entries:
            ti = tarfile.TarInfo(name)
            if kind == "file":
                assert isinstance(data, bytes)
                ti.size = len(data)
                tf.addfile(ti, io.BytesIO(data))
            elif kind == "dir":
                ti.type = tarfile.DIRTYPE
                tf.addfile(ti)
            elif kind in ("sym", "lnk"):
                ti.type = tarfile.SYMTYPE if kind == "sym" else tarfile.LNKTYPE
                ti.linkname = str(data)
                tf.addfile(ti)
    return buf.getvalue()


def _read(raw: bytes, limits: Limits | None = None) -> tuple[dict[str, bytes], ReadStats]:
    stats = ReadStats()
    files = dict(iter_tarball(io.BytesIO(raw), limits or Limits(), stats))
    return files, stats


def _reasons(stats: ReadStats) -> dict[str, str]:
    return {s.path: s.reason for s in stats.skipped}


TRAIN = b"import torch\nloader = torch.utils.data.DataLoader(ds, num_workers=8, pin_memory=True)\n"


# --- tarball ---------------------------------------------------------------------------


def test_tarball_strips_githubs_top_folder_and_keeps_paths_relative() -> None:
    ds = b'{"zero_optimization": {"stage": 2}}'
    raw = _tar([
        (f"{TOP}/", None, "dir"),
        (f"{TOP}/train.py", TRAIN, "file"),
        (f"{TOP}/configs/ds.json", ds, "file"),
        (f"{TOP}/docs/logo.svg", b"<svg/>", "file"),
    ])
    files, stats = _read(raw)
    assert sorted(files) == ["configs/ds.json", "train.py"]  # the .svg is no input of any check
    assert files["train.py"] == TRAIN
    assert stats.files_read == 2 and stats.bytes_read == len(TRAIN) + len(ds)


def test_tarball_rejects_absolute_and_dotdot_entries_and_reports_them() -> None:
    raw = _tar([
        (f"{TOP}/ok.py", b"x = 1\n", "file"),
        (f"{TOP}/../../etc/cron.d/evil.sh", b"rm -rf /\n", "file"),
        (f"{TOP}/a/../../escape.py", b"x = 2\n", "file"),
        (f"{TOP}//etc/passwd.yaml", b"a: 1\n", "file"),
    ])
    files, stats = _read(raw)
    assert list(files) == ["ok.py"]
    unsafe = [s for s in stats.skipped if "unsafe" in s.reason]
    assert len(unsafe) == 3
    assert all(".." in s.path or "/etc" in s.path for s in unsafe)


def test_tarball_absolute_path_without_top_folder_stripping() -> None:
    stats = ReadStats()
    raw = _tar([("/etc/shadow.yaml", b"a: 1\n", "file"), ("train.py", b"x = 1\n", "file")])
    files = dict(iter_tarball(io.BytesIO(raw), Limits(), stats, strip_top=False))
    assert list(files) == ["train.py"]
    assert any(s.reason.startswith("unsafe") for s in stats.skipped)


def test_tarball_skips_symlink_and_hardlink_members() -> None:
    raw = _tar([
        (f"{TOP}/train.py", TRAIN, "file"),
        (f"{TOP}/configs/cluster.yaml", "/etc/passwd", "sym"),
        (f"{TOP}/copy.py", f"{TOP}/train.py", "lnk"),
        (f"{TOP}/notes.txt", "/etc/hosts", "sym"),
    ])
    files, stats = _read(raw)
    assert list(files) == ["train.py"]
    reasons = _reasons(stats)
    assert reasons["configs/cluster.yaml"] == "symlink (not followed)"
    assert reasons["copy.py"] == "hardlink (not followed)"
    assert "notes.txt" not in reasons  # not an input of any check: passed over silently


def test_tarball_skips_oversize_files_and_reports_them() -> None:
    raw = _tar([(f"{TOP}/big.py", b"x = 1\n" * 1000, "file"), (f"{TOP}/small.py", b"x = 1\n", "file")])
    files, stats = _read(raw, Limits(max_file_bytes=1000))
    assert list(files) == ["small.py"]
    assert _reasons(stats) == {"big.py": "larger than 1000 bytes"}
    assert stats.files_seen == 2


def test_tarball_total_byte_cap_truncates_and_reports() -> None:
    entries = [(f"{TOP}/m{i}.py", b"#" * 400 + b"\n", "file") for i in range(5)]
    files, stats = _read(_tar(entries), Limits(max_file_bytes=1000, max_total_bytes=1000))
    assert len(files) == 2 and stats.bytes_read == 802
    assert stats.truncated
    assert [s.reason for s in stats.skipped] == ["total read limit reached"] * 3


def test_tarball_skips_binaries_and_vendored_trees() -> None:
    raw = _tar([
        (f"{TOP}/weights.json", b"\x80\x04\x95\x00\x00binary", "file"),
        (f"{TOP}/node_modules/x/index.py", b"import deepspeed\n", "file"),
        (f"{TOP}/third_party/megatron/p.py", b"import megatron\n", "file"),
        (f"{TOP}/.git/config.py", b"x = 1\n", "file"),
        (f"{TOP}/pkg.egg-info/setup.py", b"x = 1\n", "file"),
        (f"{TOP}/train.py", TRAIN, "file"),
    ])
    files, stats = _read(raw)
    assert list(files) == ["train.py"]
    assert _reasons(stats) == {"weights.json": "binary"}


def test_tarball_non_utf8_text_is_read_and_decoded_with_replacement() -> None:
    latin1 = "# Donn\xe9es\nimport torch\nloader = torch.utils.data.DataLoader(ds, num_workers=4)\nS = 'caf\xe9'\n".encode("latin-1")
    files, _ = _read(_tar([(f"{TOP}/data.py", latin1, "file")]))
    ff = extract_file("data.py", files["data.py"])
    assert ff.error is None
    [call] = [c for c in ff.calls if c.short == "DataLoader"]
    assert call.kwargs["num_workers"] == 4 and call.line == 3


def test_utf16_text_with_its_byte_order_mark_is_read_as_text() -> None:
    # ReST-MCTS's requirements_mistral.txt, saved by a Windows tool: UTF-16 LE with a BOM, a NUL in every other byte
    req = "\ufefftorch==2.4.0\ntransformers==4.45.2\nvllm==0.6.2\n".encode("utf-16-le")
    files, stats = _read(_tar([(f"{TOP}/requirements_mistral.txt", req, "file"),
                               (f"{TOP}/weights.bin.json", b"\x00\x01\x02binary", "file")]))
    assert list(files) == ["requirements_mistral.txt"] and _reasons(stats) == {"weights.bin.json": "binary"}
    ff = extract_file("requirements_mistral.txt", files["requirements_mistral.txt"])
    assert [(d.name, d.spec, d.line) for d in ff.deps] == [("torch", "==2.4.0", 1), ("transformers", "==4.45.2", 2),
                                                           ("vllm", "==0.6.2", 3)]


@pytest.mark.parametrize("cut", ["half", "trailer", "header"])
def test_truncated_archive_raises_source_error(cut: str) -> None:
    raw = _tar([(f"{TOP}/train.py", TRAIN, "file"), (f"{TOP}/big.py", os.urandom(300_000).hex().encode(), "file")])
    n = {"half": len(raw) // 2, "trailer": len(raw) - 6, "header": 5}[cut]
    with pytest.raises(SourceError, match="unreadable archive"):
        _read(raw[:n])


def test_corrupt_archive_raises_source_error() -> None:
    raw = bytearray(_tar([(f"{TOP}/train.py", TRAIN * 50, "file")]))
    mid = len(raw) // 2
    raw[mid] ^= 0xFF
    raw[mid + 1] ^= 0x55
    with pytest.raises(SourceError):
        _read(bytes(raw))


def test_not_an_archive_raises_source_error() -> None:
    with pytest.raises(SourceError):
        _read(b"<html>rate limited</html>")
    with pytest.raises(SourceError):
        _read(gzip.compress(b"just gzip, no tar inside" * 10))


def test_plain_tar_and_other_compressions_still_work() -> None:
    for compress in ("", "bz2", "xz"):
        files, _ = _read(_tar([(f"{TOP}/train.py", TRAIN, "file")], compress=compress))
        assert list(files) == ["train.py"], compress


def test_audit_tarball_end_to_end_and_broken_archive(tmp_path: Path) -> None:
    raw = _tar([(f"{TOP}/train.yaml", b"bf16: true\n", "file")])
    audit = audit_tarball(io.BytesIO(raw), "acme/llm-train")
    assert audit.result("C1").status.value == "used"
    assert audit.result("C1").evidence[0].path == "train.yaml"
    archive = tmp_path / "repo.tar.gz"
    archive.write_bytes(raw[: len(raw) - 20])
    with pytest.raises(SourceError):
        audit_path(archive)


# --- directory -------------------------------------------------------------------------


def _tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def test_directory_walk_skips_vendored_git_and_unknown_files(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "train.py": TRAIN,
        "configs/ds.json": b"{}",
        ".git/hooks/pre-commit.sh": b"torchrun x.py\n",
        "venv/lib/site.py": b"import deepspeed\n",
        "build/lib/x.py": b"import deepspeed\n",
        "wandb/run-1/files/config.yaml": b"bf16: true\n",
        "README.md": b"bf16\n",
        "image.png": b"\x89PNG\x00\x00",
    })
    stats = ReadStats()
    files = dict(iter_directory(tmp_path, Limits(), stats))
    # README.md is read for documented facts only (checks/facts/docs_md.py: a documented multi-node launch)
    assert sorted(files) == ["README.md", "configs/ds.json", "train.py"]
    assert stats.skipped == []


def test_directory_never_follows_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _tree(outside, {"secret.yaml": b"bf16: true\n", "lib/x.py": b"import deepspeed\n"})
    repo = tmp_path / "repo"
    _tree(repo, {"train.py": TRAIN})
    (repo / "passwd.yaml").symlink_to("/etc/passwd")
    (repo / "secret.yaml").symlink_to(outside / "secret.yaml")
    (repo / "lib").symlink_to(outside / "lib", target_is_directory=True)
    (repo / "dangling.py").symlink_to(repo / "missing.py")
    stats = ReadStats()
    files = dict(iter_directory(repo, Limits(), stats))
    assert list(files) == ["train.py"]
    reasons = _reasons(stats)
    assert reasons == {
        "passwd.yaml": "symlink (not followed)",
        "secret.yaml": "symlink (not followed)",
        "lib": "symlink (not followed)",
        "dangling.py": "symlink (not followed)",
    }



def test_a_folder_swapped_for_a_symlink_during_the_walk_is_never_entered(tmp_path: Path) -> None:
    """Folders are opened relative to their parent with O_NOFOLLOW: one replaced by a symlink after it was listed (a
    race a hostile checkout could win) is skipped, and nothing outside the tree is read."""
    outside = tmp_path / "outside"
    _tree(outside, {"stolen.py": b"SECRET = 1\n"})
    repo = tmp_path / "repo"
    _tree(repo, {"a.py": b"x = 1\n", "sub/b.py": b"y = 2\n", "sub/inner/c.py": b"z = 3\n"})
    walk = iter_directory(repo, Limits(), ReadStats())
    assert next(walk)[0] == "a.py"  # the root is listed: "sub" is known as a folder, not entered yet
    (repo / "sub" / "inner" / "c.py").unlink()
    (repo / "sub" / "inner").rmdir()
    (repo / "sub" / "b.py").unlink()
    (repo / "sub").rmdir()
    (repo / "sub").symlink_to(outside, target_is_directory=True)
    assert list(walk) == []


def test_the_walk_order_is_files_by_name_then_folders_depth_first(tmp_path: Path) -> None:
    _tree(tmp_path, {"z.py": b"", "b/y.py": b"", "b/a/x.py": b"", "a/w.py": b"", "m.py": b"", "b/c.py": b""})
    assert [p for p, _ in iter_directory(tmp_path, Limits(), ReadStats())] == ["m.py", "z.py", "a/w.py", "b/c.py", "b/y.py", "b/a/x.py"]


def test_a_walk_left_early_closes_its_folders(tmp_path: Path) -> None:
    _tree(tmp_path, {f"d{i}/e{i}/f.py": b"x = 1\n" for i in range(5)})
    before = len(os.listdir("/proc/self/fd"))
    walk = iter_directory(tmp_path, Limits(), ReadStats())
    assert next(walk)[0] == "d0/e0/f.py"
    assert len(os.listdir("/proc/self/fd")) > before  # the open folders on the way down
    walk.close()
    assert len(os.listdir("/proc/self/fd")) == before

def test_directory_size_limits_and_binaries(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.py": b"x = 1\n" * 300, "b.py": b"y = 2\n", "c.json": b'{"a": 1}\x00\x01', "d.py": b"z = 3\n" * 100})
    stats = ReadStats()
    files = dict(iter_directory(tmp_path, Limits(max_file_bytes=1000, max_total_bytes=606), stats))
    reasons = _reasons(stats)
    assert reasons["a.py"] == "larger than 1000 bytes"
    assert reasons["c.json"] == "binary"
    assert sorted(files) == ["b.py", "d.py"] and stats.bytes_read == 606
    stats = ReadStats()
    files = dict(iter_directory(tmp_path, Limits(max_file_bytes=1000, max_total_bytes=100), stats))
    assert list(files) == ["b.py"] and stats.truncated
    assert _reasons(stats)["d.py"] == "total read limit reached"


def test_missing_path_and_plain_file_are_source_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        list(iter_directory(tmp_path / "nope", Limits(), ReadStats()))
    with pytest.raises(SourceError):
        audit_path(tmp_path / "nope")
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    with pytest.raises(SourceError):
        audit_path(notes)


def test_exclude_globs_drop_paths_before_parsing(tmp_path: Path) -> None:
    _tree(tmp_path, {"examples/old/train.yaml": b"bf16: true\n", "train.yaml": b"bf16: false\n"})
    audit = audit_path(tmp_path, AuditOptions(exclude=("examples/**",)))
    assert audit.result("C1").status.value == "unused"
    assert "examples/old/train.yaml" not in audit.facts.files
