"""accel-audit: the command line and the pieces that tie the engine, reports and the bot together."""

__version__ = "0.1.0"
