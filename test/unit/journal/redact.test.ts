/** redactSecrets: pure, on many secret shapes, and leaves ordinary code alone. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { redactSecrets } from '../../../src/journal/index.js';

const test = suite('redactSecrets');

/** [title, input, a substring that must be gone, a substring that must remain] */
const SECRETS: Array<[string, string, string, string]> = [
  [
    'an AWS access key id',
    '+const id = "AKIAIOSFODNN7EXAMPLE";',
    'AKIAIOSFODNN7EXAMPLE',
    '+const id = "',
  ],
  [
    'an AWS secret access key in an ini file',
    '+aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    'wJalrXUtnFEMI',
    'aws_secret_access_key = ',
  ],
  ['a GitHub classic token', '+GH=ghp_0123456789abcdefghijABCDEFGHIJ012345', 'ghp_0123', '+GH='],
  [
    'a GitHub OAuth token',
    'token gho_16C7e42F292c6912E7710c838347Ae178B4a in text',
    'gho_16C7',
    'in text',
  ],
  [
    'a GitHub fine-grained token',
    'x github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz',
    'github_pat_11',
    'x ',
  ],
  ['a Slack bot token', '+slack: xoxb-1234567890-abcdefghij', 'xoxb-1234567890', '+slack'],
  ['a Slack user token', 'use xoxp-1234567890-0987654321-abcdef', 'xoxp-1234567890', 'use '],
  [
    'an OpenAI project key',
    '+OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345',
    'sk-proj-abc',
    'OPENAI_API_KEY=',
  ],
  [
    'an Anthropic key',
    "+key = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123'",
    'sk-ant-api03',
    '+key = ',
  ],
  ['a Stripe live key', 'stripe(sk_live_4eC39HqLyjWDarjtT1zdp7dc)', 'sk_live_4eC39', 'stripe('],
  ['a Google API key', 'GOOGLE=AIzaSyA-1234567890abcdefghijklmnopqrstu', 'AIzaSyA-123', 'GOOGLE='],
  [
    'an npm token',
    '//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789',
    'npm_abcdef',
    '//registry.npmjs.org/:_authToken=',
  ],
  ['a GitLab token', 'glpat-abcdefghij0123456789', 'glpat-abc', ''],
  [
    'a JWT',
    'Cookie: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    'eyJhbGciOiJIUzI1NiJ9',
    'Cookie: ',
  ],
  ['password=value', '+password=hunter2', 'hunter2', '+password='],
  [
    'an env var ending in PASSWORD',
    '+DB_PASSWORD="correct horse battery staple"',
    'correct horse',
    '+DB_PASSWORD="',
  ],
  ['YAML secret: value', '+  secret: abc123', 'abc123', '+  secret: '],
  ['token = value', '+token = tok_4f9a8b', 'tok_4f9a8b', '+token = '],
  ['a JSON apiKey', '+  "apiKey": "abcdef",', 'abcdef', '"apiKey": "'],
  ['a camelCase clientSecret', 'clientSecret: "s3cr3t-v4lue"', 's3cr3t-v4lue', 'clientSecret: "'],
  [
    'a Python private_key assignment',
    "private_key = 'MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu'",
    'MIIBOgIBAAJB',
    'private_key = ',
  ],
  [
    'a Go := assignment of a secret',
    '+\tapiSecret := "qwerty-123"',
    'qwerty-123',
    'apiSecret := "',
  ],
  ['a Ruby => hash entry', "+  password => 'pa55word',", 'pa55word', 'password => '],
  [
    'a password in a URL',
    '+DATABASE_URL=postgres://admin:s3cr3tpw@db.example.com:5432/app',
    's3cr3tpw',
    'postgres://admin:',
  ],
  [
    'a Bearer header value',
    '+  headers: { Authorization: "Bearer abcdefghijklmnop" }',
    'abcdefghijklmnop',
    'Authorization: "Bearer ',
  ],
  [
    'a long high-entropy literal in assignment position',
    '+blob = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5QUJDREVGRw"',
    'Zm9vYmFy',
    '+blob = "',
  ],
];

for (const [title, input, gone, kept] of SECRETS) {
  test(`redacts ${title}`, () => {
    const r = redactSecrets(input);
    assert.not.match(r.text, gone);
    assert.match(r.text, kept);
    assert.match(r.text, '[REDACTED:');
    assert.ok(r.redactions >= 1);
  });
}

test('redacts a whole RSA private key block in a patch, keeping the lines around it', () => {
  const input = [
    '+before',
    '+-----BEGIN RSA PRIVATE KEY-----',
    '+MIIEpAIBAAKCAQEA1234567890abcdef',
    '+abcdefABCDEF12345678==',
    '+-----END RSA PRIVATE KEY-----',
    '+after',
    '',
  ].join('\n');
  const r = redactSecrets(input);
  assert.is(r.text, '+before\n+[REDACTED:private-key]\n+after\n');
  assert.is(r.redactions, 1);
});

test('redacts OpenSSH, EC and PGP private key blocks', () => {
  for (const kind of [
    'OPENSSH PRIVATE KEY',
    'EC PRIVATE KEY',
    'PRIVATE KEY',
    'ENCRYPTED PRIVATE KEY',
    'PGP PRIVATE KEY BLOCK',
  ]) {
    const r = redactSecrets(
      `x\n-----BEGIN ${kind}-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END ${kind}-----\ny`,
    );
    assert.is(r.text, 'x\n[REDACTED:private-key]\ny', kind);
  }
});

test('redacts a private key block whose END line is missing, up to the first non-key line', () => {
  const r = redactSecrets(
    '+-----BEGIN OPENSSH PRIVATE KEY-----\n+b3BlbnNzaC1rZXktdjEAAAAA\n+QUJDREVGR0hJSktMTU5PUFFS\n+code();\n',
  );
  assert.is(r.text, '+[REDACTED:private-key]\n+code();\n');
});

test('counts every redaction in a text with several secrets', () => {
  const r = redactSecrets('+password=a1\n+token: b2\n+x = AKIAIOSFODNN7EXAMPLE\n');
  assert.is(r.redactions, 3);
});

test('leaves ordinary code and public values alone', () => {
  const plain = [
    '+token = getToken()',
    '+const token = config.token;',
    '+  password: string;',
    '+password = process.env.DB_PASSWORD',
    '+secret: ${{ secrets.DEPLOY_KEY }}',
    '+max_tokens = 512',
    '+token_type = "Bearer"',
    '+const secretary = "Bob"',
    'if (token == "x") {}',
    '+commit = "0123456789abcdef0123456789abcdef01234567"',
    '+"integrity": "sha512-Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5QUJDREVGRw=="',
    '+name = "hagent"',
    '+url = "https://example.com/a/b"',
    '+password = ""',
    '@@ -1,3 +1,4 @@ function login(user, password) {',
  ].join('\n');
  const r = redactSecrets(plain);
  assert.is(r.text, plain);
  assert.is(r.redactions, 0);
});

test('is pure: the same input gives the same output, and redacting twice changes nothing more', () => {
  const input = '+API_KEY=abcdef123456\n+ghp_0123456789abcdefghijABCDEFGHIJ012345\n';
  const once = redactSecrets(input);
  assert.equal(redactSecrets(input), once);
  const twice = redactSecrets(once.text);
  assert.is(twice.text, once.text);
  assert.is(twice.redactions, 0);
});

test.run();
