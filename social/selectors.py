"""Reads about people for views and the API."""


def profile(user, *, viewer=None) -> dict:
    """The profile object of API.md ("Follow graph"). No row counting: counts are stored."""
    followed_by_me = False
    if viewer is not None and viewer.pk != user.pk:
        from social.graph import is_following

        followed_by_me = is_following(follower_id=viewer.pk, followee_id=user.pk)
    return {
        "id": user.pk,
        "username": user.username,
        "followers": user.followers_count,
        "following": user.following_count,
        "boards": user.boards_count,
        "followed_by_me": followed_by_me,
    }


def people_page(ids: list[int]) -> list[dict]:
    """``{"id", "username"}`` for each id, in the given order (one query)."""
    from django.contrib.auth import get_user_model

    names = dict(get_user_model().objects.filter(pk__in=ids).values_list("id", "username"))
    return [{"id": user_id, "username": names[user_id]} for user_id in ids if user_id in names]


def followers_list(user, *, offset: int, limit: int) -> dict:
    from social import graph

    ids, total = graph.followers_page(user.pk, offset=offset, limit=limit)
    return {"items": people_page(ids), "total": total}


def following_list(user, *, offset: int, limit: int) -> dict:
    from social import graph

    ids, total = graph.following_page(user.pk, offset=offset, limit=limit)
    return {"items": people_page(ids), "total": total}


def reading_answer(viewer, board_ids: list[int], *, now: float | None = None) -> dict[str, list[str]]:
    """API.md's reading answer: for each visible board asked for, the usernames of the people
    the viewer follows who read it in the window. One pipeline for the N x M question, one
    pipeline to check the boards exist, one query for the names of the readers found."""
    from django.contrib.auth import get_user_model

    from feeds.selectors import boards_hydrate
    from social import graph, reading

    visible = [board_id for board_id in board_ids if board_id in boards_hydrate(board_ids)]
    found = reading.readers_of(visible, graph.following_ids(viewer.pk), now=now)
    reader_ids = {reader for readers in found.values() for reader in readers}
    names = dict(get_user_model().objects.filter(pk__in=reader_ids, is_active=True).values_list("id", "username"))
    return {str(board_id): [names[r] for r in readers if r in names] for board_id, readers in found.items()}


def popular_list(*, scope: str, offset: int = 0, limit: int, viewer=None, now: float | None = None) -> dict:
    """API.md's popular answer: ``all`` by views (reads = views), ``trending`` by views in the
    last 24 hours (reads = those views), ``following`` by how many of the viewer's followees
    read each board in the window (reads = that number). Invisible boards are left out."""
    from feeds import discovery
    from feeds.boardcache import summary_from_fields
    from feeds.selectors import boards_hydrate
    from social import graph, reading

    if scope == "following":
        counts = reading.read_counts(graph.following_ids(viewer.pk), now=now)
        # most reads first, ties newest first; boards that are gone drop out at hydration
        ranked = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
        found = boards_hydrate([board_id for board_id, _ in ranked[: offset + limit + 50]])
        ranked = [(board_id, reads) for board_id, reads in ranked if board_id in found]
    else:
        # the sort orders hold visible boards only (discovery drops the rest at once)
        ranked = [(int(board_id), int(score)) for board_id, score in discovery.top(scope, offset + limit)]
        found = boards_hydrate([board_id for board_id, _ in ranked])
    page = ranked[offset:offset + limit]
    return {"items": [{"board": summary_from_fields(found[board_id]), "reads": reads}
                      for board_id, reads in page if board_id in found]}
