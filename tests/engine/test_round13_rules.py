"""Rules of round 13 of issue #9 (openpipe-art): each test fails on the rule before it."""

from __future__ import annotations

from checks.engine import audit_files
from checks.rules.f_data import _SHARED_HANDOFF


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def test_rows_handed_over_through_shared_from_file_mappings_are_not_a_token_dataset():
    # the backend maps files writable (``shared=True``) and copies a step's packed rows in; the trainer maps them again.
    # They were read as a nanoGPT-style token stream: F4 "merged shards", F6 "preprocessed ahead", F7 "packed", F10 "used"
    a = _audit(_SHARED_HANDOFF)
    assert a.result("F7").status.value == "unused"
    assert a.result("F10").status.value == "unused"
    assert "from_file" not in " ".join(e.snippet or "" for e in a.result("F4").evidence)


def test_a_token_shard_mapped_read_only_is_still_pre_tokenized_data():
    files = {"train.py": (
        "import torch\n\n\ndef load_shard(path):\n    header = torch.from_file(path, False, 256, dtype=torch.int32)\n"
        "    tokens = torch.from_file(path, shared=False, size=int(header[2]), dtype=torch.uint16)\n    return tokens\n")}
    a = _audit(files)
    assert a.result("F10").status.value == "used"

