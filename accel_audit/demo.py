"""``make demo``: the bot's review of a sample pull request, offline and without credentials.

``fixtures/demo/base`` and ``fixtures/demo/head`` are two versions of a small Hugging Face
+ DeepSpeed fine-tuning repository. They are committed into a temporary git repository
(``main`` and the PR branch), then ``accel-audit pr`` runs on it: the output is what the
GitHub App would post on that pull request (check run and inline review comments).
Nothing here is specific to the sample: whatever the engine's checks find is shown. The sample PR
also edits a multi-line Megatron-LM launcher (``scripts/cpt_megatron.sh``): ``--bf16`` removed is a
LEFT-side comment on the removed line, ``--num-workers 8 → 0`` a RIGHT-side comment with a suggestion.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "demo"
BASE_BRANCH = "main"
HEAD_BRANCH = "pr/faster-iteration"

_GIT = [
    "git", "-c", "user.name=accel-audit demo", "-c", "user.email=demo@accel-audit.invalid", "-c", "commit.gpgsign=false",
    "-c", "core.hooksPath=/dev/null", "-c", "init.defaultBranch=main", "-c", "core.autocrlf=false",
]


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0"}
    subprocess.run([*_GIT, "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _replace_tree(src: Path, repo: Path) -> None:
    for child in repo.iterdir():
        if child.name == ".git":
            continue
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.copytree(src, repo, dirs_exist_ok=True)


def build_demo_repo(dest: Path, fixtures: Path = FIXTURES) -> tuple[str, str]:
    """Commit the base tree on ``main`` and the head tree on the PR branch; returns (base, head) refs."""
    base, head = fixtures / "base", fixtures / "head"
    if not base.is_dir() or not head.is_dir():
        raise FileNotFoundError(f"demo fixtures not found under {fixtures}")
    dest.mkdir(parents=True, exist_ok=True)
    _git(dest, "init", "-q")
    _replace_tree(base, dest)
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "--no-verify", "-m", "Llama-3-8B SFT on 2x8 H100 with ZeRO-3")
    _git(dest, "checkout", "-q", "-b", HEAD_BRANCH)
    _replace_tree(head, dest)
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "--no-verify", "-m", "Faster iteration: save every step, simpler attention, Liger kernels")
    return BASE_BRANCH, HEAD_BRANCH


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m accel_audit.demo", description=__doc__.splitlines()[0])
    ap.add_argument("--format", choices=("md", "json"), default="md")
    ap.add_argument("--lang", choices=("en", "zh"), default="en")
    args = ap.parse_args(argv)
    from accel_audit.cli import main as cli_main

    if not (FIXTURES / "base").is_dir() or not (FIXTURES / "head").is_dir():  # an installed wheel ships no fixtures
        sys.stderr.write(f"accel-audit demo: the sample repository ({FIXTURES}) is part of the source checkout, not of the "
                         "installed package; run `make demo` in a clone of accel-audit, or try `accel-audit scan PATH` "
                         "and `accel-audit pr --repo PATH --base REF --head REF` on your own repository\n")
        return 2
    with tempfile.TemporaryDirectory(prefix="accel-audit-demo-") as tmp:
        repo = Path(tmp) / "llama3-sft"
        base, head = build_demo_repo(repo)
        note = f"Sample PR: {head} → {base} in a temporary git repository built from {FIXTURES}\n\n"
        (sys.stderr if args.format == "json" else sys.stdout).write(note)
        sys.stdout.flush()
        # the sample PR has regressions on purpose: show them without failing ``make demo``
        rc = cli_main(["pr", "--repo", str(repo), "--base", base, "--head", head, "--format", args.format, "--lang", args.lang,
                       "--no-fail-on-regression"])
        if args.format == "md":  # what `/accel fix` would open as a follow-up PR (autofix, issue #11)
            from autofix.pr import demo_fix_diff

            sys.stdout.write("\n---\n\n## `/accel fix`: the follow-up pull request\n\n" + demo_fix_diff(str(FIXTURES / "base"), str(FIXTURES / "head")))
        return rc


if __name__ == "__main__":
    sys.exit(main())
