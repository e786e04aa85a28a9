"""Rules of round 14 of issue #9 (fschat / FastChat): each rule test fails on the rule before it; each control passes on both."""

from __future__ import annotations

from checks.rules.d_compute import _self_test_patch
from checks.rules.f_data import _unused_image_helper

from .claims import audit as _audit


def test_a_patch_modules_self_test_config_does_not_size_the_model():
    # ``def test(): config = LlamaConfig(hidden_size=1024, intermediate_size=128, num_hidden_layers=1, ...)`` run only by the
    # module's ``if __name__ == "__main__": test()``: the overview sized the run at 70M from it; the checkpoint names 7B
    a = _audit(_self_test_patch(""))
    assert not a.project.notes.get("params_source", "").startswith("pkg/train/flash_attn_patch.py")
    assert a.project.estimated_params == "7B"


def test_a_patch_modules_self_test_config_is_no_visible_gemm_dimension():
    r = _audit(_self_test_patch("")).result("D7")
    assert r.status.value == "n/a" and r.detail.startswith("not judged:"), r.detail
    assert not r.evidence  # nothing in the repository to align or to fault: the architecture comes from the checkpoint


def test_the_training_scripts_own_config_beside_it_still_counts():
    extra = ("config = LlamaConfig(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32, "
             "vocab_size=32000)\n")
    a = _audit(_self_test_patch(extra))
    assert a.result("D7").status.value == "used"
    assert all(e.path == "pkg/train/train_mem.py" for e in a.result("D7").evidence)
    assert a.project.notes.get("params_source", "").startswith("pkg/train/train_mem.py:")


def test_a_self_test_function_called_elsewhere_is_not_a_self_test():
    files = _self_test_patch("")
    files["pkg/train/check.py"] = "from pkg.train.flash_attn_patch import test\n\ntest()\n"
    r = _audit(files).result("D7")
    assert r.status.value == "used"  # the function runs from the project's own code: its config is visible


def test_an_uncalled_image_helper_in_a_shared_utils_module_is_not_a_per_sample_read():
    r = _audit(_unused_image_helper(called=False)).result("F4")
    assert r.status.value == "used"
    assert all(e.path != "pkg/utils.py" for e in r.evidence)


def test_the_same_helper_called_by_the_collate_function_still_is():
    r = _audit(_unused_image_helper(called=True)).result("F4")
    assert r.status.value == "unused"
    assert any(e.path == "pkg/utils.py" for e in r.evidence)


def test_a_library_function_of_the_same_name_does_not_call_the_helper():
    files = _unused_image_helper(called=False)
    files["pkg/serve/worker.py"] = ("from sglang.srt.utils import load_image\n\n\ndef handle(images):\n"
                                    "    return [load_image(x) for x in images]\n")
    assert _audit(files).result("F4").status.value == "used"


_QLORA_SWITCH = (
    "from dataclasses import dataclass, field\n\nimport transformers\nfrom peft import LoraConfig, get_peft_model\n"
    "from transformers import BitsAndBytesConfig, Trainer\n\n\n@dataclass\nclass LoraArguments:\n    lora_r: int = 8\n"
    "    q_lora: bool = {q}\n\n\ndef train():\n    parser = transformers.HfArgumentParser((LoraArguments,))\n"
    "    (lora_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(\n        'meta-llama/Llama-2-7b-hf',\n"
    "        quantization_config=BitsAndBytesConfig(\n            load_in_4bit=True,\n            bnb_4bit_quant_type='nf4',\n"
    "        )\n        if lora_args.q_lora\n        else None,\n    )\n"
    "    model = get_peft_model(model, LoraConfig(r=lora_args.lora_r, task_type='CAUSAL_LM'))\n"
    "    Trainer(model=model, args=transformers.TrainingArguments(output_dir='out')).train()\n"
)


def test_a_4bit_base_behind_a_qlora_switch_that_is_off_is_plain_lora():
    r = _audit({"pkg/train_lora.py": _QLORA_SWITCH.format(q="False")}).result("G4")
    assert r.status.value == "used"
    assert r.detail == "LoRA/PEFT fine-tuning"


def test_the_switch_on_is_qlora():
    r = _audit({"pkg/train_lora.py": _QLORA_SWITCH.format(q="True")}).result("G4")
    assert r.detail == "QLoRA fine-tuning"


# -- a dataset class chosen by a conditional expression (FastChat ``dataset_cls = A if flag else B``) ---------------------

_FASTCHAT_DATA = (
    "import json\nfrom dataclasses import dataclass, field\n\nimport transformers\nfrom torch.utils.data import Dataset\n\n\n"
    "@dataclass\nclass DataArguments:\n    data_path: str = field(default=None)\n    lazy_preprocess: bool = {lazy}\n\n\n"
    "def preprocess(sources, tokenizer):\n"
    "    return tokenizer(sources, return_tensors='pt', padding='max_length', max_length=tokenizer.model_max_length,\n"
    "                     truncation=True).input_ids\n\n\n"
    "class SupervisedDataset(Dataset):\n    def __init__(self, raw_data, tokenizer):\n        super().__init__()\n"
    "        self.input_ids = preprocess([x['text'] for x in raw_data], tokenizer)\n\n"
    "    def __getitem__(self, i):\n        return dict(input_ids=self.input_ids[i])\n\n\n"
    "class LazySupervisedDataset(Dataset):\n    def __init__(self, raw_data, tokenizer):\n        super().__init__()\n"
    "        self.tokenizer = tokenizer\n        self.raw_data = raw_data\n\n"
    "    def __getitem__(self, i):\n        return dict(input_ids=preprocess([self.raw_data[i]['text']], self.tokenizer)[0])\n\n\n"
    "def make_supervised_data_module(tokenizer, data_args):\n"
    "    dataset_cls = (\n        LazySupervisedDataset if data_args.lazy_preprocess else SupervisedDataset\n    )\n"
    "    train_json = json.load(open(data_args.data_path, 'r'))\n"
    "    return dict(train_dataset=dataset_cls(train_json, tokenizer=tokenizer))\n\n\n"
    "def train():\n    (data_args,) = transformers.HfArgumentParser((DataArguments,)).parse_args_into_dataclasses()\n"
    "    tokenizer = transformers.AutoTokenizer.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
    "    trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(output_dir='out'),\n"
    "                                   **make_supervised_data_module(tokenizer, data_args))\n    trainer.train()\n"
)


def test_a_call_of_a_local_bound_by_a_conditional_expression_is_a_call_of_each_arm_under_its_condition():
    from checks.facts.extract import extract_python
    from checks.facts.types import FileFacts

    ff = FileFacts("pkg/train.py", "python")
    extract_python("pkg/train.py", _FASTCHAT_DATA.format(lazy="False"), ff)
    built = {c.name: c.guard for c in ff.calls if c.name in ("LazySupervisedDataset", "SupervisedDataset")}
    assert built == {"LazySupervisedDataset": "data_args.lazy_preprocess", "SupervisedDataset": "not (data_args.lazy_preprocess)"}


def test_a_dataset_class_chosen_only_by_a_switch_that_is_off_does_not_tokenize_per_sample():
    a = _audit({"pkg/train.py": _FASTCHAT_DATA.format(lazy="False")})
    r = a.result("F6")
    assert r.detail.startswith("the whole dataset is tokenized in-process at start-up")
    assert not any("online" in x for x in a.project.bottleneck_reasons)


def test_the_switch_on_tokenizes_per_sample():
    r = _audit({"pkg/train.py": _FASTCHAT_DATA.format(lazy="True")}).result("F6")
    assert r.status.value == "unused"
    assert r.detail.startswith("tokenization runs per sample in the data loader")


def test_a_rebound_local_is_no_longer_the_choice():
    src = _FASTCHAT_DATA.format(lazy="False").replace(
        "    train_json = json.load(", "    dataset_cls = LazySupervisedDataset\n    train_json = json.load(")
    r = _audit({"pkg/train.py": src}).result("F6")
    assert r.detail.startswith("tokenization runs per sample in the data loader")


# -- the documented command's model replaces an option's default placeholder ---------------------------------------------

_README = (
    "# Fine-tuning\n\n```bash\ntorchrun --nproc_per_node=4 pkg/train.py \\\n    --model_name_or_path meta-llama/Llama-2-7b-hf \\\n"
    "    --bf16 True \\\n    --output_dir out\n```\n"
)
_ALPACA = (
    "from dataclasses import dataclass, field\nfrom typing import Optional\n\nimport transformers\n\n\n@dataclass\n"
    "class ModelArguments:\n    model_name_or_path: Optional[str] = field(default=\"facebook/opt-125m\")\n\n\n"
    "def train():\n    (model_args,) = transformers.HfArgumentParser((ModelArguments,)).parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
    "    trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(output_dir='out'))\n    trainer.train()\n"
)


def test_the_documented_commands_model_replaces_a_dataclass_default_placeholder():
    a = _audit({"README.md": _README, "pkg/train.py": _ALPACA})
    assert a.project.estimated_params == "7B"
    assert a.project.model_names[0] == "meta-llama/Llama-2-7b-hf"
    assert not any("small model" in x for x in a.project.bottleneck_reasons)


def test_a_model_the_training_code_loads_itself_still_wins():
    src = _ALPACA.replace("from_pretrained(model_args.model_name_or_path)", "from_pretrained('facebook/opt-125m')")
    a = _audit({"README.md": _README, "pkg/train.py": src})
    assert a.project.estimated_params == "125M"


# -- a training length's option default shadowed by a serving module's generation ``max_length`` -------------------------

_SFT_ARGS = (
    "from dataclasses import dataclass, field\n\nimport transformers\n\n\n@dataclass\n"
    "class TrainingArguments(transformers.TrainingArguments):\n    model_max_length: int = field(default=512)\n\n\n"
    "def preprocess(texts, tokenizer):\n"
    "    return tokenizer(texts, padding='max_length', max_length=tokenizer.model_max_length, truncation=True).input_ids\n\n\n"
    "def train():\n    (args,) = transformers.HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
    "    transformers.Trainer(model=model, args=args).train()\n"
)
_SERVE = (
    "def generate_stream(model, tokenizer, params):\n    gen_kwargs = {}\n"
    "    gen_kwargs['max_length'] = params['max_new_tokens'] + params['prompt_len']\n    return model.generate(**gen_kwargs)\n"
)


# a data tool that sizes its tokenizer from its own ``--max-length`` (``model_max_length=args.max_length``): the engine reads
# ``model_max_length`` through that keyword as ``max_length``, whose highest-ranked settings are the generation kwargs
_SPLIT = (
    "import argparse\n\nimport transformers\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--model-name-or-path', type=str, required=True)\n    parser.add_argument('--max-length', type=int, default=2048)\n"
    "    args = parser.parse_args()\n    tokenizer = transformers.AutoTokenizer.from_pretrained(\n"
    "        args.model_name_or_path,\n        model_max_length=args.max_length,\n        padding_side='right',\n    )\n"
    "    return tokenizer\n"
)


def test_a_training_length_default_is_not_shadowed_by_a_generation_max_length():
    a = _audit({"pkg/train.py": _SFT_ARGS, "pkg/serve/inference.py": _SERVE, "pkg/data/split_long_conversation.py": _SPLIT})
    assert a.project.max_seq_len == 512


def test_a_recipe_that_sets_the_length_still_decides():
    a = _audit({"pkg/train.py": _SFT_ARGS, "pkg/serve/inference.py": _SERVE, "pkg/data/split_long_conversation.py": _SPLIT,
                "run.sh": "torchrun --nproc_per_node 8 pkg/train.py --model_max_length 2048 --output_dir out\n"})
    assert a.project.max_seq_len == 2048
