"""The audit log is append-only in the database too: UPDATE and DELETE on
privacy_auditevent raise, unless an operator purging old entries sets
``SET LOCAL privacy.audit_purge = 'on'`` in their transaction."""

from django.db import migrations

SQL = """
CREATE FUNCTION privacy_auditevent_append_only() RETURNS trigger AS $$
BEGIN
    IF current_setting('privacy.audit_purge', true) = 'on' THEN
        RETURN COALESCE(NEW, OLD);
    END IF;
    RAISE EXCEPTION 'the audit log is append-only (privacy_auditevent %)', TG_OP;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER privacy_auditevent_append_only
    BEFORE UPDATE OR DELETE ON privacy_auditevent
    FOR EACH ROW EXECUTE FUNCTION privacy_auditevent_append_only();
"""

REVERSE = """
DROP TRIGGER IF EXISTS privacy_auditevent_append_only ON privacy_auditevent;
DROP FUNCTION IF EXISTS privacy_auditevent_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("privacy", "0001_initial")]

    operations = [migrations.RunSQL(SQL, REVERSE)]
