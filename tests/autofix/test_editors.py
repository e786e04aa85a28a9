"""Golden round-trips: each edit changes its own line (or inserts one) and leaves every other byte alone."""

from __future__ import annotations

import pytest

from autofix import json_edit, py_edit, shell_edit, yaml_edit
from autofix.model import EditRefused

RECIPE = (
    "# Llama-3 SFT recipe — 中文注释 ok\r\n"
    "defaults: &defaults\r\n"
    "  lr: 2.0e-5   # peak\r\n"
    "  warmup: 100\r\n"
    "train:\r\n"
    "  <<: *defaults\r\n"
    "  save_steps: 1        # every step (debug)\r\n"
    "  eval_strategy: null\r\n"
    "  bf16: True\r\n"
    "  report_to: ['wandb',\r\n"
    "              'tensorboard']\r\n"
    "  run_name: \"sft-v3\"\r\n"
    "  out: ${oc.env:OUT}\r\n"
    "  alias_me: *defaults\r\n"
    "---\r\n"
    "logging_steps: 1"
)


def test_yaml_set_keeps_everything_else() -> None:
    new, line = yaml_edit.set_value(RECIPE, "train.save_steps", 500)
    assert line == 6
    assert new == RECIPE.replace("save_steps: 1        #", "save_steps: 500        #")
    # ``null``, ``True``, the multi-line flow list, CRLF and the missing final newline survive
    new2, _ = yaml_edit.set_value(new, "train.bf16", False)
    assert "  bf16: False\r\n" in new2 and "  eval_strategy: null\r\n" in new2 and new2.endswith("logging_steps: 1")
    new3, _ = yaml_edit.set_value(RECIPE, "train.run_name", "sft-v4")
    assert '  run_name: "sft-v4"\r\n' in new3  # the quoting style is kept


def test_yaml_second_document_and_no_final_newline() -> None:
    new, line = yaml_edit.set_value(RECIPE, "logging_steps", 10)
    assert new == RECIPE[: -1] + "10" and line == 15


def test_yaml_add_key_in_its_block_with_its_indentation() -> None:
    new, line = yaml_edit.add_key(RECIPE, "train", "gradient_checkpointing", True, after=("bf16",))
    lines = new.split("\n")
    assert lines[line] == "  gradient_checkpointing: true\r" and lines[line - 1] == "  bf16: True\r"
    assert new.replace("  gradient_checkpointing: true\r\n", "", 1) == RECIPE
    top, tl = yaml_edit.add_key("a: 1\nb: 2", "", "c", 3)
    assert top == "a: 1\nb: 2\nc: 3" and tl == 2  # still no final newline


@pytest.mark.parametrize("key,why", [
    ("train.alias_me", "alias"),
    ("defaults.lr", "anchor"),  # the anchored mapping's values are shared, but a scalar inside may be edited...
    ("train.out", "templated"),
    ("train.lr", "merge"),
    ("train.report_to", "flow"),
])
def test_yaml_refusals(key: str, why: str) -> None:
    if key == "defaults.lr":
        new, _ = yaml_edit.set_value(RECIPE, key, 1e-5)  # ...it is the one place that sets it: allowed
        assert "  lr: 1e-05   # peak\r\n" in new
        return
    with pytest.raises(EditRefused, match=why):
        yaml_edit.set_value(RECIPE, key, 1)


def test_yaml_refuses_jinja_and_anchored_scalar() -> None:
    with pytest.raises(EditRefused, match="templated"):
        yaml_edit.set_value("steps: \"{{ n }}\"\n", "steps", 1)
    with pytest.raises(EditRefused, match="anchor"):
        yaml_edit.set_value("a: &x 1\nb: *x\n", "a", 2)


JSON4 = '{\n    "bf16": {\n        "enabled": false\n    },\n    "zero_optimization": {\n        "stage": 2,\n        "overlap_comm": false\n    },\n    "gradient_clipping": "auto"\n}\n'
JSON_TABS = '{\r\n\t"train_batch_size": "auto",\r\n\t"zero_optimization": {\r\n\t\t"stage": 3\r\n\t}\r\n}'


def test_json_set_and_add_in_the_siblings_style() -> None:
    new, line = json_edit.set_value(JSON4, "zero_optimization.overlap_comm", True)
    assert new == JSON4.replace('"overlap_comm": false', '"overlap_comm": true') and line == 6
    added, _ = json_edit.add_key(JSON4, "zero_optimization", "contiguous_gradients", True)
    assert added == JSON4.replace('"overlap_comm": false\n', '"overlap_comm": false,\n        "contiguous_gradients": true\n')
    tabs, _ = json_edit.add_key(JSON_TABS, "zero_optimization", "overlap_comm", True)
    assert tabs == JSON_TABS.replace('"stage": 3\r\n', '"stage": 3,\r\n\t\t"overlap_comm": true\r\n') and not tabs.endswith("\n")
    obj, _ = json_edit.add_key(JSON_TABS, "", "bf16", {"enabled": True})
    assert obj.endswith('\t},\r\n\t"bf16": {\r\n\t\t"enabled": true\r\n\t}\r\n}')


def test_json_refuses_non_strict_json() -> None:
    with pytest.raises(EditRefused):
        json_edit.set_value('{"a": 1, // comment\n}', "a", 2)


PY = '''from torch.utils.data import DataLoader


@dataclass
class Args:
    num_workers: int = field(default=0, metadata={"help": "workers"})  # keep
    save_steps: int = 1


def main(args):
    p.add_argument("--logging-steps", type=int, default=1)
    p.add_argument("--bf16", action="store_true")
    loader = DataLoader(ds, batch_size=8, shuffle=True)  # the training loader
    eval_loader = DataLoader(
        ds,
        batch_size=8,
        num_workers=args.num_workers,
    )
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation='eager')
'''


def _changed(a: str, b: str) -> list[int]:
    x, y = a.split("\n"), b.split("\n")
    return [i for i in range(min(len(x), len(y))) if x[i] != y[i]]


def test_python_call_keyword_set_and_add() -> None:
    new, line = py_edit.set_kw(PY, 19, "from_pretrained", "attn_implementation", "sdpa")
    assert "attn_implementation='sdpa')" in new and _changed(PY, new) == [18]  # quote style kept
    new, _ = py_edit.set_kw(PY, 13, "DataLoader", "pin_memory", True)
    assert "DataLoader(ds, batch_size=8, shuffle=True, pin_memory=True)  # the training loader" in new and _changed(PY, new) == [12]
    new, line = py_edit.set_kw(PY, 14, "DataLoader", "pin_memory", True)
    assert new.split("\n")[line] == "        pin_memory=True," and len(new.split("\n")) == len(PY.split("\n")) + 1
    with pytest.raises(EditRefused, match="not a literal"):
        py_edit.set_kw(PY, 14, "DataLoader", "num_workers", 4)


def test_python_field_argparse_assign() -> None:
    new, _ = py_edit.set_field_default(PY, 6, "Args.num_workers", 4)
    assert _changed(PY, new) == [5] and 'field(default=4, metadata={"help": "workers"})  # keep' in new
    new, _ = py_edit.set_field_default(PY, 7, "Args.save_steps", 500)
    assert _changed(PY, new) == [6] and "save_steps: int = 500" in new
    new, _ = py_edit.set_argparse_default(PY, 11, 10)
    assert _changed(PY, new) == [10] and 'default=10)' in new
    with pytest.raises(EditRefused, match="store_true"):
        py_edit.set_argparse_default(PY, 12, True)
    assert py_edit.set_assign("NW = 0  # c\n", 1, "NW", 4)[0] == "NW = 4  # c\n"
    assert py_edit.ensure_import("import os\n\nx = 1\n", "torch", "nn") == "import os\nfrom torch import nn\n\nx = 1\n"
    assert py_edit.ensure_import("from torch import nn\n", "torch", "nn") == "from torch import nn\n"


SH = """#!/bin/bash
deepspeed --num_gpus 8 train.py \\
    --deepspeed ds.json \\
    --save_steps 1 \\
    --logging_steps=1 \\
    --bf16 False
echo done
"""


def test_shell_flags_on_their_own_lines() -> None:
    new, line = shell_edit.set_flag(SH, 2, "--save-steps", 500)
    assert _changed(SH, new) == [3] and "    --save_steps 500 \\" in new
    new, _ = shell_edit.set_flag(SH, 2, "--logging_steps", 10)
    assert _changed(SH, new) == [4] and "--logging_steps=10 \\" in new
    new, line = shell_edit.set_flag(SH, 2, "--dataloader_num_workers", 4)
    assert new.split("\n")[line] == "    --dataloader_num_workers 4 \\" and new.split("\n")[line + 1] == "    --bf16 False"
    new, _ = shell_edit.remove_flag(SH, 2, "--bf16")
    assert new == SH.replace(" \\\n    --bf16 False", "")
    crlf = SH.replace("\n", "\r\n")
    new, _ = shell_edit.set_flag(crlf, 2, "--save_steps", 500)
    assert new == crlf.replace("--save_steps 1 ", "--save_steps 500 ")


def test_python_added_keyword_keeps_comments_where_they_were() -> None:
    src = "x = f(\n    a=1,  # first\n    b=2,  # last\n    # closing note\n)\n"
    new, line = py_edit.set_kw(src, 1, "f", "c", 3)
    assert new == "x = f(\n    a=1,  # first\n    b=2,  # last\n    c=3,\n    # closing note\n)\n" and line == 3
    src = "x = f(\n    a=1,\n    b=2  # last, no comma\n)\n"
    new, _ = py_edit.set_kw(src, 1, "f", "c", 3)
    assert new == "x = f(\n    a=1,\n    b=2,  # last, no comma\n    c=3\n)\n"
