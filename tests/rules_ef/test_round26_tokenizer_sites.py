"""Round 26 (issue #9, read on Megatron-LM and the corpus): what is and is not a tokenization site, and which calls may
reach a project function by name (F4/F6's per-sample reachability)."""

from __future__ import annotations

from checks.engine import build_facts
from checks.rules import f_data


def _facts(files: dict[str, str]):
    return build_facts((p, t.encode()) for p, t in files.items())


def test_a_model_encoders_encode_a_tokens_reader_and_a_config_class_are_not_tokenization():
    f = _facts({
        "pkg/diffusion/preprocess.py": (
            "def encode_captions(text_encoder, loader):\n    out = []\n    for batch in loader:\n"
            "        hidden, mask = text_encoder.encode(batch['prompt'], padding_side='left')\n        out.append(hidden)\n    return out\n"),
        "pkg/data/text_data.py": (
            "from torch.utils.data import Dataset\n\n\nclass StreamingTextDataset(Dataset):\n"
            "    def __getitem__(self, idx):\n        return self._read_binary_tokenized_sample(idx)\n"),
        "pkg/recipes/config.py": "def resolve(cfg, tokenizer):\n    return PreTokenizedDatasetWrapperConfig(tokenizer=tokenizer, path=cfg.path)\n",
        "pkg/data/sft.py": "def encode(tokenizer, text):\n    return tokenizer.encode(text, add_special_tokens=True)\n",
    })
    sites = {(c.path, c.short) for c in f_data._tokenizer_calls(f)}
    assert sites == {("pkg/data/sft.py", "encode")}, sites


def test_a_library_call_does_not_reach_a_project_function_of_the_same_name():
    f = _facts({
        "pkg/data/gpt_dataset.py": (
            "import numpy\nimport torch\n\n\nclass GPTDataset:\n    def __getitem__(self, idx):\n"
            "        a, b = numpy.split(self.tokens[idx], 2)\n        name = self.names[idx].split('_')[0]\n"
            "        self.buffer.append(name)\n        return a, b, torch.load(self.paths[idx])\n"),
        "tools/converter.py": "import torch\n\n\ndef split(input_dir):\n    return torch.load(input_dir + '/model.pt')\n",
        "pkg/rl/bank.py": "class Bank:\n    def append(self, item):\n        open(self.path, 'a').write(item)\n",
    })
    calls = {c.name: c for c in f.files["pkg/data/gpt_dataset.py"].calls}
    assert not f_data._may_call(f, calls["numpy.split"], "tools/converter.py", "split")
    assert not f_data._may_call(f, next(c for n, c in calls.items() if n.endswith(".split") and not n.startswith("numpy")),
                                "tools/converter.py", "split")
    assert not f_data._may_call(f, calls["self.buffer.append"], "pkg/rl/bank.py", "append")


def test_a_call_through_the_module_or_its_package_still_reaches_it():
    f = _facts({
        "pkg/checkpointing/__init__.py": "from .serialization import load\n",
        "pkg/checkpointing/serialization.py": "import json\n\n\ndef load(path):\n    return json.load(open(path))\n",
        "pkg/data/dataset.py": (
            "from pkg import checkpointing\nfrom pkg.checkpointing import serialization\n\n\nclass Ds:\n"
            "    def __getitem__(self, idx):\n        a = checkpointing.load(self.paths[idx])\n"
            "        return a, serialization.load(self.paths[idx])\n"),
    })
    calls = [c for c in f.files["pkg/data/dataset.py"].calls if c.short == "load"]
    assert len(calls) == 2 and all(f_data._may_call(f, c, "pkg/checkpointing/serialization.py", "load") for c in calls), \
        [c.name for c in calls]
