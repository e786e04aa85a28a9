"""The data files under ``reports/data`` and the jinja2 environment for ``reports/templates``."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2


@cache
def data(name: str) -> Any:
    """A JSON data file of ``reports/data`` (parsed once)."""
    return json.loads(resources.files("reports").joinpath("data", f"{name}.json").read_text(encoding="utf-8"))


@cache
def templates() -> jinja2.Environment:
    import jinja2  # here: the JSON and SARIF reports (a warm re-scan's) never load it (10-15 ms)

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reports", "templates"),
        autoescape=False,  # Markdown, not HTML: values are escaped for Markdown by the view model
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env
