"""GitHub's 65,535-character limit: reports fold, never cut inside a table or a code block."""

from __future__ import annotations

import re

import pytest

from checks.model import CATEGORY_SIZES, Evidence, Priority, Project, Status
from reports.checkrun import check_run_output
from reports.fold import GITHUB_TEXT_LIMIT, blocks, cut_blocks
from reports.markdown import LEVELS, render_markdown

from .helpers import fake_check, make_audit, result

ALL_IDS = [f"{cat}{i}" for cat, n in CATEGORY_SIZES.items() for i in range(1, n + 1)]
CHECKS = {cid: fake_check(cid, priority=(Priority.HIGH, Priority.MEDIUM, Priority.LOW)[i % 3],
                          snippets={"python": f"# {cid}\n" + "x = 1\n" * 40}) for i, cid in enumerate(ALL_IDS)}
for _c in CHECKS.values():  # long advice in both languages (the Chinese report words details itself, from fix_zh)
    type(_c).fix_zh = "修复建议" * 150


def huge_audit():
    """63 checks, each with 400 evidence locations and long snippets, every other one missing."""
    results = []
    for i, cid in enumerate(ALL_IDS):
        ev = [Evidence(f"src/module_{j}/very/long/path/to/train_{cid}.py", j + 1, f"setting_{cid} = " + "x" * 150) for j in range(400)]
        status = (Status.USED, Status.UNUSED, Status.PARTIAL)[i % 3]
        prio = CHECKS[cid].priority if status != Status.USED else None
        findings = ev[:200] if cid in ("I3", "I4", "I5") else []
        results.append(result(cid, status, prio, ev, findings=findings, detail="detail " * 60))
    project = Project(frameworks=["deepspeed", "transformers"], model_type="LLM", estimated_params="7B", params_billions=7.0,
                      num_gpus=8, bottleneck_reasons=["reason " * 80] * 12)
    return make_audit(results, project, {"train.py": "import torch\nloss.backward()\n"})


def table_rows(md: str) -> list[str]:
    return [line for line in md.split("\n") if line.startswith("|")]


def assert_whole(md: str) -> None:
    rows = table_rows(md)
    assert all(r.endswith("|") for r in rows), "a table row was cut"
    assert md.count("```") % 2 == 0, "a code block was cut"
    assert md.count("<details>") == md.count("</details>")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_huge_report_folds_under_the_limit(lang, monkeypatch):
    import reports.advice
    import reports.markdown

    audit = huge_audit()
    plan = reports.advice.build_plan(audit, CHECKS)
    unfolded = reports.markdown._render(audit, plan, lang, LEVELS[0], reports.markdown.ALL_SECTIONS)
    assert len(unfolded) > GITHUB_TEXT_LIMIT  # the case really needs folding
    md = render_markdown(audit, lang=lang, plan=plan)
    assert len(md) <= GITHUB_TEXT_LIMIT
    assert_whole(md)
    rows = table_rows(md)
    assert len(rows) == 2 + 10  # header, separator, every category
    assert ("65,535" in md) and ("JSON" in md)  # the reader is told what was folded


def test_check_run_output_fits_with_a_huge_changes_section(monkeypatch):
    import reports.advice

    audit = huge_audit()
    real = reports.advice.build_plan
    monkeypatch.setattr(reports.checkrun, "build_plan", lambda a: real(a, CHECKS))
    changes = "## Changes in this PR\n\n| check | before | after |\n|---|---|---|\n" + "".join(f"| C{i} | used | unused |\n" for i in range(5000))
    out = check_run_output(audit, lang="en", changes_md=changes)
    assert len(out["summary"]) <= GITHUB_TEXT_LIMIT and len(out["text"]) <= GITHUB_TEXT_LIMIT and len(out["title"]) <= 255
    assert_whole(out["summary"])
    assert_whole(out["text"])
    assert "## Audit summary" in out["summary"]  # the report still follows the changes
    # the changes table does not fit whole, so it is folded as a block (never cut mid-table), with a note
    assert out["summary"].startswith("## Changes in this PR\n\n_The rest of this report is folded")
    assert len(table_rows(out["summary"])) == 12

    short = "## Changes in this PR\n\n| check | before | after |\n|---|---|---|\n| C1 | used | unused |\n"
    out = check_run_output(audit, lang="zh", changes_md=short)
    assert out["summary"].startswith(short) and "## 审计总览" in out["summary"]


def test_small_report_is_not_folded():
    audit = make_audit([result("C1", Status.UNUSED, Priority.HIGH, [Evidence("a.yaml", 1, "bf16: false")])])
    md = render_markdown(audit, plan=reports_plan(audit))
    assert "65,535" not in md
    assert "`a.yaml:1`" in md


def reports_plan(audit):
    from reports.advice import build_plan

    return build_plan(audit, {"C1": fake_check("C1", priority=Priority.HIGH)})


def test_cut_blocks_keeps_whole_blocks():
    md = "# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nx = 1\n\ny = 2\n```\n\n<details><summary>s</summary>\n\n- one\n\n</details>\n\ntail " + "z" * 50
    assert [b.split("\n")[0] for b in blocks(md)] == ["# T", "| a | b |", "```python", "<details><summary>s</summary>", "tail " + "z" * 50]
    out = cut_blocks(md, 60, "_folded_")
    assert len(out) <= 60 and out.endswith("_folded_\n") and "| 1 | 2 |" in out and "```" not in out
    assert cut_blocks(md, 10_000, "_folded_") == md


def test_inline_code_survives_backticks():
    audit = make_audit([result("C1", Status.UNUSED, Priority.HIGH, [Evidence("a|b.py", 3, "x = `cmd` | y")])])
    md = render_markdown(audit, plan=reports_plan(audit))
    assert "`` x = `cmd` | y ``" in md
    assert re.search(r"^\| C \|", md, re.M)
