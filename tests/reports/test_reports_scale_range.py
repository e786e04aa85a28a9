"""The overview's scale when recipes give different sizes and no run is decided (Megatron-LM: 295M-175.2B across its
launch scripts): the range and where its two ends are, not "unknown" beside tokenizer and side-encoder names."""

from __future__ import annotations

from checks.model import Project
from reports.markdown import render_markdown

from .helpers import make_audit


def _project() -> Project:
    p = Project(frameworks=["megatron"], model_names=["bert-large-cased", "openai/whisper-base"])
    p.notes["params_range"] = "295M-175.2B"
    p.notes["params_range_sources"] = ["examples/moe/train.sh:133", "examples/gpt3/train_gpt3_175b.sh:30"]
    return p


def test_a_range_of_recipe_sizes_is_shown_with_its_ends():
    md = render_markdown(make_audit([], _project()))
    line = next(x for x in md.splitlines() if x.startswith("- Estimated scale"))
    assert "295M-175.2B across its recipes (`examples/moe/train.sh:133`, `examples/gpt3/train_gpt3_175b.sh:30`)" in line, line
    assert "bert-large-cased" not in line


def test_the_chinese_overview_says_the_same():
    md = render_markdown(make_audit([], _project()), lang="zh")
    assert "各配方 295M-175.2B" in md


def test_a_decided_size_keeps_the_model_names():
    p = _project()
    p.estimated_params = "~7B"
    line = next(x for x in render_markdown(make_audit([], p)).splitlines() if x.startswith("- Estimated scale"))
    assert line.startswith("- Estimated scale: ~7B · bert-large-cased"), line
