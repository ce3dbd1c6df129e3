/** The HTTP suite on every store this package ships. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { memoryStore } from '../src/index.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { runApiSuite } from './api.suite.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-api-'))
after(() => rmSync(dir, { recursive: true, force: true }))
let files = 0

runApiSuite('memoryStore', () => memoryStore())
runApiSuite('sqliteStore (file)', () => sqliteStore({ path: join(dir, `api-${files++}.db`) }))
