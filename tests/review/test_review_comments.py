"""Suggestion rendering, fingerprints, comment bodies, the Changes section, max_inline."""

from __future__ import annotations

import pytest

from checks.model import Evidence, Status
from review.comments import BODY_LIMIT, fingerprint, marker, parse_fingerprint
from review.pipeline import build_pr_review
from review.suggest import rewrite_line

from .review_util import audit_tree, diff_of, result, synthetic

U, N = Status.USED, Status.UNUSED


@pytest.mark.parametrize(("line", "key", "current", "new", "python", "expected"), [
    ("  save_steps: 1   # debug", "save_steps", 1, 500, False, "  save_steps: 500   # debug"),
    ('    "stage": 2,', "zero_optimization.stage", 2, 3, False, '    "stage": 3,'),
    ("bf16: false", "bf16", False, True, False, "bf16: true"),
    ("bf16: False", "bf16", False, True, False, "bf16: True"),
    ("    attn_implementation=\"eager\",", "from_pretrained(attn_implementation=)", "eager", "flash_attention_2", True,
     "    attn_implementation=\"flash_attention_2\","),
    ("    loader = DataLoader(ds, batch_size=8, num_workers=0, pin_memory=True)", "DataLoader(num_workers=)", 0, 8, True,
     "    loader = DataLoader(ds, batch_size=8, num_workers=8, pin_memory=True)"),
    ("args = TrainingArguments(bf16=False)", "TrainingArguments(bf16=)", False, True, True, "args = TrainingArguments(bf16=True)"),
    ("  --bf16 False \\", "--bf16", False, True, False, "  --bf16 True \\"),
    ("  --save_steps=1", "--save_steps", 1, 500, False, "  --save_steps=500"),
    ('parser.add_argument("--num_workers", type=int, default=0)', "--num_workers", 0, 8, True,
     'parser.add_argument("--num_workers", type=int, default=8)'),
    ("    num_workers: int = 0", "Args.num_workers", 0, 4, True, "    num_workers: int = 4"),
    ("- mixed_precision: 'no'", "mixed_precision", "no", "bf16", False, "- mixed_precision: 'bf16'"),
])
def test_rewrite_keeps_indentation_quoting_and_the_rest(line, key, current, new, python, expected):
    assert rewrite_line(line, key, current, new, python=python) == expected


@pytest.mark.parametrize(("line", "key", "current", "new"), [
    ("save_steps: 1", "save_steps", 7, 500),  # the token is not the value the audit found: no guess
    ("save_steps: 1", "logging_steps", 1, 500),  # the key is not on the line
    ("attn: x", "attn", "x", None),  # nothing to restore
    ("attn_implementation: eager", "attn_implementation", "eager", "eager"),  # no change
])
def test_rewrite_refuses_when_unsure(line, key, current, new):
    assert rewrite_line(line, key, current, new) is None


def test_fingerprint_is_stable_and_distinct():
    a = fingerprint("I3", "configs/train.yaml", "save_steps")
    assert a == fingerprint("I3", "configs/train.yaml", "save_steps")
    assert len({a, fingerprint("I4", "configs/train.yaml", "save_steps"), fingerprint("I3", "other.yaml", "save_steps"),
                fingerprint("I3", "configs/train.yaml", "logging_steps")}) == 4
    assert parse_fingerprint("text\n" + marker(a)) == a
    assert parse_fingerprint("no marker here") is None


BASE = {"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nbf16: true\nsave_steps: 500\n"}
HEAD = {"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nbf16: false\nsave_steps: 500\n"}


def test_review_comment_body_and_fingerprint_survive_a_second_push(tmp_path):
    diff = diff_of(tmp_path, BASE, HEAD)
    r1 = build_pr_review(audit_tree(BASE), audit_tree(HEAD), diff_text=diff)
    [c] = r1.comments
    assert (c.path, c.line, c.side) == ("train.yaml", 2, "RIGHT")
    assert "```suggestion\nbf16: true\n```" in c.body
    assert "about 2× activation memory" in c.body
    assert c.body.rstrip().endswith(marker(c.fingerprint))
    # a later push that also edits another line: same finding, same fingerprint
    head2 = dict(HEAD, **{"train.yaml": HEAD["train.yaml"] + "lr: 0.0001\n"})
    (tmp_path / "2").mkdir()
    r2 = build_pr_review(audit_tree(BASE), audit_tree(head2), diff_text=diff_of(tmp_path / "2", BASE, head2))
    assert [x.fingerprint for x in r2.comments] == [c.fingerprint]


def test_summary_section_in_english_and_chinese(tmp_path):
    diff = diff_of(tmp_path, BASE, HEAD)
    en = build_pr_review(audit_tree(BASE), audit_tree(HEAD), diff_text=diff)
    zh = build_pr_review(audit_tree(BASE), audit_tree(HEAD), diff_text=diff, lang="zh")
    assert en.summary_md.startswith("## Changes in this PR")
    assert "| C1 |" in en.summary_md and "`train.yaml:2`" in en.summary_md
    assert "| C Memory optimisation |" in en.summary_md and "−1" in en.summary_md
    assert zh.summary_md.startswith("## 本 PR 的变化") and "显存优化" in zh.summary_md and "激活显存约翻倍" in zh.summary_md
    assert "代价" in zh.comments[0].body
    assert en.category_delta == {"C": -1.0}


def _many(n: int):
    base_res, head_res = [], []
    for i in range(n):
        base_res.append(result(f"F{i + 1}", U, [Evidence("t.yaml", i + 1, f"k{i}: 8", f"k{i}", 8)], {"num_workers": 8 + i}))
        head_res.append(result(f"F{i + 1}", N, [Evidence("t.yaml", i + 1, f"k{i}: 0", f"k{i}", 0)], {"num_workers": i}))
    return synthetic(base_res), synthetic(head_res)


def test_max_inline_moves_the_rest_to_the_check_run(tmp_path):
    base, head = _many(5)
    base_files = {"t.yaml": "".join(f"k{i}: 8\n" for i in range(5))}
    head_files = {"t.yaml": "".join(f"k{i}: 0\n" for i in range(5))}
    review = build_pr_review(base, head, diff_text=diff_of(tmp_path, base_files, head_files), max_inline=2)
    assert len(review.regressions) == 5
    assert len(review.comments) == 2 and len(review.unplaced) == 3
    assert "Not commented inline" in review.summary_md and "over the inline comment limit (2)" in review.summary_md
    assert {c.fingerprint for c in review.comments}.isdisjoint({c.fingerprint for c in review.unplaced})


def test_body_is_capped_for_github():
    base = synthetic([result("I3", U, [Evidence("t.yaml", 1, "save_steps: 500", "save_steps", 500)], {"save_steps": 500})])
    head = synthetic([result("I3", U, [Evidence("t.yaml", 1, "save_steps: 5", "save_steps", 5)], {"save_steps": 5})])
    review = build_pr_review(base, head, files=[{"filename": "t.yaml", "status": "modified", "patch": "@@ -1 +1 @@\n-save_steps: 500\n+save_steps: 5"}])
    [c] = review.comments
    assert len(c.body) <= BODY_LIMIT and "```suggestion\nsave_steps: 500\n```" in c.body


def test_no_diff_means_nothing_inline():
    base = synthetic([result("I3", U, [], {"save_steps": 500})])
    head = synthetic([result("I3", U, [], {"save_steps": 5})])
    review = build_pr_review(base, head)
    assert review.comments == [] and len(review.unplaced) == 1 and review.has_regression
