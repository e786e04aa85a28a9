"""Rules of round 15 of issue #9 (flagai): each rule test fails on the rule before it; the controls pass on both."""

from __future__ import annotations

from checks.rules.a_parallelism import _env_trainer
from checks.rules.g_strategy import _annealing_trainer
from checks.rules.i_infra import NAN_SKIP_STEP, _nonfinite_branch

from .claims import audit as _audit

# -- A1/E2: a DDP wrapper in the branch of a backend switch the run leaves off ---------------------------------------


def test_ddp_in_an_off_backend_branch_is_not_the_runs_data_parallelism():
    a = _audit(_env_trainer())
    r = a.result("A1")
    assert r.status.value == "unused"
    assert "off by default" in (r.detail or "") and "mylib/env_args.py:4" in (r.detail or "")
    assert a.result("E2").status.value != "used"


def test_a_run_script_choosing_the_ddp_backend_keeps_it_used():
    a = _audit(_env_trainer("env_args = EnvArgs(env_type='pytorchDDP', num_gpus=8)\n"))
    assert a.result("A1").status.value == "used"
    assert a.result("E2").status.value == "used"


def test_an_unguarded_ddp_wrapper_stays_used():
    files = {"train.py": "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model, device_ids=[0])\n"}
    assert _audit(files).result("A1").status.value == "used"


# -- G1: a default scheduler built only when the warmup fraction is positive -------------------------------------------


def test_a_scheduler_built_only_with_a_positive_warmup_fraction_warms_up():
    r = _audit(_annealing_trainer("lr_scheduler is None and self.warm_up > 0 and self.epochs > 0")).result("G1")
    assert r.status.value == "used"
    assert r.detail == "warmup + cosine schedule"


def test_a_positive_epoch_count_says_nothing_about_the_warmup():
    # ``self.epochs > 0`` guards a factor of the same product, but not the warmup one
    r = _audit(_annealing_trainer("lr_scheduler is None and self.epochs > 0")).result("G1")
    assert r.status.value == "partial"


# -- I4: a log in a branch that runs only on a non-finite value ---------------------------------------------------------


def test_the_else_of_a_finite_loss_test_is_a_non_finite_branch():
    assert _nonfinite_branch("not (not DynamicLossScaler._has_inf_or_nan(reduced_loss))")
    assert _nonfinite_branch("not torch.isfinite(grad_norm)")
    assert _nonfinite_branch("torch.isnan(loss).any() and rank == 0")
    assert not _nonfinite_branch("optimizer.overflow")  # an attribute, not a test call
    assert not _nonfinite_branch("torch.isfinite(loss)")
    assert not _nonfinite_branch("not DynamicLossScaler._has_inf_or_nan(reduced_loss)")
    assert not _nonfinite_branch("(iteration + 1) % log_interval == 0")
    assert not _nonfinite_branch(None)


_NAN_SKIP = (
    NAN_SKIP_STEP +
    "    def train(self, model, optimizer, loader, log_interval=100):\n        total = 0.0\n"
    "        for iteration, batch in enumerate(loader):\n            total += self.train_step(batch, model, optimizer)\n"
)


def test_a_nan_skip_notice_is_not_per_step_logging():
    src = _NAN_SKIP + ("            if (iteration + 1) % log_interval == 0:\n"
                       "                log_dist(f'loss {total.item() / log_interval}', [0])\n")
    assert _audit({"mylib/trainer.py": src}).result("I4").status.value == "used"


def test_a_loss_logged_every_iteration_beside_it_still_is():
    src = _NAN_SKIP + "            log_dist(f'loss {total.item()}', [0])\n"
    assert _audit({"mylib/trainer.py": src}).result("I4").status.value == "unused"


# -- F1-F3: the else of a backend comparison, and the loaders in a branch the run leaves off ---------------------------


def test_the_else_of_a_comparison_is_off_when_every_value_makes_the_comparison_true():
    from checks.engine import build_facts
    from checks.facts import Call
    from checks.rules._helpers import guard_off
    from checks.rules.f_data import _env_loaders

    facts = build_facts((k, v.encode()) for k, v in _env_loaders().items())
    loaders = [c for c in facts.calls("torch.utils.data.DataLoader") if isinstance(c, Call)]
    by_line = {c.line: bool(guard_off(facts, c)) for c in loaders}
    assert by_line == {10: False, 14: True}  # the 'pytorch' branch runs, its else does not


def test_the_default_backends_pinned_loader_is_the_runs():
    from checks.rules.f_data import _env_loaders

    r = _audit(_env_loaders()).result("F3")
    assert r.status.value == "used"
    assert all(e.line != 14 for e in r.evidence)


def test_a_run_script_picking_the_other_backend_keeps_both_loaders():
    from checks.rules.f_data import _env_loaders

    r = _audit(_env_loaders("env_args = EnvArgs(env_type='pytorchDDP', num_gpus=8)\n")).result("F3")
    assert r.status.value == "partial"
