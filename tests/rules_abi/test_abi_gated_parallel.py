"""Parallelism/FP8 code that a library ships but runs only when a config field, None by default, is given (issue 9,
round 8: OLMo-core's ``dp_config``/``tp_config``/``float8_config``): the implementation is not the practice."""

from __future__ import annotations

from checks.base import all_checks
from checks.engine import AuditOptions, parse_files, run_checks, split_facts
from checks.model import Status
from checks.project import detect_project
from checks.rules.a_parallelism import _parallel_lib
from checks.rules.c_memory import _float8_lib


def _run(files: dict[str, str], *ids: str) -> dict:
    facts, _, roles = split_facts(parse_files((p, t.encode()) for p, t in files.items()))
    project = detect_project(facts, training=[p for p, r in roles.by_path.items() if r == "training"])
    results, _ = run_checks(facts, project, AuditOptions(), [c for c in all_checks() if c.id in ids])
    return {r.id: r for r in results}


def test_fsdp_and_tp_methods_under_none_default_configs_are_not_used() -> None:
    res = _run(_parallel_lib(), "A2", "A4")
    for cid, field in (("A2", "dp_config"), ("A4", "tp_config")):
        r = res[cid]
        assert r.status == Status.UNUSED, (cid, r.detail)  # was used: fully_shard / parallelize_module counted as use
        assert "behind a switch that is off" in r.detail and f"TransformerTrainModuleConfig.{field} = None" in r.detail
        assert r.evidence and r.evidence[0].path == "mylib/train/train_module/transformer/config.py"


def test_a_builder_that_passes_the_config_turns_them_on() -> None:
    res = _run(_parallel_lib(", dp_config=DataParallelConfig(name='fsdp'), tp_config=DataParallelConfig(name='tp')"), "A2", "A4")
    assert res["A2"].status == Status.USED and res["A4"].status == Status.USED


def test_fp8_conversion_two_calls_below_a_none_default_switch_is_not_used() -> None:
    # convert_to_float8_training -> Float8Config.apply_float8_linear <- Transformer.apply_fp8 <- `if float8_config is not None`
    assert _run(_float8_lib(""), "C2")["C2"].status == Status.UNUSED
    assert _run(_float8_lib(", float8_config=Float8Config(enabled=True)"), "C2")["C2"].status == Status.USED


def test_autocast_under_a_none_default_precision_and_kernel_operand_casts_are_not_mixed_precision() -> None:
    from checks.rules.c_memory import _autocast_lib

    r = _run(_autocast_lib(""), "C1")["C1"]
    assert r.status == Status.UNUSED, r.detail  # was used: the gated autocast and the gmm operand casts
    assert "autocast_precision = None" in r.detail
    assert not any(e.path == "mylib/nn/moe/mlp.py" for e in r.evidence)
    r = _run(_autocast_lib(", autocast_precision=DType.bfloat16"), "C1")["C1"]
    assert r.status == Status.USED and [e.path for e in r.evidence] == ["mylib/train/train_module/transformer/train_module.py"]


def test_ring_attention_behind_a_state_flag_only_a_switched_off_method_sets_is_not_used() -> None:
    # dispatch_ring_flash_attn under `if self.cp_enabled:`; `_cp_enabled = False` in __init__, True only in apply_cp,
    # which parallelize_model calls only when cp_config (None by default) is given
    from checks.rules.a_parallelism import _ring_lib

    r = _run(_ring_lib(""), "A6")["A6"]
    assert r.status == Status.UNUSED, r.detail  # was used: the ring-flash-attn call counted as context parallelism
    assert "TransformerTrainModuleConfig.cp_config = None" in r.detail
    assert _run(_ring_lib(", cp_config=ContextParallelConfig(degree=2)"), "A6")["A6"].status == Status.USED


def test_pipeline_stages_built_only_by_a_module_constructed_under_a_none_default_switch_are_not_used() -> None:
    # PipelineStage <- build_stage <- split_model <- TransformerPipelineTrainModule.__init__ <- its construction under
    # `if self.pp_config is not None:`; the chain used to stop at __init__ (its callers are the class's constructions)
    from checks.rules.a_parallelism import _pipeline_lib

    r = _run(_pipeline_lib(""), "A5")["A5"]
    assert r.status == Status.UNUSED, r.detail
    assert "TransformerTrainModuleConfig.pp_config = None" in r.detail
    assert _run(_pipeline_lib(", pp_config=TransformerPipelineParallelConfig(degree=2)"), "A5")["A5"].status == Status.USED
