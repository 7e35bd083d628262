// The project set-up page: while claims wait for their check, the
// server-rendered progress section is fetched again and swapped in, less
// often while nothing moves (a worker that is down, say).

const FIRST_MS = 2000;
const MAX_MS = 30000;
let delay = FIRST_MS;

async function poll() {
  const current = document.getElementById("check-progress");
  if (!current || current.dataset.pending === "0") return;
  try {
    const response = await fetch(current.dataset.pollUrl, {
      credentials: "same-origin",
      headers: { Accept: "text/html" },
    });
    // Parsed into an inert document: nothing in it runs.
    const fresh = response.ok
      ? new DOMParser()
          .parseFromString(await response.text(), "text/html")
          .getElementById("check-progress")
      : null;
    if (fresh) {
      const moved = fresh.dataset.checked !== current.dataset.checked;
      delay = moved ? FIRST_MS : Math.min(delay * 1.5, MAX_MS);
      current.replaceWith(document.adoptNode(fresh));
    } else {
      delay = Math.min(delay * 2, MAX_MS);
    }
  } catch {
    delay = Math.min(delay * 2, MAX_MS);
  }
  setTimeout(poll, delay);
}

setTimeout(poll, delay);
