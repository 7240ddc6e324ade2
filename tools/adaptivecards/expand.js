#!/usr/bin/env node
// expand.js expands Adaptive Card templates with Microsoft's templating
// library (the adaptivecards-templating npm package and its peer
// adaptive-expressions), so that pkg/cards can test its own expansion
// against it.
//
// Usage:
//   node expand.js case1.json case2.json ...   one case per file
//   node expand.js < cases.json                a JSON array of cases
//
// A case is {"name", "template", "data", "host"?}. It prints one JSON array:
// [{"name", "ok", "output", "error"}]. An expansion that throws, at parse
// or at expansion, is {"ok": false, "error": message}. Absent data is
// null. An output of undefined (the root object dropped by $when) is
// printed as null.
"use strict";

const fs = require("fs");
const path = require("path");
const ACT = require("adaptivecards-templating");

function expand(c) {
    try {
        const template = new ACT.Template(c.template);
        const context = { $root: c.data === undefined ? null : c.data };
        if (c.host !== undefined) {
            context.$host = c.host;
        }
        const output = template.expand(context);
        return { name: c.name, ok: true, output: output === undefined ? null : output };
    } catch (e) {
        return { name: c.name, ok: false, error: String(e && e.message || e) };
    }
}

function readInput() {
    const files = process.argv.slice(2);
    if (files.length > 0) {
        return files.map((f) => Object.assign({ name: path.basename(f) }, JSON.parse(fs.readFileSync(f, "utf8"))));
    }
    return JSON.parse(fs.readFileSync(0, "utf8"));
}

process.stdout.write(JSON.stringify(readInput().map(expand), null, 1) + "\n");
