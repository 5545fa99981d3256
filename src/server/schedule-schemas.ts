import { z } from 'zod';
import { catchUpPolicies, overlapPolicies } from '../store/schedule-store.js';

// The wire shapes of the schedules' routes (schedule-routes.ts).

const at = (what: string) => z.iso.datetime().describe(`${what} (ISO 8601, UTC)`);

export const schedule = z.object({
  id: z.string(),
  graph: z.string(),
  cron: z.string(),
  timezone: z.string(),
  input: z.unknown().describe('the input of every run a tick starts'),
  overlap: z.enum(overlapPolicies),
  catchUp: z.enum(catchUpPolicies),
  paused: z.boolean(),
  nextAt: at('when the next tick is due').nullable().describe('null: it fires no more'),
  bufferedAt: at('a tick kept by buffer-one until the previous run ends').nullable(),
  lastTickAt: at('the last tick taken').nullable(),
  lastRunId: z.string().nullable().describe('the run the last started tick started'),
  createdAt: at('when the schedule was first stored'),
  updatedAt: at('when it last changed'),
});

export const scheduleList = z.object({ schedules: z.array(schedule) });

export const scheduleBody = z.strictObject({
  graph: z.string().describe('a graph this server serves'),
  cron: z.string().describe('5 fields, or 6 with seconds first'),
  timezone: z.string().optional().describe('an IANA zone; default UTC'),
  input: z.unknown().optional().describe("each run's input, checked by the graph's schema"),
  id: z.string().optional().describe('default: from the graph, cron expression and input'),
  overlap: z.enum(overlapPolicies).optional(),
  catchUp: z.enum(catchUpPolicies).optional(),
});

export const scheduleRemoved = z.object({ removed: z.string() });
