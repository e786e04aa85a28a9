"""A launcher flag's evidence shows the flag as its own line holds it, not the command's first line."""

from __future__ import annotations

from checks.engine import build_facts
from checks.facts import Facts
from checks.facts.store import flag_snippet

SCRIPT = (
    "srun ${SRUN_ARGS} torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py \\\n"
    "    --tensor-model-parallel-size 2 \\\n"
    "    --use-flash-attn \\\n"
    "    --num-workers 0 \\\n"
    '    --data-path "/nvme/a b" \\\n'
    "    --save=/ckpt\n"
)


def test_the_flag_and_its_value_only() -> None:
    c = SCRIPT.replace("\\\n", " ")
    assert flag_snippet(c, "--num_workers") == "--num-workers 0"
    assert flag_snippet(c, "--use_flash_attn") == "--use-flash-attn"
    assert flag_snippet(c, "--nproc_per_node") == "--nproc_per_node 8"
    assert flag_snippet(c, "--data_path") == '--data-path "/nvme/a b"'
    assert flag_snippet(c, "--save") == "--save=/ckpt"
    assert flag_snippet(c, "--absent") == c  # not found: the whole command
    cut = c[:40]  # a command's text is kept to a few hundred characters: a flag past it is written in the command's spelling
    assert flag_snippet(cut, "--num_workers", 0) == "--num-workers 0" and flag_snippet(cut, "--use_flash_attn", True) == "--use-flash-attn"


def test_evidence_of_a_continued_flag_cites_its_line_and_its_text() -> None:
    facts = build_facts([("run.sh", SCRIPT.encode())])
    [s] = [s for s in facts.settings("num_workers") if s.source == "launcher"]
    ev = Facts.ev(s)
    assert (ev.line, ev.snippet) == (4, "--num-workers 0")
    [launch] = facts.launches()
    ev = Facts.ev(launch, key="--use-flash-attn")
    assert (ev.line, ev.snippet) == (3, "--use-flash-attn")
