"""What the round test files (``test_round5*_rules.py``) share: audit a repository given as ``{path: text}``, pick one
check's result, and the smallest LLaVA-style HF training script that the launches of those tests run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checks.engine import Audit, audit_files
from checks.model import CheckResult


def audit(files: dict[str, str]) -> Audit:
    """The audit of a repository made of ``files`` (path -> text)."""
    return audit_files((k, v.encode()) for k, v in files.items())


def scan_cold_and_cached(tmp_path: Path, files: dict[str, str]) -> dict[str, Any]:
    """Write ``files`` under ``tmp_path``, scan the tree single-process and then with a facts cache (the roles then read
    calls through their recording view), assert both JSON reports are the same bytes, and return the report."""
    from accel_audit.cli import main

    repo = tmp_path / "repo"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    cold, warm = tmp_path / "cold.json", tmp_path / "warm.json"
    assert main(["scan", str(repo), "--format", "json", "-o", str(cold), "--jobs", "1"]) == 0
    assert main(["scan", str(repo), "--format", "json", "-o", str(warm), "--cache", str(tmp_path / "cache")]) == 0
    assert warm.read_bytes() == cold.read_bytes()
    return json.loads(cold.read_text())  # type: ignore[no-any-return]


def check(result: Audit, cid: str) -> CheckResult:
    """The result of check ``cid`` in ``result``."""
    return next(r for r in result.results if r.id == cid)


#: LLaVA's ``train.py`` reduced to what the engine reads: HfArgumentParser over HF's TrainingArguments, a model loaded
#: with ``from_pretrained`` and an HF Trainer that trains it
LLAVA_TRAIN = (
    "import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n"
    "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n")
