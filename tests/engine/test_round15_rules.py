"""Round 15 (held-out medusa-llm 0.1): rules fixed after its first contact. Each rule test fails on the engine before the fix;
the controls pass on both."""

from __future__ import annotations

from checks.rules.j_inference import _MEDUSA_FILES
from tests.rules_ghj.ghj_util import audit, status


def test_a_models_own_generate_method_in_a_chat_cli_is_inference():
    result, project = audit(_MEDUSA_FILES, "J7")
    assert project.does_inference
    assert result.status.value == "used"


def test_control_the_method_called_in_training_code_is_not_inference():
    files = {k: v for k, v in _MEDUSA_FILES.items() if k != "medusa/inference/cli.py"}
    # the same call from an evaluation callback of the training package: not an inference workload
    files["medusa/train/eval_callback.py"] = (
        "def on_evaluate(model, input_ids):\n    return list(model.medusa_generate(input_ids, max_steps=16))\n")
    _, project = audit(files, "J7")
    assert not project.does_inference


def test_control_step_builders_named_generate_something_are_not_the_loop():
    files = {"medusa/inference/cli.py": "from medusa.model.utils import generate_candidates\n"
                                        "c = generate_candidates(logits, topk)\nb = utils.generate_medusa_buffers(choices)\n"}
    assert status(files, "J1") == "n/a"


def _hook_trainer(log: str) -> dict[str, str]:
    from checks.rules.i_infra import _HOOK_LOGGING_TRAINER

    return {"medusa/train/train.py": _HOOK_LOGGING_TRAINER.replace("{log}", log),
            "pyproject.toml": "[project]\nname = 'medusa-llm'\n\n[project.optional-dependencies]\ntrain = ['wandb']\n"}


def test_self_log_in_an_hf_trainer_subclass_compute_loss_logs_and_reports_every_step():
    files = _hook_trainer("        self.log(log)\n")
    i4, _ = audit(files, "I4")
    assert i4.status.value == "unused"
    assert [(e.path, e.line) for e in i4.evidence] == [("medusa/train/train.py", 15)]
    assert status(files, "I5") == "unused"


def test_self_log_in_a_subclass_of_the_projects_own_trainer_subclass():
    files = _hook_trainer("")
    files["medusa/train/distill.py"] = (
        "from medusa.train.train import CustomizedTrainer\n\n\nclass DistillTrainer(CustomizedTrainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n        loss = model(**inputs).loss\n"
        "        self.log({'distill_loss': loss.item()})\n        return loss\n")
    assert status(files, "I4") == "unused"


def test_control_an_interval_guard_and_lightning_self_log_stay_sane():
    guarded = _hook_trainer("        if self.state.global_step % 100 == 0:\n            self.log(log)\n")
    assert status(guarded, "I4") == "used"
    assert status(guarded, "I5") == "used"
    from checks.rules.i_infra import _LIGHTNING_SELF_LOG

    assert status({"train.py": _LIGHTNING_SELF_LOG}, "I4") == "used"
    assert status({"train.py": _LIGHTNING_SELF_LOG}, "I5") == "used"


def test_readme_torchrun_of_a_package_without_launch_is_ddp_for_e2_and_e3():
    from checks.rules.e_comm import _DOC_TORCHRUN_FILES

    e2, _ = audit(_DOC_TORCHRUN_FILES, "E2")
    assert e2.status.value == "used"
    assert [(e.path, e.line) for e in e2.evidence] == [("README.md", 4)]
    e3, _ = audit(_DOC_TORCHRUN_FILES, "E3")
    assert e3.status.value == "unused" and "no distributed training found" not in e3.detail


def test_control_a_readme_command_handing_fsdp_past_its_shown_text_is_not_ddp():
    from checks.rules.e_comm import _DOC_TORCHRUN_FILES

    flags = "".join(f"    --option_{i} value_{i} \\\n" for i in range(30))  # the shown command text stops at 300 characters
    readme = _DOC_TORCHRUN_FILES["README.md"].replace("    --logging_steps 1\n", flags + '    --fsdp "full_shard auto_wrap"\n')
    e2, _ = audit({**_DOC_TORCHRUN_FILES, "README.md": readme}, "E2")
    # not DDP's bucketed overlap: the documented run shards with FSDP (HF's default NO_PREFETCH), cited at the --fsdp line
    assert e2.status.value == "partial" and "DDP" not in (e2.detail or "")
    assert [(e.path, e.line) for e in e2.evidence] == [("README.md", 40)]


def test_control_a_shipped_single_process_launch_keeps_the_readme_out():
    from checks.rules.e_comm import _DOC_TORCHRUN_FILES

    files = {**_DOC_TORCHRUN_FILES, "scripts/train.sh": "python medusa/train/train.py --output_dir out\n"}
    assert status(files, "E2") == "n/a"  # one process: not judged (round 68), not the README's torchrun run


def test_control_a_readme_command_whose_script_is_not_shipped_is_not_judged():
    from checks.rules.e_comm import _DOC_TORCHRUN_FILES

    # OLMo's README runs scripts/train.py, which its sdist leaves out: how it wraps the model is not visible
    files = {"README.md": _DOC_TORCHRUN_FILES["README.md"].replace("medusa/train/train.py", "scripts/train.py"),
             "olmo/config.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass TrainConfig:\n    seed: int = 6198\n"}
    e2, _ = audit(files, "E2")
    # (round 40: the command starts eight processes, so "no distributed training found" would be false; how they communicate
    # is the unshipped script's)
    assert e2.status.value == "n/a" and "not judged" in e2.detail and "README.md" in e2.detail, (e2.status, e2.detail)

def test_kv_cache_moves_at_decoding_are_not_async_batch_copies():
    from checks.rules.f_data import _KV_CACHE_COPIES

    f11, _ = audit(_KV_CACHE_COPIES, "F11")
    assert f11.status.value == "unused"
    assert not f11.evidence


def test_control_a_loader_helper_copying_batches_non_blocking_still_counts():
    from checks.rules.f_data import _KV_CACHE_COPIES

    files = {**_KV_CACHE_COPIES, "medusa/train/loader.py": (
        "def to_device(batch, device):\n    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}\n")}
    f11, _ = audit(files, "F11")
    assert f11.status.value == "partial"
    assert [e.path for e in f11.evidence] == ["medusa/train/loader.py"]


def _sync_reasons(files: dict[str, str]) -> list[str]:
    from checks.engine import audit_files

    audit = audit_files([(k, v.encode()) for k, v in files.items()])
    return [r for r in audit.project.bottleneck_reasons if "synchronisation point" in r]


def test_step_zero_counts_item_syncs_in_an_hf_trainer_subclass_compute_loss():
    files = _hook_trainer("        self.log(log)\n")
    reasons = _sync_reasons(files)
    assert len(reasons) == 1 and "medusa/train/train.py:14" in reasons[0]


def test_control_item_in_a_plain_classs_compute_loss_is_not_a_step_sync():
    files = _hook_trainer("        self.log(log)\n")
    files["medusa/train/train.py"] = files["medusa/train/train.py"].replace("class CustomizedTrainer(Trainer):",
                                                                            "class LossHelper:")
    assert _sync_reasons(files) == []


def test_control_a_library_of_several_trainer_subclasses_is_not_one_run():
    files = _hook_trainer("        self.log(log)\n")
    files["medusa/train/dpo.py"] = (
        "from transformers import Trainer\n\n\nclass DPOTrainer(Trainer):\n"
        "    def training_step(self, model, inputs):\n        loss = model(**inputs).loss\n"
        "        self.stats.append(loss.item())\n        return loss\n")
    assert _sync_reasons(files) == []


def test_f5_does_not_cite_a_kv_caches_batch_size():
    from checks.rules.f_data import _KV_CACHE_COPIES

    files = {**_KV_CACHE_COPIES, "medusa/model/kv_cache.py": _KV_CACHE_COPIES["medusa/model/kv_cache.py"] + (
        "\n\ndef initialize_past_key_values(model):\n    config = model.config\n    batch_size = 1\n"
        "    return torch.zeros(config.num_hidden_layers * 2, batch_size, config.num_attention_heads)\n")}
    f5, _ = audit(files, "F5")
    assert f5.status.value == "used"
    assert [(e.path, e.key) for e in f5.evidence] == [("medusa/train/train.py", "per_device_train_batch_size")]
