"""Model configs: a good one loads with defaults; each mistake names file, line, key and what was expected."""

from __future__ import annotations

import pytest

from common.errors import UserError
from runner import providers
from runner.apikey import read_api_key, redact
from runner.config import load_config

GOOD = """\
name = "gpt-x-2026-01"
provider = "openai"
model = "gpt-x"
base_url = "https://example.test/v1/"
api_key_env = "SEAM_TEST_KEY"
temperature = 0.0
max_tokens = 4096
timeout_s = 120
concurrency = 8
max_retries = 6
requests_per_minute = 300

[params]
seed = 0
"""


def write(tmp_path, text, name="model.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_good_config_loads_every_key(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    assert (config.name, config.provider, config.model) == ("gpt-x-2026-01", "openai", "gpt-x")
    assert config.base_url == "https://example.test/v1"  # trailing slash dropped
    assert (config.temperature, config.max_tokens, config.timeout_s) == (0.0, 4096, 120.0)
    assert (config.concurrency, config.max_retries, config.requests_per_minute) == (8, 6, 300.0)
    assert config.params == {"seed": 0}
    assert config.api_key_env == "SEAM_TEST_KEY"


def test_minimal_local_server_config_gets_defaults(tmp_path):
    config = load_config(write(tmp_path, 'name = "local"\nprovider = "openai"\nmodel = "m"\n'
                                         'base_url = "http://127.0.0.1:8080/v1"\nmax_tokens = 512\n'))
    assert config.api_key_env is None and config.temperature is None
    assert (config.concurrency, config.max_retries, config.timeout_s) == (1, 6, 120.0)
    assert config.base_url == "http://127.0.0.1:8080/v1"


@pytest.mark.parametrize("provider", providers.NAMES)
def test_default_base_url_per_provider(tmp_path, provider):
    text = f'name = "x"\nprovider = "{provider}"\nmodel = "m"\nmax_tokens = 5\n'
    config = load_config(write(tmp_path, text))
    assert config.base_url == providers.get(provider).DEFAULT_BASE_URL
    assert config.base_url.startswith("https://")


MISTAKES = [  # (old text, new text, the error expected), the file being model.toml
    ("max_tokens = 4096", "max_tokens = 4096\nmax_token = 3",
     r":8: unknown key 'max_token'; expected one of name, provider"),
    ("temperature = 0.0", 'temperature = "0"', r":6: key 'temperature' must be a number >= 0, got a string"),
    ("concurrency = 8", "concurrency = true", r":9: key 'concurrency' must be an integer .*boolean"),
    ("concurrency = 8", "concurrency = 2.5", r":9: key 'concurrency' must be an integer"),
    ("concurrency = 8", "concurrency = 0", r":9: key 'concurrency' must be an integer from 1"),
    ("max_tokens = 4096", "max_tokens = 0", r":7: key 'max_tokens' must be an integer >= 1"),
    ("timeout_s = 120", "timeout_s = -1", r":8: key 'timeout_s' must be a number of seconds > 0"),
    ("temperature = 0.0", "temperature = -0.5", r":6: key 'temperature'"),
    ("temperature = 0.0", "temperature = inf", r":6: key 'temperature' must be a number >= 0, got a number \(inf\)"),
    ("timeout_s = 120", "timeout_s = inf", r":8: key 'timeout_s' must be a number of seconds > 0"),
    ("requests_per_minute = 300", "requests_per_minute = nan", r":11: key 'requests_per_minute' must be"),
    ('provider = "openai"', 'provider = "cohere"',
     r":2: key 'provider' must be one of openai, anthropic, gemini, got 'cohere'"),
    ('base_url = "https://example.test/v1/"', 'base_url = "example.test"', r":4: key 'base_url'"),
    ('api_key_env = "SEAM_TEST_KEY"', 'api_key_env = "sk-live-123"', r":5: key 'api_key_env' must"),
    ('name = "gpt-x-2026-01"', 'name = "gpt x/1"', r":1: key 'name' must be a label"),
    ('model = "gpt-x"\n', "", r": missing required key 'model'"),
    ("seed = 0", "model = 'other'", r":13: \[params\]: 'model' is already set by the runner"),
    ("seed = 0", "messages = []", r":13: \[params\]: 'messages' may not be set"),
    ("seed = 0", "stream = true", r":13: \[params\]: 'stream' may not be set"),
    ("[params]\nseed = 0", "params = 3", r":13: key 'params' must be a table"),
    ("max_tokens = 4096", 'max_tokens = 4096\nmax_tokens_field = "max_output"',
     r":8: key 'max_tokens_field' must"),
    # numbers past what a clock or a socket can take (OverflowError mid-run, once)
    ("timeout_s = 120", "timeout_s = 1e10",
     r":8: key 'timeout_s' must be a number of seconds > 0 and at most 86400 \(one day\), got 10000000000\.0$"),
    ("timeout_s = 120", "timeout_s = 1e300", r":8: key 'timeout_s' must be .* at most 86400"),
    ("timeout_s = 120", "timeout_s = 9223372036854775807", r":8: key 'timeout_s' must be .* at most 86400"),
    ("timeout_s = 120", "timeout_s = 86400.5", r":8: key 'timeout_s' must be .* at most 86400"),
    ("requests_per_minute = 300", "requests_per_minute = 1e-9",
     r":11: key 'requests_per_minute' must be a number >= 1/3600 \(one attempt an hour\), got 1e-09$"),
    # [params] values a JSON body cannot carry (TypeError, or a bare NaN on the wire, once)
    ("seed = 0", "seed = 1979-05-27T07:32:00Z",
     r":14: \[params\] key 'seed' is a TOML date/time \(1979-05-27 07:32:00\+00:00\), which JSON cannot "
     r"carry; write it as a string"),
    ("seed = 0", "seed = 0\n[params.extra]\nday = 1979-05-27", r":16: \[params\] key 'extra.day' is a TOML date/time"),
    ("seed = 0", "seed = 0\nstop = [1, 07:32:00]", r":15: \[params\] key 'stop\[1\]' is a TOML date/time"),
    ("seed = 0", "seed = nan", r":14: \[params\] key 'seed' is nan, which JSON cannot carry"),
    ("seed = 0", "seed = 0\nbias = {a = -inf}", r":15: \[params\] key 'bias.a' is -inf, which JSON cannot carry"),
    # base_url: parsed, not just checked as a prefix (InvalidURL at every attempt, retried, once)
    ('base_url = "https://example.test/v1/"', 'base_url = "http://[::1/v1"',
     r":4: key 'base_url' must be an http:// or https:// URL with a host .*'http://\[::1/v1' \(Invalid IPv6 URL\)"),
    ('base_url = "https://example.test/v1/"', 'base_url = "http://127.0.0.1:99999/v1"',
     r":4: key 'base_url' .* port .*1 to 65535.*'http://127\.0\.0\.1:99999/v1'"),
    ('base_url = "https://example.test/v1/"', 'base_url = "http://127.0.0.1:0/v1"', r":4: key 'base_url' .* port"),
    ('base_url = "https://example.test/v1/"', 'base_url = "http://127.0.0.1:80a/v1"', r":4: key 'base_url' .* port"),
    ('base_url = "https://example.test/v1/"', 'base_url = "http://127.0.0.1:8080/v1\\n"',
     r":4: key 'base_url' must not contain white space or control characters, got 'http://127\.0\.0\.1:8080/v1\\n'"),
    ('base_url = "https://example.test/v1/"', 'base_url = "https://exa mple.test/v1"',
     r":4: key 'base_url' must not contain white space"),
    ('base_url = "https://example.test/v1/"', 'base_url = "https:///v1"', r":4: key 'base_url' .* with a host"),
    ('base_url = "https://example.test/v1/"', 'base_url = "https://exa$mple.test/v1"', r":4: key 'base_url' .* host"),
    ('base_url = "https://example.test/v1/"', 'base_url = "https://example.test/v1?key=abc"',
     r":4: key 'base_url' must not have a query \(\?\.\.\.\) or fragment"),
    ('base_url = "https://example.test/v1/"', 'base_url = "https://u:p@example.test/v1"',
     r":4: key 'base_url' must not hold credentials \(user:password@\)"),
    ('model = "gpt-x"', 'model = "gpt-x\\n"', r":3: key 'model' must not contain control characters"),
]


@pytest.mark.parametrize(("old", "new", "expected"), MISTAKES)
def test_config_mistakes_name_file_line_and_expectation(tmp_path, old, new, expected):
    assert old in GOOD
    with pytest.raises(UserError, match=r"model\.toml" + expected):
        load_config(write(tmp_path, GOOD.replace(old, new)))


@pytest.mark.parametrize("url", ["https://example.test/v1", "http://127.0.0.1:8080/v1", "http://[::1]:8080/v1",
                                 "http://localhost/v1", "https://my_host.internal:443", "http://127.0.0.1:65535"])
def test_good_base_urls_still_load(tmp_path, url):
    config = load_config(write(tmp_path, GOOD.replace("https://example.test/v1/", url)))
    assert config.base_url == url


def test_a_huge_value_is_quoted_cut_short(tmp_path):
    for old, new in (('name = "gpt-x-2026-01"', 'name = "' + "x y" * 50_000 + '"'),
                     ("timeout_s = 120", 'timeout_s = "' + "9" * 100_000 + '"')):
        with pytest.raises(UserError) as error:
            load_config(write(tmp_path, GOOD.replace(old, new)))
        assert len(str(error.value)) < 300 and "characters)" in str(error.value)


def test_not_toml_and_missing_file(tmp_path):
    with pytest.raises(UserError, match=r"model\.toml: not valid TOML"):
        load_config(write(tmp_path, "name = \n"))
    with pytest.raises(UserError, match=r"nope\.toml: no such file, expected a model config \(TOML\)"):
        load_config(tmp_path / "nope.toml")


def test_max_tokens_field_only_for_openai(tmp_path):
    text = 'name = "x"\nprovider = "anthropic"\nmodel = "m"\nmax_tokens = 5\n'
    text += 'max_tokens_field = "max_tokens"\n'
    with pytest.raises(UserError, match=r"model\.toml:5: key 'max_tokens_field' applies to provider 'op"):
        load_config(write(tmp_path, text))
    config = load_config(write(tmp_path, text.replace("anthropic", "openai").replace(
        '"max_tokens"\n', '"max_completion_tokens"\n')))
    _, _, body = providers.get("openai").build_request(config, "hi")
    assert body["max_completion_tokens"] == 5 and "max_tokens" not in body


def test_gemini_params_merge_into_generation_config_but_never_override(tmp_path):
    base = 'name = "g"\nprovider = "gemini"\nmodel = "gemini-x"\nmax_tokens = 64\ntemperature = 0.0\n'
    config = load_config(write(tmp_path, base + "[params.generationConfig]\nseed = 7\n"))
    _, _, body = providers.get("gemini").build_request(config, "hi")
    assert body["generationConfig"] == {"maxOutputTokens": 64, "temperature": 0.0, "seed": 7}
    with pytest.raises(UserError, match=r"'maxOutputTokens' is already set by the runner"):
        load_config(write(tmp_path, base + "[params.generationConfig]\nmaxOutputTokens = 9\n"))
    with pytest.raises(UserError, match=r"'systemInstruction' may not be set"):
        load_config(write(tmp_path, base + "[params.systemInstruction]\ntext = 'be brief'\n"))


def test_api_key_comes_from_the_named_variable_only(tmp_path, monkeypatch):
    config = load_config(write(tmp_path, GOOD))
    monkeypatch.delenv("SEAM_TEST_KEY", raising=False)
    with pytest.raises(UserError, match=r"model\.toml: api_key_env names SEAM_TEST_KEY, which is not set"):
        read_api_key(config)
    monkeypatch.setenv("SEAM_TEST_KEY", "sk-test-0123456789")
    assert read_api_key(config) == "sk-test-0123456789"
    local = load_config(write(tmp_path, GOOD.replace('api_key_env = "SEAM_TEST_KEY"\n', ""), "local.toml"))
    assert read_api_key(local) is None


def test_redact_hides_the_key_but_leaves_short_keys_alone():
    assert redact("bad key sk-test-0123456789!", "sk-test-0123456789") == "bad key <redacted>!"
    assert redact("a text with x in it", "x") == "a text with x in it"
    assert redact("nothing", None) == "nothing"


# --- what tomllib itself cannot read, and [params] nested past any real request body (issue 13) -----------

DIGITS = "1" * 5_000  # past Python's 4,300-digit limit for reading an integer: ValueError inside tomllib


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("max_tokens = 4096", f"max_tokens = {DIGITS}", r":7: key 'max_tokens' holds an integer of more than 4,300 digits"),
    ("seed = 0", f"seed = {DIGITS}", r":14: key 'seed' holds an integer of more than 4,300 digits"),
    ('name = "gpt-x-2026-01"', f"name = {DIGITS[:300]}_{DIGITS}", r":1: key 'name' holds an integer of more than"),
    ("seed = 0", f"seed = [1, 2,\n  {DIGITS}]", r":15: an integer of more than 4,300 digits"),
])
def test_an_integer_too_long_to_read_is_one_line_naming_its_line_and_key(tmp_path, old, new, expected):
    with pytest.raises(UserError, match=r"^\S*model\.toml" + expected):
        load_config(write(tmp_path, GOOD.replace(old, new)))


@pytest.mark.parametrize("nested", ["[" * 5_000 + "]" * 5_000, "{a = " * 2_000 + "1" + "}" * 2_000],
                         ids=["arrays", "inline-tables"])
def test_toml_nested_too_deeply_to_read_is_one_line_naming_the_file(tmp_path, nested):
    path = write(tmp_path, GOOD.replace("seed = 0", f"stop = {nested}"))
    with pytest.raises(UserError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: not valid TOML (nested too deeply to read)"


@pytest.mark.parametrize(("params", "expected"), [
    ("a" + ".a" * 1_999 + " = 1", r":15: \[params\] key 'a\.a\.a.*' is nested more than 32 levels deep"),
    ("stop = " + "[" * 40 + "]" * 40, r":15: \[params\] key 'stop\[0\]\[0\].*' is nested more than 32 levels deep"),
    ("[params.b]\n" + "a" + ".a" * 31 + " = 1",
     r":16: \[params\] key 'b\.a\.a.*… \(65 characters\)' is nested more than 32"),
])
def test_params_nested_more_than_32_levels_are_refused(tmp_path, params, expected):
    with pytest.raises(UserError, match=r"^\S*model\.toml" + expected):
        load_config(write(tmp_path, GOOD.replace("seed = 0", f"seed = 0\n{params}")))


def test_params_nested_32_levels_still_load(tmp_path):
    config = load_config(write(tmp_path, GOOD.replace("seed = 0", "seed = 0\na" + ".a" * 31 + " = 1")))
    value, depth = config.params["a"], 1
    while isinstance(value, dict):
        value, depth = value["a"], depth + 1
    assert (value, depth) == (1, 32)
