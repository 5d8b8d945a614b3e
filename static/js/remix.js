/* A board page's "Let others remix this board" box (its author's): PATCH /api/v1/boards/<id>
   {"remixable"} at once, the box put back and the reason shown if the call fails. */
(function () {
  "use strict";
  const box = document.getElementById("remixable");
  if (!box) return;
  const status = document.getElementById("remixable-status");

  box.addEventListener("change", async function () {
    const wanted = box.checked;
    box.disabled = true;
    let result;
    try {
      result = await window.ugcsite.api("/api/v1/boards/" + encodeURIComponent(box.dataset.boardId), {
        method: "PATCH",
        json: { remixable: wanted },
      });
    } catch (error) {
      result = { ok: false, status: 0, data: { detail: "The site could not be reached; check your connection and try again." } };
    }
    box.disabled = false;
    if (result.ok) {
      status.textContent = wanted ? "Others may remix it." : "Remixing is off.";
    } else {
      box.checked = !wanted;
      status.textContent = window.ugcsite.problem(result);
    }
  });
})();
