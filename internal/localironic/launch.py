# Written by airshipctl (internal/localironic) on every start; edits are lost.
#
# Runs one of Ironic's commands (argv[1], a Python console script such as
# /usr/bin/ironic) with its arguments, after teaching oslo.db that
# SQLite's "database is locked" is a deadlock. Ironic retries a deadlocked
# write (oslo_db's retry_on_deadlock) but 21.4 does not count a locked
# SQLite database as one, so a write that met another connection's
# transaction failed the node's operation: with several processes on one
# database, or two green threads of one, that happened every few minutes
# under load.
import runpy
import sys

import sqlalchemy.exc
from oslo_db import exception
from oslo_db.sqlalchemy import exc_filters


@exc_filters.filters("sqlite", sqlalchemy.exc.OperationalError, r".*database is locked")
def _locked_is_deadlock(error, match, engine_name, is_disconnect):
    raise exception.DBDeadlock(error)


if __name__ == "__main__":
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(script, run_name="__main__")
