"""Round 38 (issue #9): the leftovers of the VILA and OLMo-core reviews (corpus/HELDOUT.md), read as a new user would. Each
test is one false claim of those reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- VILA: a copy of HF TRL kept inside the package (``llava/trl/``, ``__version__ = "0.7.11.dev0"``) ---------------------------

_TRL_INIT = '__version__ = "0.7.11.dev0"\n\nfrom .trainer import DPOTrainer, SFTTrainer, get_quantization_config\n'
_TRL_TRAINER_INIT = ("from .dpo_trainer import DPOTrainer\nfrom .sft_trainer import SFTTrainer\n"
                     "from .utils import DPODataCollatorWithPadding, get_quantization_config\n")
_TRL_UTILS = (
    "import torch\nfrom peft import LoraConfig\nfrom torch.utils.data import IterableDataset\nfrom transformers import BitsAndBytesConfig\n\n\n"
    "class DPODataCollatorWithPadding:\n    def __call__(self, features):\n        return features\n\n\n"
    "class ConstantLengthDataset(IterableDataset):\n    def __iter__(self):\n        yield from self.buffer\n\n\n"
    "def get_quantization_config(model_config):\n    if model_config.load_in_4bit:\n"
    "        quantization_config = BitsAndBytesConfig(\n            load_in_4bit=True,\n"
    "            bnb_4bit_compute_dtype=model_config.torch_dtype,\n        )\n    else:\n        quantization_config = None\n"
    "    return quantization_config\n\n\n"
    "def get_peft_config(model_config):\n    if model_config.use_peft is False:\n        return None\n"
    "    return LoraConfig(r=model_config.lora_r, lora_alpha=model_config.lora_alpha, task_type='CAUSAL_LM')\n"
)
_TRL_SFT = ("from transformers import Trainer\nfrom .utils import ConstantLengthDataset\n\n\n"
            "class SFTTrainer(Trainer):\n    def _prepare(self, dataset):\n        return ConstantLengthDataset(dataset)\n")
_TRL_DPO = "from transformers import Trainer\nfrom .utils import DPODataCollatorWithPadding\n\n\nclass DPOTrainer(Trainer):\n    pass\n"
_VILA_TRAIN = (
    "import transformers\nfrom peft import LoraConfig, get_peft_model\n"
    "from llava.trl.trainer.utils import DPODataCollatorWithPadding\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))\n"
    "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
    "    if training_args.low_rank_training:\n"
    "        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules=['q_proj', 'v_proj']))\n"
    "    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=dataset)\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    train()\n"
)
_VILA_SH = ("#!/bin/bash\ntorchrun --nnodes=$NNODES --nproc_per_node=8 llava/train/train_llm_to_long.py \\\n"
            "    --model_name_or_path Efficient-Large-Model/qwen2-7b \\\n    --bf16 True \\\n"
            "    --low_rank_training {lrt} \\\n    --gradient_accumulation_steps 4 \\\n    --output_dir runs/long\n")


#: the serving builder sets ``load_in_4bit`` by name (``kwargs["load_in_4bit"] = True``), so the copy's guard is not off
_BUILDER = ("def load_pretrained_model(model_path, load_4bit=False):\n    kwargs = {}\n    if load_4bit:\n"
            "        kwargs['load_in_4bit'] = True\n    return kwargs\n")


def _vila_files(low_rank: str = "True", init: str = _TRL_INIT, train: str = _VILA_TRAIN) -> dict[str, str]:
    return {"llava/model/builder.py": _BUILDER, "pyproject.toml": '[project]\nname = "vila"\n', "llava/__init__.py": "",
            "llava/trl/__init__.py": init, "llava/trl/trainer/__init__.py": _TRL_TRAINER_INIT, "llava/trl/trainer/utils.py": _TRL_UTILS,
            "llava/trl/trainer/sft_trainer.py": _TRL_SFT, "llava/trl/trainer/dpo_trainer.py": _TRL_DPO,
            "llava/train/train_llm_to_long.py": train, "longvila/train/4_extend_llm_64k.sh": _VILA_SH.format(lrt=low_rank)}


def _vila(low_rank: str = "True", init: str = _TRL_INIT):
    return _audit(_vila_files(low_rank, init))


def test_a_library_copy_nested_in_the_package_is_vendored():
    a = _vila()
    roles = a.roles.by_path
    assert roles["llava/trl/trainer/sft_trainer.py"] == "vendored", a.roles.why["llava/trl/trainer/sft_trainer.py"]
    assert roles["llava/trl/trainer/utils.py"] == "vendored"  # the project imports its collator: the library's (round 57)
    assert a.roles.library_copies == ["llava/trl"]
    # control: without its own __version__ it is the project's own sub-package
    b = _vila(init=_TRL_INIT.replace('__version__ = "0.7.11.dev0"\n', ""))
    assert b.roles.by_path["llava/trl/trainer/sft_trainer.py"] != "vendored" and b.roles.library_copies == []


def test_longlora_switch_is_lora_and_an_uncalled_4bit_helper_of_the_copy_is_no_qlora():
    g4 = _check(_vila(), "G4")
    assert g4.status.value == "used" and "QLoRA" not in g4.detail, g4.detail
    assert any(e.path.endswith("4_extend_llm_64k.sh") for e in g4.evidence)
    # control: the same helper, called by the project's own code, builds the model's 4-bit base
    files = _vila_files(train=_VILA_TRAIN.replace(
        "from llava.trl.trainer.utils import DPODataCollatorWithPadding",
        "from llava.trl.trainer.utils import DPODataCollatorWithPadding, get_quantization_config").replace(
        "from_pretrained(model_args.model_name_or_path)",
        "from_pretrained(model_args.model_name_or_path, quantization_config=get_quantization_config(model_args))"))
    files["longvila/train/4_extend_llm_64k.sh"] = files["longvila/train/4_extend_llm_64k.sh"].replace(
        "--bf16 True", "--bf16 True \\\n    --load_in_4bit True")
    assert "QLoRA" in _check(_audit(files), "G4").detail


def test_a_relative_star_import_of_another_utils_does_not_build_the_copys_iterable_dataset():
    # (the dataset class renamed from TRL's ConstantLengthDataset, a packing wrapper F9 never reads as streaming since
    # round 64, so that the star import alone decides)
    files = {k: v.replace("ConstantLengthDataset", "TokenStreamDataset") for k, v in {
        **_vila_files(train="import llava.model.quantization.qlinear\n" + _VILA_TRAIN),
        "llava/model/quantization/utils.py": "def quantize(x):\n    return x\n",
        "llava/model/quantization/qlinear.py": "from .utils import *\n"}.items()}
    assert _check(_audit(files), "F9").status.value == "unused", _check(_audit(files), "F9").detail
    # control: the project's own star import of its own module of that shape may build it (the copy's module is the
    # library's, read as if installed, since round 57)
    files["llava/data/stream.py"] = _TRL_UTILS.replace("ConstantLengthDataset", "TokenStreamDataset")
    files["llava/train/train_llm_to_long.py"] = "from llava.data.stream import *\n" + _VILA_TRAIN
    assert _check(_audit(files), "F9").status.value == "used"


_VISUALIZE = (
    "import argparse\nfrom datasets import load_dataset\nfrom torch.utils.data import DataLoader\n\n\n"
    "def get_pca_map(features):\n    return features\n\n\n"
    "def main():\n    parser = argparse.ArgumentParser()\n    args = parser.parse_args()\n"
    "    dataset = load_dataset(args.dataset, split=args.split)\n"
    "    dataset = dataset.to_iterable_dataset(num_shards=8)\n"
    "    loader = DataLoader(dataset, batch_size=args.batch_size)\n    for batch in loader:\n        get_pca_map(batch)\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)


def test_a_modules_own_main_block_streaming_for_a_plot_is_not_the_training_data():
    files = {"llava/model/encoder/visualize_features.py": _VISUALIZE,
             "llava/model/encoder/radio_encoder.py": "from .visualize_features import get_pca_map\n\n\nclass RADIO:\n    pass\n",
             "llava/train/train.py": "from llava.model.encoder.radio_encoder import RADIO\n" + _VILA_TRAIN,
             "scripts/train.sh": "torchrun --nproc_per_node=8 llava/train/train.py --bf16 True --output_dir runs/a\n"}
    assert _check(_audit(files), "F9").status.value == "unused", _check(_audit(files), "F9").detail
    # control: a launch runs that file itself
    files["scripts/viz.sh"] = "torchrun --nproc_per_node=8 llava/model/encoder/visualize_features.py --dataset c4\n"
    assert _check(_audit(files), "F9").status.value == "used"


# --- OLMo-core: recipes built in Python (``src/scripts/train/*.py``), each calling the library's config classes ----------------

_OLMO_LIB = {
    "mylib/train/train_module/transformer/config.py": (
        "from dataclasses import dataclass\nfrom typing import Optional\n\n\n"
        "@dataclass\nclass TransformerExpertParallelConfig:\n    degree: int = 1\n\n\n"
        "@dataclass\nclass TransformerDataParallelConfig:\n    name: str = 'fsdp'\n    prefetch_factor: int = 0\n"
        "    reduce_dtype: str = 'float32'\n\n\n"
        "@dataclass\nclass TransformerTrainModuleConfig:\n    rank_microbatch_size: int\n"
        "    ep_config: Optional[TransformerExpertParallelConfig] = None\n"
        "    dp_config: Optional[TransformerDataParallelConfig] = None\n"),
    "mylib/data/data_loader.py": (
        "from dataclasses import dataclass\nfrom typing import Optional\nfrom torch.utils.data import DataLoader\n\n\n"
        "@dataclass\nclass NumpyDataLoaderConfig:\n    global_batch_size: int\n    num_workers: int = 0\n"
        "    prefetch_factor: Optional[int] = None\n\n"
        "    def build(self, dataset):\n        return DataLoader(dataset, batch_size=None, num_workers=self.num_workers,\n"
        "                          prefetch_factor=self.prefetch_factor)\n"),
    "mylib/nn/moe/model.py": (
        "import torch.nn as nn\n\n\nclass MoETransformer(nn.Module):\n    num_experts = 64\n\n"
        "    def apply_ep(self, ep_mesh):\n        for block in self.blocks.values():\n            block.apply_ep(ep_mesh)\n"),
    "mylib/train/train_module/transformer/common.py": (
        "def parallelize_model(model, *, world_mesh, ep_config=None):\n"
        "    if ep_config is not None:\n        model.apply_ep(world_mesh['ep'])\n    return model\n"),
}


def _olmo_recipe(extra: str = "", loader: str = "num_workers=4", trainer: str = "metrics_collect_interval=10") -> str:
    return ("from mylib.data.data_loader import NumpyDataLoaderConfig\nfrom mylib.nn.moe.model import MoETransformer\n"
            "from mylib.train.train_module.transformer.config import (\n    TransformerDataParallelConfig,\n"
            "    TransformerExpertParallelConfig,\n    TransformerTrainModuleConfig,\n)\n"
            "from mylib.train import TrainerConfig\n\n\n"
            "def build_config():\n    model = MoETransformer()\n"
            f"    train_module = TransformerTrainModuleConfig(\n        rank_microbatch_size=8192,{extra}\n    )\n"
            f"    data_loader = NumpyDataLoaderConfig(global_batch_size=1024, {loader})\n"
            f"    trainer = TrainerConfig(save_folder='/weka/run', {trainer})\n"
            "    loss = train_module(model).backward()\n    return trainer\n\n\n"
            "if __name__ == '__main__':\n    build_config()\n")


def test_an_expert_parallel_config_a_recipe_builds_is_expert_parallelism():
    ep = "\n        ep_config=TransformerExpertParallelConfig(degree=-1),"
    a = _audit({**_OLMO_LIB, "src/scripts/train/OLMoE2-large.py": _olmo_recipe(ep), "src/scripts/train/OLMoE2-small.py": _olmo_recipe()})
    a7 = _check(a, "A7")
    assert a7.status.value == "used", a7.detail
    assert "size -1" in a7.detail and a7.evidence[0].path == "src/scripts/train/OLMoE2-large.py", a7.detail
    # control: a config of that class behind a switch that is off builds nothing
    off = _olmo_recipe().replace("    model = MoETransformer()\n", "    model = MoETransformer()\n    if False:\n"
                                 "        ep = TransformerExpertParallelConfig(degree=8)\n")
    b = _audit({**_OLMO_LIB, "src/scripts/train/OLMoE2-large.py": off})
    assert _check(b, "A7").status.value == "unused", _check(b, "A7").detail


def test_fsdp_forward_prefetch_is_not_the_loaders_prefetch_factor():
    dp = "\n        dp_config=TransformerDataParallelConfig(name='hsdp', prefetch_factor=1),"
    files = {**_OLMO_LIB, **{f"src/scripts/train/run{i}.py": _olmo_recipe(dp if i < 2 else "") for i in range(4)}}
    f2 = _check(_audit(files), "F2")
    assert not any("DataParallel" in (e.key or "") for e in f2.evidence), [e.key for e in f2.evidence]
    assert f2.status.value == "used" and "factor below 2" not in f2.detail, f2.detail
    # control: the loader's own prefetch_factor=1 is a loader finding
    files["src/scripts/train/run0.py"] = _olmo_recipe(dp, loader="num_workers=4, prefetch_factor=1")
    f2 = _check(_audit(files), "F2")
    assert any(e.key == "NumpyDataLoaderConfig(prefetch_factor=)" and e.value == 1 for e in f2.evidence), f2.evidence


_OLMO_CALLBACKS = {
    "mylib/train/callbacks/console_logger.py": (
        "from dataclasses import dataclass\nfrom typing import Optional\n\n\n@dataclass\nclass ConsoleLoggerCallback:\n"
        "    log_interval: int = 1\n    \"\"\"How often, in steps, to log progress to the console.\"\"\"\n\n"
        "    metrics_log_interval: Optional[int] = None\n\n"
        "    def post_step(self):\n        if self.step % self.log_interval != 0:\n            return\n"
        "        log.info(self._get_progress_marker(self.step))\n"),
    "mylib/train/callbacks/evaluator_callback.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass EvaluatorCallback:\n    eval_interval: int = 1000\n"
        "    log_interval: int = 5\n"),
    "mylib/train/__init__.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass TrainerConfig:\n    save_folder: str\n"
        "    metrics_collect_interval: int = 5\n    \"\"\"How often (in steps) to collect, reduce, and log metrics.\"\"\"\n"),
}


def test_progress_and_evaluator_intervals_are_not_metric_logging_and_scripts_vote():
    values = [10] * 5 + [50] * 3 + [5] * 2
    files = {**_OLMO_LIB, **_OLMO_CALLBACKS,
             **{f"src/scripts/train/run{i}.py": _olmo_recipe(trainer=f"metrics_collect_interval={v}") for i, v in enumerate(values)}}
    i4 = _check(_audit(files), "I4")
    assert i4.status.value == "used", i4.detail
    assert "10 in 5, 50 in 3, 5 in 2" in i4.detail and "every step" not in i4.detail, i4.detail
    # control: when most scripts collect metrics every step, that is the finding
    files.update({f"src/scripts/train/run{i}.py": _olmo_recipe(trainer="metrics_collect_interval=1") for i in range(7)})
    i4 = _check(_audit(files), "I4")
    assert i4.status.value == "unused" and "every step" in i4.detail, i4.detail


def test_an_out_buffer_allocated_the_line_before_is_no_buffer_reuse():
    moe = ("import torch\n\n\nclass ParallelMLP(torch.nn.Module):\n"
           "    def indices_and_bins(self, expert_indices, batch_size_per_expert):\n"
           "        bin_ids, indices = torch.sort(expert_indices)\n"
           "        bins = torch.empty_like(batch_size_per_expert, dtype=torch.int32)\n"
           "        torch.cumsum(batch_size_per_expert, 0, out=bins)\n        return indices, bin_ids, bins\n")
    files = {"mylib/nn/moe/parallel_mlp.py": moe, "train.py": "from mylib.nn.moe.parallel_mlp import ParallelMLP\n"
             "for batch in loader:\n    loss = model(batch).loss\n    loss.backward()\n    optimizer.step()\n"}
    assert _check(_audit(files), "C6").status.value == "unused", _check(_audit(files), "C6").detail
    # control: a buffer kept on the module and filled every step is reuse
    files["mylib/nn/moe/parallel_mlp.py"] = moe.replace(
        "        bins = torch.empty_like(batch_size_per_expert, dtype=torch.int32)\n", "").replace("out=bins", "out=self.bins")
    assert _check(_audit(files), "C6").status.value == "used"


def test_a_weight_file_name_is_no_model_name_and_a_library_copys_evidence_comes_last():
    loader = ("import os\nfrom huggingface_hub import hf_hub_download\n\n\n"
              "def load(pretrained_model_name_or_path):\n"
              "    safe_filename = os.path.join(pretrained_model_name_or_path, \"model.safetensors\")\n"
              "    if not os.path.exists(safe_filename):\n"
              "        safe_filename = _get_checkpoint_from_hub(pretrained_model_name_or_path, token=None,\n"
              "                                                 model_name=\"model.safetensors\",\n"
              "                                                 model_index_name=\"model.safetensors.index.json\")\n"
              "    return safe_filename\n")
    a = _vila()
    files = {"pyproject.toml": '[project]\nname = "vila"\n', "llava/__init__.py": "", "llava/train/loader.py": loader,
             "llava/train/train_llm_to_long.py": "from llava.train.loader import load\n" + _VILA_TRAIN,
             "longvila/train/4_extend_llm_64k.sh": _VILA_SH.format(lrt="True")}
    b = _audit(files)
    assert "model.safetensors" not in b.project.model_names, b.project.model_names
    assert "Efficient-Large-Model/qwen2-7b" in b.project.model_names
    # the copy's modules the project imports stay on the training path, after the project's own evidence
    g4 = _check(a, "G4")
    copy = [i for i, e in enumerate(g4.evidence) if e.path.startswith("llava/trl/")]
    own = [i for i, e in enumerate(g4.evidence) if not e.path.startswith("llava/trl/")]
    assert own and (not copy or max(own) < min(copy)), [e.path for e in g4.evidence]


def test_g3_names_the_projects_own_curriculum_when_no_recipe_grows_one():
    from checks.rules.g_strategy import _VSL_LIB, _vsl_recipe
    recipe = _vsl_recipe("VSLCurriculumType.natural").replace("        vsl_curriculum=VSLCurriculumConfig(name=VSLCurriculumType.natural, num_cycles=8),\n", "")
    g3 = _check(_audit({**_VSL_LIB, "src/scripts/train/OLMo2-1B.py": recipe}), "G3")
    assert g3.status.value == "unused" and "VSLCurriculumConfig (src/olmo_core/data/numpy_dataset.py:" in g3.detail, g3.detail
    assert g3.values.get("advice_for") == "own-curriculum" and g3.values.get("flag") == "VSLCurriculumConfig"
    # control: a project without one keeps the plain detail
    g3 = _check(_audit({"train.py": recipe.replace("from olmo_core.data.numpy_dataset import", "from x import")}), "G3")
    assert "own" not in g3.detail and "advice_for" not in g3.values, g3.detail


_ROOT_DIR = ("def get_root_dir(cluster: str) -> str:\n    if cluster.startswith('ai2/'):\n"
             "        if 'storage:weka' in tags_of(cluster):\n            return \"/weka/oe-training-default/ai2-llm\"\n"
             "        else:\n            return \"gs://ai2-llm\"\n    else:\n        return \"gs://ai2-llm\"\n")


def test_a_data_root_remote_on_some_clusters_and_mounted_on_others_is_no_plain_remote_read():
    files = {**_OLMO_LIB, "mylib/internal/common.py": _ROOT_DIR,
             "src/scripts/train/run.py": "from mylib.internal.common import get_root_dir\n" + _olmo_recipe()}
    reasons = " ".join(_audit(files).project.bottleneck_reasons)
    assert "on some clusters" in reasons and "/weka/oe-training-default/ai2-llm" in reasons, reasons
    # control: a remote data folder with no mounted alternative is remote storage
    files["mylib/internal/common.py"] = "def get_root_dir(cluster: str) -> str:\n    return \"gs://ai2-llm/preprocessed/dolma2\"\n"
    reasons = " ".join(_audit(files).project.bottleneck_reasons)
    assert "read from remote object storage (" in reasons and "some clusters" not in reasons, reasons


def test_an_accelerate_config_named_only_by_an_eval_script_does_not_put_its_offload_json_in_use():
    files = {"llava/train/train.py": _VILA_TRAIN,
             "scripts/train.sh": "deepspeed llava/train/train.py --deepspeed ./scripts/zero3.json --bf16 True --output_dir runs/a\n",
             "scripts/zero3.json": '{\n  "bf16": {"enabled": "auto"},\n  "zero_optimization": {"stage": 3}\n}\n',
             "scripts/zero3_offload_inference.json": (
                 '{\n  "bf16": {"enabled": "auto"},\n  "zero_optimization": {\n    "stage": 3,\n'
                 '    "offload_param": {"device": "cpu", "pin_memory": true}\n  }\n}\n'),
             "scripts/deepspeed_inference.yaml": (
                 "compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  deepspeed_config_file: scripts/zero3_offload_inference.json\n"
                 "  zero3_init_flag: false\ndistributed_type: DEEPSPEED\nnum_processes: 8\n"),
             "scripts/eval/needle.sh": ("accelerate launch --num_processes 8 --config_file scripts/deepspeed_inference.yaml "
                                        "llava/eval/eval_vision_niah.py --model runs/a\n")}
    c4 = _check(_audit(files), "C4")
    assert c4.status.value != "used", c4.detail
    # control: a training launch that names the accelerate config uses its offload
    files["scripts/train_offload.sh"] = ("accelerate launch --config_file scripts/deepspeed_inference.yaml llava/train/train.py "
                                         "--bf16 True --output_dir runs/b\n")
    assert _check(_audit(files), "C4").status.value == "used"


def test_remote_reads_in_fewer_scripts_than_mounted_data_paths_are_some_runs():
    def recipe(root: str) -> str:
        return _olmo_recipe().replace("    model = MoETransformer()\n", f"    model = MoETransformer()\n    mix_base_dir = \"{root}\"\n")
    files = {**_OLMO_LIB, "src/scripts/train/ladder.py": recipe("gs://ai2-llm/preprocessed/"),
             "src/scripts/train/sft.py": recipe("/weka/oe-training-default/ai2-llm/sft"),
             "src/scripts/train/pretrain.py": recipe("/weka/oe-training-default/ai2-llm/pretrain")}
    from checks.bottleneck import signals as _signals
    a = _audit(files)
    texts = [s.en for s in _signals(a.facts, a.project, a.results)]
    assert any(t.startswith("some runs read training data from remote object storage") for t in texts), texts
    # control: the remote read in most scripts is the project's
    files["src/scripts/train/sft.py"] = recipe("gs://ai2-llm/sft/")
    a = _audit(files)
    texts = [s.en for s in _signals(a.facts, a.project, a.results)]
    assert any(t.startswith("training data is read from remote object storage") for t in texts), texts


_GEN_MODULE = (
    "import torch\n\n\nclass TransformerGenerationModule:\n"
    "    def prepare_inference_cache(self, batch_size, max_seq_len):\n"
    "        for block in self.model.blocks.values():\n            block.attention.init_kv_cache_manager(batch_size, max_seq_len)\n\n"
    "    @torch.no_grad()\n    def generate_batch(self, input_ids, generation_config):\n"
    "        if generation_config.use_cache:\n            self.prepare_inference_cache(input_ids.shape[0], generation_config.max_length)\n"
    "        generated = input_ids\n        while generated.shape[1] < generation_config.max_length:\n"
    "            logits = self.model(generated[:, -1:])\n            next_token = logits[:, -1].argmax(-1, keepdim=True)\n"
    "            generated = torch.cat([generated, next_token], dim=1)\n        return generated\n"
)
_CHAT = ("import argparse\nfrom mylib.generate.generation_module import TransformerGenerationModule\n\n\n"
         "def main():\n    parser = argparse.ArgumentParser()\n    args = parser.parse_args()\n"
         "    generation_module = TransformerGenerationModule.from_checkpoint(args.checkpoint)\n"
         "    generated_ids = generation_module.generate_batch(input_ids, generation_config)\n\n\n"
         "if __name__ == '__main__':\n    main()\n")


def test_a_projects_own_generate_batch_cli_is_inference_and_its_cache_is_a_kv_cache():
    files = {**_OLMO_LIB, "src/scripts/train/run.py": _olmo_recipe(),
             "mylib/generate/generation_module.py": _GEN_MODULE, "mylib/generate/chat.py": _CHAT}
    a = _audit(files)
    assert a.project.does_inference
    j1 = _check(a, "J1")
    assert j1.status.value == "partial" and "own decode loop keeps a KV cache" in j1.detail, j1.detail
    # control: the same loop without a cache recomputes the prefix
    files["mylib/generate/generation_module.py"] = _GEN_MODULE.replace(
        "        if generation_config.use_cache:\n            self.prepare_inference_cache(input_ids.shape[0], generation_config.max_length)\n", "")
    assert _check(_audit(files), "J1").status.value == "unused"


def test_torchao_quantize_for_mx_training_on_the_training_path_is_not_inference_quantization():
    fp8 = ("from torchao.quantization import quantize_\n\n\nclass Float8Config:\n    def apply_mx(self, model):\n"
           "        quantize_(model, config=self.ao_mx.to_ao_type())\n")
    recipe = _olmo_recipe().replace("from mylib.train import TrainerConfig\n",
                                    "from mylib.train import TrainerConfig\nfrom mylib.float8 import Float8Config\n")
    files = {**_OLMO_LIB, "mylib/float8/__init__.py": fp8, "src/scripts/train/run.py": recipe,
             "launch.sh": "torchrun --nproc_per_node 8 src/scripts/train/run.py\n",
             "mylib/generate/generation_module.py": _GEN_MODULE, "mylib/generate/chat.py": _CHAT}
    j4 = _check(_audit(files), "J4")
    assert j4.status.value == "unused", j4.detail
    # control: the same call in the generation CLI quantizes the served model
    files["mylib/generate/chat.py"] = _CHAT.replace("    generated_ids =", "    quantize_(generation_module.model, int8_weight_only())\n"
                                                    "    generated_ids =").replace("import argparse\n", "import argparse\nfrom torchao.quantization import quantize_, int8_weight_only\n")
    assert _check(_audit(files), "J4").status.value == "used"


def test_transformers_only_in_an_hf_interop_folder_is_not_the_training_framework():
    hf = ("import transformers\n\n\ndef _get_olmo3_config(config):\n    return transformers.Olmo3Config(hidden_size=config.d_model)\n\n\n"
          "def merge_checkpoints(paths):\n    return transformers.AutoModelForCausalLM.from_pretrained(paths[0])\n")
    files = {**_OLMO_LIB, "src/scripts/train/run.py": _olmo_recipe(), "mylib/nn/hf/config.py": hf}
    assert "transformers" not in _audit(files).project.frameworks
    # control: a model class trained through transformers' Trainer is the framework
    files["train_hf.py"] = ("from transformers import Trainer, AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('gpt2')\n"
                            "Trainer(model=model, args=args, train_dataset=ds).train()\n")
    assert "transformers" in _audit(files).project.frameworks


# --- Prismatic VLMs (TRI-ML/prismatic-vlms at HEAD) -------------------------------------------------------------------------

_PRISM_BASE = ("from transformers import AutoModelForCausalLM\n\n\nclass HFCausalLLMBackbone:\n"
               "    def __init__(self, llm_backbone_id, inference_mode=False, use_flash_attention_2=False, hf_hub_path=None):\n"
               "        self.llm = AutoModelForCausalLM.from_pretrained(\n            hf_hub_path,\n"
               "            use_flash_attention_2=use_flash_attention_2 if not inference_mode else False,\n        )\n")
_PRISM_LLAMA = ("from .base_llm import HFCausalLLMBackbone\n\n\nclass LLaMa2LLMBackbone(HFCausalLLMBackbone):\n"
                "    def __init__(\n        self,\n        llm_backbone_id: str,\n        inference_mode: bool = False,\n"
                "        use_flash_attention_2: bool = True,\n    ) -> None:\n        super().__init__(\n            llm_backbone_id,\n"
                "            inference_mode=inference_mode,\n            use_flash_attention_2=use_flash_attention_2,\n        )\n")
_PRISM_TRAIN = ("import torch\nfrom prismatic.models.backbones.llm.llama2 import LLaMa2LLMBackbone\n\n\n"
                "def pretrain(cfg):\n    llm = LLaMa2LLMBackbone(cfg.llm_backbone_id{extra})\n"
                "    for batch in loader:\n        loss = llm(batch).loss\n        loss.backward()\n        optimizer.step()\n\n\n"
                "if __name__ == '__main__':\n    pretrain(cfg)\n")


def test_a_backbone_switch_defaulting_to_flash_attention_2_and_handed_on_is_d1():
    files = {"prismatic/models/backbones/llm/base_llm.py": _PRISM_BASE, "prismatic/models/backbones/llm/llama2.py": _PRISM_LLAMA,
             "scripts/pretrain.py": _PRISM_TRAIN.format(extra=""),
             "README.md": "```bash\ntorchrun --standalone --nnodes 1 --nproc-per-node 8 scripts/pretrain.py\n```\n"}
    d1 = _check(_audit(files), "D1")
    assert d1.status.value == "used" and any(e.path.endswith("llama2.py") for e in d1.evidence), d1.detail
    # control: the run builds the backbone with the switch off
    files["scripts/pretrain.py"] = _PRISM_TRAIN.format(extra=", use_flash_attention_2=False")
    assert _check(_audit(files), "D1").status.value != "used"


_PRISM_LOOP = (
    "import torch\n\n\nclass TrainingStrategy:\n    def run_training(self, dataloader, metrics, epoch):\n"
    "        for train_idx, batch in enumerate(dataloader):\n            loss = self.vlm(**batch).loss\n"
    "            normalized_loss = loss / self.grad_accumulation_steps\n            normalized_loss.backward()\n"
    "            if (train_idx + 1) % self.grad_accumulation_steps == 0:\n                self.optimizer.step()\n"
    "                self.optimizer.zero_grad()\n"
    "                if {guard}:\n"
    "                    self.save_checkpoint(metrics.run_dir, metrics.global_step, epoch, loss.item())\n"
    "                    return\n"
    "        if self.max_steps is None:\n            self.save_checkpoint(metrics.run_dir, metrics.global_step, epoch, loss.item())\n"
)


def test_a_save_at_the_runs_last_step_is_no_per_step_checkpoint():
    files = {"prismatic/training/strategies/base_strategy.py": _PRISM_LOOP.format(
                 guard="self.max_steps is not None and metrics.global_step >= self.max_steps"),
             "scripts/pretrain.py": "from prismatic.training.strategies.base_strategy import TrainingStrategy\n"
                                    "TrainingStrategy().run_training(loader, metrics, 0)\n"}
    i3 = _check(_audit(files), "I3")
    assert i3.status.value != "unused", i3.detail
    # control: a save under the accumulation boundary alone runs every optimizer step
    files["prismatic/training/strategies/base_strategy.py"] = _PRISM_LOOP.format(guard="metrics.global_step > 0")
    assert _check(_audit(files), "I3").status.value == "unused"


# --- EasyContext (jzhang38/EasyContext at HEAD) -----------------------------------------------------------------------------

_EC_TRAIN = (
    "import argparse\nfrom accelerate import Accelerator\nfrom accelerate.utils import DummyOptim, DummyScheduler\n"
    "from easy_context import prepare_seq_parallel_inputs\n\n\n"
    "def main(args):\n    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulate_every, mixed_precision='bf16')\n"
    "    optim = DummyOptim(model.parameters(), lr=args.learning_rate)\n"
    "    scheduler = DummyScheduler(optim, num_training_steps=args.max_train_steps, total_num_steps=args.max_train_steps)\n"
    "    model, optim, scheduler = accelerator.prepare(model, optim, scheduler)\n"
    "    for step, batch in enumerate(train_loader):\n"
    "        prepared = prepare_seq_parallel_inputs(args.parallel_mode, batch, accelerator.process_index)\n"
    "        loss = model(**prepared).loss\n        accelerator.backward(loss)\n        optim.step()\n        scheduler.step()\n\n\n"
    "if __name__ == '__main__':\n    args = argparse.ArgumentParser()\n"
    "    args.add_argument('--parallel_mode', type=str, choices=['zigzag_ring_attn', 'dist_flash_attn', 'ulysses_attn', "
    "'usp_attn', 'data_parallel'])\n    args.add_argument('--ring_degree', type=int, default=1)\n    main(args.parse_args())\n"
)
_EC_DS = ('{\n  "bf16": {"enabled": "auto"},\n  "scheduler": {\n    "type": "WarmupLR",\n    "params": {\n'
          '      "warmup_min_lr": 2e-5,\n      "warmup_max_lr": 2e-5,\n      "warmup_num_steps": 0,\n      "warmup_type": "linear"\n'
          '    }\n  },\n  "zero_optimization": {"stage": 3}\n}\n')
_EC_ACCEL = ("compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  deepspeed_config_file: accelerate_configs/zero3_offload.json\n"
             "  zero3_init_flag: false\ndistributed_type: DEEPSPEED\nmachine_rank: 0\nnum_machines: {n}\nnum_processes: {p}\n")


def _ec_launch(mode: str) -> str:
    return ("accelerate launch \\\n--config_file  accelerate_configs/single_node.yaml \\\ntrain.py \\\n--batch-size 1 \\\n"
            f"--gradient-accumulate-every 4 \\\n--seq-length 32768 \\\n--parallel_mode {mode}\n\n")


def _easycontext(modes: list[str]) -> dict[str, str]:
    return {"train.py": _EC_TRAIN, "accelerate_configs/zero3_offload.json": _EC_DS,
            "accelerate_configs/single_node.yaml": _EC_ACCEL.format(n=1, p=8), "accelerate_configs/two_node.yaml": _EC_ACCEL.format(n=2, p=16),
            "train_scripts/EasyContext-1M-Llama-2-7B.sh": "".join(_ec_launch(m) for m in modes)}


def test_launches_that_pick_ring_attention_by_mode_are_sequence_parallel():
    a6 = _check(_audit(_easycontext(["data_parallel", "zigzag_ring_attn", "zigzag_ring_attn"])), "A6")
    assert a6.status.value == "used" and "zigzag_ring_attn in 2, data_parallel in 1 of 3" in a6.detail, a6.detail
    # control: most launches run plain data parallel
    a6 = _check(_audit(_easycontext(["data_parallel", "data_parallel", "zigzag_ring_attn"])), "A6")
    assert a6.status.value == "unused", a6.detail


def test_a_deepspeed_warmuplr_with_one_rate_is_a_constant_rate_and_names_no_trainer():
    g1 = _check(_audit(_easycontext(["zigzag_ring_attn"])), "G1")
    assert g1.status.value == "unused" and "warmup_min_lr = warmup_max_lr" in g1.detail, g1.detail
    assert "Trainer" not in g1.detail and g1.values.get("advice_for") != "ds-scheduler"
    # control: a real warmup to a higher rate stays a warmup without decay
    files = _easycontext(["zigzag_ring_attn"])
    files["accelerate_configs/zero3_offload.json"] = _EC_DS.replace('"warmup_min_lr": 2e-5', '"warmup_min_lr": 0').replace(
        '"warmup_num_steps": 0', '"warmup_num_steps": 100')
    g1 = _check(_audit(files), "G1")
    assert g1.status.value == "partial" and "Trainer" not in g1.detail, g1.detail  # (no HF Trainer here: accelerate's DummyScheduler)


def test_an_accelerate_config_for_two_nodes_that_no_launch_names_is_not_a_multi_node_run():
    a = _audit(_easycontext(["zigzag_ring_attn"]))
    assert not a.project.multi_node and "two_node.yaml" in a.project.notes.get("multi_node_documented", ""), a.project.notes
    # control: a launch that passes it runs on two nodes
    files = _easycontext(["zigzag_ring_attn"])
    files["train_scripts/two.sh"] = _ec_launch("zigzag_ring_attn").replace("single_node.yaml", "two_node.yaml")
    assert _audit(files).project.multi_node


# --- VideoLLaMA2 (DAMO-NLP-SG/VideoLLaMA2 at HEAD) --------------------------------------------------------------------------

_VL2_LAUNCH = (
    "#!/bin/bash\nARG_WORLD_SIZE=${1:-1}\nARG_NPROC_PER_NODE=${2:-8}\n"
    "if [ ! -n \"$WORLD_SIZE\" ] || [ ! -n \"$NPROC_PER_NODE\" ]; then\n    WORLD_SIZE=$ARG_WORLD_SIZE\n"
    "    NPROC_PER_NODE=$ARG_NPROC_PER_NODE\nfi\n\nGLOBAL_BATCH_SIZE=128\nLOCAL_BATCH_SIZE=4\n"
    "GRADIENT_ACCUMULATION_STEPS={expr}\n\n"
    "torchrun --nnodes $WORLD_SIZE \\\n    --nproc_per_node $NPROC_PER_NODE \\\n    videollama2/train.py \\\n"
    "    --deepspeed scripts/zero3.json \\\n    --bf16 True \\\n    --per_device_train_batch_size $LOCAL_BATCH_SIZE \\\n"
    "    --gradient_accumulation_steps $GRADIENT_ACCUMULATION_STEPS \\\n    --output_dir work_dirs/videollama2\n"
)
_VL2_TRAIN = ("import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))\n"
              "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
              "    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=ds)\n    trainer.train()\n")


def test_old_bash_arithmetic_for_the_accumulation_is_read_like_the_new():
    files = {"videollama2/train.py": _VL2_TRAIN,
             "scripts/custom/finetune.sh": _VL2_LAUNCH.replace(
                 "{expr}", "$[$GLOBAL_BATCH_SIZE/($WORLD_SIZE*$NPROC_PER_NODE*$LOCAL_BATCH_SIZE)]")}
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "used" and "128 / (4 x GPUs)" in c5.detail, c5.detail
    # control: the same count fixed at 1
    files["scripts/custom/finetune.sh"] = _VL2_LAUNCH.replace("{expr}", "1")
    assert _check(_audit(files), "C5").status.value != "used"


_SGL_WORKER = ("import sglang as sgl\nfrom sglang.backend.runtime_endpoint import RuntimeEndpoint\n\n\n@sgl.function\n"
               "def pipeline(s, prompt, max_tokens):\n    s += prompt\n    s += sgl.gen('response', max_tokens=max_tokens)\n\n\n"
               "class ModelWorker:\n    def __init__(self, sgl_endpoint):\n        backend = RuntimeEndpoint(sgl_endpoint)\n"
               "        sgl.set_default_backend(backend)\n\n    def generate_stream(self, params):\n"
               "        state = pipeline.run(params['prompt'], params['max_new_tokens'], stream=True)\n"
               "        for out in state.text_iter():\n            yield out\n")


def test_a_client_of_an_sglang_server_decodes_with_the_servers_cuda_graphs():
    files = {"videollama2/train.py": _VL2_TRAIN, "videollama2/serve/sglang_worker.py": _SGL_WORKER}
    j6 = _check(_audit(files), "J6")
    assert j6.status.value == "used" and "started elsewhere" in j6.detail, j6.detail
    # beside an HF generate path (LLaVA's serve/cli.py), only the SGLang route replays graphs
    with_cli = {**files, "videollama2/serve/cli.py": (
        "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(path)\n"
        "output_ids = model.generate(input_ids, do_sample=True, temperature=0.2, max_new_tokens=512, use_cache=True)\n")}
    j6 = _check(_audit(with_cli), "J6")
    assert j6.status.value == "partial" and "serve/cli.py" in j6.detail, j6.detail
    # control: the worker starts its own runtime with CUDA graphs off
    files["videollama2/serve/sglang_worker.py"] = _SGL_WORKER.replace(
        "        backend = RuntimeEndpoint(sgl_endpoint)\n",
        "        backend = RuntimeEndpoint(sgl_endpoint)\n        runtime = sgl.Runtime(model_path=path, disable_cuda_graph=True)\n")
    assert _check(_audit(files), "J6").status.value == "unused"


def test_a_generate_that_hands_on_to_hf_generate_is_no_own_decode_loop():
    vlm = ("import torch\nfrom transformers import GenerationMixin\n\n\nclass PrismaticVLM(torch.nn.Module, GenerationMixin):\n"
           "    @torch.inference_mode()\n    def generate(self, image, prompt_text, **kwargs):\n"
           "        input_ids = self.tokenizer(prompt_text, return_tensors='pt').input_ids\n"
           "        generated_ids = super().generate(input_ids=input_ids, pixel_values=image, **kwargs)\n        return generated_ids\n")
    files = {"prismatic/models/vlms/prismatic.py": vlm,
             "scripts/generate.py": "from prismatic.models.vlms.prismatic import PrismaticVLM\nvlm = PrismaticVLM()\n"
                                    "text = vlm.generate(image, prompt_text)\n"}
    j5 = _check(_audit(files), "J5")
    assert "own `generate` loop" not in j5.detail and "HF `generate`" in j5.detail, j5.detail
    # control: a generate of its own that runs the model token by token is the project's loop
    files["prismatic/models/vlms/prismatic.py"] = vlm.replace(
        "        generated_ids = super().generate(input_ids=input_ids, pixel_values=image, **kwargs)\n",
        "        for _ in range(512):\n            logits = self(input_ids)\n"
        "            input_ids = torch.cat([input_ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)\n"
        "        generated_ids = input_ids\n")
    assert "own `generate` loop" in _check(_audit(files), "J5").detail


# --- HALOs (ContextualAI/HALOs at HEAD): Hydra config groups, its own DPO/KTO/PPO trainers, vLLM sampling between rounds --

_HALOS_BASE = ("# the dtype for the policy parameters/optimizer state\npolicy_dtype: {dtype}\nreference_dtype: bfloat16\n"
               "attn_implementation: flash_attention_2\n\n# auxiliary reward model (e.g., for PPO)\nreward_model:\n  path: null\n"
               "  model_class: AutoModelForBradleyTerry\n  dtype: float32\n")
_HALOS_LAUNCH = ("python -m train.sample $CURRENT_CKPT \\\n    --output_file $SAMPLES_FILE \\\n    --gpu_count 4 \\\n"
                 "    --datasets ultrafeedback_armorm\n\n"
                 "accelerate launch --config_file accelerate_config/fsdp_4gpu.yaml launch.py \\\n    loss={loss} model=llama \\\n"
                 "    ++model.name_or_path=$MODEL_PATH \\\n    ++lr=5e-7\n")
_HALOS_SAMPLE = ("import argparse\nfrom vllm import LLM, SamplingParams\n\n\ndef main(args):\n"
                 "    llm = LLM(model=args.model_path, tensor_parallel_size=args.gpu_count)\n"
                 "    return llm.generate(prompts, SamplingParams(max_tokens=512))\n\n\nif __name__ == '__main__':\n"
                 "    parser = argparse.ArgumentParser()\n    parser.add_argument('--gpu_count', type=int, default=1)\n"
                 "    main(parser.parse_args())\n")
_HALOS_TRAIN = ("import hydra\nfrom accelerate import Accelerator\n\n\n@hydra.main(config_path='config', config_name='config')\n"
                "def main(config):\n    accelerator = Accelerator()\n    trainer = getattr(trainers, config.loss.trainer)(config)\n"
                "    for batch in loader:\n        loss = trainer.loss(batch)\n        accelerator.backward(loss)\n\n\n"
                "if __name__ == '__main__':\n    main()\n")


def _halos(loss: str = "dpo", dtype: str = "bfloat16") -> dict[str, str]:
    return {"launch.py": _HALOS_TRAIN, "train/sample.py": _HALOS_SAMPLE, "config/model/base_model.yaml": _HALOS_BASE.format(dtype=dtype),
            "config/model/llama.yaml": "defaults:\n  - base_model\n\nname_or_path: null\nblock_name: LlamaDecoderLayer\n",
            "config/config.yaml": "defaults:\n  - _self_\n  - model: ???\n  - loss: ???\n",
            "scripts/launch_llama_dpo.sh": _HALOS_LAUNCH.format(loss=loss)}


def test_halos_policy_dtype_is_the_precision_and_the_reward_models_dtype_is_not():
    c1 = _check(_audit(_halos()), "C1")
    assert c1.status.value == "used" and c1.evidence[0].line == 2, (c1.detail, c1.evidence)
    # control: a float32 policy is full precision
    assert _check(_audit(_halos(dtype="float32")), "C1").status.value != "used"
    # and with no policy dtype at all, the reward model's float32 says nothing about the policy's training
    files = _halos()
    files["config/model/base_model.yaml"] = files["config/model/base_model.yaml"].replace("policy_dtype: bfloat16\n", "")
    assert "explicitly disabled" not in _check(_audit(files), "C1").detail


def test_a_sampling_modules_gpu_count_is_the_engines_layout_not_tensor_parallel_training():
    a4 = _check(_audit(_halos()), "A4")
    assert a4.status.value == "unused", a4.detail
    # control: the same flag on the training launch's own tensor-parallel option counts
    files = _halos()
    files["launch.py"] = _HALOS_TRAIN.replace("    accelerator = Accelerator()\n",
                                              "    accelerator = Accelerator()\n    tp = config.tensor_parallel_size\n")
    files["scripts/launch_llama_dpo.sh"] += "torchrun --nproc_per_node 8 launch.py --tensor_parallel_size 4\n"
    assert _check(_audit(files), "A4").status.value == "used"


def test_a_hydra_loss_group_naming_dpo_is_alignment_and_group_choices_name_no_model():
    a = _audit(_halos("kto"))
    assert a.project.alignment and _check(a, "G6").status.value != "n/a"
    assert "llama" not in a.project.model_names and "???" not in a.project.model_names, a.project.model_names
    # control: a supervised run (loss=sft) is not alignment
    assert not _audit(_halos("sft")).project.alignment


def test_recipes_that_each_set_their_own_length_give_a_spread_not_a_side_scripts_default():
    from reports.markdown import render_markdown
    lengths = [4096, 4096, 4096, 8192, 8192, 262144, 524288, 524288, 131072, 1048576]  # (short and LongVILA's: no majority)
    files = {"llava/train/train_mem.py": _VILA_TRAIN,
             "llava/train/train_llm_to_long.py": ("from dataclasses import dataclass\n\n\n@dataclass\nclass TrainingArguments:\n"
                                                  "    model_max_length: int = 32768\n\n\n" + _VILA_TRAIN)}
    for i, n in enumerate(lengths):  # (LongVILA's long stages run train_llm_to_long.py, whose dataclass defaults to 32768)
        script = "llava/train/train_llm_to_long.py" if n > 100_000 else "llava/train/train_mem.py"
        files[f"scripts/stage{i}.sh"] = (f"torchrun --nproc_per_node=8 {script} \\\n    --bf16 True \\\n"
                                         f"    --model_max_length {n} \\\n    --output_dir runs/s{i}\n")
    a = _audit(files)
    assert a.project.max_seq_len is None and a.project.notes.get("seq_len_distribution", {}).get(4096) == 3, a.project.notes
    assert "no majority: 4096 (3), 8192 (2)" in render_markdown(a)
    # control: a majority of the recipes is the run's length
    for i in range(3, 10):
        files[f"scripts/stage{i}.sh"] = files["scripts/stage0.sh"].replace("runs/s0", f"runs/s{i}")
    assert _audit(files).project.max_seq_len == 4096


def test_a_minority_of_recipes_reducing_in_bf16_is_named_in_e3():
    def recipe(dtype: str) -> str:
        return _olmo_recipe(f"\n        dp_config=TransformerDataParallelConfig(name='hsdp', reduce_dtype=DType.{dtype}),")
    launch = {"launch.sh": "torchrun --nnodes 2 --nproc_per_node 8 src/scripts/train/run0.py\n"}
    files = {**_OLMO_LIB, **launch, **{f"src/scripts/train/run{i}.py": recipe("bfloat16" if i < 2 else "float32") for i in range(6)}}
    e3 = _check(_audit(files), "E3")
    assert e3.status.value == "unused" and "2 of 6 data-parallel configs reduce gradients in bfloat16" in e3.detail, e3.detail
    # control: when most recipes reduce in bf16, that is the project's (partial: low-precision reduction, no compression)
    files = {**_OLMO_LIB, **launch, **{f"src/scripts/train/run{i}.py": recipe("bfloat16" if i < 4 else "float32") for i in range(6)}}
    assert _check(_audit(files), "E3").status.value == "partial"


def test_a_data_preparation_scripts_bucket_is_not_where_the_run_reads():
    from checks.bottleneck import signals as _signals
    prep = ("import datasets\n\n\ndef main():\n    ds = datasets.load_dataset('laion/laion-coco')\n"
            "    ds.save_to_disk(\"s3://m4-datasets-us-east-1/LAION_data/ds_laion_coco_urls/\")\n\n\nmain()\n")
    files = {**_OLMO_LIB, "src/scripts/train/run.py": _olmo_recipe(), "launch.sh": "torchrun --nproc_per_node 8 src/scripts/train/run.py\n",
             "vision/data/datasets_processing_scripts/build_laion_coco/find_opt_out.py": prep.replace("save_to_disk", "load_from_disk")}
    a = _audit(files)
    assert not any("remote object storage" in s.en for s in _signals(a.facts, a.project, a.results, a.roles.by_path)), a.project.bottleneck_reasons
    # control: the training recipe itself reading from the bucket is the run's input
    files["src/scripts/train/run.py"] = _olmo_recipe().replace(
        "    model = MoETransformer()\n", "    model = MoETransformer()\n    data_root = \"s3://m4-datasets-us-east-1/tokenized/\"\n")
    a = _audit(files)
    assert any("remote object storage" in s.en for s in _signals(a.facts, a.project, a.results, a.roles.by_path))


def test_another_stages_output_is_no_model_name():
    def launch(model: str, out: str) -> str:
        return (f"accelerate launch --config_file accelerate_configs/single_node.yaml train.py \\\n--batch-size 1 \\\n"
                f"--output-dir {out} \\\n--model {model} \\\n--parallel_mode zigzag_ring_attn\n\n")
    files = _easycontext(["zigzag_ring_attn"])
    files["train_scripts/EasyContext-1M-Llama-2-7B.sh"] = (
        launch("meta-llama/Llama-2-7b-hf", "./output/7B_32K_bs_1M_rope_1M_step_1000_lr_2e-5")
        + launch("output/7B_32K_bs_1M_rope_1M_step_1000_lr_2e-5", "./output/7B_64K_bs_1M_rope_5M_step_1000_lr_2e-5"))
    names = _audit(files).project.model_names
    assert names == ["meta-llama/Llama-2-7b-hf"], names
    # control: a local model folder that no stage writes is still a name
    files["train_scripts/EasyContext-1M-Llama-2-7B.sh"] += launch("output/h2o-danube2-1.8b-base", "./output/danube_64K")
    assert "output/h2o-danube2-1.8b-base" in _audit(files).project.model_names


def test_elided_and_path_to_placeholders_name_no_model():
    files = {"train.py": _VL2_TRAIN,
             "scripts/run.sh": ("torchrun --nproc_per_node 8 train.py \\\n    --model_name_or_path /path_to_llm/hf_llama_7b/ \\\n"
                                "    --bf16 True\n"),
             "scripts/run2.sh": "torchrun --nproc_per_node 8 train.py \\\n    --model_name_or_path /.../... \\\n    --bf16 True\n"}
    names = _audit(files).project.model_names
    assert not names, names
    # control: a real local folder is a name
    files["scripts/run2.sh"] = files["scripts/run2.sh"].replace("/.../...", "/data/pretrained-models/llama-7b-hf")
    assert _audit(files).project.model_names == ["/data/pretrained-models/llama-7b-hf"]


def test_a_node_count_taken_from_the_scripts_argument_with_default_one_is_one_node_as_shipped():
    files = {"videollama2/train.py": _VL2_TRAIN,
             "scripts/custom/finetune.sh": _VL2_LAUNCH.replace("{expr}", "4").replace(
                 "torchrun --nnodes $WORLD_SIZE \\\n", "torchrun --nnodes $WORLD_SIZE --master_addr=$MASTER_ADDR \\\n")}
    a = _audit(files)
    assert not a.project.multi_node and "an argument of the script, 1 by default" in a.project.notes.get("multi_node_documented", "")
    e1 = _check(a, "E1")  # a multi-node option: RDMA advice for it, at medium priority
    assert e1.status.value == "unused" and e1.detail.startswith("multi-node training is an option"), e1.detail
    # control: a default of two nodes is a multi-node run
    files["scripts/custom/finetune.sh"] = files["scripts/custom/finetune.sh"].replace("ARG_WORLD_SIZE=${1:-1}", "ARG_WORLD_SIZE=${1:-2}")
    assert _audit(files).project.multi_node
