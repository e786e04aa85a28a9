"""Golden Markdown (en, zh) and JSON reports for two fixture repositories: any difference fails.

Regenerate with ``.venv/bin/python -m tests.reports.golden_cases`` and review the diff.
"""

from __future__ import annotations

import pytest

from .golden_cases import CASES, GOLDEN, outputs

PAIRS = [(case, name) for case in CASES for name in outputs(case)]


@pytest.mark.parametrize(("case", "name"), PAIRS, ids=[name for _, name in PAIRS])
def test_golden(case, name):
    expected = (GOLDEN / name).read_text(encoding="utf-8")
    actual = outputs(case)[name]
    assert actual == expected, f"{name} differs from its golden file; regenerate with `python -m tests.reports.golden_cases` and review"


def test_golden_files_have_no_orphans():
    expected = {name for case in CASES for name in outputs(case)}
    assert {p.name for p in GOLDEN.iterdir()} == expected
