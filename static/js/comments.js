/* Comments under a board (docs/api.md, "Comments"). The first page comes with the page; "Show
   more comments" reads the next through GET /api/v1/boards/<id>/comments?after=. The form posts
   a comment or, after "Reply", a reply; authors edit and delete theirs in place (the board's
   author and staff delete too). Every open page of the board hears of a comment posted, edited
   or removed through the board's socket (static/js/live.js dispatches "ugcsite:comment") and
   reads it again through GET /api/v1/comments/<id>: what the reader does not see (blocks,
   mutes, hidden by staff) answers 404 and leaves the page. Items are clones of the page's
   <template id="comment-template"> (templates/feeds/_comment.html renders both); the limits come
   from the page's JSON config (feeds.rules.comments_config). Buttons are <button>s: Enter and
   Space work, and focus goes where the next keystroke is expected. */
(function () {
  "use strict";

  const section = document.getElementById("comments");
  if (!section) return;
  const config = JSON.parse(document.getElementById("comments-config").textContent);
  const boardId = section.dataset.boardId;
  const me = section.dataset.me || "";
  const staff = section.dataset.staff === "1";
  const boardAuthor = section.dataset.boardAuthor;
  const mayComment = section.dataset.mayComment === "1";
  const list = document.getElementById("comment-list");
  const template = document.getElementById("comment-template");
  const more = document.getElementById("comments-more");
  const form = document.getElementById("comment-form");
  const text = document.getElementById("comment-text");
  const error = document.getElementById("comment-error");
  const replying = document.getElementById("comment-replying");
  const count = section.querySelector('[data-slot="comment-count"]');
  let next = section.dataset.next || null;
  let replyTo = null;
  const api = window.ugcsite.api;

  function unreachable() {
    return { ok: false, status: 0, data: { detail: "The site could not be reached; check your connection and try again." } };
  }

  async function call(url, options) {
    try { return await api(url, options); } catch (e) { return unreachable(); }
  }

  function itemOf(id) { return document.getElementById("comment-" + id); }

  function button(label, action, describedBy) {
    const element = document.createElement("button");
    element.type = "button";
    element.className = "link";
    element.textContent = label;
    element.dataset.commentAction = action;
    if (describedBy) element.setAttribute("aria-describedby", describedBy);
    return element;
  }

  /* The actions a reader has on an item: reply, edit, delete, report. */
  function fillActions(item) {
    const actions = item.querySelector('[data-slot="actions"]');
    actions.textContent = "";
    if (item.dataset.deleted === "1" || !me) return;
    const author = item.dataset.author;
    const who = item.querySelector('[data-slot="who"]');
    if (who && !who.id) who.id = item.id + "-who";
    const about = who ? who.id : null;
    if (mayComment) actions.append(button("Reply", "reply", about));
    if (author === me) actions.append(button("Edit", "edit", about));
    if (author === me || boardAuthor === me || staff) actions.append(button("Delete", "delete", about));
    if (author !== me) {
      const report = document.createElement("a");
      report.href = "/report?comment=" + encodeURIComponent(item.dataset.commentId);
      report.textContent = "Report";
      if (about) report.setAttribute("aria-describedby", about);
      actions.append(report);
    }
  }

  /* A list item for a comment of the API, from the page's template. */
  function render(comment) {
    const item = template.content.firstElementChild.cloneNode(true);
    item.id = "comment-" + comment.id;
    item.dataset.commentId = String(comment.id);
    item.dataset.thread = String(comment.reply_to || comment.id);
    item.dataset.author = comment.author ? comment.author.username : "";
    item.dataset.deleted = comment.deleted ? "1" : "";
    item.classList.toggle("reply", comment.reply_to !== null);
    const who = item.querySelector('[data-slot="who"]');
    who.textContent = "";
    if (comment.author) {
      // A fediverse author (user@host) has no page here: their handle, unlinked.
      const remote = comment.author.username.includes("@");
      const link = document.createElement(remote ? "span" : "a");
      if (remote) link.className = "remote-author";
      else link.href = "/u/" + encodeURIComponent(comment.author.username);
      if (comment.author.avatar) {
        const picture = document.createElement("img");
        picture.className = "avatar tiny";
        picture.src = comment.author.avatar;
        picture.alt = "";
        picture.width = picture.height = 20;
        link.append(picture);
      }
      link.append(remote ? "@" + comment.author.username : comment.author.username);
      who.append(link);
    } else {
      const gone = document.createElement("span");
      gone.className = "deleted";
      gone.textContent = "deleted";
      who.append(gone);
    }
    item.querySelector('[data-slot="replying"]').textContent = comment.reply_to ? " replied" : "";
    const when = item.querySelector('[data-slot="when"]');
    if (window.ugcsiteTimes) window.ugcsiteTimes.show(when, comment.created_at);
    else when.textContent = comment.created_at;
    item.querySelector('[data-slot="edited"]').hidden = !comment.edited_at;
    const body = item.querySelector('[data-slot="text"]');
    if (comment.deleted) {
      body.innerHTML = '<p class="meta">This comment was deleted.</p>';
    } else {
      body.innerHTML = comment.html;  // escaped by the server (feeds.comments.comment_html)
    }
    fillActions(item);
    return item;
  }

  /* Put a comment where it belongs: in place of its item, after the last of its thread, or at
     the end when every page is here. One not yet paged to is left for "Show more". */
  function upsert(comment) {
    const item = render(comment);
    const present = itemOf(comment.id);
    if (present) {
      const focused = present.contains(document.activeElement);
      present.replaceWith(item);
      if (focused) item.querySelector('[data-slot="actions"] button, [data-slot="actions"] a')?.focus();
      return;
    }
    const thread = String(comment.reply_to || comment.id);
    const kin = list.querySelectorAll('[data-thread="' + CSS.escape(thread) + '"]');
    if (kin.length) kin[kin.length - 1].after(item);
    else if (!comment.reply_to && !next) list.append(item);
    else return;
    const empty = document.getElementById("comments-empty");
    if (empty) empty.remove();
  }

  function drop(id) {
    const item = itemOf(id);
    if (!item) return;
    if (item.contains(document.activeElement) && text) text.focus();
    item.remove();
  }

  async function recount() {
    const result = await call("/api/v1/boards/" + encodeURIComponent(boardId) + "/comments?limit=1");
    if (result.ok && count) {
      count.textContent = String(result.data.total);
      count.parentElement.lastChild.textContent = result.data.total === 1 ? " comment" : " comments";
    }
  }

  async function reread(id) {
    const result = await call("/api/v1/comments/" + encodeURIComponent(id));
    if (result.ok) upsert(result.data);
    else if (result.status === 404) drop(id);
  }

  document.addEventListener("ugcsite:comment", function (event) {
    const id = event.detail && event.detail.id;
    if (id) reread(id);
    recount();
  });

  if (more) {
    more.addEventListener("click", async function () {
      if (!next) return;
      more.disabled = true;
      const url = "/api/v1/boards/" + encodeURIComponent(boardId) + "/comments?limit=" + config.pageSize + "&after=" + encodeURIComponent(next);
      const result = await call(url);
      more.disabled = false;
      if (!result.ok) {
        window.alert(window.ugcsite.problem(result));
        return;
      }
      next = result.data.next;
      let first = null;
      for (const comment of result.data.items) {
        if (itemOf(comment.id)) continue;
        const item = render(comment);
        list.append(item);
        first = first || item;
      }
      more.hidden = !next;
      if (first && more.hidden) {  // the button went away: focus the first new comment's first action
        const target = first.querySelector("button, a");
        if (target) target.focus();
      }
    });
  }

  for (const item of list.children) fillActions(item);

  function showError(message) {
    if (!error) return;
    error.textContent = message || "";
    error.hidden = !message;
    if (text) text.setAttribute("aria-invalid", message ? "true" : "false");
  }

  function startReply(item) {
    if (!form) return;
    replyTo = item.dataset.commentId;
    const name = item.dataset.author;
    replying.querySelector('[data-slot="replying-to"]').textContent = "Replying to " + (name ? name : "a comment");
    replying.hidden = false;
    text.focus();
  }

  function stopReply() {
    replyTo = null;
    if (replying) replying.hidden = true;
  }

  const cancel = document.getElementById("comment-reply-cancel");
  if (cancel) cancel.addEventListener("click", function () { stopReply(); text.focus(); });

  if (form) {
    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      const value = text.value.trim();
      if (!value) return showError("Write something first.");
      if (value.length > config.maxText) return showError("A comment holds at most " + config.maxText + " characters.");
      showError("");
      const submit = form.querySelector('button[type="submit"]');
      submit.disabled = true;
      const result = await call("/api/v1/boards/" + encodeURIComponent(boardId) + "/comments", {
        method: "POST",
        json: { text: value, reply_to: replyTo ? Number(replyTo) : null },
      });
      submit.disabled = false;
      if (!result.ok) return showError(window.ugcsite.problem(result));
      text.value = "";
      stopReply();
      upsert(result.data);
      recount();
      text.focus();
    });
  }

  function startEdit(item) {
    const body = item.querySelector('[data-slot="text"]');
    if (item.querySelector(".comment-edit")) return;
    const editor = document.createElement("form");
    editor.className = "comment-edit";
    const label = document.createElement("label");
    label.textContent = "Edit your comment";
    const area = document.createElement("textarea");
    area.rows = 3;
    area.maxLength = config.maxText;
    area.required = true;
    label.append(area);
    const save = document.createElement("button");
    save.type = "submit";
    save.className = "button primary";
    save.textContent = "Save";
    const back = button("Cancel", "cancel-edit");
    const problem = document.createElement("p");
    problem.className = "form-error";
    problem.setAttribute("role", "alert");
    problem.hidden = true;
    editor.append(label, save, back, problem);
    body.hidden = true;
    body.after(editor);
    call("/api/v1/comments/" + encodeURIComponent(item.dataset.commentId)).then(function (result) {
      area.value = result.ok ? result.data.text : body.textContent;
      area.focus();
    });
    back.addEventListener("click", function () {
      editor.remove();
      body.hidden = false;
      item.querySelector('[data-comment-action="edit"]')?.focus();
    });
    editor.addEventListener("submit", async function (event) {
      event.preventDefault();
      const result = await call("/api/v1/comments/" + encodeURIComponent(item.dataset.commentId), {
        method: "PATCH",
        json: { text: area.value },
      });
      if (!result.ok) {
        problem.textContent = window.ugcsite.problem(result);
        problem.hidden = false;
        return;
      }
      const fresh = render(result.data);
      item.replaceWith(fresh);
      fresh.querySelector('[data-comment-action="edit"]')?.focus();
    });
  }

  async function remove(item) {
    if (!window.confirm("Delete this comment?")) return;
    const id = item.dataset.commentId;
    const result = await call("/api/v1/comments/" + encodeURIComponent(id), { method: "DELETE" });
    if (!result.ok) return window.alert(window.ugcsite.problem(result));
    await reread(id);
    recount();
  }

  list.addEventListener("click", function (event) {
    const target = event.target.closest("[data-comment-action]");
    if (!target) return;
    const item = target.closest(".comment");
    const action = target.dataset.commentAction;
    if (action === "reply") startReply(item);
    else if (action === "edit") startEdit(item);
    else if (action === "delete") remove(item);
  });

  const commenting = document.getElementById("commenting");
  if (commenting) {
    const status = document.getElementById("commenting-status");
    commenting.addEventListener("change", async function () {
      status.textContent = "Saving…";
      const result = await call("/api/v1/boards/" + encodeURIComponent(boardId), {
        method: "PATCH",
        json: { comments: commenting.value },
      });
      status.textContent = result.ok ? "Saved." : window.ugcsite.problem(result);
    });
  }
})();
