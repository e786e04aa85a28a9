"""Golden statuses: every fixture repository against its hand-written labels.

The labels in ``golden/<fixture>.json`` were written by reading each fixture (see
``fixtures/repos/README.md`` and the ``notes`` of each file), never by copying engine
output. On a mismatch the test prints a table with the engine's detail and evidence.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from checks.engine import Audit, audit_path
from checks.model import Status

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "repos"
GOLDEN = Path(__file__).resolve().parent / "golden"
NAMES = sorted(p.stem for p in GOLDEN.glob("*.json"))


@cache
def _audit(name: str) -> Audit:
    return audit_path(FIXTURES / name)


def _golden(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


def _mismatch_table(name: str, rows: list[tuple[str, str, str, str, str]]) -> str:
    out = [f"{len(rows)} golden mismatch(es) in fixture {name!r}:", f"{'id':<4} {'expected':<8} {'got':<8} detail | evidence"]
    for cid, exp, got, detail, ev in rows:
        out.append(f"{cid:<4} {exp:<8} {got:<8} {detail} | {ev}")
    return "\n".join(out)


def test_every_fixture_has_golden_labels() -> None:
    fixtures = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
    assert fixtures == NAMES
    assert len(fixtures) >= 8


@pytest.mark.parametrize("name", NAMES)
def test_golden_labels_are_complete(name: str) -> None:
    gold = _golden(name)
    checks = gold["checks"]
    assert len(checks) == 63
    assert {c[0] for c in checks} == set("ABCDEFGHIJ")
    assert set(checks.values()) <= {s.value for s in Status}
    assert set(gold.get("notes", {})) <= set(checks)


@pytest.mark.parametrize("name", NAMES)
def test_golden_statuses(name: str) -> None:
    gold = _golden(name)["checks"]
    audit = _audit(name)
    got = {r.id: r for r in audit.results}
    rows = []
    for cid, expected in gold.items():
        r = got.get(cid)
        if r is None:
            rows.append((cid, expected, "missing", "check not registered", ""))
            continue
        if r.status.value != expected:
            ev = "; ".join(f"{e.path}:{e.line} {e.snippet[:60]}" for e in r.evidence[:3])
            rows.append((cid, expected, r.status.value, (r.detail or "")[:90], ev))
    assert not rows, _mismatch_table(name, rows)


@pytest.mark.parametrize("name", NAMES)
def test_golden_project_overview(name: str) -> None:
    want = _golden(name)["project"]
    p = _audit(name).project
    problems = []
    missing = set(want["frameworks_include"]) - set(p.frameworks)
    extra = set(want["frameworks_exclude"]) & set(p.frameworks)
    if missing:
        problems.append(f"frameworks lack {sorted(missing)} (got {p.frameworks})")
    if extra:
        problems.append(f"frameworks wrongly include {sorted(extra)} (got {p.frameworks})")
    if p.model_type != want["model_type"]:
        problems.append(f"model_type {p.model_type!r}, expected {want['model_type']!r}")
    lo, hi = want["params_billions"]
    if p.params_billions is None or not lo <= p.params_billions <= hi:
        problems.append(f"estimated params {p.params_billions} ({p.estimated_params}), expected {lo}-{hi}B")
    for flag in ("multimodal", "does_inference", "alignment"):
        if flag in want and getattr(p, flag) != want[flag]:
            problems.append(f"{flag} is {getattr(p, flag)}, expected {want[flag]}")
    assert not problems, f"{name}: " + "; ".join(problems)
