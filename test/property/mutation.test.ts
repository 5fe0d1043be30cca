/**
 * Any mutation of a valid patch (dropped, duplicated, swapped or truncated lines, random bytes,
 * wrappers) ends in a plan or a HagentError with a known code — never another exception, and the
 * snapshot given to the planner is never modified (the engine writes nothing).
 */
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EXIT_STATUS, isHagentError } from '../../src/errors.js';
import { parsePatch, pathsToRead, planPatch, type FileState } from '../../src/patch/index.js';
import { guarded } from '../unit/patch/helpers.js';
import { editArb, makeCase, pool, runs, sameBytes } from './support.js';

const test = guarded(suite('property: mutation'));

const mutationArb = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('swap' as const), at: fc.nat(), with: fc.nat() }),
  fc.record({
    kind: fc.constant('truncate-line' as const),
    at: fc.nat(),
    keep: fc.nat({ max: 40 }),
  }),
  fc.record({ kind: fc.constant('truncate-patch' as const), keep: fc.nat() }),
  fc.record({
    kind: fc.constant('bytes' as const),
    at: fc.nat(),
    bytes: fc.string({ unit: 'binary', maxLength: 8 }),
  }),
  fc.record({
    kind: fc.constant('marker' as const),
    at: fc.nat(),
    line: fc.constantFrom(
      '*** Begin Patch',
      '*** End Patch',
      '*** End of File',
      '@@',
      '@@ -1,3 +1,4 @@',
      '*** Add File: x.txt',
      '*** Delete File: src/cli.ts',
      'Update File: a',
      '*** Move to: moved.ts',
      '```',
      '```patch',
      'EOF',
      '',
      '\\ No newline at end of file',
      'diff --git a/x b/x',
      '--- a/x',
      '+++ b/x',
    ),
  }),
  fc.record({
    kind: fc.constant('wrap' as const),
    how: fc.constantFrom('fence', 'json', 'heredoc', 'crlf', 'prose'),
  }),
);
type Mutation = typeof mutationArb extends fc.Arbitrary<infer T> ? T : never;

function mutate(text: string, m: Mutation): string {
  const lines = text.split('\n');
  const i = (n: number): number => n % Math.max(lines.length, 1);
  switch (m.kind) {
    case 'drop':
      lines.splice(i(m.at), 1);
      return lines.join('\n');
    case 'duplicate':
      lines.splice(i(m.at), 0, lines[i(m.at)] ?? '');
      return lines.join('\n');
    case 'swap': {
      const a = i(m.at);
      const b = i(m.with);
      [lines[a], lines[b]] = [lines[b] ?? '', lines[a] ?? ''];
      return lines.join('\n');
    }
    case 'truncate-line':
      lines[i(m.at)] = (lines[i(m.at)] ?? '').slice(0, m.keep);
      return lines.join('\n');
    case 'truncate-patch':
      return text.slice(0, m.keep % (text.length + 1));
    case 'bytes': {
      const at = m.at % (text.length + 1);
      return text.slice(0, at) + m.bytes + text.slice(at);
    }
    case 'marker':
      lines.splice(i(m.at), 0, m.line);
      return lines.join('\n');
    case 'wrap':
      if (m.how === 'fence') return `Here is the patch:\n\`\`\`patch\n${text}\n\`\`\`\n`;
      if (m.how === 'json') return JSON.stringify({ command: ['apply_patch', text] });
      if (m.how === 'heredoc') return `apply_patch <<'EOF'\n${text}\nEOF\n`;
      if (m.how === 'crlf') return text.replace(/\n/g, '\r\n');
      return `I will now change the file.\n${text}\nDone.`;
  }
}

test('a mutated patch ends in a plan or a HagentError with a known code, and the snapshot is untouched', () => {
  const codes = new Map<string, number>();
  fc.assert(
    fc.property(
      editArb,
      fc.array(mutationArb, { minLength: 1, maxLength: 4 }),
      fc.boolean(),
      (p, mutations, withOthers) => {
        const c = makeCase(p);
        let patch = c.patch;
        if (withOthers) {
          // Other ops too, so mutations can hit Add / Delete / Move lines.
          const other = pool[(p.file + 1) % pool.length]?.path ?? 'src/cli.ts';
          patch = patch.replace(
            '*** End Patch',
            `*** Add File: new/file.txt\n+hello\n+world\n*** Delete File: ${other}\n*** End Patch`,
          );
        }
        for (const m of mutations) patch = mutate(patch, m);
        const files = new Map<string, Uint8Array>();
        files.set(c.path, c.original);
        const other = pool[(p.file + 1) % pool.length];
        if (other) files.set(other.path, other.bytes);
        const before = new Map([...files].map(([k, v]) => [k, Uint8Array.from(v)]));
        try {
          const parsed = parsePatch(patch);
          const snapshot = new Map<string, FileState>();
          for (const path of pathsToRead(parsed)) {
            const bytes = files.get(path);
            snapshot.set(
              path,
              bytes ? { kind: 'file', bytes, mode: '100644' } : { kind: 'missing' },
            );
          }
          planPatch(parsed, snapshot);
          codes.set('ok', (codes.get('ok') ?? 0) + 1);
        } catch (e) {
          if (!isHagentError(e))
            throw new Error(`not a HagentError: ${String(e)}\n--- patch:\n${patch}`);
          if (!(e.code in EXIT_STATUS) || e.code === 'INTERNAL')
            throw new Error(`bad code ${e.code}: ${e.message}`);
          if (typeof e.message !== 'string' || e.message === '')
            throw new Error(`${e.code} without a message`);
          codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
        }
        for (const [k, v] of before)
          if (!sameBytes(files.get(k), v)) throw new Error(`the snapshot of ${k} was modified`);
      },
    ),
    runs(5000),
  );
  assert.ok((codes.get('PATCH_SYNTAX') ?? 0) > 100, JSON.stringify([...codes]));
  assert.ok((codes.get('ok') ?? 0) > 100, JSON.stringify([...codes]));
});

test.run();
