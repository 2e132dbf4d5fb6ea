import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { fail } from '../lib/reply';

/** Paths that belong to the API: an unknown one is a 404 envelope, never the console's HTML. */
export const API_PREFIXES = ['/api', '/auth', '/opendock', '/docs', '/healthz'];

export const isApiPath = (url: string) => {
  const pathname = url.split('?')[0] ?? '';
  return API_PREFIXES.some((p) => pathname === p || pathname.startsWith(`${p}/`));
};

/**
 * Serves the built console. Hashed files under /assets never change, so browsers may keep
 * them forever; index.html must be revalidated so a deploy reaches users on their next load.
 */
export async function registerConsole(app: FastifyInstance, webDist: string) {
  const indexFile = path.join(webDist, 'index.html');
  const built = fs.existsSync(indexFile);
  if (built) {
    await app.register(fastifyStatic, {
      root: webDist,
      wildcard: false,
      index: false,
      setHeaders(res, filePath) {
        const rel = path.relative(webDist, filePath).split(path.sep).join('/');
        res.header(
          'cache-control',
          rel.startsWith('assets/')
            ? 'public, max-age=31536000, immutable'
            : 'public, max-age=0, must-revalidate',
        );
      },
    });
  } else {
    app.log.warn({ webDist }, 'console build not found; run `npm run build` (npm start does it for you)');
  }

  app.setNotFoundHandler((req, reply) => {
    const method = req.method;
    if ((method === 'GET' || method === 'HEAD') && !isApiPath(req.url)) {
      if (!built) {
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('控制台尚未构建：请运行 npm run build 或 npm start');
      }
      // Client-side routes: the console's router decides what to show.
      return reply
        .header('cache-control', 'no-cache')
        .type('text/html; charset=utf-8')
        .send(fs.createReadStream(indexFile));
    }
    const pathname = req.url.split('?')[0];
    return reply.code(404).send(fail(404, 'NOT_FOUND', `接口不存在：${method} ${pathname}`));
  });
}
