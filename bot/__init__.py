"""accel-audit's GitHub App service: webhooks in, a check run with scores out, on every pull request."""
