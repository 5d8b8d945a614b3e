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

  function buildCard(board) {
    return window.ugcsiteCards.build(template, board);
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
