import type { RunPosition } from '../store/store.js';
import { badRequest } from './http-errors.js';

// A cursor is opaque to clients: the position of a page's last run. Pages by position (a keyset)
// neither skip nor repeat a run when runs are created between two requests, as offsets would.

/** The cursor of the page after the one ending with this run. */
export function cursorOf(last: RunPosition): string {
  return Buffer.from(JSON.stringify({ at: last.createdAt, id: last.id })).toString('base64url');
}

/** The position a cursor names; refused (400) when it is not one this server gave. */
export function positionOf(cursor: string): RunPosition {
  try {
    const { at, id } = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as {
      at: unknown;
      id: unknown;
    };
    if (typeof at === 'number' && Number.isFinite(at) && typeof id === 'string')
      return { createdAt: at, id };
  } catch {
    // falls through to the refusal
  }
  throw badRequest('cursor is not one this server gave (use the "next" of a page)');
}
