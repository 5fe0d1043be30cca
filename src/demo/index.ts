/**
 * demo: the main job on an embedded sample project. Copies `templates/demo/project` into a temp
 * folder, makes it a git repository, and runs the real hagent CLI through the whole cycle,
 * printing each command and its output as a user would see them.
 */
import { spawnSync } from 'node:child_process';
import { promises as fs, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HagentError } from '../errors.js';
import { commitEverything, initRepository, onelineLog } from '../git/index.js';
import { palette, type Io } from '../output/index.js';

/** Folder of the installed hagent package (holds package.json and templates/). */
export function packageRoot(fromUrl: string = import.meta.url): string {
  let dir = path.dirname(fileURLToPath(fromUrl));
  for (;;) {
    if (existsSync(path.join(dir, 'templates', 'demo'))) return dir;
    const up = path.dirname(dir);
    if (up === dir)
      throw new HagentError('INTERNAL', 'cannot find templates/demo next to the hagent package');
    dir = up;
  }
}

/** Files of the template whose names npm and git would treat specially, renamed on copy. */
const RENAMES: Record<string, string> = {
  _env: '.env',
  _gitignore: '.gitignore',
  _worktreeinclude: '.worktreeinclude',
};

async function copyTemplate(from: string, to: string): Promise<void> {
  await fs.mkdir(to, { recursive: true });
  for (const e of await fs.readdir(from, { withFileTypes: true })) {
    const target = path.join(to, RENAMES[e.name] ?? e.name);
    if (e.isDirectory()) await copyTemplate(path.join(from, e.name), target);
    else await fs.copyFile(path.join(from, e.name), target);
  }
}

/** Options of {@link runDemo}. `cli` is the argv prefix that runs hagent (node + script). */
export interface DemoOptions {
  io: Io;
  cli: string[];
  keep: boolean;
  /** Print one JSON object (`{ok, repo, steps, failures}`) instead of the narrated steps. */
  json?: boolean;
}

/** One step of the demo in its JSON: the hagent arguments, the exit status and the one expected. */
export interface DemoStep {
  title: string;
  args: string[];
  status: number | null;
  expectedStatus: number;
  ok: boolean;
}

/**
 * Runs the demo. @returns 0 when every step behaved as expected, 1 otherwise.
 */
export async function runDemoCycle({ io, cli, keep, json = false }: DemoOptions): Promise<number> {
  const p = palette(io.color && !json);
  const steps: DemoStep[] = [];
  const write = (s: string) => {
    if (!json) io.stdout.write(s);
  };
  const root = packageRoot();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hagent-demo-'));
  const repo = path.join(dir, 'greet');
  const patches = path.join(root, 'templates', 'demo', 'patches');
  const say = (s: string) => write(`${s}\n`);
  let failures = 0;
  // The session worktree (and the pool its end fills) stays in the demo's own folder, removed
  // with it, rather than in the user's cache folder, where it would outlive the demo repository.
  const env = {
    ...io.env,
    GIT_AUTHOR_NAME: 'Demo User',
    GIT_AUTHOR_EMAIL: 'demo@example.com',
    GIT_COMMITTER_NAME: 'Demo User',
    GIT_COMMITTER_EMAIL: 'demo@example.com',
    NO_COLOR: io.color ? '' : '1',
    HAGENT_WORKTREE_ROOT: path.join(dir, 'worktrees'),
  };
  const step = (title: string, cwd: string, args: string[], expectStatus: number): string => {
    say(`\n${p.bold(p.cyan(`## ${title}`))}`);
    say(
      `${p.dim(cwd === repo ? '~/greet' : '~/greet (session worktree)')} ${p.bold('$ hagent ' + args.join(' '))}`,
    );
    const r = spawnSync(cli[0]!, [...cli.slice(1), ...args], { cwd, env, encoding: 'utf8' });
    steps.push({
      title,
      args,
      status: r.status,
      expectedStatus: expectStatus,
      ok: r.status === expectStatus,
    });
    write(r.stdout);
    if (r.stderr) write(r.stderr);
    if (r.status !== expectStatus) {
      failures += 1;
      say(p.red(`(unexpected exit status ${r.status}; expected ${expectStatus})`));
    } else if (expectStatus !== 0) {
      say(p.dim(`(exit status ${r.status}: refused, nothing written — as intended)`));
    }
    return r.stdout;
  };

  say(p.bold(`hagent demo: a sample project in ${repo}`));
  await copyTemplate(path.join(root, 'templates', 'demo', 'project'), repo);
  const gitEnv = {
    GIT_AUTHOR_NAME: 'Demo User',
    GIT_AUTHOR_EMAIL: 'demo@example.com',
    GIT_COMMITTER_NAME: 'Demo User',
    GIT_COMMITTER_EMAIL: 'demo@example.com',
  };
  await initRepository(repo, 'main');
  await commitEverything(repo, 'greet: first version', gitEnv);

  const started = JSON.parse(
    step(
      '1. Start a session for the agent (its own worktree and branch)',
      repo,
      ['session', 'start', '--name', 'demo', '--json'],
      0,
    ) || '{}',
  ) as { worktree?: string };
  const wt = started.worktree;
  if (!wt) {
    if (json)
      io.stdout.write(
        `${JSON.stringify({ ok: false, repo, steps, failures: failures + 1 }, null, 2)}\n`,
      );
    return 1;
  }
  step(
    '2. The agent sends a patch whose context appears twice: refused, with the candidates',
    wt,
    ['apply', path.join(patches, '1-ambiguous.patch')],
    1,
  );
  step(
    '3. It adds an @@ anchor naming the function: applied as one commit',
    wt,
    ['apply', path.join(patches, '2-german.patch')],
    0,
  );
  step('4. A second patch, applied', wt, ['apply', path.join(patches, '3-farewell.patch')], 0);
  step('5. The human changes their mind about the last one: undo', wt, ['undo'], 0);
  step('6. Review what the session changed', repo, ['review'], 0);
  step('7. Approve it', repo, ['review', '--approve', '--stat'], 0);
  step(
    '8. Land it on main (one squashed commit; your checkout is updated, nothing else touched)',
    repo,
    ['land'],
    0,
  );
  say(`\n${p.bold(p.cyan('## 9. main now holds the change'))}`);
  write(await onelineLog(repo, 3));
  const greet = await fs.readFile(path.join(repo, 'src', 'greet.js'), 'utf8');
  if (!greet.includes('Hallo')) {
    failures += 1;
    say(p.red('main does not hold the landed change'));
  }
  step('10. End the session (its work has landed)', repo, ['session', 'end', 'demo'], 0);
  if (keep) say(`\nThe demo repository is kept at ${repo}`);
  else await fs.rm(dir, { recursive: true, force: true });
  say(
    failures
      ? p.red(`\nDemo finished with ${failures} unexpected result(s).`)
      : p.green('\nDemo finished: every step behaved as expected.'),
  );
  if (json)
    io.stdout.write(
      `${JSON.stringify({ ok: failures === 0, repo: keep ? repo : null, steps, failures }, null, 2)}\n`,
    );
  return failures ? 1 : 0;
}
