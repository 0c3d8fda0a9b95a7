"""User mistakes on `seam.py prompts`: an unknown cluster id is an error, not an empty output."""

import seam


def test_an_unknown_cluster_is_an_error_naming_it(capsys):
    code = seam.main(["prompts", "--cluster", "humaneval-001", "--cluster", "nowhere-001"])
    captured = capsys.readouterr()
    assert code == 2
    assert "no cluster nowhere-001" in captured.err
    assert captured.out == ""


def test_a_cluster_outside_the_chosen_source_is_an_error(capsys):
    code = seam.main(["prompts", "--source", "fissix", "--cluster", "humaneval-001"])
    captured = capsys.readouterr()
    assert code == 2
    assert "no cluster humaneval-001 among source(s) fissix" in captured.err


def test_known_clusters_are_rendered(capsys):
    assert seam.main(["prompts", "--cluster", "fissix-002", "--condition", "clean"]) == 0
    assert capsys.readouterr().out.count('"id":"fissix-002/clean"') == 1
