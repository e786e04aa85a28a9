"""Round 9 (held-out unsloth): a library that ships a subclass of TRL's trainer (``class UnslothTrainer(SFTTrainer):``) and
never builds it: its users' runs go through the HF Trainer, whose loader, schedule and save defaults are the setting."""

from __future__ import annotations

from tests.rules_ghj.ghj_util import audit

_SUB = "from trl import SFTTrainer\n\nclass FastTrainer(SFTTrainer):\n    def create_optimizer(self):\n        return super().create_optimizer()\n"
_OWN = "class SFTTrainer:\n    def train(self):\n        pass\n\nclass FastTrainer(SFTTrainer):\n    pass\n"
_DEFAULTS = ("def patch_config_defaults():\n    replacements = {\n        \"warmup_ratio\": 0.1,\n"
             "        \"dataloader_pin_memory\": True,\n    }\n    return replacements\n")


def test_library_subclass_of_trl_trainer_pins_by_hf_default() -> None:
    result, _ = audit({"mylib/trainer.py": _SUB}, "F3")
    assert result.status.value == "used"
    assert ("mylib/trainer.py", 3) in {(e.path, e.line) for e in result.evidence}


def test_own_trainer_class_is_not_the_hf_loader() -> None:
    assert audit({"mylib/trainer.py": _OWN}, "F3")[0].status.value == "unused"


def test_library_subclass_leaves_tokenization_to_trl() -> None:
    assert audit({"mylib/trainer.py": _SUB}, "F6")[0].status.value == "partial"


def test_library_warmup_default_decays_linearly_under_the_hf_trainer() -> None:
    files = {"mylib/trainer.py": _SUB, "mylib/rl.py": _DEFAULTS}
    result, _ = audit(files, "G1")
    assert result.status.value == "used" and "linear" in result.detail


def test_library_subclass_saves_at_the_hf_default() -> None:
    result, _ = audit({"mylib/trainer.py": _SUB}, "I3")
    assert result.status.value == "used" and "500" in result.detail
