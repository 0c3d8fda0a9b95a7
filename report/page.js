// The gallery and the case browser, drawn from the JSON document in #seam-data.
// Every text from a trace is put in with textContent, never as markup, so nothing a model wrote can
// change the page. A case is named "cluster/condition" (as in the address bar: #humaneval-011/blank).
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("seam-data").textContent);
  const models = data.models;
  const byCase = new Map(); // "cluster/condition" -> cases, one per model
  for (const c of data.cases) {
    c.id = c.cluster + "/" + c.condition;
    if (!byCase.has(c.id)) byCase.set(c.id, []);
    byCase.get(c.id).push(c);
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
    const clean = (data.clean[models[c.model]] || {})[c.cluster];
    const cleanBody = clean === undefined || clean === null
      ? el("p", "none", "no clean output") : textPane([["", clean]], "");
    const treatmentBody = c.output === null
      ? el("p", "none", "no output" + (c.reason ? " (" + c.reason + ")" : ""))
      : textPane(c.output, "");
    return [pane("Clean output", cleanBody), pane("Treatment output (" + c.condition + ")", treatmentBody)];
  }

  function labelList(c) {
    const dl = el("dl", "label");
    const rows = [["verdict", c.verdict], ["tier", c.tier], ["evidence", c.evidence],
                  ["extraction", c.extraction], ["commentary cut", c.commentary],
                  ["excluded because", c.reason],
                  ["finish reason", finishText(c.finish) + " (clean: " + finishText(c.clean_finish) + ")"]];
    if (c.extraction !== null) {  // an excluded case was never extracted
      const cuts = (c.output || []).filter(p => p[0] === "cut").map(p => p[1].length + " chars");
      const unmarked = c.cuts_unmarked || [];
      rows.push(["cut around the edit", cuts.length ? cuts.join(", ") + " (struck through in the output)"
                                                    : unmarked.length ? "" : "nothing"]);
      for (const text of unmarked) rows.push(["cut (not found as such in the output)", text]);
    }
    for (const [name, value] of rows) {
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
  for (const slot of document.querySelectorAll(".specimen")) {
    const found = (byCase.get(slot.dataset.case) || []).find(c => String(c.model) === slot.dataset.model);
    if (found) {
      slot.append(caseBlock(found, true));
      scrollToMarks(slot);
    }
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
    const cases = byCase.get(id);
    view.replaceChildren();
    if (!cases) {
      const elsewhere = id === "" || document.getElementById(id) !== null; // a section link, not a case
      if (Object.hasOwn(data.clusters, id)) {  // a cluster without its condition: offer them
        view.append(el("h3", null, id + " \u2014 " + data.clusters[id].source), conditionLinks(id, null));
      } else if (!elsewhere) {
        view.append(el("p", "none", "No case " + id + " in this report."));
      }
      view.hidden = elsewhere;
      return;
    }
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
  const search = document.getElementById("filter-cluster");
  const body = document.querySelector("#cases tbody");
  const count = document.getElementById("cases-count");

  function matches(c) {
    for (const f of fields) {
      const want = controls[f].value;
      const have = f === "model" ? models[c.model] : f === "origin" ? origins[models[c.model]] : c[f];
      if (want !== "" && have !== want) return false;
    }
    const term = search.value.trim().toLowerCase();  // a cluster id, or a whole case id as in a link
    return term === "" || c.id.toLowerCase().includes(term);
  }

  function refresh() {
    const rows = document.createDocumentFragment();
    let shown = 0;
    for (const c of data.cases) {
      if (!matches(c)) continue;
      shown += 1;
      const tr = el("tr");
      tr.dataset.case = c.id;
      tr.dataset.model = models[c.model];
      const link = el("a", null, c.id);
      link.href = "#" + c.id;
      const first = el("td");
      first.append(link);
      tr.append(first);
      for (const value of [models[c.model], c.condition, c.source, c.verdict, c.tier]) tr.append(el("td", null, value));
      rows.append(tr);
    }
    body.replaceChildren(rows);
    count.textContent = shown + " of " + data.cases.length + " cases";
  }
  for (const f of fields) controls[f].addEventListener("change", refresh);
  search.addEventListener("input", refresh);
  refresh();
  openCase(hashId());
})();
