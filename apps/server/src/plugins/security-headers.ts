import fastifyHelmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * What the console may load. Its built index.html has no inline script (Vite emits module files),
 * so scripts are 'self' only. Styles need 'unsafe-inline': antd's CSS-in-JS injects <style> tags
 * at run time and React sets style attributes; a nonce would have to reach antd's StyleProvider on
 * every render of a statically served page. OEM logos are data: URLs and the recording and flow
 * prompt players play blob: URLs, so images and media allow those. Live updates (SSE) and the API
 * are same-origin.
 */
export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  scriptSrcAttr: ["'none'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:', 'blob:'],
  mediaSrc: ["'self'", 'data:', 'blob:'],
  fontSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  // helmet adds upgrade-insecure-requests by default; a deployment reached over plain HTTP on a
  // LAN address would then fail to load its own assets.
  upgradeInsecureRequests: null,
};

/** Two years, as the HSTS preload list asks. */
const HSTS = 'max-age=63072000; includeSubDomains';

/**
 * Security headers on every answer, the API's JSON included: CSP, no framing, no MIME sniffing,
 * a referrer that never carries a path (reset links hold tokens) to another origin. HSTS only when
 * the request reached us over TLS (directly, or through a proxy the app trusts, see TRUST_PROXY):
 * sent over plain HTTP it would be ignored, and on a LAN deployment without TLS it would be wrong.
 */
export async function registerSecurityHeaders(app: FastifyInstance) {
  await app.register(fastifyHelmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    strictTransportSecurity: false,
    // The console opens no cross-origin resources that would need isolation; COEP would block
    // the OIDC providers' redirects back for no gain.
    crossOriginEmbedderPolicy: false,
  });
  app.addHook('onSend', async (req, reply) => {
    if (req.protocol === 'https') reply.header('strict-transport-security', HSTS);
  });
}
