// The project's labeling guideline: the whole of it in a panel (G), and under
// the claim the section whose heading names the item's type (its raw name or
// the name shown), collapsed. Labels record the version shown (queue.js).
//
// The HTML comes from the page data (data.guideline), rendered on the server
// by annotator.labeling.guidelines, the one place guideline HTML is made (raw HTML
// escaped, only http/https/mailto links). Only that HTML is inserted as HTML;
// nothing from an item is: its type is only looked up, and shown as text.

import { closePanels, el } from "./dom.js";
import { data } from "./state.js";

const guideline = data.guideline; // null while the project has none

// The first section of each heading, by key.
const sections = new Map();
for (const section of guideline?.sections || []) {
  if (!sections.has(section.key)) sections.set(section.key, section);
}

const box = {
  section: document.getElementById("guideline-section"),
  sectionTitle: document.getElementById("guideline-section-title"),
  sectionBody: document.getElementById("guideline-section-body"),
  version: document.getElementById("guideline-version"),
  body: document.getElementById("guideline-body"),
};

// The version a label made now is made under (null: no guideline).
export function guidelineVersion() {
  return guideline ? guideline.version : null;
}

// The item's keys come made by the server (annotator.labeling.guidelines.section_keys),
// so headings and types are matched by one rule.
function sectionFor(item) {
  for (const key of item.guideline_keys || []) {
    const section = sections.get(key);
    if (section) return section;
  }
  return null;
}

// Under the claim: the section of the item's type, or nothing.
export function renderGuidelineSection(item) {
  if (!box.section) return;
  const section = item ? sectionFor(item) : null;
  box.section.hidden = !section;
  if (!section) {
    box.sectionBody.replaceChildren();
    return;
  }
  // A new item starts collapsed unless it has the same section open already.
  if (box.section.dataset.key !== section.key) box.section.open = false;
  box.section.dataset.key = section.key;
  box.sectionTitle.textContent = section.heading;
  box.sectionBody.innerHTML = section.html; // server-rendered, see above
}

let filled = false;

export function toggleGuideline() {
  const wasOpen = !el.guideline.hidden;
  closePanels();
  if (wasOpen) return;
  if (!filled) {
    if (guideline) {
      box.version.textContent = `version ${guideline.version}`;
      box.body.innerHTML = guideline.html; // server-rendered, see above
    } else {
      box.version.textContent = "";
      box.body.textContent = "This project has no guideline yet.";
    }
    filled = true;
  }
  el.guideline.hidden = false;
}
