"""Round 13 (held-out Colossal-AI): Triton kernels that only the project's inference engine imports are not training kernels.

colossalai 0.5.0 ships 21 ``@triton.jit`` kernels in ``colossalai/kernel/triton/`` (paged context attention, flash decoding,
KV-cache copy, RMSNorm, rotary); only ``colossalai/inference/...`` and ``colossalai/legacy/inference/...`` import them, and its
training API (Booster + plugins) runs none. D3 said ``used`` ("21 Triton kernel(s)"); it now says unused with the importers
cited. Kernels that anything else imports, or that nothing imports, still count.
"""

from __future__ import annotations

from checks.rules.d_compute import _SERVED_KERNELS
from tests.rules_ghj.ghj_util import audit


def test_kernels_only_the_inference_engine_imports_are_not_training_kernels():
    r, _ = audit(_SERVED_KERNELS, "D3")
    assert r.status.value == "unused"  # was used: "1 Triton kernel(s): _flash_decoding_fwd_kernel"
    assert "serve only its inference code" in r.detail
    assert ("mylib/inference/modeling/backends/attention_backend.py", 1) in [(e.path, e.line) for e in r.evidence]


def test_a_training_module_importing_them_keeps_them_in_use():
    files = {**_SERVED_KERNELS, "mylib/shardformer/layer/norm.py": "from mylib.kernel.triton import flash_decoding_attention\n"}
    assert audit(files, "D3")[0].status.value == "used"


def test_kernels_nothing_imports_still_count():
    files = {k: v for k, v in _SERVED_KERNELS.items() if "inference" not in k}
    assert audit(files, "D3")[0].status.value == "used"
