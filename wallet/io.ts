// What the wallet says and asks. The terminal version reads answers from stdin; tests pass their own.
import { createInterface } from 'node:readline/promises';
import QRCode from 'qrcode';

export interface Io {
  print(text: string): void;
  /** Asks a question and returns the answer typed (empty when there is nothing to read). */
  ask(question: string): Promise<string>;
  close?(): void;
}

export function terminalIo(): Io {
  let reader: ReturnType<typeof createInterface> | undefined;
  let lines: AsyncIterator<string> | undefined;
  return {
    print: (text) => process.stdout.write(`${text}\n`),
    async ask(question) {
      process.stdout.write(question);
      // One reader for the whole run, so that piped answers are read one line per question.
      reader ??= createInterface({ input: process.stdin, terminal: false });
      lines ??= reader[Symbol.asyncIterator]();
      const next = await lines.next();
      if (!process.stdin.isTTY) process.stdout.write('\n');
      return next.done ? '' : next.value.trim();
    },
    close: () => reader?.close(),
  };
}

/** The URI as a QR code drawn with half-block characters (two modules per character row). */
export function qrCode(uri: string): Promise<string> {
  return QRCode.toString(uri, { type: 'terminal', small: true, errorCorrectionLevel: 'L' });
}

/** Long values (JWTs, codes, encrypted responses) cut to their start, so a trace stays readable. */
export const abbreviate = (value: string, max = 60) => (value.length > max ? `${value.slice(0, max)}… (${value.length} chars)` : value);

export const json = (value: unknown) => JSON.stringify(value, null, 2);

export const indent = (text: string, spaces: number) => text.replace(/^/gm, ' '.repeat(spaces));
