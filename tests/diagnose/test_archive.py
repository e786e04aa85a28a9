"""Safe unpacking of uploaded artifacts: traversal, links, zip bombs, counts and sizes."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from diagnose.archive import ArchiveError, ArchiveLimits, extract_zip


def _zip(path: Path, members: dict[str, bytes], *, link: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if link:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


def test_regular_members_are_extracted(tmp_path: Path) -> None:
    z = _zip(tmp_path / "a.zip", {"traces/rank-0.pt.trace.json": b"{}", "logs/nccl.log": b"x"}, link="evil-link")
    out = extract_zip(z, tmp_path / "out")
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in out) == ["logs/nccl.log", "traces/rank-0.pt.trace.json"]
    assert not (tmp_path / "out" / "evil-link").exists()


@pytest.mark.parametrize("name", ["../escape.txt", "/abs/path.txt", "a/../../b.txt", "C:/win.txt"])
def test_traversal_is_refused(tmp_path: Path, name: str) -> None:
    z = _zip(tmp_path / "a.zip", {name: b"x"})
    with pytest.raises(ArchiveError, match="refused member"):
        extract_zip(z, tmp_path / "out")
    assert not (tmp_path / "escape.txt").exists()


def test_zip_bomb_ratio_and_sizes(tmp_path: Path) -> None:
    z = _zip(tmp_path / "bomb.zip", {"zeros.json": b"\0" * (20 << 20)})
    with pytest.raises(ArchiveError, match="compression ratio"):
        extract_zip(z, tmp_path / "out")
    z = _zip(tmp_path / "big.zip", {"a.txt": bytes(range(256)) * 8192, "b.txt": bytes(range(256)) * 8192})
    with pytest.raises(ArchiveError, match="unpacks to more than"):
        extract_zip(z, tmp_path / "out2", ArchiveLimits(max_unpacked_bytes=3 << 20, max_ratio=1e9))
    assert not (tmp_path / "out2" / "b.txt").exists()  # the member that crossed the cap is not left half-written
    z = _zip(tmp_path / "many.zip", {f"f{i}.txt": b"x" for i in range(30)})
    with pytest.raises(ArchiveError, match="30 files"):
        extract_zip(z, tmp_path / "out3", ArchiveLimits(max_members=20))


def test_not_a_zip(tmp_path: Path) -> None:
    p = tmp_path / "x.zip"
    p.write_bytes(b"PK\x03\x04 broken")
    with pytest.raises(ArchiveError, match="not a readable zip"):
        extract_zip(p, tmp_path / "out")
