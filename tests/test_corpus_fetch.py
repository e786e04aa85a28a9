"""corpus.fetch unpacks archives from the index without escaping its folder or following links."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from corpus.fetch import FetchError, fetch, unpack


def _tar(path: Path) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in (("pkg-1.0/train.py", b"import torch\n"), ("../evil.py", b"x"), ("/abs.py", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("pkg-1.0/link")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        tf.addfile(link)
    return path


def test_tar_members_outside_the_folder_and_links_are_skipped(tmp_path: Path) -> None:
    out = unpack(_tar(tmp_path / "pkg-1.0.tar.gz"), tmp_path / "out")
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() or p.is_symlink())
    assert files == ["pkg-1.0/train.py"]
    assert not (tmp_path / "evil.py").exists()


def test_zip_members_outside_the_folder_are_skipped(tmp_path: Path) -> None:
    whl = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr("pkg/__init__.py", "")
        zf.writestr("../../evil.py", "x")
    out = unpack(whl, tmp_path / "out")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.py")) == ["pkg/__init__.py"]


def test_a_version_must_be_pinned(tmp_path: Path) -> None:
    with pytest.raises(FetchError, match="pin a version"):
        fetch("trl", tmp_path)
