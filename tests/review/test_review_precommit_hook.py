"""``.pre-commit-hooks.yaml``: the hook runs the worktree review, on exactly the files the audit reads."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from accel_audit.cli import build_parser
from checks.facts import classify

HOOKS = Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml"


def _hook() -> dict:
    [hook] = yaml.safe_load(HOOKS.read_text())
    return hook


def test_the_hook_runs_the_worktree_review() -> None:
    hook = _hook()
    assert hook["id"] == "accel-audit" and hook["language"] == "python" and hook["pass_filenames"] is False
    argv = shlex.split(hook["entry"])
    assert argv[0] == "accel-audit"  # the console script of [project.scripts]
    args = build_parser().parse_args(argv[1:])
    assert (args.command, args.base, args.worktree, args.head) == ("pr", "HEAD", True, None)


@pytest.mark.parametrize("path", [
    "train.py", "pkg/model.pyi", "nb/explore.ipynb", "configs/ds_z3.json", "configs/llama.YAML", "recipes/a.yml", "environment.yml",
    "pyproject.toml", "conf/x.toml", "scripts/run.sh", "slurm/job.sbatch", "run.slurm", "Makefile", "sub/GNUmakefile", "rules.mk",
    "Dockerfile", "docker/Dockerfile.cuda", "app.dockerfile", "Containerfile", "requirements.txt", "requirements-dev.in",
    "requirements/base.txt", "README.md", "docs/README.rst", "docs/multi_node.md", "examples/slurm/launch.mdx",
    "doc/en/usage.md", "docs/training_guide.md", "docs/Quick-Start.rst", "configs/hostfile", "hostfile.example",
    # not read by the audit
    "notes.txt", "docs/faq.md", "tokenizer.json", "weights.bin", "setup.cfg", "docs/index.rst",
])
def test_the_files_filter_is_the_audits(path: str) -> None:
    matched = re.search(_hook()["files"], path) is not None
    wanted = classify(path) is not None
    if path.endswith("tokenizer.json"):  # a data file the audit skips; running the hook on it costs one quick no-op
        assert matched and not wanted
        return
    assert matched == wanted, path
