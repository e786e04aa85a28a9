"""Unions and intersections of time intervals (HTA's ``merge_kernel_intervals`` and overlap arithmetic)."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence

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


def total(merged: Iterable[Interval]) -> float:
    return sum(b - a for a, b in merged)


def intersection_total(a: Sequence[Interval], b: Sequence[Interval]) -> float:
    """Total length of the intersection of two merged interval lists."""
    i = j = 0
    out = 0.0
    na, nb = len(a), len(b)
    while i < na and j < nb:
        a0, a1 = a[i]
        b0, b1 = b[j]
        lo = a0 if a0 > b0 else b0
        hi = a1 if a1 < b1 else b1
        if hi > lo:
            out += hi - lo
        if a1 < b1:
            i += 1
        else:
            j += 1
    return out


def gaps(merged: Sequence[Interval]) -> Iterator[tuple[int, float, float]]:
    """The holes between consecutive merged intervals: ``(k, start, end)`` where interval ``k + 1`` ends the hole."""
    prev_end = None
    for k, (s, e) in enumerate(merged):
        if prev_end is not None and s > prev_end:
            yield k - 1, prev_end, s
        prev_end = e


def busy_bins(merged: Iterable[Interval], start: float, end: float, bins: int) -> list[float]:
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


class Merged:
    """A union of intervals kept in two arrays (16 bytes an interval instead of a tuple's ~100), with the index of the
    event that opened each interval. Indexing and iteration give ``(start, end)`` tuples, so the functions above apply."""

    __slots__ = ("ends", "first", "starts")

    def __init__(self) -> None:
        self.starts = array("d")
        self.ends = array("d")
        self.first = array("q")

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, k: int) -> tuple[float, float]:
        return self.starts[k], self.ends[k]

    def __iter__(self) -> Iterator[tuple[float, float]]:
        return zip(self.starts, self.ends)


def merge_sorted(events: Iterable[tuple[float, float, int]]) -> Merged:
    """HTA's union of ``(start, end, index)`` events that arrive sorted by start (e.g. ``heapq.merge`` of per-stream runs)."""
    out = Merged()
    cur_s = cur_e = 0.0
    cur_i = -1
    have = False
    for ts, end, idx in events:
        if have and ts <= cur_e:
            if end > cur_e:
                cur_e = end
            continue
        if have:
            out.starts.append(cur_s)
            out.ends.append(cur_e)
            out.first.append(cur_i)
        cur_s, cur_e, cur_i, have = ts, end, idx, True
    if have:
        out.starts.append(cur_s)
        out.ends.append(cur_e)
        out.first.append(cur_i)
    return out
