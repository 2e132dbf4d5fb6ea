/** Cuts a streamed reply into sentences as they complete (interim: sentence ends only). */
export class SentenceCutter {
  private buffer = '';
  push(delta: string): string[] {
    this.buffer += delta;
    const out: string[] = [];
    for (;;) {
      const match = /[。！？；!?;\n]/.exec(this.buffer);
      if (!match) break;
      const sentence = this.buffer.slice(0, match.index + 1).trim();
      this.buffer = this.buffer.slice(match.index + 1);
      if (sentence) out.push(sentence);
    }
    return out;
  }
  flush(): string | null {
    const rest = this.buffer.trim();
    this.buffer = '';
    return rest || null;
  }
}
