import { useCallback, useEffect, useRef, useState } from 'react';

/**
 * Plays audio bytes through one <audio> element the caller renders (`audioRef`, `src`), releasing
 * the previous object URL each time so replaying many replies does not leak memory.
 */
export function useAudioPlayer() {
  const audioRef = useRef<HTMLAudioElement>(null);
  const urlRef = useRef<string | null>(null);
  const [src, setSrc] = useState<string | undefined>(undefined);

  const release = useCallback(() => {
    if (urlRef.current) URL.revokeObjectURL(urlRef.current);
    urlRef.current = null;
  }, []);

  useEffect(() => release, [release]);

  // Played once React has put the new src on the element: setting the src attribute (even to the
  // value it already has) restarts loading, which aborts a play() started before the commit.
  useEffect(() => {
    const element = audioRef.current;
    if (!src || !element) return;
    element.play().catch(() => {
      // Autoplay refused (no user gesture yet): the element's own controls still play it.
    });
  }, [src]);

  const play = useCallback(
    async (audio: Blob) => {
      release();
      const url = URL.createObjectURL(audio);
      urlRef.current = url;
      setSrc(url);
    },
    [release],
  );

  return { audioRef, src, play };
}
