"""Attribution: each regression lands on the diff line that caused it, or nowhere."""

from __future__ import annotations

from checks.model import Evidence, Status
from review.attribute import attribute
from review.comments import suggestion_for
from review.compare import compare_audits
from review.diff import LEFT, RIGHT, parse_diff

from .review_util import audit_tree, diff_of, result, synthetic

U, N = Status.USED, Status.UNUSED
YAML_BASE = "model_name_or_path: meta-llama/Llama-2-7b-hf\nlr: 0.0001\nsave_steps: 500\nlogging_steps: 10\n"


def _run(tmp_path, base_files, head_files, base, head):
    diff = parse_diff(diff_of(tmp_path, base_files, head_files))
    cmp = compare_audits(base, head)
    placed, unplaced = attribute(cmp.regressions, base, head, diff)
    for p in placed:
        assert diff.valid_target(p.path, p.line, p.side)
    return placed, unplaced


def test_changed_line_is_commented_on_the_right_with_a_suggestion(tmp_path):
    head_yaml = YAML_BASE.replace("save_steps: 500", "save_steps: 1")
    base = synthetic([result("I3", U, [Evidence("train.yaml", 3, "save_steps: 500", "save_steps", 500)], {"save_steps": 500})])
    head = synthetic([result("I3", N, [Evidence("train.yaml", 3, "save_steps: 1", "save_steps", 1)], {"save_steps": 1})])
    [p], unplaced = _run(tmp_path, {"train.yaml": YAML_BASE}, {"train.yaml": head_yaml}, base, head)
    assert unplaced == []
    assert (p.path, p.line, p.side) == ("train.yaml", 3, RIGHT)
    assert p.change.key == "save_steps" and (p.change.path, p.change.line, p.change.side) == ("train.yaml", 3, RIGHT)
    assert suggestion_for(p) == "save_steps: 500"


def test_added_line_gets_the_base_value_as_suggestion(tmp_path):
    base_py = "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained(\n    'x',\n)\n"
    head_py = "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained(\n    'x',\n    attn_implementation='eager',\n)\n"
    base = synthetic([result("D1", U, [], {"attn_implementation": "sdpa"})])
    head = synthetic([result("D1", U, [Evidence("train.py", 4, "attn_implementation='eager',", "from_pretrained(attn_implementation=)", "eager")],
                            {"attn_implementation": "eager"})])
    [p], _ = _run(tmp_path, {"train.py": base_py}, {"train.py": head_py}, base, head)
    assert (p.path, p.line, p.side) == ("train.py", 4, RIGHT)
    assert suggestion_for(p) == "    attn_implementation='sdpa',"


def test_removed_line_is_commented_on_the_left(tmp_path):
    base_yaml = "model_name_or_path: m\nbf16: true\nlr: 0.1\n"
    head_yaml = "model_name_or_path: m\nlr: 0.1\n"
    base = synthetic([result("C1", U, [Evidence("train.yaml", 2, "bf16: true", "bf16", True)], {"precision": "bf16"})])
    head = synthetic([result("C1", N, [], {"precision": "fp32"})])
    [p], _ = _run(tmp_path, {"train.yaml": base_yaml}, {"train.yaml": head_yaml}, base, head)
    assert (p.path, p.line, p.side, p.text) == ("train.yaml", 2, LEFT, "bf16: true")
    assert suggestion_for(p) is None  # a suggestion cannot apply to a removed line
    assert p.base_text == "bf16: true"


def test_removal_wins_over_an_unrelated_added_key(tmp_path):
    base_yaml = "model_name_or_path: m\nbf16: true\nlr: 0.1\n"
    head_yaml = "model_name_or_path: m\nfp16: false\nlr: 0.1\n"
    base = synthetic([result("C1", U, [Evidence("train.yaml", 2, "bf16: true", "bf16", True)], {"precision": "bf16"})])
    head = synthetic([result("C1", N, [Evidence("train.yaml", 2, "fp16: false", "fp16", False)], {"precision": "fp32"})])
    [p], _ = _run(tmp_path, {"train.yaml": base_yaml}, {"train.yaml": head_yaml}, base, head)
    assert (p.line, p.side) == (2, LEFT)


def test_setting_moved_to_another_file_and_turned_off_lands_on_the_new_line(tmp_path):
    base_files = {"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nbf16: true\nlr: 0.001\n"}
    head_files = {"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nlr: 0.001\n",
                  "ds.json": '{\n  "bf16": {\n    "enabled": false\n  }\n}\n'}
    [p], _ = _run(tmp_path, base_files, head_files, audit_tree(base_files), audit_tree(head_files))
    assert (p.path, p.line, p.side) == ("ds.json", 3, RIGHT)
    assert suggestion_for(p) == '    "enabled": true'


def test_renamed_file_targets_the_new_path(tmp_path):
    body = "".join(f"key{i}: {i}\n" for i in range(12))
    base_files = {"old/train.yaml": body + "save_steps: 500\n"}
    head_files = {"new/train.yaml": body + "save_steps: 2\n"}
    base = synthetic([result("I3", U, [Evidence("old/train.yaml", 13, "save_steps: 500", "save_steps", 500)], {"save_steps": 500})])
    head = synthetic([result("I3", N, [Evidence("new/train.yaml", 13, "save_steps: 2", "save_steps", 2)], {"save_steps": 2})])
    [p], _ = _run(tmp_path, base_files, head_files, base, head)
    assert (p.path, p.line, p.side) == ("new/train.yaml", 13, RIGHT)
    # removal inside a renamed file: LEFT, named by the head path
    head_files2 = {"new/train.yaml": body}
    head2 = synthetic([result("I3", N, [], {"save_steps": 1})])
    (tmp_path / "b").mkdir()
    [p2], _ = _run(tmp_path / "b", base_files, head_files2, base, head2)
    assert (p2.path, p2.line, p2.side) == ("new/train.yaml", 13, LEFT)


def test_cause_outside_the_diff_is_unplaced_never_on_an_unrelated_line(tmp_path):
    head_yaml = YAML_BASE.replace("lr: 0.0001", "lr: 0.0002")  # the PR only touches lr
    base = synthetic([result("I3", U, [Evidence("train.yaml", 3, "save_steps: 500", "save_steps", 500)], {"save_steps": 500})])
    head = synthetic([result("I3", N, [Evidence("train.yaml", 3, "save_steps: 500", "save_steps", 500)], {"save_steps": 5})])
    placed, [u] = _run(tmp_path, {"train.yaml": YAML_BASE}, {"train.yaml": head_yaml}, base, head)
    assert placed == []
    assert (u.path, u.line) == ("train.yaml", 3)


def test_second_hunk_crlf_and_no_newline(tmp_path):
    lines = [f"k{i}: {i}" for i in range(30)]
    base_text = "\r\n".join([*lines, "save_steps: 500"])  # CRLF, no newline at end
    head_lines = list(lines)
    head_lines[2] = "k2: 200"
    head_text = "\r\n".join([*head_lines, "save_steps: 10"])
    base = synthetic([result("I3", U, [Evidence("c.yaml", 31, "save_steps: 500", "save_steps", 500)], {"save_steps": 500})])
    head = synthetic([result("I3", U, [Evidence("c.yaml", 31, "save_steps: 10", "save_steps", 10)], {"save_steps": 10})])
    diff = parse_diff(diff_of(tmp_path, {"c.yaml": base_text.encode()}, {"c.yaml": head_text.encode()}))
    assert len(diff.head("c.yaml").hunks) == 2
    cmp = compare_audits(base, head)
    [p], _ = attribute(cmp.regressions, base, head, diff)
    assert (p.line, p.side, p.text) == (31, RIGHT, "save_steps: 10")
    assert p.crlf and suggestion_for(p) == "save_steps: 500"


def test_launcher_flag_on_a_continuation_line(tmp_path):
    base_files = {"run.sh": "torchrun --nproc_per_node 8 \\\n  --nnodes 1 \\\n  train.py --bf16 True --output_dir out\n",
                  "train.py": "from transformers import HfArgumentParser, TrainingArguments\n"}
    head_files = dict(base_files, **{"run.sh": base_files["run.sh"].replace("--bf16 True", "--bf16 False")})
    [p], _ = _run(tmp_path, base_files, head_files, audit_tree(base_files), audit_tree(head_files))
    assert (p.path, p.line, p.side) == ("run.sh", 3, RIGHT)
    assert suggestion_for(p) == "  train.py --bf16 True --output_dir out"


def test_two_regressions_of_one_check_do_not_share_a_line(tmp_path):
    head_yaml = YAML_BASE.replace("save_steps: 500", "save_steps: 1")
    ev_b = Evidence("train.yaml", 3, "save_steps: 500", "save_steps", 500)
    ev_h = Evidence("train.yaml", 3, "save_steps: 1", "save_steps", 1)
    base = synthetic([result("I3", U, [ev_b], {"save_steps": 500}), result("I4", U, [ev_b])])
    head = synthetic([result("I3", N, [ev_h], {"save_steps": 1}), result("I4", N, [ev_h])])
    placed, unplaced = _run(tmp_path, {"train.yaml": YAML_BASE}, {"train.yaml": head_yaml}, base, head)
    assert len(placed) == 2  # two checks may each comment the line they cite
    assert {p.change.check for p in placed} == {"I3", "I4"} and unplaced == []


def test_line_numbers_of_another_version_are_not_trusted(tmp_path):
    # the base audit saw `bf16: true` at line 2, but in the diff's base line 2 is something else
    base_yaml = "model_name_or_path: m\nlr: 0.1\nbf16: true\n"
    head_yaml = "model_name_or_path: m\nbf16: true\n"
    base = synthetic([result("C1", U, [Evidence("train.yaml", 2, "bf16: true", "bf16", True)], {"precision": "bf16"})])
    head = synthetic([result("C1", N, [], {"precision": "fp32"})])
    placed, [u] = _run(tmp_path, {"train.yaml": base_yaml}, {"train.yaml": head_yaml}, base, head)
    assert placed == [] and u.check == "C1"


def test_nccl_variable_removed_from_a_multi_node_launcher_lands_on_the_removed_export(tmp_path):
    sh = ("#!/bin/bash\nexport NCCL_IB_HCA=mlx5_0,mlx5_1\nexport NCCL_SOCKET_IFNAME=eth0\n"
          "torchrun --nnodes 2 --nproc_per_node 8 --node_rank $RANK train.py --bf16 True\n")
    base_files = {"run.sh": sh, "train.py": "from transformers import Trainer, TrainingArguments\n"}
    head_files = dict(base_files, **{"run.sh": sh.replace("export NCCL_IB_HCA=mlx5_0,mlx5_1\n", "")})
    placed, _ = _run(tmp_path, base_files, head_files, audit_tree(base_files), audit_tree(head_files))
    [p] = placed  # E1 and E4 both see it: one change
    assert (p.path, p.line, p.side, p.text) == ("run.sh", 2, LEFT, "export NCCL_IB_HCA=mlx5_0,mlx5_1")
    assert p.change.finding == "NCCL_IB_HCA"
