/* The settings page's main Save keeps a picture chosen in the picture form: it is uploaded first
   (PUT /api/v1/me/avatar, the same check and resize as "Upload picture"), then the settings are
   saved. A refused picture stops the save and says why, so nothing chosen is lost. */
(function () {
  "use strict";
  const main = document.querySelector("form[data-settings-form]");
  const input = document.getElementById("id_avatar");
  if (!main || !input) return;
  let sending = false;

  main.addEventListener("submit", async (event) => {
    const file = input.files && input.files[0];
    if (!file || sending) return;  // no picture chosen: the form goes as it is
    event.preventDefault();
    sending = true;
    const response = await fetch("/api/v1/me/avatar", {
      method: "PUT",
      credentials: "same-origin",
      headers: { "X-CSRFToken": window.ugcsite.csrfToken(), "Content-Type": file.type || "application/octet-stream" },
      body: file,
    }).catch(() => null);
    if (response && response.ok) {
      input.value = "";
      main.submit();  // the settings, now the picture is kept
      return;
    }
    sending = false;
    let said = "The picture could not be uploaded; try again.";
    if (response) {
      try { said = (await response.json()).detail || said; } catch (e) { /* not JSON: keep the sentence */ }
    }
    let note = document.getElementById("id_avatar-error");
    if (!note) {
      note = document.createElement("p");
      note.id = "id_avatar-error";
      note.className = "field-error";
      note.setAttribute("role", "alert");
      input.insertAdjacentElement("afterend", note);
    }
    note.textContent = said + " Your other settings are not saved yet.";
    input.setAttribute("aria-invalid", "true");
    input.focus();
  });
})();
