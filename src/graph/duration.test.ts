import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.js';

describe('parseDuration', () => {
  it('reads milliseconds as they are, and one number with one unit', () => {
    expect(parseDuration(250)).toBe(250);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('2d')).toBe(172_800_000);
    expect(parseDuration('1w')).toBe(604_800_000);
    expect(parseDuration(' 0s ')).toBe(0);
  });

  it('refuses what it would have to guess, with a code', () => {
    for (const bad of ['1h30m', '2 days', 'soon', '', '-1s', '1y', '10']) {
      expect(() => parseDuration(bad as never), bad).toThrow(
        expect.objectContaining({ code: 'DECLARATION_INVALID' }),
      );
    }
    expect(() => parseDuration(-1)).toThrow(/not a length of time/);
    expect(() => parseDuration(Number.POSITIVE_INFINITY)).toThrow(/not a length of time/);
  });
});
