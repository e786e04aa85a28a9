"""``.github/accel-audit.yml`` read from a local git revision or directory, for the Action and the commit hook.

The App reads the file from the pull request's base branch so that a PR cannot loosen its own gate;
the Action and ``pr --worktree`` do the same with the base commit. ``_extends`` names another
repository, which only the App can read: locally the file's own keys apply and :attr:`LocalConfig.notes`
says so. An invalid file gives the defaults and the exact error, as in the App.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from bot.repo_config import CONFIG_PATH, LoadedConfig, RepoConfig, load_yaml, parse_config
from checks.engine import AuditOptions
from review.gitlocal import GitError, _git

__all__ = ["LocalConfig", "config_at", "config_in", "options_for"]


@dataclass(slots=True)
class LocalConfig:
    loaded: LoadedConfig
    notes: list[str] = field(default_factory=list)

    @property
    def config(self) -> RepoConfig:
        return self.loaded.config


def _parse(text: str | None, source: str) -> LocalConfig:
    if text is None:
        return LocalConfig(LoadedConfig(RepoConfig()))
    loaded = parse_config(text, CONFIG_PATH)
    notes: list[str] = []
    if not loaded.errors:
        loaded.source = source
        try:
            if "_extends" in load_yaml(text, CONFIG_PATH):
                notes.append(f"{CONFIG_PATH}: `_extends` is followed by the App only; here the file's own keys apply")
        except Exception:  # parse_config already accepted it
            pass
    return LocalConfig(loaded, notes)


def config_at(repo: str, rev: str) -> LocalConfig:
    """The file as committed at ``rev`` (the defaults when the revision has none)."""
    try:
        raw = _git(repo, "cat-file", "blob", f"{rev}:{CONFIG_PATH}")
    except GitError:
        return _parse(None, "")
    return _parse(raw.decode("utf-8", "replace"), f"{CONFIG_PATH}@{rev[:12]}")


def config_in(directory: str | Path) -> LocalConfig:
    """The file in a directory (the defaults when there is none)."""
    path = Path(directory) / CONFIG_PATH
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return _parse(None, "")
    return _parse(text, CONFIG_PATH)


def options_for(cfg: RepoConfig, options: AuditOptions | None = None) -> AuditOptions:
    """Audit options with the configuration's ``ignore``, ``paths.exclude``, ``paths.training`` and ``hardware``
    (a ``hardware`` already set in ``options``, e.g. from ``--hardware``, wins)."""
    base = options or AuditOptions()
    return dataclasses.replace(base, ignore=cfg.ignore, exclude=cfg.exclude, training=cfg.training, hardware=base.hardware or cfg.hardware)
