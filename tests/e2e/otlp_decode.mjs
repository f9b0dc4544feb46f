// otlp_decode.mjs TRACE - TRACE (from `fusebox live --otlp`) through OpenTelemetry's own code:
//
//  1. decoded as an ExportTraceServiceRequest with the protobuf schema that
//     @opentelemetry/otlp-transformer ships (opentelemetry-proto, generated for protobufjs),
//     and encoded back: the result must equal the file, so no key is unknown to the schema
//     (it would be dropped), no value of the wrong type (it would be coerced), ids are hex of
//     the right length and enums integers;
//  2. every attribute key outside fusebox.* is one the semantic conventions define, as
//     @opentelemetry/semantic-conventions exports them (stable and incubating).
//
// Run from a folder whose node_modules holds the two packages (tests/e2e/live_otlp.sh pins
// them). Prints what it checked, or the first difference (exit 1).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';

const require = createRequire(process.cwd() + '/');
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const stable = require('@opentelemetry/semantic-conventions');
const incubating = require('@opentelemetry/semantic-conventions/incubating');

const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const doc = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const ID_KEYS = new Set(['traceId', 'spanId', 'parentSpanId']);

// protobufjs reads bytes as base64, OTLP/JSON writes ids in hex: convert both ways
const recode = (obj, from, to) =>
  JSON.parse(JSON.stringify(obj), (k, v) =>
    ID_KEYS.has(k) ? Buffer.from(v, from).toString(to) : v);

const message = Request.fromObject(recode(doc, 'hex', 'base64'));
const back = recode(
  Request.toObject(message, { longs: String, enums: Number, bytes: String, defaults: false }),
  'base64', 'hex');

function firstDifference(a, b, path) {
  if (isDeepStrictEqual(a, b)) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null)
    return `${path}: ${JSON.stringify(a)} became ${JSON.stringify(b)}`;
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = firstDifference(a[k], b[k], `${path}.${k}`);
    if (d) return d;
  }
  return `${path}: differs`;
}

const diff = firstDifference(doc, back, 'trace');
if (diff) {
  console.log(`not an ExportTraceServiceRequest, losslessly: ${diff}`);
  process.exit(1);
}

const known = new Set(
  [...Object.entries(stable), ...Object.entries(incubating)]
    .filter(([name, v]) => name.startsWith('ATTR_') && typeof v === 'string')
    .map(([, v]) => v));
let spans = 0;
const keys = new Set();
for (const rs of doc.resourceSpans) {
  for (const a of rs.resource.attributes) keys.add(a.key);
  for (const ss of rs.scopeSpans)
    for (const s of ss.spans) {
      spans++;
      for (const a of s.attributes) keys.add(a.key);
    }
}
const unknown = [...keys].filter(k => !k.startsWith('fusebox.') && !known.has(k));
if (unknown.length > 0) {
  console.log(`attributes the semantic conventions do not define: ${unknown.join(', ')}`);
  process.exit(1);
}
console.log(`${spans} spans decode and encode back unchanged; ${keys.size} attribute keys, ` +
            `all fusebox.* or defined by the semantic conventions`);
