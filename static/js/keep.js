/* Work not yet on the server, kept in this browser (localStorage) so that a closed tab or a
   crashed browser loses nothing: a shared board's unsent ops (static/js/live.js) and a new board
   not yet published (static/js/editor.js). Each is one JSON value under a key naming its person
   and board (and, for a shared board, the tab: ownKey); it is written at every change and
   removed once the server has it. Storage that is
   full or turned off keeps nothing, silently: the page works as before. */
(function () {
  "use strict";

  const PREFIX = "ugcsite.keep.";

  function get(key) {
    try {
      const raw = window.localStorage.getItem(PREFIX + key);
      return raw === null ? null : JSON.parse(raw);
    } catch (error) {
      return null;
    }
  }

  function set(key, value) {
    try {
      window.localStorage.setItem(PREFIX + key, JSON.stringify(value));
      return true;
    } catch (error) {  // full, or turned off
      return false;
    }
  }

  function remove(key) {
    try {
      window.localStorage.removeItem(PREFIX + key);
    } catch (error) { /* nothing kept, nothing to remove */ }
  }

  /* Every key kept under `base`: the base itself and `base.<tab>` (O(keys in this site's storage)). */
  function keysUnder(base) {
    try {
      const found = [];
      for (let i = 0; i < window.localStorage.length; i++) {
        const key = window.localStorage.key(i);
        if (key === PREFIX + base || key.startsWith(PREFIX + base + ".")) found.push(key.slice(PREFIX.length));
      }
      return found;
    } catch (error) {
      return [];
    }
  }

  const TAB = "ugcsite.tab";  // this tab's id (sessionStorage: one tab's, kept over a reload)
  const LOCK = "ugcsite.keep.";  // a Web Lock per tab and base, held while the tab lives

  function newTab() {
    const tab = Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
    try { window.sessionStorage.setItem(TAB, tab); } catch (error) { /* this page's alone */ }
    return tab;
  }

  /* Two tabs of one person on one board keep their unsent work apart (issue 40): each keeps it
     under a key of its own, `base.<tab>`, and holds a Web Lock of that name while it lives. A
     duplicated tab (same sessionStorage, lock taken) takes a new id. What a tab that is gone left
     (its lock free: closed, crashed) is adopted by the next one that opens: `ready(key, adopted)`
     hears this tab's key and the values taken over (each taken by one tab alone, under its lock,
     then removed). Without Web Locks a tab keeps under its own key and adopts nothing of others'. */
  function ownKey(base, ready) {
    let tab;
    try { tab = window.sessionStorage.getItem(TAB) || newTab(); } catch (error) { tab = newTab(); }
    const locks = navigator.locks;
    if (!locks) {  // this tab's own from before a reload, nothing of others'
      const own = get(base + "." + tab);
      ready(base + "." + tab, own === null ? [] : [own]);
      return;
    }
    const claim = () => locks.request(LOCK + base + "." + tab, { ifAvailable: true }, (lock) => {
      if (!lock) {  // another tab holds this id: a duplicate of it
        tab = newTab();
        claim();
        return null;
      }
      adopt(base, base + "." + tab).then((adopted) => ready(base + "." + tab, adopted));
      return new Promise(() => {});  // held until the tab goes
    });
    claim();
  }

  /* The values under `base` no living tab holds, taken and removed: this tab's own from before a
     reload (its lock is this page's now), and what other tabs left. */
  function adopt(base, mine) {
    const own = get(mine);
    remove(mine);
    const orphans = keysUnder(base).filter((key) => key !== mine);
    return Promise.all(orphans.map((key) => navigator.locks.request(LOCK + key, { ifAvailable: true }, (lock) => {
      if (!lock) return null;  // its tab lives (or another tab is adopting it)
      const value = get(key);
      remove(key);
      return value;
    }))).then((values) => [own].concat(values).filter((value) => value !== null));
  }

  window.ugcsiteKeep = { get, set, remove, ownKey };
})();
