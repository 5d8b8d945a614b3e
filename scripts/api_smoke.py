"""A black-box walk through the API of a running site (``make run``, on a plain Redis or a
cluster): sign-up, tokens, follow, post, feed, discover, reading, delete. Standard library only.

    python3 scripts/api_smoke.py [http://127.0.0.1:8000]

Prints each step; exits 1 at the first answer that is not what docs/api.md says.
"""

import json
import secrets
import sys
import time
import urllib.error
import urllib.request

BASE = (sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000").rstrip("/")
DOC = {
    "width": 200,
    "height": 100,
    "background": "#ffffff",
    "elements": [{"type": "path", "color": "#000000", "width": 3, "points": [[10, 10], [190, 90]]}],
}


def call(method: str, path: str, body=None, token: str | None = None) -> tuple[int, object]:
    request = urllib.request.Request(
        BASE + path, method=method, data=None if body is None else json.dumps(body).encode()
    )
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw and "json" in response.headers.get(
                "Content-Type", ""
            ) else raw
    except urllib.error.HTTPError as error:
        return error.code, error.read()[:300]


def expect(what: str, status: int, answer, want: int) -> object:
    print(f"{'ok ' if status == want else 'BAD'} {what}: {status}")
    if status != want:
        print(f"    expected {want}; answer: {answer!r}")
        sys.exit(1)
    return answer


def until(what: str, check, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            print(f"BAD {what}: not within {seconds:g} s")
            sys.exit(1)
        time.sleep(0.2)
    print(f"ok  {what}")


def main() -> None:
    suffix = secrets.token_hex(3)
    names = [f"smoke_a_{suffix}", f"smoke_b_{suffix}"]
    tokens = []
    for name in names:
        expect(f"sign up {name}", *call("POST", "/api/v1/users", {"username": name, "password": "smoke-password"}), 201)
        answer = expect("token", *call("POST", "/api/v1/tokens", {"username": name, "password": "smoke-password"}), 201)
        tokens.append(answer["token"])
    author, reader = tokens
    expect("follow", *call("PUT", f"/api/v1/users/{names[0]}/follow", token=reader), 204)
    board = expect(
        "post a board",
        *call("POST", "/api/v1/boards", {"title": "Smoke", "kind": "map", "tags": ["smoke"], "doc": DOC}, token=author),
        201,
    )
    expect("read it", *call("GET", f"/api/v1/boards/{board['id']}", token=reader), 200)
    until(
        "the board in the follower's feed (fan-out)",
        lambda: any(i["id"] == board["id"] for i in call("GET", "/api/v1/feed", token=reader)[1]["items"]),
    )
    until(
        "discover finds it",
        lambda: any(
            i["id"] == board["id"] for i in call("GET", f"/api/v1/discover?tag=smoke&author={names[0]}")[1]["items"]
        ),
    )
    expect("reading", *call("GET", f"/api/v1/reading?ids={board['id']}", token=author), 200)
    expect("popular", *call("GET", "/api/v1/popular?scope=following", token=author), 200)
    expect("delete", *call("DELETE", f"/api/v1/boards/{board['id']}", token=author), 204)
    expect("gone at once", *call("GET", f"/api/v1/boards/{board['id']}"), 404)
    until(
        "gone from the feed",
        lambda: all(i["id"] != board["id"] for i in call("GET", "/api/v1/feed", token=reader)[1]["items"]),
    )
    print("all good")


if __name__ == "__main__":
    main()
