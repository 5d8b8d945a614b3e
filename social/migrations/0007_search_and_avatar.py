import django.contrib.postgres.indexes
import django.db.models.functions.text
from django.contrib.postgres.operations import TrigramExtension, UnaccentExtension
from django.db import migrations, models

# unaccent() is only STABLE (its dictionary could change), so a generated column cannot call it;
# this wrapper names the dictionary and promises immutability, as PostgreSQL's documentation
# suggests. Defined in the schema of the extension (public by default).
SEARCH_NAME = """
CREATE OR REPLACE FUNCTION ugc_unaccent(text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $$;
CREATE OR REPLACE FUNCTION ugc_search_name(text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT lower(ugc_unaccent($1)) $$;
"""
DROP = "DROP FUNCTION IF EXISTS ugc_search_name(text); DROP FUNCTION IF EXISTS ugc_unaccent(text);"


class Migration(migrations.Migration):

    dependencies = [
        ('social', '0006_user_last_seen'),
    ]

    operations = [
        TrigramExtension(),
        UnaccentExtension(),
        migrations.RunSQL(SEARCH_NAME, DROP),
        migrations.AddField(
            model_name='user',
            name='search_name',
            field=models.GeneratedField(db_persist=True, editable=False, expression=models.Func(django.db.models.functions.text.Concat(models.F('username'), models.Value(' '), models.F('display_name')), function='ugc_search_name', output_field=models.TextField()), output_field=models.TextField()),
        ),
        migrations.AddField(
            model_name='user',
            name='avatar_version',
            field=models.PositiveIntegerField(db_default=0, default=0, editable=False),
        ),
        migrations.AddIndex(
            model_name='user',
            index=django.contrib.postgres.indexes.GistIndex(django.contrib.postgres.indexes.OpClass(models.F('search_name'), name='gist_trgm_ops'), name='user_search_name_trgm'),
        ),
        migrations.AddIndex(
            model_name='user',
            index=models.Index(django.contrib.postgres.indexes.OpClass(models.F('search_name'), name='text_pattern_ops'), name='user_search_name_prefix'),
        ),
        migrations.CreateModel(
            name='Avatar',
            fields=[
                ('user', models.OneToOneField(on_delete=models.deletion.CASCADE, primary_key=True, related_name='avatar', serialize=False, to='social.user')),
                ('image', models.BinaryField()),
                ('content_type', models.CharField(max_length=32)),
                ('updated_at', models.DateTimeField(auto_now=True)),
            ],
        ),
    ]
