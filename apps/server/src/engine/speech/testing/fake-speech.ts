/**
 * Test support for the synthesis fakes: what a vendor "says" for a text, deterministically, so a
 * test can compare the PCM a synthesiser yields with what the server sent, sample for sample.
 */

/**
 * `msPerChar` of audio per character at `sampleRate`. Each character has its own level (negative
 * ones too, to catch sign errors) plus a small ramp, so order, gaps and byte order all show.
 */
export function fakeSpeech(text: string, sampleRate: number, msPerChar: number): Int16Array {
  const chars = [...text];
  const perChar = Math.round((sampleRate * msPerChar) / 1000);
  const pcm = new Int16Array(chars.length * perChar);
  chars.forEach((char, i) => {
    const level = (((char.codePointAt(0) as number) * 7 + i * 131) % 20_000) - 10_000;
    for (let j = 0; j < perChar; j++) pcm[i * perChar + j] = level + (j % 8);
  });
  return pcm;
}

/** Little-endian bytes of `pcm`. */
export function pcmBytes(pcm: Int16Array): Buffer {
  const out = Buffer.alloc(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) out.writeInt16LE(pcm[i] as number, i * 2);
  return out;
}

/**
 * `bytes` cut into frames of about `frameBytes`. With `odd`, every frame boundary falls in the
 * middle of a sample (sizes alternate frameBytes+1, frameBytes-1), as a vendor's TCP-sized chunks may.
 */
export function splitFrames(bytes: Buffer, frameBytes: number, odd = false): Buffer[] {
  const frames: Buffer[] = [];
  let at = 0;
  let n = 0;
  while (at < bytes.length) {
    const size = odd ? frameBytes + (n % 2 === 0 ? 1 : -1) : frameBytes;
    frames.push(bytes.subarray(at, Math.min(bytes.length, at + Math.max(1, size))));
    at += Math.max(1, size);
    n++;
  }
  return frames;
}
