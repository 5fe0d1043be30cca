/**
 * No byte outside the worktree, whatever races: while the MCP server applies patches that write
 * many files into `d/`, a child process swaps `d/` for a symlink to a folder outside the worktree
 * and back in a tight loop. Whatever each apply answers (a commit, or a refusal because `d/` was
 * a symlink or missing at that instant), nothing may appear in the outside folder: no file, no
 * temp file, no folder. Before hagent wrote through folders opened by descriptor, temp files
 * `.name.hagent-….tmp` with the agent's bytes landed there within a few rounds.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { repoWithSession, tempDir } from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';

const t = suite('symlink race: no byte written outside the worktree');
/** Patches applied while the folder swaps: before the fix, the first few already wrote outside. */
const ROUNDS = 100;

/** The swapping loop, run by a child node process: `d` ↔ a symlink to `outside`, until `stop` exists. */
const SWAPPER = `
const fs = require('fs');
const [d, outside, stop] = process.argv.slice(1);
const real = d + '.real';
// Each phase lasts a random 0-1.5 ms, about as long as an apply's steps, so some write of
// every few patches falls in the instant d is a symlink.
const wait = () => { const end = process.hrtime.bigint() + BigInt(Math.floor(Math.random() * 1.5e6)); while (process.hrtime.bigint() < end); };
let n = 0;
for (;;) {
  if (n++ % 20 === 0 && fs.existsSync(stop)) break;
  try {
    fs.renameSync(d, real);
    fs.symlinkSync(outside, d);
    wait();
    fs.unlinkSync(d);
    fs.renameSync(real, d);
    wait();
  } catch {
    try { fs.lstatSync(d).isSymbolicLink() && fs.unlinkSync(d); } catch {}
    try { fs.renameSync(real, d); } catch {}
  }
}
`;

t(
  'apply_patch through the MCP server never writes into a folder swapped for a symlink',
  async () => {
    const { repo, s } = repoWithSession({ 'd/keep.txt': 'keep\n', 'a.txt': 'a\n' });
    const outside = tempDir('hagent-outside-');
    const stop = path.join(tempDir('hagent-stop-'), 'stop');
    const d = path.join(s.worktree, 'd');
    const swapper = spawn(process.execPath, ['-e', SWAPPER, d, outside, stop], { stdio: 'pipe' });
    const exited = new Promise<void>((resolve) => swapper.on('exit', () => resolve()));
    const c = await connectMcp(repo, ['--session', 's1']);
    let applied = 0;
    let refused = 0;
    const codes = new Set<string>();
    try {
      for (let round = 0; round < ROUNDS && readdirSync(outside).length === 0; round++) {
        const files = Array.from({ length: 8 }, (_, i) => `d/r${round}-${i}.txt`);
        const patch = `*** Begin Patch\n${files
          .map((f) => `*** Add File: ${f}\n+agent bytes ${f}\n`)
          .join('')}*** End Patch\n`;
        const r = await c.call('apply_patch', { patch, yes: true });
        if (r.isError) {
          refused++;
          // A refusal of hagent's (the folder was a symlink, missing or moved at that instant),
          // never a bug of hagent's.
          assert.match(r.text, /error\[[A-Z_]+\]/, r.text);
          assert.not.match(r.text, /error\[INTERNAL\]/, r.text);
          codes.add(/error\[([A-Z_]+)\]/.exec(r.text)![1]!);
        } else applied++;
      }
    } finally {
      writeFileSync(stop, '');
      await exited;
      await c.close();
    }
    assert.equal(readdirSync(outside), [], 'nothing was written outside the worktree');
    assert.ok(existsSync(path.join(d, 'keep.txt')));
    assert.ok(
      applied + refused === ROUNDS,
      `${applied} applied, ${refused} refused (${[...codes]})`,
    );
  },
);

t.run();
