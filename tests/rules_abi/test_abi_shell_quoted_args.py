"""Megatron-LM's older example scripts keep flags in a multi-line double-quoted variable."""

from __future__ import annotations

from checks.engine import build_facts

SCRIPT = """#!/bin/bash
GPUS_PER_NODE=8
DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes 1"
GPT_ARGS="
    --tensor-model-parallel-size 2 \\
    --pipeline-model-parallel-size 4 \\
    --sequence-parallel \\
    --num-layers 24
"
torchrun $DISTRIBUTED_ARGS pretrain_gpt.py \\
    $GPT_ARGS \\
    --save-interval 1000
"""


def test_multiline_quoted_flags_reach_the_launch():
    facts = build_facts([("run.sh", SCRIPT.encode())])
    [launch] = facts.launches("torchrun")
    assert launch.launcher_args["nproc_per_node"] == 8
    assert launch.script == "pretrain_gpt.py"
    assert launch.script_args["tensor_model_parallel_size"] == 2
    assert launch.script_args["pipeline_model_parallel_size"] == 4
    assert launch.script_args["sequence_parallel"] is True
    assert launch.script_args["save_interval"] == 1000
    assert launch.line == 10


def test_single_line_quoted_assignment_unchanged():
    facts = build_facts([("run.sh", b'ARGS="--tensor-model-parallel-size 1"\ntorchrun --nproc_per_node 2 train.py $ARGS\n')])
    [launch] = facts.launches("torchrun")
    assert launch.script_args == {"tensor_model_parallel_size": 1}
