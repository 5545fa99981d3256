import { z } from 'zod';
import { type RouteSpec, routes } from './routes.js';
import { errorResponse } from './schemas.js';

/**
 * The API's OpenAPI 3.1 document, made from the route table and the zod schemas the server
 * validates requests with: what it says a route takes is what the route checks.
 *
 * @example
 * const doc = openApiDocument('0.1.0'); doc.paths['/runs'].get.summary
 */
export function openApiDocument(version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [id, spec] of Object.entries(routes) as [string, RouteSpec][]) {
    const path = spec.path.replace(/:(\w+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][spec.method] = operation(id, spec);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'waymark',
      version,
      description:
        'Runs of waymark graphs: start, list, read, follow live (Server-Sent Events), answer waits, cancel, resume, continue, patch; and the memory kept across runs. Every route takes `Authorization: Bearer <token>`; a refusal is `{ error: { code, message, details } }` with a stable code.',
    },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: schemaOf(errorResponse) },
    },
    paths,
  };
}

function operation(id: string, spec: RouteSpec) {
  const parameters = [
    ...[...spec.path.matchAll(/:(\w+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    })),
    ...Object.entries(spec.query?.shape ?? {}).map(([name, field]) => {
      const schema = schemaOf(field as z.ZodType);
      const { description, ...rest } = schema as { description?: string };
      return {
        name,
        in: 'query',
        required: !(field as z.ZodType).safeParse(undefined).success,
        ...(description !== undefined && { description }),
        schema: rest,
      };
    }),
    ...(spec.response === 'event-stream'
      ? [{ name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } }]
      : []),
  ];
  const refusal = {
    description: `refused: ${['USAGE_INVALID', 'AUTH_REQUIRED', ...(spec.refuses ?? [])].join(', ')}`,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
  return {
    operationId: id,
    summary: spec.summary,
    ...(parameters.length > 0 && { parameters }),
    ...(spec.body !== undefined && {
      requestBody: {
        required: false,
        content: { 'application/json': { schema: schemaOf(spec.body) } },
      },
    }),
    responses: {
      [spec.status]: {
        description: spec.summary,
        content:
          spec.response === 'event-stream'
            ? { 'text/event-stream': { schema: { type: 'string' } } }
            : { 'application/json': { schema: schemaOf(spec.response) } },
      },
      default: refusal,
    },
  };
}

function schemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
}
