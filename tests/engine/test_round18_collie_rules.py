"""Rules of round 18 of issue #9 (CoLLiE, an LLM training library on DeepSpeed whose wheel ships no launch): each rule test
fails on the rule before it; each control passes on both."""

from __future__ import annotations

from checks.rules.a_parallelism import _DS_LIBRARY
from checks.rules.g_strategy import _BARE_PEFT
from checks.rules.i_infra import _POSTFIX_EVERY, _ds_monitor, _static_train_fn
from checks.rules.j_inference import _OWN_GENERATE_BATCH

from .claims import audit as _audit


def test_a_bare_peft_config_section_names_no_adapter():
    # ``peft_config: PeftConfig = field(default_factory=lambda: PeftConfig())`` and ``if config.peft_config.peft_type is not
    # None: get_peft_model(...)`` (previous rule: "LoRA/PEFT fine-tuning" citing the wrapper, adapter_training true)
    audit = _audit(_BARE_PEFT)
    g4 = audit.result("G4")
    assert g4.status.value == "unused"
    assert [(e.path, e.line) for e in g4.evidence] == [("mylib/config.py", 9)]
    assert "peft_type is not None" in (g4.detail or "")
    assert audit.project.adapter_training is False


def test_control_a_run_handing_the_section_a_lora_config_is_lora():
    files = {**_BARE_PEFT, "examples/lora.py": (
        "from peft import LoraConfig\nfrom mylib.config import LMConfig\n\nconfig = LMConfig(peft_config=LoraConfig(r=8))\n")}
    assert _audit(files).result("G4").status.value == "used"


def test_a_bare_quantization_config_section_quantizes_nothing():
    # the same reading for transformers' ``BitsAndBytesConfig()``: ``load_in_4bit`` is False
    from checks.facts import Call
    from checks.rules._helpers import bare_section_default, guard_off

    files = {"mylib/config.py": ("from dataclasses import dataclass, field\n\nfrom transformers import BitsAndBytesConfig\n\n\n"
                                 "@dataclass\nclass LMConfig:\n"
                                 "    quantization_config: BitsAndBytesConfig = field(default_factory=lambda: BitsAndBytesConfig())\n"),
             "mylib/model.py": ("def load(model, config):\n    if config.quantization_config.load_in_4bit:\n"
                                "        model = quantize(model)\n    return model\n")}
    facts = _audit(files).facts
    value, sites = bare_section_default(facts, "quantization_config", "load_in_4bit")
    assert value is False and [(s.path, s.line) for s in sites] == [("mylib/config.py", 8)]
    (call,) = [c for c in facts.calls("quantize") if isinstance(c, Call)]
    assert guard_off(facts, call)


def test_a_deepspeed_engine_in_a_process_group_the_library_joins_is_data_parallel():
    # no launch ships; ``deepspeed.init_distributed(world_size=int(os.environ['WORLD_SIZE']))`` and ``DeepSpeedEngine(...)``
    # (previous rule: A1 "no multi-GPU launch or DDP wrapper found", E2 "no distributed training found")
    audit = _audit(_DS_LIBRARY)
    a1 = audit.result("A1")
    assert a1.status.value == "used"
    assert [(e.path, e.line) for e in a1.evidence] == [("mylib/utils/dist_utils.py", 13), ("mylib/utils/dist_utils.py", 8)]
    e2 = audit.result("E2")
    assert e2.status.value == "unused"
    assert e2.detail == "distributed training without communication/computation overlap"


def test_control_the_same_library_with_a_one_process_launch_is_not_data_parallel():
    files = {**_DS_LIBRARY, "scripts/train.sh": "torchrun --nproc_per_node=1 examples/train.py\n",
             "examples/train.py": "from mylib.trainer import Trainer\n\nTrainer(model, optimizer, {}).train(loader)\n"}
    assert _audit(files).result("A1").status.value == "unused"


def test_control_an_engine_without_a_process_group_of_its_own_is_not_read_as_data_parallel():
    files = {**_DS_LIBRARY, "mylib/utils/dist_utils.py": _DS_LIBRARY["mylib/utils/dist_utils.py"].replace(
        "    deepspeed.init_distributed(dist_backend='nccl', world_size=int(os.environ['WORLD_SIZE']),\n"
        "                               rank=int(os.environ['RANK']))\n", "    pass\n")}
    assert _audit(files).result("A1").status.value == "unused"


def test_a_loss_progress_bar_after_the_trainers_own_step_method_is_per_step_logging():
    # ``loss = self.train_fn(self, batch)`` (a static method running ``engine.backward``/``engine.step``) then
    # ``bar.set_postfix(Loss=round(loss, 4))`` every batch (previous rule: I4 n/a "not judged")
    i4 = _audit(_static_train_fn(_POSTFIX_EVERY)).result("I4")
    assert i4.status.value == "unused"
    assert [(e.path, e.line) for e in i4.evidence] == [("mylib/controller/trainer.py", 16)]


def test_control_a_progress_bar_without_the_loss_is_not_a_metrics_log():
    log = "                bar.set_postfix(lr=self.engine.get_lr()[0])\n"
    assert _audit(_static_train_fn(log)).result("I4").status.value == "n/a"


def test_deepspeeds_monitor_behind_a_key_of_an_empty_default_config_reports_nothing():
    # ``if "monitor_config" in config.ds_config.keys(): MonitorMaster(...)`` with ``ds_config`` defaulting to ``{}``
    # (previous rule: I5 n/a "not judged")
    i5 = _audit(_ds_monitor("{}")).result("I5")
    assert i5.status.value == "used"
    assert [(e.path, e.line) for e in i5.evidence] == [("mylib/monitor.py", 6), ("mylib/config.py", 7)]
    assert "defaults to an empty mapping" in (i5.detail or "")


def test_control_a_default_config_naming_the_key_is_not_read_as_off():
    assert _audit(_ds_monitor("{'monitor_config': {'wandb': {'enabled': True}}}")).result("I5").status.value == "n/a"


def test_the_projects_own_generate_batch_method_is_not_continuous_batching():
    # HF ``generate`` over a model whose forward calls ``self.engine_container[-1].generate_batch(inputs)``, a method of the
    # project's own pipeline engine (previous rule: J2 "continuous batching (hf)" citing that call)
    j2 = _audit(_OWN_GENERATE_BATCH).result("J2")
    assert j2.status.value == "unused"
    assert ("mylib/module.py", 14) not in [(e.path, e.line) for e in j2.evidence]


def test_control_without_the_projects_own_method_the_call_is_transformers_continuous_batching():
    files = {k: v for k, v in _OWN_GENERATE_BATCH.items() if "pipeline_engine" not in k}
    assert _audit(files).result("J2").status.value == "used"
