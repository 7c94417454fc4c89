// Every EDM type through the SDK's own conversions, read back typed and
// raw, and filtered on.
"use strict";

const assert = require("node:assert/strict");
const { odata } = require("@azure/data-tables");
const h = require("./helpers.js");

const guid = "f0e1d2c3-b4a5-4968-8776-655443322110";
const when = new Date("2024-02-29T13:14:15.678Z");
const bytes = new Uint8Array([0, 1, 2, 250, 255, 128, 64]);
const big = 2n ** 62n + 12345n;

function sample(rowKey) {
  return {
    partitionKey: "edm",
    rowKey,
    str: "text with 'quotes' and ünïcødé",
    empty: "",
    yes: true,
    no: false,
    i32: 2147483647,
    neg: -42,
    dbl: 3.25,
    dblTyped: { value: "10", type: "Double" },
    dblNaN: { value: "NaN", type: "Double" },
    dblInf: { value: "Infinity", type: "Double" },
    i64: big,
    i64neg: -(2n ** 63n),
    when,
    bin: bytes,
    id: { value: guid, type: "Guid" },
    precise: { value: "2024-01-02T03:04:05.1234567Z", type: "DateTime" },
  };
}

h.scenario("edm: every type round-trips with type conversion", async (t) => {
  const c = await h.freshTable(t, "jsedm");
  await c.createEntity(sample("a"));
  const e = await c.getEntity("edm", "a");
  assert.equal(e.str, "text with 'quotes' and ünïcødé");
  assert.equal(e.empty, "");
  assert.equal(e.yes, true);
  assert.equal(e.no, false);
  assert.equal(e.i32, 2147483647);
  assert.equal(e.neg, -42);
  assert.equal(e.dbl, 3.25);
  assert.equal(e.dblTyped, 10);
  // The SDK hands annotated Double values back as they came: "NaN".
  assert.ok(Number.isNaN(Number(e.dblNaN)), `NaN came back as ${e.dblNaN}`);
  assert.equal(Number(e.dblInf), Infinity);
  assert.equal(typeof e.i64, "bigint");
  assert.equal(e.i64, big);
  assert.equal(e.i64neg, -(2n ** 63n));
  assert.ok(e.when instanceof Date);
  assert.equal(e.when.toISOString(), when.toISOString());
  assert.ok(e.bin instanceof Uint8Array);
  assert.deepEqual(Array.from(e.bin), Array.from(bytes));
  assert.deepEqual(e.id, { value: guid, type: "Guid" });
  assert.equal(e.precise.toISOString(), "2024-01-02T03:04:05.123Z");
});

h.scenario("edm: raw values with disableTypeConversion", async (t) => {
  const c = await h.freshTable(t, "jsraw");
  await c.createEntity(sample("a"));
  const e = await c.getEntity("edm", "a", { disableTypeConversion: true });
  assert.deepEqual(e.i64, { value: big.toString(), type: "Int64" });
  assert.deepEqual(e.i32, { value: "2147483647", type: "Int32" });
  // A whole Double (10.0 on the wire) parses as a JS number the SDK
  // cannot tell from an Int32; a fractional one shows as Double.
  assert.equal(Number(e.dblTyped.value), 10);
  assert.deepEqual(e.dbl, { value: "3.25", type: "Double" });
  assert.equal(e.dblNaN.type, "Double");
  assert.equal(e.dblNaN.value, "NaN");
  assert.deepEqual(e.id, { value: guid, type: "Guid" });
  assert.equal(e.bin.type, "Binary");
  assert.equal(e.bin.value, Buffer.from(bytes).toString("base64"));
  assert.equal(e.when.type, "DateTime");
  assert.equal(new Date(e.when.value).toISOString(), when.toISOString());
  // Azure keeps DateTime at 100 ns precision.
  assert.equal(e.precise.type, "DateTime");
  assert.match(e.precise.value, /^2024-01-02T03:04:05\.1234567Z$/);
});

h.scenario("edm: filters on each type", async (t) => {
  const c = await h.freshTable(t, "jsedmf");
  await c.createEntity(sample("a"));
  const other = sample("b");
  Object.assign(other, {
    str: "other",
    yes: false,
    i32: 1,
    dbl: -1.5,
    i64: 5n,
    when: new Date("2001-01-01T00:00:00Z"),
    bin: new Uint8Array([9]),
    id: { value: "00000000-0000-0000-0000-000000000001", type: "Guid" },
  });
  await c.createEntity(other);

  const keysFor = async (filter) =>
    (await h.collect(c.listEntities({ queryOptions: { filter } }))).map((e) => e.rowKey);

  assert.deepEqual(await keysFor(odata`str eq ${"text with 'quotes' and ünïcødé"}`), ["a"]);
  assert.deepEqual(await keysFor(odata`yes eq ${true}`), ["a"]);
  assert.deepEqual(await keysFor(odata`i32 gt ${100}`), ["a"]);
  assert.deepEqual(await keysFor(odata`dbl lt ${0}`), ["b"]);
  assert.deepEqual(await keysFor(`i64 gt ${2n ** 61n}L`), ["a"]);
  assert.deepEqual(await keysFor(`i64 eq 5L`), ["b"]);
  assert.deepEqual(await keysFor(odata`when ge ${new Date("2020-01-01T00:00:00Z")}`), ["a"]);
  assert.deepEqual(await keysFor(`bin eq X'09'`), ["b"]);
  assert.deepEqual(await keysFor(`bin eq binary'0001'`), []);
  assert.deepEqual(await keysFor(odata`id eq guid'${guid}'`), ["a"]);
  assert.deepEqual(await keysFor(odata`not (yes eq ${true}) and RowKey ne ${"a"}`), ["b"]);
});
