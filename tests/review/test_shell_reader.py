"""The shell reader: every flag at its own physical line, commands that must not be dropped, linear time."""

from __future__ import annotations

import sys

from checks.facts import extract_file
from checks.facts.shell import _lex


def _launches(text: str, path: str = "run.sh"):
    return extract_file(path, text.encode()).launches


def test_each_flag_maps_to_its_own_physical_line() -> None:
    text = (
        "#!/bin/bash\n"                                  # 1
        "torchrun --nproc_per_node 8 \\\n"               # 2
        "    --nnodes 2 \\\n"                            # 3
        "    pretrain_gpt.py \\\n"                       # 4
        "    --num-layers 32 \\\n"                       # 5
        "    --bf16 \\\n"                                # 6
        "    --num-workers 4 \\\n"                       # 7
        "    --save-interval=1000\n"                     # 8
    )
    [launch] = _launches(text)
    assert launch.line == 2
    assert launch.script_args == {"num_layers": 32, "bf16": True, "num_workers": 4, "save_interval": 1000}
    assert {k: launch.arg_line(k) for k in launch.script_args} == {"num_layers": 5, "bf16": 6, "num_workers": 7, "save_interval": 8}
    assert launch.arg_line("nproc_per_node") == 2 and launch.arg_line("nnodes") == 3


def test_flags_from_arrays_and_multiline_strings_keep_the_lines_they_were_written_on() -> None:
    text = (
        "GPT_ARGS=(\n"                       # 1
        "    --num-layers 24\n"              # 2
        "    --bf16\n"                       # 3
        ")\n"                                # 4
        'DATA_ARGS="--data-path /d/x\n'      # 5
        '    --num-workers 2"\n'             # 6
        "EXTRA=(--save-interval 500)\n"      # 7
        "GPT_ARGS+=(--use-flash-attn)\n"     # 8
        "torchrun pretrain_gpt.py ${GPT_ARGS[@]} $DATA_ARGS \"${EXTRA[@]}\" --lr 1e-4\n"  # 9
    )
    [launch] = _launches(text)
    lines = {k: launch.arg_line(k) for k in launch.script_args}
    assert lines == {"num_layers": 2, "bf16": 3, "use_flash_attn": 8, "data_path": 5, "num_workers": 6, "save_interval": 7, "lr": 9}


def test_empty_defaulted_variable_before_the_command_is_no_word() -> None:
    text = 'SRUN_ARGS=${SRUN_ARGS:-""}\nsrun -p gpu ${SRUN_ARGS} python -u train.py --bf16 --num_workers 4\n'
    [launch] = _launches(text)
    assert launch.launcher == "python" and launch.script == "train.py" and launch.script_args == {"bf16": True, "num_workers": 4}
    assert launch.wrappers == ("srun",)


def test_unresolved_variable_in_wrapper_position_does_not_drop_the_command() -> None:
    [launch] = _launches("srun ${SRUN_ARGS} --kill-on-bad-exit=1 python tools/train.py --fp16\n")
    assert launch.script == "tools/train.py" and launch.script_args == {"fp16": True}


def test_command_substitution_stays_inside_its_word() -> None:
    text = (
        "torchrun --nproc_per_node $(nvidia-smi -L | wc -l) \\\n"
        '    --master_addr "$(hostname -i)" train.py \\\n'
        "    --run_name run-`date +%s` --bf16\n"
    )
    [launch] = _launches(text)
    assert launch.launcher_args["nproc_per_node"] == "$(nvidia-smi -L | wc -l)"
    assert launch.script == "train.py" and launch.script_args["bf16"] is True
    assert launch.arg_line("bf16") == 3


def test_control_operators_and_comments() -> None:
    assert [w for w, _ in _lex("a && b || c; d | e & f # x y")] == ["a", "&&", "b", "||", "c", ";", "d", "|", "e", "&", "f"]
    assert [w for w, _ in _lex("echo a#b 'c d' \"e $(f \\\"g\\\")\" 2>&1")] == ["echo", "a#b", "c d", 'e $(f \\"g\\")', "2>&1"]
    assert [w for w, _ in _lex("x 'unterminated")] == ["x", "unterminated"]


def _events(fn, *args) -> int:
    """Python line events executed by ``fn(*args)``: a count of interpreted operations, independent of the machine's speed."""
    n = 0

    def tracer(frame, event, arg):
        nonlocal n
        if event == "line":
            n += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn(*args)
    finally:
        sys.settrace(None)
    return n


def test_lexer_work_is_linear_in_line_length() -> None:
    # one long word: a regex consumes it, so the work does not grow with its length (shlex added one character at a time)
    assert _events(_lex, "x" * 200_000) == _events(_lex, "x" * 400_000)
    # many words: the work doubles when the line doubles
    small = _events(_lex, "--a 1 " * 5_000)
    large = _events(_lex, "--a 1 " * 10_000)
    assert 1.9 <= large / small <= 2.1


def test_reader_work_is_linear_in_line_length() -> None:
    def read(n: int) -> None:
        extract_file("run.sh", ("torchrun train.py " + " ".join(f"--a{i} {i}" for i in range(n))).encode())

    small, large = _events(read, 2_000), _events(read, 4_000)
    assert 1.8 <= large / small <= 2.2


def test_flags_assigned_to_a_variable_on_one_line_carry_the_assignment_line() -> None:
    [launch] = _launches('ARGS="--bf16 --num_workers 8"\n\npython train.py $ARGS --lr 1\n')
    assert launch.script_args == {"bf16": True, "num_workers": 8, "lr": 1}
    assert (launch.arg_line("bf16"), launch.arg_line("num_workers"), launch.arg_line("lr")) == (1, 1, 3)


def test_torchrun_tee_takes_a_value_and_module_scripts_follow() -> None:
    text = (
        "TORCHRUN_ARGS=(\n  --standalone\n  --nproc-per-node 8\n  --redirects 3\n  --tee 3\n)\n"
        'uv run --extra ssm python -m torch.distributed.run \\\n  "${TORCHRUN_ARGS[@]}" \\\n  -m examples.mimo.pretrain_mimo \\\n'
        "  --bf16 \\\n  --overlap-grad-reduce\n"
    )
    [launch] = _launches(text)
    assert launch.launcher == "torchrun" and launch.script == "examples.mimo.pretrain_mimo"
    assert launch.launcher_args["tee"] == 3 and launch.script_args == {"bf16": True, "overlap_grad_reduce": True}
    assert launch.arg_line("overlap_grad_reduce") == 11
