"""Round 14 (held-out SpecForge): USP sequence-parallel sizes (``sp_ulysses_size``/``sp_ring_size``) left at 1 gate the
Ulysses/ring attention code off, and an FSDP wrap whose keywords come through ``**fsdp_kwargs`` is not called FULL_SHARD
(FSDP's default holds only when the keyword is absent)."""

from __future__ import annotations

from checks.rules.a_parallelism import CP_NAMES, _fsdp_kwargs, _usp_lib
from tests.rules_ghj.ghj_util import audit


def test_usp_sizes_are_sequence_parallel_sizes():
    assert {"sp_ulysses_size", "sp_ring_size", "sp_ulysses_degree", "sp_ring_degree"} <= set(CP_NAMES)


def test_usp_code_behind_sizes_of_one_is_off():
    result, _ = audit(_usp_lib(), "A6")
    assert result.status.value == "unused"
    assert result.detail == "sequence parallelism is off"
    assert {(e.path, e.line) for e in result.evidence} == {("mylib/config.py", 7), ("mylib/config.py", 8)}


def test_a_recipe_raising_the_usp_sizes_is_sequence_parallel():
    result, _ = audit(_usp_lib("training:\n  attention_backend: usp\n  sp_ulysses_size: 4\n  sp_ring_size: 2\n"), "A6")
    assert result.status.value == "used"
    assert result.values["cp_size"] == 4


def test_fsdp_kwargs_strategy_is_the_configured_default_not_full_shard():
    result, _ = audit(_fsdp_kwargs("sharding"), "A2")
    assert result.status.value == "used"
    assert "FULL_SHARD" not in result.detail
    assert result.detail == "FSDP sharding (SHARD_GRAD_OP, the default at mylib/backend.py:8) via FullyShardedDataParallel()"
    assert result.values["sharding_strategy"] == "SHARD_GRAD_OP"


def test_fsdp_kwargs_dict_naming_no_shard_is_partial():
    result, _ = audit(_fsdp_kwargs("ShardingStrategy.NO_SHARD"), "A2")
    assert result.status.value == "partial"


def test_fsdp_kwargs_without_any_strategy_setting_is_not_resolved():
    files = _fsdp_kwargs("sharding")
    files["mylib/backend.py"] = files["mylib/backend.py"].replace("sharding_strategy: str = 'SHARD_GRAD_OP'", "world_size: int = 1")
    result, _ = audit(files, "A2")
    assert result.status.value == "used"
    assert result.detail == "FSDP sharding (not resolved: passed through **kwargs) via FullyShardedDataParallel()"
    assert result.values["sharding_strategy"] is None


def test_explicit_keyword_and_plain_wrap_keep_their_reading():
    plain = {"train.py": "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nmodel = FSDP(model)\n"}
    assert audit(plain, "A2")[0].detail == "FSDP sharding (FULL_SHARD) via FullyShardedDataParallel()"
    explicit = {"train.py": ("from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy\n"
                             "model = FSDP(model, sharding_strategy=ShardingStrategy.HYBRID_SHARD, **extra)\n")}
    assert audit(explicit, "A2")[0].detail == "FSDP sharding (HYBRID_SHARD) via FullyShardedDataParallel()"
