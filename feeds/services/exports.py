"""Take my data (feeds.export builds it): starting an archive, and reading where it stands."""

from typing import Annotated, Literal

from django.db import transaction
from pydantic import Field
from typing_extensions import TypedDict

from feeds import tasks
from feeds.models import Export
from ugcsite.platform.errors import NotFound


class ExportNotFound(NotFound):
    def __init__(self, export_id: int):
        super().__init__(f"You have no export {export_id}; start one with POST /api/v1/me/export.")


def export_start(*, user) -> Export:
    """Start an archive of ``user``'s data, or give the one under way (one at a time). One row,
    one task on commit."""
    with transaction.atomic():
        running = (
            Export.objects.select_for_update()
            .filter(user=user, status__in=(Export.Status.PENDING, Export.Status.RUNNING))
            .order_by("-created_at")
            .first()
        )
        if running is not None:
            return running
        export = Export.objects.create(user=user)
    transaction.on_commit(lambda: tasks.export_build.delay(export.pk))
    return export


def export_get(*, user, export_id: int) -> Export:
    """One of ``user``'s archives (anyone else's is no archive to them: 404). One query."""
    export = Export.objects.filter(pk=export_id, user=user).first()
    if export is None:
        raise ExportNotFound(export_id)
    return export


class ExportStatus(TypedDict):
    """docs/api.md's export object."""

    id: int
    status: Literal[tuple(Export.Status.values)]  # type: ignore[valid-type]
    progress: Annotated[int, Field(ge=0, le=100)]
    url: Annotated[str | None, Field(description="where to download it once ready")]


def export_answer(export: Export) -> ExportStatus:
    """docs/api.md's export object: where it stands, and its address once ready."""
    url = f"/api/v1/me/export/{export.pk}/download" if export.status == Export.Status.READY else None
    return {"id": export.pk, "status": export.status, "progress": export.progress, "url": url}
