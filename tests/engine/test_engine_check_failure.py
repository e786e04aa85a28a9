"""A check that raises on a repository (a rule's bug: open-instruct's mixed ``epoch``/number intervals once made I3 compare a
string with an int) is reported "not judged" with the error's type, and the rest of the audit goes on; the test suite's
strict setting (``ACCEL_AUDIT_STRICT``) raises instead."""

from __future__ import annotations

import logging

import pytest

from checks.base import Check, Context
from checks.engine import STRICT_ENV, AuditOptions, build_facts, run_checks
from checks.model import Outcome, Status
from checks.project import detect_project

FILES = {"train.py": "import torch\nmodel = torch.nn.Linear(4, 4).cuda()\nloss = model(x).sum()\nloss.backward()\n"}


class _Raises(Check):
    id = "I3"
    title = "Sane checkpoint frequency"
    title_zh = "合理的检查点频率"
    what = why = fix = fix_zh = ""

    def detect(self, ctx: Context) -> Outcome:
        return _compare("epoch", 500)


class _Works(_Raises):
    id = "I4"

    def detect(self, ctx: Context) -> Outcome:
        return Outcome(Status.USED, [], "fine")


def _compare(a: object, b: object) -> Outcome:
    return Outcome(Status.USED, [], str(min(a, b)))  # type: ignore[type-var]


def _run():
    facts = build_facts((p, t.encode()) for p, t in FILES.items())
    return run_checks(facts, detect_project(facts), AuditOptions(), [_Raises(), _Works()])[0]


def test_a_check_that_raises_is_not_judged_and_the_audit_goes_on(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture):
    monkeypatch.delenv(STRICT_ENV, raising=False)
    with caplog.at_level(logging.WARNING, logger="checks.engine"):
        failed, fine = _run()
    assert failed.status == Status.NA and failed.recommendation is None
    assert failed.detail.startswith("not judged: the check failed on this repository (TypeError")
    assert fine.status == Status.USED and fine.detail == "fine"
    assert "check I3 raised TypeError" in caplog.text


def test_the_strict_setting_raises(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(TypeError):
        _run()


def test_the_chinese_report_says_why():
    from reports.i18n import na_reason_zh

    assert "出错" in na_reason_zh("not judged: the check failed on this repository (TypeError in accel-audit's rule, a bug of ours; "
                                  "please report it)")
