/**
 * Key rotation without a restart: SIGHUP re-reads the keys file.
 *
 * @module
 */
import { type CliOptions, readKeysFile } from './options.js'

const log = (message: string) => process.stderr.write(`petstore-server: ${message}\n`)

/**
 * On SIGHUP, reads the keys file again and hands the new set (with the keys
 * given otherwise, `--key` or PETSTORE_API_KEYS) to `apply`. A file that
 * cannot be read, holds no key or a malformed one keeps the keys in use, and
 * the reason is logged (never a key: the messages name lines, not content).
 * Without a keys file it listens to nothing: SIGHUP keeps its meaning, a
 * hang-up (the terminal closed), which the binary answers as it does SIGTERM.
 */
export function reloadKeysOnSighup(
  options: Pick<CliOptions, 'keysFile' | 'fixedKeys'>,
  apply: (keys: string[]) => void,
) {
  const { keysFile, fixedKeys } = options
  if (keysFile === undefined) return
  process.on('SIGHUP', () => {
    let keys: string[]
    try {
      keys = [...fixedKeys, ...readKeysFile(keysFile.path, keysFile.from)]
    } catch (error) {
      return log(`SIGHUP: ${(error as Error).message}; keeping the keys in use`)
    }
    apply(keys)
    log(`SIGHUP: ${keys.length} key(s) in use, re-read from ${keysFile.from} ${keysFile.path}`)
  })
}
