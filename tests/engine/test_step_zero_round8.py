"""Step zero and the overview, round 8 of issue #9 (modalities): a library module's ``if __name__ == "__main__":`` demo
(``huggingface_model.py`` builds its HF adapter for ``epfl-llm/meditron-7b`` only to print it) names no model the project
trains, so it gives neither the model size nor a "large dense model" reason; a training script's own main block does."""

from __future__ import annotations

from checks.engine import audit_files

ADAPTER = (
    "from transformers import AutoModelForCausalLM, AutoTokenizer\n\n\n"
    "class HuggingFacePretrainedModel:\n"
    "    def __init__(self, model_name: str, prediction_key: str, sample_key: str):\n"
    "        self.huggingface_model = AutoModelForCausalLM.from_pretrained(model_name)\n\n\n"
    'if __name__ == "__main__":\n'
    '    tokenizer = AutoTokenizer.from_pretrained("epfl-llm/meditron-7b")\n'
    "    model = HuggingFacePretrainedModel(\n"
    '        model_name="epfl-llm/meditron-7b",\n'
    '        prediction_key="logits",\n'
    '        sample_key="input_ids",\n'
    "    )\n"
    "    print(model)\n"
)
REGISTRY = (
    "from pkg.models.huggingface_model import HuggingFacePretrainedModel\n\n"
    'COMPONENTS = {"huggingface_pretrained_model": HuggingFacePretrainedModel}\n'
)
SCRIPT = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\n"
    "def train(model_name: str):\n"
    "    model = AutoModelForCausalLM.from_pretrained(model_name)\n"
    "    loss = model(**batch).loss\n    loss.backward()\n\n\n"
    'if __name__ == "__main__":\n'
    '    train(model_name="meta-llama/Llama-2-7b-hf")\n'
)


def _project(files: dict[str, str]):
    return audit_files((p, t.encode()) for p, t in files.items()).project


def test_a_library_modules_main_demo_names_no_trained_model():
    p = _project({"pkg/models/huggingface_model.py": ADAPTER, "pkg/registry/components.py": REGISTRY})
    assert p.model_names == []
    assert p.estimated_params is None
    assert not any("meditron" in r for r in p.bottleneck_reasons)


CLIENT = (  # trl's ``generation/vllm_client.py``: a client class, and an "Example usage" main block loading a 7B model
    "import requests\n\n\nclass VLLMClient:\n"
    "    def update_model_params(self, model):\n        for name, param in model.named_parameters():\n"
    "            requests.post(self.url, json={'name': name})\n\n\n"
    "# Example usage\n"
    'if __name__ == "__main__":\n'
    "    client = VLLMClient()\n"
    "    from transformers import AutoModelForCausalLM\n\n"
    '    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B").to("cuda")\n'
    "    client.update_model_params(model)\n"
)


def test_a_library_modules_main_demo_imported_by_a_relative_import_names_no_trained_model():
    # the sibling module imports it as ``from .vllm_client import VLLMClient``: still a library module, not a script
    p = _project({
        "trl/generation/vllm_client.py": CLIENT,
        "trl/generation/vllm_generation.py": "from .vllm_client import VLLMClient\n\n\ndef generate(prompts):\n"
                                             "    return VLLMClient().generate(prompts)\n",
        "trl/trainer/grpo_trainer.py": "from ..generation import vllm_generation\nfrom transformers import Trainer\n\n\n"
                                       "class GRPOTrainer(Trainer):\n    pass\n",
    })
    assert p.model_names == []
    assert p.estimated_params is None
    assert not any("Qwen2.5-7B" in r for r in p.bottleneck_reasons)


def test_a_training_scripts_main_block_still_names_its_model():
    p = _project({"train.py": SCRIPT})
    assert p.model_names == ["meta-llama/Llama-2-7b-hf"]
    assert p.estimated_params == "7B"


def test_prose_pointing_at_a_multi_node_batch_file_is_a_documented_multi_node_launch():
    from checks.facts.docs_md import extract_doc_hints
    from checks.facts.types import FileFacts

    out = FileFacts(path="README.md", kind="markdown")
    extract_doc_hints("README.md", (
        "| Fully Sharded Data Parallel (FSDP) | supported | multi-node training at scale |\n"  # a feature claim: no launch
        "For a multinode training with slurm, see the example sbatch-file container/slurm_singularity.sbatch.\n"), out)
    assert [(h.line, h.kind) for h in out.doc_hints] == [(2, "multi_node")]
