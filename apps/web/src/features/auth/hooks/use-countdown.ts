import { useCallback, useEffect, useState } from 'react';

/**
 * Seconds left before a code may be sent again. Counted from a deadline rather than by
 * decrementing, so a throttled background tab still shows the true remaining time.
 */
export function useCountdown(initialSeconds = 0) {
  const [deadline, setDeadline] = useState(() =>
    initialSeconds > 0 ? Date.now() + initialSeconds * 1000 : 0,
  );
  const [secondsLeft, setSecondsLeft] = useState(Math.max(0, initialSeconds));

  useEffect(() => {
    if (deadline === 0) return;
    const tick = () => {
      const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      setSecondsLeft(left);
      if (left === 0) setDeadline(0);
    };
    tick();
    const timer = setInterval(tick, 1000);
    return () => clearInterval(timer);
  }, [deadline]);

  const start = useCallback((seconds: number) => {
    setDeadline(Date.now() + Math.max(0, seconds) * 1000);
  }, []);

  return { secondsLeft, running: secondsLeft > 0, start };
}
