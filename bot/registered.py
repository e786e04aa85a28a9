"""The App credentials that ``accel-audit register`` stored, for ``serve`` and ``worker``.

``register`` writes ``<ACCEL_DATA_DIR>/app.env`` (mode 0600: ``ACCEL_APP_ID``, ``ACCEL_WEBHOOK_SECRET``,
``ACCEL_PRIVATE_KEY_PATH``, and ``ACCEL_GITHUB_API_URL`` for GitHub Enterprise Server) next to the private
key. :func:`with_registered` adds those values to the environment the settings are read from; a variable
set in the environment wins, so a deployment that passes its own settings is never overridden.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV_FILE = "app.env"
KEY_FILE = "github-app.private-key.pem"
KEYS = ("ACCEL_APP_ID", "ACCEL_WEBHOOK_SECRET", "ACCEL_PRIVATE_KEY_PATH", "ACCEL_GITHUB_API_URL")


def data_dir(env: Mapping[str, str]) -> Path:
    from .settings import DEFAULT_DATA_DIR

    return Path((env.get("ACCEL_DATA_DIR") or "").strip() or DEFAULT_DATA_DIR)


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines (``#`` comments, blank lines); only the keys ``register`` writes."""
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        if key.strip() in KEYS:
            out[key.strip()] = value.strip()
    return out


def with_registered(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` plus the registered credentials of its data directory (the environment's own values win)."""
    merged = dict(env)
    path = data_dir(env) / ENV_FILE
    try:
        stored = read_env_file(path)
    except FileNotFoundError:
        return merged
    except OSError:
        return merged  # unreadable: the settings name what is missing
    for key, value in stored.items():
        if not (merged.get(key) or "").strip():
            if key == "ACCEL_PRIVATE_KEY_PATH" and (merged.get("ACCEL_PRIVATE_KEY") or "").strip():
                continue  # the environment gives the key itself
            merged[key] = value if os.path.isabs(value) or key != "ACCEL_PRIVATE_KEY_PATH" else str(path.parent / value)
    return merged
