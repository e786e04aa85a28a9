"""Rules of round 17 of issue #9 (liger-kernel, a Triton kernel library shipping HF/Lightning/Megatron training examples):
each rule test fails on the rule before it; each control passes on both."""

from __future__ import annotations

from checks.rules.d_compute import _CHUNK_CLOSURE
from checks.rules.f_data import _MEGATRON_DEMO

from .claims import audit as _audit

_PATCH = (
    "from transformers.models.mixtral import modeling_mixtral\n\nfrom mylib.model.mixtral import lce_forward\n\n\n"
    "def apply_kernels_to_mixtral(fused_linear_cross_entropy=True, model=None):\n"
    "    if fused_linear_cross_entropy:\n        modeling_mixtral.MixtralForCausalLM.forward = lce_forward\n"
)
_RUN = (
    "import transformers\n\nmodel = transformers.AutoModelForCausalLM.from_pretrained('meta-llama/Meta-Llama-3-8B')\n"
    "trainer = transformers.Trainer(model=model, args=args, train_dataset=ds)\ntrainer.train()\n"
)


def test_an_moe_class_only_patched_in_place_is_no_moe_model():
    # a kernel library's ``modeling_mixtral.MixtralForCausalLM.forward = lce_forward`` (one per-family patch of many) and a
    # dense Llama run: the previous rule said ``moe: true``, A7 "no expert parallel configuration found" and step zero
    # "communication-bound: mixture-of-experts model on several GPUs"
    a = _audit({"mylib/monkey_patch.py": _PATCH, "examples/train.py": _RUN})
    assert a.project.moe is False
    assert a.result("A7").status.value == "n/a"
    assert not any("mixture-of-experts" in r for r in a.project.bottleneck_reasons)


def test_control_an_moe_model_the_run_builds_is_moe():
    run = ("from transformers import MixtralConfig, MixtralForCausalLM\n\nmodel = MixtralForCausalLM(MixtralConfig())\n"
           "trainer = Trainer(model=model, args=args, train_dataset=ds)\ntrainer.train()\n")
    a = _audit({"mylib/monkey_patch.py": _PATCH, "train.py": run})
    assert a.project.moe is True
    assert a.result("A7").status.value == "unused"


def test_a_megatron_builder_over_mock_data_packs_nothing():
    a = _audit({"examples/megatron/run_demo.py": _MEGATRON_DEMO.format(cls="MockGPTDataset")})
    f7 = a.result("F7")
    assert f7.status.value == "unused" and f7.evidence == []


def test_control_the_same_builder_over_real_gpt_data_packs():
    f7 = _audit({"examples/megatron/run_demo.py": _MEGATRON_DEMO.format(cls="GPTDataset")}).result("F7")
    assert f7.status.value == "used"
    assert [(e.path, e.line) for e in f7.evidence] == [("examples/megatron/run_demo.py", 6)]


def test_a_compiled_closure_of_a_chunked_loss_is_a_helper_not_the_model():
    d2 = _audit({"mylib/chunked_loss/fused_linear_preference.py": _CHUNK_CLOSURE.format(name="fused_fwd_bwd")}).result("D2")
    assert d2.status.value == "partial"
    assert "not the model" in d2.detail
    assert [(e.path, e.line) for e in d2.evidence] == [("mylib/chunked_loss/fused_linear_preference.py", 11)]


def test_control_a_compiled_training_step_closure_is_the_step_compiled():
    d2 = _audit({"mylib/train.py": _CHUNK_CLOSURE.format(name="train_step")}).result("D2")
    assert d2.status.value == "used"
