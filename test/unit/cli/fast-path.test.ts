/**
 * The apply/check/land/session start fast path (cli-fast-path.ts) reads exactly the plain command lines, with the
 * argument object yargs would give, and hands every other line to yargs (null).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFastCommand } from '../../../src/cli-fast-path.js';

const t = suite('cli fast path');

t('plain apply lines: camelCase options, --no-watch, numbers, stdin', () => {
  assert.equal(readFastCommand(['apply', 'fix.patch']), {
    command: 'apply',
    args: { patch: 'fix.patch', watch: true },
  });
  assert.equal(
    readFastCommand([
      'apply',
      '-',
      '--json',
      '--yes',
      '--dry-run',
      '--session',
      's1',
      '--base=abc',
      '--no-watch',
      '--lock-timeout',
      '2.5',
    ]),
    {
      command: 'apply',
      args: {
        patch: '-',
        json: true,
        session: 's1',
        yes: true,
        dryRun: true,
        base: 'abc',
        watch: false,
        lockTimeout: 2.5,
      },
    },
  );
  assert.equal(readFastCommand(['apply']), { command: 'apply', args: { watch: true } });
  assert.equal(
    readFastCommand(['apply', '--lock-timeout', 'soon'])?.args,
    { watch: true, lockTimeout: NaN },
    'runApply refuses NaN as yargs would give it',
  );
});

t('plain check lines', () => {
  assert.equal(readFastCommand(['check', 'p', '--dir', '.', '--json']), {
    command: 'check',
    args: { patch: 'p', dir: '.', json: true },
  });
});

t('plain land lines', () => {
  // `verify` and `gate` default to true (--no-verify, --no-gate turn them off).
  assert.equal(readFastCommand(['land']), {
    command: 'land',
    args: { gate: true, verify: true },
  });
  // Sessions named (a train) are yargs's to read.
  assert.is(readFastCommand(['land', 's1', 's2']), null);
  assert.equal(
    readFastCommand([
      'land',
      '--session',
      's',
      '--merge',
      '--message',
      'feat: x',
      '--yes',
      '--json',
    ]),
    {
      command: 'land',
      args: {
        session: 's',
        merge: true,
        message: 'feat: x',
        yes: true,
        json: true,
        gate: true,
        verify: true,
      },
    },
  );
});

t('plain session start lines', () => {
  assert.equal(readFastCommand(['session', 'start']), { command: 'session start', args: {} });
  assert.equal(
    readFastCommand(['session', 'start', '--name', 'fix-login', '--base=main', '--json']),
    { command: 'session start', args: { name: 'fix-login', base: 'main', json: true } },
  );
});

t('everything else goes to yargs', () => {
  const lines = [
    [],
    ['review'],
    ['session'],
    ['session', 'list'],
    ['start'],
    ['session', 'start', 'x'],
    ['session', 'start', '--name'],
    ['session', 'start', '--name', ''],
    ['session', 'start', '--name', 'a', '--name', 'b'],
    ['session', 'start', '--session', 's'],
    ['session', 'start', '--help'],
    ['session', 'start', '--no-json'],
    ['session', 'start', '--base', '-'],
    ['apply', '--help'],
    ['apply', '-h'],
    ['apply', '--version'],
    ['apply', 'a', 'b'],
    ['apply', '--', 'x'],
    ['apply', '--unknown'],
    ['apply', '--session'],
    ['apply', '--session='],
    ['apply', '--session', '--json'],
    ['apply', '--yes', '--yes'],
    ['apply', '--no-json'],
    ['apply', '--json=true'],
    ['apply', '--dryRun'],
    ['check', '--yes'],
    ['check', '--dir'],
    ['apply', '-x'],
    ['land', '--message', '-'],
    ['apply', 'p', '--base', '-'],
    ['apply', 'p', '--session', '-'],
    ['check', 'p', '--dir', '-'],
    ['land', 'extra'],
    ['land', '--squash', '--merge'],
    ['land', '-m', 'x'],
    ['land', '--message'],
    ['land', '--dir', '.'],
  ];
  for (const l of lines) assert.is(readFastCommand(l), null, l.join(' '));
});

t.run();
