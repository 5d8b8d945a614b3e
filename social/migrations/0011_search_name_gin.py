"""People search finds names alike through a trigram GIN index instead of GiST (issue 26): GiST's
walk nearest first read the whole index when a million names looked alike (0.2-0.4 s); GIN finds
the alike ones without order, and social.search ranks a bounded few. Without a pending list
(fastupdate): names are written rarely, and every search would read up to 4 MB of it. The planner chooses between
that index and reading people in order until enough are found by sampling names against the
query (pg_trgm's estimate): a finer sample of search_name makes that choice sound."""

import django.contrib.postgres.indexes
from django.db import migrations, models

STATISTICS = "ALTER TABLE social_user ALTER COLUMN search_name SET STATISTICS 1000; ANALYZE social_user;"
DEFAULT_STATISTICS = "ALTER TABLE social_user ALTER COLUMN search_name SET STATISTICS -1;"


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("social", "0010_email_verified"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="user",
            name="user_search_name_trgm",
        ),
        migrations.AddIndex(
            model_name="user",
            index=django.contrib.postgres.indexes.GinIndex(
                django.contrib.postgres.indexes.OpClass(models.F("search_name"), name="gin_trgm_ops"),
                fastupdate=False,
                name="user_search_name_trgm_gin",
            ),
        ),
        migrations.RunSQL(STATISTICS, DEFAULT_STATISTICS),
    ]
