"""Round 13 (held-out Colossal-AI): the model an inference engine's API server serves by default does not size the model
the project trains.

colossalai 0.5.0 reported ``estimated_params: 7B`` and a step-zero "compute-bound: large dense model (~7B, from the model
name `llama2-7b` at `colossalai/inference/server/api_server.py:139`)": the ``--model`` default of the package's HTTP
inference server (``parser.add_argument("-m", "--model", type=str, default="llama2-7b")``). The training API (a Booster
over the user's model) names no model. A name set only by a serving or generation file off the training path no longer
sizes the model; the same name in a training script still does.
"""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Project

BOOSTER = (
    "import torch\n\n\n"
    "class Booster:\n"
    "    def __init__(self, plugin=None):\n"
    "        self.plugin = plugin\n\n"
    "    def backward(self, loss, optimizer):\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
)
API_SERVER = (
    "import argparse\n\n"
    "from fastapi import FastAPI\n\n"
    "app = FastAPI()\n\n\n"
    "def add_engine_config(parser):\n"
    "    parser.add_argument(\n"
    "        \"-m\", \"--model\", type=str, default=\"llama2-7b\", help=\"name or path of the huggingface model to use\"\n"
    "    )\n"
    "    parser.add_argument(\"--block_size\", type=int, default=16, help=\"token block size\")\n"
    "    return parser\n"
)
TRAIN = (
    "import argparse\n\nimport torch\nfrom transformers import AutoModelForCausalLM\n\n"
    "parser = argparse.ArgumentParser()\n"
    "parser.add_argument(\"--model\", type=str, default=\"llama2-7b\")\n"
    "args = parser.parse_args()\n"
    "model = AutoModelForCausalLM.from_pretrained(args.model)\n"
    "for batch in []:\n"
    "    model(**batch).loss.backward()\n"
)


def _overview(files: dict[str, str]) -> Project:
    return audit_files((k, v.encode()) for k, v in files.items()).project


def test_the_served_models_default_name_sizes_nothing():
    p = _overview({"pkg/booster/booster.py": BOOSTER, "pkg/inference/server/api_server.py": API_SERVER})
    assert p.estimated_params is None  # was "7B", from the inference server's --model default
    assert "params_named" not in p.notes
    assert not any("~7B" in r for r in p.bottleneck_reasons)


def test_the_same_name_in_a_training_script_still_sizes_the_model():
    p = _overview({"pkg/booster/booster.py": BOOSTER, "pkg/inference/server/api_server.py": API_SERVER, "train.py": TRAIN})
    assert p.estimated_params == "7B"
    assert p.notes["params_named"] == ("llama2-7b", "train.py:7")


def test_a_project_that_only_serves_is_sized_by_what_it_serves():
    p = _overview({"pkg/inference/server/api_server.py": API_SERVER})
    assert p.estimated_params == "7B"  # nothing trains here: the served model is the project's model


def test_a_class_name_in_a_model_keyed_registry_is_no_model_name():
    # colossalai/legacy/constants.py:18 maps parallel modes to initializer classes; the overview listed "Initializer_Model"
    files = {
        "pkg/constants.py": 'INITIALIZER_MAPPING = {"data": "Initializer_Data", "model": "Initializer_Model"}\n',
        "pkg/initializers/__init__.py": "from .initializer_data import Initializer_Data\nfrom .initializer_model import Initializer_Model\n",
        "pkg/initializers/initializer_model.py": "class Initializer_Model:\n    pass\n",
        "pkg/initializers/initializer_data.py": "class Initializer_Data:\n    pass\n",
        "pkg/booster/booster.py": BOOSTER,
    }
    assert "Initializer_Model" not in _overview(files).model_names


def test_a_model_name_no_code_imports_stays():
    files = {"pkg/booster/booster.py": BOOSTER, "configs/run.yaml": "model: Qwen/Qwen2.5-7B\nlearning_rate: 1.0e-5\n"}
    assert _overview(files).model_names == ["Qwen/Qwen2.5-7B"]
