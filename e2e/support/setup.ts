import { afterEach } from 'vitest';
import { assertNoCspViolations } from './csp';

// A setup file, not csp.ts itself: the benchmarks import the browser support outside Vitest.
afterEach(assertNoCspViolations);
