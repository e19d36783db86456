import type { Compilable } from 'kysely'

const MARK = '\u0000tessera-param:'

/** A named placeholder for prepareQuery, typed as the value it stands for. */
export function param<T>(name: string): T {
  return `${MARK}${name}` as T
}

/** A query compiled once by Kysely; each call only binds its parameter values. */
export interface PreparedQuery<Name extends string> {
  sql: string
  /** The values in the order the compiled SQL expects them. */
  bind(values: Readonly<Record<Name, unknown>>): unknown[]
}

/**
 * Compiles a query built with param() placeholders. Building and compiling a Kysely query costs more than running
 * a primary-key lookup in SQLite, so the stores do it once, at start, and the hot paths only bind values.
 */
export function prepareQuery<Name extends string>(query: Compilable): PreparedQuery<Name> {
  const { sql, parameters } = query.compile()
  const names = parameters.map((value) => {
    if (typeof value !== 'string' || !value.startsWith(MARK)) {
      throw new Error(`prepareQuery: ${JSON.stringify(value)} in "${sql}" is a literal; use param()`)
    }
    return value.slice(MARK.length) as Name
  })
  return { sql, bind: (values) => names.map((name) => values[name]) }
}
