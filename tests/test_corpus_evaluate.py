"""The labelled corpus: every label file is well-formed and cites evidence; the scoring arithmetic is right.

The scan itself needs the downloaded releases (``python -m corpus.evaluate``); no network here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checks.base import all_checks
from corpus.evaluate import LabelError, Tally, load_all, load_project, report, scan_statuses

CITES = re.compile(r"[\w./-]+\.(py|ya?ml|json|qmd|md|sh|toml):\d+|:\d+ ")


def test_every_label_file_loads_names_real_checks_and_cites_the_line_of_a_use():
    ids = {c.id for c in all_checks()}
    projects = load_all()
    assert len(projects) >= 5
    for p in projects:
        assert "==" in p.spec
        assert p.labels
        for check, lab in p.labels.items():
            assert check in ids, f"{p.name}: unknown check {check}"
            if lab.status in ("used", "partial"):  # a practice seen is seen somewhere; an absence cites what was searched
                # ... or names the framework default that is in effect (HF save_steps 500)
                assert CITES.search(lab.why) or "default" in lab.why, f"{p.name} {check}: the reason cites no path:line: {lab.why}"


def test_malformed_label_file_is_a_clear_error(tmp_path: Path):
    bad = tmp_path / "x.yaml"
    bad.write_text("spec: x==1\nroot: x\nlabels:\n  C1: {status: maybe, why: guess}\n")
    with pytest.raises(LabelError, match="C1: needs status"):
        load_project(bad)
    bad.write_text("spec: x==1\nlabels: {}\n")
    with pytest.raises(LabelError, match="missing 'root'"):
        load_project(bad)
    with pytest.raises(LabelError, match="no labels for: nope"):
        load_all(["nope"])


def test_tally_precision_recall_of_findings():
    t = Tally()
    for label, got in [("unused", "unused"), ("partial", "unused"), ("used", "unused"), ("unused", "used"), ("used", "used"), ("n/a", "n/a")]:
        t.add(label, got)
    assert (t.n, t.agree, t.tp, t.fp, t.fn) == (6, 3, 2, 1, 1)
    assert t.precision == pytest.approx(2 / 3) and t.recall == pytest.approx(2 / 3)
    assert Tally().precision is None


def test_report_lists_disagreements_with_the_reason():
    projects = load_all(["litgpt"])
    out = report({"litgpt": {"D2": ("used", "unused")}}, projects, show_misses=True)
    assert "D2" in out and "used -> unused" in out and "torch.compile(model)" in out


def test_scan_statuses_reads_a_directory(tmp_path: Path):
    (tmp_path / "train.py").write_text("import torch\nmodel = torch.compile(model)\n")
    assert scan_statuses(tmp_path)["D2"] == "used"


def test_scan_reports_the_step_zero_verdict(tmp_path: Path):
    from corpus.evaluate import scan

    (tmp_path / "train.py").write_text("import torch\nmodel = torch.compile(model)\n")
    statuses, verdict, reasons = scan(tmp_path)
    assert statuses["D2"] == "used" and isinstance(verdict, str) and verdict and isinstance(reasons, list)


def test_cli_reports_a_bad_label_file_with_exit_2(tmp_path: Path, monkeypatch, capsys):
    import corpus.evaluate as ev

    (tmp_path / "bad.yaml").write_text("spec: x==1\nroot: x\nlabels:\n  C1: {status: maybe, why: guess}\n")
    monkeypatch.setattr(ev, "LABELS_DIR", tmp_path)
    assert ev.main(["--dest", str(tmp_path)]) == 2
    assert "C1: needs status" in capsys.readouterr().err
