"""Finding and being found, in a real browser (issue 16): a new person searches for "alice",
follows her, she follows back and the header counts the notification; the settings page takes
an avatar; and axe-core (vendored from npm by `make vendor`) finds no serious or critical
accessibility violation on any page, for a visitor or a signed-in person."""

import io
import json

import pytest
from PIL import Image

from feeds.services import boards as board_services
from social import services as people_services
from ugcsite.tests.support import BLOCKING, DOC, PASSWORD, axe_run, image_loaded, sign_up

pytestmark = [pytest.mark.browser]


def axe_violations(person, path: str) -> list[dict]:
    """axe-core's violations on ``path`` (every one, any impact)."""
    person.visit(path, "axe")
    return axe_run(person.page)


def test_search_follow_and_a_notification_when_followed_back(people, django_user_model):
    alice_user = people_services.user_create(username="alice", password=PASSWORD)
    people_services.profile_update(user=alice_user, changes={"display_name": "Alice Liddell"})
    people_services.user_create(username="malicious", password=PASSWORD)
    newbie, alice = people("newbie"), people("alice")
    sign_up(newbie, "newbie")

    # The header's search box, then the people tab.
    newbie.page.fill("#site-search", "alice")
    newbie.page.press("#site-search", "Enter")
    newbie.page.wait_for_url("**/search?q=alice*")
    newbie.page.check("input[name=type][value=users]")
    newbie.page.click(".search-page-form button[type=submit]")
    newbie.page.wait_for_selector("[data-testid=search-people]")
    newbie.shot("search-people")
    names = newbie.page.locator("[data-testid=search-people] .person-name").all_inner_texts()
    assert names[0] == "alice" and "malicious" in names  # the name itself first, then names containing it
    assert "Alice Liddell" in newbie.page.inner_text("[data-testid=search-people]")
    # A typo finds her too.
    assert newbie.api("/api/v1/search?q=alcie&type=users")["items"][0]["username"] == "alice"

    newbie.page.click("[data-testid=search-people] .person-name >> text=alice")
    newbie.page.wait_for_url("**/u/alice")
    newbie.page.click("[data-follow-button]")
    newbie.page.wait_for_selector("text=Following ✓")

    # Alice sees who followed her, then follows back.
    sign_in(alice, "alice")
    alice.visit("/", "alice-home")
    assert alice.page.inner_text("[data-testid=unread-count]") == "1"
    alice.visit("/notifications", "alice-notifications")
    assert "newbie followed you" in " ".join(alice.page.inner_text("[data-testid=notifications]").split())
    alice.visit("/u/newbie", "newbie-profile")
    alice.page.click("[data-follow-button]")
    alice.page.wait_for_selector("text=Following ✓")

    newbie.visit("/", "newbie-home")
    assert newbie.page.inner_text("[data-testid=unread-count]") == "1"
    newbie.page.click("[data-testid=notifications-link]")
    newbie.page.wait_for_url("**/notifications")
    newbie.shot("notifications")
    item = newbie.page.locator("[data-testid=notifications] .notification")
    assert (
        item.count() == 1
        and item.get_attribute("data-kind") == "follow"
        and item.get_attribute("data-actor-count") == "1"
    )
    assert "alice followed you" in " ".join(item.inner_text().split())
    assert newbie.api("/api/v1/notifications")["unread"] == 1
    newbie.page.click("text=Mark all as read")
    newbie.page.wait_for_selector("[data-testid=unread-total]:has-text('0 unread')")
    assert newbie.page.locator("[data-testid=unread-count]").count() == 0
    newbie.check_clean()
    alice.check_clean()


def sign_in(person, username: str) -> None:
    person.visit("/login", "login")
    person.page.fill("#id_username", username)
    person.page.fill("#id_password", PASSWORD)
    person.page.click("form.stacked button[type=submit]")
    person.page.wait_for_selector(".usernav .me")


def test_settings_page_avatar_upload(people, tmp_path):
    someone = people("painter")
    sign_up(someone, "painter")
    someone.visit("/settings", "settings")
    before = someone.page.get_attribute("[data-testid=avatar-current]", "src")
    assert before.endswith("?v=0")
    picture = tmp_path / "me.png"
    Image.new("RGB", (1200, 800), (40, 120, 200)).save(picture)
    someone.page.set_input_files("#id_avatar", str(picture))
    someone.page.click("text=Upload picture")
    someone.page.wait_for_selector("text=Your new picture is saved")
    image_loaded(someone.page, "[data-testid=avatar-current]")
    someone.shot("avatar-uploaded")
    after = someone.page.get_attribute("[data-testid=avatar-current]", "src")
    assert after.endswith("?v=1")
    served = someone.page.request.get(after)
    assert served.headers["content-type"] == "image/webp"
    assert Image.open(io.BytesIO(served.body())).size == (256, 256)
    # The header and the profile show it too.
    assert someone.page.get_attribute(".usernav .me img", "src") == after
    someone.visit("/u/painter", "profile")
    assert someone.page.get_attribute(".profile-head img.avatar", "src") == after

    # Something that is not a picture is refused with a reason, and nothing changes.
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"this is not a picture")
    someone.visit("/settings", "settings-again")
    someone.page.set_input_files("#id_avatar", str(junk))
    someone.page.click("text=Upload picture")
    someone.page.wait_for_selector("#id_avatar-error")
    assert "picture" in someone.page.inner_text("#id_avatar-error")
    assert someone.page.get_attribute("[data-testid=avatar-current]", "src") == after

    # A picture chosen, then the main Save: the picture is kept with the settings (not dropped).
    someone.visit("/settings", "settings-trap")
    other = tmp_path / "other.png"
    Image.new("RGB", (300, 300), (200, 60, 40)).save(other)
    someone.page.set_input_files("#id_avatar", str(other))
    someone.page.fill("#id_display_name", "The Painter")
    someone.page.click("form[data-settings-form] button[type=submit]")
    someone.page.wait_for_selector("text=Your settings are saved")
    kept = someone.page.get_attribute("[data-testid=avatar-current]", "src")
    assert kept.endswith("?v=2") and someone.page.input_value("#id_display_name") == "The Painter"
    someone.check_clean()


def test_no_serious_accessibility_violation_on_any_page(people):
    author = people_services.user_create(username="alice", password=PASSWORD)
    reader = people_services.user_create(username="bob", password=PASSWORD)
    board = board_services.board_create(author=author, title="A garden map", kind="map", tags=["garden"], doc=DOC)
    board_services.board_publish(board)
    visitor, alice = people("visitor"), people("alice")
    public = [
        "/",
        "/signup",
        "/login",
        "/discover",
        "/popular",
        "/search",
        "/search?q=garden",
        "/search?q=ali&type=users",
        "/u/alice",
        "/u/alice/followers",
        "/u/alice/following",
        f"/b/{board.id}",
        "/no-such-page",
    ]
    signed_in = [
        "/",
        "/new",
        f"/b/{board.id}",
        f"/b/{board.id}/edit",
        f"/b/{board.id}/delete",
        "/settings",
        "/notifications",
        "/logout",
        "/popular?scope=following",
        "/u/bob",
        "/search?q=garden",
    ]
    found = {}
    for path in public:
        found[f"visitor {path}"] = axe_violations(visitor, path)
    sign_in(alice, "alice")
    alice.page.goto("/u/bob")
    alice.page.click("[data-follow-button]")  # a notification for bob, and a follow list with someone in it
    for path in signed_in:
        found[f"alice {path}"] = axe_violations(alice, path)
    keyboard_walk(alice)
    print(json.dumps(found, indent=1))  # every finding, for the record (pytest -s shows it)
    blocking = {page: [v for v in violations if v["impact"] in BLOCKING] for page, violations in found.items()}
    assert {page: v for page, v in blocking.items() if v} == {}
    assert reader.pk  # bob exists for the follow above


def keyboard_walk(person) -> None:
    """From the top of a page, Tab reaches the skip link, the search box, the notifications and
    the settings, each drawn with a visible focus ring; Enter in the search box searches."""
    person.visit("/", "keyboard")
    reached = []
    for _ in range(14):
        person.page.keyboard.press("Tab")
        reached.append(
            person.page.evaluate("""() => { const e = document.activeElement, s = getComputedStyle(e);
            return {name: e.id || e.getAttribute("href") || e.textContent.trim(),
                    ring: s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0 || s.boxShadow !== "none"}; }""")
        )
    names = [r["name"] for r in reached]
    assert names[0] == "#content"  # the skip link comes first
    for wanted in ("site-search", "/notifications", "/settings"):
        assert wanted in names, names
    assert all(r["ring"] for r in reached), reached
    person.page.focus("#site-search")
    person.page.keyboard.type("garden")
    person.page.keyboard.press("Enter")
    person.page.wait_for_url("**/search?q=garden*")
