"""Parse once into facts; every check queries :class:`Facts`."""

from .extract import classify, extract_file
from .store import Facts, as_number, name_matches, register_vote_bands, truthy
from .types import (
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

__all__ = [
    "ArgOption", "Assign", "AttrAssign", "Call", "ConfigEntry", "Container", "Decorator", "Dependency",
    "EnvVar", "Expr", "Facts", "Field", "FileFacts", "Import", "Launch", "PathLiteral", "Ref", "Setting",
    "as_number", "classify", "extract_file", "name_matches", "register_vote_bands", "truthy",
]
