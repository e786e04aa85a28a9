"""Scores exactly as the seed defines them: used 1, partial 1/2, n/a leaves the total."""

from __future__ import annotations

from checks.model import Status
from reports.markdown import bar
from reports.scoring import category_scores, overall

from .helpers import result

U, P, N, NA = Status.USED, Status.PARTIAL, Status.UNUSED, Status.NA


def test_partial_counts_half_and_na_leaves_the_total():
    results = [result("A1", U), result("A2", P), result("A3", N), result("A7", NA), result("H1", NA), result("H2", NA), result("H3", NA)]
    cats = {c.id: c for c in category_scores(results)}
    assert (cats["A"].points, cats["A"].max, cats["A"].applicable) == (1.5, 3, True)
    assert (cats["H"].max, cats["H"].applicable) == (0, False)
    s = overall(results)
    assert (s.points, s.max, s.percent) == (1.5, 3, 50.0)
    assert s.to_json() == {"points": 1.5, "max": 3, "percent": 50.0}
    assert cats["A"].to_json() == {"id": "A", "score": 1.5, "max": 3, "applicable": True}


def test_percent_rounds_to_one_decimal_and_empty_is_zero():
    assert overall([result("C1", U), result("C2", N), result("C3", N)]).percent == 33.3
    assert overall([]).percent == 0.0


def test_bar():
    assert bar(7, 10) == "███████░░░"
    assert bar(0.5, 11) == "█░░░░░░░░░"  # something in place is never an empty bar
    assert bar(10.5, 11) == "█████████░"  # something missing is never a full bar
    assert bar(3, 3) == "██████████" and bar(0, 4) == "░░░░░░░░░░" and bar(0, 0) == "—"


def test_both_languages_have_every_string():
    from checks.model import Bottleneck, Priority
    from reports.i18n import BOTTLENECK, PRIORITY, TEXT, check_lang

    assert set(TEXT["en"]) == set(TEXT["zh"])
    assert all(set(BOTTLENECK[lang]) == set(Bottleneck) for lang in ("en", "zh"))
    assert all(set(PRIORITY[lang]) == set(Priority) for lang in ("en", "zh"))
    assert check_lang("zh") == "zh"
    import pytest

    with pytest.raises(ValueError):
        check_lang("fr")
