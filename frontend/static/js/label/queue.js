// Which claim is on screen and what comes next: the queue (topped up
// from the server before it runs dry), decisions and their undo, and detours
// to a claim that is not the queue's next (another one on the same
// document, a past label to change), after which the queue resumes.
//
// Decisions are applied locally at once (the next item is already in memory)
// and handed to the outbox, which persists and sends them.

import { api } from "./api.js";
import { guidelineVersion } from "./guideline.js";
import { loadFailed, outbox, saveFailed, takeFailed, uuid } from "./outbox.js";
import { renderDocument, renderStatus, show } from "./render.js";
import { data, saveDecided, state, urls } from "./state.js";

// Claims this page must not be handed again: queued, on screen, decided
// here (sent or not).
export function heldIds() {
  const ids = outbox.labelledClaims();
  for (const item of state.queue) ids.add(item.id);
  if (state.current) ids.add(state.current.id);
  for (const id of state.labelled) ids.add(id);
  return ids;
}

export async function fetchMore() {
  if (state.fetching) return;
  if (state.exhaustedAt && performance.now() - state.exhaustedAt < 15000) return;
  state.fetching = true;
  try {
    const reply = await api("POST", urls.next, {
      count: data.batch_size,
      exclude: [...heldIds()],
    });
    const held = heldIds();
    const fresh = reply.items.filter((item) => !held.has(item.id));
    state.queue.push(...fresh);
    state.exhaustedAt = fresh.length ? 0 : performance.now();
    if (!state.current && state.queue.length) next();
    refreshProgress();
  } catch (error) {
    state.exhaustedAt = performance.now() - 10000; // try again in ~5 s
  } finally {
    state.fetching = false;
    renderStatus();
  }
}

// Counting what is left scans the project: asked once per batch, off the
// path of the next item.
async function refreshProgress() {
  // Labels stored before the request are in its count; those acknowledged
  // while it is on its way may not be, so they stay counted here (at worst
  // one counts twice until the next batch; never a saved label missing).
  const before = state.sentSince;
  try {
    const progress = await api("GET", urls.progress);
    state.progress = progress;
    state.sentSince -= before;
    renderStatus();
  } catch {
    // shown again at the next batch
  }
}

export function next() {
  const item = state.queue.shift() || null;
  show(item, "");
  if (state.queue.length < data.batch_size / 2) fetchMore();
}

// Open a claim that is not next in the queue (another one on the same
// document, or a past label to change); the queue resumes after it.
export async function open(claimId, why) {
  if (state.current && state.current.id === claimId) return;
  const queued = state.queue.findIndex((item) => item.id === claimId);
  let item;
  if (queued >= 0) {
    [item] = state.queue.splice(queued, 1);
  } else {
    try {
      item = await api("GET", `${urls.item}${claimId}/`);
    } catch {
      return;
    }
  }
  if (state.current && !state.detour) state.queue.unshift(state.current);
  show(item, why);
}

export function stepSibling(delta) {
  const item = state.current;
  if (!item) return;
  const at = item.siblings.findIndex((s) => s.id === item.id);
  const target = item.siblings[at + delta];
  if (target) open(target.id, "another claim on this document");
}

// The whole document instead of the window around the span (fetched once).
export async function toggleExpand() {
  const item = state.current;
  if (!item) return;
  state.expanded = !state.expanded;
  if (state.expanded && !state.documents.has(item.document.id)) {
    if (item.document.length <= item.document.window_text.length) {
      state.documents.set(item.document.id, item.document.window_text);
    } else {
      try {
        const doc = await api("GET", `${urls.document}${item.document.id}/`);
        state.documents.set(item.document.id, doc.text);
      } catch {
        state.expanded = false;
      }
    }
    if (state.current !== item) return;
  }
  renderDocument(item);
}

// --- decisions ---------------------------------------------------------------

export function decide(label) {
  const item = state.current;
  if (!item) return;
  const seconds = (performance.now() - state.shownAt) / 1000;
  const op = {
    kind: "label",
    client_id: uuid(),
    hypothesis: item.hypothesis, // shown if the label is set aside; not sent
    claim: item.id,
    label,
    note: state.draft.note,
    correction: state.draft.correction,
    suggestion: state.draft.suggestion,
    guideline_version: guidelineVersion(),
    seconds_spent: Math.round(Math.min(seconds, 3600) * 1000) / 1000,
  };
  item.my_label = { ...op };
  state.undo.push({ client_id: op.client_id, item, wasDetour: state.detour });
  if (state.undo.length > 200) state.undo.shift();
  state.labelled.add(item.id);
  saveDecided(item.id, true);
  // A set-aside label of the same claim is replaced, as it would have
  // been on the server.
  const failed = loadFailed();
  if (failed.some((f) => f.claim === item.id))
    saveFailed(failed.filter((f) => f.claim !== item.id));
  next();
  // Persist and send after the next item is on screen.
  outbox.push(op);
}

export function undo() {
  const last = state.undo.pop();
  if (!last) return;
  const at = outbox.ops.findIndex(
    (op) => op.kind === "label" && op.client_id === last.client_id,
  );
  if (at >= 0 && !outbox.inflight.has(last.client_id)) {
    outbox.ops.splice(at, 1); // never sent: forget it
    outbox.save();
  } else if (takeFailed(last.client_id)) {
    // Set aside: the server never stored it.
  } else {
    outbox.push({ kind: "undo", client_id: last.client_id });
  }
  state.labelled.delete(last.item.id);
  saveDecided(last.item.id, false);
  last.item.my_label = null;
  if (state.current && !state.detour) state.queue.unshift(state.current);
  show(last.item, last.wasDetour);
  renderStatus();
}
