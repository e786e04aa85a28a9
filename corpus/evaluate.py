"""Score the checks against hand labels of real public training projects (the labelled corpus).

Each ``corpus/labels/<project>.yaml`` pins a release on the package index (``spec``, ``kind``), the folder
inside the unpacked archive that is the project (``root``), and for a subset of checks the status a careful
reader gives it, each with a one-line reason citing ``path:line``. This script fetches the pinned release
(``corpus.fetch``, cached), scans it with the engine (static only: nothing is imported or run), and prints
per check and per project how often the engine agrees, and the precision and recall of its findings.

A *finding* is a status that makes the report recommend something: ``unused`` or ``partial``.
Precision = labelled findings among the engine's findings; recall = the engine's findings among the
labelled ones. ``agree`` counts exact status matches.

    python -m corpus.evaluate [--dest /work/corpus-cache] [--project litgpt] [--json out.json] [--show-misses] [--step-zero]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .fetch import DEFAULT_DEST, FetchError, fetch

LABELS_DIR = Path(__file__).with_name("labels")
STATUSES = ("used", "partial", "unused", "n/a")
FINDING = {"unused", "partial"}


class LabelError(Exception):
    pass


@dataclass(slots=True)
class Label:
    check: str
    status: str
    why: str


@dataclass(slots=True)
class Project:
    name: str
    spec: str
    kind: str
    root: str
    labels: dict[str, Label] = field(default_factory=dict)


def load_project(path: Path) -> Project:
    """Read and validate one labels file (clear error on a malformed one)."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError) as exc:
        raise LabelError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise LabelError(f"{path}: expected a mapping")
    for key in ("spec", "root", "labels"):
        if key not in data:
            raise LabelError(f"{path}: missing {key!r}")
    labels: dict[str, Label] = {}
    for check, entry in (data["labels"] or {}).items():
        if not isinstance(entry, dict) or entry.get("status") not in STATUSES or not entry.get("why"):
            raise LabelError(f"{path}: {check}: needs status ({'/'.join(STATUSES)}) and why")
        labels[str(check)] = Label(str(check), entry["status"], str(entry["why"]))
    return Project(path.stem, str(data["spec"]), str(data.get("kind", "sdist")), str(data["root"]), labels)


def load_all(names: Iterable[str] = ()) -> list[Project]:
    wanted = set(names)
    out = [load_project(p) for p in sorted(LABELS_DIR.glob("*.yaml")) if not wanted or p.stem in wanted]
    if wanted - {p.name for p in out}:
        raise LabelError(f"no labels for: {', '.join(sorted(wanted - {p.name for p in out}))}")
    return out


def scan_statuses(folder: Path) -> dict[str, str]:
    """Every check's status on ``folder`` (the engine's default options, as ``accel-audit scan`` runs it)."""
    return scan(folder)[0]


def scan(folder: Path) -> tuple[dict[str, str], str, list[str]]:
    """(status per check, step-zero bottleneck, its reasons) of ``folder``."""
    from checks.engine import audit_path

    audit = audit_path(folder)
    return {r.id: r.status.value for r in audit.results}, audit.project.bottleneck.value, list(audit.project.bottleneck_reasons)


@dataclass(slots=True)
class Tally:
    n: int = 0
    agree: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, label: str, got: str) -> None:
        self.n += 1
        self.agree += label == got
        lf, gf = label in FINDING, got in FINDING
        self.tp += lf and gf
        self.fp += gf and not lf
        self.fn += lf and not gf

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    def row(self, name: str) -> str:
        def pct(x: float | None) -> str:
            return "  -  " if x is None else f"{x:5.0%}"

        return f"{name:<14} {self.n:>3} {self.agree:>5} {pct(self.precision)} {pct(self.recall)}  {self.tp:>2}/{self.fp:>2}/{self.fn:>2}"


HEADER = f"{'':<14} {'n':>3} {'agree':>5} {'prec':>5} {'recall':>5}  tp/fp/fn"


def evaluate(projects: list[Project], dest: Path, step_zero: dict[str, tuple[str, list[str]]] | None = None) -> dict[str, dict[str, tuple[str, str]]]:
    """``{project: {check: (label, engine status)}}`` for every labelled check; ``step_zero`` collects each verdict."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for p in projects:
        folder = fetch(p.spec, dest, p.kind) / p.root
        if not folder.is_dir():
            raise LabelError(f"{p.name}: {folder} is not in the unpacked {p.spec}")
        got, verdict, reasons = scan(folder)
        if step_zero is not None:
            step_zero[p.name] = (verdict, reasons)
        unknown = set(p.labels) - set(got)
        if unknown:
            raise LabelError(f"{p.name}: labels for unknown checks {sorted(unknown)}")
        out[p.name] = {c: (lab.status, got[c]) for c, lab in sorted(p.labels.items())}
    return out


def report(results: dict[str, dict[str, tuple[str, str]]], projects: list[Project], show_misses: bool) -> str:
    by_check: dict[str, Tally] = {}
    by_project: dict[str, Tally] = {}
    total = Tally()
    for proj, pairs in results.items():
        for check, (label, got) in pairs.items():
            by_check.setdefault(check, Tally()).add(label, got)
            by_project.setdefault(proj, Tally()).add(label, got)
            total.add(label, got)
    lines = ["per check", HEADER]
    lines += [by_check[c].row(c) for c in sorted(by_check, key=lambda c: (c[0], int(c[1:])))]
    lines += ["", "per project", HEADER]
    lines += [by_project[p].row(p) for p in sorted(by_project)]
    lines += ["", total.row("all")]
    if show_misses:
        why = {(p.name, c): lab.why for p in projects for c, lab in p.labels.items()}
        lines += ["", "disagreements (label -> engine)"]
        for proj, pairs in results.items():
            for check, (label, got) in pairs.items():
                if label != got:
                    lines.append(f"{proj:<12} {check:<4} {label:>7} -> {got:<7} {why[(proj, check)]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=DEFAULT_DEST, help="download cache (default: %(default)s)")
    ap.add_argument("--project", action="append", default=[], help="only this labels file (repeatable)")
    ap.add_argument("--json", type=Path, help="also write {project: {check: [label, engine]}} here")
    ap.add_argument("--show-misses", action="store_true", help="list each disagreement with the label's reason")
    ap.add_argument("--step-zero", action="store_true", help="also print each project's step-zero bottleneck and its reasons")
    args = ap.parse_args(argv)
    zero: dict[str, tuple[str, list[str]]] = {}
    try:
        projects = load_all(args.project)
        results = evaluate(projects, args.dest, zero)
    except (LabelError, FetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report(results, projects, args.show_misses))
    if args.step_zero:
        print("\nstep zero (bottleneck: reasons)")
        for name, (verdict, reasons) in sorted(zero.items()):
            print(f"{name:<14} {verdict}")
            for r in reasons:
                print(f"{'':<16}- {r}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
