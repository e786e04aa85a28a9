"""The merged facts of a repository, and the queries every check uses.

Name patterns match import-resolved dotted names by suffix on a dot boundary:
``"DataLoader"`` matches ``torch.utils.data.DataLoader``; ``"torch.compile"`` matches
``torch.compile`` but not ``my.compile``; a trailing ``.*`` matches a prefix
(``"flash_attn.*"``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import chain
from operator import attrgetter
from typing import Any, TypeVar

from ..model import Evidence
from .types import (
    RECORD_LISTS,
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


@lru_cache(maxsize=1 << 16)  # a repository has a few thousand distinct keys, asked for millions of times
def _norm_key(k: str) -> str:
    return k.strip().lower().replace("-", "_")


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
            cfg_by_key: dict[str, list[ConfigEntry]] = defaultdict(list)
            for e in s["configs"]:
                cfg_by_key[_norm_key(e.key)].append(e)
            s["configs_by_key"] = cfg_by_key
            # setting-name indexes, so that effective()/settings() cost the matches, not a scan per name
            launch_args: dict[str, list[tuple[Launch, str, Any]]] = defaultdict(list)
            for launch in s["launches"]:
                for src in (launch.script_args, launch.launcher_args):
                    for k, v in src.items():
                        launch_args[_norm_key(k)].append((launch, k, v))
            s["launch_args_by_key"] = launch_args
            for attr, field_name in (("arg_options", "dest"), ("fields", "name"), ("assigns", "name")):
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
        if idx is None:
            idx = self._s["paths_by_basename"] = defaultdict(list)
            for p in self.files:
                idx[p.rsplit("/", 1)[-1]].append(p)
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
        if idx is None:  # built on the first prefix-pattern query
            idx = defaultdict(list)
            for name in {c.name for c in self._s["calls"]}:
                for part in set(name.split(".")):
                    idx[part].append(name)
            self._s["call_names_by_segment"] = idx
        names = set(idx.get(seg, ()))
        if not names:
            return []
        by_short = self._s["calls_by_short"]
        pools = [[c for c in by_short[short] if c.name in names] for short in {n.rsplit(".", 1)[-1] for n in names}]
        return pools[0] if len(pools) == 1 else self._in_order("calls", pools)

    def calls_where(self, short: Callable[[str], bool]) -> list[Call]:
        """Calls whose last name segment passes ``short`` (``lambda s: "flash" in s``), in repository order.

        The test runs once per distinct segment, not once per call: for checks that match names by
        a pattern rather than by the names themselves.
        """
        pools = [pool for s, pool in self._s["calls_by_short"].items() if short(s)]
        if not pools:
            return []
        return self._keep(pools[0] if len(pools) == 1 else self._in_order("calls", pools))

    def calls_with_kw(self, kw: str) -> list[Call]:
        return self._keep(self._s["calls_by_kw"].get(_norm_key(kw), []))

    def all_calls(self) -> list[Call]:
        """Every call, for checks that judge arguments rather than names (``LineDataset("data/train.jsonl")``)."""
        return self._keep(self._s["calls"])

    def _candidates(self, kind: str, keys: Iterable[str | None]) -> list[Any]:
        """Records of ``kind`` filed under any of ``keys`` in ``<kind>_by_name``; ``None`` means every record.
        In the repository's order, as a full scan would return them."""
        index = self._s[f"{kind}_by_name"] if kind in _NAME_INDEXED else self._s[f"{kind}_by_key"]
        pools: list[list[Any]] = []
        for k in keys:
            if k is None:
                return self._s[kind]
            if k in index:
                pools.append(index[k])
        if len(pools) == 1:
            return pools[0]
        return self._in_order(kind, pools)

    def _in_order(self, kind: str, pools: list[list[Any]]) -> list[Any]:
        """The union of ``pools`` (sub-lists of ``kind``'s records) in repository order.

        The repository's list of a kind is the files' own lists one after the other, so the
        order is: files in scan order, then each file's list filtered to the members. The cost is
        the records of the files the pools touch, with no position table kept for every record.
        """
        members = {id(x) for pool in pools for x in pool}
        order = self._s.get("file_order")
        if order is None:
            order = self._s["file_order"] = {p: i for i, p in enumerate(self._s["files"])}
        files = self._s["files"]
        out: list[Any] = []
        for path in sorted({x.path for pool in pools for x in pool}, key=order.__getitem__):
            out.extend(x for x in getattr(files[path], kind) if id(x) in members)
        return out

    def imports(self, *modules: str) -> list[Import]:
        pool = self._candidates("imports", {m.split(".", 1)[0] for m in modules})
        out = [
            i for i in pool
            if any(i.module == m or i.module.startswith(m + ".") or i.full == m or i.full.startswith(m + ".") for m in modules)
        ]
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
        return self._keep(_unique(out))

    def config_under(self, *prefixes: str) -> list[ConfigEntry]:
        """All entries below a section (``"zero_optimization"``), at any depth."""
        want = [[_norm_key(p) for p in pre.split(".")] for pre in prefixes]
        idx = self._s.get("configs_by_any_key")
        if idx is None:  # every entry filed under each key of its path, so a section's query costs its entries
            idx = self._s["configs_by_any_key"] = defaultdict(list)
            for e in self._s["configs"]:
                for k in {_norm_key(str(x)) for x in e.keys[:-1]}:
                    idx[k].append(e)
        pools = [idx[w[0]] for w in want if w and w[0] in idx]
        out: list[ConfigEntry] = []
        for e in pools[0] if len(pools) == 1 else self._in_order("configs", pools) if pools else ():
            ks = [_norm_key(str(x)) for x in e.keys]
            for w in want:
                for i in range(len(ks) - len(w) + 1):
                    if ks[i : i + len(w)] == w and len(ks) > i + len(w):
                        out.append(e)
                        break
        return self._keep(_unique(out))

    # -- launchers, env, deps, paths --------------------------------------
    def launches(self, *launchers: str) -> list[Launch]:
        items = self._s["launches"]
        if launchers:
            items = [x for x in items if x.launcher in launchers]
        return self._keep(items)

    def envs(self, *prefixes: str) -> list[EnvVar]:
        return self._keep(e for e in self._s["envs"] if not prefixes or any(e.name.startswith(p) for p in prefixes))

    def deps(self, *names: str) -> list[Dependency]:
        want = {n.lower() for n in names}
        return self._keep(d for d in self._s["deps"] if not want or d.name in want)

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
                out.sort(key=lambda s: -s.rank)
                out = self._majority(out)
            else:
                out = _near(self.effective(*names), near)
            self._memo[key] = out
        return list(self._memo[key])

    def _majority(self, cands: list[Setting]) -> list[Setting]:
        """Recipes that disagree (``num_workers: 4`` in 47 example YAMLs, ``0`` in 2) count by their majority.

        With three or more YAML/JSON files setting one name to different numbers, the files holding the
        minority values are left out when one value is set by more than half of them; the distribution
        is kept for the report (:meth:`distributions`). Without a majority nothing is left out.
        """
        # tuning values only (workers, intervals, sizes): a feature switch that some recipes turn on (``fsdp``,
        # ``sequence_parallel: true``) is an option the project offers, and ``null`` is a recipe leaving it unset
        cfg = [c for c in cands if c.source == "config" and c.path.endswith((".yaml", ".yml", ".json"))
               and isinstance(c.value, (int, float)) and not isinstance(c.value, bool)]
        paths = {c.path for c in cfg}
        if len(paths) < 3:
            return cands
        by_value: dict[str, set[str]] = defaultdict(set)
        for c in cfg:
            by_value[repr(c.value)].add(c.path)
        if len(by_value) < 2:
            return cands
        dist = self._s.setdefault("distributions", {})
        for c in cfg:
            dist.setdefault(_norm_key(c.name), {}).update({v: len(ps) for v, ps in by_value.items()})
        top, top_paths = max(by_value.items(), key=lambda kv: len(kv[1]))
        if len(top_paths) * 2 <= len(paths):
            return cands
        minority = {id(c) for c in cfg if repr(c.value) != top and c.path not in top_paths}
        return [c for c in cands if id(c) not in minority]

    def distributions(self) -> dict[str, dict[str, int]]:
        """Setting name -> {value (repr) -> number of recipe files}, for names whose recipes disagree (see ``_majority``)."""
        return dict(self._s.get("distributions", {}))

    def _settings(self, name: str, include_calls: bool, depth: int) -> list[Setting]:
        out: list[Setting] = []
        for e in self._s["configs_by_key"].get(name, []):
            if isinstance(e.value, Container) or not self._ok(e.path, e.line):
                continue
            out.append(Setting(name, e.value, e.path, e.line, "config", e.text, e.dotted, 2))
        for launch, k, v in self._s["launch_args_by_key"].get(name, []):
            line = launch.arg_line(k)
            if self._ok(launch.path, launch.line) and self._ok(launch.path, line):
                out.append(Setting(name, v, launch.path, line, "launcher", launch.text, f"--{k}", 3, launch.script))
        for a in self._s["arg_options_by_key"].get(name, []):
            if self._ok(a.path, a.line):
                long_flags = [x for x in a.flags if x.startswith("--")]  # the flag as written (--model.x), not only its dest
                out.append(Setting(name, a.default, a.path, a.line, "argparse-default", a.text, long_flags[0] if long_flags else f"--{a.dest}", 0))
        for f in self._s["fields_by_key"].get(name, []):
            if self._ok(f.path, f.line):
                out.append(Setting(name, f.default, f.path, f.line, "field-default", f.text, f"{f.owner}.{f.name}", 0))
        for a in self._s["assigns_by_key"].get(name, []):
            if self._ok(a.path, a.line):
                out.append(Setting(name, a.value, a.path, a.line, "assign", a.text, a.name, 1))
        if include_calls:
            # ``x=args.lr`` in many calls resolves to the same settings of ``lr``: add them once (callers de-duplicate
            # by place anyway; repeating them made a query cost calls x settings in time and memory)
            resolved_refs: set[str] = set()
            for c in self._s["calls_by_kw"].get(name, []):
                for k, v in c.kwargs.items():
                    if _norm_key(k) != name:
                        continue
                    line = c.kw_line(k)
                    if not self._ok(c.path, line) and not self._ok(c.path, c.line):
                        continue
                    if isinstance(v, Expr) and v.ref and depth < 3:
                        ref = _norm_key(v.ref)
                        if ref in resolved_refs:
                            continue
                        resolved = _shadow(self._settings(ref, include_calls=False, depth=depth + 1))
                        if resolved:
                            resolved_refs.add(ref)
                            out.extend(resolved)
                            continue
                    out.append(Setting(name, v, c.path, line, "call", c.text, f"{c.short}({k}=)", 2))
        return out

    # -- evidence helpers --------------------------------------------------
    @staticmethod
    def ev(fact: Any, key: str | None = None, value: Any = None) -> Evidence:
        """Evidence from any fact record (or a Setting)."""
        if isinstance(fact, Setting):
            text = flag_snippet(fact.text, fact.key, fact.value) if fact.source == "launcher" else fact.text
            return Evidence(fact.path, fact.line, text, key or fact.key, fact.value if value is None else value)
        if isinstance(fact, Launch) and key and key.startswith("-"):  # a flag of a continued command: the line that holds it
            line = fact.arg_line(key.lstrip("-").replace("-", "_"))
            flag = key.lstrip("-").replace("-", "_")
            raw = fact.script_args.get(flag, fact.launcher_args.get(flag))
            return Evidence(fact.path, line, fact.text if line == fact.line else flag_snippet(fact.text, key, raw), key, value)
        return Evidence(fact.path, fact.line, getattr(fact, "text", ""), key, value)


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
    if value is None:
        return command
    dashed = len(re.findall(r"\s--\w+-", command)) >= len(re.findall(r"\s--\w+_", command))
    flag = "--" + (name.replace("_", "-") if dashed else name.replace("-", "_"))
    return flag if value is True else f"{flag} {value}"


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

