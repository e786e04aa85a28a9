"""Round 70 (issue #9): claims of more public repositories (SpinQuant, OmniQuant, LongQLoRA, LLM-Blender, RouteLLM, lorahub,
MathCoder), read claim by claim. Each test is one false claim of those reports, made from the shape of the real code, with a
control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- SpinQuant / OmniQuant: a frozen model whose added parameters train is neither full fine-tuning nor layer freezing ------

_ROTATION_TRAIN = (
    "import torch\nimport transformers\nfrom transformers import LlamaForCausalLM, Trainer\n\n"
    "from train_utils.rotation import RotateModule\n\n\n"
    "def train(args):\n    model = LlamaForCausalLM.from_pretrained(args.input_model, torch_dtype=torch.bfloat16)\n"
    "{freeze}"
    "    model.R1 = RotateModule(torch.eye(4096))\n"
    "    trainer = Trainer(model=model, args=args, train_dataset=data)\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    train(transformers.HfArgumentParser(transformers.TrainingArguments).parse_args_into_dataclasses()[0])\n")
_ROTATION_SH = "torchrun --nnodes=1 --nproc_per_node=8 optimize_rotation.py --input_model meta-llama/Llama-2-7b-hf --bf16 True\n"


def test_a_model_frozen_whole_before_its_added_parameters_train_is_not_full_fine_tuning() -> None:
    freeze = "    for param in model.parameters():\n        param.requires_grad = False\n"
    files = {"optimize_rotation.py": _ROTATION_TRAIN.format(freeze=freeze), "scripts/10_optimize_rotation.sh": _ROTATION_SH}
    a = _audit(files)
    g4, g5 = _check(a, "G4"), _check(a, "G5")
    assert g4.status.value == "n/a" and "every pretrained weight is frozen (optimize_rotation.py:11)" in (g4.detail or ""), g4
    assert g5.status.value == "n/a" and g5.recommendation is None, g5
    # control: without the freeze the model is fine-tuned in full
    a = _audit({**files, "optimize_rotation.py": _ROTATION_TRAIN.format(freeze="")})
    g4 = _check(a, "G4")
    assert g4.status.value == "unused" and "full-parameter" in (g4.detail or ""), g4


def test_a_freeze_helper_called_on_a_part_is_not_a_frozen_base() -> None:
    # ``def freeze(model)`` called on the vision tower: a loop over ``model.parameters()`` inside a helper named for freezing
    freeze = "    freeze_module(model.vision_tower)\n"
    helper = "\n\ndef freeze_module(model):\n    for p in model.parameters():\n        p.requires_grad = False\n"
    files = {"optimize_rotation.py": _ROTATION_TRAIN.format(freeze=freeze) + helper, "scripts/10_optimize_rotation.sh": _ROTATION_SH}
    g4 = _check(_audit(files), "G4")
    assert g4.status.value != "n/a", g4
    # nor a loop over a list of parts (Megatron-LM's MIMO provider: ``for module in modules_to_freeze: for param in
    # module.parameters(): param.requires_grad = False``)
    freeze = ("    for module in [model.model.embed_tokens, model.lm_head]:\n        for param in module.parameters():\n"
              "            param.requires_grad = False\n")
    files["optimize_rotation.py"] = _ROTATION_TRAIN.format(freeze=freeze)
    g4 = _check(_audit(files), "G4")
    assert g4.status.value != "n/a", g4


# --- OmniQuant: ``python main.py`` whose step sits in a function of an imported module ------------------------------------

_OMNI_MAIN = (
    "import argparse\n\nimport torch\n\nfrom models.LMClass import LMClass\nfrom quantize.omniquant import omniquant\n\n\n"
    "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--model', type=str)\n"
    "    parser.add_argument('--epochs', type=int, default=0)\n    args = parser.parse_args()\n"
    "    lm = LMClass(args)\n    for param in lm.model.parameters():\n        param.requires_grad = False\n"
    "    omniquant(lm, args)\n\n\nif __name__ == '__main__':\n    main()\n")
_OMNI_LOOP = (
    "import torch\n\n\ndef omniquant(lm, args):\n    layers = lm.model.model.layers\n    for i in range(len(layers)):\n"
    "        qlayer = layers[i].cuda()\n        optimizer = torch.optim.AdamW(qlayer.parameters(), lr=1e-3)\n"
    "        for epoch in range(args.epochs):\n            for j in range(128):\n"
    "                loss = qlayer(inps[j]).float().pow(2).mean()\n                optimizer.zero_grad()\n"
    "                {step}\n        layers[i] = qlayer.cpu()\n        torch.cuda.empty_cache()\n")
_OMNI_LM = ("from transformers import AutoModelForCausalLM\n\n\nclass LMClass:\n    def __init__(self, args):\n"
            "        self.model = AutoModelForCausalLM.from_pretrained(args.model, device_map='cpu', torch_dtype='auto')\n")
_OMNI_SH = "CUDA_VISIBLE_DEVICES=0 python main.py \\\n--model /PATH/TO/Llama-2-7b --epochs 20\n"


def _omni(step: str) -> dict[str, str]:
    return {"main.py": _OMNI_MAIN, "quantize/__init__.py": "", "quantize/omniquant.py": _OMNI_LOOP.format(step=step),
            "models/__init__.py": "", "models/LMClass.py": _OMNI_LM, "scripts/Llama-2/Llama-2-7b/w3a16.sh": _OMNI_SH}


def test_a_python_launch_whose_imported_function_steps_is_the_training_path() -> None:
    a = _audit(_omni("loss_scaler(loss, optimizer)"))
    assert "main.py" in a.project.training_files and "quantize/omniquant.py" in a.project.training_files, a.project.training_files
    g5 = _check(a, "G5")
    assert g5.status.value == "n/a" and "main.py:16" in (g5.detail or ""), g5  # ``lm.model`` is the whole model
    # control: the imported function runs no step, so ``python main.py`` is no training launch
    a = _audit(_omni("print(loss)").__or__({"quantize/omniquant.py": _OMNI_LOOP.format(step="print(loss)")
                                            .replace("optimizer.zero_grad()", "print(optimizer)")}))
    assert "main.py" not in a.project.training_files, a.project.training_files


def test_empty_cache_once_per_layer_is_not_every_step() -> None:
    c6 = _check(_audit(_omni("loss_scaler(loss, optimizer)")), "C6")
    assert "empty_cache" not in (c6.detail or ""), c6
    # control: the same call in the sample loop runs every step
    files = _omni("loss_scaler(loss, optimizer)\n                torch.cuda.empty_cache()")
    c6 = _check(_audit(files), "C6")
    assert "empty_cache() runs in the training loop" in (c6.detail or ""), c6


def test_an_accelerate_dependency_nothing_imports_is_not_a_framework_of_a_hand_loop() -> None:
    files = {**_omni("loss_scaler(loss, optimizer)"), "pyproject.toml": (
        "[project]\nname = 'omniquant'\nversion = '0.0.1'\ndependencies = [\"accelerate\", \"transformers\", \"torch\"]\n")}
    a = _audit(files)
    assert "accelerate" not in a.project.frameworks and "transformers" in a.project.frameworks, a.project.frameworks
    # control: an HF Trainer subclass runs on Accelerate, so the dependency is a framework of the run
    files["quantize/trainer.py"] = "import transformers\n\n\nclass MyTrainer(transformers.Trainer):\n    pass\n"
    files["main.py"] = _OMNI_MAIN.replace("from quantize.omniquant import omniquant\n",
                                          "from quantize.omniquant import omniquant\nfrom quantize.trainer import MyTrainer\n")
    assert "accelerate" in _audit(files).project.frameworks


# --- LongQLoRA: a dataset class nothing builds; the ZeRO config the launched recipes name ----------------------------------

_LQ_DATASET = (
    "import json\n\nimport numpy as np\nfrom torch.utils.data import Dataset\n\n\n"
    "class PretrainDataset(Dataset):\n    def __init__(self, file, tokenizer, max_seq_length):\n"
    "        with open(file, 'r', encoding='utf8') as f:\n            self.data_list = f.readlines()\n\n"
    "    def __getitem__(self, index):\n        return json.loads(self.data_list[index])['text']\n\n\n"
    "class EvalDataset(Dataset):\n    def __init__(self, file, tokenizer, max_seq_length, sliding_window=256):\n"
    "        token_list = np.memmap(file, dtype=np.uint16, mode='r').tolist()\n        self.data_list = token_list\n\n"
    "    def __getitem__(self, index):\n        return self.data_list[index]\n")
_LQ_TRAIN = (
    "from transformers import HfArgumentParser, Trainer, TrainingArguments, AutoModelForCausalLM\n\n"
    "from component.dataset import {names}\n\n\ndef main():\n"
    "    args = HfArgumentParser(TrainingArguments).parse_json_file('train_args/llama2-7b-pretrain.yaml')[0]\n"
    "    model = AutoModelForCausalLM.from_pretrained('NousResearch/Llama-2-7b-hf')\n"
    "    train_dataset = {build}(args.train_file, None, 8192)\n"
    "    Trainer(model=model, args=args, train_dataset=train_dataset).train()\n\n\nif __name__ == '__main__':\n    main()\n")
_LQ_YAML = ("output_dir: ./output/LongQLoRA-Llama2-7b-8k\nmodel_name_or_path: NousResearch/Llama-2-7b-hf\n"
            "train_file: ./data/pretrain/pretrain_dummy_data.jsonl\ndeepspeed: ./train_args/deepspeed/deepspeed_config_s2.json\n"
            "per_device_train_batch_size: 1\ngradient_accumulation_steps: 16\nfp16: true\n")
_S2 = '{\n  "zero_optimization": {\n    "stage": 2,\n    "offload_optimizer": {"device": "cpu"}\n  },\n  "fp16": {"enabled": "auto"}\n}\n'
_S3 = '{\n  "fp16": {"enabled": "auto"},\n  "zero_optimization": {\n    "stage": 3,\n    "offload_param": {"device": "cpu"}\n  }\n}\n'
_LQ_README = "# LongQLoRA\n\n```bash\ndeepspeed train.py --train_args_file ./train_args/llama2-7b-pretrain.yaml\n```\n"


def _lq(names: str = "PretrainDataset", build: str = "PretrainDataset") -> dict[str, str]:
    return {"train.py": _LQ_TRAIN.format(names=names, build=build), "component/__init__.py": "", "component/dataset.py": _LQ_DATASET,
            "train_args/llama2-7b-pretrain.yaml": _LQ_YAML, "train_args/deepspeed/deepspeed_config_s2.json": _S2,
            "train_args/deepspeed/deepspeed_config_s3.json": _S3, "README.md": _LQ_README}


def test_a_memmap_in_a_dataset_class_nothing_builds_is_not_the_training_data() -> None:
    f8 = _check(_audit(_lq()), "F8")
    assert f8.status.value == "unused", f8
    # control: the training script builds that class
    f8 = _check(_audit(_lq("PretrainDataset, EvalDataset", "EvalDataset")), "F8")
    assert f8.status.value == "used", f8


def test_a_zero_config_no_launched_recipe_names_is_not_the_runs() -> None:
    a3 = _check(_audit(_lq()), "A3")
    assert a3.status.value == "used" and "stage 2" in (a3.detail or ""), a3
    assert not any("s3" in e.path for e in a3.evidence), a3.evidence
    # control: without the documented command nothing says the recipe runs, and the stage-3 config stays an option
    files = _lq()
    files["README.md"] = "# LongQLoRA\n"
    a3 = _check(_audit(files), "A3")
    assert any("s3" in e.path for e in a3.evidence), a3.evidence


# --- LLM-Blender: the branch of a launch script its own variable selects; FP16 launches beside a BF16 dtype field ----------

_RANKER_SH = (
    "#!/bin/bash\n{dataset}\nbackbone_name=\"microsoft/phi-2\"\nn_gpu=8\nfp16=True # whether to use fp16\n\n"
    "if [[ $dataset =~ \"reward_model\" ]]; then\n    per_device_train_batch_size=2\n    gradient_accumulation_steps=8\n\n"
    "elif [[ $dataset =~ \"UnifiedFeedback\" ]]; then\n    per_device_train_batch_size=1\n    gradient_accumulation_steps=16\n\n"
    "elif [[ $dataset =~ \"pairrm_2.7b\" ]]; then\n    per_device_train_batch_size=1\n    gradient_accumulation_steps=8\n\n"
    "else\n    echo \"Unknown dataset: ${{dataset}}\"\n    exit 1\nfi\n\n"
    "deepspeed --num_gpus ${{n_gpu}} train_ranker.py \\\n    --model_name ${{backbone_name}} \\\n"
    "    --per_device_train_batch_size ${{per_device_train_batch_size}} \\\n"
    "    --gradient_accumulation_steps ${{gradient_accumulation_steps}} \\\n    --fp16 ${{fp16}}\n")
_RANKER_PY = (
    "import argparse\n\nfrom transformers import AutoModel, Trainer, TrainingArguments\n\n"
    "parser = argparse.ArgumentParser()\nparser.add_argument('--model_name', type=str)\n"
    "parser.add_argument('--per_device_train_batch_size', type=int, default=1)\n"
    "parser.add_argument('--gradient_accumulation_steps', type=int, default=32)\n"
    "parser.add_argument('--fp16', type=bool, default=False)\nargs = parser.parse_args()\n"
    "model = AutoModel.from_pretrained(args.model_name)\n"
    "training_args = TrainingArguments(output_dir='out', per_device_train_batch_size=args.per_device_train_batch_size,\n"
    "    gradient_accumulation_steps=args.gradient_accumulation_steps, fp16=args.fp16)\n"
    "Trainer(model=model, args=training_args, train_dataset=ds).train()\n")


def test_a_launch_scripts_if_elif_on_its_own_variable_picks_one_branch() -> None:
    files = {"train_ranker.sh": _RANKER_SH.format(dataset='dataset="UnifiedFeedback"'), "train_ranker.py": _RANKER_PY}
    c5 = _check(_audit(files), "C5")
    assert c5.values.get("gradient_accumulation_steps") == 16, c5
    # control: the variable comes from the command line, so no branch is known and the last assignment stays as before
    files["train_ranker.sh"] = _RANKER_SH.format(dataset='dataset=$1')
    c5 = _check(_audit(files), "C5")
    assert c5.values.get("gradient_accumulation_steps") == 8, c5
    # control: a default the caller's environment overrides (MeZO ``MODE=${MODE:-ft}``, run as ``MODE=lora bash ...``)
    files["train_ranker.sh"] = _RANKER_SH.format(dataset='dataset=${DATASET:-UnifiedFeedback}')
    c5 = _check(_audit(files), "C5")
    assert c5.values.get("gradient_accumulation_steps") == 8, c5


_FUSER_CONFIG = ("from dataclasses import dataclass, field\n\n\n@dataclass\nclass GenFuserConfig:\n"
                 "    model_name: str = field(default='llm-blender/gen_fuser_3b')\n"
                 "    torch_dtype: str = field(default=\"bfloat16\", metadata={'help': 'the dtype'})\n")


def test_fp16_launches_beside_a_bf16_dtype_field_default_run_fp16() -> None:
    files = {"train_ranker.sh": _RANKER_SH.format(dataset='dataset="UnifiedFeedback"'), "train_ranker.py": _RANKER_PY,
             "llm_blender/__init__.py": "", "llm_blender/gen_fuser/__init__.py": "", "llm_blender/gen_fuser/config.py": _FUSER_CONFIG}
    files["train_ranker.py"] = "from llm_blender.gen_fuser.config import GenFuserConfig\n" + _RANKER_PY
    c1 = _check(_audit(files), "C1")
    assert c1.status.value == "used" and c1.values.get("precision") == "fp16" and "FP16 mixed precision" in (c1.detail or ""), c1
    # control: launches that ask for BF16 run BF16
    files["train_ranker.sh"] = files["train_ranker.sh"].replace("--fp16 ${fp16}", "--bf16 True")
    c1 = _check(_audit(files), "C1")
    assert c1.values.get("precision") == "bf16", c1


# --- lorahub: a T5 fine-tune has no SDPA default to credit and no FlashAttention switch to advise -------------------------

_LORAHUB_TRAIN = (
    "from peft import LoraConfig, get_peft_model\nfrom transformers import AutoModelForSeq2SeqLM, Seq2SeqTrainer, Seq2SeqTrainingArguments\n\n"
    "model = AutoModelForSeq2SeqLM.from_pretrained('{model}')\nmodel = get_peft_model(model, LoraConfig(r=16, task_type='SEQ_2_SEQ_LM'))\n"
    "args = Seq2SeqTrainingArguments(output_dir='out', per_device_train_batch_size=8)\n"
    "Seq2SeqTrainer(model=model, args=args, train_dataset=ds).train()\n")


def test_a_t5_fine_tune_is_not_credited_with_transformers_sdpa_default() -> None:
    files = {"train_model.py": _LORAHUB_TRAIN.format(model="google/flan-t5-large"),
             "run.sh": "accelerate launch train_model.py --model_name_or_path google/flan-t5-large\n",
             "requirements.txt": "transformers>=4.38\npeft\n"}
    d1 = _check(_audit(files), "D1")
    assert d1.status.value == "unused" and "T5-family" in (d1.detail or "") and d1.recommendation is None, d1
    # control: a decoder-only model on the same release runs transformers' SDPA default
    files["train_model.py"] = _LORAHUB_TRAIN.format(model="meta-llama/Llama-2-7b-hf").replace("Seq2SeqLM", "CausalLM")
    files["run.sh"] = files["run.sh"].replace("google/flan-t5-large", "meta-llama/Llama-2-7b-hf")
    d1 = _check(_audit(files), "D1")
    assert d1.status.value == "partial" and "default SDPA" in (d1.detail or ""), d1


# --- MathCoder: a TGI server launched by the project is its engine, and its decode graphs are D4's as they are J6's -------

_TGI_DEPLOY = ("model_path=\"local model path\"\n\nmax_input_tokens=1536\nmax_total_tokens=2048\n\n"
               "{launcher} --port 8000 \\\n--max-batch-prefill-tokens ${{max_input_tokens}} \\\n"
               "--max-input-length ${{max_input_tokens}} \\\n--max-total-tokens ${{max_total_tokens}} \\\n--model-id ${{model_path}}\n")
_TGI_CLIENT = ("import requests\n\n\ndef generate(prompt):\n    r = requests.post('http://localhost:8000/generate', "
               "json={'inputs': prompt, 'parameters': {'max_new_tokens': 512}})\n    return r.json()['generated_text']\n")


def test_a_launched_tgi_server_is_named_and_its_decode_graphs_agree_between_d4_and_j6() -> None:
    files = {"deploy.sh": _TGI_DEPLOY.format(launcher="text-generation-launcher"), "src/inference.py": _TGI_CLIENT}
    a = _audit(files)
    assert "tgi" in a.project.frameworks, a.project.frameworks
    d4, j6 = _check(a, "D4"), _check(a, "J6")
    assert d4.status.value == j6.status.value == "used", (d4, j6)
    # control: no server launched here, only the client: no engine named, no graphs claimed
    a = _audit({"src/inference.py": _TGI_CLIENT, "deploy.sh": "python src/inference.py\n"})
    assert "tgi" not in a.project.frameworks and _check(a, "D4").status.value != "used"


# --- SpinQuant: a script every launch runs with ``--do_train False`` is an evaluation run ---------------------------------

_PTQ = ("import torch\nimport transformers\n\nfrom eval_utils.modeling_llama import LlamaForCausalLM\n\n\n"
        "def train() -> None:\n    args = transformers.HfArgumentParser(transformers.TrainingArguments).parse_args_into_dataclasses()[0]\n"
        "    model = LlamaForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf', torch_dtype=torch.bfloat16)\n"
        "    print(evaluate(model))\n\n\nif __name__ == '__main__':\n    train()\n")
_EVAL_MODEL = ("import torch\n\n\nclass LlamaForCausalLM(torch.nn.Module):\n    def forward(self, q, k, v):\n"
               "        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)\n")


def test_a_script_every_launch_runs_with_do_train_false_is_evaluation() -> None:
    files = {"optimize_rotation.py": _ROTATION_TRAIN.format(freeze=""), "scripts/10_optimize_rotation.sh": _ROTATION_SH,
             "ptq.py": _PTQ, "eval_utils/__init__.py": "", "eval_utils/modeling_llama.py": _EVAL_MODEL,
             "scripts/2_eval_ptq.sh": "torchrun --nnodes=1 --nproc_per_node=1 ptq.py \\\n--input_model $1 \\\n--do_train False \\\n"
                                      "--do_eval True \\\n--bf16 True\n"}
    a = _audit(files)
    assert "ptq.py" not in a.project.training_files and "eval_utils/modeling_llama.py" not in a.project.training_files
    # control: a launch that trains with it keeps it on the training path
    files["scripts/3_train_ptq.sh"] = "torchrun --nnodes=1 --nproc_per_node=8 ptq.py --input_model $1 --do_train True --bf16 True\n"
    assert "ptq.py" in _audit(files).project.training_files


# --- OmniQuant: calibration data cached to disk; the evaluation harness's tokenizer interface ------------------------------

_OMNI_DATA = ("from datasets import load_dataset\n\n\ndef get_loaders(name, nsamples=128, seqlen=2048, tokenizer=None):\n"
              "    traindata = load_dataset('wikitext', 'wikitext-2-raw-v1', split='train')\n"
              "    trainenc = tokenizer('\\n\\n'.join(traindata['text']), return_tensors='pt')\n"
              "    return [trainenc.input_ids[:, i:i + seqlen] for i in range(nsamples)], None\n")
_OMNI_CACHED_MAIN = (
    "import argparse\nimport os\n\nimport torch\n\nfrom datautils import get_loaders\nfrom models.LMClass import LMClass\n"
    "from quantize.omniquant import omniquant\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--model', type=str)\n    parser.add_argument('--cache_dir', type=str, default='./cache')\n"
    "    args = parser.parse_args()\n    lm = LMClass(args)\n"
    "    cache_dataloader = f'{{args.cache_dir}}/dataloader_{{args.model}}.cache'\n"
    "    if os.path.exists(cache_dataloader):\n        dataloader = torch.load(cache_dataloader)\n    else:\n"
    "        dataloader, _ = get_loaders('wikitext2', tokenizer=lm.tokenizer)\n        {save}\n"
    "    omniquant(lm, args, dataloader)\n\n\nif __name__ == '__main__':\n    main()\n")
_OMNI_LM_EVAL = (_OMNI_LM + "        self.tokenizer = None\n\n    def tok_encode(self, string: str):\n"
                 "        return self.tokenizer.encode(string, add_special_tokens=False)\n\n"
                 "    def greedy_until(self, requests):\n        def _collate(x):\n            toks = self.tok_encode(x[0])\n"
                 "            return -len(toks), x[0]\n        return sorted(requests, key=_collate)\n")


def test_calibration_data_cached_to_disk_is_offline_preprocessing() -> None:
    files = {**_omni("loss_scaler(loss, optimizer)"), "datautils.py": _OMNI_DATA, "models/LMClass.py": _OMNI_LM_EVAL,
             "main.py": _OMNI_CACHED_MAIN.format(save="torch.save(dataloader, cache_dataloader)")}
    files["quantize/omniquant.py"] = files["quantize/omniquant.py"].replace("def omniquant(lm, args):", "def omniquant(lm, args, dataloader):")
    f6 = _check(_audit(files), "F6")
    assert f6.status.value == "used" and "cached to disk: torch.save() at main.py" in (f6.detail or ""), f6
    # control: nothing saved, every run tokenizes again (and the harness's tok_encode is no data pipeline of the run)
    files["main.py"] = _OMNI_CACHED_MAIN.format(save="print(len(dataloader))")
    f6 = _check(_audit(files), "F6")
    assert f6.status.value != "used" and "tok_encode" not in (f6.detail or "") and "LMClass" not in str(f6.evidence), f6


# --- LLM-Blender: a vLLM branch for an engine the caller hands in is no engine of the project's ---------------------------

_BLENDER = (
    "import importlib\n\nimport torch\nfrom transformers import AutoModelForSeq2SeqLM\n\ntry:\n    import vllm\n"
    "    is_vllm_imported = True\nexcept ImportError:\n    is_vllm_imported = False\n\n\n"
    "def n_generate(model, prompts, n=1):\n    if is_vllm_imported and isinstance(model, vllm.LLM):\n"
    "        sampling_params = vllm.SamplingParams(n=n, max_tokens=512)\n"
    "        return model.generate(prompts, sampling_params=sampling_params)\n"
    "    return model.generate(**prompts, num_return_sequences=n)\n\n\n"
    "def load_fuser(path):\n    return AutoModelForSeq2SeqLM.from_pretrained(path, torch_dtype=torch.bfloat16)\n{build}")


def test_a_vllm_branch_for_a_handed_in_engine_is_not_the_projects_engine() -> None:
    files = {"llm_blender/__init__.py": "", "llm_blender/blender/__init__.py": "",
             "llm_blender/blender/blender.py": _BLENDER.format(build="")}
    j5 = _check(_audit(files), "J5")
    assert j5.status.value != "used" and "vllm" not in (j5.detail or "").lower(), j5
    # control: the project builds the engine itself
    files["llm_blender/blender/blender.py"] = _BLENDER.format(build="\n\ndef load_engine(path):\n    return vllm.LLM(model=path)\n")
    j5 = _check(_audit(files), "J5")
    assert j5.status.value == "used" and "vllm" in (j5.detail or "").lower(), j5
