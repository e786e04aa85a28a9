"""The service's settings, read from the environment and validated once at start-up.

A missing or invalid setting raises :class:`SettingsError` whose message is one line naming
the variable; the command prints it and stops. Secrets (the private key, the webhook secret)
never appear in ``repr`` or in log output (see :mod:`bot.logsafe`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_DATA_DIR = "./.accel-audit"
DEFAULT_AUDIT_TIMEOUT = 300.0  # 5 minutes
DEFAULT_AUDIT_MEMORY_MB = 2048
DEFAULT_RETRY_HOURS = 6.0


class SettingsError(Exception):
    """A setting is missing or invalid; ``str(exc)`` is one line that names it."""


@dataclass(frozen=True, slots=True)
class Settings:
    app_id: int
    private_key: str = field(repr=False)
    webhook_secret: str = field(repr=False)
    github_api_url: str = DEFAULT_API_URL
    data_dir: Path = Path(DEFAULT_DATA_DIR)
    redis_url: str | None = field(default=None, repr=False)  # may carry a password
    metrics_token: str | None = field(default=None, repr=False)  # /metrics on the webhook port needs it as a bearer token
    audit_timeout: float = DEFAULT_AUDIT_TIMEOUT  # wall-time budget of one audit (seconds)
    audit_memory_mb: int = DEFAULT_AUDIT_MEMORY_MB  # address-space limit of the audit's child process
    github_retry_hours: float = DEFAULT_RETRY_HOURS  # how long a job keeps retrying through a GitHub outage

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never be written to a log."""
        out = [self.private_key, self.webhook_secret, self.metrics_token or ""]
        if self.redis_url:
            pw = urlsplit(self.redis_url).password
            if pw:
                out.append(pw)
        return tuple(s for s in out if s)


def _get(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    if value is None:
        return None
    value = value.strip()
    return value or None


def _load_private_key(env: Mapping[str, str]) -> str:
    text = _get(env, "ACCEL_PRIVATE_KEY")
    path = _get(env, "ACCEL_PRIVATE_KEY_PATH")
    name = "ACCEL_PRIVATE_KEY"
    if text is None and path is not None:
        name = "ACCEL_PRIVATE_KEY_PATH"
        try:
            text = Path(path).read_text(encoding="ascii")
        except FileNotFoundError:
            raise SettingsError(f"ACCEL_PRIVATE_KEY_PATH: no such file: {path}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"ACCEL_PRIVATE_KEY_PATH: cannot read {path}: {getattr(exc, 'strerror', None) or 'not a PEM text file'}") from None
    if text is None:
        raise SettingsError("ACCEL_PRIVATE_KEY_PATH is not set (path to the GitHub App's private key PEM; or ACCEL_PRIVATE_KEY with the PEM text)")
    # A PEM passed through an environment variable often has literal "\n" sequences.
    if "\\n" in text and "\n" not in text.strip():
        text = text.replace("\\n", "\n")
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(text.encode("ascii", "replace"), password=None)
    except (ValueError, TypeError):
        raise SettingsError(f"{name}: not a PEM-encoded private key (GitHub App keys start with '-----BEGIN RSA PRIVATE KEY-----')") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise SettingsError(f"{name}: the key must be an RSA private key (GitHub signs App JWTs with RS256)")
    return text.strip() + "\n"


def _api_url(env: Mapping[str, str]) -> str:
    url = _get(env, "ACCEL_GITHUB_API_URL") or DEFAULT_API_URL
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SettingsError(f"ACCEL_GITHUB_API_URL: not an http(s) URL: {url!r} (GitHub Enterprise Server: https://HOST/api/v3)")
    return url.rstrip("/")


def _redis_url(env: Mapping[str, str]) -> str | None:
    url = _get(env, "ACCEL_REDIS_URL")
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix") or (parts.scheme != "unix" and not parts.hostname):
        shown = parts._replace(netloc=parts.hostname or "").geturl() if parts.password else url
        raise SettingsError(f"ACCEL_REDIS_URL: not a redis:// , rediss:// or unix:// URL: {shown!r}")
    return url


def _data_dir(env: Mapping[str, str]) -> Path:
    path = Path(_get(env, "ACCEL_DATA_DIR") or DEFAULT_DATA_DIR)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SettingsError(f"ACCEL_DATA_DIR: cannot create {path}: {exc.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise SettingsError(f"ACCEL_DATA_DIR: {path} is not writable")
    return path


def _number(env: Mapping[str, str], name: str, default: float, low: float, high: float, hint: str) -> float:
    raw = _get(env, name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:
        raise SettingsError(f"{name}: expected a number from {low:g} to {high:g} ({hint}), got {raw!r}")
    return value


def _metrics_token(env: Mapping[str, str]) -> str | None:
    token = _get(env, "ACCEL_METRICS_TOKEN")
    if token is not None and len(token) < 16:
        raise SettingsError("ACCEL_METRICS_TOKEN: too short (use at least 16 random characters)")
    return token


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Read and validate every setting; raise :class:`SettingsError` at the first bad one."""
    env = os.environ if env is None else env
    raw_id = _get(env, "ACCEL_APP_ID")
    if raw_id is None:
        raise SettingsError("ACCEL_APP_ID is not set (the GitHub App's numeric ID, on the App's settings page)")
    if not raw_id.isdigit() or int(raw_id) <= 0:
        raise SettingsError(f"ACCEL_APP_ID: must be a positive integer, got {raw_id!r}")
    private_key = _load_private_key(env)
    secret = env.get("ACCEL_WEBHOOK_SECRET")
    if not secret:
        raise SettingsError("ACCEL_WEBHOOK_SECRET is not set (the webhook secret entered in the GitHub App's settings)")
    if len(secret) < 8:
        raise SettingsError("ACCEL_WEBHOOK_SECRET: too short (use at least 8 characters; GitHub recommends a long random string)")
    return Settings(
        app_id=int(raw_id),
        private_key=private_key,
        webhook_secret=secret,
        github_api_url=_api_url(env),
        data_dir=_data_dir(env),
        redis_url=_redis_url(env),
        metrics_token=_metrics_token(env),
        audit_timeout=_number(env, "ACCEL_AUDIT_TIMEOUT", DEFAULT_AUDIT_TIMEOUT, 5, 86400, "seconds of wall time per audit"),
        audit_memory_mb=int(_number(env, "ACCEL_AUDIT_MEMORY_MB", DEFAULT_AUDIT_MEMORY_MB, 256, 1 << 20, "MB of address space per audit")),
        github_retry_hours=_number(env, "ACCEL_GITHUB_RETRY_HOURS", DEFAULT_RETRY_HOURS, 0, 168, "hours a job retries through a GitHub outage"),
    )
