"""Search at size (issue 16): people by name and boards by title, tags and drawing text, through
feeds.selectors.search (PostgreSQL, plus the G hydration of the page), on the benchmark's world.

``figures(table, world, label, runs)`` adds the rows to `make bench` / `make bench-smoke`;
``python -m bench.search.shapes`` (`make bench-search`) builds 1,000,000 boards over 20,000 authors (the
world's follow graph) and 1,000,000 people in all (the other 980,000 are bulk-loaded names, each
like every other: ``user`` and seven digits), and measures only search, in about ten minutes;
figures in bench/results/search.md.
"""

import argparse
import os
import platform
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import django

from bench.harness.report import RESULTS


def _word_matches(world_words_by_rank: list[str], counts: Counter, want: int) -> str:
    """The word whose count of titles is nearest ``want``."""
    return min(world_words_by_rank, key=lambda word: abs(counts[word] - want))


def queries(board_count: int) -> list[tuple[str, str, str]]:
    """(label, type, q): the shapes people type, from the world's own vocabulary: a rare word, a
    common one, a word everyone's title has ("board": every board matches), a prefix, two words,
    a word that starts tags (as text: the tags it starts and any title word), a tag (#: that tag
    whole); a username, its prefix, a typo of it, one letter."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from bench.harness.world import WORDS

    with connection.cursor() as cursor:  # how many titles hold each word, from the search vectors
        cursor.execute("SELECT word, ndoc FROM ts_stat('SELECT search_vector FROM feeds_board')")
        counts = Counter(dict(cursor.fetchall()))
    tag_words = sum(1 for word in counts if word.startswith("tag20"))
    rare = _word_matches(WORDS, counts, 5)
    medium = _word_matches(WORDS, counts, max(board_count // 1_000, 20))
    common = WORDS[0]
    second = WORDS[1]
    people = (
        get_user_model()
        .objects.filter(username__startswith="user")
        .order_by("username")
        .values_list("username", flat=True)
    )
    name = people[people.count() // 2]
    typo = name[:1] + name[2] + name[1] + name[3:]
    return [
        (f"boards, a rare word ({counts[rare]:,} titles)", "boards", rare),
        (f"boards, a word in {counts[medium]:,} titles", "boards", medium),
        (f"boards, the commonest word ({counts[common]:,} titles)", "boards", common),
        (f"boards, a word in every title ({counts['board']:,})", "boards", "board"),
        (f"boards, a prefix ({common[:3]}*)", "boards", common[:3]),
        ("boards, two common words", "boards", f"{common} {second}"),
        (f"boards, a word that starts {tag_words} tags (tag20)", "boards", "tag20"),
        ("boards, a tag (#tag20)", "boards", "#tag20"),
        (f"people, a username ({name})", "users", name),
        (f"people, a prefix ({name[:-1]}*)", "users", name[:-1]),
        (f"people, a typo ({typo})", "users", typo),
        ("people, one letter (every user)", "users", "u"),
    ]


def add_people(total: int) -> int:
    """Bring the site to ``total`` people with COPY: ``user0020000``, ``user0020001``, ... (names
    that share most of their trigrams with every other, the hard case for people search), no
    follows, no boards. PostgreSQL computes each search name; the indexes take them as they come.
    Returns how many people there are."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from bench.harness.world import _copy

    User = get_user_model()
    have = User.objects.count()
    now = datetime.now(UTC)
    columns = ["password", "is_superuser", "username", "first_name", "last_name", "email", "is_staff"]
    columns += ["is_active", "date_joined", "followers_count", "following_count", "boards_count"]
    rows = (("!", False, f"user{i:07d}", "", "", "", False, True, now, 0, 0, 0) for i in range(have, total))
    _copy(User._meta.db_table, columns, rows)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {User._meta.db_table}")
    return User.objects.count()


def storage() -> str:
    """What search stores beside the boards and people: BoardTerm's rows and size, and the people's
    trigram index."""
    from django.db import connection

    from feeds.models import BoardTerm

    terms = BoardTerm._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*), pg_table_size('{terms}'), pg_indexes_size('{terms}'), "
            "pg_relation_size('user_search_name_trgm_gin') FROM " + terms
        )
        rows, table, key, trigrams = cursor.fetchone()
    mb = 1024 * 1024
    return (
        f"BoardTerm holds {rows:,} rows ({table / mb:,.0f} MB, and {key / mb:,.0f} MB of primary key); "
        f"the people's trigram GIN index takes {trigrams / mb:,.0f} MB"
    )


def _cpu_seconds(backend_pid: int) -> tuple[float, float | None]:
    """CPU seconds used so far by this process and by its PostgreSQL backend (from /proc, so only
    when the server runs on this machine; else None). Unlike the wall clock, what other work on
    the machine takes does not count."""
    try:
        fields = Path(f"/proc/{backend_pid}/stat").read_text().rsplit(")", 1)[1].split()
        backend = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    except OSError:
        backend = None
    return time.process_time(), backend


def figures(table, label: str, board_count: int, runs: int) -> list[dict]:
    from django.db import connection

    from bench.harness import measure
    from feeds import selectors
    from feeds.models import BoardTerm

    with connection.cursor() as cursor:  # after a bulk load, as autovacuum soon would (migration 0013)
        cursor.execute(f"VACUUM (ANALYZE) {BoardTerm._meta.db_table}")
        cursor.execute("SELECT pg_backend_pid()")
        backend_pid = cursor.fetchone()[0]
    rows = []
    for what, kind, q in queries(board_count):
        started = time.perf_counter()
        answer = selectors.search(q, kind=kind, offset=0, limit=20)
        slow = time.perf_counter() - started > 0.1  # a slow shape gets fewer runs, so the run ends
        shape_runs = min(runs, 30) if slow else runs
        client, backend = _cpu_seconds(backend_pid)
        timing = measure.timings(
            lambda q=q, kind=kind: selectors.search(q, kind=kind, offset=0, limit=20), runs=shape_runs
        )
        client_after, backend_after = _cpu_seconds(backend_pid)
        calls = shape_runs + 5  # measure.timings' warm-up calls too
        note = f"total {answer['total']:,}"
        if backend is not None and backend_after is not None:
            cpu = (client_after - client + backend_after - backend) / calls * 1000
            note += f"; CPU {cpu:.1f} ms a search ({(backend_after - backend) / calls * 1000:.1f} in PostgreSQL)"
        table.add(f"search {what}", label, timing, note=note)
        rows.append({"what": what, "q": q, "total": answer["total"], **timing})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boards", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=20_000, help="authors, with the world's follow graph")
    parser.add_argument("--people", type=int, default=1_000_000, help="people in all (the rest bulk-loaded)")
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False
    call_command("migrate", verbosity=0)
    from bench.harness import world as worldmod
    from bench.harness.report import Table

    started = time.perf_counter()
    w = worldmod.World(seed=2026, users=args.users)
    print(f"building {args.users:,} users and their follow graph", flush=True)
    worldmod.build_people(w)
    print(f"bringing the site to {args.people:,} people (COPY)", flush=True)
    people = add_people(args.people)
    print(f"building {args.boards:,} boards (COPY; PostgreSQL computes each search vector)", flush=True)
    load = time.perf_counter()
    worldmod.grow_boards(w, args.boards)
    load = time.perf_counter() - load
    table = Table()
    label = f"{w.boards:,}"
    print(f"\n== search over {label} boards and {people:,} people ==", flush=True)
    figures(table, label, w.boards, args.runs)
    elapsed = time.perf_counter() - started
    RESULTS.mkdir(exist_ok=True)
    machine = f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}"
    text = (
        f"# Search benchmark\n\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine}; `make bench-search`, "
        f"{elapsed / 60:.1f} minutes ({load / 60:.1f} to load the boards). In-process through "
        f"feeds.selectors.search (PostgreSQL and the page's hydration from Redis), {people:,} people, first page of 20, "
        f"{args.runs} runs after 5 warm-up calls. Times in milliseconds; the CPU a search took (this process "
        f"and its PostgreSQL backend, averaged over the runs) is what other work on the machine does not "
        f"inflate. {storage()}.\n\n{table.markdown()}\n"
    )
    (RESULTS / "search.md").write_text(text)
    print("\n" + table.markdown())
    print("\nwritten: bench/results/search.md")


if __name__ == "__main__":
    main()
