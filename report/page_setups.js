  // ---------------------------------------------------------------- what a condition sends besides its message
  // Inserted by report/setups.py, only on a page whose conditions send a system prompt or earlier turns, or are
  // scored against another control than clean (the index's "setups"): it wraps the case panes above, so that a
  // case shows its system prompt, its earlier turns (the model's own reply among them: details "reply", a line)
  // and the control's output by its name. Texts go in with textContent, as everywhere.
  const setups = data.setups || {};
  const controlOf = condition => (Object.hasOwn(setups, condition) ? setups[condition].control : "clean");
  const messageOnly = messagePane, twoOutputs = outputPanes, labelsOnly = labelList;

  messagePane = function (c) {
    const main = messageOnly(c);
    if (!Object.hasOwn(setups, c.condition)) return main;
    const setup = setups[c.condition], cluster = data.clusters[c.cluster];
    const all = document.createDocumentFragment();
    if (setup.system !== undefined) {
      const system = pane("System prompt (" + c.condition + ")", textPane([["", setup.system]], ""));
      system.classList.add("system");
      all.append(system);
    }
    if (setup.opening !== undefined) {
      all.append(pane("Earlier turn, user: the " + setup.opening + " message",
                      textPane(cluster.messages[setup.opening], cluster.artifact)));
      if (setup.reply === "fixed") {
        all.append(pane("Earlier turn, assistant: a fixed reply", textPane([["", setup.reply_text]], "")));
      }
      main.firstChild.textContent = "Message (" + c.condition + "), the last user turn: remark and seam marked";
    }
    all.append(main);
    return all;
  };

  outputPanes = function (c) {
    const panes = twoOutputs(c);
    const control = controlOf(c.condition), setup = setups[c.condition];
    if (control !== "clean") {
      panes[0].firstChild.textContent = "Control output (" + control + ")";
      const none = panes[0].querySelector("p.none");
      if (none) none.textContent = "no " + control + " output";
    }
    if (setup !== undefined && setup.reply === "model") {  // this model's own reply, the assistant's turn
      const reply = c.reply === undefined || c.reply === null ? null : line(c.reply);
      panes.unshift(pane("Earlier turn, assistant: this model's " + setup.opening + " output",
                         reply === null ? el("p", "none", "no " + setup.opening + " output")
                                        : textPane([["", reply]], "")));
    }
    return panes;
  };

  labelList = function (c) {
    const dl = labelsOnly(c);
    const control = controlOf(c.condition);
    if (control === "clean") return dl;
    for (const dt of dl.querySelectorAll("dt")) {
      if (dt.textContent === "finish reason") {
        dt.nextElementSibling.textContent = finishText(c.finish) + " (" + control + ": " +
          finishText(c.clean_finish) + ")";
      }
    }
    return dl;
  };

