import { z } from 'zod';

/** White-label branding looked up by the console's host name. */
export const oemInfo = z
  .object({
    status: z.boolean(),
    name: z.string(),
    /** A data: URL of the partner's logo (at most 200 KB as an image), or '' when none. */
    logo: z.string(),
  })
  .meta({ id: 'OemInfo' });
export type OemInfo = z.infer<typeof oemInfo>;

export const OEM_LOGO_MAX_BYTES = 200 * 1024;

/** What the console needs from server configuration before anyone logs in. */
export const consoleConfig = z
  .object({
    /** Shown when a project is not (or no longer) activated: 请联系销售开通，销售电话：{salesPhone}. */
    salesPhone: z.string(),
  })
  .meta({ id: 'ConsoleConfig' });
export type ConsoleConfig = z.infer<typeof consoleConfig>;
