"""The JSON API of feeds (docs/api.md): ``boards`` (a board and its preview), ``timelines``
(profiles, the home feed, discovery) and ``people`` (following someone, social reading,
popular boards: the calls that join social's graph with the boards). Each handler declares
what the API document says of it beside it (``@documented``: ugcsite.platform.apidoc)."""
