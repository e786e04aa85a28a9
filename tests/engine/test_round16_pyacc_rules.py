"""Rules of round 16 of issue #9 (pytorch-accelerated, a general Trainer on HF Accelerate): each rule test fails on the rule
before it; each control passes on both."""

from __future__ import annotations

from checks.facts.extract import extract_file
from checks.facts.store import Facts
from checks.facts.types import RETURNED_DICT
from checks.rules.f_data import _CPU_PER_GPU, _HELPER_DL_KWARGS
from checks.rules.g_strategy import _EMA_COPY, _EMA_TRAIN
from reports.i18n import na_reason_zh

from .claims import audit as _audit


def _facts(files: dict[str, str]) -> Facts:
    return Facts([extract_file(k, v.encode()) for k, v in files.items()])


def _trainer(pin: str = "True if torch.cuda.is_available() else False", workers: str = _CPU_PER_GPU) -> dict[str, str]:
    return {"mylib/trainer.py": _HELPER_DL_KWARGS.format(pin=pin, workers=workers)}


def test_a_returned_dict_literal_is_filed_under_its_function_out_of_the_settings():
    f = _facts(_trainer())
    kept = [(e.keys, e.line, e.fmt) for e in f.files["mylib/trainer.py"].configs if e.keys[-1] == "pin_memory"]
    assert kept == [(("get_default_train_dl_kwargs", "pin_memory"), 18, RETURNED_DICT)]
    # a reply payload or a layout report a function returns is no setting: the settings never see these entries
    assert f.config("pin_memory") == [] and f.settings("pin_memory") == []


def test_loader_kwargs_from_the_trainers_default_helper_are_the_loaders_settings():
    # ``DataLoader(..., **self._train_dl_kwargs)`` after ``self.get_default_train_dl_kwargs(batch_size)``: the helper's
    # ``"pin_memory": True if torch.cuda.is_available() else False`` pins (the previous rule: "no data loader found to pin")
    a = _audit(_trainer())
    f3 = a.result("F3")
    assert f3.status.value == "used"
    assert [(e.path, e.line) for e in f3.evidence] == [("mylib/trainer.py", 18)]
    f1 = a.result("F1")
    assert f1.status.value == "used" and [(e.path, e.line) for e in f1.evidence] == [("mylib/trainer.py", 20)]


def test_the_helpers_false_is_read_too():
    assert _audit(_trainer(pin="False")).result("F3").status.value == "unused"
    assert _audit(_trainer(workers="0")).result("F1").status.value == "unused"


def test_a_dict_returned_by_a_function_the_loader_does_not_call_is_not_its_setting():
    # control: ``to_dict()`` of another class returns a pin_memory entry; the loader's function never calls it
    files = {"mylib/trainer.py": (
        "from torch.utils.data import DataLoader\n\n\nclass Cfg:\n    def to_dict(self):\n        return {\"pin_memory\": True}\n\n\n"
        "def build(ds, kwargs):\n    return DataLoader(ds, batch_size=8, **kwargs)\n")}
    f3 = _audit(files).result("F3")
    assert all(e.line != 6 for e in f3.evidence)
    assert f3.status.value != "used"


def test_an_ema_deep_copy_frozen_whole_is_not_layer_freezing():
    # ``self.module = deepcopy(model)`` then every parameter of the copy ``requires_grad_(False)`` (previous rule: used)
    assert _audit({"mylib/utils.py": _EMA_COPY, "train.py": _EMA_TRAIN}).result("G5").status.value == "unused"


def test_freezing_part_of_the_trained_model_is_still_layer_freezing():
    files = {"mylib/utils.py": _EMA_COPY.replace("for p in self.module.parameters():", "for p in model.bert.embeddings.parameters():"),
             "train.py": _EMA_TRAIN}
    assert _audit(files).result("G5").status.value == "used"


_BERT_EXAMPLE = (
    "import torch\nfrom transformers import AutoModelForSequenceClassification, AutoTokenizer\n\n"
    "tokenizer = AutoTokenizer.from_pretrained(\"bert-base-cased\")\n"
    "model = AutoModelForSequenceClassification.from_pretrained(\"bert-base-cased\", return_dict=True)\n"
    "optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)\n"
    "for batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n    optimizer.step()\n"
)


def test_a_project_that_names_only_encoder_checkpoints_is_not_called_an_llm():
    a = _audit({"examples/nlp/train_bert.py": _BERT_EXAMPLE})
    assert a.project.model_names == ["bert-base-cased"]
    assert a.project.model_type == "unknown"


def test_a_causal_lm_is_still_an_llm():
    text = _BERT_EXAMPLE.replace("bert-base-cased", "gpt2").replace("AutoModelForSequenceClassification", "AutoModelForCausalLM")
    assert _audit({"train.py": text}).project.model_type == "LLM"
    # a BERT name beside a causal-LM load: the generative model decides
    both = _BERT_EXAMPLE + "lm = AutoModelForCausalLM.from_pretrained(\"bert-base-cased\")\n"
    assert _audit({"train.py": both.replace("AutoTokenizer\n", "AutoTokenizer, AutoModelForCausalLM\n")}).project.model_type == "LLM"


_CNN = ("import timm\nimport torch\n\nmodel = timm.create_model(\"resnet50d\", pretrained=True, num_classes=10)\n"
        "optimizer = torch.optim.Adam(model.parameters())\nfor x, y in loader:\n"
        "    loss = torch.nn.functional.cross_entropy(model(x), y)\n    loss.backward()\n    optimizer.step()\n")


def test_h_on_a_project_of_image_models_does_not_say_text_only():
    r = _audit({"train.py": _CNN}).result("H1")
    assert r.status.value == "n/a"
    assert "text-only" not in r.detail and "no multimodal LLM" in r.detail
    assert na_reason_zh(r.detail).startswith("无多模态大模型")


def test_h_on_a_text_project_still_says_text_only():
    r = _audit({"train.py": _BERT_EXAMPLE}).result("H1")
    assert r.detail == "text-only project (no vision encoder)"


def test_step_zero_on_a_project_without_a_language_model_names_no_llm_kernels():
    # a ResNet fine-tune with no fusion: the memory-bound reason names no RoPE and no Liger (LLM kernels), and the model
    # type stays unknown (previous rule: "norms, activations, RoPE and the loss", "D5 Liger")
    a = _audit({"train.py": _CNN})
    assert a.project.model_type == "unknown"
    mem = [r for r in a.project.bottleneck_reasons if "kernel fusion" in r]
    assert mem and all("RoPE" not in r and "Liger" not in r for r in mem)
    assert "the optimizer update" in mem[0]


def test_step_zero_on_an_llm_keeps_the_llm_wording():
    a = _audit({"train.py": _BERT_EXAMPLE.replace("bert-base-cased", "gpt2").replace("AutoModelForSequenceClassification", "AutoModelForCausalLM")})
    mem = [r for r in a.project.bottleneck_reasons if "kernel fusion" in r]
    assert mem and "RoPE" in mem[0]


def test_liger_is_not_recommended_when_every_named_model_is_an_encoder():
    # the seed's Liger advice is for HF decoder LLMs of supported families; a BERT classifier has no Liger patch
    a = _audit({"examples/nlp/train_bert.py": _BERT_EXAMPLE})
    d5 = a.result("D5")
    assert d5.status.value == "unused" and d5.priority is None
    llm = _audit({"train.py": _BERT_EXAMPLE.replace("bert-base-cased", "meta-llama/Llama-3.2-1B")
                  .replace("AutoModelForSequenceClassification", "AutoModelForCausalLM")}).result("D5")
    assert llm.priority is not None


def test_a_call_of_the_projects_own_freezer_freezes_layers():
    # ``freezer.freeze()`` on the project's ModelFreezer, whose ``freeze`` sets ``param.requires_grad = value`` through a
    # helper (previous rule: unused "all parameters are trained")
    from checks.rules.g_strategy import _FREEZER, _FREEZER_RUN

    r = _audit({"mylib/finetuning.py": _FREEZER, "train.py": _FREEZER_RUN.format(call="freezer.freeze()\n")}).result("G5")
    assert r.status.value == "used" and [(e.path, e.line) for e in r.evidence] == [("train.py", 6)]
    assert _audit({"mylib/finetuning.py": _FREEZER, "train.py": _FREEZER_RUN.format(call="")}).result("G5").status.value == "unused"


def test_a_freeze_call_behind_a_switch_is_not_taken_as_freezing():
    # control: ``if args.freeze_backbone: freezer.freeze()``: the switch decides (read as a freeze key), not the call
    from checks.rules.g_strategy import _FREEZER, _FREEZER_RUN

    run = _FREEZER_RUN.format(call="if args.freeze_backbone:\n    freezer.freeze()\n")
    r = _audit({"mylib/finetuning.py": _FREEZER, "train.py": run}).result("G5")
    assert all(e.line != 7 for e in r.evidence)
