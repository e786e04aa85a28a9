"""Lead round 22 (xturing): ``x = A if cond else B`` with constant arms is two guarded settings, decided by the settings.

xTuring's Lightning trainer picks its strategy with ``strategy = "deepspeed_stage_2_offload" if optimizer_name ==
"cpu_adam" else "deepspeed_stage_2"`` after ``strategy = "auto"``; the extractor used to record only the ``"auto"``.
"""

from __future__ import annotations

from .claims import audit as _audit


def _trainer(choice: str) -> str:
    return (
        "import argparse\n\nimport lightning as L\nimport torch\n\n\n"
        "class Module(L.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n        return self.model(batch).loss\n\n"
        "    def configure_optimizers(self):\n        return torch.optim.AdamW(self.parameters(), lr=1e-4)\n\n\n"
        "def fit(module, optimizer_name: str = 'adamw', offload: bool = False):\n"
        "    strategy = 'auto'\n"
        f"    strategy = {choice}\n"
        "    trainer = L.Trainer(accelerator='gpu', strategy=strategy, precision=16)\n"
        "    trainer.fit(module)\n"
    )


# the optimizer's name comes from per-model configs that disagree (the engine cannot tell which model runs)
_MENU = {"configs/small.yaml": "optimizer_name: adamw\nlearning_rate: 1e-4\n",
         "configs/large.yaml": "optimizer_name: cpu_adam\nlearning_rate: 1e-5\n"}
_OFFLOAD_IF_CPU_ADAM = "'deepspeed_stage_2_offload' if optimizer_name == 'cpu_adam' else 'deepspeed_stage_2'"


def test_the_extractor_records_each_constant_arm_with_its_condition():
    a = _audit({"train.py": _trainer(_OFFLOAD_IF_CPU_ADAM)})
    arms = [x for x in a.facts.files["train.py"].assigns if x.name == "strategy"]
    assert [(x.value, x.guard, x.stmt) for x in arms] == [
        ("auto", None, 0),
        ("deepspeed_stage_2_offload", "optimizer_name == 'cpu_adam'", 17),
        ("deepspeed_stage_2", "not (optimizer_name == 'cpu_adam')", 17),
    ]


def test_a_nested_choice_guards_each_arm_with_the_conditions_before_it():
    a = _audit({"train.py": "def f(n, fast):\n    mode = 'a' if n > 1 else 'b' if fast or n else 'c'\n    return mode\n"})
    arms = [(x.value, x.guard) for x in a.facts.files["train.py"].assigns if x.name == "mode"]
    assert arms == [("a", "n > 1"), ("b", "not (n > 1) and (fast or n)"), ("c", "not (n > 1) and not (fast or n)")]


def test_undecided_arms_that_all_pick_deepspeed_zero2_make_the_run_deepspeed_but_not_offload():
    # fails with the rule reverted: the Trainer's strategy read as the earlier "auto" (A1/A3/B1/C6/E2 unused)
    a = _audit({"train.py": _trainer(_OFFLOAD_IF_CPU_ADAM), **_MENU})
    assert a.facts.effective("strategy")[0].value == "auto"  # undecided arms are not effective settings
    assert [len(g) for g in a.facts.alternatives("strategy")] == [2]
    status = {k: a.result(k).status.value for k in ("A1", "A3", "B1", "C4", "C6", "E2")}
    assert status == {"A1": "used", "A3": "used", "B1": "used", "C4": "unused", "C6": "used", "E2": "used"}
    assert "deepspeed_stage_2 (when not (optimizer_name == 'cpu_adam'))" in a.result("A3").detail


def test_an_arm_the_flag_defaults_switch_off_is_dropped_and_the_other_arm_is_the_setting():
    files = {"train.py": _trainer("'deepspeed_stage_2_offload' if args.offload else 'deepspeed_stage_2'")
             + "\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--offload', action='store_true')\nargs = parser.parse_args()\n"}
    a = _audit(files)
    assert [s.value for s in a.facts.effective("strategy") if s.guard] == ["deepspeed_stage_2"]
    assert a.facts.alternatives("strategy") == []
    assert a.result("C4").status.value == "unused" and a.result("A3").status.value == "used"
    # a launch that passes the flag decides the other arm: offload is the run's
    files["run.sh"] = "python train.py --offload\n"
    a = _audit(files)
    assert [s.value for s in a.facts.effective("strategy") if s.guard] == ["deepspeed_stage_2_offload"]
    assert a.result("C4").status.value == "used"


def test_an_undecided_choice_with_one_multi_gpu_arm_does_not_make_the_run_multi_gpu():
    a = _audit({"train.py": _trainer("'ddp' if optimizer_name == 'cpu_adam' else 'auto'"), **_MENU})
    assert a.result("A1").status.value != "used"
    assert "no distributed training found" in a.result("E2").detail


def _lightning(strategy: str) -> dict[str, str]:
    return {"train.py": ("import lightning as L\nfrom lightning.pytorch.strategies import DeepSpeedStrategy\n\n\n"
                         f"def main(module):\n    trainer = L.Trainer(accelerator='gpu', devices=8, strategy={strategy})\n"
                         "    trainer.fit(module)\n")}


def test_lightning_deepspeed_strategy_at_its_defaults_overlaps_and_keeps_contiguous_gradients():
    # Lightning's DeepSpeedStrategy defaults contiguous_gradients=True and overlap_comm=True when no config is passed
    a = _audit(_lightning("'deepspeed_stage_2'"))
    assert (a.result("E2").status.value, a.result("C6").status.value) == ("used", "used")
    a = _audit(_lightning("DeepSpeedStrategy(stage=2)"))
    assert (a.result("E2").status.value, a.result("C6").status.value) == ("used", "used")


def test_lightning_deepspeed_strategy_with_its_own_config_or_switched_off_is_not_judged_by_the_defaults():
    a = _audit(_lightning("DeepSpeedStrategy(stage=2, overlap_comm=False, contiguous_gradients=False)"))
    assert (a.result("E2").status.value, a.result("C6").status.value) == ("unused", "unused")
    a = _audit(_lightning("DeepSpeedStrategy(config='ds_config.json')"))
    assert a.result("C6").status.value == "unused"
