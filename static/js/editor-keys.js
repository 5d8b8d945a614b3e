/* The editor's keyboard shortcuts and the dialog that lists them (templates/feeds/editor.html,
   opened by its "Shortcuts" button or "?"). Keys never act while someone types in a field, and
   Ctrl+Z leaves a text field's own undo alone; Cmd works where Ctrl is named. The editor
   (static/js/editor.js) hands over what the keys do. */
(function () {
  "use strict";

  // Fields where keys type: Ctrl+Z and Ctrl+Y leave them alone.
  const TYPING = "textarea, select, [contenteditable], input:not([type]), input[type=text], input[type=number], input[type=search]";
  // Any form field: a plain key pressed there is the field's (a range's arrows, a color's Space).
  const FIELDS = "input, textarea, select, [contenteditable]";
  const TOOL_KEYS = {
    v: "select", h: "hand", p: "pen", t: "text", r: "rect", o: "ellipse", l: "line", a: "arrow", s: "sticky", e: "eraser",
  };
  const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };

  /* Text of the page highlighted by the person: Ctrl+C copies that, as anywhere else. */
  function pageTextSelected() {
    const chosen = window.getSelection && window.getSelection();
    return Boolean(chosen && !chosen.isCollapsed);
  }

  function within(target, selector) {
    return target instanceof Element && target.matches(selector);
  }

  /* The help dialog: returns open(); closing it gives the focus back to what had it. */
  function helpDialog(dialog) {
    let opener = null;
    if (dialog) {
      dialog.querySelector('[data-action="close-help"]').addEventListener("click", () => dialog.close());
      dialog.addEventListener("close", () => {
        if (opener && opener.focus) opener.focus();
        opener = null;
      });
    }
    return function open() {
      if (!dialog || dialog.open) return;
      opener = document.activeElement;
      dialog.showModal();
    };
  }

  /* Wire the keys. `editor`: {undo, redo, selectTool(name), selectAll, hasSelection(),
     deleteSelection, deselect, copy, paste, duplicate, nudge(dx, dy), fit(), editSelected() (true
     when a text or a note was opened for editing), view (editor-view.js),
     panning(), help (a dialog)}. */
  function install(editor) {
    const openHelp = helpDialog(editor.help);
    const view = editor.view;

    document.addEventListener("keydown", (event) => {
      const target = event.target;
      if (editor.help && editor.help.open) return;  // the dialog has the keyboard (Escape closes it)
      if (event.ctrlKey || event.metaKey) {
        if (event.altKey || within(target, TYPING)) return;
        const key = event.key.toLowerCase();
        if (key === "z" && !event.shiftKey) editor.undo();
        else if ((key === "z" && event.shiftKey) || key === "y") editor.redo();
        else if (key === "a" && !within(target, FIELDS)) editor.selectAll();
        else if (key === "c" && !event.shiftKey && !within(target, FIELDS) && editor.hasSelection() && !pageTextSelected()) editor.copy();
        else if (key === "v" && !event.shiftKey && !within(target, FIELDS)) {
          if (editor.paste() === false) return;  // the paste event follows (a picture may be in it)
        }
        else if (key === "d" && !event.shiftKey && !within(target, FIELDS) && editor.hasSelection()) editor.duplicate();
        else return;
        event.preventDefault();
        return;
      }
      if (event.altKey || within(target, FIELDS)) return;
      const key = event.key;
      if (key === " ") {
        if (within(target, "button, a, summary")) return;  // space presses what has the focus
        event.preventDefault();  // not a page scroll: space held down pans
        view.spaceHeld = true;
        editor.panning();
      } else if (TOOL_KEYS[key.toLowerCase()] && !event.shiftKey) {
        editor.selectTool(TOOL_KEYS[key.toLowerCase()]);
      } else if ((key === "Delete" || key === "Backspace") && editor.hasSelection()) {
        event.preventDefault();
        editor.deleteSelection();
      } else if (key === "Enter" && editor.hasSelection() && !within(target, "button, a, summary")) {
        if (editor.editSelected()) event.preventDefault();
      } else if (key === "Escape" && editor.hasSelection()) {
        editor.deselect();
      } else if (key === "+" || key === "=") {
        view.zoomIn();
      } else if (key === "-" || key === "_") {
        view.zoomOut();
      } else if (key === "0") {
        view.reset();
      } else if ((key === "f" || key === "F") && !event.shiftKey) {
        editor.fit();
      } else if (key === "?") {
        event.preventDefault();
        openHelp();
      } else if (ARROWS[key] && editor.hasSelection()) {
        event.preventDefault();
        const step = event.shiftKey ? 10 : 1;
        editor.nudge(ARROWS[key][0] * step, ARROWS[key][1] * step);
      }
    });

    const released = () => {
      if (!view.spaceHeld) return;
      view.spaceHeld = false;
      editor.panning();
    };
    document.addEventListener("keyup", (event) => { if (event.key === " ") released(); });
    window.addEventListener("blur", released);
    return openHelp;
  }

  window.ugcsiteKeys = { install };
})();
