"""Pictures (docs/api.md, "Pictures"): an upload kept within its uploader's quota, and staff
hiding one. The checks and the storage are feeds.images.

A quota check is one locked row (ImageUsage), so two uploads at once never pass it together.
Hiding moves the copy to a new random name: the old address answers 404 at once (a browser or
cache that kept it may show it until its cache runs out), and the canvas and previews leave a
blank box where it was; showing it again moves it back under yet another name.
"""

from django.conf import settings
from django.db import transaction
from django.db.models import F

from feeds import images
from feeds.models import Image, ImageUsage, StaffAction
from feeds.staff_record import image_target, staff_action_record
from ugcsite.platform.errors import Invalid


class QuotaFull(Invalid):
    def __init__(self, used: int, size: int):
        quota = settings.IMAGE_QUOTA_BYTES
        super().__init__(
            f"Your pictures hold {used / 1024 / 1024:.1f} MiB of your {quota / 1024 / 1024:g} MiB; this one "
            f"({size / 1024 / 1024:.1f} MiB once stored) does not fit. Send a smaller picture."
        )


def image_create(*, owner, data: bytes, content_type: str) -> Image:
    """Check, re-encode and keep an upload of ``owner`` (feeds.images.image_process: ImageRefused
    says why not), within IMAGE_QUOTA_BYTES (QuotaFull). The decoding runs before any lock;
    then one locked row, one file written and one INSERT. O(pixels of the upload)."""
    processed = images.image_process(data, content_type)
    size = len(processed.data) + len(processed.preview)
    name = images.image_file_save(processed.data, content_type)
    preview_name = images.image_file_save(processed.preview, processed.preview_type)
    try:
        with transaction.atomic():
            ImageUsage.objects.get_or_create(user_id=owner.pk)
            usage = ImageUsage.objects.select_for_update().get(user_id=owner.pk)
            if usage.bytes + size > settings.IMAGE_QUOTA_BYTES:
                raise QuotaFull(usage.bytes, size)
            image = Image.objects.create(
                id=images.new_image_id(),
                owner_id=owner.pk,
                file=name,
                preview_file=preview_name,
                content_type=content_type,
                width=processed.width,
                height=processed.height,
                size=size,
            )
            ImageUsage.objects.filter(user_id=owner.pk).update(bytes=F("bytes") + size)
    except BaseException:
        images.image_file_delete(name)  # nothing names them: the row was not made
        images.image_file_delete(preview_name)
        raise
    return image


def image_hide(*, image: Image, hidden: bool = True, staff=None, why: str = "") -> bool:
    """Hide a picture (or show it again): its state changes and its copy moves to a new random
    name, so the address it had stops answering. With ``staff``, on the record. False when it
    was that way already. One locked row, one copy and one delete in the storage."""
    want, was = (Image.State.HIDDEN, Image.State.PUBLISHED) if hidden else (Image.State.PUBLISHED, Image.State.HIDDEN)
    with transaction.atomic():
        image = Image.objects.select_for_update().select_related("owner").filter(pk=image.pk, state=was).first()
        if image is None:
            return False
        old = [image.file, image.preview_file]
        image.file, image.preview_file = (
            _moved(image.file, image.content_type),
            _moved(image.preview_file, images.content_type_of(image.preview_file) if image.preview_file else ""),
        )
        image.state = want
        image.save(update_fields=["file", "preview_file", "state"])
        if staff is not None:
            action = StaffAction.Action.HIDE_IMAGE if hidden else StaffAction.Action.UNHIDE_IMAGE
            staff_action_record(staff=staff, action=action, target=image_target(image), why=why)
        transaction.on_commit(lambda: [images.image_file_delete(name) for name in old])
    return True


def _moved(name: str, content_type: str) -> str:
    """A copy written anew under a fresh random name (the old one is deleted on commit); "" for
    one that is gone from the storage (it stays gone: the picture is blank wherever it is)."""
    if not name:
        return ""
    try:
        return images.image_file_save(images.image_file_read(name), content_type)
    except OSError:
        return ""
