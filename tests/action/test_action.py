"""The GitHub Action's script, run as the composite action runs it: ``python -m accel_audit.action`` with the
environment a runner sets for a step, on a temporary git repository and a pull_request payload shaped like
GitHub's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.review.review_util import git, make_repo

ROOT = Path(__file__).resolve().parents[2]

BASE = {
    "configs/train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nbf16: true\nlr: 0.0001\n",
    "train.py": "from transformers import Trainer\n",
}
HEAD = dict(BASE, **{"configs/train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nlr: 0.0001\n"})


def pull_request_event(repo: Path, number: int = 7) -> dict:
    """The fields of GitHub's ``pull_request`` webhook payload that a workflow's event file carries."""
    base_sha = git(repo, "rev-parse", "main").strip()
    head_sha = git(repo, "rev-parse", "pr").strip()
    repository = {
        "id": 123456789, "node_id": "R_kgDOABCDEF", "name": "trainer", "full_name": "octo-org/trainer", "private": False,
        "owner": {"login": "octo-org", "id": 1, "type": "Organization"}, "default_branch": "main",
        "html_url": "https://github.com/octo-org/trainer", "clone_url": "https://github.com/octo-org/trainer.git",
    }
    user = {"login": "octocat", "id": 583231, "type": "User"}
    return {
        "action": "synchronize",
        "number": number,
        "before": base_sha,
        "after": head_sha,
        "pull_request": {
            "url": f"https://api.github.com/repos/octo-org/trainer/pulls/{number}",
            "id": 1987654321, "node_id": "PR_kwDOABCDEF5vXyZ", "number": number, "state": "open", "locked": False,
            "title": "Drop bf16 from the recipe", "user": user, "body": None, "draft": False,
            "created_at": "2026-11-30T10:00:00Z", "updated_at": "2026-12-01T09:00:00Z",
            "merge_commit_sha": None, "author_association": "MEMBER",
            "head": {"label": "octocat:pr", "ref": "pr", "sha": head_sha, "user": user, "repo": repository},
            "base": {"label": "octo-org:main", "ref": "main", "sha": base_sha, "user": repository["owner"], "repo": repository},
            "commits": 1, "additions": 0, "deletions": 1, "changed_files": 1,
        },
        "repository": repository,
        "organization": {"login": "octo-org", "id": 1},
        "sender": user,
    }


def run_action(repo: Path, tmp_path: Path, event: dict | None, event_name: str = "pull_request", **inputs: str) -> tuple[int, str, dict, str]:
    """(exit code, job summary, step outputs, stdout) of one run of the action's script."""
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event or {}))
    summary = tmp_path / "step_summary.md"
    output = tmp_path / "github_output"
    runner_temp = tmp_path / "runner_temp"
    runner_temp.mkdir(exist_ok=True)
    for f in (summary, output):
        f.write_text("")
    env = {
        "PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
        "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": str(repo), "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
        "RUNNER_TEMP": str(runner_temp), "GITHUB_REPOSITORY": "octo-org/trainer", "PYTHONPATH": str(ROOT),
        **{f"INPUT_{k.upper()}": v for k, v in inputs.items()},
    }
    proc = subprocess.run([sys.executable, "-m", "accel_audit.action"], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, summary.read_text(), parse_outputs(output.read_text()), proc.stdout


def parse_outputs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in re.finditer(r"^([\w-]+)<<(\S+)\n(.*?)\n\2$", text, re.S | re.M):
        out[m.group(1)] = m.group(3)
    return out


def test_a_pull_request_is_reviewed_into_the_job_summary(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, HEAD)
    git(repo, "checkout", "-q", "main")  # the workspace holds another commit: the PR's commits come from git objects
    code, summary, outputs, stdout = run_action(repo, tmp_path, pull_request_event(repo))
    assert code == 0  # no gate configured: a regression is reported, not blocking
    assert outputs["conclusion"] == "neutral"
    assert int(outputs["regressions"]) >= 1
    assert re.fullmatch(r"\d+(\.\d+)?", outputs["score"])
    assert summary.startswith("## Accel Audit: Accel score ")
    assert "regressions found; the repository's gate does not block on them" in summary
    assert "## Changes in this PR" in summary
    assert "configs/train.yaml" in summary
    assert "# LLM/MLLM Training Acceleration Audit" in summary  # the Markdown report follows
    base, head = git(repo, "rev-parse", "main").strip(), git(repo, "rev-parse", "pr").strip()
    assert f"merge base `{base[:12]}` → head `{head[:12]}`" in summary
    warnings = [ln for ln in stdout.splitlines() if ln.startswith("::warning ")]
    assert warnings and all("file=configs/train.yaml" in w for w in warnings)


def test_the_sarif_file_is_valid_sarif(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, HEAD)
    _, _, outputs, _ = run_action(repo, tmp_path, pull_request_event(repo), sarif_file="reports/accel.sarif")
    sarif = Path(outputs["sarif-file"])
    assert sarif == repo / "reports" / "accel.sarif"
    doc = json.loads(sarif.read_text())
    schema = json.loads((ROOT / "tests" / "reports" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["runs"][0]["tool"]["driver"]["name"] == "accel-audit"


@pytest.mark.parametrize(("inputs", "conclusion", "code", "reason"), [
    ({"fail_on_regression": "true"}, "failure", 1, "this pull request makes training slower"),
    ({"min_score": "99"}, "failure", 1, "is under the gate's minimum of 99%"),
    ({"min_score": "0", "fail_on_regression": "false"}, "neutral", 0, None),
])
def test_the_gate_inputs_fail_the_job(tmp_path: Path, inputs: dict, conclusion: str, code: int, reason: str | None) -> None:
    repo = make_repo(tmp_path, BASE, HEAD)
    got, summary, outputs, stdout = run_action(repo, tmp_path, pull_request_event(repo), **inputs)
    assert (got, outputs["conclusion"]) == (code, conclusion)
    if reason:
        assert "**Merge gate: failure** — " in summary and reason in summary
        assert any(ln.startswith("::error title=accel-audit gate::") and reason in ln for ln in stdout.splitlines())


def test_the_base_branch_config_gates_and_a_pr_cannot_loosen_it(tmp_path: Path) -> None:
    gate = "gate:\n  fail_on_regression: true\n  conclusion: action_required\nlanguage: zh\n"
    repo = make_repo(tmp_path, {**BASE, ".github/accel-audit.yml": gate}, {**HEAD, ".github/accel-audit.yml": "gate:\n  fail_on_regression: false\n"})
    code, summary, outputs, _ = run_action(repo, tmp_path, pull_request_event(repo))
    assert (code, outputs["conclusion"]) == (1, "action_required")
    assert f"Configuration read from `.github/accel-audit.yml@{git(repo, 'rev-parse', 'main').strip()[:12]}`" in summary
    assert "加速得分" in summary  # language: zh from the base branch
    # the input overrides the file, in both directions
    code, _, outputs, _ = run_action(repo, tmp_path, pull_request_event(repo), fail_on_regression="false")
    assert (code, outputs["conclusion"]) == (0, "neutral")


def test_an_invalid_config_is_reported_and_the_defaults_apply(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {**BASE, ".github/accel-audit.yml": "gate:\n  min_score: 250\n"}, HEAD)
    code, summary, outputs, _ = run_action(repo, tmp_path, pull_request_event(repo))
    assert code == 0 and outputs["conclusion"] == "neutral"
    assert "Invalid configuration, defaults applied: `.github/accel-audit.yml: gate.min_score: expected a number from 0 to 100" in summary


def test_the_ignore_list_of_the_config_applies(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, HEAD)
    _, _, outputs, stdout = run_action(repo, tmp_path, pull_request_event(repo))
    checks = sorted({m.group(1) for m in re.finditer(r"title=accel-audit (\w+)::", stdout)})
    assert checks
    (tmp_path / "two").mkdir()
    repo2 = make_repo(tmp_path / "two", {**BASE, ".github/accel-audit.yml": f"ignore: [{', '.join(checks)}]\n"}, HEAD)
    code, _, outputs, stdout = run_action(repo2, tmp_path, pull_request_event(repo2), fail_on_regression="true")
    assert (code, outputs["regressions"], outputs["conclusion"]) == (0, "0", "success")


def test_a_push_is_scanned_with_the_workspace_config(tmp_path: Path) -> None:
    cfg = {".github/accel-audit.yml": "gate:\n  min_score: 99\n"}
    repo = make_repo(tmp_path, {**BASE, **cfg}, {**HEAD, **cfg})
    code, summary, outputs, stdout = run_action(repo, tmp_path, {"ref": "refs/heads/pr", "after": "x"}, event_name="push")
    assert code == 1 and outputs["conclusion"] == "failure" and outputs["regressions"] == "0"
    assert "Configuration read from `.github/accel-audit.yml`" in summary
    assert "Pull request:" not in summary and "::warning" not in stdout
    assert Path(outputs["sarif-file"]).is_file()


def test_missing_pr_commits_are_a_clear_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, HEAD)
    event = pull_request_event(repo)
    event["pull_request"]["head"]["sha"] = "f" * 40  # a shallow checkout without the head commit, and no remote
    code, summary, outputs, stdout = run_action(repo, tmp_path, event)
    assert code == 2 and outputs == {}
    assert "are not in the checkout and could not be fetched (use actions/checkout with fetch-depth: 0)" in summary
    assert stdout.startswith("::error title=accel-audit::commit(s) ffffffffffff")


@pytest.mark.parametrize(("inputs", "message"), [
    ({"min_score": "high"}, "min-score: not a number: 'high'"),
    ({"fail_on_regression": "yes"}, "fail-on-regression: true or false, not 'yes'"),
    ({"language": "fr"}, "language: en or zh, not 'fr'"),
])
def test_bad_inputs_are_named(tmp_path: Path, inputs: dict, message: str) -> None:
    repo = make_repo(tmp_path, BASE, HEAD)
    code, summary, _, _ = run_action(repo, tmp_path, pull_request_event(repo), **inputs)
    assert code == 2 and message in summary


def test_action_yml_passes_every_input_to_the_script() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert "${{ github.action_path }}" in install["run"]  # installs from the action's own checkout
    audit = next(s for s in steps if s.get("id") == "audit")
    assert "-m accel_audit.action" in audit["run"]
    passed = {k for k in audit["env"] if k.startswith("INPUT_")}
    wanted = {"INPUT_" + name.upper().replace("-", "_") for name in action["inputs"] if name != "python-version"}
    assert passed == wanted
    from accel_audit.action import read_inputs

    env = {k: "1" for k in passed} | {"INPUT_FAIL_ON_REGRESSION": "true", "INPUT_LANGUAGE": "zh", "INPUT_SARIF_FILE": "x.sarif"}
    got = read_inputs(env)
    assert (got.min_score, got.fail_on_regression, got.language, got.sarif_file) == (1.0, True, "zh", "x.sarif")
    for name, out in action["outputs"].items():
        assert out["value"] == f"${{{{ steps.audit.outputs.{name} }}}}"
