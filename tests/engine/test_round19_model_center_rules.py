"""Rules of round 19 of issue #9 (model-center 1.0.2: a BMTrain model library whose own ``BaseModel.from_pretrained`` reads
the checkpoint into the model it builds, and whose package calls ``from_pretrained`` only for tokenizers and configs): the
rule tests fail on the rule before it; the controls pass on both."""

from __future__ import annotations

from .claims import audit as _audit

_BASEMODEL = (
    "import os\nimport torch\nfrom .config import Config\n\n\nclass BaseModel(torch.nn.Module):\n"
    "    @classmethod\n    def from_pretrained(cls, path):\n        config = Config.from_pretrained(path)\n"
    "        model = cls(config)\n        model.load_state_dict(torch.load(os.path.join(path, 'pytorch_model.pt')))\n"
    "        return model\n"
)
_TOKENIZER = (
    "from transformers import BertTokenizer as HFBertTokenizer\n\n\nclass BertTokenizer:\n"
    "    @classmethod\n    def from_pretrained(cls, name):\n        return HFBertTokenizer.from_pretrained(name)\n"
)
_TRAINER = (
    "import torch\n\n\ndef train(model, loader, lr=1e-5):\n    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)\n"
    "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n"
    "        optimizer.zero_grad()\n"
)


def test_a_library_from_pretrained_that_loads_weights_is_a_fine_tuning_path():
    # previous rule: G4/G5 n/a "the project pre-trains from scratch: from_pretrained loads only tokenizers/configs, and nothing
    # fine-tunes" (or "only pre-trains from scratch") although the library's own from_pretrained loads the checkpoint
    audit = _audit({"mylib/model/basemodel.py": _BASEMODEL, "mylib/tokenizer/bert_tokenizer.py": _TOKENIZER,
                    "mylib/trainer.py": _TRAINER})
    assert audit.project.finetunes
    assert audit.result("G4").status.value == "unused"
    assert audit.result("G5").status.value == "unused"


def test_a_from_pretrained_that_builds_from_the_config_alone_is_no_fine_tuning_path():
    # control: the model class's from_pretrained reads only the config (random init), no weights
    basemodel = _BASEMODEL.replace("        model.load_state_dict(torch.load(os.path.join(path, 'pytorch_model.pt')))\n", "")
    audit = _audit({"mylib/model/basemodel.py": basemodel, "mylib/tokenizer/bert_tokenizer.py": _TOKENIZER,
                    "mylib/trainer.py": _TRAINER})
    assert audit.result("G4").status.value == "n/a"


def test_a_weight_loading_from_pretrained_in_a_conversion_script_or_a_test_is_no_fine_tuning_path():
    # control: the same load in tools/convert_checkpoint.py or tests/ is not the trained model's
    for path in ("tools/convert_checkpoint.py", "tests/test_basemodel.py"):
        audit = _audit({path: _BASEMODEL, "mylib/tokenizer/bert_tokenizer.py": _TOKENIZER, "mylib/trainer.py": _TRAINER})
        assert audit.result("G4").status.value == "n/a", path
