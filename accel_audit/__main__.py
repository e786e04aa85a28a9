"""``python -m accel_audit``: the ``accel-audit`` console script."""

from accel_audit.cli import entry

if __name__ == "__main__":
    entry()
