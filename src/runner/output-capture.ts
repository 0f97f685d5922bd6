import { writeSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import path from 'node:path';
import { stripAnsi } from './report/text.js';

const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 256 * 1024;
const ERROR_CONTEXT_BYTES = 256 * 1024;
const ERROR_LINE =
  /error|exception|traceback|assert|fail|refused|not found|cannot|no module|^E\s|^>\s|panic|✖|×/i;
/** How often the log is read while the run lasts (for progress counts; the rest is read at the end). */
const FOLLOW_MS = 1_000;
const READ_CHUNK = 64 * 1024;

/**
 * The run's output goes straight to its log file (the runner's stdout and stderr are that file), and the
 * server reads the file behind it, keeping only a bounded excerpt in memory: the head, the tail and lines
 * that look like errors (with their neighbours). A file, not a pipe: pytest flushes after every progress
 * dot, and waking the server through a pipe for each one added ~15 % to a 2,000-test run. A suite
 * printing hundreds of MB costs the server a few hundred KB; the full text stays in the log.
 */
export class OutputCapture {
  private head = '';
  private tail = '';
  private errorLines: string[] = [];
  private errorBytes = 0;
  private partialLine = '';
  private previousLine = '';
  private contextAfter = 0;
  private totalChars = 0;
  /** Bytes of the log already read. */
  private offset = 0;
  private readonly decoder = new StringDecoder('utf8');
  private readonly buffer = Buffer.alloc(READ_CHUNK);
  private reading: Promise<void> = Promise.resolve();
  private readonly follower: NodeJS.Timeout;
  testsSeen = 0;

  private constructor(
    readonly logPath: string,
    private readonly handle: FileHandle,
  ) {
    this.follower = setInterval(() => void this.follow(), FOLLOW_MS);
  }

  static async open(logPath: string): Promise<OutputCapture> {
    await mkdir(path.dirname(logPath), { recursive: true });
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
    const rest = this.partialLine + this.decoder.end();
    if (rest) this.scanLine(rest);
    this.partialLine = '';
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

  private take(text: string): void {
    this.totalChars += text.length;
    if (this.head.length < HEAD_BYTES) this.head += text.slice(0, HEAD_BYTES - this.head.length);
    this.tail = (this.tail + text).slice(-TAIL_BYTES);
    this.scanLines(text);
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
