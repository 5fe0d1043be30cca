#!/usr/bin/env node
// hagent's command line, started fast: loads the CLI bundle (cli.cjs, beside this file) with a
// V8 code cache, so a command skips most of the parsing and compiling of ~800 KB of JavaScript
// on every run (agents call hagent hundreds of times a session). The cache is V8's own format:
// V8 checks it against its version and flags and rejects a stale one. Its name carries the
// bundle's content hash, size and mtime, so a rebuilt or edited bundle never meets an old cache.
// It lives in `.cache/` beside the bundle, or in the user's cache folder when that is not
// writable; it is never read from a shared folder such as /tmp. Any failure here only means
// "no cache": the bundle then compiles as usual.
// The launcher is CommonJS: an ES module entry point starts Node's ES module loader, which costs
// ~10 ms of compiling Node's own internal modules on every start.
'use strict';
const { closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const os = require('node:os');
const path = require('node:path');
const vm = require('node:vm');

const BUNDLE_HASH = '__BUNDLE_HASH__';
// Which program this launcher starts from the one bundle: `hagent`, or the `apply_patch` drop-in.
globalThis.hagentEntry = '__ENTRY__';
const bundle = path.join(__dirname, 'cli.cjs');
const fd = openSync(bundle, 'r');
const st = fstatSync(fd);
const source = readFileSync(fd, 'utf8');
closeSync(fd);
const name = `cli-${BUNDLE_HASH}-${st.size}-${Math.trunc(st.mtimeMs)}-${process.version}-${process.arch}.v8`;
const userCache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
const places = [path.join(path.dirname(bundle), '.cache'), path.join(userCache, 'hagent')];
let cachedData;
for (const dir of places) {
  try {
    cachedData = readFileSync(path.join(dir, name));
    break;
  } catch {
    // not there
  }
}
const wrapper = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
const script = new vm.Script(wrapper, { filename: bundle, ...(cachedData ? { cachedData } : {}) });
const forced = process.env.HAGENT_WRITE_CODE_CACHE === '1';
if (forced || !cachedData || script.cachedDataRejected) {
  // At exit the cache holds every function this run compiled, not just the top level.
  process.once('exit', () => {
    const data = script.createCachedData();
    for (const dir of places) {
      try {
        mkdirSync(dir, { recursive: true });
        const tmp = path.join(dir, `.${name}.${process.pid}.tmp`);
        writeFileSync(tmp, data);
        renameSync(tmp, path.join(dir, name));
        return;
      } catch {
        // not writable: try the next place
      }
    }
  });
}
const cliModule = { exports: {} };
script.runInThisContext()(cliModule.exports, createRequire(bundle), cliModule, bundle, path.dirname(bundle));
