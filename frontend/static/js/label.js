// The labeling page: one claim at a time, keyboard first, nothing lost.
//
// Decisions are applied locally at once (the next item is already in memory),
// written to a localStorage outbox and sent in the background; the server
// de-duplicates by the label's client id, so resending after a reload or a
// dropped connection never stores a label twice. Document text is untrusted:
// it only ever reaches the page through textContent.
//
// This entry module only wires the modules under label/ together:
//   state.js    page data (json_script "label-data") and the shared `state`
//   dom.js      elements by id, spans, panels open/closed
//   api.js      fetch wrapper, CSRF, reading refusals
//   outbox.js   localStorage outbox, batched sends with backoff, set-aside labels
//   diff.js     character diff of the LLM context against the document span
//   guideline.js the guideline panel (G) and the section of the item's type
//   render.js   drawing the item, the status line, the set-aside list
//   queue.js    the queue, decisions and undo, detours to other claims
//   panels.js   note, correction, help and set-aside panels
//   history.js  "My labels", a page at a time
//   keys.js     keyboard shortcuts and button clicks -> actions
// Imports only go down this list's dependencies (no cycles): collectstatic's
// manifest rewrites each import to its hashed name, which a cycle, or a chain
// deeper than max_post_process_passes, would make impossible.

import { data, state } from "./label/state.js";
import { closePanels } from "./label/dom.js";
import { connectOutbox, discard, outbox, resend, schedule } from "./label/outbox.js";
import { renderFailed, renderStatus } from "./label/render.js";
import {
  decide,
  fetchMore,
  heldIds,
  next,
  open,
  stepSibling,
  toggleExpand,
  undo,
} from "./label/queue.js";
import { bindPanels, openCorrect, openFailed, openNote, toggleHelp } from "./label/panels.js";
import { openHistory } from "./label/history.js";
import { bindClicks, bindKeys } from "./label/keys.js";
import { acceptSuggestion, rejectSuggestion } from "./label/suggestion.js";
import { toggleGuideline } from "./label/guideline.js";

// What a key or a button (data-action) does; keys.js maps keys to these names.
const actions = {
  safe: () => decide("safe"),
  unsafe: () => decide("unsafe"),
  unsure: () => decide("unsure"),
  undo,
  note: openNote,
  correct: openCorrect,
  acceptSuggestion,
  rejectSuggestion,
  expand: toggleExpand,
  help: toggleHelp,
  guideline: toggleGuideline,
  history: () => openHistory(1),
  failed: openFailed,
  "history-prev": () => openHistory(state.historyPage - 1),
  "history-next": () => openHistory(state.historyPage + 1),
  back: () => next(), // the detour item is dropped; the queue item was put back
  close: closePanels,
  prevSibling: () => stepSibling(-1),
  nextSibling: () => stepSibling(1),
};

connectOutbox({ renderStatus, renderFailed });
bindKeys(actions);
bindClicks(actions, { resend, discard, open });
bindPanels();

// --- start -------------------------------------------------------------------

{
  const held = heldIds();
  state.queue = data.items.filter((item) => !held.has(item.id));
  next();
  renderFailed();
  if (outbox.ops.length) schedule(0);
  // With nothing on screen, look again now and then: leases expire, other
  // experts' "unsure" labels put claims back.
  setInterval(() => {
    if (!state.current) fetchMore();
  }, 15000);
}
