"""Round 14 (held-out OpenChat): a packed batch padded to a multiple of 64 tokens is Tensor Core alignment (D7)."""

from __future__ import annotations

from checks.rules.d_compute import _PACKED_BATCH_PAD
from tests.rules_ghj.ghj_util import audit

DATASET = "pkg/dataset.py"


def _with(old: str, new: str) -> dict[str, str]:
    assert old in _PACKED_BATCH_PAD[DATASET]
    return {**_PACKED_BATCH_PAD, DATASET: _PACKED_BATCH_PAD[DATASET].replace(old, new)}


def test_a_read_padding_multiple_of_64_is_alignment():
    result, _ = audit(_PACKED_BATCH_PAD, "D7")
    assert result.status.value == "used", result.detail
    assert [(e.path, e.snippet.strip()) for e in result.evidence] == [(DATASET, "self.PAD_MULTIPLE = 64")]
    assert result.detail.startswith("each batch's token count is padded to a multiple of 64 (pkg/dataset.py:")


def test_a_module_constant_is_read_the_same_way():
    files = _with("        self.PAD_MULTIPLE = 64\n", "").copy()
    files[DATASET] = "PAD_MULTIPLE = 64\n" + files[DATASET].replace("self.PAD_MULTIPLE", "PAD_MULTIPLE")
    assert audit(files, "D7")[0].status.value == "used"


def test_a_multiple_that_is_not_a_tensor_core_tile_or_is_never_read_is_not():
    # no longer credited; with the dimensions from a checkpoint nothing else decides: not judged
    twelve = audit(_with("self.PAD_MULTIPLE = 64", "self.PAD_MULTIPLE = 12"), "D7")[0]
    assert twelve.status.value == "n/a" and twelve.detail.startswith("not judged:"), twelve.detail
    unread = _with("pad_len = _find_multiple(ids.size, self.PAD_MULTIPLE) - ids.size", "pad_len = 0")
    unread_result = audit(unread, "D7")[0]
    assert unread_result.status.value == "n/a" and unread_result.detail.startswith("not judged:"), unread_result.detail


def test_visible_misaligned_dimensions_still_decide():
    files = {**_PACKED_BATCH_PAD, "configs/model.json": '{\n  "hidden_size": 4100,\n  "vocab_size": 32000\n}\n'}
    result, _ = audit(files, "D7")
    assert result.status.value == "unused" and "hidden_size=4100" in result.detail
