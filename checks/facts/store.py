"""The merged facts of a repository, and the queries every check uses.

Name patterns match import-resolved dotted names by suffix on a dot boundary:
``"DataLoader"`` matches ``torch.utils.data.DataLoader``; ``"torch.compile"`` matches
``torch.compile`` but not ``my.compile``; a trailing ``.*`` matches a prefix
(``"flash_attn.*"``).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from itertools import chain
from operator import attrgetter
from typing import Any, TypeVar

from ..lazyre import lazy_compile
from ..model import Evidence
from .types import (
    RECORD_LISTS,
    RETURNED_DICT,
    ArgOption,
    Assign,
    AttrAssign,
    Call,
    ConfigEntry,
    Container,
    Decorator,
    Dependency,
    EnvVar,
    Expr,
    Field,
    FileFacts,
    Import,
    Launch,
    ParamDefault,
    PathLiteral,
    Ref,
    Setting,
)

T = TypeVar("T")

_TRUE = {"true", "yes", "y", "on", "1", "enable", "enabled"}
_FALSE = {"false", "no", "n", "off", "0", "none", "null", "", "disable", "disabled"}


def truthy(v: Any) -> bool | None:
    """True/False when the value clearly turns a feature on/off, None when unknown."""
    if isinstance(v, bool):
        return v
    if v is None:
        return False
    if isinstance(v, (int, float)):
        return v != 0
    if isinstance(v, str):
        s = v.strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
        return None
    return None


def as_number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def name_matches(name: str, pattern: str) -> bool:
    if pattern.endswith(".*"):
        p = pattern[:-2]
        return name == p or name.startswith(p + ".") or name.endswith("." + p) or f".{p}." in name
    return name == pattern or name.endswith("." + pattern)


_NAME_INDEXED = {"refs", "decorators", "attr_assigns", "imports"}


def _last_segment(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _first_segment(module: str) -> str:
    return module.split(".", 1)[0]


def _pattern_key(p: str) -> str | None:
    """The index key every name matching ``p`` has (its last segment); None for a ``.*`` prefix pattern."""
    return None if p.endswith(".*") else p.rsplit(".", 1)[-1]


#: the guard of a module's main block
MAIN_GUARD = lazy_compile(r"__name__\s*==\s*[\"']__main__[\"']")

#: a shipped launch that serves or demos a model (Chinese-Llama-2's Dockerfile ``CMD ["python", "app.py"]``, a
#: ``python web_demo.py``, ``vllm serve``): no training run of the project's own, so it does not stand in for one
_SERVING_SCRIPT = lazy_compile(r"(?i)(^|[/_-])(app|api|web_?ui|(cli|web)_?demo|demo|chat\w*|serve|server|serving|infer\w*|gradio\w*)(\.py)?$")
_SERVING_LAUNCHERS = frozenset({"vllm", "sglang", "text-generation-launcher", "lmdeploy", "trtllm-serve", "tritonserver"})


def _serves(launch: Launch) -> bool:
    """A shipped launch that runs a model for use, not for training: a serving CLI, or ``python`` on a script named for
    an app, a demo, a chat or a server."""
    if launch.launcher in _SERVING_LAUNCHERS:
        return True
    script = str(launch.script or "").strip("'\"")
    return launch.launcher == "python" and script.endswith(".py") and bool(_SERVING_SCRIPT.search(script.removesuffix(".py")))


#: the README of the project's own top-level training folder (``finetune/README.md``, ``train/README.md``, ``sft/README.md``)
_TRAINING_README = lazy_compile(r"^(fine[-_]?tun(e|es|ing)|train(ing)?|sft|pre[-_]?train(ing)?)/readme(\.[a-z]+)?$", re.I)
#: a training entry a recipe hands its config to; the run recipe's bases are not followed into it
_TRAIN_ENTRY = lazy_compile(r"(?i)^(pre)?train(ing)?$|^finetune$|^fine_tune$|^run_training$")


def _registry_shape(c: Call) -> bool:
    """A call that may be a registry entry: two or more positional arguments, a string among them and a reference
    (``ComponentEntity("model", "compiled", maybe_model_list(ModelFactory.get_compiled_model), ...)``)."""
    return len(c.args) >= 2 and any(isinstance(a, str) for a in c.args) and any(isinstance(a, Expr) for a in c.args)


#: named selections of the calls by their own fields (:meth:`Facts.calls_selected`): a file's share of one is its calls
#: that pass, in its order (see :mod:`checks.query_log`), so an edit of any other call leaves the selection's readers clean
CALL_SELECTIONS: dict[str, Callable[[Call], bool]] = {
    "registry_shape": _registry_shape,
    "string_args": lambda c: any(isinstance(a, str) for a in c.args) or any(isinstance(v, str) for v in c.kwargs.values()),
    # calls in a module's ``if __name__ == "__main__":`` block
    "main_block": lambda c: bool(c.guard) and c.path.endswith(".py") and MAIN_GUARD.search(c.guard) is not None,
    # calls under a guard that takes something modulo something (``if step % args.save_interval == 0:``)
    "modulo_guard": lambda c: bool(c.guard) and "%" in c.guard,
}
#: a read of which functions of each file make calls (:meth:`Facts._defining`): a file's share is the names of its functions
#: whose bodies call something, in order of first appearance (see :func:`checks.query_log.keyset`)
CALL_FUNCS = "call_funcs"


@lru_cache(maxsize=1 << 16)  # a repository has a few thousand distinct keys, asked for millions of times
def _norm_key(k: str) -> str:
    return k.strip().lower().replace("-", "_")


#: words that name an evaluation split or run in a setting's name (``num_workers_valid``, ``eval_batch_size``)
_EVAL_WORDS = frozenset({"valid", "validation", "val", "eval", "evaluation", "test", "inference", "infer"})


def _evaluation_ref(name: str, ref: str) -> bool:
    """A keyword ``name`` that reads a setting named for evaluation when ``name`` is not (metaseq's validation loader
    ``DataLoader(num_workers=self.cfg.dataset.num_workers_valid)``, ``batch_size=args.eval_batch_size``): that call serves
    evaluation, so what it reads is not the training run's ``name``."""
    words = set(_norm_key(ref).split("_"))
    return bool(words & _EVAL_WORDS) and not set(name.split("_")) & _EVAL_WORDS


#: one and-ed term of an ``if`` guard that tests a flag by name: ``config.use_flash_attention_2``, ``not args.x``, ``x``
_GUARD_FLAG_TERM = lazy_compile(r"\s*(not\s+)?(?:\w+\.)*(\w+)\s*")


def _forwards_own_guard(e: ConfigEntry) -> bool:
    """``kwargs["use_flash_attention_2"] = True`` under ``if config.use_flash_attention_2:`` (or ``d["x"] = False`` under
    ``if not args.x:``): a dict entry that hands on the flag its own branch tests, as the constant the test implies. It
    says "on when the flag is on", not that anything turns the flag on: the flag's state is that of its other settings
    (a config field's default, a launch flag)."""
    if not e.guard or not isinstance(e.value, bool) or " or " in e.guard:
        return False
    name = _norm_key(e.key)
    for term in e.guard.split(" and "):
        m = _GUARD_FLAG_TERM.fullmatch(term)
        if m and _norm_key(m.group(2)) == name and e.value is not bool(m.group(1)):
            return True
    return False


#: the most recipes a document may link and still name the way to train (more is a catalogue of examples)
_FEW_LINKS = 4


#: the separators PEP 503 folds into one hyphen when it compares distribution names
_PEP503 = lazy_compile(r"[-_.]+")

class Facts:
    """All facts of one scan. Use :meth:`for_check` to get the view a check sees."""

    def __init__(self, files: Iterable[FileFacts], *, check_id: str | None = None, _shared: dict[str, Any] | None = None) -> None:
        if _shared is not None:
            self._s = _shared
        else:
            by_path = {f.path: f for f in files}  # a path seen twice (a tar archive may repeat an entry): the last wins, as on extraction
            fl = list(by_path.values())
            s: dict[str, Any] = {"files": by_path}
            for attr in RECORD_LISTS:
                s[attr] = list(chain.from_iterable(map(attrgetter(attr), fl)))
            # a dict a function returns is no setting of the repository (see RETURNED_DICT): only its file's list keeps it
            s["configs"] = [e for e in s["configs"] if e.fmt != RETURNED_DICT]
            # one pass over the calls for both of their indexes; a name's last segment is split once per distinct name
            calls_by_short: dict[str, list[Call]] = defaultdict(list)
            kw_index: dict[str, list[Call]] = defaultdict(list)
            short_of: dict[str, str] = {}
            for c in s["calls"]:
                n = c.name
                short = short_of.get(n)
                if short is None:
                    short = short_of[n] = n.rsplit(".", 1)[-1]
                calls_by_short[short].append(c)
                if c.kwargs:
                    for k in c.kwargs:
                        kw_index[_norm_key(k)].append(c)
            s["calls_by_short"] = calls_by_short
            s["calls_by_kw"] = kw_index
            s["call_short_of"] = short_of  # every distinct call name (in order of first appearance) -> its last segment
            cfg_by_key: dict[str, list[ConfigEntry]] = defaultdict(list)
            tables = _name_tables(s["configs"])
            for e in s["configs"]:
                if not (tables and e.fmt == "python" and (e.path, e.keys[:-1]) in tables):
                    cfg_by_key[_norm_key(e.key)].append(e)
            s["configs_by_key"] = cfg_by_key
            # setting-name indexes, so that effective()/settings() cost the matches, not a scan per name
            launch_args: dict[str, list[tuple[Launch, str, Any]]] = defaultdict(list)
            for launch in s["launches"]:
                for src in (launch.script_args, launch.launcher_args):
                    for k, v in src.items():
                        launch_args[_norm_key(k)].append((launch, k, v))
                        if "." in k:  # a dotted flag (torchtitan ``--metrics.log_freq=1``) sets its last segment, as a
                            # dotted argparse option does (``--model.gradient_checkpointing_enable``, see ArgOption.dest)
                            launch_args[_norm_key(k.rsplit(".", 1)[-1])].append((launch, k, v))
            s["launch_args_by_key"] = launch_args
            for attr, field_name in (("arg_options", "dest"), ("fields", "name"), ("assigns", "name"), ("params", "name")):
                idx: dict[str, list[Any]] = defaultdict(list)
                for x in s[attr]:
                    idx[_norm_key(getattr(x, field_name))].append(x)
                s[f"{attr}_by_key"] = idx
            # name indexes (last dotted segment, first module segment): a query costs its candidates, not the repository;
            # the key is computed once per distinct name
            for attr, field_name, key_of in (("refs", "name", _last_segment), ("decorators", "name", _last_segment),
                                             ("attr_assigns", "target", _last_segment), ("imports", "module", _first_segment)):
                by: dict[str, list[Any]] = defaultdict(list)
                seen: dict[str, str] = {}
                get = attrgetter(field_name)
                for x in s[attr]:
                    n = get(x)
                    k = seen.get(n)
                    if k is None:
                        k = seen[n] = key_of(n)
                    by[k].append(x)
                s[f"{attr}_by_name"] = by
            s["suppressed"] = {f.path: f.suppressed for f in fl if f.suppressed}
            self._s = s
        self.check_id = check_id
        self._memo: dict[tuple[Any, ...], list[Setting]] = {}

    def in_library_copy(self, path: str) -> bool:
        """Whether ``path`` sits in a copy of a third-party library kept in the tree (VILA's ``llava/trl/``, see
        :class:`checks.roles.Roles`): only the project calls its functions."""
        return any(path.startswith(d + "/") for d in self._s.get("library_copies", ()))

    def entry_point(self, path: str) -> bool:
        """Whether a launch, a documented command or a console script runs ``path`` (see :class:`checks.roles.Roles`)."""
        return path in self._s.get("entry_points", ())

    # -- views -----------------------------------------------------------
    def for_check(self, check_id: str) -> Facts:
        return Facts((), check_id=check_id, _shared=self._s)

    def _ok(self, path: str, line: int) -> bool:
        if self.check_id is None:
            return True
        sup = self._s["suppressed"].get(path)
        if not sup:
            return True
        ids = sup.get(line)
        return not ids or (self.check_id not in ids and "*" not in ids)

    def _keep(self, items: Iterable[T]) -> list[T]:
        if self.check_id is None or not self._s["suppressed"]:  # nothing to filter (the usual case)
            return list(items)
        return [x for x in items if self._ok(x.path, x.line)]  # type: ignore[attr-defined]

    # -- files -----------------------------------------------------------
    @property
    def files(self) -> dict[str, FileFacts]:
        return self._s["files"]

    def paths_named(self, basename: str) -> list[str]:
        """Paths whose last segment is ``basename``, in scan order."""
        idx = self._s.get("paths_by_basename")
        if idx is None:  # filled, then kept (a memo is kept once made: see checks.query_log)
            idx = defaultdict(list)
            for p in self.files:
                idx[p.rsplit("/", 1)[-1]].append(p)
            self._s["paths_by_basename"] = idx
        return idx.get(basename, [])

    def files_of_kind(self, *kinds: str) -> list[str]:
        return [p for p, f in self.files.items() if f.kind in kinds]

    def errors(self) -> list[tuple[str, str]]:
        return [(p, f.error) for p, f in self.files.items() if f.error]

    # -- python ----------------------------------------------------------
    def calls(self, *patterns: str) -> list[Call]:
        out: list[Call] = []
        for p in patterns:
            if p.endswith(".*"):
                # every name matching "x.y.*" has "y" as one of its dotted segments (see name_matches)
                seg = p[:-2].rsplit(".", 1)[-1]
                pool = self._calls_with_segment(seg) if seg else self._s["calls"]
            else:
                pool = self._s["calls_by_short"].get(p.rsplit(".", 1)[-1], [])
            out.extend(_named(pool, _name_of, (p,)))
        return self._keep(_unique(out))

    def _calls_with_segment(self, seg: str) -> list[Call]:
        """Calls whose dotted name has the segment ``seg``, in repository order.

        Indexed by distinct name, not by call: a repository has tens of thousands of names and
        hundreds of thousands of calls, and the calls of a name are found through its last segment.
        """
        idx = self._s.get("call_names_by_segment")
        if idx is None:  # built on the first prefix-pattern query, from the distinct names alone
            idx = defaultdict(list)
            for name in self._s["call_short_of"]:
                for part in set(name.split(".")):
                    idx[part].append(name)
            self._s["call_names_by_segment"] = idx
        names = set(idx.get(seg, ()))
        if not names:
            return []
        by_short = self._s["calls_by_short"]
        shorts = {n.rsplit(".", 1)[-1] for n in names}
        pools = [[c for c in by_short[short] if c.name in names] for short in shorts]
        return pools[0] if len(pools) == 1 else self._in_order("calls", pools, "calls_by_short", shorts)

    def calls_where(self, short: Callable[[str], bool]) -> list[Call]:
        """Calls whose last name segment passes ``short`` (``lambda s: "flash" in s``), in repository order.

        The test runs once per distinct segment, not once per call: for checks that match names by
        a pattern rather than by the names themselves.
        """
        by_short = self._s["calls_by_short"]
        keys = [s for s in by_short.keys() if short(s)]
        pools = [by_short[s] for s in keys]
        if not pools:
            return []
        return self._keep(pools[0] if len(pools) == 1 else self._in_order("calls", pools, "calls_by_short", keys))

    def calls_with_kw(self, kw: str) -> list[Call]:
        return self._keep(self._s["calls_by_kw"].get(_norm_key(kw), []))

    def calls_selected(self, selection: str) -> list[Call]:
        """Every call that passes :data:`CALL_SELECTIONS` ``[selection]``, in repository order (``records("calls")``
        filtered; a recording of the reads sees this selection of each file's calls read, not every call)."""
        test = CALL_SELECTIONS[selection]
        note = getattr(self._s, "note_selection", None)
        if note is not None:
            note(selection)
            calls = dict.__getitem__(self._s, "calls")
        else:
            calls = self._s["calls"]
        return self._keep(c for c in calls if test(c))

    def calls_prefixed(self, prefixes: tuple[str, ...]) -> list[Call]:
        """Every call whose name starts with one of ``prefixes``, in repository order (``records("calls")`` filtered by
        name), found through the distinct call names and the calls filed under their last segments."""
        names = {n for n in self._s["call_short_of"] if n.startswith(prefixes)}
        if not names:
            return []
        by_short = self._s["calls_by_short"]
        shorts = {n.rsplit(".", 1)[-1] for n in names}
        pools = [[c for c in by_short[short] if c.name in names] for short in shorts]
        return self._keep(pools[0] if len(pools) == 1 else self._in_order("calls", pools, "calls_by_short", shorts))

    def call_keywords(self) -> list[str]:
        """Every keyword any call passes, normalised as :meth:`calls_with_kw` takes it, in order of first appearance (a
        walk over these reads which keywords exist, not every call)."""
        return list(self._s["calls_by_kw"].keys())

    def calls_in(self, paths: Iterable[str]) -> list[Call]:
        """Every call of the files ``paths``, in scan order (as :meth:`all_calls` lists them, without the other files')."""
        want = set(paths)
        files = self.files
        return self._keep(c for p in files if p in want for c in files[p].calls)

    def all_calls(self) -> list[Call]:
        """Every call, for checks that judge arguments rather than names (``LineDataset("data/train.jsonl")``)."""
        return self._keep(self._s["calls"])

    def _candidates(self, kind: str, keys: Iterable[str | None]) -> list[Any]:
        """Records of ``kind`` filed under any of ``keys`` in ``<kind>_by_name``; ``None`` means every record.
        In the repository's order, as a full scan would return them."""
        name = f"{kind}_by_name" if kind in _NAME_INDEXED else f"{kind}_by_key"
        index = self._s[name]
        pools: list[list[Any]] = []
        found: list[str] = []
        for k in keys:
            if k is None:
                return self._s[kind]
            if k in index:
                pools.append(index[k])
                found.append(k)
        if len(pools) == 1:
            return pools[0]
        return self._in_order(kind, pools, name, found)

    def _in_order(self, kind: str, pools: list[list[Any]], index: str | None = None, keys: Iterable[str] = ()) -> list[Any]:
        """The union of ``pools`` (sub-lists of ``kind``'s records) in repository order.

        The repository's list of a kind is the files' own lists one after the other, so the
        order is: files in scan order, then each file's list filtered to the members. The cost is
        the records of the files the pools touch, with no position table kept for every record.

        ``index``, ``keys``: every pool is a sub-list of ``index[k]`` for one of ``keys``. Then what this reads of a file
        is no more than its records filed under those keys, in its order; a recording of the reads (see
        :mod:`checks.query_log`) is told so (``note_order``) instead of seeing each touched file's whole list read.
        """
        members = {id(x) for pool in pools for x in pool}
        order = self._s.get("file_order")
        if order is None:
            order = self._s["file_order"] = {p: i for i, p in enumerate(self._s["files"])}
        note = getattr(self._s, "note_order", None) if index is not None else None
        if note is not None:
            note(index, keys)
            files = dict.__getitem__(self._s, "files")  # the facts themselves: the read is recorded as the keys' order
        else:
            files = self._s["files"]
        out: list[Any] = []
        for path in sorted({x.path for pool in pools for x in pool}, key=order.__getitem__):
            out.extend(x for x in getattr(files[path], kind) if id(x) in members)
        return out

    def imports(self, *modules: str) -> list[Import]:
        pool = self._candidates("imports", {m.split(".", 1)[0] for m in modules})
        # ``i.module == m or i.module.startswith(m + ".")`` (or the same of ``i.full``) for some ``m``: the name or one of its
        # prefixes ending before a dot is among ``modules``; answered once per distinct (module, name)
        wanted = set(modules)
        verdict: dict[tuple[str, str | None], bool] = {}
        out = []
        for i in pool:
            key = (i.module, i.name)
            ok = verdict.get(key)
            if ok is None:
                ok = verdict[key] = _under(i.module, wanted) or (i.name is not None and _under(i.full, wanted))
            if ok:
                out.append(i)
        return self._keep(out)

    def refs(self, *patterns: str) -> list[Ref]:
        pool = self._candidates("refs", map(_pattern_key, patterns))
        return self._keep(_named(pool, _name_of, patterns))

    def decorators(self, *patterns: str) -> list[Decorator]:
        pool = self._candidates("decorators", map(_pattern_key, patterns))
        return self._keep(_named(pool, _name_of, patterns))

    def attr_assigns(self, *patterns: str) -> list[AttrAssign]:
        pool = self._candidates("attr_assigns", map(_pattern_key, patterns))
        return self._keep(_named(pool, _target_of, patterns))

    def arg_options(self, *dests: str) -> list[ArgOption]:
        return self._keep(self._candidates("arg_options", {_norm_key(d) for d in dests}))

    def fields(self, *names: str) -> list[Field]:
        return self._keep(self._candidates("fields", {_norm_key(d) for d in names}))

    def assigns(self, *names: str) -> list[Assign]:
        return self._keep(self._candidates("assigns", {_norm_key(d) for d in names}))

    def param_default(self, path: str, line: int, name: str) -> ParamDefault | None:
        """The ``None``/``False``/``0`` default of parameter ``name`` of the innermost function of ``path`` that spans ``line``
        (a guard ``if compile_config is not None:`` inside it); None when that function has no such parameter."""
        best: ParamDefault | None = None
        for p in self._candidates("params", {_norm_key(name)}):
            if p.path == path and p.name == name and p.start <= line <= p.end and (best is None or p.start > best.start):
                best = p
        return best

    def uses(self, *patterns: str) -> list[Call | Ref | Decorator]:
        """Calls, references and decorators of any of the dotted names (imports alone are not use)."""
        found: list[Any] = [*self.calls(*patterns), *self.decorators(*patterns), *self.refs(*patterns)]
        found.sort(key=lambda x: (x.path, x.line))
        return _unique_loc(found)

    # -- configs ---------------------------------------------------------
    def config(self, *keys: str, fmt: str | None = None) -> list[ConfigEntry]:
        """Entries whose key path ends with one of ``keys`` (``"stage"`` or ``"zero_optimization.stage"``)."""
        out: list[ConfigEntry] = []
        for k in keys:
            parts = [_norm_key(p) for p in k.split(".")]
            for e in self._s["configs_by_key"].get(parts[-1], []):
                if fmt and e.fmt != fmt:
                    continue
                if len(parts) > 1:
                    tail = [_norm_key(str(x)) for x in e.keys if isinstance(x, str)][-len(parts):]
                    if tail != parts:
                        continue
                out.append(e)
        return self._keep(self._selected(_unique(out)))

    def config_under(self, *prefixes: str) -> list[ConfigEntry]:
        """All entries below a section (``"zero_optimization"``), at any depth."""
        want = [[_norm_key(p) for p in pre.split(".")] for pre in prefixes]
        idx = self._s.get("configs_by_any_key")
        if idx is None:  # every entry filed under each key of its path, so a section's query costs its entries
            idx = defaultdict(list)
            for e in self._s["configs"]:
                for k in {_norm_key(str(x)) for x in e.keys[:-1]}:
                    idx[k].append(e)
            self._s["configs_by_any_key"] = idx
        pools = [idx[w[0]] for w in want if w and w[0] in idx]
        out: list[ConfigEntry] = []
        for e in pools[0] if len(pools) == 1 else self._in_order("configs", pools) if pools else ():
            ks = [_norm_key(str(x)) for x in e.keys]
            for w in want:
                for i in range(len(ks) - len(w) + 1):
                    if ks[i : i + len(w)] == w and len(ks) > i + len(w):
                        out.append(e)
                        break
        return self._keep(self._selected(_unique(out)))

    def _selected(self, entries: list[ConfigEntry]) -> list[ConfigEntry]:
        """``entries`` without the dicts of a config menu that the run does not pick (:meth:`menu_unselected`)."""
        if not entries:
            return entries
        off = self.menu_unselected()
        return [e for e in entries if (e.path, e.keys[0] if e.keys else None) not in off] if off else entries

    def menu_unselected(self) -> dict[tuple[str, Any], Any]:
        """The config dicts of a module that are a menu the run picks one entry of by a setting, and that it does not
        pick: ``DS_CONFIG_MAPPER = {"1": STAGE_1, "2": STAGE_2, "3": STAGE_3}`` looked up as
        ``DS_CONFIG_MAPPER.get(self.deepspeed_stage)``. With the setting's value known (a launch flag, a config, or a
        code default, every site agreeing) the dict under that key is the run's and the others are options; a value
        that is no key (``deepspeed_stage: None`` by default) picks none of them. Unknown values leave every dict in.
        ``{(path, dict name): the lookup call}``."""
        if self._memo.get("menu-building"):
            return {}  # the settings read while it is worked out see every dict
        memo = self._s.get("menu_unselected")
        if memo is not None:
            return memo
        self._memo["menu-building"] = True
        try:
            out = self._menu_unselected()
        finally:
            self._memo["menu-building"] = False
        self._s["menu_unselected"] = out
        return out

    def _menu_unselected(self) -> dict[tuple[str, Any], Any]:
        out: dict[tuple[str, Any], Any] = {}
        for c in self._s["calls_by_short"].get("get", []):
            arg = c.args[0] if c.args else None
            parts = c.name.rsplit(".", 2)
            if not (isinstance(arg, Expr) and arg.ref and len(parts) >= 2 and parts[-2].isidentifier()):
                continue
            menu = parts[-2]
            by_path: dict[str, dict[str, str]] = defaultdict(dict)
            for e in self.config_under(menu):
                if (e.fmt == "python" and len(e.keys) == 2 and e.keys[0] == menu and isinstance(e.value, Expr) and e.value.ref
                        and any(x.path == e.path for x in self.config_under(e.value.ref))):
                    by_path[e.path][str(e.keys[1])] = e.value.ref  # a key of the menu -> the module-level dict it names
            entries = next((m for m in by_path.values() if len(set(m.values())) >= 2), None) if len(by_path) == 1 else None
            if entries is None:
                continue
            path = next(iter(by_path))
            values = {s.value for s in self.effective(arg.ref)}
            if len(values) != 1:
                continue
            value = values.pop()
            picked = entries.get(str(value)) if isinstance(value, (int, float, str)) else None
            if value is not None and picked is None and (not isinstance(value, (int, float, str))
                                                         or (isinstance(value, str) and re.search(r"[$<{%]", value))):
                continue  # not a plain value (an expression, ``$STAGE`` of a launch): unknown
            for ref in set(entries.values()) - {picked}:
                out.setdefault((path, ref), c)
        return out

    # -- launchers, env, deps, paths --------------------------------------
    def launches(self, *launchers: str) -> list[Launch]:
        """The launches of the shipped scripts, configs and Makefiles; a repository that ships none, or only launches that
        serve a model: its documented training commands as well (:meth:`documented_runs`)."""
        docs = self.documented_runs()
        items = [*self._s["launches"], *docs] if docs else self._s["launches"]
        if launchers:
            items = [x for x in items if x.launcher in launchers]
        return self._keep(items)

    def documented_runs(self) -> list[Launch]:
        """The README/docs training commands (``torchrun --nproc_per_node=4 train.py --bf16 True ...`` in a code block) of a
        repository that ships no launch of its own, whose script it ships: then the documented command is all there is of
        the run, and its flags are the run's settings (a launcher flag each, cited at the README's line). Empty when any
        launch but a serving one (:func:`_serves`) is shipped: a README is not use where the repository runs its own
        launch."""
        memo = self._s.get("documented_runs")
        if memo is None:
            # (a shipped launch that only serves or demos a model, a Dockerfile's ``python app.py``, runs no training:
            # the README's training command is still all there is of the run)
            memo = self.readme_runs() if all(_serves(x) for x in self._s["launches"]) else []
            self._s["documented_runs"] = memo
        return memo

    def readme_runs(self) -> list[Launch]:
        """The training commands of the project's own README, ``docs/`` and the README of its top-level training folder
        (FireAct's ``finetune/README.md`` runs ``cd finetune/llama_full; torchrun ... finetune.py --fsdp ...``; an example's
        README documents that example, as for run recipes) whose script the repository ships or the document defines,
        shipped launches or not; a command run on the CPU (nanoGPT's "on a MacBook ... --device=cpu --compile=False") is a
        demo, not the run."""
        memo = self._s.get("readme_runs")
        if memo is None:
            memo = [x for x in self._s["doc_launches"] if ("/" not in x.path or x.path.startswith("docs/") or _TRAINING_README.match(x.path))
                    and (self._ships(x.script) or self._doc_defines(x.path, x.script) or self._ships_beside(x))
                    and str(x.script_args.get("device", "")).strip("'\"").lower() != "cpu"]
            self._s["readme_runs"] = memo
        return memo

    def _doc_defines(self, doc: str, script: str | None) -> bool:
        """The document that documents a command also gives the script it runs, whole: a Python block it names as that
        file (``script_block`` hint, :func:`checks.facts.docs_md.extract_doc_scripts`). The script is the document's, so
        the command is as much the run as one whose script the repository ships (the script calls the package's entry)."""
        r = str(script or "").strip("\"'")
        while r.startswith("./"):
            r = r[2:]
        return bool(r) and any(h.kind == "script_block" and h.path == doc and h.value == r for h in self.records("doc_hints"))

    def _ships_beside(self, launch: Launch) -> bool:
        """A documented command run from the folder of its script: a bare ``fine-tune.py`` that the repository ships once, in
        a sub-folder, where a file the command hands it sits beside it (Baichuan2's README runs ``deepspeed fine-tune.py
        ... --deepspeed ds_config.json``; both live in ``fine-tune/``). One match alone is not enough: a README's bare
        ``train.py`` is not ``examples/x/train.py`` unless the command's own files place it there."""
        r = str(launch.script or "").strip("\"'")
        while r.startswith("./"):
            r = r[2:]
        if not r.endswith(".py") or "/" in r or "$" in r:
            return False
        found = self.paths_named(r)
        if len(found) != 1 or "/" not in found[0]:
            return False
        here = found[0].rsplit("/", 1)[0]
        for v in (*launch.script_args.values(), *launch.launcher_args.values()):
            ref = str(v).strip("\"'")
            while ref.startswith("./"):
                ref = ref[2:]
            if ref and not ref.startswith("/") and ".." not in ref.split("/") and f"{here}/{ref}" in self.files:
                return True
        return False

    def _ships(self, script: str | None) -> bool:
        """A documented command's script (``train.py``, ``./src/train.py``, ``pkg.train`` after ``-m``) is a scanned file."""
        r = str(script or "").strip("\"'")
        while r.startswith("./"):
            r = r[2:]
        if not r or "$" in r or "{" in r:
            return False
        if not r.endswith(".py"):
            if "/" in r or not re.fullmatch(r"[\w.]+", r):
                return False
            stem = r.replace(".", "/")
            return any(p.endswith((f"{stem}.py", f"{stem}/__main__.py")) for p in [*self.paths_named(stem.rsplit("/", 1)[-1] + ".py"),
                                                                                   *self.paths_named("__main__.py")])
        if r.startswith("/"):
            # the checkout at the file system's root, as in a container (GOT-OCR2.0's README: ``deepspeed
            # /GOT-OCR-2.0-master/GOT/train/train_GOT.py``): the whole rest is the file's path in the repository
            r = r.lstrip("/")
            return "/" in r and r in self.files
        # relative to the repository's root, as the README runs it; a bare ``train.py`` is not ``examples/x/train.py``
        return any(p == r or ("/" in r and p.endswith("/" + r)) for p in self.paths_named(r.rsplit("/", 1)[-1]))

    def envs(self, *prefixes: str) -> list[EnvVar]:
        return self._keep(e for e in self._s["envs"] if not prefixes or any(e.name.startswith(p) for p in prefixes))

    def deps(self, *names: str) -> list[Dependency]:
        # names compared as PEP 503 normalises them: ``flash_attn`` (the import) finds ``flash-attn`` (the distribution)
        want = {_PEP503.sub("-", n).lower() for n in names}
        found = [d for d in self._s["deps"] if not want or _PEP503.sub("-", d.name).lower() in want]
        if any(d.path.rsplit("/", 1)[-1] == "cog.yaml" for d in found):
            # a Cog predictor's build pins (``cog.yaml``) are its serving image's; a package another dependency file of the
            # project declares is the project's own pin (LLaVA: ``transformers==4.37.2`` in pyproject.toml, 4.31.0 for its
            # Replicate demo)
            declared = {d.name for d in self._s["deps"] if d.path.rsplit("/", 1)[-1] != "cog.yaml"}
            found = [d for d in found if d.path.rsplit("/", 1)[-1] != "cog.yaml" or d.name not in declared]
        return self._keep(found)

    def path_literals(self) -> list[PathLiteral]:
        return self._keep(self._s["paths"])

    def records(self, kind: str) -> list[Any]:
        """Every record of one kind (``"calls"``, ``"configs"``, ``"assigns"``, ...), suppressions applied."""
        return self._keep(self._s[kind])

    # -- effective settings ----------------------------------------------
    def settings(self, *names: str) -> list[Setting]:
        """Every place that sets one of ``names`` (config keys, call keywords, launcher flags, defaults)."""
        key = ("settings", names)
        if key not in self._memo:
            out: list[Setting] = []
            for n in names:
                out.extend(self._settings(_norm_key(n), include_calls=True, depth=0))
            self._memo[key] = _unique_settings(out)
        return list(self._memo[key])

    def effective(self, *names: str, near: str | None = None) -> list[Setting]:
        """The settings that take effect, highest precedence first.

        Code defaults (argparse ``default=``, dataclass field defaults) count only when no
        config file or launcher flag sets the same name; a call keyword that reads
        ``args.x`` is replaced by the effective values of ``x``.

        ``near``: the file that reads the setting (``DataLoader(num_workers=args.num_workers)`` in
        ``near``). Its own code defaults replace other files' defaults, and launchers that run
        that very script replace launchers of other scripts. Results are memoised per view, so a
        check may ask once per call site without a cost that grows with the repository.
        """
        key = ("effective", names, near)
        if key not in self._memo:
            if near is None:
                out: list[Setting] = []
                for n in names:
                    out.extend(_shadow(self._settings(_norm_key(n), include_calls=True, depth=0)))
                out = _unique_settings(out)
                out = self._overridden_fields(out)
                out.sort(key=lambda s: -s.rank)
                out = self._majority(out, names)
                out = self._run_recipe_first(out, names)
            else:
                out = _near(self.effective(*names), near)
            self._memo[key] = out
        return list(self._memo[key])

    def _overridden_fields(self, out: list[Setting]) -> list[Setting]:
        """The settings less the field defaults of a config class that a subclass declares again (Open-Reasoner-Zero:
        ``BasePPOExpConfig.adam_offload: bool = True``, and each ``playground/*.py`` run its own ``class
        PPOExpConfig(BasePPOExpConfig)`` with ``adam_offload: bool = False``): the runs build the subclasses, whose default
        replaces the base's, when nothing builds the base class itself."""
        owners = {x.key.rsplit(".", 1)[0] for x in out if x.source == "field-default" and "." in x.key}
        if len(owners) < 2:
            return out
        bases = self._s.get("_class_bases")
        if bases is None:  # class name -> the last parts of its bases' names, over every class of the scan
            bases = self._s["_class_bases"] = {}
            for c in self._s["classes"]:
                bases.setdefault(c.name, set()).update(b.rsplit(".", 1)[-1] for b in c.bases)
        # ... unless some code builds the base itself (litgpt's ``Alpaca`` data module, which ``Dolly(Alpaca)`` extends)
        hidden = {b for o in owners for b in bases.get(o, ()) if b in owners and b != o and not self.calls(b)}
        if not hidden:
            return out
        return [x for x in out if not (x.source == "field-default" and x.key.rsplit(".", 1)[0] in hidden)]

    def run_recipe(self) -> tuple[tuple[tuple[str, str], ...], str] | None:
        """((function, file), ...) and the README place of the recipe function a README's Python quickstart builds its run
        from (``cfg = llama32_1b_pretrain_config(); pretrain(cfg, forward_step)``, a ``run_recipe`` doc hint): the function,
        then the project functions it starts from (``cfg = _pretrain_common()``), nearest first, each defined in one file.
        None without such a quickstart, or when the function is not found in exactly one file of the module it comes from."""
        key = ("run-recipe",)
        if key not in self._memo:
            found: tuple[tuple[tuple[str, str], ...], str] | None = None
            for h in self.records("doc_hints"):
                if h.kind != "run_recipe" or ("/" in h.path and not h.path.startswith("docs/")):
                    continue  # the project's own README and docs/, as documented_recipes
                module, _, name = h.value.partition(":")
                stem = module.replace(".", "/")
                homes = {p for p in self._defining(name) if p.endswith(f"{stem}.py") or f"{stem}/" in p}
                if len(homes) != 1:
                    continue
                funcs: list[tuple[str, str]] = [(name, homes.pop())]
                for fn, path in funcs[:3]:  # the recipe and up to two levels of the functions it builds on
                    for c in self.files[path].calls:
                        short = c.name.rsplit(".", 1)[-1]
                        where = self._defining(short)
                        if c.func == fn and len(where) == 1 and not _TRAIN_ENTRY.search(short) and short not in {f for f, _ in funcs}:
                            funcs.append((short, next(iter(where))))
                found = (tuple(funcs), f"{h.path}:{h.line}")
                break
            self._memo[key] = found  # type: ignore[assignment]
        return self._memo[key]  # type: ignore[return-value]

    def _defining(self, name: str) -> set[str]:
        """The files that define a function ``name`` (one whose body makes a call), memoised per scan."""
        memo = self._s.get("defining_funcs")
        if memo is None:
            memo = defaultdict(set)
            note = getattr(self._s, "note_selection", None)
            if note is not None:  # recorded as a read of each file's function names alone (CALL_FUNCS)
                note(CALL_FUNCS)
                calls = dict.__getitem__(self._s, "calls")
            else:
                calls = self._s["calls"]
            for c in self._keep(calls):
                if c.func:
                    memo[c.func].add(c.path)
            self._s["defining_funcs"] = memo
        return memo.get(name, set())

    def _run_recipe_first(self, cands: list[Setting], names: tuple[str, ...]) -> list[Setting]:
        """The README's run recipe decides a name it sets: its attribute assignments on the config it builds
        (``cfg.dataset.num_workers = 8``) and its call keywords (``LoggerConfig(log_interval=10)`` in the base it starts from),
        nearest function first, replace every other recipe's value of the names asked for."""
        run = self.run_recipe()
        if run is None:
            return cands
        funcs = {fp: i for i, fp in enumerate(run[0])}
        own: list[tuple[int, Setting]] = []
        for n in names:
            name = _norm_key(n)
            for a in self.attr_assigns(n):
                i = funcs.get((a.func or "", a.path))
                if i is not None and _norm_key(a.attr) == name and not isinstance(a.value, Expr) and a.guard is None:
                    own.append((i, Setting(n, a.value, a.path, a.line, "config", a.text, a.target, 3)))
            for c in self.calls_with_kw(n):
                i = funcs.get((c.func or "", c.path))
                if i is not None and not isinstance(c.kwargs[n], Expr) and c.guard is None:
                    own.append((i, Setting(n, c.kwargs[n], c.path, c.kw_line(n), "config", c.text, f"{c.short}({n}=)", 3)))
        if not own:
            return cands
        first = min(i for i, _ in own)  # the nearest function that sets a name decides it: the recipe over its base
        # the names of one query are one setting's spellings (``tensor_model_parallel_size``, ``tensor_parallel_size``): the
        # run recipe's value of one of them replaces the other recipes' values of all of them
        return [s for i, s in own if i == first]

    def _majority(self, cands: list[Setting], names: tuple[str, ...] = ()) -> list[Setting]:
        """Recipes that disagree (``num_workers: 4`` in 47 example YAMLs, ``0`` in 2) count by their majority.

        A recipe is one way the project documents to run its training, and each recipe runs with one value of a setting:
        - a YAML/JSON config file: the number it sets;
        - a Python recipe module (nanoGPT's ``config/train_gpt2.py``, exec'ed over ``train.py``'s module-level defaults,
          see :meth:`recipe_modules`): the number it sets, else the entry point's own module-level value (what runs);
        - a launch script (Megatron-LM's ~120 ``examples/**/*.sh``): the ``--flag`` it passes, else, for a launch of a script
          that other launches pass the flag to, the code default of the flag (argparse / config dataclass) when the
          repository's code defaults of that name agree on one number; a launch that sets it to a variable is not counted.
        - a YAML/JSON recipe of the same family that leaves the name unset: the code default, when known (:meth:`_sibling_recipes`).
        Recipes vote by the verdict band a check registered for the name (:func:`register_vote_bands`: 4 and 8 loader workers
        are one "4 or more" vote), else by exact value. The README-documented recipes decide only when no band has a majority,
        and are named in the verdict when they run otherwise.
        With three or more recipes holding two or more values, the distribution is kept for the report
        (:meth:`distributions`). When one value is held by more than half of the recipes, the settings that only minority
        recipes hold are left out (and a shadowed code default that the majority runs with comes back, so a check cites it);
        without a majority nothing is left out and the checks judge every value, as before. Tuning values only (workers,
        intervals, sizes): a feature switch some recipes turn on (``fsdp``) is an option the project offers, and ``null``
        is a recipe leaving it unset.
        """
        by_name: dict[str, list[Setting]] = defaultdict(list)
        for c in cands:
            by_name[_norm_key(c.name)].append(c)
        drop: set[int] = set()
        add: list[Setting] = []
        for name, group in by_name.items():
            # a base config's value that every launch naming it overrides runs nowhere (Step-DPO's config_full.yaml)
            if any(c.source == "config" for c in group) and (over := self._overridden_bases(name)):
                drop |= {id(c) for c in group if c.source == "config" and self._base_overridden(c, over)}
            if _LAYOUT.search(name):
                continue  # a parallel degree is a layout the project offers for its larger models, not a tuning value
            d, a = self._recipe_vote(name, group)
            drop |= d
            add += a
        if not drop and not add:
            return cands
        return [c for c in cands if id(c) not in drop] + add

    def _recipe_vote(self, name: str, group: list[Setting]) -> tuple[set[int], list[Setting]]:
        """(ids of settings only minority recipes hold, shadowed defaults the majority runs with) for one setting name."""
        units: dict[str, set[str]] = defaultdict(set)  # recipe -> values (repr) it runs with
        holders: dict[str, list[Setting]] = defaultdict(list)  # value (repr) -> settings that give it to a recipe
        inherited: dict[str, tuple[int, str]] = {}  # value -> (recipes that run with a default, where it is set)
        modules = self.recipe_modules()
        configs = self.config_modules()
        launched: set[str] = set()
        serving: list[Setting] = []
        overridden = self._overridden_bases(name)
        for c in group:
            if not _tuning(c.value):
                continue
            v = repr(c.value)
            if c.source == "config" and self._base_overridden(c, overridden):
                continue  # a base config whose every launch sets the name itself: its value never runs (Step-DPO)
            if c.source == "config" and (c.path.endswith((".yaml", ".yml", ".json")) or c.path in modules or c.path in configs):
                units[c.path].add(v)
                holders[v].append(c)
            elif c.source == "launcher" and c.script and _NOT_TRAINING.search(_script_key(c.script)):
                serving.append(c)  # an inference/generation launch is not a training recipe, nor its setting
            elif c.source == "launcher":
                units[c.path].add(v)
                holders[v].append(c)
                if c.script:
                    launched.add(_script_key(c.script))
        # a recipe module that leaves the name unset runs with its entry point's module-level value
        top_level = {(a.path, a.line) for a in self._s["assigns_by_key"].get(name, ()) if _module_level(a)}
        for mod, entry in modules.items():
            if any(c.path == mod for c in group if c.source == "config"):
                continue
            own = [x for x in self._s["assigns_by_key"].get(name, []) if x.path == entry and _module_level(x) and self._ok(x.path, x.line)]
            if len(own) == 1 and _tuning(own[0].value):
                v = repr(own[0].value)
                units[mod].add(v)
                base = next((c for c in group if c.source == "assign" and c.path == entry and c.line == own[0].line), None)
                holders[v].append(base or Setting(own[0].name, own[0].value, entry, own[0].line, "assign", own[0].text, own[0].name, 1))
                n, _ = inherited.get(v, (0, ""))
                inherited[v] = (n + 1, f"{entry}:{own[0].line}")
        # a YAML/JSON recipe of the same family that leaves the name unset runs with the code default of that name, when the
        # repository's code defaults agree on one number (a config dataclass field, an argparse default): counted as a
        # launch without the flag is
        setters = {c.path for c in group if c.source == "config" and c.path.endswith((".yaml", ".yml", ".json"))}
        if len(setters) >= 2:
            yaml_default = self._known_default(name, set())
            siblings = self._sibling_recipes(setters) if yaml_default is not None else []
            if yaml_default is not None and siblings:
                v = repr(yaml_default.value)
                for p in siblings:
                    units[p].add(v)
                n, _ = inherited.get(v, (0, ""))
                inherited[v] = (n + len(siblings), f"{yaml_default.path}:{yaml_default.line}")
                holders[v].append(yaml_default)
        # a launch of a script that other launches pass the flag to, without the flag: the code default, when known
        default: Setting | None = None
        if launched:
            default = self._known_default(name, launched)
            if default is not None:
                v = repr(default.value)
                seen = {c.path for c in group if c.source == "launcher"}
                for launch in self.launches():
                    if launch.path in seen or not launch.script or _script_key(launch.script) not in launched:
                        continue
                    if any(_norm_key(k) == name for k in (*launch.script_args, *launch.launcher_args)):
                        continue  # set to a value that is not a number (``--log-interval $LOG_INTERVAL``): not counted
                    base_cfg = self._base_config_value(launch, group)
                    if base_cfg is not None:
                        # the launch names the config file it starts from (EasyR1 ``python3 -m verl.trainer.main
                        # config=examples/config.yaml ...``): unset keys take that file's value, not the code default
                        bv = repr(base_cfg.value)
                        units[launch.path].add(bv)
                        seen.add(launch.path)
                        n, _ = inherited.get(bv, (0, ""))
                        inherited[bv] = (n + 1, f"{base_cfg.path}:{base_cfg.line}")
                        continue
                    units[launch.path].add(v)
                    seen.add(launch.path)
                    n, _ = inherited.get(v, (0, ""))
                    inherited[v] = (n + 1, f"{default.path}:{default.line}")
                if v in inherited:
                    holders[v].append(default)
        if len(units) < 3:
            return set(), []
        by_value: dict[str, set[str]] = defaultdict(set)
        for u, vs in units.items():
            for v in vs:
                by_value[v].add(u)
        # recipes vote by the verdict their value gets (``num_workers`` 4 and 8 are both "4 or more"), where a check registered
        # its bands for the name (:func:`register_vote_bands`), else by exact value
        band = _band_of(name)
        by_key: dict[str, set[str]] = defaultdict(set)
        for v, us in by_value.items():
            by_key[band(v)] |= us
        top_key, top_units = max(by_key.items(), key=lambda kv: (len(kv[1]), -min(_num(v) for v in by_value if band(v) == kv[0])))
        top = max((v for v in by_value if band(v) == top_key), key=lambda v: len(by_value[v]))
        judged = "majority"
        documented = self.documented_recipes()
        doc_units = {u: vs for u, vs in units.items() if u in documented}
        doc_votes: dict[str, int] = defaultdict(int)
        for vs in doc_units.values():
            for k in {band(v) for v in vs}:
                doc_votes[k] += 1
        # (a tie among the documented recipes' values decides nothing: LLaVA-UHD documents one ``train.sh`` whose two stages
        # pass 16 and 1; picking one of them followed the hash seed of the process)
        ranked = sorted(doc_votes.items(), key=lambda kv: (-kv[1], kv[0]))
        doc_top = ranked[0] if ranked and (len(ranked) == 1 or ranked[1][1] < ranked[0][1]) else None
        if len(top_units) * 2 > len(units):
            if len(top_units) > len(by_value[top]):  # the majority is a verdict several values share
                judged += f": {top_key} in {len(top_units)} of {len(units)} recipes"
            off = sorted({documented[u] for u, vs in doc_units.items() if all(band(v) != top_key for v in vs)})
            if off:
                # the majority decides; a documented recipe that runs otherwise is named, so a user who follows it knows
                doc_vals = sorted({_fmt(v) for u, vs in doc_units.items() if documented[u] in off for v in vs})
                judged += f"; the recipe{'s' if len(off) > 1 else ''} documented at {', '.join(off[:3])} {'use' if len(off) > 1 else 'uses'} " \
                          f"{', '.join(doc_vals)}"
        elif doc_top is not None and doc_top[1] * 2 > len(doc_units):
            # no majority: the recipes the README documents decide when they agree (or most of them do)
            top_key = doc_top[0]
            top = max((v for u, vs in doc_units.items() for v in vs if band(v) == top_key), key=lambda v: len(by_value[v]))
            judged = "documented " + ", ".join(sorted(documented[u] for u in doc_units)[:3])
        else:
            # no majority: the documented default decides, the value a run gets when its recipe leaves the name unset (the
            # entry point's own module-level value, or the launched framework's code default); without one nothing is left out
            entry_vals = {repr(c.value): c for c in group if c.source == "assign" and c.path in set(modules.values()) and (c.path, c.line) in top_level
                          and _tuning(c.value)}
            base = next(iter(entry_vals.values())) if len(entry_vals) == 1 else default
            if base is None:
                judged = "none"
            else:
                top = repr(base.value)
                top_key = band(top)
                if all(c is not base for c in holders[top]):
                    holders[top].append(base)
                judged = f"default {base.path}:{base.line}"
        if len(by_value) >= 2:
            self._s.setdefault("distributions", {})[name] = {v: len(us) for v, us in by_value.items()}
            self._s.setdefault("distribution_defaults", {})[name] = dict(inherited)
            self._s.setdefault("distribution_judged", {})[name] = judged
            if judged != "none":
                self._s.setdefault("distribution_value", {})[name] = top
        if judged == "none":
            return set(), []
        tops = {v for v in holders if band(v) == top_key} | {top}
        # in the order the holders were found (a set's order changes with the hash seed, and the evidence with it)
        kept = [c for v in [*(v for v in holders if v in tops), *sorted(tops - set(holders))] for c in holders[v]]
        keep = {id(c) for c in kept}
        drop = {id(c) for v, cs in holders.items() if v not in tops for c in cs if id(c) not in keep} | {id(c) for c in serving}
        # an entry point's value that every recipe module overrides, or that only minority recipes inherit, is not run
        for c in group:
            if c.source == "assign" and c.path in set(modules.values()) and (c.path, c.line) in top_level and repr(c.value) not in tops:
                drop.add(id(c))
        ids = {id(c) for c in group}
        add = _unique([c for c in kept if id(c) not in ids])
        return drop, add

    def _known_default(self, name: str, scripts: set[str]) -> Setting | None:
        """The code default of a flag for launches of ``scripts`` (argparse ``default=``, config dataclass field): the
        launched script's own when it defines one, else the repository's code defaults of that name when they agree on one
        number (Megatron-LM: ``log_interval: int = 100``). A data-preparation script's own flag of that name
        (``tools/preprocess_data.py --log-interval``, its progress interval) is not the trainer's. None when unknown."""
        out: list[Setting] = [s for s in self._settings(name, include_calls=False, depth=0)
                              if s.source in ("argparse-default", "field-default") and _tuning(s.value) and not _TEST_PATH.search(s.path)]
        own = [s for s in out if s.path.rsplit("/", 1)[-1] in scripts]
        out = own or [s for s in out if not _DATA_PREP.search(s.path)]
        if not out or len({repr(s.value) for s in out}) != 1:
            return None
        return out[0]

    def sibling_recipes(self, setters: set[str], share: float = 0.5) -> list[str]:
        """YAML/JSON recipes of the same family as ``setters`` that do not set the name (see :meth:`_sibling_recipes`)."""
        return self._sibling_recipes(setters, share)

    def _sibling_recipes(self, setters: set[str], share: float = 0.5) -> list[str]:
        """YAML/JSON recipe files of the same family as ``setters`` (the recipes that set a name) that do not set it: files
        outside tests whose top-level keys include at least three of the keys most setters share (``model_name_or_path``,
        ``learning_rate``, ...) and at least ``share`` of them, so a DeepSpeed JSON or a CI workflow is not taken for a
        training recipe. A lower share admits recipes of another kind of the same project (torchtune's PPO recipe has
        40 top-level keys, its SFT recipes share 17 of them)."""
        tops = self._s.get("config_top_keys")
        if tops is None:
            tops = defaultdict(set)
            for e in self._s["configs"]:
                if e.fmt in ("yaml", "json") and e.keys and isinstance(e.keys[0], str):
                    tops[e.path].add(e.keys[0])
            self._s["config_top_keys"] = tops
        count: dict[str, int] = defaultdict(int)
        for p in setters:
            for k in tops.get(p, ()):
                count[k] += 1
        common = {k for k, n in count.items() if n * 2 > len(setters)}
        if len(common) < 3:
            return []
        return sorted(p for p, ks in tops.items() if p not in setters and len(ks & common) >= 3 and len(ks & common) >= share * len(common)
                      and not _TEST_PATH.search(p) and not p.startswith(".github/") and self._ok(p, 1))

    def documented_recipes(self) -> dict[str, str]:
        """Recipe files a command in the project's README or docs/ names (``python train.py config/train_gpt2.py`` ->
        ``config/train_gpt2.py``: ``README.md:118``), scripts such a command runs (``bash scripts/train_sft.sh``), and
        recipes and launch scripts it links to (``[`finetune.sh`](scripts/v1_6/train/7b/finetune.sh)``)."""
        memo = self._s.get("documented_recipes")
        if memo is None:
            memo = {}
            for p, ff in self.files.items():
                if ff.kind != "docs" or ("/" in p and not p.startswith("docs/")):
                    continue  # the project's own README and docs/, not an example folder's README about its one recipe
                # a few linked recipes are the way to train; a table that links every example config (oumi's model
                # catalogue: FFT / LoRA / QLoRA configs of each family) is a menu, and documents no one run
                links = {h.value for h in ff.doc_hints if h.kind == "config_link" and h.value in self.files}
                for h in ff.doc_hints:
                    if h.kind == "config_link" and len(links) > _FEW_LINKS:
                        continue
                    if h.kind in ("command", "command_file", "config_link", "shell_command") and h.value in self.files \
                            and h.value not in memo:
                        memo[h.value] = f"{p}:{h.line}"
            self._s["documented_recipes"] = memo
        return memo

    def _doc_files(self) -> set[str]:
        """Files a documented command passes as its script's argument (``command_file`` hints)."""
        memo = self._s.get("doc_command_files")
        if memo is None:
            memo = {h.value for ff in self.files.values() if ff.kind == "docs" for h in ff.doc_hints if h.kind == "command_file"}
            self._s["doc_command_files"] = memo
        return memo

    def recipe_modules(self) -> dict[str, str]:
        """Python recipe modules -> the entry point whose module-level defaults they override.

        nanoGPT runs ``python train.py config/train_gpt2.py``: ``train.py`` exec's ``configurator.py``, which exec's the
        config module over ``train.py``'s module-level constants. A recipe module is a ``.py`` file in a ``config``/``configs``/
        ``recipes`` folder (or named as the script's argument by a documented command) made only of top-level assignments (no function, class, argparse or attribute assignment), whose
        constant names are all module-level constants of one entry point that calls ``exec`` at module level. A recipe that
        only evaluates (named ``eval*``/``sample*``/``bench*``, or setting ``eval_only = True``) trains nothing and is left out.
        """
        memo = self._s.get("recipe_modules")
        if memo is not None:
            return memo
        memo = {}
        files = self.files
        entries: dict[str, set[str]] = {}
        # files that call exec at module level, in scan order (the calls are in it), found through the index
        for p in dict.fromkeys(c.path for c in self._s["calls_by_short"].get("exec", ()) if c.func is None):
            ff = files[p]
            if ff.kind == "python":
                names = {a.name for a in ff.assigns if _module_level(a)}
                if names:
                    entries[p] = names
        if entries:
            for p, ff in files.items():
                named = bool(_RECIPE_DIR.search(p)) or p in self._doc_files()  # in a config folder, or named by a documented command
                if p in entries or ff.kind != "python" or not named or _EVAL_RECIPE.match(p.rsplit("/", 1)[-1]):
                    continue
                if ff.arg_options or ff.fields or ff.attr_assigns or ff.decorators or any(c.func is not None for c in ff.calls):
                    continue
                names = {a.name for a in ff.assigns}
                if len(names) < 2 or not all(_module_level(a) for a in ff.assigns):
                    continue
                if any("eval_only" in a.name.lower() and truthy(a.value) for a in ff.assigns):
                    continue
                fits = sorted(e for e, en in entries.items() if names <= en)
                if len(fits) == 1:
                    memo[p] = fits[0]
        self._s["recipe_modules"] = memo
        return memo

    def config_modules(self) -> frozenset[str]:
        """Python config files that a config loader reads: each one is a training recipe, as a YAML file is.

        mmengine/mmcv projects (xtuner, the OpenMMLab toolkits) run ``train.py <config>.py``, and the entry point loads the
        file with ``Config.fromfile(args.config)``: its module-level assignments (``dataloader_num_workers = 0``,
        ``default_hooks = dict(logger=dict(type=LoggerHook, interval=10))``, ``visualizer = None``) are the run's settings.
        A config file is a ``.py`` file under a ``config``/``configs`` folder (at any depth, not a test, not ``__init__.py``)
        made of module-level statements only (no function, class, argparse option or dataclass field), with at least
        three module-level assignments, in a repository that calls such a loader (``Config.fromfile``,
        ``Config.from_file``, ``LazyConfig.load``). Empty without a loader: a folder of Python modules named ``configs``
        is code, not recipes."""
        memo = self._s.get("config_modules")
        if memo is not None:
            return memo
        by_short = self._s["calls_by_short"]
        loaders = [c for k in ("fromfile", "from_file", "load") for c in by_short.get(k, ())]
        memo = self._s["config_modules"] = python_config_modules(self.files, loaders)
        return memo

    @staticmethod
    def _base_refs(launch: Launch) -> list[str]:
        """The YAML/JSON files a launch names as its base config (``config=examples/config.yaml``, ``--config_file
        recipe.yaml``, ``--config recipe.json``, a recipe as the script's first argument), as written, ``./`` dropped."""
        out: list[str] = []
        for k, v in launch.script_args.items():
            if _norm_key(k) not in _BASE_CONFIG_KEYS or not isinstance(v, str):
                continue
            ref = v.strip("'\"")
            while ref.startswith("./"):
                ref = ref[2:]
            if ref.endswith((".yaml", ".yml", ".json")) and "$" not in ref:
                out.append(ref)
        return out

    def _overridden_bases(self, name: str) -> set[str]:
        """Base configs (YAML/JSON) that launches name, each of which passes ``name`` itself (Step-DPO: every
        ``train.py configs/config_full.yaml --gradient_accumulation_steps=8`` overrides the file's 16): the file's value of
        ``name`` is no run's. A file some launch names without the flag keeps its value."""
        bases = self._s.get("launch_bases")
        if bases is None:  # file -> the flags of each launch that names it (built once per scan)
            bases = {}
            for launch in self.launches():
                refs = self._base_refs(launch)
                if refs:
                    keys = frozenset(_norm_key(k) for k in launch.script_args)
                    for p in self._s["files"]:
                        # (or a checkout's absolute path that ends with it: LLM-Shearing's ``config_file=/scratch/gpfs/
                        # .../LLM-Shearing/llmshearing/configs/llama2/1.3b.yaml``)
                        if any(p == r or p.endswith("/" + r) or (r.startswith("/") and "/" in p and r.endswith("/" + p))
                               for r in refs):
                            bases.setdefault(p, []).append(keys)
            self._s["launch_bases"] = bases
        # a flag of the setting's last segment, or one of its full dotted key (an OmegaConf dotlist override, LLM-Shearing's
        # ``train_loader.num_workers=0`` over the base YAML's ``train_loader: {num_workers: 8}``)
        return {p for p, flags in bases.items() if all(name in ks or any(k.endswith("." + name) for k in ks) for ks in flags)}

    def _base_overridden(self, c: Setting, over: set[str]) -> bool:
        """Whether every launch that names ``c``'s file as its base config passes ``c`` itself (see :meth:`_overridden_bases`):
        by its name, or by its full dotted key (``train_loader.num_workers``; not ``eval_loader.num_workers``)."""
        if c.path not in over:
            return False
        name, key = _norm_key(c.name), _norm_key(c.key)
        flags = self._s["launch_bases"][c.path]
        return all(name in ks or key in ks for ks in flags)

    def _base_config_value(self, launch: Launch, group: list[Setting]) -> Setting | None:
        """The setting of this name in the YAML/JSON file a launch names as its base config (:meth:`_base_refs`); None
        when it names none, or that file leaves it unset."""
        for ref in self._base_refs(launch):
            for c in group:
                if c.source == "config" and (c.path == ref or c.path.endswith("/" + ref)) and _tuning(c.value):
                    return c
        return None

    def distributions(self) -> dict[str, dict[str, int]]:
        """Setting name -> {value (repr) -> number of recipes}, for names whose recipes disagree (see ``_majority``)."""
        return dict(self._s.get("distributions", {}))

    def distribution_judged(self) -> dict[str, str]:
        """Setting name -> how it is judged: ``"majority"``, ``"default path:line"`` (no majority: the documented default),
        or ``"none"`` (no majority and no default: every value is judged)."""
        return dict(self._s.get("distribution_judged", {}))

    def judged_value(self, name: str) -> str | None:
        """The value (repr) recipes that disagree on ``name`` are judged by (their majority, else the documented default);
        None when they agree, are too few, or nothing decides. Call after :meth:`effective` of that name."""
        return self._s.get("distribution_value", {}).get(_norm_key(name))

    def distribution_defaults(self) -> dict[str, dict[str, tuple[int, str]]]:
        """Setting name -> {value (repr) -> (recipes that leave it unset and run with a default, ``path:line`` of it)}."""
        return dict(self._s.get("distribution_defaults", {}))

    def _settings(self, name: str, include_calls: bool, depth: int, reader: str | None = None) -> list[Setting]:
        """``reader``: the file whose expression reads ``name`` (a keyword ``x=n_nodes`` resolved to the settings of
        ``n_nodes``): a local variable of a function in another file is not what it reads (``n_nodes = 8`` in a cost
        model's ``example()`` is not ``ParallelismConfig(pipeline_parallel_size=self.n_nodes)`` of an experiment config)."""
        out: list[Setting] = []
        entries = self._s["configs_by_key"].get(name, [])
        off = self.menu_unselected() if entries else {}
        for e in entries:
            if isinstance(e.value, Container) or not self._ok(e.path, e.line):
                continue
            if e.path == "pyproject.toml" or e.path.endswith("/pyproject.toml"):
                continue  # packaging metadata (NeMo-RL's ``[project.optional-dependencies] fsdp = [...]``), no training setting
            if e.keys and isinstance(e.keys[0], int) and e.path.endswith(".json"):
                continue  # a record of a top-level JSON array is data (Gorilla's ``data/apizoo/*.json`` API descriptions), no setting
            if off and (e.path, e.keys[0] if e.keys else None) in off:
                continue  # a dict of a config menu the run does not pick
            if isinstance(e.value, Expr) and e.value.ref is not None and _norm_key(e.value.ref) == name:
                continue  # ``{"make_vocab_size_divisible_by": args.make_vocab_size_divisible_by}`` passes the setting on: no value
            if _forwards_own_guard(e):
                continue  # ``kwargs["x"] = True`` under ``if config.x:`` passes the flag on as well: no value of its own
            out.append(Setting(name, e.value, e.path, e.line, "config", e.text, e.dotted, 2))
        for launch, k, v in self._s["launch_args_by_key"].get(name, []):
            line = launch.arg_line(k)
            if self._ok(launch.path, launch.line) and self._ok(launch.path, line):
                out.append(Setting(name, v, launch.path, line, "launcher", launch.text, f"--{k}", 3, launch.script,
                                   spelled=launch.arg_text.get(k)))
        for launch in self.documented_runs():  # a few commands of a README, when the repository ships no launch
            for src in (launch.script_args, launch.launcher_args):
                for k, v in src.items():
                    if _norm_key(k) == name:
                        out.append(Setting(name, v, launch.path, launch.arg_line(k), "launcher", launch.text, f"--{k}", 3, launch.script))
        for a in self._s["arg_options_by_key"].get(name, []):
            if self._ok(a.path, a.line):
                long_flags = [x for x in a.flags if x.startswith("--")]  # the flag as written (--model.x), not only its dest
                out.append(Setting(name, a.default, a.path, a.line, "argparse-default", a.text, long_flags[0] if long_flags else f"--{a.dest}", 0))
        for f in self._s["fields_by_key"].get(name, []):
            if self._ok(f.path, f.line):
                fill = self._post_init_fill(f) if f.default is None else None
                if fill is not None:
                    out.append(Setting(name, fill.value, fill.path, fill.line, "field-default", fill.text, f"{f.owner}.{f.name}", 0))
                    continue
                out.append(Setting(name, f.default, f.path, f.line, "field-default", f.text, f"{f.owner}.{f.name}", 0))
        modules = self.recipe_modules()
        configs = self.config_modules()
        for a in self._s["assigns_by_key"].get(name, []):
            if reader is not None and a.func is not None and a.path != reader:
                continue
            if a.guard is not None and self.arm_state(a) is not True:
                continue  # an arm of a conditional expression counts once the settings choose it (see alternatives)
            if self._ok(a.path, a.line):
                if a.path in modules or a.path in configs:  # a recipe module / a Python config file: a config file
                    out.append(Setting(name, a.value, a.path, a.line, "config", a.text, a.name, 2, guard=a.guard))
                else:
                    out.append(Setting(name, a.value, a.path, a.line, "assign", a.text, a.name, 1, guard=a.guard))
        if include_calls:
            # ``x=args.lr`` in many calls resolves to the same settings of ``lr``: add them once (callers de-duplicate
            # by place anyway; repeating them made a query cost calls x settings in time and memory)
            resolved_refs: set[tuple[str, str | None]] = set()
            for c in self._s["calls_by_kw"].get(name, []):
                for k, v in c.kwargs.items():
                    if _norm_key(k) != name:
                        continue
                    line = c.kw_line(k)
                    if not self._ok(c.path, line) and not self._ok(c.path, c.line):
                        continue
                    if isinstance(v, Expr) and v.ref and _evaluation_ref(name, v.ref):
                        continue  # ``DataLoader(num_workers=cfg.num_workers_valid)``: the validation loader's, not this setting
                    if isinstance(v, Expr) and v.ref and depth < 3:
                        ref = _norm_key(v.ref)
                        # the section the expression reads (``model_path=self.config.model.path``: ``model.path``): a config
                        # entry of the same leaf under another section (``data.path``) is not what it reads
                        parts = v.text.split(".")
                        section = _norm_key(parts[-2]) if len(parts) >= 3 and v.text.replace(".", "").replace("_", "").isalnum() else None
                        if (ref, section) in resolved_refs:
                            continue
                        resolved = _shadow(self._settings(ref, include_calls=False, depth=depth + 1, reader=c.path))
                        # (only when some entry sits in that section: ``self.config.padding_free`` reads an object that holds
                        # one section, whatever it is called in the YAML, ``worker.actor.padding_free``)
                        if section is not None and any(s.source == "config" and s.key.count(".") >= 1
                                                       and _norm_key(s.key.split(".")[-2]) == section for s in resolved):
                            resolved = [s for s in resolved if not (s.source == "config" and s.key.count(".") >= 1
                                                                    and _norm_key(s.key.split(".")[-2]) != section)]
                        if resolved:
                            resolved_refs.add((ref, section))
                            out.extend(resolved)
                            continue
                    # a keyword of a Python config file (``train_dataloader = dict(num_workers=4)``) is that recipe's setting
                    out.append(Setting(name, v, c.path, line, "config" if c.path in configs else "call", c.text, f"{c.short}({k}=)", 2))
        return out

    # -- arms of conditional expressions ------------------------------------
    def arm_state(self, a: Assign) -> bool | None:
        """Whether the run takes arm ``a`` of a conditional expression of constants (``x = A if cond else B``, see
        :class:`Assign`): False when the project's settings switch its condition off (the guard machinery a check module
        registers, :func:`register_arm_judge`: a flag, a comparison or a parameter default that makes it false), True when
        they switch off every other arm of the same expression, None when they decide neither (or no judge is
        registered). Memoised per view; an arm asked again while its own condition is being read is undecided."""
        memo = self._memo.setdefault(("arm-state",), {})  # type: ignore[arg-type]
        key = (a.path, a.line, a.name, a.stmt, a.guard)
        if key in memo:
            return memo[key]  # type: ignore[return-value,index]
        memo[key] = None  # type: ignore[index]
        state: bool | None = None
        if _ARM_JUDGES:
            judge = _ARM_JUDGES[-1]
            if judge(self, a):
                state = False
            else:
                siblings = [x for x in self.arms_of(a) if x is not a]
                if siblings and all(judge(self, x) for x in siblings):
                    state = True
        memo[key] = state  # type: ignore[index]
        return state

    def arms_of(self, a: Assign) -> list[Assign]:
        """Every arm of the conditional expression ``a`` is an arm of (``a`` included), in source order."""
        return [x for x in self._s["assigns_by_key"].get(_norm_key(a.name), []) if x.stmt == a.stmt and x.path == a.path
                and x.name == a.name and x.func == a.func and x.guard is not None]

    def alternatives(self, *names: str) -> list[tuple[Setting, ...]]:
        """The conditional expressions of constants that bind one of ``names`` and whose arm the settings do not decide
        (``strategy = "deepspeed_stage_2_offload" if optimizer_name == "cpu_adam" else "deepspeed_stage_2"`` with
        ``optimizer_name`` set to both values by the project's per-model configs): one tuple of settings per expression,
        an arm each, its condition as ``guard``. They are not in :meth:`effective` (picking an arm would be a guess); a
        check may read what every arm of one expression has in common (all of them select DeepSpeed ZeRO-2: so does the
        run), never what only one arm has. An arm the settings decide is a plain setting of :meth:`effective`."""
        key = ("alternatives", names)
        if key not in self._memo:
            groups: dict[tuple[str, str | None, str, int], list[Setting]] = {}
            for n in names:
                for a in self._s["assigns_by_key"].get(_norm_key(n), []):
                    if a.guard is None or not self._ok(a.path, a.line):
                        continue
                    arms = self.arms_of(a)
                    if any(self.arm_state(x) is not None for x in arms):
                        continue
                    source, rank = ("config", 2) if a.path in self.recipe_modules() or a.path in self.config_modules() else ("assign", 1)
                    groups.setdefault((a.path, a.func, a.name, a.stmt), []).append(
                        Setting(n, a.value, a.path, a.line, source, a.text, a.name, rank, guard=a.guard))
            self._memo[key] = [tuple(g) for g in groups.values() if len(g) >= 2]  # type: ignore[assignment]
        return list(self._memo[key])  # type: ignore[arg-type]

    def _post_init_fill(self, f: Field) -> AttrAssign | None:
        """The constant a dataclass's ``__post_init__`` gives a field left ``None`` (ms-swift ``dataloader_num_workers:
        Optional[int] = None`` then ``if self.dataloader_num_workers is None: ... self.dataloader_num_workers = 1``): that is
        the default a run gets. A branch for a non-Linux host (``if platform.system() == 'Windows': ... = 0``) is not the
        training host's; fills that still disagree, or that are not constants, leave the declared ``None``."""
        target = f"self.{f.name}"
        fills = [a for a in self.attr_assigns(target) if a.path == f.path and a.func == "__post_init__" and a.target == target
                 and a.guard is not None and f"{target} is None" in a.guard and not _NON_LINUX_HOST.search(a.guard)]
        values = {repr(a.value) for a in fills}
        if len(values) != 1 or isinstance(fills[0].value, Expr) or fills[0].value is None:
            return None
        return fills[0]

    # -- evidence helpers --------------------------------------------------
    @staticmethod
    def ev(fact: Any, key: str | None = None, value: Any = None) -> Evidence:
        """Evidence from any fact record (or a Setting)."""
        if isinstance(fact, Setting):
            text = (fact.spelled or flag_snippet(fact.text, fact.key, fact.value)) if fact.source == "launcher" else fact.text
            if fact.source == "call" or (fact.source == "config" and fact.key.endswith("=)")):
                # (a keyword of a Python config file's ``dict(...)``, InternEvo's ``micro_num=4,`` below ``data = dict(``, too)
                text = keyword_snippet(text, fact.key, fact.value)
            return Evidence(fact.path, fact.line, text, key or fact.key, fact.value if value is None else value)
        if isinstance(fact, Launch) and key and key.startswith("-"):  # a flag of a continued command: the line that holds it
            line = fact.arg_line(key.lstrip("-").replace("-", "_"))
            flag = key.lstrip("-").replace("-", "_")
            raw = fact.script_args.get(flag, fact.launcher_args.get(flag))
            spelled = fact.arg_text.get(flag)
            return Evidence(fact.path, line, fact.text if line == fact.line else spelled or flag_snippet(fact.text, key, raw), key, value)
        return Evidence(fact.path, fact.line, getattr(fact, "text", ""), key, value)


#: a launch argument naming the config file the run starts from
_BASE_CONFIG_KEYS = frozenset({"config", "config_file", "cfg", "configs", "config_path", "cfg_file"})


def keyword_snippet(call_text: str, key: str, value: Any) -> str:
    """The keyword a call setting comes from, as its own line holds it: a multi-line call's keyword sits below the call's
    first line, which is all the facts keep of its text (Open-Reasoner-Zero ``LLMRayActor.options(...).remote(`` on one
    line, ``dtype="bfloat16",`` on the line cited): ``dtype="bfloat16"``, written from the keyword and its value. The
    call's text when it holds the keyword itself, or when the key names no keyword (``CPUOffload(offload_params=)``)."""
    m = re.fullmatch(r"[\w.]+\((\w+)=\)", key)
    if m is None or re.search(rf"\b{re.escape(m.group(1))}\s*=", call_text):
        return call_text
    shown = value.text if isinstance(value, Expr) else json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)
    return f"{m.group(1)}={shown}"


def flag_snippet(command: str, key: str, value: Any = None) -> str:
    """The part of a launch command that is the flag ``key`` and its value (``--num-workers 0``), as its own line shows it.
    A command's text is kept up to a few hundred characters: a flag past that is written from its key and value in the
    command's own spelling (dashes or underscores); the whole command when neither is known."""
    if not key.startswith("-"):
        return command
    name = key.lstrip("-")
    for spelling in {name, name.replace("_", "-"), name.replace("-", "_")}:
        m = re.search(r"(?:^|\s)(--?" + re.escape(spelling) + r")(?:(=|\s+)(?!-)(\"[^\"]*\"|'[^']*'|\S+))?(?=\s|$)", command)
        if m:
            return m.group(0).strip()
    # a Hydra override as written (``actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2``)
    m = re.search(r"(?:^|\s)(\+{0,2}" + re.escape(name.replace("-", "_")) + r"=\S*)", command)
    if m:
        return m.group(1)
    if value is None:
        return command
    dashed = len(re.findall(r"\s--\w+-", command)) >= len(re.findall(r"\s--\w+_", command))
    flag = "--" + (name.replace("_", "-") if dashed else name.replace("-", "_"))
    return flag if value is True else f"{flag} {value}"


_TEST_PATH = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_test\.py$", re.I)
#: a positive test for a non-Linux host in an ``if`` guard (not one negated as ``not (...)``): Windows/macOS branches
_NON_LINUX_HOST = lazy_compile(r"(?<!not \()(platform\.system\(\)\s*==\s*['\"](Windows|Darwin)['\"]|sys\.platform\s*==\s*['\"](win32|darwin)['\"]|os\.name\s*==\s*['\"]nt['\"])")
_RECIPE_DIR = lazy_compile(r"(^|/)(configs?|recipes?)/[^/]+\.py$")
_CONFIG_DIR = lazy_compile(r"(^|/)configs?/(.+/)?[^/]+\.py$")
#: loaders that read a Python file as a config (mmengine/mmcv ``Config.fromfile``, detectron2 ``LazyConfig.load``)
_CONFIG_LOADERS = ("Config.fromfile", "Config.from_file", "LazyConfig.load")
#: words the source of a file calling one of them holds (the call's name is resolved through its imports, which name them)
_LOADER_WORDS = (b"fromfile", b"from_file", b"LazyConfig")


def source_lacks(ff: Any, words: tuple[bytes, ...]) -> bool:
    """Whether ``ff`` is a stand-in whose held source contains none of ``words`` (see :meth:`checks.deferred.Pending.lacks`)."""
    lacks = getattr(ff.__class__, "lacks", None)
    return lacks is not None and bool(lacks(ff, *words))


_EVAL_RECIPE = lazy_compile(r"^(eval|evaluate|sample|bench|test)", re.I)


#: decides whether a record's ``guard`` is switched off by the project's settings (:func:`register_arm_judge`)
_ARM_JUDGES: list[Callable[[Any, Any], bool]] = []


def register_arm_judge(judge: Callable[[Any, Any], bool]) -> None:
    """Let the checks' guard machinery (a module of :mod:`checks.rules`) decide the arms of conditional expressions: ``judge(
    facts, record)`` is True when the record's ``guard`` is off at the project's settings. The last one registered is used."""
    if judge not in _ARM_JUDGES:
        _ARM_JUDGES.append(judge)


#: setting-name pattern -> the verdict band of a value (:func:`register_vote_bands`)
_VOTE_BANDS: list[tuple[re.Pattern[str], Callable[[float], str]]] = []


def register_vote_bands(pattern: str, band: Callable[[float], str]) -> None:
    """Let recipes that disagree on a setting vote by the verdict a check gives each value, not by exact value.

    ``band`` maps a number to the label of its verdict (F1 ``num_workers``: ``"0"``, ``"1-3"``, ``"4 or more"``; I4
    ``logging_steps``: every 1-9 steps or 10 and more): 11 recipes at 4 workers and 8 at 8 are one majority of 19 of 27
    against 7 at 0. ``pattern`` matches the normalised setting name (``dataloader_num_workers``). Checks register their
    bands when their module is imported; a name matched by no pattern votes by exact value."""
    rx = re.compile(pattern)
    if all(p.pattern != rx.pattern for p, _ in _VOTE_BANDS):
        _VOTE_BANDS.append((rx, band))


def _band_of(name: str) -> Callable[[str], str]:
    """The band of a value (its repr, as the vote keeps them) for setting ``name``; the value itself without a band."""
    for rx, band in _VOTE_BANDS:
        if rx.search(name):
            def of(v: str, band: Callable[[float], str] = band) -> str:
                n = _num(v)
                return band(n) if n != float("inf") else v
            return of
    return lambda v: v


def _num(v: str) -> float:
    try:
        return float(v)
    except ValueError:
        return float("inf")


def _fmt(v: str) -> str:
    return v.strip("'\"")


_LAYOUT = lazy_compile(r"parallel|^(tp|pp|ep|cp|dp|sp|autotp)(_size)?$|shard_size|expert|nnodes|nproc|world_size|num_gpus|gpus_per_node"
                     r"|num_machines|num_processes|num_nodes", re.I)
_NOT_TRAINING = lazy_compile(r"infer|generat|serv(e|er|ing)|sampl|eval|bench|export|convert", re.I)
_DATA_PREP = lazy_compile(r"preprocess|prepare|tokeni[sz]|convert|(^|/)tools/data", re.I)


def _tuning(v: Any) -> bool:
    """A number a recipe tunes (workers, intervals, sizes), not an on/off switch."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def python_config_modules(files: Mapping[str, FileFacts], loaders: Iterable[Call] | None = None) -> frozenset[str]:
    """The Python config files a config loader reads (see :meth:`Facts.config_modules`); shared with the file roles,
    which put them on the training path as YAML recipes are. ``loaders``: the calls named ``fromfile``, ``from_file`` or
    ``load`` (from an index; by default every file's calls are searched)."""
    out: set[str] = set()
    if loaders is None:
        # a file still being extracted whose source names no loader is not waited for (checks.deferred.Pending.lacks)
        loaders = (c for ff in files.values() if not source_lacks(ff, _LOADER_WORDS) for c in ff.calls
                   if c.short in ("fromfile", "from_file", "load"))
    if any(c.name.endswith(_CONFIG_LOADERS) for c in loaders):
        for p, ff in files.items():
            if ff.kind != "python" or not _CONFIG_DIR.search(p) or p.endswith("__init__.py") or _TEST_PATH.search(p):
                continue
            if ff.arg_options or ff.fields or ff.decorators or any(c.func is not None for c in ff.calls):
                continue
            if sum(1 for a in ff.assigns if _module_level(a)) >= 3:
                out.add(p)
    return frozenset(out)


#: a dict named as a table of names (``COMMON_TO_MEGATRON_ARG_MAP``, ``KEY_MAPPING``, ``ARG_ALIASES``, ``hf_to_mcore``)
_NAME_TABLE = lazy_compile(r"(?i)(map|mapping|alias(es)?|renames?)$|_to_")
_OPTION_NAME = lazy_compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)+")
_IDENTIFIER = lazy_compile(r"[a-z][a-z0-9_]*")


def _name_tables(configs: Iterable[ConfigEntry]) -> set[tuple[str, tuple[str | int, ...]]]:
    """(path, dict keys) of Python dict literals that translate option names into other option names
    (``COMMON_TO_MEGATRON_ARG_MAP = {"save_steps": "save_interval", "logging_steps": "log_interval", ...}``): each value names
    another program's option, none is a value of the key, so they are no settings (``logging_steps`` is not "log_interval").
    A table is a dict whose name says it maps names, whose values are all identifiers (``"save"``, ``"bf16"``) and three or
    more of them multi-word option names (``"save_interval"``)."""
    groups: dict[tuple[str, tuple[str | int, ...]], list[Any]] = defaultdict(list)
    for e in configs:
        if e.fmt == "python" and len(e.keys) >= 2 and isinstance(e.keys[-2], str) and _NAME_TABLE.search(e.keys[-2]):
            groups[(e.path, e.keys[:-1])].append(e.value)
    return {k for k, vals in groups.items()
            if all(isinstance(v, str) and _IDENTIFIER.fullmatch(v) for v in vals)
            and sum(1 for v in vals if _OPTION_NAME.fullmatch(v)) >= 3}


def _module_level(a: Any) -> bool:
    """An assignment outside every function (a module's top level, or a class body): its record names no enclosing
    function. (Record texts are stripped lines, so indentation cannot tell.)"""
    return a.func is None


def _script_key(script: str) -> str:
    """A launched script as several launches spell it (``./pretrain_gpt.py``, ``$MEGATRON/pretrain_gpt.py``): its file name."""
    return script.rstrip("/").rsplit("/", 1)[-1]


def _runs(script: str | None, path: str) -> bool:
    """Does a launcher's script argument name this file (``train.py``, ``src/train.py``, ``-m pkg.train``)?"""
    if not script:
        return False
    s = script.strip("./")
    mod = path[:-3].replace("/", ".") if path.endswith(".py") else path
    return path == s or path.endswith("/" + s) or s.endswith("/" + path) or mod == s or mod.endswith("." + s)


_CODE_DEFAULTS = frozenset({"argparse-default", "field-default", "assign"})


def _near(cands: list[Setting], path: str) -> list[Setting]:
    """Narrow repository-wide candidates to what a reader in ``path`` sees (linear in ``cands``)."""
    if any(c.source in _CODE_DEFAULTS and c.path == path for c in cands):
        cands = [c for c in cands if c.source not in _CODE_DEFAULTS or c.path == path]
    if any(c.source == "launcher" and _runs(c.script, path) for c in cands):
        cands = [c for c in cands if c.source != "launcher" or _runs(c.script, path)]
    return cands


def _shadow(cands: list[Setting]) -> list[Setting]:
    if any(c.rank >= 2 and c.source in {"config", "launcher"} for c in cands):
        return [c for c in cands if c.rank > 0]
    return cands


def _under(name: str, wanted: set[str]) -> bool:
    """Whether ``name`` is one of ``wanted`` or lies under one (``torch.distributed.fsdp`` under ``torch.distributed``)."""
    if name in wanted:
        return True
    k = name.find(".")
    while k != -1:
        if name[:k] in wanted:
            return True
        k = name.find(".", k + 1)
    return False


def _name_of(x: Any) -> str:
    return x.name


def _target_of(x: Any) -> str:
    return x.target


def _named(pool: Iterable[T], name: Callable[[Any], str], patterns: tuple[str, ...]) -> list[T]:
    """The records of ``pool`` whose ``name(record)`` matches one of ``patterns``: each distinct name tested once."""
    verdict: dict[str, bool] = {}
    out: list[T] = []
    for x in pool:
        n = name(x)
        ok = verdict.get(n)
        if ok is None:
            ok = verdict[n] = any(name_matches(n, p) for p in patterns)
        if ok:
            out.append(x)
    return out


def _unique(items: list[T]) -> list[T]:
    seen: set[int] = set()
    out: list[T] = []
    for x in items:
        if id(x) not in seen:
            seen.add(id(x))
            out.append(x)
    return out


def _unique_loc(items: list[Any]) -> list[Any]:
    seen: set[tuple[str, int]] = set()
    out: list[Any] = []
    for x in items:
        k = (x.path, x.line)
        if k not in seen:
            seen.add(k)
            out.append(x)
    return out


def _unique_settings(items: list[Setting]) -> list[Setting]:
    seen: set[tuple[str, int, str, str]] = set()
    out: list[Setting] = []
    for s in items:
        k = (s.path, s.line, s.key, repr(s.value))
        if k not in seen:
            seen.add(k)
            out.append(s)
    return out

