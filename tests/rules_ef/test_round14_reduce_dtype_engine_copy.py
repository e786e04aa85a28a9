"""Round 14 (held-out SpecForge): FSDP mixed precision with a 16-bit ``param_dtype`` and no ``reduce_dtype`` reduces gradients in
that dtype (PyTorch's documented fallback): E3 partial. A non_blocking copy of an inference engine's request batch (a
hidden-state capture on SGLang's model runner, no training step in the file) is not the training input pipeline: not F11."""

from __future__ import annotations

from checks.rules.e_comm import _FSDP_CONFIGURED_DTYPE
from checks.rules.f_data import _ENGINE_CAPTURE
from tests.rules_ghj.ghj_util import audit

_FSDP = "import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision\n"


def _e3(mp: str):
    return audit({"train.py": _FSDP + f"mp = {mp}\nmodel = FSDP(model, mixed_precision=mp)\n"}, "E3")[0]


def test_no_reduce_dtype_reduces_in_the_16_bit_param_dtype():
    r = _e3("MixedPrecision(param_dtype=torch.bfloat16, buffer_dtype=torch.float32)")
    assert r.status.value == "partial"
    assert [(e.path, e.line) for e in r.evidence] == [("train.py", 3)]
    assert r.evidence[0].value == "bfloat16 (no reduce_dtype: gradients reduced in it)"


def test_positional_param_dtype_and_fp16():
    assert _e3("MixedPrecision(torch.float16)").status.value == "partial"


def test_an_explicit_fp32_reduce_or_fp32_params_is_not_low_precision():
    assert _e3("MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)").status.value == "unused"
    assert _e3("MixedPrecision(param_dtype=torch.float32)").status.value == "unused"
    assert _e3("MixedPrecision(torch.bfloat16, torch.float32)").status.value == "unused"
    assert _e3("MixedPrecision(**mp_kwargs)").status.value == "unused"


def test_param_dtype_read_from_a_config_default():
    r = audit(_FSDP_CONFIGURED_DTYPE, "E3")[0]
    assert r.status.value == "partial"
    assert [(e.path, e.line) for e in r.evidence] == [("mylib/backend.py", 18)]


def test_param_dtype_of_a_config_whose_settings_disagree_is_unknown():
    files = {**_FSDP_CONFIGURED_DTYPE, "mylib/presets.py": (
        "from dataclasses import dataclass\n\nimport torch\n\n\n@dataclass\nclass FullPrecisionPreset:\n"
        "    param_dtype: torch.dtype = torch.float32\n")}
    assert audit(files, "E3")[0].status.value == "unused"


def test_engine_request_copy_is_not_the_training_input_pipeline():
    r = audit(_ENGINE_CAPTURE, "F11")[0]
    assert r.status.value == "unused"
    assert r.values["non_blocking"] is False


def test_the_same_copy_in_a_file_that_trains_still_counts():
    files = {**_ENGINE_CAPTURE, "pkg/capture.py": _ENGINE_CAPTURE["pkg/capture.py"] + (
        "\n\ndef train_on_capture(model, batch, optimizer):\n    loss = model(batch)\n    loss.backward()\n    optimizer.step()\n")}
    r = audit(files, "F11")[0]
    assert r.status.value == "partial"
    assert [(e.path, e.line) for e in r.evidence] == [("pkg/capture.py", 13)]
