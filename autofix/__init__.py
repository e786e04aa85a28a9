"""Round-trip-preserving fixes: editors per file kind, the fix catalog, verification by re-audit."""

from .model import Dropped, Edit, EditRefused, Site
from .plan import FixPlan, plan_fixes

__all__ = ["Dropped", "Edit", "EditRefused", "FixPlan", "Site", "plan_fixes"]
