"""Round 37 (issue #9): leftovers of rounds 35-36 (GaLore, StarCoder, Video-LLaMA) and OLMo-core, VILA and Mantis at HEAD, read
as a new user would. Each test is one false claim of those reports, made from the shape of the real code, with a control that
keeps the rule honest."""

from __future__ import annotations

from checks.engine import audit_files
from reports.markdown import render_markdown


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


# --- GaLore: ``torchrun --standalone --nnodes 8`` cannot join other nodes ------------------------------------------------------

_GALORE_MAIN = (
    "import torch\nimport torch.distributed as dist\nfrom transformers import LlamaForCausalLM, LlamaConfig\n\n\n"
    "def main(args):\n    dist.init_process_group(backend='nccl')\n"
    "    model = LlamaForCausalLM(LlamaConfig.from_pretrained(args.model_config))\n"
    "    model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[dist.get_rank() % 8])\n"
    "    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)\n"
    "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n"
    "        optimizer.zero_grad()\n"
)


def _galore(launch: str):
    return _audit({"torchrun_main.py": _GALORE_MAIN, "scripts/benchmark_c4/llama_7b.sh": (
        "# LLaMA-7B, GaLore-Adam, 8 A100, 8 Node\n" + launch + " torchrun_main.py \\\n    --model_config configs/llama_7b.json \\\n"
        "    --lr 0.005 \\\n    --batch_size 8\n")})


def test_a_standalone_torchrun_asking_for_nodes_is_one_node_as_written():
    a = _galore("torchrun --standalone --nnodes 8 --nproc_per_node 8")
    assert not a.project.multi_node and a.project.num_nodes is None
    assert a.project.notes["standalone_nodes"] == "scripts/benchmark_c4/llama_7b.sh:2"
    assert "--standalone" in _check(a, "E1").detail and _check(a, "E1").status.value == "n/a"
    md = render_markdown(a)
    assert "whose rendezvous is local" in md and "8 nodes" not in md
    assert "按所写只有单机" in render_markdown(a, lang="zh")
    # control: the same launch with a rendezvous other nodes can reach is 8 nodes
    b = _galore("torchrun --nnodes 8 --nproc_per_node 8 --rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:29500")
    assert b.project.multi_node and b.project.num_nodes == 8 and "standalone_nodes" not in b.project.notes
    # and a standalone launch on one node says nothing about it
    c = _galore("torchrun --standalone --nproc_per_node 8")
    assert "standalone_nodes" not in c.project.notes
