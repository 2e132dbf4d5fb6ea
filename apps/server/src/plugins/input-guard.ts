import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { assertSafeText } from '../lib/safe-text';

/**
 * One rule for every route, where input enters: no NUL and no lone surrogate in any path
 * parameter, query parameter or JSON string (or key), answered 400 naming the field.
 *
 * Hooks rather than a rule on each zod string in the contracts: the project membership check
 * (plugins/project-access) queries the database with the path's projectId at onRequest, before
 * any schema runs; free-form values (test-call variables, record keys, bodies of routes without
 * a schema) have no string schema to hang a rule on; and a route added later is covered without
 * anyone remembering. Path and query are parsed when the route is found, so they are checked at
 * onRequest, registered ahead of the membership check; a body exists only once parsed, so it is
 * checked at preValidation, before the schema and the handler. Uploaded file names are checked
 * where multipart bodies are read (lib/multipart.ts).
 */
export const inputGuardPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', async (req) => {
      // The console's catch-all route has one parameter, `*`: the whole path.
      const { '*': path, ...params } = (req.params ?? {}) as Record<string, unknown>;
      assertSafeText(params);
      assertSafeText(path, '路径');
      assertSafeText(req.query);
    });
    app.addHook('preValidation', async (req) => {
      assertSafeText(req.body);
    });
  },
  { name: 'input-guard' },
);
