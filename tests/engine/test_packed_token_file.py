"""A project's own packed token file (round 8 of issue #9, modalities ``.pbin``): documents tokenized offline into one
token stream, read back as ``np.frombuffer(buffer=<memmap>, dtype=uint16, offset=...)``. It is pre-tokenized binary data
(F10) in one indexed file (F4); a dataset built with a window length over it packs (F7), one built per document does not."""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status
from checks.rules.f_data import _PBIN_DATASET, _PBIN_FACTORY_DOCS, _PBIN_FACTORY_WINDOWS


def _statuses(files: dict[str, str]) -> dict[str, Status]:
    audit = audit_files((p, t.encode()) for p, t in files.items())
    return {r.id: r.status for r in audit.results}


def test_windows_over_a_packed_token_file_are_packed_pretokenized_merged_data():
    got = _statuses({"pkg/dataloader/dataset.py": _PBIN_DATASET, "pkg/dataloader/dataset_factory.py": _PBIN_FACTORY_WINDOWS})
    assert (got["F4"], got["F7"], got["F10"]) == (Status.USED, Status.USED, Status.USED)


def test_one_document_per_index_is_not_packing():
    got = _statuses({"pkg/dataloader/dataset.py": _PBIN_DATASET, "pkg/dataloader/dataset_factory.py": _PBIN_FACTORY_DOCS})
    assert got["F10"] == Status.USED
    assert got["F7"] == Status.UNUSED
