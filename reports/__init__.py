"""Turn an :class:`checks.engine.Audit` into scores, advice and rendered reports."""
