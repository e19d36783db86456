import type { SqlQuery } from './sql-statements.js'

/**
 * Statements written with `?` placeholders (those SQLite and MySQL share, question-mark-statements.ts), for
 * PostgreSQL: each `?` becomes `$1`, `$2`… in order, so one text serves the three engines. Each text is rewritten
 * once, the first time it is built, and kept. Only for texts with no `?` inside a literal.
 */
export function withNumberedPlaceholders<T extends Record<string, (...args: never[]) => SqlQuery>>(
  statements: T,
): T {
  const texts = new Map<string, string>()
  const numbered = (sql: string) => {
    let text = texts.get(sql)
    if (text === undefined) {
      let n = 0
      text = sql.replace(/\?/g, () => `$${++n}`)
      texts.set(sql, text)
    }
    return text
  }
  return Object.fromEntries(
    Object.entries(statements).map(([name, build]) => [
      name,
      (...args: never[]) => {
        const query = build(...args)
        return { sql: numbered(query.sql), parameters: query.parameters }
      },
    ]),
  ) as T
}
