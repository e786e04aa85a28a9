"""The benchmark corpus's generated test data is what the sniff is for: every golden-values file and dataset is
skipped as data, and every DeepSpeed config is read."""

from __future__ import annotations

from pathlib import Path

from benchmarks.corpus import write_test_data
from checks.source import Limits, ReadStats, iter_directory


def test_generated_test_data_is_skipped_and_configs_are_read(tmp_path: Path) -> None:
    written = write_test_data(tmp_path)
    assert written > 20_000_000  # about Megatron-LM's 32 MB of JSON
    stats = ReadStats()
    read = sorted(p for p, _ in iter_directory(tmp_path, Limits(), stats))
    assert read == [f"examples/deepspeed/ds_zero{s}.json" for s in (1, 2, 3)]
    reasons = {s.path: s.reason for s in stats.skipped}
    assert all(r.startswith("data: ") for r in reasons.values())
    assert sum("golden_values" in p for p in reasons) == 875 and sum(p.startswith("data/sft/") for p in reasons) == 12
