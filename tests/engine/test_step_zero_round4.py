"""Step zero and the overview, round 4 of issue #9: each fixture is written after the real code a reviewer read.

litgpt (a CLI that trains any preset, ``Fabric(devices=devices)`` with ``devices="auto"``, data modules that also
stream from ``s3://``), instructlab-training and fms-hf-tuning (an embedding resized to a padded or run-time size),
llama-recipes (a sync under a flag that defaults off), LLaMA-Factory (``NNODES=2 llamafactory-cli train``) and trl
(a diffusion side trainer beside the LLM trainers).
"""

from __future__ import annotations

from checks.bottleneck import _gpus_text, _misaligned
from checks.engine import audit_files
from checks.facts import extract_file
from checks.model import Bottleneck, Evidence, Project, Status
from checks.roles import TRAINING, classify_roles
from reports.markdown import render_markdown

from .test_step_zero_real import NANOGPT


def audit(files: dict[str, str]):
    return audit_files((p, t.encode()) for p, t in files.items())


# -- compute-bound needs a known model size and a data source that is not object storage ---------------------------

# litgpt's data modules: a local folder by default, and a prefix test that takes ``s3://`` paths as well
S3_CAPABLE_DATA = '''from pathlib import Path


class TinyLlama:
    data_path = Path("data/")

    def prepare_data(self):
        path = str(self.data_path)
        if not path.startswith("s3://") and not Path(path).is_dir():
            raise FileNotFoundError(path)
'''


def test_a_data_loader_that_also_reads_object_storage_is_not_compute_bound():
    files = dict(NANOGPT, **{"data.py": S3_CAPABLE_DATA,
                             "train.py": "from data import TinyLlama\n" + NANOGPT["train.py"]})
    p = audit(files).project
    assert p.bottleneck == Bottleneck.UNKNOWN, p.bottleneck_reasons
    (reason,) = [r for r in p.bottleneck_reasons if r.startswith("compute-bound:")]
    assert "object storage (`data.py:9`" in reason and "startswith(\"s3://\")" in reason
    assert "C1 at `train.py:" in reason  # what is in place is still cited


def test_a_remote_scheme_test_outside_data_code_does_not_block_compute_bound():
    # an upload helper that takes ``s3://`` destinations is not where the training data is read from
    upload = 'def upload(dst, files):\n    if dst.startswith("s3://"):\n        boto3.client("s3").upload_file(files[0], dst)\n'
    files = dict(NANOGPT, **{"sync.py": upload, "train.py": "from sync import upload\n" + NANOGPT["train.py"]})
    assert audit(files).project.bottleneck == Bottleneck.COMPUTE


def test_an_unknown_model_size_is_not_compute_bound():
    # the same training step, but the model comes from whatever a run names (litgpt: ``GPT(Config.from_name(name))``)
    train = NANOGPT["train.py"]
    for dim in ("n_layer = 12\n", "n_head = 12\n", "n_embd = 768\n"):
        train = train.replace(dim, "")
    train = train.replace("model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size, bias=bias, vocab_size=None, dropout=dropout)\n"
                          "model = GPT(GPTConfig(**model_args))", "model = GPT(GPTConfig.from_name(model_name))")
    model = NANOGPT["model.py"].replace("    n_layer: int = 12\n    n_head: int = 12\n    n_embd: int = 768\n", "")
    p = audit(dict(NANOGPT, **{"train.py": train, "model.py": model})).project
    assert p.params_billions is None
    assert p.bottleneck == Bottleneck.UNKNOWN, p.bottleneck_reasons
    assert any(r.startswith("compute-bound:") and "model size is not fixed by the training path" in r for r in p.bottleneck_reasons)


def test_the_nanogpt_shape_stays_compute_bound():
    p = audit(NANOGPT).project
    assert p.bottleneck == Bottleneck.COMPUTE, p.bottleneck_reasons


# -- GPUs per node ------------------------------------------------------------------------------------------------

LIT_PRETRAIN = '''import lightning as L


def setup(devices="auto", num_nodes=1, precision=None):
    fabric = L.Fabric(devices=devices, num_nodes=num_nodes, precision=precision)
    fabric.launch(main)


def fit(fabric, model, loader, optimizer):
    for batch in loader:
        loss = model(batch)
        fabric.backward(loss)
        optimizer.step()
'''
LIT_CHAT = '''import lightning as L


def main(checkpoint_dir, precision=None):
    fabric = L.Fabric(devices=1, precision=precision)
    model = fabric.setup(load(checkpoint_dir))
    return model.generate()
'''


def test_a_chat_script_with_one_device_is_not_the_training_gpu_count():
    files = {"litgpt/pretrain.py": LIT_PRETRAIN, "litgpt/chat/base.py": LIT_CHAT,
             "litgpt/__main__.py": "from litgpt.pretrain import setup\nfrom litgpt.chat.base import main\n"}
    p = audit(files).project
    assert p.num_gpus is None  # ``devices=devices``: not known from the code, and the chat script's 1 is not it


def test_devices_auto_is_every_gpu_of_the_node():
    files = {"pretrain.py": LIT_PRETRAIN.replace("L.Fabric(devices=devices,", 'L.Fabric(devices="auto",')}
    p = audit(files).project
    assert p.num_gpus is None
    assert p.notes["gpus_auto"] == "pretrain.py:5"
    assert "every GPU of the node" in _gpus_text(p)[0]


def test_gpu_counts_are_written_in_good_grammar():
    assert _gpus_text(Project(num_gpus=1))[0] == " (1 GPU)"
    assert _gpus_text(Project(num_gpus=8))[0] == " (8 GPUs)"
    assert _gpus_text(Project()) == ("", "")


# -- multiples of 8: a padded or run-time size is not a misaligned one ----------------------------------------------

INSTRUCTLAB_MODEL = '''import math


class Model:
    def reconcile_tokenizer(self):
        self.tokenizer.add_special_tokens({"pad_token": "<|pad|>"})
        if len(self.tokenizer) > self.model.config.vocab_size:
            self.model.resize_token_embeddings(
                int(8 * math.ceil(len(self.tokenizer) / 8.0))
            )  # make the vocab size multiple of 8 for sharding the embedding layer.
'''
FMS_TOKENIZER_UTILS = '''import math


def tokenizer_and_embedding_resize(special_tokens_dict, tokenizer, model, multiple_of=1):
    tokenizer.add_special_tokens(special_tokens_dict)
    embedding_size = int(multiple_of * math.ceil(len(tokenizer) / multiple_of))
    model.resize_token_embeddings(embedding_size)
'''


def test_a_padded_or_run_time_vocabulary_is_not_cited_as_misaligned():
    files = {"model.py": INSTRUCTLAB_MODEL, "tokenizer_utils.py": FMS_TOKENIZER_UTILS,
             "ppo.yaml": "reward_model:\n  vocab_size: 32001\n  embed_dim: 4096\n"}
    facts = audit(files).facts
    padded = Evidence("model.py", 8, "self.model.resize_token_embeddings(")
    runtime = Evidence("tokenizer_utils.py", 7, "model.resize_token_embeddings(embedding_size)")
    odd = Evidence("ppo.yaml", 2, "vocab_size: 32001", key="vocab_size", value=32001)
    even = Evidence("ppo.yaml", 3, "embed_dim: 4096", key="embed_dim", value=4096)
    assert _misaligned(facts, [padded, runtime, odd, even]) == [odd]


def test_step_zero_does_not_repeat_a_multiple_of_8_claim_the_code_contradicts():
    train = '''from transformers import AutoModelForCausalLM, AutoTokenizer
from model import Model

model = AutoModelForCausalLM.from_pretrained("ibm-granite/granite-7b-base", torch_dtype="bfloat16")
m = Model()
m.reconcile_tokenizer()
for batch in loader:
    loss = model(**batch).loss
    loss.backward()
'''
    a = audit({"model.py": INSTRUCTLAB_MODEL, "train.py": train})
    # whatever the D7 rule (checks/rules) says of this line, step zero does not claim a misaligned dimension
    assert not any("multiples of 8" in r for r in a.project.bottleneck_reasons), a.project.bottleneck_reasons


# -- a sync under a flag that defaults off is not on the default step ----------------------------------------------

LLAMA_RECIPES_CONFIG = '''from dataclasses import dataclass


@dataclass
class train_config:
    num_workers_dataloader: int = 1
    save_metrics: bool = False  # saves training metrics to a json file for later plotting
'''
LLAMA_RECIPES_TRAIN = '''import torch


def train(model, train_dataloader, optimizer, train_config):
    for epoch in range(train_config.num_epochs):
        for step, batch in enumerate(train_dataloader):
            loss = model(**batch).loss
            if train_config.save_metrics:
                train_step_loss.append(loss.detach().float().item())
            total_loss += loss.detach().float()
            loss.backward()
            optimizer.step()
'''


def test_a_sync_under_a_flag_that_defaults_off_is_not_a_per_step_stall():
    files = {"src/configs/training.py": LLAMA_RECIPES_CONFIG, "src/utils/train_utils.py": LLAMA_RECIPES_TRAIN,
             "finetuning.py": "from src.utils.train_utils import train\nfrom src.configs.training import train_config\n"}
    assert not any("synchronisation" in r for r in audit(files).project.bottleneck_reasons)
    # a run config that turns the flag on puts the sync back on the step
    on = dict(files, **{"configs/run.yaml": "save_metrics: true\n"})
    assert any("synchronisation" in r and "train_utils.py:9" in r for r in audit(on).project.bottleneck_reasons)
    # a name that only a call's keyword sets (``F.dropout(x, training=False)``) is not an option that defaults off
    mode = dict(files, **{"src/utils/train_utils.py": LLAMA_RECIPES_TRAIN.replace("train_config.save_metrics", "model.training")
                          + "\n\ndef head(x):\n    return F.dropout(x, p=0.1, training=False)\n"})
    assert any("synchronisation" in r and "train_utils.py:9" in r for r in audit(mode).project.bottleneck_reasons)


# -- documented multi-node launches: the overview says "documented", not configured --------------------------------

LLAMAFACTORY_README = '''# LLaMA-Factory examples

#### Supervised Fine-Tuning on Multiple Nodes

```bash
FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 MASTER_ADDR=192.168.0.1 MASTER_PORT=29500 llamafactory-cli train examples/train_lora/qwen3_lora_sft.yaml
FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=1 MASTER_ADDR=192.168.0.1 MASTER_PORT=29500 llamafactory-cli train examples/train_lora/qwen3_lora_sft.yaml
```

```bash
FORCE_TORCHRUN=1 NNODES=1 llamafactory-cli train examples/train_lora/qwen3_lora_sft.yaml
```
'''


def test_an_env_prefixed_node_count_is_a_documented_multi_node_launch():
    ff = extract_file("examples/README.md", LLAMAFACTORY_README.encode())
    hints = [h for h in ff.doc_hints if h.kind == "multi_node"]
    assert [(h.line, h.value) for h in hints] == [(6, "NNODES=2"), (7, "NNODES=2")]  # NNODES=1 is one node


def test_the_overview_says_multi_node_is_documented_not_configured():
    files = {"examples/README.md": LLAMAFACTORY_README,
             "examples/train_lora/qwen3_lora_sft.yaml": "stage: sft\ndo_train: true\nmodel_name_or_path: Qwen/Qwen3-4B\nbf16: true\n",
             "src/llamafactory/train.py": "from transformers import Trainer\ntrainer = Trainer(model=model)\ntrainer.train()\n"}
    a = audit(files)
    p = a.project
    assert p.multi_node is False  # nothing configures it
    assert p.notes["multi_node_documented"] == "examples/README.md:6: `NNODES=2` (+1)"
    assert p.to_json()["multi_node_documented"] == "examples/README.md:6: `NNODES=2` (+1)"
    assert a.result("E1").status != Status.NA
    md = render_markdown(a)
    assert "multi-node training documented at examples/README.md:6" in md and "not configured" in md
    assert "文档中描述了多机训练" in render_markdown(a, lang="zh")


# -- side projects never feed step zero ----------------------------------------------------------------------------

ALIGNPROP = '''import torch
from diffusers import StableDiffusionPipeline


class AlignPropTrainer:
    def step(self, epoch):
        for inner_iters in range(self.num_inner):
            loss = self.compute_loss(self.sample())
            loss.backward()
            info["loss"].append(loss.item())
            info["reward"].append(rewards.mean().item())
            info["kl"].append(kl.cpu())
'''


def test_a_diffusion_side_trainer_does_not_feed_step_zero():
    sft = '''from trl import SFTTrainer
trainer = SFTTrainer(model="Qwen/Qwen2-0.5B", train_dataset=ds)
trainer.train()
'''
    files = {"trl/trainer/alignprop_trainer.py": ALIGNPROP, "trl/commands/scripts/sft.py": sft}
    a = audit(files)
    assert a.roles.role("trl/trainer/alignprop_trainer.py") == "side"
    assert not any("alignprop" in r for r in a.project.bottleneck_reasons), a.project.bottleneck_reasons


# -- recipe registries: ``tune run <name>`` reaches the recipe files ------------------------------------------------

REGISTRY = '''from dataclasses import dataclass


@dataclass
class Recipe:
    name: str
    file_path: str


_ALL_RECIPES = [
    Recipe(
        name="full_finetune_distributed",
        file_path="full_finetune_distributed.py",
    ),
    Recipe(
        name="generate",
        file_path="generate.py",
    ),
]
'''
RECIPE = '''class FullFinetuneRecipeDistributed:
    def train(self):
        for batch in self._dataloader:
            loss = self._loss_fn(self._model(batch["tokens"]), batch["labels"])
            loss.backward()
            self._optimizer.step()
'''


def test_a_recipe_registry_reaches_its_training_recipes_only():
    files = {p: extract_file(p, t.encode()) for p, t in {
        "torchtune/_recipe_registry.py": REGISTRY,
        "recipes/full_finetune_distributed.py": RECIPE,
        "recipes/generate.py": "class InferenceRecipe:\n    def generate(self):\n        return self._model.generate(self.prompt)\n",
    }.items()}
    roles = classify_roles(files)
    assert roles.role("recipes/full_finetune_distributed.py") == TRAINING
    assert "registered at torchtune/_recipe_registry.py:13" in roles.why["recipes/full_finetune_distributed.py"]
    assert roles.role("recipes/generate.py") == "code"  # registered, but it runs no training step


# -- a loader over a mock dataset built on the lines above reads no files (Megatron's run_simple_mcore_train_loop.py) --

def test_a_loader_over_a_mock_dataset_built_above_is_not_cited():
    train = '''from torch.utils.data import DataLoader
from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder
from megatron.core.datasets.gpt_dataset import MockGPTDataset


def get_train_data_iterator(config):
    datasets = BlendedMegatronDatasetBuilder(
        MockGPTDataset, [1000, None, None], lambda: True, config
    ).build()

    train_dataloader = DataLoader(datasets[0], batch_size=8, shuffle=True)
    return iter(train_dataloader)


def train(model, optim):
    for batch in get_train_data_iterator(None):
        loss = model(batch)
        loss.backward()
        optim.step()
'''
    reasons = audit({"pretrain_simple.py": train}).project.bottleneck_reasons
    assert not any("num_workers = 0" in r for r in reasons), reasons
    real = audit({"pretrain_simple.py": train.replace("MockGPTDataset", "GPTDataset")}).project.bottleneck_reasons
    assert any("num_workers = 0 at `pretrain_simple.py:11`" in r for r in real), real
