"""When to retry a GitHub request, and how long to wait (githubkit's ``auto_retry`` hook).

* primary or secondary rate limit (403/429): wait for ``retry-after``; else until ``x-ratelimit-reset``;
  else at least a minute, doubling each time (GitHub's guidance). A wait longer than ``max_inline_wait``
  is not slept in the request: the error goes up and the job is put back in the queue for that time
  (:class:`RateLimited` tells the job runner how long).
* 5xx answers and timeouts: exponential backoff with jitter, up to ``max_retries``. A POST whose answer
  timed out is not resent blindly (it may have been applied): only connect errors, where the request never
  left, are retried for POST; the job-level retry handles the rest idempotently.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from datetime import timedelta

import httpx
from githubkit.exception import GitHubException, RateLimitExceeded, RequestError, RequestFailed, RequestTimeout
from githubkit.retry import RetryOption

log = logging.getLogger(__name__)


def rate_limit_wait(exc: RateLimitExceeded, retry_count: int) -> float:
    headers = exc.response.headers
    wait = exc.retry_after.total_seconds()
    if "retry-after" not in headers and headers.get("x-ratelimit-remaining") != "0":
        # no hint from GitHub: at least a minute, then back off exponentially
        wait = max(wait, 60.0 * (2**retry_count))
    elif "retry-after" not in headers:
        wait += 1.0  # x-ratelimit-reset has a one-second resolution
    return max(wait, 0.0)


class RetryPolicy:
    def __init__(
        self,
        max_retries: int = 5,
        base_delay: float = 1.0,
        max_delay: float = 60.0,
        max_rate_limit_retries: int = 3,
        max_inline_wait: float = 120.0,
        on_error: Callable[[str], None] | None = None,
        on_unauthorized: Callable[[str], bool] | None = None,
    ) -> None:
        self.max_retries = max_retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.max_rate_limit_retries = max_rate_limit_retries
        self.max_inline_wait = max_inline_wait
        self.on_error = on_error
        self.on_unauthorized = on_unauthorized  # drops a rejected credential from the cache; True if it did

    def backoff(self, retry_count: int) -> float:
        d = min(self.max_delay, self.base_delay * (2**retry_count))
        return d * (0.8 + 0.4 * random.random())

    def _count(self, label: str) -> None:
        if self.on_error is not None:
            self.on_error(label)

    def __call__(self, exc: GitHubException, retry_count: int) -> RetryOption:
        if isinstance(exc, RateLimitExceeded):
            self._count("secondary_rate_limit" if "Secondary" in type(exc).__name__ else "rate_limit")
            wait = rate_limit_wait(exc, retry_count)
            if retry_count >= self.max_rate_limit_retries or wait > self.max_inline_wait:
                return RetryOption(False)
            log.warning("GitHub rate limit on %s %s: waiting %.1f s", exc.request.method, exc.request.url.path, wait)
            return RetryOption(True, timedelta(seconds=wait))
        if isinstance(exc, RequestFailed):
            status = exc.response.status_code
            self._count(str(status))
            if status == 401:
                return RetryOption(self.unauthorized(exc.request.headers.get("authorization", ""), retry_count))
            if status >= 500 and retry_count < self.max_retries:
                wait = self.backoff(retry_count)
                log.warning("GitHub %s on %s %s: retry %d in %.1f s", status, exc.request.method, exc.request.url.path, retry_count + 1, wait)
                return RetryOption(True, timedelta(seconds=wait))
            return RetryOption(False)
        if isinstance(exc, RequestTimeout):
            self._count("timeout")
            if retry_count < self.max_retries and (exc.request.method not in ("POST", "PATCH") or isinstance(exc.exc, httpx.ConnectTimeout)):
                return RetryOption(True, timedelta(seconds=self.backoff(retry_count)))
            return RetryOption(False)
        if isinstance(exc, RequestError):
            inner = exc.exc
            if isinstance(inner, GitHubException):  # raised inside the auth flow (the installation token request)
                return self(inner, retry_count)
            self._count("transport")
            if retry_count < self.max_retries and isinstance(inner, (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError)):
                return RetryOption(True, timedelta(seconds=self.backoff(retry_count)))
            return RetryOption(False)
        return RetryOption(False)

    def unauthorized(self, authorization: str, retry_count: int) -> bool:
        """A 401: drop the rejected token or JWT (revoked early, or clock skew) and retry once with a new one."""
        if retry_count >= 2 or self.on_unauthorized is None:
            return False
        dropped = self.on_unauthorized(authorization)
        if dropped:
            log.warning("GitHub rejected a cached credential (401): minting a new one and retrying")
        return dropped

    def response_wait(self, status: int, headers: httpx.Headers, text: str, retry_count: int) -> float | None:
        """How long to wait before resending a request GitHub answered with ``status`` (for the raw httpx calls
        such as the tarball download, the same policy as :meth:`__call__`); None: do not resend.

        Raises :class:`RateLimited` for a rate limit too long to wait for inside the request.
        """
        limited = status == 429 or (status == 403 and (
            "retry-after" in headers or headers.get("x-ratelimit-remaining") == "0" or "rate limit" in text.lower()))
        if limited:
            self._count("rate_limit" if headers.get("x-ratelimit-remaining") == "0" else "secondary_rate_limit")
            if "retry-after" in headers:
                try:
                    wait = max(float(headers["retry-after"]), 0.0)
                except ValueError:
                    wait = 60.0
            elif headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset", "").isdigit():
                wait = max(float(headers["x-ratelimit-reset"]) - time.time(), 0.0) + 1.0
            else:
                wait = 60.0 * (2**retry_count)
            if wait > self.max_inline_wait or retry_count >= self.max_rate_limit_retries:
                raise RateLimited(wait)
            log.warning("GitHub rate limit (%d): waiting %.1f s", status, wait)
            return wait
        self._count(str(status))
        if status >= 500 and retry_count < self.max_retries:
            return self.backoff(retry_count)
        return None


MAX_JOB_DELAY = 900.0  # a job waiting out an outage asks again at least every 15 minutes


class RateLimited(Exception):
    """A rate limit too long to wait for inside a request: the job goes back to the queue for ``delay`` s."""

    def __init__(self, delay: float) -> None:
        super().__init__(f"GitHub rate limit: retry in {delay:.0f} s")
        self.delay = delay


def transient_delay(exc: BaseException, attempt: int, base: float = 30.0) -> float | None:
    """How long to wait before re-running a job that failed with ``exc``; None when retrying is pointless.

    Rate limits wait exactly as long as GitHub says; other transient failures back off from ``base``.
    """
    if isinstance(exc, RateLimited):
        return exc.delay
    if isinstance(exc, RateLimitExceeded):
        return max(rate_limit_wait(exc, attempt), 1.0)
    if isinstance(exc, RequestError) and isinstance(exc.exc, GitHubException):
        return transient_delay(exc.exc, attempt, base)
    backoff = min(base * (2**attempt), MAX_JOB_DELAY)
    if isinstance(exc, RequestFailed):
        status = exc.response.status_code
        return backoff if status >= 500 or status in (408, 429) else None
    if isinstance(exc, (RequestTimeout, RequestError, httpx.TransportError, TimeoutError)):
        return backoff
    status = getattr(exc, "status", None)  # e.g. the tarball download's HTTP error
    if isinstance(status, int) and status >= 500:
        return backoff
    return None
