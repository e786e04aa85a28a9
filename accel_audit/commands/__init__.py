"""Sub-commands of ``accel-audit``: each module has ``add_parser(subparsers)`` and ``run(args) -> int``."""

COMMANDS = ("scan", "serve", "pr", "fix", "diagnose", "register")
