"""Thresholds of the diagnosis, with their defaults; overridden by ``.github/accel-audit.yml`` ``profiles:`` and CLI flags.

Every threshold is a number the verdict cites next to the measured value, so a reader can see why it fired.
"""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    # GPU utilisation timeline (nvidia-smi / dmon)
    "sawtooth_low_pct": 10.0,          # a sample at or under this is a drop to near zero
    "sawtooth_high_pct": 60.0,         # a sample at or over this is busy
    "sawtooth_min_drops": 3,           # at least this many busy -> near-zero drops
    "sawtooth_max_period_cv": 0.5,     # ... at a regular period (std/mean of the intervals between drops)
    # trace temporal breakdown
    "idle_high_pct": 20.0,             # idle share of the GPU span that makes a trace GPU-starved
    "compute_bound_pct": 80.0,         # compute share over which the run is compute-bound
    "comm_high_pct": 20.0,             # communication share of kernel time that makes communication a suspect
    "overlap_low_pct": 50.0,           # comm-comp overlap under this is poor
    "dataloader_idle_pct": 40.0,       # share of the GPU's idle time spent while the host was in DataLoader.__next__
    "launch_gap_us": 10.0,             # an idle gap shorter than this is kernel-launch latency
    "launch_bound_median_kernel_us": 20.0,  # median kernel shorter than this with host-wait idle: launch-bound
    "straggler_pct": 10.0,             # a rank whose compute time exceeds the median by more than this is a straggler
    "top_kernels": 10,
    "timeline_bins": 240,
    # memory
    "fragmentation_high_pct": 30.0,    # (reserved - allocated) / reserved at the peaks
    "empty_cache_churn": 50,           # segments given back to the driver in one capture
    # scaling
    "scaling_low_pct": 80.0,           # TN / (N x T1) under this: communication-bound
    # training-log MFU (optional)
    "hardware": None,                  # GPU name for its peak (h100, a100...), or peak_tflops
    "peak_tflops": None,
    "model_params": None,              # number of parameters, for MFU from tokens/s
    "gpus": None,                      # GPU count when the log does not print it
    # CI gate (App and `diagnose --baseline --max-step-time-regression`)
    "max_step_time_regression_pct": None,
}

DOC = {
    "sawtooth_low_pct": "GPU utilisation at or under this counts as a drop to near zero",
    "sawtooth_high_pct": "GPU utilisation at or over this counts as busy",
    "sawtooth_min_drops": "busy -> near-zero drops needed for a sawtooth",
    "sawtooth_max_period_cv": "regularity of the drops (std/mean of their intervals) for a sawtooth",
    "idle_high_pct": "GPU idle share of the span that marks the GPU as waiting",
    "compute_bound_pct": "compute share of the span over which the run is compute-bound",
    "comm_high_pct": "communication share of kernel time that makes communication a suspect",
    "overlap_low_pct": "communication-computation overlap under this is poor",
    "dataloader_idle_pct": "share of GPU idle time during DataLoader.__next__ that blames the input pipeline",
    "launch_gap_us": "idle gaps shorter than this count as kernel-launch latency",
    "launch_bound_median_kernel_us": "median kernel duration under which host-side idle means launch-bound",
    "straggler_pct": "a rank this much slower than the median (compute time, step time) is a straggler",
    "fragmentation_high_pct": "(reserved - allocated) / reserved at the peaks that suggests expandable_segments",
    "empty_cache_churn": "segments released to the driver in one capture that count as empty_cache churn",
    "scaling_low_pct": "scaling efficiency TN/(N x T1) under this blames communication",
    "max_step_time_regression_pct": "fail when the step time grows by more than this against the baseline",
}


class SettingsError(ValueError):
    pass


def merged(*layers: dict[str, Any] | None) -> dict[str, Any]:
    """The defaults overridden by each layer in turn (None values are skipped); unknown keys are an error."""
    out = dict(DEFAULTS)
    for layer in layers:
        for k, v in (layer or {}).items():
            if k not in DEFAULTS:
                raise SettingsError(f"unknown diagnosis setting {k!r} (known: {', '.join(sorted(DEFAULTS))})")
            if v is not None:
                out[k] = v
    return out


def parse_percent(value: Any, where: str) -> float:
    """``10%``, ``"10%"``, ``10`` or ``0.1``? Only the first three: a bare number is already percent."""
    text = str(value).strip()
    try:
        v = float(text[:-1] if text.endswith("%") else text)
    except ValueError:
        raise SettingsError(f"{where}: expected a percentage such as 10%, got {value!r}") from None
    if not 0 <= v <= 1000:
        raise SettingsError(f"{where}: expected a percentage from 0 to 1000, got {value!r}")
    return v
