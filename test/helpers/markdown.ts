/**
 * What the doc tests read in Markdown: fenced code blocks (with the `<!-- doc-test: … -->`
 * marker on the line before, if any), headings as GitHub turns them into anchors, and
 * links. A small reader, not a full CommonMark parser: the docs keep to its subset
 * (fences at the start of a line, ATX headings, inline links), and CONTRIBUTING.md says so.
 *
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** One fenced code block. */
export interface CodeBlock {
  /** The Markdown file, relative to the repository root. */
  file: string
  /** The line of the opening fence, 1-based. */
  line: number
  /** The fence's info string: `ts`, `sh`, … */
  lang: string
  code: string
  /** What the `<!-- doc-test: MARKER -->` line just before the fence says, if there is one. */
  marker?: string
}

/** One inline link or image, outside code. */
export interface Link {
  file: string
  line: number
  target: string
}

const FENCE = /^(`{3,}|~{3,})\s*([^\s`]*)/
const MARKER = /^<!--\s*doc-test:\s*(.+?)\s*-->$/
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/
const LINK = /!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g

/** The Markdown files the doc tests cover: README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md. */
export function docFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`)
  return ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...docs.sort()]
}

/** The file's lines, each marked as inside a fenced block or not. */
function scan(text: string): { text: string; inCode: boolean }[] {
  let fence: string | undefined
  return text.split('\n').map((line) => {
    const opening = FENCE.exec(line)
    if (fence === undefined && opening) {
      fence = opening[1]
      return { text: line, inCode: true }
    }
    if (fence !== undefined) {
      if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '') fence = undefined
      return { text: line, inCode: true }
    }
    return { text: line, inCode: false }
  })
}

export function codeBlocks(file: string, text: string): CodeBlock[] {
  const lines = text.split('\n')
  const blocks: CodeBlock[] = []
  for (let index = 0; index < lines.length; index++) {
    const opening = FENCE.exec(lines[index] ?? '')
    if (!opening) continue
    const fence = opening[1] ?? '```'
    const start = index
    const body: string[] = []
    for (index++; index < lines.length && !(lines[index] ?? '').startsWith(fence); index++)
      body.push(lines[index] ?? '')
    let before = start - 1
    while (before >= 0 && (lines[before] ?? '').trim() === '') before--
    const marker = MARKER.exec((lines[before] ?? '').trim())?.[1]
    blocks.push({ file, line: start + 1, lang: opening[2] ?? '', code: `${body.join('\n')}\n`, marker })
  }
  return blocks
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, each space a `-`. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]*>/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor of the file, with GitHub's `-1`, `-2` suffixes for repeated headings. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const line of scan(text)) {
    if (line.inCode) continue
    const heading = HEADING.exec(line.text)
    if (!heading) continue
    const base = slug(heading[2] ?? '')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}

export function links(file: string, text: string): Link[] {
  const result: Link[] = []
  for (const [index, line] of scan(text).entries()) {
    if (line.inCode) continue
    // Inline code holds brackets and parentheses that are no link.
    const prose = line.text.replace(/(`+)[^`]*?\1/g, '')
    for (const match of prose.matchAll(LINK)) result.push({ file, line: index + 1, target: match[1] ?? '' })
  }
  return result
}

/** Reads a repository file. */
export const readDoc = (root: string, file: string): string => readFileSync(join(root, file), 'utf8')
