/**
 * The root of the package, where package.json, migrations/, messages/, mail-templates/ and client/ are: one level up
 * from this module, which runs from src/ (Vitest), dist/ (tsc) or bundle/ (esbuild, where every module of the
 * command is one of a few files side by side), all three at the root. Files of the package are found from here, not
 * from the module that reads them, whose depth in src/ the bundle does not keep.
 */
export const PACKAGE_ROOT = new URL('../', import.meta.url)
