"""pytest fixtures for tablestore, registered by the package's pytest11
entry point:

- ``tablestore_server`` (session): one ``tablestore serve --testkit`` on
  free loopback ports for the whole run, seeded from ``tablestore_seed``
  (an ini option or ``--tablestore-seed``, a directory of JSON lines
  files). With $TABLESTORE_URL and $TABLESTORE_CONTROL_URL set, a server
  started elsewhere (a container) is used instead.
- ``tablestore`` (each test): that server after a clean slate (state back
  to the seed, faults removed, clock real, request log empty), with
  ``connection_string`` and the controls.
- ``tablestore_cosmos_server`` (session) and ``tablestore_cosmos`` (each
  test): the same for a server started with --cosmos (Cosmos DB for
  Table, docs/cosmos.md), whose ``connection_string`` puts
  azure-data-tables in its Cosmos mode. Always started here, seeded as
  ``tablestore_server`` is; more serve flags from the ini option
  ``tablestore_cosmos_args``.
"""
import os

import pytest

from . import Tablestore


def pytest_addoption(parser):
    parser.addini("tablestore_seed", "directory of JSON lines files tablestore starts with "
                  "(relative to the rootdir)", default="")
    parser.addini("tablestore_cosmos_args", "more serve flags for tablestore_cosmos's server "
                  "(such as --cosmos-order seeded)", type="args", default=[])
    parser.addoption("--tablestore-seed", default=None,
                     help="directory of JSON lines files tablestore starts with")
    parser.addoption("--tablestore-bin", default=None,
                     help="the tablestore binary (default: the wheel's, $TABLESTORE_BIN, the PATH's)")


@pytest.fixture(scope="session")
def tablestore_server(request):
    """The session's tablestore server (started on first use)."""
    if os.environ.get("TABLESTORE_URL") and os.environ.get("TABLESTORE_CONTROL_URL"):
        ts = Tablestore.connect()
        yield ts
        ts.stop()
        return
    config = request.config
    ts = Tablestore.start(binary=config.getoption("--tablestore-bin"), seed=_seed(config))
    yield ts
    ts.stop()


@pytest.fixture(scope="session")
def tablestore_cosmos_server(request):
    """The session's tablestore server with --cosmos (started on first use)."""
    config = request.config
    ts = Tablestore.start(binary=config.getoption("--tablestore-bin"), seed=_seed(config),
                          cosmos=True, args=config.getini("tablestore_cosmos_args"))
    yield ts
    ts.stop()


@pytest.fixture
def tablestore(tablestore_server):
    """The session's server after a clean slate for this test."""
    tablestore_server.reset()
    return tablestore_server


@pytest.fixture
def tablestore_cosmos(tablestore_cosmos_server):
    """The session's Cosmos server after a clean slate for this test."""
    tablestore_cosmos_server.reset()
    return tablestore_cosmos_server


def _seed(config):
    seed = config.getoption("--tablestore-seed")
    if not seed and config.getini("tablestore_seed"):
        seed = os.path.join(str(config.rootpath), config.getini("tablestore_seed"))
    return seed
