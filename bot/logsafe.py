"""Logging that cannot leak secrets: the webhook secret, the App key, tokens and JWTs are redacted."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

REDACTED = "[redacted]"

# GitHub token prefixes (installation ghs_, user ghu_/gho_/ghp_, refresh ghr_), JWTs, Authorization values,
# PEM blocks and passwords in URLs.
_PATTERNS = [
    re.compile(r"\bgh[pousr]_[A-Za-z0-9_]{20,}"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"),
    re.compile(r"(?i)\b(authorization:\s*|bearer\s+|token\s+)([A-Za-z0-9_.\-]{16,})"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
    re.compile(r"(rediss?://[^:/@\s]*:)([^@\s]+)(@)"),
]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, REDACTED)
            stripped = s.strip()
            if stripped != s and len(stripped) >= 4:
                text = text.replace(stripped, REDACTED)
    for pat in _PATTERNS:
        if pat.groups >= 2:
            text = pat.sub(lambda m: m.group(1) + REDACTED + (m.group(3) if m.re.groups >= 3 and m.group(3) else ""), text)
        else:
            text = pat.sub(REDACTED, text)
    return text


class RedactingFilter(logging.Filter):
    """Rewrites every record's message (and formatted traceback) with :func:`redact`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = tuple(s for s in secrets if s)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not hide the record
            message = str(record.msg)
        record.msg = redact(message, self.secrets)
        record.args = None
        if record.exc_info:
            formatter = logging.Formatter()
            record.exc_text = redact(formatter.formatException(record.exc_info), self.secrets)
            record.exc_info = None
        return True


_installed: list[tuple[str, ...]] = []


def install(secrets: Iterable[str] = (), level: int = logging.INFO) -> None:
    """Redact every log record at creation (whatever logger or handler it goes to) and set up the root logger."""
    secrets = tuple(s for s in secrets if s)
    if _installed:
        _installed[0] = tuple(dict.fromkeys(_installed[0] + secrets))
    else:
        _installed.append(secrets)
        base_factory = logging.getLogRecordFactory()
        flt = _FactoryRedactor()

        def factory(*args, **kwargs) -> logging.LogRecord:
            record = base_factory(*args, **kwargs)
            flt.secrets = _installed[0]
            flt.filter(record)
            return record

        logging.setLogRecordFactory(factory)
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(level)


class _FactoryRedactor(RedactingFilter):
    def __init__(self) -> None:
        super().__init__(())
