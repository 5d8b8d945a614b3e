import threading
from datetime import UTC, datetime, timedelta

from feeds.timelines.ids import board_id_time, min_board_id_at, next_board_id


def test_ids_grow_stay_below_2_to_53_and_tell_their_time():
    before = datetime.now(UTC)
    ids = [next_board_id() for _ in range(5000)]  # several ms worth: sequence roll-over included
    after = datetime.now(UTC)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(0 < i < 2**53 for i in ids)
    assert float(ids[-1]) == ids[-1]  # exact as a sorted-set score
    made = board_id_time(ids[0])
    assert before - timedelta(milliseconds=2) <= made <= after + timedelta(milliseconds=2)
    assert min_board_id_at(made) <= ids[0]


def test_ids_are_unique_across_threads():
    seen, lock = [], threading.Lock()

    def make():
        local = [next_board_id() for _ in range(2000)]
        with lock:
            seen.extend(local)

    threads = [threading.Thread(target=make) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == 8000
