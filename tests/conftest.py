"""Suite-wide settings: a check that raises fails its test (``checks.engine.STRICT_ENV``) instead of being reported as
"not judged", which is what a user's scan does."""

from __future__ import annotations

import os

os.environ.setdefault("ACCEL_AUDIT_STRICT", "1")
