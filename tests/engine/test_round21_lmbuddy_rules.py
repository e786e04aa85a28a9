"""Rules of round 21 of issue #9 (lm-buddy 0.9.0: config-driven fine-tuning jobs whose training function, TRL's SFTTrainer,
runs in Ray Train TorchTrainer workers): each rule test fails on the rule before it; each control passes on both."""

from __future__ import annotations

from checks.model import Status
from checks.rules.a_parallelism import _ray_job

from .claims import audit as _audit


def test_ray_train_workers_running_the_packages_hf_trainer_are_data_parallel():
    audit = _audit(_ray_job())
    r = audit.result("A1")
    assert r.status is Status.USED
    assert "Ray Train" in r.detail and "config.ray.num_workers" in r.detail
    assert (r.evidence[0].path, r.evidence[0].line) == ("jobs/finetuning.py", 25)


def test_ray_train_workers_are_distributed_training_for_e2_and_e3():
    audit = _audit(_ray_job())
    assert audit.result("E2").status is Status.USED  # the HF Trainer's DDP overlaps its bucketed all-reduce
    assert "no distributed training found" not in audit.result("E3").detail


def test_one_ray_worker_is_named_as_a_single_training_process():
    r = _audit(_ray_job("1")).result("A1")
    assert r.status is Status.UNUSED
    assert "one worker" in r.detail and "num_workers=1" in r.detail


def test_control_one_ray_worker_is_not_data_parallel():
    audit = _audit(_ray_job("1"))
    assert audit.result("A1").status is Status.UNUSED
    assert "no distributed training found" in audit.result("E2").detail


def test_control_a_ray_trainer_handed_its_loop_by_a_caller_is_not_judged_data_parallel():
    # Ludwig's Ray backend ``run_train_remote(train_loop, ...)``: which loop runs is the caller's, and a backend the run
    # may not pick
    r = _audit(_ray_job(loop="train_loop")).result("A1")
    assert r.status is Status.UNUSED
    assert "Ray Train" not in r.detail


_JOB_CONFIG = (
    "from pydantic import BaseModel\n\n\n"
    "class TrainerConfig(BaseModel, extra='forbid'):\n"
    "    learning_rate: float | None = None\n"
    "    gradient_checkpointing: {gc}\n\n"
    "    def training_args(self):\n        return self.model_dump(exclude_none=True)\n"
)
_JOB = (
    "import wandb\nfrom transformers import AutoModelForCausalLM, TrainingArguments\nfrom trl import SFTTrainer\n\n\n"
    "def load_and_train(config):\n    model = AutoModelForCausalLM.from_pretrained(config.model.path)\n"
    "    args = TrainingArguments(output_dir='out', report_to={report_to}, **config.trainer.training_args())\n"
    "    trainer = SFTTrainer(model=model, args=args, train_dataset=load_dataset(config.dataset))\n    trainer.train()\n"
)


def _job(gc: str = "bool | None = None", report_to: str = "'wandb' if config.tracking is not None else 'none'"):
    return {"jobs/config.py": _JOB_CONFIG.format(gc=gc), "jobs/finetuning.py": _JOB.format(report_to=report_to)}


def test_an_optional_checkpointing_field_defaulting_to_none_is_not_an_explicit_off():
    r = _audit(_job()).result("C3")
    assert r.status is Status.UNUSED
    assert "explicitly disabled" not in r.detail
    assert "off by default: TrainerConfig.gradient_checkpointing defaults to None (jobs/config.py:6)" in r.detail


def test_control_a_checkpointing_field_defaulting_to_false_is_off_by_that_default():
    r = _audit(_job(gc="bool = False")).result("C3")
    assert r.status is Status.UNUSED
    assert "off by default: TrainerConfig.gradient_checkpointing defaults to False (jobs/config.py:6)" in r.detail
    assert "explicitly disabled" not in r.detail


def test_control_a_config_that_sets_it_false_is_an_explicit_off():
    files = {**_job(gc="bool = False"), "configs/run.yaml": "model:\n  path: meta-llama/Llama-3.1-8B\ngradient_checkpointing: false\n"}
    r = _audit(files).result("C3")
    assert r.status is Status.UNUSED
    assert r.detail == "activation checkpointing is explicitly disabled"


def test_a_report_to_that_reports_nothing_unless_a_condition_holds_names_the_condition():
    r = _audit(_job()).result("I5")
    assert r.status is Status.USED
    assert "only when `config.tracking is not None`" in r.detail and "jobs/finetuning.py:8" in r.detail


def test_control_a_plain_report_to_reports_by_default():
    r = _audit(_job(report_to="'wandb'")).result("I5")
    assert r.status is Status.USED
    assert "reporting to wandb every 500 steps" in r.detail and "only when" not in r.detail


def test_ray_workers_counted_by_the_config_leave_the_node_count_not_judged_and_ray_is_a_framework():
    audit = _audit(_ray_job())
    r = audit.result("E1")
    assert r.status is Status.NA
    assert r.detail.startswith("not judged: the training processes are Ray Train workers")
    assert "ray" in audit.project.frameworks


def test_control_a_fixed_ray_worker_count_stays_a_single_node_reading():
    r = _audit(_ray_job("8")).result("E1")
    assert r.status is Status.NA and r.detail.startswith("single-node project")


def test_control_a_report_to_whose_else_branch_is_none_is_not_read_as_reporting_nothing():
    # xllm ``report_to=["wandb"] if config.report_to_wandb else None``: None is transformers 4.x's "all", not "none"
    r = _audit(_job(report_to="['wandb'] if config.report_to_wandb else None")).result("I5")
    assert "only when" not in r.detail


def _snippets(files: dict[str, str]) -> dict[str, str]:
    from reports.json_report import to_json
    return {r["check"]: r.get("snippet") or "" for r in to_json(_audit(files))["recommendations"]}


def test_recipe_framework_keys_are_not_written_into_training_arguments():
    snips = _snippets(_job())
    assert "neat_packing" not in snips["F7"] and "TrainingArguments(" not in snips["F7"]
    assert "finetuning_type" not in snips.get("G4", "")


def test_control_training_arguments_keys_still_go_into_the_call():
    snips = _snippets(_job())
    assert "training_args = TrainingArguments(" in snips["F1"] and "dataloader_num_workers=8" in snips["F1"]
