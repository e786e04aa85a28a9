"""``# accel-ignore: C1`` removes that line's evidence for C1 only (Python and YAML)."""

from __future__ import annotations

from checks.base import REGISTRY, all_checks
from checks.engine import AuditOptions, build_facts, run_checks
from checks.model import Status
from checks.project import detect_project


def _run(files: dict[str, str], *ids: str) -> dict[str, object]:
    all_checks()
    facts = build_facts((p, t.encode()) for p, t in files.items())
    project = detect_project(facts)
    results, _ = run_checks(facts, project, AuditOptions(), [REGISTRY[i] for i in ids])
    return {r.id: r for r in results}


def test_yaml_comment_suppresses_only_the_named_check() -> None:
    plain = {"train.yaml": "bf16: true\ngradient_checkpointing: true\n"}
    r = _run(plain, "C1", "C3")
    assert r["C1"].status == Status.USED and r["C3"].status == Status.USED
    ignored = {"train.yaml": "bf16: true  # accel-ignore: C1\ngradient_checkpointing: true  # accel-ignore: C1\n"}
    r = _run(ignored, "C1", "C3")
    assert r["C1"].status == Status.UNUSED
    assert r["C3"].status == Status.USED and r["C3"].evidence[0].line == 2


def test_python_comment_suppresses_that_line_only() -> None:
    code = (
        "import torch\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):  # accel-ignore: C1\n"
        "    loss = model(x)\n"
        "scaler = torch.cuda.amp.GradScaler()\n"
    )
    r = _run({"train.py": code}, "C1")
    assert r["C1"].status == Status.USED
    assert [e.line for e in r["C1"].evidence] == [4]
    r = _run({"train.py": code.replace("GradScaler()\n", "GradScaler()  # accel-ignore: C1\n")}, "C1")
    assert r["C1"].status == Status.UNUSED


def test_several_ids_and_bare_ignore() -> None:
    files = {"train.yaml": "bf16: true  # accel-ignore: D2, C1\n"}
    assert _run(files, "C1")["C1"].status == Status.UNUSED
    files = {"train.yaml": "bf16: true  # accel-ignore\n"}
    assert _run(files, "C1")["C1"].status == Status.UNUSED
    files = {"train.yaml": "bf16: true  # accel-ignore: C11\n"}
    assert _run(files, "C1")["C1"].status == Status.USED


def test_suppression_is_per_check_view_of_the_facts() -> None:
    facts = build_facts([("ds.json", b'{\n  "bf16": {"enabled": true}\n}\n'),
                         ("loader.py", b"from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=8)  # accel-ignore: F1\n")])
    assert facts.for_check("F1").calls("DataLoader") == []
    assert len(facts.for_check("F3").calls("DataLoader")) == 1
    assert len(facts.calls("DataLoader")) == 1
