import type { TaskEvent } from '@callpilot/contracts';

type Listener = (event: TaskEvent) => void;

/** At most one event per task per second: a task of 200 concurrent calls changes many times a second. */
export const TASK_EVENT_INTERVAL_MS = 1000;

/**
 * Live task events of this process, per project. The dialer reports that a task changed; the hub
 * coalesces the reports of one task into one event per interval (the last one always goes out),
 * loads the summary only when someone listens, and fans it out to the project's subscribers.
 */
export class TaskEventHub {
  private readonly listeners = new Map<string, Set<{ taskId?: string; listener: Listener }>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly lastSent = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly load: (projectId: string, taskId: string) => Promise<TaskEvent | null>,
    private readonly intervalMs = TASK_EVENT_INTERVAL_MS,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** A task's counts or state may have changed. */
  changed(projectId: string, taskId: string): void {
    if (this.closed || !this.listeners.get(projectId)?.size) return;
    const key = `${projectId}/${taskId}`;
    if (this.timers.has(key)) return;
    const wait = Math.max(0, (this.lastSent.get(key) ?? 0) + this.intervalMs - Date.now());
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.lastSent.set(key, Date.now());
      void this.send(projectId, taskId);
    }, wait);
    timer.unref?.();
    this.timers.set(key, timer);
  }

  private async send(projectId: string, taskId: string) {
    const subscribers = this.listeners.get(projectId);
    if (!subscribers?.size) return;
    try {
      const event = await this.load(projectId, taskId);
      if (!event) return;
      for (const s of subscribers) {
        if (s.taskId && s.taskId !== taskId) continue;
        try {
          s.listener(event);
        } catch {
          // One closed socket must not stop the others.
        }
      }
    } catch (err) {
      this.onError(err);
    }
  }

  /** Subscribes to a project's task events, or one task's; returns the unsubscribe function. */
  subscribe(projectId: string, listener: Listener, taskId?: string): () => void {
    const set = this.listeners.get(projectId) ?? new Set();
    this.listeners.set(projectId, set);
    const entry = { taskId, listener };
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0) this.listeners.delete(projectId);
    };
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.listeners.clear();
  }
}
