"""Rules of round 13 of issue #9 (openpipe-art): each test fails on the rule before it."""

from __future__ import annotations

from checks.rules.f_data import _QUEUE_FED_TRAINER, _SHARED_HANDOFF

from .claims import audit as _audit


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



_WEIGHT_STREAM = (
    "import torch\n\n\nclass StreamingWeightOffload:\n    def __init__(self):\n        self.h2d_stream = torch.cuda.Stream()\n\n"
    "    def _run_load(self, layer_state, slot):\n        with torch.cuda.stream(self.h2d_stream):\n"
    "            for group in layer_state.groups:\n                gpu_tensor = slot.gpu[group.dtype][: group.numel]\n"
    "                gpu_tensor.copy_(slot.pinned[group.dtype][: group.numel], non_blocking=True)\n")
_TRAIN = "def train_step(model, optimizer, rows, device):\n    for row in rows:\n        model(row.to(device)).loss.backward()\n        optimizer.step()\n"


def test_weights_streamed_on_a_side_stream_are_not_a_batch_prefetch():
    # it was "next batch copied on a side CUDA stream" (F11 used) for a Megatron layer-weight streamer
    a = _audit({"pkg/training/streaming_weight_offload.py": _WEIGHT_STREAM, "pkg/train.py": _TRAIN})
    assert a.result("F11").status.value == "unused"


def test_a_prefetcher_that_copies_batches_on_a_side_stream_is_still_used():
    prefetch = (
        "import torch\n\n\nclass DataPrefetcher:\n    def __init__(self, loader):\n        self.loader = iter(loader)\n"
        "        self.stream = torch.cuda.Stream()\n\n    def preload(self):\n        batch = next(self.loader)\n"
        "        with torch.cuda.stream(self.stream):\n            self.batch = batch.cuda(non_blocking=True)\n")
    a = _audit({"pkg/data/prefetcher.py": prefetch, "pkg/train.py": _TRAIN})
    assert a.result("F11").status.value == "used"


def test_a_trainer_whose_input_hook_is_replaced_has_no_loader_of_its_own():
    # ``trainer._prepare_inputs = _async_prepare_inputs`` (rows from a queue): the GRPOTrainer's DataLoader iterates a
    # placeholder dataset. It was read as the training loader: F3 "training batches are pinned" (HF default), F1 "runs in
    # the main process (num_workers=0)" citing the GRPOConfig, and J5 "generation runs in PyTorch eager (HF generate)"
    a = _audit(_QUEUE_FED_TRAINER)
    assert a.result("F3").status.value == "unused"
    assert a.result("F1").detail == "no multi-process data loader found"
    assert not any(e.path == "mylib/train.py" for e in a.result("J5").evidence)


def test_the_same_trainer_without_the_replaced_hook_keeps_the_hf_loader_defaults():
    files = {"mylib/train.py": _QUEUE_FED_TRAINER["mylib/train.py"].replace(
        "    trainer._prepare_inputs = _async_prepare_inputs\n", "")}
    a = _audit(files)
    assert a.result("F3").status.value == "used"
