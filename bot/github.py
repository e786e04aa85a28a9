"""githubkit clients: one for the App (JWT), one per installation (token cached until shortly before expiry).

githubkit's ``AppAuthStrategy`` signs the JWT with RS256, ``iat`` one minute in the past (GitHub's advice
against clock skew) and ``exp`` ten minutes after that, and ``AppInstallationAuthStrategy`` caches the
installation token until one minute before ``expires_at``. A token GitHub rejects before that (401: revoked,
or clock skew) is dropped from the cache by the retry policy (:meth:`GitHubApp.forget`), so the retry mints a
new one. Every client carries the paced throttler and the retry policy, so everything written through it,
including the review publisher of ``review.publish`` and the tarball download, is paced and retried the same way.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
from githubkit import AppAuthStrategy, AppInstallationAuthStrategy, GitHub
from githubkit.cache import MemCacheStrategy
from githubkit.cache.mem_cache import MemCache

from .pacing import PacedThrottler, Pacer
from .retry import RetryPolicy
from .settings import Settings

USER_AGENT = "accel-audit-bot"
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)


class _Credentials(MemCache):
    """githubkit's memory cache plus :meth:`discard_value` (drop a credential GitHub rejected)."""

    def __init__(self) -> None:
        super().__init__()
        self._guard = threading.Lock()

    def discard_value(self, value: str) -> bool:
        with self._guard:
            keys = [k for k in list(self._cache) if self.get(k) == value]
            for k in keys:
                self._cache.pop(k, None)
        return bool(keys)


class _CredentialCache(MemCacheStrategy):
    def __init__(self) -> None:
        super().__init__()
        self.store = _Credentials()

    def get_cache_storage(self) -> MemCache:
        return self.store


class GitHubApp:
    def __init__(
        self,
        settings: Settings,
        pacer: Pacer,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self.pacer = pacer
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.transport = transport
        self._clients: dict[int, GitHub[Any]] = {}
        self._lock = threading.Lock()
        self._app: GitHub[Any] | None = None
        self._cache = _CredentialCache()  # JWT and installation tokens of this App, until shortly before expiry
        if self.retry.on_unauthorized is None:
            self.retry.on_unauthorized = self.forget

    @property
    def base_url(self) -> str:
        return self.settings.github_api_url

    def _client(self, auth: Any, key: str) -> GitHub[Any]:
        return GitHub(
            auth,
            base_url=self.settings.github_api_url,
            user_agent=USER_AGENT,
            timeout=self.timeout,
            http_cache=False,
            cache_strategy=self._cache,
            throttler=PacedThrottler(key, self.pacer),
            auto_retry=self.retry,
            async_transport=self.transport,
        )

    def forget(self, authorization: str) -> bool:
        """Drop the credential of a request GitHub answered 401 (``token X`` or ``Bearer JWT``); True if it was cached."""
        _, _, value = authorization.partition(" ")
        return bool(value) and self._cache.store.discard_value(value.strip())

    def app_client(self) -> GitHub[Any]:
        """Authenticated as the App (JWT): ``/app/...`` endpoints such as the webhook deliveries."""
        with self._lock:
            if self._app is None:
                self._app = self._client(AppAuthStrategy(self.settings.app_id, self.settings.private_key), "app")
            return self._app

    def installation(self, installation_id: int) -> GitHub[Any]:
        """Authenticated as one installation; one client (and one write pace) per installation."""
        with self._lock:
            gh = self._clients.get(installation_id)
            if gh is None:
                auth = AppInstallationAuthStrategy(self.settings.app_id, self.settings.private_key, installation_id)
                gh = self._clients[installation_id] = self._client(auth, f"installation:{installation_id}")
            return gh


__all__ = ["USER_AGENT", "GitHubApp"]
