"""Launch sizes (A1), sharding sites (A2/A3), storage kinds (I1/I2) and intervals (I3-I5)."""

from __future__ import annotations

import pytest

from checks.engine import build_facts
from checks.rules.a_parallelism import fsdp_sites, inference_setting, launch_size, zero_sites
from checks.rules.i_infra import data_locations, interval, per_step_calls, storage_of, tracker_calls


def _facts(files: dict[str, str]):
    return build_facts((p, t.encode()) for p, t in files.items())


@pytest.mark.parametrize(
    ("line", "multi", "procs"),
    [
        ("torchrun train.py", False, 1),  # torchrun's default is one process
        ("torchrun --nproc_per_node=4 train.py", True, 4),
        ("torchrun --nproc-per-node gpu train.py", True, None),
        ("torchrun --nnodes 2 --nproc_per_node 1 train.py", True, 1),
        ("python -m torch.distributed.run --nproc_per_node 2 train.py", True, 2),
        ("deepspeed train.py --deepspeed ds.json", None, None),  # all visible GPUs
        ("deepspeed --num_gpus 1 train.py", False, 1),
        ("deepspeed --include localhost:0,1,2,3 train.py", True, 4),
        ("accelerate launch --num_processes 1 train.py", False, 1),
        ("accelerate launch --multi_gpu train.py", True, None),
        ("CUDA_VISIBLE_DEVICES=0 llamafactory-cli train cfg.yaml", False, 1),
        ("CUDA_VISIBLE_DEVICES=0,1 llamafactory-cli train cfg.yaml", True, 2),
        ("python train.py --lr 1", False, 1),
    ],
)
def test_launch_size(line, multi, procs):
    f = _facts({"run.sh": line + "\n"})
    [launch] = f.launches()
    ls = launch_size(f, launch)
    assert ls is not None and ls.multi is multi and ls.procs == procs


def test_accelerate_config_file_is_read():
    f = _facts({"run.sh": "accelerate launch --config_file configs/acc.yaml train.py\n",
                "configs/acc.yaml": "distributed_type: MULTI_GPU\nnum_processes: 8\n"})
    ls = launch_size(f, f.launches()[0])
    assert ls is not None and ls.multi is True and ls.procs == 8


def test_fsdp_strategy_names():
    f = _facts({"a.yaml": "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: 3\n",
                "b.yaml": "fsdp: hybrid_shard auto_wrap\n"})
    got = {(s.how, s.sharded, s.strategy) for s in fsdp_sites(f)}
    assert ("accelerate distributed_type: FSDP", False, "NO_SHARD") in got
    assert ("fsdp", True, "HYBRID_SHARD") in got


def test_zero_stage_from_python_dict_and_referenced_name():
    f = _facts({"train.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--zero_stage', type=int, default=3)\n"
                            "ds_config = {'zero_optimization': {'stage': args.zero_stage}}\n",
                "run.sh": "deepspeed train.py --deepspeed configs/zero2_offload.json\n"})
    stages = sorted(s.stage for s in zero_sites(f) if s.stage is not None)
    assert 3 in stages and 2 in stages


def test_inference_keys_are_components_not_substrings():
    f = _facts({"ppo.yaml": "actor_rollout_ref:\n  actor:\n    ulysses_sequence_parallel_size: 2\n"
                            "  rollout:\n    tensor_model_parallel_size: 4\n"})
    sp = f.effective("ulysses_sequence_parallel_size")[0]
    tp = f.effective("tensor_model_parallel_size")[0]
    assert not inference_setting(sp)
    assert inference_setting(tp)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("s3://bucket/x", "object-store"), ("oss://b/x", "object-store"), ("gs://b/x", "object-store"),
        ("hdfs://nn:8020/data", "hdfs"), ("/mnt/hdfs/user/data", "hdfs"), ("cfs://vol/a", "cfs"),
        ("/mnt/cfs/datasets", "cfs"), ("/nfs/shared/data", "nfs"), ("/dev/shm/data", "ramdisk"),
        ("/mnt/nvme0/corpus", "local-ssd"), ("/raid/data", "local-ssd"), ("/lustre/fsw/pile", "parallel-fs"),
        ("data/alpaca.json", "local"), ("/mnt/confs/data", "local"), ("pipe:aws s3 cp s3://b/shard-{0..9}.tar -", "object-store"),
    ],
)
def test_storage_kinds(path, kind):
    assert storage_of(path) == kind


def test_staging_sources_and_output_paths_are_not_training_data():
    f = _facts({"prep.py": "import subprocess\nsubprocess.run(['aws', 's3', 'sync', 's3://bucket/data', '/local/data'])\n",
                "train.py": "out = '/mnt/nfs/checkpoints/run1'\ntorch.save(sd, '/mnt/nfs/output/model.pt')\n"})
    # the bucket is only the source of a copy; the copy's destination is where training reads
    assert [(d.value, d.kind) for d in data_locations(f)] == [("/local/data", "local")]


@pytest.mark.parametrize(
    ("value", "steps", "kind"),
    [(1, 1.0, "steps"), ("500", 500.0, "steps"), (0.1, 0.1, "ratio"), ("1000ba", 1000.0, "steps"), ("1ep", None, "epoch"),
     ("epoch", None, "epoch"), (-1, None, "off"), (0, None, "off"), ("30m", None, "time")],
)
def test_interval(value, steps, kind):
    assert interval(value) == (steps, kind)


def test_modulo_guard_resolves_the_interval_setting():
    src = (
        "import wandb\nlog_every = 2\nfor step, batch in enumerate(loader):\n    loss = model(batch)\n    loss.backward()\n"
        "    optimizer.step()\n    if step % log_every == 0:\n        wandb.log({'loss': loss.item()})\n"
        "    if (step + 1) % args.gradient_accumulation_steps == 0:\n        wandb.log({'lr': lr})\n"
    )
    f = _facts({"train.py": src})
    hits = {(c.line, n) for c, n in per_step_calls(f, tracker_calls(f), 10)}
    assert hits == {(8, 2.0), (10, 1.0)}  # every 2 steps, and once per optimizer step


def test_epoch_loop_and_eval_loop_are_not_step_loops():
    src = (
        "import torch\nfor epoch in range(num_epochs):\n    for batch in loader:\n        loss = model(batch)\n"
        "        loss.backward()\n        optimizer.step()\n    scheduler.step()\n    torch.save(model.state_dict(), 'e.pt')\n"
        "for batch in val_loader:\n    print(model(batch))\n"
    )
    f = _facts({"train.py": src})
    assert per_step_calls(f, f.calls("torch.save", "print"), 50) == []


@pytest.mark.parametrize(
    ("guard", "every_step"),
    [
        ("accelerator.is_main_process", True),
        ("args.with_tracking and dist.get_rank() == 0", True),
        ("accelerator.sync_gradients", True),
        ("writer is not None", True),
        ("torch.isnan(loss)", False),  # a warning branch, not every step
        ("step == 0", False),
        ("global_step % 100 == 0 and rank == 0", False),
        ("do_log", False),
    ],
)
def test_guards(guard, every_step):
    from checks.rules.i_infra import _guard

    guarded, _ = _guard(_facts({"x.py": "x = 1\n"}), guard)
    assert guarded is (not every_step)


def test_tp_larger_than_a_node_is_a_finding_at_the_flag():
    from checks.base import REGISTRY, all_checks
    from checks.engine import AuditOptions, build_facts, run_checks
    from checks.project import detect_project

    all_checks()
    files = {"run.sh": "GPUS_PER_NODE=4\ntorchrun --nproc_per_node $GPUS_PER_NODE --nnodes 4 pretrain_gpt.py \\\n"
                       "    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 --bf16\n"}
    facts = build_facts((p, t.encode()) for p, t in files.items())
    [r], _ = run_checks(facts, detect_project(facts), AuditOptions(), [REGISTRY["A4"]])
    assert r.status.value == "used" and r.values["tp_exceeds_node"] is True
    assert [e.value for e in r.findings] == [8] and "4 GPUs of one node" in r.detail
    files = {"run.sh": "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --tensor-model-parallel-size 8 --bf16\n"}
    facts = build_facts((p, t.encode()) for p, t in files.items())
    [r], _ = run_checks(facts, detect_project(facts), AuditOptions(), [REGISTRY["A4"]])
    assert r.status.value == "used" and not r.findings and "tp_exceeds_node" not in r.values


def test_a_jinja_templated_job_script_keeps_its_launch():
    """picotron's ``template/base_job.slurm``: ``{{ n_proc_per_node }}`` is filled in by create_config.py, not a word."""
    slurm = ("#!/bin/bash\n#SBATCH --nodes={{ nodes }}\n#SBATCH --gres=gpu:{{ n_proc_per_node }}\n"
             'CMD="$GIT_REPO/train.py --config {{ config }}"\n'
             'LAUNCHER="torchrun --nproc_per_node={{ n_proc_per_node }} --nnode={{ nodes }} --node_rank=$SLURM_NODEID"\n'
             "srun -u $LAUNCHER $CMD\n")
    facts = _facts({"template/base_job.slurm": slurm})
    [launch] = facts.launches()
    assert launch.launcher == "torchrun" and launch.script.endswith("train.py") and launch.line == 6
    assert launch.launcher_args["nproc_per_node"] == "${n_proc_per_node}"
    assert launch_size(facts, launch).multi is not False  # a placeholder count is not one process
