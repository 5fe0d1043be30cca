/**
 * The documentation keeps up with the code: every command of the CLI's own option table has its
 * section in docs/commands.md (with each of its options named there) and `--help` links it; every
 * error code of src/errors.ts has its row in docs/errors.md with its exit status, every key of
 * .hagent/config.json its row in docs/config.md; README.md stays
 * within 300 lines and gives the test command .ci/run runs; every relative link of README.md and
 * docs/ resolves, anchors included. A failure names what is missing.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { commandDocsLink } from '../../src/commands/docs.js';
import { COMMANDS, type CommandName } from '../../src/commands/options.js';
import { EXIT_STATUS } from '../../src/errors.js';
import { configJsonSchema } from '../../src/policy/config-schema.js';
import { hagent, ROOT } from '../helpers/index.js';

const t = suite('docs');

const read = (rel: string): string => readFileSync(path.join(ROOT, rel), 'utf8');

/** Every Markdown file of docs/ (sub-folders included), relative to the repository root. */
function docsPages(dir = 'docs'): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? docsPages(`${dir}/${e.name}`)
      : e.name.endsWith('.md')
        ? [`${dir}/${e.name}`]
        : [],
  );
}

/**
 * The lines of a Markdown text outside fenced code blocks (CommonMark: up to three blanks, then
 * three or more backticks or tildes; a backtick fence's info string holds no backtick, and the
 * closing fence is at least as long).
 */
function proseLines(text: string): string[] {
  let fence: string | null = null;
  return text.split('\n').filter((line) => {
    const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence === null) {
      if (!m || (m[1]![0] === '`' && m[2]!.includes('`'))) return true;
      fence = m[1]!;
      return false;
    }
    if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length && m[2]!.trim() === '')
      fence = null;
    return false;
  });
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, blanks to `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings; a repeated heading gets `-1`, `-2`, … as on GitHub. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of proseLines(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The text of a page's section under the heading whose anchor is `anchor`, up to the next `##`. */
function section(text: string, anchor: string): string | null {
  const lines = text.split('\n');
  const start = lines.findIndex(
    (l) => /^#{1,6}\s/.test(l) && slug(l.replace(/^#+/, '')) === anchor,
  );
  if (start < 0) return null;
  const end = lines.findIndex((l, i) => i > start && /^##?\s/.test(l));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

const COMMAND_NAMES = Object.keys(COMMANDS) as CommandName[];

t('every command of the option table has its section in docs/commands.md', () => {
  const page = read('docs/commands.md');
  const have = anchors(page);
  const missing = COMMAND_NAMES.filter((name) => !have.has(commandDocsLink(name).split('#')[1]!));
  assert.equal(
    missing,
    [],
    `docs/commands.md has no "## hagent <command>" section for: ${missing.join(', ')}`,
  );
});

t("each command's section names every one of its options", () => {
  const page = read('docs/commands.md');
  const missing: string[] = [];
  for (const name of COMMAND_NAMES) {
    const text = section(page, commandDocsLink(name).split('#')[1]!) ?? '';
    for (const option of Object.keys(COMMANDS[name].options)) {
      const spelled = option.length === 1 ? [`-${option} `] : [`--${option}`, `--no-${option}`];
      if (!spelled.some((s) => text.includes(s))) missing.push(`hagent ${name} ${spelled[0]}`);
    }
  }
  assert.equal(
    missing,
    [],
    `options not named in their docs/commands.md section: ${missing.join(', ')}`,
  );
});

t('--help of every command links its section of docs/commands.md', () => {
  const missing = COMMAND_NAMES.filter(
    (name) =>
      !hagent(ROOT, [...name.split(' '), '--help']).stdout.includes(
        `Docs: ${commandDocsLink(name)}`,
      ),
  );
  assert.equal(missing, [], `--help without its docs link: ${missing.join(', ')}`);
});

t('every error code of src/errors.ts is in docs/errors.md, with its exit status', () => {
  const page = read('docs/errors.md');
  const rows = new Map(
    [...page.matchAll(/^\| `([A-Z_]+)` \| (\d) \|/gm)].map((m) => [m[1]!, Number(m[2])]),
  );
  const missing = Object.keys(EXIT_STATUS).filter((code) => !rows.has(code));
  assert.equal(
    missing,
    [],
    `docs/errors.md has no "| \`CODE\` | exit | meaning | hint |" row for: ${missing.join(', ')}`,
  );
  const wrong = Object.entries(EXIT_STATUS)
    .filter(([code, status]) => rows.has(code) && rows.get(code) !== status)
    .map(([code, status]) => `${code} (exit ${status}, documented ${rows.get(code)})`);
  assert.equal(wrong, [], `docs/errors.md gives the wrong exit status for: ${wrong.join(', ')}`);
  const unknown = [...rows.keys()].filter((code) => !(code in EXIT_STATUS));
  assert.equal(
    unknown,
    [],
    `docs/errors.md documents codes src/errors.ts lacks: ${unknown.join(', ')}`,
  );
});

t('every key of .hagent/config.json has its row in docs/config.md', () => {
  const page = read('docs/config.md');
  const keys = Object.keys(
    (configJsonSchema() as { properties: Record<string, unknown> }).properties,
  ).filter((k) => k !== '$schema');
  const missing = keys.filter((k) => !new RegExp(`^\\| \`${k}[\`.]`, 'm').test(page));
  assert.equal(missing, [], `docs/config.md has no "| \`KEY\` |" row for: ${missing.join(', ')}`);
});

t('README.md is at most 300 lines', () => {
  const lines = read('README.md').split('\n').length - 1;
  assert.ok(lines <= 300, `README.md has ${lines} lines; move the details into docs/`);
});

t("the README's test command is the one .ci/run runs", () => {
  const fresh = read('README.md').split('## On a fresh machine')[1] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(fresh)?.[1] ?? '';
  const commands = block
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
  const ci = read('.ci/run')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const last = ci[ci.length - 1]!;
  assert.ok(
    commands.includes(last),
    `.ci/run ends with "${last}"; the README's fresh-machine lines are: ${commands.join(' | ')}`,
  );
});

t('every relative link of README.md and docs/ resolves, anchors included', () => {
  const broken: string[] = [];
  for (const page of ['README.md', ...docsPages()]) {
    const text = proseLines(read(page))
      .join('\n')
      .replace(/`[^`\n]*`/g, '``');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
      const [file = '', anchor] = target.split('#');
      const resolved = file ? path.join(path.dirname(page), decodeURIComponent(file)) : page;
      const stat = statSync(path.join(ROOT, resolved), { throwIfNoEntry: false });
      if (!stat) {
        broken.push(`${page}: ${target} (no such file)`);
        continue;
      }
      if (anchor !== undefined && !(stat.isFile() && anchors(read(resolved)).has(anchor)))
        broken.push(`${page}: ${target} (no heading with that anchor in ${resolved})`);
    }
  }
  assert.equal(broken, [], `broken links:\n${broken.join('\n')}`);
});

t.run();
