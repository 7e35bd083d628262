// Drawing the page from `state`: the claim on screen (its claim and
// evidence through the project's claim partial, the machine verdict, the
// document with the evidence found in it highlighted, the other claims on
// the same document), the progress and sync status line, and the list of
// labels set aside.
//
// Each show() ends with a "label:rendered" event on document: the next item's
// DOM is in place (bench/bench_label_ui.py times keypress to this event).

import { firstMessage } from "./api.js";
import { closePanels, el, span } from "./dom.js";
import { fillClaim } from "./fields.js";
import { loadFailed, outbox } from "./outbox.js";
import { data, state } from "./state.js";
import { renderSuggestion } from "./suggestion.js";
import { renderGuidelineSection } from "./guideline.js";

// Puts item on screen (null: nothing left); detour says why it is not the
// queue's next ("" when it is).
export function show(item, detour) {
  state.current = item;
  state.detour = item ? detour : "";
  state.draft = {
    note: item?.my_label?.note || "",
    correction: item?.my_label?.correction ?? null,
    suggestion: item?.my_label?.suggestion || "",
  };
  state.expanded = false;
  closePanels();
  if (!item) {
    el.item.hidden = true;
    el.empty.hidden = false;
    renderStatus();
    document.dispatchEvent(new CustomEvent("label:rendered", { detail: { id: null } }));
    return;
  }
  el.empty.hidden = true;
  el.item.hidden = false;
  el.item.dataset.claimId = String(item.id);

  el.detour.hidden = !detour;
  el.detourWhy.textContent = detour;
  fillClaim(el.claim, item);
  renderSuggestion(item);
  renderGuidelineSection(item);
  renderWhy(item);
  renderCurrentLabel(item);
  renderDraft();
  renderMachine(item);
  renderDocument(item);
  renderSiblings(item);
  renderStatus();
  state.shownAt = performance.now();
  document.dispatchEvent(new CustomEvent("label:rendered", { detail: { id: item.id } }));
}

// Why the item is in front of the expert, in words (never a score: it shows
// on projects that hide them too).
function renderWhy(item) {
  const why = item.why;
  el.why.hidden = !why;
  el.why.dataset.why = why?.code || "";
  el.why.textContent = why ? `Why this item: ${why.text}` : "";
}

function renderCurrentLabel(item) {
  const mine = item.my_label;
  el.current.hidden = !mine;
  el.current.textContent = mine
    ? `Your label: ${mine.label} (a new decision replaces it)`
    : "";
}

export function renderDraft() {
  const parts = [];
  if (state.draft.suggestion) parts.push(`suggested correction ${state.draft.suggestion}`);
  const correction = state.draft.correction;
  if (state.draft.suggestion !== "accepted" && correction) {
    const keys = data.project.correction_keys;
    const type = keys.type ? (correction[keys.type] ?? state.current?.type) : "";
    const value = correction[keys.value];
    const text = value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
    parts.push(`correction: ${[type, text].filter(Boolean).join(" = ")}`);
  }
  if (state.draft.note) parts.push(`note: ${state.draft.note}`);
  el.draft.hidden = !parts.length;
  el.draft.textContent = parts.join(" · ");
}

function renderMachine(item) {
  const m = item.machine;
  el.machine.hidden = !m;
  el.machine.replaceChildren();
  if (!m) return;
  const line = [m.verdict_text];
  if (m.score != null) line.push(`score ${m.score.toFixed(3)} (${m.scored_by || "?"})`);
  for (const s of m.scores) line.push(`${s.scorer}: ${s.score.toFixed(3)}`);
  el.machine.append(`Machine: ${line.join(" · ")}`);
  // The LLM grader's reasoning: why it flagged (or passed) the claim.
  for (const s of m.scores.filter((s) => s.reasoning)) {
    const why = document.createElement("p");
    why.className = "lbl-reasoning";
    why.textContent = `${s.scorer}: ${s.reasoning}`;
    el.machine.append(why);
  }
}

// The document window (or the whole text, once expanded) with the evidence
// found in this document highlighted.
export function renderDocument(item) {
  const doc = item.document;
  el.docId.textContent = doc.external_id;
  let text;
  let offset;
  const full = state.expanded ? state.documents.get(doc.id) : undefined;
  if (full !== undefined) {
    text = full;
    offset = 0;
  } else {
    text = doc.window_text;
    offset = doc.window_start;
  }
  el.expandBtn.firstChild.textContent = state.expanded ? "Collapse " : "Expand ";
  el.docPages.textContent = pagesShown(doc, full !== undefined);
  const nodes = [];
  if (offset > 0) nodes.push(span("… ", "d-none"));
  let at = 0; // position in text up to which nodes are pushed
  for (const [start, end] of spansIn(item, offset, text.length)) {
    if (start < at) continue; // overlaps one already highlighted
    nodes.push(text.slice(at, start), span(text.slice(start, end), "d-hit"));
    at = end;
  }
  nodes.push(text.slice(at));
  if (offset + text.length < doc.length) nodes.push(span(" …", "d-none"));
  el.doc.replaceChildren(...nodes);
  el.doc.classList.toggle("expanded", state.expanded);
  if (state.expanded) el.doc.querySelector(".d-hit")?.scrollIntoView({ block: "center" });
}

// Which pages of a PDF the document pane shows: the window's ("p. 2 of 3",
// kept to the evidence's pages by the server), or all of them; "" for a
// document without pages.
function pagesShown(doc, whole) {
  if (!doc.page_count) return "";
  if (whole) return `all ${doc.page_count} pages`;
  return doc.page_label ? `${doc.page_label} of ${doc.page_count}` : "";
}

// Evidence spans of the item's own document, as offsets into the shown text
// (which starts at offset in the document), clipped to it, in order. None for
// a context not found in the document: its aligned span is only the least bad
// match, and highlighting it would say the claim was found there.
function spansIn(item, offset, length) {
  const spans = [];
  if (item.context_found === false) return spans;
  for (const ev of item.evidence || []) {
    if (ev.source !== item.document.external_id || ev.start == null || ev.end == null) continue;
    const start = Math.min(length, Math.max(0, ev.start - offset));
    const end = Math.min(length, Math.max(start, ev.end - offset));
    if (end > start) spans.push([start, end]);
  }
  return spans.sort((a, b) => a[0] - b[0]);
}

function renderSiblings(item) {
  const rows = item.siblings.map((s) => {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.claim = String(s.id);
    button.textContent = s.hypothesis;
    if (s.id === item.id) {
      li.className = "here";
      button.disabled = true;
    }
    const label = state.labelled.has(s.id)
      ? "labelled"
      : s.my_label || "";
    li.append(button, label ? span(` ${label}`, "sib-label") : "");
    return li;
  });
  el.siblings.replaceChildren(...rows);
}

// What the empty queue waits on: the server's last count of progress p,
// with the claims left to the expert counted as the status line counts them.
function renderEmptyWhy(p, left) {
  const again = " This page checks again by itself.";
  const why = [];
  if (p.claims === false) {
    why.push("This project has no claims yet: its admin uploads them on the set-up page.");
  }
  if (p.unchecked) {
    why.push(`${p.unchecked} claims are waiting for their check (their evidence found and scored); each comes here once checked.`);
  }
  if (left) {
    why.push(`${left} claims are with other experts just now; each comes back if its expert leaves it.`);
  }
  el.emptyWhy.textContent = why.length
    ? why.join(" ") + (p.claims === false ? "" : again)
    : "Every claim here has the labels it needs.";
}

export function renderStatus() {
  const p = state.progress || {};
  const pending = outbox.ops.filter((op) => op.kind === "label").length;
  const pace = p.per_hour == null ? "" : ` · ${Math.round(p.per_hour)}/hour`;
  // Approximate between batches (a label stored while the batch request was
  // on its way counts twice until the next one); exact at each batch.
  const done = (p.done || 0) + state.sentSince + pending;
  const left = Math.max(0, (p.remaining || 0) - state.sentSince - pending);
  const more = p.remaining_more ? "+" : "";
  el.progress.textContent = `done ${done} · left ${left}${more}${pace}`;
  if (!el.empty.hidden) renderEmptyWhy(p, left);
  const failed = loadFailed().length;
  el.failedButton.hidden = !failed;
  el.failedButton.textContent = `${failed} set aside: review`;
  const parts = [];
  if (pending) parts.push(`${pending} unsent`);
  if (state.offline === "offline") parts.push("offline, retrying");
  else if (state.offline === 401 || state.offline === 403)
    parts.push(
      `session expired or access changed (${state.offlineWhy || state.offline}): ` +
        "log in again in another tab",
    );
  else if (state.offline === 429) parts.push("server busy, retrying");
  else if (state.offline) parts.push(`server error ${state.offline}, retrying`);
  if (failed) parts.push(`${failed} refused by the server (kept in this browser)`);
  el.sync.textContent = parts.length ? parts.join(" · ") : "all saved";
  el.sync.classList.toggle("warn", Boolean(state.offline || failed));
}

// The set-aside labels' table (its overlay closes once it is empty), and the
// status line, which counts them.
export function renderFailed() {
  const failed = loadFailed();
  el.failedRows.replaceChildren(
    ...failed.map((f) => {
      const tr = document.createElement("tr");
      const what = document.createElement("button");
      what.type = "button";
      what.dataset.claim = String(f.claim);
      what.textContent = f.hypothesis || `claim ${f.claim}`;
      const cells = [
        what,
        `${f.label}${f.note ? " ✎" : ""}`,
        typeof f.why === "string" ? f.why : firstMessage(f.why) || "refused",
      ].map((content) => {
        const td = document.createElement("td");
        td.append(content);
        return td;
      });
      cells[2].className = "why";
      const td = document.createElement("td");
      for (const [action, text] of [
        ["resend", "Resend"],
        ["discard", "Discard"],
      ]) {
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = text;
        button.dataset.failed = action;
        button.dataset.clientId = f.client_id;
        td.append(button, " ");
      }
      tr.append(...cells, td);
      return tr;
    }),
  );
  if (!failed.length && !el.failed.hidden) el.failed.hidden = true;
  renderStatus();
}
