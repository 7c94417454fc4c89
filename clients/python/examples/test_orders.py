"""Tests of orders.py of the shape a service's suite has: each test gets a
clean slate (the seed's customers, no faults, the real clock, an empty
request log) from the tablestore fixture."""
from datetime import timedelta

import pytest
from azure.core.exceptions import HttpResponseError, ResourceModifiedError
from azure.data.tables import TableServiceClient

from orders import orders_of, place_order, spend_credit

FAST_RETRIES = {"retry_total": 3, "retry_backoff_factor": 0.001}


@pytest.fixture
def svc(tablestore):
    return TableServiceClient.from_connection_string(tablestore.connection_string, **FAST_RETRIES)


@pytest.fixture
def orders(svc):
    return svc.create_table("orders")


def test_orders_are_listed_by_customer(orders):
    place_order(orders, "alice", "1", 30)
    place_order(orders, "alice", "2", 12)
    place_order(orders, "bob", "3", 7)
    assert orders_of(orders, "alice") == ["1", "2"]


def test_a_read_whose_connection_drops_is_retried(tablestore, svc):
    customers = svc.get_table_client("customers")
    with tablestore.fault("QueryEntity", drop="before", times=1):
        assert customers.get_entity("eu", "alice")["Name"] == "Alice"
    assert [r.get("dropped", False) for r in tablestore.requests()] == [True, False]


def test_server_busy_beyond_the_retries_reaches_the_caller(tablestore, orders):
    with tablestore.fault("InsertEntity", code="ServerBusy"):
        with pytest.raises(HttpResponseError) as err:
            place_order(orders, "alice", "1", 30)
    assert err.value.status_code == 503
    assert orders_of(orders, "alice") == []


def test_a_listing_follows_short_pages(tablestore, orders):
    for i in range(5):
        place_order(orders, "alice", str(i), i)
    with tablestore.fault("QueryEntities", page="short"):
        assert orders_of(orders, "alice") == ["0", "1", "2", "3", "4"]
    assert sum(r["operation"] == "QueryEntities" for r in tablestore.requests()) >= 5


def test_seeded_credit_is_spent(svc):
    customers = svc.get_table_client("customers")
    spend_credit(customers, "eu", "alice", 40)
    assert customers.get_entity("eu", "alice")["Credit"] == 60


def test_a_concurrent_change_refuses_the_update(tablestore, svc):
    # Status 412: a competing write changes the entity between the read
    # and the conditional update.
    customers = svc.get_table_client("customers")
    with tablestore.fault("MergeEntity", status=412, times=1):
        with pytest.raises(ResourceModifiedError):
            spend_credit(customers, "eu", "bob", 5)


def test_snapshot_and_restore(tablestore, svc, orders):
    place_order(orders, "alice", "1", 30)
    tablestore.snapshot("one-order")
    place_order(orders, "alice", "2", 12)
    tablestore.restore("one-order")
    assert orders_of(orders, "alice") == ["1"]


def test_the_clock_moves_entity_timestamps(tablestore, orders):
    place_order(orders, "alice", "1", 30)
    before = orders.get_entity("alice", "1").metadata["timestamp"]
    tablestore.clock.advance(timedelta(days=2))
    orders.upsert_entity({"PartitionKey": "alice", "RowKey": "1", "Total": 31})
    after = orders.get_entity("alice", "1").metadata["timestamp"]
    assert after - before >= timedelta(days=2)
