"""common.argtypes: every option value type refuses what it must, in words that say what it expected."""

import argparse

import pytest

from common import argtypes


@pytest.mark.parametrize(("kind", "good", "bad"), [
    (argtypes.positive_int, {"1": 1, "20": 20}, ["0", "-3", "1.5", "x"]),
    (argtypes.non_negative_int, {"0": 0, "7": 7}, ["-1", "x"]),
    (argtypes.port, {"0": 0, "8766": 8766, "65535": 65535}, ["-1", "65536", "70000", "x"]),
    (argtypes.positive_float, {"0.5": 0.5, "7": 7.0}, ["0", "-1", "nan", "inf", "x"]),
    (argtypes.probability, {"0.8": 0.8}, ["0", "1", "1.5", "x"]),
    (argtypes.fraction, {"0": 0.0, "1": 1.0, "0.27": 0.27}, ["-0.1", "1.01", "nan", "x"]),
    (argtypes.names, {"a, b": ["a", "b"], "clean": ["clean"]}, [",", " "]),
])
def test_each_type_takes_what_it_should_and_refuses_the_rest(kind, good, bad):
    for text, value in good.items():
        assert kind(text) == value
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match="expected|must"):
            kind(text)


@pytest.mark.parametrize("command", [["review", "serve", "r.jsonl"],
                                     ["occurrence", "annotate", "s.jsonl", "--corpus", "c"]])
def test_a_port_out_of_range_is_a_usage_error_naming_the_option(command, capsys):
    import seam

    with pytest.raises(SystemExit) as done:
        seam.main([*command, "--port", "70000"])
    assert done.value.code == 2
    assert "argument --port: must be a port from 0 to 65535" in capsys.readouterr().err
