"""Round 12 of issue #9 (ludwig): rules fixed after the held-out first contact, each with the code shape it was wrong
on; every test here fails on the rule before the fix."""

from __future__ import annotations

from checks.engine import audit_files
from checks.rules.c_memory import _schema_gc
from checks.rules.d_compute import _schema_compile
from checks.rules.f_data import _ray_scaling


def _results(files: dict[str, str]):
    audit = audit_files((p, t.encode()) for p, t in files.items())
    return {r.id: r for r in audit.results}, audit.facts


def test_a_schema_helper_fields_default_keyword_is_the_fields_default():
    _, facts = _results(_schema_gc("False"))
    got = {(s.key, s.value, s.source) for s in facts.settings("enable_gradient_checkpointing")}
    assert got == {("ECDTrainerConfig.enable_gradient_checkpointing", False, "field-default")}
    assert [s.value for s in facts.settings("compile")] == [False]


def test_checkpointing_and_compile_under_schema_fields_that_default_off_are_not_in_effect():
    res, _ = _results(_schema_gc("False"))
    assert res["C3"].status.value == "unused", res["C3"].detail
    assert res["D2"].status.value == "unused", res["D2"].detail
    on, _ = _results(_schema_gc("True"))
    assert on["C3"].status.value == "used", on["C3"].detail


def test_compile_schema_default_true_is_used():
    res, _ = _results(_schema_compile("True"))
    assert res["D2"].status.value == "used", res["D2"].detail
    res, _ = _results(_schema_compile("False"))
    assert res["D2"].status.value == "unused", res["D2"].detail


def test_a_ray_scaling_configs_num_workers_is_not_a_loaders_worker_count():
    res, _ = _results(_ray_scaling('"use_gpu": use_gpu,\n        "resources_per_worker": {"GPU": 1},\n'))
    assert res["F1"].status.value == "unused", res["F1"].detail
    assert not res["F1"].evidence
    assert res["F2"].status.value != "used", res["F2"].detail
    res, _ = _results(_ray_scaling('"batch_size": 32,\n'))
    assert res["F1"].status.value == "used", res["F1"].detail


_LOOP = ("import torch\n\n\ndef train(model, batches, optimizer):\n    for batch in batches:\n"
         "        loss = model(batch).mean()\n        loss.backward()\n        optimizer.step()\n        optimizer.zero_grad()\n")


def _combiner(vocab: str) -> dict[str, str]:
    """A tabular model's AutoML default (Ludwig ``automl/defaults/combiner/ft_transformer_config.yaml``): transformer
    dimensions of a feature combiner with no vocabulary; with ``vocab`` it is a (tiny) language model's config."""
    return {"mylib/train.py": _LOOP,
            "mylib/automl/defaults/combiner/ft_transformer_config.yaml": (
                "combiner:\n  type: ft_transformer\n  num_layers: 3\n  num_heads: 8\n  hidden_size: 64\n" + vocab)}


def test_dimensions_without_a_vocabulary_are_no_small_language_model_for_step_zero():
    audit = audit_files((p, t.encode()) for p, t in _combiner("").items())
    assert not [r for r in audit.project.bottleneck_reasons if "a small model" in r], audit.project.bottleneck_reasons
    audit = audit_files((p, t.encode()) for p, t in _combiner("  vocab_size: 32000\n").items())
    assert [r for r in audit.project.bottleneck_reasons if "a small model" in r], audit.project.bottleneck_reasons


def test_a_summary_method_called_with_the_step_counter_after_the_own_step_runs_every_step():
    from checks.rules.i_infra import _own_step_summary

    res, _ = _results(_own_step_summary(None))
    assert res["I5"].status.value == "unused", res["I5"].detail
    assert ("mylib/trainers/trainer.py", 10) in [(e.path, e.line) for e in res["I5"].evidence]
    res, _ = _results(_own_step_summary(50))
    assert res["I5"].status.value == "used", res["I5"].detail
