/* "Read by" lines on board cards (social reading): for the cards of a page, one request asks
   which of the people I follow read each board (GET /api/v1/reading?ids=..., PAGE_IDS_MAX at most),
   then fills each card's line with textContent. Cards that infinite scroll appends later are
   asked for in their own single request. Only for signed-in readers. */
(function () {
  "use strict";

  if (!document.body.hasAttribute("data-signed-in")) return;
  const lists = document.querySelectorAll("[data-reading]");
  if (!lists.length) return;
  const asked = new Set();
  const most = Number(document.body.dataset.idsMax) || 1;  // feeds.rules.PAGE_IDS_MAX
  let timer = null;

  function cardsToAsk() {
    const found = [];
    for (const list of lists) {
      for (const card of list.querySelectorAll("[data-board-id]")) {
        const id = card.dataset.boardId;
        if (id && !asked.has(id) && found.length < most) found.push(id);
      }
    }
    return found;
  }

  async function fill() {
    const ids = cardsToAsk();
    if (!ids.length) return;
    ids.forEach((id) => asked.add(id));
    const result = await window.ugcsite.api("/api/v1/reading?ids=" + ids.join(","));
    if (result.ok && result.data) {
      for (const list of lists) {
        for (const card of list.querySelectorAll("[data-board-id]")) {
          const names = result.data[card.dataset.boardId];
          const line = card.querySelector('[data-slot="readby"]');
          if (!line || !names || !names.length) continue;
          line.textContent = "Read by " + names.slice().sort().join(", ");
          line.hidden = false;
        }
      }
    }
    if (cardsToAsk().length) fill();
  }

  function soon() {
    clearTimeout(timer);
    timer = setTimeout(fill, 50);
  }

  for (const list of lists) new MutationObserver(soon).observe(list, { childList: true });
  fill();
})();
