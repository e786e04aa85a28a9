"""Audit a repository at a commit straight from GitHub's tarball endpoint, streamed.

``GET /repos/{o}/{r}/tarball/{sha}`` answers with a redirect to the archive host; httpx follows it (and drops
the Authorization header on the way, as the host changes). The body is handed, chunk by chunk, to
``checks.engine.audit_tarball``, which runs in a worker thread and pulls the next chunk from the event loop
when it needs one: nothing is extracted to disk and the whole archive is never held in memory. A download
larger than ``max_download`` bytes stops with :class:`checks.source.SourceError`.

A monorepo (several ``projects``) is spooled to a temporary file once and read once per project.
"""

from __future__ import annotations

import asyncio
import io
import logging
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import httpx
from githubkit import GitHub

from checks.engine import Audit, AuditOptions, audit_files, audit_tarball
from checks.source import ReadStats, SourceError, iter_tarball

log = logging.getLogger(__name__)

DEFAULT_MAX_DOWNLOAD = 1 << 30  # 1 GiB of archive
CHUNK = 1 << 16


class TarballHTTPError(Exception):
    def __init__(self, status: int, url: str) -> None:
        super().__init__(f"tarball download answered HTTP {status}")
        self.status = status
        self.url = url


class _AsyncStreamReader(io.RawIOBase):
    """A blocking file object over an async byte iterator, read from a worker thread."""

    def __init__(self, chunks: AsyncIterator[bytes], max_bytes: int) -> None:
        self._chunks = chunks
        self._buf = b""
        self._eof = False
        self.total = 0
        self.max_bytes = max_bytes

    def readable(self) -> bool:
        return True

    async def _next(self) -> bytes | None:
        try:
            return await self._chunks.__anext__()
        except StopAsyncIteration:
            return None

    def readinto(self, b: Any) -> int:
        while not self._buf and not self._eof:
            chunk = anyio.from_thread.run(self._next)
            if chunk is None:
                self._eof = True
                break
            self.total += len(chunk)
            if self.total > self.max_bytes:
                raise SourceError(f"repository archive larger than {self.max_bytes} bytes")
            self._buf = chunk
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def tarball_path(owner: str, repo: str, sha: str) -> str:
    return f"repos/{owner}/{repo}/tarball/{sha}"


async def _open(client: httpx.AsyncClient, url: str, attempts: int, delay: float) -> httpx.Response:
    for attempt in range(attempts):
        try:
            req = client.build_request("GET", url)
            resp = await client.send(req, stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError):
            if attempt + 1 == attempts:
                raise
            await asyncio.sleep(delay * 2**attempt)
            continue
        if resp.status_code < 400:
            return resp
        await resp.aclose()
        if resp.status_code < 500 or attempt + 1 == attempts:
            raise TarballHTTPError(resp.status_code, url)
        await asyncio.sleep(delay * 2**attempt)
    raise AssertionError("unreachable")


async def audit_commit(
    gh: GitHub[Any],
    owner: str,
    repo: str,
    sha: str,
    options: AuditOptions,
    *,
    max_download: int = DEFAULT_MAX_DOWNLOAD,
    attempts: int = 4,
    retry_delay: float = 1.0,
) -> Audit:
    """Stream the tarball at ``sha`` into the engine; the audit's root is ``owner/repo@sha``."""
    root = f"{owner}/{repo}@{sha[:12]}"
    async with gh.get_async_client() as client:
        resp = await _open(client, tarball_path(owner, repo, sha), attempts, retry_delay)
        try:
            reader = io.BufferedReader(_AsyncStreamReader(resp.aiter_bytes(CHUNK), max_download), CHUNK)
            return await anyio.to_thread.run_sync(audit_tarball, reader, root, options)
        finally:
            await resp.aclose()


async def download_commit(
    gh: GitHub[Any], owner: str, repo: str, sha: str, directory: Path, *, max_download: int = DEFAULT_MAX_DOWNLOAD,
    attempts: int = 4, retry_delay: float = 1.0,
) -> Path:
    """Spool the tarball to a temporary file in ``directory`` (for a monorepo, read once per project)."""
    directory.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="tarball-", suffix=".tar.gz", dir=directory)
    total = 0
    try:
        async with gh.get_async_client() as client:
            resp = await _open(client, tarball_path(owner, repo, sha), attempts, retry_delay)
            try:
                with open(fd, "wb") as fh:
                    async for chunk in resp.aiter_bytes(CHUNK):
                        total += len(chunk)
                        if total > max_download:
                            raise SourceError(f"repository archive larger than {max_download} bytes")
                        fh.write(chunk)
            finally:
                await resp.aclose()
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def _under(files: Iterator[tuple[str, bytes]], prefix: str) -> Iterator[tuple[str, bytes]]:
    pre = prefix.rstrip("/") + "/"
    for path, data in files:
        if path.startswith(pre):
            yield path[len(pre):], data


def audit_project_in_archive(archive: Path, prefix: str, root: str, options: AuditOptions) -> Audit:
    """Audit the sub-folder ``prefix`` of a spooled tarball as a project of its own."""
    stats = ReadStats()
    with open(archive, "rb") as fh:
        files = iter_tarball(fh, options.limits, stats)
        return audit_files(_under(files, prefix) if prefix else files, f"{root}/{prefix}" if prefix else root, options, stats)
