"""The catalog stamp and the triggers that bump it (SQLite: per row; PostgreSQL: per
statement). See pricing.models.CatalogStamp."""

import uuid

from django.db import migrations, models

TABLES = ("pricing_accelerator", "pricing_provider", "pricing_region", "pricing_instancetype",
          "pricing_price")
BUMP = "UPDATE pricing_catalogstamp SET version = version + 1 WHERE id = 1"


def _sqlite(table: str, event: str) -> str:
    return (f"CREATE TRIGGER {table}_stamp_{event.lower()} AFTER {event} ON {table} "
            f"BEGIN {BUMP}; END")


POSTGRES_FUNCTION = (
    "CREATE OR REPLACE FUNCTION pricing_bump_catalog_stamp() RETURNS trigger AS $$ "
    f"BEGIN {BUMP}; RETURN NULL; END $$ LANGUAGE plpgsql")


def create(apps, schema_editor):
    apps.get_model("pricing", "CatalogStamp").objects.create(id=1, token=uuid.uuid4().hex)
    vendor = schema_editor.connection.vendor
    statements = []
    if vendor == "sqlite":
        statements = [_sqlite(t, e) for t in TABLES for e in ("INSERT", "UPDATE", "DELETE")]
    elif vendor == "postgresql":
        statements = [POSTGRES_FUNCTION] + [
            f"CREATE TRIGGER {t}_stamp AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {t} "
            "FOR EACH STATEMENT EXECUTE FUNCTION pricing_bump_catalog_stamp()" for t in TABLES]
    # Other databases: no triggers, and catalog_version() falls back to its aggregates.
    for statement in statements:
        schema_editor.execute(statement)


def drop(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        for t in TABLES:
            for e in ("insert", "update", "delete"):
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {t}_stamp_{e}")
    elif vendor == "postgresql":
        for t in TABLES:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {t}_stamp ON {t}")
        schema_editor.execute("DROP FUNCTION IF EXISTS pricing_bump_catalog_stamp()")


class Migration(migrations.Migration):

    dependencies = [
        ("pricing", "0004_grid_intensity_and_pue"),
    ]

    operations = [
        migrations.CreateModel(
            name="CatalogStamp",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                                           verbose_name="ID")),
                ("token", models.CharField(help_text="Random per database: keys never collide "
                                                     "across a recreated database",
                                           max_length=32)),
                ("version", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(create, drop),
    ]
