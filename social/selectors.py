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
