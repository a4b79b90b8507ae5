# Written by airshipctl (internal/localironic) on every start; edits are lost.
#
# Runs one of Ironic's commands (argv[1], a Python console script such as
# /usr/bin/ironic) with its arguments, after making Ironic's database
# calls retry when SQLite answers "database is locked".
#
# Why: with SQLite in WAL mode a transaction that read and then writes
# fails at once with "database is locked" when another connection wrote
# in between; that happens under load with one process (its green
# threads interleave) and every few seconds with several conductors.
# Ironic 21.4 does not retry it: oslo.db does not count it as a deadlock,
# and its retry_on_deadlock marks take effect only for methods called
# through oslo.db's DBAPI proxy, not the internal ones (such as
# _do_update_node, behind every node save). A failed write fails the
# node's operation (a node left in "verifying", "clean failed").
#
# So: "database is locked" becomes oslo.db's DBDeadlock, and every method
# of Ironic's database Connection retries the whole call on DBDeadlock,
# with a growing, jittered pause (the call's transaction was rolled back,
# so running it again is safe). Nested calls retry only at the outermost.
import functools
import random
import types
import runpy
import sys
import time

import ironic.cmd  # noqa: F401  Ironic's eventlet monkey patching, first

import threading

import sqlalchemy.exc
from oslo_db import exception
from oslo_db.sqlalchemy import exc_filters

from oslo_db import api as oslo_db_api

ATTEMPTS = 12
FIRST_PAUSE = 0.05
LONGEST_PAUSE = 2.0


@exc_filters.filters("sqlite", sqlalchemy.exc.OperationalError, r".*database is locked")
def _locked_is_deadlock(error, match, engine_name, is_disconnect):
    raise exception.DBDeadlock(error)


_depth = threading.local()  # green-thread local after the monkey patching


def _retrying(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        if getattr(_depth, "n", 0):
            return fn(*args, **kwargs)
        _depth.n = 1
        try:
            pause = FIRST_PAUSE
            for attempt in range(1, ATTEMPTS + 1):
                try:
                    return fn(*args, **kwargs)
                except exception.DBDeadlock:
                    if attempt == ATTEMPTS:
                        raise
                    time.sleep(pause * (0.5 + random.random()))
                    pause = min(pause * 2, LONGEST_PAUSE)
        finally:
            _depth.n = 0

    # oslo.db's DBAPI proxy would wrap it again.
    call.__dict__.pop("enable_retry_on_deadlock", None)
    return call


def _patch(cls):
    if getattr(cls, "_airship_retrying", False):
        return
    for name, fn in list(vars(cls).items()):
        if isinstance(fn, types.FunctionType) and not name.startswith("__"):
            setattr(cls, name, _retrying(fn))
    cls._airship_retrying = True


# Ironic's database Connection is loaded by oslo.db's DBAPI at its first
# use (after the configuration is read): patch its class then.
_load_backend = oslo_db_api.DBAPI._load_backend


def _load_and_patch(self):
    _load_backend(self)
    _patch(type(self._backend))


oslo_db_api.DBAPI._load_backend = _load_and_patch


if __name__ == "__main__":
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(script, run_name="__main__")
