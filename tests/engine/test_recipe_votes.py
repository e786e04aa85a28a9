"""Recipes that disagree on a tuning value are judged by their majority, else by the documented default (issue 9).

A recipe is a YAML/JSON config, a Python recipe module exec'ed over an entry point's module-level defaults
(nanoGPT's ``config/*.py``), or a launch script (Megatron-LM's ``examples/**/*.sh``). Each runs with one value:
the one it sets, else the entry point's own value / the framework's code default when that default is known.
"""

from __future__ import annotations

from checks.engine import AuditOptions, audit_files
from checks.facts import Facts, extract_file
from checks.model import Status

NANO_TRAIN = (
    "import os\nimport time\nimport torch\n"
    "# default config values designed to train a gpt2 (124M) on OpenWebText\n"
    "out_dir = 'out'\neval_interval = 2000\nlog_interval = 1\neval_iters = 200\neval_only = False\n"
    "wandb_log = False # disabled by default\nbatch_size = 12\nmax_iters = 600000\ninit_from = 'scratch'\n"
    "config_keys = [k for k,v in globals().items() if not k.startswith('_')]\n"
    "exec(open('configurator.py').read()) # overrides from command line or config file\n"
    "while True:\n    loss = model(X, Y)\n    loss.backward()\n    optimizer.step()\n"
    "    if iter_num % log_interval == 0 and master_process:\n        print(f'iter {iter_num}: loss {loss.item():.4f}')\n"
    "    iter_num += 1\n"
)
CONFIGURATOR = (
    "import sys\nfrom ast import literal_eval\nfor arg in sys.argv[1:]:\n    if '=' not in arg:\n        config_file = arg\n"
    "        exec(open(config_file).read())\n"
)


def _audit(files: dict[str, str]):
    return audit_files(((p, t.encode()) for p, t in files.items()), options=AuditOptions())


def _facts(files: dict[str, str]) -> Facts:
    return Facts(extract_file(p, t.encode()) for p, t in files.items())


def _nano(**recipes: str) -> dict[str, str]:
    return {"train.py": NANO_TRAIN, "configurator.py": CONFIGURATOR, **{f"config/{k}.py": v for k, v in recipes.items()}}


def test_recipe_modules_vote_with_the_entry_default_for_names_they_leave_unset():
    files = _nano(
        train_gpt2="wandb_log = True\nbatch_size = 12\neval_interval = 1000\nlog_interval = 10\n",
        train_shakespeare_char="out_dir = 'out-shakespeare-char'\neval_interval = 250\nlog_interval = 10 # don't print too often\n",
        finetune_shakespeare="import time\nout_dir = 'out-shakespeare'\neval_interval = 5\nwandb_run_name = 'ft-' + str(time.time())\n",
    )
    f = _facts(files)
    assert f.recipe_modules() == {f"config/{n}.py": "train.py" for n in ("train_gpt2", "train_shakespeare_char", "finetune_shakespeare")}
    assert [(s.path, s.value) for s in f.effective("log_interval")] == [("config/train_gpt2.py", 10), ("config/train_shakespeare_char.py", 10)]
    assert f.distributions()["log_interval"] == {"10": 2, "1": 1}
    i4 = _audit(files).result("I4")
    assert i4.status == Status.USED, i4.detail
    assert ("log_interval: 10 in 2 recipes, 1 in 1 recipe (judged by the majority; 1 recipe leaves it unset and runs with the "
            "default 1 at train.py:7)") in i4.detail


def test_recipe_modules_whose_majority_keeps_the_entry_default_are_judged_by_it():
    files = _nano(
        train_gpt2="batch_size = 12\neval_interval = 1000\nlog_interval = 10\n",
        train_small="out_dir = 'out-small'\nbatch_size = 64\n",
        finetune="out_dir = 'out-ft'\nbatch_size = 1\n",
    )
    i4 = _audit(files).result("I4")
    assert i4.status == Status.UNUSED and "log_interval: 1 in 2 recipes, 10 in 1 recipe (judged by the majority" in i4.detail
    assert [(e.path, e.value) for e in i4.findings][:1] == [("train.py", 1)]


def test_no_majority_among_recipe_modules_is_judged_by_the_entry_default():
    files = _nano(a="eval_interval = 1000\nbatch_size = 8\n", b="eval_interval = 250\nbatch_size = 8\n", c="eval_interval = 5\nbatch_size = 8\n")
    f = _facts(files)
    assert [(s.path, s.value) for s in f.effective("eval_interval")] == [("train.py", 2000)]
    assert f.distribution_judged()["eval_interval"] == "default train.py:6"


def test_a_function_local_of_the_same_name_is_not_the_entry_points_module_level_default():
    # a sampling helper's own ``batch_size = 1`` in the entry point is a local of that function: recipes that leave
    # ``batch_size`` unset still run with the module-level 12, and 12 is the majority
    train = NANO_TRAIN + "def sample_once(model):\n    batch_size = 1\n    return model.generate(batch_size)\n"
    files = {"train.py": train, "configurator.py": CONFIGURATOR,
             "config/a.py": "batch_size = 8\neval_interval = 250\n",
             "config/b.py": "eval_interval = 250\nlog_interval = 10\n",
             "config/c.py": "eval_interval = 5\nwandb_log = True\n"}
    f = _facts(files)
    assert len(f.recipe_modules()) == 3
    kept = [(s.path, s.line, s.value) for s in f.effective("batch_size")]
    assert ("train.py", 11, 12) in kept and ("config/a.py", 1, 8) not in kept
    assert f.distributions()["batch_size"] == {"12": 2, "8": 1}


def test_eval_recipes_and_modules_without_an_exec_entry_are_not_recipes():
    files = _nano(
        eval_gpt2="batch_size = 8\neval_iters = 500\neval_only = True\nwandb_log = False\ninit_from = 'gpt2'\n",
        ft_eval="batch_size = 8\neval_only = True\nlog_interval = 1\n",
        train_a="batch_size = 8\nlog_interval = 10\n",
    )
    assert set(_facts(files).recipe_modules()) == {"config/train_a.py"}
    # constants imported by the training code (no exec of a configurator) are code, not recipes
    plain = {"train.py": NANO_TRAIN.replace("exec(open('configurator.py').read())", "from config import settings"),
             "config/settings.py": "batch_size = 8\nlog_interval = 10\n"}
    assert _facts(plain).recipe_modules() == {}
    # a module with a function is not a recipe
    with_def = _nano(train_a="batch_size = 8\nlog_interval = 10\ndef helper():\n    return print('x')\n")
    assert _facts(with_def).recipe_modules() == {}


MEG_DEFAULTS = (
    "from dataclasses import dataclass\n@dataclass\nclass TrainingConfig:\n    micro_batch_size: int = 1\n"
    "    log_interval: int = 100\n    \"\"\"Report loss and timing interval.\"\"\"\n"
)


def _meg(flags: list[str], defaults: str = MEG_DEFAULTS) -> dict[str, str]:
    files = {"megatron/training/config/training_config.py": defaults}
    for i, fl in enumerate(flags):
        files[f"examples/run_{i}.sh"] = f"torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 1 {fl}\n"
    return files


def test_launch_scripts_that_leave_a_flag_unset_count_with_the_known_default():
    files = _meg(["--log-interval 1", "--log-interval 1", "", "", "", "", "--log-interval 10"])
    f = _facts(files)
    eff = f.effective("log_interval")
    assert f.distributions()["log_interval"] == {"100": 4, "1": 2, "10": 1}
    # recipes vote by I4's verdict: 100 and 10 are both sane (5 of 7), so both are kept and the launches at 1 are left out
    assert sorted((s.path, s.value) for s in eff) == [("examples/run_6.sh", 10), ("megatron/training/config/training_config.py", 100)]
    i4 = _audit(files).result("I4")
    assert i4.status == Status.USED, i4.detail
    assert ("log_interval: 100 in 4 recipes, 1 in 2 recipes, 10 in 1 recipe (judged by the majority: every 10 steps or more (or a "
            "ratio, or off) in 5 of 7 recipes; 4 recipes leave it unset and run with the default 100 at "
            "megatron/training/config/training_config.py:5)") in i4.detail
    # no majority of verdicts (3 every 1-9 steps, 3 at 10 or more): judged by the documented default, Megatron's own
    split = _audit(_meg(["--log-interval 1", "--log-interval 2", "--log-interval 5", "", "", "--log-interval 20"])).result("I4")
    assert split.status == Status.USED and ("(no majority: judged by the default at megatron/training/config/training_config.py:5"
                                            in split.detail), split.detail


def test_launch_scripts_vote_by_verdict_not_by_exact_value():
    """Megatron-LM: most launches log every 1-5 steps, each value held by a minority, the rest run with the default 100."""
    files = _meg(["--log-interval 1", "--log-interval 1", "--log-interval 2", "--log-interval 5", "--log-interval 5", "", "", ""])
    f = _facts(files)
    f.effective("log_interval")
    assert f.distributions()["log_interval"] == {"1": 2, "2": 1, "5": 2, "100": 3}
    i4 = _audit(files).result("I4")
    assert i4.status == Status.UNUSED, i4.detail
    assert "(judged by the majority: every 1-9 steps in 5 of 8 recipes;" in i4.detail, i4.detail
    assert sorted(e.value for e in i4.findings) == [1, 1, 2, 5, 5]


def test_launch_scripts_whose_majority_logs_every_step_are_a_finding():
    i4 = _audit(_meg(["--log-interval 1"] * 4 + ["", "--log-interval 10"])).result("I4")
    assert i4.status == Status.UNUSED and "log_interval: 1 in 4 recipes" in i4.detail, i4.detail


def test_an_unknown_default_counts_only_the_launches_that_set_the_flag():
    # two code defaults that disagree: the trainer's default is not known, so launches without the flag are not counted
    other = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--log-interval', type=int, default=50)\n"
    files = {**_meg(["--log-interval 1", "--log-interval 1", "--log-interval 20", "", "", ""]), "scripts/finetune_helper.py": other}
    f = _facts(files)
    f.effective("log_interval")
    assert f.distributions()["log_interval"] == {"1": 2, "20": 1}
    assert _audit(files).result("I4").status == Status.UNUSED
    # a data-preparation script's own --log-interval (its progress interval) does not make the trainer's default unknown
    prep = {**files, "scripts/finetune_helper.py": "x = 1\n",
            "tools/preprocess_data.py": other.replace("default=50", "default=1000")}
    f = _facts(prep)
    f.effective("log_interval")
    assert f.distributions()["log_interval"] == {"100": 3, "1": 2, "20": 1}


def test_parallel_layouts_are_not_voted():
    """A pipeline-parallel degree is a layout the project offers for its larger models, not a tuning value."""
    files = _meg(["--pipeline-model-parallel-size 1"] * 4 + ["--pipeline-model-parallel-size 16"])
    f = _facts(files)
    assert {s.value for s in f.effective("pipeline_model_parallel_size")} == {1, 16}
    assert "pipeline_model_parallel_size" not in f.distributions()


def test_no_majority_is_judged_by_the_recipes_the_readme_documents():
    readme = "# tiny-gpt\n\nTrain the small model:\n\n```sh\npython train.py config/train_small.py\n```\n"
    files = {**_nano(train_small="batch_size = 8\nlog_interval = 50\n", train_big="batch_size = 8\nlog_interval = 5\n",
                     train_mid="batch_size = 8\nlog_interval = 2\n", train_xl="batch_size = 8\nlog_interval = 20\n"), "README.md": readme}
    f = _facts(files)
    assert [(s.path, s.value) for s in f.effective("log_interval")] == [("config/train_small.py", 50), ("config/train_xl.py", 20)]
    i4 = _audit(files).result("I4")
    assert i4.status == Status.USED and "(no majority: judged by the recipes documented at README.md:6)" in i4.detail, i4.detail


def test_a_majority_of_verdicts_wins_over_the_documented_recipe_which_is_named():
    """Majority first, as every recipe vote: the README's recipe decides only without a majority; when it runs otherwise the
    detail names it (lmms-engine: 19 of 27 recipes with 4 or more loader workers, the README's recipe with 0)."""
    readme = "# tiny-gpt\n\nTrain the small model:\n\n```sh\npython train.py config/train_small.py\n```\n"
    files = {**_nano(train_small="batch_size = 8\nlog_interval = 50\n", train_big="batch_size = 8\nlog_interval = 5\n",
                     train_mid="batch_size = 8\nlog_interval = 2\n"), "README.md": readme}
    i4 = _audit(files).result("I4")
    assert i4.status == Status.UNUSED, i4.detail
    assert ("(judged by the majority: every 1-9 steps in 2 of 3 recipes; the recipe documented at README.md:6 uses 50)"
            in i4.detail), i4.detail
    # a module named by the documented command is a recipe outside a config folder too
    moved = {"train.py": NANO_TRAIN, "configurator.py": CONFIGURATOR, "small.py": "batch_size = 8\nlog_interval = 50\n",
             "README.md": readme.replace("config/train_small.py", "small.py")}
    assert _facts(moved).recipe_modules() == {"small.py": "train.py"}


def test_a_guarded_save_names_its_interval_setting_and_its_recipe_distribution():
    train = NANO_TRAIN.replace("    iter_num += 1\n", "    if iter_num % eval_interval == 0 and master_process:\n"
                               "        torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))\n    iter_num += 1\n")
    files = {**_nano(a="eval_interval = 1000\nbatch_size = 8\n", b="eval_interval = 250\nbatch_size = 8\n",
                     c="eval_interval = 5\nbatch_size = 8\n"), "train.py": train}
    i3 = _audit(files).result("I3")
    assert i3.status == Status.USED and "save() every 2000 steps (eval_interval)" in i3.detail, i3.detail
    assert "eval_interval: " in i3.detail and "(no majority: judged by the default at train.py:6)" in i3.detail
    assert i3.values["eval_interval"] == 2000


def test_yaml_recipes_that_leave_a_name_unset_count_at_the_known_code_default():
    """A YAML recipe of the same family that does not set ``logging_steps`` runs with the config class's default (10 here);
    a DeepSpeed JSON beside them is not a recipe of that family."""
    cfg = "from dataclasses import dataclass\n@dataclass\nclass TrainArgs:\n    logging_steps: int = 10\n    save_steps: int = 500\n"
    base = "model_name_or_path: Qwen/Qwen2-7B\nlearning_rate: 1.0e-5\nnum_train_epochs: 3\nbf16: true\n"
    files = {"src/proj/args.py": cfg,
             "examples/a.yaml": base + "logging_steps: 1\n", "examples/b.yaml": base + "logging_steps: 1\n",
             "examples/c.yaml": base, "examples/d.yaml": base, "examples/e.yaml": base,
             "examples/ds_z3.json": '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 1}\n'}
    f = _facts(files)
    f.effective("logging_steps")
    assert f.distributions()["logging_steps"] == {"1": 2, "10": 3}
    assert f.distribution_defaults()["logging_steps"] == {"10": (3, "src/proj/args.py:4")}
    i4 = _audit(files).result("I4")
    assert i4.status == Status.USED, i4.detail
    assert "3 recipes leave it unset and run with the default 10 at src/proj/args.py:4" in i4.detail, i4.detail
    # without a known default (two code defaults disagree) only the recipes that set it vote
    other = {**files, "src/proj/other.py": cfg.replace("logging_steps: int = 10", "logging_steps: int = 50")}
    assert _audit(other).result("I4").status == Status.UNUSED
