// The labeling page's elements, looked up once by id, and the DOM helpers the
// other modules share: text spans and the panels (note, correction, help,
// history, set-aside labels), of which at most one is open.
//
// Document text is untrusted: it only ever reaches the page through
// textContent (span() below, or text nodes).

const $ = (id) => document.getElementById(id);

export const el = {
  item: $("item"),
  empty: $("empty"),
  emptyWhy: $("empty-why"),
  progress: $("progress"),
  sync: $("sync"),
  claim: $("claim"),
  // Shared by every claim partial (templates/claims/_judgement.html).
  why: $("why"),
  current: $("current-label"),
  draft: $("draft"),
  machine: $("machine"),
  doc: $("doc"),
  docId: $("doc-id"),
  docPages: $("doc-pages"),
  expandBtn: $("expand-btn"),
  siblings: $("siblings"),
  detour: $("detour"),
  detourWhy: $("detour-why"),
  noteForm: $("note-form"),
  noteInput: $("note-input"),
  correctForm: $("correct-form"),
  correctType: $("correct-type"),
  correctValue: $("correct-value"),
  help: $("help"),
  guideline: $("guideline"),
  history: $("history"),
  historyRows: $("history-rows"),
  historyPage: $("history-page"),
  noteCount: $("note-count"),
  failed: $("failed"),
  failedRows: $("failed-rows"),
  failedButton: $("failed-button"),
};

export function span(text, cls) {
  const node = document.createElement("span");
  node.className = cls;
  node.textContent = text;
  return node;
}

export function closePanels() {
  el.noteForm.hidden = true;
  el.correctForm.hidden = true;
  el.help.hidden = true;
  el.guideline.hidden = true;
  el.history.hidden = true;
  el.failed.hidden = true;
}

export function panelOpen() {
  return !(
    el.noteForm.hidden &&
    el.correctForm.hidden &&
    el.help.hidden &&
    el.guideline.hidden &&
    el.history.hidden &&
    el.failed.hidden
  );
}
