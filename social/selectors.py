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
