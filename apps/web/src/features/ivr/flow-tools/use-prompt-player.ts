import { useCallback, useEffect, useRef, useState } from 'react';

/**
 * Plays a simulation's prompts one after another through one <audio> element the caller renders
 * (`audioRef`, `onEnded`). Each prompt's WAV is loaded only when its turn comes; object URLs are
 * released as the next one starts, so a long simulation does not pile them up.
 */
export function usePromptPlayer(load: (index: number) => Promise<Blob>) {
  const audioRef = useRef<HTMLAudioElement>(null);
  const queue = useRef<number[]>([]);
  const url = useRef<string | null>(null);
  // Bumped by every stop or replacement, so a slow load for an abandoned prompt is dropped.
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const [playing, setPlayingState] = useState<number | null>(null);
  // The same as `playing`, readable synchronously by enqueue between renders.
  const active = useRef<number | null>(null);
  const setPlaying = useCallback((index: number | null) => {
    active.current = index;
    setPlayingState(index);
  }, []);

  const release = useCallback(() => {
    if (url.current) URL.revokeObjectURL(url.current);
    url.current = null;
  }, []);

  const next = useCallback(async () => {
    const index = queue.current.shift();
    const current = ++generation.current;
    if (index === undefined) {
      setPlaying(null);
      return;
    }
    setPlaying(index);
    let blob: Blob;
    try {
      blob = await loadRef.current(index);
    } catch {
      if (generation.current === current) void next();
      return;
    }
    const element = audioRef.current;
    if (generation.current !== current || !element) return;
    release();
    url.current = URL.createObjectURL(blob);
    element.src = url.current;
    try {
      await element.play();
    } catch {
      // Autoplay refused (no user gesture yet) or nothing playable: the ▶ buttons still work.
      if (generation.current === current) {
        queue.current = [];
        setPlaying(null);
      }
    }
  }, [release, setPlaying]);

  const stop = useCallback(() => {
    queue.current = [];
    generation.current++;
    audioRef.current?.pause();
    setPlaying(null);
  }, [setPlaying]);

  /** Plays these prompts now, dropping whatever was playing or waiting. */
  const play = useCallback(
    (indices: number[]) => {
      stop();
      queue.current = [...indices];
      void next();
    },
    [stop, next],
  );

  /** Plays these prompts after the ones already waiting. */
  const enqueue = useCallback(
    (indices: number[]) => {
      const idle = queue.current.length === 0 && active.current === null;
      queue.current.push(...indices);
      if (idle) void next();
    },
    [next],
  );

  const onEnded = useCallback(() => void next(), [next]);

  useEffect(() => () => release(), [release]);

  return { audioRef, onEnded, playing, play, enqueue, stop };
}
