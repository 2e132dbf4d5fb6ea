import { buildApp } from './app';
import { openFromEnv } from './db/open';
import { EnvError, parseEnv } from './env';
import { ensureDemo } from './modules/demo/demo.service';

const VERSION = process.env.npm_package_version ?? '0.1.0';

async function main() {
  let env: ReturnType<typeof parseEnv>;
  try {
    env = parseEnv();
  } catch (err) {
    if (err instanceof EnvError) {
      for (const line of err.lines) process.stderr.write(`${line}\n`);
      process.exit(1);
    }
    throw err;
  }

  const database = await openFromEnv(env);
  const app = await buildApp({ database, env, version: VERSION });
  app.addHook('onClose', async () => {
    await database.close();
  });

  try {
    await database.migrate();
    app.log.info({ database: database.kind }, 'database migrated');
    if (env.demoEnabled) {
      const demo = await ensureDemo(database.db, { email: env.demoEmail, password: env.DEMO_PASSWORD });
      if (demo.created) {
        // The generated password is shown once, here, because nobody else knows it.
        app.log.info(
          demo.generatedPassword
            ? `Demo project created. Log in as ${demo.email} with password ${demo.generatedPassword}`
            : `Demo project created. Log in as ${demo.email} with DEMO_PASSWORD`,
        );
      }
    }
  } catch (err) {
    app.log.error({ err }, 'start-up failed');
    await app.close();
    process.exit(1);
  }

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const timer = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, env.SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    app.close().then(
      () => process.exit(0),
      (err) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // Draining a SIP worker behind Kamailio before a restart: `kill -USR2 <pid>`, then SIGTERM
  // once the log says no call is left. A signal reaches exactly this process, on any machine.
  process.on('SIGUSR2', () => {
    if (!app.runtime.drainSip('SIGUSR2')) app.log.warn('SIGUSR2 ignored: this process runs no SIP lines');
  });

  await app.listen({ port: env.PORT, host: env.HOST });
  app.log.info({ role: env.ROLE }, 'process role');
  if (env.demoEnabled && app.runtime.hasEngine) {
    // In the background: the console is usable at once, and the call list fills within seconds.
    app.runtime.produceDemoHistory(env.demoEmail).catch((err) => app.log.warn({ err }, 'demo calls failed'));
  }
}

main().catch((err) => {
  process.stderr.write(`Fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
