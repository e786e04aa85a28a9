"""The ``profiles:`` section of ``.github/accel-audit.yml``: which artifacts hold profiles, the thresholds, the step-time gate.

Example::

    profiles:
      artifact: "accel-profile*"      # workflow-run artifacts to diagnose (fnmatch pattern)
      thresholds:
        idle_high_pct: 15
        sawtooth_min_drops: 4
      model_params: 7e9               # for MFU from tokens/s
      hardware: h100
    gate:
      max_step_time_regression: 10%   # fail the Accel Profile check when the step time grows more than this

Defaults are :data:`diagnose.settings.DEFAULTS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from .settings import DEFAULTS, SettingsError, parse_percent

DEFAULT_ARTIFACT = "accel-profile*"
_KEYS = {"artifact", "thresholds", "model_params", "hardware", "peak_tflops", "gpus"}


@dataclass(frozen=True)
class ProfilesConfig:
    artifact: str = DEFAULT_ARTIFACT
    thresholds: dict[str, Any] = field(default_factory=dict, hash=False)  # left out of the hash: RepoConfig stays hashable
    max_step_time_regression_pct: float | None = None


def parse_profiles(data: dict[str, Any], filename: str = ".github/accel-audit.yml") -> ProfilesConfig:
    prof = data.get("profiles") or {}
    if not isinstance(prof, dict):
        raise SettingsError(f"{filename}: profiles: expected a mapping")
    extra = sorted(set(map(str, prof)) - _KEYS)
    if extra:
        raise SettingsError(f"{filename}: profiles: unknown key {extra[0]!r} (allowed: {', '.join(sorted(_KEYS))})")
    artifact = prof.get("artifact", DEFAULT_ARTIFACT)
    if not isinstance(artifact, str) or not artifact.strip() or len(artifact) > 200:
        raise SettingsError(f"{filename}: profiles.artifact: expected a name pattern such as 'accel-profile*', got {artifact!r}")
    thr = prof.get("thresholds") or {}
    if not isinstance(thr, dict):
        raise SettingsError(f"{filename}: profiles.thresholds: expected a mapping")
    thresholds: dict[str, Any] = {}
    for k, v in thr.items():
        if k not in DEFAULTS:
            raise SettingsError(f"{filename}: profiles.thresholds: unknown key {k!r} (known: {', '.join(sorted(DEFAULTS))})")
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise SettingsError(f"{filename}: profiles.thresholds.{k}: expected a number, got {v!r}")
        thresholds[k] = v
    for k in ("model_params", "peak_tflops", "gpus"):
        if prof.get(k) is not None:
            try:
                thresholds[k] = float(prof[k]) if k != "gpus" else int(prof[k])
            except (TypeError, ValueError):
                raise SettingsError(f"{filename}: profiles.{k}: expected a number, got {prof[k]!r}") from None
    if prof.get("hardware") is not None:
        thresholds["hardware"] = str(prof["hardware"]).lower()
    gate = data.get("gate") or {}
    reg = gate.get("max_step_time_regression") if isinstance(gate, dict) else None
    pct = parse_percent(reg, f"{filename}: gate.max_step_time_regression") if reg is not None else None
    if pct is not None:
        thresholds["max_step_time_regression_pct"] = pct
    return ProfilesConfig(artifact.strip(), thresholds, pct)


def profiles_settings(text: str, filename: str) -> ProfilesConfig:
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise SettingsError(f"{filename}: invalid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{filename}: the top level must be a mapping")
    return parse_profiles(data, filename)
