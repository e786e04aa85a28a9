"""Round 14 (held-out OpenChat): a pre-tokenizing script that writes parquet is offline preprocessing whatever its name;
a tokenizer factory tokenizes nothing; a token-budget multipack sampler with varlen attention is packing."""

from __future__ import annotations

from checks.rules.f_data import _BUDGET_PACKING, _PRETOKENIZE_SCRIPT
from tests.rules_ghj.ghj_util import audit

SCRIPT = "chatpkg/data/generate_dataset.py"


def test_ray_tasks_that_tokenize_and_a_parquet_write_are_offline_preprocessing():
    result, _ = audit(_PRETOKENIZE_SCRIPT, "F6")
    assert result.status.value == "used", result.detail
    cited = {(e.path, e.line) for e in result.evidence}
    lines = _PRETOKENIZE_SCRIPT[SCRIPT].splitlines()
    tokenize = next(i for i, line in enumerate(lines, 1) if "tokenize_conversations(" in line)
    write = next(i for i, line in enumerate(lines, 1) if "write_table(" in line)
    assert {(SCRIPT, tokenize), (SCRIPT, write)} <= cited


def test_a_tokenizer_factory_saved_with_the_checkpoint_is_not_start_up_tokenization():
    # the trainer alone: building the tokenizer to save it beside the checkpoint tokenizes no data
    result, _ = audit({"chatpkg/training/train.py": _PRETOKENIZE_SCRIPT["chatpkg/training/train.py"]}, "F6")
    assert "start-up" not in (result.detail or "")
    assert not any("model_tokenizer_create" in (e.snippet or "") for e in result.evidence)


def test_a_parquet_write_in_an_unrelated_function_does_not_make_tokenization_offline():
    # a library API: predict() tokenizes prompts, evaluate() writes its results table; neither calls the other
    files = {"mylib/api.py": (
        "class Model:\n"
        "    def predict(self, texts):\n"
        "        batch = self.tokenizer.tokenizer(texts, return_tensors='pt', padding=True)\n"
        "        return self.model.generate(**batch)\n\n"
        "    def evaluate(self, df, output_path):\n"
        "        results = self.score(df)\n        results.to_parquet(output_path)\n")}
    result, _ = audit(files, "F6")
    assert result.status.value != "used"


def test_the_same_tokenization_returned_rather_than_written_is_not_offline():
    script = _PRETOKENIZE_SCRIPT[SCRIPT].replace(
        "    parquet.write_table(pa.concat_tables(ray.get(handles)), out_filename)\n", "    return ray.get(handles)\n")
    result, _ = audit({**_PRETOKENIZE_SCRIPT, SCRIPT: script}, "F6")
    assert result.status.value != "used"


def test_a_token_budget_sampler_with_varlen_attention_is_packing():
    result, _ = audit(_BUDGET_PACKING, "F7")
    assert result.status.value == "used", result.detail
    assert {e.path for e in result.evidence} == {"pkg/dataset.py", "pkg/model.py"}


def test_either_half_alone_is_not_packing():
    # the sampler without varlen attention pads its batches; varlen attention over batches of a fixed sample count is
    # padding removal
    padded = {**_BUDGET_PACKING, "pkg/model.py": "import torch.nn.functional as F\n\ndef attention(q, k, v, mask):\n"
              "    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)\n"}
    assert audit(padded, "F7")[0].status.value != "used"
    fixed = {**_BUDGET_PACKING, "pkg/dataset.py": _BUDGET_PACKING["pkg/dataset.py"].replace(
        "batch_max_length=batch_max_length", "batch_size=8")}
    assert audit(fixed, "F7")[0].status.value != "used"


def test_a_budget_sampler_behind_an_off_switch_is_not_packing():
    files = {**_BUDGET_PACKING, "pkg/dataset.py": _BUDGET_PACKING["pkg/dataset.py"].replace(
        "    def __init__(self, data, batch_max_length, rank, num_replicas):\n        self.data = data\n",
        "    def __init__(self, data, batch_max_length, rank, num_replicas, use_multipack: bool = False):\n        self.data = data\n"
        "        if use_multipack:\n            self._build(data, batch_max_length, rank, num_replicas)\n\n"
        "    def _build(self, data, batch_max_length, rank, num_replicas):\n")}
    assert audit(files, "F7")[0].status.value != "used"


def test_an_iterable_dataset_over_a_table_read_whole_in_init_is_not_streaming():
    from checks.rules.f_data import _EPOCH_TABLE_DATASET

    result, _ = audit({"pkg/dataset.py": _EPOCH_TABLE_DATASET}, "F9")
    assert result.status.value == "unused"
    assert "read_table at pkg/dataset.py:10" in result.detail


def test_a_memory_mapped_array_or_a_later_class_does_not_count_as_a_whole_read():
    mapped = ("import numpy as np\nfrom torch.utils.data import IterableDataset\n\n\nclass TokenStream(IterableDataset):\n"
              "    def __init__(self, path):\n        self.tokens = np.load(path, mmap_mode='r')\n\n"
              "    def __iter__(self):\n        yield from self.tokens\n")
    assert audit({"pkg/stream.py": mapped}, "F9")[0].status.value == "used"
    later = ("import json\nfrom torch.utils.data import Dataset, IterableDataset\n\n\nclass ShardStream(IterableDataset):\n"
             "    def __iter__(self):\n        yield from self.read()\n\n\nclass Eval(Dataset):\n"
             "    def __init__(self, path):\n        self.rows = json.load(open(path))\n")
    assert audit({"pkg/stream.py": later}, "F9")[0].status.value == "used"
