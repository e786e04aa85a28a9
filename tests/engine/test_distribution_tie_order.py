"""A distribution note lists values held by as many recipes in one order on every run (numbers ascending), not in
the order the recipes happened to be met (ludwig's F5 listed ``4096 in 1 recipe, 1024 in 1 recipe`` or the reverse)."""

from __future__ import annotations

from checks.engine import audit_files

TRAIN = (
    "import sys\n\nimport yaml\nfrom transformers import Trainer, TrainingArguments\n\n\n"
    "def main(model, dataset):\n    cfg = yaml.safe_load(open(sys.argv[1]))\n"
    "    Trainer(model=model, args=TrainingArguments(**cfg), train_dataset=dataset).train()\n"
)


def _detail(order: list[int]) -> str:
    files = {"train.py": TRAIN}
    for i, n in enumerate(order):
        files[f"configs/recipe_{i}.yaml"] = f"output_dir: out\nlearning_rate: 1.0e-5\nnum_train_epochs: 3\nlogging_steps: {n}\n"
    return audit_files((k, v.encode()) for k, v in files.items()).result("I4").detail or ""


def test_tied_values_are_listed_in_ascending_order_whatever_the_recipe_order():
    a = _detail([40, 40, 40, 160, 20, 80])
    b = _detail([80, 160, 20, 40, 40, 40])
    assert "logging_steps: 40 in 3 recipes, 20 in 1 recipe, 80 in 1 recipe, 160 in 1 recipe" in a
    assert a == b
