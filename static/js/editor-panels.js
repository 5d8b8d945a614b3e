/* The editor's tool panels on a phone (templates/feeds/editor.html, site.css): the style panel
   (colour, width, size, fill, rotation, the board's background and size) and the more panel
   (zoom, export, shortcuts) each open under the tool strip with one tap on their toggle, one at
   a time; a tap on the toggle again, on the canvas, or Escape closes it (Escape gives the focus
   back to the toggle). On a desktop the toggles are not shown and the panels always are: the
   data-open attribute then changes nothing. */
(function () {
  "use strict";

  const toggles = Array.from(document.querySelectorAll(".toolbar .panel-toggle"));
  if (!toggles.length) return;
  const panelOf = (toggle) => document.getElementById(toggle.getAttribute("aria-controls"));

  function setOpen(toggle, open) {
    toggle.setAttribute("aria-expanded", String(open));
    const panel = panelOf(toggle);
    if (open) panel.setAttribute("data-open", "");
    else panel.removeAttribute("data-open");
  }

  function closeAll() {
    for (const toggle of toggles) setOpen(toggle, false);
  }

  for (const toggle of toggles) {
    toggle.addEventListener("click", () => {
      const open = toggle.getAttribute("aria-expanded") !== "true";
      closeAll();
      setOpen(toggle, open);
    });
    panelOf(toggle).addEventListener("keydown", (event) => {
      if (event.key !== "Escape" || toggle.getAttribute("aria-expanded") !== "true") return;
      event.stopPropagation();  // the editor's Escape (select nothing) is not meant
      setOpen(toggle, false);
      toggle.focus();
    });
  }
  const canvas = document.getElementById("board-canvas");
  if (canvas) canvas.addEventListener("pointerdown", closeAll);
})();
