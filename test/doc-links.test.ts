/**
 * Every relative link and `#anchor` in README.md, CONTRIBUTING.md and docs/*.md resolves:
 * the file exists, and the anchor is a heading of it as GitHub spells anchors. Links to this
 * repository on GitHub (`…/blob/main/PATH`) must name a file that exists too. Other absolute
 * links are not followed: the tests have no network.
 */
import assert from 'node:assert/strict'
import { existsSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { describe, it } from 'node:test'
import { anchors, docFiles, links, readDoc, slug } from './helpers/markdown.js'
import { repoRoot } from './helpers/spawn-server.js'

const REPOSITORY = /^https:\/\/github\.com\/petstore-server\/petstore-server\/(?:blob|tree)\/main\/([^#?]+)(#.*)?$/

/** What is wrong with `target` as written in `file`, or undefined when it resolves. */
function problem(file: string, target: string): string | undefined {
  const inRepository = REPOSITORY.exec(target)
  if (inRepository)
    return existsSync(join(repoRoot, inRepository[1] ?? '')) ? undefined : 'no such file in the repository'
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined
  const [path = '', anchor] = target.split('#', 2)
  const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)))
  if (resolved.startsWith('..')) return 'points outside the repository'
  const absolute = join(repoRoot, resolved)
  if (!existsSync(absolute)) return `no file ${resolved}`
  if (anchor === undefined) return undefined
  if (!resolved.endsWith('.md') || statSync(absolute).isDirectory()) return 'an anchor into a file that has no headings'
  return anchors(readDoc(repoRoot, resolved)).has(anchor) ? undefined : `no heading #${anchor} in ${resolved}`
}

describe('links in the docs', () => {
  it('GitHub anchors: lower case, punctuation dropped, spaces to hyphens', () => {
    assert.equal(slug('The `onResponse` hook'), 'the-onresponse-hook')
    assert.equal(slug('Next.js (App Router)'), 'nextjs-app-router')
    assert.equal(slug('Paths are refused, not normalized'), 'paths-are-refused-not-normalized')
    assert.equal(slug('Prove your own store: `petstore-server/testing`'), 'prove-your-own-store-petstore-servertesting')
    assert.deepEqual([...anchors('# A\n## A\n```\n# not a heading\n```\n## A\n')], ['a', 'a-1', 'a-2'])
  })

  const files = docFiles(repoRoot)
  for (const file of files) {
    it(`every relative link and anchor in ${file} resolves`, () => {
      const found = links(file, readDoc(repoRoot, file))
      const broken = found.flatMap((link) => {
        const why = problem(link.file, link.target)
        return why === undefined ? [] : [`${link.file}:${link.line}: ${link.target}: ${why}`]
      })
      assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`)
    })
  }

  it('every page in docs/ is linked from README.md', () => {
    const linked = new Set(links('README.md', readDoc(repoRoot, 'README.md')).map((link) => link.target.split('#')[0]))
    const unlinked = files.filter((file) => file.startsWith('docs/')).filter((file) => !linked.has(relative('.', file)))
    assert.deepEqual(unlinked, [])
  })
})
