"""A multi-node launch whose node count is left to the job (picotron's Slurm template: ``torchrun --nnode={{ nodes }}
--node_rank=$SLURM_NODEID --rdzv_endpoint ...``) is multi-node with an unknown count: the overview and step zero say
"several", never a number the launch does not give."""

from __future__ import annotations

from checks.engine import audit_files
from reports.markdown import render_markdown

SLURM = (
    "#!/bin/bash\n#SBATCH --job-name=job-picotron\n#SBATCH --nodes={{ nodes }}\n#SBATCH --gres=gpu:{{ n_proc_per_node }}\n"
    "#SBATCH --ntasks-per-node=1\n\n"
    "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
    "export MASTER_PORT=$((1024 + RANDOM % 64511))\n"
    "CMD=\"$GIT_REPO/train.py --config {{ config }}\"\n"
    "LAUNCHER=\"torchrun --nproc_per_node={{ n_proc_per_node }} --nnode={{ nodes }} --node_rank=$SLURM_NODEID "
    "--rdzv_endpoint ${MASTER_ADDR}:${MASTER_PORT} --rdzv_backend c10d --max_restarts 0 --tee 3\"\n"
    "srun -u $LAUNCHER $CMD\n"
)
TRAIN = (
    "import torch\nimport torch.distributed as dist\n\n\ndef train_step(model, batch):\n    loss = model(batch)\n"
    "    loss.backward()\n    return loss\n\n\nif __name__ == '__main__':\n    dist.init_process_group('nccl')\n"
    "    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)\n    for batch in loader:\n"
    "        train_step(model, batch)\n        optimizer.step()\n"
)


def _audit(slurm: str = SLURM):
    return audit_files([("template/base_job.slurm", slurm.encode()), ("train.py", TRAIN.encode())])


def test_a_templated_node_count_is_several_nodes_not_two():
    audit = _audit()
    p = audit.project
    assert p.multi_node
    assert p.notes["nodes_source"] == "template/base_job.slurm:10"
    assert "nodes" in p.notes["nodes_unresolved"]
    md = render_markdown(audit)
    line = next(x for x in md.splitlines() if x.startswith("- Nodes:"))
    assert line.startswith("- Nodes: several: a multi-node launch at `template/base_job.slurm:10`"), line
    assert not any("spans 2 nodes" in r for r in p.bottleneck_reasons)
    zh = render_markdown(audit, lang="zh")
    assert "多机：" in zh


def test_a_launch_that_gives_the_count_keeps_its_number():
    audit = _audit(SLURM.replace("--nnode={{ nodes }}", "--nnodes=4"))
    assert audit.project.num_nodes == 4 and "nodes_unresolved" not in audit.project.notes
    line = next(x for x in render_markdown(audit).splitlines() if x.startswith("- Nodes:"))
    assert line.startswith("- Nodes: 4 (configured at"), line
