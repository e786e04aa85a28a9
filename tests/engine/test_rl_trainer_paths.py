"""An RL post-training trainer read as its default run does it (round 10 of issue #9, skyrl-train): the loop over the prompt
loader is the training-step loop, and a LoRA path whose rank comes from the Hydra config by its full key path is off."""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status
from checks.rules.i_infra import _RL_CONFIG, _RL_REPORT, _RL_REPORT_SPACED, _RL_TRAINER


def _audit(files: dict[str, str]):
    audit = audit_files((p, t.encode()) for p, t in files.items())
    return {r.id: r for r in audit.results}


def _rl(ckpt: int, report: str) -> dict[str, str]:
    return {"myrl/config/ppo_base_config.yaml": _RL_CONFIG.format(ckpt=ckpt), "myrl/trainer.py": _RL_TRAINER.format(report=report)}


def test_tracker_fed_after_every_update_of_the_prompt_loop_is_too_frequent():
    r = _audit(_rl(100, _RL_REPORT))["I5"]
    assert r.status == Status.UNUSED and "every step" in r.detail
    assert any(e.path == "myrl/trainer.py" and e.line == 19 for e in r.evidence)


def test_tracker_fed_every_20_updates_is_sane():
    assert _audit(_rl(100, _RL_REPORT_SPACED))["I5"].status == Status.USED


def test_checkpoint_every_ckpt_interval_steps_of_the_prompt_loop():
    r = _audit(_rl(10, ""))["I3"]
    assert r.status == Status.UNUSED and "every 10 steps" in r.detail
    assert any(e.path == "myrl/config/ppo_base_config.yaml" and e.line == 2 for e in r.evidence)
    assert _audit(_rl(100, ""))["I3"].status == Status.USED


def test_a_loop_over_a_loader_that_is_not_the_training_loader_is_no_step_loop():
    src = _RL_TRAINER.format(report=_RL_REPORT).replace("self.train_dataloader)", "self.eval_dataloader)")
    assert _audit({"myrl/config/ppo_base_config.yaml": _RL_CONFIG.format(ckpt=100), "myrl/trainer.py": src})["I5"].status == Status.NA


def test_lora_rank_read_by_its_config_key_path_is_off_at_0():
    from checks.rules.g_strategy import _RL_LORA

    r = _audit({p: t.format(rank=0) for p, t in _RL_LORA.items()})["G4"]
    assert r.status == Status.UNUSED and "QLoRA" not in r.detail
    assert "trainer.policy.model.lora.rank is 0 at myrl/config/ppo_base_config.yaml:7" in r.detail
    assert _audit({p: t.format(rank=8) for p, t in _RL_LORA.items()})["G4"].status == Status.USED


def test_a_switch_set_only_under_an_off_rank_test_is_not_on():
    from checks.facts.extract import extract_file
    from checks.facts.store import Facts
    from checks.rules._helpers import set_under_off_branch as _set_under_off_branch
    from checks.rules.g_strategy import _RL_LORA

    facts = Facts([extract_file(p, t.format(rank=0).encode()) for p, t in _RL_LORA.items()])
    (s,) = [s for s in facts.effective("enable_lora") if s.path == "myrl/entrypoints/main_base.py"]
    assert _set_under_off_branch(facts, s)
    facts8 = Facts([extract_file(p, t.format(rank=8).encode()) for p, t in _RL_LORA.items()])
    (s8,) = [s for s in facts8.effective("enable_lora") if s.path == "myrl/entrypoints/main_base.py"]
    assert not _set_under_off_branch(facts8, s8)


def test_a_peft_path_that_is_off_does_not_lower_the_checkpoint_threshold_to_adapter_size():
    from checks.rules.g_strategy import _RL_LORA

    def files(rank: int) -> dict[str, str]:
        out = {p: t.format(rank=rank) for p, t in _RL_LORA.items()}
        out.update({"myrl/config/trainer.yaml": _RL_CONFIG.format(ckpt=20), "myrl/trainer.py": _RL_TRAINER.format(report="")})
        return out

    r = _audit(files(0))["I3"]
    assert r.status == Status.UNUSED and "threshold: every 50 steps" in r.detail  # full-parameter: 20 steps is too often
    assert _audit(files(8))["I3"].status == Status.USED  # adapter-only checkpoints: 20 steps is sane


def test_workers_own_optim_step_under_a_modulus_guard_is_accumulation():
    from checks.rules.c_memory import _RL_DS_CONFIG, _RL_WORKER

    guarded = _RL_WORKER.format(guard="            if (local_step + 1) % accumulation_steps == 0:\n    ")
    r = _audit({"myrl/workers/worker.py": guarded, "myrl/distributed/deepspeed_strategy.py": _RL_DS_CONFIG})["C5"]
    assert r.status == Status.USED and "gradient_accumulation_steps is 1" not in r.detail
    assert any(e.path == "myrl/workers/worker.py" and e.line == 9 for e in r.evidence)
    plain = _audit({"myrl/workers/worker.py": _RL_WORKER.format(guard=""), "myrl/distributed/deepspeed_strategy.py": _RL_DS_CONFIG})
    assert plain["C5"].status == Status.UNUSED


def test_unpadding_the_token_ids_of_each_micro_batch_is_padding_removal_not_packing():
    from checks.rules.f_data import _UNPAD_WRAPPER

    r = _audit({p: t.format(on="true") for p, t in _UNPAD_WRAPPER.items()})["F7"]
    assert r.status == Status.PARTIAL and "unpad_input at myrl/model_wrapper.py:14" in r.detail
    off = _audit({p: t.format(on="false") for p, t in _UNPAD_WRAPPER.items()})["F7"]
    assert off.status == Status.UNUSED


def test_unpad_input_behind_a_switch_of_unknown_value_is_not_claimed():
    from checks.rules.f_data import _UNPAD_WRAPPER

    files = {p: t.format(on="true") for p, t in _UNPAD_WRAPPER.items() if not p.endswith(".yaml")}
    assert _audit(files)["F7"].status == Status.UNUSED


def test_hydra_trainer_strategy_of_a_project_without_lightning_is_not_lightning():
    files = {
        "myrl/config/ppo_base_config.yaml": "trainer:\n  strategy: fsdp2\n",
        "myrl/distributed/fsdp_utils.py": ("from torch.distributed.fsdp import fully_shard\n\n\ndef apply_fsdp2(model, mesh):\n"
                                           "    for layer in model.model.layers:\n        fully_shard(layer, mesh=mesh)\n"
                                           "    fully_shard(model, mesh=mesh)\n"),
        "myrl/distributed/fsdp_strategy.py": "class FSDPStrategy:\n    def __init__(self, fsdp_config):\n        self.fsdp_config = fsdp_config\n",
        "myrl/workers/fsdp_worker.py": ("from myrl.distributed.fsdp_strategy import FSDPStrategy\n\n\ndef init_model(cfg):\n"
                                    "    return FSDPStrategy(fsdp_config=cfg.trainer.policy.fsdp_config)\n"),
    }
    got = _audit(files)
    assert got["A1"].status == Status.USED and "lightning" not in got["A1"].detail.lower()
    assert got["E2"].status == Status.USED and "Lightning" not in got["E2"].detail
    lt = dict(files, **{"cli.py": "from lightning.pytorch.cli import LightningCLI\n\nLightningCLI()\n"})
    assert "lightning" in _audit(lt)["A1"].detail.lower()  # with Lightning imported, trainer.strategy is its Trainer's


def test_keep_in_memory_load_dataset_is_not_memory_mapped():
    src = ("import datasets\n\nclass PromptDataset:\n    def __init__(self, source):\n"
           "        self.dataframe = datasets.load_dataset(\"parquet\", data_files=source, keep_in_memory={})[\"train\"]\n"
           "        loss.backward()\n")
    assert _audit({"myrl/dataset/dataset.py": src.format("True")})["F8"].status == Status.UNUSED
    assert _audit({"myrl/dataset/dataset.py": src.format("False")})["F8"].status == Status.USED


def test_rollout_cuda_graphs_set_only_under_an_off_lora_test_are_not_claimed():
    files = {
        "myrl/config/ppo_base_config.yaml": "trainer:\n  policy:\n    model:\n      lora:\n        rank: {rank}\ngenerator:\n  enforce_eager: true\n",
        "myrl/entrypoints/main_base.py": (
            "def create_inference_engines(cfg):\n    engine_kwargs = {\"enforce_eager\": cfg.generator.enforce_eager}\n"
            "    if cfg.trainer.policy.model.lora.rank > 0:\n        engine_kwargs[\"enforce_eager\"] = False\n    return engine_kwargs\n"),
    }
    r = _audit({p: t.replace("{rank}", "0") for p, t in files.items()})["D4"]
    assert r.status == Status.UNUSED and r.detail == "CUDA graphs are disabled"
    assert _audit({p: t.replace("{rank}", "16") for p, t in files.items()})["D4"].status == Status.USED


def test_a_batch_classs_pin_memory_hook_pins_only_behind_a_pinning_loader():
    from checks.rules.f_data import _PIN_HOOK, _PIN_HOOK_LOADER

    r = _audit({"myrl/dataset/replay_buffer.py": _PIN_HOOK, "myrl/trainer_utils.py": _PIN_HOOK_LOADER.format(pin="")})["F3"]
    assert r.status == Status.UNUSED and not any(e.path == "myrl/dataset/replay_buffer.py" for e in r.evidence)
    on = {"myrl/dataset/replay_buffer.py": _PIN_HOOK, "myrl/trainer_utils.py": _PIN_HOOK_LOADER.format(pin=", pin_memory=True")}
    assert _audit(on)["F3"].status == Status.USED


def test_async_copies_of_parameters_and_a_backward_index_are_not_batch_copies():
    files = {
        "myrl/training_batch.py": ("class TensorBatch(dict):\n    def to(self, device=None, *, non_blocking: bool = False):\n"
                                   "        for key, value in self.items():\n            self[key] = value.to(device, non_blocking=non_blocking)\n"
                                   "        return self\n"),
        "myrl/distributed/megatron_utils.py": "def load_tensor_to_gpu(tensor, device_id):\n    tensor.data = tensor.data.to(device_id, non_blocking=True)\n",
        "myrl/train.py": "for batch in loader:\n    batch = batch.to('cuda')\n    loss = model(batch).loss\n    loss.backward()\n",
    }
    assert _audit(files)["F11"].status == Status.UNUSED
    files["myrl/train.py"] = "for batch in loader:\n    batch = batch.to('cuda', non_blocking=True)\n    loss = model(batch).loss\n    loss.backward()\n"
    assert _audit(files)["F11"].status == Status.PARTIAL


def test_start_up_tokenization_is_no_per_step_data_io_reason():
    dataset = (
        "import datasets\n\n\nclass PromptDataset:\n    def __init__(self, source, tokenizer, max_prompt_length):\n"
        "        self.tokenizer = tokenizer\n        self.max_prompt_length = max_prompt_length\n        self.source = source\n"
        "        self._read_files_and_tokenize()\n\n    def _read_files_and_tokenize(self):\n"
        "        ds = datasets.load_dataset(\"parquet\", data_files=self.source, keep_in_memory=True)[\"train\"]\n"
        "        tokenizer = self.tokenizer\n"
        "        self.dataframe = ds.filter(\n"
        "            lambda doc: len(tokenizer.apply_chat_template(doc[\"prompt\"], add_generation_prompt=True)) <= self.max_prompt_length,\n"
        "            num_proc=8)\n\n    def __getitem__(self, item):\n        return self.dataframe[item][\"prompt\"]\n\n"
        "    def __len__(self):\n        return len(self.dataframe)\n")
    train = ("from torch.utils.data import DataLoader\nfrom myrl.dataset.dataset import PromptDataset\n\n"
             "loader = DataLoader(PromptDataset('train.parquet', tok, 512), batch_size=1024, num_workers=8)\n"
             "for batch in loader:\n    loss = model(batch).loss\n    loss.backward()\n    optimizer.step()\n")
    audit = audit_files([("myrl/dataset/dataset.py", dataset.encode()), ("myrl/train.py", train.encode())])
    f6 = next(r for r in audit.results if r.id == "F6")
    assert f6.status == Status.UNUSED and f6.values.get("preprocessing") == "startup"
    assert not any("inside the training input pipeline" in r for r in audit.project.bottleneck_reasons)


def test_a_judge_or_api_sections_model_is_not_a_trained_model():
    files = {
        "myrl/config/sft.yaml": "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\nlearning_rate: 1.0e-6\n",
        "myrl/config/env/default.yaml": ("llm_as_a_judge:\n  model: gpt-4o-mini\n  base_url: null\n"
                                         "reward_api:\n  model: claude-sonnet\n  api_key: null\n"),
        "myrl/train.py": "loss = model(batch).loss\nloss.backward()\noptimizer.step()\n",
    }
    names = audit_files((p, t.encode()) for p, t in files.items()).project.model_names
    assert "Qwen/Qwen2.5-1.5B-Instruct" in names and "gpt-4o-mini" not in names and "claude-sonnet" not in names


def test_a_training_projects_rollout_engine_run_eager_is_not_the_training_steps_graphs():
    files = {
        "myrl/config/ppo_base_config.yaml": "generator:\n  enforce_eager: true\n",
        "myrl/trainer.py": ("import torch\n\n\ndef train(model, loader, opt):\n    for batch in loader:\n"
                            "        loss = model(**batch).loss\n        loss.backward()\n        opt.step()\n"),
    }
    r = _audit(files)["D4"]
    assert r.status == Status.UNUSED
    assert r.detail.startswith("no CUDA graph capture of the training step found; the generation engine's decode graphs are "
                               "switched off (enforce_eager: true at myrl/config/ppo_base_config.yaml:2"), r.detail
