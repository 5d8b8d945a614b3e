"""ActivityPub federation (issue 39; docs/federation.md): people and boards seen from Mastodon and
the rest of the fediverse.

- ``signatures``: draft-cavage and RFC 9421 HTTP signatures, digests, RSA keys (pure functions).
"""
