"""Round 12 (held-out VeOmni): a loader's ``pin_memory=pin_memory`` is not resolved to the ``pin_memory`` keyword of a
tensor allocation or an offload hook elsewhere in the package."""

from __future__ import annotations

from checks.rules.f_data import _OFFLOAD_PIN
from tests.rules_ghj.ghj_util import audit


def test_offload_buffers_pin_memory_false_is_not_the_loaders():
    result, _ = audit(_OFFLOAD_PIN, "F3")
    assert result.status.value == "used"
    assert all(e.path != "pkg/offloading.py" for e in result.evidence)


def test_the_loaders_config_off_is_still_unpinned():
    files = {**_OFFLOAD_PIN, "pkg/arguments.py": _OFFLOAD_PIN["pkg/arguments.py"].replace(
        "pin_memory: bool = field(default=True)", "pin_memory: bool = field(default=False)")}
    assert audit(files, "F3")[0].status.value == "unused"


def test_a_loader_built_with_a_literal_false_elsewhere_still_counts():
    files = {**_OFFLOAD_PIN, "pkg/eval.py": (
        "from pkg.data_loader import build_dataloader\n\n\ndef train_loader(ds):\n"
        "    return build_dataloader(ds, num_workers=2, pin_memory=False)\n")}
    assert audit(files, "F3")[0].status.value == "partial"
