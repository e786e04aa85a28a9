"""Rules of round 13 of issue #9 (composer): each test fails on the rule before it."""

from __future__ import annotations

from .claims import audit as _audit

_LAUNCHER = (
    "import argparse\n\n\ndef _get_parser():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('-n', '--nproc', type=int)\n    parser.add_argument('--node_rank', type=int)\n"
    "    parser.add_argument('--master_addr', type=str)\n    return parser\n"
)
_STEP = "import torch\n\n\ndef fit(model, loader):\n    for b in loader:\n        model(b).loss.backward()\n"


def test_a_launcher_with_a_node_rank_and_a_rendezvous_address_documents_multi_node_training():
    r = _audit({"lib/cli/launcher.py": _LAUNCHER, "lib/trainer.py": _STEP}).result("E1")
    assert r.status.value == "unused"
    assert "lib/cli/launcher.py:7" in (r.detail or "")


def test_the_overview_says_where_the_launcher_documents_multi_node_training():
    a = _audit({"lib/cli/launcher.py": _LAUNCHER, "lib/trainer.py": _STEP})
    assert not a.project.multi_node  # documented, not configured by a launch
    assert a.project.notes["multi_node_documented"].startswith("lib/cli/launcher.py:7:")


def test_a_node_rank_without_a_rendezvous_address_is_not_enough():
    src = _LAUNCHER.replace("    parser.add_argument('--master_addr', type=str)\n", "")
    assert _audit({"lib/cli/launcher.py": src, "lib/trainer.py": _STEP}).result("E1").status.value == "n/a"


def test_a_test_helper_parser_does_not_document_multi_node():
    assert _audit({"tests/launcher_util.py": _LAUNCHER, "lib/trainer.py": _STEP}).result("E1").status.value == "n/a"


_CATALOGUE = ('{\n "seq_length_warmup": {\n  "name": "Sequence Length Warmup",\n  "class_name": "SeqLengthWarmup",\n'
              '  "tldr": "Progressively increase sequence length.",\n  "domains": ["nlp"]\n }\n}\n')


def test_an_algorithm_catalogue_entry_is_not_a_sequence_length_curriculum():
    r = _audit({"lib/algorithms/seq_length_warmup/metadata.json": _CATALOGUE, "lib/trainer.py": _STEP}).result("G3")
    assert r.status.value == "unused"


def test_a_seq_length_warmup_section_with_a_duration_still_is():
    cfg = "algorithms:\n  seq_length_warmup:\n    duration: 0.3\n    min_seq_length: 8\n    max_seq_length: 2048\n"
    r = _audit({"yamls/mpt-125m.yaml": cfg, "lib/trainer.py": _STEP}).result("G3")
    assert r.status.value == "used"


_GENERATE_CALLBACK = (
    "import torch\n\n\nclass Generate:\n    def __init__(self, prompts, interval):\n        self.prompts = prompts\n\n"
    "    def run_event(self, event, state, logger):\n        if event == 'batch_checkpoint':\n            self.generate(state, logger)\n\n"
    "    def generate(self, state, logger):\n        tokenizer = state.model.tokenizer\n"
    "        tokenized_input = tokenizer(self.prompts, return_tensors='pt', padding=True)\n"
    "        return state.model.generate(input_ids=tokenized_input['input_ids'])\n"
)
_DATASET = (
    "import torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\nclass TextDataset(Dataset):\n"
    "    def __init__(self, rows, tokenizer):\n        self.rows, self.tokenizer = rows, tokenizer\n\n"
    "    def __getitem__(self, i):\n        return self.tokenizer(self.rows[i], truncation=True, max_length=2048)\n\n"
    "    def __len__(self):\n        return len(self.rows)\n"
)


#: the trainer's batch iterator fires the event every callback's ``run_event`` receives (Composer ``_iter_dataloader``)
_ITER_TRAINER = (
    "import torch\n\n\nclass Trainer:\n    def _iter_dataloader(self):\n"
    "        self.engine.run_event('before_dataloader', self.state, self.logger)\n"
    "        yield from self.state.dataloader\n\n"
    "    def fit(self):\n        for batch in self._iter_dataloader():\n            self.state.model(batch).loss.backward()\n"
)


def test_a_generation_callback_tokenizing_its_prompts_is_not_the_training_input_pipeline():
    # fails on the rule before round 13: ``generate`` <- ``run_event`` <- the trainer's ``_iter_dataloader`` read as online
    a = _audit({"lib/callbacks/generate.py": _GENERATE_CALLBACK, "lib/trainer.py": _ITER_TRAINER})
    assert not any(e.path == "lib/callbacks/generate.py" for e in a.result("F6").evidence)
    assert not any("tokeniz" in r for r in a.project.bottleneck_reasons)


def test_a_dataset_tokenizing_per_sample_is_still_online():
    a = _audit({"lib/callbacks/generate.py": _GENERATE_CALLBACK, "lib/data.py": _DATASET, "lib/trainer.py": _ITER_TRAINER})
    assert any(e.path == "lib/data.py" for e in a.result("F6").evidence)


_SAM = (
    "import torch\n\n\nclass SAMOptimizer(torch.optim.Optimizer):\n    def __init__(self, base_optimizer, interval=1):\n"
    "        self.base_optimizer, self.interval, self.global_step = base_optimizer, interval, 0\n\n"
    "    def step(self, closure=None):\n        if (self.global_step + 1) % self.interval == 0:\n            loss = closure()\n"
    "            self.sharpness_aware_step(closure)\n        else:\n            loss = closure()\n            if loss:\n"
    "                self.base_optimizer.step()\n        self.global_step += 1\n        return loss\n"
)


def test_a_step_in_the_else_of_a_modulus_guard_is_not_gradient_accumulation():
    # fails on the rule before round 13: ``not ((step + 1) % interval == 0) and loss`` was read as "every N micro-batches"
    r = _audit({"lib/algorithms/sam.py": _SAM, "lib/trainer.py": _STEP}).result("C5")
    assert r.status.value == "unused"


def test_a_step_under_a_not_equal_zero_modulus_is_not_either_but_equal_zero_is():
    ne = _SAM.replace("        if (self.global_step + 1) % self.interval == 0:\n",
                      "        if (self.global_step + 1) % self.interval != 0:\n            self.base_optimizer.step()\n"
                      "        if False:\n")
    assert _audit({"lib/algorithms/sam.py": ne, "lib/trainer.py": _STEP}).result("C5").status.value == "unused"
    loop = ("def fit(model, loader, optimizer, accum_steps):\n    for i, b in enumerate(loader):\n"
            "        model(b).loss.backward()\n        if (i + 1) % accum_steps == 0:\n            optimizer.step()\n")
    assert _audit({"lib/trainer.py": loop}).result("C5").status.value == "used"
