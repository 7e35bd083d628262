// What the dashboard's modules share: the page's data, the API call, polling.

export const data = JSON.parse(document.getElementById("dashboard-data").textContent);
export const POLL_MS = 2000;
export const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);

export const $ = (id) => document.getElementById(id);
export const url = (template, id) => template.replace("{id}", encodeURIComponent(id));

export async function api(path, { method = "GET", body } = {}) {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: {
      Accept: "application/json",
      ...(method === "GET" ? {} : { "X-CSRFToken": data.csrf_token }),
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (!response.ok) {
    const detail = payload && (payload.detail || payload.error || JSON.stringify(payload));
    throw new Error(`${response.status}: ${detail || response.statusText}`);
  }
  return payload;
}
