// The gallery and the case browser, drawn from the page's two data blocks (report/cases.py, Document):
// #seam-data, the index, parsed at load, and #seam-outputs, one line of details per case, a line parsed
// only when its case is shown. Every text from a trace is put in with textContent, never as markup, so
// nothing a model wrote can change the page. A case is named "cluster/condition" (as in the address bar:
// #humaneval-011/blank). The browser draws only the rows in and near its scroll box, however many match.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("seam-data").textContent);
  const models = data.models;
  const rows = data.cases; // [model, cluster, condition, source, verdict, tier, clean line] each
  const details = document.getElementById("seam-outputs").textContent;
  let starts = null; // where each line of #seam-outputs begins: found once, when the first is read

  function line(n) {
    if (starts === null) {
      starts = [0];
      for (let at = details.indexOf("\n"); at !== -1; at = details.indexOf("\n", at + 1)) starts.push(at + 1);
    }
    return JSON.parse(details.slice(starts[n], starts[n + 1] - 1));
  }

  const ids = new Array(rows.length); // "cluster/condition" of each case, and lowercased for the search
  const lowered = new Array(rows.length);
  const byCase = new Map(); // "cluster/condition" -> the indices of its cases, one per model
  for (let i = 0; i < rows.length; i++) {
    const id = rows[i][1] + "/" + rows[i][2];
    ids[i] = id;
    lowered[i] = id.toLowerCase();
    const same = byCase.get(id);
    if (same) same.push(i);
    else byCase.set(id, [i]);
  }

  // A case whole: its index row and its details, parsed now.
  function caseAt(i) {
    const [model, cluster, condition, source, verdict, tier, clean] = rows[i];
    return Object.assign(line(i), {id: ids[i], model, cluster, condition, source, verdict, tier,
                                   clean: clean === null ? null : line(clean)});
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // A text cut into [mark, text] pieces (report/segments.py); ["artifact", null] stands for the paste.
  function textPane(pieces, artifact) {
    const pre = el("pre", "text");
    for (const [mark, piece] of pieces) {
      const text = mark === "artifact" ? artifact : piece;
      if (mark === "" || mark === "artifact") {
        pre.append(document.createTextNode(text));
      } else if (mark === "seam") {
        const seam = el("span", "seam");
        seam.title = "the seam: nothing marks where the paste ends and the remark begins";
        for (const ch of text) {
          const glyph = el("span", "glyph", ch === "\n" ? "\u23ce" : "\u00b7");
          glyph.setAttribute("aria-hidden", "true");
          seam.append(glyph, document.createTextNode(ch));
        }
        pre.append(seam);
      } else {
        pre.append(el(mark === "evidence" ? "mark" : "span", mark, text));
      }
    }
    return pre;
  }

  function pane(title, body) {
    const div = el("div", "pane");
    div.append(el("h5", null, title), body);
    return div;
  }

  function messagePane(c) {
    const cluster = data.clusters[c.cluster];
    return pane("Message (" + c.condition + "): remark and seam marked",
                textPane(cluster.messages[c.condition], cluster.artifact));
  }

  function outputPanes(c) {
    const cleanBody = c.clean === null ? el("p", "none", "no clean output") : textPane([["", c.clean]], "");
    const treatmentBody = c.output === null
      ? el("p", "none", "no output" + (c.reason ? " (" + c.reason + ")" : ""))
      : textPane(c.output, "");
    return [pane("Clean output", cleanBody), pane("Treatment output (" + c.condition + ")", treatmentBody)];
  }

  function labelList(c) {
    const dl = el("dl", "label");
    const items = [["verdict", c.verdict], ["tier", c.tier], ["evidence", c.evidence],
                   ["extraction", c.extraction], ["commentary cut", c.commentary],
                   ["excluded because", c.reason],
                   ["finish reason", finishText(c.finish) + " (clean: " + finishText(c.clean_finish) + ")"]];
    if (c.extraction !== null) {  // an excluded case was never extracted
      const cuts = (c.output || []).filter(p => p[0] === "cut").map(p => p[1].length + " chars");
      const unmarked = c.cuts_unmarked || [];
      items.push(["cut around the edit", cuts.length ? cuts.join(", ") + " (struck through in the output)"
                                                     : unmarked.length ? "" : "nothing"]);
      for (const text of unmarked) items.push(["cut (not found as such in the output)", text]);
    }
    for (const [name, value] of items) {
      if (value === null || value === undefined || value === "") continue;
      dl.append(el("dt", null, name), el("dd", null, value));
    }
    return dl;
  }

  // A reply that failed has no finish reason: say so rather than print "null".
  function finishText(reason) {
    return reason === null || reason === undefined ? "none (no reply)" : reason;
  }

  function verdictLine(c, withModel) {
    const p = el("p");
    if (withModel) p.append(el("strong", null, models[c.model] + ": "));
    p.append(el("span", "verdict " + c.verdict.replace(" ", "-"), c.verdict));
    if (c.tier !== "none") p.append(document.createTextNode(" by " + c.tier));
    return p;
  }

  function caseBlock(c, withMessage) {
    const div = el("div", "case");
    div.dataset.case = c.id;
    div.dataset.model = models[c.model];
    const panes = el("div", "panes");
    if (withMessage) panes.append(messagePane(c));
    panes.append(...outputPanes(c));
    div.append(verdictLine(c, !withMessage), panes, labelList(c));
    return div;
  }

  // A long text opens scrolled to what matters in it: the evidence, the remark, or the last cut.
  function scrollToMarks(root) {
    for (const pre of root.querySelectorAll("pre.text")) {
      const marks = pre.querySelectorAll("mark, .comment, .cut");
      const target = pre.querySelector("mark, .comment") || marks[marks.length - 1];
      if (target) pre.scrollTop = Math.max(0, target.offsetTop - 48);
    }
  }

  // ---------------------------------------------------------------- gallery
  // Every slot is filled now; the browser lays a specimen out only near the screen (page.css,
  // content-visibility), so its texts are scrolled to their marks then, not all at load.
  const nearScreen = "IntersectionObserver" in window ? new IntersectionObserver(entries => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      nearScreen.unobserve(entry.target);
      scrollToMarks(entry.target);
    }
  }, {rootMargin: "600px 0px"}) : null;
  for (const slot of document.querySelectorAll(".specimen")) {
    const found = (byCase.get(slot.dataset.case) || []).find(i => String(rows[i][0]) === slot.dataset.model);
    if (found === undefined) continue;
    slot.append(caseBlock(caseAt(found), true));
    if (nearScreen) nearScreen.observe(slot);
    else scrollToMarks(slot);
  }

  // ---------------------------------------------------------------- case view
  const view = document.getElementById("case-view");
  // Links to the conditions of a cluster that have cases, the one shown (if any) in bold.
  function conditionLinks(cluster, id) {
    const others = el("p", "conditions", "conditions of this cluster: ");
    for (const condition of data.conditions) {
      const other = cluster + "/" + condition;
      if (!byCase.has(other)) continue;
      const a = el(other === id ? "strong" : "a", null, condition);
      if (other !== id) a.href = "#" + other;
      others.append(a, document.createTextNode(" "));
    }
    return others;
  }

  function openCase(id) {
    const found = byCase.get(id);
    view.replaceChildren();
    if (!found) {
      const elsewhere = id === "" || document.getElementById(id) !== null; // a section link, not a case
      if (Object.hasOwn(data.clusters, id)) {  // a cluster without its condition: offer them
        view.append(el("h3", null, id + " \u2014 " + data.clusters[id].source), conditionLinks(id, null));
      } else if (!elsewhere) {
        view.append(el("p", "none", "No case " + id + " in this report."));
      }
      view.hidden = elsewhere;
      return;
    }
    const cases = found.map(caseAt);
    const heading = el("h3", null, id + " \u2014 " + data.clusters[cases[0].cluster].source + " ");
    const link = el("a", null, "(link)");
    link.href = "#" + id;
    heading.append(link);
    view.append(heading, conditionLinks(cases[0].cluster, id), messagePane(cases[0]));
    for (const c of cases) view.append(caseBlock(c, false));
    view.hidden = false;
    scrollToMarks(view);
    view.scrollIntoView();
  }
  // The case named in the address; a hash that is not valid percent-encoding is taken as it stands.
  function hashId() {
    const raw = location.hash.slice(1);
    try {
      return decodeURIComponent(raw);
    } catch (error) {
      return raw;
    }
  }
  window.addEventListener("hashchange", () => openCase(hashId()));

  // ---------------------------------------------------------------- browser
  // "origin" (released or yours) only on a page of `seam.py compare`, whose tables say each model's
  const origins = data.origins || {};
  const fields = ["model", "origin", "condition", "source", "verdict", "tier"]
    .filter(f => document.getElementById("filter-" + f) !== null);
  const controls = Object.fromEntries(fields.map(f => [f, document.getElementById("filter-" + f)]));
  const column = {condition: 2, source: 3, verdict: 4, tier: 5}; // of an index row
  const search = document.getElementById("filter-cluster");
  const table = document.getElementById("cases");
  const body = table.tBodies[0];
  const count = document.getElementById("cases-count");
  const scroller = document.getElementById("cases-scroll");
  const spacer = document.getElementById("cases-window"); // its padding stands for the rows not drawn
  const OVERSCAN = 40; // rows drawn beyond each edge of the scroll box
  let shown = []; // the indices of the cases that match, in page order
  let first = 0, end = 0; // the rows drawn: shown[first] up to shown[end - 1]
  let rowHeight = 0, headHeight = 0; // measured once rows are drawn

  // The cases the filters and the search let through: read once, compared with the index rows.
  function matching() {
    const tests = [];
    for (const f of fields) {
      const want = controls[f].value;
      if (want === "") continue;
      if (f === "model") tests.push(r => models[r[0]] === want);
      else if (f === "origin") tests.push(r => origins[models[r[0]]] === want);
      else tests.push(r => r[column[f]] === want);
    }
    const term = search.value.trim().toLowerCase();  // a cluster id, or a whole case id as in a link
    const out = [];
    for (let i = 0; i < rows.length; i++) {
      if (term !== "" && !lowered[i].includes(term)) continue;
      if (tests.every(test => test(rows[i]))) out.push(i);
    }
    return out;
  }

  function rowOf(n) {
    const i = shown[n], r = rows[i];
    const tr = el("tr");
    tr.dataset.case = ids[i];
    tr.dataset.model = models[r[0]];
    tr.setAttribute("aria-rowindex", n + 2); // the header is row 1
    const link = el("a", null, ids[i]);
    link.href = "#" + ids[i];
    const cell = el("td");
    cell.append(link);
    tr.append(cell);
    for (const value of [models[r[0]], r[2], r[3], r[4], r[5]]) tr.append(el("td", null, value));
    return tr;
  }

  function rowsOf(from, to) {
    const rowsFragment = document.createDocumentFragment();
    for (let n = from; n < to; n++) rowsFragment.append(rowOf(n));
    return rowsFragment;
  }

  // Draw the rows that show in the scroll box and OVERSCAN more each way; rows still in range stay as they
  // are (a focused link keeps its focus). `reset`: the filter changed, draw afresh.
  function draw(reset) {
    const total = shown.length, height = rowHeight || 24;
    const top = Math.max(0, scroller.scrollTop - headHeight);
    const from = Math.min(total, Math.floor(top / height));
    const to = Math.min(total, Math.ceil((top + Math.max(scroller.clientHeight, innerHeight)) / height));
    const margin = OVERSCAN / 4;
    if (!reset && (from >= first + margin || first === 0) && (to <= end - margin || end === total)) return;
    const start = Math.max(0, from - OVERSCAN), stop = Math.min(total, to + OVERSCAN);
    if (reset || start >= end || stop <= first) {
      body.replaceChildren(rowsOf(start, stop));
    } else {
      for (; first < start; first++) body.firstElementChild.remove();
      for (; end > stop; end--) body.lastElementChild.remove();
      if (start < first) body.prepend(rowsOf(start, first));
      if (stop > end) body.append(rowsOf(end, stop));
    }
    first = start;
    end = stop;
    if (!rowHeight && body.rows.length > 1) {  // one line each (page.css): all rows are as high
      const last = body.rows[body.rows.length - 1].getBoundingClientRect().bottom;
      rowHeight = (last - body.rows[0].getBoundingClientRect().top) / body.rows.length;
      headHeight = table.tHead.getBoundingClientRect().height;
    }
    spacer.style.paddingTop = first * (rowHeight || height) + "px";
    spacer.style.paddingBottom = (total - end) * (rowHeight || height) + "px";
  }

  function refresh() {
    shown = matching();
    count.textContent = shown.length + " of " + rows.length + " cases";
    table.setAttribute("aria-rowcount", shown.length + 1);
    scroller.scrollTop = 0;
    draw(true);
  }
  for (const f of fields) controls[f].addEventListener("change", refresh);
  search.addEventListener("input", refresh);
  scroller.addEventListener("scroll", () => draw(false), {passive: true});
  window.addEventListener("resize", () => draw(false));
  refresh();
  openCase(hashId());
})();
