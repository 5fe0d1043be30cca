/**
 * Claude Code's HTTP-hook form of a hook's answer (src/agents/respond.ts claudeHttpReply): what a
 * command hook says with its exit status, an HTTP hook must say in a 2xx JSON body.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { claudeHttpReply } from '../../../src/agents/respond.js';

const test = suite('claudeHttpReply');
const body = (event: string, exitCode: number, stdout = '', stderr = '') => {
  const r = claudeHttpReply(event, { exitCode, stdout, stderr });
  assert.is(r.status, 200, 'always a 200: anything else is a non-blocking error to Claude Code');
  return r.body === '' ? null : (JSON.parse(r.body) as Record<string, unknown>);
};

test('a PreToolUse block is a deny with the reason', () => {
  assert.equal(body('PreToolUse', 2, '', 'error[PATH_DENIED]: .env\n'), {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: 'error[PATH_DENIED]: .env',
    },
  });
});

test('a PostToolUse, Stop or UserPromptSubmit block is decision: block; others a systemMessage', () => {
  for (const e of ['PostToolUse', 'Stop', 'UserPromptSubmit'])
    assert.equal(body(e, 2, '', 'why\n'), { decision: 'block', reason: 'why' });
  assert.equal(body('SessionEnd', 2, '', 'why\n'), { systemMessage: 'why' });
});

test('exit 0: the JSON stdout as it is, empty as empty; plain text wrapped', () => {
  const json = '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"x"}}\n';
  assert.is(
    claudeHttpReply('PostToolUse', { exitCode: 0, stdout: json, stderr: '' }).body,
    json.trim(),
  );
  assert.is(claudeHttpReply('PreToolUse', { exitCode: 0, stdout: '', stderr: 'note\n' }).body, '');
  assert.equal(body('SessionStart', 0, 'hello\n'), {
    hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'hello' },
  });
  assert.equal(body('PostToolUse', 0, 'hello\n'), { systemMessage: 'hello' });
});

test('another failing status (1, 3) is a systemMessage: the call goes on, the user sees why', () => {
  assert.equal(body('PreToolUse', 3, '', 'error[INTERNAL]: boom\n'), {
    systemMessage: 'error[INTERNAL]: boom',
  });
  assert.equal(body('PostToolUse', 1), { systemMessage: "hagent's hook failed (exit 1)" });
});

test.run();
