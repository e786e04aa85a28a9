"""C3 cites the switch that keeps a gated ``gradient_checkpointing_enable()`` off (OpenRLHF's
``--model.gradient_checkpointing_enable`` store_true flag, unset in every CLI): "off by default", with the flag's line, not
"explicitly disabled" on the strength of the enable call itself."""

from __future__ import annotations

from tests.rules_ghj.ghj_util import audit

_CLI = (
    "import argparse\n\nfrom transformers import AutoModelForCausalLM\n\n\n"
    "def train(args):\n    model = AutoModelForCausalLM.from_pretrained(args.pretrain)\n"
    "    if args.gradient_checkpointing_enable:\n        model.gradient_checkpointing_enable()\n"
    "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n\n\n"
    "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--pretrain', type=str, default=None)\n"
    "    parser.add_argument('--gradient_checkpointing_enable', action='store_true', default=False)\n"
    "    train(parser.parse_args())\n"
)


def test_a_gated_enable_call_is_off_by_default_and_cites_the_flag():
    r, _ = audit({"pkg/cli/train_sft.py": _CLI}, "C3")
    assert r.status.value == "unused"
    assert r.detail.startswith("activation checkpointing is off by default: --gradient_checkpointing_enable defaults to False "
                               "(pkg/cli/train_sft.py:19)"), r.detail
    assert [(e.path, e.line) for e in r.evidence] == [("pkg/cli/train_sft.py", 19)]


def test_control_a_launch_that_passes_the_flag_enables_it():
    files = {"pkg/cli/train_sft.py": _CLI, "scripts/train_sft.sh": "deepspeed --module pkg.cli.train_sft --pretrain m --gradient_checkpointing_enable\n"}
    r, _ = audit(files, "C3")
    assert r.status.value == "used", r.detail
