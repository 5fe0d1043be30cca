/** User hooks: real executables in a temp hooks folder, real processes, a real timeout kill. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { isHagentError, type HagentError } from '../../../src/errors.js';
import {
  assertPreApplyAccepted,
  HOOK_OUTPUT_CAP_BYTES,
  runUserHook,
  type HookResult,
} from '../../../src/user-hooks/index.js';
import { makeRepo, ROOT, tempDir } from '../../helpers/index.js';
import { guarded } from '../patch/helpers.js';

const test = guarded(suite('user-hooks'));
const TEMPLATES = path.join(ROOT, 'templates', 'hooks');

function hooksWith(name: string, body: string, mode = 0o755): string {
  const dir = path.join(tempDir(), '.hagent', 'hooks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, name), body);
  chmodSync(path.join(dir, name), mode);
  return dir;
}

function rejection(r: HookResult): HagentError {
  try {
    assertPreApplyAccepted(r);
  } catch (e) {
    if (isHagentError(e)) return e;
    throw e;
  }
  throw new Error('expected HOOK_REJECTED, the result was accepted');
}

/** True when `pid` runs; a zombie (dead, not yet reaped by its new parent) counts as dead. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

test('a hook that exits 0 is accepted; it gets the JSON on stdin, the env, and the worktree as cwd', async () => {
  const worktree = realpathSync(tempDir());
  const dir = hooksWith(
    'pre-apply',
    '#!/bin/sh\ninput=$(cat)\nprintf "%s|%s|%s|%s" "$input" "$HAGENT_SESSION" "$HAGENT_HOOK" "$(pwd)"\n',
  );
  const r = await runUserHook(
    dir,
    'pre-apply',
    { files: ['a.txt'] },
    { HAGENT_SESSION: 's1', HAGENT_WORKTREE: worktree },
    {},
  );
  assert.is(r.ran, true);
  assert.is(r.exitCode, 0);
  assert.is(r.timedOut, false);
  assert.is(r.stdout, `{"files":["a.txt"]}|s1|pre-apply|${worktree}`);
  assert.ok(r.durationMs > 0);
  assertPreApplyAccepted(r); // does not throw
});

test('a hook that exits non-zero is rejected with HOOK_REJECTED and its stderr as the hint', async () => {
  const dir = hooksWith(
    'pre-apply',
    '#!/bin/sh\ncat >/dev/null\necho "  lint failed: src/a.ts:3 missing semicolon  " >&2\nexit 3\n',
  );
  const r = await runUserHook(dir, 'pre-apply', {}, {}, {});
  assert.is(r.exitCode, 3);
  const e = rejection(r);
  assert.is(e.code, 'HOOK_REJECTED');
  assert.is(e.hint, 'lint failed: src/a.ts:3 missing semicolon');
  assert.is(e.details.hook, 'pre-apply');
  assert.is(e.details.exitCode, 3);
  assert.match(e.message, 'status 3');
});

test('a silent non-zero exit gets a default hint', async () => {
  const dir = hooksWith('pre-apply', '#!/bin/sh\nexit 1\n');
  const e = rejection(await runUserHook(dir, 'pre-apply', {}, {}, {}));
  assert.is(e.code, 'HOOK_REJECTED');
  assert.match(e.hint ?? '', 'printed nothing');
});

test('the timeout kills a sleeping hook and the child it started, and rejects', async () => {
  const pidFile = path.join(tempDir(), 'child.pid');
  const dir = hooksWith('pre-apply', `#!/bin/sh\nsleep 30 &\necho $! > ${pidFile}\nsleep 30\n`);
  const t0 = Date.now();
  const r = await runUserHook(dir, 'pre-apply', {}, {}, { timeoutMs: 300 });
  assert.ok(Date.now() - t0 < 5000, 'returned soon after the timeout');
  assert.is(r.timedOut, true);
  assert.is(r.exitCode, null);
  const grandchild = Number(readFileSync(pidFile, 'utf8'));
  await new Promise((res) => setTimeout(res, 100));
  assert.not.ok(alive(grandchild), `background child ${grandchild} still runs`);
  const e = rejection(r);
  assert.is(e.code, 'HOOK_REJECTED');
  assert.is(e.details.timedOut, true);
  assert.match(e.message, 'timed out');
});

test('a hook that ignores SIGTERM is killed with SIGKILL after the grace', async () => {
  const dir = hooksWith('pre-apply', "#!/bin/sh\ntrap '' TERM\nwhile :; do sleep 0.05; done\n");
  const r = await runUserHook(dir, 'pre-apply', {}, {}, { timeoutMs: 200 });
  assert.is(r.timedOut, true);
  assert.is(r.signal, 'SIGKILL');
});

test('a hook that is not executable is not run', async () => {
  const marker = path.join(tempDir(), 'ran');
  const dir = hooksWith('pre-apply', `#!/bin/sh\ntouch ${marker}\nexit 1\n`, 0o644);
  const r = await runUserHook(dir, 'pre-apply', {}, {}, {});
  assert.equal(r, {
    ran: false,
    exitCode: null,
    stdout: '',
    stderr: '',
    timedOut: false,
    durationMs: 0,
  });
  assert.not.ok(existsSync(marker));
  assertPreApplyAccepted(r); // no hook, no veto
});

test('a missing hook (or a missing hooks folder) is not run', async () => {
  const dir = hooksWith('post-apply', '#!/bin/sh\nexit 1\n');
  assert.is((await runUserHook(dir, 'pre-apply', {}, {}, {})).ran, false);
  assert.is((await runUserHook(path.join(tempDir(), 'nope'), 'pre-apply', {}, {}, {})).ran, false);
});

test('a directory named like a hook is not run', async () => {
  const dir = path.join(tempDir(), 'hooks');
  mkdirSync(path.join(dir, 'pre-apply'), { recursive: true });
  assert.is((await runUserHook(dir, 'pre-apply', {}, {}, {})).ran, false);
});

test('output beyond the cap is cut and marked', async () => {
  const dir = hooksWith(
    'post-apply',
    `#!/bin/sh\nhead -c ${HOOK_OUTPUT_CAP_BYTES * 3} /dev/zero | tr '\\0' x\nexit 0\n`,
  );
  const r = await runUserHook(dir, 'post-apply', {}, {}, {});
  assert.is(r.exitCode, 0);
  assert.ok(r.stdout.startsWith('x'.repeat(HOOK_OUTPUT_CAP_BYTES)));
  assert.match(r.stdout, `[truncated ${HOOK_OUTPUT_CAP_BYTES * 2} bytes]`);
});

test('a hook that leaves a background process holding its output still returns when it exits', async () => {
  const pidFile = path.join(tempDir(), 'bg.pid');
  const dir = hooksWith('post-apply', `#!/bin/sh\nsleep 20 &\necho $! > ${pidFile}\necho done\n`);
  const t0 = Date.now();
  const r = await runUserHook(dir, 'post-apply', {}, {}, { timeoutMs: 10_000 });
  const bg = Number(readFileSync(pidFile, 'utf8'));
  process.kill(bg, 'SIGKILL');
  assert.ok(Date.now() - t0 < 3000, `took ${Date.now() - t0} ms`);
  assert.is(r.exitCode, 0);
  assert.is(r.timedOut, false);
  assert.is(r.stdout.trim(), 'done');
});

test('a hook with a missing interpreter is rejected, not crashed on', async () => {
  const dir = hooksWith('pre-apply', '#!/no/such/interpreter\n');
  const r = await runUserHook(dir, 'pre-apply', {}, {}, {});
  assert.is(r.ran, true);
  assert.is.not(r.exitCode, 0);
  assert.is(rejection(r).code, 'HOOK_REJECTED');
});

test('the template hooks are executable POSIX sh with a contract header', () => {
  for (const name of ['pre-apply', 'post-apply']) {
    const file = path.join(TEMPLATES, name);
    const text = readFileSync(file, 'utf8');
    assert.ok(text.startsWith('#!/bin/sh\n'), `${name} starts with #!/bin/sh`);
    assert.match(text, '# Contract');
    assert.ok((statSync(file).mode & 0o111) !== 0, `${name} is executable`);
  }
});

test('the template pre-apply accepts clean files, refuses a protected path and a broken script with a hint', async () => {
  const worktree = tempDir();
  writeFileSync(path.join(worktree, 'ok.js'), 'export const a = 1;\n');
  writeFileSync(path.join(worktree, 'bad file.js'), 'function (\n');
  const env = { HAGENT_SESSION: 's1', HAGENT_WORKTREE: worktree };
  const good = await runUserHook(TEMPLATES, 'pre-apply', { files: ['ok.js', 'new.txt'] }, env, {});
  assert.is(good.exitCode, 0, good.stderr);
  const e = rejection(
    await runUserHook(
      TEMPLATES,
      'pre-apply',
      { files: ['.github/workflows/ci.yml', 'bad file.js'] },
      env,
      {},
    ),
  );
  assert.is(e.code, 'HOOK_REJECTED');
  assert.match(e.hint ?? '', '.github/workflows/ci.yml is protected');
  assert.match(e.hint ?? '', 'bad file.js');
});

test('the template post-apply logs the commit in the git common dir', async () => {
  const repo = makeRepo();
  const r = await runUserHook(
    TEMPLATES,
    'post-apply',
    { session: 's1', head: 'abc123', files: ['a.txt'] },
    { HAGENT_SESSION: 's1', HAGENT_WORKTREE: repo },
    {},
  );
  assert.is(r.exitCode, 0, r.stderr);
  assert.match(
    readFileSync(path.join(repo, '.git', 'hagent-post-apply.log'), 'utf8'),
    /session=s1 head=abc123 files=a\.txt\n$/,
  );
});

test.run();
