// Input: keyboard shortcuts and button clicks. Both name an action from the
// table label.js builds (`actions`: name -> function), so a key and its button
// always do the same thing.

import { closePanels, el, panelOpen } from "./dom.js";

// Key (lower case when one character) -> action name. The help panel in
// label.html lists them.
const KEYS = {
  s: "safe",
  j: "safe",
  u: "unsafe",
  k: "unsafe",
  " ": "unsure",
  l: "unsure",
  z: "undo",
  n: "note",
  c: "correct",
  a: "acceptSuggestion",
  r: "rejectSuggestion",
  e: "expand",
  h: "history",
  g: "guideline",
  "?": "help",
  "[": "prevSibling",
  "]": "nextSibling",
};
const DECISIONS = new Set(["safe", "unsafe", "unsure", "undo"]);

export function bindKeys(actions) {
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    const typing =
      target instanceof HTMLInputElement ||
      target instanceof HTMLTextAreaElement ||
      target instanceof HTMLSelectElement;
    if (event.key === "Escape") {
      closePanels();
      if (typing) target.blur();
      return;
    }
    if (typing) {
      if (target === el.noteInput && event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        el.noteForm.requestSubmit();
      }
      return;
    }
    const action = KEYS[event.key.length === 1 ? event.key.toLowerCase() : event.key];
    if (!action) return;
    event.preventDefault();
    // Holding a key down must not label a run of claims.
    if (DECISIONS.has(action) && (event.repeat || panelOpen())) return;
    actions[action]();
  });
}

// Buttons inside #labeling: data-action names an action; data-failed
// (resend/discard) acts on a set-aside label; data-claim opens that
// claim.
export function bindClicks(actions, { resend, discard, open }) {
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button || !document.getElementById("labeling").contains(button)) return;
    if (button.dataset.failed) {
      if (button.dataset.failed === "resend") resend(button.dataset.clientId);
      else discard(button.dataset.clientId);
    } else if (button.dataset.claim) {
      const id = Number(button.dataset.claim);
      const why = el.history.contains(button)
        ? "changing a past label"
        : el.failed.contains(button)
          ? "a label set aside"
          : "another claim on this document";
      closePanels();
      open(id, why);
    } else if (button.dataset.action && actions[button.dataset.action]) {
      actions[button.dataset.action]();
    }
    // Keep keyboard focus on the page, not on the clicked button (Space would
    // press it again).
    if (button.type !== "submit") button.blur();
  });
}
