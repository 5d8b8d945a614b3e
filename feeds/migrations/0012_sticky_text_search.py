"""Search reads the text of sticky notes too (feeds.search; issue 28's new element type): 0006's
ugc_doc_texts with sticky among the element types it reads. Boards stored before this hold no
sticky note, so no stored search vector needs computing again."""

from django.db import migrations

WITH_STICKY = r"""
CREATE OR REPLACE FUNCTION ugc_doc_texts(doc text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
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
END $$;
"""

TEXT_ONLY = r"""
CREATE OR REPLACE FUNCTION ugc_doc_texts(doc text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    RETURN left(array_to_string(ARRAY(SELECT jsonb_array_elements_text(jsonb_path_query_array(
        doc::jsonb, '$.elements[*] ? (@.type == "text").text'))), ' '), 100000);
EXCEPTION WHEN others THEN
    BEGIN
        RETURN left(array_to_string(ARRAY(SELECT jsonb_array_elements_text(jsonb_path_query_array(
            regexp_replace(doc, '\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})', ' ', 'g')::jsonb,
            '$.elements[*] ? (@.type == "text").text'))), ' '), 100000);
    EXCEPTION WHEN others THEN
        RETURN '';
    END;
END $$;
"""


class Migration(migrations.Migration):
    dependencies = [("feeds", "0011_likes_and_remixes")]

    operations = [migrations.RunSQL(WITH_STICKY, TEXT_ONLY)]
