#!/usr/bin/env node
// Decodes Compiler Explorer links the way Compiler Explorer's client does (static/url.ts,
// deserialiseState, with unrisonify from shared/url-serialization.ts), using the npm packages its
// code is built from: lz-string, and rison (Compiler Explorer vendors the same parser in shared/rison.ts).
// Usage: node decode.js LINK...   (or links on stdin, one a line).
// Prints one JSON document a line: the state, or {"error": "..."}; exits 1 if any link failed.
'use strict';
const lzstring = require('lz-string');
const rison = require('rison');

// shared/url-serialization.ts: decodeURIComponent after '+' -> space, then rison.decode_object.
function unrisonify(text) {
    return rison.decode_object(decodeURIComponent(text.replace(/\+/g, '%20')));
}

// shared/url-serialization.ts, ConfigMinifier: the keys and values a minified config abbreviates.
const KEYS = ['settings', 'hasHeaders', 'constrainDragToContainer', 'selectionEnabled', 'dimensions',
    'borderWidth', 'minItemHeight', 'minItemWidth', 'headerHeight', 'dragProxyWidth', 'dragProxyHeight',
    'labels', 'close', 'maximise', 'minimise', 'popout', 'content', 'componentName', 'componentState', 'id',
    'width', 'type', 'height', 'isClosable', 'title', 'popoutWholeStack', 'openPopouts', 'parentId',
    'activeItemIndex', 'reorderEnabled', 'borderGrabWidth'];
const VALUES = [true, false, 'row', 'column', 'stack', 'component', 'close', 'maximise', 'minimise',
    'open in new window'];

function expand(value, table) {
    if (typeof value === 'string' && value.length === 1) return table[parseInt(value, 36)];
    if (typeof value === 'string' && value.substr(0, 3) === '___') return value[3];
    return value;
}

function unminify(from) {
    const to = Array.isArray(from) ? [] : {};
    for (const key of Object.keys(from)) {
        const k = Array.isArray(from) ? parseInt(key, 10) : expand(key, KEYS);
        const v = from[key];
        to[k] = typeof v === 'object' && v !== null ? unminify(v) : expand(v, VALUES);
    }
    return to;
}

// static/url.ts, deserialiseState + loadState (version 4, the only version these links use).
function deserialiseState(stateText) {
    let state = unrisonify(stateText);
    if (state && state.z) {
        const data = lzstring.decompressFromBase64(state.z);
        if (data === '') throw new Error('lzstring decompress error, url is corrupted');
        state = unrisonify(data);
    }
    if (!state || state.version !== 4) throw new Error('not a version 4 state');
    return unminify(state);
}

function main(links) {
    let failed = false;
    for (const link of links) {
        const hash = link.indexOf('#');
        try {
            if (hash < 0) throw new Error('no fragment in ' + link.slice(0, 60));
            console.log(JSON.stringify(deserialiseState(link.slice(hash + 1))));
        } catch (ex) {
            console.log(JSON.stringify({error: String(ex.message || ex)}));
            failed = true;
        }
    }
    process.exitCode = failed ? 1 : 0;
}

if (process.argv.length > 2) {
    main(process.argv.slice(2));
} else {
    const chunks = [];
    process.stdin.on('data', c => chunks.push(c));
    process.stdin.on('end', () => main(chunks.join('').split('\n').filter(l => l.trim() !== '')));
}
