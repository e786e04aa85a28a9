"""Rules of round 19 of issue #9 (pyreft 0.1.0: a library of HF Trainer subclasses that train interventions on a user's
frozen model; the ``Trainer(...).train()`` and the model load are the user's script): each rule test fails on the rule
before it; each control passes on both."""

from __future__ import annotations

from checks.model import Status
from checks.rules.g_strategy import _TRAINER_ONLY_LIB
from reports.markdown import render_markdown

from .claims import audit as _audit


def test_a_library_of_trainer_subclasses_with_their_own_compute_loss_is_training_code():
    # ``class InterventionTrainer(Trainer): def compute_loss(...)`` and nothing in the package calls ``.train()``,
    # ``backward`` or ``from_pretrained`` (previous rule: does_training False, the report "No training code found: nothing
    # to audit, no score", step zero "no training or inference code was recognised")
    audit = _audit(_TRAINER_ONLY_LIB)
    assert audit.project.does_training
    assert audit.training_code_found
    assert "no training or inference code was recognised" not in audit.project.bottleneck_reasons
    assert "No training code found" not in render_markdown(audit)
    assert audit.result("F1").status is Status.UNUSED  # the subclass's own loader, no workers


def test_the_fine_tuning_checks_are_not_judged_for_a_model_the_user_passes_in():
    # the project neither loads nor builds a model: not "the project only pre-trains from scratch" (what the previous
    # pre-training branch would say once the subclass counts as training code)
    for check in ("G4", "G5"):
        r = _audit(_TRAINER_ONLY_LIB).result(check)
        assert r.status is Status.NA
        assert r.detail.startswith("not judged: the project's training code is a Trainer subclass")
        assert "reftlib/trainer.py:" in r.detail
        assert "pre-trains" not in r.detail


def test_control_a_package_that_only_names_the_trainer_in_a_type_hint_is_not_training_code():
    files = {"mylib/callbacks.py": (
        "from transformers import Trainer, TrainerCallback\n\n\n"
        "def attach(trainer: Trainer, callback: TrainerCallback) -> None:\n    trainer.add_callback(callback)\n")}
    audit = _audit(files)
    assert not audit.project.does_training
    assert not audit.training_code_found


def test_control_a_trainer_subclass_overriding_only_saving_adds_no_training_signal():
    files = {"mylib/trainer.py": (
        "from transformers import Trainer\n\n\n"
        "class SavingTrainer(Trainer):\n    def save_model(self, output_dir=None, _internal_call=False):\n"
        "        self.model.save_intervention(output_dir)\n")}
    assert not _audit(files).project.does_training


def test_control_a_shipped_script_loading_a_hub_checkpoint_keeps_the_fine_tuning_checks_judged():
    files = {**_TRAINER_ONLY_LIB, "examples/train.py": (
        "import transformers\nfrom reftlib.trainer import InterventionTrainer\n\n"
        "model = transformers.AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-chat-hf')\n"
        "args = transformers.TrainingArguments(output_dir='out')\nInterventionTrainer(model=model, args=args).train()\n")}
    audit = _audit(files)
    assert audit.project.finetunes
    assert "user_model_trainer" not in audit.project.notes
    assert audit.result("G4").status is Status.UNUSED


_DATA_MODULE = {"reftlib/dataset.py": (
    "import datasets\nfrom torch.utils.data import Dataset\n\n\n"
    "class SupervisedDataset(Dataset):\n"
    "    def __init__(self, tokenizer, inputs, outputs):\n"
    "        self.result = []\n"
    "        for prompt, answer in zip(inputs, outputs):\n"
    "            input_ids = tokenizer(prompt + answer, max_length=tokenizer.model_max_length, truncation=True,\n"
    "                                  return_tensors='pt')['input_ids'][0]\n"
    "            self.result.append({'input_ids': input_ids})\n\n"
    "    def __len__(self):\n        return len(self.result)\n\n"
    "    def __getitem__(self, i):\n        return self.result[i]\n")}


def test_a_dataset_tokenized_once_at_start_up_and_kept_in_memory_is_partial():
    # every example tokenized in the Dataset's ``__init__`` and the ids kept for training, nothing saved (previous rule: F6
    # unused, the same status as per-sample tokenization; the labels of autotrain, realhf, fschat and pyreft read it partial)
    f6 = _audit(_DATA_MODULE).result("F6")
    assert f6.status is Status.PARTIAL
    assert [(e.path, e.line) for e in f6.evidence] == [("reftlib/dataset.py", 9)]
    assert "kept in memory" in f6.detail


def test_control_a_start_up_pass_that_only_measures_lengths_stays_unused():
    files = {"reftlib/dataset.py": _DATA_MODULE["reftlib/dataset.py"].replace(
        "            input_ids = tokenizer(prompt + answer,", "            if len(tokenizer(prompt + answer,").replace(
        "                                  return_tensors='pt')['input_ids'][0]\n            self.result.append({'input_ids': input_ids})\n",
        "                                  return_tensors='pt')['input_ids'][0]) < 4096:\n"
        "                self.result.append({'text': prompt + answer})\n")}
    assert "if len(tokenizer(" in files["reftlib/dataset.py"]
    assert _audit(files).result("F6").status is Status.UNUSED
