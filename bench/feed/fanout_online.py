"""What live notices (feeds.live.online, /ws/me) add to fan-out: one board delivered to N
followers by the site's own fan-out code (bench.feed.fanout_limit's walk: fanout_batch a batch at a
time, in this process), with nobody online, then with a share of the followers marked online in
the plain Redis's online set (each batch then sends one group_send per online reader through the
real Channels layer; no socket listens, so the layer's queues just expire).

    scripts/with-servers.sh python -m bench.feed.fanout_online --followers 100000 --online 0 0.01 0.1

Compare with `make bench-fanout-limit ARGS="--followers 100000 --batch 1000 --chunk 1000"` on the
commit before /ws/me (no notices at all).
"""

import argparse
import time

import django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--followers", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--online", type=float, nargs="+", default=[0.0, 0.01, 0.1], help="shares of followers online")
    args = parser.parse_args()
    django.setup()
    from django.conf import settings

    from bench.feed.fanout_limit import build_followers, deliver_all
    from feeds import keys
    from feeds.live import online

    settings.FANOUT_SCRIPT_CHUNK = 1_000
    build_followers(args.followers)
    plain = online._plain()
    board_id = 10**15 + 500
    deliver_all(board_id, batch=args.batch)  # warm-up: every P exists from here on
    for share in args.online:
        plain.delete(keys.live_online())
        step = round(1 / share) if share else 0
        if step:
            expiry = time.time() + 3600
            online = {1_000_001 + i: expiry for i in range(0, args.followers, step)}
            for start in range(0, len(online), 10_000):
                plain.zadd(keys.live_online(), dict(list(online.items())[start : start + 10_000]))
        board_id += 1
        seconds = deliver_all(board_id, batch=args.batch)
        told = plain.zcard(keys.live_online())
        print(
            f"  {args.followers:>9,} followers, batch {args.batch:,}, {share:>5.0%} online ({told:,} told): "
            f"{args.followers / seconds:>10,.0f} deliveries/s, {seconds / (args.followers / args.batch) * 1000:.2f} ms a batch",
            flush=True,
        )
    plain.delete(keys.live_online())


if __name__ == "__main__":
    main()
