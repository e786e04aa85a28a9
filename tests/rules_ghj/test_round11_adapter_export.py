"""Round 11 (held-out NeMo AutoModel): HF's adapter_config.json written from an adapter a run already has is not LoRA."""

from __future__ import annotations

from checks.rules.g_strategy import _ADAPTER_EXPORT
from tests.rules_ghj.ghj_util import audit


def test_an_adapter_config_serialised_from_the_adapter_object_is_not_lora():
    result, _ = audit(_ADAPTER_EXPORT, "G4")
    assert result.status.value == "unused"
    assert all(e.path != "pkg/checkpoint/addons.py" for e in result.evidence)


def test_the_same_dict_filled_from_the_runs_arguments_is_lora():
    files = {**_ADAPTER_EXPORT, "pkg/checkpoint/addons.py": _ADAPTER_EXPORT["pkg/checkpoint/addons.py"].replace(
        "peft_config.dim", "args.lora_rank").replace("peft_config.alpha", "args.lora_alpha")}
    assert audit(files, "G4")[0].status.value == "used"


def test_a_literal_rank_is_still_a_choice():
    files = {**_ADAPTER_EXPORT, "pkg/checkpoint/addons.py": _ADAPTER_EXPORT["pkg/checkpoint/addons.py"].replace(
        "peft_config.dim", "16")}
    assert audit(files, "G4")[0].status.value == "used"


def test_a_config_serialising_its_own_fields_is_not_lora():
    # round 12 (VeOmni): ``"r": self.r`` in a LoRA config's to_peft_dict describes an adapter, it chooses none
    from checks.rules.g_strategy import _SELF_EXPORT

    result, _ = audit(_SELF_EXPORT, "G4")
    assert result.status.value == "unused"
    assert all(e.path != "pkg/lora/config.py" for e in result.evidence)


def test_the_same_dict_filled_from_the_trainers_arguments_is_lora():
    from checks.rules.g_strategy import _SELF_EXPORT

    files = {**_SELF_EXPORT, "pkg/lora/config.py": _SELF_EXPORT["pkg/lora/config.py"].replace(
        "self.r,", "self.args.lora_rank,").replace("self.lora_alpha,", "self.args.lora_alpha,")}
    assert audit(files, "G4")[0].status.value == "used"
