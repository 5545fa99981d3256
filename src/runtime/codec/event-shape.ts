import type { RunEvent } from '../core/snapshot.js';

type Fields = Readonly<Record<string, unknown>>;

const text = (v: unknown) => typeof v === 'string';
const count = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const maybe = (check: (v: unknown) => boolean) => (v: unknown) => v === undefined || check(v);
const object = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
const texts = (v: unknown) => Array.isArray(v) && v.every(text);

/**
 * What each stored event type must carry for the transition to read it: the fields `step` looks
 * up, with their JSON types. A row that lacks one (a damaged store, a hand-edited row) is refused
 * on load, instead of reaching the transition as `undefined` and replaying a history that never
 * happened. A record over every type, so adding an event type fails the compiler here until its
 * shape is written down.
 */
const shapes: Record<RunEvent['type'], (event: Fields) => boolean> = {
  started: () => true,
  completed: (e) =>
    text(e.activation) &&
    maybe(count)(e.attempt) &&
    (e.attempt === undefined || maybe(object)(e.update)),
  failed: (e) => text(e.activation) && maybe(count)(e.attempt) && object(e.error),
  cancelled: (e) => text(e.reason),
  deadline: (e) => maybe(count)(e.timeoutMs),
  resumed: (e) => maybe(count)(e.timeoutMs) && maybe(count)(e.maxSteps),
  migrated: (e) => count(e.from) && count(e.to),
  answered: (e) => text(e.activation),
  patched: (e) => object(e.update) && text(e.by) && text(e.reason) && maybe(text)(e.asNode),
  moved: (e) => text(e.to) && texts(e.dropped),
  slept: (e) => text(e.activation) && count(e.until),
};

/** Whether a parsed stored value is a run event `step` can read. */
export function isRunEvent(value: unknown): value is RunEvent {
  if (!object(value)) return false;
  const type = (value as Fields).type;
  // hasOwn: a type named like an Object.prototype member is not a shape.
  return (
    typeof type === 'string' &&
    Object.hasOwn(shapes, type) &&
    shapes[type as RunEvent['type']](value as Fields)
  );
}
