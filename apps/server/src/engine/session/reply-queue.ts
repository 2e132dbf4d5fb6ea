/**
 * Sentences handed from the brain loop to the leg while both run: the loop pushes each as the
 * cutter completes it, the leg pulls them to synthesise and play, and `end` says the reply is whole.
 */
export class ReplyQueue implements AsyncIterable<string> {
  private readonly items: string[] = [];
  private ended = false;
  private wake: (() => void) | null = null;

  push(sentence: string): void {
    if (this.ended) return;
    this.items.push(sentence);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  private notify() {
    const resume = this.wake;
    this.wake = null;
    resume?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    let at = 0;
    for (;;) {
      if (at < this.items.length) {
        yield this.items[at++]!;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}
