"""A JAX training path (a jitted ``train_step``, no PyTorch backward pass; levanter 1.1's shape): PyTorch-only checks are
n/a with the JAX counterpart, checks that read PyTorch spellings say "not judged" when they find nothing, and what they
do find is still judged. Each test fails on the engine before checks.stack."""

from __future__ import annotations

from checks.engine import audit_files

_TRAINER = (
    "from dataclasses import dataclass\nfrom typing import Optional\n\nimport haliax as hax\nimport jax\nimport optax\n"
    "from haliax.partitioning import named_jit\n\n\n@dataclass\nclass TrainerConfig:\n    batch_axis: Optional[str] = \"batch\"\n"
    "    train_batch_size: int = 512\n\n\nclass Trainer:\n    def __init__(self, config, optimizer):\n"
    "        self.config = config\n        self.optimizer = optimizer\n\n"
    "    @named_jit(axis_resources={\"batch\": \"data\"})\n    def train_step(self, state, batch):\n"
    "        loss, grads = jax.value_and_grad(self.loss_fn)(state.model, batch)\n"
    "        updates, opt_state = self.optimizer.update(grads, state.opt_state, state.model)\n"
    "        return state.replace(model=optax.apply_updates(state.model, updates), opt_state=opt_state), loss\n"
)
_MAIN = (
    "import optax\n\nfrom mylm.trainer import Trainer, TrainerConfig\n\n\ndef main():\n"
    "    trainer = Trainer(TrainerConfig(), optax.adamw(3e-4))\n    for batch in loader:\n"
    "        state, loss = trainer.train_step(state, batch)\n\n\nif __name__ == \"__main__\":\n    main()\n"
)
_TORCH_LOADER = (
    "import numpy as np\nfrom torch.utils.data import DataLoader\n\n\ndef numpy_collate(batch):\n"
    "    return np.stack(batch)\n\n\ndef make_loader(ds):\n"
    "    return DataLoader(ds, batch_size=32, num_workers=0, collate_fn=numpy_collate)\n"
)


def _results(files: dict[str, str]):
    audit = audit_files(((p, t.encode()) for p, t in files.items()), "repo")
    return {r.id: r for r in audit.results}, audit.project


def test_pytorch_only_checks_do_not_apply_to_a_jax_run():
    r, project = _results({"mylm/trainer.py": _TRAINER, "mylm/main.py": _MAIN})
    assert project.notes["jax_training"] == "haliax.partitioning.named_jit on train_step (mylm/trainer.py:21)"
    for cid in ("A3", "B1", "B2", "B3", "B4", "B5", "B6", "D5", "F3"):
        assert r[cid].status.value == "n/a", cid
        assert r[cid].detail.startswith("JAX training path (training step compiled by haliax.partitioning.named_jit on train_step"), cid
        assert r[cid].priority is None
    assert "PyTorch DataLoader option" in r["F3"].detail


def test_checks_that_read_pytorch_spellings_are_not_judged_when_they_find_nothing():
    r, _ = _results({"mylm/trainer.py": _TRAINER, "mylm/main.py": _MAIN})
    for cid in ("A2", "C5", "F1", "F2"):
        assert r[cid].status.value == "n/a", cid
        assert r[cid].detail.startswith("not judged: the training path is JAX"), cid
        assert r[cid].priority is None
    # practices spelled the same way in JAX keep their rules
    assert r["C1"].status.value != "n/a"


def test_a_pytorch_dataloader_feeding_the_jax_step_is_still_judged():
    r, _ = _results({"mylm/trainer.py": _TRAINER, "mylm/main.py": _MAIN, "mylm/data.py": _TORCH_LOADER})
    assert r["F1"].status.value == "unused"
    assert "mylm/data.py:10" in {f"{e.path}:{e.line}" for e in r["F1"].evidence}


def test_control_a_pytorch_backward_pass_keeps_every_check():
    torch_train = ("import torch\n\n\ndef train(model, loader, opt):\n    for batch in loader:\n"
                   "        loss = model(batch).mean()\n        loss.backward()\n        opt.step()\n")
    r, project = _results({"mylm/trainer.py": _TRAINER, "mylm/main.py": _MAIN, "mylm/torch_train.py": torch_train})
    assert "jax_training" not in project.notes
    assert r["B1"].status.value == "unused"
    for cid in ("A3", "B5", "F3", "F1"):
        assert not (r[cid].detail or "").startswith(("JAX", "not judged: the training path is JAX")), cid


def test_the_chinese_report_gives_the_jax_reasons_in_chinese():
    from reports.markdown import render_markdown

    audit = audit_files(((p, t.encode()) for p, t in {"mylm/trainer.py": _TRAINER, "mylm/main.py": _MAIN}.items()), "repo")
    md = render_markdown(audit, lang="zh")
    [b1] = [ln for ln in md.splitlines() if "**B1**" in ln]
    assert "不适用：JAX 训练路径（训练步由 JAX jit 编译，没有 PyTorch 反向传播）：DeepSpeed 是 PyTorch 框架" in b1
    [f1] = [ln for ln in md.splitlines() if "**F1**" in ln]
    assert "未作判断（不计分）：训练路径是 JAX" in f1
