"""Open an input file (gzip or plain, detected by its magic bytes) and tell what it is by its content.

Detection reads at most :data:`HEAD_BYTES` of the (decompressed) start of the file, never the whole file:
a Kineto trace is a JSON object whose first kilobytes carry ``schemaVersion`` / ``traceEvents`` /
``deviceProperties``; the other kinds announce themselves in their first lines.
"""

from __future__ import annotations

import gzip
import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

HEAD_BYTES = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"
SQLITE_MAGIC = b"SQLite format 3\x00"
PICKLE_PROTOCOLS = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")

KINDS = ("kineto", "nvidia-smi", "dmon", "nsys-csv", "nsys-sqlite", "memory-stats", "memory-summary", "memory-snapshot",
         "nccl-log", "train-log")


class InputError(Exception):
    """An input that cannot be read as what it looked like (the message says why, with the path)."""


def is_gzip(path: str | os.PathLike[str]) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def open_binary(path: str | os.PathLike[str]) -> BinaryIO:
    """The file's bytes, decompressed on the fly when it is gzip (by magic, not by name)."""
    if is_gzip(path):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def open_text(path: str | os.PathLike[str]) -> io.TextIOWrapper:
    return io.TextIOWrapper(open_binary(path), encoding="utf-8", errors="replace")


def head(path: str | os.PathLike[str], n: int = HEAD_BYTES) -> bytes:
    try:
        with open_binary(path) as f:
            return f.read(n)
    except (OSError, EOFError, gzip.BadGzipFile):
        return b""


def iter_files(paths: list[str]) -> Iterator[Path]:
    """Files named, and the files under directories named (sorted, recursive, hidden entries skipped)."""
    for p in paths:
        path = Path(p)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if not name.startswith("."):
                        yield Path(root) / name
        else:
            yield path


_KINETO_KEYS = re.compile(rb'"(traceEvents|schemaVersion|deviceProperties|distributedInfo)"\s*:')
_SMI_HEADER = re.compile(rb"^\s*(timestamp|index|name|pci\.bus_id|utilization\.gpu)\s*(\[[^\]]*\])?\s*,", re.I | re.M)
_DMON_HEADER = re.compile(rb"^#\s*(?:Date\s+Time\s+)?gpu\s+(pwr|sm)\b", re.M)
_NSYS_CSV = re.compile(rb'^"?(Time \(%\)|Time\(%\))"?,\s*"?(Total Time|Total Time \(ns\))', re.M)
_NCCL = re.compile(rb"NCCL INFO", re.M)
_SUMMARY = re.compile(rb"PyTorch CUDA memory summary", re.M)
_TRAIN = re.compile(
    rb"(elapsed time per iteration|throughput per GPU|'train_runtime'|'loss':|train_samples_per_second|samples/sec|tokens/s|"
    rb"tokens per second|tok/s|it/s[\],]|s/it[\],]|SamplesPerSec=|iteration\s+\d+/\s*\d+|\biter \d+: loss [\d.]+, time)",
    re.I,
)


def detect(path: str | os.PathLike[str]) -> str | None:
    """The kind of input (one of :data:`KINDS`), or ``None`` for anything else."""
    raw = b""
    try:
        with open(path, "rb") as f:
            raw = f.read(16)
    except OSError:
        return None
    if raw.startswith(SQLITE_MAGIC):
        return "nsys-sqlite"
    data = head(path)
    if not data:
        return None
    if data.startswith(PICKLE_PROTOCOLS) or (data[:1] == b"(" and b"segments" in data[:4096]):
        return "memory-snapshot" if b"segments" in data or b"device_traces" in data else None
    stripped = data.lstrip()
    if stripped.startswith(b"{"):
        if _KINETO_KEYS.search(stripped[:HEAD_BYTES]):
            return "kineto"
        if b'"allocated_bytes.all.peak"' in stripped or b'"reserved_bytes.all.peak"' in stripped or b'"num_alloc_retries"' in stripped:
            return "memory-stats"
        return None
    if _SUMMARY.search(data):
        return "memory-summary"
    if _DMON_HEADER.search(data):
        return "dmon"
    if _SMI_HEADER.search(data) and b"utilization.gpu" in data:
        return "nvidia-smi"
    if _NSYS_CSV.search(data):
        return "nsys-csv"
    if _NCCL.search(data):
        return "nccl-log"
    if _TRAIN.search(data):
        return "train-log"
    return None
