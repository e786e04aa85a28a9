"""Rules of round 22 of issue #9 (fairseq2 0.8.1: a recipe library whose trainer is configured by config dataclasses with
defaults and whose recipes are not shipped): each rule test fails on the rule before it; each control passes on both."""

from __future__ import annotations

from checks.model import Status
from checks.rules.g_strategy import _config_menu

from .claims import audit as _audit


def test_g1_a_profilers_warmup_and_an_unpicked_schedulers_warmup_are_not_the_runs():
    r = _audit(_config_menu(0)).result("G1")
    assert r.status is Status.PARTIAL
    assert "without warmup" in r.detail
    assert ("mylib/recipe/config.py", 8) not in [(e.path, e.line) for e in r.evidence]  # TorchProfilerConfig.num_warmup_steps


def test_g1_control_the_default_schedulers_own_warmup_counts():
    r = _audit(_config_menu(2000)).result("G1")
    assert r.status is Status.USED
    assert ("mylib/recipe/config.py", 21) in [(e.path, e.line) for e in r.evidence]


def _example(check_cls, name: str) -> dict[str, str]:
    return next(e.files for e in check_cls.examples if e.name == name)


def test_c6_a_position_table_filled_in_place_at_init_is_not_buffer_reuse():
    from checks.rules.c_memory import C6MemoryPool

    r = _audit(_example(C6MemoryPool, "a position table filled in place once, when the module is built: no buffer reused in the step")).result("C6")
    assert r.status is Status.UNUSED
    assert "no allocator tuning or buffer reuse found" in r.detail


def test_c6_control_an_out_buffer_in_the_forward_path_is_reuse():
    from checks.rules.c_memory import C6MemoryPool

    assert _audit(_example(C6MemoryPool, "out= buffer")).result("C6").status is Status.USED


_TRAINER = (
    "import torch\n\n\nclass Trainer:\n    def __init__(self, model, optimizer, data_reader):\n"
    "        self._model, self._optimizer, self._data_reader = model, optimizer, data_reader\n        self._first_iter = True\n\n"
    "    def _run_step(self, batch):\n        loss = self._model(batch)\n        loss.backward()\n        self._optimizer.step()\n"
    "        self._optimizer.zero_grad(set_to_none=True)\n"
    "{cache}"
    "\n    def run(self):\n        for batch in self._data_reader:\n            self._run_step(batch)\n"
)
_ONCE = ("        if self._first_iter:\n            # Emptying the cache after the first iteration can reduce fragmentation.\n"
         "            torch.cuda.empty_cache()\n            self._first_iter = False\n")


def test_c6_empty_cache_after_the_first_step_only_is_not_the_per_step_anti_pattern():
    r = _audit({"mylib/trainer.py": _TRAINER.replace("{cache}", _ONCE)}).result("C6")
    assert r.status is Status.UNUSED
    assert "empty_cache" not in r.detail and not r.findings


def test_c6_control_empty_cache_every_step_is_the_anti_pattern():
    r = _audit({"mylib/trainer.py": _TRAINER.replace("{cache}", "        torch.cuda.empty_cache()\n")}).result("C6")
    assert "empties the caching allocator every step" in r.detail


def test_b3_an_import_that_only_probes_for_accelerate_is_not_accelerate_imported():
    from checks.rules.b_frameworks import B3Accelerate

    audit = _audit(_example(B3Accelerate, "an import that only probes whether accelerate is installed"))
    r = audit.result("B3")
    assert r.status is Status.UNUSED
    assert "accelerate" not in audit.project.frameworks


def test_b3_control_an_optional_import_whose_module_is_used_is_still_accelerate():
    from checks.rules.b_frameworks import B3Accelerate

    audit = _audit(_example(B3Accelerate, "an optional import whose module is then used: the Accelerator is built"))
    assert audit.result("B3").status is Status.PARTIAL
    assert "accelerate" in audit.project.frameworks


def test_i3_i4_every_n_steps_intervals_left_at_none_are_no_periodic_save_or_log():
    from checks.rules.i_infra import _regime

    audit = _audit(_regime("None", "None"))
    r3, r4 = audit.result("I3"), audit.result("I4")
    assert r3.status is Status.USED and "no periodic checkpoint: checkpoint_every_n_steps is None" in r3.detail
    assert (r3.evidence[0].path, r3.evidence[0].line) == ("mylib/recipe/config.py", 7)
    assert r4.status is Status.USED and "publish_metrics_every_n_steps is None" in r4.detail


def test_i3_control_a_config_that_sets_the_interval_decides_it():
    from checks.rules.i_infra import _regime

    files = {**_regime("None", "None"), "configs/run.yaml": "regime:\n  checkpoint_every_n_steps: 10\n"}
    r = _audit(files).result("I3")
    assert r.status is Status.UNUSED  # every 10 steps, under the threshold of 50
    assert "None" not in r.detail
