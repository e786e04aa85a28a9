"""``accel-audit fix`` on the demo repository, and the PR plan that restores the sample PR's regressions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from accel_audit.cli import main
from autofix.diff import unified_all
from autofix.pr import plan_pr
from autofix.scope import editable
from checks.engine import audit_path

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


def test_dry_run_prints_a_diff_and_writes_nothing(tmp_path: Path, capsys) -> None:
    repo = tmp_path / "r"
    shutil.copytree(DEMO / "head", repo)
    before = _files(repo)
    assert main(["fix", str(repo), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "--- a/configs/sft_llama3_8b.yaml\n+++ b/configs/sft_llama3_8b.yaml\n" in out
    assert "-save_steps: 1\n+save_steps: 500\n" in out and "-dataloader_num_workers: 0\n+dataloader_num_workers: 4\n" in out
    assert "bf16" not in out  # unsafe: only with --unsafe-fixes
    assert _files(repo) == before


def test_apply_then_idempotent_and_json(tmp_path: Path, capsys) -> None:
    repo = tmp_path / "r"
    shutil.copytree(DEMO / "head", repo)
    assert main(["fix", str(repo), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {(e["check"], e["path"], e["line"], e["safety"], e["before"], e["after"]) for e in doc["edits"]} == {
        ("I3", "configs/sft_llama3_8b.yaml", 24, "safe", 1, 500), ("F1", "configs/sft_llama3_8b.yaml", 19, "safe", 0, 4),
        ("F1", "scripts/cpt_megatron.sh", 26, "safe", 0, 4)}  # the demo's multi-line Megatron launcher: --num-workers on its own line
    assert doc["score"]["after"] > doc["score"]["before"] and doc["applied"]
    text = (repo / "configs/sft_llama3_8b.yaml").read_text()
    old = (DEMO / "head/configs/sft_llama3_8b.yaml").read_text()
    assert text == old.replace("save_steps: 1\n", "save_steps: 500\n").replace("dataloader_num_workers: 0\n", "dataloader_num_workers: 4\n")
    assert main(["fix", str(repo), "--format", "json"]) == 0  # a second run changes nothing
    assert json.loads(capsys.readouterr().out)["edits"] == []


def test_unsafe_fixes_and_only(tmp_path: Path, capsys) -> None:
    repo = tmp_path / "r"
    shutil.copytree(DEMO / "head", repo)
    # the full demo: the Megatron launcher's --use-flash-attn does not hide the SFT script's eager attention (D1 partial
    # at that site), so the D1 fix still reaches src/sft/train.py
    assert main(["fix", str(repo), "--unsafe-fixes", "--only", "C1", "D1", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "+bf16: true\n" in out and '+        attn_implementation="flash_attention_2",\n' in out and "save_steps" not in out


def test_bad_input_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["fix", str(tmp_path / "missing")]) == 2
    assert main(["fix", str(tmp_path), "--only", "Z99"]) == 2
    assert "not a check ID" in capsys.readouterr().err


def test_pr_plan_restores_each_regression_at_its_site() -> None:
    base_files, head_files = _files(DEMO / "base"), _files(DEMO / "head")
    plan = plan_pr(audit_path(DEMO / "base"), audit_path(DEMO / "head"), head_files.get, base_files.get,
                   diff_text=unified_all(base_files, head_files))
    got = {(e.check, e.reason, e.before_text.strip(), e.after_text.strip()) for e in plan.edits}
    assert got == {
        ("I3", "regression", "save_steps: 1", "save_steps: 500"),
        ("F1", "regression", "dataloader_num_workers: 0", "dataloader_num_workers: 8"),
        ("C1", "regression", "", "bf16: true"),
        ("D1", "regression", 'attn_implementation="eager",', 'attn_implementation="flash_attention_2",'),
        # the demo's multi-line Megatron launcher: each flag restored on its own physical line
        ("C1", "regression", "", "--bf16 \\"),
        ("F1", "regression", "--num-workers 0 \\", "--num-workers 8 \\"),
    }
    yaml_new = plan.files["configs/sft_llama3_8b.yaml"]
    # bf16 goes back on the line it was removed from: the base file again, except what the PR changed on purpose
    assert yaml_new.split("\n")[13] == "bf16: true" and yaml_new == base_files["configs/sft_llama3_8b.yaml"].replace(
        "deepspeed: configs/ds_zero3.json\n", "deepspeed: configs/ds_zero3.json\nuse_liger_kernel: true\n")
    assert plan.score_after > plan.score_before
    # one edit per site: the review folds F2 (prefetch follows the workers) into F1's change of the same line
    assert len([e for e in plan.edits if e.site.path.endswith(".yaml") and "num_workers" in e.site.key]) == 1


def test_scope_excludes_tests_ci_vendored() -> None:
    for p in ("tests/train.yaml", "a/test_x.py", ".github/workflows/ci.yml", "third_party/x.json", "vendor/a.py", "docs/c.yaml",
              "records/r.yaml", "archive/old.py", "benchmarks/b.py", "../x.yaml", "/etc/passwd"):
        assert editable(p) is not None, p
    assert editable("configs/train.yaml") is None and editable("src/sft/train.py") is None


def test_the_diff_applies_with_git_apply(tmp_path: Path) -> None:
    import subprocess

    from autofix import plan_fixes

    repo = tmp_path / "r"
    shutil.copytree(DEMO / "head", repo)
    # a CRLF file without a final newline, to exercise the diff's markers
    (repo / "configs/extra.yaml").write_bytes(b"output_dir: out\r\nlearning_rate: 1e-5\r\nper_device_train_batch_size: 2\r\nsave_steps: 2")
    plan = plan_fixes(audit_path(repo), lambda p: (repo / p).read_bytes().decode(), unsafe=True)
    assert "configs/extra.yaml" in plan.files and "\\ No newline at end of file" in plan.diff()
    patch = tmp_path / "fix.patch"
    patch.write_bytes(plan.diff().encode())
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=repo, check=True, env=env)
    for rel, text in plan.files.items():
        assert (repo / rel).read_bytes() == text.encode(), rel
