"""Reads of the calls narrowed to what a check uses, so that an edit of another call leaves it clean.

``Facts.calls_selected`` (the calls that pass a named test of their own fields: C3's registry tables, the calls with two
or more arguments, a string and a reference among them) is recorded as that selection of each file's calls
(``("#", selection)``); ``Facts.calls_prefixed`` (calls by name prefix: a module's calls into another) goes through the
distinct call names and the calls filed under their last segments. Both give what ``records("calls")`` filtered gave.
Every report here is a cold ``-j1`` scan's of the edited tree; each test names the mutation it catches.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checks.facts import Facts, extract_file
from checks.query_log import Recorder, attributes, dirty_reads, file_digests, share_hashes

from .test_engine_check_reuse import Scanner, _lr
from .test_registry_components import FILES


def _status(report: str, check_id: str) -> str:
    return next(c["status"] for c in json.loads(report)["checks"] if c["id"] == check_id)


@pytest.fixture
def s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scanner:
    """minimal_loop with modalities' registry: activation checkpointing only in a component no config selects (C3
    reads the registry tables and, for the wrapper no call names, every call into its module)."""
    s = Scanner(tmp_path, monkeypatch)
    for rel, text in FILES.items():
        (s.repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (s.repo / rel).write_text(text)
    first, reused = s.warm()
    assert reused == set() and first == s.cold()
    return s


def test_an_edit_of_another_call_reuses_the_registry_check(s: Scanner) -> None:
    """The learning rate changed in train.py (a call with no registry shape): C3 is reused. Catches: the registry tables
    or the calls into a module read as every call (C3 would run)."""
    s.edit("train.py", _lr)
    report, reused = s.warm()
    assert reused is not None and "C3" in reused and "G1" not in reused
    assert report == s.cold()


def test_an_edit_of_a_registry_entry_reruns_it(s: Scanner) -> None:
    """The activation-checkpointing entry leaves the registry: C3 runs and its status changes. Catches: the selection's
    shares not recorded or not compared (C3 would be reused, still "only a registered component")."""
    before = s.cold()
    s.edit("pkg/registry/components.py", lambda t: t.replace(
        "    ComponentEntity(\n        \"model\",\n        \"activation_checkpointed\",\n"
        "        maybe_model_list(ModelFactory.get_activation_checkpointed_model_),\n"
        "        ActivationCheckpointedModelConfig,\n    ),\n", ""))
    report, reused = s.warm()
    assert reused is not None and "C3" not in reused
    cold = s.cold()
    assert report == cold and _status(cold, "C3") != _status(before, "C3")


def test_a_selection_is_dirty_only_when_its_calls_change() -> None:
    """A file's share of a selection is its calls that pass, in order: changing a call that does not pass leaves it
    clean, changing one that does makes it dirty. Catches: a selection hashed as the whole call list, or not at all."""
    src = 'reg("a", fa, 1)\nreg("b", fb, 2)\nopt(lr=1)\n'
    ff = extract_file("r.py", src.encode())
    rec = Recorder()
    facts = rec.watch(Facts([ff]))
    rec.begin("X")
    assert [c.args[0] for c in facts.for_check("X").calls_selected("registry_shape")] == ["a", "b"]
    deps = rec.per["X"]
    assert ("#", "registry_shape") in deps and ("*", "calls") not in deps
    wholes, attrs = attributes(deps)
    log = {"by_key": {"k": file_digests(ff, wholes | attrs.get("r.py", frozenset()))}, "keys": {"r.py": "k"},
           "hashes": share_hashes(deps, [facts])}
    other = extract_file("r.py", src.replace("lr=1", "lr=2").encode())
    assert dirty_reads(log, {"r.py": other}, deps) == set()
    entry = extract_file("r.py", src.replace('"b"', '"c"').encode())
    assert ("#", "registry_shape") in dirty_reads(log, {"r.py": entry}, deps)


def test_calls_by_prefix_are_every_call_whose_name_starts_so() -> None:
    """``calls_prefixed`` is ``records("calls")`` filtered by name prefix, in the same order, across files and pools."""
    files = [extract_file("a.py", b"import pkg.m\nimport pkg.n\npkg.m.f(1)\npkg.n.g(2)\nx.y()\npkg.m.g(3)\n"),
             extract_file("b.py", b"import pkg.n\npkg.n.f(4)\npkg.nn.h(5)\n")]
    facts = Facts(files)
    for prefixes in (("pkg.m.",), ("pkg.n.", "pkg.m."), ("pkg.n",), ("q.",)):
        assert facts.calls_prefixed(prefixes) == [c for c in facts.records("calls") if c.name.startswith(prefixes)]


def test_an_edit_of_a_keyword_reuses_the_checks_that_read_guards_and_function_names(tmp_path: Path,
                                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The learning rate changed in minimal_loop's train.py: G1 (the schedule) runs again, but F1 (whose loaders skip a
    library module's main-block self-demo), G4 and G5 (which read which files define ``freeze``) and J2 (which reads which
    files define a function) are reused. Catches: those reads made as a read of every call (each would run again on any
    edit of any call)."""
    s = Scanner(tmp_path, monkeypatch)
    first, reused = s.warm()
    assert reused == set() and first == s.cold()
    s.edit("train.py", _lr)
    report, reused = s.warm()
    assert reused is not None and {"F1", "G4", "G5", "J2"} <= reused and "G1" not in reused
    assert report == s.cold()


@pytest.mark.parametrize(("read", "selection", "src", "inside", "outside"), [
    ("_defining", "#call_funcs", "def train():\n    opt(lr=1)\n\ndef freeze():\n    p.requires_grad_(False)\n",
     ("def freeze():", "def unfreeze():"), ("lr=1", "lr=2")),
    ("_library_demo_lines", "#main_block", "import pkg.m\nopt(lr=1)\nif __name__ == '__main__':\n    demo(n=1)\n",
     ("demo(n=1)", "demo(n=2)"), ("lr=1", "lr=2")),
    ("_epoch_modulo_names", "#modulo_guard", "for epoch in r:\n    opt(lr=1)\n    if epoch % args.save_every == 0:\n        save(m)\n",
     ("args.save_every", "args.keep_every"), ("lr=1", "lr=2")),
])
def test_guard_and_function_reads_are_their_selection_of_the_calls(read: str, selection: str, src: str,
                                                                  inside: tuple[str, str], outside: tuple[str, str]) -> None:
    """The files that define a function (J2, G4/G5), the calls of a module's main block (the overview's and the loaders'
    library self-demos) and the guards that take a counter modulo something (I3/I4) are read as those selections of each
    file's calls: an edit of another call leaves them clean, one of a call they read makes them dirty. Catches: any of
    them read as every call, or its selection not hashed."""
    from checks.project import _library_demo_lines
    from checks.rules.i_infra import _epoch_modulo_names

    ff = extract_file("m.py", src.encode())
    rec = Recorder()
    facts = rec.watch(Facts([ff]))
    rec.begin("X")
    view = facts.for_check("X")
    {"_defining": lambda: view._defining("freeze"), "_library_demo_lines": lambda: _library_demo_lines(view),
     "_epoch_modulo_names": lambda: _epoch_modulo_names(view)}[read]()
    deps = rec.per["X"] | set().union(*rec.memo_deps.values())
    assert ("*", "calls") not in deps and ("#", selection[1:]) in deps
    wholes, attrs = attributes(deps)
    assert selection in wholes
    log = {"by_key": {"k": file_digests(ff, wholes | attrs.get("m.py", frozenset()))}, "keys": {"m.py": "k"},
           "hashes": share_hashes(deps, [facts])}
    assert dirty_reads(log, {"m.py": extract_file("m.py", src.replace(*outside).encode())}, deps) == set()
    assert ("#", selection[1:]) in dirty_reads(log, {"m.py": extract_file("m.py", src.replace(*inside).encode())}, deps)
