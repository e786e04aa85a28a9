"""The overview's model size and names (issue #9, "Parameter count from the model config that the training path uses ...
Unknown is a valid answer").

Two rules, each test failing on the rule before it:
- model dimensions with no vocabulary, no LM attention heads and no context length beside them (a tabular transformer
  combiner's AutoML default, ``combiner: {hidden_size: 64, num_layers: 3, num_heads: 8}``) are not a language model's
  config and size nothing (ludwig 0.17.10 said ``estimated_params: 4M`` from such a file, on an assumed 32,000-token
  vocabulary, for a README run that fine-tunes Llama-3.1-8B);
- when no file of the training path names its model, the model the README's documented run starts from
  (``base_model:`` in its YAML config, ``--model_name_or_path`` of its training command) is the model name and, by its
  name, the size.
"""

from __future__ import annotations

from checks.engine import audit_files
from checks.facts.docs_md import extract_doc_commands, extract_doc_run_models
from checks.facts.types import FileFacts
from checks.model import Project

# a declarative trainer: the run's model comes from the user's YAML, so no file of the package names one
TRAINER = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\n"
    "def load_base(config):\n"
    "    return AutoModelForCausalLM.from_pretrained(config.base_model)\n\n\n"
    "def train(config, batches, optimizer):\n"
    "    model = load_base(config)\n"
    "    for batch in batches:\n"
    "        loss = model(**batch).loss\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
)
COMBINER_DEFAULT = (
    "combiner:\n"
    "  type: ft_transformer\n"
    "  num_layers: 3\n"
    "  num_heads: 8\n"
    "  hidden_size: 64\n"
    "  transformer_output_size: 64\n"
    "  dropout: 0.1\n"
)
README_YAML = (
    "# Declarative training\n\n"
    "Fine-tune an LLM with one config file:\n\n"
    "```yaml\n"
    "model_type: llm\n"
    "base_model: meta-llama/Llama-3.1-8B\n"
    "adapter:\n"
    "  type: lora\n"
    "trainer:\n"
    "  type: finetune\n"
    "  epochs: 3\n"
    "```\n\n"
    "```bash\n"
    "declarative train --config model.yaml --dataset my_data.csv\n"
    "```\n"
)


def _overview(files: dict[str, str]) -> Project:
    return audit_files((k, v.encode()) for k, v in files.items()).project


def test_combiner_dimensions_without_vocabulary_heads_or_context_size_nothing():
    p = _overview({"pkg/trainer.py": TRAINER, "pkg/automl/defaults/combiner/ft_transformer_config.yaml": COMBINER_DEFAULT})
    assert p.estimated_params is None  # was "4M", from the combiner on an assumed 32,000-token vocabulary
    assert "params_source" not in p.notes


def test_a_language_models_dimensions_without_vocabulary_still_size_it():
    # a transformer LM config whose vocabulary comes from the tokenizer: its attention heads and context length say what it is
    config = ("model:\n  hidden_size: 2048\n  num_layers: 24\n  num_attention_heads: 16\n  max_position_embeddings: 4096\n"
              "training:\n  learning_rate: 3.0e-4\n")
    p = _overview({"pkg/trainer.py": TRAINER, "configs/pretrain_1b.yaml": config})
    assert p.estimated_params == "1.3B"
    assert p.notes["params_source"] == "configs/pretrain_1b.yaml:2"
    assert "32,000 tokens assumed" in p.notes["params_note"]


def test_the_readme_runs_base_model_names_and_sizes_the_model():
    files = {"pkg/trainer.py": TRAINER, "pkg/automl/defaults/combiner/ft_transformer_config.yaml": COMBINER_DEFAULT,
             "README.md": README_YAML}
    p = _overview(files)
    assert p.model_names == ["meta-llama/Llama-3.1-8B"]  # was []
    assert p.estimated_params == "8B"  # was "4M"
    assert p.notes["params_source"] == "model name"
    assert p.notes["params_named"] == ("meta-llama/Llama-3.1-8B", "README.md:7")


def test_the_readme_training_commands_model_flag_names_the_model():
    readme = ("# Train\n\n```bash\naccelerate launch train.py \\\n    --model_name_or_path Qwen/Qwen2.5-7B \\\n"
              "    --learning_rate 2e-5\n```\n")
    script = TRAINER.replace("def train(config,", "def main(config,")
    p = _overview({"train.py": script, "README.md": readme})
    assert p.model_names == ["Qwen/Qwen2.5-7B"]
    assert p.estimated_params == "7B"
    assert p.notes["params_named"] == ("Qwen/Qwen2.5-7B", "README.md:5")


def test_a_model_the_training_path_names_outranks_the_readme():
    trainer = TRAINER.replace("from_pretrained(config.base_model)", "from_pretrained('Qwen/Qwen2.5-0.5B')")
    p = _overview({"pkg/trainer.py": trainer, "README.md": README_YAML})
    assert p.model_names == ["Qwen/Qwen2.5-0.5B"]
    assert p.estimated_params == "500M"


def test_an_example_folders_readme_and_a_serving_config_name_no_run():
    serving = "# Serve\n\n```yaml\nbase_model: mistralai/Mistral-7B-v0.1\nport: 8080\nmax_batch_size: 32\n```\n"
    files = {"pkg/trainer.py": TRAINER, "examples/llama/README.md": README_YAML, "README.md": serving}
    p = _overview(files)
    assert p.model_names == []
    assert p.estimated_params is None


def test_model_hints_come_from_run_configs_and_training_commands_only():
    out = FileFacts(path="README.md", kind="docs")
    text = README_YAML + (
        "\n```yaml\nbase_model: mistralai/Mistral-7B-v0.1\nport: 8080\n```\n"
        "\n```bash\npython chat.py --model_name_or_path Qwen/Qwen2.5-7B-Instruct\n"
        "torchrun --nproc_per_node 8 train.py --model_name_or_path=meta-llama/Llama-2-7b-hf\n```\n"
    )
    extract_doc_run_models("README.md", text, out)
    extract_doc_commands("README.md", text, out)
    models = [(h.value, h.line) for h in out.doc_hints if h.kind == "model"]
    assert models == [("meta-llama/Llama-3.1-8B", 7), ("meta-llama/Llama-2-7b-hf", 26)]


def _nanotron(readme: str) -> dict[str, str]:
    """nanotron's shape: run_train.py reads a YAML config; the README's quick start trains ``examples/config_tiny_llama.yaml``
    (a 28-layer model despite its name), and an MoE example builds a 46M model in a Python config generator."""
    layer = ("model:\n  model_config:\n    hidden_size: {h}\n    num_hidden_layers: {l}\n    intermediate_size: {f}\n"
             "    tie_word_embeddings: true\n    vocab_size: {v}\n")
    return {
        "README.md": readme,
        "run_train.py": ("import sys\n\nfrom mylib.trainer import DistributedTrainer\n\n\n"
                         "def main(config_file):\n    trainer = DistributedTrainer(config_file)\n    trainer.train()\n\n\n"
                         "if __name__ == '__main__':\n    main(sys.argv[2])\n"),
        "src/mylib/trainer.py": ("class DistributedTrainer:\n    def __init__(self, config_file):\n        self.config_file = config_file\n\n"
                                 "    def train(self):\n        for batch in self.loader:\n            loss = self.model(batch)\n"
                                 "            loss.backward()\n"),
        "examples/config_tiny_llama.yaml": layer.format(h=2048, l=28, f=11008, v=128256),
        "examples/moe/config_llamoe.py": (
            "from mylib.config import LlaMoEConfig\n\nmodel_config = LlaMoEConfig(\n    num_hidden_layers=1,\n    hidden_size=512,\n"
            "    num_attention_heads=8,\n    intermediate_size=512 * 4,\n    vocab_size=32000,\n    moe_num_experts=4,\n)\n"),
        "examples/moe/train_moe.py": "from examples.moe.config_llamoe import model_config\n\nloss.backward()\n",
    }


def test_the_readme_runs_config_sizes_the_model_even_when_named_tiny():
    readme = ("# Quick start\n\n```bash\nCUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node=8 run_train.py "
              "--config-file examples/config_tiny_llama.yaml\n```\n")
    p = _overview(_nanotron(readme))
    assert p.notes.get("params_source") == "examples/config_tiny_llama.yaml:3", p.notes
    # 28 x (4 x 2048^2 + 3 x 2048 x 11008) + one tied 128256 x 2048 matrix: 2.63B (untied it would read 2.89B)
    assert p.params_billions is not None and round(p.params_billions, 2) == 2.63, p.params_billions


def test_a_tiny_config_no_run_names_is_still_a_test_model():
    p = _overview(_nanotron("# nanotron\n"))
    assert p.notes.get("params_source") != "examples/config_tiny_llama.yaml:3", p.notes


def test_a_vision_towers_config_does_not_size_the_language_model():
    # LLaVA-NeXT llava/model/multimodal_encoder/siglip_encoder.py: SigLipVisionConfig defaults (hidden 1152, 27 layers)
    files = {
        "llava/model/multimodal_encoder/siglip_encoder.py": (
            "from transformers import PretrainedConfig\n\n\nclass SigLipVisionConfig(PretrainedConfig):\n"
            "    model_type = 'siglip_vision_model'\n\n    def __init__(self, hidden_size=1152, intermediate_size=4304,\n"
            "                 num_hidden_layers=27, num_attention_heads=16, num_channels=3, image_size=384, patch_size=14, **kwargs):\n"
            "        super().__init__(**kwargs)\n        self.hidden_size = hidden_size\n"),
        "llava/train/train.py": (
            "from transformers import AutoModelForCausalLM\n\nfrom llava.model.multimodal_encoder.siglip_encoder import SigLipVisionConfig\n\n\n"
            "def train(args):\n    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)\n"
            "    model.vision_tower = build_tower(SigLipVisionConfig())\n"
            "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n"),
    }
    p = _overview(files)
    assert not str(p.notes.get("params_source", "")).startswith("llava/model/multimodal_encoder/"), p.notes
    assert p.params_billions is None or p.params_billions > 1, p.params_billions
