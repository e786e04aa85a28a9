"""Round 18 (held-out xllm 0.1.8): rules fixed after its first contact. Each rule test fails on the engine before the
fix; the controls pass on both. The repositories are small libraries written like xllm's pieces (our own code): a
config dataclass read with ``HfArgumentParser``, DeepSpeed configs as Python dicts in a mapping, a model loader that
adds keywords under config flags, and a README that gives the user's ``train.py`` and the command that runs it."""

from __future__ import annotations

from checks.base import REGISTRY, all_checks
from checks.engine import AuditOptions, parse_files, run_checks, split_facts
from checks.facts.types import FileFacts
from checks.model import CheckResult
from checks.project import detect_project
from checks.rules._helpers import flag_state


def _split(files: dict[str, str]):
    return split_facts(parse_files((path, text.encode()) for path, text in files.items()))


def _audit(files: dict[str, str], check_id: str) -> CheckResult:
    """One check as the engine runs it: roles first (a README's commands are documentation), then the checks."""
    all_checks()
    facts, _, roles = _split(files)
    project = detect_project(facts, training=[p for p, r in roles.by_path.items() if r == "training"])
    [result], _ = run_checks(facts, project, AuditOptions(), [REGISTRY[check_id]])
    return result


_CONFIG = (
    "from dataclasses import dataclass, field\nfrom typing import Optional\n\nfrom .presets import ZERO_PRESETS\n\n\n"
    "@dataclass\nclass Config:\n    model_name_or_path: str = field(default='mistralai/Mistral-7B-v0.1')\n"
    "    use_flash_attention_2: bool = field(default=False)\n    apply_lora: bool = field(default=False)\n"
    "    zero_preset: Optional[str] = field(default=None)\n    report_to_wandb: bool = field(default=False)\n"
    "    logging_steps: int = field(default=10)\n\n"
    "    @property\n    def deepspeed(self):\n        if self.zero_preset is None:\n            return None\n"
    "        return ZERO_PRESETS.get(self.zero_preset, None)\n")
_PRESETS = (
    "ZERO_1 = {\n    'bf16': {'enabled': 'auto'},\n    'zero_optimization': {\n        'stage': 1,\n        'overlap_comm': True,\n"
    "        'offload_optimizer': {'device': 'cpu'},\n    },\n    'steps_per_print': 2000,\n}\n\n"
    "ZERO_2 = {\n    'bf16': {'enabled': 'auto'},\n    'zero_optimization': {\n        'stage': 2,\n        'overlap_comm': True,\n"
    "        'offload_optimizer': {'device': 'cpu'},\n    },\n    'steps_per_print': 2000,\n}\n\n"
    "ZERO_3 = {\n    'bf16': {'enabled': 'auto'},\n    'zero_optimization': {\n        'stage': 3,\n        'overlap_comm': True,\n"
    "        'offload_param': {'device': 'cpu'},\n    },\n    'steps_per_print': 2000,\n}\n\n"
    "ZERO_PRESETS = {'1': ZERO_1, '2': ZERO_2, '3': ZERO_3}\n")
_TRAIN = (
    "from peft import LoraConfig, get_peft_model\n"
    "from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments\n\n"
    "from .config import Config\n\n\n"
    "def build_model(config):\n    kwargs = dict()\n    if config.use_flash_attention_2:\n"
    "        kwargs['use_flash_attention_2'] = True\n"
    "    model = AutoModelForCausalLM.from_pretrained(config.model_name_or_path, **kwargs)\n"
    "    if config.apply_lora:\n        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=32, task_type='CAUSAL_LM'))\n"
    "    return model\n\n\n"
    "def cli_run_train(train_dataset=None):\n    config = HfArgumentParser(Config).parse_args_into_dataclasses()[0]\n"
    "    args = TrainingArguments(\n        output_dir='out',\n        bf16=True,\n        deepspeed=config.deepspeed,\n"
    "        logging_steps=config.logging_steps,\n        report_to=['wandb'] if config.report_to_wandb else None,\n    )\n"
    "    Trainer(model=build_model(config), args=args, train_dataset=train_dataset).train()\n")
_LIB = {"mylib/__init__.py": "", "mylib/config.py": _CONFIG, "mylib/presets.py": _PRESETS, "mylib/train.py": _TRAIN,
        "requirements.txt": "transformers>=4.40\n"}


def _readme(command: str, script_name: str = "train.py") -> str:
    return ("# mylib\n\nDeepSpeed is how training runs on several GPUs.\n\n"
            f"`{script_name}`\n\n```python\nfrom mylib.train import cli_run_train\n\nif __name__ == '__main__':\n"
            "    cli_run_train()\n```\n\nRun it (as many GPUs as you have):\n\n"
            f"```sh\n{command}\n```\n")


_RUN = "deepspeed --num_gpus=8 train.py --zero_preset 2 --apply_lora True"


# -- D1: a dict entry that hands on the flag its own branch tests is no setting of that flag ---------------------------

def test_a_dict_entry_forwarding_its_own_guard_flag_does_not_turn_the_flag_on():
    facts, _, _ = _split(_LIB)
    sites = facts.effective("use_flash_attention_2")
    assert [(s.path, s.source, s.value) for s in sites] == [("mylib/config.py", "field-default", False)]
    assert flag_state(facts, "use_flash_attention_2") is False


def test_flash_attention_keyword_under_a_flag_off_by_default_is_not_flash_attention():
    result = _audit(_LIB, "D1")
    assert result.status.value == "partial"  # the HF load without attn_implementation: SDPA by default, no FA2
    assert "mylib/train.py" in {e.path for e in result.evidence}


def test_control_the_flag_on_by_default_is_flash_attention():
    files = {**_LIB, "mylib/config.py": _CONFIG.replace("use_flash_attention_2: bool = field(default=False)",
                                                        "use_flash_attention_2: bool = field(default=True)")}
    assert _audit(files, "D1").status.value == "used"


def test_control_a_documented_run_turning_the_flag_on_is_flash_attention():
    files = {**_LIB, "README.md": _readme(_RUN + " --use_flash_attention_2 True")}
    assert _audit(files, "D1").status.value == "used"


# -- documented runs: a README that gives its script whole ------------------------------------------------------------

def test_a_python_block_named_as_a_file_with_a_main_block_is_a_script_block_hint():
    from checks.facts.docs_md import extract_doc_scripts

    out = FileFacts(path="README.md", kind="docs", lines=0)
    extract_doc_scripts("README.md", _readme(_RUN), out)
    assert [(h.kind, h.value, h.line) for h in out.doc_hints] == [("script_block", "train.py", 5)]


def test_control_a_python_block_without_a_main_block_or_a_name_is_no_script():
    from checks.facts.docs_md import extract_doc_scripts

    out = FileFacts(path="README.md", kind="docs", lines=0)
    extract_doc_scripts("README.md", _readme(_RUN).replace("if __name__ == '__main__':\n    cli_run_train()", "cli_run_train()"), out)
    extract_doc_scripts("README.md", _readme(_RUN).replace("`train.py`\n\n", "Then:\n\n"), out)
    assert out.doc_hints == []


def test_the_readme_command_of_a_script_the_readme_gives_is_the_run():
    files = {**_LIB, "README.md": _readme(_RUN)}
    facts, _, _ = _split(files)
    assert [(x.path, x.script) for x in facts.documented_runs()] == [("README.md", "train.py")]
    g4 = _audit(files, "G4")
    assert g4.status.value == "used"
    assert ("README.md", 17) in {(e.path, e.line) for e in g4.evidence}  # the command (its flags are on one line)


def test_control_a_command_whose_script_is_neither_shipped_nor_given_is_not_the_run():
    files = {**_LIB, "README.md": _readme(_RUN.replace("train.py", "my_train.py"))}
    facts, _, _ = _split(files)
    assert facts.documented_runs() == []
    assert _audit(files, "G4").status.value == "unused"


# -- A3/C4/E2: DeepSpeed dicts of a menu looked up by a config field -----------------------------------------------------

def test_the_launch_picks_one_dict_of_the_menu_and_the_others_are_options():
    files = {**_LIB, "README.md": _readme(_RUN)}
    a3 = _audit(files, "A3")
    assert a3.status.value == "used" and "stage 2" in a3.detail
    assert {(e.path, e.line) for e in a3.evidence} == {("mylib/presets.py", 14)}
    c4 = _audit(files, "C4")
    assert {(e.path, e.line) for e in c4.evidence} == {("mylib/presets.py", 16)}  # ZERO_2's offload_optimizer only
    i4 = _audit(files, "I4")
    assert ("mylib/presets.py", 18) in {(e.path, e.line) for e in i4.evidence}
    assert ("mylib/presets.py", 8) not in {(e.path, e.line) for e in i4.evidence}  # not ZERO_1's steps_per_print


def test_a_menu_no_run_picks_from_is_not_zero():
    result = _audit(_LIB, "A3")
    assert result.status.value == "unused"
    assert result.detail.startswith("ZeRO only if a run picks it: DeepSpeed configs shipped as a menu")
    assert "`self.zero_preset` (mylib/config.py:" in result.detail
    assert _audit(_LIB, "C4").status.value == "unused"


def test_control_a_launch_value_that_is_a_shell_variable_leaves_the_menu_unknown():
    files = {**_LIB, "README.md": _readme(_RUN.replace("--zero_preset 2", "--zero_preset $STAGE"))}
    result = _audit(files, "A3")
    assert result.status.value == "used"
    assert {(e.path, e.line) for e in result.evidence} >= {("mylib/presets.py", 4), ("mylib/presets.py", 14)}


def test_each_overlap_comm_takes_the_stage_of_its_own_dict():
    files = {**_LIB, "README.md": _readme(_RUN)}
    result = _audit(files, "E2")
    assert result.status.value == "used" and "ZeRO-1" not in result.detail


# -- I5: report_to given as a conditional list literal ------------------------------------------------------------------

def test_a_conditional_list_literal_names_its_tracker_and_the_detail_shows_no_internal_repr():
    result = _audit({**_LIB, "README.md": _readme(_RUN + " --report_to_wandb True")}, "I5")
    assert result.status.value == "used"
    assert result.detail.startswith("reporting to wandb every 10 steps")
    assert "Expr(" not in result.detail


# -- step zero: an optimizer offloaded under LoRA moves only the adapters' states --------------------------------------

def _reasons(files: dict[str, str]) -> list[str]:
    from checks.engine import audit_files

    return list(audit_files((path, text.encode()) for path, text in files.items()).project.bottleneck_reasons)


def test_optimizer_offload_of_a_lora_run_is_no_communication_reason():
    reasons = _reasons({**_LIB, "README.md": _readme(_RUN)})
    assert not any("offloaded" in r for r in reasons), reasons


def test_control_the_same_offload_of_a_full_fine_tune_is_a_communication_reason():
    reasons = _reasons({**_LIB, "README.md": _readme(_RUN.replace(" --apply_lora True", ""))})
    assert any(r.startswith("communication-bound: optimizer or parameter states are offloaded") for r in reasons), reasons
