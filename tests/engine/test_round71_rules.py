"""Round 71 (issue #9): claims of more public repositories (Index-1.9B, Firefly-LLaMA2-Chinese, DeepSeek-Math, Baichuan-13B,
XVERSE-13B, sailor-llm, Chinese-Mixtral, TeleChat2), read claim by claim. Each test is one false claim of those reports,
made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- Index-1.9B: ``"$@"`` after a store-true flag is the caller's arguments, not that flag's value ------------------------

_INDEX_SH = (
    "LR=1e-4\nNUM_GPUS=1\nentrypoint=\"finetune.py\"\n"
    "args=\"       --model_name_or_path your_model_path \\\n             --per_device_train_batch_size 4 \\\n"
    "             --gradient_accumulation_steps 4 \\\n             --learning_rate $LR \\\n             --bf16 \"\n\n"
    "python -m torch.distributed.launch --nproc_per_node=$NUM_GPUS --nnode=1 ${entrypoint} ${args} {tail} 2>&1 | tee -a train.log\n")
_INDEX_PY = ("from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments\n\n"
             "args = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()[0]\n"
             "model = AutoModelForCausalLM.from_pretrained('IndexTeam/Index-1.9B-Chat', trust_remote_code=True)\n"
             "Trainer(model=model, args=args, train_dataset=ds).train()\n")


def test_passthrough_arguments_after_a_switch_are_not_its_value() -> None:
    files = {"finetune/train.sh": _INDEX_SH.replace("{tail}", '"$@"'), "finetune/finetune.py": _INDEX_PY}
    c1 = _check(_audit(files), "C1")
    assert c1.status.value == "used" and c1.values.get("precision") == "bf16", c1
    # control: a real value after the flag is its value (``--bf16 False`` turns it off)
    files["finetune/train.sh"] = _INDEX_SH.replace("--bf16 \"", "--bf16 False\"").replace("{tail}", '"$@"')
    c1 = _check(_audit(files), "C1")
    assert c1.status.value != "used", c1


# --- Firefly-LLaMA2-Chinese: a documented launch's placeholder GPU count; its own pickle loader; an unused import ---------

_FIREFLY_TRAIN = (
    "import os\n\nfrom transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments\n\n"
    "from component.dataset import PretrainDataProcessor{extra}\n\n\ndef main():\n"
    "    args = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()[0]\n"
    "    local_rank = int(os.environ.get('LOCAL_RANK', '0'))\n"
    "    model = AutoModelForCausalLM.from_pretrained('NousResearch/Llama-2-13b-hf', device_map={{'': local_rank}})\n"
    "    train_dataset = PretrainDataProcessor('data', 1024).load_dataset()\n"
    "    Trainer(model=model, args=args, train_dataset=train_dataset).train()\n\n\nif __name__ == '__main__':\n    main()\n")
_FIREFLY_DATASET = (
    "import os\nimport pickle\n\nimport torch\nfrom datasets import Dataset\n\n\n"
    "class IterableDataset(torch.utils.data.IterableDataset):\n    def __init__(self, files):\n        self.files = files\n\n"
    "    def __iter__(self):\n        for file in self.files:\n            yield from open(file)\n\n\n"
    "class PretrainDataProcessor:\n    def __init__(self, data_path, max_seq_length):\n        self.data_path = data_path\n\n"
    "    def save_to_disk(self, obj, file):\n        with open(file, 'wb') as f:\n            pickle.dump(obj, f)\n\n"
    "    def load_from_disk(self, file):\n        with open(file, 'rb') as f:\n            return pickle.load(f)\n\n"
    "    def load_dataset(self):\n        cache_file = os.path.join(self.data_path, 'train.pkl')\n"
    "        data_list = {load}(cache_file)\n        return Dataset.from_list(data_list)\n")
_FIREFLY_README = "# Firefly\n\n```bash\ntorchrun --nproc_per_node={nproc} train.py --train_args_file train_args/llama2-13b-ext.yaml\n```\n"


def _firefly(nproc: str = "{num_gpus}", extra: str = "", load: str = "self.load_from_disk") -> dict[str, str]:
    return {"train.py": _FIREFLY_TRAIN.format(extra=extra), "component/__init__.py": "",
            "component/dataset.py": _FIREFLY_DATASET.format(load=load), "README.MD": _FIREFLY_README.format(nproc=nproc)}


def test_a_documented_launchs_placeholder_gpu_count_is_a_multi_gpu_run() -> None:
    a1 = _check(_audit(_firefly()), "A1")
    assert a1.status.value == "used", a1
    # control: a documented count of one
    a1 = _check(_audit(_firefly(nproc="1")), "A1")
    assert a1.status.value != "used", a1


def test_a_projects_own_load_from_disk_method_is_not_arrow_memory_mapping() -> None:
    f8 = _check(_audit(_firefly()), "F8")
    assert f8.status.value != "used", f8
    # control: datasets' own load_from_disk memory-maps Arrow files
    files = _firefly(load="load_from_disk")
    files["component/dataset.py"] = files["component/dataset.py"].replace("from datasets import Dataset",
                                                                          "from datasets import Dataset, load_from_disk")
    assert _check(_audit(files), "F8").status.value == "used"


def test_an_iterable_dataset_class_imported_but_never_built_does_not_stream() -> None:
    f9 = _check(_audit(_firefly(extra=", IterableDataset")), "F9")
    assert f9.status.value != "used", f9
    # control: the training script builds it
    files = _firefly(extra=", IterableDataset")
    files["train.py"] = files["train.py"].replace("PretrainDataProcessor('data', 1024).load_dataset()", "IterableDataset(['a.txt'])")
    assert _check(_audit(files), "F9").status.value == "used"


# --- DeepSeek-Math: a Cog predictor serves; its cog.yaml pins; a predictor named for the instruct model fine-tunes nothing --

_PREDICT = (
    "from threading import Thread\n\nimport torch\nfrom cog import BasePredictor, Input\n"
    "from transformers import AutoModelForCausalLM, AutoTokenizer, TextIteratorStreamer\n\n\n"
    "class Predictor(BasePredictor):\n    def setup(self):\n"
    "        self.model = AutoModelForCausalLM.from_pretrained('deepseek-ai/deepseek-math-7b-instruct', torch_dtype=torch.bfloat16,"
    " device_map='auto')\n        self.tokenizer = AutoTokenizer.from_pretrained('deepseek-ai/deepseek-math-7b-instruct')\n\n"
    "    def predict(self, prompt: str = Input(description='prompt')):\n"
    "        streamer = TextIteratorStreamer(self.tokenizer)\n        inputs = self.tokenizer(prompt, return_tensors='pt')\n"
    "        Thread(target=self.model.generate, kwargs=dict(**inputs, streamer=streamer)).start()\n"
    "        for text in streamer:\n            yield text\n")
_COG = ("build:\n  gpu: true\n  python_version: \"3.11\"\n  python_packages:\n    - torch==2.0.1\n    - transformers==4.37.2\n"
        "predict: \"replicate/predict.py:Predictor\"\n")


def test_a_cog_predictor_is_an_inference_project_with_its_pins() -> None:
    files = {"replicate/predict.py": _PREDICT, "replicate/predict_instruct.py": _PREDICT, "cog.yaml": _COG}
    a = _audit(files)
    assert a.project.does_inference and not a.project.does_training, (a.project.does_inference, a.project.does_training)
    d1 = _check(a, "D1")
    assert "PyTorch 2.0.1 (cog.yaml:5)" in (d1.detail or ""), d1
    # a project's own pin of the same package is its pin; cog.yaml's is the predictor image's (LLaVA)
    d1 = _check(_audit({**files, "requirements.txt": "torch==2.3.1\ntransformers==4.41.2\n"}), "D1")
    assert "cog.yaml" not in (d1.detail or "") and "cog.yaml" not in str(d1.evidence), d1
    # control: without Cog's predictor base the same file serves nothing the audit recognises
    files = {k: v.replace("(BasePredictor)", "(object)") for k, v in files.items()}
    assert not _audit(files).project.does_inference


# --- TeleChat2: grouped-query attention's narrow K and V projections in the size --------------------------------------------

_TELECHAT_CONFIG = ('{{\n  "architectures": ["TelechatForCausalLM"],\n  "hidden_size": 8192,\n  "model_type": "telechat",\n'
                    '  "n_head": 64,\n{kv}  "n_layer": 96,\n  "vocab_size": 131072,\n  "ffn_hidden_size": 40960,\n'
                    '  "tie_word_embeddings": false,\n  "seq_length": 8192\n}}\n')
_TELECHAT_TRAIN = ("import deepspeed\nfrom transformers import AutoConfig, AutoModelForCausalLM\n\n"
                   "config = AutoConfig.from_pretrained('model/115B')\nmodel = AutoModelForCausalLM.from_config(config)\n"
                   "engine, *_ = deepspeed.initialize(model=model, config='ds_config.json')\n"
                   "for batch in loader:\n    loss = engine(**batch).loss\n    engine.backward(loss)\n    engine.step()\n")


def test_grouped_query_attention_narrows_the_size() -> None:
    files = {"model/115B/config.json": _TELECHAT_CONFIG.format(kv='  "num_key_value_heads": 8,\n'), "deepspeed/train.py": _TELECHAT_TRAIN,
             "deepspeed/run.sh": "deepspeed --num_gpus 8 train.py\n"}
    b = _audit(files).project.params_billions
    assert b is not None and abs(b - 113.28) < 0.05, b
    # control: full multi-head attention (no KV-head count) is 4h^2 per layer
    files["model/115B/config.json"] = _TELECHAT_CONFIG.format(kv="")
    b = _audit(files).project.params_billions
    assert b is not None and abs(b - 124.55) < 0.05, b


# --- sailor-llm: the process count of the accelerate config a launch names -------------------------------------------------

_SAILOR_FSDP = ("compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: 1\n"
                "mixed_precision: bf16\nnum_machines: 1\nnum_processes: {n}\n")
_SAILOR_RUN = ("accelerate launch \\\n    --config_file fsdp_config.yaml \\\n    train.py \\\n"
               "    --per_device_train_batch_size 8 \\\n    --gradient_accumulation_steps 8 \\\n    --bf16 True\n")


def test_the_accelerate_config_a_launch_names_sets_the_gpu_count() -> None:
    files = {"finetune/run.sh": _SAILOR_RUN, "finetune/fsdp_config.yaml": _SAILOR_FSDP.format(n=8), "finetune/train.py": _INDEX_PY}
    a = _audit(files)
    assert a.project.num_gpus == 8, a.project.num_gpus
    assert _check(a, "G2").values.get("global_batch") == 512, _check(a, "G2")
    # control: an accelerate config that no launch names says nothing about the run's GPUs
    files["finetune/run.sh"] = _SAILOR_RUN.replace("--config_file fsdp_config.yaml", "--config_file other.yaml")
    assert _audit(files).project.num_gpus is None


def test_a_projects_own_pickle_cache_of_the_tokenized_data_is_offline_preprocessing() -> None:
    files = _firefly()
    files["component/dataset.py"] = files["component/dataset.py"].replace(
        "        data_list = self.load_from_disk(cache_file)\n",
        "        if os.path.exists(cache_file):\n            data_list = self.load_from_disk(cache_file)\n        else:\n"
        "            data_list = [self.tokenizer(t)['input_ids'] for t in open(self.data_path)]\n"
        "            {save}\n").replace("        self.data_path = data_path\n",
                                   "        self.data_path = data_path\n        self.tokenizer = None\n")
    f6 = _check(_audit({**files, "component/dataset.py": files["component/dataset.py"].format(
        save="self.save_to_disk(data_list, cache_file)")}), "F6")
    assert f6.status.value == "used" and "self.save_to_disk() at component/dataset.py" in (f6.detail or ""), f6
    # control: nothing written back, so every run tokenizes again
    f6 = _check(_audit({**files, "component/dataset.py": files["component/dataset.py"].format(save="pass")}), "F6")
    assert f6.status.value != "used", f6
