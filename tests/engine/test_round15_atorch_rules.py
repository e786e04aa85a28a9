"""Rules of round 15 of issue #9 (atorch / ATorch): each rule test fails on the rule before it; each control passes on both."""

from __future__ import annotations

from checks.facts.extract import extract_file
from checks.facts.store import Facts
from checks.rules.i_infra import _name_table_args

from .claims import audit as _audit


def _facts(files: dict[str, str]) -> Facts:
    return Facts([extract_file(k, v.encode()) for k, v in files.items()])


def test_a_table_of_option_names_does_not_hide_the_arguments_default():
    # ``COMMON_TO_MEGATRON_ARG_MAP = {"logging_steps": "log_interval", ...}`` names Megatron's option; it sets nothing, so the
    # dataclass default ``logging_steps = 1`` is the run's: logging every step
    r = _audit(_name_table_args(1)).result("I4")
    assert r.status.value == "unused"
    assert all(e.path != "pkg/args.py" or e.line != 8 for e in r.evidence)


def test_the_setting_is_the_field_default_not_the_table_entry():
    f = _facts(_name_table_args(500))
    eff = f.effective("logging_steps")
    assert [(s.source, s.value) for s in eff] == [("field-default", 500)]
    assert [(s.source, s.value) for s in f.effective("save_steps")] == [("field-default", 500)]


def test_a_config_dict_of_values_still_sets_the_option():
    # a dict of values (not all option names) keeps its entries, whatever its name
    files = {"pkg/config.py": "TRAIN_ARG_MAP = {\n    \"logging_steps\": 1,\n    \"save_steps\": \"save_interval\",\n"
                              "    \"eval_steps\": \"eval_interval\",\n    \"warmup_steps\": \"warmup_iters\",\n}\n"}
    assert [s.value for s in _facts(files).effective("logging_steps")] == [1]


def test_a_dict_of_identifier_values_not_named_as_a_table_still_sets_options():
    # ``{"optim": "adamw_torch", "lr_scheduler_type": "cosine_with_restarts", ...}``: option values that happen to be identifiers
    files = {"pkg/config.py": "training_args = {\n    \"optim\": \"adamw_torch_fused\",\n"
                              "    \"lr_scheduler_type\": \"cosine_with_restarts\",\n    \"save_strategy\": \"steps\",\n"
                              "    \"report_to\": \"tensorboard\",\n    \"hub_strategy\": \"every_save\",\n}\n"}
    assert [s.value for s in _facts(files).effective("optim")] == ["adamw_torch_fused"]

