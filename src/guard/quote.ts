/** Quoting for a POSIX shell, of the commands hagent builds or reads word by word. */

/** `word` as one word for a POSIX shell: bare when it is plain, else single-quoted. Pure. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
