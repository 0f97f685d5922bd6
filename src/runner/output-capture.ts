import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { stripAnsi } from './report/text.js';

const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 256 * 1024;
const ERROR_CONTEXT_BYTES = 256 * 1024;
/**
 * Log writes are batched: pytest flushes after every progress dot, and one file write per dot cost the
 * server more than the rest of a 2,000-test run's handling.
 */
const LOG_BATCH_CHARS = 64 * 1024;
const LOG_BATCH_MS = 100;
const ERROR_LINE =
  /error|exception|traceback|assert|fail|refused|not found|cannot|no module|^E\s|^>\s|panic|✖|×/i;

/**
 * Streams a run's output to its log file and keeps only a bounded excerpt in memory: the head, the tail and
 * lines that look like errors (with their neighbours). A suite printing hundreds of MB costs the server a few
 * hundred KB; the full text stays in the log.
 */
export class OutputCapture {
  private head = '';
  private tail = '';
  private errorLines: string[] = [];
  private errorBytes = 0;
  private partialLine = '';
  private previousLine = '';
  private contextAfter = 0;
  private totalBytes = 0;
  private totalChars = 0;
  private readonly log: WriteStream;
  private pending: string[] = [];
  private pendingChars = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  testsSeen = 0;

  private constructor(readonly logPath: string) {
    this.log = createWriteStream(logPath, { flags: 'w' });
  }

  static async open(logPath: string): Promise<OutputCapture> {
    await mkdir(path.dirname(logPath), { recursive: true });
    return new OutputCapture(logPath);
  }

  /** Returns false when the log file is backed up; the caller pauses the stream until `drained()`. */
  write(chunk: Buffer | string): boolean {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    this.totalBytes += Buffer.byteLength(text);
    this.totalChars += text.length;
    if (this.head.length < HEAD_BYTES) this.head += text.slice(0, HEAD_BYTES - this.head.length);
    this.tail = (this.tail + text).slice(-TAIL_BYTES);
    this.scanLines(text);
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars >= LOG_BATCH_CHARS) return this.flush();
    this.flushTimer ??= setTimeout(() => this.flush(), LOG_BATCH_MS);
    return true;
  }

  /** Writes the batched output to the log; false when the log file is backed up. */
  private flush(): boolean {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.length === 0) return true;
    const text = this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    return this.log.write(text);
  }

  drained(): Promise<void> {
    return new Promise((resolve) => this.log.once('drain', resolve));
  }

  async close(): Promise<void> {
    if (this.partialLine) this.scanLine(this.partialLine);
    this.partialLine = '';
    this.flush();
    await new Promise<void>((resolve, reject) =>
      this.log.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** Everything when it fits; otherwise head + error lines + tail, with the gap marked. */
  excerpt(): string {
    if (this.tail.length >= this.totalChars) return this.tail;
    const errors =
      this.errorLines.length > 0
        ? `[... error lines from the omitted part ...]\n${this.errorLines.join('\n')}\n`
        : '';
    return `${this.head}\n[... ${this.totalChars - this.head.length - this.tail.length} characters omitted; full output in ${this.logPath} ...]\n${errors}[... last ${this.tail.length} characters ...]\n${this.tail}`;
  }

  private scanLines(text: string): void {
    const lines = (this.partialLine + text).split('\n');
    this.partialLine = lines.pop() ?? '';
    for (const line of lines) this.scanLine(line);
  }

  private scanLine(rawLine: string): void {
    const line = rawLine.includes('\u001b') ? stripAnsi(rawLine) : rawLine;
    this.testsSeen += countTestMarks(line);
    if (this.errorBytes >= ERROR_CONTEXT_BYTES) return;
    if (ERROR_LINE.test(line)) {
      if (this.contextAfter === 0 && this.previousLine) this.keep(this.previousLine);
      this.keep(line);
      this.contextAfter = 3;
    } else if (this.contextAfter > 0) {
      this.keep(line);
      this.contextAfter--;
    }
    this.previousLine = line;
  }

  private keep(line: string): void {
    const clipped = line.length > 2000 ? `${line.slice(0, 2000)}…` : line;
    this.errorLines.push(clipped);
    this.errorBytes += clipped.length + 1;
  }
}

/** Rough live count of finished tests for progress messages (pytest dots, node/vitest check marks, TAP). */
function countTestMarks(line: string): number {
  const pytest = /^\S+\.py ([.FEsxX]+)(\s+\[\s*\d+%\])?$/.exec(line.trimEnd());
  if (pytest) return pytest[1]!.length;
  if (/^\s*(✔|✖|✓|×|ok \d+|not ok \d+)\s/.test(line)) return 1;
  return 0;
}
