/**
 * The verb rules: what each command does to files and which part of its line runs as another
 * command, in one table keyed by the command's name. Launchers (sudo, nice, timeout, …) hand the
 * rest of their line back to the walk; writers check every path they write or delete; shell
 * builtins keep the walk's folder and variables. A name missing from the table falls back to the
 * walk's generic rules (shells, interpreters, disk tools).
 */
import path from 'node:path';
import { operands, optionValue, resolveIn, skipOptions } from './args.js';
import { checkGit } from './git.js';
import { checkHagent, isHagentName, namesMarker, refuseMarkerChange } from './hagent.js';
import { checkInlineCode, INTERPRETERS } from './interp.js';
import { placeOf } from './paths.js';
import type { Run, Walker } from './walk.js';
import type { Field } from './words.js';

/** One command line handed to its verb: the command's name and the words after it. */
export interface Call {
  w: Walker;
  name: string;
  args: Field[];
  r: Run;
  /** Walks the words from `args[i]` on as a command line of its own (what launchers run). */
  rest(i: number, patch?: Partial<Run>): void;
}

/** The rule of one verb: returns when the line is allowed, throws Blocked when it is refused. */
export type Verb = (call: Call) => void;

/** strace and ltrace run the rest of the line; `-o FILE` writes the trace there. */
function traced({ w, name, args, r, rest }: Call): void {
  const i = skipOptions(args, [
    '-o',
    '-e',
    '-p',
    '-s',
    '-u',
    '-E',
    '-a',
    '-b',
    '-I',
    '-O',
    '-P',
    '-S',
    '-X',
  ]);
  const out = optionValue(args.slice(0, i), ['-o']);
  if (out) w.checkWrite(out, r.scope, `${name} -o`, r.text);
  return rest(i);
}

/**
 * taskset and chrt take a mask or a priority before the command; with -p they change a running
 * process and run nothing.
 */
function pinned({ args, rest }: Call): void {
  const i = skipOptions(args, ['-p']);
  return rest(args.slice(0, i).some((a) => a.value === '-p') ? args.length : i + 1);
}

/**
 * unshare, firejail, runuser and sg run the rest of the line as another user, group or namespace:
 * still on this machine.
 */
function asOther({ args, rest }: Call): void {
  return rest(
    skipOptions(args, ['-u', '--user', '-g', '--group', '-S', '-G', '--setuid', '--setgid']),
  );
}

/** `script -c CODE` runs CODE in a shell. */
function scriptCommand({ w, args, r }: Call): void {
  const k = args.findIndex((a) => /^-[a-zA-Z]*c$/.test(a.value));
  const call = k >= 0 ? args[k + 1] : optionValue(args, ['--command']);
  if (call) w.shellString(call, r, []);
  return;
}

/**
 * `source FILE` runs FILE's code: known text on stdin is walked, a file descriptor or a name only
 * known when it runs refuses.
 */
function sourced({ w, name, args, r }: Call): void {
  const file = args[0];
  if (file && (file.dynamic || /^\/dev\/(fd\/\d+|stdin)$|^\/proc\/self\/fd\//.test(file.value))) {
    if (!file.dynamic && file.value === '/dev/stdin' && r.stdin?.literal !== undefined)
      return w.source(r.stdin.literal, r.scope, r.depth + 1);
    return w.block(
      'unresolved',
      `${name} reads code from ${file.value}, only known when it runs`,
      r.text,
    );
  }
  return;
}

/** awk programs are checked as inline code, and `-i inplace` rewrites the files it reads. */
function awk({ w, name, args, r }: Call): void {
  checkInlineCode(w, name, args, r);
  const k = args.findIndex((a, j) => a.value === '-i' && args[j + 1]?.value === 'inplace');
  if (k < 0 && !args.some((a) => a.value === '-iinplace' || a.value === '--include=inplace'))
    return;
  const ops = operands(args, [
    '-i',
    '-f',
    '-v',
    '-F',
    '--include',
    '--file',
    '--assign',
    '--field-separator',
  ]);
  const hasProgramFile = args.some((a) => a.value === '-f' || a.value.startsWith('--file'));
  for (const f of hasProgramFile ? ops.list : ops.list.slice(1))
    w.checkWrite(f, r.scope, `${name} -i inplace`, r.text);
  return;
}

/** sudo runs the rest of the line, in the folder of `-D`/`--chdir` when one is given. */
function sudo({ args, r, rest }: Call): void {
  const i = skipOptions(args, [
    '-u',
    '-g',
    '-h',
    '-p',
    '-C',
    '-D',
    '-R',
    '-r',
    '-t',
    '-T',
    '-U',
    '--user',
    '--group',
    '--host',
    '--prompt',
    '--chdir',
    '--chroot',
    '--role',
    '--type',
    '--other-user',
    '--close-from',
    '--command-timeout',
  ]);
  const dir = optionValue(args.slice(0, i), ['-D', '--chdir']);
  return rest(i, dir ? { scope: { cwd: resolveIn(dir, r.scope.cwd), vars: r.scope.vars } } : {});
}

/** time runs the rest of the line; `-o FILE` writes its report there. */
function timed({ w, args, r, rest }: Call): void {
  const i = skipOptions(args, ['-f', '-o', '--format', '--output']);
  const out = optionValue(args.slice(0, i), ['-o', '--output']);
  if (out) w.checkWrite(out, r.scope, 'time -o', r.text);
  return rest(i);
}

/** `command NAME` runs NAME; `command -v`/`-V` only looks it up. */
function commandBuiltin({ args, rest }: Call): void {
  const i = skipOptions(args, []);
  // -v and -V look the name up and run nothing.
  if (args.slice(0, i).some((a) => /^-[a-zA-Z]*[vV]/.test(a.value))) return;
  return rest(i);
}

/**
 * yarn, pnpm and bun run a package's bin by name (hagent among them); `exec`, `x` and `dlx` run the
 * rest of the line.
 */
function packageManager({ w, name, args, r, rest }: Call): void {
  // `yarn hagent land`, `yarn run hagent land`, `pnpm hagent …`: these run a package's bin by
  // name.
  const bin = name !== 'npm' && args[0]?.value === 'run' ? 1 : 0;
  if (name !== 'npm' && args[bin] && isHagentName(args[bin]!.value))
    return checkHagent(w, args.slice(bin + 1), r);
  if (!['exec', 'x', 'dlx'].includes(args[0]?.value ?? '')) {
    if (name === 'bun' && INTERPRETERS.has(name)) return checkInlineCode(w, name, args, r);
    return;
  }
  return rest(
    1 + skipOptions(args.slice(1), ['-p', '--package', '-c', '--call', '-w', '--workspace']),
  );
}

/** npx, bunx and pnpx run the rest of the line; `-c CODE` runs shell code first. */
function packageRunner({ w, args, r, rest }: Call): void {
  const i = skipOptions(args, ['-p', '--package', '-c', '--call']);
  const call = optionValue(args.slice(0, i), ['-c', '--call']);
  if (call) w.shellString(call, r, []);
  return rest(i);
}

/** flock runs `-c CODE`, or the rest of the line after its lock file. */
function flock({ w, args, r, rest }: Call): void {
  const i = skipOptions(args, ['-w', '--timeout', '-E', '--conflict-exit-code', '-c', '--command']);
  const call = optionValue(args.slice(0, i), ['-c', '--command']);
  if (call) return w.shellString(call, r, []);
  return rest(i + 1);
}

/** watch joins its words into shell code and runs it again and again. */
function watch({ w, args, r }: Call): void {
  const i = skipOptions(args, ['-n', '--interval', '-d', '--differences', '-q', '--equexit']);
  return w.joined(args.slice(i), r);
}

/** `su -c CODE` runs CODE as shell code, as another user of this machine. */
function su({ w, args, r }: Call): void {
  const call = optionValue(args, ['-c', '--command']);
  if (call) w.shellString(call, r, []);
  return;
}

/**
 * A trap handler runs on its signal or at exit: checked once the script is walked, with the
 * variables the script set by then.
 */
function trap({ w, args, r }: Call): void {
  const handler = args[0];
  if (handler && !handler.value.startsWith('-'))
    w.defer(() => w.shellString(handler, { ...r, env: new Map([...r.env, ...r.scope.vars]) }, []));
  return;
}

/** An alias's text runs wherever its name is used later: checked as shell code now. */
function alias({ w, args, r }: Call): void {
  for (const a of args) {
    const eq = a.value.indexOf('=');
    if (eq > 0) w.shellString({ ...a, value: a.value.slice(eq + 1) }, r, []);
  }
  return;
}

/**
 * export, declare and their kin set variables later words expand; none may change the agent marker.
 */
function declare({ w, name, args, r }: Call): void {
  const marker = args.find((a) => namesMarker(a.value));
  if (marker) return refuseMarkerChange(w, `${name} ${marker.value}`, r.text);
  for (const a of args) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(a.value);
    if (m) r.scope.vars.set(m[1]!, a.dynamic ? null : m[2]!);
    else if (a.dynamic) continue;
  }
  return;
}

/** unset empties variables; the agent marker may not be unset. */
function unset({ w, args, r }: Call): void {
  const marker = args.find((a) => namesMarker(a.value));
  if (marker) return refuseMarkerChange(w, `unset ${marker.value}`, r.text);
  for (const a of args) if (!a.value.startsWith('-')) r.scope.vars.set(a.value, '');
  return;
}

/** read, mapfile and getopts set variables to input only known when it runs. */
function readInput({ args, r }: Call): void {
  for (const a of args) if (/^[A-Za-z_]\w*$/.test(a.value)) r.scope.vars.set(a.value, null);
  return;
}

/** rm and its kin delete their operands: recursively with -r, or by nature (rimraf, trash, del). */
function remove({ w, name, args, r }: Call): void {
  const ops = operands(args);
  const recursive =
    name === 'rimraf' ||
    name === 'trash' ||
    name === 'trash-put' ||
    name === 'del' ||
    args.some((a, i) => i < ops.end && /^(-[a-zA-Z]*[rR]|--recursive)/.test(a.value));
  if (ops.dynamicOption)
    w.block(
      'unresolved',
      `an option of ${name} is only known when it runs (${ops.dynamicOption})`,
      r.text,
    );
  for (const f of ops.list) w.checkDelete(f, r.scope, recursive, name, r.text);
  return;
}

/** crontab replaces or removes the user's scheduled jobs (kept outside the worktree); -l lists them. */
function crontab({ w, args, r }: Call): void {
  if (args.length === 1 && args[0]!.value === '-l') return;
  return w.block('write-outside', "crontab changes the user's scheduled jobs", r.text);
}

/**
 * mv removes its sources and writes its destination: every source must be removable, the
 * destination writable (a folder it moves into, such as the temp folder, is not taken away).
 */
function move({ w, args, r }: Call): void {
  const ops = operands(args, ['-t', '--target-directory', '-S', '--suffix']);
  const target = optionValue(args, ['-t', '--target-directory']);
  if (target) w.checkWrite(target, r.scope, 'mv -t', r.text);
  const sources = target || ops.list.length < 2 ? ops.list : ops.list.slice(0, -1);
  for (const f of sources) w.checkWrite(f, r.scope, 'mv (it removes its sources)', r.text, true);
  if (sources.length < ops.list.length)
    w.checkWrite(ops.list[ops.list.length - 1]!, r.scope, "mv's destination", r.text);
  return;
}

/**
 * cp, install, ln, rsync and scp write their destination (remote ones aside); `ln -s` is recorded
 * so later paths through the link are followed.
 */
function copy({ w, name, args, r }: Call): void {
  const ops = operands(args, [
    '-t',
    '--target-directory',
    '-S',
    '--suffix',
    '-m',
    '--mode',
    '-o',
    '--owner',
    '-g',
    '--group',
    '-e',
    '--exclude',
    '--include',
    '--filter',
    '-f',
  ]);
  if (name === 'rsync' && args.some((a) => a.value === '--remove-source-files')) {
    for (const src of ops.list.slice(0, -1))
      if (!/^[^/]*:/.test(src.value))
        w.checkDelete(src, r.scope, true, 'rsync --remove-source-files', r.text);
  }
  const target = optionValue(args, ['-t', '--target-directory']);
  if (target) w.checkWrite(target, r.scope, `${name} -t`, r.text);
  else if (
    ops.list.length >=
    (name === 'install' && args.some((a) => a.value === '-d') ? 1 : name === 'ln' ? 1 : 2)
  ) {
    const dests =
      name === 'install' && args.some((a) => a.value === '-d')
        ? ops.list
        : [ops.list[ops.list.length - 1]!];
    for (const d of dests) {
      if (name === 'scp' || name === 'rsync') {
        if (/^[^/]*:/.test(d.value)) continue;
      }
      // ln -s TARGET: the link lands in the current folder.
      if (name === 'ln' && ops.list.length === 1) continue;
      w.checkWrite(d, r.scope, `${name}'s destination`, r.text);
    }
  }
  if (
    name === 'ln' &&
    args.some((a) => /^-[a-zA-Z]*s|^--symbolic$/.test(a.value)) &&
    ops.list.length >= 1 &&
    ops.list.length <= 2 &&
    r.scope.cwd
  ) {
    const [targetWord, linkWord] = ops.list;
    const link = resolveIn(
      linkWord ?? { value: path.basename(targetWord!.value), dynamic: false, glob: false },
      r.scope.cwd,
    );
    if (link && !targetWord!.dynamic)
      w.addLink(link, path.resolve(path.dirname(link), targetWord!.value));
  }
  return;
}

/** tee, touch, mkdir, truncate, mkfifo and mknod write every operand. */
function create({ w, name, args, r }: Call): void {
  const ops = operands(args, [
    '-s',
    '--size',
    '-m',
    '--mode',
    '-r',
    '--reference',
    '-d',
    '--date',
    '-t',
  ]);
  for (const f of ops.list) w.checkWrite(f, r.scope, name, r.text);
  return;
}

/**
 * chmod, chown and their kin change every file after the mode (or all of them with --reference).
 */
function changeAttributes({ w, name, args, r }: Call): void {
  const ops = operands(args, ['--reference']);
  const files = args.some((a) => a.value.startsWith('--reference')) ? ops.list : ops.list.slice(1);
  for (const f of files) w.checkWrite(f, r.scope, name, r.text);
  return;
}

/** `sed -i` and `perl -i` rewrite their file operands; perl's inline code is checked as well. */
function editInPlace({ w, name, args, r }: Call): void {
  const inPlace = args.some(
    (a) =>
      (/^(-[a-zA-Z]*i|--in-place)/.test(a.value) && !a.value.startsWith('--i')) ||
      a.value.startsWith('--in-place'),
  );
  if (name === 'perl') checkInlineCode(w, name, args, r);
  if (!inPlace) return;
  const ops = operands(
    args,
    name === 'sed'
      ? ['-e', '--expression', '-f', '--file', '-l', '--line-length']
      : ['-e', '-E', '-M', '-m', '-I'],
  );
  const hasScriptOption = args.some(
    (a) =>
      /^(-e|--expression|-f|--file|-[a-zA-Z]*e)$/.test(a.value) ||
      a.value.startsWith('--expression='),
  );
  const files = hasScriptOption ? ops.list : ops.list.slice(1);
  for (const f of files) w.checkWrite(f, r.scope, `${name} -i`, r.text);
  return;
}

/** `dd of=FILE` writes FILE. */
function dd({ w, args, r }: Call): void {
  for (const a of args)
    if (a.value.startsWith('of='))
      w.checkWrite({ ...a, value: a.value.slice(3) }, r.scope, 'dd of=', r.text);
  return;
}

/** curl and wget write their output files. */
function download({ w, name, args, r }: Call): void {
  const out = optionValue(
    args,
    name === 'curl'
      ? ['-o', '--output', '--output-dir', '-c', '--cookie-jar', '-D', '--dump-header']
      : [
          '-O',
          '--output-document',
          '-P',
          '--directory-prefix',
          '-o',
          '--output-file',
          '-a',
          '--append-output',
        ],
  );
  if (out && out.value !== '-') w.checkWrite(out, r.scope, `${name}'s output`, r.text);
  return;
}

/**
 * tar writes where it extracts (-C, or the absolute names of the archive) and the archive it
 * creates.
 */
function tar({ w, args, r }: Call): void {
  // -C is where tar extracts to, or where it reads from when it creates an archive.
  const extracts = args.some((a, i) =>
    i === 0 && !a.value.startsWith('-')
      ? /x/.test(a.value)
      : /^-[a-zA-Z]*x|^--(extract|get)$/.test(a.value),
  );
  const dir = optionValue(args, ['-C', '--directory']);
  if (dir && extracts) w.checkWrite(dir, r.scope, 'tar -C', r.text);
  if (
    extracts &&
    args.some(
      (a) =>
        a.value === '-P' ||
        a.value === '--absolute-names' ||
        (/^-[a-zA-Z]+$/.test(a.value) && a.value.includes('P')),
    )
  )
    return w.block(
      'write-outside',
      'tar --absolute-names extracts to the absolute paths in the archive',
      r.text,
    );
  const creates = args.some((a, i) =>
    i === 0 && !a.value.startsWith('-')
      ? /[cru]/.test(a.value)
      : /^-[a-zA-Z]*[cru]|^--(create|append|update)/.test(a.value),
  );
  const file =
    optionValue(args, ['-f', '--file']) ??
    (args[0] && !args[0].value.startsWith('-') && /f/.test(args[0].value) ? args[1] : undefined);
  if (creates && file && file.value !== '-') w.checkWrite(file, r.scope, 'tar -f', r.text);
  return;
}

/** ssh to this machine runs its command here: judged as if it were local, from the home folder. */
function ssh({ w, args, r }: Call): void {
  const i = skipOptions(args, [
    '-p',
    '-i',
    '-l',
    '-o',
    '-F',
    '-J',
    '-b',
    '-c',
    '-D',
    '-E',
    '-e',
    '-L',
    '-m',
    '-O',
    '-Q',
    '-R',
    '-S',
    '-W',
    '-w',
    '-B',
    '-I',
  ]);
  const host = args[i];
  if (
    !host ||
    host.dynamic ||
    !/^(?:[^@]*@)?(localhost|127\.0\.0\.1|::1|\[::1\]|0\.0\.0\.0)$/.test(host.value)
  )
    return;
  return w.joined(args.slice(i + 1), {
    ...r,
    scope: { cwd: w.session.frame.home, vars: r.scope.vars },
  });
}

/** A container that mounts the home folder or / writable can delete it from inside. */
function container({ w, name, args, r }: Call): void {
  for (let k = 0; k < args.length; k++) {
    const v = args[k]!.value;
    const spec =
      v === '-v' || v === '--volume' || v === '--mount'
        ? args[k + 1]?.value
        : v.startsWith('--volume=') || v.startsWith('--mount=')
          ? v.slice(v.indexOf('=') + 1)
          : v.startsWith('-v') && v.length > 2
            ? v.slice(2)
            : undefined;
    if (spec === undefined) continue;
    const host = v.startsWith('--mount')
      ? /(?:^|,)(?:source|src)=([^,]+)/.exec(spec)?.[1]
      : spec.split(':')[0];
    const readonly = /(?:^|[,:])(ro|readonly)(?:$|[,:])/.test(spec.slice((host ?? '').length));
    if (!host || readonly || !/^[/~.]/.test(host)) continue;
    const abs = resolveIn(
      {
        value: host.startsWith('~') ? w.session.frame.home + host.slice(1) : host,
        dynamic: false,
        glob: false,
      },
      r.scope.cwd,
    );
    if (abs && placeOf(w.session.frame, abs, true) === 'home-or-root')
      return w.block('write-outside', `${name} mounts ${abs} writable into a container`, r.text);
  }
  return;
}

/** `-c CMD` and `+CMD` run editor commands; `:!cmd` and `:r !cmd` run shell code. */
function editor({ w, name, args, r }: Call): void {
  for (let k = 0; k < args.length; k++) {
    const v = args[k]!.value;
    const cmd =
      v === '-c' || v === '--cmd'
        ? args[k + 1]
        : v.startsWith('+')
          ? { ...args[k]!, value: v.slice(1) }
          : undefined;
    if (!cmd) continue;
    if (cmd.dynamic)
      return w.block(
        'unresolved',
        `${name} runs the editor command ${cmd.value}, only known when it runs`,
        r.text,
      );
    const bang = /^:?\s*(?:\S*\s*)?!(.*)$/s.exec(cmd.value);
    if (bang) w.source(bang[1]!, { cwd: r.scope.cwd, vars: new Map(r.env) }, r.depth + 1);
  }
  return;
}

/** `make -C DIR` runs the build of another folder, whose rules may delete anything there. */
function build({ w, name, args, r }: Call): void {
  const dir = optionValue(args, ['-C', '--directory']);
  if (dir) w.checkWrite(dir, r.scope, `${name} -C (its build runs in that folder)`, r.text);
  return;
}

/** zip, 7z and jar write their archive. */
function archive({ w, name, args, r }: Call): void {
  const ops = operands(args, ['-b', '-t', '-tt', '-x', '-i', '-n', '-P', '-O', '--out']);
  const archive = optionValue(args, ['-O', '--out']) ?? ops.list[name === 'zip' ? 0 : 1];
  if (archive) w.checkWrite(archive, r.scope, `${name}'s archive`, r.text);
  return;
}

/** `unzip -d DIR` extracts into DIR. */
function unzip({ w, args, r }: Call): void {
  const dir = optionValue(args, ['-d']);
  if (dir) w.checkWrite(dir, r.scope, 'unzip -d', r.text);
  return;
}

/** The verbs and the names they answer to, launchers first, then shell state, then writers. */
const TABLE: [readonly string[], Verb][] = [
  // Launchers: the rest of the line (or a string of shell code) is another command.
  [['busybox'], ({ rest }) => rest(0)],
  [['strace', 'ltrace'], traced],
  [['taskset', 'chrt'], pinned],
  [['unshare', 'firejail', 'runuser', 'sg'], asOther],
  [['script'], scriptCommand],
  [['source', '.'], sourced],
  [['awk', 'gawk', 'mawk', 'nawk'], awk],
  [['sudo'], sudo],
  [['doas'], ({ args, rest }) => rest(skipOptions(args, ['-u', '-C']))],
  [
    ['nohup', 'chronic', 'unbuffer', 'setsid', 'caffeinate', 'builtin', 'nocache', 'catchsegv'],
    ({ args, rest }) => rest(skipOptions(args, [])),
  ],
  [['exec'], ({ args, rest }) => rest(skipOptions(args, ['-a']))],
  [['nice'], ({ args, rest }) => rest(skipOptions(args, ['-n', '--adjustment']))],
  [
    ['ionice'],
    ({ args, rest }) =>
      rest(skipOptions(args, ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata'])),
  ],
  [
    ['stdbuf'],
    ({ args, rest }) =>
      rest(skipOptions(args, ['-i', '-o', '-e', '--input', '--output', '--error'])),
  ],
  [['time'], timed],
  // timeout's first operand is the duration.
  [
    ['timeout'],
    ({ args, rest }) => rest(skipOptions(args, ['-s', '-k', '--signal', '--kill-after']) + 1),
  ],
  [['command'], commandBuiltin],
  [['npm', 'pnpm', 'yarn', 'bun'], packageManager],
  [['npx', 'bunx', 'pnpx'], packageRunner],
  [['flock'], flock],
  [['watch'], watch],
  [['env'], ({ w, args, r }) => w.env(args, r)],
  [['xargs'], ({ w, args, r }) => w.xargs(args, r)],
  [['eval'], ({ w, args, r }) => w.joined(args, r, true)],
  [['su'], su],
  // Shell state: the folder, the variables, code that runs later.
  [['trap'], trap],
  [['alias'], alias],
  [['cd', 'pushd'], ({ w, args, r }) => w.cd(args, r)],
  // popd returns to a folder the walk does not follow.
  [
    ['popd'],
    ({ r }) => {
      r.scope.cwd = null;
    },
  ],
  [['export', 'declare', 'typeset', 'local', 'readonly'], declare],
  [['unset'], unset],
  [['read', 'mapfile', 'readarray', 'getopts'], readInput],
  // Writers: every path they write or delete must be the session's to change.
  [['git'], ({ w, args, r }) => checkGit(w, args, r)],
  [['find'], ({ w, args, r }) => w.find(args, r)],
  [['rm', 'rimraf', 'trash', 'trash-put', 'srm', 'shred', 'unlink', 'rmdir', 'del'], remove],
  [['mv'], move],
  [['cp', 'install', 'ln', 'rsync', 'scp'], copy],
  [['tee', 'touch', 'mkdir', 'truncate', 'mkfifo', 'mknod'], create],
  [['chmod', 'chown', 'chgrp', 'setfacl', 'chattr'], changeAttributes],
  [['sed', 'perl'], editInPlace],
  [['dd'], dd],
  [['curl', 'wget'], download],
  [['tar', 'bsdtar'], tar],
  [['ssh'], ssh],
  [['docker', 'podman', 'nerdctl'], container],
  [['vim', 'vi', 'nvim', 'ex', 'view'], editor],
  [['make', 'gmake', 'ninja'], build],
  [['zip', '7z', '7za', 'jar'], archive],
  [['unzip'], unzip],
  [['crontab'], crontab],
];

/**
 * Every verb with a rule of its own, by command name (a Map: no inherited names like
 * `constructor`).
 */
export const VERBS: ReadonlyMap<string, Verb> = new Map(
  TABLE.flatMap(([names, verb]) => names.map((n) => [n, verb] as const)),
);
