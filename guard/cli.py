"""The `guard` subcommand: mark the seam of user messages (JSON Lines or one plain message), or serve the guard
as an HTTP proxy in front of a model (`guard serve`)."""

from __future__ import annotations

import argparse
import sys

EXAMPLES = (
    "examples:\n"
    "  # JSON Lines in ({\"id\", \"message\"} per line), JSON Lines out\n"
    "  python seam.py guard messages.jsonl --out guarded.jsonl\n"
    "  # one plain message, stdin to stdout (what was done goes to stderr)\n"
    "  printf 'Fix the typos:\\n\\nTeh cat sat on teh mat all day.\\nIt was hapy there.\\nbtw send it to Ann' \\\n"
    "      | python seam.py guard --text\n"
    "  # other marker lines, and the benchmark's mitigation sentence after the instruction\n"
    "  python seam.py guard messages.jsonl --open '<document>' --close '</document>' --mitigation\n"
    "  # the guard as an HTTP proxy in front of a model (its own options and examples: guard serve --help)\n"
    "  python seam.py guard serve --upstream http://127.0.0.1:8080 --port 8090\n")

SERVE_EXAMPLES = (
    "examples:\n"
    "  # in front of a local llama-server (or any OpenAI-compatible server) on port 8080\n"
    "  python seam.py guard serve --upstream http://127.0.0.1:8080 --port 8090\n"
    "  # seam's runner through it: a model config (docs/RUNNER.md) with\n"
    "  #   provider = \"openai\"\n"
    "  #   base_url = \"http://127.0.0.1:8090/v1\"\n"
    "  # the OpenAI Python SDK through it (the key goes on to the upstream, and nowhere else):\n"
    "  #   client = OpenAI(base_url=\"http://127.0.0.1:8090/v1\", api_key=os.environ[\"OPENAI_API_KEY\"])\n"
    "  python seam.py guard serve --upstream https://api.openai.com --port 8090\n"
    "  # Anthropic's API: anthropic.Anthropic(base_url=\"http://127.0.0.1:8090\"), or base_url =\n"
    "  # \"http://127.0.0.1:8090/v1\" in a runner config with provider = \"anthropic\"\n"
    "  python seam.py guard serve --upstream https://api.anthropic.com --port 8090\n"
    "  # what it has marked so far (not forwarded)\n"
    "  curl -s http://127.0.0.1:8090/_guard/stats\n")


def add_commands(subparsers) -> None:
    """Add `guard` to seam.py's subcommands.

    >>> parser = argparse.ArgumentParser(prog="seam.py")
    >>> add_commands(parser.add_subparsers())
    >>> args = parser.parse_args(["guard", "in.jsonl", "--out", "out.jsonl"])
    >>> args.input, args.out, args.text
    ('in.jsonl', 'out.jsonl', False)
    """
    parser = subparsers.add_parser(
        "guard",
        help="mark the unmarked seam in user messages (boundary lines around the paste a remark follows)",
        description="Find where a pasted text ends and the user's own remark after it begins, in a message\n"
                    "that does not say, and put the benchmark's boundary lines around the paste, so that a\n"
                    "model sees the remark as the user's. A message with no seam found is passed unchanged.\n"
                    "JSON Lines in: {\"id\", \"message\"} per line; out: {\"id\", \"marked\", \"artifact_start\",\n"
                    "\"artifact_end\", \"message\"} (offsets are Python string offsets into the message given,\n"
                    "-1 when not marked). With --text, one plain message in and the message to send out.\n"
                    "docs/GUARD.md: what it does, how often it is right, where it errs.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", nargs="?", default="-", metavar="INPUT",
                        help="a JSON Lines file of messages, or - for standard input (the default)")
    parser.add_argument("--out", metavar="FILE", default=None,
                        help="write here (atomically: a crash or a full disk leaves no half file) instead of "
                             "standard output")
    parser.add_argument("--text", action="store_true",
                        help="INPUT is one plain message (UTF-8); write the message to send, byte for byte")
    _marking_options(parser, mitigation="add the benchmark's mitigation sentence (a marked SEAM newline message "
                                         "then becomes its mitigation message)")
    parser.set_defaults(func=run_guard)
    _add_serve(parser)


def _marking_options(parser: argparse.ArgumentParser, *, mitigation: str) -> None:
    """How the guard marks (`guard.batch.Options`): the same four options for files and for the proxy."""
    parser.add_argument("--open", metavar="LINE", default=None,
                        help="the line put before the paste (default: -----BEGIN TEXT-----)")
    parser.add_argument("--close", metavar="LINE", default=None,
                        help="the line put after the paste (default: -----END TEXT-----)")
    wording = parser.add_mutually_exclusive_group()
    wording.add_argument("--sentence", metavar="TEXT", default=None,
                         help="a sentence added after the instruction where the guard marks")
    wording.add_argument("--mitigation", action="store_true", help=mitigation)


class _OneLineParser(argparse.ArgumentParser):
    """A parser whose mistakes are one line (no usage block): `seam.py guard serve: error: ...`."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _add_serve(guard_parser: argparse.ArgumentParser) -> None:
    """`guard serve`: the guard parser's first argument `serve` hands the rest to the proxy's own parser (the
    guard's positional INPUT would otherwise take it for a file name; a file named serve is ./serve)."""
    from common.argtypes import port, positive_float, positive_int

    serve = _OneLineParser(
        prog="seam.py guard serve",
        description="Serve the guard as an HTTP proxy on 127.0.0.1: point a client's base_url at it, and it\n"
                    "marks the seam of every user message of each OpenAI chat completions request (POST\n"
                    ".../chat/completions) and Anthropic Messages request (POST .../messages) before it goes\n"
                    "to --upstream, at the same path after the upstream URL's own path: earlier turns are\n"
                    "marked again, the same way, so the model sees the same conversation from turn to turn.\n"
                    "A message's content is a string or a list of parts; with several text parts, only the\n"
                    "last text part is guarded (the one a typed remark trails). Everything else goes on\n"
                    "unchanged: other messages and fields, other paths and methods, streams (relayed as they\n"
                    "come); a request not marked is forwarded byte for byte (a chat body over 4 MiB, or with\n"
                    "over 100,000 JSON objects and arrays, is not read: too large to guard). Each response\n"
                    "says X-Seam-Guard: marked, not-marked (with X-Seam-Guard-Reason; the proxy's own\n"
                    "refusals and the stats say not-marked too) or error (the guard failed: sent unmarked).\n"
                    "GET /_guard/stats gives the counts, also printed on exit. No message text, header or\n"
                    "key is written anywhere: one log line per request (method, path without its query,\n"
                    "status, sizes, time).\n"
                    "docs/GUARD.md: what it does, how often it is right, where it errs.",
        epilog=SERVE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    serve.add_argument("--upstream", metavar="URL", required=True,
                       help="the model server: http(s)://host[:port][/path]; its path is put before each "
                            "request's path")
    serve.add_argument("--port", type=port, default=8090, help="the port to listen on (default 8090; 0 picks a "
                                                               "free one, printed at start)")
    serve.add_argument("--host", metavar="ADDRESS", default=None,
                       help="the address to listen on (default 127.0.0.1; another address than a loopback one "
                            "is taken with a warning: anyone who can reach it can use your upstream)")
    _marking_options(serve, mitigation="add the benchmark's mitigation sentence where the guard marks")
    serve.add_argument("--max-body", metavar="BYTES", type=positive_int, default=32 * 1024 * 1024,
                       help="a larger request body is refused with 413 (default 33554432, 32 MiB; a chunked "
                            "body is read within the same bound)")
    serve.add_argument("--client-timeout", metavar="S", type=positive_float, default=30.0,
                       help="a client that sends nothing for this long while sending its request is dropped "
                            "(default 30)")
    serve.add_argument("--upstream-timeout", metavar="S", type=positive_float, default=600.0,
                       help="an upstream that sends nothing for this long: 504, or a stream cut (default 600)")
    serve.add_argument("--max-connections", metavar="N", type=positive_int, default=64,
                       help="connections served at once; more wait to be accepted (default 64)")
    serve.add_argument("--quiet", action="store_true", help="no log line per request")
    serve.set_defaults(func=run_serve, command="guard serve")
    own = guard_parser.parse_known_args

    def parse_known_args(args=None, namespace=None):
        if args and args[0] == "serve":
            return serve.parse_known_args(args[1:], namespace)
        return own(args, namespace)

    guard_parser.parse_known_args = parse_known_args


def run_guard(args) -> int:
    from guard import batch

    options = batch.options(open_line=args.open, close_line=args.close, sentence=args.sentence,
                            mitigation=args.mitigation)
    if args.text:
        return batch.guard_text(args.input, args.out, options)
    return batch.guard_lines(args.input, args.out, options)


def run_serve(args) -> int:
    from guard import batch, proxy

    options = batch.options(open_line=args.open, close_line=args.close, sentence=args.sentence,
                            mitigation=args.mitigation)
    host, warning = proxy.listen_host(args.host) if args.host is not None else (proxy.HOST, None)
    server = proxy.make_server(args.upstream, args.port, host=host, chosen=options, max_body=args.max_body,
                               client_timeout=args.client_timeout, upstream_timeout=args.upstream_timeout,
                               max_connections=args.max_connections, quiet=args.quiet)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    proxy.serve_until_stopped(server)
    return 0
