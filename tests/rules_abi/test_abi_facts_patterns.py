"""Facts the issue-9 patterns rely on (checks/facts/python.py): guards from early exits, branch-only constants,
parameters overridden in a branch, and HF-style config ``__init__`` defaults."""

from __future__ import annotations

from checks.engine import build_facts


def _facts(src: str, path: str = "train.py"):
    return build_facts([(path, src.encode())])


def test_an_early_continue_or_return_guards_what_follows():
    f = _facts(
        "for step, batch in enumerate(loader):\n    loss = model(batch)\n    loss.backward()\n    optimizer.step()\n"
        "    if step % 100 != 0:\n        continue\n    logger.info('loss %f', loss.item())\n"
        "def on_step_end(state):\n    if state.global_step % freq != 0:\n        return\n    wandb.log({'x': 1})\n"
    )
    [info] = f.calls("logger.info")
    assert info.guard == "not (step % 100 != 0)"
    [log] = f.calls("wandb.log")
    assert log.guard == "not (state.global_step % freq != 0)"
    [step] = f.calls("optimizer.step")
    assert step.guard is None  # statements before the early exit are not guarded


def test_a_name_bound_in_one_branch_is_no_longer_a_constant_after_it():
    f = _facts(
        "from torch.utils.data import DataLoader\n"
        "workers = 8\nif args.cpu:\n    workers = 0\nloader = DataLoader(ds, num_workers=workers)\n"
        "same = 4\nif args.x:\n    same = 4\nelse:\n    same = 4\nother = DataLoader(ds, num_workers=same)\n"
    )
    first, second = f.calls("DataLoader")
    assert first.kwargs["num_workers"] != 8 and first.kwargs["num_workers"] != 0  # unknown, not the last binding
    assert second.kwargs["num_workers"] == 4  # every branch binds the same value


def test_a_parameter_overridden_in_a_branch_is_not_a_setting():
    f = _facts(
        "def get_loader(ds, num_workers: int):\n    if not takes_input:\n        num_workers = 0\n"
        "    return DataLoader(ds, num_workers=num_workers)\n"
        "def main():\n    num_workers = 0\n"
    )
    assert [(a.name, a.line) for a in f.records("assigns")] == [("num_workers", 6)]


def test_config_init_defaults_are_recorded_like_fields():
    f = _facts(
        "class MPTConfig(PretrainedConfig):\n"
        "    def __init__(self, d_model: int = 2048, n_heads=16, *, vocab_size: int = 50368, attn_config=None, **kwargs):\n"
        "        super().__init__(**kwargs)\n"
        "class Block(nn.Module):\n    def __init__(self, d_model=999):\n        pass\n",
        "configuration_mpt.py",
    )
    got = {(x.owner, x.name): x.default for x in f.records("fields")}
    assert got == {("MPTConfig", "d_model"): 2048, ("MPTConfig", "n_heads"): 16, ("MPTConfig", "vocab_size"): 50368,
                   ("MPTConfig", "attn_config"): None}
