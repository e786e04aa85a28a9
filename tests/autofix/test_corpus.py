"""Every applicable edit over real configs from public sdists (tests/autofix/corpus, see SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from autofix import json_edit, yaml_edit
from autofix.model import EditRefused

CORPUS = Path(__file__).parent / "corpus"
FILES = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".json", ".yaml", ".yml"))


def _scalars(node: object, prefix: str = "") -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if not isinstance(k, str) or "." in k:
                continue
            path = f"{prefix}.{k}" if prefix else k
            if isinstance(v, (dict, list)):
                out += _scalars(v, path) if isinstance(v, dict) else []
            else:
                out.append((path, v))
    return out


def _get(node: object, path: str) -> object:
    for p in path.split("."):
        node = node[p]  # type: ignore[index]
    return node


def _new(v: object) -> object:
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + 500
    return "auto" if v != "auto" else "bf16-auto"


def test_corpus_is_there() -> None:
    assert len(FILES) >= 12


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CORPUS)) for p in FILES])
def test_every_scalar_edit_round_trips(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    is_json = path.suffix == ".json"
    data = json.loads(text) if is_json else yaml.safe_load(text)
    applied = refused = 0
    for key, cur in _scalars(data):
        want = _new(cur)
        try:
            new, line = (json_edit.set_value(text, key, want) if is_json else yaml_edit.set_value(text, key, want))
        except EditRefused:
            refused += 1
            continue
        a, b = text.split("\n"), new.split("\n")
        assert len(a) == len(b) and [i for i in range(len(a)) if a[i] != b[i]] == [line], key
        after = json.loads(new) if is_json else yaml.safe_load(new)
        assert _get(after, key) == want
        # nothing else changed in the data either
        for other, v in _scalars(data):
            if other != key:
                assert _get(after, other) == v
        applied += 1
    assert applied > 0 and applied >= refused
    # a key added at the top level, next to its siblings
    if isinstance(data, dict) and any(not isinstance(v, (dict, list)) for v in data.values()):  # else: refused, no one-line sibling
        added, _at = (json_edit.add_key(text, "", "accel_probe", True) if is_json else yaml_edit.add_key(text, "", "accel_probe", True))
        loaded = json.loads(added) if is_json else yaml.safe_load(added)
        assert loaded.pop("accel_probe") is True and loaded == data
        assert len(added.split("\n")) == len(text.split("\n")) + 1
