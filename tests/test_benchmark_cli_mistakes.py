"""User mistakes on `seam.py prompts`: an unknown cluster id is an error, not an empty output; an option's old
spelling is refused naming the new one."""

import json

import pytest

import seam


def test_an_unknown_cluster_is_an_error_naming_it(capsys):
    code = seam.main(["prompts", "--cluster-ids", "humaneval-001,nowhere-001"])
    captured = capsys.readouterr()
    assert code == 2
    assert "no cluster nowhere-001" in captured.err
    assert captured.out == ""


def test_a_cluster_outside_the_chosen_source_is_an_error(capsys):
    code = seam.main(["prompts", "--sources", "fissix", "--cluster-ids", "humaneval-001"])
    captured = capsys.readouterr()
    assert code == 2
    assert "no cluster humaneval-001 among source(s) fissix" in captured.err


def test_known_clusters_are_rendered(capsys):
    assert seam.main(["prompts", "--cluster-ids", "fissix-002", "--only", "clean"]) == 0
    assert capsys.readouterr().out.count('"id":"fissix-002/clean"') == 1


# One spelling for one idea in every command that selects requests (prompts, run): comma lists, and the old
# spellings refused in one line that names the option to use now, spelled so that it can be pasted.
OLD_SPELLINGS = [
    ("--source", "fissix,austen", "--source is now --sources, which takes a comma list: use --sources fissix,austen"),
    ("--condition", "clean", "--condition is now --only, which takes a comma list: use --only clean"),
    ("--cluster", "humaneval-001",
     "--cluster is now --cluster-ids, which takes a comma list: use --cluster-ids humaneval-001"),
    ("--clusters", "2", "--clusters is now --first (the first N clusters): use --first 2"),
    ("--clusters", "humaneval-001",
     "--clusters is now --first N (a count); to keep given clusters, use --cluster-ids humaneval-001"),
]


@pytest.mark.parametrize("command", ["prompts", "run"])
@pytest.mark.parametrize(("old", "value", "hint"), OLD_SPELLINGS)
def test_an_old_spelling_is_refused_in_one_line_naming_the_new_one(command, old, value, hint, capsys):
    argv = [command, *(["no-such-config.toml"] if command == "run" else []), old, value]
    with pytest.raises(SystemExit) as stopped:
        seam.main(argv)
    captured = capsys.readouterr()
    assert stopped.value.code == 2
    assert captured.err == f"seam.py {command}: error: {hint}\n"
    assert captured.out == ""


def test_prompts_and_run_offer_the_same_selection_options(capsys):
    for command in ("prompts", "run"):
        with pytest.raises(SystemExit):
            seam.main([command, "--help"])
        shown = capsys.readouterr().out
        for option in ("--sources S[,S...]", "--only C[,C...]", "--cluster-ids ID[,ID...]", "--first N"):
            assert option in shown, (command, option)
        for old in ("--source ", "--condition ", "--cluster ", "--clusters "):  # hidden, never offered
            assert old not in shown, (command, old)


def test_prompts_keeps_given_clusters_and_the_first_n(capsys):
    assert seam.main(["prompts", "--cluster-ids", "fissix-002, austen-007", "--only", "clean,blank"]) == 0
    ids = [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()]
    assert ids == ["fissix-002/clean", "fissix-002/blank", "austen-007/clean", "austen-007/blank"]
    assert seam.main(["prompts", "--sources", "austen,pyfaq", "--first", "2", "--only", "newline"]) == 0
    ids = [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()]
    assert len(ids) == 2 and all(i.startswith("austen-") and i.endswith("/newline") for i in ids)
