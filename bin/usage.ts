/**
 * The binary's `--help`.
 *
 * @module
 */

export const USAGE = `Usage: petstore-server [options]

Serves the Petstore v1 API over HTTP.

Options (each also an environment variable, in parentheses):
  --port N          port to listen on; 0 picks a free one     (PETSTORE_PORT or PORT; default 8080)
  --host HOST       address to bind                           (PETSTORE_HOST or HOST; default 127.0.0.1)
  --db URL          where pets live, see below                (PETSTORE_DB or DATABASE_URL;
                                                               default sqlite:./petstore.db)
  --key KEY         an accepted API key; repeat for several   (PETSTORE_KEY or PETSTORE_API_KEYS)
  --keys-file PATH  accepted keys, one per line; # comments   (PETSTORE_KEYS_FILE)
  --base-path PATH  path prefix of the API                    (PETSTORE_BASE_PATH; default /v1)
  --cors ORIGIN     allow browsers from ORIGIN ('*' for any); repeatable (PETSTORE_CORS)
  --public-url 'URL [DESCRIPTION]'
                    a public address of the API, base path included, listed in
                    openapi.json's servers; repeatable (PETSTORE_PUBLIC_URL; default: the base path)
  --no-docs         do not serve the API reference page at {base path}/docs (PETSTORE_NO_DOCS=1)
  --cursor-secret S signs the list's cursors; give every process on one database the same
                    (PETSTORE_CURSOR_SECRET; default random for this run)
  --idempotency-ttl DURATION
                    how long a create's Idempotency-Key is kept: 500ms, 90s, 30m, 24h, 1d, or
                    ms alone; up to 366d (PETSTORE_IDEMPOTENCY_TTL; default 24h)
  --workers N       processes sharing the port, 1 to 256; auto: 1 per CPU (PETSTORE_WORKERS; default 1)
  --max-connections N
                    connections open at once (per worker, up to 1000000); at the cap the
                    one idle the longest is closed to make room; 0: no cap
                    (PETSTORE_MAX_CONNECTIONS; default 1024)
  --max-connections-per-address N
                    the same, per client address; 0: no cap
                    (PETSTORE_MAX_CONNECTIONS_PER_ADDRESS; default 0)
  --first-request-timeout MS
                    time a new connection has to send its first request, up to 3600000;
                    0: off (PETSTORE_FIRST_REQUEST_TIMEOUT; default 5000)
  --log FORMAT      access log on stdout: json, pretty or off
                    (PETSTORE_LOG; default: pretty on a terminal, else json)
  --log-level LEVEL debug, info, warn (4xx and 5xx only), error (5xx only) or silent
                    (PETSTORE_LOG_LEVEL; default info)
  --metrics-port N  serve Prometheus /metrics on this port, a listener of its own; 0 picks a
                    free one, said on stderr. Needs prom-client (PETSTORE_METRICS_PORT; default: none)
  --metrics-host HOST
                    address the metrics listener binds, whatever --host is
                    (PETSTORE_METRICS_HOST; default 127.0.0.1)
  --seed FILE       a JSON array of pets loaded into an empty store at start, up to 16 MiB
                    (PETSTORE_SEED)
  --test-control    serve POST /__petstore/reset and the request journal, GET and DELETE
                    /__petstore/requests (a key needed), namespaces under /ns/{name}/,
                    and honour Prefer: fault=KIND and Prefer: delay=MS
                    (PETSTORE_TEST_CONTROL=1; default off)
  --max-namespaces N
                    namespaces that may exist at once, 0 to 1000000; past it a new one
                    is a 507 (PETSTORE_MAX_NAMESPACES; default 1000)
  --faults KIND:RATE[,KIND:RATE…]
                    inject faults into that share of API requests; KIND is unavailable,
                    after-commit, rate-limited, internal or reset (PETSTORE_FAULTS)
  --latency MS|MIN-MAX
                    delay every API request, up to 30000 ms (PETSTORE_LATENCY)
  --fault-seed N    the seed of the draws: the same seed and request order replay
                    the same faults; each namespace draws from it and its name
                    (PETSTORE_FAULT_SEED; default: random, said on stderr)
  --journal-size N  requests the journal keeps, per namespace, up to 100000; the oldest
                    go first (PETSTORE_JOURNAL_SIZE; default 1000)
  -h, --help        print this help
  -v, --version     print the version

Flags win over the environment; a variable set but blank is unset. A repeatable flag's
variable takes its values separated by commas; a switch's takes 1 or 0.

--db values:
  memory                                  pets in memory, gone when the process ends
  sqlite:PATH                             a SQLite file, created if missing
  postgres://USER:PASS@HOST/DB[?schema=S] PostgreSQL (also postgresql://); tables in schema S, created if missing
  mysql://USER:PASS@HOST/DB               MySQL or MariaDB

A key can be given as sha256:<64 hex digits>, its SHA-256 digest, so that no
configuration holds it in clear:
  echo "sha256:$(printf %s "$KEY" | sha256sum | cut -d' ' -f1)"
--keys-file keeps keys out of the process listing, where --key is visible.
SIGHUP re-reads the keys file (every worker); a file unreadable or without
a key keeps the keys in use. Without a keys file, SIGHUP stops the server as
SIGTERM and SIGINT do.
Without any key, a random one is generated and printed once on stderr.
The API reference page, {base path}/docs (default /v1/docs), needs no key to
view; "try it" takes a key through its Authorize button.
GET /healthz answers 200 while the store is reachable, 503 when it is not.

--workers N runs N processes under node:cluster, sharing one port and one
database; auto means one per CPU (os.availableParallelism()). --db memory and
sqlite::memory: are refused then: their pets cannot be shared between processes.`
