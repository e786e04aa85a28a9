"""The overview's model names (issue #9): a closed-weight model a config generator asks through a vendor API, a constant
that spells a key's own name and an argparse run label name no model the project trains (ludwig 0.17.10's overview said
``model_names: ['model_type', 'run', 'claude-sonnet-4-20250514']``; veomni's listed ``gemini-flash-lite-latest``)."""

from __future__ import annotations

from checks.engine import audit_files

TRAIN = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\n"
    "def train(loader, optimizer):\n"
    "    model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.1-8B')\n"
    "    for batch in loader:\n        model(**batch).loss.backward()\n        optimizer.step()\n"
)
NOISE = {
    "pkg/constants.py": "MODEL_TYPE = \"model_type\"\nMODEL_NAME = \"model_name\"\n",
    "pkg/cli_train.py": (
        "import argparse\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument(\"--model_name\", type=str, default=\"run\", help=\"name for the model\")\n"),
    "pkg/config_generation.py": (
        "import argparse\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument(\"--model\", default=\"claude-sonnet-4-20250514\", help=\"LLM that writes the YAML\")\n"),
    "pkg/synth.py": "model_name = \"gemini-flash-lite-latest\"\n",
}


def _names(files: dict[str, str]) -> list[str]:
    return audit_files((k, v.encode()) for k, v in files.items()).project.model_names


def test_hosted_models_key_names_and_run_labels_are_no_model_names():
    assert _names({"pkg/train.py": TRAIN, **NOISE}) == ["meta-llama/Llama-3.1-8B"]


def test_open_models_and_real_names_stay():
    files = {"pkg/train.py": TRAIN, "pkg/cli_train.py": NOISE["pkg/cli_train.py"].replace('default="run"', 'default="gpt2"'),
             "pkg/baselines.py": "model_name = \"openai/gpt-oss-20b\"\n"}  # (not eval.py: an evaluation script is context)
    assert sorted(_names(files)) == ["gpt2", "meta-llama/Llama-3.1-8B", "openai/gpt-oss-20b"]
