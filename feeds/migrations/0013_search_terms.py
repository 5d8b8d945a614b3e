"""Search reads a board's terms in id order (issue 26): feeds_boardterm holds one row per lexeme of
each published board's search vector and one per tag ("#" + tag), kept by a trigger on
feeds_board in the statement that writes the board, and filled here from the boards there are.
The GIN index of the search vector goes: search no longer reads it (feeds.search)."""

from django.db import migrations, models

PUBLISHED = "published"  # feeds.models.Board.State.PUBLISHED, frozen here as a migration is

# A board's terms: its lexemes, and each tag once with "#" before it (no lexeme starts with "#":
# the parser splits words there; were one to, a tag query still checks the board's tags).
TERMS = """
CREATE OR REPLACE FUNCTION ugc_board_terms(vector tsvector, tags varchar[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT tsvector_to_array(coalesce(vector, ''::tsvector))
              || ARRAY(SELECT DISTINCT '#' || tag FROM unnest(coalesce(tags, '{}')) AS tag) $$;
"""

# After each insert, delete and update that changes what is searched or whether it is published:
# the terms the board no longer has go, the new ones come (a stroke drawn changes no term: the
# update trigger's WHEN leaves it alone). A board that is not published has no terms.
SYNC = f"""
CREATE OR REPLACE FUNCTION ugc_board_terms_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    before_terms text[] := '{{}}';
    after_terms text[] := '{{}}';
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.state = '{PUBLISHED}' THEN
        before_terms := ugc_board_terms(OLD.search_vector, OLD.tags);
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.state = '{PUBLISHED}' THEN
        after_terms := ugc_board_terms(NEW.search_vector, NEW.tags);
    END IF;
    IF cardinality(before_terms) > 0 THEN
        DELETE FROM feeds_boardterm WHERE board_id = OLD.id AND term = ANY (
            ARRAY(SELECT unnest(before_terms) EXCEPT SELECT unnest(after_terms)));
    END IF;
    IF cardinality(after_terms) > 0 THEN
        INSERT INTO feeds_boardterm (term, board_id)
            SELECT added.term, NEW.id
            FROM (SELECT unnest(after_terms) EXCEPT SELECT unnest(before_terms)) AS added (term)
            ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER board_terms_write AFTER INSERT OR DELETE ON feeds_board
    FOR EACH ROW EXECUTE FUNCTION ugc_board_terms_sync();
CREATE TRIGGER board_terms_update AFTER UPDATE ON feeds_board
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state
                       OR OLD.search_vector IS DISTINCT FROM NEW.search_vector
                       OR OLD.tags IS DISTINCT FROM NEW.tags)
    EXECUTE FUNCTION ugc_board_terms_sync();
"""

UNSYNC = """
DROP TRIGGER IF EXISTS board_terms_update ON feeds_board;
DROP TRIGGER IF EXISTS board_terms_write ON feeds_board;
DROP FUNCTION IF EXISTS ugc_board_terms_sync();
DROP FUNCTION IF EXISTS ugc_board_terms(tsvector, varchar[]);
"""

# Search reads the newest rows of a term through the primary key alone (an index-only scan) when
# the visibility map says their pages are all visible: vacuum after every 1% of new rows, not
# PostgreSQL's default 20%, so that stays true of all but the last few minutes of boards.
FILL = f"""
INSERT INTO feeds_boardterm (term, board_id)
    SELECT DISTINCT term, id FROM feeds_board, unnest(ugc_board_terms(search_vector, tags)) AS term
    WHERE state = '{PUBLISHED}';
ALTER TABLE feeds_boardterm SET (autovacuum_vacuum_insert_scale_factor = 0.01);
"""


class Migration(migrations.Migration):
    dependencies = [
        ("feeds", "0012_sticky_text_search"),
    ]

    operations = [
        migrations.CreateModel(
            name="BoardTerm",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "term", "board_id", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("term", models.TextField(db_collation="C")),
                ("board_id", models.BigIntegerField()),
            ],
        ),
        migrations.RunSQL(TERMS + SYNC, UNSYNC),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
        migrations.RemoveIndex(
            model_name="board",
            name="board_search_gin",
        ),
    ]
