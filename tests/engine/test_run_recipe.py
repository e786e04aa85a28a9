"""A recipe library read as the run its README documents (round 11 of issue #9, megatron-bridge): a Python quickstart that
builds its config with one of the project's recipe functions and hands it to the training entry names the run; the values
that recipe (and the base it starts from) sets decide over the library's other recipes."""

from __future__ import annotations

from checks.engine import audit_files
from checks.facts import FileFacts
from checks.facts.docs_md import extract_doc_run_recipes
from checks.model import Status
from checks.rules.f_data import _QUICKSTART, _RECIPE_LIBRARY
from checks.rules.i_infra import _RUN_LIBRARY, _RUN_README


def _audit(files: dict[str, str]):
    audit = audit_files((p, t.encode()) for p, t in files.items())
    return audit, {r.id: r for r in audit.results}


def _hints(text: str) -> list[tuple[int, str]]:
    out = FileFacts(path="README.md", kind="docs", lines=text.count("\n"))
    extract_doc_run_recipes("README.md", text, out)
    return [(h.line, h.value) for h in out.doc_hints if h.kind == "run_recipe"]


def test_a_python_quickstart_that_trains_on_a_recipe_names_it():
    assert _hints(_QUICKSTART) == [(8, "mylib.recipes.llama.h100:llama_1b_pretrain_config")]


def test_a_recipe_that_is_only_built_or_only_converted_names_no_run():
    built = "```python\nfrom mylib.recipes.llama import llama_1b_pretrain_config\ncfg = llama_1b_pretrain_config()\nprint(cfg)\n```\n"
    convert = ("```python\nfrom mylib import AutoBridge\nbridge = AutoBridge.from_hf_pretrained('meta-llama/Llama-3.2-1B')\n"
               "model = bridge.to_megatron_model()\n```\n")
    shell = "```bash\nfrom mylib.recipes.llama import llama_1b_pretrain_config\n```\n"
    assert _hints(built) == _hints(convert) == _hints(shell) == []


def test_the_run_recipe_and_its_base_are_found_in_the_project():
    audit, _ = _audit({**_RECIPE_LIBRARY, "README.md": _QUICKSTART})
    funcs, where = audit.facts.run_recipe()
    assert funcs == (("llama_1b_pretrain_config", "mylib/recipes/llama/h100/llama3.py"), ("_pretrain_common", "mylib/recipes/common.py"))
    assert where == "README.md:8"


def test_the_run_recipe_decides_its_loader_workers_over_the_library_majority():
    audit, r = _audit({**_RECIPE_LIBRARY, "README.md": _QUICKSTART})
    eff = audit.facts.effective("num_workers")
    assert [(s.value, s.path, s.line) for s in eff] == [(8, "mylib/recipes/llama/h100/llama3.py", 5)]
    assert r["F1"].status == Status.USED
    # without the documented run, the library's SFT recipes (1 worker) are the majority, as before
    assert _audit(_RECIPE_LIBRARY)[1]["F1"].status == Status.PARTIAL


def test_the_base_the_run_recipe_starts_from_decides_what_the_recipe_leaves():
    audit, r = _audit({**_RUN_LIBRARY, "README.md": _RUN_README})
    assert [(s.value, s.path) for s in audit.facts.effective("log_interval")] == [(10, "mylib/recipes/common.py")]
    assert r["I4"].status == Status.USED and "log_interval=10" in r["I4"].detail
    assert _audit(_RUN_LIBRARY)[1]["I4"].status == Status.UNUSED


_PARALLEL = {
    "mylib/recipes/common.py": "from mylib.config import ConfigContainer\n\ndef _pretrain_common():\n    return ConfigContainer()\n",
    "mylib/recipes/llama.py": (
        "from mylib.recipes.common import _pretrain_common\nfrom mylib.models import ModelProvider\n\n"
        "def llama_1b_pretrain_config():\n    cfg = _pretrain_common()\n    cfg.model.tensor_model_parallel_size = 1\n"
        "    cfg.model.sequence_parallel = False\n    return cfg\n\n"
        "def llama_70b_sft_config():\n    cfg = _pretrain_common()\n"
        "    cfg.model = ModelProvider(tensor_parallel_size=8, sequence_parallel=True)\n    return cfg\n"),
}


def test_another_recipe_s_spelling_of_the_same_size_is_not_the_run():
    readme = _QUICKSTART.replace("mylib.recipes.llama.h100", "mylib.recipes.llama")
    _, r = _audit({**_PARALLEL, "README.md": readme})
    assert r["A4"].status == Status.UNUSED, r["A4"].detail
    assert r["A6"].status == Status.UNUSED, r["A6"].detail
    _, r = _audit(_PARALLEL)
    assert r["A4"].status == Status.USED and r["A6"].status == Status.USED
