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

from .retry import RetryPolicy

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


async def _open(client: httpx.AsyncClient, url: str, attempts: int, delay: float, policy: RetryPolicy | None = None) -> httpx.Response:
    """Open the tarball stream; GitHub's answers are retried by the same policy as every other call (rate limits
    with their Retry-After, 5xx with backoff, a rejected token once with a new one)."""
    policy = policy or RetryPolicy(max_retries=attempts - 1, base_delay=delay)
    retry = 0
    while True:
        try:
            req = client.build_request("GET", url)
            resp = await client.send(req, stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError):
            if retry >= policy.max_retries:
                raise
            await asyncio.sleep(policy.backoff(retry))
            retry += 1
            continue
        if resp.status_code < 400:
            return resp
        text = (await resp.aread())[:2000].decode("utf-8", "replace")
        await resp.aclose()
        if resp.status_code == 401:
            first = resp.history[0].request if resp.history else resp.request
            if policy.unauthorized(first.headers.get("authorization", ""), retry):
                retry += 1
                continue
            raise TarballHTTPError(401, url)
        wait = policy.response_wait(resp.status_code, resp.headers, text, retry)  # raises RateLimited when too long
        if wait is None:
            raise TarballHTTPError(resp.status_code, url)
        await asyncio.sleep(wait)
        retry += 1


def _policy(gh: GitHub[Any]) -> RetryPolicy | None:
    retry = getattr(gh.config, "auto_retry", None)
    return retry if isinstance(retry, RetryPolicy) else None


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
        resp = await _open(client, tarball_path(owner, repo, sha), attempts, retry_delay, _policy(gh))
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
            resp = await _open(client, tarball_path(owner, repo, sha), attempts, retry_delay, _policy(gh))
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
