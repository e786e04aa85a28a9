"""E1-E4 beyond their examples: topology, applicability, recommendations, values and findings."""

from __future__ import annotations

from checks.model import Status

from ._audit import audit


def test_localhost_rendezvous_with_one_node_is_single_node() -> None:
    res, project = audit({"run.sh": "torchrun --nnodes 1 --nproc_per_node 8 --master_addr 127.0.0.1 train.py\n"}, "E1")
    assert not project.multi_node
    assert res["E1"].status == Status.NA


def test_node_count_from_the_environment_is_multi_node() -> None:
    res, project = audit({"run.sh": "torchrun --nnodes $NNODES --node_rank $NODE_RANK --master_addr $MASTER_ADDR --nproc_per_node 8 train.py\n"}, "E1")
    assert project.multi_node
    assert res["E1"].status == Status.UNUSED
    assert res["E1"].priority is not None


def test_sbatch_nodes_make_a_multi_node_project() -> None:
    _, project = audit({"job.sbatch": "#!/bin/bash\n#SBATCH -N 4\nsrun python train.py\n"}, "E1")
    assert project.multi_node and project.num_nodes == 4


def test_rdma_settings_make_e1_applicable_even_without_a_node_count() -> None:
    res, _ = audit({"env.sh": "export NCCL_IB_HCA=mlx5_0,mlx5_1\nexport NCCL_IB_GID_INDEX=3\n"}, "E1")
    assert res["E1"].status == Status.USED
    assert res["E1"].values["rdma_vars"] == ["NCCL_IB_GID_INDEX", "NCCL_IB_HCA"]
    assert {e.key for e in res["E1"].evidence} == {"NCCL_IB_HCA", "NCCL_IB_GID_INDEX"}


def test_single_gpu_project_gets_no_communication_advice() -> None:
    files = {"train.py": "import torch\nfor x, y in loader:\n    loss = model(x.cuda()).sum()\n    loss.backward()\n    opt.step()\n"}
    res, _ = audit(files, "E2", "E3", "E4")
    for cid in ("E2", "E3", "E4"):
        # one process exchanges no gradients: not judged, out of the score (not "missing"), and no advice
        assert res[cid].status == Status.NA and "no distributed training found" in (res[cid].detail or "")
        assert res[cid].priority is None and res[cid].recommendation is None


def test_multi_gpu_project_gets_overlap_advice() -> None:
    res, _ = audit({"ds.json": '{"zero_optimization": {"stage": 2}}', "run.sh": "deepspeed --num_gpus 8 train.py --deepspeed ds.json\n"}, "E2")
    assert res["E2"].status == Status.UNUSED
    assert res["E2"].priority is not None


def test_explicit_overlap_false_beats_the_zero3_default() -> None:
    res, _ = audit({"ds.json": '{\n  "zero_optimization": {\n    "stage": 3,\n    "overlap_comm": false\n  }\n}\n'}, "E2")
    assert res["E2"].status == Status.UNUSED
    assert res["E2"].evidence[0].line == 4 and res["E2"].evidence[0].value is False


def test_fsdp_without_backward_prefetch_argument_uses_the_torch_default() -> None:
    res, _ = audit({"train.py": "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nmodel = FSDP(model, use_orig_params=True)\n"}, "E2")
    assert res["E2"].status == Status.USED
    res, _ = audit({"train.py": "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nmodel = FSDP(model, backward_prefetch=None)\n"}, "E2")
    assert res["E2"].status == Status.PARTIAL


def test_vendored_megatron_argparse_default_is_not_overlap() -> None:
    files = {
        "megatron/arguments.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--overlap-grad-reduce', action='store_true')\n",
        "run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2 --tensor-model-parallel-size 2\n",
    }
    res, _ = audit(files, "E2")
    assert res["E2"].status == Status.UNUSED
    files["run.sh"] = files["run.sh"].rstrip("\n") + " --overlap-grad-reduce\n"
    res, _ = audit(files, "E2")
    assert res["E2"].status == Status.USED


def test_grad_compression_kinds_are_reported() -> None:
    files = {"ds.json": '{"communication_data_type": "bf16", "optimizer": {"type": "OneBitAdam"}}'}
    res, _ = audit(files, "E3")
    assert res["E3"].status == Status.USED
    assert res["E3"].values["grad_compression"] == ["1-bit", "low-precision"]


def test_allreduce_hook_is_not_compression() -> None:
    files = {"train.py": "from torch.distributed.algorithms.ddp_comm_hooks import default_hooks\nmodel.register_comm_hook(None, default_hooks.allreduce_hook)\n"}
    res, _ = audit(files, "E3")
    assert res["E3"].status == Status.UNUSED


def test_nccl_values_and_p2p_finding() -> None:
    files = {"run.sh": "export NCCL_DEBUG=INFO\nexport NCCL_SOCKET_IFNAME=eth0\nexport NCCL_P2P_DISABLE=1\ntorchrun --nproc_per_node 8 train.py\n"}
    res, _ = audit(files, "E4")
    r = res["E4"]
    assert r.status == Status.USED
    assert r.values == {"nccl_vars": ["NCCL_P2P_DISABLE", "NCCL_SOCKET_IFNAME"]}
    assert [(f.key, f.line) for f in r.findings] == [("NCCL_P2P_DISABLE", 3)]


def test_nccl_env_prefix_on_the_launch_line_counts() -> None:
    res, _ = audit({"run.sh": "NCCL_ALGO=Tree NCCL_DEBUG=WARN torchrun --nproc_per_node 8 train.py\n"}, "E4")
    assert res["E4"].status == Status.USED
    assert res["E4"].values["nccl_vars"] == ["NCCL_ALGO"]
