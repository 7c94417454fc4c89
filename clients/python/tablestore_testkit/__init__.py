"""tablestore for Python tests: an Azure Table service in memory with test
controls (clean slate, snapshots, faults, a movable clock, a request log).

    from tablestore_testkit import Tablestore

    with Tablestore.start() as ts:
        client = TableServiceClient.from_connection_string(ts.connection_string)
        ...
        ts.reset()

Under pytest the plugin (tablestore_testkit.pytest_plugin, registered on
install) gives the fixture ``tablestore``: one server for the session, a
clean slate for each test.
"""
import atexit
import http.client
import json
import os
import queue
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
import urllib.parse
from datetime import datetime, timedelta, timezone

__all__ = ["Tablestore", "Fault", "Clock", "TablestoreError", "binary_path",
           "DEV_ACCOUNT", "DEV_KEY", "COSMOS_DEV_ACCOUNT", "COSMOS_DEV_KEY"]

# Azure's development account, which tablestore serves by default.
DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
           "K1SZFPTOtr/KBHBeksoGMGw==")
# The Cosmos DB emulator's account and key, which serve --cosmos serves.
COSMOS_DEV_ACCOUNT = "localhost"
COSMOS_DEV_KEY = ("C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEc"
                  "aGQy67XIw/Jw==")


class TablestoreError(Exception):
    """A control request the server refused: status, Azure's error code
    and message."""

    def __init__(self, status, code, message):
        super().__init__("tablestore: %s %s: %s" % (status, code, message))
        self.status, self.code, self.message = status, code, message


def binary_path():
    """The tablestore binary: $TABLESTORE_BIN, else the one this package's
    wheel installed beside the environment's scripts, else the PATH's."""
    env = os.environ.get("TABLESTORE_BIN")
    if env:
        return env
    exe = "tablestore.exe" if sys.platform == "win32" else "tablestore"
    for scheme in (None, "posix_user" if os.name == "posix" else "nt_user"):
        try:
            scripts = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        candidate = os.path.join(scripts, exe)
        if os.path.isfile(candidate):
            return candidate
    found = shutil.which(exe)
    if found:
        return found
    raise FileNotFoundError("tablestore: no tablestore binary: install a tablestore-testkit "
                            "wheel for this platform or set TABLESTORE_BIN")


def _duration(d):
    """A Go duration string from a timedelta, seconds, or a string such as "20ms"."""
    if d is None or isinstance(d, str):
        return d
    if isinstance(d, timedelta):
        d = d.total_seconds()
    return "%dns" % round(d * 1e9)


class Tablestore:
    """One tablestore server with test controls: started by start(), or
    reached over the network by connect() (a container with --testkit).
    With ``cosmos`` it answers as Cosmos DB for Table (docs/cosmos.md)."""

    def __init__(self, table_url, control_url, *, account=None, key=None,
                 token=None, process=None, log=None, cosmos=False):
        self.url = table_url.rstrip("/")
        self.control_url = control_url.rstrip("/")
        self.cosmos = cosmos
        self.account = account or (COSMOS_DEV_ACCOUNT if cosmos else DEV_ACCOUNT)
        self.key = key or (COSMOS_DEV_KEY if cosmos else DEV_KEY)
        self._token = token
        self._process, self._log = process, log
        parsed = urllib.parse.urlsplit(self.control_url)
        self._control_host, self._control_path = parsed.netloc, parsed.path
        self._conn = None
        self._lock = threading.Lock()
        self.clock = Clock(self)

    @classmethod
    def start(cls, *, binary=None, seed=None, cosmos=False, args=(), timeout=30.0):
        """Starts ``tablestore serve --testkit`` on free loopback ports
        (seeded from the directory ``seed`` when given) and waits until it
        listens. ``cosmos`` adds --cosmos: the server answers as Cosmos DB
        for Table, and connection_string has the Cosmos DB emulator's
        shape. Extra command-line flags (such as
        ``["--cosmos-ru-per-second", "100"]``) go in ``args``."""
        cmd = [binary or binary_path(), "serve", "--testkit",
               "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"]
        if cosmos:
            cmd.append("--cosmos")
        if seed:
            cmd += ["--seed", os.fspath(seed)]
        cmd += list(args)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        lines, log = queue.Queue(), []

        def drain():
            for line in proc.stderr:
                log.append(line.rstrip("\n"))
                del log[:-200]
                lines.put(line)
            lines.put(None)

        threading.Thread(target=drain, name="tablestore-stderr", daemon=True).start()
        addr = admin = None
        deadline = time.monotonic() + timeout
        while addr is None or admin is None:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                proc.kill()
                proc.wait()
                raise RuntimeError("tablestore: serve did not start (%s):\n%s"
                                   % (" ".join(cmd), "\n".join(log)))
            if line.startswith("serve: admin listening on "):
                admin = line.split()[4]
            elif line.startswith("serve: listening on "):
                addr = line.split()[3]
        # Cosmos's account is the host, not a path segment.
        url = ("http://localhost:%s" % addr.rpartition(":")[2] if cosmos
               else "http://%s/%s" % (addr, DEV_ACCOUNT))
        # A token in the environment guards this server's controls too.
        ts = cls(url, "http://%s/testkit" % admin, token=os.environ.get("TABLESTORE_TESTKIT_TOKEN"),
                 process=proc, log=log, cosmos=cosmos)
        atexit.register(ts.stop)  # the server ends with this interpreter
        return ts

    @classmethod
    def connect(cls, table_url=None, control_url=None, *, token=None, cosmos=False):
        """A server started elsewhere (a container): its account URL and its
        controls' URL, by default from $TABLESTORE_URL and
        $TABLESTORE_CONTROL_URL; the controls' token from
        $TABLESTORE_TESTKIT_TOKEN. ``cosmos``: the server runs with
        --cosmos and table_url is its service root (http://localhost:PORT)."""
        table_url = table_url or os.environ["TABLESTORE_URL"]
        control_url = control_url or os.environ["TABLESTORE_CONTROL_URL"]
        return cls(table_url, control_url, cosmos=cosmos,
                   token=token or os.environ.get("TABLESTORE_TESTKIT_TOKEN"))

    @property
    def connection_string(self):
        """A connection string for the development account. The endpoint
        is an IP address, which keeps the SDKs in their Storage mode; for
        a Cosmos server it is the Cosmos DB emulator's (localhost, the
        service root), which puts them in their Cosmos mode."""
        endpoint = self.url + "/" if self.cosmos else self.url
        return ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;"
                % (self.account, self.key, endpoint))

    @property
    def log(self):
        """The server's last lines of standard error (a started server only)."""
        return list(self._log or [])

    def stop(self):
        """Stops a started server (SIGTERM, then SIGKILL after 10 s)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        p, self._process = self._process, None
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    # The controls.

    def reset(self):
        """A clean slate: the state back to the seed (empty without one),
        faults removed, the clock real, the request log empty."""
        self._call("POST", "/reset")

    def snapshot(self, name="default"):
        """Saves the whole state as ``name``; returns the name."""
        self._call("PUT", "/snapshots/" + urllib.parse.quote(name, safe=""))
        return name

    def restore(self, name="default"):
        """Replaces the state with the snapshot ``name``'s."""
        self._call("POST", "/snapshots/%s/restore" % urllib.parse.quote(name, safe=""))

    def fault(self, operation=None, *, code=None, status=None, table=None, partition=None,
              times=None, every=None, probability=None, seed=None, latency=None,
              retry_after=None, drop=None, page=None):
        """Adds a fault rule at once and returns it; as a context manager it
        is removed on exit. Durations are timedeltas, seconds, or strings
        such as "20ms". The fields are the Go kit's Fault's (docs/testing.md)."""
        rule = {"operation": operation, "code": code, "status": status, "table": table,
                "partition": partition, "times": times, "every": every,
                "probability": probability, "seed": seed, "latency": _duration(latency),
                "retry_after": _duration(retry_after), "drop": drop, "page": page}
        rule = {k: v for k, v in rule.items() if v is not None}
        return Fault(self, self._call("POST", "/faults", rule)["id"])

    def clear_faults(self):
        self._call("DELETE", "/faults")

    def requests(self):
        """The requests served since the last reset, oldest first: dicts
        with operation, table, partition_key, row_key, method, status,
        code, dropped, duration (ns), byte counts and, from a Cosmos
        server, request_charge (its request units)."""
        return self._call("GET", "/requests")["requests"]

    def clear_requests(self):
        self._call("DELETE", "/requests")

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        with self._lock:
            for attempt in (1, 2):
                if self._conn is None:
                    self._conn = http.client.HTTPConnection(self._control_host, timeout=30)
                try:
                    self._conn.request(method, self._control_path + path, body=data, headers=headers)
                    resp = self._conn.getresponse()
                    raw = resp.read()
                    break
                except (http.client.RemoteDisconnected, ConnectionError, BrokenPipeError):
                    # A kept-alive connection the server closed: once more on a new one.
                    self._conn.close()
                    self._conn = None
                    if attempt == 2:
                        raise
        if resp.status >= 400:
            code, message = resp.getheader("x-ms-error-code", ""), raw.decode(errors="replace")
            try:
                err = json.loads(raw)["odata.error"]
                code, message = err["code"], err["message"]["value"]
            except (ValueError, KeyError, TypeError):
                pass
            raise TablestoreError(resp.status, code, message)
        return json.loads(raw) if raw else None


class Fault:
    """A fault rule on the server; remove() (or leaving its with block)
    takes it away."""

    def __init__(self, ts, fault_id):
        self._ts, self.id = ts, fault_id

    def remove(self):
        try:
            self._ts._call("DELETE", "/faults/%d" % self.id)
        except TablestoreError as e:
            if e.status != 404:  # a reset removed it already
                raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Clock:
    """The server's clock: entity Timestamps, TTL expiry, SAS windows."""

    def __init__(self, ts):
        self._ts = ts

    def now(self):
        return _parse_time(self._ts._call("GET", "/clock")["now"])

    def advance(self, delta):
        """Moves the clock forward by a timedelta, seconds or "2h"; returns
        the new time."""
        return _parse_time(self._ts._call("POST", "/clock", {"advance": _duration(delta)})["now"])

    def set(self, when):
        """Sets the clock to a datetime (naive means UTC) or an RFC 3339 string."""
        if isinstance(when, datetime):
            if when.tzinfo is None:
                when = when.replace(tzinfo=timezone.utc)
            when = when.isoformat()
        return _parse_time(self._ts._call("POST", "/clock", {"set": when})["now"])


def _parse_time(s):
    # RFC 3339 with up to nanoseconds; datetime keeps microseconds.
    head, _, frac = s.partition(".")
    if frac:
        digits = "".join(c for c in frac if c.isdigit())
        zone = frac[len(digits):]
        s = head + "." + digits[:6].ljust(6, "0") + zone
    return datetime.fromisoformat(s.replace("Z", "+00:00"))
