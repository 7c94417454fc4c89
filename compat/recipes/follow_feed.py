"""Follow a tablestore table's change feed over plain HTTP, as server-sent events.

Python's standard library only. Environment: TABLES_ENDPOINT, the service
root (http://127.0.0.1:10002/devstoreaccount1); TABLES_ACCOUNT and
TABLES_KEY, the account and its key; TABLE; FEED_FROM, where to start (a
change's cursor, "beginning", "now" or an RFC 3339 time; default "now");
FEED_LAST_EVENT_ID, a cursor to resume after (an event's id); FEED_COUNT,
how many changes to print before exiting (default: follow for ever).
Prints "ready CURSOR" once the stream is open, then one line per change:
its cursor, operation and keys.
"""
import base64
import datetime
import hashlib
import hmac
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request


def signed_request(url, account, key, headers):
    """A request signed with SharedKeyLite, as Azure's Table service expects."""
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")
    path = urllib.parse.urlsplit(url).path
    mac = hmac.new(base64.b64decode(key), f"{date}\n/{account}{path}".encode(), hashlib.sha256)
    req = urllib.request.Request(url, headers=headers)
    req.add_header("x-ms-date", date)
    req.add_header("x-ms-version", "2019-02-02")
    req.add_header("Authorization", f"SharedKeyLite {account}:{base64.b64encode(mac.digest()).decode()}")
    return req


def follow(endpoint, account, key, table, start="now", last_event_id=None):
    """Yield (event, id, data) for each event of the stream: "change" events
    carry a change as JSON; "heartbeat" ones only the position reached, which
    is where a reconnection resumes (pass the last id as last_event_id)."""
    url = (f"{endpoint}/$tablestore/tables/{urllib.parse.quote(table)}/changes"
           f"?from={urllib.parse.quote(start)}")
    headers = {"Accept": "text/event-stream"}
    if last_event_id:
        headers["Last-Event-ID"] = last_event_id
    with urllib.request.urlopen(signed_request(url, account, key, headers)) as resp:
        event, event_id, data = "heartbeat", None, []
        for raw in resp:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line == "":
                if event_id is not None or data:
                    yield event, event_id, json.loads("".join(data)) if data else None
                event, event_id, data = "heartbeat", None, []
            elif line.startswith(":"):
                continue  # a comment: the heartbeat's text
            else:
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "id":
                    event_id = value
                elif field == "event":
                    event = value
                elif field == "data":
                    data.append(value)


def main():
    env = os.environ
    count = int(env.get("FEED_COUNT", "0"))
    seen = 0
    try:
        for event, event_id, data in follow(env["TABLES_ENDPOINT"], env["TABLES_ACCOUNT"], env["TABLES_KEY"],
                                            env["TABLE"], env.get("FEED_FROM", "now"),
                                            env.get("FEED_LAST_EVENT_ID")):
            if event == "heartbeat":
                if seen == 0:
                    print("ready", event_id, flush=True)
                continue
            if event == "error":
                print("error", data["odata.error"]["code"], flush=True)
                return 1
            print(event_id, data["op"], data["partitionKey"], data["rowKey"], flush=True)
            seen += 1
            if seen == count:
                return 0
    except urllib.error.HTTPError as e:
        body = json.loads(e.read())
        print("error", e.code, body["odata.error"]["code"], flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
