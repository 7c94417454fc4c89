import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableServiceClient

from tablestore_testkit import Tablestore


def row_keys_as_queried(ts):
    svc = TableServiceClient.from_connection_string(ts.connection_string)
    table = svc.create_table("orders")
    for n in range(1, 11):
        table.create_entity({"PartitionKey": "alice", "RowKey": str(n)})
    return svc, [e["RowKey"] for e in table.query_entities("PartitionKey eq 'alice'")]


def test_cosmos_answers_in_insertion_order(tablestore, tablestore_cosmos):
    storage, storage_keys = row_keys_as_queried(tablestore)
    cosmos, cosmos_keys = row_keys_as_queried(tablestore_cosmos)
    # The SDK takes one server for Storage and the other for Cosmos DB.
    assert not storage._cosmos_endpoint and cosmos._cosmos_endpoint
    assert storage_keys == sorted(storage_keys) == ["1", "10"] + [str(n) for n in range(2, 10)]
    assert cosmos_keys == [str(n) for n in range(1, 11)]


def test_cosmos_refuses_a_300_byte_row_key(tablestore_cosmos):
    svc = TableServiceClient.from_connection_string(tablestore_cosmos.connection_string)
    table = svc.create_table("orders")
    with pytest.raises(HttpResponseError) as err:
        table.create_entity({"PartitionKey": "alice", "RowKey": "r" * 300})
    assert err.value.status_code == 400
    assert tablestore_cosmos.requests()[-1]["code"] == "KeyValueTooLarge"


def test_cosmos_throttles_beyond_its_request_units():
    # 10 RU a second, and no retries: an insert of about 1 KB costs 5 or 10 RU (docs/cosmos.md).
    with Tablestore.start(cosmos=True, args=["--cosmos-ru-per-second", "10"]) as ts:
        svc = TableServiceClient.from_connection_string(ts.connection_string, retry_total=0)
        table = svc.create_table("orders")
        with pytest.raises(HttpResponseError) as err:
            for n in range(10):
                table.create_entity({"PartitionKey": "alice", "RowKey": str(n), "Note": "x" * 1000})
        assert err.value.status_code == 429
        assert int(err.value.response.headers["x-ms-retry-after-ms"]) > 0
        log = ts.requests()
        assert log[-1]["status"] == 429 and "request_charge" not in log[-1]  # throttled: free
        assert all(r["request_charge"] > 0 for r in log[:-1])
