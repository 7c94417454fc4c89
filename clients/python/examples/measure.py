"""Measures the helper's figures (docs/testing-packages.md): start to the
first signed 200, a clean slate, and a test meeting two ServerBusy
answers with fast retries. Prints medians and ranges; asserts nothing.

    python measure.py [ROUNDS]
"""
import statistics
import sys
import time

from azure.data.tables import TableServiceClient

from tablestore_testkit import Tablestore
from test_quickstart import FAST_RETRIES


def show(what, samples):
    samples = sorted(samples)
    print("%-48s median %8.3f ms  (%.3f-%.3f, n=%d)" % (
        what, statistics.median(samples) * 1e3, samples[0] * 1e3, samples[-1] * 1e3, len(samples)))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    starts = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        with Tablestore.start() as ts:
            svc = TableServiceClient.from_connection_string(ts.connection_string)
            list(svc.list_tables())  # a signed GET /Tables answered 200
            starts.append(time.perf_counter() - t0)
    show("Tablestore.start() to the first signed 200", starts)

    with Tablestore.start() as ts:
        svc = TableServiceClient.from_connection_string(ts.connection_string, **FAST_RETRIES)
        resets = []
        for _ in range(1000):
            t0 = time.perf_counter()
            ts.reset()
            resets.append(time.perf_counter() - t0)
        show("reset() (a clean slate), 1000 in a row", resets)

        busy, dirty = [], []
        for i in range(20 * rounds):
            t0 = time.perf_counter()
            ts.reset()  # after the last round's table, insert and fault
            dirty.append(time.perf_counter() - t0)
            table = svc.create_table("orders")
            t0 = time.perf_counter()
            with ts.fault("InsertEntity", code="ServerBusy", times=2):
                table.create_entity({"PartitionKey": "p", "RowKey": str(i)})
            busy.append(time.perf_counter() - t0)
            statuses = [r["status"] for r in ts.requests()]
            if statuses[-3:-1] != [503, 503]:
                sys.exit("measure: the insert did not meet two 503s: %s" % statuses)
        show("reset() after a test's writes", dirty[1:])
        show("an insert through two ServerBusy (fault to 201)", busy)


if __name__ == "__main__":
    main()
