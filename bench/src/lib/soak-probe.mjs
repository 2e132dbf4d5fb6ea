// Loaded into the server process by the soak benchmark (NODE_OPTIONS=--import): every
// SOAK_PROBE_MS it appends one JSON line to SOAK_PROBE_FILE with the process's RSS and heap and the
// event-loop delay of the last window and of the whole run. Nothing of the server is changed.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.SOAK_PROBE_FILE;
if (file) {
  const everyMs = Number(process.env.SOAK_PROBE_MS ?? 10_000);
  const RESOLUTION_MS = 10;
  const window = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  const whole = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  window.enable();
  whole.enable();
  // The histogram records the time between its timer's runs, the resolution included: the delay
  // is what exceeds it.
  const ms = (ns) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 10) / 10);
  const started = Date.now();
  const timer = setInterval(() => {
    const mem = process.memoryUsage();
    const line = {
      t: Date.now() - started,
      rss: mem.rss,
      heapUsed: mem.heapUsed,
      p50: ms(window.percentile(50)),
      p99: ms(window.percentile(99)),
      max: ms(window.max),
      wholeP99: ms(whole.percentile(99)),
    };
    window.reset();
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      // The soak's directory is gone: it ended.
    }
  }, everyMs);
  timer.unref();
}

// SOAK_CPU_PROFILE=<file>: a CPU profile of the server from SOAK_CPU_PROFILE_FROM_MS (default
// 30 s in: the task at full concurrency; 0 for the start) for SOAK_CPU_PROFILE_MS, to find what holds the event loop (open it in Chrome's
// DevTools). `--cpu-prof` cannot be passed through NODE_OPTIONS, hence the inspector.
const profileFile = process.env.SOAK_CPU_PROFILE;
if (profileFile) {
  const { Session } = await import('node:inspector/promises');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  const start = setTimeout(
    async () => {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 1000 });
      await session.post('Profiler.start');
      const stop = setTimeout(
        async () => {
          const { profile } = await session.post('Profiler.stop');
          writeFileSync(profileFile, JSON.stringify(profile));
        },
        Number(process.env.SOAK_CPU_PROFILE_MS ?? 60_000),
      );
      stop.unref();
    },
    Number(process.env.SOAK_CPU_PROFILE_FROM_MS ?? 30_000),
  );
  start.unref();
}
