"""``import_claims`` under its name in an earlier release, kept for one more."""

from annotator.management.commands import import_claims


class Command(import_claims.Command):
    help = "Deprecated name of import_claims: " + import_claims.Command.help
