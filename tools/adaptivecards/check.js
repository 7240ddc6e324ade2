#!/usr/bin/env node
// check.js asks Microsoft's Adaptive Cards parser (the adaptivecards npm
// package) whether it accepts each card it is given, so that pkg/cards can
// test its own validator against it.
//
// Usage:
//   node check.js card1.json card2.json ...   one card per file
//   node check.js < cards.json                a JSON array of {"name", "card"}
//
// It prints one JSON array: [{"name", "accepted", "errors", "notes"}].
//
// The parser reports problems as events. This script plays a host of
// Adaptive Cards 1.5 (newer versions and properties are errors) and decides
// which events reject a card; pkg/cards/differential_test.go states what
// that makes the parser detect.
//
//   - Every parse and validation event rejects, and so does an exception
//     thrown by the parser, except the events below.
//   - Hint, RequiredInputsShouldHaveLabel and RequiredInputsShouldHaveErrorMessage
//     are advice ("should"), and TooManyActions is a limit of the default host
//     config, not of the format: they become notes.
//   - UnknownElementType/UnknownActionType (and a wrong "type" on a Column,
//     TableRow or TableCell) where the parser may fall back are logged even
//     when a fallback replaces the object. They reject only if the fallback
//     chain runs out, which the parser signals by asking a whole card (the
//     root or a ShowCard's card) to fall back.
//   - "requires" is tested against the host's capabilities. A validator
//     knows no host, so this one meets every requirement.
"use strict";

const fs = require("fs");
const path = require("path");
// The package's lib/ is ES modules that plain node cannot resolve; its
// dist/ bundle loads, and parsing needs no DOM.
const AC = require("adaptivecards/dist/adaptivecards.js");

const advisory = new Set([
    AC.ValidationEvent.Hint,
    AC.ValidationEvent.RequiredInputsShouldHaveLabel,
    AC.ValidationEvent.RequiredInputsShouldHaveErrorMessage,
    AC.ValidationEvent.TooManyActions
]);

AC.HostCapabilities.prototype.areAllMet = () => true;

// fallbackExhausted is set while parsing a card when some unknown object had
// no fallback on itself or on any ancestor within its card.
let fallbackExhausted = false;
const setShouldFallback = AC.AdaptiveCard.prototype.setShouldFallback;
AC.AdaptiveCard.prototype.setShouldFallback = function (value) {
    if (value) {
        fallbackExhausted = true;
    }
    setShouldFallback.call(this, value);
};

// Context records unknown types met where the parser may fall back, instead
// of logging them as errors straight away.
class Context extends AC.SerializationContext {
    constructor() {
        super(AC.Versions.v1_5);
        this.unknownTypes = [];
    }

    parseCardObject(parent, source, forbiddenTypes, allowFallback, create, logEvent) {
        const log = (typeName, errorType) => {
            if (allowFallback && errorType === AC.TypeErrorType.UnknownType) {
                this.unknownTypes.push(`unknown type "${typeName}"`);
            } else {
                logEvent(typeName, errorType);
            }
        };
        return super.parseCardObject(parent, source, forbiddenTypes, allowFallback, create, log);
    }
}

function check(name, json) {
    const card = new AC.AdaptiveCard();
    card.maxVersion = AC.Versions.v1_5;
    const context = new Context();
    fallbackExhausted = false;
    const errors = [];
    const notes = [];
    const events = [];
    try {
        card.parse(json, context);
        for (let i = 0; i < context.eventCount; i++) {
            events.push(context.getEventAt(i));
        }
        events.push(...card.validateProperties().validationEvents);
    } catch (e) {
        // The parser throws on a few malformed inputs (e.g. a TextBlock
        // among a RichTextBlock's inlines): that is a rejection too.
        errors.push(`parser threw: ${e.message}`);
    }

    for (const e of events) {
        const text = `${AC.ValidationEvent[e.event]}: ${e.message}`;
        (advisory.has(e.event) ? notes : errors).push(text);
    }
    if (fallbackExhausted) {
        errors.push(...context.unknownTypes.map((t) => `no fallback for ${t}`));
    } else {
        notes.push(...context.unknownTypes.map((t) => `fell back from ${t}`));
    }
    return { name, accepted: errors.length === 0, errors, notes };
}

function readInput() {
    const files = process.argv.slice(2);
    if (files.length > 0) {
        return files.map((f) => ({ name: path.basename(f), card: JSON.parse(fs.readFileSync(f, "utf8")) }));
    }
    return JSON.parse(fs.readFileSync(0, "utf8"));
}

process.stdout.write(JSON.stringify(readInput().map((c) => check(c.name, c.card)), null, 1) + "\n");
