/* Live updates for a signed-in person over the site's WebSocket (/ws/me, no polling): the
   header's unread notification count, and on the feed page a "N new boards" button that, when
   clicked, fetches the feed's first page (/api/v1/feed, with the session) and inserts the cards
   newer than the top one (built by cards.js, like infinite.js's) without moving what the reader
   is looking at. An empty feed (no list yet) shows the count too and loads the page again on a
   click. Reconnects with a growing delay; gives up on 4401/4403 (signed out). */
(function () {
  "use strict";

  if (!document.body.hasAttribute("data-signed-in") || !("WebSocket" in window)) return;

  const PAGE = 20;
  const feed = document.querySelector("[data-live-feed]");
  const list = feed ? document.querySelector("[data-infinite]") : null;
  const template = document.getElementById("card-template");
  const button = feed ? feed.querySelector("[data-new-boards]") : null;
  const fresh = new Set();  // ids of boards told about and not on the page yet
  let delay = 1000;
  let inserting = false;

  function onPage(id) {
    return list && list.querySelector('[data-board-id="' + CSS.escape(String(id)) + '"]') !== null;
  }

  function showFresh() {
    if (!button) return;
    const n = fresh.size;
    button.hidden = n === 0;
    button.textContent = n === 1 ? "1 new board" : n + " new boards";
  }

  function setUnread(count) {
    const link = document.querySelector("[data-testid=notifications-link]");
    if (!link) return;
    let badge = link.querySelector("[data-testid=unread-count]");
    let hint = link.querySelector(".visually-hidden");
    if (count > 0) {
      if (!badge) {
        badge = document.createElement("span");
        badge.className = "badge";
        badge.dataset.testid = "unread-count";
        hint = document.createElement("span");
        hint.className = "visually-hidden";
        hint.textContent = " unread";
        link.append(" ", badge, hint);
      }
      badge.textContent = String(count);
    } else {
      if (badge) badge.remove();
      if (hint) hint.remove();
    }
  }

  function topId() {
    const first = list.querySelector("[data-board-id]");
    return first ? BigInt(first.dataset.boardId) : 0n;
  }

  // The first card the reader can see, and where it is: kept in place across an insertion.
  function anchor() {
    for (const card of list.children) {
      const top = card.getBoundingClientRect().bottom;
      if (top > 0) return { card, top: card.getBoundingClientRect().top };
    }
    return null;
  }

  async function insertNew() {
    if (!list) {  // the feed was empty: the page itself lists what came
      window.location.reload();
      return;
    }
    if (inserting || !template) return;
    inserting = true;
    button.disabled = true;
    let result;
    try {
      result = await window.ugcsite.api("/api/v1/feed?limit=" + PAGE);
    } catch (error) {
      result = { ok: false, status: 0, data: { detail: "Could not reach the site; check your connection." } };
    }
    inserting = false;
    button.disabled = false;
    if (!result.ok || !result.data) {
      button.textContent = window.ugcsite.problem(result) + " Click to try again.";
      return;
    }
    const newest = topId();
    const fragment = document.createDocumentFragment();
    for (const board of result.data.items) {
      if (BigInt(board.id) <= newest || onPage(board.id)) continue;
      fragment.append(window.ugcsiteCards.build(template, board));
    }
    fresh.clear();
    showFresh();
    if (!fragment.childElementCount) return;
    const scrolled = window.scrollY > 0;
    const held = scrolled ? anchor() : null;
    list.prepend(fragment);
    if (held) {  // the reader had scrolled down: the card they were looking at stays put
      const moved = held.card.getBoundingClientRect().top - held.top;
      if (moved) window.scrollBy(0, moved);
    }
    list.dispatchEvent(new CustomEvent("boards:loaded", { bubbles: true }));
  }

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(scheme + "//" + window.location.host + "/ws/me");
    socket.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (error) {
        return;
      }
      if (message.type === "hello") {
        delay = 1000;
        document.body.dataset.live = "on";  // for the browser tests: the socket is open
        setUnread(message.unread);
      } else if (message.type === "unread") {
        setUnread(message.unread);
      } else if (message.type === "feed" && feed && !onPage(message.board_id)) {
        fresh.add(String(message.board_id));
        showFresh();
      }
    });
    socket.addEventListener("close", (event) => {
      if (event.code === 4401 || event.code === 4403) return;
      window.setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    });
  }

  if (button) button.addEventListener("click", insertNew);
  connect();
})();
