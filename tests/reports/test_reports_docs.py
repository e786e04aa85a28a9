"""``docs/checks.md`` is generated from the declarations and must not be stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from checks.base import all_checks
from checks.docs import generate, render_check

ROOT = Path(__file__).resolve().parents[2]


def test_docs_are_current():
    committed = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    assert committed == generate(), "docs/checks.md is stale: run `python -m checks.docs > docs/checks.md`"


def test_every_check_is_documented_with_its_parts():
    text = generate()
    for c in all_checks():
        section = render_check(c)
        assert f"### {c.id} · {c.title}" in text and section in text
        for part in ("#### What it checks", "#### Why it matters", "#### Fix", "Fix safety:"):
            assert part in section
        if c.examples:
            assert "#### Example" in section


def test_module_entry_point_prints_the_docs():
    proc = subprocess.run([sys.executable, "-m", "checks.docs"], cwd=ROOT, capture_output=True, check=True)
    assert proc.stdout.decode("utf-8") == generate()
