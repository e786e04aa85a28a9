"""Documented multi-node launches (issue 9): Markdown makes E1 applicable, and is never evidence of use."""

from __future__ import annotations

from checks.facts import extract_file
from checks.facts.extract import classify

from ._audit import audit


def test_docs_are_read_only_for_readmes_and_distributed_topics():
    assert classify("README.md") == "docs" and classify("docs/multi-node.qmd") == "docs"
    assert classify("docs/slurm/launch.rst") == "docs"
    assert classify("docs/faq.md") is None and classify("CHANGELOG.md") is None


def test_multi_node_forms_are_hints_and_one_node_is_not():
    text = ("torchrun --nnodes 2 --nproc_per_node 8 train.py\n"
            "torchrun --nnodes=1 --nproc_per_node 8 train.py\n"
            "deepspeed --num_nodes $NUM_NODES --hostfile hostfile train.py\n"
            "#SBATCH --nodes=4\n"
            "num_machines: 1\n"
            "accelerate launch --num_machines 2 train.py\n")
    ff = extract_file("README.md", text.encode())
    assert [(h.line, h.value) for h in ff.doc_hints] == [
        (1, "--nnodes 2"), (3, "--num_nodes $NUM_NODES"), (4, "#SBATCH --nodes=4"), (6, "--num_machines 2")]
    assert not ff.calls and not ff.launches and not ff.configs  # prose is never evidence of a practice


def test_e1_applies_when_multi_node_is_documented_and_cites_the_line():
    r, _ = audit({"docs/multi-node.md": "Launch on each node:\n\n    torchrun --nnodes 2 --nproc_per_node 8 train.py\n",
                  "train.py": "import torch\n"}, "E1", "C1")
    assert r["E1"].status.value == "unused" and "docs/multi-node.md:3" in r["E1"].detail
    assert r["C1"].status.value == "unused"  # nothing in the README turns anything on


def test_usage_text_built_inside_main_documents_a_multi_node_launch():
    # OLMo-core internal/experiment.py: ``usage = f"""...""".strip()`` inside ``main()``, a dotted config override
    src = ('import sys\n\ndef main():\n    usage = f"""\nUsage: python {sys.argv[0]} launch|train RUN_NAME CLUSTER\n'
           '$ python {sys.argv[0]} launch run01 ai2/pluto-cirrascale --launch.num_nodes=2\n    """.strip()\n    print(usage)\n\n'
           'def log_status():\n    status = f"--launch.num_nodes=4"\n    print(status)\n')
    ff = extract_file("mylib/internal/experiment.py", src.encode())
    assert [(h.line, h.value) for h in ff.doc_hints if h.kind == "multi_node"] == [(6, "--launch.num_nodes=2")]


def test_a_project_helper_that_sets_nccl_variables_is_an_env_setting():
    src = ("import os\n\ndef set_env_var(name, value):\n    os.environ.setdefault(name, value)\n\n"
           "def init_distributed():\n    set_env_var('NCCL_IB_HCA', '^=mlx5_bond_0')\n    set_env_var('NCCL_NET_GDR_LEVEL', 'PIX')\n"
           "    set_env_var(name_of_var, 'x')\n    set_option('NCCL_ALGO', 'Ring')\n")
    ff = extract_file("mylib/distributed/utils.py", src.encode())
    assert [(e.line, e.name, e.value) for e in ff.envs] == [(7, "NCCL_IB_HCA", "^=mlx5_bond_0"), (8, "NCCL_NET_GDR_LEVEL", "PIX")]
    res, _ = audit({"mylib/distributed/utils.py": src, "run.sh": "torchrun --nnodes 2 --nproc_per_node 8 train.py\n"}, "E1", "E4")
    assert res["E1"].status.value == "used" and res["E4"].status.value == "used"
