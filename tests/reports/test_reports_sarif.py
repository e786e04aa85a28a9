"""SARIF 2.1.0 output, validated against the OASIS JSON schema shipped in ``data/`` (no network)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from checks.base import REGISTRY
from checks.model import Evidence, Priority, Project, Status
from reports.advice import build_plan
from reports.sarif import FINGERPRINT_KEY, to_sarif

from .golden_cases import CASES
from .helpers import fake_check, make_audit, result

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def validate(doc: dict) -> None:
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_the_schema_is_the_sarif_2_1_0_schema():
    assert SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    # the validator does reject a broken log
    assert list(VALIDATOR.iter_errors({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}))


@pytest.mark.parametrize("case", CASES, ids=[c.repo for c in CASES])
def test_fixture_sarif_is_valid_and_complete(case):
    audit = case.audit()
    doc = to_sarif(audit)
    validate(doc)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in audit.results if r.id in REGISTRY]
    assert all(r["help"]["text"] and r["help"]["markdown"] and r["fullDescription"]["text"] for r in rules)
    plan = build_plan(audit)
    high = [r.check for r in plan.recommendations if r.priority == Priority.HIGH and r.check not in ("I3", "I4", "I5")]
    ids = [r["ruleId"] for r in run["results"]]
    for cid in high:
        assert cid in ids, f"high-priority recommendation {cid} has no SARIF result"
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        loc = res["locations"][0]["physicalLocation"]
        assert (Path(__file__).parent / "repos" / case.repo / loc["artifactLocation"]["uri"]).is_file()
        assert loc["region"]["startLine"] >= 1
        assert res["partialFingerprints"][FINGERPRINT_KEY]


CHECKS = {"C1": fake_check("C1", priority=Priority.HIGH), "I4": fake_check("I4", priority=Priority.LOW), "I3": fake_check("I3", priority=Priority.LOW)}


def test_results_for_high_priority_gaps_and_frequency_findings():
    files = {"train.yaml": "bf16: false\nlogging_steps: 1\nlearning_rate: 1.0e-4\n", "train.py": "import torch\nloss.backward()\n"}
    results = [
        result("C1", Status.UNUSED, Priority.HIGH, [Evidence("train.yaml", 1, "bf16: false", "bf16", False)]),
        result("I4", Status.UNUSED, Priority.LOW, findings=[Evidence("train.yaml", 2, "logging_steps: 1", "logging_steps", 1)]),
    ]
    doc = to_sarif(make_audit(results, Project(), files), checks=CHECKS)
    validate(doc)
    res = doc["runs"][0]["results"]
    by_rule = {r["ruleId"]: r for r in res}
    assert by_rule["C1"]["level"] == "warning"
    assert by_rule["C1"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    assert by_rule["I4"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    assert "logging_steps: 1" in by_rule["I4"]["message"]["text"]


def test_a_gap_without_evidence_sits_at_the_entry_point_and_fingerprints_ignore_lines():
    files = {"scripts/run.sh": "torchrun --nproc_per_node 8 train.py\n", "train.py": "import torch\n"}
    doc = to_sarif(make_audit([result("C1", Status.UNUSED, Priority.HIGH)], Project(), files), checks=CHECKS)
    validate(doc)
    [res] = doc["runs"][0]["results"]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "scripts/run.sh"
    moved = to_sarif(make_audit([result("C1", Status.UNUSED, Priority.HIGH, [Evidence("a b.yaml", 9, "bf16: false", "bf16")])], Project(), files), checks=CHECKS)
    moved2 = to_sarif(make_audit([result("C1", Status.UNUSED, Priority.HIGH, [Evidence("a b.yaml", 30, "bf16:  false", "bf16")])], Project(), files), checks=CHECKS)
    fp = moved["runs"][0]["results"][0]["partialFingerprints"]
    assert fp == moved2["runs"][0]["results"][0]["partialFingerprints"]
    assert moved["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a%20b.yaml"


def test_in_use_but_too_frequent_still_reported():
    files = {"train.yaml": "save_steps: 1\n"}
    res = result("I3", Status.USED, None, findings=[Evidence("train.yaml", 1, "save_steps: 1", "save_steps", 1)])
    doc = to_sarif(make_audit([res], Project(), files), checks=CHECKS)
    validate(doc)
    [r] = doc["runs"][0]["results"]
    assert r["ruleId"] == "I3" and r["level"] == "note"


def test_no_repository_files_means_no_unlocatable_results():
    doc = to_sarif(make_audit([result("C1", Status.UNUSED, Priority.HIGH)], Project(), {}), checks=CHECKS)
    validate(doc)
    assert doc["runs"][0]["results"] == []
