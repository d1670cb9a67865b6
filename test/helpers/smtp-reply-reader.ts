/**
 * SMTP replies out of the bytes a client reads: a reply ends at a line whose
 * code is followed by a space ("250 ok"; "250-" continues it), and comes with
 * its lines joined by \n. Replies wait here until asked for, and askers wait
 * for replies (the test clients of smtp-raw.ts and smtp-pipelined.ts).
 */
export class SmtpReplyReader {
  private buffered = '';
  private lines: string[] = [];
  private readonly replies: string[] = [];
  private readonly waiting: Array<(reply: string) => void> = [];

  push(chunk: string): void {
    this.buffered += chunk;
    let at: number;
    while ((at = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, at).replace(/\r$/, '');
      this.buffered = this.buffered.slice(at + 1);
      this.lines.push(line);
      if (line[3] === '-') continue;
      const reply = this.lines.join('\n');
      this.lines = [];
      const waiter = this.waiting.shift();
      if (waiter) waiter(reply);
      else this.replies.push(reply);
    }
  }

  /** The next reply; `closed`: the connection is gone, so '' instead of waiting. */
  next(closed = false): Promise<string> {
    const queued = this.replies.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (closed) return Promise.resolve('');
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The connection closed: every asker gets ''. */
  end(): void {
    for (const w of this.waiting.splice(0)) w('');
  }
}
