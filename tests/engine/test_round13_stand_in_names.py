"""Round 13 (held-out RLinf): a scratch path, a dummy/fake/mock checkpoint and a ``"test-model"`` response label name no
model the project trains (rlinf 0.3.0's overview said ``model_names: ['test-model', '/tmp/dummy_gr00t_checkpoint']``)."""

from __future__ import annotations

from checks.engine import audit_files

TRAIN = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\n"
    "def train(loader, optimizer):\n"
    "    model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-1.5B')\n"
    "    for batch in loader:\n        model(**batch).loss.backward()\n        optimizer.step()\n"
)
STAND_INS = {
    "pkg/router.py": (
        "from openai.types import Completion\n\n\ndef reply(text, start):\n"
        "    return Completion(id='0', choices=[], created=int(start), model=\"test-model\", object=\"text_completion\")\n"),
    "pkg/modality.py": (
        "class ModalityConfig:\n    def _init_policy(self):\n        dummy_path = \"/tmp/dummy_gr00t_checkpoint\"\n"
        "        self._policy = Policy(model_path=dummy_path, device=\"cpu\")\n"),
    "pkg/bench.py": "model_name_or_path = \"fake-llama\"\n",
}


def _names(files: dict[str, str]) -> list[str]:
    return audit_files((k, v.encode()) for k, v in files.items()).project.model_names


def test_scratch_paths_dummy_checkpoints_and_test_labels_are_no_model_names():
    assert _names({"pkg/train.py": TRAIN, **STAND_INS}) == ["Qwen/Qwen2.5-1.5B"]


def test_real_names_that_contain_the_words_stay():
    files = {"pkg/train.py": TRAIN, "pkg/smoke.py": "model_name = \"hf-internal-testing/tiny-random-LlamaForCausalLM\"\n",
             "pkg/other.py": "model_name_or_path = \"mistralai/Mistral-7B-v0.1\"\n"}
    assert sorted(_names(files)) == ["Qwen/Qwen2.5-1.5B", "hf-internal-testing/tiny-random-LlamaForCausalLM",
                                     "mistralai/Mistral-7B-v0.1"]
