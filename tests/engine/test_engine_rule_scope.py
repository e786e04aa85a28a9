"""Rules judged through the whole engine (file roles applied), shaped like the real repositories they come from."""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status

AXOLOTL_RECIPE = "base_model: NousResearch/Meta-Llama-3.1-8B\nbf16: auto\nflash_attention: true\n"
MULTI_NODE_QMD = (
    "---\ntitle: Multi Node\n---\n\nUse accelerate on each machine:\n\n```yaml\ncompute_environment: LOCAL_MACHINE\n"
    "distributed_type: FSDP\nmachine_rank: 0\nmain_process_ip: 10.0.0.4\nnum_machines: 2 # Change to the number of machines\n"
    "num_processes: 16\n```\n"
)
TRAIN = (
    "from transformers import Trainer, TrainingArguments\n"
    "args = TrainingArguments(output_dir='out', bf16=True)\ntrainer = Trainer(model=model, args=args)\ntrainer.train()\n"
)


def _result(files: dict[str, str], check_id: str):
    audit = audit_files((p, t.encode()) for p, t in files.items())
    return next(r for r in audit.results if r.id == check_id)


def test_multi_node_documented_only_in_docs_makes_e1_apply():
    r = _result({"examples/llama-3/fft-8b.yaml": AXOLOTL_RECIPE, "src/axolotl/train.py": TRAIN,
                 "docs/multi-node.qmd": MULTI_NODE_QMD}, "E1")
    assert r.status == Status.UNUSED
    assert "docs/multi-node.qmd:12" in r.detail and "num_machines: 2" in r.detail


def test_single_node_docs_leave_e1_not_applicable():
    r = _result({"src/axolotl/train.py": TRAIN, "docs/multi-gpu.qmd": "```bash\ntorchrun --nnodes 1 --nproc_per_node 8 train.py\n```\n"}, "E1")
    assert r.status == Status.NA


def test_multi_node_in_test_docs_is_not_the_project():
    r = _result({"src/axolotl/train.py": TRAIN, "tests/e2e/README.md": "```bash\ntorchrun --nnodes 4 train.py\n```\n"}, "E1")
    assert r.status == Status.NA


LOOP = (
    "import torch\nfrom model import GPT\nmodel = GPT().cuda()\noptimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)\n"
    "for step, (x, y) in enumerate(loader):\n    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n"
)


def test_nothing_seen_is_not_judged_and_leaves_the_score():
    from reports.scoring import category_scores

    audit = audit_files([("train.py", LOOP.encode())])
    got = {r.id: r for r in audit.results}
    # no data location either: where the data live (I1) and on which medium (I2) are unknown, not findings
    for cid in ("I1", "I2", "I3", "I4", "I5"):
        assert got[cid].status == Status.NA and got[cid].detail.startswith("not judged"), got[cid].detail
        assert got[cid].recommendation is None
    cats = {c.id: c for c in category_scores(audit.results)}
    assert cats["I"].max == 0  # nothing of I was seen: out of the score, not scored as missing


def test_eager_attention_in_the_sft_script_is_partial_beside_a_flash_launcher():
    r = _result({
        "scripts/cpt_megatron.sh": "torchrun --nnodes 1 --nproc_per_node 8 pretrain_gpt.py \\\n    --use-flash-attn \\\n    --bf16\n",
        "src/sft/train.py": (
            "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
            "model = AutoModelForCausalLM.from_pretrained(\n    'meta-llama/Meta-Llama-3-8B',\n    attn_implementation=\"eager\",\n)\n"
            "Trainer(model=model, args=TrainingArguments(output_dir='out', bf16=True)).train()\n"),
    }, "D1")
    assert r.status == Status.PARTIAL
    assert [(f.path, f.line) for f in r.findings] == [("src/sft/train.py", 4)]
    assert any(e.path == "scripts/cpt_megatron.sh" for e in r.evidence)  # the FlashAttention site, cited as context
