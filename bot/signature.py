"""``X-Hub-Signature-256`` verification (HMAC-SHA256 of the raw body, compared in constant time)."""

from __future__ import annotations

import hashlib
import hmac

PREFIX = "sha256="


def sign(secret: str, body: bytes) -> str:
    """The header value GitHub sends for ``body``."""
    return PREFIX + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, header: str | None) -> bool:
    """True when ``header`` is the signature of ``body``; False when missing, malformed or wrong."""
    if not header or not header.startswith(PREFIX):
        return False
    expected = sign(secret, body)
    return hmac.compare_digest(expected.encode("ascii"), header.strip().encode("ascii", "replace"))
