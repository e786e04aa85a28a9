"""Class spans in the facts: which class a line sits in (``class_at``), read from the ``class`` statements' own spans rather
than from the last ``class X(Base):`` line above it (which named the wrong class for a class with no imported base, a line
after a class at module level, and a subclass of a class of the same file)."""

from __future__ import annotations

import json

from checks.engine import audit_files
from checks.facts.extract import extract_file as extract
from checks.rules._helpers import class_at

_MODULE = (
    "from dataclasses import dataclass\n\n"  # 1-2
    "from transformers import Trainer\n\n\n"  # 3-5
    "class MyTrainer(Trainer):\n"  # 6
    "    def compute_loss(self, model, inputs):\n"  # 7
    "        return model(**inputs).loss.item()\n\n\n"  # 8-10
    "class CausalTrainer(MyTrainer):\n"  # 11
    "    def compute_loss(self, model, inputs):\n"  # 12
    "        return model(**inputs).loss\n\n"  # 13-14
    "    class Inner:\n"  # 15
    "        x = 1\n\n"  # 16-17
    "    def after_inner(self):\n"  # 18
    "        return 2\n\n\n"  # 19-21
    "@dataclass\n"  # 22
    "class PackingConfig:\n"  # 23
    "    size: int = 0\n\n"  # 24-25
    "    def build(self):\n"  # 26
    "        return pack(self.size)\n\n\n"  # 27-29
    "def module_function():\n"  # 30
    "    return 3\n"  # 31
)


def test_the_facts_record_each_class_statement_with_its_span_and_bases():
    ff = extract("pkg/trainer.py", _MODULE.encode())
    spans = {k.name: (k.line, k.end, k.bases) for k in ff.classes}
    assert spans == {
        "MyTrainer": (6, 8, ("transformers.Trainer",)),
        "CausalTrainer": (11, 19, ("MyTrainer",)),
        "Inner": (15, 16, ()),
        "PackingConfig": (23, 27, ()),
    }


def test_a_line_belongs_to_the_innermost_class_that_holds_it_and_to_none_outside_every_class():
    a = audit_files([("pkg/trainer.py", _MODULE.encode())])
    at = {line: class_at(a.facts, "pkg/trainer.py", line) for line in (8, 13, 16, 19, 27, 31)}
    # the old reading gave "MyTrainer" for 13 and 19 (CausalTrainer's base is no import) and for 27 and 31 (no class
    # statement with an imported base after line 6)
    assert at == {8: "MyTrainer", 13: "CausalTrainer", 16: "Inner", 19: "CausalTrainer", 27: "PackingConfig", 31: None}


def test_a_notebook_class_span_is_moved_to_the_notebook_lines_with_its_statement():
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# notes\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1,
         "source": ["class Config:\n", "    size = 0\n", "\n", "    def build(self, size=None):\n", "        return size\n"]},
    ]
    nb = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    ff = extract("notes.ipynb", nb.encode())
    (k,) = ff.classes
    assert k.name == "Config" and k.end - k.line == 4  # the whole body, mapped as its first line is
    (p,) = ff.params  # a method's parameter default, with the function's span moved the same way
    assert p.name == "size" and (p.start, p.end) == (k.line + 3, k.end) and p.line == p.start
