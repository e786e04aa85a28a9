"""Round 16 of issue #9 (torchft): a launch built in Python (torchx's ``ddp`` component), dotted launch flags, private test
packages and ``*_bench.py`` files. Each test of a fix fails on the engine before it; the controls pass on both."""

from __future__ import annotations

from checks.facts import Facts
from checks.facts.python import extract_python
from checks.facts.types import FileFacts
from checks.roles import BENCHMARK, TEST, path_role
from checks.rules.a_parallelism import torchx_runner

from .claims import audit as _audit

RUNNER = "examples/slurm/runner.py"


def _facts(path: str, text: str) -> FileFacts:
    ff = FileFacts(path, "python")
    extract_python(path, text, ff)
    return ff


# -- the launch record --------------------------------------------------------------------------------------------------


def test_a_torchx_ddp_call_is_a_torchrun_launch_of_its_script_with_the_list_it_is_handed():
    text = torchx_runner(nodes=2, nproc=8, log_freq=1, ckpt=100)[RUNNER]
    (launch,) = _facts(RUNNER, text).launches
    assert launch.launcher == "torchrun" and launch.script == "./torchtitan/train.py"
    assert launch.launcher_args == {"nnodes": 2, "nproc_per_node": 8}  # j=f"{nodes}x{nproc}" at the argparse defaults
    args = launch.script_args
    assert args["parallelism.data_parallel_shard_degree"] == 16  # {cli_args.nodes * cli_args.nproc_per_node}
    assert args["metrics.log_freq"] == 1 and args["checkpoint.interval"] == 100  # ``args += [...]`` included
    assert args["metrics.enable_wandb"] is True
    lines = text.split("\n")
    assert "--metrics.log_freq=1" in lines[launch.arg_line("metrics.log_freq") - 1]  # each flag at its own line
    assert "--checkpoint.interval=100" in lines[launch.arg_line("checkpoint.interval") - 1]


def test_an_unresolved_piece_stays_a_placeholder_and_a_missing_layout_is_unknown():
    text = (
        "from torchx.components.dist import ddp\n\n\n"
        "def app(cfg, extra):\n"
        "    args = [f\"--training.seed={cfg.seed}\", \"--metrics.log_freq=5\"]\n"
        "    return ddp(*args, *extra, script=\"train.py\")\n"
    )
    (launch,) = _facts("launch.py", text).launches
    assert launch.script_args == {"training.seed": "${cfg.seed}", "metrics.log_freq": 5}  # ``*extra`` is no known list
    assert launch.launcher_args == {"nproc_per_node": "${j}"}  # no j=: torchx's layout, not stated here


def test_a_flag_list_that_no_launch_call_receives_makes_no_launch():
    text = torchx_runner(launch=False)[RUNNER]
    assert _facts(RUNNER, text).launches == []


def test_a_dotted_launch_flag_sets_its_last_segment():
    ff = _facts(RUNNER, torchx_runner(log_freq=1)[RUNNER])
    found = Facts([ff]).settings("log_freq")
    assert [(s.source, s.key, s.value) for s in found] == [("launcher", "--metrics.log_freq", 1)]


# -- the checks that read it ------------------------------------------------------------------------------------------


def test_the_python_launch_decides_data_parallelism_fsdp_overlap_and_the_intervals():
    a = _audit(torchx_runner(nodes=1, nproc=8, log_freq=1, ckpt=100))
    assert a.result("A1").status.value == "used"
    assert a.result("A2").status.value == "used" and f"{RUNNER}:11" in {f"{e.path}:{e.line}" for e in a.result("A2").evidence}
    assert a.result("E2").status.value == "used" and "FSDP2" in (a.result("E2").detail or "")
    assert a.result("I3").status.value == "used"
    assert a.result("I4").status.value == "unused" and a.result("I5").status.value == "unused"


def test_a_tracker_turned_on_without_an_interval_flag_is_not_judged_from_the_launch():
    files = torchx_runner(log_freq=1)
    files[RUNNER] = files[RUNNER].replace('        "--metrics.log_freq=1",\n', "")
    assert a_status(files, "I5") == "n/a"  # the launched trainer's own default interval is not in the repository


def test_fsdp2_calls_of_the_project_are_e2s_evidence_before_a_shard_degree():
    files = {**torchx_runner(), "train.py": "from torch.distributed.fsdp import fully_shard\nfully_shard(model)\n"}
    r = _audit(files).result("E2")
    assert r.status.value == "used"
    assert [f"{e.path}:{e.line}" for e in r.evidence] == ["train.py:2"]


def a_status(files: dict[str, str], check: str) -> str:
    return _audit(files).result(check).status.value


# -- roles ------------------------------------------------------------------------------------------------------------


def test_a_private_test_package_and_a_bench_module_are_not_the_training_path():
    assert path_role("torchft/_test/diloco_trainer.py", "python")[0] == TEST
    assert path_role("pkg/_tests/helpers.py", "python")[0] == TEST
    assert path_role("torchft/checkpointing/pg_transport_bench.py", "python")[0] == BENCHMARK
    # controls: a private package of another name and a module that merely contains "bench" stay in scope
    assert path_role("pkg/_internal/trainer.py", "python")[0] is None
    assert path_role("pkg/benchmarking_utils.py", "python")[0] is None


# -- E4: the launched job's environment, and NCCL_PROTO=Simple ----------------------------------------------------------


def test_the_env_dict_handed_to_the_launch_is_the_jobs_environment_at_its_lines():
    text = (
        "import os\n\nfrom torchx.components.dist import ddp\n\n\n"
        "def make_app(nproc):\n"
        "    env = {}\n"
        "    env[\"TORCH_CUDA_SANITIZER=1\"] = \"1\"\n"  # not a variable name: dropped
        "    env[\"NCCL_DEBUG\"] = \"INFO\"\n"
        "    env[\"NCCL_PROTO\"] = \"Simple\"\n"
        "    env[\"GLOO_SOCKET_IFNAME\"] = os.environ.get(\"GLOO_SOCKET_IFNAME\")\n"
        "    return ddp(\"--training.steps=10\", script=\"train.py\", j=f\"1x{nproc}\", env=env)\n"
    )
    ff = _facts("runner.py", text)
    assert [(e.name, e.value, e.line) for e in ff.envs] == [("NCCL_DEBUG", "INFO", 9), ("NCCL_PROTO", "Simple", 10),
                                                            ("GLOO_SOCKET_IFNAME", "", 11)]
    r = _audit({"runner.py": text}).result("E4")
    assert r.status.value == "unused" and "NCCL_PROTO=Simple (runner.py:10)" in (r.detail or "")


def test_a_dict_never_handed_to_a_launch_is_no_environment_unless_named_for_one():
    # (round 47: a dict named for an environment holds one, wherever it is handed: NeMo's ``PERF_ENV_VARS``)
    text = "def table():\n    stats = {}\n    stats[\"NCCL_PROTO\"] = \"LL128\"\n    return stats\n"
    assert _facts("table.py", text).envs == []
    assert [e.name for e in _facts("table.py", text.replace("stats", "env")).envs] == ["NCCL_PROTO"]
