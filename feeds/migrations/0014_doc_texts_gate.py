"""ugc_doc_texts looks for a text or sticky element before it parses the doc: a board of strokes
alone (most of them, and the big ones) has no text to search, and parsing its JSON as jsonb was
most of the cost of writing it, which a live board's compaction does every few seconds (36 of
45 ms for 5,000 strokes; the look takes 4). Every doc is written by the site's own encoder
(compact, ASCII, letters never escaped), so the look finds every element the parse would;
whitespace around the colon is allowed all the same. The answer is the same for every doc, so no
stored search vector needs computing again."""

from importlib import import_module

from django.db import migrations

WITH_STICKY = import_module("feeds.migrations.0012_sticky_text_search").WITH_STICKY

GATED = r"""
CREATE OR REPLACE FUNCTION ugc_doc_texts(doc text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    IF doc !~ '"type"\s*:\s*"(text|sticky)"' THEN
        RETURN '';
    END IF;
    BEGIN
        RETURN left(array_to_string(ARRAY(SELECT jsonb_array_elements_text(jsonb_path_query_array(
            doc::jsonb, '$.elements[*] ? (@.type == "text" || @.type == "sticky").text'))), ' '), 100000);
    EXCEPTION WHEN others THEN
        BEGIN
            RETURN left(array_to_string(ARRAY(SELECT jsonb_array_elements_text(jsonb_path_query_array(
                regexp_replace(doc, '\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})', ' ', 'g')::jsonb,
                '$.elements[*] ? (@.type == "text" || @.type == "sticky").text'))), ' '), 100000);
        EXCEPTION WHEN others THEN
            RETURN '';
        END;
    END;
END $$;
"""


class Migration(migrations.Migration):
    dependencies = [("feeds", "0013_search_terms")]

    operations = [migrations.RunSQL(GATED, WITH_STICKY)]
