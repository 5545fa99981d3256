/**
 * The virtual node every finished path leads to. Route or edge to it to end a path.
 *
 * @example
 * graph('g', { state }).node('a', a).edge('a', END).entry('a').compile();
 */
export const END = '__end__' as const;

/** The type of {@link END}. */
export type End = typeof END;

// Names a user cannot give a node: END itself, its spelled-out forms, and the start marker that
// renderers draw. Accepting them would make diagrams and error messages ambiguous.
export const reservedNames: ReadonlySet<string> = new Set([END, '__start__', 'END', 'START']);
