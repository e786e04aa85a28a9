"""The overview's model names taken from loader calls (issue #9). On real trees the overview listed ``resume, scratch``
for nanoGPT (``init_from = 'scratch'`` carried into ``GPT.from_pretrained(init_from)`` under ``elif
init_from.startswith('gpt2'):``), ``sentiment-analysis`` for GPT-NeoX (``pipeline``'s task), ``sft`` for nanochat (its own
``load_model("sft", device)``), ``assistant`` for Megatron-LM (a chat role map) and, for unsloth, the tokenizers its chat
template checks load (``AutoTokenizer.from_pretrained("lmsys/vicuna-7b-v1.5")``)."""

from __future__ import annotations

from checks.engine import audit_files
from checks.guard_value import excludes

TRAIN = (
    "import torch\nfrom model import GPT\n\n"
    "init_from = 'scratch' # 'scratch' or 'resume' or 'gpt2*'\n"
    "if init_from == 'scratch':\n    model = GPT(conf)\n"
    "elif init_from == 'resume':\n    model = GPT(conf)\n"
    "elif init_from.startswith('gpt2'):\n    model = GPT.from_pretrained(init_from, dict(dropout=0.0))\n"
    "optimizer = torch.optim.AdamW(model.parameters())\n"
    "for batch in loader:\n    model(batch).backward()\n    optimizer.step()\n"
)


def _names(files: dict[str, str]) -> list[str]:
    return audit_files((k, v.encode()) for k, v in files.items()).project.model_names


def test_constant_the_branch_excludes_names_no_model():
    assert _names({"train.py": TRAIN}) == []


def test_constant_the_branch_admits_stays():
    assert _names({"train.py": TRAIN.replace("init_from = 'scratch'", "init_from = 'gpt2-xl'")}) == ["gpt2-xl"]


def test_pipeline_task_phase_names_chat_roles_and_vocabularies_name_no_model():
    files = {
        "train.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-7B')\n",
        "post/score.py": "from transformers import pipeline\nclf = pipeline('sentiment-analysis', model='distilbert/distilbert-base-uncased')\n",
        "scripts/chat_rl.py": "from nanochat.checkpoint_manager import load_model\nmodel, tok, meta = load_model('sft', device, phase='eval')\n",
        "data/varlen.py": "_SHAREGPT_ROLE_MAP = {'human': 'user', 'model': 'assistant'}\n",
        "templates.py": "from transformers import AutoTokenizer\ncorrect = AutoTokenizer.from_pretrained('lmsys/vicuna-7b-v1.5')\n",
    }
    assert sorted(_names(files)) == ["Qwen/Qwen2.5-7B", "distilbert/distilbert-base-uncased"]


def test_a_tokenizer_name_a_setting_also_names_stays():
    files = {"train.py": "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('meta-llama/Llama-3.1-8B')\n",
             "train.yaml": "model_name_or_path: meta-llama/Llama-3.1-8B\nlearning_rate: 1.0e-5\n",
             "serve.py": "from my.models import load_model\nm = load_model('org/checkpoint-7b')\n"}
    assert sorted(_names(files)) == ["meta-llama/Llama-3.1-8B", "org/checkpoint-7b"]


def test_guard_terms():
    g = "not (init_from == 'scratch') and not (init_from == 'resume') and init_from.startswith('gpt2')"
    assert excludes(g, "init_from", "scratch") and excludes(g, "init_from", "resume")
    assert not excludes(g, "init_from", "gpt2-xl")
    assert excludes("mode in ('a', 'b') and flag", "mode", "c") and not excludes("mode in ('a', 'b') and flag", "mode", "a")
    assert not excludes("other == 'x'", "mode", "y")  # a term on another name decides nothing
    assert not excludes("mode == 'x' or other", "mode", "y")  # an or with an unknown side stays unknown
    assert not excludes("f(mode", "mode", "y")  # unparseable guard text
