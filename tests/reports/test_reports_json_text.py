"""reports.json_text writes what ``json.dump(..., indent=2, ensure_ascii=False)`` writes, byte for byte."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from reports import json_text

GOLDEN = Path(__file__).parent / "golden"

CASES = [
    {}, [], "", 0, -1.5, 10**30, None, True,
    {"a": [], "b": {}, "c": [{}], "d": [[1, 2], (3, "x")]},
    {"é": "ü\u2028\x00\"\\/\n", "emoji": "\U0001f600"},
    {7: "int key", 2.5: "float key", True: "bool key", None: "none key"},
    [float("nan"), float("inf"), float("-inf"), -0.0, 1e-300, 0.1],
]


@pytest.mark.parametrize("value", CASES, ids=range(len(CASES)))
def test_the_text_is_the_standard_librarys(value: object) -> None:
    want = json.dumps(value, indent=2, ensure_ascii=False)
    assert json_text.dumps(value) == want
    out = io.StringIO()
    json_text.dump(value, out)
    assert out.getvalue() == want
    assert json_text.dumps(value, indent=4) == json.dumps(value, indent=4, ensure_ascii=False)


def test_a_large_report_is_written_in_pieces_with_the_same_text() -> None:
    report = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(GOLDEN.glob("*.json"))]
    assert report, "the golden reports are the sample"
    writes: list[str] = []

    class Sink(io.StringIO):
        def write(self, s: str) -> int:
            writes.append(s)
            return len(s)

    json_text.dump(report, Sink())
    assert "".join(writes) == json.dumps(report, indent=2, ensure_ascii=False)
    assert len(writes) > 1, "flushed in pieces, never held whole"


@pytest.mark.parametrize("value", [{(1, 2): 3}, {"a": object()}, {"a": {1, 2}}])
def test_what_the_standard_library_refuses_is_refused(value: object) -> None:
    with pytest.raises(TypeError):
        json.dumps(value)
    with pytest.raises(TypeError):
        json_text.dumps(value)
