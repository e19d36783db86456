#!/usr/bin/env node
// The `tessera` command. `npm run build` (run on install) bundles the TypeScript sources and the packages they use
// into bundle/ (scripts/build-bundle.mjs): a few files to load at start instead of hundreds.
// `npm start` runs it with --max-semi-space-size=8: V8 would grow the young generation to 32 MiB under load, and
// 16 MiB keeps the process within its memory budget at no measurable cost in throughput (docs/performance.md).
// Started another way, pass it through NODE_OPTIONS.
const { main } = await import(new URL('../bundle/cli.js', import.meta.url).href)

await main(process.argv.slice(2))
