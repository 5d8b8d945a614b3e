// "Copy" buttons: a button with data-copy copies that text to the clipboard and says so.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-copy]");
    if (!button || !navigator.clipboard) return;
    navigator.clipboard.writeText(button.dataset.copy).then(function () {
      var label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 2000);
    });
  });
})();
