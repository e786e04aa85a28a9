"""Every snippet of every registered check parses, as declared and after each rewrite the report applies."""

from __future__ import annotations

import ast
import json
import subprocess

import pytest
import yaml

from checks.base import all_checks
from reports.applicability import gpu
from reports.snippets import LANG, RepoStyle, _hf_yaml_to, _translate_yaml, hardware_rewrite

CHECKS = all_checks()
CASES = [(c, target, code) for c in CHECKS for target, code in c.snippets.items()]


def parse(lang: str, code: str) -> None:
    if lang == "yaml":
        doc = yaml.safe_load(code)
        assert isinstance(doc, dict), "a config snippet is a mapping of keys"
    elif lang == "json":
        assert isinstance(json.loads(code), dict)
    elif lang == "python":
        ast.parse(code)
    elif lang == "bash":
        proc = subprocess.run(["bash", "-n"], input=code, text=True, capture_output=True, check=False)
        assert proc.returncode == 0, proc.stderr
    else:
        raise AssertionError(f"unknown snippet language {lang!r}")


@pytest.mark.parametrize(("check", "target", "code"), CASES, ids=[f"{c.id}-{t}" for c, t, _ in CASES])
def test_declared_snippet_parses(check, target, code):
    assert target in LANG, f"{check.id}: unknown snippet target {target!r}"
    parse(LANG[target], code)


@pytest.mark.parametrize("hw", ["v100", "t4", "a100", "h100"])
@pytest.mark.parametrize(("check", "target", "code"), CASES, ids=[f"{c.id}-{t}" for c, t, _ in CASES])
def test_snippet_parses_after_hardware_rewrite(check, target, code, hw):
    out = hardware_rewrite(check.id, target, code, gpu(hw))
    parse(LANG[target], out)
    if not gpu(hw).bf16:
        assert "bf16" not in out.lower() and "bfloat16" not in out


@pytest.mark.parametrize("dialect", ["axolotl", "llamafactory"])
@pytest.mark.parametrize(("check", "code"), [(c, s) for c, t, s in CASES if t == "hf-yaml"], ids=[c.id for c, t, _ in CASES if t == "hf-yaml"])
def test_hf_yaml_in_every_form_parses(check, code, dialect):
    parse("yaml", _translate_yaml(code, dialect))
    style = RepoStyle(where={"hf-args": "train.py:3", "hf-flags": "run.sh:1"})
    for target in ("hf-args", "hf-flags"):
        derived = _hf_yaml_to(target, code, style)
        if derived is not None:
            parse(LANG[target], derived)
