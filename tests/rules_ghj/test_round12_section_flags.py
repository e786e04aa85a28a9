"""Round 12 (held-out VeOmni): a switch read through a typed config section (``args.train.wandb.enable``) is the
field of that section's class, not any field of the same generic name."""

from __future__ import annotations

from checks.engine import build_facts
from checks.facts import Facts
from checks.rules._helpers import guard_off, typed_field_state
from checks.rules.i_infra import _SECTION_TRACKER
from tests.rules_ghj.ghj_util import audit


def _facts(files: dict[str, str]) -> Facts:
    return build_facts((p, t.encode()) for p, t in files.items())


def test_a_per_step_report_behind_a_section_switch_that_is_off_is_no_report():
    result, _ = audit(_SECTION_TRACKER, "I5")
    assert result.status.value == "used"
    assert "no external tracker by default" in result.detail
    assert any(e.path == "pkg/arguments.py" and e.line == 6 for e in result.evidence)


def test_the_same_report_with_the_switch_on_is_every_step():
    files = {**_SECTION_TRACKER, "pkg/arguments.py": _SECTION_TRACKER["pkg/arguments.py"].replace(
        "enable: bool = field(default=False)", "enable: bool = field(default=True)")}
    assert audit(files, "I5")[0].status.value == "unused"


def test_the_sections_class_decides_among_fields_of_one_name():
    f = _facts(_SECTION_TRACKER)
    assert typed_field_state(f, "wandb", "enable")[0] is False
    assert typed_field_state(f, "gradient_checkpointing", "enable")[0] is True
    assert typed_field_state(f, "profile", "enable") == (None, [])  # not a typed section


def test_a_yaml_key_that_turns_the_section_on_leaves_it_unknown():
    files = {**_SECTION_TRACKER, "configs/train.yaml": "train:\n  wandb:\n    enable: true\n"}
    assert typed_field_state(_facts(files), "wandb", "enable") == (None, [])


def test_not_of_a_disjunction_reads_each_negated_term():
    src = ("import wandb\n\n\ndef on_step_end(args, metrics):\n"
           "    if not (not metrics or args.train.global_rank != 0 or not args.train.wandb.enable):\n"
           "        wandb.log(metrics)\n")
    f = _facts({**_SECTION_TRACKER, "pkg/monitor.py": src})
    call = next(c for c in f.calls("wandb.log") if c.path == "pkg/monitor.py")
    assert [(s.path, s.line) for s in guard_off(f, call)] == [("pkg/arguments.py", 6)]
