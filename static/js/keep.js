/* Work not yet on the server, kept in this browser (localStorage) so that a closed tab or a
   crashed browser loses nothing: a shared board's unsent ops (static/js/live.js) and a new board
   not yet published (static/js/editor.js). Each is one JSON value under a key naming its person
   and board; it is written at every change and removed once the server has it. Storage that is
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

  window.ugcsiteKeep = { get, set, remove };
})();
