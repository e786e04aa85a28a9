"""Round 12 (held-out VeOmni): dynamic token-budget batching with a padding-free concatenating collator is packing."""

from __future__ import annotations

from checks.rules.f_data import _DYN_PACKING
from tests.rules_ghj.ghj_util import audit


def _with(old: str, new: str, path: str = "pkg/arguments.py") -> dict[str, str]:
    assert old in _DYN_PACKING[path]
    return {**_DYN_PACKING, path: _DYN_PACKING[path].replace(old, new)}


def test_token_budget_batches_concatenated_without_padding_are_packing():
    result, _ = audit(_DYN_PACKING, "F7")
    assert result.status.value == "used"
    assert {e.path for e in result.evidence} >= {"pkg/arguments.py", "pkg/data_collator.py"}


def test_dynamic_batching_off_is_not_packing():
    assert audit(_with("dyn_bsz: bool = field(default=True)", "dyn_bsz: bool = field(default=False)"), "F7")[0].status.value != "used"


def test_dynamic_batching_without_the_flattening_collator_is_not_packing():
    files = {k: v for k, v in _DYN_PACKING.items() if k != "pkg/data_collator.py"}
    assert audit(files, "F7")[0].status.value != "used"
