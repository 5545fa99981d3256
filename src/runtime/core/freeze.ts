/**
 * Freezes a value and everything reachable from it. Already-frozen objects are skipped, so
 * freezing a new state that shares unchanged fields with the old one costs only the new parts.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  // Typed arrays cannot be frozen; they pass through as they are.
  if (ArrayBuffer.isView(value)) return value;
  Object.freeze(value);
  // A list by index: its keys as strings would be allocated only to be walked.
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  else for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}
