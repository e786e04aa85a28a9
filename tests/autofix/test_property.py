"""Property: for any edit, every line the edit does not name is byte-identical (seeded random configs)."""

from __future__ import annotations

import json
import random

import yaml

from autofix import json_edit, yaml_edit
from autofix.model import EditRefused

_WORDS = ["lr", "save_steps", "bf16", "num_workers", "name", "stage", "pin_memory", "warmup", "dtype", "seed", "données", "模型"]


def _value(rng: random.Random) -> object:
    return rng.choice([rng.randint(0, 1000), rng.random() > 0.5, rng.choice(["auto", "cosine", "wandb", "a b", "é"]), None])


def _yaml_text(rng: random.Random) -> tuple[str, dict]:
    nl = rng.choice(["\n", "\r\n"])
    indent = rng.choice([2, 4])
    lines, data = [], {}
    if rng.random() < 0.5:
        lines.append("# generated recipe")
    for i, k in enumerate(rng.sample(_WORDS, 6)):
        key = f"{k}{i}"
        if rng.random() < 0.3:
            sub = {}
            lines.append(f"{key}:")
            for j in range(rng.randint(1, 3)):
                v = _value(rng)
                sub[f"k{j}"] = v
                lines.append(" " * indent + f"k{j}: {_tok(v)}" + (rng.choice(["", "  # note"])))
            data[key] = sub
        else:
            v = _value(rng)
            data[key] = v
            lines.append(f"{key}: {_tok(v)}" + rng.choice(["", "   # why", ""]))
        if rng.random() < 0.2:
            lines.append("")
    text = nl.join(lines) + (nl if rng.random() < 0.7 else "")
    return text, data


def _tok(v: object) -> str:
    if v is None:
        return rng_null()
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"' if " " in v or v == "é" else v
    return str(v)


def rng_null() -> str:
    return "null"


def _only_line_changed(old: str, new: str, line: int) -> None:
    a, b = old.split("\n"), new.split("\n")
    assert len(a) == len(b)
    assert [i for i in range(len(a)) if a[i] != b[i]] == [line]


def test_yaml_edits_touch_only_their_line() -> None:
    rng = random.Random(20261201)
    done = 0
    for _ in range(150):
        text, data = _yaml_text(rng)
        for key, v in data.items():
            paths = [(f"{key}.{k}", sv) for k, sv in v.items()] if isinstance(v, dict) else [(key, v)]
            for path, cur in paths:
                new_v = rng.choice([rng.randint(0, 9999), not cur if isinstance(cur, bool) else True, "x-y"])
                try:
                    new, line = yaml_edit.set_value(text, path, new_v)
                except EditRefused:
                    continue
                _only_line_changed(text, new, line)
                got = yaml.safe_load(new)
                parts = path.split(".")
                node = got
                for p in parts:
                    node = node[p]
                assert node == new_v
                again, _ = yaml_edit.set_value(new, path, new_v)
                assert again == new  # idempotent
                done += 1
    assert done > 500


def test_json_edits_touch_only_their_line() -> None:
    rng = random.Random(7)
    done = 0
    for _ in range(150):
        data = {f"{w}{i}": _value(rng) for i, w in enumerate(rng.sample(_WORDS, 5))}
        data["zero_optimization"] = {"stage": rng.randint(0, 3), "overlap_comm": rng.random() > 0.5}
        indent = rng.choice([2, 4, "\t"])
        text = json.dumps(data, indent=indent, ensure_ascii=rng.random() < 0.5)
        if rng.random() < 0.5:
            text = text.replace("\n", "\r\n")
        if rng.random() < 0.6:
            text += "\n"
        for key in [k for k in data if k != "zero_optimization"] + ["zero_optimization.stage", "zero_optimization.overlap_comm"]:
            new, line = json_edit.set_value(text, key, 12345)
            _only_line_changed(text, new, line)
            loaded = json.loads(new)
            node = loaded
            for p in key.split("."):
                node = node[p]
            assert node == 12345
            done += 1
        added, at = json_edit.add_key(text, "zero_optimization", "contiguous_gradients", True)
        a, b = text.split("\n"), added.split("\n")
        assert len(b) == len(a) + 1 and b[: at - 1] == a[: at - 1] and b[at + 1 :] == a[at:]
        assert json.loads(added)["zero_optimization"]["contiguous_gradients"] is True
    assert done > 800


def _changed_lines(old: str, new: str) -> list[int]:
    a, b = old.split("\n"), new.split("\n")
    assert len(a) == len(b)
    return [i for i in range(len(a)) if a[i] != b[i]]


def test_python_keyword_edits_touch_only_their_line() -> None:
    from autofix import py_edit

    rng = random.Random(11)
    done = 0
    for _ in range(60):
        kws = {f"k{i}": rng.choice([0, 1, True, False, '"s"', "'q'", "2.5"]) for i in range(rng.randint(1, 5))}
        multi = rng.random() < 0.6
        indent = rng.choice(["    ", "  ", "\t"])
        nl = rng.choice(["\n", "\r\n"])
        if multi:
            args = "".join(f"{indent}{indent}{k}={v},{rng.choice(['', '  # why'])}{nl}" for k, v in kws.items())
            call = f"{indent}loader = DataLoader({nl}{indent}{indent}ds,{nl}{args}{indent}){nl}"
        else:
            call = f"{indent}loader = DataLoader(ds, " + ", ".join(f"{k}={v}" for k, v in kws.items()) + f")  # c{nl}"
        text = f"# header{nl}import torch{nl}{nl}def f(ds):{nl}{call}{indent}return loader{nl}"
        for k in kws:
            new, line = py_edit.set_kw(text, 5, "DataLoader", k, 4)
            assert _changed_lines(text, new) == [line] and f"{k}=4" in new.split("\n")[line]
            again, _ = py_edit.set_kw(new, 5, "DataLoader", k, 4)
            assert again == new
            done += 1
        added, line = py_edit.set_kw(text, 5, "DataLoader", "pin_memory", True)
        a, b = text.split("\n"), added.split("\n")
        if multi:  # its own new line; the lines before and after are the old ones
            assert len(b) == len(a) + 1 and b[:line] == a[:line] and b[line + 1 :] == a[line:] and b[line].strip().startswith("pin_memory=True")
        else:
            assert _changed_lines(text, added) == [line] and "pin_memory=True)" in added
    assert done > 100


def test_shell_flag_edits_touch_only_their_line() -> None:
    from autofix import shell_edit

    rng = random.Random(5)
    done = 0
    for _ in range(80):
        nl = rng.choice(["\n", "\r\n"])
        flags = {f"--opt_{i}": rng.choice(["1", "0", "True", "a/b.json", '"q r"']) for i in range(rng.randint(2, 6))}
        style = rng.choice([" ", "="])
        body = "".join(f"    {k}{style}{v} \\{nl}" for k, v in flags.items())
        text = f"#!/bin/bash{nl}set -e{nl}torchrun --nproc_per_node 8 train.py \\{nl}{body}    --seed 1{nl}echo done{nl}"
        for k in flags:
            new, line = shell_edit.set_flag(text, 3, k.replace("_", "-") if rng.random() < 0.3 else k, 500)
            assert _changed_lines(text, new) == [line]
            assert shell_edit.get(new, 3, k) in ("500", '"500"')
            done += 1
        added, line = shell_edit.set_flag(text, 3, "--save_steps", 500)
        a, b = text.split("\n"), added.split("\n")
        assert len(b) == len(a) + 1 and b[:line] == a[:line] and b[line + 1 :] == a[line:]
        removed, _ = shell_edit.remove_flag(added, 3, "--save_steps")
        assert removed == text
    assert done > 200
