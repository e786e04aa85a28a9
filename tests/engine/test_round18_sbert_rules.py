"""Rules of round 18 of issue #9 (sentence-transformers 6.3: embedding/reranker training on its own subclasses of the HF
Trainer, with a legacy ``fit``/``old_fit`` API beside it): each rule test fails on the rule before it; each control passes
on both."""

from __future__ import annotations

from checks.rules.c_memory import _CALLED, _LEGACY_FIT, _gradcache_loss
from checks.rules.f_data import _far_params_trainer, _flash_gated_flatten
from checks.rules.g_strategy import _SCHED_MENU

from .claims import audit as _audit


def _sites(result) -> list[tuple[str, int]]:
    return [(e.path, e.line) for e in result.evidence]


def test_a_loader_dict_far_above_its_dataloader_is_still_read():
    # ``dataloader_params = {"num_workers": self.args.dataloader_num_workers, ...}`` 49 lines above
    # ``DataLoader(dataset, **dataloader_params)`` in the same method (previous rule: F2 partial "prefetching only for some
    # training loaders", the loader's workers unknown beside the HF default 0)
    audit = _audit(_far_params_trainer())
    f2 = audit.result("F2")
    assert f2.status.value == "unused"
    assert f2.detail == "num_workers=0: nothing is prefetched"
    assert _sites(audit.result("F1")) == [("mylib/trainer.py", 15)]


def test_a_trainer_subclass_building_its_train_loader_in_a_helper_replaces_the_hf_default_loader():
    # ``get_train_dataloader`` -> ``self._build_dataloader(...)`` -> ``DataLoader(...)`` with four workers (previous rule: the
    # HF Trainer's own loader, 0 workers by default, was counted beside it: F1 unused, F2 partial)
    audit = _audit(_far_params_trainer("4"))
    assert audit.result("F1").status.value == "used"
    assert audit.result("F2").status.value == "used"


def test_a_flattening_collator_behind_a_flash_attention_early_return_is_off_without_flash_attention():
    # ``if not self._is_flash_attention_requested(): return False`` before ``DataCollatorWithFlattening(...)``, and no model
    # asks for FlashAttention-2 (previous rule: F7 partial "padding removed (DataCollatorWithFlattening ...)")
    f7 = _audit(_flash_gated_flatten()).result("F7")
    assert f7.status.value == "unused"
    assert "DataCollatorWithFlattening" not in f7.detail


def test_control_the_same_collator_with_the_model_loaded_for_flash_attention_removes_padding():
    audit = _audit(_flash_gated_flatten(", model_kwargs={'attn_implementation': 'flash_attention_2'}"))
    assert audit.result("D1").status.value == "used"
    f7 = audit.result("F7")
    assert f7.status.value == "partial"
    assert _sites(f7) == [("mylib/modules/transformer.py", 19)]


_TRAINER_PREPARES = {
    "mylib/trainer.py": (
        "from torch.utils.data import DataLoader\nfrom transformers import Trainer\n\n\n"
        "class EmbeddingTrainer(Trainer):\n"
        "    def get_train_dataloader(self):\n"
        "        loader = DataLoader(self.train_dataset, batch_size=self.args.train_batch_size)\n"
        "        self._train_dataloader = self.accelerator.prepare(loader)\n"
        "        return self._train_dataloader\n"),
    "pyproject.toml": "[project]\nname = 'mylib'\ndependencies = ['transformers>=5', 'accelerate>=1.3.0']\n",
}


def test_a_trainer_subclass_preparing_its_loader_with_the_trainers_accelerator_is_accelerate_driving_training():
    # previous rule: B3 unused "Accelerate is only a dependency; it does not drive training"
    b3 = _audit(_TRAINER_PREPARES).result("B3")
    assert b3.status.value == "used"
    assert _sites(b3) == [("mylib/trainer.py", 8)]


def test_control_self_accelerator_prepare_outside_a_trainer_subclass_is_not_shown_to_drive_training():
    files = dict(_TRAINER_PREPARES)
    files["mylib/trainer.py"] = files["mylib/trainer.py"].replace("from transformers import Trainer\n", "").replace(
        "class EmbeddingTrainer(Trainer):", "class EmbeddingTrainer:")
    assert _audit(files).result("B3").status.value == "unused"


def test_ddp_no_sync_inside_a_gradient_cache_hook_is_not_gradient_accumulation():
    # ``loss.register_hook(partial(_backward_hook, ...))`` whose replay runs under ``model.no_sync()`` (previous rule: C5 used
    # "the loop accumulates gradients (no_sync/accumulate)")
    c5 = _audit(_gradcache_loss()).result("C5")
    assert c5.status.value == "unused"
    assert "no_sync" not in c5.detail


def test_control_the_same_no_sync_replay_called_directly_still_reads_as_accumulation():
    c5 = _audit(_gradcache_loss(_CALLED)).result("C5")
    assert c5.status.value == "used"
    assert _sites(c5) == [("mylib/losses/cached_mnrl.py", 14)]


def test_amp_only_under_the_default_off_parameter_of_a_public_method_nothing_calls_is_not_in_effect():
    # ``def old_fit(self, ..., use_amp: bool = False)`` of a library class, called by no code of the project (previous
    # rule: C1 used "FP16 mixed precision": a function with no caller was an entry point whose arguments are unknown)
    c1 = _audit(_LEGACY_FIT).result("C1")
    assert c1.status.value == "unused"
    assert "use_amp = False" in c1.detail and "old_fit()" in c1.detail
    assert _sites(c1) == [("mylib/fit_mixin.py", 6)]


def test_control_the_same_method_called_with_use_amp_true_is_fp16():
    files = {**_LEGACY_FIT, "scripts/train_nli.py": (
        "from mylib.model import EmbeddingModel\n\nmodel = EmbeddingModel('bert-base-uncased')\n"
        "model.old_fit(train_objectives=[(loader, loss)], epochs=1, use_amp=True)\n")}
    c1 = _audit(files).result("C1")
    assert c1.status.value == "used"
    assert c1.detail == "FP16 mixed precision"


def test_control_a_module_function_nothing_calls_keeps_its_switch_unknown():
    # a module-level function with no caller is an entry point (a CLI command): its parameters come from elsewhere
    files = {"mylib/train.py": (
        "import torch\n\n\n"
        "def train_model(model, loader, optimizer, use_amp: bool = False):\n"
        "    scaler = torch.amp.GradScaler('cuda')\n"
        "    for batch in loader:\n"
        "        if use_amp:\n"
        "            with torch.autocast(device_type='cuda'):\n"
        "                loss = model(**batch).loss\n"
        "        scaler.scale(loss).backward()\n"
        "        scaler.step(optimizer)\n")}
    assert _audit(files).result("C1").status.value == "used"


def test_control_a_framework_called_method_keeps_its_switch_unknown():
    # ``forward(self, x, use_amp=False)`` is called through ``model(x, use_amp=...)``, which names no ``forward``
    files = {"mylib/model.py": (
        "import torch\nfrom torch import nn\n\n\n"
        "class Encoder(nn.Module):\n"
        "    def forward(self, x, use_amp: bool = False):\n"
        "        if use_amp:\n"
        "            with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n"
        "                return self.layers(x)\n"
        "        return self.layers(x)\n"),
        "mylib/train.py": "def step(model, batch, optimizer):\n    model(batch).sum().backward()\n    optimizer.step()\n"}
    assert _audit(files).result("C1").status.value == "used"


def test_a_scheduler_menu_on_a_string_nothing_passes_is_not_the_runs_schedule():
    # ``if scheduler == "constantlr": ... elif scheduler == "warmupcosine": get_cosine_schedule_with_warmup(...)`` in a helper
    # nothing calls, beside a Trainer subclass at transformers' defaults (previous rule: the menu's builders and warmups read
    # as the run's: "warmup + ..." citing the menu's branches)
    g1 = _audit(_SCHED_MENU).result("G1")
    assert g1.status.value == "partial"
    assert g1.detail == "linear (HF default) schedule without warmup"
    assert _sites(g1) == [("mylib/trainer.py", 4)]


def test_control_the_menu_called_with_a_warmup_is_a_warmup_schedule():
    files = {**_SCHED_MENU, "mylib/train.py": (
        "from mylib.schedulers import _get_scheduler\n\n\n"
        "def build(optimizer, total):\n"
        "    return _get_scheduler(optimizer, 'warmupcosine', warmup_steps=500, t_total=total)\n")}
    assert _audit(files).result("G1").status.value == "used"
