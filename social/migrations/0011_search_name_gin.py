"""People search finds names alike through a trigram GIN index instead of GiST (issue 26): GiST's
walk nearest first read the whole index when a million names looked alike (0.2-0.4 s); GIN finds
the alike ones without order, and social.search ranks a bounded few. Without a pending list
(fastupdate): names are written rarely, and every search would read up to 4 MB of it. The
planner chooses between that index and reading people in order until enough alike are found by
trying the query on its sample of names (pg_trgm's estimate); the default sample is enough (a
finer one cost each search 1.5 ms more to plan and chose the same)."""

import django.contrib.postgres.indexes
from django.db import migrations, models



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
    ]
