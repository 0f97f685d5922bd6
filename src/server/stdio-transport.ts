import process from 'node:process';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { quotePrefix } from '../errors/quote.js';

/** Largest request line accepted; anything longer is discarded as it streams in, never buffered whole. */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;

/** How much of an oversized line's start and end is kept, to quote it and find its id. */
const EDGE_BYTES = 200;

/** JSON-RPC 2.0 error codes. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

/**
 * Newline-delimited JSON-RPC over stdin/stdout, like the SDK's StdioServerTransport, except that a bad frame
 * never ends the session: an oversized line is skipped while it streams (memory stays bounded) and answered
 * with an error, as is a line that is not JSON or not JSON-RPC. The SDK's transport closes the connection
 * silently on a line over 10 MB and answers nothing to malformed lines.
 */
export class LineDelimitedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Set while the rest of an oversized line is being skipped: its first and (so far) last bytes. */
  private skipping: { head: string; tail: Buffer } | undefined;
  private closed = false;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    private readonly maxFrameBytes = MAX_FRAME_BYTES,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
    this.input.once('end', this.onEnd);
  }

  private readonly onInputError = (error: Error) => this.onerror?.(error);
  private readonly onEnd = () => void this.close();

  private readonly onData = (chunk: Buffer) => {
    let start = 0;
    // Each byte is looked at once: linear in the input whatever the line lengths.
    for (
      let newline = chunk.indexOf(10, start);
      newline !== -1;
      newline = chunk.indexOf(10, start)
    ) {
      this.take(chunk.subarray(start, newline));
      this.endLine();
      start = newline + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  };

  private take(part: Buffer): void {
    if (this.skipping) {
      this.skipping.tail = Buffer.concat([this.skipping.tail, part.subarray(-EDGE_BYTES)]).subarray(
        -EDGE_BYTES,
      );
      return;
    }
    if (this.pendingBytes + part.length > this.maxFrameBytes) {
      const head = Buffer.concat([...this.pending, part].slice(0, 2))
        .subarray(0, EDGE_BYTES)
        .toString('utf8');
      this.skipping = { head, tail: Buffer.from(part.subarray(-EDGE_BYTES)) };
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    if (part.length > 0) {
      // Copy: a subarray would pin the whole (possibly large) chunk in memory.
      this.pending.push(Buffer.from(part));
      this.pendingBytes += part.length;
    }
  }

  private endLine(): void {
    if (this.skipping) {
      const { head, tail } = this.skipping;
      this.skipping = undefined;
      const message = `Request too large: lines are limited to ${this.maxFrameBytes} bytes`;
      this.reject(INVALID_REQUEST, message, head, idIn(head, tail.toString('utf8')));
      return;
    }
    const line = Buffer.concat(this.pending, this.pendingBytes).toString('utf8').replace(/\r$/, '');
    this.pending = [];
    this.pendingBytes = 0;
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.reject(
        PARSE_ERROR,
        'Parse error: the line is not valid JSON',
        line,
        idIn(line, line.slice(-EDGE_BYTES)),
      );
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      this.reject(
        INVALID_REQUEST,
        'Invalid Request: not a JSON-RPC 2.0 message',
        line,
        idOf(value),
      );
      return;
    }
    this.onmessage?.(parsed.data);
  }

  private reject(
    code: number,
    message: string,
    input: string,
    id: string | number | undefined,
  ): void {
    this.onerror?.(new Error(`${message} (received ${quotePrefix(input)})`));
    // JSON-RPC says `id: null` when the id cannot be read; the SDK's schema only accepts an absent id.
    const error = { code, message, data: { received: quotePrefix(input) } };
    void this.send({
      jsonrpc: '2.0',
      ...(id !== undefined ? { id } : {}),
      error,
    } as JSONRPCMessage);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    const json = `${JSON.stringify(message)}\n`;
    if (this.output.write(json)) return;
    await new Promise<void>((resolve) => this.output.once('drain', resolve));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    this.input.off('end', this.onEnd);
    this.pending = [];
    this.skipping = undefined;
    this.onclose?.();
  }
}

function idOf(value: unknown): string | number | undefined {
  if (typeof value !== 'object' || value === null || !('id' in value)) return undefined;
  const { id } = value as { id: unknown };
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id))
    ? id
    : undefined;
}

const ID_VALUE = String.raw`(-?\d{1,15}|"(?:[^"\\]|\\.){0,64}")`;
/** `id` as the first or second top-level key (after "jsonrpc"), or as the last one. */
const LEADING_ID = new RegExp(
  String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID_VALUE}`,
);
const TRAILING_ID = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);

/**
 * The id of a request whose body could not be parsed, when it is readable from the line's first or last
 * bytes (the SDK client writes it last), so the client can match the error to its request.
 */
function idIn(head: string, tail: string): string | number | undefined {
  const match = LEADING_ID.exec(head) ?? TRAILING_ID.exec(tail);
  if (!match) return undefined;
  try {
    return JSON.parse(match[1]!) as string | number;
  } catch {
    return undefined;
  }
}
