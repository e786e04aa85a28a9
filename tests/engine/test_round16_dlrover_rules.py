"""Rules of round 16 of issue #9 (dlrover / DLRover): each rule test fails on the rule before it; each control passes on both.

The shape: a package of training infrastructure (an elastic launcher, an optimizer wrapper for elastic accumulation, a job
builder, checkpoint plug-ins for users' FSDP/Megatron runs) that trains nothing itself. The previous rule took the
wrapper's own ``step`` hand-off, the builder's ``.train(entrypoint)`` and an optional Megatron import for a training run,
and judged every check on it.
"""

from __future__ import annotations

from checks import engine
from checks.facts.extract import extract_file
from checks.model import Status

from .claims import audit as _audit

#: an optimizer wrapper for elastic gradient accumulation, as a library ships it for its users' loops
_ELASTIC_TRAINER = '''import torch
import torch.distributed as dist


class _ElasticOptimizer(torch.optim.Optimizer):
    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.sync_gradients = True

    def zero_grad(self, set_to_none=None):
        if self.sync_gradients:
            self.optimizer.zero_grad(set_to_none)

    def step(self, closure=None):
        if self.sync_gradients:
            self.optimizer.step(closure)


class _ElasticLRScheduler(object):
    def __init__(self, scheduler):
        self.scheduler = scheduler

    def step(self, *args, **kwargs):
        self.scheduler.step(*args, **kwargs)


class ElasticTrainer(object):
    """Keeps the global batch fixed when workers join or leave.

    >>> for input, output in dataloader:
    ...     with elastic_trainer.step():
    ...         loss = loss_func(model(input))
    ...         loss.backward()
    ...         optimizer.step()
    """

    def __init__(self, model, dataloader=None):
        self.model = model
        self.dataloader = dataloader
        self.gradient_accumulation_steps = 1

    def prepare(self, optimizer, lr_scheduler=None):
        optimizer = _ElasticOptimizer(optimizer)
        return (optimizer, _ElasticLRScheduler(lr_scheduler)) if lr_scheduler else optimizer
'''

#: a job builder whose roles name the user's entry points
_BUILDER = '''class RLJobBuilder:
    ACTOR_ROLE = "actor"

    def role(self, name):
        return RoleBuilder(self, name)

    def actor(self, module_name, class_name):
        entrypoint = f"{module_name}.{class_name}"
        return self.role(RLJobBuilder.ACTOR_ROLE).train(entrypoint).not_driver()
'''

#: checkpoint plug-ins for a user's FSDP or Megatron run (Megatron imported only if installed)
_CHECKPOINTERS = {
    "pkg/flash_checkpoint/fsdp.py": (
        "import torch.distributed.checkpoint as dist_cp\n"
        "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
        "from torch.distributed.fsdp import StateDictType\n\n\n"
        "class FsdpCheckpointer:\n"
        "    def save_checkpoint(self, step, model, optimizer, path):\n"
        "        with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):\n"
        "            dist_cp.save({'model': model.state_dict()}, checkpoint_id=path)\n"
    ),
    "pkg/flash_checkpoint/megatron.py": (
        "import logging\n\n"
        "try:\n"
        "    from megatron import get_args\n"
        "    from megatron.checkpointing import save_checkpoint as megatron_save\n"
        "except ImportError:\n"
        "    logging.warning('Please check the megatron.checkpointing exists.')\n\n\n"
        "def save_checkpoint(iteration, model, optimizer, opt_param_scheduler):\n"
        "    args = get_args()\n"
        "    megatron_save(iteration, model, optimizer, opt_param_scheduler)\n"
        "    return args.save\n"
    ),
    "pkg/flash_checkpoint/megatron_engine.py": (
        "import torch.distributed as dist\n\n\n"
        "class MegatronCheckpointEngine:\n"
        "    def __init__(self, checkpoint_dir):\n"
        "        if dist.is_initialized():\n"
        "            try:\n"
        "                from megatron.core import mpu\n"
        "            except ImportError:\n"
        "                from megatron import mpu\n"
        "            self._tp_rank = mpu.get_tensor_model_parallel_rank()\n"
    ),
}


def _infrastructure() -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/elastic/trainer.py": _ELASTIC_TRAINER, "pkg/unified/builder.py": _BUILDER,
            **_CHECKPOINTERS}


def test_a_package_that_trains_nothing_is_not_judged():
    # the wrapper's own ``step`` hands the call on, the builder's ``.train(entrypoint)`` names a role's code, and Megatron is
    # an optional import of a checkpoint plug-in: no training code, so no check is judged and no report is due
    audit = _audit(_infrastructure())
    assert not audit.project.does_training and not audit.training_code_found
    assert {r.status for r in audit.results} == {Status.NA}
    b2 = audit.result("B2")
    assert b2.detail.startswith(getattr(engine, "NO_RUN", "?")) and not b2.evidence  # not "Megatron-LM drives training"
    # the detail cites what looked like training: the wrapper's hand-off and the plug-in's optional import
    assert "`self.optimizer.step(closure)` (pkg/elastic/trainer.py:" in b2.detail and "Megatron imported only if installed" in b2.detail
    assert not any(r.recommendation for r in audit.results)
    assert audit.project.bottleneck_reasons == ["no training or inference code was recognised"]


def test_control_the_same_package_with_a_training_loop_is_judged():
    files = {**_infrastructure(), "train.py": (
        "import torch\nfrom torch.utils.data import DataLoader\nfrom pkg.elastic.trainer import ElasticTrainer\n\n"
        "model = torch.nn.Linear(1024, 1024).cuda()\noptimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)\n"
        "loader = DataLoader(dataset, batch_size=8, num_workers=0)\n"
        "for batch in loader:\n    loss = model(batch).sum()\n    loss.backward()\n    optimizer.step()\n")}
    audit = _audit(files)
    assert audit.project.does_training and audit.training_code_found
    assert audit.result("F1").status == Status.UNUSED  # judged: num_workers=0


def test_control_a_trainer_chain_without_arguments_still_trains():
    # ``Trainer(...).train()`` on the result of a call takes no argument: a training run, unlike a builder's ``.train(x)``
    files = {"pkg/__init__.py": "", "pkg/run.py": (
        "from transformers import Trainer, TrainingArguments\n\n\n"
        "def main(model, dataset):\n"
        "    Trainer(model=model, args=TrainingArguments(output_dir='out'), train_dataset=dataset).train()\n")}
    assert _audit(files).project.does_training


def test_control_an_optimizer_step_in_a_training_step_function_still_trains():
    files = {"pkg/__init__.py": "", "pkg/engine.py": (
        "def train_step(model, optimizer, batch):\n    loss = model(**batch).loss\n    loss.backward()\n"
        "    optimizer.step()\n    optimizer.zero_grad()\n    return loss\n")}
    assert _audit(files).project.does_training


def test_an_import_in_an_import_error_handler_is_optional():
    ff = extract_file("pkg/flash_checkpoint/megatron_engine.py", _CHECKPOINTERS["pkg/flash_checkpoint/megatron_engine.py"].encode())
    assert [(i.module, i.optional) for i in ff.imports if i.module.startswith("megatron")] == [
        ("megatron.core", True), ("megatron", True)]


def test_control_an_import_in_another_handler_is_not_optional():
    src = ("try:\n    import ujson as json\nexcept ValueError:\n    import json\n")
    ff = extract_file("pkg/io.py", src.encode())
    assert [(i.module, i.optional) for i in ff.imports] == [("ujson", False), ("json", False)]


def test_each_sign_alone_is_no_training():
    # one at a time: the wrapper's step hand-off, the builder's chain, the optional Megatron plug-in (incl. its fallback import)
    for files in ({"pkg/elastic/trainer.py": _ELASTIC_TRAINER}, {"pkg/unified/builder.py": _BUILDER}, dict(_CHECKPOINTERS)):
        audit = _audit({"pkg/__init__.py": "", **files})
        assert not audit.project.does_training, sorted(files)
