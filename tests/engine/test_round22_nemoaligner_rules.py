"""Rules of round 22 of issue #9 (nemo-aligner 0.7.0rc0: NeMo-Aligner's own DPO/PPO/SFT trainer loops over NeMo Megatron GPT
models, whose example scripts and configs are not shipped): each rule test fails on the rule before it; each control passes
on both."""

from __future__ import annotations

from checks.model import Status

from .claims import audit as _audit

#: a NeMo-Aligner-like trainer: ``fit`` loops over the batches and calls ``train_single_step``, whose forward and backward run
#: inside the model's pipeline schedule (no ``backward`` of its own) before ``self.optimizer.step``; then a tracker report, a
#: progress helper handed the intervals, and a guarded save through the Lightning checkpoint callback
_TRAINER = (
    "import torch\nfrom tqdm import tqdm\n\nfrom pkg.utils.trainer_utils import check_progress\n\n\n"
    "class DPOTrainer:\n"
    "    def train_single_step(self, batch):\n        self.optimizer.zero_grad()\n"
    "        loss_mean, metrics = self.model.get_loss_and_metrics(batch=batch, forward_only=False)\n"
    "        self.optimizer.step(closure=None)\n        self.scheduler.step()\n        return loss_mean, metrics\n\n"
    "    def fit(self):\n        global_pbar = tqdm(self.train_dataloader, total=self.max_steps)\n"
    "        for _, batch in zip(range(self.max_steps), global_pbar):\n"
    "            loss, metrics = self.train_single_step(batch)\n"
    "{report}"
    "            self.step += 1\n"
    "            run_val, save_model, is_train_end = check_progress(\n"
    "                self.step, self.max_steps, self.val_check_interval, self.cfg.save_interval, self.limit_val_batches\n"
    "            )\n"
    "{save}"
    "\n    def save(self, extra_candidates=None, is_train_end=False):\n"
    "        torch.distributed.barrier()\n"
    "        self.ckpt_callback.custom_save(monitor_candidates=extra_candidates, is_train_end=is_train_end)\n"
)
_REPORT = "            self.logger.log_metrics(metrics, step=self.step, prefix='train/')\n"
_REPORT_SPACED = ("            if self.step % self.cfg.log_interval == 0:\n"
                  "                self.logger.log_metrics(metrics, step=self.step, prefix='train/')\n")
_SAVE = "            if save_model:\n                self.save(metrics, is_train_end=is_train_end)\n"
_UTILS = (
    "def check_progress(step, max_steps, val_check_interval, save_interval, limit_val_batches):\n"
    "    run_val = step % val_check_interval == 0 or step == max_steps\n"
    "    save_model = save_interval > 0 and (step % save_interval == 0 or step == max_steps)\n"
    "    return run_val, save_model, step == max_steps\n"
)
_MODEL = (
    "from nemo.collections.nlp.models.language_modeling.megatron_gpt_model import MegatronGPTModel\n\n\n"
    "class MegatronGPTDPOModel(MegatronGPTModel):\n"
    "    def get_loss_and_metrics(self, batch, forward_only):\n"
    "        return self.fwd_bwd_function(batch, forward_only=forward_only)\n"
)


def _project(report: str = _REPORT, save: str = _SAVE, config: str | None = None) -> dict[str, str]:
    files = {"pkg/algorithms/dpo.py": _TRAINER.format(report=report, save=save), "pkg/utils/trainer_utils.py": _UTILS,
             "pkg/models/megatron_gpt_dpo_model.py": _MODEL}
    if config is not None:
        files["conf/gpt_dpo.yaml"] = config
    return files


def test_a_tracker_report_in_a_loop_over_a_step_helper_without_backward_is_per_step():
    # the loop's iteration is one optimizer step although the helper never calls backward (the pipeline schedule does)
    r = _audit(_project()).result("I5")
    assert r.status is Status.UNUSED
    assert "every step" in r.detail
    assert (r.evidence[0].path, r.evidence[0].line) == ("pkg/algorithms/dpo.py", 19)


def test_a_tracker_report_under_an_interval_guard_is_sane():
    r = _audit(_project(report=_REPORT_SPACED, config="log_interval: 50\n")).result("I5")
    assert r.status is Status.USED


def test_a_save_under_a_flag_from_a_progress_helper_handed_the_save_interval_is_interval_guarded():
    r = _audit(_project()).result("I3")
    assert r.status is Status.USED
    assert "save() under `" in r.detail and "save_model`" in r.detail
    assert (r.evidence[0].path, r.evidence[0].line) == ("pkg/algorithms/dpo.py", 25)


def test_control_a_config_save_interval_under_the_threshold_is_too_frequent():
    # passes before the rule too (the config key alone is read); with the rule the guarded save agrees with it
    r = _audit(_project(config="save_interval: 5\n")).result("I3")
    assert r.status is Status.UNUSED  # every 5 steps, under the threshold of 50
    assert "every 5 steps" in r.detail


def test_control_an_unguarded_save_in_the_loop_is_every_step():
    r = _audit(_project(save="            self.save(metrics, is_train_end=is_train_end)\n")).result("I3")
    assert r.status is Status.UNUSED
    assert "every step" in r.detail


def test_the_projects_own_dpo_trainer_module_is_alignment_training():
    audit = _audit(_project())
    r = audit.result("G6")
    assert r.status is Status.UNUSED  # judged: the DPO loss over full logits, not "no alignment training"
    assert "pkg/algorithms/dpo.py" in r.detail


def test_control_the_same_trainer_in_an_sft_module_is_not_alignment():
    files = _project()
    files["pkg/algorithms/supervised.py"] = files.pop("pkg/algorithms/dpo.py").replace("DPOTrainer", "SupervisedTrainer")
    assert _audit(files).result("G6").status is Status.NA


def test_a_subclass_of_nemos_megatron_gpt_model_runs_its_default_fusions():
    r = _audit(_project()).result("D6")
    assert r.status is Status.USED
    assert (r.evidence[0].path, r.evidence[0].line) == ("pkg/models/megatron_gpt_dpo_model.py", 4)


def test_control_nemos_fusions_switched_off_in_the_config():
    r = _audit(_project(config="model:\n  bias_activation_fusion: false\n  bias_dropout_add_fusion: false\n")).result("D6")
    assert r.status is Status.UNUSED


def test_pytriton_endpoint_names_are_not_model_names():
    files = _project()
    files["pkg/servers/critic_server.py"] = (
        "from pytriton.triton import Triton\n\n\ndef serve(self):\n    with Triton() as triton:\n"
        "        triton.bind(model_name='critic_infer', infer_func=self.infer, inputs=[], outputs=[])\n"
        "        triton.bind(model_name='critic_train', infer_func=self.train, inputs=[], outputs=[])\n        triton.serve()\n"
    )
    assert _audit(files).project.model_names == []
