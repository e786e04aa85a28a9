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


def test_post_init_fill_of_a_none_field_is_the_default_a_run_gets():
    from checks.rules.f_data import _ARGS_LOADER, _FILLED_WORKERS

    r = _audit({"mylib/arguments.py": _FILLED_WORKERS.format(n=1), "mylib/trainer.py": _ARGS_LOADER})["F1"]
    assert r.status == Status.PARTIAL  # 1 worker on Linux; the Windows branch's 0 is not the training host's
    assert any(e.path == "mylib/arguments.py" and e.line == 15 for e in r.evidence)


def test_post_init_fills_that_disagree_leave_the_none_default():
    src = ("from dataclasses import dataclass\nfrom typing import Optional\n\n@dataclass\nclass A:\n"
           "    dataloader_num_workers: Optional[int] = None\n\n    def __post_init__(self):\n"
           "        if self.dataloader_num_workers is None:\n            if self.fast:\n"
           "                self.dataloader_num_workers = 8\n            else:\n                self.dataloader_num_workers = 0\n")
    from checks.facts.store import Facts

    facts = Facts([extract_file("a.py", src.encode())])
    (s,) = [s for s in facts.effective("dataloader_num_workers") if s.path == "a.py"]
    assert s.value is None and s.line == 6


def test_liger_patch_helper_called_only_under_a_flag_that_is_off_is_not_liger():
    from checks.rules.d_compute import _LIGER_ARGS, _LIGER_TUNER

    r = _audit({"mylib/arguments.py": _LIGER_ARGS.format(on=False), "mylib/tuner.py": _LIGER_TUNER})["D5"]
    assert r.status == Status.UNUSED and "Liger kernels patch the model" not in r.detail
    assert _audit({"mylib/arguments.py": _LIGER_ARGS.format(on=True), "mylib/tuner.py": _LIGER_TUNER})["D5"].status == Status.USED


def test_warmup_passed_through_from_the_hf_arguments_default_is_no_warmup():
    from checks.rules.g_strategy import _SWIFT_GALORE, _SWIFT_SCHED_ARGS, _SWIFT_SCHED_TRAIN

    files = {"mylib/arguments.py": _SWIFT_SCHED_ARGS, "mylib/train.py": _SWIFT_SCHED_TRAIN}
    r = _audit({**files, "mylib/galore.py": _SWIFT_GALORE.format(warm="args.warmup_steps * 2")})["G1"]
    assert (r.status, r.detail) == (Status.PARTIAL, "cosine schedule without warmup")
    # a warmup the code computes from something else is still counted
    r = _audit({**files, "mylib/galore.py": _SWIFT_GALORE.format(warm="int(0.03 * max_steps)")})["G1"]
    assert r.status == Status.USED


def test_accumulation_computed_in_post_init_is_not_the_hf_default():
    from checks.rules.c_memory import _GA_FILLED, _GA_TRAIN

    r = _audit({"mylib/arguments.py": _GA_FILLED.format(bs=1), "mylib/train.py": _GA_TRAIN})["C5"]
    assert r.status == Status.USED and "16 micro-batches" in r.detail and "HF Trainer default" not in r.detail
    r = _audit({"mylib/arguments.py": _GA_FILLED.format(bs=4), "mylib/train.py": _GA_TRAIN})["C5"]
    assert r.status == Status.USED and "4 micro-batches" in r.detail
    # a formula reading something the class does not define is not guessed
    src = _GA_FILLED.format(bs=1).replace("16 / self.per_device_train_batch_size", "self.global_batch / self.per_device_train_batch_size")
    r = _audit({"mylib/arguments.py": src, "mylib/train.py": _GA_TRAIN})["C5"]
    assert r.status == Status.NA and r.detail.startswith("not judged:") and "HF Trainer default" not in r.detail


def test_a_loader_named_with_flash_attn_is_not_a_flash_attention_patch():
    from checks.rules.d_compute import _LOADER_NAMED_FA

    r = _audit({"mylib/model.py": _LOADER_NAMED_FA})["D1"]
    assert r.status == Status.PARTIAL and "flash_attention_2" not in r.detail
    patched = "from mylib.patch import replace_llama_attn_with_flash_attn\nreplace_llama_attn_with_flash_attn()\n"
    assert _audit({"mylib/model.py": _LOADER_NAMED_FA, "train.py": patched})["D1"].status == Status.USED
