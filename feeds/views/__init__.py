"""Pages of feeds: ``boards`` (the home feed, a board, the editor), ``discovery`` (/discover,
/popular) and ``people`` (a profile with its boards, the follow button)."""
