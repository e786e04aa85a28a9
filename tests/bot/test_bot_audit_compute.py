"""The PR audit's compute half: the base's unchanged files reuse the head's facts instead of being parsed again."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import pytest

import checks.engine
from bot.audit_compute import AuditInput, CacheSpec, compute_pr
from bot.pr_diff import PRDiff
from bot.repo_config import LoadedConfig, RepoConfig
from checks.source import Limits

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "repos" / "hf_deepspeed"


def _tarball(path: Path, files: dict[str, bytes]) -> str:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for rel, data in files.items():
            info = tarfile.TarInfo(f"repo-abc/{rel}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())
    return str(path)


def test_the_base_reuses_the_heads_facts_of_unchanged_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base_files = {str(p.relative_to(FIXTURE)): p.read_bytes() for p in sorted(FIXTURE.rglob("*")) if p.is_file()}
    changed = next(rel for rel in base_files if rel.endswith(".py"))
    head_files = dict(base_files, **{changed: base_files[changed] + b"\nEXTRA_SETTING = 1\n"})
    parsed: list[str] = []
    real = checks.engine.extract_file

    def counting(path: str, data: bytes, *args: Any, **kwargs: Any) -> Any:
        parsed.append(path)
        return real(path, data, *args, **kwargs)

    monkeypatch.setattr(checks.engine, "extract_file", counting)
    sent: list[tuple[str, Any]] = []
    inp = AuditInput(
        head_archive=_tarball(tmp_path / "head.tar.gz", head_files), base_archive=_tarball(tmp_path / "base.tar.gz", base_files),
        root_head="o/r@head", root_base="o/r@base", loaded=LoadedConfig(RepoConfig()), diff=PRDiff(changed={changed}),
        has_pr=True, limits=Limits(), cache=CacheSpec("none"),
    )
    compute_pr(lambda kind, value: sent.append((kind, value)), inp)
    assert [k for k, _ in sent] == ["head", "final"]
    assert len(set(parsed)) > 3 and parsed.count(changed) == 2  # the changed file: once per side
    assert len(parsed) == len(set(parsed)) + 1  # every other file once, for the head


def test_paths_training_of_the_repo_config_reaches_the_pr_audit(tmp_path: Path) -> None:
    """``paths.training`` puts a file the roles would leave out (under tests/) back on the training path."""
    from bot.repo_config import parse_config

    files = {"tests/run_sft.py": (b"from transformers import Trainer, TrainingArguments\n"
                                  b"args = TrainingArguments(output_dir='out', bf16=True, per_device_train_batch_size=4)\n"
                                  b"Trainer(model=model, args=args, train_dataset=ds).train()\n")}

    def c1_line(config: str) -> str:
        sent: list[tuple[str, Any]] = []
        inp = AuditInput(
            head_archive=_tarball(tmp_path / "head.tar.gz", files), base_archive=None, root_head="o/r@head", root_base="",
            loaded=parse_config(config), diff=PRDiff(), has_pr=False, limits=Limits(), cache=CacheSpec("none"),
        )
        compute_pr(lambda kind, value: sent.append((kind, value)), inp)
        final = dict(sent)["final"]
        text = final.projects[0].output.get("text", "") + final.projects[0].output["summary"]
        return next((line for line in text.splitlines() if "**C1**" in line), "")

    assert "[x]" not in c1_line("")  # a test file: not the training path (no training code found)
    assert "[x]" in c1_line("paths:\n  training: ['tests/run_sft.py']\n")
