"""Launcher flags held in shell variables and bash arrays (Megatron-LM's example scripts)."""

from __future__ import annotations

from checks.facts import extract_file


def _launch(text: str):
    ff = extract_file("run.sh", text.encode())
    [launch] = ff.launches
    return launch


def test_unquoted_variable_splits_into_flags() -> None:
    launch = _launch(
        'DISTRIBUTED_ARGS="--nproc_per_node 8 --nnodes 2"\n'
        'DATA_ARGS="--data-path /data/gpt2_text_document --split 949,50,1"\n'
        "torchrun $DISTRIBUTED_ARGS pretrain_gpt.py $DATA_ARGS --bf16\n"
    )
    assert launch.launcher_args == {"nproc_per_node": 8, "nnodes": 2}
    assert launch.script == "pretrain_gpt.py"
    assert launch.script_args == {"data_path": "/data/gpt2_text_document", "split": "949,50,1", "bf16": True}


def test_bash_array_of_flags() -> None:
    launch = _launch(
        "MODEL_ARGS=(\n"
        "    --tensor-model-parallel-size 2  # TP\n"
        "    --overlap-grad-reduce\n"
        ")\n"
        "OPT=(--lr 3e-4)\n"
        'torchrun --nproc_per_node 8 pretrain_gpt.py ${MODEL_ARGS[@]} "${OPT[@]}"\n'
    )
    assert launch.script_args == {"tensor_model_parallel_size": 2, "overlap_grad_reduce": True, "lr": 3e-4}


def test_assignment_with_expansion_is_not_split() -> None:
    ff = extract_file("run.sh", b'BASE="--bf16 True"\nARGS="$BASE --lr 1"\npython train.py $ARGS\n')
    [launch] = ff.launches
    assert launch.script_args == {"bf16": True, "lr": 1}
