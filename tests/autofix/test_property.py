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
