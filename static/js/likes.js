/* Hearts (docs/api.md, "Likes and remixes"). Every [data-like] button toggles in place: PUT or
   DELETE /api/v1/boards/<id>/like, the count moved at once and put back if the call fails. It is
   a <button>, so Enter and Space work as a click. For a signed-in person, one request a page
   (GET /api/v1/likes?board_ids=..., PAGE_IDS_MAX at most) says which hearts are theirs and fills
   the "Liked by" lines with the people they follow; cards added later (infinite scroll) are
   asked for in their own request. Someone signed out is sent to log in. */
(function () {
  "use strict";

  const signedIn = document.body.hasAttribute("data-signed-in");
  const most = Number(document.body.dataset.idsMax) || 1;  // feeds.rules.PAGE_IDS_MAX
  const asked = new Set();
  const toggled = new Set();  // hearts pressed on this page: an answer asked for before is stale for them
  let timer = null;

  function buttons(boardId) {
    return document.querySelectorAll('[data-like][data-board-id="' + CSS.escape(boardId) + '"]');
  }

  function show(boardId, liked, count) {
    for (const button of buttons(boardId)) {
      button.setAttribute("aria-pressed", liked ? "true" : "false");
      button.title = liked ? "Unlike" : "Like";
      const shown = button.querySelector('[data-slot="likes"]');
      if (shown && count !== null) shown.textContent = String(count);
    }
  }

  function countOf(boardId) {
    const button = buttons(boardId)[0];
    const shown = button && button.querySelector('[data-slot="likes"]');
    return shown ? Number(shown.textContent) || 0 : 0;
  }

  async function toggle(button) {
    if (!signedIn) {
      window.location.assign("/login?next=" + encodeURIComponent(window.location.pathname + window.location.search));
      return;
    }
    if (button.dataset.busy) return;
    const boardId = button.dataset.boardId;
    toggled.add(boardId);
    const liked = button.getAttribute("aria-pressed") === "true";
    const before = countOf(boardId);
    button.dataset.busy = "1";
    show(boardId, !liked, Math.max(before + (liked ? -1 : 1), 0));
    let result;
    try {
      result = await window.ugcsite.api("/api/v1/boards/" + encodeURIComponent(boardId) + "/like", {
        method: liked ? "DELETE" : "PUT",
      });
    } catch (error) {
      result = { ok: false, status: 0, data: { detail: "The site could not be reached; check your connection and try again." } };
    }
    delete button.dataset.busy;
    if (!result.ok) {
      show(boardId, liked, before);
      button.title = window.ugcsite.problem(result);
      window.alert(window.ugcsite.problem(result));
    }
  }

  document.addEventListener("click", function (event) {
    const button = event.target.closest("[data-like]");
    if (button) {
      event.preventDefault();
      toggle(button);
    }
  });

  function toAsk() {
    const found = [];
    for (const button of document.querySelectorAll("[data-like][data-board-id]")) {
      const id = button.dataset.boardId;
      if (id && !asked.has(id) && !found.includes(id) && found.length < most) found.push(id);
    }
    return found;
  }

  async function fill() {
    const ids = toAsk();
    if (!ids.length) return;
    ids.forEach((id) => asked.add(id));
    let result;
    try {
      result = await window.ugcsite.api("/api/v1/likes?board_ids=" + ids.join(","));
    } catch (error) {
      return;  // the hearts keep their counts; the next page load asks again
    }
    if (result.ok && result.data) {
      for (const [boardId, about] of Object.entries(result.data.boards)) {
        if (!toggled.has(boardId)) show(boardId, about.liked, about.count);
        for (const line of document.querySelectorAll('[data-board-id="' + CSS.escape(boardId) + '"] [data-slot="likedby"], [data-slot="likedby"][data-board-id="' + CSS.escape(boardId) + '"]')) {
          line.textContent = about.by_followees.length ? "Liked by " + about.by_followees.join(", ") : "";
          line.hidden = !about.by_followees.length;
        }
      }
    }
    if (toAsk().length) fill();
  }

  if (signedIn) {
    new MutationObserver(function () {
      clearTimeout(timer);
      timer = setTimeout(fill, 50);
    }).observe(document.body, { childList: true, subtree: true });
    fill();
  }
})();
