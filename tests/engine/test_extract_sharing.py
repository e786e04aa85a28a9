"""The extraction's shortcuts give what the plain code gave: the scan's one copy of each expression, line numbers past the
shared-int table's first size, the usage-text pre-test, and the rebinding walk."""

import ast

from checks.facts.docs_md import _MULTI_NODE_WORDS, _may_name_nodes
from checks.facts.extract import extract_file
from checks.facts.python import _every_node
from checks.facts.types import Expr, drop_tables


def test_an_expression_seen_in_two_files_is_one_object_and_the_table_is_dropped() -> None:
    strings: dict = {}
    a = extract_file("a.py", b"import torch\nx = f(args.lr, torch.bfloat16)\n", strings=strings)
    b = extract_file("b.py", b"import torch\n\n\ny = g(args.lr, torch.bfloat16)\n", strings=strings)
    ca = next(c for c in a.calls if c.name == "f")
    cb = next(c for c in b.calls if c.name == "g")
    assert ca.args == (Expr("args.lr", None, "lr"), Expr("torch.bfloat16", "torch.bfloat16", None))
    assert all(x is y for x, y in zip(ca.args, cb.args, strict=True))
    assert ca.args is cb.args  # the whole tuple too
    drop_tables(strings)
    assert all(isinstance(k, (str, Expr, tuple)) for k in strings)  # only values are left, no table of the scan's own


def test_line_numbers_past_the_first_table_of_ints() -> None:
    body = "\n" * 9999 + "import torch\ntorch.compile(model)\n"
    ff = extract_file("big.py", body.encode(), strings={})
    call = next(c for c in ff.calls if c.name == "torch.compile")
    assert call.line == 10001
    assert next(i for i in ff.imports).line == 10000
    again = extract_file("big2.py", body.encode(), strings={})
    assert next(c for c in again.calls if c.name == "torch.compile").line is call.line  # one shared int object


def test_the_usage_text_pre_test_passes_every_word() -> None:
    for w in _MULTI_NODE_WORDS:
        assert _may_name_nodes(f"usage: torchrun --{w}=2 train.py")
    assert not _may_name_nodes("usage: torchrun --nproc_per_node 8 train.py")  # 'node', not 'nodes'


def test_every_node_finds_the_bindings_ast_walk_finds() -> None:
    src = (
        "def f(a=None, b=None, c=None, d=None):\n"
        "    try:\n        pass\n    except (b := ValueError):\n        pass\n"
        "    xs = [a for a in range(3)]\n"
        "    with open(p) as (c, e):\n        pass\n"
        "    if (d := 1) > 0:\n        return a + 1\n"
    )
    tree = ast.parse(src)
    kinds = (ast.Assign, ast.NamedExpr, ast.comprehension, ast.With, ast.For)
    def bindings(nodes):
        return sorted(ast.dump(n) for n in nodes if isinstance(n, kinds))
    assert bindings(_every_node(tree)) == bindings(ast.walk(tree))


def test_yaml_scalars_from_the_scan_table_keep_their_types() -> None:
    text = b"a: true\nb: 'true'\nc: 1\nd: '1'\ne: 1.0\nf: .nan\ng: null\nh: bf16\ni: [1, '1', true]\nj: 2024-01-01\n"
    alone = extract_file("x.yaml", text, strings={})
    strings: dict = {}
    extract_file("w.yaml", text, strings=strings)  # the same scalars seen first in another file
    again = extract_file("x.yaml", text, strings=strings)
    def vals(ff):
        return [(e.keys, type(e.value).__name__, repr(e.value)) for e in ff.configs]
    assert vals(again) == vals(alone)
    by = {e.keys[-1]: e.value for e in again.configs}
    assert by["a"] is True and by["b"] == "true" and by["c"] == 1 and type(by["c"]) is int and by["d"] == "1"
    assert by["g"] is None and by["i"] == (1, "1", True)
    assert by["f"] != by["f"]  # a NaN, made for this file
    drop_tables(strings)
    assert all(isinstance(k, (str, Expr, tuple)) for k in strings)


def test_a_yaml_file_leaves_no_loader_behind_with_the_collector_paused() -> None:
    import gc

    import yaml

    from checks.facts.configs import _Loader

    gc.collect()
    gc.disable()  # as during a scan's extraction: only reference counting frees
    try:
        for i in range(3):
            extract_file(f"c{i}.yaml", b"model:\n  layers: 24\n  bf16: true\nlist: [1, 2]\n", strings={})
        left = [o for o in gc.get_objects() if isinstance(o, (_Loader, yaml.Node))]
    finally:
        gc.enable()
    assert left == []
