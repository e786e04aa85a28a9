"""Step zero and the overview, round 10 of issue #9 (salesforce-lavis): a model zoo's BERT text-encoder configs
(``"architectures": ["BertModel"]``, the text tower of BLIP/ALBEF and the Q-Former's base) are not the LLM a run
trains, so they give neither the model size nor a "small model: launch-bound" reason; an encoder-decoder (T5) config
is counted with its decoder, its ``d_ff`` and its ``num_heads x d_kv`` attention width."""

from __future__ import annotations

import json

from checks.engine import audit_files

BERT = json.dumps({
    "architectures": ["BertModel"], "hidden_size": 768, "intermediate_size": 3072, "model_type": "bert",
    "num_attention_heads": 12, "num_hidden_layers": 12, "vocab_size": 30522, "add_cross_attention": True,
}, indent=2)
T5_3B = json.dumps({
    "architectures": ["T5ForConditionalGeneration"], "d_ff": 16384, "d_kv": 128, "d_model": 1024, "feed_forward_proj": "relu",
    "is_encoder_decoder": True, "model_type": "t5", "num_decoder_layers": 24, "num_heads": 32, "num_layers": 24, "vocab_size": 32128,
}, indent=2)
LOOP = (
    "import torch\n\n\n"
    "def train_epoch(model, data_loader, optimizer):\n"
    "    for samples in data_loader:\n"
    "        loss = model(samples)['loss']\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        optimizer.zero_grad()\n"
)


def _project(files: dict[str, str]):
    return audit_files((p, t.encode()) for p, t in files.items()).project


def test_bert_text_encoder_configs_are_not_the_trained_models_size():
    p = _project({f"lavis/configs/models/{n}.json": BERT for n in ("bert_config", "med_config", "med_config_albef")}
                 | {"lavis/tasks/base_task.py": LOOP})
    assert p.estimated_params is None
    assert "params_range" not in p.notes
    assert not any("small model" in r for r in p.bottleneck_reasons)


def test_a_decoder_only_config_beside_them_still_gives_the_size():
    llama = json.dumps({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 11008, "model_type": "llama",
                        "num_hidden_layers": 32, "vocab_size": 32000}, indent=2)
    p = _project({"configs/text_encoder.json": BERT, "configs/llm.json": llama, "train.py": LOOP})
    assert p.estimated_params == "6.7B"


def test_an_encoder_decoder_config_counts_its_decoder_and_its_ffn():
    # T5-3B (UnifiedQA-v2): 2.85B parameters; read as a decoder-only stack of 4 x d_model FFNs it was 368M
    p = _project({"configs/unifiedqav2_3b_config.json": T5_3B, "train.py": LOOP})
    assert p.estimated_params == "2.9B"
