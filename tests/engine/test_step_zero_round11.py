"""Step zero, round 11 of issue #9 (nemo-automodel): the vocabulary reason gives the largest vocabulary among the
model configs it counts, so it cites that config's line first; citing another config first showed a line with a
different number (``vocab_size=125696`` under "a 200,064-token vocabulary"). Since then, model configs of different
vocabularies (a library that trains whichever model a run names) give the range they span, not the largest as if it were
the trained model's."""

from __future__ import annotations

from checks.engine import audit_files

LOOP = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\n"
    "def train(loader, optimizer):\n"
    "    model = AutoModelForCausalLM.from_pretrained('org/model')\n"
    "    for batch in loader:\n"
    "        loss = model(**batch).loss\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        optimizer.zero_grad()\n"
)


def _config(cls: str, vocab: int) -> str:
    return ("from transformers.configuration_utils import PretrainedConfig\n\n\n"
            f"class {cls}(PretrainedConfig):\n    def __init__(\n        self,\n        vocab_size={vocab},\n        hidden_size=4096,\n"
            "        num_hidden_layers=32,\n        num_attention_heads=32,\n    ):\n        self.vocab_size = vocab_size\n")


def _vocab_reason(files: dict[str, str]) -> str:
    # the training entry reaches every model config (a registry of model classes), so they are on the training path
    imports = "".join(f"import {k.removesuffix('.py').replace('/', '.')}  # noqa: F401\n" for k in files if "/models/" in k)
    files = {**files, "pkg/train.py": imports + files["pkg/train.py"]}
    p = audit_files((k, v.encode()) for k, v in files.items()).project
    [reason] = [r for r in p.bottleneck_reasons if "token vocabulary" in r or "vocabularies of" in r]
    return reason


def test_the_vocabulary_reason_cites_the_config_whose_figure_it_gives():
    files = {"pkg/models/baichuan/configuration.py": _config("BaichuanConfig", 125696),
             "pkg/models/minimax/config.py": _config("MiniMaxConfig", 200064),
             "pkg/train.py": LOOP}
    reason = _vocab_reason(files)
    assert "vocabularies of 125,696 to 200,064 tokens in 2 model configs (the run trains one) (`pkg/models/minimax/config.py:7` (+1))" in reason


def test_a_single_large_vocabulary_is_still_cited_at_its_line():
    files = {"pkg/models/baichuan/configuration.py": _config("BaichuanConfig", 125696), "pkg/train.py": LOOP}
    assert "125,696-token vocabulary (`pkg/models/baichuan/configuration.py:7`)" in _vocab_reason(files)


# a kernel warm-up run once before training: a few forward/backward passes over the shapes to come, then a sync
PREWARM = (
    "import torch\n\n\n"
    "def _prewarm_mamba_ssd_end_to_end(model, shapes, device):\n"
    "    for seqlen in shapes:\n"
    "        x = torch.randn(1, seqlen, model.hidden_size, device=device, requires_grad=True)\n"
    "        loss = model(x).float().sum()\n"
    "        loss.backward()\n"
    "        torch.cuda.synchronize(device)\n"
)
STEP_SYNC = (
    "import torch\n\n\n"
    "def train(model, loader, optimizer):\n"
    "    for batch in loader:\n"
    "        loss = model(**batch).loss\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        print(loss.item())\n"
)


def _latency_reasons(files: dict[str, str]) -> list[str]:
    files = {**files, "pkg/train.py": "from pkg.prewarm import _prewarm_mamba_ssd_end_to_end  # noqa: F401\n" + files["pkg/train.py"]}
    p = audit_files((k, v.encode()) for k, v in files.items()).project
    return [r for r in p.bottleneck_reasons if "synchronisation point" in r]


def test_a_kernel_prewarm_loop_is_not_the_step_loop():
    assert _latency_reasons({"pkg/prewarm.py": PREWARM, "pkg/train.py": LOOP}) == []


def test_a_sync_in_the_step_loop_still_counts_beside_a_prewarm():
    [reason] = _latency_reasons({"pkg/prewarm.py": PREWARM, "pkg/train.py": STEP_SYNC})
    assert "1 CPU-GPU synchronisation point(s)" in reason and "pkg/train.py" in reason
