"""Small helpers every stage shares: user-facing errors and JSON Lines I/O."""
