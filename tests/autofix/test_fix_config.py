"""``accel-audit fix`` follows the repository's own ``.github/accel-audit.yml`` (ignore, paths.exclude)."""

from __future__ import annotations

import shutil
from pathlib import Path

from accel_audit.cli import main
from accel_audit.localconfig import options_for
from bot.repo_config import parse_config
from checks.engine import AuditOptions

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"


def test_ignored_checks_are_not_fixed(tmp_path: Path, capsys) -> None:
    repo = tmp_path / "r"
    shutil.copytree(DEMO / "head", repo)
    assert main(["fix", str(repo), "--dry-run"]) == 0
    assert "-save_steps: 1\n+save_steps: 500\n" in capsys.readouterr().out
    (repo / ".github").mkdir(exist_ok=True)
    (repo / ".github" / "accel-audit.yml").write_text("ignore: [I3]\n")
    assert main(["fix", str(repo), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "save_steps" not in out and "-dataloader_num_workers: 0\n+dataloader_num_workers: 4\n" in out


def test_excluded_paths_are_not_edited(tmp_path: Path, capsys) -> None:
    repo = tmp_path / "r"
    shutil.copytree(DEMO / "head", repo)
    (repo / ".github").mkdir(exist_ok=True)
    (repo / ".github" / "accel-audit.yml").write_text("paths:\n  exclude: ['configs/**']\n")
    assert main(["fix", str(repo), "--dry-run"]) == 0
    assert "configs/sft_llama3_8b.yaml" not in capsys.readouterr().out


def test_a_broken_config_is_a_clear_error(tmp_path: Path, capsys) -> None:
    repo = tmp_path / "r"
    shutil.copytree(DEMO / "head", repo)
    (repo / ".github").mkdir(exist_ok=True)
    (repo / ".github" / "accel-audit.yml").write_text("ignore: [I3\n")
    assert main(["fix", str(repo), "--dry-run"]) == 2
    assert "accel-audit.yml" in capsys.readouterr().err


def test_options_carry_the_training_paths_and_keep_an_explicit_hardware() -> None:
    cfg = parse_config("paths:\n  training: ['research/**']\nhardware: a100\n").config
    opts = options_for(cfg, AuditOptions(hardware="h100"))
    assert opts.training == ("research/**",) and opts.hardware == "h100"
    assert options_for(cfg).hardware == "a100"
