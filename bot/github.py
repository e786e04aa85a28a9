"""githubkit clients: one for the App (JWT), one per installation (token cached until shortly before expiry).

githubkit's ``AppAuthStrategy`` signs the JWT with RS256, ``iat`` one minute in the past and ``exp`` ten
minutes after that, and ``AppInstallationAuthStrategy`` caches the installation token until one minute
before ``expires_at``. Every client carries the paced throttler and the retry policy, so everything written
through it, including the review publisher of ``review.publish``, is paced and retried the same way.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
from githubkit import AppAuthStrategy, AppInstallationAuthStrategy, GitHub
from githubkit.cache import MemCacheStrategy

from .pacing import PacedThrottler, Pacer
from .retry import RetryPolicy
from .settings import Settings

USER_AGENT = "accel-audit-bot"
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)


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
        self._cache = MemCacheStrategy()  # JWT and installation tokens of this App, until shortly before expiry

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
