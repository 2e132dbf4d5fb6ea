// What the speech bench's three processes agree on: what the caller says, what the fake
// recogniser hears in it, what the fake model answers, how a packet counts as voiced, and one
// clock that means the same in every process on this machine.

/** The fixed provider delays. */
export const RECOGNITION_FINAL_DELAY_MS = 150;
export const FIRST_TOKEN_DELAY_MS = 300;
export const FIRST_AUDIO_DELAY_MS = 150;

export const KEYS = {
  llm: 'sk-bench-llm-0123456789',
  dashscope: 'sk-bench-dashscope-0123456789',
  tencent: {
    appId: '1300000000',
    secretId: 'AKIDbenchsecretid0123456789',
    secretKey: 'bench-secret-key-0123456789',
  },
};

export type SpeechPart = 'reply' | 'barge' | 'failover';

/** What every caller says (espeak, Mandarin, 8 kHz), and the text the fake recogniser gives for it. */
export const CALLER_SENTENCE = '你好，我想问一下你们的课程怎么收费。';
/**
 * The recogniser's partials while the audio arrives: one more clause for every 600 ms of voiced
 * audio (one decode step of FunASR's default chunk_size [5, 10, 5]), the whole sentence with its
 * full stop from the third on. The espeak sentence has more than 1.2 s of voice, so the partial is
 * finished and stable well before the caller stops, and the leg may end the turn on its 300 ms
 * early end rather than the VAD's 700 ms hang.
 */
export const CALLER_PARTIALS = ['你好', '你好，我想问一下', CALLER_SENTENCE] as const;
export const PARTIAL_STEP_MS = 600;

export const OPENING_LINE = '您好，请讲。';
/** The model's answer to an ordinary question: a first sentence at the first token, then one more. */
export const SHORT_REPLY = '好的。我们的课程每节一百元，稍后把详细资料发给您。';

/** Ten sentences, about eight seconds of speech, each naming the call so the TTS fake's tasks can be told apart. */
export function longReply(callIndex: number): string {
  const tag = `（${callIndex}号）`;
  return [
    `好的，我详细给您介绍一下${tag}。`,
    `我们的课程分为基础班和提高班${tag}。`,
    `基础班每周上课两次，每次九十分钟${tag}。`,
    `提高班每周上课三次，适合有基础的同学${tag}。`,
    `所有课程都由有经验的老师授课${tag}。`,
    `第一节试听课是免费的${tag}。`,
    `报名后可以随时调整上课时间${tag}。`,
    `如果不满意，七天内可以全额退款${tag}。`,
    `我们在全市有十二个校区${tag}。`,
    `您看您对哪个班比较感兴趣呢${tag}？`,
  ].join('');
}

/** The call index a long-reply sentence (as a TTS task's text) belongs to, or null. */
export function callOfSentence(text: string): number | null {
  const match = /（(\d+)号）/.exec(text);
  return match ? Number(match[1]) : null;
}

/** The caller's number for call `index` (From of its INVITE), and back. */
export const callerNumber = (index: number) => `139${String(index).padStart(8, '0')}`;
export const callIndexOf = (number: string) => {
  const match = /^139(\d{8})$/.exec(number);
  return match ? Number(match[1]) : -1;
};
/** Written into the assistant's prompt so the fake model knows whose call it answers. */
export const callMarker = (index: number) => `【压测通话 ${index}】`;
export const callOfPrompt = (prompt: string) => {
  const match = /【压测通话 (\d+)】/.exec(prompt);
  return match ? Number(match[1]) : -1;
};

export const FRAME_SAMPLES = 160;
/**
 * A 20 ms frame is voiced above this RMS (about -36 dBFS): the engine's idle packets are A-law
 * silence (RMS under 10), the fakes' speech thousands, espeak's vowels several thousand.
 */
export const VOICED_RMS = 500;

export function frameRms(pcm: Int16Array, from = 0, to = pcm.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += (pcm[i] as number) ** 2;
  return to > from ? Math.sqrt(sum / (to - from)) : 0;
}

/** Voiced audio in `pcm`, ms, counted in 20 ms frames. */
export function voicedMs(pcm: Int16Array): number {
  let frames = 0;
  for (let at = 0; at + FRAME_SAMPLES <= pcm.length; at += FRAME_SAMPLES) {
    if (frameRms(pcm, at, at + FRAME_SAMPLES) > VOICED_RMS) frames++;
  }
  return frames * 20;
}

/**
 * Milliseconds on a clock every process of this machine shares (the wall clock at the process's
 * start plus its monotonic time since): the caller's, the fakes' and the engine's timestamps are
 * compared on it. Within one process, differences are as precise as performance.now().
 */
export const wallClock = () => performance.timeOrigin + performance.now();

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
};
