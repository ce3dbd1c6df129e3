// Preload for an experiment on a peer: `node --import ./bench/spin.mjs bench/peers/node-http.mjs …`
// makes every request of every node:http server in the process first spin for
// PETSTORE_BENCH_SPIN_NS nanoseconds of pure CPU (no allocation), and changes nothing else.
// With bench/ab.ts it shows what one more microsecond of work per request costs in req/s and
// in CPU per request on this machine. Run it with
// PETSTORE_BENCH_SPIN_NS=0 too: that is the wrapper's own cost.
import http from 'node:http'
import { syncBuiltinESMExports } from 'node:module'

const nanoseconds = Number(process.env.PETSTORE_BENCH_SPIN_NS ?? 0)
let sink = 1
/** `count` steps of a linear congruential generator: CPU and nothing else. */
function spin(count) {
  let x = sink
  for (let i = 0; i < count; i++) x = (x * 1103515245 + 12345) | 0
  sink = x
}
/** Steps per nanosecond on this machine, measured once at start. */
const perNanosecond = (() => {
  spin(1e6)
  const started = performance.now()
  spin(5e7)
  return 5e7 / ((performance.now() - started) * 1e6)
})()
const steps = Math.round(nanoseconds * perNanosecond)

const createServer = http.createServer
http.createServer = function (...args) {
  const listener = args.at(-1)
  if (typeof listener === 'function') {
    args[args.length - 1] = function (request, response) {
      spin(steps)
      return listener.call(this, request, response)
    }
  }
  return createServer.apply(this, args)
}
// The peers import `createServer` by name: the named export follows the patched property.
syncBuiltinESMExports()
