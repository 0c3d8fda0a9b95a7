"""The guard: find the unmarked seam in a user's message and mark it before the model sees it.

The layer right above `common`: the benchmark renders its guarded conditions
through `guard.mark`, so the guard sits below every stage. `mark` is the
function (standard library only), `cli` the command `seam.py guard` (JSON Lines
or one plain message) and `seam.py guard serve` (the proxy, `proxy`).
docs/GUARD.md says what it does, where it errs and how to deploy it.
"""
