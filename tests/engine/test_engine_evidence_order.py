"""Evidence is shown from the training path first: a sampling script's autocast is not the first thing C1 cites."""

from __future__ import annotations

from checks.engine import audit_files

TRAIN = (
    "import torch\n"
    "from model import GPT\n"
    "model = GPT().cuda()\n"
    "ctx = torch.amp.autocast(device_type='cuda', dtype=torch.bfloat16)\n"
    "for step in range(1000):\n"
    "    with ctx:\n"
    "        loss = model(x, y)\n"
    "    loss.backward()\n"
)
SAMPLE = (
    "import torch\n"
    "from model import GPT\n"
    "model = GPT().cuda().eval()\n"
    "ctx = torch.amp.autocast(device_type='cuda', dtype=torch.bfloat16)\n"
    "with torch.no_grad(), ctx:\n"
    "    y = model.generate(x, 100)\n"
)


def test_training_files_are_cited_before_other_code() -> None:
    files = {"sample.py": SAMPLE, "train.py": TRAIN, "model.py": "import torch\nclass GPT(torch.nn.Module):\n    pass\n"}
    audit = audit_files((p, t.encode()) for p, t in files.items())
    assert audit.roles.by_path["train.py"] == "training" and audit.roles.by_path["sample.py"] == "code"
    c1 = next(r for r in audit.results if r.id == "C1")
    assert [e.path for e in c1.evidence] == ["train.py", "sample.py"]


def test_experiments_and_contrib_evidence_after_the_main_code():
    """torchtitan A4 cited experiments/rl/examples/... before models/llama3/config_registry.py (the 70B/405B recipes)."""
    from checks.engine import audit_files

    files = {
        "pkg/experiments/rl/config_registry.py": "from pkg.config import ParallelismConfig\ncfg = ParallelismConfig(tensor_parallel_degree=2)\n",
        "pkg/models/llama3/config_registry.py": "from pkg.config import ParallelismConfig\ncfg = ParallelismConfig(tensor_parallel_degree=8)\n",
        "train.py": "import torch\nloss = model(x)\nloss.backward()\n",
    }
    a = audit_files((p, t.encode()) for p, t in files.items())
    paths = [e.path for e in a.result("A4").evidence]
    assert paths == ["pkg/models/llama3/config_registry.py", "pkg/experiments/rl/config_registry.py"]
