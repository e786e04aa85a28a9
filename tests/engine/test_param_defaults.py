"""Round 13 (composer): a branch behind a parameter left at its default is off. Each test names the rule it pins."""

from __future__ import annotations

from .claims import audit as _audit

_TRAINER = (
    "from typing import Any, Optional\n\nimport torch\n\n\nclass Trainer:\n"
    "    def __init__(self, *, model, train_dataloader=None, compile_config: Optional[dict[str, Any]] = None):\n"
    "        if compile_config is not None:\n"
    "            model = torch.compile(model, **compile_config)\n"
    "        self.model = model\n\n"
    "    def fit(self):\n        for batch in self.train_dataloader:\n            self.model(batch).loss.backward()\n"
)


def test_the_facts_record_none_and_false_parameter_defaults_with_the_function_span():
    a = _audit({"lib/trainer.py": _TRAINER})
    p = a.facts.param_default("lib/trainer.py", 9, "compile_config")
    assert p is not None and p.value is None and p.owner == "Trainer" and p.index == -1 and not p.rebound
    assert (p.line, p.start, p.end) == (7, 7, 10)
    assert a.facts.param_default("lib/trainer.py", 9, "model") is None  # no default: not recorded


def test_a_constructor_parameter_defaulting_to_none_that_nobody_passes_switches_its_branch_off():
    # fails on the rule before round 13: the guard ``compile_config is not None`` was unknown, and unknown read as on
    r = _audit({"lib/trainer.py": _TRAINER}).result("D2")
    assert r.status.value == "unused"
    assert any(e.path == "lib/trainer.py" and e.line == 7 for e in r.evidence)


def test_a_construction_that_passes_the_parameter_keeps_the_branch():
    files = {"lib/trainer.py": _TRAINER,
             "train.py": "from lib.trainer import Trainer\n\nTrainer(model=model, train_dataloader=loader, compile_config={}).fit()\n"}
    assert _audit(files).result("D2").status.value == "used"


def test_a_construction_through_kwargs_keeps_the_branch_unknown():
    files = {"lib/trainer.py": _TRAINER, "train.py": "from lib.trainer import Trainer\n\nTrainer(**cfg).fit()\n"}
    assert _audit(files).result("D2").status.value == "used"


def test_a_parameter_the_body_rebinds_is_not_its_default():
    src = _TRAINER.replace("        if compile_config is not None:\n",
                           "        compile_config = compile_config or {}\n        if compile_config is not None:\n")
    a = _audit({"lib/trainer.py": src})
    assert a.facts.param_default("lib/trainer.py", 10, "compile_config").rebound
    assert a.result("D2").status.value == "used"


def test_an_attribute_set_on_the_parameter_does_not_rebind_it():
    src = ("from peft import get_peft_model\n\n\nclass Wrapper:\n"
           "    def __init__(self, model, peft_config=None):\n"
           "        if peft_config is not None:\n            peft_config.peft_type = peft_config.peft_type.upper()\n"
           "            model = get_peft_model(model, peft_config)\n        self.model = model\n")
    a = _audit({"lib/wrapper.py": src})
    assert not a.facts.param_default("lib/wrapper.py", 8, "peft_config").rebound


def test_a_plain_function_nobody_calls_is_an_entry_point_whose_arguments_are_unknown():
    src = ("import torch\n\n\ndef main(model, compile=False):\n    if compile:\n        model = torch.compile(model)\n"
           "    model(x).loss.backward()\n")
    assert _audit({"train.py": src}).result("D2").status.value == "used"
    called = src + "\n\nif __name__ == '__main__':\n    main(build())\n"
    assert _audit({"train.py": called}).result("D2").status.value == "unused"
    positional = src + "\n\nif __name__ == '__main__':\n    main(build(), True)\n"
    assert _audit({"train.py": positional}).result("D2").status.value == "used"


def test_a_setting_of_the_same_name_anywhere_leaves_the_parameter_to_the_other_rules():
    src = ("import torch\n\n\ndef main(model, compile=False):\n    if compile:\n        model = torch.compile(model)\n"
           "    model(x).loss.backward()\n\n\nmain(build())\n")
    assert _audit({"train.py": src, "configs/run.yaml": "compile: true\n"}).result("D2").status.value == "used"


def test_a_call_of_another_function_of_the_same_name_is_not_a_caller():
    # litgpt: ``chat/base.py`` ``main(..., compile: bool = False)`` is a CLI command handed on as ``{"chat": chat_fn}``;
    # ``main(fabric, ...)`` calls elsewhere call other functions named main
    chat = ("import torch\n\n\ndef next_token(model, x):\n    return model(x)\n\n\ndef main(checkpoint_dir, compile: bool = False):\n"
            "    global next_token\n    if compile:\n        next_token = torch.compile(next_token, mode='reduce-overhead')\n"
            "    for _ in range(10):\n        next_token(model, x)\n")
    other = "def main(fabric, cfg):\n    fabric.backward(loss)\n\n\ndef setup():\n    main(fabric, cfg)\n"
    cli = "from pkg.chat.base import main as chat_fn\n\nPARSER_DATA = {'chat': chat_fn}\n"
    a = _audit({"pkg/chat/base.py": chat, "pkg/pretrain.py": other, "pkg/__main__.py": cli})
    c = next(c for c in a.facts.calls("torch.compile"))
    from checks.rules._helpers import param_default_off
    assert param_default_off(a.facts, c) == []
    # without the CLI table and with only the unrelated call: still no caller of this main, so still unknown
    a = _audit({"pkg/chat/base.py": chat, "pkg/pretrain.py": other})
    assert param_default_off(a.facts, next(c for c in a.facts.calls("torch.compile"))) == []


# -- a constructor parameter copied onto the instance (``self.pack = pack``) and read in another method ---------------

_STREAM = (
    "def concatenate_and_group_texts(encoding, seq_len):\n    return [encoding]\n\n\n"
    "class TokenSeqDataset:\n    def __init__(self, doc_cache, seq_len: int, pack: bool = False):\n"
    "        self.doc_cache = doc_cache\n        self.seq_len = seq_len\n        self.pack = pack\n\n"
    "    def __iter__(self):\n        for doc in self.doc_cache:\n            if self.pack:\n"
    "                yield from concatenate_and_group_texts(doc, self.seq_len)\n            else:\n                yield doc\n"
)
_BUILD = ("from mylib.data.text import TokenSeqDataset\n\n\ndef main(cache):\n    ds = TokenSeqDataset(cache, seq_len=1024{extra})\n"
          "    for batch in ds:\n        loss = model(batch).loss\n        loss.backward()\n")


def test_an_attribute_copied_from_a_constructor_default_that_no_construction_passes_switches_its_branch_off():
    r = _audit({"mylib/data/text.py": _STREAM, "mylib/train.py": _BUILD.format(extra="")}).result("F7")
    assert r.status.value == "unused", r.detail


def test_a_construction_that_passes_the_copied_parameter_keeps_the_branch():
    r = _audit({"mylib/data/text.py": _STREAM, "mylib/train.py": _BUILD.format(extra=", pack=True")}).result("F7")
    assert r.status.value == "used", r.detail


def test_an_attribute_another_method_also_sets_is_not_the_constructor_default():
    stream = _STREAM.replace("    def __iter__(self):", "    def enable_packing(self):\n        self.pack = True\n\n    def __iter__(self):")
    r = _audit({"mylib/data/text.py": stream, "mylib/train.py": _BUILD.format(extra="")}).result("F7")
    assert r.status.value == "used", r.detail
