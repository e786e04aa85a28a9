"""Rules of round 20 of issue #9 (open-flamingo 2.0.1: an OpenCLIP vision encoder, a Perceiver resampler and gated
cross-attention in a frozen HF LM, trained by its own DDP loop over WebDataset shards): each rule test fails on the rule
before it; each control passes on both."""

from __future__ import annotations

from checks.facts import extract_file
from checks.model import Status
from checks.rules.c_memory import _precision_helper
from checks.rules.h_multimodal import _FLAMINGO_FACTORY

from .claims import audit as _audit


def test_an_elif_or_test_keeps_its_parentheses_in_the_joined_guard():
    # previous extractor: ``not (p == 'amp') and p == 'a' or p == 'b'``, which reads ``(... and p == 'a') or p == 'b'``
    ff = extract_file("u.py", (
        b"def pick(p):\n    if p == 'amp':\n        return f()\n    elif p == 'a' or p == 'b':\n        return g()\n"
    ))
    guards = {c.short: c.guard for c in ff.calls}
    assert guards["g"] == "not (p == 'amp') and (p == 'a' or p == 'b')"
    assert guards["f"] == "p == 'amp'"


def test_control_a_lone_or_test_is_recorded_as_written():
    ff = extract_file("u.py", b"if a or b:\n    f()\n")
    assert ff.calls[0].guard == "a or b"


def test_bf16_autocast_under_an_or_of_spellings_is_off_when_the_precision_flag_defaults_to_fp32():
    r = _audit(_precision_helper("fp32")).result("C1")
    assert r.status is Status.UNUSED
    assert any(e.path == "train/train.py" for e in r.evidence)


def test_control_the_same_helper_with_a_bf16_default_is_mixed_precision():
    assert _audit(_precision_helper("amp_bf16")).result("C1").status is Status.USED


def test_an_open_clip_image_tower_makes_the_project_multimodal_and_a_whole_model_freeze_freezes_it():
    files = {"open_flamingo/src/factory.py": _FLAMINGO_FACTORY.format(
        unfreeze="model.perceiver.requires_grad_(True)\n    model.lang_encoder.gated_cross_attn_layers.requires_grad_(True)\n")}
    audit = _audit(files)
    assert audit.project.multimodal and audit.project.model_type == "MLLM"
    r = audit.result("H1")
    assert r.status is Status.USED
    assert [(e.path, e.line) for e in r.evidence] == [("open_flamingo/src/factory.py", 11)]


def test_control_a_whole_model_freeze_that_unfreezes_the_vision_encoder_does_not_freeze_it():
    files = {"open_flamingo/src/factory.py": _FLAMINGO_FACTORY.format(
        unfreeze="model.perceiver.requires_grad_(True)\n    model.vision_encoder.requires_grad_(True)\n")}
    assert _audit(files).result("H1").status is Status.UNUSED


def test_control_a_whole_text_model_freeze_is_not_judged_for_a_vision_encoder():
    files = {"train.py": "from transformers import AutoModelForCausalLM\n\ndef build():\n"
                         "    model = AutoModelForCausalLM.from_pretrained('gpt2')\n    model.requires_grad_(False)\n"
                         "    model.lm_head.requires_grad_(True)\n    return model\n"}
    assert _audit(files).result("H1").status is Status.NA


def test_a_tqdm_loop_over_batches_whose_starting_count_names_the_epoch_is_a_step_loop():
    # previous rule: any loop whose iterable text contains "epoch" was taken for an epoch loop (``initial=epoch * n``)
    from checks.rules.i_infra import _epoch_loop
    assert not _epoch_loop("tqdm(enumerate(zip(laion_loader, mmc4_loader)), disable=args.rank != 0, initial=epoch * n)")


def test_control_an_epoch_range_is_still_an_epoch_loop():
    from checks.rules.i_infra import _epoch_loop
    assert _epoch_loop("range(resume_from_epoch, args.num_epochs)")
    assert _epoch_loop("tqdm(range(args.num_train_epochs), desc='Epoch')")


def test_webdataset_map_stages_tokenize_per_sample_in_the_loader():
    # previous rule: ``wds.map(preprocess_fn)`` read as a cached ``datasets.map`` ("tokenized ahead of training and saved")
    from checks.rules.f_data import _WDS_PIPELINE
    r = _audit(_WDS_PIPELINE).result("F6")
    assert r.status is Status.UNUSED
    assert r.detail.startswith("tokenization runs per sample in the data loader")


def test_a_parenthesized_or_of_rank_and_flag_checks_still_reports_every_step():
    # llama-recipes: ``if wandb_run: if not train_config.enable_fsdp or rank==0: wandb_run.log(...)`` joined, with the new
    # parentheses, as ``wandb_run and (not train_config.enable_fsdp or rank==0)``: still no interval
    from checks.rules.i_infra import _trivial_condition
    assert _trivial_condition("(not train_config.enable_fsdp ")
    assert _trivial_condition(" rank==0)")


def test_manual_fsdp_units_under_enable_wrap_shard_when_the_launch_passes_the_flag():
    # previous rule: ``wrap()`` inside ``enable_wrap(wrapper_cls=FSDP, ...)`` was no FSDP site ("FSDP is imported but no
    # model is wrapped")
    from checks.rules.a_parallelism import manual_fsdp_wrap
    audit = _audit(manual_fsdp_wrap(True))
    assert audit.result("A2").status is Status.USED
    assert audit.result("B5").status is Status.USED


def test_control_the_same_units_behind_an_fsdp_flag_the_launch_does_not_pass_are_off_for_a2_and_b5():
    from checks.rules.a_parallelism import manual_fsdp_wrap
    audit = _audit(manual_fsdp_wrap(False))
    for check in ("A2", "B5"):
        r = audit.result(check)
        assert r.status is Status.UNUSED
        assert r.detail.startswith("FSDP wrapping code exists behind a switch that is off: --fsdp = False")
