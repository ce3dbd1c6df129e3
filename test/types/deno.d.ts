/**
 * The members of Deno's global namespace that examples/deno.ts uses, so that
 * `tsc` (which runs with Node's types) checks that file too. Deno itself uses
 * its own, complete declarations; test/runtimes.test.ts runs the file there.
 */
declare namespace Deno {
  const env: { get(name: string): string | undefined }
  function addSignalListener(signal: 'SIGTERM' | 'SIGINT', handler: () => void): void
  function exit(code?: number): never
}
