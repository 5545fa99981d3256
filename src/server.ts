// `waymark/server`: the HTTP API over a store (`waymark serve`), on Hono.
export type { App, AppOptions } from './server/app.js';
export { createApp } from './server/app.js';
export { openApiDocument } from './server/openapi.js';
export type { Served, ServeOptions } from './server/serve.js';
export { serve } from './server/serve.js';
