"""A version number for the emergency rules, bumped by the database in the
same transaction as any change to them (insert, update, delete, truncate,
bulk or not), so a process compares one number instead of the rules' count
and latest ``updated_at``. Numbers come from a sequence, so a rolled-back
change never leaves its number to a later, different one. That aggregate missed an edit stamped by a web
server whose clock ran behind, or one that committed after a later-stamped
edit, until some other rule changed."""

from django.db import migrations

FORWARD = """
CREATE SEQUENCE emergencies_rules_version_seq;
CREATE TABLE emergencies_rules_version (id smallint PRIMARY KEY CHECK (id = 1), n bigint NOT NULL);
INSERT INTO emergencies_rules_version (id, n) VALUES (1, nextval('emergencies_rules_version_seq'));
CREATE FUNCTION emergencies_rules_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A sequence never hands a number out twice, even to a transaction that
    -- rolls back: no two states of the rules ever carry the same version.
    INSERT INTO emergencies_rules_version (id, n) VALUES (1, nextval('emergencies_rules_version_seq'))
    ON CONFLICT (id) DO UPDATE SET n = excluded.n;
    RETURN NULL;
END
$$;
CREATE TRIGGER emergencies_rules_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON orchestration_emergencyrule
    FOR EACH STATEMENT EXECUTE FUNCTION emergencies_rules_version_bump();
"""

BACKWARD = """
DROP TRIGGER emergencies_rules_changed ON orchestration_emergencyrule;
DROP FUNCTION emergencies_rules_version_bump();
DROP TABLE emergencies_rules_version;
DROP SEQUENCE emergencies_rules_version_seq;
"""


class Migration(migrations.Migration):
    dependencies = [("emergencies", "0008_retire_no_heating_pattern")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
