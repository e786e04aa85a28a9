"""Per-site comparison on small real-shaped trees: Megatron arrays, call sites, Python config modules, suppressions."""

from __future__ import annotations

from review.pipeline import build_pr_review
from review.sites import model_of, sites_of

from .review_util import audit_tree, diff_of

MEGATRON = (
    "#!/bin/bash\n"                                   # 1
    "TRAINING_ARGS=(\n"                               # 2
    "    --micro-batch-size 1\n"                      # 3
    "    --global-batch-size 1536\n"                  # 4
    "    --fp16\n"                                    # 5
    ")\n"                                             # 6
    "MODEL_ARGS=(\n"                                  # 7
    "    --num-layers 96\n"                           # 8
    "    --hidden-size 12288\n"                       # 9
    ")\n"                                             # 10
    "DATA_ARGS=(\n"                                   # 11
    "    --data-path $DATA_PATH\n"                    # 12
    "    --split 949,50,1\n"                          # 13
    ")\n"                                             # 14
    "LOG_ARGS=(\n"                                    # 15
    "    --save-interval 10000\n"                     # 16
    ")\n"                                             # 17
    "torchrun --nproc_per_node 8 pretrain_gpt.py ${TRAINING_ARGS[@]} ${MODEL_ARGS[@]} ${DATA_ARGS[@]} ${LOG_ARGS[@]}\n"
)


def _review(tmp_path, base: dict[str, str], head: dict[str, str]):
    diff = diff_of(tmp_path, base, head)
    return build_pr_review(audit_tree(base), audit_tree(head), diff_text=diff)


def _got(review) -> dict[tuple[str, int, str, str], tuple]:
    return {(c.path, c.line, c.side, c.check): (c.before, c.after) for c in review.regressions if c.site}


def test_megatron_flag_arrays_each_flag_on_its_line(tmp_path) -> None:
    head = MEGATRON.replace("    --fp16\n", "").replace("    --split 949,50,1\n", "    --split 949,50,1\n    --num-workers 0\n")
    head = head.replace("--save-interval 10000", "--save-interval 1")
    review = _review(tmp_path, {"examples/gpt3/train.sh": MEGATRON}, {"examples/gpt3/train.sh": head})
    assert _got(review) == {
        ("examples/gpt3/train.sh", 5, "LEFT", "C1"): ("fp16", "fp32"),
        ("examples/gpt3/train.sh", 13, "RIGHT", "F1"): (2, 0),  # added flag vs Megatron's default of 2 workers
        ("examples/gpt3/train.sh", 16, "RIGHT", "I3"): (10000, 1),
    }
    by_line = {(c.line, c.side): c.body for c in review.comments}
    assert "```suggestion\n    --num-workers 2\n```" in by_line[(13, "RIGHT")]
    # 96 layers x hidden 12288 (GPT-3 175B): the size comes from the site's own flags
    i3 = next(c for c in review.regressions if c.check == "I3")
    assert "175B-parameter" in i3.why and "2444 GB" in i3.why


def test_call_keyword_change_and_expression_is_not_a_removal(tmp_path) -> None:
    base = {"train.py": (
        "from torch.utils.data import DataLoader\n\n\n"
        "def main(ds):\n"
        "    loader = DataLoader(\n"
        "        ds,\n"
        "        batch_size=8,\n"
        "        num_workers=8,\n"
        "        pin_memory=True,\n"
        "    )\n"
        "    return loader\n"
    )}
    head = {"train.py": base["train.py"].replace("num_workers=8", "num_workers=0").replace("pin_memory=True", "pin_memory=cuda_ok()")}
    review = _review(tmp_path, base, head)
    # the keyword's own line; pin_memory became an expression: unknown, not "removed"
    assert _got(review) == {("train.py", 8, "RIGHT", "F1"): (8, 0)}
    [c] = [c for c in review.comments if c.path == "train.py"]
    assert "```suggestion\n        num_workers=8,\n```" in c.body


def test_python_config_module_missing_value_is_unknown(tmp_path) -> None:
    base = {"config/ft.py": "dtype = 'bfloat16'\ngradient_accumulation_steps = 5\neval_interval = 200\n"}
    head = {"config/ft.py": "dtype = 'bfloat16' if ok else 'float16'\neval_interval = 5\n"}
    review = _review(tmp_path, base, head)
    assert _got(review) == {("config/ft.py", 2, "RIGHT", "I5"): (200, 5)}


def test_new_recipe_without_prevailing_value_is_judged_by_the_threshold(tmp_path) -> None:
    base = {"recipes/a.yaml": "model_name_or_path: org/m-7B\nbf16: true\n"}
    head = dict(base, **{"recipes/b.yaml": "model_name_or_path: org/m-7B\nbf16: true\nsave_steps: 5\n"})
    review = _review(tmp_path, base, head)
    assert _got(review) == {("recipes/b.yaml", 3, "RIGHT", "I3"): (50, 5)}
    c = review.regressions[0]
    assert c.new_site and "threshold: every 50 steps" in c.what and "about 98 GB" in c.why and "`org/m-7B`" in c.why


def test_a_suppressed_line_the_pr_rewrites_counts_as_its_own_suppression(tmp_path) -> None:
    base = {"r.yaml": "save_steps: 500\nlogging_steps: 5  # accel-ignore: I4\n"}
    head = {"r.yaml": "save_steps: 500\nlogging_steps: 2  # accel-ignore: I4\n"}
    review = _review(tmp_path, base, head)
    [c] = review.regressions  # suppressed in base too, but the PR wrote a new value on it: listed, still counted
    assert c.suppressed_by_pr and review.suppressed_by_pr == [c]
    (tmp_path / "x").mkdir()
    ignored = build_pr_review(audit_tree(base), audit_tree(head), diff_text=diff_of(tmp_path / "x", base, head), ignored=frozenset({"I4"}))
    assert not [c for c in ignored.regressions if c.check == "I4"]


def test_model_of_reads_the_site_not_a_registry() -> None:
    from checks.facts import extract_file

    files = {p: extract_file(p, t.encode()) for p, t in {
        "a.yaml": "model_name_or_path: Qwen/Qwen3-30B-A3B\nfinetuning_type: full\n",
        "b.yaml": "base_model: meta-llama/Llama-3.1-8B\nadapter: qlora\nlora_r: 16\n",
        "c.yaml": "model_name_or_path: /models/custom\n",
        "registry.yaml": "models:\n  - deepseek-ai/DeepSeek-V3-671B\n",
    }.items()}
    sites = sites_of(files)
    assert model_of(sites["a.yaml"])[:3] == ("Qwen/Qwen3-30B-A3B", 30.0, False)
    assert model_of(sites["b.yaml"]) == ("meta-llama/Llama-3.1-8B", 8.0, True, 16)
    assert model_of(sites["c.yaml"])[1] is None  # unknown size: said so, never the registry's largest
