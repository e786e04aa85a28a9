"""Reusing an audit's results after an edit none of its reads saw (``checks.query_log``), and only then.

A scan with ``--cache`` records every read the audit made of the facts and stores it with the results. A
re-scan evaluates those reads on the changed files alone: when every answer is the same it returns the stored
results without loading the directory's facts; anything else (a changed answer, an added or removed file,
other options, a log that fails its HMAC) audits in full. Either way the report is a cold ``-j1`` scan's.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import checks.engine as engine
import checks.tree_index as tree_index
from accel_audit.cli import main

ROOT = Path(__file__).resolve().parents[2]


class Scanner:
    """Scans one copy of a fixture: cold (no cache) or warm (the facts cache), counting full audits."""

    def __init__(self, repo: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.repo, self.cache, self.full, self.loads = repo, cache, 0, 0
        real = engine.audit_files
        real_parse = engine.parse_files

        def counting(*a: object, **k: object) -> engine.Audit:
            self.full += 1
            return real(*a, **k)  # type: ignore[arg-type]

        def parsing(*a: object, **k: object) -> list[object]:
            self.loads += 1
            return real_parse(*a, **k)  # type: ignore[arg-type]

        monkeypatch.setattr(engine, "audit_files", counting)
        monkeypatch.setattr(engine, "parse_files", parsing)

    def scan(self, *extra: str, fmt: str = "json") -> str:
        out = self.repo.parent / f"report.{fmt}"
        assert main(["scan", str(self.repo), "--format", fmt, "-o", str(out), "--jobs", "1", *extra]) in (0, 1)
        return out.read_text()

    def warm(self, fmt: str = "json") -> tuple[str, bool]:
        """The warm report, and whether it reused the stored results (no full audit)."""
        before = self.full
        report = self.scan("--cache", str(self.cache), fmt=fmt)
        return report, self.full == before

    def cold(self, fmt: str = "json") -> str:
        return self.scan(fmt=fmt)


def _copy(tmp_path: Path, fixture: str, monkeypatch: pytest.MonkeyPatch) -> Scanner:
    monkeypatch.setattr(tree_index, "RACY_NS", 0)  # the files here were written a moment ago
    dst = tmp_path / "repo"
    shutil.copytree(ROOT / "fixtures" / "repos" / fixture, dst)
    s = Scanner(dst, tmp_path / "cache", monkeypatch)
    first, reused = s.warm()  # fills the cache and the query log
    assert not reused and first == s.cold()
    return s


def _edit(path: Path, change: Callable[[str], str]) -> None:
    text = path.read_text()
    new = change(text)
    assert new != text
    path.unlink()  # a new inode, as an editor that saves by rename does
    path.write_text(new)


@pytest.fixture
def ml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scanner:
    return _copy(tmp_path, "minimal_loop", monkeypatch)


@pytest.fixture
def hf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scanner:
    return _copy(tmp_path, "hf_deepspeed", monkeypatch)


@pytest.fixture
def lf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scanner:
    return _copy(tmp_path, "llamafactory_dpo", monkeypatch)


@pytest.mark.parametrize("fixture", ["minimal_loop", "hf_deepspeed", "llamafactory_dpo", "megatron_pretrain"])
def test_no_change_reuses_and_reports_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture: str) -> None:
    s = _copy(tmp_path, fixture, monkeypatch)
    cold = s.cold()
    loads = s.loads
    report, reused = s.warm()
    assert reused and report == cold
    md, reused = s.warm("md")
    assert reused and md == s.cold("md")
    s.loads -= 1  # the cold scan's
    assert s.loads == loads  # the JSON and Markdown reports come from what the audit kept: no facts loaded
    sarif, reused = s.warm("sarif")  # SARIF reads the facts themselves: loaded on demand
    assert reused and sarif == s.cold("sarif")


@pytest.mark.parametrize("change", [
    pytest.param(lambda t: t + "\nLOCAL_EDIT = 1\n", id="appended-constant"),
    pytest.param(lambda t: t + "\n# a comment at the end\n", id="appended-comment"),
    pytest.param(lambda t: t + "\n\ndef _double(x):\n    y = x * 2\n    return y\n", id="function-without-queried-calls"),
])
def test_an_edit_no_read_saw_reuses_the_results(ml: Scanner, change: Callable[[str], str]) -> None:
    _edit(ml.repo / "model.py", change)
    report, reused = ml.warm()
    assert reused
    assert report == ml.cold()
    again, reused = ml.warm()  # the log still describes the edited tree
    assert reused and again == report


@pytest.mark.parametrize(("name", "change"), [
    pytest.param("utils.py", lambda t: t + "\n# a comment at the end\n", id="comment-where-every-record-is-read"),
    pytest.param("README.md", lambda t: t + "\nA paragraph of prose about the project.\n", id="readme-prose"),
    pytest.param("requirements.txt", lambda t: t + "\n# pinned for reproducibility\n", id="requirements-comment"),
])
def test_prose_and_comments_reuse(hf: Scanner, name: str, change: Callable[[str], str]) -> None:
    _edit(hf.repo / name, change)
    report, reused = hf.warm()
    assert reused and report == hf.cold()


def test_a_readme_command_audits_in_full(hf: Scanner) -> None:
    cold_before = hf.cold()
    _edit(hf.repo / "README.md", lambda t: t + "\n```bash\ntorchrun --nnodes 4 --nproc_per_node 8 train.py\n```\n")
    report, reused = hf.warm()
    assert not reused and report == hf.cold()
    assert report != cold_before


def _num_workers(s: Scanner) -> None:
    _edit(s.repo / "train.py", lambda t: t.replace("num_workers=0", "num_workers=4"))


def _shift_lines(s: Scanner) -> None:
    _edit(s.repo / "train.py", lambda t: t.replace("import json\n", "import json\n\n# a line that moves every call below it\n", 1))


def _add_file(s: Scanner) -> None:
    (s.repo / "extra.py").write_text("import torch\n\nloader = torch.utils.data.DataLoader(ds, num_workers=2)\n")


def _remove_file(s: Scanner) -> None:
    (s.repo / "model.py").unlink()


def _rename_file(s: Scanner) -> None:
    (s.repo / "model.py").rename(s.repo / "gpt.py")


def _new_import(s: Scanner) -> None:  # a framework import: the overview and the roles read every file's imports
    _edit(s.repo / "model.py", lambda t: t.replace("import math\n", "import math\nimport deepspeed\n", 1))


def _queried_name(s: Scanner) -> None:  # only the assignments filed under "num_workers" see it: an index read
    _edit(s.repo / "model.py", lambda t: t + "\nnum_workers = 8\n")


def _repo_config(s: Scanner) -> None:
    gh = s.repo / ".github"
    gh.mkdir(exist_ok=True)
    (gh / "accel-audit.yml").write_text("ignore:\n  - F1\n")


@pytest.mark.parametrize("edit", [_num_workers, _shift_lines, _add_file, _remove_file, _rename_file, _new_import, _queried_name,
                                  _repo_config])
def test_an_edit_a_read_saw_audits_in_full(ml: Scanner, edit: Callable[[Scanner], None]) -> None:
    cold_before = ml.cold()
    edit(ml)
    report, reused = ml.warm()
    assert not reused
    assert report == ml.cold()
    again, reused = ml.warm()  # the full audit stored a new log: nothing changed since
    assert reused and again == report
    if edit in (_num_workers, _remove_file, _rename_file, _new_import, _repo_config):
        assert report != cold_before  # reusing the stored results here would have been wrong


def test_an_edited_deepspeed_config_audits_in_full(hf: Scanner) -> None:
    _edit(hf.repo / "configs" / "ds_zero2.json", lambda t: t.replace('"stage": 2', '"stage": 3'))
    report, reused = hf.warm()
    assert not reused and report == hf.cold()


def test_an_edited_yaml_recipe_audits_in_full(lf: Scanner) -> None:
    recipes = sorted((lf.repo / "examples").rglob("*.yaml"))
    assert recipes
    target = next(p for p in recipes if "per_device_train_batch_size" in p.read_text())
    _edit(target, lambda t: t.replace("per_device_train_batch_size:", "per_device_train_batch_size: 64\nx_unused:", 1))
    report, reused = lf.warm()
    assert not reused and report == lf.cold()


def test_a_repo_config_edit_audits_in_full(ml: Scanner) -> None:
    _repo_config(ml)
    ml.warm()
    _edit(ml.repo / ".github" / "accel-audit.yml", lambda t: t.replace("F1", "A1"))
    report, reused = ml.warm()
    assert not reused and report == ml.cold()


def test_a_tampered_log_is_ignored(ml: Scanner) -> None:
    logs = list((ml.cache / "trees").glob("*.qlog"))
    assert len(logs) == 1
    blob = bytearray(logs[0].read_bytes())
    blob[-5] ^= 0x01  # the payload, under the HMAC
    logs[0].write_bytes(bytes(blob))
    report, reused = ml.warm()
    assert not reused and report == ml.cold()


def test_other_options_audit_in_full(ml: Scanner) -> None:
    before = ml.full
    ml.scan("--cache", str(ml.cache), "--hardware", "a100")
    assert ml.full == before + 1


def test_the_recorder_records_lookups_whole_reads_and_file_attributes() -> None:
    from checks.facts import Facts, extract_file
    from checks.query_log import Recorder

    ff = extract_file("train.py", b"import torch\nloader = torch.utils.data.DataLoader(ds, num_workers=2)\nLR = 3e-4\n")
    rec = Recorder()
    facts = rec.watch(Facts([ff]))
    assert facts.for_check("F1").calls("DataLoader")
    assert ("calls_by_short", "DataLoader") in rec.deps and ("*", "calls") not in rec.deps
    facts.all_calls()
    assert ("*", "calls") in rec.deps
    assert facts.files["train.py"].assigns
    assert ("f", "train.py", "assigns") in rec.deps
    assert rec.unsound is None
    facts._s.get("not-a-key-of-the-facts")  # absent: nothing read
    assert rec.unsound is None
    facts._s["calls"] = []  # a write to what was read: the recording is not trusted
    assert rec.unsound is not None


def test_an_unsound_recording_stores_no_log(ml: Scanner, monkeypatch: pytest.MonkeyPatch) -> None:
    import checks.query_log as query_log

    real = query_log.Recorder.watch

    def spoil(self: query_log.Recorder, facts: engine.Facts) -> engine.Facts:
        self.unsound = "test"
        return real(self, facts)

    for log in (ml.cache / "trees").glob("*.qlog"):
        log.unlink()
    monkeypatch.setattr(query_log.Recorder, "watch", spoil)
    ml.warm()
    assert not list((ml.cache / "trees").glob("*.qlog"))
    report, reused = ml.warm()
    assert not reused and report == ml.cold()


def test_every_key_the_facts_are_built_with_is_known_to_the_recorder() -> None:
    """A new index of the facts must be taught to the recorder (``checks.query_log.INDEX_KIND``, ``KEYSETS`` or ``WHOLE``): a read of
    an unknown one makes the recording unusable, and every re-scan would then audit in full."""
    from checks.facts import Facts, extract_file
    from checks.query_log import INDEX_KIND, KEYSETS, WHOLE

    ff = extract_file("train.py", b"import torch\nloader = torch.utils.data.DataLoader(ds, num_workers=2)\n")
    assert set(Facts([ff])._s) <= {"files"} | set(INDEX_KIND) | set(KEYSETS) | WHOLE
