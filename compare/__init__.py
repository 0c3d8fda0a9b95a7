"""Bring your own model: set its traces beside the released models' without touching the release.

`seam.py compare TRACE... --out DIR` scores the user's traces, builds every table the release has (the
absorption tables, the validity tables, usage) with the released models as reference rows, each row
marked by its `origin` (`released` or `yours`), and the HTML report with an origin filter. By default the
user's models form their own Holm family, so their p-values do not depend on what was released and the
released rows keep their released values; `--family panel` puts every model into one family, as the
paper's panel of 20 did. Nothing is written under data/ (docs/COMPARE.md).

    merge   tables with an origin column, two families side by side
    build   the steps: check, score, tables, validity, report
    cli     the command
"""
