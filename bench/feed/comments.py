"""Comments at size (issue 38): a page of a board's comments when the board holds 100,000 of
them (target p99 <= 5 ms), against the naive query that pages by OFFSET, and posting a comment
while other people post on the same board (the online cost must not grow with the comments).

``python -m bench.feed.comments`` (`make bench-comments`) bulk-loads ``--comments`` comments (one in
five a reply) on one board by 1,000 people, then measures through feeds.selectors.board_comments
(what GET /api/v1/boards/{id}/comments calls): the first page, a page in the middle and the last,
each of 20 (the page's size) and 100 (the API's largest); the same middle page by OFFSET beside
it; and feeds.services.comments.comment_create from ``--posters`` threads at once. Figures in
bench/results/comments.md.
"""

import argparse
import os
import platform
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import django

from bench.harness.report import RESULTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--comments", type=int, default=100_000, help="comments on the board")
    parser.add_argument("--people", type=int, default=1_000, help="people who wrote them")
    parser.add_argument("--runs", type=int, default=2_000, help="timed calls a figure")
    parser.add_argument("--posters", type=int, default=4, help="threads posting at once")
    parser.add_argument("--posts", type=int, default=200, help="comments each poster writes")
    parser.add_argument("--out", default=str(RESULTS / "comments.md"))
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    # a connection for each poster and the main thread (the site's pool is sized for requests)
    os.environ.setdefault("DATABASE_POOL_SIZE", str(args.posters + 2))
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False  # no query log
    settings.RATE_LIMIT_COMMENTS_PER_MINUTE = 0  # the load is the point here
    call_command("migrate", verbosity=0)
    run(args)


def _load(board, people: list[int], count: int) -> None:
    """``count`` comments on ``board`` in one statement: each fifth a reply to the top comment
    before it, authors in turn, then Board.comments set to the count."""
    from django.db import connection

    from feeds.models import Board, Comment

    table = Comment._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT coalesce(max(id), 0) FROM {table}")
        base = cursor.fetchone()[0]
        cursor.execute(
            f"INSERT INTO {table} (id, board_id, author_id, remote_handle, reply_to_id, thread, text, mentions,"
            f" created_at, edited_at, state)"
            f" SELECT %(base)s + n, %(board)s, (%(people)s::bigint[])[1 + n %% cardinality(%(people)s::bigint[])], '',"
            f"  CASE WHEN n %% 5 = 0 THEN %(base)s + n - 1 - (n - 1) %% 5 END,"
            f"  CASE WHEN n %% 5 = 0 THEN %(base)s + n - 1 - (n - 1) %% 5 ELSE %(base)s + n END,"
            f"  'comment number ' || n || ', about the drawing and what it shows', '{{}}',"
            f"  now() - (%(count)s - n) * interval '1 second', NULL, 'published'"
            f" FROM generate_series(1, %(count)s) AS n",
            {"base": base, "board": board.pk, "people": people, "count": count},
        )
        cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
        cursor.execute(f"ANALYZE {table}")
    Board.objects.filter(pk=board.pk).update(comments=count)


def _cursor_at(board_id: int, offset: int) -> tuple[int, int] | None:
    from feeds.models import Comment

    if offset == 0:
        return None
    row = Comment.objects.filter(board_id=board_id).order_by("thread", "id").values_list("thread", "id")[offset - 1]
    return tuple(row)


def run(args) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection, connections, transaction

    from bench.harness.measure import summarize, timings
    from feeds import selectors
    from feeds.models import Board, Comment
    from feeds.services import boards as board_services, comments as comment_services
    from social.services import user_create

    started = time.monotonic()
    User = get_user_model()
    author = user_create(username="cm_author", password="bench-password")
    people = []
    for n in range(args.people):
        people.append(User.objects.create(username=f"cm_{n:05d}", password="!").pk)
    with transaction.atomic():
        board = board_services.board_create(
            author=author,
            title="Talked about",
            kind="sketch",
            tags=[],
            doc={"width": 100, "height": 100, "background": "#ffffff", "elements": []},
        )
    _load(board, people, args.comments)
    board = Board.objects.select_related("author").get(pk=board.pk)
    built = time.monotonic() - started
    rows = []
    total = args.comments
    table = Comment._meta.db_table
    for limit in (20, 100):
        for label, offset in (("first", 0), ("middle", total // 2), ("last", total - limit)):
            after = _cursor_at(board.pk, offset)
            figure = timings(
                lambda after=after, limit=limit: selectors.board_comments(board, None, after=after, limit=limit),
                runs=args.runs,
            )
            rows.append((f"page of {limit}, {label} (cursor)", figure))
        offset = total // 2

        def by_offset(limit=limit, offset=offset):
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT c.id, c.text, u.username FROM {table} c JOIN {User._meta.db_table} u ON u.id = c.author_id"
                    f" WHERE c.board_id = %s ORDER BY c.thread, c.id OFFSET %s LIMIT %s",
                    [board.pk, offset, limit],
                )
                return cursor.fetchall()

        rows.append(
            (f"page of {limit}, middle (naive OFFSET, baseline)", timings(by_offset, runs=max(args.runs // 10, 50)))
        )
    with connection.cursor() as cursor:
        cursor.execute(
            f"EXPLAIN SELECT * FROM {Comment._meta.db_table} c WHERE c.board_id = %s AND c.state = ANY(%s)"
            f" AND (c.thread, c.id) > (%s, %s) ORDER BY c.thread, c.id LIMIT 21",
            [board.pk, ["published", "deleted"], *(_cursor_at(board.pk, total // 2))],
        )
        plan = "\n".join(line for (line,) in cursor.fetchall())

    # posting under load: ``posters`` threads each post ``posts`` comments on the same board
    posters = [User.objects.get(pk=pk) for pk in people[: args.posters]]
    samples: list[float] = []
    lock = threading.Lock()

    def poster(person):
        mine = []
        for n in range(args.posts):
            began = time.perf_counter()
            comment_services.comment_create(author=person, board=board, text=f"live comment {n} @cm_00001")
            mine.append((time.perf_counter() - began) * 1000)
        with lock:
            samples.extend(mine)
        connections.close_all()

    threads = [threading.Thread(target=poster, args=(person,)) for person in posters]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - began
    samples.sort()
    posting = summarize(samples)
    posted = len(samples)
    assert Board.objects.get(pk=board.pk).comments == total + posted

    lines = [
        "# Comments at size",
        "",
        f"`make bench-comments` (`python -m bench.feed.comments`), {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.machine()}, {os.cpu_count()} cores; world built in {built:.1f} s.",
        f"One board with {total:,} comments (one in five a reply) by {args.people:,} people; "
        f"{args.runs:,} timed calls a figure (the baselines a tenth). Target: a page p99 <= 5 ms.",
        "",
        "| what | p50 ms | p99 ms | mean ms | CPU ms a call | load (1 min) |",
        "|---|---|---|---|---|---|",
    ]
    for label, figure in rows:
        lines.append(
            f"| {label} | {figure['p50']:.2f} | {figure['p99']:.2f} | {figure['mean']:.2f} | {figure['cpu']:.2f}"
            f" | {figure['load']:.1f} |"
        )
    lines += [
        f"| posting a comment, {args.posters} people at once on the board ({posted:,} in {wall:.1f} s:"
        f" {posted / wall:.0f}/s) | {posting['p50']:.2f} | {posting['p99']:.2f} | {posting['mean']:.2f} | — |"
        f" {os.getloadavg()[0]:.1f} |",
        "",
        "A page through the cursor is one query on `comment_thread_idx` (the plan of the middle page):",
        "",
        "```",
        plan,
        "```",
        "",
    ]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
