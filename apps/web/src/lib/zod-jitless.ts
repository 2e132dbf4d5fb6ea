import { z } from 'zod';

// zod compiles object parsers with `new Function` when it can, and probes for that by trying it.
// The console's Content-Security-Policy has no 'unsafe-eval', so the probe is refused and every
// page reports a CSP violation; jitless skips the probe and the compiler alike.
z.config({ jitless: true });
