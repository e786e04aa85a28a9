"""Round 65 (issue #9): claims of more public repositories (PandaGPT, LaVIT, BLIVA, InternVideo, MobileLLM, OpenMoE,
PaLM-rlhf-pytorch, JetMoE), read claim by claim. Each test is one false claim of those reports, made from the shape of the real
code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- LaVIT: an inference-only MLLM's visual encoder config holds a CLIP text tower's 77-token context ----------------------------

_LAVIT_ENCODER = ("def build_eva_clip(model_cfg):\n    model_cfg['text_cfg']['context_length'] = 77\n    return model_cfg\n\n\n"
                  "model_cfg = {'embed_dim': 1024, 'text_cfg': {'context_length': 77, 'vocab_size': 49408}}\n")
_LAVIT_INFER = ("import torch\nfrom transformers import LlamaForCausalLM, LlamaTokenizer\n\n\ndef main():\n"
                "    model = LlamaForCausalLM.from_pretrained('rain1011/LaVIT-7B-v2', torch_dtype=torch.bfloat16)\n"
                "    tokenizer = LlamaTokenizer.from_pretrained('rain1011/LaVIT-7B-v2')\n"
                "    ids = tokenizer('a photo of', return_tensors='pt').input_ids\n"
                "    print(tokenizer.decode(model.generate(ids, max_new_tokens=64)[0]))\n\n\nif __name__ == '__main__':\n    main()\n")


def test_an_inference_projects_clip_text_context_is_no_sequence_length() -> None:
    files = {"LaVIT/models/modeling_visual_encoder.py": _LAVIT_ENCODER, "LaVIT/inference.py": _LAVIT_INFER}
    result = _audit(files)
    assert not result.project.does_training and result.project.max_seq_len is None, result.project.max_seq_len
    # control: a project that trains (a loop stepping an optimizer) still falls back to its CLIP text context
    files["LaVIT/train_clip.py"] = ("import torch\n\n\ndef main(model, loader, optimizer):\n    for batch in loader:\n"
                                    "        loss = model(batch)\n        loss.backward()\n        optimizer.step()\n\n\n"
                                    "if __name__ == '__main__':\n    main(None, [], None)\n")
    assert _audit(files).project.max_seq_len == 77


# --- PandaGPT: a DeepSpeed config path built by an f-string, ZeRO-Offload's CPU Adam, an ImageBind encoder -----------------------

_PANDA_DS = ('{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": {\n    "stage": 2,\n'
             '    "offload_optimizer": {\n      "device": "cpu"\n    }\n  },\n  "fp16": {\n    "enabled": true\n  },\n'
             '  "optimizer": {\n    "type": "Adam",\n    "params": {\n      "lr": 0.0005\n    }\n  }\n}\n')
_PANDA_TRAIN = ("import argparse\nimport json\nimport deepspeed\nfrom model.openllama import OpenLLAMAPEFTModel\n\n\n"
                "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--model', type=str)\n"
                "    parser.add_argument('--stage', type=int)\n    args = vars(parser.parse_args())\n"
                "    args['ds_config_path'] = f'dsconfig/{args[\"model\"]}_stage_{args[\"stage\"]}.json'\n"
                "    ds_params = json.load(open(args['ds_config_path']))\n    model = OpenLLAMAPEFTModel(**args)\n"
                "    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),\n"
                "                                                   config_params=ds_params)\n"
                "    for batch in loader:\n        loss = engine(batch)\n        engine.backward(loss)\n        engine.step()\n\n\n"
                "if __name__ == '__main__':\n    main()\n")
_PANDA_MODEL = ("from .ImageBind import imagebind_model\nfrom transformers import LlamaForCausalLM\n\n\n"
                "class OpenLLAMAPEFTModel:\n    def __init__(self, **args):\n"
                "        self.visual_encoder, size = {encoder}\n"
                "        for p in self.visual_encoder.parameters():\n            p.requires_grad = False\n"
                "        self.llama_model = LlamaForCausalLM.from_pretrained(args['vicuna_ckpt_path'])\n")


def test_a_config_path_built_from_options_and_an_imagebind_encoder() -> None:
    files = {"code/train_sft.py": _PANDA_TRAIN, "code/dsconfig/openllama_peft_stage_1.json": _PANDA_DS,
             "code/model/openllama.py": _PANDA_MODEL.format(encoder="imagebind_model.imagebind_huge(pretrained=True)"),
             "code/model/ImageBind/imagebind_model.py": "def imagebind_huge(pretrained=False):\n    return None, 1024\n",
             "code/scripts/train.sh": "deepspeed --include localhost:0,1 train_sft.py --model openllama_peft --stage 1\n"}
    result = _audit(files)
    c4 = _check(result, "C4")
    assert c4.status.value == "used", c4  # the f-string names dsconfig/openllama_peft_stage_1.json
    d6 = _check(result, "D6")
    assert d6.status.value == "used" and any(e.path.endswith("openllama_peft_stage_1.json") for e in d6.evidence), d6
    assert result.project.multimodal and result.project.model_type == "MLLM", result.project.model_type
    # control: a config path the code never builds leaves the offload config an option no run uses
    files["code/train_sft.py"] = _PANDA_TRAIN.replace("f'dsconfig/{args[\"model\"]}_stage_{args[\"stage\"]}.json'",
                                                      "'configs/other.json'")
    files["code/model/openllama.py"] = _PANDA_MODEL.format(encoder="build_text_encoder()")
    result = _audit(files)
    assert _check(result, "C4").status.value != "used"
    assert not result.project.multimodal


# --- BLIVA: LAVIS's InstructBLIP configs name the language model under ``t5_model`` / ``llm_model`` ------------------------------

_BLIVA_RECIPE = ("model:\n  arch: bliva_flant5\n  model_type: flant5xxl\n  load_pretrained: True\n  freeze_vit: True\n"
                 "  {key}: \"google/flan-t5-xxl\"\nrun:\n  task: image_text_pretrain\n  lr_sched: \"linear_warmup_cosine_lr\"\n"
                 "  init_lr: 1e-5\n  max_epoch: 2\n  batch_size_train: 8\n")
_BLIVA_QFORMER = ("from transformers import BertTokenizer\n\n\ndef init_tokenizer():\n"
                  "    return BertTokenizer.from_pretrained('bert-base-uncased')\n")


def test_lavis_configs_name_the_language_model() -> None:
    files = {"train_configs/pretrain_bliva_flant5.yaml": _BLIVA_RECIPE.format(key="t5_model"),
             "bliva/models/blip2.py": _BLIVA_QFORMER,
             "train.py": ("import torch\nfrom bliva.models.blip2 import init_tokenizer\n\n\ndef main(model, loader, optimizer):\n"
                          "    for batch in loader:\n        loss = model(batch)\n        loss.backward()\n        optimizer.step()\n\n\n"
                          "if __name__ == '__main__':\n    main(None, [], None)\n")}
    files["configs/clm_models/seed_llm.yaml"] = "llm_model: configs/clm_models/llama2chat7b_lora.yaml\nlearning_rate: 1e-4\n"
    names = _audit(files).project.model_names
    assert "google/flan-t5-xxl" in names, names
    assert "configs/clm_models/llama2chat7b_lora.yaml" not in names, names  # a config file is no checkpoint (SEED-X)
    # control: a key no config system uses for the model names nothing
    files["train_configs/pretrain_bliva_flant5.yaml"] = _BLIVA_RECIPE.format(key="caption_model")
    assert "google/flan-t5-xxl" not in _audit(files).project.model_names
