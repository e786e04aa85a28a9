"""Scores exactly as the seed defines them: used 1, partial 1/2, n/a leaves the total."""

from __future__ import annotations

from dataclasses import dataclass

from checks.model import CATEGORIES, CheckResult, Status


@dataclass(frozen=True, slots=True)
class CategoryScore:
    id: str
    points: float
    max: int
    applicable: bool

    def to_json(self) -> dict:
        return {"id": self.id, "score": _num(self.points), "max": self.max, "applicable": self.applicable}


@dataclass(frozen=True, slots=True)
class Score:
    points: float
    max: int

    @property
    def percent(self) -> float:
        return round(100.0 * self.points / self.max, 1) if self.max else 0.0

    def to_json(self) -> dict:
        return {"points": _num(self.points), "max": self.max, "percent": self.percent}


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else x


def category_scores(results: list[CheckResult]) -> list[CategoryScore]:
    out = []
    for cat in CATEGORIES:
        rs = [r for r in results if r.category == cat]
        applicable = [r for r in rs if r.status != Status.NA]
        out.append(CategoryScore(cat, sum(r.status.points for r in applicable), len(applicable), bool(applicable)))
    return out


def overall(results: list[CheckResult]) -> Score:
    applicable = [r for r in results if r.status != Status.NA]
    return Score(sum(r.status.points for r in applicable), len(applicable))
