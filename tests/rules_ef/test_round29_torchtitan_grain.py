"""Round 29 (issue #9, read on torchtitan at HEAD): a tokenizer class's own ``encode`` is not a tokenization site, and a
per-sample processor object that a Grain pipeline maps over the stream tokenizes online."""

from __future__ import annotations

from checks.engine import build_facts
from checks.rules import f_data

from ._audit import audit

_TOKENIZER = (
    "from tokenizers import Tokenizer\n\n\nclass BaseTokenizer:\n    pass\n\n\n"
    "class HuggingFaceTokenizer(BaseTokenizer):\n    def __init__(self, path):\n        self.tokenizer = Tokenizer.from_file(path)\n\n"
    "    def encode(self, text, add_bos=True, add_eos=False):\n        token_ids = self.tokenizer.encode(text).ids\n"
    "        return token_ids\n")
_PROCESSORS = (
    "import numpy as np\n\n\nclass SampleProcessor:\n    pass\n\n\n"
    "class TextProcessor(SampleProcessor):\n    def __init__(self, config, *, context):\n        self._tokenizer = context.tokenizer\n\n"
    "    def __call__(self, sample, rng):\n"
    "        input_ids = np.asarray(self._tokenizer.encode(sample['text'], add_bos=True, add_eos=True))\n"
    "        return input_ids[:-1], input_ids[1:]\n\n\n"
    "class ChatProcessor(SampleProcessor):\n    def _tokenize_sample(self, sample):\n"
    "        return self._tokenizer.encode(sample['prompt'] + sample['answer'])\n\n"
    "    def __call__(self, sample, rng):\n        return self._tokenize_sample(sample)\n")
_FILES = {
    "torchtitan/components/tokenizer.py": _TOKENIZER,
    "torchtitan/hf_datasets/text_datasets.py": _PROCESSORS,
    "torchtitan/train.py": (
        "from torchtitan.components.tokenizer import HuggingFaceTokenizer\n\n\n"
        "def main(config):\n    tokenizer = HuggingFaceTokenizer(config.tokenizer_path)\n    return tokenizer\n"),
}


def test_a_tokenizer_wrappers_own_encode_is_not_a_site():
    f = build_facts((p, t.encode()) for p, t in _FILES.items())
    sites = {(c.path, c.line) for c in f_data._tokenizer_calls(f)}
    assert ("torchtitan/components/tokenizer.py", 13) not in sites, sites
    assert ("torchtitan/hf_datasets/text_datasets.py", 13) in sites, sites


def test_a_sample_processors_call_tokenizes_online_through_its_helpers():
    f = build_facts((p, t.encode()) for p, t in _FILES.items())
    online = {(c.path, c.line) for c in f_data._classify_tokenization(f)["online"]}
    assert {("torchtitan/hf_datasets/text_datasets.py", 13), ("torchtitan/hf_datasets/text_datasets.py", 19)} <= online, online


def test_f6_reads_the_processor_as_per_sample_tokenization():
    results, _ = audit(_FILES, "F6")
    r = results["F6"]
    assert r.status.value == "unused"
    assert r.detail == "tokenization runs per sample in the data loader", r.detail
    assert all(e.path != "torchtitan/components/tokenizer.py" for e in r.evidence)


def test_a_processor_class_outside_the_data_modules_is_not_read_as_per_sample():
    files = {**_FILES, "torchtitan/hf_datasets/text_datasets.py": "", "torchtitan/models/vision/processors.py": _PROCESSORS}
    f = build_facts((p, t.encode()) for p, t in files.items())
    assert not f_data._classify_tokenization(f)["online"]


def test_detokenizing_is_not_tokenization():
    # GPT-NeoX megatron/utils.py CharCounter: counts characters per token of each batch, by detokenizing it
    f = build_facts([("megatron/utils.py", (
        b"class CharCounter:\n    def __init__(self, data_iterator, tokenizer):\n        self.tokenizer = tokenizer\n"
        b"        self.data_iterator = data_iterator\n\n    def __next__(self):\n        batch = self.data_iterator.__next__()\n"
        b"        for b in batch['text']:\n            self.char_count += len(self.tokenizer.detokenize(b.tolist()))\n"
        b"        return batch\n"))])
    assert not f_data._tokenizer_calls(f)


def test_a_file_handle_kept_on_the_dataset_and_read_by_byte_range_is_not_a_per_sample_open():
    # GPT-NeoX megatron/data/indexed_dataset.py IndexedDataset: the .bin is opened once (lazily) and read with seek/readinto
    src = ("import numpy as np\n\n\nclass IndexedDataset:\n    def read_data(self, path):\n"
           "        self.data_file = open(data_file_path(path), 'rb', buffering=0)\n\n    def __getitem__(self, idx):\n"
           "        if not self.data_file:\n            self.read_data(self.path)\n"
           "        a = np.empty(self.sizes[idx], dtype=self.dtype)\n        self.data_file.seek(self.data_offsets[idx] * self.element_size)\n"
           "        self.data_file.readinto(a)\n        return a\n")
    assert not f_data._per_sample_reads(build_facts([("megatron/data/indexed_dataset.py", src.encode())]))
    # control: a per-sample open of its own file, no byte ranges
    per_file = ("import json\n\n\nclass JsonDataset:\n    def __getitem__(self, idx):\n"
                "        with open(self.files[idx]) as fh:\n            return json.load(fh)\n")
    assert f_data._per_sample_reads(build_facts([("mylib/data/json_dataset.py", per_file.encode())]))


def test_an_evaluation_harness_collate_is_not_the_training_input():
    # GPT-NeoX eval_tasks/eval_adapter.py: lm-eval-harness requests tokenized in _collate
    src = ("class EvalHarnessAdapter:\n    def _collate(self, x):\n        toks = self.tokenizer.encode(x[0])\n"
           "        return -len(toks), tuple(toks)\n")
    f = build_facts([("eval_tasks/eval_adapter.py", src.encode())])
    assert not f_data._classify_tokenization(f)["online"]
    assert f_data._classify_tokenization(build_facts([("mylib/data/collate.py", src.encode())]))["online"]


def test_a_path_branch_beside_an_in_memory_bytes_branch_is_not_a_per_sample_file_read():
    # EasyR1 verl/utils/dataset.py process_image: image paths or embedded bytes, the dataset's rows decide
    src = ("from io import BytesIO\n\nfrom PIL import Image\n\n\ndef process_image(image):\n    if isinstance(image, str):\n"
           "        image = Image.open(image)\n    elif isinstance(image, dict):\n        image = Image.open(BytesIO(image['bytes']))\n"
           "    return image.convert('RGB')\n\n\nclass RLHFDataset:\n    def __getitem__(self, index):\n"
           "        return [process_image(x) for x in self.rows[index]['images']]\n")
    assert not f_data._per_sample_reads(build_facts([("verl/utils/dataset.py", src.encode())]))
    only_paths = src.replace("    elif isinstance(image, dict):\n        image = Image.open(BytesIO(image['bytes']))\n", "")
    assert f_data._per_sample_reads(build_facts([("verl/utils/dataset.py", only_paths.encode())]))
