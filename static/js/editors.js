/* The editors panel of a board page: its author invites people by username and removes them; an
   editor may leave. Through the API (PUT / DELETE /api/v1/boards/<id>/editors/<username>), then
   the page is loaded again so that the list is the server's. */
(function () {
  "use strict";
  const panel = document.getElementById("editors");
  if (!panel) return;
  const boardId = panel.dataset.boardId;
  const error = panel.querySelector(".form-error");

  function say(text) {
    if (!error) { window.alert(text); return; }
    error.textContent = text;
    error.hidden = !text;
  }

  async function change(method, username) {
    const url = "/api/v1/boards/" + boardId + "/editors/" + encodeURIComponent(username);
    try {
      const result = await window.ugcsite.api(url, { method });
      if (!result.ok) { say(window.ugcsite.problem(result)); return; }
      window.location.reload();
    } catch (e) {
      say("The site could not be reached; check your connection and try again.");
    }
  }

  const form = document.getElementById("invite-editor");
  if (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      const username = form.elements.username.value.trim();
      if (username) change("PUT", username);
    });
  }
  panel.querySelectorAll(".remove-editor").forEach(function (button) {
    button.addEventListener("click", function () { change("DELETE", button.dataset.username); });
  });
})();
