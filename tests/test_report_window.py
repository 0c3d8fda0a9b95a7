"""The case browser at scale, in headless Chromium: it draws a window of rows, not all of them, and a reader
still reaches every case: the full count shown, scrolling to the last case, a search, a click far down,
focus kept while the window moves, and gallery texts scrolled to their marks once they come on screen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.reportdata import ROOT, seam_main
from test_report_browser import drawn_rows, labels_of, visible_rows

from benchmark import dataset
from benchmark.conditions import builtin

WINDOW = 300  # the most rows the browser may draw at once ("a few hundred at most")
BOX = "document.getElementById('cases-scroll')"
ROWS = "document.querySelectorAll('#cases tbody tr')"
SETTLE = "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 100))))"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("window") / "report.html"
    seam_main(["report", "--labels", str(ROOT / "data" / "labels"), "--traces", str(ROOT / "data" / "traces"),
               "--tables", str(ROOT / "data" / "tables"), "--out", str(out)])
    return out


@pytest.fixture
def page(browser, report):
    page = browser.open(report, width=1400, height=1000)
    page.wait_for(f"{ROWS}.length > 0", timeout=30)
    yield page
    assert page.console_errors == [], page.console_errors
    page.close()


@pytest.fixture(scope="module")
def in_order() -> list[str]:
    """Every released case as "model:cluster/condition", in the page's order: cluster by cluster in benchmark
    order, then condition, then model."""
    labels = labels_of(ROOT / "data" / "labels")
    clusters = {c.cluster: i for i, c in enumerate(dataset.load().clusters)}
    conditions = {name: i for i, name in enumerate(builtin().names)}
    models = sorted({row["model"] for row in labels})
    labels.sort(key=lambda row: (clusters[row["cluster"]], conditions[row["condition"]], models.index(row["model"])))
    return [f"{row['model']}:{row['id']}" for row in labels]


def scroll_to(page, top: float) -> None:
    """Scroll the box as a reader would (the page hears of it in its own time) and wait until it has redrawn."""
    page.evaluate(f"{BOX}.scrollTop = {top}")
    page.wait_for(f"""(() => {{
        const box = {BOX}, rows = [...{ROWS}];
        const shows = tr => {{ const r = tr.getBoundingClientRect(), b = box.getBoundingClientRect();
                              return r.bottom > b.top && r.top < b.bottom; }};
        return rows.length > 0 && shows(rows[rows.length - 1]) === (box.scrollTop + box.clientHeight
                                                                    >= box.scrollHeight - 1) && rows.some(shows);
    }})()""", timeout=10)


def test_the_browser_draws_a_window_of_rows_and_counts_them_all(page, in_order):
    assert len(in_order) > WINDOW  # the released page has more cases than a window holds
    assert page.evaluate("document.getElementById('cases-count').textContent") == \
        f"{len(in_order)} of {len(in_order)} cases"
    drawn = drawn_rows(page)
    assert 0 < len(drawn) <= WINDOW
    assert drawn == in_order[:len(drawn)]
    assert page.evaluate("document.getElementById('cases').getAttribute('aria-rowcount')") == str(len(in_order) + 1)
    # The box is as tall as all the rows would be: its scroll bar tells how far along the reader is.
    row = page.evaluate(f"{ROWS}[1].getBoundingClientRect().height")
    assert page.evaluate(f"{BOX}.scrollHeight") >= row * len(in_order)


def test_scrolling_the_box_reaches_every_case_in_order_and_the_last(page, in_order):
    assert visible_rows(page) == in_order
    scroll_to(page, 10 ** 9)  # to the very bottom, as a reader dragging the scroll bar down
    drawn = drawn_rows(page)
    assert drawn[-1] == in_order[-1] and len(drawn) <= WINDOW
    assert page.evaluate(f"{ROWS}[{ROWS}.length - 1].getAttribute('aria-rowindex')") == str(len(in_order) + 1)
    scroll_to(page, 0)
    assert drawn_rows(page)[0] == in_order[0]


def test_a_typed_search_narrows_the_count_and_the_rows_and_clearing_it_brings_all_back(page, in_order):
    page.evaluate("document.getElementById('filter-cluster').focus()")
    page.send("Input.insertText", {"text": "austen-01"})  # typed, as a reader types it
    expected = [key for key in in_order if "austen-01" in key.split(":", 1)[1]]
    assert 0 < len(expected) < len(in_order)
    assert page.evaluate("document.getElementById('cases-count').textContent") == \
        f"{len(expected)} of {len(in_order)} cases"
    assert visible_rows(page) == expected
    page.evaluate("(() => { const s = document.getElementById('filter-cluster'); s.select(); })()")
    for kind in ("rawKeyDown", "keyUp"):
        page.send("Input.dispatchKeyEvent", {"type": kind, "key": "Backspace", "code": "Backspace",
                                             "windowsVirtualKeyCode": 8})
    assert page.evaluate("document.getElementById('cases-count').textContent") == \
        f"{len(in_order)} of {len(in_order)} cases"
    drawn = drawn_rows(page)
    assert drawn == in_order[:len(drawn)] and len(drawn) <= WINDOW


def test_clicking_a_row_far_down_opens_its_case(page, in_order):
    page.evaluate("document.getElementById('browser').scrollIntoView()")  # as a reader comes to it
    page.evaluate(SETTLE)
    scroll_to(page, f"{BOX}.scrollHeight * 0.6")
    target = page.evaluate(f"""(() => {{
        const b = {BOX}.getBoundingClientRect();
        const tr = [...{ROWS}].find(tr => tr.getBoundingClientRect().top > b.top + b.height / 2);
        return [tr.getAttribute('aria-rowindex'), tr.dataset.model + ':' + tr.dataset.case];
    }})()""")
    row, key = int(target[0]), target[1]
    assert row > len(in_order) / 2 and in_order[row - 2] == key
    page.click(f"#cases tbody tr[aria-rowindex='{row}'] a")
    case_id = key.split(":", 1)[1]
    page.wait_for(f"location.hash === {json.dumps('#' + case_id)}")
    page.wait_for(f"document.querySelector('#case-view h3')?.textContent.startsWith({json.dumps(case_id)})")
    shown = page.evaluate("[...document.querySelectorAll('#case-view .case')].map(d => d.dataset.model)")
    assert key.split(":", 1)[0] in shown


def test_a_focused_row_keeps_its_focus_while_the_window_moves(page, in_order):
    scroll_to(page, f"{ROWS}[1].getBoundingClientRect().height * 1000")
    first = page.evaluate(f"{ROWS}[0].getAttribute('aria-rowindex')")
    row = page.evaluate(f"""(() => {{  // the last row wholly in the box, as a reader tabbing down reaches it
        const b = {BOX}.getBoundingClientRect();
        const tr = [...{ROWS}].filter(tr => tr.getBoundingClientRect().bottom <= b.bottom).pop();
        tr.querySelector('a').focus({{preventScroll: true}});
        return tr.getAttribute('aria-rowindex');
    }})()""")
    # Half a boxful at a time, until the window moves (other rows drawn at both ends): the focused row,
    # still in or just above the box, stays as it was, focused.
    for _ in range(20):
        before = page.evaluate(f"{BOX}.scrollTop")
        page.evaluate(f"{BOX}.scrollTop += {BOX}.clientHeight / 2")
        page.wait_for(f"{BOX}.scrollTop !== {before}")
        page.evaluate(SETTLE)
        if page.evaluate(f"{ROWS}[0].getAttribute('aria-rowindex')") != first:
            break
    else:
        pytest.fail("the window never moved")
    focused = page.evaluate("[document.activeElement.isConnected, document.activeElement.closest('tr')"
                            "?.getAttribute('aria-rowindex')]")
    assert focused == [True, row]


def test_a_specimen_is_scrolled_to_its_marks_once_it_comes_on_screen(page):
    # Every slot is filled at load (test_report_browser), laid out only near the screen: its long texts are
    # scrolled to the evidence or the remark when it comes there.
    slot = page.evaluate("""(() => {
        const slots = [...document.querySelectorAll('.specimen')];
        return slots.findIndex(slot => [...slot.querySelectorAll('pre.text')].some(pre => {
            const target = pre.querySelector('mark, .comment');
            return target && target.offsetTop - 48 > 0 && pre.scrollHeight > pre.clientHeight + 100;
        }));
    })()""")
    assert slot >= 0
    specimen = f"document.querySelectorAll('.specimen')[{slot}]"
    page.evaluate(f"{specimen}.scrollIntoView()")
    page.wait_for(f"[...{specimen}.querySelectorAll('pre.text')].some(pre => pre.scrollTop > 0)", timeout=10)


def test_scrolling_up_from_the_browser_into_the_gallery_moves_what_is_in_view_by_the_scroll_alone(page):
    # Specimens are laid out only once near the screen, their size a guess until then. A reader who opened a
    # case and scrolls up into the gallery must not see the text jump as those above are laid out: what is
    # in view moves by what was scrolled (the browser's scroll anchoring makes up for the rest).
    page.evaluate("document.getElementById('browser').scrollIntoView()")
    page.evaluate(SETTLE)
    for step in range(16):
        page.evaluate("window.seen = document.elementFromPoint(innerWidth / 2, innerHeight / 2);"
                      " window.seenAt = seen.getBoundingClientRect().top; scrollBy(0, -300)")
        page.evaluate(SETTLE)
        assert page.evaluate("seen.getBoundingClientRect().top - seenAt") == pytest.approx(300, abs=1), step
