import { VOICE_SAMPLE_RULES } from '@callpilot/contracts';
import { useCallback, useEffect, useRef, useState } from 'react';

export type RecorderState = 'idle' | 'recording';

/** Stops just inside the longest sample a vendor takes, so a forgotten stop still passes. */
const AUTO_STOP_MS = VOICE_SAMPLE_RULES.maxSeconds * 1000 - 500;

/**
 * The microphone through MediaRecorder: start, stop, and the recording as a Blob (webm or ogg,
 * whatever the browser records), handed to `onRecorded`. Echo cancellation and noise suppression
 * stay on: a cleaner sample clones better, and the vendors ask for no background noise.
 */
export function useVoiceRecorder(onRecorded: (recording: Blob) => void) {
  const [state, setState] = useState<RecorderState>('idle');
  const [elapsedMs, setElapsedMs] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const recorder = useRef<MediaRecorder | null>(null);
  const timer = useRef<ReturnType<typeof setInterval> | null>(null);
  const handler = useRef(onRecorded);
  handler.current = onRecorded;
  const discarded = useRef(false);

  const stop = useCallback(() => {
    if (timer.current) clearInterval(timer.current);
    timer.current = null;
    if (recorder.current?.state === 'recording') recorder.current.stop();
  }, []);

  const start = useCallback(async () => {
    setError(null);
    if (!navigator.mediaDevices?.getUserMedia || typeof MediaRecorder === 'undefined') {
      setError('当前浏览器不支持录音，请改用 Chrome、Edge 或 Safari，或上传 WAV 文件');
      return;
    }
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({
        audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true },
      });
    } catch {
      setError('无法使用麦克风：请在浏览器地址栏允许本网站使用麦克风后重试');
      return;
    }
    const chunks: Blob[] = [];
    const media = new MediaRecorder(stream);
    media.ondataavailable = (event) => {
      if (event.data.size > 0) chunks.push(event.data);
    };
    media.onstop = () => {
      for (const track of stream.getTracks()) track.stop();
      if (discarded.current) return;
      setState('idle');
      handler.current(new Blob(chunks, { type: media.mimeType || 'audio/webm' }));
    };
    recorder.current = media;
    const startedAt = Date.now();
    setElapsedMs(0);
    media.start();
    setState('recording');
    timer.current = setInterval(() => {
      const elapsed = Date.now() - startedAt;
      setElapsedMs(elapsed);
      if (elapsed >= AUTO_STOP_MS) stop();
    }, 200);
  }, [stop]);

  // Leaving the dialog mid-recording releases the microphone and drops the half recording.
  useEffect(
    () => () => {
      discarded.current = true;
      stop();
    },
    [stop],
  );

  return { state, elapsedMs, error, start, stop };
}
