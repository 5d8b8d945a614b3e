/* Infinite scroll of board cards: when the end of the list comes near, fetch the next page from
   the JSON API (`<source>?before=<next>&limit=20`, with the session) and append its cards,
   until `next` is null. Cards are built from the <template id="card-template"> the server
   renders with the same partial as its own cards; data goes in with textContent and attributes
   only, never as HTML. Without JavaScript the "Older boards" link pages on server-side. */
(function () {
  "use strict";

  const PAGE = 20;
  const list = document.querySelector("[data-infinite]");
  const template = document.getElementById("card-template");
  const more = document.querySelector("[data-infinite-more]");
  if (!list || !template || !more) return;

  const link = more.querySelector("[data-infinite-link]");
  const status = more.querySelector("[data-infinite-status]");
  let next = list.dataset.next || null;
  let loading = false;
  let failedAt = 0;  // when the last load failed: retried on a later scroll or a click
  const seen = new Set(Array.from(list.children, (card) => card.dataset.boardId));

  function slot(card, name) {
    return card.querySelector('[data-slot="' + name + '"]');
  }

  function buildCard(board) {
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

  function say(text) {
    if (status) status.textContent = text;
  }

  function finished() {
    if (link) link.hidden = true;
    if (observer) observer.disconnect();
    say(list.children.length ? "That is everything: you have reached the first board." : "");
  }

  async function loadMore() {
    if (loading || !next) return;
    loading = true;
    failedAt = 0;
    say("Loading older boards…");
    const url = new URL(list.dataset.source, window.location.origin);
    url.searchParams.set("before", next);
    url.searchParams.set("limit", String(PAGE));
    let result;
    try {
      result = await window.ugcsite.api(url.pathname + url.search);
    } catch (error) {
      result = { ok: false, status: 0, data: { detail: "Could not reach the site; check your connection." } };
    }
    loading = false;
    if (!result.ok || !result.data) {
      failedAt = Date.now();
      say(window.ugcsite.problem(result) + " Scroll or use the button to try again.");
      return;
    }
    const fragment = document.createDocumentFragment();
    for (const board of result.data.items) {
      const id = String(board.id);
      if (seen.has(id)) continue;
      seen.add(id);
      fragment.append(buildCard(board));
    }
    list.append(fragment);
    next = result.data.next;
    list.dataset.next = next || "";
    list.dispatchEvent(new CustomEvent("boards:loaded", { bubbles: true }));
    if (!next) {
      finished();
      return;
    }
    if (link) link.href = "?before=" + encodeURIComponent(next);
    say("");
    // Still at the end (a tall screen, or a page of removed boards)? Observing again reports
    // the current state, which loads the next page at once.
    recheck();
  }

  function recheck() {
    if (observer) {
      observer.unobserve(more);
      observer.observe(more);
    }
  }

  let observer = null;
  if ("IntersectionObserver" in window) {
    observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting) && !failedAt) loadMore();
    }, { rootMargin: "0px 0px 800px 0px" });
  }

  if (link) {
    link.addEventListener("click", (event) => {
      event.preventDefault();
      loadMore();
    });
  }
  window.addEventListener("scroll", () => {
    if (failedAt && Date.now() - failedAt > 3000) {
      failedAt = 0;
      recheck();
    }
  }, { passive: true });

  if (next) {
    if (observer) observer.observe(more);
  } else if (list.children.length) {
    finished();
  }
})();
