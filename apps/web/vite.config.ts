import { fileURLToPath } from 'node:url';
import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const apiTarget = `http://localhost:${process.env.PORT ?? 3000}`;

// Everything the server answers besides the console itself; the dev server forwards these so the
// browser sees one origin, exactly as in production where the server also serves `dist/`.
const serverPrefixes = ['/api', '/auth', '/opendock', '/docs', '/healthz'];

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react(), tailwindcss()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
  },
  server: {
    port: 5173,
    proxy: Object.fromEntries(serverPrefixes.map((prefix) => [prefix, { target: apiTarget }])),
  },
});
