"""Rules of round 19 of issue #9 (Tevatron, a dense-retrieval toolkit whose PyTorch driver runs the HF Trainer and whose
encoding driver parses the same arguments): each rule test fails on the rule before it; each control passes on both."""

from __future__ import annotations

from checks.rules.c_memory import _HF_FP16_DRIVERS

from .claims import audit as _audit


def test_autocast_under_an_unset_hf_fp16_switch_is_fp32():
    # ``with torch.cuda.amp.autocast() if training_args.fp16 else nullcontext():`` in the encoding driver, ``fp16`` set
    # nowhere (previous rule: "FP16 mixed precision" citing the autocast)
    c1 = _audit(_HF_FP16_DRIVERS).result("C1")
    assert c1.status.value == "unused"
    assert [(e.path, e.line, e.key, e.value) for e in c1.evidence] == [
        ("mylib/driver/encode.py", 12, "TrainingArguments.fp16", False)]
    assert "transformers' default; nothing in the project sets it" in (c1.detail or "")


def test_control_a_launch_setting_fp16_turns_the_autocast_on():
    files = {**_HF_FP16_DRIVERS, "scripts/train.sh": "torchrun --nproc_per_node 8 -m mylib.driver.train --fp16 --output_dir out\n"}
    assert _audit(files).result("C1").status.value == "used"


def test_control_a_project_field_named_fp16_is_the_projects_switch():
    # the project's own arguments class defines ``fp16: bool = True``: not transformers' default
    files = {**_HF_FP16_DRIVERS, "mylib/arguments.py": _HF_FP16_DRIVERS["mylib/arguments.py"] + "    fp16: bool = field(default=True)\n"}
    assert _audit(files).result("C1").status.value == "used"


def test_control_without_hf_arguments_the_flag_is_unknown():
    # a plain script whose ``args`` come from nowhere the engine can read: the autocast stays in effect
    files = {"train.py": ("from contextlib import nullcontext\n\nimport torch\n\n\ndef train(args, model, loader, opt):\n"
                          "    for batch in loader:\n        with torch.cuda.amp.autocast() if args.fp16 else nullcontext():\n"
                          "            loss = model(batch)\n        loss.backward()\n        opt.step()\n")}
    assert _audit(files).result("C1").status.value != "unused"


def test_hf_default_sites_cite_the_script_that_runs_the_trainer():
    # I3/I4/I5 and G1 cite the HF default at the training driver's parser, not the encoding driver's (previous rule: the
    # first ``HfArgumentParser`` in scan order, ``mylib/driver/encode.py``)
    audit = _audit(_HF_FP16_DRIVERS)
    for check in ("I3", "I4", "G1"):
        r = audit.result(check)
        assert r.evidence and r.evidence[0].path == "mylib/driver/train.py", (check, r.evidence)
    assert "the trainer at mylib/driver/train.py:" in (audit.result("I4").detail or "")
