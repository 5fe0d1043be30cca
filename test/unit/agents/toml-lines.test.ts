/**
 * The line edits of Codex's config.toml: hagent's table and key changed, every other byte kept.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'smol-toml';
import { setKey, setTable } from '../../../src/agents/toml-lines.js';

const test = suite('toml line edits');
const BODY = ['command = "hagent"', 'args = ["mcp"]'];

test('a table in the middle is replaced in place, its sub-tables with it; the lines around stay', () => {
  const text =
    '# top\na = 1\n\n[mcp_servers.hagent]\ncommand = "old"\n\n[mcp_servers.hagent.env]\nX = "1"\n\n[other] # mine\nb = 2\n';
  const out = setTable(text, 'mcp_servers.hagent', BODY);
  assert.is(
    out,
    '# top\na = 1\n\n[mcp_servers.hagent]\ncommand = "hagent"\nargs = ["mcp"]\n\n[other] # mine\nb = 2\n',
  );
  assert.is(setTable(out, 'mcp_servers.hagent', BODY), out, 'idempotent');
  assert.is(setTable(out, 'mcp_servers.hagent', null), '# top\na = 1\n\n[other] # mine\nb = 2\n');
});

test('a quoted header is the same table; another server whose name starts alike is not', () => {
  const text = '[mcp_servers."hagent"]\ncommand = "old"\n[mcp_servers.hagent2]\ncommand = "x"\n';
  assert.is(setTable(text, 'mcp_servers.hagent', null), '[mcp_servers.hagent2]\ncommand = "x"\n');
});

test('added at the end one blank line apart, to a file without a final newline or an empty one', () => {
  assert.is(
    setTable('a = 1', 'mcp_servers.hagent', BODY),
    'a = 1\n\n[mcp_servers.hagent]\ncommand = "hagent"\nargs = ["mcp"]\n',
  );
  assert.is(
    setTable('', 'mcp_servers.hagent', BODY),
    '[mcp_servers.hagent]\ncommand = "hagent"\nargs = ["mcp"]\n',
  );
  assert.is(setTable('a = 1\n', 'mcp_servers.hagent', null), 'a = 1\n', 'nothing to remove');
});

test('a key is replaced, added first in its table, or in a new table; removed alone; an array of tables is not that table', () => {
  assert.is(
    setKey('[features]\nweb = true\nshell_tool = true\n', 'features', 'shell_tool', 'false'),
    '[features]\nweb = true\nshell_tool = false\n',
  );
  assert.is(
    setKey('[features]  # flags\nweb = true\n', 'features', 'shell_tool', 'false'),
    '[features]  # flags\nshell_tool = false\nweb = true\n',
  );
  assert.is(
    setKey('[features]\nshell_tool = false\nweb = true\n', 'features', 'shell_tool', null),
    '[features]\nweb = true\n',
  );
  assert.is(
    setKey('a = 1\n', 'features', 'shell_tool', 'false'),
    'a = 1\n\n[features]\nshell_tool = false\n',
  );
  assert.is(setKey('a = 1\n', 'features', 'shell_tool', null), 'a = 1\n');
  // The table hagent added goes with its key; one with a comment of the user's stays.
  assert.is(
    setKey(setKey('a = 1\n', 'features', 'shell_tool', 'false'), 'features', 'shell_tool', null),
    'a = 1\n',
  );
  assert.is(
    setKey('[features]\nshell_tool = false\n\n[b]\nc = 1\n', 'features', 'shell_tool', null),
    '[b]\nc = 1\n',
  );
  assert.is(
    setKey('[features]\n# mine\nshell_tool = false\n', 'features', 'shell_tool', null),
    '[features]\n# mine\n',
  );
  const arrays = '[[features]]\nname = "x"\n';
  assert.is(setKey(arrays, 'features', 'shell_tool', null), arrays);
});

test('the results parse to what was meant', () => {
  const text = 'model = "o3"\n[mcp_servers.docs]\ncommand = "d"\n[features]\nweb = true\n';
  const out = setKey(setTable(text, 'mcp_servers.hagent', BODY), 'features', 'shell_tool', 'false');
  assert.equal(JSON.parse(JSON.stringify(parse(out))), {
    model: 'o3',
    mcp_servers: { docs: { command: 'd' }, hagent: { command: 'hagent', args: ['mcp'] } },
    features: { shell_tool: false, web: true },
  });
});

test.run();
