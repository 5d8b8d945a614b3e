import os

from celery import Celery
from celery.signals import worker_process_init

from ugcsite.platform.heap import freeze_startup

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")

app = Celery("ugcsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["feeds.discovery"])  # tasks beside the indexes they keep
app.autodiscover_tasks(["feeds.live"])  # compaction of the live boards
app.autodiscover_tasks(["feeds.federation"])  # deliveries to other servers
app.autodiscover_tasks(["ugcsite"], related_name="backups")  # PostgreSQL's scheduled backups


@worker_process_init.connect
def _heap_frozen(**_) -> None:
    """Each worker process, once forked, leaves its startup heap out of the collector's walks."""
    freeze_startup(views=False)
