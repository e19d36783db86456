// The build of another checkout of the repository (bench:compare's worktree of an earlier revision), as that tree's
// own `npm run build` makes it but without the type check: that commit was checked against its own dependencies, and
// this checkout's may be newer. Its package.json's build script is followed step by step (`a && b`, `npm run <name>`
// expanded); each `tsc` that emits gets --noCheck, a `tsc --noEmit` and `npm run typecheck` or `lint` are left out,
// and so is the client workspace's build (the client library and its pages are not loaded by the service). A bundling step of a later build runs as
// it is.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'

/** The build of trees whose package.json names none: the service's TypeScript alone. */
const FALLBACK_BUILD = 'tsc -p tsconfig.build.json'
/** Scripts that check rather than build. */
const CHECKS = /^(typecheck|lint|check)(:|$)/
/** How deep `npm run <name>` is followed. */
const MAX_DEPTH = 4

/**
 * The shell commands that build `manifest`'s tree without the type check.
 * @param {{ scripts?: Record<string, string> }} manifest the tree's package.json
 * @returns {string[]}
 */
export function buildSteps(manifest) {
  const scripts = manifest.scripts ?? {}
  /**
   * @param {string} command
   * @param {number} depth
   * @returns {string[]}
   */
  const expand = (command, depth) =>
    command
      .split('&&')
      .map((step) => step.trim())
      .filter((step) => step !== '')
      .flatMap((step) => {
        const name = /^npm run ([\w:.-]+)$/.exec(step)?.[1]
        if (name !== undefined && CHECKS.test(name)) return []
        const script = name === undefined ? undefined : scripts[name]
        return script !== undefined && depth < MAX_DEPTH ? expand(script, depth + 1) : [step]
      })
  return expand(scripts.build ?? FALLBACK_BUILD, 0)
    .filter((step) => !/(^|\s)(-w|--workspace)(\s|=)/.test(step))
    .filter((step) => !(isTsc(step) && /\s--noEmit\b/.test(step)))
    .map((step) => (isTsc(step) && !/\s--noCheck\b/.test(step) ? `${step} --noCheck` : step))
}

/**
 * Builds `tree` (buildSteps of its package.json), each step in a shell in that directory, with its
 * node_modules/.bin first on the PATH. Prints each step.
 * @param {string} tree
 * @param {(line: string) => void} log
 */
export function buildTree(tree, log) {
  const manifest = JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8'))
  const env = {
    ...process.env,
    PATH: [join(tree, 'node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter),
  }
  for (const step of buildSteps(manifest)) {
    log(`  ${step}`)
    execFileSync('sh', ['-c', step], { cwd: tree, env, stdio: 'inherit' })
  }
}

/** @param {string} step */
function isTsc(step) {
  return /^tsc(\s|$)/.test(step)
}
