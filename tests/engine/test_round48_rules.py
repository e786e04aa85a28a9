"""Round 48 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest. (Rules whose shape fits a
check's own examples carry it there: H1 Multimodal-GPT, C1 a handed-on autocast, G6 SPIN's loss.)"""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


# --- a reference's branch (Yi ``finetune/sft/main.py``): FusedAdam picked only when the launches leave --offload off -------

_YI_SFT = (
    "import argparse\n\nimport torch\nfrom deepspeed.ops.adam import DeepSpeedCPUAdam, FusedAdam\n\n\n"
    "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--offload', action='store_true')\n"
    "    args = parser.parse_args()\n    model = build_model()\n"
    "    AdamOptimizer = DeepSpeedCPUAdam if args.offload else FusedAdam\n"
    "    optimizer = AdamOptimizer(model.parameters(), lr=2e-6, betas=(0.9, 0.95))\n"
    "    for batch in loader:\n        loss = model(**batch).loss\n        model.backward(loss)\n        model.step()\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


def test_a_class_picked_by_a_conditional_expression_counts_only_in_its_arm():
    files = {"finetune/sft/main.py": _YI_SFT,
             "finetune/scripts/run_sft.sh": "deepspeed main.py --zero_stage 2 --offload --max_seq_len 4096\n"}
    d6 = _check(_audit(files), "D6")
    assert not any(e.path == "finetune/sft/main.py" for e in d6.evidence), (d6.status, d6.detail)
    # control: launches that leave --offload off build FusedAdam
    files["finetune/scripts/run_sft.sh"] = "deepspeed main.py --zero_stage 2 --max_seq_len 4096\n"
    d6 = _check(_audit(files), "D6")
    assert d6.status is Status.USED and any(e.path == "finetune/sft/main.py" for e in d6.evidence), (d6.status, d6.detail)


def test_a_dry_run_launch_is_no_training_recipe():
    # oat ``examples/dry_run/dry_run_sft.sh`` passes --adam_offload; its recipes under examples/ do not
    files = {"finetune/sft/main.py": _YI_SFT,
             "examples/sft.sh": "deepspeed finetune/sft/main.py --zero_stage 2 --max_seq_len 4096\n",
             "examples/dry_run/dry_run_sft.sh": "deepspeed finetune/sft/main.py --zero_stage 2 --offload\n"}
    a = _audit(files)
    assert a.roles.by_path["examples/dry_run/dry_run_sft.sh"] == "test"
    assert _check(a, "D6").status is Status.USED
