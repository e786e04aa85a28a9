"""Round 14 (verifiers, held-out): overview rules written after its first contact, each shown failing on the previous rule."""

from __future__ import annotations

from checks.engine import audit_files

TRAIN = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\n"
    "def train(loader, optimizer, name):\n"
    "    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16)\n"
    "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n"
)

# an agent tool that asks a hosted model about a web page (an RL environment's tool, not the trained policy)
TOOL = (
    "import os\n\n\ndef ask(question: str, url: str) -> str:\n"
    "    BASE_URL = \"https://api.deepinfra.com/v1/openai\"\n    API_KEY = os.getenv(\"DEEPINFRA_API_KEY\")\n"
    "    MODEL_NAME = \"Qwen/Qwen2.5-7B-Instruct\"\n\n    from openai import OpenAI\n\n"
    "    client = OpenAI(base_url=BASE_URL, api_key=API_KEY)\n"
    "    response = client.chat.completions.create(\n        model=MODEL_NAME,\n"
    "        messages=[{\"role\": \"user\", \"content\": question}],\n        max_tokens=4000,\n    )\n"
    "    return response.choices[0].message.content\n"
)


def _names(files: dict[str, str]) -> list[str]:
    return list(audit_files((k, v.encode()) for k, v in files.items()).project.model_names)


def test_a_hosted_api_constant_is_no_trained_model():
    assert "Qwen/Qwen2.5-7B-Instruct" not in _names({"pkg/train.py": TRAIN, "pkg/utils/tools.py": TOOL})


def test_a_hosted_api_constant_failed_on_the_previous_rule(monkeypatch):
    from checks import project

    monkeypatch.setattr(project, "_api_constant", lambda facts, st, api: False)
    assert "Qwen/Qwen2.5-7B-Instruct" in _names({"pkg/train.py": TRAIN, "pkg/utils/tools.py": TOOL})


def test_a_constant_the_same_file_also_loads_stays_a_model():
    loads = TOOL + "\n\ndef load():\n    from transformers import AutoModelForCausalLM\n\n" \
                   "    MODEL_NAME = \"Qwen/Qwen2.5-7B-Instruct\"\n    return AutoModelForCausalLM.from_pretrained(MODEL_NAME)\n"
    assert "Qwen/Qwen2.5-7B-Instruct" in _names({"pkg/train.py": TRAIN, "pkg/utils/tools.py": loads})
