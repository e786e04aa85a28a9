"""Argument dataclasses that override the HF Trainer's defaults (round 9 of issue #9, ms-swift ``TrainArgumentsMixin``):
the override is the setting, not HF's default, and the reports say what the override is."""

from __future__ import annotations

from checks.engine import audit_files
from checks.facts.extract import extract_file
from checks.model import Status
from checks.rules.i_infra import _SWIFT_ARGS, _SWIFT_TRAIN


def _audit(files: dict[str, str]):
    audit = audit_files((p, t.encode()) for p, t in files.items())
    return {r.id: r for r in audit.results}


def test_default_factory_lambda_literal_is_the_field_default():
    src = "from dataclasses import dataclass, field\n\n@dataclass\nclass A:\n    report_to: list = field(default_factory=lambda: ['tensorboard'])\n"
    facts = extract_file("a.py", src.encode())
    (fld,) = [x for x in facts.fields if x.name == "report_to"]
    assert fld.default == ("tensorboard",)


def test_tracker_from_default_factory_every_5_steps_is_too_frequent():
    r = _audit({"mylib/arguments.py": _SWIFT_ARGS.format(steps=5), "mylib/train.py": _SWIFT_TRAIN})["I5"]
    assert r.status == Status.UNUSED
    assert "every 5 steps" in r.detail and "Expr(" not in r.detail
