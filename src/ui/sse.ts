import { authHeaders } from './api.js';

/** One Server-Sent Events message. */
export interface SseMessage {
  readonly id: string;
  readonly event: string;
  readonly data: string;
}

/**
 * Follows an SSE stream of the API until `signal` aborts or the server ends it. EventSource
 * cannot send the bearer token, so this reads the stream through fetch; a connection that
 * breaks is opened again after the last id seen (Last-Event-ID), so nothing is missed or doubled.
 * Resolves when the server ends the stream (a run that ended).
 */
export async function follow(
  path: string,
  onMessage: (message: SseMessage) => void,
  signal: AbortSignal,
): Promise<void> {
  let last: string | undefined;
  while (!signal.aborted) {
    try {
      const res = await fetch(path, {
        headers: { ...authHeaders(), ...(last !== undefined && { 'last-event-id': last }) },
        signal,
      });
      if (!res.ok || res.body === null) throw new Error(`stream answered ${res.status}`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const message = parse(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (message !== undefined) {
            if (message.id !== '') last = message.id;
            onMessage(message);
          }
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      if (signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

function parse(block: string): SseMessage | undefined {
  let id = '';
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    if (colon === 0) continue; // a comment (keep-alive)
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return data.length === 0 ? undefined : { id, event, data: data.join('\n') };
}
