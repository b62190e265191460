/** `assert` helpers the unit tests share (node:test has no partial matcher on Node 20). */

import assert from "node:assert/strict";

/** Every property of `expected` is in `actual` with a deep-equal value (extra ones are fine). */
export function assertLike(actual: unknown, expected: Record<string, unknown>): void {
  assert.ok(typeof actual === "object" && actual !== null, `expected an object, got ${String(actual)}`);
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(expected)) picked[key] = (actual as Record<string, unknown>)[key];
  assert.deepStrictEqual(picked, expected);
}
