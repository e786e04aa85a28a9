"""Overview and step zero, round 12 of issue #9 (realhf): a profiling script named for what it profiles
(``apps/profile_layers.py``, whose ``--model_name`` defaults to ``Llama-2-70b``) is a benchmark, not the training run, so
its model name neither sizes the trained model nor feeds step zero ("large dense model (~70B ...)" was false for a
7B PPO run); the roles an RL system gives its models (``model_name="actor"``) are no model names."""

from __future__ import annotations

from checks.engine import audit_files
from checks.roles import BENCHMARK, path_role

TRAIN = (
    "import torch\n\n\n"
    "def train_step(model, batch, optimizer, loss_fn):\n"
    "    loss = loss_fn(model(batch['input_ids']).logits, batch)\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
)
PROFILER = (
    "import argparse\n\n"
    "from pkg.search_engine.layers import make_profile_layers\n\n\n"
    "if __name__ == '__main__':\n"
    "    parser = argparse.ArgumentParser(prog='profile_layers')\n"
    "    parser.add_argument('--model_path', type=str, required=True)\n"
    "    parser.add_argument('--model_name', type=str, default='Llama-2-70b')\n"
    "    args = parser.parse_args()\n"
    "    make_profile_layers('cuda', args.model_path, args.model_name)\n"
)
DFG = (
    "import dataclasses\n\n\n"
    "@dataclasses.dataclass\n"
    "class MFCDef:\n"
    "    name: str\n"
    "    model_name: str\n\n\n"
    "def rpcs():\n"
    "    return [MFCDef(name='actor_gen', model_name='actor'), MFCDef(name='critic_inf', model_name='critic'),\n"
    "            MFCDef(name='rew_inf', model_name='reward'), MFCDef(name='ref_inf', model_name='ref')]\n"
)


def test_a_profile_script_named_for_what_it_profiles_is_a_benchmark():
    assert path_role("pkg/apps/profile_layers.py", "python")[0] == BENCHMARK
    assert path_role("pkg/tools/profile_fsdp.py", "python")[0] == BENCHMARK
    # a profiler utility the trainer may import keeps its place
    assert path_role("pkg/utils/profiler/profile.py", "python")[0] is None
    assert path_role("pkg/utils/profiler.py", "python")[0] is None


def test_a_profilers_default_model_name_does_not_size_the_trained_model():
    files = {"pkg/train.py": TRAIN, "pkg/apps/profile_layers.py": PROFILER, "pkg/search_engine/layers.py": "def make_profile_layers(*a):\n    pass\n"}
    p = audit_files((k, v.encode()) for k, v in files.items()).project
    assert p.estimated_params is None
    assert "Llama-2-70b" not in p.model_names
    assert not any("70B" in r for r in p.bottleneck_reasons)


def test_rl_model_roles_are_not_model_names():
    files = {"pkg/train.py": TRAIN, "pkg/dfg.py": DFG,
             "pkg/config.py": "def cfg():\n    return dict(model_name='meta-llama/Llama-2-7b-hf', lr=1e-5)\n"}
    p = audit_files((k, v.encode()) for k, v in files.items()).project
    assert not {"actor", "critic", "reward", "ref"} & set(p.model_names)
    assert "meta-llama/Llama-2-7b-hf" in p.model_names


PPO_EXP = ("import dataclasses\n\n\n@dataclasses.dataclass\nclass PPOConfig:\n    ppo_n_minibatches: int = 4\n    kl_ctl: float = 0.1\n")


def test_the_projects_own_ppo_experiment_config_is_alignment_training():
    p = audit_files((k, v.encode()) for k, v in {"pkg/train.py": TRAIN, "pkg/experiments/ppo_exp.py": PPO_EXP}.items()).project
    assert p.alignment


def test_a_ppo_config_only_in_tests_is_not():
    p = audit_files((k, v.encode()) for k, v in {"pkg/train.py": TRAIN, "tests/test_ppo.py": PPO_EXP}.items()).project
    assert not p.alignment
