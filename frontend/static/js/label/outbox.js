// The outbox: decisions and undos written to localStorage first and sent in
// the background, in order, in batches, with backoff while the server cannot
// be reached. The server de-duplicates by the label's client id, so resending
// after a reload or a dropped connection never stores a label twice.
//
// Labels the server refused are set aside under another key (never silently
// dropped), listed with the reason; the expert resends or discards each.
//
// Drawing is not done here: connectOutbox() hands in the functions that
// redraw the status line and the set-aside list.

import { api, HttpError, firstMessage, refusal, retryable } from "./api.js";
import { loadJSON, saveDecided, state, storageKey, urls } from "./state.js";

const OUTBOX_KEY = storageKey("outbox");
const FAILED_KEY = storageKey("failed");
const RETRY_MS = [500, 1000, 2000, 5000, 10000, 30000];
const BATCH_MAX = 100; // labels per request (the server takes up to 500)

const view = { renderStatus() {}, renderFailed() {} };

// Labels written by an earlier release's page name their claim `prediction`:
// read them under the new name, so none waiting in the outbox is lost.
function loadOps(key) {
  const ops = loadJSON(key, []);
  if (!Array.isArray(ops)) return [];
  return ops.map(({ prediction, ...op }) =>
    prediction !== undefined && op.claim === undefined ? { ...op, claim: prediction } : op,
  );
}

export const outbox = {
  ops: loadOps(OUTBOX_KEY),
  inflight: new Set(), // client ids being sent now
  flushing: false,
  failures: 0,
  solo: 0, // labels still to send one at a time, after a batch was refused
  timer: 0,
  save() {
    localStorage.setItem(OUTBOX_KEY, JSON.stringify(this.ops));
  },
  push(op) {
    this.ops.push(op);
    this.save();
    schedule(0);
  },
  labelledClaims() {
    const ids = new Set();
    for (const op of this.ops) if (op.kind === "label") ids.add(op.claim);
    return ids;
  },
};

// renderStatus redraws the status line, renderFailed the set-aside list.
// Also follows the connection and the other tabs of the same expert.
export function connectOutbox({ renderStatus, renderFailed }) {
  view.renderStatus = renderStatus;
  view.renderFailed = renderFailed;
  window.addEventListener("online", () => schedule(0));
  window.addEventListener("storage", (event) => {
    // Another tab of the same expert changed the outbox.
    if (event.key === OUTBOX_KEY) outbox.ops = loadOps(OUTBOX_KEY);
    if (event.key === FAILED_KEY) view.renderFailed();
  });
}

// A label's client id.
export function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function schedule(ms) {
  clearTimeout(outbox.timer);
  outbox.timer = setTimeout(flush, ms);
}

// Sends the outbox head first, in order: a label and its undo must reach the
// server in the order they were given.
async function flush() {
  if (outbox.flushing) return;
  outbox.flushing = true;
  try {
    while (outbox.ops.length) {
      const head = outbox.ops[0];
      if (head.kind === "label") await sendLabels();
      else await sendUndo(head);
      outbox.failures = 0;
    }
  } catch (error) {
    outbox.failures += 1;
    const wait = RETRY_MS[Math.min(outbox.failures - 1, RETRY_MS.length - 1)];
    schedule(wait);
    state.offline = error instanceof HttpError ? error.status : "offline";
    state.offlineWhy = error instanceof HttpError ? firstMessage(error.body) : "";
  } finally {
    outbox.flushing = false;
    if (!outbox.failures) state.offline = null;
    view.renderStatus();
  }
}

// The labels at the head of the outbox, in one request. The server answers
// each label on its own: the refused ones are set aside, the others are done.
async function sendLabels() {
  const size = outbox.solo > 0 ? 1 : BATCH_MAX;
  const batch = [];
  for (const op of outbox.ops) {
    if (op.kind !== "label" || batch.length >= size) break;
    batch.push(op);
  }
  for (const op of batch) outbox.inflight.add(op.client_id);
  let results;
  try {
    const reply = await api("POST", urls.labels, { labels: batch.map(labelBody) });
    results = reply?.results || [];
  } catch (error) {
    if (retryable(error)) throw error;
    if (batch.length > 1) {
      // Refused as a whole (too large for a proxy, say): one at a time, so
      // that only the label at fault is set aside.
      outbox.solo = batch.length;
      return;
    }
    results = [{ status: "error", error: refusal(error) }];
  } finally {
    for (const op of batch) outbox.inflight.delete(op.client_id);
  }
  outbox.solo = Math.max(0, outbox.solo - batch.length);
  const refused = [];
  batch.forEach((op, i) => {
    const result = results[i] || { status: "error", error: "the server gave no answer" };
    if (result.status === "error") refused.push({ op, why: result.error || "refused" });
    else if (result.status === "created") state.sentSince += 1;
  });
  setAside(refused);
  const sent = new Set(batch.map((op) => op.client_id));
  outbox.ops = outbox.ops.filter((op) => !(op.kind === "label" && sent.has(op.client_id)));
  outbox.save();
}

function labelBody({ kind, hypothesis, ...label }) {
  return label;
}

async function sendUndo(head) {
  try {
    const reply = await api("DELETE", `${urls.undo}${head.client_id}/`);
    if (reply?.claim != null) state.sentSince -= 1;
  } catch (error) {
    if (retryable(error)) throw error;
    // Refused: there is nothing to take back on the server.
  }
  outbox.ops = outbox.ops.filter((op) => op !== head);
  outbox.save();
}

// --- labels set aside --------------------------------------------------------

export function loadFailed() {
  return loadOps(FAILED_KEY);
}

export function saveFailed(failed) {
  localStorage.setItem(FAILED_KEY, JSON.stringify(failed));
  view.renderFailed();
}

function setAside(entries) {
  if (!entries.length) return;
  const failed = loadFailed();
  for (const { op, why } of entries) failed.push({ ...op, why, at: Date.now() });
  saveFailed(failed);
}

export function takeFailed(clientId) {
  const failed = loadFailed();
  const entry = failed.find((f) => f.client_id === clientId);
  if (entry) saveFailed(failed.filter((f) => f !== entry));
  return entry;
}

export function resend(clientId) {
  const entry = takeFailed(clientId);
  if (!entry) return;
  const { why, at, ...op } = entry;
  // A new client id: the refused one was never stored, and a refusal of the
  // id itself ("already used") would only come back.
  const fresh = { ...op, client_id: uuid() };
  for (const u of state.undo) if (u.client_id === op.client_id) u.client_id = fresh.client_id;
  outbox.push(fresh);
  view.renderStatus();
}

export function discard(clientId) {
  const entry = takeFailed(clientId);
  if (!entry) return;
  // Undecided again: the claim may come back to the queue.
  if (!outbox.labelledClaims().has(entry.claim)) {
    state.labelled.delete(entry.claim);
    saveDecided(entry.claim, false);
  }
  view.renderStatus();
}
