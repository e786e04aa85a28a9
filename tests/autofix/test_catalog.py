"""The catalog on small repositories written like real ones: which sites get which edit, scope, verification."""

from __future__ import annotations

from pathlib import Path

from autofix import plan_fixes
from autofix.scope import editable
from checks.engine import audit_path

TRAIN = '''import argparse

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--deepspeed", type=str)
    args = p.parse_args()
    model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf")
    ds = torch.load("data/train.pt")
    loader = DataLoader(ds, batch_size=8, num_workers=0)
    targs = TrainingArguments(
        output_dir="out",
        per_device_train_batch_size=4,
        learning_rate=2e-5,
        deepspeed=args.deepspeed,
        logging_steps=1,
    )
    trainer = Trainer(model=model, args=targs, train_dataset=ds)
    trainer.train()
'''
LAUNCH = "#!/bin/bash\ndeepspeed --num_gpus 8 train.py \\\n    --deepspeed ds.json \\\n    --save_steps 1 \\\n    --bf16 False\n"
DS = '{\n  "zero_optimization": {\n    "stage": 2,\n    "overlap_comm": false\n  },\n  "bf16": {\n    "enabled": false\n  }\n}\n'
TEST = "from torch.utils.data import DataLoader\n\n\ndef test_x():\n    DataLoader([], num_workers=0)\n"


def _repo(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def _read(root: Path):
    return lambda rel: (root / rel).read_text()


def test_safe_fixes_per_file_kind(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"train.py": TRAIN, "scripts/train.sh": LAUNCH, "ds.json": DS, "tests/test_train.py": TEST})
    plan = plan_fixes(audit_path(root), _read(root))
    got = {(e.check, e.site.path, e.site.kind, e.after_text.strip()) for e in plan.edits}
    assert got == {
        ("I4", "train.py", "call", "logging_steps=10,"),
        ("F1", "train.py", "assign", "dataloader_num_workers=4,"),  # Trainer's implicit default, set in TrainingArguments(...)
        ("F1", "train.py", "call", "loader = DataLoader(ds, batch_size=8, num_workers=4)"),
        ("F3", "train.py", "call", "loader = DataLoader(ds, batch_size=8, num_workers=4, pin_memory=True)"),
        ("I3", "scripts/train.sh", "shell", "--save_steps 500 \\"),
    }
    assert all(e.safety.value == "safe" for e in plan.edits)
    assert "tests/test_train.py" not in plan.files
    assert {d.check for d in plan.dropped if "unsafe" in d.reason} >= {"C1", "C3", "D2", "E2"}
    assert plan.score_after > plan.score_before
    # applying the plan and planning again proposes nothing: every fix is idempotent
    for rel, text in plan.files.items():
        (root / rel).write_text(text)
    again = plan_fixes(audit_path(root), _read(root))
    assert again.edits == []


def test_scope_drops_a_cited_site_in_archived_code(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"archive/train.sh": LAUNCH, "train.py": TRAIN})  # the engine reads archive/; fixes never edit it
    audit = audit_path(root)
    assert audit.roles.role("archive/train.sh") == "archive"  # context only: the check does not cite it
    plan = plan_fixes(audit, _read(root), only=["I3"])
    assert "archive/train.sh" not in plan.files
    assert not any(e.site.path == "archive/train.sh" for e in plan.edits)


def test_scope_asks_the_file_roles_first() -> None:
    from checks.roles import Roles

    roles = Roles(by_path={"eval/run_train.py": "eval", "train.py": "training"}, why={"eval/run_train.py": "evaluation harness"})
    assert editable("train.py", roles) is None
    assert editable("eval/run_train.py", roles) == "eval file (evaluation harness): out of the project's training scope, never edited"
    assert editable("eval/run_train.py") is None  # the path patterns alone do not know this folder


def test_unsafe_fixes_when_asked(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"train.py": TRAIN, "scripts/train.sh": LAUNCH, "ds.json": DS})
    plan = plan_fixes(audit_path(root), _read(root), unsafe=True, only=["C1", "E2"])
    assert plan.files["ds.json"] == DS.replace('"overlap_comm": false', '"overlap_comm": true').replace('"enabled": false', '"enabled": true')
    assert plan.files["scripts/train.sh"] == LAUNCH.replace("--bf16 False", "--bf16 True")
    assert {e.check for e in plan.edits} == {"C1", "E2"} and all(e.safety.value == "unsafe" for e in plan.edits)


def test_a_fix_the_reaudit_does_not_confirm_is_dropped(tmp_path: Path) -> None:
    loop = ('import torch\nfrom torch.utils.data import DataLoader\n\n\ndef main():\n    model = torch.nn.Linear(4, 4).cuda()\n'
            '    loader = DataLoader(torch.load("data/train.pt"), batch_size=8, num_workers=0, prefetch_factor=1, pin_memory=True)\n'
            '    for step, batch in enumerate(loader):\n        model(batch.cuda()).sum().backward()\n')
    root = _repo(tmp_path, {"train.py": loop})
    alone = plan_fixes(audit_path(root), _read(root), only=["F2"])  # prefetching without workers changes nothing
    assert alone.edits == [] and alone.files == {}
    assert [d.reason for d in alone.dropped] == ["dropped after verification: the re-audit does not show the check improved"]
    both = plan_fixes(audit_path(root), _read(root), only=["F1", "F2"])
    assert {e.check for e in both.edits} == {"F1", "F2"}
