/**
 * V8's own view of objects, for the shape scripts run under `node --allow-natives-syntax`
 * (test/helpers/request-shape.ts, test/helpers/page-shape.ts).
 */
// Natives syntax is not TypeScript: V8 parses it here, at run time, with --allow-natives-syntax.
const native = (call: string) => new Function('a', 'b', `return %${call}`) as (a: unknown, b?: unknown) => boolean

/** Whether `a` and `b` share one hidden class (map). */
export const sameMap = native('HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean
/** Whether `a` keeps fast (not dictionary-mode) properties. */
export const fast = native('HasFastProperties(a)') as (a: unknown) => boolean
