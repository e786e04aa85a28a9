"""The compute half of a pull request's audit, run in a limited child process (:mod:`bot.sandbox`).

Input: the spooled tarballs of the head and the base, the repository's configuration, the PR's diff. Output:
what the parent publishes, small and picklable: per project the check run's conclusion, output and
annotations, and the merged review. Nothing here talks to GitHub. The head's results are sent first
(``"head"``), the final ones last (``"final"``), so a base audit that goes over a limit still leaves the
head's findings to report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.engine import Audit, AuditOptions, DirFactsCache, FactsCache
from checks.source import Limits, SourceError
from reports.scoring import overall
from review.model import PRReview

from .check_runs import annotations_for
from .gate import decide
from .output import compose
from .pr_diff import PRDiff
from .repo_config import LoadedConfig, ProjectSpec
from .tarball import audit_project_in_archive

Send = Callable[[str, Any], None]


@dataclass(frozen=True, slots=True)
class CacheSpec:
    """How the child reaches the facts cache (a live Redis client cannot cross a process boundary)."""

    kind: str  # "redis" | "dir" | "none"
    where: str = ""
    key: bytes = field(default=b"", repr=False)  # the cache's HMAC key (bot.facts_cache.facts_cache_key); never in a repr or log


def build_cache(spec: CacheSpec) -> FactsCache | None:
    if spec.kind == "redis":
        import redis

        from .facts_cache import RedisFactsCache

        return RedisFactsCache(redis.Redis.from_url(spec.where), spec.key)
    if spec.kind == "dir":
        return DirFactsCache(Path(spec.where), key=spec.key)
    return None


@dataclass(slots=True)
class ProjectResult:
    check_name: str
    conclusion: str
    output: dict[str, str]
    annotations: list[dict[str, Any]]


@dataclass(slots=True)
class Computed:
    projects: list[ProjectResult] = field(default_factory=list)
    review: PRReview | None = None


@dataclass(slots=True)
class AuditInput:
    head_archive: str
    base_archive: str | None
    root_head: str
    root_base: str
    loaded: LoadedConfig
    diff: PRDiff
    has_pr: bool
    limits: Limits
    cache: CacheSpec


def _prefixed(review: PRReview, prefix: str) -> PRReview:
    if not prefix:
        return review
    pre = prefix.rstrip("/") + "/"

    def fix(items: list[Any]) -> list[Any]:
        return [dataclasses.replace(x, path=pre + x.path) if getattr(x, "path", None) else x for x in items]

    return dataclasses.replace(
        review, regressions=fix(review.regressions), improvements=fix(review.improvements), comments=fix(review.comments), unplaced=fix(review.unplaced)
    )


def merge_reviews(reviews: list[PRReview]) -> PRReview:
    """One review for the PR from the projects' reviews (their inline budgets already add up to ``max_inline``)."""
    out = PRReview()
    for r in reviews:
        out.regressions += r.regressions
        out.improvements += r.improvements
        out.comments += r.comments
        out.unplaced += r.unplaced
        for k, v in r.category_delta.items():
            out.category_delta[k] = out.category_delta.get(k, 0.0) + v
    out.summary_md = "\n\n".join(r.summary_md for r in reviews if r.summary_md)
    return out


def _audit_all(archive: str, root: str, inp: AuditInput, options: AuditOptions) -> dict[ProjectSpec, Audit]:
    return {p: audit_project_in_archive(Path(archive), p.path, root, options) for p in inp.loaded.config.projects}


def compute_pr(send: Send, inp: AuditInput) -> None:
    """The child's target: audit head (and base), build the review, compose every check run's output."""
    cfg = inp.loaded.config
    # the base's unchanged files reuse the head's facts in memory (neither parsed nor unpickled a second time): the
    # PR's audit costs about one scan plus the changed files, and the two audits share those records
    from review.worktree import SharedFacts

    options = AuditOptions(limits=inp.limits, ignore=cfg.ignore, exclude=cfg.exclude, training=cfg.training, hardware=cfg.hardware,
                           cache=SharedFacts(build_cache(inp.cache)))
    try:
        heads = _audit_all(inp.head_archive, inp.root_head, inp, options)
    except SourceError as exc:
        send("source_error", str(exc))
        return
    partial = []
    for proj in cfg.projects:
        head = heads[proj]
        verdict = decide(cfg.gate, overall(head.results).percent, False)
        output = compose(head, lang=cfg.language, changes_md=None, loaded=inp.loaded, verdict=verdict)
        partial.append(ProjectResult(proj.check_name, verdict.conclusion, output, annotations_for(head, inp.diff.changed, proj.path)))
    send("head", Computed(partial))

    bases: dict[ProjectSpec, Audit] = {}
    if inp.base_archive:
        try:
            bases = _audit_all(inp.base_archive, inp.root_base, inp, options)
        except SourceError:
            bases = {}  # an unreadable base: the head is audited on its own (no comparison)

    from review.pipeline import build_pr_review

    per_project: dict[ProjectSpec, PRReview] = {}
    budget = cfg.max_inline
    if inp.has_pr:
        for proj in cfg.projects:
            pdiff = inp.diff.for_project(proj.path)
            review = build_pr_review(
                bases.get(proj), heads[proj], diff_text=pdiff.diff_text, files=pdiff.files, max_inline=budget, lang=cfg.language,
                inline_limit=cfg.max_inline,
            )
            budget = max(0, budget - len(review.comments))
            per_project[proj] = review
    out = Computed()
    for proj in cfg.projects:
        head = heads[proj]
        review = per_project.get(proj)
        verdict = decide(cfg.gate, overall(head.results).percent, bool(review and review.has_regression))
        output = compose(head, lang=cfg.language, changes_md=review.summary_md if review else None, loaded=inp.loaded, verdict=verdict,
                         unplaced=review.unplaced if review else None)
        out.projects.append(ProjectResult(proj.check_name, verdict.conclusion, output, annotations_for(head, inp.diff.changed, proj.path)))
    reviews = [_prefixed(per_project[proj], proj.path) for proj in cfg.projects if proj in per_project]
    if reviews:
        out.review = reviews[0] if len(reviews) == 1 else merge_reviews(reviews)
    send("final", out)


__all__ = ["AuditInput", "CacheSpec", "Computed", "ProjectResult", "build_cache", "compute_pr", "merge_reviews"]
