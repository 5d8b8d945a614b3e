"""The report form (/report?board=<id>, /report?comment=<id> or /report?user=<name>): why, and a few words; it calls
the same service as POST /api/v1/reports and goes back to what was reported."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse

from feeds import selectors
from feeds.rules import REPORT_TEXT_MAX, ReportReason
from feeds.services import reports
from social.selectors import user_get_for
from ugcsite.platform.errors import DomainError, NotFound, RateLimited
from ugcsite.platform.http import whole_number


@login_required
def report_page(request):
    source = request.POST if request.method == "POST" else request.GET
    board_id, username = whole_number(source.get("board", "")), source.get("user", "")
    comment_id = whole_number(source.get("comment", ""))
    if comment_id is not None:
        comment = selectors.comment_get(comment_id, request.user)
        back = reverse("boards:detail", args=[comment.board_id]) + f"#comment-{comment.pk}"
        who = comment.author.username if comment.author_id else "someone"
        target, label = {"comment": comment}, f"a comment by {who} on “{comment.board.title}”"
    elif board_id is not None:
        board = selectors.board_get_for(board_id, request.user)
        target, back, label = {"board": board}, reverse("boards:detail", args=[board.pk]), f"the board “{board.title}”"
    elif username:
        person = user_get_for(username, request.user)
        target, back, label = {"person": person}, reverse("people:profile", args=[person.username]), person.username
    else:
        raise NotFound("Report what? Use the Report link on a board or a profile.")
    context = {
        "target": target,
        "label": label,
        "back": back,
        "reasons": ReportReason.choices,
        "text_max": REPORT_TEXT_MAX,
        "chosen": source.get("reason", ""),
        "text": source.get("text", ""),
    }
    if request.method != "POST":
        return render(request, "feeds/report.html", context)
    reason, text = source.get("reason", ""), source.get("text", "")
    problem = None
    if reason not in ReportReason.values:
        problem = "Choose why you report it."
    elif len(text) > REPORT_TEXT_MAX:
        problem = f"Say it in at most {REPORT_TEXT_MAX:,} characters."
    else:
        try:
            reports.report_create(reporter=request.user, reason=reason, text=text, **target)
        except (RateLimited, DomainError) as error:
            problem = str(error)
    if problem:
        return render(request, "feeds/report.html", {**context, "problem": problem}, status=400)
    messages.success(request, "Thank you: staff will look at your report, and you will be told what they decide.")
    return redirect(back)
