import { SingleBar } from "cli-progress";

export type ProgressPayload = Record<string, number | string>;

export interface ProgressReporterOptions {
  /** cli-progress format of the bar drawn on a terminal, e.g. "draining [{bar}] {value}/{total}". */
  barFormat: string;
  /** The plain line printed when the stream is not a terminal (a log file, CI, a pipe). */
  line: (value: number, total: number, payload: ProgressPayload) => string;
  /** Default process.stderr. */
  stream?: NodeJS.WriteStream;
  /** Period of the plain lines. Default 2000 ms. */
  intervalMs?: number;
}

/**
 * A progress bar on a terminal; elsewhere one plain line per period (and a last one on stop),
 * because a redrawn bar turns a log file into noise of carriage returns and bar glyphs.
 */
export class ProgressReporter {
  private readonly stream: NodeJS.WriteStream;
  private readonly bar: SingleBar | undefined;
  private timer: NodeJS.Timeout | undefined;
  private value = 0;
  private total = 0;
  private payload: ProgressPayload = {};
  private printed = "";

  constructor(private readonly opts: ProgressReporterOptions) {
    this.stream = opts.stream ?? process.stderr;
    this.bar = this.stream.isTTY ? new SingleBar({ stream: this.stream, format: opts.barFormat, hideCursor: false }) : undefined;
  }

  get isTerminal(): boolean {
    return this.bar !== undefined;
  }

  start(total: number, payload: ProgressPayload): void {
    this.total = total;
    this.payload = payload;
    if (this.bar) {
      this.bar.start(total, 0, payload);
      return;
    }
    this.timer = setInterval(() => this.printLine(), this.opts.intervalMs ?? 2_000);
    this.timer.unref();
    this.printLine();
  }

  update(value: number, payload: ProgressPayload = {}): void {
    this.value = value;
    this.payload = { ...this.payload, ...payload };
    if (value > this.total) this.total = value;
    if (this.bar) {
      if (this.bar.getTotal() < value) this.bar.setTotal(value);
      this.bar.update(value, payload);
    }
  }

  /** A message of its own (waiting out a backoff, a retry): a line in both modes. */
  note(message: string): void {
    if (this.bar) this.stream.write(`\n${message}\n`);
    else this.stream.write(`${message}\n`);
  }

  stop(): void {
    if (this.bar) {
      this.bar.stop();
      return;
    }
    clearInterval(this.timer);
    this.printLine();
  }

  private printLine(): void {
    const line = this.opts.line(this.value, this.total, this.payload);
    // Only what changed: an idle wait does not repeat the same line every period.
    if (line === this.printed) return;
    this.printed = line;
    this.stream.write(`${line}\n`);
  }
}
