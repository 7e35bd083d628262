// The labeling page's shared state: the data the server rendered into the page
// (json_script "label-data"), the one mutable `state` object the other modules
// read and change, and what this browser remembers across reloads.
//
// A leaf module: it imports nothing, so the import graph stays acyclic (the
// manifest storage hashes each file after the files it imports).

export const data = JSON.parse(document.getElementById("label-data").textContent);
export const urls = data.urls;

const DECIDED_MS = 60 * 60 * 1000; // how long a decision is remembered here

// localStorage keys are per expert and per project.
export function storageKey(kind) {
  return `safepassage:${kind}:${data.user.id}:${data.project.id}`;
}

const DECIDED_KEY = storageKey("decided");

export const state = {
  queue: [], // items waiting, in order
  current: null,
  shownAt: 0,
  detour: "", // why the current item is not the queue's (sibling, history)
  draft: { note: "", correction: null, suggestion: "" },
  undo: [], // this session's decisions, newest last: {client_id, item}
  labelled: loadDecided(), // claim ids decided here lately, not undone
  expanded: false,
  documents: new Map(), // document id -> full text (fetched on expand)
  progress: data.progress, // the server's count at the last batch
  sentSince: 0, // labels the server stored since that count
  offline: null, // why the outbox cannot send: "offline" or an HTTP status
  offlineWhy: "", // the server's message with that status
  fetching: false,
  exhaustedAt: 0,
  historyPage: 1,
};

// Decisions are remembered across reloads for a while: a page rendered while
// the outbox's last send was still in flight lists those claims again,
// since the server had not stored their labels yet.
function loadDecided() {
  const cutoff = Date.now() - DECIDED_MS;
  const kept = Object.entries(loadJSON(DECIDED_KEY, {})).filter(([, at]) => at > cutoff);
  return new Set(kept.map(([id]) => Number(id)));
}

export function saveDecided(id, decided) {
  const all = loadJSON(DECIDED_KEY, {});
  if (decided) all[id] = Date.now();
  else delete all[id];
  localStorage.setItem(DECIDED_KEY, JSON.stringify(all));
}

export function loadJSON(key, fallback) {
  try {
    const raw = localStorage.getItem(key);
    return raw ? JSON.parse(raw) : fallback;
  } catch {
    return fallback;
  }
}
