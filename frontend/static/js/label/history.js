// "My labels": the expert's recent labels, a page at a time from the API, each
// with a Change button that opens its claim again (the click is handled
// in keys.js, like every button on the page).

import { api } from "./api.js";
import { closePanels, el } from "./dom.js";
import { state, urls } from "./state.js";

export async function openHistory(page) {
  closePanels();
  el.history.hidden = false;
  state.historyPage = Math.max(1, page);
  let reply;
  try {
    reply = await api("GET", `${urls.mine}?page=${state.historyPage}`);
  } catch {
    el.historyRows.replaceChildren();
    el.historyPage.textContent = "could not load";
    return;
  }
  el.historyPage.textContent = `page ${state.historyPage} · ${reply.count} labels`;
  el.historyRows.replaceChildren(
    ...reply.results.map((a) => {
      const tr = document.createElement("tr");
      const cells = [
        new Date(a.updated_at).toLocaleTimeString(),
        a.hypothesis,
        a.document_external_id,
        a.label + (a.note ? " ✎" : ""),
      ].map((text) => {
        const td = document.createElement("td");
        td.textContent = text;
        return td;
      });
      const td = document.createElement("td");
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = "Change";
      button.dataset.claim = String(a.claim);
      td.append(button);
      tr.append(...cells, td);
      return tr;
    }),
  );
}
