/**
 * Secret redaction for patch text kept in the journal. PURE: text in, text out; no I/O, no clock.
 *
 * The journal keeps the patch of every attempt so a human can see what an agent tried; the real
 * patch of a successful apply lives in its commit. A secret an agent pasted into a patch must not
 * be copied into a second, long-lived file, so the journal's copy is redacted. The rules lean
 * towards redacting too much: a journal copy that hides a harmless value costs little, a leaked
 * key costs a rotation.
 */

/** A redacted patch text and how many secrets were replaced. */
export interface Redacted {
  text: string;
  /** Number of replacements made (0 when nothing looked secret). */
  redactions: number;
}

const MARK = (kind: string) => `[REDACTED:${kind}]`;

/**
 * Token shapes recognised anywhere in the text, by their vendor prefix. Each is replaced whole.
 * Sources: the vendors' documented formats (AWS key ids, GitHub `gh?_` / `github_pat_`, Slack
 * `xox?-`, OpenAI/Anthropic `sk-`, Stripe `sk_live_`, Google `AIza`, npm `npm_`, GitLab `glpat-`).
 */
const TOKEN_PATTERNS: ReadonlyArray<readonly [kind: string, pattern: RegExp]> = [
  ['aws-access-key-id', /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b/g],
  ['github-token', /\bgh[pousr]_[A-Za-z0-9]{30,255}\b/g],
  ['github-token', /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g],
  ['slack-token', /\bxox[abposr]-[A-Za-z0-9-]{10,}/g],
  ['slack-webhook', /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]+/g],
  ['stripe-key', /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}\b/g],
  ['api-key', /\bsk-[A-Za-z0-9_-]{20,}/g],
  ['google-api-key', /\bAIza[0-9A-Za-z_-]{35}\b/g],
  ['npm-token', /\bnpm_[A-Za-z0-9]{36}\b/g],
  ['gitlab-token', /\bglpat-[A-Za-z0-9_-]{20,}/g],
  ['jwt', /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g],
];

/** `-----BEGIN … PRIVATE KEY-----` through its END line (lines may carry diff prefixes). */
const PEM_BLOCK =
  /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END \1PRIVATE KEY\2-----/g;
/** A BEGIN line whose END is missing (a truncated patch): the BEGIN line and the base64 lines after it. */
const PEM_OPEN =
  /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\r?\n[+\- ]?(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]+: [^\r\n]*|)(?=\r?\n|$))*/g;

/** `scheme://user:password@host`: the password part. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)([^\s@/]+)(@)/gi;
/** `Authorization: Bearer …` / `Basic …` / `token …` header values. */
const AUTH_HEADER =
  /\b(Authorization["']?\s*[:=]\s*["']?(?:Bearer|Basic|Token|token)\s+)([A-Za-z0-9._~+/=-]{8,})/g;

/**
 * An assignment: a key (identifier, possibly dotted/dashed, possibly quoted), then `=`, `:`, `:=`
 * or `=>` (not `==`), then a quoted or bare value. Groups: 1 key, 2 separator, 3 quote and 4 the
 * quoted value, or 5 the bare value.
 */
// A key starts only where no key character precedes it, and is at most 128 characters: without
// both, a long run of word characters is rescanned from every position (quadratic time).
const ASSIGNMENT =
  /(?<![\w$.-])([A-Za-z_$][\w$.-]{0,127})(["']?[ \t]*(?::=|=>|[:=](?![=>]))[ \t]*)(?:(["'`])([^"'`\n]*)\3|([^\s"'`,;]+))/g;

/** Words that make a key secret when one of them ends the key (optionally followed by KEY_TAIL). */
const SECRET_WORDS = new Set([
  'password',
  'passwd',
  'pwd',
  'pass',
  'passphrase',
  'secret',
  'token',
  'apikey',
  'credential',
  'credentials',
  'privatekey',
  'accesskey',
  'secretkey',
  'authkey',
  'auth',
]);
const KEY_TAIL = new Set([
  'key',
  'value',
  'base',
  'str',
  'string',
  'text',
  'b64',
  'base64',
  'hex',
  'raw',
  'env',
]);

/** Splits a key into lower-case words: `dbPassword` → db,password; `API_KEY` → api,key. */
function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

/** True when the key names a secret: a secret word (or `api key`, `private key`…) at its end. */
function isSecretKey(key: string): boolean {
  const words = keyWords(key);
  // join pairs such as api+key, private+key, access+key, client+secret → single words
  const joined: string[] = [];
  for (const w of words) {
    const prev = joined[joined.length - 1];
    if (
      w === 'key' &&
      prev &&
      ['api', 'private', 'access', 'secret', 'auth', 'signing', 'encryption', 'master'].includes(
        prev,
      )
    )
      joined[joined.length - 1] =
        prev === 'api' ||
        prev === 'private' ||
        prev === 'access' ||
        prev === 'secret' ||
        prev === 'auth'
          ? `${prev}key`
          : 'secretkey';
    else joined.push(w);
  }
  let end = joined.length;
  while (end > 0 && KEY_TAIL.has(joined[end - 1]!)) end--;
  if (end === 0) return false;
  return SECRET_WORDS.has(joined[end - 1]!);
}

/** Values that are code or placeholders, not secrets: `getToken()`, `process.env.X`, `${VAR}`, `null`. */
function looksLikeReference(value: string, quoted: boolean): boolean {
  if (value.startsWith('[REDACTED')) return true;
  if (/^\$\{\{?[^}]*\}\}?$|^\{\{[^}]*\}\}$|^<[^>]*>$|^%\([^)]*\)s$|^\*+$|^x+$/i.test(value))
    return true;
  if (quoted) return value.length === 0;
  if (
    /^(?:null|nil|none|undefined|true|false|os\.environ.*|process\.env.*|env\..*|\$.*)$/i.test(
      value,
    )
  )
    return true;
  // a type annotation (`password: string`), not a value
  if (
    /^(?:string|number|boolean|bigint|any|unknown|str|int|bytes|bool|String|Option<.*|Optional\[.*|SecretStr|&str|\[\]u8)$/.test(
      value,
    )
  )
    return true;
  // member access or a call: code, not a literal (`config.token`, `getSecret()`, `args[0]`)
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*|\(|\[)/.test(value)) return true;
  return false;
}

/** Shannon entropy of `s` in bits per character. */
function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/**
 * A long random-looking literal: ≥ 20 characters of base64/url-safe alphabet, with upper case,
 * lower case and digits, and ≥ 3.5 bits of entropy per character. Pure hex strings (commit ids,
 * checksums) and SRI hashes (`sha512-…`) are public by nature and left alone.
 */
function isHighEntropy(value: string): boolean {
  if (value.length < 20 || !/^[A-Za-z0-9+/=_-]+$/.test(value)) return false;
  if (/^[0-9a-f]+$/i.test(value) || /^sha(?:1|256|384|512)-/.test(value)) return false;
  if (!/[A-Z]/.test(value) || !/[a-z]/.test(value) || !/[0-9]/.test(value)) return false;
  return entropy(value) >= 3.5;
}

/**
 * Replaces secrets in `text` with `[REDACTED:<kind>]` and counts them. Recognised: private key
 * blocks (`-----BEGIN … PRIVATE KEY-----` to END, or to the end of the base64 lines when END is
 * missing); vendor tokens (AWS key ids, GitHub, Slack, Stripe, OpenAI/Anthropic `sk-`, Google,
 * npm, GitLab, JWTs); passwords in URLs; Authorization header values; the value of any
 * assignment whose key ends in a secret word (`password=`, `DB_PASSWORD:`, `"apiKey": "…"`,
 * `secret: …`, `token = …`, `client_secret`), unless the value is code or a placeholder
 * (`getToken()`, `process.env.X`, `${VAR}`); and long high-entropy literals in assignment
 * position. Keys, quotes, diff prefixes and line structure are kept, so the text still reads as
 * the patch it was. Pure; the same input always gives the same output.
 * @param text any text (a patch, a message). @returns `{text, redactions}`.
 */
export function redactSecrets(text: string): Redacted {
  let redactions = 0;
  const count = (replacement: string) => {
    redactions++;
    return replacement;
  };
  let out = text.replace(PEM_BLOCK, () => count(MARK('private-key')));
  out = out.replace(PEM_OPEN, () => count(MARK('private-key')));
  for (const [kind, pattern] of TOKEN_PATTERNS) out = out.replace(pattern, () => count(MARK(kind)));
  out = out.replace(
    URL_CREDENTIALS,
    (_m, head: string, _pw: string, at: string) => `${head}${count(MARK('password'))}${at}`,
  );
  out = out.replace(AUTH_HEADER, (_m, head: string) => `${head}${count(MARK('auth'))}`);
  out = out.replace(
    ASSIGNMENT,
    (
      whole,
      key: string,
      sep: string,
      quote: string | undefined,
      quotedValue: string | undefined,
      bare: string | undefined,
    ) => {
      const q = quote ?? '';
      const value = quotedValue ?? bare ?? '';
      if (isSecretKey(key) && !looksLikeReference(value, quote !== undefined))
        return `${key}${sep}${q}${count(MARK('secret'))}${q}`;
      if (isHighEntropy(value)) return `${key}${sep}${q}${count(MARK('high-entropy'))}${q}`;
      return whole;
    },
  );
  return { text: out, redactions };
}
