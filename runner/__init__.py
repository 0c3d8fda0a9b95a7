"""The runner: send each benchmark request to a model over raw HTTP and keep a complete trace.

Providers are tiny modules in `runner.providers`; `runner.run` drives them with
bounded concurrency and bounded retries, on `common.records.Request` in and
`TraceRow` out; `runner.traces` appends to the trace file (and moves a torn tail
aside), while every stage, the runner's resume included, reads a trace through
`common.traces`. See docs/RUNNER.md.
"""

# Recorded in every trace row; bump it whenever what the runner sends or records changes.
# 2: hostile replies are recorded (U+FFFD, null, unusable) instead of crashing; the key is redacted in every spelling.
# 3: rows collected through a provider's batch API (--batch): attempts name the batch and the result.
# 4: a reply's text longer than common.records.MAX_OUTPUT_CHARS is recorded cut (unusable); a body larger than
#    runner.transport.MAX_BODY_BYTES is not read (failed); the config's [headers], [headers_env], [query] and
#    auth_header are sent (and recorded, secrets never); an attempt a stopped run sent and lost the answer of
#    opens the request's next row (runner.sent).
# 5: a request is its condition's conversation (docs/CONDITIONS.md): a system prompt where each provider expects
#    it, recorded as request.system; earlier turns; message_sha256 of the whole conversation (of the message alone,
#    as before, for a bare one).
RUNNER_VERSION = "5"
