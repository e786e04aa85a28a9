"""``.github/accel-audit.yml``: parse, validate, inherit (``_extends``).

The file is read from the pull request's *base* branch, so a PR cannot loosen its own gate. ``_extends``
names a repository whose same file gives the defaults (``.github`` for the organisation's ``.github``
repository, ``other-repo``, ``owner/repo``, optionally ``:path/to/file.yml``); the repository's own keys win,
mappings merge key by key. A repository without the file inherits the organisation's ``.github`` one.

An invalid file never stops the audit: :func:`parse_config` returns the defaults and the exact error, which
the check run shows.

Example::

    language: en            # en | zh
    ignore: [H*, C2]        # check IDs or patterns
    paths:
      exclude: ["examples/**", "legacy/**"]   # not read at all
      training: ["recipes/**"]               # on the training path even under tests/, records/, benchmarks/...
    hardware: h100          # bf16/FP8 advice only where the GPU supports them
    projects:               # monorepo: one check run per sub-folder
      - path: llm
      - path: vlm
        name: Vision-language
    profiles:               # Accel Profile: diagnose profiler artifacts of PR workflow runs
      artifact: "accel-profile*"
      thresholds: {idle_high_pct: 20}
    gate:
      max_step_time_regression: 10%   # Accel Profile fails when the step time grows more than this
      min_score: 60         # overall score in percent
      fail_on_regression: true
      conclusion: failure   # failure | action_required (neutral would not block a required check)
    comments:
      max_inline: 20
      event: COMMENT        # COMMENT | REQUEST_CHANGES
    _extends: .github
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from checks.model import CATEGORY_SIZES
from diagnose.config import ProfilesConfig, parse_profiles
from diagnose.settings import SettingsError

CONFIG_PATH = ".github/accel-audit.yml"

GPUS = (
    "h100", "h200", "h800", "h20", "gh200", "b100", "b200", "gb200", "a100", "a800", "a30", "a40", "a10", "a10g",
    "l4", "l40", "l40s", "v100", "t4", "p100", "rtx3090", "rtx4090", "rtx5090", "rtx6000", "mi250", "mi300x", "tpu",
)
ALL_CHECK_IDS = tuple(f"{cat}{i}" for cat, n in CATEGORY_SIZES.items() for i in range(1, n + 1))
_TOP_KEYS = {"language", "ignore", "paths", "hardware", "projects", "gate", "comments", "profiles", "_extends"}


class ConfigError(ValueError):
    """An invalid configuration; the message is the exact error shown in the check run."""


@dataclass(frozen=True, slots=True)
class ProjectSpec:
    path: str  # "" for the whole repository
    name: str

    @property
    def check_name(self) -> str:
        return "Accel Audit" if not self.path else f"Accel Audit ({self.name})"


@dataclass(frozen=True, slots=True)
class Gate:
    min_score: float | None = None  # percent
    fail_on_regression: bool = False
    conclusion: str = "failure"

    @property
    def configured(self) -> bool:
        return self.min_score is not None or self.fail_on_regression


@dataclass(frozen=True, slots=True)
class RepoConfig:
    language: str = "en"
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    training: tuple[str, ...] = ()  # paths.training: globs forced onto the training path (checks.roles)
    hardware: str | None = None
    projects: tuple[ProjectSpec, ...] = (ProjectSpec("", "Accel Audit"),)
    gate: Gate = field(default_factory=Gate)
    max_inline: int = 20
    review_event: str = "COMMENT"
    profiles: ProfilesConfig = field(default_factory=ProfilesConfig)  # Accel Profile (bot/profile_job.py)


@dataclass(slots=True)
class LoadedConfig:
    config: RepoConfig
    source: str | None = None  # "owner/repo:path@ref" of the file(s) applied, None for the defaults
    errors: list[str] = field(default_factory=list)  # exact errors of invalid files (defaults applied)


def _fail(where: str, msg: str) -> ConfigError:
    return ConfigError(f"{where}: {msg}" if where else msg)


def _type_name(v: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer", float: "a number"}.get(type(v), type(v).__name__)


def load_yaml(text: str, filename: str = CONFIG_PATH) -> dict[str, Any]:
    """Parse the YAML text; the error message keeps PyYAML's line and column."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        if mark is not None:
            raise ConfigError(f"{filename}: invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}") from None
        raise ConfigError(f"{filename}: invalid YAML: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{filename}: the top level must be a mapping, got {_type_name(data)}")
    return data


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep merge: the override's keys win; mappings merge key by key; lists are replaced."""
    out = dict(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


def _str_list(v: Any, where: str) -> list[str]:
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
        raise _fail(where, f"expected a list of strings, got {v!r}")
    return [x.strip() for x in v]


def _clean_path(p: str, where: str) -> str:
    p = p.strip().strip("/")
    if p.startswith("..") or "/../" in f"/{p}/" or p.startswith("~"):
        raise _fail(where, f"must be a folder inside the repository, got {p!r}")
    return "" if p in ("", ".") else p


def validate(data: dict[str, Any], filename: str = CONFIG_PATH) -> RepoConfig:
    """Build a :class:`RepoConfig` from parsed YAML, or raise :class:`ConfigError` naming the key."""
    unknown = sorted(set(map(str, data)) - _TOP_KEYS)
    if unknown:
        raise ConfigError(f"{filename}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(_TOP_KEYS))})")
    kw: dict[str, Any] = {}

    if "language" in data:
        lang = data["language"]
        if lang not in ("en", "zh"):
            raise ConfigError(f"{filename}: language: expected 'en' or 'zh', got {lang!r}")
        kw["language"] = lang

    if "ignore" in data and data["ignore"] is not None:
        pats = _str_list(data["ignore"], f"{filename}: ignore")
        for p in pats:
            if not any(fnmatch.fnmatchcase(cid, p.upper()) for cid in ALL_CHECK_IDS):
                raise ConfigError(f"{filename}: ignore: {p!r} matches no check ID (examples: C2, H*, I3)")
        kw["ignore"] = tuple(p.upper() for p in pats)

    if "paths" in data and data["paths"] is not None:
        paths = data["paths"]
        if not isinstance(paths, dict):
            raise ConfigError(f"{filename}: paths: expected a mapping with 'exclude' or 'training', got {_type_name(paths)}")
        extra = sorted(set(map(str, paths)) - {"exclude", "training"})
        if extra:
            raise ConfigError(f"{filename}: paths: unknown key {extra[0]!r} (allowed: exclude, training)")
        if paths.get("exclude") is not None:
            kw["exclude"] = tuple(_str_list(paths["exclude"], f"{filename}: paths.exclude"))
        if paths.get("training") is not None:
            kw["training"] = tuple(_clean_path(g, f"{filename}: paths.training") or "**"
                                   for g in _str_list(paths["training"], f"{filename}: paths.training"))

    if "hardware" in data and data["hardware"] is not None:
        hw = data["hardware"]
        if not isinstance(hw, str) or hw.strip().lower().replace("-", "").replace(" ", "") not in GPUS:
            raise ConfigError(f"{filename}: hardware: unknown GPU {hw!r} (known: {', '.join(GPUS)})")
        kw["hardware"] = hw.strip().lower().replace("-", "").replace(" ", "")

    if "projects" in data and data["projects"] is not None:
        raw = data["projects"]
        if not isinstance(raw, list) or not raw:
            raise ConfigError(f"{filename}: projects: expected a non-empty list of folders, got {raw!r}")
        projects: list[ProjectSpec] = []
        for i, item in enumerate(raw):
            where = f"{filename}: projects[{i}]"
            if isinstance(item, str):
                path, name = _clean_path(item, where), None
            elif isinstance(item, dict):
                extra = sorted(set(map(str, item)) - {"path", "name"})
                if extra:
                    raise ConfigError(f"{where}: unknown key {extra[0]!r} (allowed: path, name)")
                if not isinstance(item.get("path"), str):
                    raise ConfigError(f"{where}: path: expected a folder name, got {item.get('path')!r}")
                path = _clean_path(item["path"], where + ".path")
                name = item.get("name")
                if name is not None and (not isinstance(name, str) or not name.strip()):
                    raise ConfigError(f"{where}: name: expected a string, got {name!r}")
            else:
                raise ConfigError(f"{where}: expected a folder or a mapping with 'path', got {_type_name(item)}")
            spec = ProjectSpec(path, (name or path or "root").strip()[:60])
            if any(p.path == spec.path for p in projects):
                raise ConfigError(f"{where}: {spec.path or '.'!r} is listed twice")
            if any(p.check_name == spec.check_name for p in projects):
                raise ConfigError(f"{where}: the name {spec.name!r} is used twice")
            projects.append(spec)
        if len(projects) > 20:
            raise ConfigError(f"{filename}: projects: at most 20 projects, got {len(projects)}")
        kw["projects"] = tuple(projects)

    if "gate" in data and data["gate"] is not None:
        g = data["gate"]
        if not isinstance(g, dict):
            raise ConfigError(f"{filename}: gate: expected a mapping, got {_type_name(g)}")
        extra = sorted(set(map(str, g)) - {"min_score", "fail_on_regression", "conclusion", "max_step_time_regression"})
        if extra:
            raise ConfigError(f"{filename}: gate: unknown key {extra[0]!r} "
                              "(allowed: min_score, fail_on_regression, conclusion, max_step_time_regression)")
        ms = g.get("min_score")
        if ms is not None and (isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 <= ms <= 100):
            raise ConfigError(f"{filename}: gate.min_score: expected a number from 0 to 100 (percent), got {ms!r}")
        fr = g.get("fail_on_regression", False)
        if not isinstance(fr, bool):
            raise ConfigError(f"{filename}: gate.fail_on_regression: expected true or false, got {fr!r}")
        concl = g.get("conclusion", "failure")
        if concl not in ("failure", "action_required"):
            raise ConfigError(
                f"{filename}: gate.conclusion: expected 'failure' or 'action_required', got {concl!r}"
                + (" (neutral passes a required check, so it cannot gate a merge)" if concl == "neutral" else "")
            )
        kw["gate"] = Gate(float(ms) if ms is not None else None, fr, concl)

    if "comments" in data and data["comments"] is not None:
        c = data["comments"]
        if not isinstance(c, dict):
            raise ConfigError(f"{filename}: comments: expected a mapping, got {_type_name(c)}")
        extra = sorted(set(map(str, c)) - {"max_inline", "event"})
        if extra:
            raise ConfigError(f"{filename}: comments: unknown key {extra[0]!r} (allowed: max_inline, event)")
        mi = c.get("max_inline", 20)
        if isinstance(mi, bool) or not isinstance(mi, int) or not 0 <= mi <= 50:
            raise ConfigError(f"{filename}: comments.max_inline: expected an integer from 0 to 50, got {mi!r}")
        ev = c.get("event", "COMMENT")
        if not isinstance(ev, str) or ev.upper() not in ("COMMENT", "REQUEST_CHANGES"):
            raise ConfigError(f"{filename}: comments.event: expected COMMENT or REQUEST_CHANGES, got {ev!r}")
        kw["max_inline"] = mi
        kw["review_event"] = ev.upper()

    if data.get("profiles") is not None or (isinstance(data.get("gate"), dict) and "max_step_time_regression" in data["gate"]):
        try:
            kw["profiles"] = parse_profiles(data, filename)
        except SettingsError as exc:
            raise ConfigError(str(exc)) from None

    if "_extends" in data:
        parse_extends(data["_extends"], "", filename)  # validated here, resolved by the loader
    return RepoConfig(**kw)


def parse_extends(value: Any, owner: str, filename: str = CONFIG_PATH) -> tuple[str, str, str]:
    """``_extends`` value -> (owner, repo, path)."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{filename}: _extends: expected a repository name such as '.github', got {value!r}")
    ref, _, path = value.strip().partition(":")
    path = path.strip() or CONFIG_PATH
    parts = ref.split("/")
    ok = re.compile(r"^[A-Za-z0-9_.-]+$")
    if len(parts) == 1 and ok.match(parts[0]):
        return owner, parts[0], path
    if len(parts) == 2 and all(ok.match(p) for p in parts):
        return parts[0], parts[1], path
    raise ConfigError(f"{filename}: _extends: expected 'repo', 'owner/repo' or 'repo:path', got {value!r}")


def parse_config(text: str | None, filename: str = CONFIG_PATH) -> LoadedConfig:
    """One file on its own (no inheritance): the config, or the defaults and the error."""
    if text is None:
        return LoadedConfig(RepoConfig())
    try:
        return LoadedConfig(validate(load_yaml(text, filename), filename), filename)
    except ConfigError as exc:
        return LoadedConfig(RepoConfig(), None, [str(exc)])
