// A counter of in-flight calls that asked for the loading indicator. It lives apart from the
// client and from React so the progress bar can subscribe without pulling in axios, and the
// client can count without knowing how (or whether) the bar is drawn.
type Listener = () => void;

let inFlight = 0;
const listeners = new Set<Listener>();

function emit(): void {
  for (const listener of listeners) listener();
}

export function startLoading(): void {
  inFlight += 1;
  emit();
}

export function stopLoading(): void {
  inFlight = Math.max(0, inFlight - 1);
  emit();
}

export function getLoadingCount(): number {
  return inFlight;
}

export function subscribeLoading(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
