/** The words of a command line after expansion: its options, their values and its operands. */
import path from 'node:path';
import type { Field } from './words.js';

/** An absolute path for a field, or null when the folder is unknown. */
export function resolveIn(f: Field, cwd: string | null): string | null {
  if (f.dynamic) return null;
  if (path.isAbsolute(f.value)) return path.normalize(f.value);
  if (cwd === null) return null;
  return path.resolve(cwd, f.value);
}

/**
 * Index of the first operand: options are skipped, and those in `withValue` take the next word.
 * Long options with `=` carry their value.
 */
export function skipOptions(args: readonly Field[], withValue: readonly string[]): number {
  let i = 0;
  for (; i < args.length; i++) {
    const v = args[i]!.value;
    if (args[i]!.dynamic) return i;
    if (v === '--') return i + 1;
    if (!v.startsWith('-') || v === '-') return i;
    if (withValue.includes(v)) i++;
  }
  return i;
}

/** The value of an option (`-o X`, `-oX`, `--out=X`, `--out X`), the last one given. */
export function optionValue(args: readonly Field[], names: readonly string[]): Field | undefined {
  let found: Field | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = a.value;
    if (v === '--') break;
    for (const n of names) {
      if (v === n) found = args[i + 1];
      else if (n.startsWith('--') && v.startsWith(`${n}=`))
        found = { ...a, value: v.slice(n.length + 1) };
      else if (
        !n.startsWith('--') &&
        n.length === 2 &&
        v.startsWith(n) &&
        v.length > 2 &&
        !v.startsWith('--')
      )
        found = { ...a, value: v.slice(2) };
      else if (!n.startsWith('--') && n.length === 2 && /^-[a-zA-Z]+$/.test(v) && v.endsWith(n[1]!))
        found = args[i + 1]; // -sSLo FILE
    }
  }
  return found;
}

/** The operands of a command (not options), skipping the values of `withValue` options. */
export function operands(
  args: readonly Field[],
  withValue: readonly string[] = [],
): { list: Field[]; end: number; dynamicOption: string | null } {
  const list: Field[] = [];
  let dashdash = false;
  let dynamicOption: string | null = null;
  let end = args.length;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!dashdash && a.value === '--' && !a.dynamic) {
      dashdash = true;
      end = i;
      continue;
    }
    if (!dashdash && !a.dynamic && a.value.startsWith('-') && a.value !== '-') {
      if (withValue.includes(a.value)) i++;
      continue;
    }
    if (a.dynamic && !dashdash && /^["']?-/.test(a.value)) dynamicOption ??= a.value;
    list.push(a);
  }
  return { list, end, dynamicOption };
}
