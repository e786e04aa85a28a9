"""Unpack an uploaded artifact (a zip) safely: no path traversal, no links, bounded size, count and ratio.

GitHub serves each Actions artifact as one zip. Its headers are not trusted: the bytes actually written are
counted while extracting, so a member that lies about its size still stops at the cap. Members are written
under ``dest`` with names rebuilt from their parts (absolute paths, drive letters, ``..`` and empty parts are
refused); symbolic links and other special files are skipped.
"""

from __future__ import annotations

import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

CHUNK = 1 << 20


@dataclass(frozen=True)
class ArchiveLimits:
    max_unpacked_bytes: int = 4 << 30   # all members together
    max_member_bytes: int = 2 << 30
    max_members: int = 2000
    max_ratio: float = 250.0             # uncompressed / compressed, per member (a zip bomb's signature)


class ArchiveError(Exception):
    """The archive was refused; the message is fit for a check run."""


def _safe_name(name: str) -> PurePosixPath | None:
    name = name.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return None
    return PurePosixPath(*parts)


def extract_zip(zip_path: Path, dest: Path, limits: ArchiveLimits = ArchiveLimits()) -> list[Path]:
    """Extract regular files of ``zip_path`` under ``dest``; return them. Raises :class:`ArchiveError` on a limit or a bad member."""
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    out: list[Path] = []
    total = 0
    try:
        zf = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ArchiveError(f"not a readable zip archive ({exc})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_members:
            raise ArchiveError(f"the artifact holds {len(infos)} files, more than the limit of {limits.max_members}")
        for info in infos:
            if info.is_dir():
                continue
            ftype = stat.S_IFMT(info.external_attr >> 16)
            if ftype and ftype != stat.S_IFREG:
                continue  # symbolic links, devices, fifos (no type bits: a plain file, as zip tools often write)
            rel = _safe_name(info.filename)
            if rel is None:
                raise ArchiveError(f"refused member {info.filename!r}: absolute path or '..' in the artifact")
            target = (root / rel).resolve()
            if root not in target.parents:
                raise ArchiveError(f"refused member {info.filename!r}: it would land outside the extraction folder")
            if info.compress_size and info.file_size / info.compress_size > limits.max_ratio:
                raise ArchiveError(f"refused member {info.filename!r}: compression ratio {info.file_size / info.compress_size:.0f}:1 "
                                   f"is over the limit of {limits.max_ratio:g}:1 (zip bomb?)")
            target.parent.mkdir(parents=True, exist_ok=True)
            written = 0
            try:
                with zf.open(info) as src, open(target, "wb") as dst:
                    while True:
                        chunk = src.read(CHUNK)
                        if not chunk:
                            break
                        written += len(chunk)
                        total += len(chunk)
                        if written > limits.max_member_bytes:
                            raise ArchiveError(f"member {info.filename!r} unpacks to more than {limits.max_member_bytes >> 20} MiB")
                        if total > limits.max_unpacked_bytes:
                            raise ArchiveError(f"the artifact unpacks to more than {limits.max_unpacked_bytes >> 20} MiB")
                        if info.compress_size and written > max(CHUNK, info.compress_size * limits.max_ratio):
                            raise ArchiveError(f"member {info.filename!r} inflates past {limits.max_ratio:g}:1 (zip bomb?)")
                        dst.write(chunk)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                target.unlink(missing_ok=True)
                raise ArchiveError(f"member {info.filename!r} is damaged ({exc})") from None
            except ArchiveError:
                target.unlink(missing_ok=True)
                raise
            out.append(target)
    return out
