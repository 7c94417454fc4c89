// Follow a tablestore table's change feed over plain HTTP, as server-sent
// events: Node 18 or later, no packages. The environment is that of
// follow_feed.py (TABLES_ENDPOINT, TABLES_ACCOUNT, TABLES_KEY, TABLE,
// FEED_FROM, FEED_LAST_EVENT_ID, FEED_COUNT), and so is the output.
import { createHmac } from "node:crypto";

// signedHeaders signs a request with SharedKeyLite, as Azure's Table
// service expects.
function signedHeaders(url, account, key, headers) {
  const date = new Date().toUTCString();
  const path = new URL(url).pathname;
  const sig = createHmac("sha256", Buffer.from(key, "base64")).update(`${date}\n/${account}${path}`).digest("base64");
  return { ...headers, "x-ms-date": date, "x-ms-version": "2019-02-02", Authorization: `SharedKeyLite ${account}:${sig}` };
}

// follow yields {event, id, data} for each event of the stream: "change"
// events carry a change; "heartbeat" ones only the position reached, where
// a reconnection resumes (pass the last id as lastEventId).
export async function* follow({ endpoint, account, key, table, from = "now", lastEventId }) {
  const url = `${endpoint}/$tablestore/tables/${encodeURIComponent(table)}/changes?from=${encodeURIComponent(from)}`;
  const headers = { Accept: "text/event-stream" };
  if (lastEventId) headers["Last-Event-ID"] = lastEventId;
  const resp = await fetch(url, { headers: signedHeaders(url, account, key, headers) });
  if (!resp.ok) {
    const body = await resp.json();
    throw Object.assign(new Error(body["odata.error"].message.value), { status: resp.status, code: body["odata.error"].code });
  }
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of resp.body) {
    buf += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const ev = { event: "heartbeat", id: null, data: "" };
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue; // a comment: the heartbeat's text
        const i = line.indexOf(":");
        const field = line.slice(0, i);
        const value = line.slice(i + 1).replace(/^ /, "");
        if (field === "id") ev.id = value;
        else if (field === "event") ev.event = value;
        else if (field === "data") ev.data += value;
      }
      yield { event: ev.event, id: ev.id, data: ev.data ? JSON.parse(ev.data) : null };
    }
  }
}

async function main() {
  const env = process.env;
  const count = Number(env.FEED_COUNT || 0);
  let seen = 0;
  try {
    for await (const { event, id, data } of follow({
      endpoint: env.TABLES_ENDPOINT, account: env.TABLES_ACCOUNT, key: env.TABLES_KEY,
      table: env.TABLE, from: env.FEED_FROM || "now", lastEventId: env.FEED_LAST_EVENT_ID,
    })) {
      if (event === "heartbeat") {
        if (seen === 0) console.log("ready", id);
        continue;
      }
      if (event === "error") {
        console.log("error", data["odata.error"].code);
        return 1;
      }
      console.log(id, data.op, data.partitionKey, data.rowKey);
      if (++seen === count) return 0;
    }
  } catch (e) {
    if (!e.code) throw e;
    console.log("error", e.status, e.code);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
