// The page loads the built library from /demo/client.js, beside its own script (the service serves dist/index.js
// there), so demo.ts imports './client.js'. This file gives that import the library's types, taken from its sources:
// the type check needs no build. It declares only; nothing of it is emitted.
export * from '../src/index.js'
