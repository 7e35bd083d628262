// The panels over the item: the note and correction forms (their text goes
// into the draft sent with the next decision), the keyboard help, and the
// list of labels set aside.

import { closePanels, el } from "./dom.js";
import { renderDraft, renderFailed } from "./render.js";
import { data, state } from "./state.js";

const NOTE_MAX = 10000; // characters; the server refuses longer notes

// The forms' own listeners (the buttons that open them are actions).
export function bindPanels() {
  el.noteInput.maxLength = NOTE_MAX;
  el.noteInput.addEventListener("input", renderNoteCount);

  el.noteForm.addEventListener("submit", (event) => {
    event.preventDefault();
    state.draft.note = el.noteInput.value.trim();
    closePanels();
    el.noteInput.blur();
    renderDraft();
  });

  el.correctForm.addEventListener("submit", (event) => {
    event.preventDefault();
    saveCorrection();
    el.correctValue.blur();
  });
}

export function openNote() {
  if (!state.current) return;
  closePanels();
  el.noteForm.hidden = false;
  el.noteInput.value = state.draft.note.slice(0, NOTE_MAX);
  renderNoteCount();
  el.noteInput.focus();
}

function renderNoteCount() {
  const used = el.noteInput.value.length;
  el.noteCount.textContent = `${used.toLocaleString()} / ${NOTE_MAX.toLocaleString()}`;
  el.noteCount.classList.toggle("warn", used >= NOTE_MAX * 0.9);
}

export function openCorrect() {
  const item = state.current;
  if (!item) return;
  closePanels();
  const keys = data.project.correction_keys;
  const draft = state.draft.correction ?? {};
  el.correctType.parentElement.hidden = !keys.type;
  if (keys.type) {
    const types = new Set([...(data.project.entity_types ?? []), item.type]);
    el.correctType.replaceChildren(
      ...[...types].sort().map((t) => {
        const option = document.createElement("option");
        option.value = t;
        option.textContent = t;
        return option;
      }),
    );
    el.correctType.value = draft[keys.type] ?? item.type;
  }
  const value = draft[keys.value] ?? item.value;
  el.correctValue.value =
    value == null ? "" : typeof value === "string" ? value : JSON.stringify(value);
  el.correctForm.hidden = false;
  el.correctValue.focus();
  el.correctValue.select();
}

function saveCorrection() {
  const item = state.current;
  const type = el.correctType.value;
  const raw = el.correctValue.value.trim();
  let value = raw;
  if (raw.startsWith("{") || raw.startsWith("[")) {
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
  }
  const keys = data.project.correction_keys;
  const correction = {};
  if (JSON.stringify(value) !== JSON.stringify(item.value)) correction[keys.value] = value;
  if (keys.type && type !== item.type) correction[keys.type] = type;
  state.draft.correction = Object.keys(correction).length ? correction : null;
  closePanels();
  renderDraft();
}

export function toggleHelp() {
  const wasOpen = !el.help.hidden;
  closePanels();
  el.help.hidden = wasOpen;
}

export function openFailed() {
  closePanels();
  renderFailed();
  el.failed.hidden = false;
}
