"""Every check's own examples (Fixit-style): each is a tiny repo with the status it must get."""

from __future__ import annotations

import pytest

from checks.base import all_checks
from checks.engine import AuditOptions, parse_files, run_checks, split_facts
from checks.model import Status
from checks.project import detect_project

CHECKS = all_checks()
CASES = [(c, ex) for c in CHECKS for ex in c.examples]


@pytest.mark.parametrize(("check", "example"), CASES, ids=[f"{c.id}-{ex.name or i}" for i, (c, ex) in enumerate(CASES)])
def test_example(check, example):
    # as the engine does: roles first, the checks read the files in scope, with the training path known
    facts, _, roles = split_facts(parse_files((path, text.encode()) for path, text in example.files.items()))
    project = detect_project(facts, training=[p for p, r in roles.by_path.items() if r == "training"])
    [result], _ = run_checks(facts, project, AuditOptions(), [check])
    assert result.status == example.status, f"{check.id} {example.name!r}: got {result.status} ({result.detail})"
    if example.status in (Status.USED, Status.PARTIAL):  # I3-I5 too: a "sane" frequency cites the site that makes it sane
        assert result.evidence, f"{check.id} {example.name!r}: a used/partial status needs evidence"
        for ev in result.evidence:
            assert ev.path in example.files and ev.line >= 1


@pytest.mark.parametrize("check", CHECKS, ids=[c.id for c in CHECKS])
def test_check_declares_examples(check):
    used = [e for e in check.examples if e.status == Status.USED]
    not_used = [e for e in check.examples if e.status in (Status.UNUSED, Status.PARTIAL)]
    assert len(used) >= 2, f"{check.id} needs at least two examples that must be used"
    assert len(not_used) >= 2, f"{check.id} needs at least two examples that must not be used"
    assert check.why and check.fix and check.fix_zh and check.title_zh
