"""``accel-audit pr`` on a temporary git repository, and ``make demo``."""

from __future__ import annotations

import json

from accel_audit.cli import main
from accel_audit.demo import FIXTURES
from accel_audit.demo import main as demo_main
from review.gitlocal import GitError, audit_revision, resolve

from .review_util import git, make_repo

BASE = {
    "configs/train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nbf16: true\nlr: 0.0001\n",
    "train.py": "from transformers import Trainer\n",
    "weights.bin": b"\x00\x01\x02",
}
HEAD = dict(BASE, **{"configs/train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nlr: 0.0001\n"})


def test_pr_markdown_prints_check_run_and_every_comment(tmp_path, capsys):
    repo = make_repo(tmp_path, BASE, HEAD)
    assert main(["pr", "--repo", str(repo), "--base", "main", "--head", "pr"]) == 1  # a regression: exit 1, as a gate
    out = capsys.readouterr().out
    assert "## Check run" in out and "## Changes in this PR" in out
    assert "### `configs/train.yaml` line 2 (LEFT)" in out
    assert "```yaml\nbf16: true\n```" in out
    assert "<!-- accel-audit:fp=" in out


def test_pr_json_is_the_review_request_the_bot_sends(tmp_path, capsys):
    repo = make_repo(tmp_path, BASE, HEAD)
    head_sha = git(repo, "rev-parse", "pr").strip()
    assert main(["pr", "--repo", str(repo), "--base", "main", "--head", "pr", "--format", "json", "--event", "REQUEST_CHANGES",
                 "--no-fail-on-regression"]) == 0
    out = json.loads(capsys.readouterr().out)
    review = out["review"]
    assert review["commit_id"] == head_sha and review["event"] == "REQUEST_CHANGES"
    [c] = review["comments"]
    assert (c["path"], c["line"], c["side"]) == ("configs/train.yaml", 2, "LEFT")
    assert out["has_regression"] is True
    assert out["regressions"][0]["check"] == "C1" and out["regressions"][0]["fingerprint"] in c["body"]
    assert out["check_run"]["summary"].startswith("## Changes in this PR")
    assert set(out["check_run"]) == {"title", "summary", "text"}


def test_pr_uses_the_merge_base_like_github(tmp_path, capsys):
    repo = make_repo(tmp_path, BASE, HEAD)
    # main moves on after the branch point: the PR's diff and base audit stay at the merge base
    git(repo, "checkout", "-q", "main")
    (repo / "other.yaml").write_text("save_steps: 10\n")
    git(repo, "add", "other.yaml")
    git(repo, "commit", "-q", "-m", "main moves")
    revs = resolve(str(repo), "main", "pr")
    assert revs.base == git(repo, "merge-base", "main", "pr").strip()
    assert main(["pr", "--repo", str(repo), "--base", "main", "--head", "pr", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert all(c["path"] != "other.yaml" for c in out["review"]["comments"])


def test_trees_are_read_from_git_objects_not_the_worktree(tmp_path):
    repo = make_repo(tmp_path, BASE, HEAD)
    (repo / "configs" / "train.yaml").write_text("bf16: true\n")  # uncommitted: must not be seen
    audit = audit_revision(str(repo), resolve(str(repo), "main", "pr").head)
    assert audit.result("C1").status.value == "unused"
    assert "weights.bin" not in audit.facts.files


def test_unknown_revision_is_a_clean_error(tmp_path, capsys):
    repo = make_repo(tmp_path, BASE, HEAD)
    assert main(["pr", "--repo", str(repo), "--base", "main", "--head", "nope"]) == 2
    assert "unknown revision 'nope'" in capsys.readouterr().err
    assert main(["pr", "--repo", str(repo), "--base", "no-such-base", "--head", "pr"]) == 2
    assert "unknown revision 'no-such-base'" in capsys.readouterr().err
    try:
        resolve(str(repo), "--output=/tmp/x", "pr")
    except GitError:
        pass
    else:
        raise AssertionError("an option-like revision must be refused")


def test_demo_runs_offline_and_reviews_the_sample_pr(capsys):
    assert (FIXTURES / "base").is_dir() and (FIXTURES / "head").is_dir()
    assert demo_main(["--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    regressions = {c["check"] for c in out["regressions"]}
    assert "C1" in regressions  # the sample PR drops bf16
    comments = out["review"]["comments"]
    bf16 = [c for c in comments if "C1" in c["body"]]
    assert bf16 and bf16[0]["path"] == "configs/sft_llama3_8b.yaml" and bf16[0]["side"] == "LEFT"
    for c in comments:  # every comment targets a line the PR changed
        assert c["path"] in {"configs/sft_llama3_8b.yaml", "src/sft/train.py", "requirements.txt", "scripts/cpt_megatron.sh"}
    # the multi-line Megatron launcher: each flag commented on its own physical line
    launcher = {(c["line"], c["side"]): c["body"] for c in comments if c["path"] == "scripts/cpt_megatron.sh"}
    assert "```bash\n    --bf16 \\\n```" in launcher[(24, "LEFT")]
    assert "```suggestion\n    --num-workers 8 \\\n```" in launcher[(26, "RIGHT")]
    by_site = {(r["check"], r["path"], r["line"], r["side"]): r for r in out["regressions"]}
    nw = by_site[("F1", "scripts/cpt_megatron.sh", 26, "RIGHT")]
    assert (nw["before"], nw["after"], nw["key"], nw["base_line"]) == (8, 0, "--num-workers", 27)
    assert demo_main([]) == 0
    md = capsys.readouterr().out
    assert "## Changes in this PR" in md and "inline comment" in md


def test_demo_without_its_fixtures_says_where_they_are(tmp_path, monkeypatch, capsys) -> None:
    """An installed wheel has no fixtures/: the demo says so and exits 2 instead of a traceback."""
    from accel_audit import demo

    monkeypatch.setattr(demo, "FIXTURES", tmp_path / "missing")
    assert demo.main([]) == 2
    err = capsys.readouterr().err
    assert "source checkout" in err and "make demo" in err
