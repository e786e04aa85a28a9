"""Round 29 (issue #9): an evaluation harness (lm-evaluation-harness at HEAD: 14,873 files of evaluation code, 98% of
its Python) is no training project. It loads checkpoints to score them; the report is "no training code found", not
29 training recommendations."""

from __future__ import annotations

from checks.engine import AuditOptions, audit_files

MODEL = ("import torch\nfrom transformers import AutoModelForCausalLM\n\n\nclass HFLM:\n    def __init__(self, pretrained):\n"
         "        self.model = AutoModelForCausalLM.from_pretrained(pretrained)\n\n    def loglikelihood(self, requests):\n"
         "        with torch.no_grad():\n            return [self.model(r).logits for r in requests]\n")


def _harness(extra: dict[str, str] | None = None) -> dict[str, str]:
    files = {f"lm_eval/tasks/task_{i}/utils.py": f"def process_docs(dataset):\n    return dataset.map(lambda d: d)  # {i}\n"
             for i in range(60)}
    files["lm_eval/models/huggingface.py"] = MODEL
    files["lm_eval/__main__.py"] = "from lm_eval.models.huggingface import HFLM\n\n\ndef cli_evaluate():\n    HFLM('gpt2')\n"
    files["scripts/model_comparator.py"] = ("from transformers import AutoModelForCausalLM\n\n\ndef main(args):\n"
                                            "    model = AutoModelForCausalLM.from_pretrained(args.pretrained)\n"
                                            "    return model.generate(**args.inputs, max_new_tokens=32)\n")
    files["examples/transformer-lens.py"] = ("class Adapter:\n    def train(self, mode=True):\n        self.model.train(mode)\n"
                                             "        return self\n")
    return {**files, **(extra or {})}


def _audit(files: dict[str, str], options: AuditOptions | None = None):
    return audit_files(((p, t.encode()) for p, t in files.items()), options=options)


def test_an_evaluation_harness_has_no_training_code_to_audit():
    a = _audit(_harness())
    assert not a.training_code_found, (a.project.does_training, a.project.does_inference)
    assert "evaluation code" in a.project.notes.get("evaluation_harness", "")


def test_a_training_path_named_in_the_configuration_is_still_audited():
    train = {"train.py": ("import torch\nfrom transformers import AutoModelForCausalLM\n\n"
                          "model = AutoModelForCausalLM.from_pretrained('gpt2')\nopt = torch.optim.AdamW(model.parameters())\n"
                          "for batch in loader:\n    model(**batch).loss.backward()\n    opt.step()\n")}
    a = _audit(_harness(train), AuditOptions(training=("train.py",)))
    assert a.training_code_found and a.project.does_training


def test_a_training_repository_with_many_eval_task_files_is_still_audited():
    train = {"train.py": ("import torch\nfrom transformers import AutoModelForCausalLM\n\n"
                          "model = AutoModelForCausalLM.from_pretrained('gpt2')\nopt = torch.optim.AdamW(model.parameters())\n"
                          "for batch in loader:\n    model(**batch).loss.backward()\n    opt.step()\n")}
    a = _audit(_harness(train))
    assert a.training_code_found and a.project.does_training
