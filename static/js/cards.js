/* A board card built from the page's <template id="card-template"> (rendered by the server with
   the same partial as its own cards) and a board of the JSON API. Data goes in with textContent
   and attributes only, never as HTML. Used by infinite.js (older boards) and me.js (new ones). */
(function () {
  "use strict";

  function slot(card, name) {
    return card.querySelector('[data-slot="' + name + '"]');
  }

  function build(template, board) {
    const card = template.content.firstElementChild.cloneNode(true);
    card.dataset.boardId = String(board.id);
    slot(card, "link").href = "/b/" + encodeURIComponent(board.id);
    // Versioned like the server's cards (feeds.views.preview_src): an edit shows at once.
    slot(card, "preview").src = board.preview_url + "?v=" + encodeURIComponent(board.updated_at);
    slot(card, "preview").alt = "Preview of " + board.title;
    slot(card, "title").textContent = board.title;
    slot(card, "kind").textContent = board.kind;
    const author = slot(card, "author");
    author.href = "/u/" + encodeURIComponent(board.author);
    const avatar = slot(card, "avatar");
    avatar.src = "/u/" + encodeURIComponent(board.author) + "/avatar";
    author.replaceChildren(avatar, document.createTextNode(board.author));
    const created = slot(card, "created");
    window.ugcsiteTimes.show(created, board.created_at);
    slot(card, "views").textContent = board.views + (board.views === 1 ? " view" : " views");
    const like = card.querySelector("[data-like]");
    like.dataset.boardId = String(board.id);
    slot(like, "likes").textContent = String(board.likes);
    const tags = slot(card, "tags");
    tags.replaceChildren();
    for (const tag of board.tags) {
      const item = document.createElement("li");
      const a = document.createElement("a");
      a.href = "/discover?tag=" + encodeURIComponent(tag);
      a.textContent = "#" + tag;
      item.append(a);
      tags.append(item);
    }
    return card;
  }

  window.ugcsiteCards = { build };
})();
