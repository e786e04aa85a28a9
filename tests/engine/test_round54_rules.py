"""Round 54 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.engine import audit_files


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


_LLAVA_TRAIN = (
    "import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n"
    "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n")


# --- Ovis: D2 raised AttributeError on a DeepSpeed config's compile section ----------------------------------------------------

def test_a_deepspeed_compile_section_does_not_crash_d2() -> None:
    files = {"train.py": _LLAVA_TRAIN,
             "scripts/zero3_cp.json": '{\n  "zero_optimization": {"stage": 3},\n  "compile": {\n    "enabled": true\n  }\n}\n',
             "scripts/run.sh": "deepspeed train.py --deepspeed scripts/zero3_cp.json --bf16 True --output_dir out\n"}
    audit = _audit(files)
    d2 = _check(audit, "D2")
    assert "failed on this repository" not in d2.detail, d2.detail
