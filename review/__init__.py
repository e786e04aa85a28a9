"""Diff-aware regression review: compare base and head audits, attribute regressions to diff lines."""
