#!/usr/bin/env node
// The `tessera` command. `npm run build` (run on install) bundles the TypeScript sources and the packages they use
// into bundle/ (scripts/build-bundle.mjs): a few files to load at start instead of hundreds.
// `npm start` runs it with two V8 memory flags, each at no measurable cost in throughput (docs/performance.md):
// --max-semi-space-size=8, as V8 would grow the young generation to 32 MiB under load and 16 MiB is enough, and
// --heap-growing-percent=50, as V8 would let the old generation grow to twice what survived its last full collection
// before the next (a login saturation on PostgreSQL + Redis peaked at 199 MiB with its default, 172 MiB with 50).
// Started another way, pass it through NODE_OPTIONS.
const { main } = await import(new URL('../bundle/cli.js', import.meta.url).href)

await main(process.argv.slice(2))
