"""The golden-report cases: fixture repositories, the hardware each is audited for, and the outputs.

Regenerate the golden files (after checks change, review the diff!) with::

    .venv/bin/python -m tests.reports.golden_cases

The golden tests fail on any difference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from checks.engine import Audit, AuditOptions, audit_files
from checks.source import Limits, ReadStats, iter_directory
from reports.json_report import to_json
from reports.markdown import render_markdown

HERE = Path(__file__).parent
REPOS = HERE / "repos"
GOLDEN = HERE / "golden"
LANGS = ("en", "zh")


@dataclass(frozen=True)
class Case:
    repo: str
    hardware: str | None

    def audit(self) -> Audit:
        stats = ReadStats()
        files = iter_directory(REPOS / self.repo, Limits(), stats)
        return audit_files(files, f"tests/reports/repos/{self.repo}", AuditOptions(hardware=self.hardware), stats)


CASES = (Case("hf_deepspeed_7b", "a100"), Case("tiny_raw_loop", "v100"))


def outputs(case: Case) -> dict[str, str]:
    """File name under ``golden/`` -> its expected content."""
    audit = case.audit()
    out = {f"{case.repo}.{lang}.md": render_markdown(audit, lang=lang) for lang in LANGS}
    out[f"{case.repo}.json"] = json.dumps(to_json(audit), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    return out


def regenerate() -> list[Path]:
    GOLDEN.mkdir(exist_ok=True)
    written = []
    for case in CASES:
        for name, text in outputs(case).items():
            path = GOLDEN / name
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


if __name__ == "__main__":
    for p in regenerate():
        print(p.relative_to(HERE.parent.parent))
