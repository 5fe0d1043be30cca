/**
 * Every tool's structured result holds only what its declared output schema allows. Clients
 * that check results against the schema (Gemini CLI does: `additionalProperties: false`) refuse
 * a result carrying one field more as a tool error, though the edit was made.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, startSession } from '../helpers/index.js';
import { connectMcp } from '../helpers/mcp.js';

const test = suite('hagent mcp: results match their output schemas');

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
};

/** Paths in `data` that `schema` forbids (properties not declared in a closed object), recursively. */
function extra(schema: Schema | undefined, data: unknown, at = '$'): string[] {
  if (!schema || data === null || typeof data !== 'object') return [];
  const options = schema.anyOf ?? schema.oneOf;
  if (options) {
    const each = options.map((o) => extra(o, data, at));
    return each.some((e) => e.length === 0) ? [] : each[0]!;
  }
  if (Array.isArray(data)) return data.flatMap((d, i) => extra(schema.items, d, `${at}[${i}]`));
  const props = schema.properties ?? {};
  return Object.entries(data as Record<string, unknown>).flatMap(([k, v]) => {
    if (k in props) return extra(props[k], v, `${at}.${k}`);
    return schema.additionalProperties === false
      ? [`${at}.${k}`]
      : extra(
          typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined,
          v,
          `${at}.${k}`,
        );
  });
}

test('each tool, called for success, returns only declared properties', async () => {
  const repo = makeRepo({ 'a.txt': 'one\ntwo\n' });
  startSession(repo, ['--name', 's1']);
  const c = await connectMcp(repo, ['--session', 's1']);
  try {
    const { tools } = await c.client.listTools();
    const schemas = new Map(tools.map((t) => [t.name, t.outputSchema as Schema]));
    const calls: [string, Record<string, unknown>][] = [
      ['status', {}],
      ['read', { path: 'a.txt' }],
      ['edit', { path: 'a.txt', old_string: 'one', new_string: 'uno' }],
      ['apply_patch', { patch: '*** Begin Patch\n*** Add File: b.txt\n+bee\n*** End Patch\n' }],
      ['apply_patch', { patch: '--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-bee\n+be\n' }],
      ['write', { path: 'c.txt', content: 'sea\n' }],
      [
        'check',
        { patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n-uno\n+one\n*** End Patch\n' },
      ],
      ['exec', { command: 'echo shell > d.txt' }],
      ['undo', {}],
      ['redo', {}],
      ['sync', {}],
      ['review', { stat: true, patches: true }],
      ['log', {}],
    ];
    for (const [name, args] of calls) {
      // The SDK client checks the result against the schema itself, and throws.
      const r = await c
        .call(name, args)
        .catch((e: Error) => assert.unreachable(`${name}: ${e.message}`) as never);
      assert.not.ok(r.isError, `${name}: ${r.text}`);
      assert.ok(schemas.get(name), `${name} declares an output schema`);
      assert.equal(
        extra(schemas.get(name), r.data),
        [],
        `${name} returns only what its schema declares`,
      );
    }
  } finally {
    await c.close();
  }
});

test.run();
