"""``accel-audit pr --base HEAD --worktree``: the working tree as the head (the pre-commit hook)."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest

from accel_audit.cli import main
from review.diff import parse_diff
from review.worktree import blob_id, default_cache_dir, review_inputs, worktree_changes, worktree_diff

from .review_util import git, write_tree

BASE = {
    "configs/train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nbf16: true\nlr: 0.0001\nsave_steps: 500\n",
    "train.py": "from transformers import Trainer\n\n\ndef main():\n    pass\n",
    "README.md": "# a project\n",
    "old.sh": "torchrun --nproc_per_node 8 train.py\n",
}


def _repo(tmp_path: Path, files: dict[str, str] = BASE) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write_tree(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def _edit_bf16_away(repo: Path) -> None:
    (repo / "configs/train.yaml").write_text("model_name_or_path: meta-llama/Llama-2-7b-hf\nlr: 0.0001\nsave_steps: 500\n")


def test_blob_id_is_gits(tmp_path: Path) -> None:
    for data in (b"", b"x", b"line\r\n" * 1000, bytes(range(256))):
        f = tmp_path / "f"
        f.write_bytes(data)
        assert blob_id(data) == subprocess.run(["git", "hash-object", str(f)], capture_output=True, check=True, text=True).stdout.strip()


def test_an_unstaged_regression_fails_with_the_comment_the_bot_would_post(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    _edit_bf16_away(repo)
    assert main(["pr", "--repo", str(repo), "--base", "HEAD", "--worktree"]) == 1
    out = capsys.readouterr().out
    assert "accel-audit pr: HEAD...(working tree)" in out
    assert "### `configs/train.yaml` line 2 (LEFT)" in out
    assert "```yaml\nbf16: true\n```" in out


def test_the_worktree_review_equals_the_review_of_the_same_commit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    _edit_bf16_away(repo)
    (repo / "launch.sh").write_text("torchrun --nproc_per_node 8 train.py --num_workers 0\n")  # new, untracked
    (repo / "old.sh").unlink()  # deleted, not staged
    assert main(["pr", "--repo", str(repo), "--base", "HEAD", "--worktree", "--format", "json"]) == 1
    from_worktree = json.loads(capsys.readouterr().out)
    git(repo, "checkout", "-q", "-b", "pr")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "head")
    assert main(["pr", "--repo", str(repo), "--base", "main", "--head", "pr", "--format", "json"]) == 1  # exit 1 on regressions in both modes
    from_commit = json.loads(capsys.readouterr().out)
    assert from_worktree["has_regression"] is True
    for key in ("regressions", "improvements", "not_inline", "category_delta"):
        assert from_worktree[key] == from_commit[key], key
    strip = lambda r: [{k: v for k, v in c.items() if k != "body"} for c in r["comments"]]  # noqa: E731
    assert strip(from_worktree["review"]) == strip(from_commit["review"])
    assert from_worktree["check_run"]["title"] == from_commit["check_run"]["title"]


def test_the_diff_places_lines_like_git_diff(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _edit_bf16_away(repo)
    (repo / "train.py").write_text("from transformers import Trainer\nimport torch\n\n\ndef main():\n    torch.compile\n")  # no final newline change
    (repo / "new.py").write_text("x = 1")  # no newline at end of file
    (repo / "old.sh").unlink()
    head_commit = git(repo, "rev-parse", "HEAD").strip()
    changes = worktree_changes(str(repo), head_commit)
    assert sorted(changes.changed) == ["configs/train.yaml", "new.py", "train.py"]
    assert changes.removed == ["old.sh"]
    ours = parse_diff(worktree_diff(str(repo), changes))
    git(repo, "add", "-A")
    theirs = parse_diff(git(repo, "diff", "--cached", "--no-renames", "-U3", head_commit))
    assert len(ours) == len(theirs) == 4
    for f in theirs.files:
        mine = ours.head(f.target_path) if f.target_path else next(x for x in ours.files if x.source_path == f.source_path)
        assert (mine.status, mine.added, mine.removed) == (f.status, f.added, f.removed), f.path
        assert [h.lines("RIGHT") for h in mine.hunks] == [h.lines("RIGHT") for h in f.hunks]
        assert [h.lines("LEFT") for h in mine.hunks] == [h.lines("LEFT") for h in f.hunks]


def test_ignored_and_unreadable_files_are_not_the_head(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {**BASE, ".gitignore": "secret_run.py\n"})
    (repo / "secret_run.py").write_text("import torch\n")  # ignored: never read
    (repo / "link.py").symlink_to("train.py")
    (repo / "model.json").write_bytes(b"\x00\x01binary")
    changes = worktree_changes(str(repo), git(repo, "rev-parse", "HEAD").strip())
    paths = {p for p, _ in changes.files}
    assert "secret_run.py" not in paths and "link.py" not in paths and "model.json" not in paths
    assert {(s.path, s.reason) for s in changes.stats.skipped} == {("link.py", "symlink (not followed)"), ("model.json", "binary")}
    assert changes.removed == []


def test_nothing_the_audit_reads_changed_answers_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    (repo / "README.md").write_text("# a project\n\nmore words\n")
    inputs = review_inputs(str(repo), "HEAD")
    assert inputs.base is None and inputs.head is None and inputs.diff_text == ""
    assert main(["pr", "--repo", str(repo), "--base", "HEAD", "--worktree"]) == 0
    assert "no file that the audit reads differs from HEAD" in capsys.readouterr().err
    assert not default_cache_dir(str(repo)).exists()  # nothing was parsed


def test_facts_are_cached_privately_in_the_git_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    _edit_bf16_away(repo)
    assert main(["pr", "--repo", str(repo), "--base", "HEAD", "--worktree"]) == 1
    first = capsys.readouterr().out
    cache = default_cache_dir(str(repo))
    assert cache == repo / ".git" / "accel-audit" / "facts"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    entries = sorted(p for p in cache.rglob("*") if p.is_file())
    assert entries  # base and head facts, keyed by content
    mtimes = [p.stat().st_mtime_ns for p in entries]
    assert main(["pr", "--repo", str(repo), "--base", "HEAD", "--worktree"]) == 1
    assert capsys.readouterr().out == first
    assert [p.stat().st_mtime_ns for p in entries] == mtimes  # read, not rewritten
    assert sorted(p for p in cache.rglob("*") if p.is_file()) == entries


def test_the_base_commits_config_applies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    _edit_bf16_away(repo)
    assert main(["pr", "--repo", str(repo), "--base", "HEAD", "--worktree", "--format", "json"]) == 1
    checks = {r["check"] for r in json.loads(capsys.readouterr().out)["regressions"]}
    (repo / ".github").mkdir()
    (repo / ".github/accel-audit.yml").write_text(f"ignore: [{', '.join(sorted(checks))}]\n")
    # in the working tree only: a change cannot loosen its own gate
    assert main(["pr", "--repo", str(repo), "--base", "HEAD", "--worktree"]) == 1
    capsys.readouterr()
    git(repo, "add", ".github/accel-audit.yml")
    git(repo, "commit", "-q", "-m", "config")
    assert main(["pr", "--repo", str(repo), "--base", "HEAD", "--worktree", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["regressions"] == []


def test_head_or_worktree_is_required(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    assert main(["pr", "--repo", str(repo), "--base", "HEAD"]) == 2
    assert main(["pr", "--repo", str(repo), "--base", "HEAD", "--head", "HEAD", "--worktree"]) == 2
    assert "--head REF or --worktree" in capsys.readouterr().err
    assert main(["pr", "--repo", str(repo), "--base", "nope", "--worktree"]) == 2
    assert "accel-audit: " in capsys.readouterr().err


def test_unchanged_files_share_the_base_facts(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _edit_bf16_away(repo)
    inputs = review_inputs(str(repo), "HEAD", use_cache=False)
    base, head = inputs.base.facts.files, inputs.head.facts.files
    assert head["train.py"] is base["train.py"]  # parsed once, for both audits
    assert head["configs/train.yaml"] is not base["configs/train.yaml"]
    assert not default_cache_dir(str(repo)).exists()
