/**
 * Codex's own apply-patch scenario fixtures (test/fixtures/codex/scenarios, Apache-2.0) as a third
 * corpus beside the shared cases: each runs through the built CLI (`hagent apply - --json --yes`)
 * in a fresh git repository holding its `input/`. The outcome is classified:
 * - SAME: the worktree holds exactly `expected/` (applied, or refused where Codex refuses too);
 * - REFUSED-BY-DESIGN: hagent refuses with the listed code, by the listed rule, input untouched;
 * - DIFFERENT-BY-DESIGN: hagent writes other bytes than Codex, by the listed rule.
 * An outcome that matches no classification fails; so does a scenario missing from the table.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { diffSnapshots, hagent, makeRepo, snapshotTree, startSession } from './helpers/index.js';

const ROOT = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'fixtures',
  'codex',
  'scenarios',
);

type Verdict =
  | { kind: 'SAME' }
  | { kind: 'REFUSED-BY-DESIGN'; code: string; rule: string }
  | { kind: 'DIFFERENT-BY-DESIGN'; rule: string };

/** Where hagent departs from Codex on purpose, with the rule of docs/patch-language.md. */
const BY_DESIGN: Record<string, Verdict> = {
  '010_move_overwrites_existing_destination': {
    kind: 'REFUSED-BY-DESIGN',
    code: 'FILE_EXISTS',
    rule: '§5: Move onto an existing path → FILE_EXISTS (Codex overwrites it)',
  },
  '011_add_overwrites_existing_file': {
    kind: 'REFUSED-BY-DESIGN',
    code: 'FILE_EXISTS',
    rule: '§5: Add onto an existing path → FILE_EXISTS (Codex silently overwrites)',
  },
  '015_failure_after_partial_success_leaves_changes': {
    kind: 'REFUSED-BY-DESIGN',
    code: 'FILE_NOT_FOUND',
    rule: '§5: the whole patch is validated first, then written all-or-nothing (Codex leaves the first op written)',
  },
};

/** Every file under `dir` as path → bytes (none when the folder is absent). */
function filesOf(dir: string): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  const walk = (d: string, rel: string): void => {
    for (const name of readdirSync(d)) {
      const full = path.join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(full).isDirectory()) walk(full, r);
      else out[r] = readFileSync(full);
    }
  };
  try {
    walk(dir, '');
  } catch {
    // no such folder: an empty input or expected state
  }
  return out;
}

const scenarios = readdirSync(ROOT)
  .filter((n) => statSync(path.join(ROOT, n)).isDirectory())
  .sort();
const tally: Record<string, string[]> = {
  SAME: [],
  'REFUSED-BY-DESIGN': [],
  'DIFFERENT-BY-DESIGN': [],
};
const test = suite('Codex apply-patch scenarios');

for (const name of scenarios) {
  test(`${name}: the outcome is SAME or differs by a rule of patch-language.md`, () => {
    const dir = path.join(ROOT, name);
    const input = filesOf(path.join(dir, 'input'));
    const repo = makeRepo({ ...input, '.keep': '' });
    const s = startSession(repo);
    const r = hagent(s.worktree, ['apply', '-', '--json', '--yes'], {
      input: readFileSync(path.join(dir, 'patch.txt')),
    });
    const actual = snapshotTree(s.worktree);
    const expectedDir = makeRepo({ ...filesOf(path.join(dir, 'expected')), '.keep': '' });
    const sameAsCodex = diffSnapshots(actual, snapshotTree(expectedDir)) === null;
    const verdict = BY_DESIGN[name] ?? { kind: 'SAME' };
    const outcome = r.status === 0 ? 'applied' : `refused ${String(r.json?.error?.code)}`;
    if (verdict.kind === 'SAME') {
      assert.ok(
        sameAsCodex,
        `${name}: unclassified difference from Codex (hagent ${outcome}): ${diffSnapshots(actual, snapshotTree(expectedDir))}\n${r.stdout}${r.stderr}`,
      );
      assert.ok(r.status === 0 || r.status === 1, `${name}: exit ${r.status}`);
    } else if (verdict.kind === 'REFUSED-BY-DESIGN') {
      assert.is(
        r.status,
        1,
        `${name}: expected a refusal ${verdict.code} (${verdict.rule}), hagent ${outcome}`,
      );
      assert.is(r.json?.error?.code, verdict.code, `${name}: ${verdict.rule}`);
      const inputRepo = makeRepo({ ...input, '.keep': '' });
      assert.is(
        diffSnapshots(actual, snapshotTree(inputRepo)),
        null,
        `${name}: a refusal must leave the input untouched`,
      );
    } else {
      assert.is(r.status, 0, `${name}: ${verdict.rule}; hagent ${outcome}`);
      assert.not.ok(
        sameAsCodex,
        `${name}: listed as DIFFERENT-BY-DESIGN but hagent now matches Codex: move it to SAME`,
      );
    }
    tally[verdict.kind]!.push(`${name} (${outcome})`);
  });
}

test('every scenario is in the corpus, and the table names only scenarios that exist', () => {
  assert.ok(scenarios.length >= 20, `only ${scenarios.length} scenarios`);
  for (const name of Object.keys(BY_DESIGN))
    assert.ok(scenarios.includes(name), `${name} is classified but not in the corpus`);
  process.stdout.write(
    `\nCodex scenarios: ${scenarios.length} — ${Object.entries(tally)
      .map(([k, v]) => `${v.length} ${k}`)
      .join(', ')}\n${Object.entries(BY_DESIGN)
      .map(([n, v]) => `  ${v.kind} ${n}: ${'rule' in v ? v.rule : ''}`)
      .join('\n')}\n`,
  );
});

test.run();
