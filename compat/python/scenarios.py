"""azure-data-tables (Python) scenarios against tablestore serve.

Run by compat's TestPython* Go tests, which start the server and set:
  TABLES_CONNECTION_STRING  the endpoint (https)
  TABLES_CA_FILE            the CA to trust, given as connection_verify
  TABLES_SCENARIOS          comma-separated scenario names to run
  TABLES_TOKEN_*            bearer tokens for the token scenarios
  TABLES_TESTKIT_URL        the test controls (http://HOST:PORT/testkit)
Prints one line per scenario and a closing "N passed, N failed".
"""
import datetime
import json
import os
import sys
import time
import traceback
import urllib.error
import urllib.request

from azure.core.credentials import AccessToken, AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import HttpResponseError
from azure.data.tables import (TableServiceClient, TableClient, TableSasPermissions, UpdateMode,
                               generate_table_sas)

CS = os.environ["TABLES_CONNECTION_STRING"]
CA = os.environ.get("TABLES_CA_FILE") or True
KW = {"connection_verify": CA, "retry_total": 0}


def fields(cs):
    out = {}
    for part in cs.split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


def tls_basics():
    svc = TableServiceClient.from_connection_string(CS, **KW)
    name = "pytls%d" % (time.time_ns() % 10**9)
    svc.create_table(name)
    try:
        tc = svc.get_table_client(name)
        tc.create_entity({"PartitionKey": "p", "RowKey": "1", "n": 1})
        tc.submit_transaction([
            ("create", {"PartitionKey": "p", "RowKey": "2", "n": 2}),
            ("update", {"PartitionKey": "p", "RowKey": "1", "n": 3}, {"mode": UpdateMode.MERGE}),
        ])
        got = tc.get_entity("p", "1")
        assert got["n"] == 3, got
        pages = [len(list(page)) for page in tc.list_entities(results_per_page=1).by_page()]
        assert [n for n in pages if n] == [1, 1], pages
        assert svc.get_service_properties() is not None
    finally:
        svc.delete_table(name)


def key(e, name):
    """An entity's key: azure-data-tables 12.4 leaves an empty key out of
    the entities it reads (it keeps only truthy keys), so absent is ""."""
    return e.get(name, "")


def empty_keys():
    """Azure allows "" as PartitionKey and RowKey: every call takes them."""
    svc = TableServiceClient.from_connection_string(CS, **KW)
    name = "pyempty%d" % (time.time_ns() % 10**9)
    svc.create_table(name)
    try:
        tc = svc.get_table_client(name)
        tc.upsert_entity({"PartitionKey": "p", "RowKey": "", "n": 1})
        tc.create_entity({"PartitionKey": "", "RowKey": "", "n": 2})
        tc.create_entity({"PartitionKey": "", "RowKey": "r", "n": 3})
        assert tc.get_entity("p", "")["n"] == 1
        got = tc.get_entity("", "")
        assert got["n"] == 2 and key(got, "PartitionKey") == "" and key(got, "RowKey") == "", got
        tc.update_entity({"PartitionKey": "", "RowKey": "", "m": 1}, mode=UpdateMode.MERGE)
        assert tc.get_entity("", "")["m"] == 1
        tc.submit_transaction([
            ("upsert", {"PartitionKey": "", "RowKey": "b", "n": 4}),
            ("update", {"PartitionKey": "", "RowKey": "r", "n": 5}, {"mode": UpdateMode.REPLACE}),
            ("delete", {"PartitionKey": "", "RowKey": ""}),
        ])
        rows = [(key(e, "PartitionKey"), key(e, "RowKey"), e["n"]) for e in tc.query_entities("PartitionKey eq ''")]
        assert rows == [("", "b", 4), ("", "r", 5)], rows
        pages = [[(key(e, "PartitionKey"), key(e, "RowKey")) for e in page]
                 for page in tc.list_entities(results_per_page=1).by_page()]
        assert [p for p in pages if p] == [[("", "b")], [("", "r")], [("p", "")]], pages
        tc.delete_entity("p", "")
        try:
            tc.get_entity("p", "")
            raise AssertionError("deleted entity still there")
        except HttpResponseError as e:
            assert e.status_code == 404, e
        try:
            tc.create_entity({"RowKey": "x"})
            raise AssertionError("an entity without PartitionKey was accepted")
        except HttpResponseError as e:
            assert e.status_code == 400, e
        except ValueError:
            pass  # refused by the SDK itself
    finally:
        svc.delete_table(name)


def health_check():
    """The Azure client libraries' health check queries with the filter
    false: 200 and nothing, for tables and entities; true is no condition."""
    svc = TableServiceClient.from_connection_string(CS, **KW)
    name = "pyhealth%d" % (time.time_ns() % 10**9)
    svc.create_table(name)
    try:
        assert list(svc.query_tables("false")) == []
        assert [t.name for t in svc.query_tables("not false and TableName eq '%s'" % name)] == [name]
        tc = svc.get_table_client(name)
        tc.create_entity({"PartitionKey": "p", "RowKey": "1", "n": 1})
        tc.create_entity({"PartitionKey": "p", "RowKey": "2", "n": 2})
        assert list(tc.query_entities("false")) == []
        assert len(list(tc.query_entities("true"))) == 2
        got = [e["RowKey"] for e in tc.query_entities("(true and n gt 1) or false")]
        assert got == ["2"], got
    finally:
        svc.delete_table(name)


class StaticToken:
    """A credential whose get_token returns a token made by the Go test."""

    def __init__(self, token):
        self.token = token
        self.scopes = []

    def get_token(self, *scopes, **kwargs):
        self.scopes.extend(scopes)
        return AccessToken(self.token, int(time.time()) + 3600)


def token_client(var):
    f = fields(CS)
    cred = StaticToken(os.environ[var])
    return TableServiceClient(endpoint=f["TableEndpoint"], credential=cred, **KW), cred


def status_code(call):
    try:
        call()
    except HttpResponseError as e:
        return e.status_code, e.response.headers.get("x-ms-error-code")
    return 200, None


def bearer_tokens():
    svc, cred = token_client("TABLES_TOKEN_CONTRIBUTOR")
    name = "pybearer%d" % (time.time_ns() % 10**9)
    svc.create_table(name)
    assert "https://storage.azure.com/.default" in cred.scopes, cred.scopes
    try:
        tc = svc.get_table_client(name)
        tc.create_entity({"PartitionKey": "p", "RowKey": "1"})
        reader, _ = token_client("TABLES_TOKEN_READER")
        rtc = reader.get_table_client(name)
        assert rtc.get_entity("p", "1")["RowKey"] == "1"
        code = status_code(lambda: rtc.create_entity({"PartitionKey": "p", "RowKey": "2"}))
        assert code == (403, "AuthorizationPermissionMismatch"), code
        for var in ("TABLES_TOKEN_EXPIRED", "TABLES_TOKEN_WRONG_AUDIENCE", "TABLES_TOKEN_WRONG_SIGNATURE"):
            bad, _ = token_client(var)
            code = status_code(lambda: bad.get_table_client(name).get_entity("p", "1"))
            assert code[0] == 401, (var, code)
    finally:
        svc.delete_table(name)


def control(method, path, body=None):
    """Calls the test controls; returns (status, decoded JSON or None)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(os.environ["TABLES_TESTKIT_URL"] + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def testkit():
    svc = TableServiceClient.from_connection_string(CS, **KW)
    tc = svc.create_table("pykit")
    tc.create_entity({"PartitionKey": "p", "RowKey": "1", "n": 1})

    # Snapshot, change, restore.
    assert control("PUT", "/snapshots/one")[0] == 201
    tc.delete_entity("p", "1")
    tc.create_entity({"PartitionKey": "p", "RowKey": "2", "n": 2})
    assert control("POST", "/snapshots/one/restore")[0] == 200
    rows = sorted(e["RowKey"] for e in tc.list_entities())
    assert rows == ["1"], rows
    st, body = control("POST", "/snapshots/nosuch/restore")
    assert st == 404 and "nosuch" in body["odata.error"]["message"]["value"], (st, body)

    # ServerBusy twice, retried by the SDK after the 20 ms asked for.
    control("DELETE", "/requests")
    st, body = control("POST", "/faults", {"operation": "QueryEntity", "code": "ServerBusy",
                                          "times": 2, "retry_after": "20ms"})
    assert st == 201 and body["id"] > 0, (st, body)
    retrying = TableClient.from_connection_string(CS, "pykit", connection_verify=CA, retry_total=3)
    started = time.monotonic()
    assert retrying.get_entity("p", "1")["n"] == 1
    assert time.monotonic() - started < 3, "the SDK waited longer than the fault's retry-after"
    ops = [(r["operation"], r["status"]) for r in control("GET", "/requests")[1]["requests"]]
    assert ops == [("QueryEntity", 503), ("QueryEntity", 503), ("QueryEntity", 200)], ops
    st, body = control("POST", "/faults", {"operation": "QueryEntity", "code": "Busy"})
    assert st == 400 and "Fault.Code" in body["odata.error"]["message"]["value"], (st, body)
    assert control("DELETE", "/faults")[0] == 204

    # Time: a SAS valid for an hour of the server's clock stops working
    # once the clock moves two hours on, and Timestamps follow the clock.
    f = fields(CS)
    now = datetime.datetime.fromisoformat(control("GET", "/clock")[1]["now"].replace("Z", "+00:00"))
    sas = generate_table_sas(AzureNamedKeyCredential(f["AccountName"], f["AccountKey"]), "pykit",
                             permission=TableSasPermissions(read=True), expiry=now + datetime.timedelta(hours=1))
    sas_client = TableClient(endpoint=f["TableEndpoint"], table_name="pykit", credential=AzureSasCredential(sas), **KW)
    assert sas_client.get_entity("p", "1")["n"] == 1
    st, body = control("POST", "/clock", {"advance": "2h"})
    assert st == 200, (st, body)
    code = status_code(lambda: sas_client.get_entity("p", "1"))
    assert code[0] == 403, code
    tc.upsert_entity({"PartitionKey": "p", "RowKey": "3"})
    stamp = tc.get_entity("p", "3").metadata["timestamp"]
    assert stamp - now > datetime.timedelta(minutes=110), (stamp, now)
    st, body = control("POST", "/clock", {"advance": "two hours"})
    assert st == 400 and "advance" in body["odata.error"]["message"]["value"], (st, body)

    # Reset: nothing left.
    assert control("POST", "/reset")[0] == 200
    assert [t.name for t in svc.list_tables()] == []


def cosmos():
    """Against serve --cosmos: the SDK's Cosmos DB path, and the
    differences code written for Storage meets there."""
    svc = TableServiceClient.from_connection_string(CS, **KW)
    name = "pycosmos%d" % (time.time_ns() % 10**9)
    tc = svc.create_table(name)
    try:
        assert tc._cosmos_endpoint, "the SDK does not take the endpoint for Cosmos DB"
        for rk in ["2", "10", "1"]:
            tc.create_entity({"PartitionKey": "p", "RowKey": rk, "n": 1})
        tc.update_entity({"PartitionKey": "p", "RowKey": "1", "m": 2}, mode=UpdateMode.MERGE)
        got = [e["RowKey"] for e in tc.list_entities()]
        assert got == ["2", "10", "1"], got
        props = list(tc.get_entity("p", "1").keys())
        assert props == ["PartitionKey", "RowKey", "n", "m"], props
        pages = [len(list(page)) for page in tc.list_entities(results_per_page=3).by_page()]
        assert pages == [3, 0], pages
        code = status_code(lambda: tc.create_entity({"PartitionKey": "p", "RowKey": "r" * 300}))
        assert code[0] == 400, code
        code = status_code(lambda: svc.get_table_client(name.upper()).get_entity("p", "1"))
        assert code[0] == 404, code
        tc.submit_transaction([("upsert", {"PartitionKey": "p", "RowKey": "9"}), ("delete", {"PartitionKey": "p", "RowKey": "2"})])
        got = [e["RowKey"] for e in tc.list_entities()]
        assert got == ["10", "1", "9"], got
    finally:
        svc.delete_table(name)


SCENARIOS = {"cosmos": cosmos, "tls_basics": tls_basics, "bearer_tokens": bearer_tokens, "empty_keys": empty_keys, "testkit": testkit,
             "health_check": health_check}


def main():
    names = [n for n in os.environ.get("TABLES_SCENARIOS", "tls_basics").split(",") if n]
    passed = failed = 0
    for n in names:
        try:
            SCENARIOS[n]()
            print("ok  ", n)
            passed += 1
        except Exception:
            print("FAIL", n)
            traceback.print_exc()
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
