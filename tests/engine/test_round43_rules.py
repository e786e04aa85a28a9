"""Round 43 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


# --- eric-mitchell/direct-preference-optimization: a README whose runs are indented code blocks ---------------------------

_DPO_TRAINERS = (
    "import torch\nimport torch.nn.functional as F\nimport wandb\n\n\n"
    "def preference_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps, beta):\n"
    "    logits = (policy_chosen_logps - policy_rejected_logps) - (reference_chosen_logps - reference_rejected_logps)\n"
    "    return -F.logsigmoid(beta * logits)\n\n\n"
    "class BasicTrainer:\n    def __init__(self, policy, config, reference_model=None):\n        self.policy = policy\n"
    "        self.config = config\n        self.reference_model = reference_model\n\n"
    "    def train(self, batches):\n"
    "        self.optimizer = torch.optim.RMSprop(self.policy.parameters(), lr=self.config.lr)\n"
    "        for batch in batches:\n"
    "            for microbatch_idx in range(self.config.gradient_accumulation_steps):\n"
    "                loss = self.get_batch_metrics(batch[microbatch_idx], self.config.loss)\n"
    "                (loss / self.config.gradient_accumulation_steps).backward()\n"
    "            self.optimizer.step()\n            self.optimizer.zero_grad()\n"
)
_DPO_TRAIN = (
    "import hydra\nfrom omegaconf import DictConfig\nimport transformers\n\nimport trainers\n\n\n"
    "@hydra.main(version_base=None, config_path='config', config_name='config')\n"
    "def main(config: DictConfig):\n"
    "    policy = transformers.AutoModelForCausalLM.from_pretrained(config.model.name_or_path)\n"
    "    trainer = trainers.BasicTrainer(policy, config)\n    trainer.train([])\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)
_DPO_CONFIG = ("seed: 0\nbatch_size: 4\nlr: 5e-7\ngradient_accumulation_steps: 1\nwarmup_steps: 150\n\n"
               "defaults:\n- _self_\n- model: blank_model\n- loss: sft # which loss function, either sft or dpo\n")
_DPO_README = (
    "# DPO: Direct Preference Optimization\n\n## Running SFT\n\nRun SFT for Pythia 6.9B on Anthropic-HH data with batch size 64:\n\n"
    "    python -u train.py model=pythia69 datasets=[hh] loss=sft exp_name=anthropic_dpo_pythia69 gradient_accumulation_steps=2 "
    "batch_size=64 eval_batch_size=32 trainer=FSDPTrainer sample_during_eval=false\n\n"
    "## Running DPO\n\nTo run DPO, use the same command as SFT, but pass `loss=dpo`:\n\n"
    "    python -u train.py model=pythia69 datasets=[hh] loss=dpo loss.beta=0.1 exp_name=anthropic_dpo_pythia69 "
    "gradient_accumulation_steps=2 batch_size=32 eval_batch_size=32 trainer=FSDPTrainer sample_during_eval=false\n"
)


def _dpo(readme: str | None = _DPO_README) -> dict[str, str]:
    files = {"trainers.py": _DPO_TRAINERS, "train.py": _DPO_TRAIN, "config/config.yaml": _DPO_CONFIG,
             "config/loss/sft.yaml": "name: sft\n", "config/loss/dpo.yaml": "name: dpo\nbeta: ???\nreference_free: false\n",
             "config/model/blank_model.yaml": "name_or_path: ???\npolicy_dtype: float32\n"}
    if readme is not None:
        files["README.md"] = readme
    return files


def test_runs_documented_in_indented_code_blocks_are_the_documented_runs() -> None:
    """The README documents its SFT and DPO runs only in indented (four-space) code blocks, and has no fenced block: its
    DPO run makes the project an alignment project (G6 applies) and its accumulation of 2 is the run's (C5)."""
    a = _audit(_dpo())
    assert _check(a, "G6").status != Status.NA, _check(a, "G6").detail
    c5 = _check(a, "C5")
    assert c5.status == Status.USED and any(e.path == "README.md" for e in c5.evidence), c5.detail


def test_without_the_documented_runs_the_preference_project_is_read_from_its_code_alone() -> None:
    a = _audit(_dpo(readme=None))
    assert _check(a, "G6").status == Status.NA
    assert _check(a, "C5").status == Status.UNUSED  # gradient_accumulation_steps: 1 in the config
    # the same commands as a paragraph of prose are not a code block
    prose = _DPO_README.replace("\n    python", "\npython")
    assert _check(_audit(_dpo(readme=prose)), "C5").status == Status.UNUSED
