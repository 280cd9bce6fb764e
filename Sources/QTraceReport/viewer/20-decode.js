// Reading the embedded data (format: docs/report-data.md). The header is JSON; the columns
// are one zlib stream, base64-encoded, inflated with the browser's DecompressionStream.

import { $, timings } from "./10-util.js";

const SUPPORTED_VERSION = 4;

export async function loadEmbeddedReport() {
  const wrapper = JSON.parse($("qtrace-header").textContent);
  const header = wrapper.header;
  if (header.format !== "qtrace-report" || header.version > SUPPORTED_VERSION) {
    throw new Error(`unsupported report data version ${header.version}`);
  }
  const compressed = base64ToBytes($("qtrace-data").textContent);
  timings.base64 = performance.now();
  const raw = await inflate(compressed, wrapper.payload.rawBytes);
  timings.inflated = performance.now();
  // The strings first: `str` columns of every other table are indexes into them.
  const stringsTable = header.tables.strings;
  const strings = stringsTable ? decodeText(raw, stringsTable.columns.value, stringsTable.rows) : [];
  const tables = {};
  for (const [name, table] of Object.entries(header.tables)) {
    if (name !== "strings") tables[name] = decodeTable(raw, table, strings);
  }
  return { header, tables, strings, sizes: wrapper.payload };
}

function base64ToBytes(text) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * Inflates into one buffer of the known size. Writing the whole input at once and copying the
 * output chunks as they come is twice as fast as Response.arrayBuffer() on large payloads.
 */
async function inflate(bytes, size) {
  const stream = new DecompressionStream("deflate");
  const writer = stream.writable.getWriter();
  writer.write(bytes).catch(() => {});
  writer.close().catch(() => {});
  const reader = stream.readable.getReader();
  const out = new Uint8Array(size);
  let offset = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (offset + value.length > size) throw new Error("payload is larger than its header says");
    out.set(value, offset);
    offset += value.length;
  }
  if (offset !== size) throw new Error(`payload is ${offset} bytes, expected ${size}`);
  return out;
}

/**
 * A table whose columns decode on first use: start-up decodes only what the first frame
 * needs, and materializeTables() decodes the rest once the page is shown.
 */
function decodeTable(raw, table, strings) {
  const out = { rows: table.rows };
  for (const [name, column] of Object.entries(table.columns)) {
    let value = null;
    Object.defineProperty(out, name, {
      enumerable: true,
      configurable: true,
      get() {
        if (value === null) value = decodeColumn(raw, column, table.rows, strings, out);
        return value;
      },
    });
  }
  return out;
}

/** Decodes every remaining column and drops the closures, so the inflated payload can go. */
export function materializeTables(tables) {
  for (const table of Object.values(tables)) {
    for (const name of Object.keys(table)) {
      if (name === "rows") continue;
      const value = table[name];
      Object.defineProperty(table, name, { value, writable: true, enumerable: true, configurable: true });
    }
  }
}

function newTypedArray(type, rows) {
  if (type === "f64") return new Float64Array(rows);
  if (type === "i32") return new Int32Array(rows);
  return new Uint8Array(rows);
}

/** `table`: the decoded table so far, whose `column.key` column a keyedDelta column reads. */
function decodeColumn(raw, column, rows, strings, table) {
  const { enc, type, offset, length } = column;
  if (type === "str") {
    // Indexes into the strings table: an array of strings (null: none).
    const indexes = decodeColumn(raw, { ...column, type: "i32" }, rows, strings, table);
    const out = new Array(rows);
    for (let i = 0; i < rows; i++) out[i] = indexes[i] >= 0 ? strings[indexes[i]] : null;
    return out;
  }
  if (enc === "f64") {
    return new Float64Array(raw.buffer.slice(raw.byteOffset + offset, raw.byteOffset + offset + length));
  }
  const out = newTypedArray(type, rows);
  if (enc === "planes" || enc === "deltaPlanes") {
    decodePlanes(raw, offset, rows, column.width, out, enc === "deltaPlanes");
    return out;
  }
  if (enc === "keyedDelta") {
    decodeKeyedDelta(raw, offset, rows, table[column.key], out);
    return out;
  }
  if (enc === "u8") {
    out.set(raw.subarray(offset, offset + rows));
    return out;
  }
  decodeVarints(raw, offset, rows, out, enc);
  return out;
}

/**
 * The strings table: each string's UTF-16 length, then all their UTF-8 bytes. One decode of the
 * whole run, then slices: 100k labels cost one TextDecoder call, not 100k.
 */
function decodeText(raw, column, rows) {
  const lengths = new Float64Array(rows);
  const end = decodeVarints(raw, column.offset, rows, lengths, "uvarint");
  // ignoreBOM: a string that starts with U+FEFF keeps it (by default the decoder drops it).
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(raw.subarray(end, column.offset + column.length));
  const out = new Array(rows);
  let at = 0;
  for (let i = 0; i < rows; i++) {
    out[i] = text.slice(at, at + lengths[i]);
    at += lengths[i];
  }
  if (at !== text.length) throw new Error("the strings table does not match its lengths");
  return out;
}

/** Fixed-width unsigned values stored as byte planes (lowest bytes of all rows first). */
function decodePlanes(bytes, offset, rows, width, out, delta) {
  const values = delta || !(out instanceof Float64Array) ? new Float64Array(rows) : out;
  let scale = 1;
  for (let plane = 0; plane < width; plane++) {
    const base = offset + plane * rows;
    if (plane === 0) for (let i = 0; i < rows; i++) values[i] = bytes[base + i];
    else for (let i = 0; i < rows; i++) values[i] += bytes[base + i] * scale;
    scale *= 256;
  }
  if (!delta) {
    if (values !== out) out.set(values);
    return;
  }
  let previous = 0;
  for (let i = 0; i < rows; i++) out[i] = previous += unzigzag(values[i]);
}

/**
 * Zig-zag varint differences from the previous value of the same key: `keys[i]` (-1 or more) is
 * row i's value in the column the header names as the key (each key's first from 0).
 */
function decodeKeyedDelta(bytes, offset, rows, keys, out) {
  const differences = new Float64Array(rows);
  decodeVarints(bytes, offset, rows, differences, "svarint");
  let slots = 1;
  for (let i = 0; i < rows; i++) if (keys[i] + 2 > slots) slots = keys[i] + 2;
  const previous = new Float64Array(slots);
  for (let i = 0; i < rows; i++) {
    const slot = keys[i] + 1;
    out[i] = previous[slot] += differences[i];
  }
}

/**
 * LEB128 varints, with the arithmetic done in doubles (values may exceed 2^31). Returns the
 * offset after the last one.
 */
function decodeVarints(bytes, offset, rows, out, enc) {
  let p = offset;
  // One loop per encoding keeps each one monomorphic and free of branches on `enc`.
  const next = () => {
    let b = bytes[p++];
    if (b < 128) return b;
    let v = b & 127;
    let scale = 128;
    do {
      b = bytes[p++];
      v += (b & 127) * scale;
      scale *= 128;
    } while (b >= 128);
    return v;
  };
  switch (enc) {
    case "uvarint":
      for (let i = 0; i < rows; i++) out[i] = next();
      break;
    case "plus1":
      for (let i = 0; i < rows; i++) out[i] = next() - 1;
      break;
    case "svarint":
      for (let i = 0; i < rows; i++) out[i] = unzigzag(next());
      break;
    case "delta": {
      let previous = 0;
      for (let i = 0; i < rows; i++) out[i] = previous += unzigzag(next());
      break;
    }
    case "relref":
      for (let i = 0; i < rows; i++) {
        const v = next();
        out[i] = v === 0 ? -1 : i - unzigzag(v);
      }
      break;
    case "nullable":
      for (let i = 0; i < rows; i++) {
        const v = next();
        out[i] = v === 0 ? NaN : unzigzag(v - 1);
      }
      break;
    default:
      throw new Error(`unknown column encoding ${enc}`);
  }
  return p;
}

function unzigzag(v) {
  return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
}
