import { writeSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { TapSighting } from './report/tap.js';
import { stripAnsi } from './report/text.js';

const HEAD_CHARS = 64 * 1024;
const TAIL_CHARS = 256 * 1024;
const ERROR_CONTEXT_CHARS = 256 * 1024;
/**
 * Lines are scanned (and kept) at most this long: a longer line is scanned piece by piece, so a
 * 200 MB line costs what 100,000 short ones do and an error inside it is still found.
 */
export const MAX_LINE_CHARS = 2000;
const ERROR_LINE =
  /error|exception|traceback|assert|fail|refused|not found|cannot|no module|^E\s|^>\s|panic|✖|×/i;
/** How often the log is read while the run lasts (for progress counts; the rest is read at the end). */
const FOLLOW_MS = 1_000;
export const READ_CHUNK = 64 * 1024;

/**
 * The run's output goes straight to its log file (the runner's stdout and stderr are that file), and the
 * server reads the file behind it, keeping only a bounded excerpt in memory: the head, the tail and lines
 * that look like errors (with their neighbours). A file, not a pipe: pytest flushes after every progress
 * dot, and waking the server through a pipe for each one added ~15 % to a 2,000-test run. Each byte is
 * looked at a fixed number of times, whatever the line shape (short lines, one giant line, `\r` progress
 * bars), so a suite printing hundreds of MB costs the server a few hundred KB and linear time; the full
 * text stays in the log.
 */
export class OutputCapture {
  private head = '';
  private tailChunks: string[] = [];
  private tailChars = 0;
  private errorLines: string[] = [];
  private errorChars = 0;
  /** The current line so far, never longer than MAX_LINE_CHARS. */
  private partialLine = '';
  private lastWasCarriageReturn = false;
  private previousLine = '';
  private contextAfter = 0;
  private longLines = 0;
  private currentLineIsLong = false;
  private totalChars = 0;
  /** Bytes of the log already read. */
  private offset = 0;
  private readonly decoder = new StringDecoder('utf8');
  private readonly buffer = Buffer.alloc(READ_CHUNK);
  private reading: Promise<void> = Promise.resolve();
  private readonly follower: NodeJS.Timeout;
  testsSeen = 0;
  /** Whether the output can hold a TAP document (worth reading the whole log for). */
  readonly tap = new TapSighting();

  private constructor(
    readonly logPath: string,
    private readonly handle: FileHandle,
  ) {
    this.follower = setInterval(() => void this.follow(), FOLLOW_MS);
  }

  /** `makeDirectory: false`: the log's directory must exist (a deleted worktree is not re-created). */
  static async open(logPath: string, makeDirectory = true): Promise<OutputCapture> {
    if (makeDirectory) await mkdir(path.dirname(logPath), { recursive: true });
    return new OutputCapture(logPath, await open(logPath, 'w+'));
  }

  /** The descriptor a child process writes its stdout and stderr to. */
  get fd(): number {
    return this.handle.fd;
  }

  /** coachgate's own lines, between the runner's (same file position as the children's writes). */
  write(text: string): void {
    writeSync(this.handle.fd, text);
  }

  async close(): Promise<void> {
    clearInterval(this.follower);
    await this.follow();
    this.take(this.decoder.end());
    if (this.partialLine) this.endLine();
    await this.handle.close();
  }

  get bytes(): number {
    return this.offset;
  }

  /** Reads what the log gained since the last read; one read at a time. */
  private follow(): Promise<void> {
    this.reading = this.reading.then(async () => {
      for (;;) {
        const { bytesRead } = await this.handle.read(this.buffer, 0, READ_CHUNK, this.offset);
        if (bytesRead === 0) return;
        this.offset += bytesRead;
        this.take(this.decoder.write(this.buffer.subarray(0, bytesRead)));
      }
    });
    return this.reading;
  }

  /** Everything when it fits; otherwise head + error lines + tail, with the gap marked. */
  excerpt(): string {
    const tail = this.tailChunks.join('').slice(-TAIL_CHARS);
    if (tail.length >= this.totalChars) return tail;
    const longNote =
      this.longLines > 0
        ? `[... ${this.longLines} line(s) longer than ${MAX_LINE_CHARS} characters were scanned ` +
          `in pieces of ${MAX_LINE_CHARS} ...]\n`
        : '';
    const omitted = this.totalChars - this.head.length - tail.length;
    const errors =
      this.errorLines.length > 0
        ? `[... error lines from the omitted part ...]\n${this.errorLines.join('\n')}\n`
        : '';
    return (
      `${this.head}\n[... ${omitted} characters omitted; full output in ${this.logPath} ...]\n` +
      `${longNote}${errors}[... last ${tail.length} characters ...]\n${tail}`
    );
  }

  private take(text: string): void {
    if (!text) return;
    this.totalChars += text.length;
    if (this.head.length < HEAD_CHARS) this.head += text.slice(0, HEAD_CHARS - this.head.length);
    this.keepTail(text);
    this.scanLines(text);
  }

  /** The tail as a list of chunks, dropping whole chunks from the front: no copy of the tail per write. */
  private keepTail(text: string): void {
    this.tailChunks.push(text);
    this.tailChars += text.length;
    while (this.tailChars - this.tailChunks[0]!.length >= TAIL_CHARS) {
      this.tailChars -= this.tailChunks.shift()!.length;
    }
  }

  /** Splits on `\n`, `\r\n` and a lone `\r` (a progress bar's redraw is a line of its own). */
  private scanLines(text: string): void {
    let start = 0;
    for (let at = 0; at < text.length; at++) {
      const code = text.charCodeAt(at);
      if (code !== 10 && code !== 13) continue;
      const afterCarriageReturn = this.lastWasCarriageReturn && at === start && code === 10;
      this.lastWasCarriageReturn = code === 13;
      if (afterCarriageReturn) {
        start = at + 1;
        continue;
      }
      this.append(text, start, at);
      this.endLine();
      start = at + 1;
    }
    if (start < text.length) {
      this.lastWasCarriageReturn = false;
      this.append(text, start, text.length);
    }
  }

  /** Adds text[from, to) to the current line, scanning each full MAX_LINE_CHARS piece as it fills. */
  private append(text: string, from: number, to: number): void {
    while (from < to) {
      if (this.partialLine.length === MAX_LINE_CHARS) {
        if (!this.currentLineIsLong) this.longLines++;
        this.currentLineIsLong = true;
        this.scanLine(this.partialLine, true);
        this.partialLine = '';
      }
      const end = Math.min(to, from + MAX_LINE_CHARS - this.partialLine.length);
      this.partialLine += text.slice(from, end);
      from = end;
    }
  }

  private endLine(): void {
    if (this.partialLine || !this.currentLineIsLong) {
      this.scanLine(this.partialLine, this.currentLineIsLong);
    }
    this.partialLine = '';
    this.currentLineIsLong = false;
  }

  /** `piece`: part of a longer line, whose error is kept from its start so summaries see it as a line. */
  private scanLine(rawLine: string, piece = false): void {
    const line = rawLine.includes('\u001b') ? stripAnsi(rawLine) : rawLine;
    this.testsSeen += countTestMarks(line);
    this.tap.see(line);
    if (this.errorChars >= ERROR_CONTEXT_CHARS) return;
    const error = ERROR_LINE.exec(line);
    if (error) {
      if (this.contextAfter === 0 && this.previousLine) this.keep(this.previousLine);
      this.keep(piece ? line.slice(wordStart(line, error.index)) : line);
      this.contextAfter = 3;
    } else if (this.contextAfter > 0) {
      this.keep(line);
      this.contextAfter--;
    }
    this.previousLine = line;
  }

  private keep(line: string): void {
    this.errorLines.push(line);
    this.errorChars += line.length + 1;
  }
}

/** Where the word (an exception name such as `TypeError`) holding `index` begins. */
function wordStart(line: string, index: number): number {
  let start = index;
  while (start > 0 && /[\w.]/.test(line[start - 1]!)) start--;
  return start;
}

/** Rough live count of finished tests for progress messages (pytest dots, node/vitest check marks, TAP). */
function countTestMarks(line: string): number {
  const pytest = /^\S+\.py ([.FEsxX]+)(\s+\[\s*\d+%\])?$/.exec(line.trimEnd());
  if (pytest) return pytest[1]!.length;
  if (/^\s*(✔|✖|✓|×|ok \d+|not ok \d+)\s/.test(line)) return 1;
  return 0;
}
