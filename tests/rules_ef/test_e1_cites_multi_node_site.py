"""E1's finding names where the project runs on several nodes (issue #9: every claim cites its evidence). On
LLaMA-Factory and OpenRLHF it said "multi-node training without any RDMA / GPUDirect setting for NCCL" with no
location, although step zero named the two-node launch it came from."""

from __future__ import annotations

from checks.engine import audit_files


def test_e1_detail_cites_the_multi_node_launch():
    files = {
        "train.py": "import torch\nfor batch in loader:\n    model(batch).sum().backward()\n",
        "scripts/run_1node.sh": "torchrun --nnodes 1 --nproc_per_node 8 train.py\n",
        "scripts/run_2nodes.sh": "torchrun --nnodes 2 --nproc_per_node 8 --rdzv_endpoint $MASTER:29500 train.py\n",
    }
    e1 = next(r for r in audit_files((k, v.encode()) for k, v in files.items()).results if r.id == "E1")
    assert e1.status.value == "unused"
    assert "2 nodes at scripts/run_2nodes.sh:1" in e1.detail
