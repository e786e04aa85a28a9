"""Rules of round 21 of issue #9 (lm-buddy 0.9.0: config-driven fine-tuning jobs whose training function, TRL's SFTTrainer,
runs in Ray Train TorchTrainer workers): each rule test fails on the rule before it; each control passes on both."""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status
from checks.rules.a_parallelism import _ray_job


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


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
