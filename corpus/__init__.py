"""Real code to judge rules and measure speed on: pinned releases of public training projects from the package index."""
