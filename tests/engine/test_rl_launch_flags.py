"""An RL trainer's launch passes its rollout engine's flags beside its own (OpenRLHF ``--vllm.num_engines 4
--ds.zero_stage 3``): the training flags are training settings; a serving script is not a training site (issue #9)."""

from __future__ import annotations

from checks.engine import AuditOptions, audit_files
from checks.model import Status

CLI = (
    "import argparse\nfrom openrlhf.trainer import PPOTrainer\n\n\ndef train(args):\n    PPOTrainer(args).fit()\n\n\n"
    "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--ds.zero_stage', type=int, default=2)\n"
    "    parser.add_argument('--ds.attn_implementation', type=str, default='flash_attention_2')\n"
    "    parser.add_argument('--vllm.num_engines', type=int, default=None)\n"
    "    train(parser.parse_args())\n"
)
SCRIPT = (
    "set -x\n\npython3 -m openrlhf.cli.train_ppo_ray \\\n"
    "   --vllm.num_engines 4 \\\n   --vllm.tensor_parallel_size 2 \\\n   --ds.zero_stage 3 \\\n   --ds.attn_implementation {attn}\n"
)
SERVE = "python -m openrlhf.cli.serve_rm \\\n    --ds.attn_implementation flash_attention_2 \\\n    --port 5000\n"


def _audit(files: dict[str, str]):
    return audit_files(((p, t.encode()) for p, t in files.items()), options=AuditOptions())


def test_the_zero_stage_of_an_rl_launch_that_also_configures_vllm_is_the_training_stage():
    a = _audit({"openrlhf/cli/train_ppo_ray.py": CLI, "examples/scripts/train_ppo.sh": SCRIPT.format(attn="flash_attention_2")})
    r = a.result("A3")
    assert r.status == Status.USED and r.detail == "ZeRO stage 3 via zero_stage"
    assert [(e.path, e.line) for e in r.evidence] == [("examples/scripts/train_ppo.sh", 6)]


def test_a_reward_model_server_is_not_cited_as_a_training_site():
    files = {"openrlhf/cli/train_ppo_ray.py": CLI.replace("default='flash_attention_2'", "default=None"),
             "examples/scripts/train_vlm.sh": SCRIPT.format(attn="eager"), "examples/scripts/serve_remote_rm.sh": SERVE}
    r = _audit(files).result("D1")
    assert r.status == Status.PARTIAL
    assert "serve_remote_rm.sh" not in r.detail.split("although", 1)[1] or "only serving sites" in r.detail
