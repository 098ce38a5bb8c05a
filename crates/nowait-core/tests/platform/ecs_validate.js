// Checks ECS log lines (one JSON object per line on stdin) against the
// Elastic Common Schema's own field list (the npm package @elastic/ecs,
// whose EcsFlat is generated from ECS's ecs_flat.yml) and the ecs-logging
// specification (github.com/elastic/ecs-logging, spec/spec.json):
//
// * `@timestamp`, `log.level` and (if present) `message` are the first
//   keys, in that order; `log.level` and `ecs.version` are top-level
//   dotted keys holding strings; `@timestamp` is an ISO 8601 UTC time.
// * Every leaf of the line, read as Elasticsearch reads dotted keys (a
//   path of objects), that is an ECS field holds a value of that field's
//   type, and no leaf sits where ECS has an object (`error`, `log`) or
//   under an ECS leaf (`message.x`), and no two leaves make one path both
//   a value and an object: the mapping conflicts that make Elasticsearch
//   reject a document.
//
// Prints `ok N` (lines checked) or one line per problem and exits 1.
"use strict";
const path = require("path");
const { execSync } = require("child_process");
const root = execSync("npm root -g").toString().trim();
const { EcsFlat } = require(path.join(root, "@elastic/ecs/build/commonjs/ecs_flat.js"));
const version = require(path.join(root, "@elastic/ecs/package.json")).version;

// Every proper prefix of an ECS field name is an object in the mapping.
const objects = new Set();
for (const name of Object.keys(EcsFlat)) {
  const parts = name.split(".");
  for (let i = 1; i < parts.length; i++) objects.add(parts.slice(0, i).join("."));
}

const STRINGS = new Set(["keyword", "constant_keyword", "wildcard", "match_only_text", "text", "ip", "geo_point"]);
const INTEGERS = new Set(["long", "integer", "short", "byte", "unsigned_long"]);
const FLOATS = new Set(["float", "double", "scaled_float", "half_float"]);
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/;

function typeOk(type, v) {
  if (STRINGS.has(type)) return typeof v === "string" || typeof v === "number" || typeof v === "boolean";
  if (INTEGERS.has(type)) return Number.isInteger(v);
  if (FLOATS.has(type)) return typeof v === "number";
  if (type === "boolean") return typeof v === "boolean";
  if (type === "date") return typeof v === "string" && !Number.isNaN(Date.parse(v));
  if (type === "object" || type === "flattened" || type === "nested") return typeof v === "object";
  return false;
}

// Leaves of a parsed line as [dotted path, value].
function leaves(obj, prefix, out) {
  for (const [k, v] of Object.entries(obj)) {
    const p = prefix ? prefix + "." + k : k;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) leaves(v, p, out);
    else out.push([p, v]);
  }
  return out;
}

const input = require("fs").readFileSync(0, "utf8");
const problems = [];
let n = 0;
for (const line of input.split("\n")) {
  if (line === "") continue;
  n++;
  const bad = (why) => problems.push(`${why}: ${line}`);
  let doc;
  try {
    doc = JSON.parse(line);
  } catch (e) {
    bad(`not JSON (${e.message})`);
    continue;
  }
  const keys = Object.keys(doc);
  if (keys[0] !== "@timestamp") bad("@timestamp is not the first key");
  if (keys[1] !== "log.level") bad("log.level is not the second key");
  if ("message" in doc && keys[2] !== "message") bad("message is not the third key");
  for (const k of ["log.level", "ecs.version"]) {
    if (typeof doc[k] !== "string") bad(`${k} is not a top-level string`);
  }
  if (!ISO_UTC.test(doc["@timestamp"]) || Number.isNaN(Date.parse(doc["@timestamp"]))) bad("@timestamp is not an ISO 8601 UTC time");
  const all = leaves(doc, "", []);
  const paths = new Set(all.map(([p]) => p));
  for (const [p, v] of all) {
    const field = EcsFlat[p];
    if (field && !typeOk(field.type, v)) bad(`${p} holds ${JSON.stringify(v)}, not an ECS ${field.type}`);
    if (!field && objects.has(p)) bad(`${p} is an object in ECS, but holds ${JSON.stringify(v)}`);
    const parts = p.split(".");
    for (let i = 1; i < parts.length; i++) {
      const q = parts.slice(0, i).join(".");
      if (EcsFlat[q] && !["object", "flattened", "nested"].includes(EcsFlat[q].type)) bad(`${p} is under the ECS ${EcsFlat[q].type} ${q}`);
      if (paths.has(q)) bad(`${q} is both a value and an object`);
    }
  }
}
if (problems.length) {
  for (const p of problems) console.log(p);
  process.exit(1);
}
console.log(`ok ${n} (ECS field list @elastic/ecs ${version})`);
