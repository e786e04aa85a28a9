"""Read ``.github/accel-audit.yml`` from GitHub (the base branch) and resolve ``_extends``."""

from __future__ import annotations

import logging
from typing import Any

from githubkit import GitHub
from githubkit.exception import RateLimitExceeded, RequestFailed

from .repo_config import CONFIG_PATH, ConfigError, LoadedConfig, RepoConfig, load_yaml, merge, parse_extends, validate

log = logging.getLogger(__name__)

MAX_EXTENDS_DEPTH = 3
RAW = "application/vnd.github.raw+json"


async def fetch_file(gh: GitHub[Any], owner: str, repo: str, path: str, ref: str | None) -> str | None:
    """A file's text at ``ref`` (the default branch when None); None when it does not exist or is not readable."""
    params = {"ref": ref} if ref else None
    try:
        resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/contents/{path}", params=params, headers={"Accept": RAW})
    except RequestFailed as exc:
        if exc.response.status_code in (403, 404) and not isinstance(exc, RateLimitExceeded):
            return None
        raise
    return resp.content.decode("utf-8", errors="replace")


class _Hidden(ConfigError):
    """An error in an extended file: only where it is, never its content (a check run may be public)."""


async def _resolve(gh: GitHub[Any], owner: str, data: dict[str, Any], filename: str, seen: set[str], depth: int) -> dict[str, Any]:
    ext = data.get("_extends")
    if ext is None:
        return data
    if depth >= MAX_EXTENDS_DEPTH:
        raise ConfigError(f"{filename}: _extends: more than {MAX_EXTENDS_DEPTH} levels of inheritance")
    o, r, path = parse_extends(ext, owner, filename)
    where = f"{o}/{r}"
    if where in seen:
        raise ConfigError(f"{filename}: _extends: inheritance cycle through {where}")
    seen.add(where)
    text = await fetch_file(gh, o, r, path, None)
    if text is None:
        raise ConfigError(f"{filename}: _extends: cannot read {path} of {where} (missing, or the App is not installed on it)")
    try:
        parent = await _resolve(gh, o, load_yaml(text, path), f"{where}:{path}", seen, depth + 1)
        validate({k: v for k, v in parent.items() if k != "_extends"}, path)
    except _Hidden:
        raise
    except ConfigError:
        raise _Hidden(f"{filename}: _extends: invalid config in {where}") from None
    own = {k: v for k, v in data.items() if k != "_extends"}
    return merge({k: v for k, v in parent.items() if k != "_extends"}, own)


async def load_repo_config(gh: GitHub[Any], owner: str, repo: str, ref: str | None) -> LoadedConfig:
    """The effective configuration: the repository's file at ``ref`` (with ``_extends``), else the organisation's.

    Any error (bad YAML, a bad value, an unreadable ``_extends``) gives the defaults plus the exact error.
    """
    text = await fetch_file(gh, owner, repo, CONFIG_PATH, ref)
    source = f"{owner}/{repo}:{CONFIG_PATH}" + (f"@{ref}" if ref else "")
    if text is None:
        if repo == ".github":
            return LoadedConfig(RepoConfig())
        org_text = await fetch_file(gh, owner, ".github", CONFIG_PATH, None)
        if org_text is None:
            return LoadedConfig(RepoConfig())
        text, source = org_text, f"{owner}/.github:{CONFIG_PATH}"
    inherited = source.startswith(f"{owner}/.github:") and repo != ".github"
    try:
        data = load_yaml(text, CONFIG_PATH)
        data = await _resolve(gh, owner, data, CONFIG_PATH, {f"{owner}/{repo}"}, 0)
        return LoadedConfig(validate(data, CONFIG_PATH), source)
    except ConfigError as exc:
        log.info("invalid configuration in %s: %s", source, type(exc).__name__ if inherited else exc)
        shown = f"invalid config in {owner}/.github (inherited: {CONFIG_PATH} of that repository)" if inherited else str(exc)
        return LoadedConfig(RepoConfig(), None, [shown])
