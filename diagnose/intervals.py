"""Unions and intersections of time intervals (HTA's ``merge_kernel_intervals`` and overlap arithmetic)."""

from __future__ import annotations

from collections.abc import Iterable

Interval = tuple[float, float]


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """The union as sorted, disjoint intervals (as HTA: a new interval starts only when ``ts > running end``, so touching ones merge)."""
    out: list[list[float]] = []
    for ts, end in sorted(intervals):
        if out and ts <= out[-1][1]:
            if end > out[-1][1]:
                out[-1][1] = end
        else:
            out.append([ts, end])
    return [(a, b) for a, b in out]


def total(merged: list[Interval]) -> float:
    return sum(b - a for a, b in merged)


def intersection_total(a: list[Interval], b: list[Interval]) -> float:
    """Total length of the intersection of two merged interval lists."""
    i = j = 0
    out = 0.0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if hi > lo:
            out += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def gaps(merged: list[Interval]) -> list[Interval]:
    """The holes between consecutive merged intervals."""
    return [(merged[k][1], merged[k + 1][0]) for k in range(len(merged) - 1) if merged[k + 1][0] > merged[k][1]]


def busy_bins(merged: list[Interval], start: float, end: float, bins: int) -> list[float]:
    """The busy fraction (0..1) of each of ``bins`` equal slices of [start, end)."""
    if end <= start or bins <= 0:
        return []
    width = (end - start) / bins
    out = [0.0] * bins
    for a, b in merged:
        a, b = max(a, start), min(b, end)
        if b <= a:
            continue
        k = int((a - start) / width)
        while k < bins and a < b:
            edge = start + (k + 1) * width
            seg_end = min(b, edge)
            out[k] += seg_end - a
            a = seg_end
            k += 1
    return [min(1.0, v / width) for v in out]
