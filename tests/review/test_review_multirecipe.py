"""A PR on a repository shaped like LLaMA-Factory + Megatron-LM: dozens of recipes, shared defaults, a launcher
directory with backslash-continued commands, a new recipe. Every expected inline comment is asserted with its
path, line, side, check, base value and head value (fixtures/review/multirecipe/{base,head})."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accel_audit.cli import main

from .review_util import make_repo

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "review" / "multirecipe"


def _tree(side: str) -> dict[str, bytes]:
    root = FIX / side
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> dict:
    repo = make_repo(tmp_path_factory.mktemp("mr"), _tree("base"), _tree("head"))
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["pr", "--repo", str(repo), "--base", "main", "--head", "pr", "--format", "json"])
    assert rc == 1  # regressions: the CLI fails like the gate
    return json.loads(buf.getvalue())


EXPECTED = {
    # (path, line, side, check): (base value, head value)
    ("examples/train_lora/llama3_lora_sft.yaml", 23, "RIGHT", "I3"): (500, 1),
    ("examples/train_lora/llama3_lora_sft.yaml", 34, "LEFT", "C1"): ("bf16", "fp32"),
    ("examples/train_lora/llama3_lora_sft.yaml", 18, "RIGHT", "F1"): (4, 0),
    ("examples/train_lora/qwen3_4b_lora_sft.yaml", 22, "RIGHT", "I4"): (10, 1),  # new recipe vs the prevailing value
    ("scripts/megatron/pretrain_llama3_8b.sh", 26, "LEFT", "C1"): ("bf16", "fp32"),  # --bf16 removed from a continued command
    ("scripts/megatron/pretrain_llama3_8b.sh", 28, "RIGHT", "F1"): (2, 0),
    ("scripts/megatron/pretrain_llama3_8b.sh", 30, "RIGHT", "I3"): (1000, 1),
    ("configs/base/_defaults.yaml", 4, "RIGHT", "C3"): (True, False),  # shared defaults of 6 sweep recipes
    ("examples/train_full/mistral_full_sft.yaml", 18, "RIGHT", "I4"): (10, 1),  # suppressed by the PR itself
    ("examples/train_full/qwen2_full_sft.yaml", 23, "RIGHT", "C5"): (2, 4),  # effective batch moves
}


def test_every_expected_inline_comment_with_its_values(out: dict) -> None:
    got = {(r["path"], r["line"], r["side"], r["check"]): (r["before"], r["after"]) for r in out["regressions"]}
    assert got == EXPECTED
    comments = {(c["path"], c["line"], c["side"]) for c in out["review"]["comments"]}
    assert comments == {k[:3] for k in EXPECTED}


def test_flags_map_to_their_lines_and_suggestions_restore_the_base_value(out: dict) -> None:
    bodies = {(c["path"], c["line"], c["side"]): c["body"] for c in out["review"]["comments"]}
    assert "```suggestion\n    --num-workers 2 \\\n```" in bodies[("scripts/megatron/pretrain_llama3_8b.sh", 28, "RIGHT")]
    assert "```suggestion\n    --save-interval 1000 \\\n```" in bodies[("scripts/megatron/pretrain_llama3_8b.sh", 30, "RIGHT")]
    assert "```bash\n    --bf16 \\\n```" in bodies[("scripts/megatron/pretrain_llama3_8b.sh", 26, "LEFT")]
    assert "```suggestion\nsave_steps: 500\n```" in bodies[("examples/train_lora/llama3_lora_sft.yaml", 23, "RIGHT")]
    assert "```suggestion\nlogging_steps: 10\n```" in bodies[("examples/train_lora/qwen3_4b_lora_sft.yaml", 22, "RIGHT")]


def test_costs_come_from_the_model_this_site_trains(out: dict) -> None:
    why = {(r["path"], r["check"]): r["why"] for r in out["regressions"]}
    lora = why[("examples/train_lora/llama3_lora_sft.yaml", "I3")]
    assert "500× more checkpoint writes" in lora and "LoRA rank 8 adapters" in lora and "GB" not in lora
    meg = why[("scripts/megatron/pretrain_llama3_8b.sh", "I3")]
    # 32 layers, hidden 4096, SwiGLU FFN 14336, vocabulary 128256: 8.31B parameters x 14 bytes
    assert "1000× more checkpoint writes" in meg and "about 116 GB" in meg and "8.31B-parameter" in meg


def test_pr_added_suppression_is_listed_and_still_counted(out: dict) -> None:
    [s] = out["suppressed_by_pr"]
    assert (s["path"], s["line"], s["check"]) == ("examples/train_full/mistral_full_sft.yaml", 18, "I4")
    assert out["has_regression"] is True
    assert "Suppressed by this PR" in out["check_run"]["summary"]


def test_shared_defaults_change_names_every_inheriting_recipe(out: dict) -> None:
    [gc] = [r for r in out["regressions"] if r["check"] == "C3"]
    assert len(gc["sites"]) == 7 and "inherited by 6 other site(s)" in gc["what"]
    assert gc["base_path"] == "configs/base/_defaults.yaml" and gc["base_line"] == 4 and gc["base_raw"] is True


def test_no_fail_on_regression_reports_only(tmp_path) -> None:
    repo = make_repo(tmp_path, _tree("base"), _tree("head"))
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["pr", "--repo", str(repo), "--base", "main", "--head", "pr", "--no-fail-on-regression"]) == 0
