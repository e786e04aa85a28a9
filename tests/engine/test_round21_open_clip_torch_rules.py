"""Rules of round 21 of issue #9 (open-clip-torch 3.3.0: OpenCLIP's contrastive image-text trainer, its own DDP loop over
WebDataset shards, a ``--pretrained`` option for its model factory and LiT-style tower locking behind store_true flags):
each rule test fails on the rule before it; each control passes on both."""

from __future__ import annotations

from checks.model import Status

from .claims import audit as _audit

_PARAMS = (
    "import argparse\n\n\ndef parse_args(argv):\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--model', type=str, default='RN50')\n"
    "    parser.add_argument('--pretrained', default='', type=str, help='pretrained CLIP weights: a tag or a file')\n"
    "    parser.add_argument('--lock-image', default=False, action='store_true')\n"
    "    parser.add_argument('--ddp-static-graph', default=False, action='store_true')\n"
    "    parser.add_argument('--precision', default='amp', type=str)\n"
    "    return parser.parse_args(argv)\n"
)
_MODEL = (
    "import torch\nfrom torch import nn\n\n\nclass ImageTower(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.trunk = nn.Linear(8, 8)\n\n    def lock(self, unlocked_groups=0):\n"
    "        for param in self.trunk.parameters():\n            param.requires_grad = False\n\n\n"
    "class CLIP(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.visual = ImageTower()\n\n"
    "    def lock_image_tower(self, unlocked_groups=0):\n        self.visual.lock(unlocked_groups=unlocked_groups)\n"
)
_MAIN = (
    "import sys\nimport torch\nfrom open_clip import create_model_and_transforms\nfrom mytrain.params import parse_args\n\n\n"
    "def main(argv):\n    args = parse_args(argv)\n"
    "    model, preprocess_train, preprocess_val = create_model_and_transforms(args.model, {pretrained}, precision=args.precision)\n"
    "{lock}"
    "    ddp_args = {{}}\n{static}"
    "    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0], **ddp_args)\n"
    "    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)\n"
    "    for images, texts in loader:\n        loss = model(images, texts)\n        loss.backward()\n        optimizer.step()\n\n\n"
    "if __name__ == '__main__':\n    main(sys.argv[1:])\n"
)


def _files(pretrained: str = "args.pretrained", lock: str = "    if args.lock_image:\n        model.lock_image_tower()\n",
           static: str = "    if args.ddp_static_graph:\n        ddp_args['static_graph'] = True\n") -> dict[str, str]:
    return {
        "src/mytrain/params.py": _PARAMS,
        "src/open_clip/model.py": _MODEL,
        "src/mytrain/main.py": _MAIN.format(pretrained=pretrained, lock=lock, static=static),
        "README.md": "```bash\ntorchrun --nproc_per_node 4 -m mytrain.main --model ViT-B-32\n```\n",
    }


def test_a_pretrained_option_handed_to_the_model_factory_is_a_fine_tuning_path():
    a = _audit(_files())
    assert a.project.finetunes
    assert a.result("G4").status is Status.UNUSED
    assert a.result("G5").status is not Status.NA


def test_control_a_model_factory_given_no_pretrained_weights_is_pre_training_only():
    a = _audit(_files(pretrained="''"))
    assert not a.project.finetunes
    assert a.result("G4").status is Status.NA


def test_control_a_teachers_weights_are_not_the_trained_models():
    assert not _audit(_files(pretrained="args.distill_pretrained")).project.finetunes


#: a fine-tuning script beside the trainer (the path says so): G5 is judged whatever the ``--pretrained`` rule says
_FINETUNE_SCRIPT = {"scripts/finetune_coco.sh": "python -m mytrain.main --pretrained openai --model ViT-B-32\n"}


def test_a_freeze_reached_only_through_a_method_the_script_calls_behind_an_off_flag_freezes_nothing():
    r = _audit({**_files(), **_FINETUNE_SCRIPT}).result("G5")
    assert r.status is Status.UNUSED
    assert any(e.path == "src/mytrain/params.py" for e in r.evidence)


def test_control_the_same_freeze_called_unconditionally_freezes_layers():
    files = {**_files(lock="    model.lock_image_tower()\n"), **_FINETUNE_SCRIPT}
    assert _audit(files).result("G5").status is Status.USED


def test_a_file_named_for_pretrained_weights_is_not_pre_training():
    a = _audit({"mylib/pretrained.py": "_PRETRAINED = {'RN50': 'openai'}\n",
                "mylib/train.py": "import torch\nloss.backward()\noptimizer.step()\n"})
    assert not a.project.pretrains


def test_control_a_pretraining_script_is_pre_training():
    a = _audit({"mylib/pretrain_gpt.py": "import torch\nloss.backward()\noptimizer.step()\n"})
    assert a.project.pretrains


def test_a_ddp_kwarg_set_only_under_an_off_flag_is_not_tuned_buckets():
    r = _audit(_files()).result("E2")
    assert r.status is Status.USED
    assert "tuned DDP buckets" not in r.detail


def test_control_the_same_kwarg_set_unconditionally_tunes_ddp():
    r = _audit(_files(static="    ddp_args['static_graph'] = True\n")).result("E2")
    assert "tuned DDP buckets" in r.detail


def test_a_clip_dual_encoder_is_not_an_mllm_and_gets_no_liger_advice():
    a = _audit(_files())
    assert a.project.multimodal
    assert a.project.model_type == "unknown"
    assert a.project.notes.get("dual_encoder_only") == "src/mytrain/main.py:9"
    assert "Liger has no patch" in a.result("D5").detail
    assert "LLM" not in a.result("H3").detail


def test_control_an_openclip_tower_inside_a_causal_lm_stays_an_mllm():
    files = _files()
    files["src/mytrain/lm.py"] = ("from transformers import AutoModelForCausalLM\n"
                                  "lm = AutoModelForCausalLM.from_pretrained('anas-awadalla/mpt-1b-redpajama-200b')\n")
    a = _audit(files)
    assert a.project.model_type == "MLLM"
    assert "dual_encoder_only" not in a.project.notes


def test_lock_image_left_off_says_the_vision_encoder_is_trained():
    r = _audit(_files()).result("H1")
    assert r.status is Status.UNUSED
    assert r.detail == "the vision encoder is trained"
    assert any(e.path == "src/mytrain/params.py" for e in r.evidence)


def test_lock_image_passed_by_the_launch_freezes_the_vision_encoder():
    files = _files()
    files["run.sh"] = "torchrun --nproc_per_node 4 -m mytrain.main --model ViT-B-32 --lock-image\n"
    assert _audit(files).result("H1").status is Status.USED


def _priorities(files: dict[str, str]) -> dict[str, str | None]:
    from reports.json_report import to_json

    return {c["id"]: c.get("priority") for c in to_json(_audit(files))["checks"]}


_PRETRAIN_SCRIPT = {"scripts/pretrain_clip.sh": "torchrun --nproc_per_node 8 -m mytrain.main --model ViT-B-32\n"}


def test_a_clip_dual_encoder_gets_no_packing_or_sequence_curriculum_advice():
    pr = _priorities({**_files(), **_PRETRAIN_SCRIPT})
    assert pr["F7"] is None
    assert pr["G3"] is None


def test_control_the_same_trainer_with_a_causal_lm_gets_both():
    files = {**_files(), **_PRETRAIN_SCRIPT, "src/mytrain/lm.py": (
        "from transformers import AutoModelForCausalLM\nlm = AutoModelForCausalLM.from_pretrained('EleutherAI/pythia-1b')\n")}
    pr = _priorities(files)
    assert pr["F7"] is not None
    assert pr["G3"] is not None
