"""Round 15 (lmflow, held-out): rules written after its first contact, each shown failing on the previous rule."""

from __future__ import annotations

import re

from checks import roles
from checks.base import all_checks
from checks.engine import AuditOptions, parse_files, run_checks, split_facts
from checks.facts.extract import extract_file
from checks.model import Status
from checks.project import detect_project
from checks.rules import a_parallelism, d_compute
from checks.rules._registry import copied_trainer

CHECKS = {c.id: c for c in all_checks()}


def _run(check_id: str, files: dict[str, str]):
    facts, _, role = split_facts(parse_files((p, t.encode()) for p, t in files.items()))
    project = detect_project(facts, training=[p for p, r in role.by_path.items() if r == "training"])
    [result], _ = run_checks(facts, project, AuditOptions(), [CHECKS[check_id]])
    return result


# -- a renamed copy of transformers.Trainer kept for one alternative pipeline -----------------------------------------

_COMPILE = "        if self.args.torch_compile:\n            model = torch.compile(model)\n"
_DDP = "        if self.args.local_rank != -1:\n            model = nn.parallel.DistributedDataParallel(model)\n"


def test_copied_trainer_is_vendored_code():
    files = copied_trainer(_COMPILE)
    path = "mylib/pipeline/utils/raft_trainer.py"
    why = roles.framework_copy(extract_file(path, files[path].encode()))
    assert why is not None and why.startswith("a copy of transformers.Trainer")
    _, _, role = split_facts(parse_files((p, t.encode()) for p, t in files.items()))
    assert role.by_path[path] == roles.VENDORED


def test_copied_trainer_branches_are_not_the_run():
    r = _run("D2", copied_trainer(_COMPILE))
    assert r.status is Status.UNUSED, r.detail
    a1 = _run("A1", copied_trainer(_DDP))
    assert a1.status is Status.UNUSED, a1.detail


def test_copied_trainer_fails_on_the_previous_rule(monkeypatch):
    monkeypatch.setattr(roles, "framework_copy", lambda ff: None)
    # (round 25's D2 rule, a compile in a module no entry point reaches, would also drop the copy, now read as other code)
    monkeypatch.setattr(d_compute, "unreached_sites", lambda ctx, sites: [])
    assert _run("D2", copied_trainer(_COMPILE)).status is Status.USED  # the copy's torch.compile read as the run's
    assert _run("A1", copied_trainer(_DDP)).status is Status.USED  # and its DDP branch as data parallelism


def test_trainer_subclass_is_not_a_copy():
    """A ``class X(Trainer):`` that overrides the Trainer's methods extends the framework: the project's own code."""
    files = copied_trainer(_COMPILE)
    path = "mylib/pipeline/utils/raft_trainer.py"
    text = files[path].replace("from transformers.training_args import TrainingArguments\n",
                               "from transformers import Trainer\nfrom transformers.training_args import TrainingArguments\n")
    text = text.replace("class RaftTrainer:", "class RaftTrainer(Trainer):")
    assert roles.framework_copy(extract_file(path, text.encode())) is None


def test_few_trainer_methods_are_not_a_copy():
    files = copied_trainer(_COMPILE)
    path = "mylib/pipeline/utils/raft_trainer.py"
    # keep only the first five plumbing methods: a helper class that mirrors part of the Trainer's API
    kept = re.sub(r"(    def (?!(?:__init__|_wrap_model|_inner_training_loop|_get_train_sampler|_get_eval_sampler)\b)\w+\(self, \*args, "
                  r"\*\*kwargs\):\n        return [^\n]*\n\n)", "", files[path])
    assert roles.framework_copy(extract_file(path, kept.encode())) is None


def test_copied_trainer_imported_by_the_training_path_stays_in_scope():
    """A copy that the run's own entry point imports is the run's trainer: back on the training path."""
    files = copied_trainer(_COMPILE)
    files["train.py"] = "from mylib.pipeline.raft_aligner import RaftAligner\n\nRaftAligner().align(None, None)\n"
    _, _, role = split_facts(parse_files((p, t.encode()) for p, t in files.items()))
    assert role.by_path["mylib/pipeline/utils/raft_trainer.py"] == roles.TRAINING


# -- A1: the README's DeepSpeed launch without a device count --------------------------------------------------------

_README = ("## Finetuning\n\n```sh\ndeepspeed ${deepspeed_args} \\\n  examples/finetune.py \\\n"
           "    --deepspeed configs/ds_config_zero3.json \\\n    --bf16 \\\n    --do_train\n```\n")
_LIB = {"mylib/pipeline/finetuner.py": "from transformers import Trainer\n\n\nclass Finetuner:\n    trainer_cls = Trainer\n"}


def test_a1_documented_deepspeed_launch_uses_every_gpu():
    r = _run("A1", {"README.md": _README, **_LIB})
    assert r.status is Status.USED, r.detail
    assert "DeepSpeed launcher" in r.detail and r.evidence[0].path == "README.md"


def test_a1_documented_deepspeed_launch_fails_on_the_previous_rule(monkeypatch):
    monkeypatch.setattr(a_parallelism, "_DOC_ALL_GPUS", re.compile(r"(?!)"))
    assert _run("A1", {"README.md": _README, **_LIB}).status is Status.UNUSED


def test_a1_documented_deepspeed_launch_on_one_device_is_not_data_parallel():
    one = _README.replace("deepspeed ${deepspeed_args}", "CUDA_VISIBLE_DEVICES=0 deepspeed")
    assert _run("A1", {"README.md": one, **_LIB}).status is Status.UNUSED
    counted = _README.replace("deepspeed ${deepspeed_args}", "deepspeed --num_gpus 1")
    assert _run("A1", {"README.md": counted, **_LIB}).status is Status.UNUSED


# -- C1: bf16 only in an evaluator's arguments and in a flash-attn patch installed under an off flag -------------------


def test_c1_serving_args_and_off_patch_are_not_training_precision():
    from checks.rules.c_memory import _SERVING_ARGS_FILES

    r = _run("C1", _SERVING_ARGS_FILES)
    assert r.status is Status.UNUSED, r.detail


def test_c1_serving_args_fail_on_the_previous_rule(monkeypatch):
    from checks.rules import c_memory

    files = dict(c_memory._SERVING_ARGS_FILES)
    monkeypatch.setattr(c_memory, "_serving_field", lambda s: False)
    assert _run("C1", files).status is Status.USED  # the evaluator's field default read as the run's precision
    monkeypatch.undo()
    monkeypatch.setattr(c_memory, "patch_installed_off", lambda f, c: [])
    # the patch module is one no training entry point imports: that rule (C1 since lead round 28) drops its casts too
    monkeypatch.setattr(c_memory, "unreached_sites", lambda ctx, xs: [])
    assert _run("C1", files).status is Status.USED  # the off patch's bf16 casts read as the run's precision


def test_c1_patch_installed_unconditionally_still_counts():
    from checks.rules.c_memory import _SERVING_ARGS_FILES

    files = {**_SERVING_ARGS_FILES, "mylib/models/hf_decoder_model.py": _SERVING_ARGS_FILES["mylib/models/hf_decoder_model.py"].replace(
        "    if model_args.use_flash_attention:\n        from", "    if True:\n        from")}
    # the training entry loads its model through that module (LMFlow's pipeline does, through its model registry): the patch
    # is on the training path
    files["mylib/pipeline/finetuner.py"] = "from mylib.models.hf_decoder_model import load\n" + files["mylib/pipeline/finetuner.py"]
    assert _run("C1", files).status is Status.USED


def test_copied_trainer_its_package_exports_is_the_librarys_trainer():
    """ATorch ``atorch/trainer/__init__.py``: ``from .atorch_trainer import AtorchTrainer``: a forked Trainer a library offers
    as its own API is the trainer a user runs, not a vendored copy; the same copy kept for one pipeline stays vendored."""
    files = copied_trainer(_COMPILE)
    path = "mylib/pipeline/utils/raft_trainer.py"
    exported = {**files, "mylib/pipeline/utils/__init__.py": "from .raft_trainer import RaftTrainer\n"}
    _, _, role = split_facts(parse_files((p, t.encode()) for p, t in exported.items()))
    assert role.by_path[path] == roles.CODE  # the library's code, judged as any of it (no entry point in this library)
    dotted = {**files, "mylib/pipeline/utils/__init__.py": "from mylib.pipeline.utils.raft_trainer import RaftTrainer\n"}
    _, _, role = split_facts(parse_files((p, t.encode()) for p, t in dotted.items()))
    assert role.by_path[path] == roles.CODE
    other = {**files, "mylib/pipeline/utils/__init__.py": "from .helpers import pad\n"}
    _, _, role = split_facts(parse_files((p, t.encode()) for p, t in other.items()))
    assert role.by_path[path] == roles.VENDORED
