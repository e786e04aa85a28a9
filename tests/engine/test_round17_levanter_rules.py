"""Rules of round 17 of issue #9 (levanter 1.1, a JAX/Haliax training framework): each rule test fails on the rule before
it; each control passes on both.
"""

from __future__ import annotations

from .claims import audit as _audit

#: a jitted JAX training step fed from a YAML config (the shape of levanter's ``train_lm`` + ``lakh_medium.yaml``)
_TRAIN = '''import jax
import optax
import yaml


def main(path):
    cfg = yaml.safe_load(open(path))
    opt = optax.adamw(3e-4)

    @jax.jit
    def step(params, opt_state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, batch)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    for batch in load(cfg["data"]["train_path"]):
        params, opt_state, loss = step(params, opt_state, batch)
'''


def test_a_checkpoint_store_under_a_checkpointer_section_is_not_training_data() -> None:
    cfg = ("data:\n  train_path: /files/midi/train.txt\ntrainer:\n  checkpointer:\n    base_path: gs://bucket/checkpoints/\n"
           "    save_interval: 30m\n")
    a = _audit({"train.py": _TRAIN, "config/run.yaml": cfg})
    assert not [r for r in a.project.bottleneck_reasons if "remote object storage" in r]


def test_control_remote_training_data_still_counts() -> None:
    cfg = "data:\n  train_path: gs://bucket/data/train.jsonl\ntrainer:\n  checkpointer:\n    base_path: /local/ckpt/\n"
    a = _audit({"train.py": _TRAIN, "config/run.yaml": cfg})
    assert [r for r in a.project.bottleneck_reasons if "remote object storage" in r and "config/run.yaml:2" in r]


#: a cache tokenized ahead by ``datasets.map`` and read back by the training iterator through a class named for its tokenized
#: contents (levanter ``TokenizedDocumentCache(cache, flatten_docs=...)``), with a tokenizer probe on a literal
_CACHE_READER = {
    "prep_data.py": (
        "from datasets import load_dataset\nfrom transformers import AutoTokenizer\n\ndef main(args):\n"
        "    tok = AutoTokenizer.from_pretrained(args.tokenizer)\n    ds = load_dataset('json', data_files=args.data)['train']\n"
        "    ds = ds.map(lambda x: tok(x['text']), batched=True, num_proc=16)\n    ds.save_to_disk(args.out)\n"),
    "mylm/data/text.py": (
        "from datasets import load_from_disk\nfrom torch.utils.data import IterableDataset\nfrom mylm.hf_utils import num_cpus_used_by_tokenizer\n\n"
        "class TokenizedDocumentCache:\n    def __init__(self, cache, flatten_docs=True):\n        self.cache = cache\n\n"
        "    @staticmethod\n    def load(cache_dir, flatten_docs=True):\n"
        "        return TokenizedDocumentCache(load_from_disk(cache_dir), flatten_docs=flatten_docs)\n\n"
        "class EosChecker:\n    def __init__(self, tokenizer):\n        ids = tokenizer('hi there')['input_ids']\n"
        "        self.append_eos = ids[-1] != tokenizer.eos_token_id\n        self.cpus = num_cpus_used_by_tokenizer(tokenizer)\n\n"
        "class TokenSeqDataset(IterableDataset):\n    def __init__(self, cache_dir):\n        self.cache_dir = cache_dir\n\n"
        "    def __iter__(self):\n        for doc in TokenizedDocumentCache.load(self.cache_dir).cache:\n            yield doc['input_ids']\n"),
}


def test_reading_back_a_tokenized_cache_is_not_per_sample_tokenization() -> None:
    c = _audit(_CACHE_READER).result("F6")
    assert c.status.value == "used", (c.status, c.detail)
    # the cache it reads back is cited (load_from_disk), not as a tokenization site
    assert not [e for e in c.evidence if (e.key or "").startswith(("TokenizedDocumentCache", "tokenizer", "num_cpus"))]


def test_control_a_tokenizer_call_on_the_sample_in_iter_is_still_online() -> None:
    files = dict(_CACHE_READER)
    files["mylm/data/text.py"] = files["mylm/data/text.py"].replace(
        "yield doc['input_ids']\n", "yield self.tokenizer(doc['text'], truncation=True)['input_ids']\n")
    c = _audit(files).result("F6")
    assert c.status.value == "partial", (c.status, c.detail)


#: levanter's trainer shape: Haliax ``named_jit`` over ``train_step`` (micro-batch loop and optimizer update inside)
_JAX_TRAINER = '''import equinox as eqx
from haliax.partitioning import named_jit


class Trainer:
    def _train_step_fn(self):
        @named_jit(axis_resources=self.parameter_axis_mapping, donate_args=(True, True))
        def train_step(model, opt_state, batch):
            loss, grads = eqx.filter_value_and_grad(self.loss_fn)(model, batch)
            updates, opt_state = self.optimizer.update(grads, opt_state, params=model)
            return loss, eqx.apply_updates(model, updates), opt_state

        return train_step

    def train(self, state, loader):
        step = self._train_step_fn()
        for batch in loader:
            loss, state.model, state.opt_state = step(state.model, state.opt_state, batch)
'''


def test_a_jax_training_step_under_jit_is_compiled() -> None:
    c = _audit({"mylm/trainer.py": _JAX_TRAINER}).result("D2")
    assert c.status.value == "used", (c.status, c.detail)
    assert "XLA" in c.detail and [e for e in c.evidence if e.line == 7]


def test_control_a_jitted_helper_in_tests_does_not_compile_the_step() -> None:
    files = {"mylm/trainer.py": _JAX_TRAINER.replace("        @named_jit(axis_resources=self.parameter_axis_mapping, donate_args=(True, True))\n", ""),
             "tests/test_step.py": "import jax\n\n\n@jax.jit\ndef train_step(x):\n    return x\n"}
    c = _audit(files).result("D2")
    assert c.status.value == "unused", (c.status, c.detail)


def test_an_upload_destination_is_not_training_data() -> None:
    # nanotron examples/config_tiny_llama_with_s3_upload.yaml: where checkpoints are uploaded after saving
    cfg = ("data:\n  train_path: /files/midi/train.txt\ns3_upload:\n  remove_after_upload: true\n"
           "  upload_s3_path: s3://bucket/temp/run\n")
    a = _audit({"train.py": _TRAIN, "config/run.yaml": cfg})
    assert not [r for r in a.project.bottleneck_reasons if "remote object storage" in r], a.project.bottleneck_reasons
