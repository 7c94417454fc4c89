from azure.data.tables import TableServiceClient

# Retries for tests: the first retry is immediate, the next ones wait
# retry_backoff_factor * 2**(n-1) seconds (azure-core's default factor is 0.8).
FAST_RETRIES = {"retry_total": 3, "retry_backoff_factor": 0.001}


def test_insert_retried_through_server_busy(tablestore):
    svc = TableServiceClient.from_connection_string(tablestore.connection_string, **FAST_RETRIES)
    table = svc.create_table("orders")
    with tablestore.fault("InsertEntity", code="ServerBusy", times=2):
        table.create_entity({"PartitionKey": "alice", "RowKey": "1", "Total": 30})
    assert [r["status"] for r in tablestore.requests()] == [201, 503, 503, 201]


def test_each_test_starts_from_the_seed(tablestore):
    svc = TableServiceClient.from_connection_string(tablestore.connection_string)
    assert [t.name for t in svc.list_tables()] == ["customers"]
