"""Reports and the moderation queue (docs/api.md, "Safety"): anyone signed in reports a board, a
comment, a picture or a person; staff decide in the admin (feeds.admin, ReportCaseAdmin), one case per target.
A comment taken down is hidden everywhere (feeds.services.comments.comment_hide), a picture too
(feeds.services.images.image_hide: every board that shows it draws a blank box).

A case gathers its target's reports, one per person; when REPORTS_AUTO_HIDE distinct people have
reported it, the target is hidden (a board) or suspended (a person) at once, through the same
moderation paths staff use, until staff decide. Deciding closes the case: "action taken" hides
the board or suspends the person (if not already), "dismissed" brings back what the case hid;
either way each reporter is told (a notification with no actor: staff are not named).
Online cost: O(1) rows a report; hiding and suspending run their usual tasks.
"""

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from feeds import notifications, staff_record
from feeds.models import Board, Comment, Image, Notification, Report, ReportCase, StaffAction
from feeds.services import comments, images, moderation
from ugcsite.platform.errors import Invalid
from ugcsite.platform.ratelimits import attempt


class ReportOwn(Invalid):
    def __init__(self, what: str):
        super().__init__(
            f"You cannot report {what}; delete it or change it instead."
            if what != "yourself"
            else "You cannot report yourself."
        )


def report_create(
    *,
    reporter,
    reason: str,
    text: str = "",
    board: Board | None = None,
    person=None,
    comment: Comment | None = None,
    image: Image | None = None,
) -> Report:
    """``reporter`` reports ``board``, ``comment``, ``image`` or ``person`` (the caller found it visible to them). At
    most RATE_LIMIT_REPORTS_PER_MINUTE a minute. Reporting again in the open case replaces the
    reason and text. The REPORTS_AUTO_HIDE-th distinct reporter hides the target pending review.
    O(1) rows; returns the report."""
    if board is not None and board.author_id == reporter.pk:
        raise ReportOwn("your own board")
    if person is not None and person.pk == reporter.pk:
        raise ReportOwn("yourself")
    if comment is not None and comment.author_id == reporter.pk:
        raise ReportOwn("your own comment")
    if image is not None and image.owner_id == reporter.pk:
        raise ReportOwn("your own picture")
    attempt(
        "reports", str(reporter.pk), per_minute=settings.RATE_LIMIT_REPORTS_PER_MINUTE, what="reports from your account"
    )
    if board is not None:
        target = {"board": board}
    elif comment is not None:
        target = {"comment": comment}
    elif image is not None:
        target = {"image": image}
    else:
        target = {"person": person}
    with transaction.atomic():
        case = _open_case(target)
        report, created = Report.objects.update_or_create(
            case=case, reporter=reporter, defaults={"reason": reason, "text": text}
        )
        if created:
            ReportCase.objects.filter(pk=case.pk).update(reporters=F("reporters") + 1)
            case.refresh_from_db(fields=["reporters"])
        if case.reporters >= settings.REPORTS_AUTO_HIDE and not case.auto_hidden:
            _take_down(case)
            ReportCase.objects.filter(pk=case.pk).update(auto_hidden=True)
    return report


def _open_case(target: dict) -> ReportCase:
    """The target's open case, locked (made if none: the partial unique index settles a race)."""
    for _ in range(2):
        case = ReportCase.objects.select_for_update().filter(closed_at__isnull=True, **target).first()
        if case is not None:
            return case
        try:
            with transaction.atomic():
                return ReportCase.objects.create(**target)
        except IntegrityError:  # another report opened it at the same moment: take that one
            continue
    raise AssertionError("no open case after two tries")


def _case_reasons(case: ReportCase) -> str:
    """Why a case was decided as it was: its reports' reasons and what each reporter wrote."""
    return "; ".join(
        f"{report.get_reason_display()} ({report.reporter.username}{': ' + report.text if report.text else ''})"
        for report in case.reports.select_related("reporter").order_by("created_at")
    )


def _case_target(case: ReportCase) -> str:
    """How the staff record names what a case was about."""
    if case.image_id is not None:
        return staff_record.image_target(Image.objects.select_related("owner").get(pk=case.image_id))
    if case.comment_id is not None:
        return staff_record.comment_target(Comment.objects.select_related("author").get(pk=case.comment_id))
    if case.board_id is not None:
        return staff_record.board_target(Board.objects.select_related("author").get(pk=case.board_id))
    return staff_record.person_target(case.person)


def _take_down(case: ReportCase) -> None:
    if case.image_id is not None:
        images.image_hide(image=Image(pk=case.image_id))
    elif case.comment_id is not None:
        comments.comment_hide(comment_id=case.comment_id)
    elif case.board_id is not None:
        moderation.board_hide(board=Board.objects.select_related("author").get(pk=case.board_id))
    elif case.person.is_active:
        moderation.user_suspend(user=case.person)


def case_close(*, case: ReportCase, outcome: str, staff) -> bool:
    """Staff decide a case: ACTIONED hides the board or suspends the person (if not already),
    DISMISSED brings back what the case hid on its own. Each reporter is told. False when the
    case was closed already. O(reporters) notification rows, one statement."""
    with transaction.atomic():
        case = ReportCase.objects.select_for_update(of=("self",)).select_related("person", "comment").get(pk=case.pk)
        if case.closed_at is not None:
            return False
        if outcome == ReportCase.Outcome.ACTIONED:
            _take_down(case)
        elif case.auto_hidden:
            if case.image_id is not None:
                images.image_hide(image=Image(pk=case.image_id), hidden=False)
            elif case.comment_id is not None:
                comments.comment_hide(comment_id=case.comment_id, hidden=False)
            elif case.board_id is not None:
                moderation.board_unhide(board=Board.objects.get(pk=case.board_id))
            elif not case.person.is_active:
                moderation.user_unsuspend(user=case.person)
        ReportCase.objects.filter(pk=case.pk).update(closed_at=timezone.now(), outcome=outcome, closed_by=staff)
        staff_record.staff_action_record(
            staff=staff,
            action=StaffAction.Action.TAKE_DOWN
            if outcome == ReportCase.Outcome.ACTIONED
            else StaffAction.Action.DISMISS,
            target=_case_target(case),
            why=_case_reasons(case),
        )
        kind = (
            Notification.Kind.REPORT_ACTIONED
            if outcome == ReportCase.Outcome.ACTIONED
            else Notification.Kind.REPORT_DISMISSED
        )
        notifications.notices_add(
            kind=kind,
            recipient_ids=list(case.reports.values_list("reporter_id", flat=True)),
            board_id=case.board_id or (case.comment.board_id if case.comment_id else None),
            at=timezone.now(),
        )
    return True
