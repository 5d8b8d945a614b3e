/* "Take my data" on the settings page: starts an archive (POST /api/v1/me/export), then shows its
   progress live, once a second, until its download link (GET /api/v1/me/export/{id}). The id is
   kept in sessionStorage, so a reload picks the same archive up again. */
(function () {
  "use strict";
  const box = document.querySelector("[data-export]");
  if (!box) return;
  const button = box.querySelector("button");
  const bar = box.querySelector("progress");
  const state = box.querySelector("[data-export-state]");
  const KEY = "ugcsite.export";
  const POLL_MS = 1000;

  function show(answer) {
    bar.hidden = false;
    bar.value = answer.progress;
    if (answer.status === "ready") {
      state.textContent = "Your archive is ready: ";
      const link = document.createElement("a");
      link.href = answer.url;
      link.textContent = "download it";
      link.setAttribute("data-export-link", "");
      state.append(link, " (it is kept for a day).");
      button.disabled = false;
      sessionStorage.removeItem(KEY);
      return false;
    }
    if (answer.status === "failed") {
      state.textContent = "Building your archive failed; try again.";
      button.disabled = false;
      sessionStorage.removeItem(KEY);
      return false;
    }
    state.textContent = answer.status === "pending" ? "Waiting for a worker…" : "Building your archive: " + answer.progress + "%";
    return true;
  }

  async function follow(id) {
    button.disabled = true;
    for (;;) {
      const result = await window.ugcsite.api("/api/v1/me/export/" + id);
      if (!result.ok) {
        state.textContent = window.ugcsite.problem(result);
        button.disabled = false;
        sessionStorage.removeItem(KEY);
        return;
      }
      if (!show(result.data)) return;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  button.addEventListener("click", async () => {
    button.disabled = true;
    state.textContent = "Starting…";
    const result = await window.ugcsite.api("/api/v1/me/export", { method: "POST" });
    if (!result.ok) {
      state.textContent = window.ugcsite.problem(result);
      button.disabled = false;
      return;
    }
    sessionStorage.setItem(KEY, String(result.data.id));
    follow(result.data.id);
  });

  const kept = sessionStorage.getItem(KEY);
  if (kept) follow(kept);
})();
