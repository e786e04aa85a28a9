"""Rules of round 17 of issue #9 (FlagEmbedding, BGE embedder/reranker fine-tuning on the HF Trainer): each rule test
fails on the rule before it; each control passes on both."""

from __future__ import annotations

from checks.rules.c_memory import _inference_reranker
from checks.rules.f_data import _vendored_fa2
from checks.rules.g_strategy import _FIX_POS_ARGS, _FIX_POS_RUNNER

from .claims import audit as _audit


def test_precision_of_an_inference_module_is_not_the_training_runs():
    # the reranker of the package's inference API loads ``torch_dtype=torch.bfloat16 if use_bf16 else torch.float32`` and
    # casts ``if self.use_fp16: self.model.half()``; the fine-tuning loader has its dtype commented out (previous rule:
    # "BF16 mixed precision" citing the inference file)
    c1 = _audit(_inference_reranker("# torch_dtype=torch.bfloat16,")).result("C1")
    assert c1.status.value == "unused"
    assert not any("inference" in e.path for e in c1.evidence)


def test_control_the_fine_tuning_loaders_own_bf16_is_still_read():
    c1 = _audit(_inference_reranker("torch_dtype=torch.bfloat16,")).result("C1")
    assert c1.status.value == "used"
    assert ("mylib/finetune/reranker/load_model.py", 7) in [(e.path, e.line) for e in c1.evidence]


def test_control_an_inference_folder_file_that_trains_keeps_its_dtype():
    files = {"mylib/inference/tune.py": (
        "import torch\nfrom transformers import AutoModelForCausalLM\n\n\ndef tune(name, loader, optimizer):\n"
        "    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16)\n"
        "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n")}
    assert _audit(files).result("C1").status.value == "used"


def test_a_freeze_under_a_training_argument_that_defaults_off_is_not_layer_freezing():
    # ``if self.training_args.fix_position_embedding:`` (field default False) around ``v.requires_grad = False``
    # (previous rule: "part of the model is frozen" citing the assignment)
    g5 = _audit({"mylib/arguments.py": _FIX_POS_ARGS.format(default="False"), "mylib/runner.py": _FIX_POS_RUNNER}).result("G5")
    assert g5.status.value == "unused"
    assert [(e.path, e.line) for e in g5.evidence] == [("mylib/arguments.py", 9)]


def test_control_the_same_freeze_on_by_default_is_layer_freezing():
    g5 = _audit({"mylib/arguments.py": _FIX_POS_ARGS.format(default="True"), "mylib/runner.py": _FIX_POS_RUNNER}).result("G5")
    assert g5.status.value == "used"
    assert [(e.path, e.line) for e in g5.evidence] == [("mylib/runner.py", 14)]


def test_unpadding_inside_a_vendored_flash_attention_class_is_not_padding_removal():
    # transformers' ``_get_unpad_data`` copied into a model file, called only by ``MiniCPMFlashAttention2._upad_input``
    # (previous rule: partial "padding removed (_get_unpad_data() ...)")
    f7 = _audit(_vendored_fa2()).result("F7")
    assert f7.status.value == "unused"
    assert "_get_unpad_data" not in f7.detail


def test_control_the_same_helper_unpadding_a_batch_is_padding_removal():
    f7 = _audit(_vendored_fa2(
        "\n\ndef unpad_batch(batch):\n    indices, cu_seqlens, max_len = _get_unpad_data(batch['attention_mask'])\n"
        "    return {'input_ids': batch['input_ids'].flatten()[indices], 'cu_seqlens': cu_seqlens, 'max_seqlen': max_len}\n")).result("F7")
    assert f7.status.value == "partial"
    assert [(e.path, e.line) for e in f7.evidence] == [("mylib/finetune/modeling_minicpm.py", 12)]


_HF_RUN = (
    "import transformers\nfrom transformers import Trainer\n\n\nclass EmbedderTrainer(Trainer):\n"
    "    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):\n        return model(**inputs).loss\n\n\n"
    "def main():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    EmbedderTrainer(model=model, args=training_args, train_dataset=ds).train()\n")
_SETUP = "from setuptools import setup\n\nsetup(name='mylib', install_requires=['torch', 'transformers', 'peft'])\n"


def test_hf_trainer_with_report_to_unset_reports_at_the_default_interval():
    # no report_to anywhere and no tracker among the dependencies (previous rule: n/a "not judged: no tracker ...")
    i5 = _audit({"mylib/train.py": _HF_RUN, "setup.py": _SETUP}).result("I5")
    assert i5.status.value == "used"
    assert "report_to is not set" in i5.detail and "every 500 steps" in i5.detail
    assert i5.values["logging_steps"] == 500


def test_the_same_trainer_logging_every_step_is_a_finding():
    # (previous rule: n/a, no tracker known)
    files = {"mylib/train.py": _HF_RUN, "setup.py": _SETUP,
             "scripts/train.sh": "torchrun --nproc_per_node 8 mylib/train.py --output_dir out --logging_steps 1\n"}
    assert _audit(files).result("I5").status.value == "unused"


def test_control_report_to_none_stays_no_tracker():
    files = {"mylib/train.py": _HF_RUN, "setup.py": _SETUP,
             "scripts/train.sh": "torchrun --nproc_per_node 8 mylib/train.py --output_dir out --report_to none --logging_steps 1\n"}
    i5 = _audit(files).result("I5")
    assert i5.status.value == "used"
    assert "report_to" in i5.detail and "every installed tracker" not in i5.detail
