"""The guard: find the unmarked seam in a user's message and mark it before the model sees it.

The layer right above `common`: the benchmark renders its guarded conditions
through `guard.mark`, so the guard sits below every stage. `mark` is the
function (standard library only, with its own rules on top of the seam finder:
`lead`, an instruction typed right above code, and `tail`, a tail that reads as
the paste's own last line); `batch` is `seam.py guard` on JSON Lines or one
plain message; `proxy`, `relay`, `upstream` and `chat` are `seam.py guard serve`,
the HTTP proxy (the server, one connection's requests, the connection they go
on through, the chat request's last user message); `measure` says where a
marking is right or wrong; `cli` wires them up.
docs/GUARD.md says what it does, where it errs and how to deploy it.
"""
