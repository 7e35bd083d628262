// Talking to the DRF API: one fetch wrapper (JSON in and out, the CSRF token,
// HttpError for any refusal) and the helpers that read what a refusal means.

import { data } from "./state.js";

export class HttpError extends Error {
  constructor(status, body) {
    super(`HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export async function api(method, url, body) {
  const response = await fetch(url, {
    method,
    credentials: "same-origin",
    headers: {
      Accept: "application/json",
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      ...(method === "GET" ? {} : { "X-CSRFToken": csrfToken() }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // A proxy's HTML error page: the status says enough.
    if (response.ok) throw new HttpError(502, null);
  }
  if (!response.ok) throw new HttpError(response.status, json);
  return json;
}

// The cookie, when there is one: logging in again in another tab rotates the
// token this page was rendered with.
function csrfToken() {
  const cookie = document.cookie
    .split("; ")
    .find((part) => part.startsWith("csrftoken="));
  return cookie ? decodeURIComponent(cookie.slice("csrftoken=".length)) : data.csrf_token;
}

// Worth sending again unchanged, with backoff: the connection dropped, the
// server failed or asked to slow down. 401/403 too: the session expired, and
// the labels wait for the expert to log in again (the status line says so);
// they are not the labels' fault. Any other 4xx is an answer about the labels
// themselves, which resending as is cannot change.
export function retryable(error) {
  if (!(error instanceof HttpError)) return true;
  return error.status >= 500 || [401, 403, 408, 429].includes(error.status);
}

export function refusal(error) {
  const said = firstMessage(error.body);
  return said ? `${said} (HTTP ${error.status})` : `refused (HTTP ${error.status})`;
}

// The first message in an error body ({detail}, {field: [messages]}, ...).
export function firstMessage(body) {
  if (typeof body === "string") return body;
  if (Array.isArray(body)) {
    for (const part of body) {
      const found = firstMessage(part);
      if (found) return found;
    }
  } else if (body && typeof body === "object") {
    if (typeof body.detail === "string") return body.detail;
    if (typeof body.error === "string" && body.error) return body.error;
    for (const [name, part] of Object.entries(body)) {
      const found = firstMessage(part);
      if (found) return name === "non_field_errors" ? found : `${name}: ${found}`;
    }
  }
  return "";
}
